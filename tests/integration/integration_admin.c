/*
 * integration_admin.c — scale, restart and stop through the public client
 * API against a real supervised.
 *
 * Design: one daemon per case, group "g" with count 3 and max_count 5.
 * Changes are observed from both sides: new workers announce themselves
 * with reports (received with deadlines), and stopped workers must leave
 * the daemon's status list and its set of live children (deadline-bounded
 * convergence). Errors must be the documented typed codes, each with a
 * message, and must leave the group untouched.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GROUP     "g" /* it_setup_g3: group "g", at most MAX_COUNT */
#define MAX_COUNT 5

/*
 * Receives n reports and asserts their ordinals are exactly want[0..n-1]
 * (any order); stores the pid of each ordinal in pid_of (indexed by
 * ordinal) and the generation in gen_of, when not NULL.
 */
static void
expect_ordinals(it_ctx *ctx, size_t n, const uint32_t *want, long *pid_of,
    long long *gen_of)
{
	struct it_report r[IT_MAX_PROCS];
	bool             seen[IT_MAX_PROCS] = {false};
	size_t           i, j;

	assert_true(n <= IT_MAX_PROCS);
	it_expect_reports(ctx, n, r);
	for (i = 0; i < n; i++) {
		for (j = 0; j < n; j++)
			if (!seen[j] && r[i].ordinal == (long) want[j])
				break;
		if (j == n)
			fail_msg(
			    "unexpected or duplicate ordinal: %s", r[i].raw);
		seen[j] = true;
		assert_string_equal(r[i].group, GROUP);
		assert_int_equal(r[i].env_ordinal, r[i].ordinal);
		assert_int_equal(r[i].env_generation, r[i].generation);
		assert_int_equal(r[i].id_pid, r[i].pid);
		if (pid_of != NULL)
			pid_of[r[i].ordinal] = r[i].pid;
		if (gen_of != NULL)
			gen_of[r[i].ordinal] = r[i].generation;
	}
}

/* Asserts pid is no longer a child of the daemon. */
static void
expect_not_child(it_ctx *ctx, long pid)
{
	pid_t ppid = 0;
	char  st   = '?';

	if (it_proc_stat((pid_t) pid, &ppid, &st, NULL) == 0
	    && ppid == ctx->daemon)
		fail_msg("stopped worker %ld is still a child of the daemon "
		         "(state %c)",
		    pid, st);
}

/* 7a: scale 3 -> 5 starts ordinals 3 and 4; 5 -> 2 stops 2, 3, 4. */
static void
test_scale_up_and_down(void **state)
{
	it_ctx               *ctx     = *state;
	static const uint32_t first[] = {0, 1, 2}, added[] = {3, 4};
	static const uint32_t five[] = {0, 1, 2, 3, 4}, two[] = {0, 1};
	long                  pid_of[MAX_COUNT] = {0};
	long long             gen_of[MAX_COUNT] = {0};
	uint32_t              prev              = 99;

	expect_ordinals(ctx, 3, first, pid_of, gen_of);

	IT_PASS(
	    ctx, sv_client_scale(ctx->client, GROUP, 5, IT_CALL_MS, &prev));
	assert_int_equal(prev, 3);
	expect_ordinals(ctx, 2, added, pid_of, gen_of);
	assert_int_equal(gen_of[3], 0);
	assert_int_equal(gen_of[4], 0);
	assert_int_equal(
	    it_wait_ordinals(ctx, GROUP, five, 5, IT_CONVERGE_MS), 0);
	assert_int_equal(it_wait_children_match(ctx, IT_CONVERGE_MS), 0);

	IT_PASS(
	    ctx, sv_client_scale(ctx->client, GROUP, 2, IT_CALL_MS, &prev));
	assert_int_equal(prev, 5);
	if (it_wait_ordinals(ctx, GROUP, two, 2, IT_CONVERGE_MS) != 0)
		fail_msg("after scale to 2 the list is not {0,1}");
	assert_int_equal(it_wait_children_match(ctx, IT_CONVERGE_MS), 0);
	assert_int_equal(it_wait_no_zombie(ctx->daemon, IT_REAP_MS), 0);
	expect_not_child(ctx, pid_of[2]);
	expect_not_child(ctx, pid_of[3]);
	expect_not_child(ctx, pid_of[4]);
	/* Scale-down stops; it never restarts what it stopped. */
	it_expect_no_report(ctx, 300);
}

/* 7b: restart(g, 0) replaces ordinal 0 with generation 1. */
static void
test_restart_one(void **state)
{
	it_ctx               *ctx     = *state;
	static const uint32_t first[] = {0, 1, 2}, zero[] = {0};
	long                  pid_of[MAX_COUNT] = {0}, old0;
	long long             gen_of[MAX_COUNT] = {0};
	sv_workers           *w                 = NULL;

	expect_ordinals(ctx, 3, first, pid_of, gen_of);
	old0 = pid_of[0];

	IT_PASS(ctx, sv_client_restart(ctx->client, GROUP, 0, IT_CALL_MS));
	expect_ordinals(ctx, 1, zero, pid_of, gen_of);
	assert_int_equal(gen_of[0], 1);
	assert_int_not_equal(pid_of[0], old0);
	assert_int_equal(it_wait_children_match(ctx, IT_CONVERGE_MS), 0);
	expect_not_child(ctx, old0);

	IT_PASS(ctx, sv_client_status(ctx->client, GROUP, 0, IT_CALL_MS, &w));
	assert_int_equal(sv_workers_pid(w, 0), pid_of[0]);
	assert_int_equal(sv_workers_generation(w, 0), 1);
	assert_int_equal(sv_workers_restarts(w, 0), 1);
	/* The old worker ended by itself on SIGTERM, with status 0. */
	assert_int_equal(sv_workers_last_exit_code(w, 0), 0);
	assert_int_equal(sv_workers_last_signal(w, 0), 0);
	sv_workers_free(w);
	it_expect_no_report(ctx, 300);
}

/* 7c: stop empties the list; a later scale brings fresh generations. */
static void
test_stop_group(void **state)
{
	it_ctx               *ctx     = *state;
	static const uint32_t first[] = {0, 1, 2};
	struct it_proc        kids[IT_MAX_PROCS];
	long                  pid_of[MAX_COUNT] = {0};
	long long             gen_of[MAX_COUNT] = {0};
	uint32_t              prev              = 99;
	size_t                i, n;

	expect_ordinals(ctx, 3, first, pid_of, gen_of);

	IT_PASS(ctx, sv_client_stop(ctx->client, GROUP, IT_CALL_MS, &prev));
	assert_int_equal(prev, 3);
	if (it_wait_ordinals(ctx, GROUP, NULL, 0, IT_CONVERGE_MS) != 0)
		fail_msg("after stop the list of %s is not empty", GROUP);
	assert_int_equal(it_wait_children_match(ctx, IT_CONVERGE_MS), 0);
	assert_int_equal(it_wait_no_zombie(ctx->daemon, IT_REAP_MS), 0);
	n = it_children(ctx->daemon, kids, IT_MAX_PROCS);
	assert_int_equal(n, 0);
	it_expect_no_report(ctx, 300);

	/*
	 * The group stays known: scale brings ordinals 0..2 back, and each
	 * generation is above any that ordinal had before (strictly
	 * increasing for the supervisor's lifetime).
	 */
	IT_PASS(
	    ctx, sv_client_scale(ctx->client, GROUP, 3, IT_CALL_MS, &prev));
	assert_int_equal(prev, 0);
	expect_ordinals(ctx, 3, first, pid_of, gen_of);
	for (i = 0; i < 3; i++)
		if (gen_of[i] < 1)
			fail_msg("ordinal %zu came back with generation %lld, "
			         "not above its previous 0",
			    i, gen_of[i]);
	assert_int_equal(it_wait_children_match(ctx, IT_CONVERGE_MS), 0);
}

/* 7d: typed errors for unknown groups, ordinals and counts. */
static void
test_admin_errors(void **state)
{
	it_ctx               *ctx     = *state;
	static const uint32_t first[] = {0, 1, 2};
	sv_workers           *w       = NULL;
	uint32_t              prev    = 99;

	expect_ordinals(ctx, 3, first, NULL, NULL);

	IT_FAIL(ctx,
	    sv_client_scale(ctx->client, "nope", 1, IT_CALL_MS, &prev),
	    SV_ENOTFOUND);
	IT_FAIL(ctx,
	    sv_client_scale(
	        ctx->client, GROUP, MAX_COUNT + 1, IT_CALL_MS, &prev),
	    SV_EEXHAUSTED);
	assert_int_equal(prev, 99); /* untouched on error */
	IT_FAIL(ctx, sv_client_stop(ctx->client, "nope", IT_CALL_MS, NULL),
	    SV_ENOTFOUND);
	IT_FAIL(ctx, sv_client_restart(ctx->client, "nope", 0, IT_CALL_MS),
	    SV_ENOTFOUND);
	IT_FAIL(ctx,
	    sv_client_restart(ctx->client, GROUP, MAX_COUNT + 2, IT_CALL_MS),
	    SV_ENOTFOUND);
	IT_FAIL(ctx, sv_client_status(ctx->client, GROUP, 3, IT_CALL_MS, &w),
	    SV_ENOTFOUND);
	IT_FAIL(ctx, sv_client_list(ctx->client, "nope", IT_CALL_MS, &w),
	    SV_ENOTFOUND);
	assert_null(w);

	/* Nothing changed. */
	assert_int_equal(it_wait_ordinals(ctx, GROUP, first, 3, 0), 0);
	it_expect_no_report(ctx, 300);
	IT_PASS(ctx, it_hello_ok(ctx));
}

/* Runs the group; argv[1] = supervised, argv[2] = sv-testworker. */
int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
	        test_scale_up_and_down, it_setup_g3, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_restart_one, it_setup_g3, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_stop_group, it_setup_g3, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_admin_errors, it_setup_g3, it_teardown),
	};

	it_args(argc, argv);
	return it_finish(cmocka_run_group_tests_name(
	    "integration_admin", tests, NULL, NULL));
}
