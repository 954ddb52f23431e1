/*
 * integration_fds.c — the daemon's descriptors and memory grow with what
 * runs, not with what might (issue 20, item 4; issue 15, item 7).
 *
 * Cases:
 *   - descriptors: a daemon with one worker (default settings, so activity
 *     regions on) is measured (base, /proc/PID/fd), scaled to FDS_N workers
 *     and measured again once every worker is running; the growth must be
 *     at most one descriptor per added worker (SVD_FDS_PER_WORKER) plus
 *     FDS_SLACK. Scaled to 0, the count must come back to base + FDS_SLACK.
 *   - memory: two daemons, each with a group of count 1, one with
 *     max_count MEM_BIG_MAX and one with max_count MEM_SMALL_MAX; their
 *     proportional set sizes (Pss of /proc/PID/smaps_rollup) must differ by
 *     less than MEM_MARGIN_KB: state for slots that hold no worker costs
 *     nothing (it cost about 1 kB a slot before).
 *   - room: a size the machine cannot hold is refused with one clear line,
 *     not half started. `supervised --check` under a descriptor limit of
 *     ROOM_NOFILE refuses a config whose max_count needs more (exit 2, one
 *     line naming the key and ulimit -n) and accepts one that fits; a
 *     running daemon whose limit the test lowers to ROOM_NOFILE (prlimit)
 *     refuses ScaleGroup and CreateGroup growth past it with
 *     SV_EEXHAUSTED, leaving the group as it was, and still grows within
 *     it and shrinks.
 *
 * The workers are /bin/sleep (no report socket, no threads): the test
 * waits for them through the daemon's own list (every ordinal running,
 * with a pid, ready), never by sleeping. Descriptor counts are polled with a
 * deadline until they settle under the bound, since a reaped worker's
 * pidfd is closed on the daemon's next turn, not at once.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "../sv_proc.h"
#include "../sv_tmpdir.h"

/* Workers of the descriptor case. */
#define FDS_N 200
/* Descriptors allowed beyond one per worker: the test's own connections
 * to the daemon and a transient one (an accepted client, a journal
 * rotation) caught by the scan. */
#define FDS_SLACK 8
/* max_count of the two daemons of the memory case (SV_ORDINALS_MAX is the
 * largest a config may set). */
#define MEM_BIG_MAX   4096
#define MEM_SMALL_MAX 16
/* Largest Pss difference allowed between them: generous (the old per-slot
 * state made it about 1 kB x 4080 slots = 4 MB). */
#define MEM_MARGIN_KB 2048

/* The descriptor limit of the room cases, and sizes that fit in it or
 * not: the daemon counts 48 descriptors of its own (SVD_FDS_BASE) and one
 * per worker, so 120 leaves room for 72 workers. */
#define ROOM_NOFILE 120
#define ROOM_A      60 /* max_count of both groups; 60 + 48 fits */
#define ROOM_B_OK   12 /* 60 + 12 + 48 = 120: fits exactly */

static const char *const sleep_args[] = {"100000", NULL};
static const char       *daemon_path; /* argv[1]: supervised */

/* pss_kb reads Pss from /proc/PID/smaps_rollup (VmRSS of
 * /proc/PID/status where that file does not exist); -1 when neither
 * reads. */
static long
pss_kb(pid_t pid)
{
	long kb = sv_proc_kb(pid, "smaps_rollup", "Pss");

	return kb >= 0 ? kb : sv_proc_kb(pid, "status", "VmRSS");
}

/* running counts the workers of group that run, with a pid, ready. */
static long
running(it_ctx *ctx, const char *group, long *listed)
{
	sv_workers *w = NULL;
	long        n = 0;

	IT_PASS(ctx, sv_client_list(ctx->client, group, IT_CALL_MS, &w));
	for (size_t i = 0; i < sv_workers_count(w); i++)
		if (sv_workers_state(w, i) == SV_STATE_RUNNING
		    && sv_workers_pid(w, i) > 0 && sv_workers_ready(w, i))
			n++;
	if (listed != NULL)
		*listed = (long) sv_workers_count(w);
	sv_workers_free(w);
	return n;
}

/* wait_running polls until exactly want workers of group run (and no
 * other is listed) or fails after deadline_ms. */
static void
wait_running(it_ctx *ctx, const char *group, long want, int deadline_ms)
{
	int64_t t0 = it_now_ms();
	long    n, listed;

	while ((n = running(ctx, group, &listed)) != want || listed != want) {
		if (it_now_ms() - t0 > deadline_ms)
			fail_msg("%s: %ld of %ld workers running (%ld listed) "
			         "after %d ms",
			    group, n, want, listed, deadline_ms);
		it_pause_ms(20);
	}
}

/* wait_fds_at_most polls the daemon's descriptor count until it is at
 * most bound or deadline_ms passes; returns the last count. */
static long
wait_fds_at_most(it_ctx *ctx, long bound, int deadline_ms)
{
	int64_t t0 = it_now_ms();
	long    n;

	while ((n = sv_proc_fd_count(ctx->daemon)) > bound
	    && it_now_ms() - t0 < deadline_ms)
		it_pause_ms(20);
	return n;
}

/* The group of the descriptor case: /bin/sleep, default settings. */
static int
setup_fds(void **state)
{
	static struct it_group g[1];

	g[0] = (struct it_group) {.name = "w",
	    .count                      = 1,
	    .max_count                  = FDS_N,
	    .program                    = "/bin/sleep",
	    .args                       = sleep_args};
	return it_setup_groups(state, g, 1);
}

/* One descriptor per worker at most: 1 -> FDS_N workers adds at most
 * FDS_N - 1 (+ FDS_SLACK) descriptors; back to 0 workers, the count
 * returns to base (+ FDS_SLACK). */
static void
test_fds_per_worker(void **state)
{
	it_ctx *ctx = *state;
	long    base, full, empty, bound;

	wait_running(ctx, "w", 1, IT_CONVERGE_MS);
	assert_int_equal(it_wait_children_match(ctx, IT_CONVERGE_MS), 0);
	base = sv_proc_fd_count(ctx->daemon);
	assert_true(base > 0);

	IT_PASS(
	    ctx, sv_client_scale(ctx->client, "w", FDS_N, IT_CALL_MS, NULL));
	/* The daemon's list, not it_wait_children_match: that compares at
	 * most IT_MAX_PROCS (64) pids a side. */
	wait_running(ctx, "w", FDS_N, 30000);
	bound = base + (FDS_N - 1) + FDS_SLACK;
	full  = wait_fds_at_most(ctx, bound, IT_CONVERGE_MS);
	printf("integration_fds: daemon descriptors: %ld with 1 worker, %ld "
	       "with %d (%.2f per added worker; bound %ld)\n",
	    base, full, FDS_N, (double) (full - base) / (FDS_N - 1), bound);
	assert_true(full <= bound);
	/* They are the workers' own: at least one each (their pidfds). */
	assert_true(full >= base + (FDS_N - 1));

	IT_PASS(ctx, sv_client_scale(ctx->client, "w", 0, IT_CALL_MS, NULL));
	wait_running(ctx, "w", 0, 30000);
	assert_int_equal(it_wait_children_match(ctx, 30000), 0); /* none */
	bound = base + FDS_SLACK;
	empty = wait_fds_at_most(ctx, bound, IT_CONVERGE_MS);
	printf("integration_fds: daemon descriptors after scaling to 0: %ld "
	       "(bound %ld)\n",
	    empty, bound);
	assert_true(empty <= bound);
}

/* pss_with_max starts a daemon whose one group has count 1 and the given
 * max_count, waits for the worker, and returns the daemon's Pss in kB. */
static long
pss_with_max(int max_count)
{
	struct it_group g   = {.name = "m",
	      .count                 = 1,
	      .max_count             = max_count,
	      .program               = "/bin/sleep",
	      .args                  = sleep_args};
	it_ctx         *ctx = calloc(1, sizeof(*ctx));
	long            kb;

	assert_non_null(ctx);
	if (it_start(ctx, &g, 1) != 0) {
		free(ctx);
		fail_msg("daemon with max_count %d did not start", max_count);
		return -1; /* not reached: fail_msg does not return */
	}
	wait_running(ctx, "m", 1, IT_CONVERGE_MS);
	/* A status call touches what listing the group touches. */
	(void) running(ctx, "m", NULL);
	kb = pss_kb(ctx->daemon);
	assert_int_equal(it_stop(ctx), 0);
	free(ctx);
	return kb;
}

/* Slots without a worker cost (next to) nothing: Pss with max_count 4096
 * and 16, one worker each, differs by less than MEM_MARGIN_KB. */
static void
test_memory_per_live_seat(void **state)
{
	long small, big;

	(void) state;
	small = pss_with_max(MEM_SMALL_MAX);
	big   = pss_with_max(MEM_BIG_MAX);
	printf("integration_fds: daemon Pss with 1 worker: %ld kB at "
	       "max_count %d, %ld kB at max_count %d (difference %ld kB, "
	       "margin %d)\n",
	    small, MEM_SMALL_MAX, big, MEM_BIG_MAX, big - small,
	    MEM_MARGIN_KB);
	assert_true(small > 0 && big > 0);
	assert_true(big - small < MEM_MARGIN_KB);
}

/* check_config runs `supervised --check --config path` under a descriptor
 * limit of nofile (soft and hard, set in the child before exec) and
 * returns its exit status; its stderr goes to err (len bytes). */
static int
check_config(const char *path, rlim_t nofile, char *err, size_t len)
{
	int     pfd[2], st = 0;
	ssize_t n, got     = 0;
	pid_t   pid;

	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit rl = {nofile, nofile};
		char *argv[] = {(char *) daemon_path, "--check", "--config",
		    (char *) path, NULL};

		dup2(pfd[1], 2);
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
			_exit(120);
		execv(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	while ((size_t) got + 1 < len
	    && (n = read(pfd[0], err + got, len - 1 - (size_t) got)) > 0)
		got += n;
	err[got] = '\0';
	close(pfd[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* write_config writes a config of one /bin/sleep group with max_count. */
static void
write_config(const char *path, int max_count)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fprintf(f,
	    "groups = ( { name = \"w\"; argv = [\"/bin/sleep\", \"100000\"];"
	    " count = 1;\n  max_count = %d; purpose = \"room\"; } );\n",
	    max_count);
	assert_int_equal(fclose(f), 0);
}

/* An explicit max_count whose workers need more descriptors than the
 * limit is refused at load, in one line naming the key and the cure;
 * one that fits passes. */
static void
test_room_config(void **state)
{
	char dir[64], path[96], err[1024];
	int  rc;

	(void) state;
	assert_int_equal(sv_tmpdir(dir, sizeof(dir), "sv-fds"), 0);
	snprintf(path, sizeof(path), "%s/c.conf", dir);

	write_config(path, ROOM_NOFILE);
	rc = check_config(path, ROOM_NOFILE, err, sizeof(err));
	printf("integration_fds: --check, max_count %d under ulimit -n %d: "
	       "exit %d: %s",
	    ROOM_NOFILE, ROOM_NOFILE, rc, err);
	assert_int_equal(rc, 2);
	assert_non_null(strstr(err, "groups[0].max_count"));
	assert_non_null(strstr(err, "ulimit -n"));
	assert_non_null(strchr(err, '\n'));
	assert_string_equal(strchr(err, '\n'), "\n"); /* one line */

	write_config(path, ROOM_A);
	rc = check_config(path, ROOM_NOFILE, err, sizeof(err));
	assert_int_equal(rc, 0);
	assert_string_equal(err, "");

	assert_int_equal(sv_rmtree(dir), 0);
}

/* Two groups of up to ROOM_A workers (one each running). */
static int
setup_room(void **state)
{
	static struct it_group g[2];

	for (int i = 0; i < 2; i++)
		g[i] = (struct it_group) {.name = i == 0 ? "a" : "b",
		    .count                      = 1,
		    .max_count                  = ROOM_A,
		    .program                    = "/bin/sleep",
		    .args                       = sleep_args};
	return it_setup_groups(state, g, 2);
}

/* Growth past the daemon's descriptor limit is refused before anything
 * changes; growth within it and shrinking go through. */
static void
test_room_requests(void **state)
{
	it_ctx       *ctx = *state;
	struct rlimit rl  = {ROOM_NOFILE, ROOM_NOFILE};
	sv_groupspec *sp  = NULL;
	const char   *msg;

	wait_running(ctx, "a", 1, IT_CONVERGE_MS);
	wait_running(ctx, "b", 1, IT_CONVERGE_MS);
	assert_int_equal(prlimit(ctx->daemon, RLIMIT_NOFILE, &rl, NULL), 0);

	IT_PASS(
	    ctx, sv_client_scale(ctx->client, "a", ROOM_A, IT_CALL_MS, NULL));
	wait_running(ctx, "a", ROOM_A, 30000);
	/* b to ROOM_A: 120 workers, 168 descriptors: refused, b unchanged */
	IT_FAIL(ctx,
	    sv_client_scale(ctx->client, "b", ROOM_A, IT_CALL_MS, NULL),
	    SV_EEXHAUSTED);
	msg = sv_client_error_message(ctx->client);
	printf("integration_fds: scale b to %d under ulimit -n %d: %s\n",
	    ROOM_A, ROOM_NOFILE, msg);
	assert_non_null(strstr(msg, "ulimit -n"));
	assert_null(strchr(msg, '\n'));
	wait_running(ctx, "b", 1, IT_CONVERGE_MS);
	/* one more than fits: refused too */
	IT_FAIL(ctx,
	    sv_client_scale(ctx->client, "b", ROOM_B_OK + 1, IT_CALL_MS, NULL),
	    SV_EEXHAUSTED);
	wait_running(ctx, "b", 1, IT_CONVERGE_MS);
	/* a new group that does not fit is not created */
	IT_PASS(ctx, sv_groupspec_new("c", "room", ROOM_A, &sp));
	IT_PASS(ctx, sv_groupspec_add_arg(sp, "/bin/sleep"));
	IT_PASS(ctx, sv_groupspec_add_arg(sp, "100000"));
	IT_FAIL(ctx, sv_client_create_group(ctx->client, sp, IT_CALL_MS),
	    SV_EEXHAUSTED);
	sv_groupspec_free(sp);
	{
		sv_workers *w = NULL;
		assert_int_equal(
		    sv_client_list(ctx->client, "c", IT_CALL_MS, &w),
		    SV_ENOTFOUND);
	}
	/* exactly what fits goes through; shrinking always does */
	IT_PASS(ctx,
	    sv_client_scale(ctx->client, "b", ROOM_B_OK, IT_CALL_MS, NULL));
	wait_running(ctx, "b", ROOM_B_OK, 30000);
	/* full: one more worker is refused */
	IT_FAIL(ctx,
	    sv_client_start_worker(ctx->client, "b", IT_CALL_MS, NULL),
	    SV_EEXHAUSTED);
	wait_running(ctx, "b", ROOM_B_OK, IT_CONVERGE_MS);
	IT_PASS(ctx, sv_client_scale(ctx->client, "a", 0, IT_CALL_MS, NULL));
	wait_running(ctx, "a", 0, 30000);
	assert_int_equal(it_wait_children_match(ctx, 30000), 0);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
	        test_fds_per_worker, setup_fds, it_teardown),
	    cmocka_unit_test(test_memory_per_live_seat),
	    cmocka_unit_test(test_room_config),
	    cmocka_unit_test_setup_teardown(
	        test_room_requests, setup_room, it_teardown),
	};

	it_args(argc, argv);
	daemon_path = argv[1];
	return it_finish(
	    cmocka_run_group_tests_name("fds", tests, NULL, NULL));
}
