/*
 * lifecycle.c — a process's life from the core's side: handing out spawns
 * (sv_core_next_spawn), the outcome of a spawn, readiness, heartbeats,
 * start and stop timeouts and the timers that carry them.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/supervision_internal.h"

/* ---- spawning ------------------------------------------------------------
 */

bool
sv_core_next_spawn(sv_core *c, uint64_t now_ms, sv_spawn_ticket *t)
{
	(void) now_ms;
	if (c->shutting_down) {
		return false;
	}
	for (size_t gi = 0; gi < c->ngroups; gi++) {
		sv_cgroup *g = c->groups[gi];
		if (g->npending == 0 || g->failed || g->deleting
		    || (g->pol.sequential && g->unready > 0)) {
			continue;
		}
		for (uint32_t o = g->cursor; o < g->nseats; o++) {
			sv_seat *s = &g->seats[o];
			if (s->state != SV_SP_PENDING) {
				continue;
			}
			g->cursor = o + 1;
			svs_seat_fire(c, g, s, SEV_SPAWN, NULL);
			*t = svs_key_of(g, s, &s->cur);
			return true;
		}
		/* npending said otherwise: repair rather than spin. */
		g->npending = 0;
		g->cursor   = g->max_count;
	}
	return false;
}

/* spawn_seat finds the seat and SPAWNING process of a ticket. */
static sv_proc *
spawn_seat(sv_core *c, sv_spawn_ticket t, sv_cgroup **gp, sv_seat **sp)
{
	sv_cgroup *g = svs_group_find(c, t.group_id, NULL);
	sv_seat   *s;

	if (g == NULL || t.ordinal >= g->nseats) {
		return NULL;
	}
	s = &g->seats[t.ordinal];
	if (s->cur.state != SV_PROC_SPAWNING
	    || s->cur.generation != t.generation) {
		return NULL;
	}
	*gp = g;
	*sp = s;
	return &s->cur;
}

sv_err
sv_core_spawned(sv_core *c, sv_spawn_ticket t, int64_t pid, uint64_t now_ms)
{
	sv_cgroup *g  = NULL;
	sv_seat   *s  = NULL;
	sv_proc   *p  = spawn_seat(c, t, &g, &s);
	sv_event   ev = {.kind = SV_EV_STARTED};

	if (p == NULL) {
		return SV_OK;
	}
	/* Room first: its effects, a row in the drain that waited for it and
	 * one in its group's roll report. */
	if (svs_fx_reserve(c, svs_fx_bound(c, g, 0)) != SV_OK
	    || svs_rows_reserve(c, s->drain_on_spawn) != SV_OK
	    || (g->roll.active && svs_rows_reserve(c, g->roll.drain_id))
	        != SV_OK) {
		return SV_ENOMEM;
	}
	p->pid        = pid;
	p->started_ms = now_ms;
	svs_emit(c, g, s, p, ev);
	if (g->pol.need_ready) {
		p->state = SV_PROC_STARTING;
		p->ready = false;
		svs_proc_await(g, p, true);
		if (g->pol.start_timeout_ms > 0) {
			svs_proc_arm(
			    c, g, s, p, now_ms + g->pol.start_timeout_ms);
		}
	} else {
		p->state = SV_PROC_RUNNING;
		p->ready = true;
		if (g->pol.watchdog_ms > 0) {
			svs_proc_arm(c, g, s, p, now_ms + g->pol.watchdog_ms);
		}
	}
	/* A drain that came while the spawn was on its way. */
	if (s->drain_on_spawn != 0) {
		sv_drain *d  = sv_drains_find(&c->drains, s->drain_on_spawn);
		uint64_t  dl = s->drain_on_spawn_ms;
		s->drain_on_spawn = 0;
		if (d != NULL) {
			svs_proc_drain(
			    c, g, s, p, d, dl, SV_WHY_DRAINED, now_ms);
			svs_plan_step(c, now_ms);
			return SV_OK;
		}
	}
	/* The new generation of a roll: its own ready timeout, or, without
	 * readiness, ready now: the old one is drained. */
	if (s->rolling && svs_seat_can_start(c, g, s)) {
		if (p->state == SV_PROC_STARTING) {
			svs_proc_arm(
			    c, g, s, p, now_ms + g->roll.ready_timeout_ms);
		} else {
			svs_roll_advance(c, g, s, now_ms);
		}
	} else if (p->ready) {
		svs_roll_step(c, g, now_ms);
	}
	/* A stop or shutdown that came while the spawn was on its way. */
	if (!svs_seat_can_start(c, g, s)) {
		svs_proc_stop(c, g, s, p,
		    c->shutting_down ? SV_WHY_SHUTDOWN : SV_WHY_UNWANTED,
		    now_ms);
	}
	/* A strategy restart that waited for this spawn. */
	svs_plan_step(c, now_ms);
	return SV_OK;
}

sv_err
sv_core_spawn_failed(sv_core *c, sv_spawn_ticket t, int error, uint64_t now_ms)
{
	sv_cgroup *g  = NULL;
	sv_seat   *s  = NULL;
	sv_proc   *p  = spawn_seat(c, t, &g, &s);
	sv_event   ev = {.kind = SV_EV_SPAWN_FAILED, .error = error};

	if (p == NULL) {
		return SV_OK;
	}
	if (svs_fx_reserve(c, svs_fx_bound(c, g, 0)) != SV_OK) {
		return SV_ENOMEM;
	}
	svs_emit(c, g, s, p, ev);
	svs_seat_fire(c, g, s, SEV_EXIT, NULL);
	s->drain_on_spawn = 0;
	/* A roll's new generation that failed rolls back; any other seat
	 * decides as after an exit. */
	if (!(s->rolling && svs_roll_back(c, g, s, now_ms))) {
		svs_seat_after_exit(c, g, s, SV_WHY_NONE, NULL, 0,
		    SV_CORE_SPAWN_RETRY_MS, now_ms);
	}
	(void) svs_group_maybe_delete(c, g);
	svs_plan_step(c, now_ms);
	return SV_OK;
}

/* ---- readiness, watchdog, timers -----------------------------------------
 */

/* svs_live_proc finds the live process named by key. */
sv_proc *
svs_live_proc(sv_core *c, sv_wkey key, sv_cgroup **gp, sv_seat **sp)
{
	sv_cgroup *g = svs_group_find(c, key.group_id, NULL);
	sv_seat   *s;
	sv_proc   *p;

	if (g == NULL || key.ordinal >= g->nseats) {
		return NULL;
	}
	s = &g->seats[key.ordinal];
	if ((p = svs_proc_find(c, s, key.generation)) == NULL
	    || p->state == SV_PROC_SPAWNING) {
		return NULL;
	}
	*gp = g;
	*sp = s;
	return p;
}

/* live_proc_seat_room finds the live process named by key (svs_live_proc)
 * and makes room for the effects of one seat: what a worker's request about
 * its own timers (extend, heartbeat) needs before it changes anything.
 * Errors: SV_ENOTFOUND, SV_ENOMEM. */
static sv_err
live_proc_seat_room(
    sv_core *c, sv_wkey key, sv_cgroup **gp, sv_seat **sp, sv_proc **pp)
{
	if ((*pp = svs_live_proc(c, key, gp, sp)) == NULL) {
		return SV_ENOTFOUND;
	}
	if (svs_fx_reserve(c, svs_fx_bound_seat()) != SV_OK) {
		return SV_ENOMEM;
	}
	*pp = svs_live_proc(c, key, gp, sp); /* the reservation may move it */
	return SV_OK;
}

sv_err
sv_core_ready(sv_core *c, sv_wkey key, uint64_t now_ms)
{
	sv_cgroup *g  = NULL;
	sv_seat   *s  = NULL;
	sv_proc   *p  = svs_live_proc(c, key, &g, &s);
	sv_event   ev = {.kind = SV_EV_READY};

	if (p == NULL) {
		return SV_ENOTFOUND;
	}
	/* Room first: its effects, and the row of the old generation a roll
	 * drains once this one is ready. */
	if (svs_fx_reserve(c,
	        g->roll.active ? svs_fx_bound(c, g, 0) : svs_fx_bound_seat())
	        != SV_OK
	    || (g->roll.active && svs_rows_reserve(c, g->roll.drain_id))
	        != SV_OK) {
		return SV_ENOMEM;
	}
	p = svs_live_proc(c, key, &g, &s); /* the reservation may move it */
	if (p->state == SV_PROC_STARTING) {
		p->state = SV_PROC_RUNNING;
		svs_proc_await(g, p, false);
		p->guard = 0;
		if (g->pol.watchdog_ms > 0) {
			svs_proc_arm(c, g, s, p, now_ms + g->pol.watchdog_ms);
		} else if (g->pol.start_timeout_ms > 0) {
			svs_timer_cancel(
			    c, SV_TIMER_PROC, svs_key_of(g, s, p));
		}
	}
	if (!p->ready && p->state == SV_PROC_RUNNING) {
		p->ready = true;
		svs_emit(c, g, s, p, ev);
		if (s->rolling && p == &s->cur) {
			svs_roll_advance(c, g, s, now_ms);
		} else {
			/* One more ready process: the roll's budgets may
			 * allow more. */
			svs_roll_step(c, g, now_ms);
		}
	}
	return SV_OK;
}

sv_err
sv_core_extend(sv_core *c, sv_wkey key, uint64_t ms, uint64_t now_ms)
{
	sv_cgroup *g   = NULL;
	sv_seat   *s   = NULL;
	sv_proc   *p   = NULL;
	sv_err     err = live_proc_seat_room(c, key, &g, &s, &p);

	if (err != SV_OK) {
		return err;
	}
	if (p->guard != 0 && !p->draining
	    && (p->state == SV_PROC_STARTING || p->state == SV_PROC_STOPPING)
	    && now_ms + ms > p->due_ms) {
		svs_proc_arm(c, g, s, p, now_ms + ms);
	}
	return SV_OK;
}

sv_err
sv_core_heartbeat(sv_core *c, sv_wkey key, uint64_t now_ms)
{
	sv_cgroup *g   = NULL;
	sv_seat   *s   = NULL;
	sv_proc   *p   = NULL;
	sv_err     err = live_proc_seat_room(c, key, &g, &s, &p);

	if (err != SV_OK) {
		return err;
	}
	if (p->state == SV_PROC_RUNNING && g->pol.watchdog_ms > 0) {
		svs_proc_arm(c, g, s, p, now_ms + g->pol.watchdog_ms);
	}
	return SV_OK;
}

/* proc_abandon stops waiting for a process that would not stop: it moves
 * to the seat's old record, and the seat decides as if it had exited. If
 * the old record is taken, the process is killed instead. */
static void
proc_abandon(sv_core *c, sv_cgroup *g, sv_seat *s, sv_proc *p, uint64_t now_ms)
{
	sv_why why = p->why;

	if (p != &s->cur || s->old != 0) {
		svs_signal_proc(c, g, s, p, SIGKILL);
		p->killed = true;
		return;
	}
	svs_seat_fire(c, g, s, SEV_ABANDON, NULL);
	if (s->in_plan) {
		return; /* the plan starts it again */
	}
	svs_seat_after_exit(c, g, s, why, NULL, 0, 0, now_ms);
}

/* proc_timer handles the timer of a process: start timeout, watchdog or
 * stop timeout, by the process's state. */
static void
proc_timer(sv_core *c, sv_cgroup *g, sv_seat *s, sv_proc *p, uint64_t now_ms)
{
	sv_event ev = {.kind = SV_EV_UNRESPONSIVE};

	p->guard = 0;
	switch (p->state) {
	case SV_PROC_STARTING:
		ev.phase = SV_PHASE_START;
		if (s->rolling && p == &s->cur) {
			/* A roll's new generation not ready in time: the roll
			 * stops, the old one keeps serving. */
			svs_emit(c, g, s, p, ev);
			svs_roll_end(
			    c, g, "a new generation was not ready in time");
			svs_proc_stop(c, g, s, p, SV_WHY_ROLL, now_ms);
			break;
		}
		ev.abandon
		    = g->pol.on_start_timeout == SV_START_TIMEOUT_ABANDON;
		svs_emit(c, g, s, p, ev);
		if (ev.abandon) {
			svs_proc_await(g, p, false);
		} else {
			svs_proc_stop(
			    c, g, s, p, SV_WHY_START_TIMEOUT, now_ms);
		}
		break;
	case SV_PROC_RUNNING:
		ev.phase = SV_PHASE_WATCHDOG;
		svs_emit(c, g, s, p, ev);
		svs_proc_stop(c, g, s, p, SV_WHY_WATCHDOG, now_ms);
		break;
	case SV_PROC_STOPPING:
		ev.phase = SV_PHASE_STOP;
		if (p->draining) {
			svs_drain_deadline(c, g, s, p, ev);
			break;
		}
		ev.abandon = g->pol.on_unresponsive == SV_UNRESPONSIVE_ABANDON
		    && !c->shutting_down;
		svs_emit(c, g, s, p, ev);
		if (ev.abandon) {
			proc_abandon(c, g, s, p, now_ms);
		} else if (!p->killed) {
			sv_event esc = {.kind = SV_EV_ESCALATED};
			svs_signal_proc(c, g, s, p, SIGKILL);
			p->killed = true;
			svs_emit(c, g, s, p, esc);
		}
		break;
	default:
		break;
	}
}

sv_err
sv_core_timer(sv_core *c, sv_timer_kind kind, sv_wkey key, uint64_t guard,
    uint64_t now_ms)
{
	sv_cgroup *g = NULL;
	sv_seat   *s = NULL;
	sv_proc   *p;

	/* Room first: a plan timer may reach every group, a process timer
	 * its group (or any, through a plan), a seat timer only emits
	 * nothing. */
	if (kind == SV_TIMER_PROC
	    && (g = svs_group_find(c, key.group_id, NULL)) == NULL) {
		return SV_OK;
	}
	if (svs_fx_reserve(c,
	        kind == SV_TIMER_SEAT ? svs_fx_bound_seat()
	                              : svs_fx_bound(c, g, 0))
	    != SV_OK) {
		return SV_ENOMEM;
	}
	switch (kind) {
	case SV_TIMER_PLAN:
		if (c->plan.phase == PLAN_DELAY && guard == c->plan.guard) {
			svs_plan_start(c, now_ms);
		}
		return SV_OK;
	case SV_TIMER_SEAT:
		if ((g = svs_group_find(c, key.group_id, NULL)) == NULL
		    || key.ordinal >= g->nseats) {
			return SV_OK;
		}
		s = &g->seats[key.ordinal];
		if (s->state != SV_SP_BACKOFF || s->guard != guard) {
			return SV_OK;
		}
		svs_seat_fire(c, g, s, SEV_TIMER, NULL);
		return SV_OK;
	case SV_TIMER_PROC:
		if ((p = svs_live_proc(c, key, &g, &s)) == NULL
		    || p->guard != guard || guard == 0) {
			return SV_OK;
		}
		proc_timer(c, g, s, p, now_ms);
		svs_plan_step(c, now_ms);
		return SV_OK;
	}
	return SV_OK;
}
