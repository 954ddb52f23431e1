/*
 * integration_status_text.c — what a seat's status text is across a
 * restart and across a scale-down and up (the daemon's record of it is
 * per shell process record, daemon/sup_notify.c).
 *
 * Pinned behaviour: a worker's replacement after a crash shows the text
 * its predecessor set, until it sets its own (the seat's record is kept
 * for the restart, and a spawn does not clear the text); a seat given up
 * (scaled to 0, its record freed) starts again with no text. The daemon's
 * memory work made the text a buffer allocated on demand; this test makes
 * sure that did not change what `status` shows.
 *
 * Design: one daemon, group "g" of one sv-testworker that sends the
 * datagram "STATUS=<TEXT>" to $NOTIFY_SOCKET when it gets SIGUSR1 (the
 * SV_TEST_NOTIFY_ON_USR1 knob), so only the process the test signals sets
 * a text. Every wait is a report or a polled status with a deadline.
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

#include <nng/supplemental/util/platform.h>

#define GROUP "g"
#define TEXT  "set by generation 0"

static const char *const env_usr1[]
    = {"SV_TEST_NOTIFY_ON_USR1=STATUS=" TEXT, NULL};

/* cmocka setup: one group of one worker that sets TEXT on SIGUSR1. */
static int
setup_g1(void **state)
{
	static const struct it_group g[] = {
	    {.name = GROUP, .count = 1, .max_count = 2, .env_extra = env_usr1},
	};

	return it_setup_groups(state, g, 1);
}

/* One row of the status of GROUP[0]. */
struct row {
	int64_t  pid;
	uint64_t gen;
	char     text[256];
};

/* row_get reads the status of GROUP[0]; asserts a single entry. */
static void
row_get(it_ctx *ctx, struct row *r)
{
	sv_workers *w = NULL;

	IT_PASS(ctx, sv_client_status(ctx->client, GROUP, 0, IT_CALL_MS, &w));
	assert_int_equal(sv_workers_count(w), 1);
	r->pid = sv_workers_pid(w, 0);
	r->gen = sv_workers_generation(w, 0);
	snprintf(r->text, sizeof(r->text), "%s", sv_workers_status_text(w, 0));
	sv_workers_free(w);
}

/* wait_text polls GROUP[0] until it is process pid showing text. */
static void
wait_text(it_ctx *ctx, int64_t pid, const char *text)
{
	int64_t    end = it_now_ms() + IT_CONVERGE_MS;
	struct row r;

	for (;;) {
		row_get(ctx, &r);
		if (r.pid == pid && strcmp(r.text, text) == 0) {
			return;
		}
		if (it_now_ms() > end) {
			fail_msg("g[0]: pid %lld shows \"%s\", want pid %lld "
			         "showing \"%s\"",
			    (long long) r.pid, r.text, (long long) pid, text);
		}
		nng_msleep(10); /* bounded poll of the status */
	}
}

/* expect_worker receives the next report, of GROUP[0] generation gen
 * (-1: any). */
static void
expect_worker(it_ctx *ctx, long long gen, struct it_report *r)
{
	int rv = it_recv_report(ctx, IT_REPORT_MS, r);

	if (rv != 0) {
		fail_msg("no report of generation %lld: %s", gen,
		    rv > 0 ? nng_strerror(rv) : "unparsable");
	}
	assert_int_equal(r->rc, SV_OK);
	assert_int_equal(r->ordinal, 0);
	if (gen >= 0) {
		assert_int_equal(r->generation, gen);
	}
}

/* signal_pid sends sig to a worker of ours. */
static void
signal_pid(long pid, int sig)
{
	if (kill((pid_t) pid, sig) != 0) {
		fail_msg("kill(%ld, %d): %s", pid, sig, strerror(errno));
	}
}

/*
 * A replacement after a crash shows its predecessor's status text (it set
 * none of its own); a seat scaled to 0 and up again starts with none.
 */
static void
test_status_text_across_restart(void **state)
{
	it_ctx          *ctx = *state;
	struct it_report r0, r1, r2;
	struct row       row;

	expect_worker(ctx, 0, &r0);
	wait_text(ctx, r0.pid, "");
	signal_pid(r0.pid, SIGUSR1);
	wait_text(ctx, r0.pid, TEXT);

	/* The crash: generation 1 is spawned into the kept seat record. */
	signal_pid(r0.pid, SIGKILL);
	expect_worker(ctx, 1, &r1);
	assert_int_not_equal(r1.pid, r0.pid);
	row_get(ctx, &row);
	assert_int_equal(row.pid, r1.pid);
	assert_int_equal(row.gen, 1);
	assert_string_equal(row.text, TEXT);

	/* Given up and taken again: a new record, no text. */
	IT_PASS(ctx, sv_client_scale(ctx->client, GROUP, 0, IT_CALL_MS, NULL));
	if (it_wait_workers(ctx, 0, IT_CONVERGE_MS) != 0) {
		fail_msg("g[0] still runs after the scale to 0");
	}
	IT_PASS(ctx, sv_client_scale(ctx->client, GROUP, 1, IT_CALL_MS, NULL));
	expect_worker(ctx, -1, &r2);
	row_get(ctx, &row);
	assert_int_equal(row.pid, r2.pid);
	assert_true(row.gen > 1);
	assert_string_equal(row.text, "");
	it_expect_no_report(ctx, 200);
}

/* Runs the group; argv[1] = supervised, argv[2] = sv-testworker. */
int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
	        test_status_text_across_restart, setup_g1, it_teardown),
	};

	it_args(argc, argv);
	return it_finish(cmocka_run_group_tests_name(
	    "integration_status_text", tests, NULL, NULL));
}
