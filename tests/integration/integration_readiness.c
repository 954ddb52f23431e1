/*
 * integration_readiness.c — readiness, start timeouts, the watchdog, systemd
 * notify datagrams and groups created at runtime, carried out by a real
 * supervised with scripted sv-testworker processes (the SV_TEST_* knobs of
 * sv-testworker.c) and observed on the event stream and the status tables.
 *
 * Design:
 *   - Each case has its own fixture (cmocka setup/teardown): a daemon from
 *     it_start and a subscription to DIR/events.sock. The teardown runs
 *     even after a failed assertion, so a failing case still stops its
 *     daemon and fails on anything left behind (it_stop).
 *   - Groups are configured with count 0. The case first makes sure its
 *     subscription is live (a no-op ScaleGroup publishes GroupScaled; it is
 *     repeated until one arrives), then scales the group up, so every event
 *     of the workers under test is seen from their very first STARTED.
 *   - Events are read with the public, thread-free reader of client.h
 *     (sv_events_*; kinds by name, kind details from its "key=value"
 *     words) and kept, in order, in a log the case reads and searches:
 *     ev_find reads on until a matching event arrives (with a deadline),
 *     ev_scan searches what was read. Sequence numbers must grow by exactly
 *     one, so no assertion is made over a gap. (An nng SUB socket was used
 *     first; nng 1.5.2's nng_close of it hung now and then in the
 *     teardown, and this reader needs no nng at all.)
 *   - No sleep synchronises anything: every wait is for an event, a worker
 *     report, or a polled status with a deadline. Where a duration matters
 *     (a watchdog fed by heartbeats), it is measured between the events'
 *     own timestamps, with lower bounds only.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"

#include <inttypes.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <nng/supplemental/util/platform.h>

#define EV_WAIT_MS 10000 /* one awaited event */
#define EV_LOG_MAX 512 /* events one case may read */
#define ANY_ORD    (-1) /* ev_find/ev_scan: any ordinal */

/* Event kinds, as sv_event_kind() names them. */
#define K_STARTED  "started"
#define K_READY    "ready"
#define K_EXITED   "exited"
#define K_RESTART  "restart_scheduled"
#define K_UNRESP   "unresponsive"
#define K_STOPPING "stopping"
#define K_STOPPED  "stopped"
#define K_STATUS   "status_text"
#define K_SCALED   "group_scaled"
#define K_FAILED   "group_failed"
#define K_CREATED  "group_created"
#define K_DELETED  "group_deleted"

/* The fixture of one case: its daemon, its subscription, what it read. */
typedef struct fx {
	it_ctx     ctx;
	sv_events *ev;
	uint64_t   last_seq;
	size_t     n;
	sv_event  *log[EV_LOG_MAX];
	char       val[2][256]; /* ev_str's buffers, in turn */
	unsigned   turn;
} fx;

/* One worker's row of the status table. */
struct wstat {
	sv_state st;
	int      ready;
	int64_t  pid;
	uint64_t gen;
	uint64_t restarts;
	char     text[256];
};

/* fx_setup starts a daemon for groups and subscribes to all its events
 * with the public reader. */
static int
fx_setup(void **state, const struct it_group *groups, size_t n)
{
	fx    *f = calloc(1, sizeof(*f));
	char   url[200];
	sv_err e;

	if (f == NULL)
		return -1;
	if (it_start(&f->ctx, groups, n) != 0) {
		free(f);
		return -1;
	}
	snprintf(url, sizeof(url), "ipc://%s/events.sock", f->ctx.dir);
	if ((e = sv_events_open(&f->ev, url, "", IT_CALL_MS)) != SV_OK) {
		fprintf(stderr, "sv_events_open %s: %s: %s\n", url,
		    sv_err_name(e), sv_client_error_message(NULL));
		(void) it_stop(&f->ctx);
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

/* fx_teardown closes the subscription, frees the log and stops the daemon
 * (failing on leftovers, see it_stop). */
static int
fx_teardown(void **state)
{
	fx *f = *state;
	int rc;

	if (f == NULL)
		return 0;
	sv_events_close(f->ev);
	for (size_t i = 0; i < f->n; i++)
		sv_event_free(f->log[i]);
	rc = it_stop(&f->ctx);
	free(f);
	*state = NULL;
	return rc;
}

/* ev_read receives one event into the log within ms. Returns false when
 * none came. Sequence numbers must grow by exactly one (nothing lost). */
static bool
ev_read(fx *f, int ms)
{
	sv_event *e = NULL;
	sv_err    err;

	if (f->n >= EV_LOG_MAX)
		fail_msg("more than %d events in one case", EV_LOG_MAX);
	err = sv_events_next(f->ev, ms > 0 ? ms : 1, &e);
	if (err == SV_ETIMEDOUT)
		return false;
	if (err != SV_OK)
		fail_msg("sv_events_next: %s: %s", sv_err_name(err),
		    sv_events_error_message(f->ev));
	if (f->last_seq != 0 && sv_event_seq(e) != f->last_seq + 1) {
		uint64_t seq = sv_event_seq(e);

		sv_event_free(e);
		fail_msg("event seq %llu after %llu: events were lost",
		    (unsigned long long) seq,
		    (unsigned long long) f->last_seq);
	}
	f->last_seq = sv_event_seq(e);
	printf("event %llu %s %s/%u gen %llu pid %lld %s\n",
	    (unsigned long long) sv_event_seq(e), sv_event_kind(e),
	    sv_event_group(e), sv_event_ordinal(e),
	    (unsigned long long) sv_event_generation(e),
	    (long long) sv_event_pid(e), sv_event_details(e));
	f->log[f->n++] = e;
	return true;
}

/* ev_match says whether e is of kind in group (and, for ANY_ORD or a
 * worker event, ordinal). */
static bool
ev_match(const sv_event *e, const char *group, int ordinal, const char *kind)
{
	return strcmp(sv_event_kind(e), kind) == 0
	    && strcmp(sv_event_group(e), group) == 0
	    && (ordinal == ANY_ORD
	        || (sv_event_is_worker(e)
	            && sv_event_ordinal(e) == (uint32_t) ordinal));
}

/* ev_scan returns the index of the first logged event at or after from
 * (and before to) matching, or -1; it reads nothing. */
static long
ev_scan(const fx *f, size_t from, size_t to, const char *group, int ordinal,
    const char *kind)
{
	for (size_t i = from; i < to && i < f->n; i++)
		if (ev_match(f->log[i], group, ordinal, kind))
			return (long) i;
	return -1;
}

/* ev_find returns the index of the first event at or after from matching,
 * reading more events as needed for up to EV_WAIT_MS; fails the case when
 * none comes. */
static size_t
ev_find(fx *f, size_t from, const char *group, int ordinal, const char *kind)
{
	int64_t end = it_now_ms() + EV_WAIT_MS;
	long    i;

	for (;;) {
		if ((i = ev_scan(f, from, f->n, group, ordinal, kind)) >= 0)
			return (size_t) i;
		if (it_now_ms() >= end)
			break;
		(void) ev_read(f, (int) (end - it_now_ms()));
	}
	fail_msg("no %s event of %s[%d] within %d ms", kind, group, ordinal,
	    EV_WAIT_MS);
	return 0;
}

/*
 * ev_str returns the value of key in the details of logged event i
 * (sv_event_details: "key=value" words), "" when absent. A value runs to
 * the next " word=" or the end, so it may hold spaces ("reason=start
 * timeout", "text=serving 42"). The string lives in f until two more
 * calls have been made.
 */
static const char *
ev_str(fx *f, size_t i, const char *key)
{
	const char *d   = sv_event_details(f->log[i]);
	size_t      kl  = strlen(key);
	char       *out = f->val[f->turn++ % 2];

	out[0] = '\0';
	for (const char *p = d; *p != '\0'; p++) {
		const char *v, *end;

		if ((p != d && p[-1] != ' ') || strncmp(p, key, kl) != 0
		    || p[kl] != '=')
			continue;
		v = p + kl + 1;
		for (end = v; *end != '\0'; end++) {
			const char *w = end + 1;

			if (*end != ' ')
				continue;
			while ((*w >= 'a' && *w <= 'z') || *w == '_')
				w++;
			if (w > end + 1 && *w == '=')
				break;
		}
		snprintf(out, sizeof(f->val[0]), "%.*s", (int) (end - v), v);
		break;
	}
	return out;
}

/* ev_expect fails unless key of logged event i is want. */
static void
ev_expect(fx *f, size_t i, const char *key, const char *want)
{
	const char *got = ev_str(f, i, key);

	if (strcmp(got, want) != 0)
		fail_msg("%s event %zu: %s=\"%s\", want \"%s\" (details: %s)",
		    sv_event_kind(f->log[i]), i, key, got, want,
		    sv_event_details(f->log[i]));
}

/* ev_num returns key of logged event i as a number (-1 when absent). */
static long long
ev_num(fx *f, size_t i, const char *key)
{
	const char *v = ev_str(f, i, key);

	return v[0] != '\0' ? strtoll(v, NULL, 10) : -1;
}

/* ev_exited says whether logged EXITED event i is an exit with a code
 * (true) rather than death by a signal. */
static bool
ev_exited(fx *f, size_t i)
{
	return ev_str(f, i, "code")[0] != '\0';
}

/*
 * wall_ms is CLOCK_REALTIME in ms, the clock of the events' stamps. An
 * event is stamped when the supervisor publishes it, which may be well
 * after what it reports happened on a loaded machine (after the spawn, the
 * journal record and the log line): the gap between two stamps can be
 * shorter than the gap between the two happenings. A lower bound is
 * therefore checked from a time taken before the request that led to both
 * (ev_since), never between two stamps.
 */
static int64_t
wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ev_since is the time from t (wall_ms, truncated as the stamps are) to
 * the stamp of logged event i. */
static int64_t
ev_since(const fx *f, size_t i, int64_t t)
{
	return (int64_t) sv_event_time_unix_ms(f->log[i]) - t;
}

/* sync_events makes sure the subscription is live: a no-op scale of group
 * to count is asked until its GroupScaled event arrives. Everything read
 * so far is dropped from the log. */
static void
sync_events(fx *f, const char *group, uint32_t count)
{
	int64_t end = it_now_ms() + EV_WAIT_MS;

	for (;;) {
		IT_PASS(&f->ctx,
		    sv_client_scale(
		        f->ctx.client, group, count, IT_CALL_MS, NULL));
		while (ev_read(f, 100))
			if (ev_scan(f, 0, f->n, group, ANY_ORD, K_SCALED) >= 0)
				goto synced;
		if (it_now_ms() > end)
			fail_msg("the event subscription never became live");
	}
synced:
	for (size_t i = 0; i < f->n; i++)
		sv_event_free(f->log[i]);
	f->n = 0;
}

/* scale sets group's target size through the admin client. */
static void
scale(fx *f, const char *group, uint32_t count)
{
	IT_PASS(&f->ctx,
	    sv_client_scale(f->ctx.client, group, count, IT_CALL_MS, NULL));
}

/* wstat_get reads the status row of group[ordinal]. */
static void
wstat_get(fx *f, const char *group, uint32_t ordinal, struct wstat *w)
{
	sv_workers *ws = NULL;

	IT_PASS(&f->ctx,
	    sv_client_status(f->ctx.client, group, ordinal, IT_CALL_MS, &ws));
	assert_int_equal(sv_workers_count(ws), 1);
	w->st       = sv_workers_state(ws, 0);
	w->ready    = sv_workers_ready(ws, 0);
	w->pid      = sv_workers_pid(ws, 0);
	w->gen      = sv_workers_generation(ws, 0);
	w->restarts = sv_workers_restarts(ws, 0);
	snprintf(
	    w->text, sizeof(w->text), "%s", sv_workers_status_text(ws, 0));
	sv_workers_free(ws);
}

/* group_counts reads ready and starting of group from ListGroups. */
static void
group_counts(fx *f, const char *group, uint32_t *ready, uint32_t *starting)
{
	sv_groups *g = NULL;

	IT_PASS(
	    &f->ctx, sv_client_groups(f->ctx.client, group, IT_CALL_MS, &g));
	assert_int_equal(sv_groups_count(g), 1);
	*ready    = sv_groups_ready(g, 0);
	*starting = sv_groups_starting(g, 0);
	sv_groups_free(g);
}

/* expect_report receives the report of the worker pid (reports of other
 * workers are skipped). */
static void
expect_report(fx *f, int64_t pid, struct it_report *r)
{
	int64_t end = it_now_ms() + IT_REPORT_MS;

	while (it_now_ms() < end) {
		int rv = it_recv_report(
		    &f->ctx, (int) (end - it_now_ms()) + 1, r);
		if (rv == 0 && r->pid == pid) {
			assert_int_equal(r->rc, SV_OK);
			return;
		}
	}
	fail_msg("no report from worker %lld", (long long) pid);
}

/* send_dgram sends len bytes to the daemon's notify socket from this
 * process (which is not a worker). */
static void
send_dgram(fx *f, const char *buf, size_t len)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int                fd;

	snprintf(
	    sa.sun_path, sizeof(sa.sun_path), "%s/notify.sock", f->ctx.dir);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	if (sendto(fd, buf, len, 0, (struct sockaddr *) &sa, sizeof(sa))
	    != (ssize_t) len) {
		int e = errno;
		close(fd);
		fail_msg("sendto %s: %s", sa.sun_path, strerror(e));
	}
	close(fd);
}

/* ---- readiness --------------------------------------------------------- */

static const char *const env_ready_usr1[]
    = {"SV_TEST_READY_ON_USR1=1", "SV_TEST_READY_STATUS=serving 42", NULL};

static int
setup_ready(void **state)
{
	static const struct it_group g[] = {{.name = "r",
	    .count                                 = 0,
	    .extra                                 = "    ready = true;",
	    .env_extra                             = env_ready_usr1}};

	return fx_setup(state, g, 1);
}

/*
 * ready = true: the spawned worker is STARTING and not ready (row and group
 * counts) until it sends Ready (here when the test gives it SIGUSR1, so the
 * "before" is not a race); then a StatusText and a Ready event come for
 * that very process, and the row is RUNNING, ready, with the status text.
 */
static void
test_ready_request(void **state)
{
	fx              *f = *state;
	struct it_report rep;
	struct wstat     w;
	uint32_t         nready, nstarting;
	size_t           i_start, i_ready;
	long             i_text;
	int64_t          pid;

	sync_events(f, "r", 0);
	scale(f, "r", 1);
	i_start = ev_find(f, 0, "r", 0, K_STARTED);
	pid     = sv_event_pid(f->log[i_start]);
	assert_true(pid > 0);
	expect_report(f, pid, &rep); /* SIGUSR1 is blocked from now on */

	wstat_get(f, "r", 0, &w);
	assert_int_equal(w.st, SV_STATE_STARTING);
	assert_int_equal(w.ready, 0);
	assert_int_equal(w.pid, pid);
	assert_string_equal(w.text, "");
	group_counts(f, "r", &nready, &nstarting);
	assert_int_equal(nready, 0);
	assert_int_equal(nstarting, 1);
	assert_int_equal(ev_scan(f, 0, f->n, "r", 0, K_READY), -1);

	assert_int_equal(kill((pid_t) pid, SIGUSR1), 0);
	i_ready = ev_find(f, i_start, "r", 0, K_READY);
	assert_int_equal(sv_event_pid(f->log[i_ready]), pid);
	assert_int_equal(sv_event_generation(f->log[i_ready]),
	    sv_event_generation(f->log[i_start]));
	i_text = ev_scan(f, i_start, i_ready, "r", 0, K_STATUS);
	assert_true(i_text >= 0);
	ev_expect(f, i_text, "text", "serving 42");

	wstat_get(f, "r", 0, &w);
	assert_int_equal(w.st, SV_STATE_RUNNING);
	assert_int_equal(w.ready, 1);
	assert_int_equal(w.pid, pid);
	assert_string_equal(w.text, "serving 42");
	group_counts(f, "r", &nready, &nstarting);
	assert_int_equal(nready, 1);
	assert_int_equal(nstarting, 0);
}

static const char *const env_ready_200[] = {"SV_TEST_READY_AFTER_MS=200",
    "SV_TEST_READY_STATUS=up after 200 ms", NULL};

static int
setup_sequential(void **state)
{
	static const struct it_group g[] = {{.name = "seq",
	    .count                                 = 0,
	    .extra     = "    ready = true; sequential_start = true;",
	    .env_extra = env_ready_200}};

	return fx_setup(state, g, 1);
}

/*
 * sequential_start with count 3, workers ready 200 ms after they start:
 * ordinal k+1's STARTED comes only after ordinal k's READY, each READY at
 * least about 200 ms after its own STARTED; all three end RUNNING and ready.
 */
static void
test_sequential_start(void **state)
{
	fx          *f = *state;
	struct wstat w;
	size_t       started[3], ready[3];
	uint32_t     nready, nstarting;
	int64_t      t0;

	sync_events(f, "seq", 0);
	t0 = wall_ms();
	scale(f, "seq", 3);
	for (int k = 0; k < 3; k++) {
		started[k] = ev_find(f, 0, "seq", k, K_STARTED);
		ready[k]   = ev_find(f, started[k], "seq", k, K_READY);
		/* Each worker waits 200 ms from its own start, and starts
		 * after the previous one is ready: READY k comes no sooner
		 * than 200 * (k + 1) ms after the request (less 1 for the
		 * stamps' grain). */
		if (ev_since(f, ready[k], t0) < 200 * (k + 1) - 1)
			fail_msg("seq[%d] READY %lld ms after the request", k,
			    (long long) ev_since(f, ready[k], t0));
	}
	for (int k = 0; k < 2; k++) {
		if (started[k + 1] < ready[k])
			fail_msg("seq[%d] started (event %zu) before seq[%d] "
			         "was ready (event %zu)",
			    k + 1, started[k + 1], k, ready[k]);
	}
	for (uint32_t k = 0; k < 3; k++) {
		wstat_get(f, "seq", k, &w);
		assert_int_equal(w.st, SV_STATE_RUNNING);
		assert_int_equal(w.ready, 1);
		assert_string_equal(w.text, "up after 200 ms");
	}
	group_counts(f, "seq", &nready, &nstarting);
	assert_int_equal(nready, 3);
	assert_int_equal(nstarting, 0);
}

static const char *const env_crash_once[]
    = {"SV_TEST_EXIT_AFTER_MS=100", "SV_TEST_EXIT_CODE=3",
        "SV_TEST_EXIT_BELOW_GEN=1", "SV_TEST_READY_AFTER_MS=300", NULL};

static int
setup_sequential_crash(void **state)
{
	static const struct it_group g[] = {{.name = "sc",
	    .count                                 = 0,
	    .extra     = "    ready = true; sequential_start = true;",
	    .env_extra = env_crash_once}};

	return fx_setup(state, g, 1);
}

/*
 * sequential_start, count 2, where each ordinal's first process exits 3
 * before it is ready (100 ms) and its replacement becomes ready (300 ms):
 * EXITED(code 3, not stopped by the supervisor) and RESTART_SCHEDULED for
 * generation 0; ordinal 1 starts only after ordinal 0's generation 1 is
 * ready (an exit is not readiness); both end RUNNING and ready, with one
 * restart and last exit code 3.
 */
static void
test_sequential_crash(void **state)
{
	fx          *f = *state;
	size_t       s0[2], x0[2], r0[2], s1[2], rd[2];
	struct wstat w;
	sv_workers  *ws = NULL;

	sync_events(f, "sc", 0);
	scale(f, "sc", 2);
	for (int k = 0; k < 2; k++) {
		s0[k] = ev_find(f, 0, "sc", k, K_STARTED);
		x0[k] = ev_find(f, s0[k], "sc", k, K_EXITED);
		assert_true(ev_exited(f, x0[k]));
		assert_int_equal(ev_num(f, x0[k], "code"), 3);
		ev_expect(f, x0[k], "stopped_by", "");
		r0[k] = ev_find(f, x0[k], "sc", k, K_RESTART);
		s1[k] = ev_find(f, r0[k], "sc", k, K_STARTED);
		assert_int_equal(sv_event_generation(f->log[s1[k]]),
		    sv_event_generation(f->log[s0[k]]) + 1);
		rd[k] = ev_find(f, s1[k], "sc", k, K_READY);
		assert_int_equal(
		    sv_event_pid(f->log[rd[k]]), sv_event_pid(f->log[s1[k]]));
		assert_int_equal(
		    ev_scan(f, s0[k], s1[k], "sc", k, K_READY), -1);
	}
	if (s0[1] < rd[0])
		fail_msg("sc[1] started (event %zu) before sc[0] was ready "
		         "(event %zu)",
		    s0[1], rd[0]);
	for (uint32_t k = 0; k < 2; k++) {
		wstat_get(f, "sc", k, &w);
		assert_int_equal(w.st, SV_STATE_RUNNING);
		assert_int_equal(w.ready, 1);
		assert_int_equal(w.restarts, 1);
		IT_PASS(&f->ctx,
		    sv_client_status(f->ctx.client, "sc", k, IT_CALL_MS, &ws));
		assert_int_equal(sv_workers_last_exit_code(ws, 0), 3);
		assert_int_equal(sv_workers_last_signal(ws, 0), 0);
		sv_workers_free(ws);
		ws = NULL;
	}
}

/* ---- start timeout ------------------------------------------------------ */

static int
setup_start_timeout(void **state)
{
	static const struct it_group g[] = {{.name = "slow",
	    .count                                 = 0,
	    .extra      = "    ready = true; start_timeout_ms = 300;\n"
	                  "    max_restarts = 1; max_seconds = 600;",
	    .backoff_ms = 200}};

	return fx_setup(state, g, 1);
}

/*
 * A worker that never becomes ready, start_timeout_ms 300 (on_start_timeout
 * "kill"): UNRESPONSIVE(start, kill) no sooner than 300 ms after STARTED,
 * STOPPING("start timeout"), EXITED(stopped_by "start timeout"),
 * RESTART_SCHEDULED, and the next generation starts. It counts as a
 * failure: a fast one for the backoff (delay 200 ms, attempt 1, with
 * backoff_initial_ms 200 and min_uptime_ms 60000), and with max_restarts 1
 * the second timeout fails the group.
 */
static void
test_start_timeout_kill(void **state)
{
	fx          *f = *state;
	size_t       s0, u0, st0, x0, r0, s1, u1, gf;
	sv_groups   *g = NULL;
	struct wstat w;
	int64_t      t0;

	sync_events(f, "slow", 0);
	t0 = wall_ms();
	scale(f, "slow", 1);
	s0 = ev_find(f, 0, "slow", 0, K_STARTED);
	u0 = ev_find(f, s0, "slow", 0, K_UNRESP);
	ev_expect(f, u0, "phase", "start");
	ev_expect(f, u0, "action", "kill");
	assert_int_equal(sv_event_pid(f->log[u0]), sv_event_pid(f->log[s0]));
	if (ev_since(f, u0, t0) < 299) {
		fail_msg("UNRESPONSIVE stamped %" PRId64 " ms after the "
		         "request (started %" PRIu64 ", unresponsive %" PRIu64
		         ")",
		    ev_since(f, u0, t0), sv_event_time_unix_ms(f->log[s0]),
		    sv_event_time_unix_ms(f->log[u0]));
	}
	assert_int_equal(ev_scan(f, s0, u0, "slow", 0, K_READY), -1);
	st0 = ev_find(f, u0, "slow", 0, K_STOPPING);
	ev_expect(f, st0, "reason", "start timeout");
	x0 = ev_find(f, st0, "slow", 0, K_EXITED);
	ev_expect(f, x0, "stopped_by", "start timeout");
	assert_int_equal(sv_event_pid(f->log[x0]), sv_event_pid(f->log[s0]));
	r0 = ev_find(f, x0, "slow", 0, K_RESTART);
	assert_int_equal(ev_num(f, r0, "delay_ms"), 200);
	assert_int_equal(ev_num(f, r0, "attempt"), 1);
	s1 = ev_find(f, r0, "slow", 0, K_STARTED);
	/* The start timeout (300) and the backoff delay (200) both lie
	 * between the request and the next start. */
	if (ev_since(f, s1, t0) < 499)
		fail_msg("the next generation started %lld ms after the "
		         "request: no backoff",
		    (long long) ev_since(f, s1, t0));
	assert_int_equal(sv_event_generation(f->log[s1]),
	    sv_event_generation(f->log[s0]) + 1);
	assert_true(sv_event_pid(f->log[s1]) != sv_event_pid(f->log[s0]));

	/* The second timeout is the second failure: over max_restarts 1. */
	u1 = ev_find(f, s1, "slow", 0, K_UNRESP);
	ev_expect(f, u1, "phase", "start");
	gf = ev_find(f, u1, "slow", ANY_ORD, K_FAILED);
	assert_non_null(strstr(ev_str(f, gf, "reason"), "restart"));
	assert_int_equal(ev_scan(f, s1, gf, "slow", 0, K_RESTART), -1);
	IT_PASS(
	    &f->ctx, sv_client_groups(f->ctx.client, "slow", IT_CALL_MS, &g));
	assert_int_equal(sv_groups_failed(g, 0), 1);
	sv_groups_free(g);
	wstat_get(f, "slow", 0, &w);
	assert_true(w.restarts >= 1);
}

static int
setup_start_abandon(void **state)
{
	static const struct it_group g[] = {{.name = "ab",
	    .count                                 = 0,
	    .extra = "    ready = true; sequential_start = true;\n"
	             "    start_timeout_ms = 300; "
	             "on_start_timeout = \"abandon\";"}};

	return fx_setup(state, g, 1);
}

/*
 * on_start_timeout "abandon" in a sequential group of 2 whose workers never
 * become ready: UNRESPONSIVE(start, abandon) for ordinal 0, then ordinal 1
 * starts (and is abandoned in turn); nothing is stopped, and both processes
 * stay STARTING, alive, not ready, with their first generation.
 */
static void
test_start_timeout_abandon(void **state)
{
	fx          *f = *state;
	size_t       s[2], u[2];
	struct wstat w;
	int64_t      t0;

	sync_events(f, "ab", 0);
	t0 = wall_ms();
	scale(f, "ab", 2);
	for (int k = 0; k < 2; k++) {
		s[k] = ev_find(f, 0, "ab", k, K_STARTED);
		u[k] = ev_find(f, s[k], "ab", k, K_UNRESP);
		ev_expect(f, u[k], "phase", "start");
		ev_expect(f, u[k], "action", "abandon");
		/* Ordinal k starts once k - 1 is abandoned: its timeout
		 * ends no sooner than 300 * (k + 1) ms after the request. */
		if (ev_since(f, u[k], t0) < 300 * (k + 1) - 1)
			fail_msg("ab[%d] abandoned %lld ms after the request",
			    k, (long long) ev_since(f, u[k], t0));
	}
	if (s[1] < u[0])
		fail_msg("ab[1] started before ab[0]'s start was abandoned");
	assert_int_equal(ev_scan(f, 0, f->n, "ab", ANY_ORD, K_STOPPING), -1);
	assert_int_equal(ev_scan(f, 0, f->n, "ab", ANY_ORD, K_EXITED), -1);
	for (uint32_t k = 0; k < 2; k++) {
		char st = 0;

		wstat_get(f, "ab", k, &w);
		assert_int_equal(w.st, SV_STATE_STARTING);
		assert_int_equal(w.ready, 0);
		assert_int_equal(w.pid, sv_event_pid(f->log[s[k]]));
		assert_int_equal(w.gen, sv_event_generation(f->log[s[k]]));
		assert_int_equal(
		    it_proc_stat((pid_t) w.pid, NULL, &st, NULL), 0);
		assert_true(st != 'Z');
	}
}

/* ---- watchdog ---------------------------------------------------------- */

static const char *const env_hb5[] = {"SV_TEST_READY_AFTER_MS=0",
    "SV_TEST_HEARTBEAT_MS=200", "SV_TEST_HEARTBEATS=5", NULL};

static int
setup_watchdog(void **state)
{
	static const struct it_group g[] = {{.name = "wd",
	    .count                                 = 0,
	    .extra      = "    ready = true; watchdog_ms = 1000;\n"
	                  "    max_restarts = 1; max_seconds = 600;",
	    .env_extra  = env_hb5,
	    .backoff_ms = 200}};

	return fx_setup(state, g, 1);
}

/*
 * watchdog_ms 1000 armed at readiness (ready = true, so a slow exec on a
 * loaded machine does not count), a worker that is ready at once, then
 * heartbeats every 200 ms five times and stops: the heartbeats keep it
 * (unfed, the watchdog would fire 1000 ms after READY; fed, about 2000 ms
 * after; no sooner than 2000 ms after the request is asserted), then
 * UNRESPONSIVE(watchdog, kill), STOPPING("watchdog"), EXITED(stopped_by
 * "watchdog"), RESTART_SCHEDULED and the next generation of the same ordinal
 * starts. A missed heartbeat is a failure: a fast one for the backoff (delay
 * 200 ms, attempt 1), and with max_restarts 1 the replacement's own miss fails
 * the group.
 */
static void
test_watchdog(void **state)
{
	fx          *f = *state;
	size_t       s0, rd, u0, st0, x0, r0, s1, u1, gf;
	struct wstat w;
	int64_t      t0;

	sync_events(f, "wd", 0);
	t0 = wall_ms();
	scale(f, "wd", 1);
	s0 = ev_find(f, 0, "wd", 0, K_STARTED);
	rd = ev_find(f, s0, "wd", 0, K_READY);
	u0 = ev_find(f, rd, "wd", 0, K_UNRESP);
	ev_expect(f, u0, "phase", "watchdog");
	ev_expect(f, u0, "action", "kill");
	assert_int_equal(sv_event_pid(f->log[u0]), sv_event_pid(f->log[s0]));
	/* The fifth heartbeat is sent no sooner than 1000 ms after the
	 * worker's start, which follows the request; re-armed by it, the
	 * watchdog fires 1000 ms later. Unfed (the defect), it fires 1000
	 * ms after READY, about 1000 ms after the request. */
	if (ev_since(f, u0, t0) < 2000 - 1)
		fail_msg("the watchdog fired %lld ms after the request (READY "
		         "stamped at %lld): the heartbeats did not re-arm it",
		    (long long) ev_since(f, u0, t0),
		    (long long) ev_since(f, rd, t0));
	st0 = ev_find(f, u0, "wd", 0, K_STOPPING);
	ev_expect(f, st0, "reason", "watchdog");
	x0 = ev_find(f, st0, "wd", 0, K_EXITED);
	ev_expect(f, x0, "stopped_by", "watchdog");
	r0 = ev_find(f, x0, "wd", 0, K_RESTART);
	assert_int_equal(ev_num(f, r0, "delay_ms"), 200);
	assert_int_equal(ev_num(f, r0, "attempt"), 1);
	s1 = ev_find(f, r0, "wd", 0, K_STARTED);
	assert_int_equal(sv_event_generation(f->log[s1]),
	    sv_event_generation(f->log[s0]) + 1);
	gf = ev_find(f, s1, "wd", ANY_ORD, K_FAILED);
	u1 = ev_find(f, s1, "wd", 0, K_UNRESP);
	if (gf < u1)
		fail_msg("wd failed before its second missed heartbeat");
	ev_expect(f, u1, "phase", "watchdog");
	assert_int_equal(ev_scan(f, s1, gf, "wd", 0, K_RESTART), -1);
	wstat_get(f, "wd", 0, &w);
	assert_int_equal(w.restarts, 1);
	assert_int_equal(w.gen, sv_event_generation(f->log[s1]));
}

/* ---- notify datagrams -------------------------------------------------- */

static const char *const env_notify_ready[]
    = {"SV_TEST_NOTIFY=READY=1\\nSTATUS=notified ok",
        "SV_TEST_NOTIFY_AFTER_MS=50", NULL};

static int
setup_notify_ready(void **state)
{
	static const struct it_group g[] = {{.name = "n",
	    .count                                 = 0,
	    .extra                                 = "    ready = true;",
	    .env_extra                             = env_notify_ready}};

	return fx_setup(state, g, 1);
}

/*
 * One datagram "READY=1\nSTATUS=notified ok" on $NOTIFY_SOCKET from the
 * worker: a StatusText event with that text, then READY for that process;
 * the row is RUNNING, ready, with the text.
 */
static void
test_notify_ready(void **state)
{
	fx          *f = *state;
	size_t       s0, r0;
	long         t0;
	struct wstat w;

	sync_events(f, "n", 0);
	scale(f, "n", 1);
	s0 = ev_find(f, 0, "n", 0, K_STARTED);
	r0 = ev_find(f, s0, "n", 0, K_READY);
	assert_int_equal(sv_event_pid(f->log[r0]), sv_event_pid(f->log[s0]));
	t0 = ev_scan(f, s0, r0, "n", 0, K_STATUS);
	assert_true(t0 >= 0);
	ev_expect(f, t0, "text", "notified ok");
	wstat_get(f, "n", 0, &w);
	assert_int_equal(w.st, SV_STATE_RUNNING);
	assert_int_equal(w.ready, 1);
	assert_int_equal(w.pid, sv_event_pid(f->log[s0]));
	assert_string_equal(w.text, "notified ok");
}

static const char *const env_notify_wd[]
    = {"SV_TEST_NOTIFY=READY=1\\nWATCHDOG=1", "SV_TEST_NOTIFY_EVERY_MS=200",
        "SV_TEST_NOTIFY_COUNT=6", NULL};

static int
setup_notify_watchdog(void **state)
{
	static const struct it_group g[] = {{.name = "nw",
	    .count                                 = 0,
	    .extra     = "    ready = true; watchdog_ms = 1000;",
	    .env_extra = env_notify_wd}};

	return fx_setup(state, g, 1);
}

/*
 * watchdog_ms 1000 (armed at readiness) fed by datagrams: "READY=1\n
 * WATCHDOG=1" at once and every 200 ms, 6 in all. The first makes the
 * worker ready; the others only re-arm the watchdog, which therefore fires
 * about 2000 ms after READY rather than 1000 (2000 after the request
 * is asserted), and the
 * worker is stopped for "watchdog".
 */
static void
test_notify_watchdog(void **state)
{
	fx     *f = *state;
	size_t  s0, rd, u0, st0;
	int64_t t0;

	sync_events(f, "nw", 0);
	t0 = wall_ms();
	scale(f, "nw", 1);
	s0 = ev_find(f, 0, "nw", 0, K_STARTED);
	rd = ev_find(f, s0, "nw", 0, K_READY);
	u0 = ev_find(f, rd, "nw", 0, K_UNRESP);
	ev_expect(f, u0, "phase", "watchdog");
	/* The sixth datagram leaves no sooner than 1000 ms after the
	 * worker's start (which follows the request) and re-arms the
	 * watchdog for 1000 ms; unfed, it fires about 1000 ms after the
	 * request. */
	if (ev_since(f, u0, t0) < 2000 - 1)
		fail_msg("the watchdog fired %lld ms after the request (READY "
		         "stamped at %lld): the WATCHDOG=1 datagrams did not "
		         "re-arm it",
		    (long long) ev_since(f, u0, t0),
		    (long long) ev_since(f, rd, t0));
	st0 = ev_find(f, u0, "nw", 0, K_STOPPING);
	ev_expect(f, st0, "reason", "watchdog");
}

static const char *const env_extend_ready[] = {
    "SV_TEST_NOTIFY_EXTEND_USEC=5000000", "SV_TEST_READY_AFTER_MS=1800", NULL};
static const char *const env_extend_never[]
    = {"SV_TEST_NOTIFY_EXTEND_USEC=2500000", NULL};

static int
setup_notify_extend(void **state)
{
	static const struct it_group g[] = {
	    {.name         = "ne",
	        .count     = 0,
	        .extra     = "    ready = true; start_timeout_ms = 1000;",
	        .env_extra = env_extend_ready},
	    {.name         = "nx",
	        .count     = 0,
	        .extra     = "    ready = true; start_timeout_ms = 1000;\n"
	                     "    on_start_timeout = \"abandon\";",
	        .env_extra = env_extend_never},
	};

	return fx_setup(state, g, 2);
}

/*
 * EXTEND_TIMEOUT_USEC, sent first thing by the worker, delays a start
 * timeout of 1000 ms (generous, so that a slow exec on a loaded machine
 * still sends it in time): "ne" (extended to 5 s) becomes ready after
 * 1800 ms with no UNRESPONSIVE at all; "nx" (extended to 2.5 s, never
 * ready) is found unresponsive no sooner than about 2500 ms after its
 * start (2500 after the request asserted), not at 1000.
 */
static void
test_notify_extend(void **state)
{
	fx          *f = *state;
	size_t       se, re, sx, ux;
	struct wstat w;
	int64_t      t0;

	sync_events(f, "ne", 0);
	t0 = wall_ms();
	scale(f, "ne", 1);
	scale(f, "nx", 1);
	se = ev_find(f, 0, "ne", 0, K_STARTED);
	sx = ev_find(f, 0, "nx", 0, K_STARTED);
	re = ev_find(f, se, "ne", 0, K_READY);
	/* ne is ready 1800 ms after its start, which follows the request */
	if (ev_since(f, re, t0) < 1800 - 1)
		fail_msg("ne READY %lld ms after the request",
		    (long long) ev_since(f, re, t0));
	assert_int_equal(ev_scan(f, 0, f->n, "ne", 0, K_UNRESP), -1);
	ux = ev_find(f, sx, "nx", 0, K_UNRESP);
	ev_expect(f, ux, "phase", "start");
	ev_expect(f, ux, "action", "abandon");
	/* The extension, received after the request, asks for 2500 ms
	 * from its receipt; not applied, the timeout ends about 1000 ms
	 * after the request. */
	if (ev_since(f, ux, t0) < 2500 - 1)
		fail_msg("nx timed out %lld ms after the request: "
		         "EXTEND_TIMEOUT_USEC was not applied",
		    (long long) ev_since(f, ux, t0));
	wstat_get(f, "ne", 0, &w);
	assert_int_equal(w.st, SV_STATE_RUNNING);
	assert_int_equal(w.ready, 1);
	assert_int_equal(ev_scan(f, 0, f->n, "ne", 0, K_UNRESP), -1);
}

static const char *const env_extend_stop[]
    = {"SV_TEST_NOTIFY_ON_USR1=EXTEND_TIMEOUT_USEC=4000000", NULL};

static int
setup_notify_extend_stop(void **state)
{
	static const struct it_group g[] = {{.name = "sx",
	    .count                                 = 0,
	    .ignore_term                           = true,
	    .stop_timeout_ms                       = 2000,
	    .env_extra                             = env_extend_stop}};

	return fx_setup(state, g, 1);
}

/*
 * EXTEND_TIMEOUT_USEC also delays a stop timeout: a worker that ignores
 * SIGTERM is restarted by the operator (stop_timeout_ms 2000) and, once
 * STOPPING is seen, asks for 4 s more: UNRESPONSIVE(stop, escalate) comes
 * no sooner than about 4 s after STOPPING (4000 after the SIGUSR1
 * asserted), then SIGKILL,
 * and the next generation starts.
 */
static void
test_notify_extend_stop(void **state)
{
	fx              *f = *state;
	struct it_report rep;
	size_t           s0, st, u, x, s1;
	int64_t          pid, t_usr1;

	sync_events(f, "sx", 0);
	scale(f, "sx", 1);
	s0  = ev_find(f, 0, "sx", 0, K_STARTED);
	pid = sv_event_pid(f->log[s0]);
	expect_report(f, pid, &rep);
	IT_PASS(
	    &f->ctx, sv_client_restart(f->ctx.client, "sx", 0, IT_CALL_MS));
	st = ev_find(f, s0, "sx", 0, K_STOPPING);
	ev_expect(f, st, "reason", "restart");
	t_usr1 = wall_ms();
	assert_int_equal(kill((pid_t) pid, SIGUSR1), 0);
	u = ev_find(f, st, "sx", 0, K_UNRESP);
	ev_expect(f, u, "phase", "stop");
	ev_expect(f, u, "action", "escalate");
	/* The worker asks for 4000 ms more once signalled, after t_usr1;
	 * not applied, the stop timeout ends 2000 ms after STOPPING, which
	 * came before t_usr1. */
	if (ev_since(f, u, t_usr1) < 4000 - 1)
		fail_msg("sx was found unresponsive %lld ms after the "
		         "SIGUSR1: EXTEND_TIMEOUT_USEC was not applied to the "
		         "stop",
		    (long long) ev_since(f, u, t_usr1));
	x = ev_find(f, u, "sx", 0, K_EXITED);
	assert_false(ev_exited(f, x));
	assert_int_equal(ev_num(f, x, "signal"), SIGKILL);
	s1 = ev_find(f, x, "sx", 0, K_STARTED);
	assert_int_equal(sv_event_generation(f->log[s1]),
	    sv_event_generation(f->log[s0]) + 1);
}

static const char *const env_notify_usr1[]
    = {"SV_TEST_NOTIFY_ON_USR1=STATUS=genuine", NULL};

static int
setup_notify_foreign(void **state)
{
	static const struct it_group g[] = {{.name = "nf",
	    .count                                 = 0,
	    .extra                                 = "    ready = true;",
	    .env_extra                             = env_notify_usr1}};

	return fx_setup(state, g, 1);
}

/*
 * Datagrams from a process that is not a worker (this test) change
 * nothing: "READY=1\nSTATUS=forged", a datagram with a NUL byte and an
 * empty one are dropped; the daemon keeps serving. Ordering: the worker's
 * own "STATUS=genuine" (sent on SIGUSR1, after our datagrams were queued on
 * the same socket) is the first status text seen, and no READY came.
 */
static void
test_notify_foreign(void **state)
{
	fx               *f        = *state;
	static const char forged[] = "READY=1\nSTATUS=forged\nWATCHDOG=1";
	static const char nul[]    = "READY=1\0STATUS=forged";
	struct it_report  rep;
	struct wstat      w;
	size_t            s0, t0;
	int64_t           pid;

	sync_events(f, "nf", 0);
	scale(f, "nf", 1);
	s0  = ev_find(f, 0, "nf", 0, K_STARTED);
	pid = sv_event_pid(f->log[s0]);
	expect_report(f, pid, &rep); /* SIGUSR1 is handled from now on */

	send_dgram(f, forged, sizeof(forged) - 1);
	send_dgram(f, nul, sizeof(nul) - 1);
	send_dgram(f, "", 0);
	assert_int_equal(kill((pid_t) pid, SIGUSR1), 0);
	t0 = ev_find(f, s0, "nf", 0, K_STATUS);
	ev_expect(f, t0, "text", "genuine");
	assert_int_equal(sv_event_pid(f->log[t0]), pid);
	assert_int_equal(ev_scan(f, s0, f->n, "nf", 0, K_READY), -1);

	wstat_get(f, "nf", 0, &w);
	assert_int_equal(w.st, SV_STATE_STARTING);
	assert_int_equal(w.ready, 0);
	assert_int_equal(w.pid, pid);
	assert_string_equal(w.text, "genuine");
	assert_true(it_daemon_alive(&f->ctx));
	assert_int_equal(it_hello_ok(&f->ctx), SV_OK);
}

/* ---- groups created at runtime ----------------------------------------- */

static int
setup_runtime(void **state)
{
	static const struct it_group g[] = {{.name = "base", .count = 0}};

	return fx_setup(state, g, 1);
}

/* make_spec builds a spec of sv-testworker reporting to ctx. */
static sv_groupspec *
make_spec(fx *f, const char *name, uint32_t count)
{
	sv_groupspec *sp = NULL;
	char          env[200];

	assert_int_equal(sv_groupspec_new(name,
	                     "runtime group of the "
	                     "readiness test",
	                     count, &sp),
	    SV_OK);
	assert_int_equal(sv_groupspec_add_arg(sp, it_worker_program()), SV_OK);
	snprintf(env, sizeof(env), "SV_TEST_REPORT_URL=%s", f->ctx.report_url);
	assert_int_equal(sv_groupspec_add_env(sp, env), SV_OK);
	assert_int_equal(sv_groupspec_set(sp, "restart", "transient"), SV_OK);
	return sp;
}

/* create_and_watch creates "rt" with 2 workers and checks GROUP_CREATED,
 * two STARTED events, the two reports and ListGroups. The pids are stored
 * in pids[0..1]; from is where the search of the log starts. */
static void
create_and_watch(fx *f, size_t from, int64_t pids[2])
{
	sv_groupspec    *sp = make_spec(f, "rt", 2);
	struct it_report rep;
	sv_groups       *g = NULL;
	size_t           c, s[2];
	sv_err           e;

	e = sv_client_create_group(f->ctx.client, sp, IT_CALL_MS);
	sv_groupspec_free(sp);
	if (e != SV_OK)
		fail_msg("create rt: %s: %s", sv_err_name(e),
		    sv_client_error_message(f->ctx.client));
	c = ev_find(f, from, "rt", ANY_ORD, K_CREATED);
	for (int k = 0; k < 2; k++) {
		s[k]    = ev_find(f, from, "rt", k, K_STARTED);
		pids[k] = sv_event_pid(f->log[s[k]]);
		if (s[k] < c)
			fail_msg("rt[%d] started before GROUP_CREATED", k);
	}
	/* Their reports, in whatever order they come. */
	for (int seen = 0; seen != 3;) {
		int k;

		it_expect_reports(&f->ctx, 1, &rep);
		k = rep.pid == pids[0] ? 0 : rep.pid == pids[1] ? 1 : -1;
		if (k < 0 || (seen & (1 << k)) != 0)
			fail_msg("unexpected report: %s", rep.raw);
		seen |= 1 << k;
		assert_string_equal(rep.group, "rt");
		assert_int_equal(rep.ordinal, k);
	}
	IT_PASS(
	    &f->ctx, sv_client_groups(f->ctx.client, "rt", IT_CALL_MS, &g));
	assert_int_equal(sv_groups_count(g), 1);
	assert_string_equal(sv_groups_name(g, 0), "rt");
	assert_int_equal(sv_groups_count_wanted(g, 0), 2);
	assert_string_equal(sv_groups_restart(g, 0), "transient");
	assert_string_equal(
	    sv_groups_purpose(g, 0), "runtime group of the readiness test");
	sv_groups_free(g);
}

/* expect_refused creates sp and wants SV_EBADREQ with needle in the
 * message; the group must not exist afterwards. */
static void
expect_refused(fx *f, sv_groupspec *sp, const char *name, const char *needle)
{
	sv_groups  *g = NULL;
	sv_err      e = sv_client_create_group(f->ctx.client, sp, IT_CALL_MS);
	const char *msg = sv_client_error_message(f->ctx.client);

	sv_groupspec_free(sp);
	printf("create %s: %s: %s\n", name, sv_err_name(e), msg);
	if (e != SV_EBADREQ)
		fail_msg("create %s: got %s, want BAD_REQUEST (%s)", name,
		    sv_err_name(e), msg);
	if (strstr(msg, needle) == NULL)
		fail_msg("create %s: message \"%s\" lacks \"%s\"", name, msg,
		    needle);
	if (strcmp(name, "rt") != 0) {
		/* A config rule's message: "spec:LINE: KEY: what". */
		if (strncmp(msg, "spec:", 5) != 0)
			fail_msg("create %s: \"%s\" is not a config message",
			    name, msg);
		e = sv_client_groups(f->ctx.client, name, IT_CALL_MS, &g);
		sv_groups_free(g);
		assert_int_equal(e, SV_ENOTFOUND);
	}
}

/*
 * CreateGroup: "rt" (sv-testworker, count 2, restart transient) publishes
 * GROUP_CREATED and starts two workers, listed by ListGroups; specs that
 * break a config rule (count above max_count, an unknown key) and a second
 * "rt" are BAD_REQUEST with the rule's message. DeleteGroup stops and reaps
 * both workers (gone from /proc), publishes GROUP_DELETED, the name is
 * unknown; then "rt" can be created again.
 */
static void
test_runtime_group(void **state)
{
	fx           *f = *state;
	int64_t       pids[2], again[2];
	sv_groupspec *sp;
	sv_groups    *g = NULL;
	size_t        d, from;
	int64_t       end;

	sync_events(f, "base", 0);
	create_and_watch(f, 0, pids);

	sp = make_spec(f, "rt2", 5);
	assert_int_equal(sv_groupspec_set_max_count(sp, 2), SV_OK);
	expect_refused(
	    f, sp, "rt2", "groups[0].count: 5 is above max_count 2");
	sp = make_spec(f, "rt3", 1);
	assert_int_equal(sv_groupspec_set(sp, "bogus_key", "1"), SV_OK);
	expect_refused(f, sp, "rt3", "groups[0].bogus_key: unknown key");
	sp = make_spec(f, "rt3", 1);
	assert_int_equal(sv_groupspec_set(sp, "count", "7"), SV_OK);
	expect_refused(f, sp, "rt3", "GroupSpec has a field for");
	sp = make_spec(f, "rt", 1);
	expect_refused(f, sp, "rt", "exists");

	from = f->n;
	IT_PASS(
	    &f->ctx, sv_client_delete_group(f->ctx.client, "rt", IT_CALL_MS));
	d = ev_find(f, from, "rt", ANY_ORD, K_DELETED);
	for (int k = 0; k < 2; k++) {
		long st = ev_scan(f, from, d, "rt", k, K_STOPPING);
		long x  = ev_scan(f, from, d, "rt", k, K_EXITED);

		if (st < 0 || x < 0)
			fail_msg("rt[%d]: no STOPPING and EXITED before "
			         "GROUP_DELETED",
			    k);
		ev_expect(f, st, "reason", "group deleted");
		assert_int_equal(sv_event_pid(f->log[x]), pids[k]);
	}
	/* Reaped: the pids are gone (not even zombies). */
	end = it_now_ms() + IT_REAP_MS;
	for (int k = 0; k < 2; k++) {
		while (it_proc_stat((pid_t) pids[k], NULL, NULL, NULL) == 0) {
			if (it_now_ms() > end)
				fail_msg("worker %lld still in /proc after "
				         "GROUP_DELETED",
				    (long long) pids[k]);
			nng_msleep(5); /* /proc has no notification */
		}
	}
	assert_int_equal(sv_client_groups(f->ctx.client, "rt", IT_CALL_MS, &g),
	    SV_ENOTFOUND);
	sv_groups_free(g);

	create_and_watch(f, d + 1, again);
	for (int k = 0; k < 2; k++)
		assert_true(again[k] != pids[0] && again[k] != pids[1]);
}

/*
 * DeleteGroup of a runtime group with sequential_start whose ordinal 0
 * never becomes ready, so ordinal 1 waits unspawned: the group goes
 * (STOPPING "group deleted", EXITED, GROUP_DELETED), ordinal 1 never
 * starts, the process is gone from /proc, and the name is free again.
 */
static void
test_runtime_delete_waiting(void **state)
{
	fx           *f = *state;
	sv_groupspec *sp;
	sv_groups    *g = NULL;
	size_t        s0, st, d, c2;
	int64_t       pid, end;
	sv_err        e;

	sync_events(f, "base", 0);
	sp = make_spec(f, "rq", 2);
	assert_int_equal(sv_groupspec_set(sp, "ready", "true"), SV_OK);
	assert_int_equal(
	    sv_groupspec_set(sp, "sequential_start", "true"), SV_OK);
	e = sv_client_create_group(f->ctx.client, sp, IT_CALL_MS);
	sv_groupspec_free(sp);
	if (e != SV_OK)
		fail_msg("create rq: %s: %s", sv_err_name(e),
		    sv_client_error_message(f->ctx.client));
	s0  = ev_find(f, 0, "rq", 0, K_STARTED);
	pid = sv_event_pid(f->log[s0]);
	IT_PASS(
	    &f->ctx, sv_client_groups(f->ctx.client, "rq", IT_CALL_MS, &g));
	assert_int_equal(sv_groups_starting(g, 0), 2); /* 1 spawned, 1 not */
	sv_groups_free(g);
	g = NULL;

	IT_PASS(
	    &f->ctx, sv_client_delete_group(f->ctx.client, "rq", IT_CALL_MS));
	st = ev_find(f, s0, "rq", 0, K_STOPPING);
	ev_expect(f, st, "reason", "group deleted");
	d = ev_find(f, st, "rq", ANY_ORD, K_DELETED);
	assert_true(ev_scan(f, st, d, "rq", 0, K_EXITED) >= 0);
	assert_int_equal(ev_scan(f, 0, f->n, "rq", 1, K_STARTED), -1);
	end = it_now_ms() + IT_REAP_MS;
	while (it_proc_stat((pid_t) pid, NULL, NULL, NULL) == 0) {
		if (it_now_ms() > end)
			fail_msg(
			    "worker %lld still in /proc", (long long) pid);
		nng_msleep(5); /* /proc has no notification */
	}
	assert_int_equal(sv_client_groups(f->ctx.client, "rq", IT_CALL_MS, &g),
	    SV_ENOTFOUND);
	sv_groups_free(g);

	sp = make_spec(f, "rq", 1);
	IT_PASS(
	    &f->ctx, sv_client_create_group(f->ctx.client, sp, IT_CALL_MS));
	sv_groupspec_free(sp);
	c2 = ev_find(f, d, "rq", ANY_ORD, K_CREATED);
	(void) ev_find(f, c2, "rq", 0, K_STARTED);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
	        test_ready_request, setup_ready, fx_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_sequential_start, setup_sequential, fx_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_sequential_crash, setup_sequential_crash, fx_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_start_timeout_kill, setup_start_timeout, fx_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_start_timeout_abandon, setup_start_abandon, fx_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_watchdog, setup_watchdog, fx_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_notify_ready, setup_notify_ready, fx_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_notify_watchdog, setup_notify_watchdog, fx_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_notify_extend, setup_notify_extend, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_notify_extend_stop,
	        setup_notify_extend_stop, fx_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_notify_foreign, setup_notify_foreign, fx_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_runtime_group, setup_runtime, fx_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_runtime_delete_waiting, setup_runtime, fx_teardown),
	};

	it_args(argc, argv);
	return it_finish(cmocka_run_group_tests_name(
	    "integration_readiness", tests, NULL, NULL));
}
