/*
 * sup_durability.c — the supervisor's side of the journal's durability
 * (daemon/state.h; docs/durability.md, "When the state directory fails").
 *
 * Design: daemon/state.c decides when durability is lost (an append
 * failed) and when it is back (a snapshot succeeded); this file carries out
 * what follows. Each change is logged, published as a `durability` event on
 * topic "d/" (docs/protocol.md, section 9) and kept for Hello
 * (HelloReply.durability). While it is lost, a loop timer retries a fresh
 * snapshot every SUP_DUR_RETRY_MS: one attempt per tick, never a busy loop,
 * and nothing else waits for it. Supervision goes on meanwhile: every
 * request is served as usual (what that costs after a crash is in
 * docs/durability.md).
 *
 * Layout: dur_reason, dur_publish, dur_changed, dur_timer_cb,
 * sup_durability_start, sup_durability_fill.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "sup_internal.h"

/* Time between two snapshot attempts while durability is lost. */
#define SUP_DUR_RETRY_MS 1000

/* dur_reason names d's errno ("ENOSPC", ...); "" when durable. Static
 * storage. */
static const char *
dur_reason(const svd_durability *d)
{
	const char *n;

	if (d->ok) {
		return "";
	}
	n = d->err != 0 ? strerrorname_np(d->err) : NULL;
	return n != NULL ? n : "EIO";
}

/* dur_publish sends where durability stands as a `durability` event on
 * topic "d/". */
static void
dur_publish(svd_sup *s)
{
	Supervise__V1__Event      e  = SUPERVISE__V1__EVENT__INIT;
	Supervise__V1__Durability du = SUPERVISE__V1__DURABILITY__INIT;
	struct timespec           ts;

	s->seq++;
	if (s->events == NULL) {
		return;
	}
	sup_durability_fill(s, &du);
	clock_gettime(CLOCK_REALTIME, &ts);
	e.seq           = s->seq;
	e.supervisor_id = s->id;
	e.time_unix_ms
	    = (uint64_t) ts.tv_sec * 1000u + (uint64_t) ts.tv_nsec / 1000000u;
	e.group      = "";
	e.kind_case  = SUPERVISE__V1__EVENT__KIND_DURABILITY;
	e.durability = &du;
	svd_events_publish_topic(s->events, &e, "d/");
}

/* dur_changed is state.c's watcher: log, publish, and keep the retry timer
 * armed while durability is lost. */
static void
dur_changed(void *arg, const svd_durability *d)
{
	svd_sup *s = arg;

	if (d->ok) {
		sv_loop_timer_stop(s->loop, &s->dur_timer);
		svd_log("journal: durability restored: a fresh snapshot of "
		        "the state is written; a supervisor restart finds "
		        "every worker again");
	} else {
		svd_log("journal: durability lost (%s: %s); supervision goes "
		        "on, a supervisor restart may not find the workers "
		        "started from now on; a fresh snapshot is tried every "
		        "%d ms",
		    dur_reason(d), d->detail, SUP_DUR_RETRY_MS);
		if (!sv_timer_armed(&s->dur_timer)
		    && sv_loop_timer_start(
		           s->loop, &s->dur_timer, SUP_DUR_RETRY_MS)
		        != SV_OK) {
			svd_log("journal: cannot arm the retry timer");
		}
	}
	dur_publish(s);
}

/* dur_timer_cb makes one snapshot attempt and re-arms while it fails. */
static void
dur_timer_cb(sv_loop *loop, sv_timer *t)
{
	svd_sup *s = t->arg;

	if (s->state == NULL || svd_state_retry(s->state)) {
		return;
	}
	if (sv_loop_timer_start(loop, t, SUP_DUR_RETRY_MS) != SV_OK) {
		svd_log("journal: cannot arm the retry timer");
	}
}

/* sup_durability_start watches the durability of s->state (called at
 * takeover, once s->state is set). */
void
sup_durability_start(svd_sup *s)
{
	sv_timer_init(&s->dur_timer, dur_timer_cb, s);
	if (s->state != NULL) {
		svd_state_watch(s->state, dur_changed, s);
	}
}

/* sup_durability_fill fills d (strings borrowed from s->state, valid until
 * its next change) with where durability stands. */
void
sup_durability_fill(svd_sup *s, Supervise__V1__Durability *d)
{
	const svd_durability *sd;

	if (s->state == NULL) {
		d->ok      = false;
		d->reason  = "ENOENT";
		d->message = "no journal";
		return;
	}
	sd          = svd_state_durability(s->state);
	d->ok       = sd->ok;
	d->reason   = (char *) dur_reason(sd);
	d->since_ms = sd->since_ms;
	d->message  = sd->ok ? (char *) "" : (char *) sd->detail;
}
