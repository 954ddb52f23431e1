/*
 * integration_shutdown.c — SIGTERM / SIGINT to supervised: workers stopped,
 * reaped, socket removed, exit status 0.
 *
 * Design: the test signals the daemon pid it started and waits on a pidfd
 * with a deadline of the configured stop timeout plus a margin. Worker pids
 * are taken from the daemon's status list before the signal, together with
 * their /proc start time, so that "gone" means gone and not "the pid was
 * reused". Because the test is a child subreaper, a worker the daemon
 * abandoned would be reparented to the test and show up here (and in the
 * teardown) instead of vanishing into init.
 *
 * The escalation case uses workers that ignore SIGTERM (SV_TEST_IGNORE_TERM)
 * with a group stop_timeout_ms of 500: the daemon must wait that long, then
 * SIGKILL them, reap them and still exit 0.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nng/supplemental/util/platform.h>

#define STUBBORN_STOP_MS 500

/* cmocka setup: one group "g" of 3 ordinary workers. */
static int
setup_g3(void **state)
{
	static const struct it_group g[] = {
	    {.name = "g", .count = 3},
	};

	return it_setup_groups(state, g, 1);
}

/* cmocka setup: "g" of 2 workers, "stubborn" of 2 that ignore SIGTERM. */
static int
setup_stubborn(void **state)
{
	static const struct it_group g[] = {
	    {.name = "g", .count = 2},
	    {.name               = "stubborn",
	        .count           = 2,
	        .ignore_term     = true,
	        .stop_timeout_ms = STUBBORN_STOP_MS},
	};

	return it_setup_groups(state, g, 2);
}

/* The pids of the workers and their start times, read before the signal. */
struct snapshot {
	pid_t              pid[IT_MAX_PROCS];
	unsigned long long start[IT_MAX_PROCS];
	size_t             n;
};

/* Records every listed worker; asserts the list matches the reports. */
static void
take_snapshot(it_ctx *ctx, size_t nworkers, struct snapshot *s)
{
	struct it_report r[IT_MAX_PROCS];
	int              n;

	it_expect_reports(ctx, nworkers, r);
	n = it_list(ctx, NULL, NULL, s->pid, IT_MAX_PROCS);
	assert_int_equal(n, (int) nworkers);
	s->n = (size_t) n;
	for (size_t i = 0; i < s->n; i++) {
		bool reported = false;

		for (size_t j = 0; j < nworkers; j++)
			reported |= r[j].pid == s->pid[i];
		if (!reported)
			fail_msg(
			    "listed pid %ld sent no report", (long) s->pid[i]);
		if (it_proc_stat(s->pid[i], NULL, NULL, &s->start[i]) != 0)
			fail_msg(
			    "worker %ld is not running", (long) s->pid[i]);
	}
	assert_int_equal(it_wait_children_match(ctx, IT_CONVERGE_MS), 0);
}

/* Asserts that no process of the snapshot exists any more. */
static void
expect_all_gone(const struct snapshot *s)
{
	for (size_t i = 0; i < s->n; i++) {
		unsigned long long start = 0;
		pid_t              ppid  = 0;
		char               st    = '?';

		if (it_proc_stat(s->pid[i], &ppid, &st, &start) != 0)
			continue; /* no /proc entry: gone */
		if (start != s->start[i])
			continue; /* pid reused by an unrelated process */
		fail_msg("worker %ld still exists after the daemon exited "
		         "(state %c, parent %ld)",
		    (long) s->pid[i], st, (long) ppid);
	}
}

/* Signals the daemon and asserts a clean exit 0 within limit_ms. */
static int64_t
signal_and_reap(it_ctx *ctx, int sig, int limit_ms)
{
	struct stat sb;
	int64_t     t0 = it_now_ms(), elapsed;

	assert_true(it_daemon_alive(ctx));
	assert_int_equal(kill(ctx->daemon, sig), 0);
	if (it_reap_daemon(ctx, limit_ms) != 0)
		fail_msg("daemon did not exit within %d ms of signal %d",
		    limit_ms, sig);
	elapsed = it_now_ms() - t0;
	printf("daemon exited %lld ms after signal %d, status 0x%x\n",
	    (long long) elapsed, sig, ctx->status);
	if (!WIFEXITED(ctx->status))
		fail_msg("daemon died of signal %d", WTERMSIG(ctx->status));
	assert_int_equal(WEXITSTATUS(ctx->status), 0);
	if (stat(ctx->sock_path, &sb) == 0)
		fail_msg("%s still exists after shutdown", ctx->sock_path);
	assert_int_equal(errno, ENOENT);
	return elapsed;
}

/* 6: SIGTERM stops every worker, removes the socket, exits 0. */
static void
test_sigterm_stops_all(void **state)
{
	it_ctx         *ctx = *state;
	struct snapshot s;

	take_snapshot(ctx, 3, &s);
	signal_and_reap(
	    ctx, SIGTERM, ctx->stop_timeout_ms + IT_STOP_MARGIN_MS);
	expect_all_gone(&s);
}

/* SIGINT is a shutdown request too. */
static void
test_sigint_stops_all(void **state)
{
	it_ctx         *ctx = *state;
	struct snapshot s;

	take_snapshot(ctx, 3, &s);
	signal_and_reap(ctx, SIGINT, ctx->stop_timeout_ms + IT_STOP_MARGIN_MS);
	expect_all_gone(&s);
}

/* Workers that ignore SIGTERM are SIGKILLed after their stop timeout. */
static void
test_sigterm_escalates_to_sigkill(void **state)
{
	it_ctx         *ctx = *state;
	struct snapshot s;
	int64_t         elapsed;

	take_snapshot(ctx, 4, &s);
	elapsed = signal_and_reap(
	    ctx, SIGTERM, STUBBORN_STOP_MS + IT_STOP_MARGIN_MS);
	/* The daemon waited for the group's timeout before SIGKILL. */
	if (elapsed < STUBBORN_STOP_MS - 50)
		fail_msg("daemon exited after %lld ms, before the %d ms stop "
		         "timeout of workers that ignore SIGTERM",
		    (long long) elapsed, STUBBORN_STOP_MS);
	expect_all_gone(&s);
}

static const struct it_group straggler_groups[] = {
    {.name       = "straggler",
        .count   = 1,
        .program = SV_IT_SRCDIR "/sv-straggler.sh"},
};

/* setup_straggler starts one worker that leaves a child behind. */
static int
setup_straggler(void **state)
{
	return it_setup_groups(state, straggler_groups, 1);
}

/*
 * A worker's own children do not outlive a shutdown: the worker exits on
 * SIGTERM but its child ignores it, so the supervisor kills what is left of
 * the worker (its process group, its cgroup where there is one) once the
 * worker is reaped. The daemon is a child subreaper, so the orphaned child
 * is its to reap: the child must be gone (no process with its pid and start
 * time) within IT_REAP_MS of the daemon's exit.
 */
static void
test_stragglers_are_killed(void **state)
{
	it_ctx            *ctx = *state;
	struct it_proc     kids[4];
	sv_workers        *w;
	int64_t            wpid = 0, t0 = it_now_ms();
	pid_t              gc    = 0;
	unsigned long long start = 0, now_start = 0;

	/* Bounded polls: the worker's pid, then its child. */
	while (gc == 0) {
		if (it_now_ms() - t0 > IT_CONVERGE_MS)
			fail_msg("worker %lld never started its child",
			    (long long) wpid);
		IT_PASS(ctx,
		    sv_client_status(
		        ctx->client, "straggler", 0, IT_CALL_MS, &w));
		wpid = sv_workers_pid(w, 0);
		sv_workers_free(w);
		if (wpid > 0 && it_children((pid_t) wpid, kids, 4) > 0
		    && it_proc_stat(kids[0].pid, NULL, NULL, &start) == 0)
			gc = kids[0].pid;
		else
			nng_msleep(10);
	}
	signal_and_reap(
	    ctx, SIGTERM, ctx->stop_timeout_ms + IT_STOP_MARGIN_MS);
	t0 = it_now_ms();
	/* Reaped by the daemon, or (if it left it) by us as subreaper. */
	while (it_proc_stat(gc, NULL, NULL, &now_start) == 0
	    && now_start == start) {
		(void) waitpid(gc, NULL, WNOHANG);
		if (it_now_ms() - t0 > IT_REAP_MS)
			fail_msg(
			    "pid %ld, child of a stopped worker, is still "
			    "running",
			    (long) gc);
		nng_msleep(10);
	}
}

/* Runs the group; argv[1] = supervised, argv[2] = sv-testworker. */
int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
	        test_sigterm_stops_all, setup_g3, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_sigint_stops_all, setup_g3, it_teardown),
	    cmocka_unit_test_setup_teardown(test_sigterm_escalates_to_sigkill,
	        setup_stubborn, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_stragglers_are_killed, setup_straggler, it_teardown),
	};

	it_args(argc, argv);
	return it_finish(cmocka_run_group_tests_name(
	    "integration_shutdown", tests, NULL, NULL));
}
