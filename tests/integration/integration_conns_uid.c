/*
 * integration_conns_uid.c — another uid's flood of the control socket is
 * held to its per-uid bound (issue 15, item 2). Needs root (the flood
 * runs as nobody, which reaches the socket because a group runs as
 * nobody: control.sock is then 0666); exits 77 (skipped) otherwise, or
 * when nobody cannot run the helper (a build directory closed to others).
 *
 * The test forks a child that drops to nobody and runs `sv-connflood flood
 * OUT 600 8`: 8 processes of that uid, each opening and keeping up to 600
 * connections (4,800 in all: more than the 4,096 a supervisor without
 * bounds served). Each must keep at most 64, all together at most 256,
 * and some must be answered EXHAUSTED. Meanwhile `supervisectl hello`
 * (root) succeeds, and a worker started then, running as nobody too (its
 * uid is over its bound, but a live worker always gets its first 2
 * connections), gets WhoAmI and Heartbeats answered. The test then ends
 * the flood by the pid it started (sv-connflood ends its own children).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "conns_util.h"

#include <dirent.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "../sv_tmpdir.h"

#define FLOOD_PROCS 8

static struct passwd nobody;
static const char   *daemon_exe; /* argv[1] */
static char          nobody_buf[1024];

/* The fixture: a searchable base directory (0711), the socket_dir the
 * daemon creates in it, a directory nobody may write its reports to. */
struct uid_fx {
	it_ctx ctx; /* first: it_teardown frees this block */
	char   sdir[80], outdir[80], flood_out[128], victim_out[128];
	char   ctl_err[128];
	char   victim_arg[160];
};

/* setup_uid starts a daemon whose group "victim" (size 0) runs as nobody. */
static int
setup_uid(void **state)
{
	struct uid_fx *fx = calloc(1, sizeof(*fx));
	it_ctx        *ctx;
	char           groups[PATH_MAX + 512];
	int64_t        deadline;
	sv_hello      *h = NULL;

	assert_non_null(fx);
	*state               = fx;
	ctx                  = &fx->ctx;
	ctx->stop_timeout_ms = 2000;
	if (it_asuser_dirs(ctx, "sv-cu", nobody.pw_uid, nobody.pw_gid,
	        fx->sdir, sizeof(fx->sdir), fx->outdir, sizeof(fx->outdir))
	    != 0)
		return -1;
	snprintf(fx->flood_out, sizeof(fx->flood_out), "%s/flood", fx->outdir);
	snprintf(
	    fx->victim_out, sizeof(fx->victim_out), "%s/victim", fx->outdir);
	snprintf(fx->ctl_err, sizeof(fx->ctl_err), "%s/ctl.err", ctx->dir);
	snprintf(groups, sizeof(groups),
	    "  { name = \"victim\"; count = 0; max_count = 1;\n"
	    "    purpose = \"a worker of a flooding uid\";\n"
	    "    argv = [\"%s\", \"victim\", \"%s\"];\n"
	    "    user = \"nobody\"; min_uptime_ms = 0; }\n",
	    SV_IT_CONNFLOOD, fx->victim_out);
	if (it_asuser_spawn(ctx, daemon_exe, fx->sdir, groups) != 0)
		return -1;
	deadline = it_now_ms() + IT_START_MS;
	for (;;) {
		if (sv_client_open(&ctx->client, ctx->url, 200) == SV_OK) {
			if (sv_client_hello(ctx->client, 200, &h) == SV_OK)
				break;
			sv_client_close(ctx->client);
			ctx->client = NULL;
		}
		if (!it_daemon_alive(ctx) || it_now_ms() >= deadline) {
			fprintf(stderr, "[it] the daemon did not come up\n");
			return -1;
		}
	}
	sv_hello_free(h);
	return 0;
}

/* rm_flat removes the files of directory dir, then dir. */
static void
rm_flat(const char *dir)
{
	DIR           *d = opendir(dir);
	struct dirent *de;
	char           path[512];

	while (d != NULL && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0
		    || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		(void) unlink(path);
	}
	if (d != NULL)
		closedir(d);
	(void) rmdir(dir);
}

/* teardown_uid stops the daemon (it_stop) and removes what the standard
 * teardown does not know: the socket_dir and the report directory. */
static int
teardown_uid(void **state)
{
	struct uid_fx *fx = *state;
	char           dir[sizeof(fx->ctx.dir)];
	int            rc;

	memcpy(dir, fx->ctx.dir, sizeof(dir));
	rm_flat(fx->outdir);
	rc = it_stop(&fx->ctx);
	rm_flat(fx->sdir);
	rm_flat(dir);
	free(fx);
	*state = NULL;
	return rc;
}

/* start_flood forks the flood as nobody; returns its pid. */
static pid_t
start_flood(struct uid_fx *fx)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		char procs[8];

		snprintf(procs, sizeof(procs), "%d", FLOOD_PROCS);
		if (setgroups(0, NULL) != 0 || setgid(nobody.pw_gid) != 0
		    || setuid(nobody.pw_uid) != 0
		    || setenv(SV_ENV_URL, fx->ctx.url, 1) != 0)
			_exit(126);
		execl(SV_IT_CONNFLOOD, SV_IT_CONNFLOOD, "flood", fx->flood_out,
		    "600", procs, (char *) NULL);
		_exit(127);
	}
	return pid;
}

/* stop_flood ends the flood by its pid and reaps it (bounded). */
static void
stop_flood(pid_t pid)
{
	struct pollfd pfd = {(int) syscall(SYS_pidfd_open, pid, 0), POLLIN, 0};
	int           st;

	kill(pid, SIGTERM);
	if (pfd.fd >= 0) {
		if (poll(&pfd, 1, 10000) <= 0) {
			kill(pid, SIGKILL);
			fprintf(stderr, "[it] the flood ignored SIGTERM\n");
		}
		close(pfd.fd);
	}
	(void) waitpid(pid, &st, 0);
}

/* Another uid's flood: bounded per process and per uid; root and a new
 * worker of that uid are still served. */
static void
test_other_uid_flood(void **state)
{
	struct uid_fx  *fx  = *state;
	it_ctx         *ctx = &fx->ctx;
	struct cn_flood fl[FLOOD_PROCS], sum = {0, 0, 0};
	char            line[128], err[512]  = "";
	pid_t           flood;
	int64_t         ms;
	int             rc;

	flood = start_flood(fx);
	for (int i = 0; i < FLOOD_PROCS; i++) {
		cn_read_flood(fx->flood_out, i, 120000, &fl[i]);
		sum.accepted += fl[i].accepted;
		sum.exhausted += fl[i].exhausted;
	}
	rc = cn_ctl_hello(ctx->url, 3000, fx->ctl_err, &ms);
	(void) cn_wait_line(fx->ctl_err, 0, err, sizeof(err));
	if (rc == 0)
		(void) sv_client_scale(
		    ctx->client, "victim", 1, IT_CALL_MS, NULL);
	if (rc == 0
	    && cn_wait_line(fx->victim_out, IT_REPORT_MS, line, sizeof(line))
	        != 0)
		snprintf(line, sizeof(line), "(nothing)\n");
	stop_flood(flood);
	if (rc != 0)
		fail_msg("supervisectl hello during the flood: exit %d after "
		         "%lld ms: %s",
		    rc, (long long) ms, err);
	fprintf(stderr, "[it] victim: %s", line);
	assert_string_equal(line, "whoami=OK heartbeat=OK\n");
	fprintf(stderr, "[it] the uid kept %ld, %ld answered EXHAUSTED\n",
	    sum.accepted, sum.exhausted);
	for (int i = 0; i < FLOOD_PROCS; i++)
		assert_true(fl[i].accepted <= 64);
	assert_true(sum.accepted <= 256);
	assert_true(sum.accepted >= 64);
	assert_true(sum.exhausted >= 1);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
	        test_other_uid_flood, setup_uid, teardown_uid),
	};
	struct passwd *pw = NULL;

	it_args(argc, argv);
	daemon_exe = argv[1];
	if (geteuid() != 0) {
		fprintf(stderr,
		    "[it] SKIP: needs root (the flood runs as "
		    "nobody)\n");
		return 77;
	}
	if (getpwnam_r("nobody", &nobody, nobody_buf, sizeof(nobody_buf), &pw)
	        != 0
	    || pw == NULL) {
		fprintf(stderr, "[it] SKIP: no user nobody\n");
		return 77;
	}
	if (!it_runnable_by_others(SV_IT_CONNFLOOD)) {
		fprintf(stderr,
		    "[it] SKIP: nobody cannot run %s (a directory on the way "
		    "is closed to others)\n",
		    SV_IT_CONNFLOOD);
		return 77;
	}
	return it_finish(cmocka_run_group_tests_name(
	    "integration_conns_uid", tests, NULL, NULL));
}
