/*
 * bench_events.c — scenario 7 of sv-bench: restart latency with one slow
 * event subscriber attached. Target: the median kill-to-replacement
 * latency with the slow subscriber attached and stalled differs from the
 * median without it by at most 10%; and the daemon published the target
 * number of events (100,000 by default) while it was attached.
 *
 * Design: one daemon with two groups: "victim", one stamp worker
 * (min_uptime_ms 0), whose restart latency is measured exactly as in
 * scenario 2 (kill, then the replacement's own CLOCK_MONOTONIC stamp from
 * main), and "flood", never started, the event source: every scale
 * request publishes one GROUP_SCALED event, even one that leaves the count
 * at 0, so sv-bench floods the stream with no-op scale requests back to
 * back (thousands per second; a crash loop makes a few hundred events per
 * second here, because every one needs an exec, and could not reach
 * 100,000 within the time bound).
 * The slow subscriber is the worst kind: a raw AF_UNIX stream connection to
 * the event socket that completes nng's SP handshake as a SUB peer and
 * then never reads a byte. (An nng SUB socket that never calls recv would
 * not do: its pipe keeps reading and drops in user space.) The kernel
 * queue fills, then the daemon's per-pipe queue; from then on every event
 * for that pipe must be dropped without blocking the loop thread.
 * The blocks alternate: without (a short flood of EVENTS_PREFLOOD events,
 * then K kills), then attach the subscriber, flood (target / blocks
 * events, or until the flood's time budget ends), and measure K kills with
 * the subscriber still attached and stalled; detach; repeat. Both sides
 * thus measure right after a flood, on an otherwise idle daemon, and only
 * the subscriber differs. The whole scenario is bounded (EVENTS_BOUND_S):
 * past it, the blocks stop early with the samples they have. The
 * daemon's sequence number before and after a flood is read over a fresh
 * raw connection that triggers one event and reads it (seq_now).
 * Reported besides: the bytes left unread in the subscriber's socket (> 0
 * proves it was stalled), whether the daemon kept it connected, and the
 * daemon's VmRSS before and after.
 *
 * File layout: the slow subscriber and the sequence reader (kill blocks:
 * harness, kill_block); flood; run; rows and details.
 */
#include "scenarios.h"

#include "evsub.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <supervise/client.h>

/* Events of the short flood before each block without the subscriber. */
#define EVENTS_PREFLOOD 2000

/* The scenario's time bound, and its share for the floods. */
#define EVENTS_BOUND_S       55
#define EVENTS_QUICK_BOUND_S 25

/* ------------------------------------------------------------------ */
/* The slow subscriber and the sequence reader                        */
/* ------------------------------------------------------------------ */

/*
 * read_full reads exactly len bytes from fd into buf until deadline.
 * Returns 0, or -1 at the deadline, on end of stream or on an error.
 */
static int
read_full(int fd, void *buf, size_t len, int64_t deadline)
{
	size_t got = 0;

	while (got < len) {
		struct pollfd p    = {fd, POLLIN, 0};
		int64_t       left = deadline - now_ns();
		ssize_t       n;

		if (left <= 0 || g_interrupted
		    || poll(&p, 1, (int) (left / NS_PER_MS) + 1) < 0)
			return -1;
		n = recv(fd, (char *) buf + got, len - got, MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			return -1;
		if (n > 0)
			got += (size_t) n;
	}
	return 0;
}

/*
 * read_event reads one message of nng's IPC framing (type byte 1, 64-bit
 * big-endian length, body) from fd until deadline and decodes it. Returns
 * 1, 0 when none came by deadline, -1 on a malformed message or error.
 */
static int
read_event(int fd, int64_t deadline, struct bench_event *ev)
{
	static uint8_t body[65536];
	struct pollfd  p = {fd, POLLIN, 0};
	int64_t        left;
	uint8_t        head[9];
	uint64_t       len = 0;
	int            i;

	/* Nothing arriving by the deadline is not an error. */
	left = deadline - now_ns();
	if (poll(&p, 1, left > 0 ? (int) (left / NS_PER_MS) + 1 : 0) == 0)
		return 0;
	if (read_full(fd, head, sizeof(head), deadline + NS_PER_SEC) != 0)
		return -1;
	for (i = 1; i < 9; i++)
		len = len << 8 | head[i];
	if (head[0] != 1 || len > sizeof(body)
	    || read_full(fd, body, (size_t) len, deadline + NS_PER_SEC) != 0
	    || evsub_decode(body, (size_t) len, ev) != 0)
		return -1;
	return 1;
}

/*
 * seq_now learns how far the daemon's event sequence has gone: it
 * connects like the slow subscriber (evsub_raw_attach), then sends a no-op
 * scale request (group "flood" to 0, which publishes one GROUP_SCALED event)
 * and reads one message, repeating the request while the new connection has
 * not joined the daemon's PUB socket yet. A raw connection, not an nng socket,
 * so that closing it while events flow cannot hang (see evsub.h). Returns
 * 0 with *seqp, or -1 with why.
 */
static int
seq_now(
    const char *path, sv_client *c, uint64_t *seqp, char *why, size_t whylen)
{
	struct bench_event ev;
	int64_t            deadline = now_ns() + 5 * NS_PER_SEC;
	int                fd, rv = 0;
	sv_err             err;

	if ((fd = evsub_raw_attach(path, deadline, why, whylen)) < 0)
		return -1;
	while (rv == 0 && now_ns() < deadline && !g_interrupted) {
		if ((err
		        = sv_client_scale(c, "flood", 0, RPC_TIMEOUT_MS, NULL))
		    != SV_OK) {
			snprintf(why, whylen, "scale(flood, 0): %s: %s",
			    sv_strerror(err), sv_client_error_message(c));
			close(fd);
			return -1;
		}
		rv = read_event(fd, now_ns() + 50 * NS_PER_MS, &ev);
	}
	close(fd);
	if (rv != 1) {
		snprintf(why, whylen, "no event on a fresh connection");
		return -1;
	}
	*seqp = ev.seq;
	return 0;
}

/* slow_unread returns the bytes queued unread at fd, or -1. */
static long
slow_unread(int fd)
{
	int n = 0;

	return ioctl(fd, FIONREAD, &n) == 0 ? n : -1;
}

/* slow_connected tells whether the daemon still holds fd's connection. */
static bool
slow_connected(int fd)
{
	struct pollfd p = {fd, POLLRDHUP, 0};

	return poll(&p, 1, 0) == 0;
}

/* ------------------------------------------------------------------ */
/* Kill blocks                                                        */
/* ------------------------------------------------------------------ */

/* ------------------------------------------------------------------ */
/* Flood                                                              */
/* ------------------------------------------------------------------ */

/*
 * flood publishes want events, or as many as budget_ns allows: no-op
 * scale requests (group "flood" to 0), one GROUP_SCALED event each, back
 * to back. The daemon's sequence number is read before and after, and,
 * when the slow subscriber is attached, its advance is added to
 * res->flooded. Returns 0, or -1 with res->why set.
 */
static int
flood(const struct daemon *d, sv_client *c, uint64_t want, int64_t budget_ns,
    bool attached, struct events_result *res)
{
	int64_t  t0 = now_ns(), end = t0 + budget_ns;
	uint64_t s0, s1, calls = 0;
	sv_err   err;

	if (seq_now(d->evsock, c, &s0, res->why, sizeof(res->why)) != 0)
		return -1;
	while (calls < want) {
		if ((err
		        = sv_client_scale(c, "flood", 0, RPC_TIMEOUT_MS, NULL))
		    != SV_OK) {
			snprintf(res->why, sizeof(res->why),
			    "scale(flood, 0): %s: %s", sv_strerror(err),
			    sv_client_error_message(c));
			return -1;
		}
		if (++calls % 256 == 0 && (g_interrupted || now_ns() >= end))
			break;
	}
	if (seq_now(d->evsock, c, &s1, res->why, sizeof(res->why)) != 0)
		return -1;
	res->last_seq = s1;
	if (!attached)
		return 0;
	res->flooded += s1 - s0;
	res->flood_ns += now_ns() - t0;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Run                                                                */
/* ------------------------------------------------------------------ */

/* events_blocks runs the alternating blocks on a started daemon. */
static int
events_blocks(const struct opts *o, const struct daemon *d, sv_client *c,
    struct events_result *res)
{
	char   *why    = res->why;
	size_t  whylen = sizeof(res->why);
	int64_t budget = (o->quick ? 10 : 36) * NS_PER_SEC;
	int64_t bound  = now_ns()
	    + (o->quick ? EVENTS_QUICK_BOUND_S : EVENTS_BOUND_S) * NS_PER_SEC;
	struct sv_bench_stamp st;
	long                  b;
	pid_t                 pid;
	int                   rv, slow = -1, ret = -1;

	if ((rv = rx_stamp(&st, now_ns() + 10 * NS_PER_SEC)) != 1) {
		snprintf(why, whylen, "no stamp from the victim");
		return -1;
	}
	pid = st.pid;
	if (kill_block(&pid, 3, bound, &res->cut, NULL, NULL, why, whylen)
	    != 0) /* warm-up */
		return -1;
	res->rss_before_kb = proc_status_kb(g_daemon_pid, "VmRSS");
	res->unread_min    = -1;
	for (b = 0; b < res->blocks && !res->cut; b++) {
		long unread;

		note("7/7 block %ld/%ld: %ld kills, no slow subscriber", b + 1,
		    res->blocks, res->kills);
		/* The same recent history as the other side: a short flood. */
		if (flood(d, c, EVENTS_PREFLOOD, budget / res->blocks, false,
		        res)
		    != 0)
			goto out;
		if (kill_block(&pid, res->kills, bound, &res->cut,
		        res->without, &res->n_without, why, whylen)
		    != 0)
			goto out;
		if ((slow = evsub_raw_attach(
		         d->evsock, now_ns() + 5 * NS_PER_SEC, why, whylen))
		    < 0)
			goto out;
		note("7/7 block %ld/%ld: flooding %llu events into the stalled"
		     " subscriber",
		    b + 1, res->blocks,
		    (unsigned long long) (res->target / res->blocks));
		if (flood(d, c, res->target / (uint64_t) res->blocks,
		        budget / res->blocks, true, res)
		    != 0)
			goto out;
		unread = slow_unread(slow);
		if (res->unread_min < 0 || unread < res->unread_min)
			res->unread_min = unread;
		res->slow_dropped += slow_connected(slow) ? 0 : 1;
		note("7/7 block %ld/%ld: %ld kills, slow subscriber attached",
		    b + 1, res->blocks, res->kills);
		if (kill_block(&pid, res->kills, bound, &res->cut, res->with,
		        &res->n_with, why, whylen)
		    != 0)
			goto out;
		res->rss_after_kb = proc_status_kb(g_daemon_pid, "VmRSS");
		close(slow);
		slow = -1;
	}
	ret = 0;
	if (res->n_without == 0 || res->n_with == 0) {
		snprintf(why, whylen,
		    "time bound reached before both sides "
		    "had a kill measured");
		ret = -1;
	}
out:
	if (slow >= 0)
		close(slow);
	return ret;
}

/* events_run runs scenario 7; see scenarios.h. */
int
events_run(const struct opts *o, struct events_result *res)
{
	const char      *vargv[]  = {SV_BENCH_STAMP_PATH, NULL};
	const char      *fargv[]  = {SV_BENCH_STAMP_PATH, NULL};
	struct group_cfg groups[] = {
	    {.name             = "victim",
	        .argv          = vargv,
	        .count         = 1,
	        .min_uptime_ms = 0,
	        .purpose       = "sv-bench restart-latency worker",
	        .env           = g_sock_env},
	    {.name             = "flood",
	        .argv          = fargv,
	        .count         = 0,
	        .min_uptime_ms = -1,
	        .purpose       = "sv-bench event source (never started)"},
	};
	struct daemon d;
	sv_client    *c = NULL;
	sv_err        err;
	int           ret = -1;

	memset(res, 0, sizeof(*res));
	res->target = (uint64_t) o->events;
	res->kills  = o->quick ? 25 : 50;
	res->blocks = o->quick ? 2 : EVENTS_MAX_BLOCKS;
	if (g_interrupted)
		return -1;
	rx_flush();
	if (daemon_start_groups(
	        &d, "d7", groups, 2, res->why, sizeof(res->why))
	    != 0)
		goto done;
	if (daemon_wait_ready(&d, 10000, res->why, sizeof(res->why)) == 0) {
		if ((err = sv_client_open(&c, d.url, RPC_TIMEOUT_MS)) != SV_OK)
			snprintf(res->why, sizeof(res->why),
			    "sv_client_open: %s", sv_strerror(err));
		else
			ret = events_blocks(o, &d, c, res);
		sv_client_close(c);
	}
	daemon_stop(&d, 30000, NULL);
done:
	res->s_without = stats_of(res->without, (size_t) res->n_without);
	res->s_with    = stats_of(res->with, (size_t) res->n_with);
	res->ok        = ret == 0;
	return ret;
}

/* ------------------------------------------------------------------ */
/* Rows and details                                                   */
/* ------------------------------------------------------------------ */

/* events_rows writes the latency row (the target) and the events row. */
int
events_rows(const struct events_result *res, struct row *rows)
{
	static char target_text[24];

	snprintf(target_text, sizeof(target_text), ">= %llu",
	    (unsigned long long) res->target);
	rows[0] = (struct row) {.name = "restart median, slow subscriber (ms)",
	    .made                     = res->ok,
	    .has_base                 = res->ok,
	    .base                     = res->s_without.med / 1e6,
	    .ours                     = res->s_with.med / 1e6,
	    .kind                     = T_RATIO_NEAR,
	    .target                   = 0.10};
	rows[1] = (struct row) {.name = "events published, subscriber stalled",
	    .made                     = res->ok,
	    .kind                     = T_CHECK,
	    .ttext                    = target_text,
	    .check_ok = res->flooded >= res->target && res->unread_min > 0};
	snprintf(rows[1].ours_text, sizeof(rows[1].ours_text), "%llu",
	    (unsigned long long) res->flooded);
	return 2;
}

/* events_details prints the spread, the stall evidence and the memory. */
void
events_details(const struct events_result *res)
{
	if (res->n_without > 0 || res->n_with > 0)
		printf("events: %ld blocks x %ld kills per side; restart "
		       "median/p99 without %.3f/%.3f ms, with %.3f/%.3f ms\n",
		    res->blocks, res->kills, res->s_without.med / 1e6,
		    res->s_without.p99 / 1e6, res->s_with.med / 1e6,
		    res->s_with.p99 / 1e6);
	if (res->cut)
		printf("events: the scenario's time bound (%d s, %d s with "
		       "--quick) cut the blocks short\n",
		    EVENTS_BOUND_S, EVENTS_QUICK_BOUND_S);
	if (res->flood_ns > 0)
		printf("events: %llu events published in %.1f s of flooding "
		       "(%.0f/s), daemon seq at the end %llu; the stalled "
		       "subscriber left >= %ld bytes unread, %s; daemon VmRSS "
		       "%.1f -> %.1f MiB\n",
		    (unsigned long long) res->flooded, res->flood_ns / 1e9,
		    res->flooded * 1e9 / res->flood_ns,
		    (unsigned long long) res->last_seq, res->unread_min,
		    res->slow_dropped == 0
		        ? "and stayed connected"
		        : "but the daemon closed its connection",
		    res->rss_before_kb / 1024.0, res->rss_after_kb / 1024.0);
}
