/*
 * integration_backoff.c — restart pacing with real processes: a worker
 * that keeps failing at once is restarted with a growing delay (and shown
 * in state "backoff" meanwhile), and a program that cannot be executed at
 * all is retried slowly instead of in a hot loop, with the daemon serving
 * throughout and stopping cleanly.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nng/supplemental/util/platform.h>
#include "../sv_tmpdir.h"

/* status_of reads slot 0 of group. */
static void
status_of(it_ctx *ctx, const char *group, sv_state *state, int64_t *pid,
    uint64_t *restarts, int32_t *code)
{
	sv_workers *w;

	IT_PASS(ctx, sv_client_status(ctx->client, group, 0, IT_CALL_MS, &w));
	assert_int_equal(sv_workers_count(w), 1);
	*state    = sv_workers_state(w, 0);
	*pid      = sv_workers_pid(w, 0);
	*restarts = sv_workers_restarts(w, 0);
	*code     = sv_workers_last_exit_code(w, 0);
	sv_workers_free(w);
}

/* it_now_ms() before the daemon was started: the case's time bounds count
 * from a time before the first spawn, not from the end of a setup that a
 * loaded machine can stretch while the restarts already go on. */
static int64_t setup_t0;

static const struct it_group crash_groups[] = {
    {.name = "crash", .count = 1, .program = "/bin/false", .backoff_ms = 200},
};

/* setup_crash starts a group whose program exits 1 at once. */
static int
setup_crash(void **state)
{
	setup_t0 = it_now_ms();
	return it_setup_groups(state, crash_groups, 1);
}

/*
 * /bin/false exits at once, every time: fast failures 1, 2 and 3 wait
 * 200, 400 and 800 ms (the cap). Reaching the third restart therefore takes
 * at least 200 + 400 ms, the slot is seen in state backoff with no pid in
 * between, and the last exit code is 1.
 */
static void
test_fast_failures_back_off(void **state)
{
	it_ctx  *ctx = *state;
	int64_t  t0 = it_now_ms(), pid = -1;
	uint64_t restarts = 0;
	int32_t  code     = 0;
	sv_state st;
	bool     saw_backoff = false;

	while (restarts < 3) {
		if (it_now_ms() - t0 > 10000)
			fail_msg("only %llu restarts after 10 s",
			    (unsigned long long) restarts);
		status_of(ctx, "crash", &st, &pid, &restarts, &code);
		if (st == SV_STATE_BACKOFF) {
			saw_backoff = true;
			assert_int_equal(pid, 0);
		}
		nng_msleep(10); /* bounded poll of the status */
	}
	/* from before the first spawn, not from this case's start */
	assert_true(it_now_ms() - setup_t0 >= 550);
	assert_true(saw_backoff);
	assert_int_equal(code, 1);
	/* Three restarts in at least 600 ms, not hundreds: no hot loop. */
	status_of(ctx, "crash", &st, &pid, &restarts, &code);
	assert_in_range(restarts, 3, 4);
}

/* An executable script whose interpreter does not exist: it passes the
 * load-time check (an executable file) and fails every spawn (ENOENT). */
static char broken_prog[64];

static struct it_group missing_groups[] = {
    {.name = "missing", .count = 1, .program = broken_prog},
    {.name = "g", .count = 1},
};

/* setup_missing starts a group whose program cannot be executed, next to
 * a healthy group. */
static int
setup_missing(void **state)
{
	int fd;

	if (sv_tmp_template(broken_prog, sizeof(broken_prog), "sv-it-broken")
	        != 0
	    || (fd = mkstemp(broken_prog)) < 0) {
		return -1;
	}
	if (write(fd, "#!/nonexistent/interpreter\n", 27) != 27
	    || fchmod(fd, 0755) != 0) {
		close(fd);
		return -1;
	}
	close(fd);
	setup_t0 = it_now_ms();
	return it_setup_groups(state, missing_groups, 2);
}

/* teardown_missing stops the daemon and removes the script. */
static int
teardown_missing(void **state)
{
	int rc = it_teardown(state);

	unlink(broken_prog);
	return rc;
}

/*
 * A program that cannot be executed fails at spawn time (here: its
 * interpreter is missing, which the load-time check cannot see). Even with
 * backoff disabled (min_uptime_ms = 0) it is retried no faster than once a
 * second, and the healthy group next to it runs normally.
 */
static void
test_missing_program_is_retried_slowly(void **state)
{
	it_ctx          *ctx = *state;
	struct it_report r;
	int64_t          pid, t0 = it_now_ms(), since_setup;
	uint64_t         restarts;
	int32_t          code;
	sv_state         st;

	it_expect_reports(ctx, 1, &r);
	assert_string_equal(r.group, "g");
	status_of(ctx, "missing", &st, &pid, &restarts, &code);
	assert_int_equal(st, SV_STATE_BACKOFF);
	assert_int_equal(pid, 0);
	/* Wait (bounded) until 1.5 s have passed since we first looked. */
	while (it_now_ms() - t0 < 1500)
		nng_msleep(50);
	status_of(ctx, "missing", &st, &pid, &restarts, &code);
	since_setup = it_now_ms() - setup_t0;
	assert_int_equal(st, SV_STATE_BACKOFF);
	/* Once a second at most since the first spawn, which follows
	 * setup_t0 (a setup stretched by load adds retries, not a fault). */
	assert_in_range(restarts, 1, (uint64_t) (since_setup / 1000 + 2));
	/* The daemon still serves and the healthy worker still runs. */
	status_of(ctx, "g", &st, &pid, &restarts, &code);
	assert_int_equal(st, SV_STATE_RUNNING);
	assert_int_equal(pid, r.pid);
	assert_int_equal(restarts, 0);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
	        test_fast_failures_back_off, setup_crash, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_missing_program_is_retried_slowly, setup_missing,
	        teardown_missing),
	};

	it_args(argc, argv);
	return it_finish(cmocka_run_group_tests_name(
	    "integration_backoff", tests, NULL, NULL));
}
