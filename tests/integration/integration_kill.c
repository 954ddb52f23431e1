/*
 * integration_kill.c — kill -9 a worker ten times; the ordinal survives.
 *
 * Design: one daemon, group "g" of 3 sv-testworker processes with
 * min_uptime_ms = 0, so a crash is restarted at once. The test finds
 * ordinal 1's pid with sv_client_status, SIGKILLs it (a worker our daemon
 * spawned, found by pid), and waits with a deadline for the replacement's
 * report. Each replacement must hold ordinal 1 with generation 1, 2, ... 10
 * and a new pid. After every kill the daemon must have reaped the dead child
 * (no 'Z' child in /proc within IT_REAP_MS) and its status list must name
 * exactly its live children (within IT_CONVERGE_MS). Ordinals 0 and 2 must
 * not move at all.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define GROUP    "g" /* it_setup_g3: group "g" of NWORKERS, at most 5 */
#define NWORKERS 3
#define KILLS    10

/* Reads the status of ordinal of GROUP; asserts a single running entry. */
static void
status_of(it_ctx *ctx, uint32_t ordinal, pid_t *pidp, uint64_t *genp,
    uint64_t *restartsp, int32_t *sigp, int32_t *codep)
{
	sv_workers *w = NULL;

	IT_PASS(ctx,
	    sv_client_status(ctx->client, GROUP, ordinal, IT_CALL_MS, &w));
	assert_int_equal(sv_workers_count(w), 1);
	assert_int_equal(sv_workers_ordinal(w, 0), ordinal);
	*pidp = (pid_t) sv_workers_pid(w, 0);
	*genp = sv_workers_generation(w, 0);
	if (restartsp != NULL)
		*restartsp = sv_workers_restarts(w, 0);
	if (sigp != NULL)
		*sigp = sv_workers_last_signal(w, 0);
	if (codep != NULL)
		*codep = sv_workers_last_exit_code(w, 0);
	sv_workers_free(w);
}

/* 2: ten SIGKILLs of ordinal 1, generations 1..10, nothing left over. */
static void
test_kill9_ordinal1_ten_times(void **state)
{
	it_ctx          *ctx = *state;
	struct it_report r[NWORKERS];
	pid_t            pid_of[NWORKERS] = {0};
	uint64_t         gen, restarts;
	int32_t          sig, code;
	pid_t            pid, ppid;
	char             st;
	size_t           i;

	it_expect_reports(ctx, NWORKERS, r);
	for (i = 0; i < NWORKERS; i++) {
		assert_in_range(r[i].ordinal, 0, NWORKERS - 1);
		assert_int_equal(r[i].generation, 0);
		pid_of[r[i].ordinal] = (pid_t) r[i].pid;
	}
	for (i = 0; i < NWORKERS; i++)
		assert_true(pid_of[i] > 0);

	for (uint64_t want = 1; want <= KILLS; want++) {
		struct it_report nr;
		pid_t            old;
		int              rv;

		status_of(ctx, 1, &old, &gen, NULL, NULL, NULL);
		assert_int_equal(old, pid_of[1]);
		assert_int_equal(gen, want - 1);
		if (kill(old, SIGKILL) != 0)
			fail_msg("kill(%ld, SIGKILL): %s", (long) old,
			    strerror(errno));

		rv = it_recv_report(ctx, IT_REPORT_MS, &nr);
		if (rv != 0)
			fail_msg("kill %llu: no replacement report: %s",
			    (unsigned long long) want,
			    rv > 0 ? nng_strerror(rv) : "unparsable");
		if (nr.rc != SV_OK)
			fail_msg("kill %llu: replacement whoami failed: %s",
			    (unsigned long long) want, nr.raw);
		assert_in_range(nr.ordinal, 0, NWORKERS - 1);
		assert_int_equal(nr.ordinal, 1);
		assert_int_equal(nr.generation, want);
		assert_int_equal(nr.env_ordinal, 1);
		assert_int_equal(nr.env_generation, want);
		assert_int_equal(nr.id_pid, nr.pid);
		assert_int_not_equal(nr.pid, old);
		pid_of[1] = (pid_t) nr.pid;

		/* The daemon reaped the killed child: no zombie, no trace. */
		if (it_wait_no_zombie(ctx->daemon, IT_REAP_MS) != 0)
			fail_msg("kill %llu: zombie children of the daemon "
			         "after %d ms",
			    (unsigned long long) want, IT_REAP_MS);
		if (it_proc_stat(old, &ppid, &st, NULL) == 0
		    && ppid == ctx->daemon)
			fail_msg("kill %llu: killed pid %ld is still a child "
			         "of the daemon (state %c)",
			    (unsigned long long) want, (long) old, st);
		if (it_wait_children_match(ctx, IT_CONVERGE_MS) != 0)
			fail_msg("kill %llu: status list != live children",
			    (unsigned long long) want);

		status_of(ctx, 1, &pid, &gen, &restarts, &sig, &code);
		assert_int_equal(pid, nr.pid);
		assert_int_equal(gen, want);
		assert_int_equal(restarts, want);
		assert_int_equal(sig, SIGKILL);
		assert_int_equal(code, -1);
	}

	/* The neighbours never moved. */
	for (uint32_t o = 0; o < NWORKERS; o += 2) {
		status_of(ctx, o, &pid, &gen, &restarts, NULL, NULL);
		assert_int_equal(pid, pid_of[o]);
		assert_int_equal(gen, 0);
		assert_int_equal(restarts, 0);
	}
	it_expect_no_report(ctx, 300);
}

/* Runs the group; argv[1] = supervised, argv[2] = sv-testworker. */
int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
	        test_kill9_ordinal1_ten_times, it_setup_g3, it_teardown),
	};

	it_args(argc, argv);
	return it_finish(cmocka_run_group_tests_name(
	    "integration_kill", tests, NULL, NULL));
}
