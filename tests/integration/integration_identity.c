/*
 * integration_identity.c — workers of a real supervised learn who they are.
 *
 * Design: each case starts its own daemon with one group "g" of 3
 * sv-testworker processes (harness.c). Every worker calls whoami through
 * the public client API and PUSHes the answer, with its environment, to the
 * test's PULL socket; the test compares the reports with each other, with
 * the environment the daemon injected and with the daemon's own status
 * list. A second case checks that a process that is not a worker (the test
 * itself) gets the typed SV_ENOTWORKER error with a message.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define GROUP    "g" /* it_setup_g3: group "g" of NWORKERS, at most 5 */
#define NWORKERS 3

/* 1: three workers, ordinals exactly {0,1,2}, pids match the status list. */
static void
test_three_workers_know_their_ordinals(void **state)
{
	it_ctx          *ctx = *state;
	struct it_report r[NWORKERS];
	long             pid_of[NWORKERS] = {0};
	sv_workers      *w                = NULL;
	size_t           i;

	it_expect_reports(ctx, NWORKERS, r);
	for (i = 0; i < NWORKERS; i++) {
		const struct it_report *x = &r[i];

		if (x->ordinal < 0 || x->ordinal >= NWORKERS)
			fail_msg("ordinal %ld out of 0..%d: %s", x->ordinal,
			    NWORKERS - 1, x->raw);
		if (pid_of[x->ordinal] != 0)
			fail_msg("ordinal %ld given twice (pids %ld, %ld)",
			    x->ordinal, pid_of[x->ordinal], x->pid);
		pid_of[x->ordinal] = x->pid;
		assert_string_equal(x->group, GROUP);
		assert_int_equal(x->generation, 0);
		assert_int_equal(x->id_pid, x->pid);
		/* Only stdin, stdout and stderr cross the supervisor's exec.
		 */
		assert_in_range(x->fd_max, 0, 2);
		/* Zero-round-trip identity agrees with the supervisor. */
		assert_int_equal(x->env_ordinal, x->ordinal);
		assert_int_equal(x->env_generation, x->generation);
		assert_string_equal(x->env_group, GROUP);
	}
	it_expect_no_report(ctx, 300);

	/* The supervisor's view: same pid for each ordinal. */
	IT_PASS(ctx, sv_client_list(ctx->client, GROUP, IT_CALL_MS, &w));
	assert_int_equal(sv_workers_count(w), NWORKERS);
	for (i = 0; i < NWORKERS; i++) {
		uint32_t o = sv_workers_ordinal(w, i);

		assert_string_equal(sv_workers_group(w, i), GROUP);
		assert_int_equal(o, i); /* sorted by group, then ordinal */
		assert_int_equal(sv_workers_pid(w, i), pid_of[o]);
		assert_int_equal(sv_workers_generation(w, i), 0);
		assert_int_equal(sv_workers_state(w, i), SV_STATE_RUNNING);
		assert_int_equal(sv_workers_restarts(w, i), 0);
		assert_string_equal(sv_workers_purpose(w, i),
		    "integration test worker " GROUP);
	}
	sv_workers_free(w);

	/* The single-slot query agrees with the list. */
	for (i = 0; i < NWORKERS; i++) {
		IT_PASS(ctx,
		    sv_client_status(
		        ctx->client, GROUP, (uint32_t) i, IT_CALL_MS, &w));
		assert_int_equal(sv_workers_count(w), 1);
		assert_int_equal(sv_workers_ordinal(w, 0), i);
		assert_int_equal(sv_workers_pid(w, 0), pid_of[i]);
		sv_workers_free(w);
	}
	assert_int_equal(it_wait_children_match(ctx, IT_CONVERGE_MS), 0);
}

/* 3: the test process is no worker: SV_ENOTWORKER with a message. */
static void
test_non_worker_gets_enotworker(void **state)
{
	it_ctx          *ctx = *state;
	sv_identity     *id  = NULL;
	sv_client       *c   = NULL;
	struct it_report r[NWORKERS];
	sv_err           e;

	/* Ask while workers exist, so the daemon has identities to give. */
	it_expect_reports(ctx, NWORKERS, r);

	IT_FAIL(ctx, sv_client_whoami(ctx->client, IT_CALL_MS, &id),
	    SV_ENOTWORKER);
	assert_null(id); /* out-parameter untouched on error */
	printf("whoami from pid %ld: %s\n", (long) getpid(),
	    sv_client_error_message(ctx->client));

	/* The connection is still good, and a new one gets the same answer. */
	IT_PASS(ctx, it_hello_ok(ctx));
	IT_PASS(ctx, sv_client_open(&c, ctx->url, IT_CALL_MS));
	e = sv_client_whoami(c, IT_CALL_MS, &id);
	if (e != SV_ENOTWORKER || sv_client_error_message(c)[0] == '\0')
		fail_msg("whoami on a new client: %s \"%s\"", sv_err_name(e),
		    sv_client_error_message(c));
	assert_null(id);
	sv_client_close(c);
}

/* Runs the group; argv[1] = supervised, argv[2] = sv-testworker. */
int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
	        test_three_workers_know_their_ordinals, it_setup_g3,
	        it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_non_worker_gets_enotworker, it_setup_g3, it_teardown),
	};

	it_args(argc, argv);
	return it_finish(cmocka_run_group_tests_name(
	    "integration_identity", tests, NULL, NULL));
}
