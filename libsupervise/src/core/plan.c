/*
 * plan.c — what follows an exit: restart type, intensity, backoff, and the
 * strategy plan (one_for_all, rest_for_one: which siblings stop, in which
 * order, and when the plan restarts them), plus sv_core_exited, the entry
 * that feeds a reaped process to all of that.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/supervision_internal.h"

static void plan_join(
    sv_core *c, sv_cgroup *g, sv_seat *s, uint64_t delay_ms, uint64_t now_ms);

/* ---- what follows an exit ------------------------------------------------
 */

/* group_fail gives up on a group: its workers stop, nothing restarts until
 * sv_core_reset. */
static void
group_fail(sv_core *c, sv_cgroup *g, uint64_t now_ms)
{
	sv_event ev = {.kind = SV_EV_GROUP_FAILED};

	g->failed = true;
	snprintf(g->reason, sizeof(g->reason),
	    "more than %u restarts within %llu ms", g->pol.max_restarts,
	    (unsigned long long) g->pol.max_window_ms);
	ev.reason = g->reason;
	svs_emit(c, g, NULL, NULL, ev);
	svs_roll_end(c, g, "the group failed");
	for (uint32_t o = g->nseats; o-- > 0;) {
		svs_seat_stop(c, g, &g->seats[o], SV_WHY_FAILED, now_ms);
		svs_old_stop(c, g, &g->seats[o], SV_WHY_FAILED, now_ms);
	}
}

/* svs_seat_after_exit decides what follows the end of the seat's current
 * process (exit or failed spawn); the record is already cleared.
 * min_delay_ms bounds the restart delay from below. */
void
svs_seat_after_exit(sv_core *c, sv_cgroup *g, sv_seat *s, sv_why why,
    const sv_exit *x, uint64_t uptime_ms, uint64_t min_delay_ms,
    uint64_t now_ms)
{
	sv_event ev = {.kind = SV_EV_RESTART_SCHEDULED};
	bool     abnormal, restart;
	uint64_t delay;

	if (!svs_seat_can_start(c, g, s)) {
		svs_seat_rest(c, g, s,
		    c->shutting_down  ? SV_WHY_SHUTDOWN
		        : g->deleting ? SV_WHY_DELETED
		        : g->failed   ? SV_WHY_FAILED
		                      : SV_WHY_UNWANTED,
		    !s->wanted);
		return;
	}
	switch (why) {
	case SV_WHY_RESTART:
	case SV_WHY_ROLL:
		/* Restarted on request, or drained by a roll whose budgets
		 * let it go before its successor started: at once. */
		s->fast_failures = 0;
		s->restarts++;
		svs_seat_schedule(c, g, s, 0, now_ms);
		return;
	case SV_WHY_STRATEGY:
		if (g->pol.restart == SV_RESTART_TEMPORARY) {
			s->in_plan = false;
			svs_seat_rest(c, g, s, SV_WHY_COMPLETED, true);
		}
		/* The plan starts it again with its siblings. */
		return;
	default:
		break;
	}
	abnormal
	    = why != SV_WHY_NONE || x == NULL || !x->exited || x->code != 0;
	switch (g->pol.restart) {
	case SV_RESTART_PERMANENT:
		restart = true;
		break;
	case SV_RESTART_TRANSIENT:
		restart = abnormal;
		break;
	default:
		restart = false;
		break;
	}
	if (!restart) {
		svs_seat_rest(c, g, s, SV_WHY_COMPLETED, true);
		return;
	}
	if (sv_intensity_record(&g->intensity, now_ms)) {
		/* The seat has no process: it comes to rest here, unless it is
		 * in a plan (group_fail rests those). */
		bool rested = s->in_plan;
		group_fail(c, g, now_ms);
		if (!rested) {
			svs_seat_rest(c, g, s, SV_WHY_FAILED, false);
		}
		return;
	}
	s->restarts++;
	delay = sv_backoff_next(&g->pol.backoff, &s->fast_failures, uptime_ms);
	if (delay < min_delay_ms) {
		delay = min_delay_ms;
	}
	if (sv_strategy_has_plan(c->strategy)) {
		plan_join(c, g, s, delay, now_ms);
		return;
	}
	svs_seat_schedule(c, g, s, delay, now_ms);
	ev.delay_ms = delay;
	ev.attempt  = s->fast_failures;
	svs_emit(c, g, s, NULL, ev);
}

sv_err
sv_core_exited(sv_core *c, sv_wkey key, sv_exit x, uint64_t now_ms)
{
	sv_cgroup *g = svs_group_find(c, key.group_id, NULL);
	sv_seat   *s;
	sv_proc   *p;
	sv_event   ev = {.kind = SV_EV_EXITED, .exit = x};
	bool       was_old, in_plan;
	sv_why     why;
	uint64_t   uptime;

	if (g == NULL || key.ordinal >= g->nseats) {
		return SV_OK;
	}
	s = &g->seats[key.ordinal];
	if ((p = svs_proc_find(c, s, key.generation)) == NULL
	    || p->state == SV_PROC_SPAWNING) {
		return SV_OK;
	}
	if (svs_fx_reserve(c, svs_fx_bound(c, g, 0)) != SV_OK) {
		return SV_ENOMEM;
	}
	p            = svs_proc_find(c, s, key.generation); /* may move */
	was_old      = p != &s->cur;
	why          = p->why;
	uptime       = now_ms >= p->started_ms ? now_ms - p->started_ms : 0;
	ev.uptime_ms = uptime;
	ev.why       = why;
	svs_emit(c, g, s, p, ev);
	if (p->guard != 0) {
		svs_timer_cancel(c, SV_TIMER_PROC, svs_key_of(g, s, p));
	}
	s->has_exit  = true;
	s->last_exit = x;
	in_plan      = s->in_plan;
	svs_drain_exited(c, g, s, p, x, now_ms);
	if (p->draining && !was_old && !s->wanted) {
		/* Drained: it comes to rest, nothing replaces it. */
		svs_seat_fire(c, g, s, SEV_EXIT, NULL);
		svs_seat_rest(c, g, s, SV_WHY_DRAINED, true);
		svs_roll_step(c, g, now_ms);
		(void) svs_group_maybe_delete(c, g);
		svs_plan_step(c, now_ms);
		return SV_OK;
	}
	if (was_old) {
		/* An abandoned or drained process, or the old generation of a
		 * roll: the seat has already moved on. A roll overlap whose
		 * new generation is not even started is over. */
		svs_proc_forget(c, g, s, p);
		if (s->rolling && s->cur.state == SV_PROC_NONE) {
			s->rolling = false;
		}
		/* One process fewer: the roll's budgets may allow more. */
		svs_roll_step(c, g, now_ms);
		(void) svs_group_maybe_delete(c, g);
		svs_plan_step(c, now_ms);
		return SV_OK;
	}
	svs_seat_fire(c, g, s, SEV_EXIT, NULL);
	if (s->rolling && svs_roll_back(c, g, s, now_ms)) {
		(void) svs_group_maybe_delete(c, g);
		svs_plan_step(c, now_ms);
		return SV_OK;
	}
	if (in_plan) {
		/* Stopped by a strategy restart, or failed during one: the
		 * plan starts it again. A failure still counts, except for a
		 * temporary worker, which is done. group_fail rests this seat
		 * with the others (it is still in the plan). */
		if (g->pol.restart == SV_RESTART_TEMPORARY || !s->wanted) {
			svs_seat_rest(c, g, s,
			    !s->wanted ? SV_WHY_UNWANTED : SV_WHY_COMPLETED,
			    true);
		} else if (why == SV_WHY_NONE
		    && sv_intensity_record(&g->intensity, now_ms)) {
			group_fail(c, g, now_ms);
		}
	} else {
		svs_seat_after_exit(c, g, s, why, &x, uptime, 0, now_ms);
	}
	svs_roll_step(c, g, now_ms);
	(void) svs_group_maybe_delete(c, g);
	svs_plan_step(c, now_ms);
	return SV_OK;
}

/* ---- the strategy plan ---------------------------------------------------
 *
 * one_for_all and rest_for_one restart a range of seats together: every
 * position >= plan.first. The plan stops the live seats of the range one at
 * a time, highest position first, waiting for each to be reaped; then,
 * after the failed seat's backoff delay, marks every wanted seat of the
 * range pending, and sv_core_next_spawn starts them in start order. A
 * failure during a plan widens the range (the union of two ranges is the
 * one with the lower start) and the delay (the larger one).
 */

/* plan_in_range tells whether position pos lies in the plan's range. */
static bool
plan_in_range(const sv_core *c, size_t gpos, uint32_t ordinal)
{
	sv_position p = {gpos, ordinal};
	return sv_position_cmp(p, c->plan.first) >= 0;
}

/* plan_mark puts every seat of the range in the plan. */
static void
plan_mark(sv_core *c)
{
	for (size_t gi = c->plan.first.group; gi < c->ngroups; gi++) {
		sv_cgroup *g = c->groups[gi];
		uint32_t   first
		    = gi == c->plan.first.group ? c->plan.first.ordinal : 0;
		for (uint32_t o = first; o < g->nseats; o++) {
			sv_seat *s = &g->seats[o];
			if (!s->wanted || g->failed || g->deleting) {
				continue;
			}
			svs_seat_fire(c, g, s, SEV_PLAN, NULL);
		}
	}
}

/* plan_join adds the failed seat s (its process already reaped) to the
 * plan, starting one if none is in progress. */
static void
plan_join(
    sv_core *c, sv_cgroup *g, sv_seat *s, uint64_t delay_ms, uint64_t now_ms)
{
	sv_position failed = {svs_group_pos(c, g), s->ordinal};
	sv_position first  = sv_strategy_first(c->strategy, failed);
	sv_event    ev     = {.kind = SV_EV_RESTART_SCHEDULED};

	if (c->plan.phase == PLAN_IDLE
	    || sv_position_cmp(first, c->plan.first) < 0) {
		c->plan.first = first;
	}
	if (c->plan.phase == PLAN_IDLE || delay_ms > c->plan.delay_ms) {
		c->plan.delay_ms = delay_ms;
	}
	if (c->plan.phase == PLAN_DELAY) {
		/* The range may have grown: go back to stopping, which stops
		 * the newly included seats and then re-arms the delay. */
		svs_timer_cancel(c, SV_TIMER_PLAN, (sv_wkey) {0, 0, 0});
	}
	c->plan.phase = PLAN_STOPPING;
	plan_mark(c);
	ev.delay_ms = delay_ms;
	ev.attempt  = s->fast_failures;
	svs_emit(c, g, s, NULL, ev);
	(void) now_ms;
}

/* svs_plan_start ends a plan: every wanted seat of the range becomes pending;
 * sv_core_next_spawn starts them in start order. */
void
svs_plan_start(sv_core *c, uint64_t now_ms)
{
	(void) now_ms;
	c->plan.phase = PLAN_IDLE;
	c->plan.guard = 0;
	for (size_t gi = c->plan.first.group; gi < c->ngroups; gi++) {
		sv_cgroup *g = c->groups[gi];
		for (uint32_t o = 0; o < g->nseats; o++) {
			sv_seat *s = &g->seats[o];
			if (s->in_plan) {
				svs_seat_fire(c, g, s, SEV_PLAN_GO, NULL);
			}
		}
	}
}

/* svs_plan_step advances a plan in its stopping phase: waits while a seat of
 * the range is stopping, else stops the live seat with the highest
 * position, else moves to the delay (or starts at once). */
void
svs_plan_step(sv_core *c, uint64_t now_ms)
{
	sv_cgroup *last_g = NULL;
	sv_seat   *last_s = NULL;

	if (c->plan.phase != PLAN_STOPPING) {
		return;
	}
	if (c->shutting_down) {
		c->plan.phase = PLAN_IDLE;
		return;
	}
	for (size_t gi = c->plan.first.group; gi < c->ngroups; gi++) {
		sv_cgroup *g = c->groups[gi];
		for (uint32_t o = 0; o < g->nseats; o++) {
			sv_seat *s = &g->seats[o];
			if (!plan_in_range(c, gi, o)) {
				continue;
			}
			if (s->cur.state == SV_PROC_STOPPING
			    || s->cur.state == SV_PROC_SPAWNING) {
				return; /* one at a time; a spawn on its way is
				         * stopped once it has started */
			}
			if (s->cur.state == SV_PROC_STARTING
			    || s->cur.state == SV_PROC_RUNNING) {
				last_g = g;
				last_s = s;
			}
		}
	}
	if (last_s != NULL) {
		svs_seat_arg a = {.why = SV_WHY_STRATEGY, .now_ms = now_ms};
		svs_seat_fire(c, last_g, last_s, SEV_PLAN_STOP, &a);
		return;
	}
	if (c->plan.delay_ms == 0) {
		svs_plan_start(c, now_ms);
		return;
	}
	c->plan.phase = PLAN_DELAY;
	c->plan.guard = svs_timer_arm(
	    c, SV_TIMER_PLAN, (sv_wkey) {0, 0, 0}, now_ms + c->plan.delay_ms);
}
