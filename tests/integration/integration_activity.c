/*
 * integration_activity.c — activity end to end (issue 8, docs/activity.md):
 * a real supervised hands each worker a region file, the worker
 * (sv-actworker.c) enters scopes through the C API, and ListWorkers shows
 * the count, the composed name of the oldest activity and its growing age,
 * at most 100 ms stale; nothing when idle; nothing (and no file) with
 * `activity = false`; the file goes after the reap; a worker that shrinks
 * its file does not crash the daemon (it reads with pread, never through a
 * mapping that could raise SIGBUS); after a restart the region of the
 * seat's next generation is made ahead, handed to that generation, and
 * removed with the seat.
 *
 * Waits are polls with deadlines; the 100 ms staleness bound is checked
 * with a margin (STALE_MARGIN_MS) for scheduling on a loaded machine.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../sv_lag.h"
#include "harness.h"

#define CALL            IT_CALL_MS
#define STALE_MARGIN_MS 250 /* on top of the 100 ms bound */

static char aw_path[512]; /* sv-actworker */

static const char *const args_nest[]     = {"nest", NULL};
static const char *const args_idle[]     = {"idle", NULL};
static const char *const args_truncate[] = {"truncate", NULL};

/* What ListWorkers says of ordinal 0 of a group. */
struct act_row {
	int64_t  pid;
	uint64_t generation;
	uint32_t activities;
	char     activity[128];
	uint64_t age_ms;
};

/* act_get reads ordinal 0 of group; returns false if it is not listed. */
static bool
act_get(it_ctx *ctx, const char *group, struct act_row *r)
{
	sv_workers *w = NULL;
	bool        found;

	IT_PASS(ctx, sv_client_list(ctx->client, group, CALL, &w));
	found = sv_workers_count(w) > 0;
	if (found) {
		r->pid        = sv_workers_pid(w, 0);
		r->generation = sv_workers_generation(w, 0);
		r->activities = sv_workers_activities(w, 0);
		r->age_ms     = sv_workers_activity_age_ms(w, 0);
		snprintf(r->activity, sizeof(r->activity), "%s",
		    sv_workers_activity(w, 0));
	}
	sv_workers_free(w);
	return found;
}

/* act_wait polls group until it shows `activities` in-flight activities
 * (and, when name is not NULL, that name), or fails after deadline_ms.
 * Returns the time it took. */
static int64_t
act_wait(it_ctx *ctx, const char *group, uint32_t activities, const char *name,
    int deadline_ms, struct act_row *r)
{
	int64_t t0 = it_now_ms();

	for (;;) {
		if (act_get(ctx, group, r) && r->pid > 0
		    && r->activities == activities
		    && (name == NULL || strcmp(r->activity, name) == 0)) {
			return it_now_ms() - t0;
		}
		if (it_now_ms() - t0 > deadline_ms) {
			fail_msg("%s: want %" PRIu32
			         " activities \"%s\", have %" PRIu32
			         " \"%s\" (pid %" PRId64 ")",
			    group, activities, name != NULL ? name : "*",
			    r->activities, r->activity, r->pid);
		}
		it_pause_ms(5);
	}
}

/*
 * act_slack_ms is what a staleness bound adds on this machine right now,
 * besides the daemon's 100 ms and STALE_MARGIN_MS: the longest of three
 * ListWorkers round trips of group (act_wait's last poll) and how late a
 * thread wakes (sv_lag.h: the worker's signal wait). Both are next to
 * nothing on an idle machine; a loaded one (busy CPUs, ASan) measures
 * them instead of assuming them.
 */
static int64_t
act_slack_ms(it_ctx *ctx, const char *group)
{
	struct act_row r;
	int64_t        rpc = 0;

	for (int i = 0; i < 3; i++) {
		int64_t t0 = it_now_ms(), ms;

		(void) act_get(ctx, group, &r);
		ms = it_now_ms() - t0;
		if (ms > rpc)
			rpc = ms;
	}
	return rpc + sv_lag_ms(20);
}

/* region_path writes the path of a worker's region file. */
static void
region_path(
    it_ctx *ctx, const char *group, uint64_t generation, char *buf, size_t len)
{
	snprintf(buf, len, "%s/activity/0.%" PRIu64 ".%s", ctx->dir,
	    generation, group);
}

static int
setup_kinds(void **state)
{
	static struct it_group g[3];

	g[0] = (struct it_group) {
	    .name = "busy", .count = 1, .program = aw_path, .args = args_nest};
	g[1] = (struct it_group) {
	    .name = "calm", .count = 1, .program = aw_path, .args = args_idle};
	g[2] = (struct it_group) {.name = "off",
	    .count                      = 1,
	    .program                    = aw_path,
	    .args                       = args_nest,
	    .extra                      = "    activity = false;"};
	return it_setup_groups(state, g, 3);
}

/* Nested scopes in two threads: 2 activities, the oldest composed; the age
 * grows; leaving shows nothing within 100 ms + margin and entering again
 * shows a fresh age; an idle worker and a group with activity = false show
 * nothing; the file is the worker's alone and goes after the reap. */
static void
test_activity_view(void **state)
{
	it_ctx        *ctx = *state;
	struct act_row r, r2;
	char           path[256];
	struct stat    st;
	int64_t        took, t0, t1, slack;
	uint64_t       gen;

	act_wait(ctx, "busy", 2, "request: db query", IT_CONVERGE_MS, &r);
	gen = r.generation;
	/* the age grows with the clock: by the time between the two
	 * listings, which lies within [t0, t1] (an upper bound from a fixed
	 * 300 ms pause would count the calls' delays on a loaded machine) */
	t0 = it_now_ms();
	assert_true(act_get(ctx, "busy", &r));
	assert_int_equal(r.activities, 2);
	it_pause_ms(300);
	assert_true(act_get(ctx, "busy", &r2));
	t1 = it_now_ms();
	assert_int_equal(r2.activities, 2);
	print_message("[activity] age %" PRIu64 " -> %" PRIu64
	              " ms over listings %" PRId64 " ms apart at most\n",
	    r.age_ms, r2.age_ms, t1 - t0);
	assert_true(r2.age_ms >= r.age_ms + 250);
	assert_true(r2.age_ms <= r.age_ms + (uint64_t) (t1 - t0) + 200);

	/* leave everything: nothing shown, at most 100 ms (+ margin, + the
	 * round trip and wake-up lateness measured now) later */
	slack = act_slack_ms(ctx, "busy");
	assert_int_equal(kill((pid_t) r.pid, SIGUSR1), 0);
	took = act_wait(ctx, "busy", 0, "", IT_CONVERGE_MS, &r2);
	print_message("[activity] idle seen after %" PRId64
	              " ms (slack %" PRId64 " ms)\n",
	    took, slack);
	assert_true(took <= 100 + STALE_MARGIN_MS + slack);
	assert_int_equal(r2.age_ms, 0);
	/* and back: a fresh age */
	slack = act_slack_ms(ctx, "busy");
	assert_int_equal(kill((pid_t) r.pid, SIGUSR1), 0);
	took = act_wait(
	    ctx, "busy", 2, "request: db query", IT_CONVERGE_MS, &r2);
	print_message("[activity] busy seen after %" PRId64
	              " ms (slack %" PRId64 " ms)\n",
	    took, slack);
	assert_true(took <= 100 + STALE_MARGIN_MS + slack);
	assert_true(r2.age_ms <= (uint64_t) took + STALE_MARGIN_MS);

	/* the region file: the worker's, mode 0600, in a 0711 directory */
	region_path(ctx, "busy", gen, path, sizeof(path));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_size, 61504);
	snprintf(path, sizeof(path), "%s/activity", ctx->dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0711);

	/* idle: nothing at all, though its region is there */
	act_wait(ctx, "calm", 0, "", IT_CONVERGE_MS, &r);
	region_path(ctx, "calm", r.generation, path, sizeof(path));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(r.age_ms, 0);
	/* activity = false: no region handed out, nothing shown */
	act_wait(ctx, "off", 0, "", IT_CONVERGE_MS, &r);
	region_path(ctx, "off", r.generation, path, sizeof(path));
	assert_int_not_equal(stat(path, &st), 0);

	/* the reap removes the file; the next generation gets its own */
	assert_true(act_get(ctx, "busy", &r));
	assert_int_equal(kill((pid_t) r.pid, SIGKILL), 0);
	region_path(ctx, "busy", gen, path, sizeof(path));
	t0 = it_now_ms();
	while (stat(path, &st) == 0) {
		if (it_now_ms() - t0 > IT_REAP_MS) {
			fail_msg("%s still exists after the reap", path);
		}
		it_pause_ms(5);
	}
	act_wait(ctx, "busy", 2, "request: db query", IT_CONVERGE_MS, &r);
	assert_true(r.generation > gen);
	assert_true(it_daemon_alive(ctx));
}

static int
setup_truncate(void **state)
{
	static struct it_group g[1];

	g[0] = (struct it_group) {.name = "bad",
	    .count                      = 1,
	    .program                    = aw_path,
	    .args                       = args_truncate};
	return it_setup_groups(state, g, 1);
}

/* A worker that shrinks its region file to 100 bytes: the daemon reads a
 * short region (shown as nothing) and keeps answering; a mapping would
 * have raised SIGBUS in it. */
static void
test_truncated_region(void **state)
{
	it_ctx        *ctx = *state;
	struct act_row r;
	struct stat    st;
	char           path[256];
	int64_t        t0 = it_now_ms();

	for (;;) {
		if (act_get(ctx, "bad", &r) && r.pid > 0) {
			region_path(
			    ctx, "bad", r.generation, path, sizeof(path));
			if (stat(path, &st) == 0 && st.st_size == 100) {
				break;
			}
		}
		if (it_now_ms() - t0 > IT_CONVERGE_MS) {
			fail_msg("the worker did not shrink its region");
		}
		it_pause_ms(5);
	}
	for (int k = 0; k < 5; k++) {
		it_pause_ms(110); /* past the daemon's reuse of a view */
		assert_true(act_get(ctx, "bad", &r));
		assert_int_equal(r.activities, 0);
		assert_string_equal(r.activity, "");
	}
	assert_true(it_daemon_alive(ctx));
	IT_PASS(ctx, it_hello_ok(ctx));
}

static int
setup_spare(void **state)
{
	static struct it_group g[1];

	g[0] = (struct it_group) {.name = "again",
	    .count                      = 1,
	    .program                    = aw_path,
	    .args                       = args_nest};
	return it_setup_groups(state, g, 1);
}

/* wait_gone polls until path does not exist, failing after IT_REAP_MS. */
static void
wait_gone(const char *path)
{
	struct stat st;
	int64_t     t0 = it_now_ms();

	while (stat(path, &st) == 0) {
		if (it_now_ms() - t0 > IT_REAP_MS) {
			fail_msg("%s still exists", path);
		}
		it_pause_ms(5);
	}
}

/* After a restart the daemon makes the region file of the seat's next
 * generation ahead (empty, 0600), so the next restart creates no file;
 * that replacement gets exactly that file and uses it; a scale-down
 * removes the spare, and a clean stop leaves no file behind. */
static void
test_spare_region(void **state)
{
	it_ctx        *ctx = *state;
	struct act_row r, r2;
	struct stat    st;
	char           path[256];
	uint32_t       prev;
	int64_t        t0;

	act_wait(ctx, "again", 2, "request: db query", IT_CONVERGE_MS, &r);
	/* the first restart: its replacement, then the spare after it */
	assert_int_equal(kill((pid_t) r.pid, SIGKILL), 0);
	t0 = it_now_ms();
	do {
		if (it_now_ms() - t0 > IT_CONVERGE_MS) {
			fail_msg("no replacement of pid %" PRId64, r.pid);
		}
		it_pause_ms(5);
	} while (!act_get(ctx, "again", &r2) || r2.pid <= 0
	    || r2.generation <= r.generation);
	region_path(ctx, "again", r2.generation + 1, path, sizeof(path));
	t0 = it_now_ms();
	while (stat(path, &st) != 0) {
		if (it_now_ms() - t0 > IT_CONVERGE_MS) {
			fail_msg("no spare region %s after a restart", path);
		}
		it_pause_ms(5);
	}
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_size, 0); /* nobody has it yet */
	/* the second restart hands that very file to generation + 1 */
	assert_int_equal(kill((pid_t) r2.pid, SIGKILL), 0);
	t0 = it_now_ms();
	/* until the replacement (not the killed worker, still listed a
	 * moment) shows its two activities: it uses the file */
	while (!act_get(ctx, "again", &r) || r.generation <= r2.generation
	    || r.activities != 2) {
		if (it_now_ms() - t0 > IT_CONVERGE_MS) {
			fail_msg("no replacement of pid %" PRId64, r2.pid);
		}
		it_pause_ms(5);
	}
	assert_int_equal(r.generation, r2.generation + 1);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 61504); /* sized by the worker */
	/* scale to 0: the worker's file and the new spare both go */
	region_path(ctx, "again", r.generation + 1, path, sizeof(path));
	t0 = it_now_ms();
	while (stat(path, &st) != 0) {
		if (it_now_ms() - t0 > IT_CONVERGE_MS) {
			fail_msg("no spare region %s after a restart", path);
		}
		it_pause_ms(5);
	}
	IT_PASS(
	    ctx, sv_client_scale(ctx->client, "again", 0, IT_CALL_MS, &prev));
	wait_gone(path);
	region_path(ctx, "again", r.generation, path, sizeof(path));
	wait_gone(path);
	/* a clean stop removes the (now empty) directory */
	assert_int_equal(it_term_daemon(ctx), 0);
	snprintf(path, sizeof(path), "%s/activity", ctx->dir);
	assert_int_not_equal(stat(path, &st), 0);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
	        test_activity_view, setup_kinds, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_truncated_region, setup_truncate, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_spare_region, setup_spare, it_teardown),
	};

	it_args(argc, argv);
	it_sibling_program(aw_path, sizeof(aw_path), "sv-actworker");
	return it_finish(cmocka_run_group_tests_name(
	    "integration_activity", tests, NULL, NULL));
}
