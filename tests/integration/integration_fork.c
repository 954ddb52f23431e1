/*
 * integration_fork.c — a client handle shared across fork() against a real
 * supervised, and the client's deadlines when nobody listens.
 *
 * Design: the prefork pattern of Unicorn, Puma or gunicorn. The test
 * process opens a client and calls Hello, then forks children that use the
 * inherited handle at once. The test process runs nng threads (the
 * harness's report socket), as a preloaded application would; the children
 * call no nng function, only the client, so nothing may abort. Each child
 * reports through its exit status; the parent waits on pidfds with one
 * deadline, then checks its own connection still works. A second case
 * freezes (SIGSTOP) and then terminates the daemon and checks that opening
 * and calling return by their deadlines.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "../sv_lag.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define GROUP    "g"
#define CHILDREN 4
#define FORK_MS  5000 /* every child done */

/* Exit codes of a child: what failed. */
enum { CH_OK = 0, CH_HELLO = 1, CH_ID = 2, CH_WHOAMI = 3, CH_AGAIN = 4 };

/* cmocka setup: one group of one worker. */
static int
setup_g1(void **state)
{
	static const struct it_group g[] = {{.name = GROUP, .count = 1}};

	return it_setup_groups(state, g, 1);
}

/* wait_state polls /proc until pid is in state (e.g. 'T', stopped) or ms
 * pass: a signal is delivered after kill() returns. Returns 0 or -1. */
static int
wait_state(pid_t pid, char state, int ms)
{
	int64_t deadline = it_now_ms() + ms;
	char    st       = 0;

	while (it_proc_stat(pid, NULL, &st, NULL) == 0 && st != state
	    && it_now_ms() < deadline) {
		poll(NULL, 0, 1);
	}
	return st == state ? 0 : -1;
}

/* child_main uses the inherited client; never returns. */
static void
child_main(sv_client *c, const char *supervisor_id)
{
	sv_hello    *h  = NULL;
	sv_identity *id = NULL;
	int          rc = CH_OK;

	if (sv_client_hello(c, IT_CALL_MS, &h) != SV_OK) {
		rc = CH_HELLO;
	} else if (strcmp(sv_hello_supervisor_id(h), supervisor_id) != 0) {
		rc = CH_ID;
	} else if (sv_client_whoami(c, IT_CALL_MS, &id) != SV_ENOTWORKER) {
		/* The test process is no worker, and neither is its child:
		 * the supervisor sees the child's own connection. */
		rc = CH_WHOAMI;
	} else if (sv_client_hello(c, IT_CALL_MS, &h) != SV_OK) {
		rc = CH_AGAIN;
	}
	_exit(rc);
}

/* Children forked after Hello all succeed on the inherited handle; the
 * parent's connection keeps working. */
static void
test_fork_children(void **state)
{
	it_ctx   *ctx = *state;
	sv_hello *h   = NULL;
	char      sid[128];
	pid_t     pid[CHILDREN];
	int       pfd[CHILDREN];
	int       status[CHILDREN];
	bool      done[CHILDREN] = {false};
	int64_t   deadline;
	int       left = CHILDREN;

	IT_PASS(ctx, sv_client_hello(ctx->client, IT_CALL_MS, &h));
	snprintf(sid, sizeof(sid), "%s", sv_hello_supervisor_id(h));
	sv_hello_free(h);
	assert_true(sid[0] != '\0');

	for (int i = 0; i < CHILDREN; i++) {
		pid[i] = fork();
		assert_true(pid[i] >= 0);
		if (pid[i] == 0) {
			child_main(ctx->client, sid);
		}
		pfd[i] = (int) syscall(SYS_pidfd_open, pid[i], 0);
		assert_true(pfd[i] >= 0);
	}
	deadline = it_now_ms() + FORK_MS;
	while (left > 0) {
		struct pollfd p[CHILDREN];
		nfds_t        n  = 0;
		int64_t       ms = deadline - it_now_ms();

		for (int i = 0; i < CHILDREN; i++) {
			if (!done[i]) {
				p[n++] = (struct pollfd) {
				    .fd = pfd[i], .events = POLLIN};
			}
		}
		if (ms <= 0 || poll(p, n, (int) ms) < 0) {
			break;
		}
		for (int i = 0; i < CHILDREN; i++) {
			if (!done[i]
			    && waitpid(pid[i], &status[i], WNOHANG)
			        == pid[i]) {
				done[i] = true;
				left--;
			}
		}
	}
	for (int i = 0; i < CHILDREN; i++) {
		close(pfd[i]);
		if (!done[i]) {
			kill(pid[i], SIGKILL);
			waitpid(pid[i], &status[i], 0);
			fail_msg("child %d not done within %d ms",
			    (int) pid[i], FORK_MS);
		}
		if (WIFSIGNALED(status[i])) {
			fail_msg("child %d killed by signal %d", (int) pid[i],
			    WTERMSIG(status[i]));
		}
		if (!WIFEXITED(status[i]) || WEXITSTATUS(status[i]) != CH_OK) {
			fail_msg("child %d failed at step %d", (int) pid[i],
			    WEXITSTATUS(status[i]));
		}
	}

	/* The parent's handle and connection are unharmed. */
	IT_PASS(ctx, sv_client_hello(ctx->client, IT_CALL_MS, &h));
	assert_string_equal(sv_hello_supervisor_id(h), sid);
	sv_hello_free(h);
	IT_PASS(ctx, it_hello_ok(ctx));
}

/* With the daemon stopped, then gone, opening and calling return by their
 * deadlines. */
static void
test_deadlines_without_daemon(void **state)
{
	it_ctx    *ctx = *state;
	sv_client *c   = NULL;
	sv_hello  *h   = NULL;
	char       url[200];
	int64_t    t0, dt, lag;
	sv_err     e;

	/* Every upper bound below adds how late this machine wakes a timed
	 * wait right now (sv_lag.h): a margin of 200 ms over a 500 ms
	 * deadline catches a second wait or a retry loop, not a loaded
	 * scheduler. */
	lag = sv_lag_ms(100);
	fprintf(stderr, "[it] timer lag: %lld ms\n", (long long) lag);
	/* A socket path nobody listens on, next to the live daemon's. */
	snprintf(url, sizeof(url), "ipc://%s/missing.sock", ctx->dir);
	t0 = it_now_ms();
	assert_int_equal(sv_client_open(&c, url, 500), SV_ECONNECT);
	dt = it_now_ms() - t0;
	if (!sv_lag_within(dt, 500, 700, &lag)) {
		fail_msg(
		    "open of a missing socket took %lld ms", (long long) dt);
	}

	/* A stopped (SIGSTOP) daemon: the kernel accepts the connection,
	 * nobody answers. Open returns at once (it waits for a listener, not
	 * for the answer: the first call waits for that under its own
	 * deadline), keeping the half-open connection (hanging up would trip
	 * nng#1518 in a daemon built on nng), and calls give up at their
	 * deadline. */
	assert_int_equal(kill(ctx->daemon, SIGSTOP), 0);
	assert_int_equal(wait_state(ctx->daemon, 'T', IT_CONVERGE_MS), 0);
	t0 = it_now_ms();
	e  = sv_client_open(&c, ctx->url, 500);
	dt = it_now_ms() - t0;
	if (e != SV_OK || !sv_lag_within(dt, 0, 200, &lag)) {
		kill(ctx->daemon, SIGCONT);
		fail_msg("open of a stopped daemon: %s after %lld ms (%s)",
		    sv_err_name(e), (long long) dt,
		    sv_client_error_message(NULL));
	}
	for (int i = 0; i < 2; i++) {
		sv_client *x = i == 0 ? c : ctx->client;

		t0 = it_now_ms();
		e  = sv_client_hello(x, 500, &h);
		dt = it_now_ms() - t0;
		if (e != SV_ETIMEDOUT || !sv_lag_within(dt, 0, 700, &lag)) {
			kill(ctx->daemon, SIGCONT);
			fail_msg("hello %d to a stopped daemon: %s after %lld "
			         "ms (%s)",
			    i, sv_err_name(e), (long long) dt,
			    sv_client_error_message(x));
		}
	}
	assert_int_equal(kill(ctx->daemon, SIGCONT), 0);
	/* Resumed, it finishes the new client's handshake, and answers the
	 * old client's timed-out request too: that reply is skipped. */
	IT_PASS(ctx, sv_client_hello(c, IT_CALL_MS, &h));
	sv_hello_free(h);
	sv_client_close(c);
	c = NULL;
	IT_PASS(ctx, sv_client_hello(ctx->client, IT_CALL_MS, &h));
	sv_hello_free(h);
	h = NULL;
	IT_PASS(ctx, it_hello_ok(ctx));

	/* Terminate the daemon; its socket file goes away. */
	assert_int_equal(kill(ctx->daemon, SIGTERM), 0);
	assert_int_equal(
	    it_reap_daemon(ctx, ctx->stop_timeout_ms + IT_STOP_MARGIN_MS), 0);
	t0 = it_now_ms();
	assert_int_equal(sv_client_open(&c, ctx->url, 500), SV_ECONNECT);
	dt = it_now_ms() - t0;
	if (!sv_lag_within(dt, 500, 700, &lag)) {
		fail_msg(
		    "open of a stopped daemon took %lld ms", (long long) dt);
	}
	assert_null(c);
	t0 = it_now_ms();
	e  = sv_client_hello(ctx->client, 500, &h);
	dt = it_now_ms() - t0;
	if (e != SV_ETIMEDOUT || !sv_lag_within(dt, 0, 700, &lag)) {
		fail_msg("hello to a stopped daemon: %s after %lld ms (%s)",
		    sv_err_name(e), (long long) dt,
		    sv_client_error_message(ctx->client));
	}
}

/* Runs the group; argv[1] = supervised, argv[2] = sv-testworker. */
int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
	        test_fork_children, setup_g1, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_deadlines_without_daemon, setup_g1, it_teardown),
	};

	it_args(argc, argv);
	return it_finish(cmocka_run_group_tests_name(
	    "integration_fork", tests, NULL, NULL));
}
