/*
 * integration_spawn_cgroup.c — workers are born in their own cgroup, and
 * where the kernel cannot do that they still get there (docs/config.md,
 * "What a worker leaves behind").
 *
 * Design: the daemon runs under sv-noclone3 (a seccomp wrapper, argv[3]),
 * which stands where the harness expects the daemon: SV_NOCLONE3_EXEC
 * names the real one, SV_NOCLONE3_LOG collects its stderr in a file of
 * the test. Cases:
 *   - clone3 answers ENOSYS: both workers and the replacement of a killed
 *     one run in per-worker cgroups of the daemon, and the daemon says
 *     once (one log line for three spawns) that it joins them by a write
 *     to cgroup.procs;
 *   - the real clone3 (SV_NOCLONE3_OFF=1): no such line, the workers are
 *     in their cgroups, and the replacement of a killed worker, born in
 *     a cgroup, lives and reports (a child born in a cgroup that had
 *     cgroup.kill written is killed at once: a reused leaf would show as
 *     a replacement that never reports) in a leaf other than its
 *     predecessor's.
 * Where the daemon has no per-worker cgroups (no delegated cgroup2), the
 * cases are skipped (exit 77). Every wait has a deadline.
 *
 * Run as: integration_spawn_cgroup SUPERVISED SV-TESTWORKER SV-NOCLONE3.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "../sv_skip.h"
#include "harness.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../sv_tmpdir.h"

#define GROUP    "w"
#define NOTE     "clone3 with CLONE_INTO_CGROUP is not available"
#define NO_CGRPS "no per-worker cgroups"

/* The daemon's stderr (SV_NOCLONE3_LOG), made per case. */
static char log_path[64];

/* leaf_of writes to out the per-worker cgroup of pid under daemon's tree
 * (".../supervised.DAEMON/LEAF"); false when pid is in no such leaf. */
static bool
leaf_of(pid_t pid, pid_t daemon, char *out, size_t outlen)
{
	char  path[64], line[512], want[64];
	FILE *f;
	bool  yes = false;

	snprintf(path, sizeof(path), "/proc/%ld/cgroup", (long) pid);
	snprintf(want, sizeof(want), "/supervised.%ld/", (long) daemon);
	if ((f = fopen(path, "re")) == NULL) {
		return false;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		char *at = strstr(line, want);
		if (strncmp(line, "0::", 3) == 0 && at != NULL) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(out, outlen, "%s", at + strlen(want));
			yes = out[0] != '\0';
		}
	}
	fclose(f);
	return yes;
}

/* log_count counts the lines of the daemon's log that contain what. */
static int
log_count(const char *what)
{
	char  line[1024];
	FILE *f = fopen(log_path, "re");
	int   n = 0;

	if (f == NULL) {
		return -1;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		n += strstr(line, what) != NULL;
	}
	fclose(f);
	return n;
}

/* setup_mode makes the log file and starts the daemon with two workers,
 * under the filter (off = false) or not. */
static int
setup_mode(void **state, bool off)
{
	static const struct it_group g[]
	    = {{.name = GROUP, .count = 2, .max_count = 2}};

	if (sv_tmpfile(log_path, sizeof(log_path), "sv-it-noclone3") != 0) {
		return -1;
	}
	setenv("SV_NOCLONE3_LOG", log_path, 1);
	if (off) {
		setenv("SV_NOCLONE3_OFF", "1", 1);
	} else {
		unsetenv("SV_NOCLONE3_OFF");
	}
	return it_setup_groups(state, g, 1);
}

static int
setup_filtered(void **state)
{
	return setup_mode(state, false);
}

static int
setup_real(void **state)
{
	return setup_mode(state, true);
}

static int
teardown_log(void **state)
{
	int rc = it_teardown(state);

	unlink(log_path);
	return rc;
}

/* kill_and_replace checks both workers are in leaves, kills ordinal 0's
 * and returns (in leaf) the leaf of its replacement, which must report
 * with generation 1; old gets the killed worker's leaf. false: no
 * per-worker cgroups (the case is skipped). */
static bool
kill_and_replace(it_ctx *ctx, char *old, char *leaf, size_t len)
{
	struct it_report r[2], n;
	pid_t            victim = 0;

	it_expect_reports(ctx, 2, r);
	for (int i = 0; i < 2; i++) {
		if (!leaf_of((pid_t) r[i].pid, ctx->daemon, leaf, len)) {
			if (log_count(NO_CGRPS) > 0) {
				return false;
			}
			fail_msg(
			    "worker %ld is in no per-worker cgroup", r[i].pid);
		}
		if (r[i].ordinal == 0) {
			victim = (pid_t) r[i].pid;
			snprintf(old, len, "%s", leaf);
		}
	}
	assert_true(victim > 0);
	assert_int_equal(kill(victim, SIGKILL), 0);
	assert_int_equal(it_recv_report(ctx, IT_REPORT_MS, &n), 0);
	assert_int_equal(n.ordinal, 0);
	assert_int_equal(n.generation, 1);
	if (!leaf_of((pid_t) n.pid, ctx->daemon, leaf, len)) {
		fail_msg("replacement %ld is in no per-worker cgroup", n.pid);
	}
	/* It lives on (and so does its seat: no further spawn). */
	it_expect_no_report(ctx, 300);
	assert_int_equal(kill((pid_t) n.pid, 0), 0);
	return true;
}

/* clone3 answers ENOSYS: every worker still gets its cgroup (it joins by a
 * write to cgroup.procs), and the daemon says so exactly once. */
static void
test_fallback_without_clone3(void **state)
{
	it_ctx *ctx = *state;
	char    old[256], leaf[256];

	if (!kill_and_replace(ctx, old, leaf, sizeof(old))) {
		SV_SKIP("no per-worker cgroup v2 here (see the daemon's log)");
	}
	assert_int_equal(it_stop(ctx), 0);
	if (log_count(NOTE) != 1) {
		fail_msg("the fallback was logged %d times in %s, want once "
		         "(3 spawns)",
		    log_count(NOTE), log_path);
	}
}

/* The real clone3: no fallback line, and the replacement, born in a new
 * leaf, lives. */
static void
test_born_in_new_leaf(void **state)
{
	it_ctx *ctx = *state;
	char    old[256], leaf[256];

	if (!kill_and_replace(ctx, old, leaf, sizeof(old))) {
		SV_SKIP("no per-worker cgroup v2 here (see the daemon's log)");
	}
	if (strcmp(old, leaf) == 0) {
		fail_msg("the replacement runs in its predecessor's (killed) "
		         "cgroup %s",
		    leaf);
	}
	assert_int_equal(it_stop(ctx), 0);
	assert_int_equal(log_count(NOTE), 0);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
	        test_fallback_without_clone3, setup_filtered, teardown_log),
	    cmocka_unit_test_setup_teardown(
	        test_born_in_new_leaf, setup_real, teardown_log),
	};
	char *args[3];

	if (argc < 4) {
		fprintf(stderr,
		    "usage: %s SUPERVISED SV-TESTWORKER SV-NOCLONE3\n",
		    argc > 0 ? argv[0] : "integration_spawn_cgroup");
		return 2;
	}
	/* The wrapper stands where the harness expects the daemon. */
	setenv("SV_NOCLONE3_EXEC", argv[1], 1);
	args[0] = argv[0];
	args[1] = argv[3];
	args[2] = argv[2];
	it_args(3, args);
	return it_finish(SV_EXIT(cmocka_run_group_tests_name(
	    "integration_spawn_cgroup", tests, NULL, NULL)));
}
