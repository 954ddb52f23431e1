/*
 * test_config_sockets.c — a group's `sockets` (daemon/config.c) and what
 * the daemon makes of them (daemon/sockets.c): entries parse with their
 * defaults, each mistake is one "LABEL:LINE: KEY: what" line, the sockets
 * are created, bound and removed, a file that is not a socket is refused,
 * and a worker's environment names them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "sockets.h"
#include "sv_tmpdir.h"

static char dir[64];

static int
setup(void **state)
{
	(void) state;
	return sv_tmpdir(dir, sizeof(dir), "sv-test-sockets");
}

static int
teardown(void **state)
{
	(void) state;
	return sv_rmtree(dir);
}

/* load builds a one-group config with the given sockets list. */
static sv_err
load(const char *sockets, svd_config **cfgp, char *err, size_t errlen)
{
	char text[2048];

	snprintf(text, sizeof(text),
	    "groups = ( { name = \"jobs\"; purpose = \"p\"; count = 1;\n"
	    "  argv = [\"/bin/true\"];\n"
	    "  sockets = %s; } );\n",
	    sockets);
	return svd_config_load_text("t", text, cfgp, err, errlen);
}

static void
refused(const char *sockets, const char *want)
{
	svd_config *cfg = NULL;
	char        err[1024];

	assert_int_not_equal(load(sockets, &cfg, err, sizeof(err)), SV_OK);
	assert_null(cfg);
	if (strstr(err, want) == NULL || strncmp(err, "t:", 2) != 0) {
		fail_msg("error \"%s\" does not say \"%s\"", err, want);
	}
	assert_null(strchr(err, '\n'));
}

static void
test_parse(void **state)
{
	svd_config *cfg = NULL;
	char        err[1024], spec[512];

	(void) state;
	snprintf(spec, sizeof(spec),
	    "( { name = \"jobs\"; path = \"%s/j.sock\"; },"
	    " { name = \"ctl-1\"; path = \"%s/c.sock\"; type = \"stream\";"
	    "   mode = \"0660\"; } )",
	    dir, dir);
	if (load(spec, &cfg, err, sizeof(err)) != SV_OK) {
		fail_msg("%s", err);
	}
	assert_int_equal(cfg->groups[0].nsockets, 2);
	assert_string_equal(cfg->groups[0].sockets[0].name, "jobs");
	assert_int_equal(cfg->groups[0].sockets[0].type, SOCK_DGRAM);
	assert_int_equal(cfg->groups[0].sockets[0].mode, 0600);
	assert_int_equal(cfg->groups[0].sockets[1].type, SOCK_STREAM);
	assert_int_equal(cfg->groups[0].sockets[1].mode, 0660);
	svd_config_free(cfg);
}

static void
test_refusals(void **state)
{
	(void) state;
	refused(
	    "( { name = \"a b\"; path = \"/tmp/x\"; } )", "sockets[0].name");
	refused("( { name = \"a\"; path = \"rel/x\"; } )", "absolute");
	refused("( { name = \"a\"; path = \"/tmp/x\"; type = \"raw\"; } )",
	    "sockets[0].type");
	refused("( { name = \"a\"; } )", "needs a name and a path");
	refused("( { name = \"a\"; path = \"/tmp/x\"; mode = \"0999\"; } )",
	    "octal mode");
	refused("( { name = \"a\"; path = \"/tmp/x\"; colour = 1; } )",
	    "unknown key");
	refused("( { name = \"a\"; path = \"/tmp/x\"; },"
	        "  { name = \"a\"; path = \"/tmp/y\"; } )",
	    "listed twice");
	refused("( )", "1..8");
	refused("\"jobs\"", "must be a list");
}

static void
test_open_and_env(void **state)
{
	svd_config  *cfg = NULL;
	svd_sockets *s   = NULL;
	char         err[1024], spec[512], p[128];
	const int   *fds;
	size_t       n;
	struct stat  st;
	FILE        *f;

	(void) state;
	snprintf(spec, sizeof(spec),
	    "( { name = \"jobs\"; path = \"%s/j.sock\"; },"
	    " { name = \"ctl\"; path = \"%s/c.sock\"; type = \"seqpacket\"; } "
	    ")",
	    dir, dir);
	assert_int_equal(load(spec, &cfg, err, sizeof(err)), SV_OK);
	assert_int_equal(
	    svd_sockets_open(&cfg->groups[0], &s, err, sizeof(err)), SV_OK);
	fds = svd_sockets_fds(s, &n);
	assert_int_equal(n, 2);
	assert_true(fds[0] >= 64 && fds[1] >= 64);
	assert_string_equal(svd_sockets_env(s), "SUPERVISE_FDS=jobs=3,ctl=4");
	snprintf(p, sizeof(p), "%s/j.sock", dir);
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);
	svd_sockets_close(s);
	assert_int_not_equal(lstat(p, &st), 0); /* removed */
	/* A regular file where a socket goes is refused, left alone. */
	assert_non_null(f = fopen(p, "w"));
	fclose(f);
	assert_int_equal(
	    svd_sockets_open(&cfg->groups[0], &s, err, sizeof(err)),
	    SV_ESYSTEM);
	assert_non_null(strstr(err, "is not a socket"));
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	svd_config_free(cfg);
	/* No sockets: NULL, and nothing to hand over. */
	assert_null(svd_sockets_env(NULL));
	assert_null(svd_sockets_fds(NULL, &n));
	assert_int_equal(n, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse),
	    cmocka_unit_test(test_refusals),
	    cmocka_unit_test(test_open_and_env),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
