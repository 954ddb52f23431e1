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
 * then the next ordinal. A new generation that exits, cannot be spawned or
 * is not ready in time ends the roll: `old` becomes the seat's process again
 * (svs_roll_back) and nothing else is rolled.
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
	if (s->old.state == SV_PROC_STARTING || s->old.state == SV_PROC_RUNNING
	    || s->old.state == SV_PROC_STOPPING) {
		svs_proc_stop(c, g, s, &s->old, why, now_ms);
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
	bool any = false;

	if (s->rolling) {
		s->rolling = false;
		svs_roll_end(c, g, "drained");
	}
	if (s->old.state == SV_PROC_STARTING || s->old.state == SV_PROC_RUNNING
	    || (s->old.state == SV_PROC_STOPPING && !s->old.draining)) {
		svs_proc_drain(
		    c, g, s, &s->old, d, deadline_ms, SV_WHY_DRAINED, now_ms);
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

sv_err
sv_core_drain_extend(sv_core *c, sv_wkey key, uint64_t more_ms,
    uint64_t now_ms, uint64_t *deadlinep)
{
	sv_cgroup  *g = NULL;
	sv_seat    *s = NULL;
	sv_proc    *p = svs_live_proc(c, key, &g, &s);
	sv_drained *w;
	uint64_t    due;

	if (p == NULL || !p->draining) {
		return SV_ENOTFOUND;
	}
	if (svs_fx_reserve(c, svs_fx_bound_seat()) != SV_OK) {
		return SV_ENOMEM;
	}
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
	sv_proc    *p = svs_live_proc(c, key, &g, &s);
	sv_drained *w;

	if (p == NULL || !p->draining) {
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
	sv_proc   *p = svs_live_proc((sv_core *) c, key, &g, &s);

	if (p == NULL || !p->draining) {
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

/* svs_roll_step starts the overlap of the next ordinal to roll, or ends the
 * roll when none is left. Waits while a seat is rolling. */
void
svs_roll_step(sv_core *c, sv_cgroup *g, uint64_t now_ms)
{
	(void) now_ms;
	if (!g->roll.active) {
		return;
	}
	for (uint32_t o = g->roll.next; o < g->nseats; o++) {
		sv_seat *s = &g->seats[o];
		if (s->rolling) {
			return;
		}
		/* Only a running process is replaced; a seat waiting or
		 * starting gets the new generation anyway. */
		if (!s->wanted || s->cur.state != SV_PROC_RUNNING
		    || !s->cur.ready || s->cur.draining) {
			continue;
		}
		if (s->old.state != SV_PROC_NONE) {
			svs_roll_end(c, g,
			    "an ordinal still has an old process (abandoned "
			    "or draining)");
			return;
		}
		g->roll.next = o;
		svs_seat_fire(c, g, s, SEV_OVERLAP, NULL);
		return;
	}
	svs_roll_end(c, g, NULL);
}

/* svs_roll_advance: the new generation of rolling seat s is ready: the old
 * one is drained, the roll goes on with the next ordinal. */
void
svs_roll_advance(sv_core *c, sv_cgroup *g, sv_seat *s, uint64_t now_ms)
{
	sv_drain *d = sv_drains_find(&c->drains, g->roll.drain_id);

	s->rolling = false;
	if (s->old.state == SV_PROC_RUNNING
	    || s->old.state == SV_PROC_STARTING) {
		if (d != NULL && g->roll.active) {
			svs_proc_drain(
			    c, g, s, &s->old, d, 0, SV_WHY_ROLL, now_ms);
		} else {
			svs_proc_stop(c, g, s, &s->old, SV_WHY_ROLL, now_ms);
		}
	}
	g->roll.next = s->ordinal + 1;
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
	if (s->old.state == SV_PROC_NONE
	    || s->old.state == SV_PROC_ABANDONED) {
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
	sv_cgroup *g = NULL;
	sv_drain  *d = NULL;
	sv_err     err;

	if ((err = svs_group_for_request(c, id, &g)) != SV_OK) {
		return err;
	}
	if (g->failed || g->roll.active) {
		return SV_EBUSY;
	}
	/* Room first; each old generation's row is reserved by the entry
	 * point that drains it (readiness or spawn of its successor). */
	if (svs_fx_reserve(c, svs_fx_bound_seat()) != SV_OK) {
		return SV_ENOMEM;
	}
	if ((err = sv_drains_open(&c->drains, true, 0, &d)) != SV_OK) {
		return err;
	}
	if (ready_timeout_ms == 0) {
		ready_timeout_ms = g->pol.start_timeout_ms != 0
		    ? g->pol.start_timeout_ms
		    : SV_CORE_ROLL_READY_MS;
	}
	g->roll.active           = true;
	g->roll.drain_id         = d->id;
	g->roll.next             = 0;
	g->roll.ready_timeout_ms = ready_timeout_ms;
	svs_roll_step(c, g, now_ms);
	*drain_idp = d->id;
	return SV_OK;
}
