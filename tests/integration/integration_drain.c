/*
 * integration_drain.c — drain and rolling restart against a real
 * supervised with real workers (sv-drainworker.c).
 *
 * Design: one daemon per case. Each case drives the public client API and
 * judges by the supervisor's reaping report (GetDrain, polled with a
 * deadline), its status list, and the daemon's children in /proc:
 *   - a drain of three groups at once: a worker that acknowledges and exits
 *     early, one that asks for more time (and exits after its first
 *     deadline, so the extension is what saved it), one that ignores the
 *     notice (SIGKILLed at the deadline); the report's contents; nobody is
 *     restarted and the groups end with no worker;
 *   - the notice alone (drain_signal = "none"): a worker subscribed to its
 *     own topic hears it, acknowledges and exits; its latency is measured
 *     against the request (CLOCK_MONOTONIC) and printed;
 *   - a rolling restart of 3 ready workers, the status list polled all
 *     along: never fewer than 3 ready; every ordinal ends one generation
 *     up, every old process reaped with exit 0;
 *   - a rolling restart whose new generation of ordinal 1 never gets
 *     ready: the roll stops (roll_failed), ordinal 1's old process still
 *     serves with its pid, ordinal 2 is untouched;
 *   - rolling restarts of workers that take 900 ms to drain, by default
 *     and with max_surge 1 and 2, the daemon's live children sampled all
 *     along: never more than 3 + max_surge.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"

#include <dirent.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "../sv_tmpdir.h"

#define CALL IT_CALL_MS

static char dw_path[512]; /* sv-drainworker */
static char note_dir[64]; /* mkdtemp: notice times */
static char note_env[128]; /* SV_DRAIN_NOTE_DIR=... */

/* mono_ns reads CLOCK_MONOTONIC. */
static long long
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long) ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* wait_report polls drain id until done (fails after deadline_ms). */
static sv_drain_report *
wait_report(it_ctx *ctx, uint64_t id, int deadline_ms)
{
	int64_t          end = it_now_ms() + deadline_ms;
	sv_drain_report *r   = NULL;

	for (;;) {
		IT_PASS(
		    ctx, sv_client_drain_report(ctx->client, id, CALL, &r));
		if (sv_drain_report_done(r)) {
			return r;
		}
		if (it_now_ms() > end) {
			fail_msg("drain %" PRIu64
			         " not done within %d ms (%zu of "
			         "%zu reaped)",
			    id, deadline_ms, sv_drain_report_reaped(r),
			    sv_drain_report_count(r));
		}
		sv_drain_report_free(r);
		it_pause_ms(10);
	}
}

/* row finds the report row of group (fails if none). */
static size_t
row(const sv_drain_report *r, const char *group)
{
	for (size_t i = 0; i < sv_drain_report_count(r); i++) {
		if (strcmp(sv_drain_report_group(r, i), group) == 0) {
			return i;
		}
	}
	fail_msg("no row of group %s in the report", group);
	return 0;
}

/* count_workers lists group and counts its entries, and the ready
 * running ones in *readyp. */
static size_t
count_workers(it_ctx *ctx, const char *group, size_t *readyp)
{
	sv_workers *w = NULL;
	size_t      n, ready = 0;

	IT_PASS(ctx, sv_client_list(ctx->client, group, CALL, &w));
	n = sv_workers_count(w);
	for (size_t i = 0; i < n; i++) {
		ready += sv_workers_state(w, i) == SV_STATE_RUNNING
		    && sv_workers_ready(w, i);
	}
	sv_workers_free(w);
	if (readyp != NULL) {
		*readyp = ready;
	}
	return n;
}

/* wait_ready waits until group has n ready workers. */
static void
wait_ready(it_ctx *ctx, const char *group, size_t n)
{
	int64_t end = it_now_ms() + IT_CONVERGE_MS;
	size_t  ready;

	while ((void) count_workers(ctx, group, &ready), ready != n) {
		if (it_now_ms() > end) {
			fail_msg("%s: %zu ready, want %zu", group, ready, n);
		}
		it_pause_ms(10);
	}
}

/* web_generations waits for 3 ready workers of "web" and stores each
 * ordinal's generation in gen[ordinal]. */
static void
web_generations(it_ctx *ctx, uint64_t gen[3])
{
	sv_workers *w = NULL;

	wait_ready(ctx, "web", 3);
	IT_PASS(ctx, sv_client_list(ctx->client, "web", CALL, &w));
	for (size_t i = 0; i < 3; i++) {
		gen[sv_workers_ordinal(w, i)] = sv_workers_generation(w, i);
	}
	sv_workers_free(w);
}

/* web_rolled waits for 3 ready workers of "web" and asserts that each is
 * one generation past gen0[its ordinal]. */
static void
web_rolled(it_ctx *ctx, const uint64_t gen0[3])
{
	sv_workers *w = NULL;

	wait_ready(ctx, "web", 3);
	IT_PASS(ctx, sv_client_list(ctx->client, "web", CALL, &w));
	assert_int_equal(sv_workers_count(w), 3);
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(sv_workers_generation(w, i),
		    gen0[sv_workers_ordinal(w, i)] + 1);
	}
	sv_workers_free(w);
}

/* roll_done reads the report of roll id into *rp: true once the roll is
 * done (*rp is then the caller's to free), false after freeing it while
 * the roll goes on; fails the case once end (it_now_ms) has passed. */
static bool
roll_done(it_ctx *ctx, uint64_t id, int64_t end, sv_drain_report **rp)
{
	IT_PASS(ctx, sv_client_drain_report(ctx->client, id, CALL, rp));
	if (sv_drain_report_done(*rp)) {
		return true;
	}
	sv_drain_report_free(*rp);
	if (it_now_ms() > end) {
		fail_msg("roll not done in 30 s");
	}
	return false;
}

/* setup_web starts group "web" of 3 (at most 3) drain workers with args,
 * env and the group lines extra (ready = true; drain_timeout_ms). */
static int
setup_web(void **state, const char *const *args, const char *const *env,
    const char *extra)
{
	static struct it_group g[1];

	g[0] = (struct it_group) {.name = "web",
	    .count                      = 3,
	    .max_count                  = 3,
	    .program                    = dw_path,
	    .args                       = args,
	    .env_extra                  = env,
	    .extra                      = extra};
	return it_setup_groups(state, g, 1);
}

/* ---- a drain of three kinds of workers ---------------------------------- */

static const char *const args_early[]  = {"ack", "7", NULL};
static const char *const args_slow[]   = {"extend", "4000", "2000", "2", NULL};
static const char *const args_deaf[]   = {"ignore", NULL};
static const char *const args_listen[] = {"listen", "5", NULL};
static const char *const args_roll[]   = {"ack", "1", NULL};
static const char *const env_listen[]  = {"SV_DRAIN_READY=1", note_env, NULL};
static const char *const env_roll[]
    = {"SV_DRAIN_READY=1", "SV_DRAIN_READY_AFTER_MS=150", NULL};
static const char *const env_stuck[] = {"SV_DRAIN_READY=1",
    "SV_DRAIN_NOT_READY_GEN=1", "SV_DRAIN_NOT_READY_ORDINAL=1", NULL};

/* Each worker says Ready once its client is open and its signals are
 * blocked (sv-drainworker.c), so a ready worker is one a drain reaches. */
#define DRAIN_KEYS                                          \
	"    ready = true;\n    drain_timeout_ms = 1500;\n" \
	"    drain_extend_max_ms = 5000;\n"
static const char *const env_ready[] = {"SV_DRAIN_READY=1", NULL};

static int
setup_kinds(void **state)
{
	static struct it_group g[3];

	g[0] = (struct it_group) {.name = "early",
	    .count                      = 1,
	    .program                    = dw_path,
	    .args                       = args_early,
	    .env_extra                  = env_ready,
	    .extra                      = DRAIN_KEYS};
	g[1] = (struct it_group) {.name = "slow",
	    .count                      = 1,
	    .program                    = dw_path,
	    .args                       = args_slow,
	    .env_extra                  = env_ready,
	    .extra                      = DRAIN_KEYS};
	g[2] = (struct it_group) {.name = "deaf",
	    .count                      = 1,
	    .program                    = dw_path,
	    .args                       = args_deaf,
	    .env_extra                  = env_ready,
	    .extra                      = DRAIN_KEYS};
	return it_setup_groups(state, g, 3);
}

/* Drain everything: early acknowledges and exits 0 at once; slow asks for
 * 4 s more, holds 2000 ms (past its 1500 ms deadline) and exits 0; deaf is
 * SIGKILLed at 1500 ms. Nothing restarts. (The deadline leaves early and
 * slow, woken by the drain, time to answer on a loaded machine with
 * sanitizer builds: an ack or an extension after the deadline is a kill.) */
static void
test_drain_kinds(void **state)
{
	it_ctx          *ctx = *state;
	sv_drain_report *r   = NULL;
	uint64_t         id;
	size_t           i;

	/* each worker has connected before the drain: it is ready */
	wait_ready(ctx, "early", 1);
	wait_ready(ctx, "slow", 1);
	wait_ready(ctx, "deaf", 1);
	IT_PASS(ctx, sv_client_drain(ctx->client, NULL, -1, 0, CALL, &r));
	id = sv_drain_report_id(r);
	assert_int_equal(sv_drain_report_count(r), 3);
	assert_false(sv_drain_report_done(r));
	sv_drain_report_free(r);
	/* draining shows in the status list */
	{
		sv_workers *w = NULL;
		IT_PASS(ctx, sv_client_list(ctx->client, "deaf", CALL, &w));
		assert_int_equal(sv_workers_count(w), 1);
		assert_int_equal(sv_workers_state(w, 0), SV_STATE_DRAINING);
		assert_true(sv_workers_draining(w, 0));
		assert_true(sv_workers_drain_deadline_in_ms(w, 0) <= 1500);
		assert_string_equal(
		    sv_state_name(sv_workers_state(w, 0)), "draining");
		sv_workers_free(w);
	}
	r = wait_report(ctx, id, 8000);
	assert_int_equal(sv_drain_report_count(r), 3);
	assert_int_equal(sv_drain_report_reaped(r), 3);

	i = row(r, "early");
	assert_true(sv_drain_report_exited(r, i));
	assert_int_equal(sv_drain_report_code(r, i), 0);
	assert_true(sv_drain_report_acknowledged(r, i));
	assert_false(sv_drain_report_killed(r, i));
	assert_int_equal(sv_drain_report_served(r, i), 7);
	assert_true(sv_drain_report_time_to_exit_ms(r, i) < 1500);
	assert_true(sv_drain_report_pid(r, i) > 0);

	i = row(r, "slow");
	assert_true(sv_drain_report_exited(r, i));
	assert_int_equal(sv_drain_report_code(r, i), 0);
	assert_true(sv_drain_report_acknowledged(r, i));
	assert_false(sv_drain_report_killed(r, i));
	assert_int_equal(sv_drain_report_served(r, i), 2);
	assert_true(sv_drain_report_time_to_exit_ms(r, i) >= 2000);

	i = row(r, "deaf");
	assert_false(sv_drain_report_exited(r, i));
	assert_int_equal(sv_drain_report_signal(r, i), SIGKILL);
	assert_true(sv_drain_report_killed(r, i));
	assert_false(sv_drain_report_acknowledged(r, i));
	assert_true(sv_drain_report_time_to_exit_ms(r, i) >= 1500);
	sv_drain_report_free(r);

	/* not restarted: no worker, no child, for a while */
	it_pause_ms(500);
	assert_int_equal(count_workers(ctx, "early", NULL), 0);
	assert_int_equal(count_workers(ctx, "slow", NULL), 0);
	assert_int_equal(count_workers(ctx, "deaf", NULL), 0);
	assert_int_equal(it_wait_no_zombie(ctx->daemon, IT_REAP_MS), 0);
	{
		struct it_proc kids[IT_MAX_PROCS];
		size_t n = it_children(ctx->daemon, kids, IT_MAX_PROCS);
		assert_int_equal(n, 0);
	}
	/* a worker request from a non-worker is refused */
	IT_FAIL(ctx, sv_client_drain_ack(ctx->client, 1, CALL), SV_ENOTWORKER);
	IT_FAIL(ctx, sv_client_drain_report(ctx->client, 999, CALL, &r),
	    SV_ENOTFOUND);
}

/* ---- the notice alone ----------------------------------------------------
 */

static int
setup_listen(void **state)
{
	static struct it_group g[1];

	g[0] = (struct it_group) {.name = "quiet",
	    .count                      = 2,
	    .program                    = dw_path,
	    .args                       = args_listen,
	    .env_extra                  = env_listen,
	    .extra = "    ready = true;\n    drain_signal = \"none\";\n"
	             "    drain_timeout_ms = 5000;\n"};
	return it_setup_groups(state, g, 1);
}

/* drain_signal = "none": the worker learns from its topic alone. */
static void
test_drain_notice(void **state)
{
	it_ctx          *ctx = *state;
	sv_drain_report *r   = NULL;
	long long        t0, worst = 0;
	uint64_t         id;
	DIR             *d;
	struct dirent   *de;
	int              notes = 0;

	wait_ready(ctx, "quiet", 2);
	t0 = mono_ns();
	IT_PASS(ctx, sv_client_drain(ctx->client, "quiet", -1, 0, CALL, &r));
	id = sv_drain_report_id(r);
	sv_drain_report_free(r);
	r = wait_report(ctx, id, 4000);
	assert_int_equal(sv_drain_report_count(r), 2);
	for (size_t i = 0; i < 2; i++) {
		/* acknowledged and exited well before the 5 s deadline:
		 * the notice, not a signal, ended it */
		assert_true(sv_drain_report_acknowledged(r, i));
		assert_true(sv_drain_report_exited(r, i));
		assert_int_equal(sv_drain_report_code(r, i), 0);
		assert_false(sv_drain_report_killed(r, i));
		assert_int_equal(sv_drain_report_served(r, i), 5);
		assert_true(sv_drain_report_time_to_exit_ms(r, i) < 2000);
	}
	sv_drain_report_free(r);
	assert_non_null(d = opendir(note_dir));
	while ((de = readdir(d)) != NULL) {
		char      path[400];
		long long t = 0;
		FILE     *f;
		if (strncmp(de->d_name, "notice-", 7) != 0) {
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", note_dir, de->d_name);
		assert_non_null(f = fopen(path, "r"));
		assert_int_equal(fscanf(f, "%lld", &t), 1);
		fclose(f);
		unlink(path);
		assert_true(t >= t0);
		worst = t - t0 > worst ? t - t0 : worst;
		notes++;
	}
	closedir(d);
	assert_int_equal(notes, 2);
	print_message("drain notice latency (request to worker), worst of "
	              "2: %.3f ms\n",
	    (double) worst / 1e6);
	/* generous bound (sanitizers, loaded CI); the figure is printed */
	assert_true(worst < 500LL * 1000000LL);
}

/* ---- rolling restart ---------------------------------------------------- */

static int
setup_roll(void **state)
{
	return setup_web(state, args_roll, env_roll,
	    "    ready = true;\n    drain_timeout_ms = 3000;\n");
}

/* The status list is polled through the roll: never fewer than 3 ready. */
static void
test_roll(void **state)
{
	it_ctx          *ctx = *state;
	sv_drain_report *r   = NULL;
	uint64_t         id, gen0[3];
	size_t           ready, polls = 0, overlap = 0;
	int64_t          end;

	web_generations(ctx, gen0);
	IT_PASS(
	    ctx, sv_client_rolling_restart(ctx->client, "web", 0, CALL, &r));
	id = sv_drain_report_id(r);
	assert_true(sv_drain_report_rolling(r));
	sv_drain_report_free(r);
	end = it_now_ms() + 30000;
	for (;;) {
		size_t n = count_workers(ctx, "web", &ready);
		polls++;
		overlap += n > 3;
		if (ready < 3) {
			fail_msg("only %zu ready during the roll", ready);
		}
		if (roll_done(ctx, id, end, &r)) {
			break;
		}
	}
	print_message(
	    "roll: %zu polls, %zu with an overlap\n", polls, overlap);
	/* the polls saw the roll happen: each new generation takes 150 ms
	 * to get ready, in which its old one must still serve */
	assert_true(overlap > 5);
	assert_false(sv_drain_report_roll_failed(r));
	assert_int_equal(sv_drain_report_count(r), 3);
	for (size_t i = 0; i < 3; i++) {
		uint32_t o = sv_drain_report_ordinal(r, i);
		assert_int_equal(sv_drain_report_generation(r, i), gen0[o]);
		assert_true(sv_drain_report_exited(r, i));
		assert_int_equal(sv_drain_report_code(r, i), 0);
		assert_true(sv_drain_report_acknowledged(r, i));
		assert_int_equal(sv_drain_report_served(r, i), 1);
	}
	sv_drain_report_free(r);
	web_rolled(ctx, gen0);
}

/* ---- a roll's surge with slow drains -----------------------------------
 */

static const char *const args_slowdrain[]
    = {"extend", "100", "900", "1", NULL};
static const char *const env_slowdrain[]
    = {"SV_DRAIN_READY=1", "SV_DRAIN_READY_AFTER_MS=50", NULL};

static int
setup_surge(void **state)
{
	return setup_web(state, args_slowdrain, env_slowdrain,
	    "    ready = true;\n    drain_timeout_ms = 8000;\n");
}

/* live_children counts the daemon's children that are not zombies: the
 * group's processes (the daemon's only children here). */
static size_t
live_children(pid_t daemon)
{
	struct it_proc kids[IT_MAX_PROCS];
	size_t         n = it_children(daemon, kids, IT_MAX_PROCS), live = 0;

	for (size_t i = 0; i < n; i++) {
		live += kids[i].state != 'Z';
	}
	return live;
}

/* roll_surge rolls 3 workers that take 900 ms to drain, with max_surge
 * surge (0: the plain request, whose default is 1), sampling the daemon's
 * live children all along: never more than 3 + surge; every ordinal ends
 * one generation up. Returns the most seen at once. */
static size_t
roll_surge(it_ctx *ctx, uint32_t surge)
{
	sv_drain_report *r = NULL;
	uint64_t         id, gen0[3];
	size_t  peak = 0, samples = 0, limit = 3 + (surge ? surge : 1);
	int64_t end;

	web_generations(ctx, gen0);
	assert_int_equal(live_children(ctx->daemon), 3);
	if (surge == 0) {
		IT_PASS(ctx,
		    sv_client_rolling_restart(
		        ctx->client, "web", 0, CALL, &r));
	} else {
		IT_PASS(ctx,
		    sv_client_rolling_restart_budgets(
		        ctx->client, "web", 0, surge, 0, CALL, &r));
		assert_int_equal(sv_drain_report_max_surge(r), surge);
		assert_int_equal(sv_drain_report_max_unavailable(r), 0);
	}
	id = sv_drain_report_id(r);
	sv_drain_report_free(r);
	end = it_now_ms() + 30000;
	for (;;) {
		size_t live = live_children(ctx->daemon);
		samples++;
		peak = live > peak ? live : peak;
		if (live > limit) {
			fail_msg("%zu live processes for 3 seats with "
			         "max_surge %u",
			    live, surge ? surge : 1);
		}
		if (roll_done(ctx, id, end, &r)) {
			break;
		}
		it_pause_ms(5);
	}
	print_message("roll with max_surge %u: %zu samples, at most %zu "
	              "live\n",
	    surge ? surge : 1, samples, peak);
	assert_false(sv_drain_report_roll_failed(r));
	assert_int_equal(sv_drain_report_count(r), 3);
	for (size_t i = 0; i < 3; i++) {
		assert_true(sv_drain_report_acknowledged(r, i));
		assert_int_equal(sv_drain_report_code(r, i), 0);
	}
	sv_drain_report_free(r);
	web_rolled(ctx, gen0);
	return peak;
}

/* The default roll (max_surge 1), then max_surge 1 and 2 named: the live
 * processes stay within 3 + max_surge although each old one takes 900 ms
 * to drain (the roll used to move on once the old one was told to drain,
 * overlapping every ordinal at once). */
static void
test_roll_surge(void **state)
{
	it_ctx *ctx = *state;

	assert_true(roll_surge(ctx, 0) >= 4);
	assert_true(roll_surge(ctx, 1) >= 4);
	assert_true(roll_surge(ctx, 2) >= 4);
}

static int
setup_stuck(void **state)
{
	return setup_web(state, args_roll, env_stuck,
	    "    ready = true;\n    drain_timeout_ms = 3000;\n");
}

/* The new generation of ordinal 1 never gets ready: the roll stops at its
 * ready timeout; ordinal 1's old process serves on; 2 is untouched. */
static void
test_roll_stuck(void **state)
{
	it_ctx          *ctx = *state;
	sv_drain_report *r   = NULL;
	sv_workers      *w   = NULL;
	int64_t          pid0[3];
	uint64_t         id;
	size_t           ready;

	wait_ready(ctx, "web", 3);
	IT_PASS(ctx, sv_client_list(ctx->client, "web", CALL, &w));
	for (size_t i = 0; i < 3; i++) {
		pid0[sv_workers_ordinal(w, i)] = sv_workers_pid(w, i);
	}
	sv_workers_free(w);
	IT_PASS(
	    ctx, sv_client_rolling_restart(ctx->client, "web", 600, CALL, &r));
	id = sv_drain_report_id(r);
	sv_drain_report_free(r);
	IT_FAIL(ctx,
	    sv_client_rolling_restart(ctx->client, "web", 600, CALL, &r),
	    SV_EBUSY);
	r = wait_report(ctx, id, 8000);
	assert_true(sv_drain_report_roll_failed(r));
	assert_true(strlen(sv_drain_report_roll_reason(r)) > 0);
	/* only ordinal 0's old generation was drained */
	assert_int_equal(sv_drain_report_count(r), 1);
	assert_int_equal(sv_drain_report_ordinal(r, 0), 0);
	sv_drain_report_free(r);
	/* ordinal 1's new process is stopped and gone; old 1 and 2 serve */
	{
		int64_t end = it_now_ms() + IT_CONVERGE_MS;
		while (count_workers(ctx, "web", &ready) != 3 || ready != 3) {
			if (it_now_ms() > end) {
				fail_msg("web did not settle at 3 ready");
			}
			it_pause_ms(10);
		}
	}
	IT_PASS(ctx, sv_client_list(ctx->client, "web", CALL, &w));
	for (size_t i = 0; i < 3; i++) {
		uint32_t o = sv_workers_ordinal(w, i);
		if (o == 0) {
			assert_true(sv_workers_pid(w, i) != pid0[0]);
		} else {
			assert_int_equal(sv_workers_pid(w, i), pid0[o]);
		}
	}
	sv_workers_free(w);
}

/* Runs the group; argv[1] = supervised, argv[2] = sv-testworker (the drain
 * worker is beside it). */
int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
	        test_drain_kinds, setup_kinds, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_drain_notice, setup_listen, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_roll, setup_roll, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_roll_stuck, setup_stuck, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_roll_surge, setup_surge, it_teardown),
	};
	int rc;

	it_args(argc, argv);
	it_sibling_program(dw_path, sizeof(dw_path), "sv-drainworker");
	if (sv_tmpdir(note_dir, sizeof(note_dir), "sv-drain") != 0) {
		return 1;
	}
	snprintf(note_env, sizeof(note_env), "SV_DRAIN_NOTE_DIR=%s", note_dir);
	rc = cmocka_run_group_tests_name(
	    "integration_drain", tests, NULL, NULL);
	(void) rmdir(note_dir);
	return it_finish(rc);
}
