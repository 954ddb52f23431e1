/*
 * bench_backoff.c — scenario 5 of sv-bench: backoff delays measured
 * against the configured ones. No target: each step prints the configured
 * delay, the measured median and their ratio.
 *
 * Design: a group of "sv-bench-stamp --exit" (exits with status 1 at once)
 * with min_uptime_ms 1000, backoff_initial_ms 50, backoff_factor 2,
 * backoff_max_ms 400, so the k-th consecutive fast failure should wait
 * min(50 * 2^(k-1), 400) ms: 50, 100, 200, 400, 400 for steps 1..5.
 * sv-bench subscribes to the event stream before any worker exists (the
 * group starts at count 0), then scales the group up one seat at a time,
 * 11 ms apart, so that the seats' restarts do not fall due in the same
 * instant (the delays are multiples of 50 ms) and queue behind each other
 * in the daemon. Per seat it pairs each EXITED event with the
 * RESTART_SCHEDULED that follows (its attempt is the step, its delay_ms
 * what the daemon decided) and the next STARTED. Measured delay = STARTED
 * - EXITED, both read with CLOCK_MONOTONIC when sv-bench received them;
 * the same from the events' own time_unix_ms (millisecond resolution) is
 * printed as a cross-check. It therefore includes the daemon's timer
 * slack and its spawn call, not the new program's exec. A run ends when
 * every seat has its step 5; a fresh daemon per run starts the seats'
 * histories at zero. Sequence gaps (events the subscriber missed) are
 * counted and printed.
 *
 * File layout: configuration; one run; run; rows and details.
 */
#include "scenarios.h"

#include "evsub.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <supervise/client.h>

/* ------------------------------------------------------------------ */
/* Configuration                                                      */
/* ------------------------------------------------------------------ */

#define BO_INITIAL_MS 50
#define BO_FACTOR     2.0
#define BO_MAX_MS     400
#define BO_STAGGER_MS 11
#define BO_MAX_SEATS  8

/* What sv-bench knows of one seat during a run. */
struct bo_seat {
	bool     have_exit; /* an EXITED not yet followed by STARTED */
	int64_t  exit_rx_ns;
	uint64_t exit_ms;
	uint32_t pending; /* step of the scheduled restart, 0 if none */
	unsigned done; /* bit k-1: step k measured */
};

/* bo_configured is the configured delay of step k (1-based), in ms. */
static long
bo_configured(int k)
{
	double d = BO_INITIAL_MS;
	int    i;

	for (i = 1; i < k; i++)
		d *= BO_FACTOR;
	return d > BO_MAX_MS ? BO_MAX_MS : (long) d;
}

/* ------------------------------------------------------------------ */
/* One run                                                            */
/* ------------------------------------------------------------------ */

/*
 * bo_event applies one event of group "backoff" to the seats, storing a
 * sample when it completes one. Returns true when every seat is done.
 */
static bool
bo_event(struct backoff_result *res, struct bo_seat *seats, long nseats,
    const struct bench_event *ev)
{
	const unsigned  all = (1u << BACKOFF_STEPS) - 1;
	struct bo_seat *s;
	long            i;
	int             k;

	if (strcmp(ev->group, "backoff") != 0 || ev->ordinal >= nseats)
		return false;
	s = &seats[ev->ordinal];
	switch (ev->kind) {
	case BEV_EXITED:
		s->have_exit  = true;
		s->exit_rx_ns = ev->rx_ns;
		s->exit_ms    = ev->time_unix_ms;
		s->pending    = 0;
		break;
	case BEV_RESTART_SCHEDULED:
		if (!s->have_exit)
			break;
		s->pending = ev->attempt;
		k          = (int) ev->attempt;
		if (k >= 1 && k <= BACKOFF_STEPS) {
			res->sched_ms[k - 1] = (long) ev->delay_ms;
			if ((long) ev->delay_ms != res->cfg_ms[k - 1])
				res->sched_mismatches++;
		}
		break;
	case BEV_STARTED:
		k = (int) s->pending;
		if (s->have_exit && k >= 1 && k <= BACKOFF_STEPS
		    && res->n[k - 1] < BACKOFF_MAX_SAMPLES) {
			res->rx_ns[k - 1][res->n[k - 1]]
			    = ev->rx_ns - s->exit_rx_ns;
			res->ev_ms[k - 1][res->n[k - 1]]
			    = (int64_t) (ev->time_unix_ms - s->exit_ms);
			res->n[k - 1]++;
			s->done |= 1u << (k - 1);
		}
		s->have_exit = false;
		s->pending   = 0;
		break;
	case BEV_OTHER:
		break;
	}
	for (i = 0; i < nseats; i++)
		if ((seats[i].done & all) != all)
			return false;
	return true;
}

/*
 * bo_one_run starts daemon name, subscribes, scales the group up one seat
 * every BO_STAGGER_MS and collects samples until every seat has all
 * steps. Returns 0, or -1 with res->why set.
 */
static int
bo_one_run(const char *name, long nseats, struct backoff_result *res)
{
	const char        *argv[] = {SV_BENCH_STAMP_PATH, "--exit", NULL};
	struct group_cfg   g      = {.name = "backoff",
	           .argv                   = argv,
	           .count                  = 0,
	           .min_uptime_ms          = 1000,
	           .purpose                = "sv-bench backoff worker",
	           .backoff_initial_ms     = BO_INITIAL_MS,
	           .backoff_factor         = BO_FACTOR,
	           .backoff_max_ms         = BO_MAX_MS};
	struct bo_seat     seats[BO_MAX_SEATS];
	char              *why    = res->why;
	size_t             whylen = sizeof(res->why);
	struct bench_event ev;
	struct evsub       sub;
	struct daemon      d;
	sv_client         *c       = NULL;
	bool               subbed  = false;
	long               scaled  = 0;
	uint64_t           lastseq = 0;
	int64_t            next, deadline;
	sv_err             err;
	int                rv, ret = -1;

	memset(seats, 0, sizeof(seats));
	if (daemon_start(&d, name, &g, why, whylen) != 0)
		return -1;
	if (daemon_wait_ready(&d, 10000, why, whylen) != 0)
		goto out;
	if (evsub_open(&sub, d.evurl, now_ns() + 10 * NS_PER_SEC, why, whylen)
	    != 0)
		goto out;
	subbed = true;
	if ((err = sv_client_open(&c, d.url, RPC_TIMEOUT_MS)) != SV_OK) {
		snprintf(why, whylen, "sv_client_open: %s", sv_strerror(err));
		goto out;
	}
	next     = now_ns();
	deadline = next + 20 * NS_PER_SEC;
	for (;;) {
		if (scaled < nseats && now_ns() >= next) {
			err = sv_client_scale(c, "backoff",
			    (uint32_t) (scaled + 1), RPC_TIMEOUT_MS, NULL);
			if (err != SV_OK) {
				snprintf(why, whylen,
				    "scale(backoff, %ld): %s: %s", scaled + 1,
				    sv_strerror(err),
				    sv_client_error_message(c));
				goto out;
			}
			scaled++;
			next += BO_STAGGER_MS * NS_PER_MS;
		}
		rv = evsub_recv(&sub, &ev,
		    scaled < nseats && next < deadline ? next : deadline);
		if (rv < 0) {
			snprintf(why, whylen, "event stream: receive failed");
			goto out;
		}
		if (rv == 1) {
			if (lastseq != 0 && ev.seq > lastseq + 1)
				res->seq_gaps += ev.seq - lastseq - 1;
			lastseq = ev.seq;
			if (bo_event(res, seats, nseats, &ev))
				break;
			continue;
		}
		if (now_ns() >= deadline) {
			snprintf(why, whylen,
			    "not every seat reached step %d within 20 s",
			    BACKOFF_STEPS);
			goto out;
		}
		if (!daemon_alive()) {
			snprintf(why, whylen, "supervised exited");
			goto out;
		}
	}
	ret = 0;
out:
	sv_client_close(c);
	daemon_stop(&d, 10000, NULL);
	/* After the daemon: no traffic may race the close (see evsub.h). */
	if (subbed)
		evsub_close(&sub);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Run                                                                */
/* ------------------------------------------------------------------ */

/* backoff_run runs scenario 5; see scenarios.h. */
int
backoff_run(const struct opts *o, struct backoff_result *res)
{
	char name[16];
	long r;
	int  k, ret = 0;

	memset(res, 0, sizeof(*res));
	res->seats = 4;
	for (k = 0; k < BACKOFF_STEPS; k++) {
		res->cfg_ms[k]   = bo_configured(k + 1);
		res->sched_ms[k] = -1;
	}
	for (r = 0; r < (o->quick ? 1 : 3) && ret == 0; r++) {
		if (g_interrupted) {
			snprintf(res->why, sizeof(res->why), "interrupted");
			ret = -1;
			break;
		}
		note("5/7 backoff run %ld: %ld seats, 50 ms x 2 up to 400 ms",
		    r + 1, res->seats);
		snprintf(name, sizeof(name), "d5r%ld", r + 1);
		ret = bo_one_run(name, res->seats, res);
		if (ret == 0)
			res->runs = r + 1;
	}
	for (k = 0; k < BACKOFF_STEPS; k++) {
		res->rx[k] = stats_of(res->rx_ns[k], (size_t) res->n[k]);
		res->ev[k] = stats_of(res->ev_ms[k], (size_t) res->n[k]);
	}
	res->ok = ret == 0;
	return ret;
}

/* ------------------------------------------------------------------ */
/* Rows and details                                                   */
/* ------------------------------------------------------------------ */

/* Row names, one per step (the table keeps pointers to them). */
static const char *const bo_names[BACKOFF_STEPS] = {
    "backoff step 1 delay median (ms)",
    "backoff step 2 delay median (ms)",
    "backoff step 3 delay median (ms)",
    "backoff step 4 delay median (ms)",
    "backoff step 5 delay median (ms)",
};

/* backoff_rows writes one info row per step: configured vs measured. */
int
backoff_rows(const struct backoff_result *res, struct row *rows)
{
	int k;

	for (k = 0; k < BACKOFF_STEPS; k++)
		rows[k] = (struct row) {.name = bo_names[k],
		    .made                     = res->ok && res->n[k] > 0,
		    .has_base                 = true,
		    .base                     = (double) res->cfg_ms[k],
		    .ours                     = res->rx[k].med / 1e6,
		    .kind                     = T_INFO};
	return BACKOFF_STEPS;
}

/* backoff_details prints, per step, the spread and the cross-checks. */
void
backoff_details(const struct backoff_result *res)
{
	int k;

	if (res->runs == 0)
		return;
	printf("backoff: %ld run(s) x %ld seats; delay = EXITED -> next "
	       "STARTED on the event stream (sv-bench's clock on receipt); "
	       "%llu sequence gap(s); %ld scheduled delay(s) differing from "
	       "the configuration\n",
	    res->runs, res->seats, (unsigned long long) res->seq_gaps,
	    res->sched_mismatches);
	for (k = 0; k < BACKOFF_STEPS; k++)
		printf("backoff step %d: configured %ld ms, scheduled %ld ms, "
		       "measured median %.2f ms (ratio %.3f, min %.2f, max "
		       "%.2f, n %zu); from event timestamps median %lld ms\n",
		    k + 1, res->cfg_ms[k], res->sched_ms[k],
		    res->rx[k].med / 1e6,
		    res->cfg_ms[k] > 0
		        ? res->rx[k].med / 1e6 / (double) res->cfg_ms[k]
		        : 0.0,
		    res->rx[k].min / 1e6, res->rx[k].max / 1e6, res->rx[k].n,
		    (long long) res->ev[k].med);
}
