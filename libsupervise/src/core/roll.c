/*
 * roll.c — drain and rolling restart (docs/supervision.md, "Drain and rolling
 * restart"): telling processes to drain, their deadlines and extensions, and
 * the roll that replaces a group's processes one seat at a time, keeping the
 * old generation serving until its successor is ready.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/supervision_internal.h"

/* ---- drain and rolling restart -------------------------------------------
 *
 * A drained process is STOPPING with `draining` set: svs_proc_stop leaves it
 * alone (its deadline stands, its reason stays), its timer is the drain
 * deadline (SIGKILL, never abandon), sv_core_extend does not move it (only
 * sv_core_drain_extend does, up to its cap). A drained current process has
 * had its ordinal released; when it is reaped its seat comes to rest, unless
 * an operator has held the ordinal again meanwhile (then the seat starts a
 * fresh process, as after a terminate followed by a scale-up).
 *
 * A roll moves a seat's running process to `old`, lets the seat spawn the
 * next generation (rolling set), and drains `old` once the new one is ready;
 * it takes the ordinals in order, as many at a time as its budgets allow
 * (Kubernetes' maxSurge and maxUnavailable): live processes of the group,
 * draining ones included, at most N + max_surge (N: its held seats); held
 * seats without a ready process at most max_unavailable, which lets a roll
 * drain a seat's process before its successor starts when no surge is
 * left. The budgets are checked whenever a process of the group exits or
 * becomes ready (svs_roll_step). A new generation that exits, cannot be
 * spawned or is not ready in time ends the roll: `old` becomes the seat's
 * process again (svs_roll_back) and nothing else is rolled.
 */

/* drain_row finds the report row of a draining process (NULL if none). */
static sv_drained *
drain_row(sv_core *c, const sv_cgroup *g, uint32_t ordinal, const sv_proc *p)
{
	sv_drain *d;

	if (!p->draining
	    || (d = sv_drains_find(&c->drains, p->drain_id)) == NULL) {
		return NULL;
	}
	return sv_drain_row(d, g->id, ordinal, p->generation);
}

/* svs_rows_reserve makes room for one more row in report drain_id (0 or
 * unknown: nothing to do), before an entry point changes anything. */
sv_err
svs_rows_reserve(sv_core *c, uint64_t drain_id)
{
	sv_drain *d;

	if (drain_id == 0
	    || (d = sv_drains_find(&c->drains, drain_id)) == NULL) {
		return SV_OK;
	}
	return sv_drain_reserve(d, 1);
}

/* svs_drain_exited records the reap of process p (about to be forgotten). */
void
svs_drain_exited(sv_core *c, const sv_cgroup *g, const sv_seat *s,
    const sv_proc *p, sv_exit x, uint64_t now_ms)
{
	sv_drained *w;

	if ((w = drain_row(c, g, s->ordinal, p)) == NULL) {
		return;
	}
	w->reaped = true;
	w->exited = x.exited;
	w->code   = x.exited ? x.code : 0;
	w->signo  = x.exited ? 0 : x.signo;
	w->time_to_exit_ms
	    = now_ms >= w->noticed_ms ? now_ms - w->noticed_ms : 0;
}

/* svs_proc_drain tells live process p of seat s to drain under report d: a
 * notice, the drain signal, the deadline timer. deadline_ms 0: the
 * group's. A process already draining stays in its first drain. */
void
svs_proc_drain(sv_core *c, sv_cgroup *g, sv_seat *s, sv_proc *p, sv_drain *d,
    uint64_t deadline_ms, sv_why why, uint64_t now_ms)
{
	sv_event   ev = {.kind = SV_EV_DRAINING, .why = why};
	sv_drained w  = {.group_id = g->id, .ordinal = s->ordinal};
	int        sig;

	if (p->draining
	    || (p->state != SV_PROC_STARTING && p->state != SV_PROC_RUNNING
	        && p->state != SV_PROC_STOPPING)) {
		return;
	}
	if (deadline_ms == 0) {
		deadline_ms = g->pol.drain_timeout_ms != 0
		    ? g->pol.drain_timeout_ms
		    : SV_CORE_DRAIN_TIMEOUT_MS;
	}
	snprintf(w.group, sizeof(w.group), "%s", g->name);
	w.generation  = p->generation;
	w.pid         = p->pid;
	w.noticed_ms  = now_ms;
	w.deadline_ms = now_ms + deadline_ms;
	w.cap_ms      = w.deadline_ms + g->pol.drain_extend_max_ms;
	/* The entry point reserved the row; past SV_DRAIN_MAX_ROWS it is
	 * drained all the same, and the report says it is truncated. */
	(void) sv_drain_add(d, &w);
	svs_proc_await(g, p, false);
	p->draining     = true;
	p->drain_id     = d->id;
	p->drain_cap_ms = w.cap_ms;
	p->why          = why;
	ev.drain_id     = d->id;
	ev.delay_ms     = deadline_ms;
	svs_emit(c, g, s, p, ev);
	sig = g->pol.drain_signal < 0 ? g->pol.stop_signal
	                              : g->pol.drain_signal;
	if (p->state != SV_PROC_STOPPING && sig != 0) {
		svs_signal_proc(c, g, s, p, sig);
		p->killed = sig == SIGKILL;
	}
	p->state = SV_PROC_STOPPING;
	svs_proc_arm(c, g, s, p, w.deadline_ms);
}

/* svs_drain_deadline: a draining process reached its deadline: SIGKILL. */
void
svs_drain_deadline(
    sv_core *c, sv_cgroup *g, sv_seat *s, sv_proc *p, sv_event ev)
{
	sv_event    esc = {.kind = SV_EV_ESCALATED};
	sv_drained *w   = drain_row(c, g, s->ordinal, p);

	ev.abandon = false;
	svs_emit(c, g, s, p, ev);
	if (w != NULL) {
		w->killed = true;
	}
	if (!p->killed) {
		svs_signal_proc(c, g, s, p, SIGKILL);
		p->killed = true;
		svs_emit(c, g, s, p, esc);
	}
}

/* svs_old_stop stops the live old generation of a roll overlap (the seat's
 * process will not come back to it). */
void
svs_old_stop(sv_core *c, sv_cgroup *g, sv_seat *s, sv_why why, uint64_t now_ms)
{
	sv_pstate old = svs_old_state(c, s);

	if (old == SV_PROC_STARTING || old == SV_PROC_RUNNING
	    || old == SV_PROC_STOPPING) {
		svs_proc_stop(c, g, s, svs_old(c, s), why, now_ms);
	}
}

/* seat_drain drains whatever lives on seat s (both processes of a roll
 * overlap) and releases its ordinal; a held seat without a process comes
 * to rest. Returns whether a process was (or will be, once spawned)
 * drained. */
static bool
seat_drain(sv_core *c, sv_cgroup *g, sv_seat *s, sv_drain *d,
    uint64_t deadline_ms, uint64_t now_ms)
{
	bool      any = false;
	sv_proc  *old = svs_old(c, s);
	sv_pstate os  = svs_old_state(c, s);

	if (s->rolling) {
		s->rolling = false;
		svs_roll_end(c, g, "drained");
	}
	if (os == SV_PROC_STARTING || os == SV_PROC_RUNNING
	    || (os == SV_PROC_STOPPING && !old->draining)) {
		svs_proc_drain(
		    c, g, s, old, d, deadline_ms, SV_WHY_DRAINED, now_ms);
		any = true;
	}
	if (s->state == SV_SP_LIVE) {
		any = true;
	}
	svs_seat_fire(c, g, s, SEV_DRAIN,
	    &(svs_seat_arg) {
	        .drain = d, .deadline_ms = deadline_ms, .now_ms = now_ms});
	return any;
}

sv_err
sv_core_drain(sv_core *c, sv_drain_scope scope, uint32_t id, uint32_t ordinal,
    uint64_t deadline_ms, uint64_t now_ms, uint64_t *drain_idp)
{
	sv_cgroup *g = NULL;
	sv_drain  *d = NULL;
	sv_err     err;

	if (c->shutting_down) {
		return SV_EBUSY;
	}
	if (scope != SV_DRAIN_ALL) {
		if ((err = svs_group_for_request(c, id, &g)) != SV_OK) {
			return err;
		}
		if (scope == SV_DRAIN_WORKER
		    && (ordinal >= g->nseats
		        || (g->seats[ordinal].cur.state != SV_PROC_SPAWNING
		            && g->seats[ordinal].cur.state != SV_PROC_STARTING
		            && g->seats[ordinal].cur.state != SV_PROC_RUNNING
		            && g->seats[ordinal].cur.state
		                != SV_PROC_STOPPING))) {
			return SV_ENOTFOUND;
		}
	}
	/* Room first: the effects, then the report with a row for every
	 * live process in scope (those on their way reserve theirs when
	 * spawned). */
	if (svs_fx_reserve(c, svs_fx_bound(c, g, 0)) != SV_OK) {
		return SV_ENOMEM;
	}
	if ((err = sv_drains_open(
	         &c->drains, false, g != NULL ? g->live : sv_core_live(c), &d))
	    != SV_OK) {
		return err;
	}
	for (size_t gi = 0; gi < c->ngroups; gi++) {
		sv_cgroup *cg = c->groups[gi];
		if ((g != NULL && cg != g) || cg->deleting) {
			continue;
		}
		for (uint32_t o = 0; o < cg->nseats; o++) {
			if (scope != SV_DRAIN_WORKER || o == ordinal) {
				(void) seat_drain(c, cg, &cg->seats[o], d,
				    deadline_ms, now_ms);
			}
		}
	}
	svs_plan_step(c, now_ms);
	*drain_idp = d->id;
	return SV_OK;
}

/* draining_proc finds the live process named by key (svs_live_proc) when
 * it is draining; NULL otherwise. */
static sv_proc *
draining_proc(const sv_core *c, sv_wkey key, sv_cgroup **gp, sv_seat **sp)
{
	sv_proc *p = svs_live_proc((sv_core *) c, key, gp, sp);

	return p != NULL && p->draining ? p : NULL;
}

sv_err
sv_core_drain_extend(sv_core *c, sv_wkey key, uint64_t more_ms,
    uint64_t now_ms, uint64_t *deadlinep)
{
	sv_cgroup  *g = NULL;
	sv_seat    *s = NULL;
	sv_proc    *p = draining_proc(c, key, &g, &s);
	sv_drained *w;
	uint64_t    due;

	if (p == NULL) {
		return SV_ENOTFOUND;
	}
	if (svs_fx_reserve(c, svs_fx_bound_seat()) != SV_OK) {
		return SV_ENOMEM;
	}
	p   = draining_proc(c, key, &g, &s); /* the reservation may move it */
	due = more_ms > UINT64_MAX - now_ms ? UINT64_MAX : now_ms + more_ms;
	if (due > p->drain_cap_ms) {
		due = p->drain_cap_ms;
	}
	if (p->guard != 0 && due > p->due_ms) {
		svs_proc_arm(c, g, s, p, due);
		if ((w = drain_row(c, g, s->ordinal, p)) != NULL) {
			w->deadline_ms = due;
		}
	}
	if (deadlinep != NULL) {
		*deadlinep = p->due_ms;
	}
	return SV_OK;
}

sv_err
sv_core_drain_ack(sv_core *c, sv_wkey key, uint64_t served)
{
	sv_cgroup  *g = NULL;
	sv_seat    *s = NULL;
	sv_proc    *p = draining_proc(c, key, &g, &s);
	sv_drained *w;

	if (p == NULL) {
		return SV_ENOTFOUND;
	}
	if ((w = drain_row(c, g, s->ordinal, p)) != NULL) {
		w->acked  = true;
		w->served = served;
	}
	return SV_OK;
}

bool
sv_core_proc_deadline(const sv_core *c, sv_wkey key, uint64_t *deadlinep)
{
	sv_cgroup *g = NULL;
	sv_seat   *s = NULL;
	sv_proc   *p = draining_proc(c, key, &g, &s);

	if (p == NULL) {
		return false;
	}
	*deadlinep = p->due_ms;
	return true;
}

const sv_drain *
sv_core_drain_report(const sv_core *c, uint64_t drain_id)
{
	return sv_drains_find(&c->drains, drain_id);
}

/* svs_roll_end ends group g's roll (reason: why it stopped early, NULL: it is
 * complete). */
void
svs_roll_end(sv_core *c, sv_cgroup *g, const char *reason)
{
	sv_event  ev = {.kind = SV_EV_ROLL_DONE};
	sv_drain *d;

	if (!g->roll.active) {
		return;
	}
	g->roll.active = false;
	ev.drain_id    = g->roll.drain_id;
	if ((d = sv_drains_find(&c->drains, g->roll.drain_id)) != NULL) {
		d->roll_active = false;
		if (reason != NULL) {
			d->roll_failed = true;
			snprintf(d->reason, sizeof(d->reason), "%s", reason);
			ev.reason = d->reason;
		}
	}
	svs_emit(c, g, NULL, NULL, ev);
}

/* roll_counts counts, for group g's roll budgets, the processes that live
 * (spawned, or on their way: a seat pending or in backoff counts before
 * its process is spawned; abandoned ones do not, the supervisor no longer
 * answers for them), the seats that are held (N) and the held seats that no
 * ready, undrained process serves. */
static void
roll_counts(const sv_core *c, const sv_cgroup *g, uint32_t *livep,
    uint32_t *wantedp, uint32_t *unavailablep)
{
	uint32_t live = 0, wanted = 0, unavailable = 0;

	for (uint32_t o = 0; o < g->nseats; o++) {
		const sv_seat *s        = &g->seats[o];
		bool           cur_live = s->cur.state == SV_PROC_SPAWNING
		    || s->cur.state == SV_PROC_STARTING
		    || s->cur.state == SV_PROC_RUNNING
		    || s->cur.state == SV_PROC_STOPPING;
		const sv_proc *old      = svs_old(c, s);
		bool           old_live = old != NULL
		    && (old->state == SV_PROC_STARTING
		        || old->state == SV_PROC_RUNNING
		        || old->state == SV_PROC_STOPPING);
		bool serves = (s->cur.state == SV_PROC_RUNNING && s->cur.ready
		                  && !s->cur.draining)
		    || (old != NULL && old->state == SV_PROC_RUNNING
		        && old->ready && !old->draining);

		live += (cur_live || s->state == SV_SP_PENDING
		            || s->state == SV_SP_BACKOFF)
		    ? 1u
		    : 0u;
		live += old_live ? 1u : 0u;
		if (s->wanted) {
			wanted++;
			unavailable += serves ? 0u : 1u;
		}
	}
	*livep        = live;
	*wantedp      = wanted;
	*unavailablep = unavailable;
}

/* roll_candidate tells whether seat s has a process the roll replaces:
 * held, running, ready and not draining. A seat waiting or starting gets
 * the new generation anyway. */
static bool
roll_candidate(const sv_seat *s)
{
	return s->wanted && s->cur.state == SV_PROC_RUNNING && s->cur.ready
	    && !s->cur.draining;
}

/* roll_busy tells whether a seat of g is in a roll overlap. */
static bool
roll_busy(const sv_cgroup *g)
{
	for (uint32_t o = 0; o < g->nseats; o++) {
		if (g->seats[o].rolling) {
			return true;
		}
	}
	return false;
}

/* roll_settled tells whether every seat the roll drained first (its row in
 * report d) has a ready successor, or no longer wants one. */
static bool
roll_settled(sv_core *c, sv_cgroup *g, const sv_drain *d)
{
	for (size_t i = 0; d != NULL && i < d->n; i++) {
		const sv_drained *w = &d->rows[i];
		const sv_seat    *s;
		if (w->group_id != g->id || w->ordinal >= g->nseats) {
			continue;
		}
		s = &g->seats[w->ordinal];
		if (s->wanted && svs_seat_can_start(c, g, s)
		    && !(s->cur.state == SV_PROC_RUNNING && s->cur.ready
		        && s->cur.generation > w->generation)) {
			return false;
		}
	}
	return true;
}

/* svs_roll_step replaces as many of the ordinals left as group g's budgets
 * allow, in order: a seat's next generation starts beside the old one
 * (overlap) while live processes stay within N + max_surge; else, while
 * the held seats without a ready process stay within max_unavailable, the
 * old one is drained first and the seat starts its next generation once
 * it is reaped. Otherwise the roll waits for an exit or a readiness to
 * call it again. Ends the roll when no ordinal is left, no overlap remains
 * and every seat drained first has a ready successor. */
void
svs_roll_step(sv_core *c, sv_cgroup *g, uint64_t now_ms)
{
	sv_drain *d;
	uint32_t  live, wanted, unavailable;

	if (!g->roll.active) {
		return;
	}
	d = sv_drains_find(&c->drains, g->roll.drain_id);
	roll_counts(c, g, &live, &wanted, &unavailable);
	for (uint32_t o = g->roll.next; o < g->nseats; o++) {
		sv_seat *s = &g->seats[o];
		if (!roll_candidate(s)) {
			g->roll.next = o + 1;
			continue;
		}
		if (s->old != 0) {
			svs_roll_end(c, g,
			    "an ordinal still has an old process (abandoned "
			    "or draining)");
			return;
		}
		if ((uint64_t) live + 1
		    <= (uint64_t) wanted + g->roll.max_surge) {
			g->roll.next = o + 1;
			svs_seat_fire(c, g, s, SEV_OVERLAP, NULL);
			live++;
			continue;
		}
		if (d != NULL && unavailable < g->roll.max_unavailable) {
			/* Drain first: the seat keeps its ordinal and starts
			 * its next generation when this one is reaped
			 * (svs_seat_after_exit, SV_WHY_ROLL). */
			g->roll.next = o + 1;
			svs_proc_drain(
			    c, g, s, &s->cur, d, 0, SV_WHY_ROLL, now_ms);
			unavailable++;
			continue;
		}
		return; /* over budget: an exit or a readiness calls again */
	}
	g->roll.next = g->max_count;
	if (!roll_busy(g) && roll_settled(c, g, d)) {
		svs_roll_end(c, g, NULL);
	}
}

/* svs_roll_advance: the new generation of rolling seat s is ready: the old
 * one is drained, the roll goes on with the ordinals left. */
void
svs_roll_advance(sv_core *c, sv_cgroup *g, sv_seat *s, uint64_t now_ms)
{
	sv_drain *d   = sv_drains_find(&c->drains, g->roll.drain_id);
	sv_proc  *old = svs_old(c, s);

	s->rolling = false;
	if (old != NULL
	    && (old->state == SV_PROC_RUNNING
	        || old->state == SV_PROC_STARTING)) {
		if (d != NULL && g->roll.active) {
			svs_proc_drain(
			    c, g, s, old, d, 0, SV_WHY_ROLL, now_ms);
		} else {
			svs_proc_stop(c, g, s, old, SV_WHY_ROLL, now_ms);
		}
	}
	svs_roll_step(c, g, now_ms);
}

/* svs_roll_back: the new generation of rolling seat s is gone before it was
 * ready: the old process becomes the seat's again and the roll stops.
 * Returns false when there is no old process left (the seat then goes on
 * as after any exit). */
bool
svs_roll_back(sv_core *c, sv_cgroup *g, sv_seat *s, uint64_t now_ms)
{
	s->rolling = false;
	svs_roll_end(c, g, "a new generation exited or could not start");
	if (s->old == 0 || svs_old_state(c, s) == SV_PROC_ABANDONED) {
		return false;
	}
	svs_seat_fire(
	    c, g, s, SEV_ROLLBACK, &(svs_seat_arg) {.now_ms = now_ms});
	return true;
}

sv_err
sv_core_roll(sv_core *c, uint32_t id, uint64_t ready_timeout_ms,
    uint64_t now_ms, uint64_t *drain_idp)
{
	return sv_core_roll_budget(c, id, ready_timeout_ms,
	    SV_CORE_ROLL_MAX_SURGE, SV_CORE_ROLL_MAX_UNAVAILABLE, now_ms,
	    drain_idp);
}

sv_err
sv_core_roll_budget(sv_core *c, uint32_t id, uint64_t ready_timeout_ms,
    uint32_t max_surge, uint32_t max_unavailable, uint64_t now_ms,
    uint64_t *drain_idp)
{
	sv_cgroup *g = NULL;
	sv_drain  *d = NULL;
	sv_err     err;

	if ((err = svs_group_for_request(c, id, &g)) != SV_OK) {
		return err;
	}
	if (max_surge == 0 && max_unavailable == 0) {
		return SV_EINVAL; /* the roll could never replace anything */
	}
	if (g->failed || g->roll.active) {
		return SV_EBUSY;
	}
	/* Room first: the effects of every seat, and a row for each ordinal's
	 * old generation (each is drained at most once per roll). */
	if (svs_fx_reserve(c, svs_fx_bound(c, g, 0)) != SV_OK) {
		return SV_ENOMEM;
	}
	if ((err = sv_drains_open(&c->drains, true, g->max_count, &d))
	    != SV_OK) {
		return err;
	}
	if (ready_timeout_ms == 0) {
		ready_timeout_ms = g->pol.start_timeout_ms != 0
		    ? g->pol.start_timeout_ms
		    : SV_CORE_ROLL_READY_MS;
	}
	d->max_surge             = max_surge;
	d->max_unavailable       = max_unavailable;
	g->roll.active           = true;
	g->roll.drain_id         = d->id;
	g->roll.next             = 0;
	g->roll.ready_timeout_ms = ready_timeout_ms;
	g->roll.max_surge        = max_surge;
	g->roll.max_unavailable  = max_unavailable;
	svs_roll_step(c, g, now_ms);
	*drain_idp = d->id;
	return SV_OK;
}
