/*
 * test_config.c — supervised's configuration checks (daemon/config.c): a
 * valid file parses with its defaults; each kind of mistake gives one line
 * naming the file, the line and the key.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "config.h"
#include "sv_skip.h"
#include "sv_tmpdir.h"

static char path[64];

/* write_cfg writes text to a fresh temporary file. */
static void
write_cfg(const char *text)
{
	int fd;

	assert_int_equal(
	    sv_tmp_template(path, sizeof(path), "sv-test-config"), 0);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(
	    write(fd, text, strlen(text)), (ssize_t) strlen(text));
	close(fd);
}

/* load_err loads text and expects failure with a message containing want. */
static void
load_err(const char *text, const char *want)
{
	svd_config *cfg = NULL;
	char        err[1024], prefix[128];

	write_cfg(text);
	assert_int_not_equal(
	    svd_config_load(path, &cfg, err, sizeof(err)), SV_OK);
	assert_null(cfg);
	snprintf(prefix, sizeof(prefix), "%s:", path);
	if (strncmp(err, prefix, strlen(prefix)) != 0
	    || strstr(err, want) == NULL) {
		fail_msg("error \"%s\" lacks \"%s%s\"", err, prefix, want);
	}
	assert_null(strchr(err, '\n'));
	unlink(path);
}

/* A complete file, with defaults filled in. */
static void
test_valid(void **state)
{
	svd_config *cfg;
	char        err[1024];

	(void) state;
	write_cfg(
	    "socket_dir = \"/tmp/x\";\n"
	    "stop_timeout_ms = 700;\n"
	    "groups = (\n"
	    "  { name = \"web\"; argv = [\"/bin/true\", \"-x\"]; count = 3;\n"
	    "    purpose = \"serve\"; env = [\"A=1\", \"B=two=2\"];\n"
	    "    cwd = \"/\"; min_uptime_ms = 0; },\n"
	    "  { name = \"big\"; argv = [\"sleep\"]; count = 2000;\n"
	    "    purpose = \"p\"; stop_timeout_ms = 5; }\n"
	    ");\n");
	assert_int_equal(svd_config_load(path, &cfg, err, sizeof(err)), SV_OK);
	unlink(path);
	assert_string_equal(cfg->socket_dir, "/tmp/x");
	assert_int_equal(cfg->ngroups, 2);
	assert_string_equal(cfg->groups[0].name, "web");
	assert_int_equal(cfg->groups[0].argc, 2);
	assert_string_equal(cfg->groups[0].argv[1], "-x");
	assert_null(cfg->groups[0].argv[2]);
	assert_int_equal(cfg->groups[0].nenv, 2);
	assert_string_equal(cfg->groups[0].env[1], "B=two=2");
	assert_int_equal(cfg->groups[0].count, 3);
	assert_int_equal(cfg->groups[0].max_count, 1024);
	assert_int_equal(cfg->groups[0].pol.stop_timeout_ms, 700);
	assert_int_equal(cfg->groups[0].pol.backoff.healthy_ms, 0);
	assert_int_equal(cfg->groups[0].pol.backoff.initial_ms, 100);
	assert_int_equal(cfg->groups[0].pol.backoff.max_ms, 30000);
	/* count above the default max raises max_count to count */
	assert_int_equal(cfg->groups[1].max_count, 2000);
	assert_int_equal(cfg->groups[1].pol.stop_timeout_ms, 5);
	assert_null(cfg->groups[1].cwd);
	svd_config_free(cfg);
}

/* The supervision keys: restart type, intensity, backoff, signals,
 * readiness, watchdog, the strategy; and their defaults. */
static void
test_supervision_keys(void **state)
{
	svd_config            *cfg;
	char                   err[1024];
	const sv_group_policy *p, *d;

	(void) state;
	write_cfg(
	    "strategy = \"rest_for_one\";\n"
	    "groups = (\n"
	    "  { name = \"a\"; argv = [\"true\"]; count = 1; purpose = "
	    "\"p\";\n"
	    "    restart = \"transient\"; max_restarts = 5;\n"
	    "    max_seconds = 10; backoff_factor = 1.5;\n"
	    "    stop_signal = \"SIGINT\"; on_unresponsive = \"abandon\";\n"
	    "    ready = true; sequential_start = true;\n"
	    "    start_timeout_ms = 200; on_start_timeout = \"abandon\";\n"
	    "    watchdog_ms = 300; },\n"
	    "  { name = \"b\"; argv = [\"true\"]; count = 1; purpose = "
	    "\"p\";\n"
	    "    backoff_factor = 3; stop_signal = \"QUIT\"; }\n"
	    ");\n");
	assert_int_equal(svd_config_load(path, &cfg, err, sizeof(err)), SV_OK);
	assert_int_equal(cfg->strategy, SV_STRATEGY_REST_FOR_ONE);
	p = &cfg->groups[0].pol;
	assert_int_equal(p->restart, SV_RESTART_TRANSIENT);
	assert_int_equal(p->max_restarts, 5);
	assert_int_equal(p->max_window_ms, 10000);
	assert_true(p->backoff.factor > 1.49 && p->backoff.factor < 1.51);
	assert_int_equal(p->stop_signal, SIGINT);
	assert_int_equal(p->on_unresponsive, SV_UNRESPONSIVE_ABANDON);
	assert_true(p->need_ready);
	assert_true(p->sequential);
	assert_int_equal(p->start_timeout_ms, 200);
	assert_int_equal(p->on_start_timeout, SV_START_TIMEOUT_ABANDON);
	assert_int_equal(p->watchdog_ms, 300);
	d = &cfg->groups[1].pol;
	assert_int_equal(d->restart, SV_RESTART_PERMANENT);
	assert_int_equal(d->max_restarts, 0);
	assert_true(d->backoff.factor > 2.99 && d->backoff.factor < 3.01);
	assert_int_equal(d->stop_signal, SIGQUIT);
	assert_int_equal(d->backoff.healthy_ms, 1000);
	assert_false(d->need_ready);
	assert_int_equal(d->watchdog_ms, 0);
	svd_config_free(cfg);

	load_err("groups = ( { name = \"a\"; argv = [\"true\"]; count = 1;\n"
	         " purpose = \"p\"; restart = \"sometimes\"; } );\n",
	    "2: groups[0].restart: must be one of \"permanent\", "
	    "\"transient\", \"temporary\"");
	load_err("groups = ( { name = \"a\"; argv = [\"true\"]; count = 1;\n"
	         " purpose = \"p\"; backoff_factor = 0.5; } );\n",
	    "groups[0].backoff_factor: must be a number in 1.0..16.0");
	load_err("groups = ( { name = \"a\"; argv = [\"true\"]; count = 1;\n"
	         " purpose = \"p\"; stop_signal = \"FOO\"; } );\n",
	    "groups[0].stop_signal: must be a signal name");
	load_err("groups = ( { name = \"a\"; argv = [\"true\"]; count = 1;\n"
	         " purpose = \"p\"; ready = 1; } );\n",
	    "groups[0].ready: must be true or false");
	load_err("groups = ( { name = \"a\"; argv = [\"true\"]; count = 1;\n"
	         " purpose = \"p\"; max_seconds = 0; } );\n",
	    "groups[0].max_seconds: must be an integer in 1..86400");
	load_err("strategy = \"all\";\n", "1: strategy: must be one of");
	/* A value with a newline still gives a one-line error (load_err
	 * checks that there is no newline). */
	load_err("groups = ( { name = \"a\"; count = 1; purpose = \"p\";\n"
	         " argv = [\"/x\\ny\"]; } );\n",
	    "groups[0].argv: program \"/x?y\" is not an executable file");
	/* The program and the working directory are checked at load time. */
	load_err("groups = ( { name = \"a\"; count = 1; purpose = \"p\";\n"
	         " argv = [\"/nonexistent/prog\"]; } );\n",
	    "2: groups[0].argv: program \"/nonexistent/prog\" is not an "
	    "executable file");
	load_err("groups = ( { name = \"a\"; count = 1; purpose = \"p\";\n"
	         " argv = [\"no-such-program-sv\"]; } );\n",
	    "groups[0].argv: program \"no-such-program-sv\" not found in the "
	    "daemon's PATH");
	{
		/* A file that exists but is not executable: the test's own
		 * config file (mode 0600). */
		char text[512];
		snprintf(text, sizeof(text),
		    "groups = ( { name = \"a\"; count = 1; purpose = \"p\";\n"
		    " argv = [\"%s\"]; } );\n",
		    path);
		load_err(text, "is not an executable file");
	}
	load_err("groups = ( { name = \"a\"; argv = [\"true\"]; count = 1;\n"
	         " purpose = \"p\"; cwd = \"/nonexistent/dir\"; } );\n",
	    "2: groups[0].cwd: cannot use \"/nonexistent/dir\": No such file");
	load_err("groups = ( { name = \"a\"; argv = [\"true\"]; count = 1;\n"
	         " purpose = \"p\"; cwd = \"/dev/null\"; } );\n",
	    "groups[0].cwd: \"/dev/null\" is not a directory");
}

/* Each mistake names its line and key. */
static void
test_errors(void **state)
{
	(void) state;
	load_err("groups = ( { name = \"a\"; argv = [\"true\"]; count = 1;\n"
	         "  purpose = \"p\"; colour = 3; } );\n",
	    "2: groups[0].colour: unknown key");
	load_err(
	    "sockets = \"/tmp\";\ngroups = ();\n", "1: sockets: unknown key");
	load_err("groups = ( { name = \"a\"; argv = [\"true\"];\n"
	         "  count = 0x7fffffff; purpose = \"p\"; } );\n",
	    "2: groups[0].count: must be an integer in 0..4096");
	load_err(
	    "groups = ( { name = \"a\"; argv = [\"true\"]; count = \"3\";\n"
	    "  purpose = \"p\"; } );\n",
	    "1: groups[0].count: must be an integer");
	load_err("groups = ( { name = \"a b\"; argv = [\"true\"]; count = 1;\n"
	         "  purpose = \"p\"; } );\n",
	    "1: groups[0].name: must be 1..64 characters");
	load_err("groups = ( { name = \"a\"; argv = [\"true\"]; count = 1;\n"
	         "  purpose = \"\"; } );\n",
	    "2: groups[0].purpose: must not be empty");
	load_err(
	    "groups = ( { name = \"a\"; argv = [\"true\"]; count = 1; } );\n",
	    "groups[0].purpose: missing required key \"purpose\" in group a");
	load_err("groups = ( { name = \"a\"; argv = []; count = 1;\n"
	         " purpose = \"p\"; } );\n",
	    "groups[0].argv: must have 1..256 entries");
	load_err("groups = ( { name = \"a\"; argv = [\"true\"]; count = 1;\n"
	         " purpose = \"p\"; env = [\"NOEQUALS\"]; } );\n",
	    "groups[0].env: entry \"NOEQUALS\" is not NAME=value");
	load_err("groups = ( { name = \"a\"; argv = [\"true\"]; count = 1;\n"
	         " purpose = \"p\"; env = [\"SUPERVISE_GROUP=b\"]; } );\n",
	    "reserved");
	load_err(
	    "groups = ( { name = \"a\"; argv = [\"true\"]; count = 1; purpose "
	    "= \"p\"; },\n { name = \"a\"; argv = [\"true\"]; count = 1; "
	    "purpose = \"p\"; } );\n",
	    "groups[1].name: duplicate group name \"a\" (also groups[0])");
	load_err("groups = ( { name = \"a\"; argv = [\"true\"]; count = 9;\n"
	         " purpose = \"p\"; max_count = 4; } );\n",
	    "groups[0].count: 9 is above max_count 4");
	load_err("socket_dir = \"relative\";\n",
	    "1: socket_dir: must be an absolute");
	load_err("stop_timeout_ms = 5;\n", "groups: missing required key");
	load_err("groups = ( { name = \"a\" ;; } );\n", "1: syntax error");
	load_err("groups = ();\n", "groups: must have 1..64 entries");
}

/* A directory given as the config is one clear line. */
static void
test_directory(void **state)
{
	svd_config *cfg = NULL;
	char        err[1024];

	(void) state;
	assert_int_equal(
	    svd_config_load("/tmp", &cfg, err, sizeof(err)), SV_ENOTFOUND);
	assert_null(cfg);
	assert_string_equal(err, "/tmp: cannot read: is a directory");
}

/* A missing file is SV_ENOTFOUND with the path in the message. */
static void
test_missing_file(void **state)
{
	svd_config *cfg = NULL;
	char        err[512];

	(void) state;
	assert_int_equal(
	    svd_config_load("/nonexistent/sv.conf", &cfg, err, sizeof(err)),
	    SV_ENOTFOUND);
	assert_non_null(strstr(err, "/nonexistent/sv.conf: cannot read"));
}

/* group_cfg is a one-group config with extra keys (user, group). */
static void
group_cfg(char *buf, size_t len, const char *extra)
{
	snprintf(buf, len,
	    "groups = (\n"
	    "  { name = \"w\"; argv = [\"/bin/true\"]; count = 1;\n"
	    "    purpose = \"p\";\n"
	    "    %s }\n"
	    ");\n",
	    extra);
}

/* load_ok loads a one-group config with extra keys; returns it. */
static svd_config *
load_ok(const char *extra)
{
	svd_config *cfg = NULL;
	char        text[1024], err[1024];

	group_cfg(text, sizeof(text), extra);
	write_cfg(text);
	if (svd_config_load(path, &cfg, err, sizeof(err)) != SV_OK)
		fail_msg("%s: %s", extra, err);
	unlink(path);
	return cfg;
}

/* Each integer key of the table sets its own member and no other: with
 * all of them given distinct values, every member holds its key's value
 * (the old reader's last `else` set watchdog_ms for any key it missed). */
static void
test_keys_own_members(void **state)
{
	svd_config      *cfg;
	sv_group_policy *p;

	(void) state;
	cfg = load_ok("stop_timeout_ms = 11; min_uptime_ms = 12; "
	              "backoff_initial_ms = 13; backoff_max_ms = 14; "
	              "start_timeout_ms = 15; watchdog_ms = 16; "
	              "drain_timeout_ms = 17; drain_extend_max_ms = 18; "
	              "max_restarts = 19; max_seconds = 20; "
	              "max_subworkers = 21; notify_access = \"all\";");
	p   = &cfg->groups[0].pol;
	assert_int_equal(p->stop_timeout_ms, 11);
	assert_int_equal(p->backoff.healthy_ms, 12);
	assert_int_equal(p->backoff.initial_ms, 13);
	assert_int_equal(p->backoff.max_ms, 14);
	assert_int_equal(p->start_timeout_ms, 15);
	assert_int_equal(p->watchdog_ms, 16);
	assert_int_equal(p->drain_timeout_ms, 17);
	assert_int_equal(p->drain_extend_max_ms, 18);
	assert_int_equal(p->max_restarts, 19);
	assert_int_equal(p->max_window_ms, 20000);
	assert_int_equal(cfg->groups[0].max_subworkers, 21);
	assert_true(cfg->groups[0].notify_all);
	svd_config_free(cfg);
}

/* user and group (as root): names and numbers resolve to uid, gid and the
 * user's groups; mistakes name file, line and key. */
static void
test_user_keys(void **state)
{
	struct passwd  *pw = getpwnam("nobody");
	svd_config     *cfg;
	const sv_creds *c;
	gid_t           groups[SV_CREDS_MAX_GROUPS];
	int             ng = SV_CREDS_MAX_GROUPS;
	char            text[512], extra[128];
	uid_t           lonely = 4000123; /* no passwd entry, we hope */

	(void) state;
	if (geteuid() != 0 || pw == NULL) {
		SV_SKIP("resolution as another user needs root");
	}
	assert_true(getgrouplist(pw->pw_name, pw->pw_gid, groups, &ng) >= 0);

	/* Without user: the daemon's own credentials. */
	cfg = load_ok("");
	assert_false(cfg->groups[0].creds.set);
	assert_null(cfg->groups[0].user);
	svd_config_free(cfg);

	/* By name: nobody's uid, primary gid and groups. */
	cfg = load_ok("user = \"nobody\";");
	c   = &cfg->groups[0].creds;
	assert_true(c->set);
	assert_int_equal(c->uid, pw->pw_uid);
	assert_int_equal(c->gid, pw->pw_gid);
	assert_int_equal(c->ngroups, (size_t) ng);
	assert_memory_equal(c->groups, groups, (size_t) ng * sizeof(gid_t));
	assert_string_equal(cfg->groups[0].user, "nobody");
	svd_config_free(cfg);

	/* By number, as an integer, and a group by name: gid 0. */
	snprintf(extra, sizeof(extra), "user = %u; group = \"root\";",
	    (unsigned) pw->pw_uid);
	cfg = load_ok(extra);
	c   = &cfg->groups[0].creds;
	assert_int_equal(c->uid, pw->pw_uid);
	assert_int_equal(c->gid, 0);
	svd_config_free(cfg);

	/* A uid without a passwd entry works with an explicit group, and
	 * gets that group alone. */
	if (getpwuid(lonely) == NULL) {
		snprintf(extra, sizeof(extra), "user = \"%u\"; group = 12345;",
		    (unsigned) lonely);
		cfg = load_ok(extra);
		c   = &cfg->groups[0].creds;
		assert_int_equal(c->uid, lonely);
		assert_int_equal(c->gid, 12345);
		assert_int_equal(c->ngroups, 1);
		assert_int_equal(c->groups[0], 12345);
		svd_config_free(cfg);
		snprintf(
		    extra, sizeof(extra), "user = \"%u\";", (unsigned) lonely);
		group_cfg(text, sizeof(text), extra);
		load_err(text,
		    "4: groups[0].user: uid 4000123 has no passwd "
		    "entry");
	}

	group_cfg(text, sizeof(text), "user = \"sv-no-such-user\";");
	load_err(text, "4: groups[0].user: unknown user \"sv-no-such-user\"");
	group_cfg(text, sizeof(text),
	    "user = \"nobody\";\n    group = \"sv-no-such-group\";");
	load_err(text, "5: groups[0].group: unknown group");
	group_cfg(text, sizeof(text), "group = \"root\";");
	load_err(text, "4: groups[0].group: group needs user");
	group_cfg(text, sizeof(text), "user = \"\";");
	load_err(text, "4: groups[0].user: must not be empty");
	group_cfg(text, sizeof(text), "user = 4294967295;");
	load_err(text, "4: groups[0].user: must be an integer in");
	group_cfg(text, sizeof(text), "user = -1;");
	load_err(text, "4: groups[0].user: must be an integer in");
	group_cfg(text, sizeof(text), "user = true;");
	load_err(text, "4: groups[0].user: must be a name or a number");
}

/* A daemon that is not root may name only its own user: another one is
 * "needs root" at load time. Checked in a child that drops to nobody. */
static void
test_user_needs_root(void **state)
{
	struct passwd *pw = getpwnam("nobody");
	char           text[512], other[512];
	pid_t          pid;
	int            st;

	(void) state;
	if (geteuid() != 0 || pw == NULL) {
		SV_SKIP("a worker as nobody needs root");
	}
	group_cfg(text, sizeof(text), "user = \"nobody\";");
	group_cfg(other, sizeof(other), "user = \"root\";");
	assert_true((pid = fork()) >= 0);
	if (pid == 0) {
		svd_config *cfg = NULL;
		char        err[1024];
		int         rc = 0;

		if (setgroups(0, NULL) != 0 || setgid(pw->pw_gid) != 0
		    || setuid(pw->pw_uid) != 0) {
			_exit(10);
		}
		/* Our own user: accepted, nothing to switch. */
		write_cfg(text);
		if (svd_config_load(path, &cfg, err, sizeof(err)) != SV_OK
		    || cfg->groups[0].creds.set) {
			fprintf(stderr, "own user: %s\n", err);
			rc = 11;
		}
		svd_config_free(cfg);
		unlink(path);
		cfg = NULL;
		/* Another: refused at load time, naming the key. */
		write_cfg(other);
		if (svd_config_load(path, &cfg, err, sizeof(err)) == SV_OK
		    || strstr(err,
		           ": groups[0].user: running workers as uid "
		           "0 gid 0 needs root")
		        == NULL) {
			fprintf(stderr, "other user: %s\n", err);
			rc = 12;
		}
		unlink(path);
		_exit(rc);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_valid),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_supervision_keys),
	    cmocka_unit_test(test_directory),
	    cmocka_unit_test(test_missing_file),
	    cmocka_unit_test(test_keys_own_members),
	    cmocka_unit_test(test_user_keys),
	    cmocka_unit_test(test_user_needs_root),
	};
	return SV_EXIT(
	    cmocka_run_group_tests_name("config", tests, NULL, NULL));
}
