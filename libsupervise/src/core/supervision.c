/*
 * supervision.c — the supervision state machine (see supervision.h and the
 * table in docs/supervision.md).
 *
 * Divisions: effect queue; groups and seats; process records; what follows
 * an exit (restart type, intensity, backoff, strategy); the strategy plan;
 * spawning; operator requests; drain and rolling restart; shutdown; names.
 *
 * Every function that changes a seat keeps three derived things right:
 * the group's npending/cursor (which seats wait for a spawn), live (the
 * processes not yet reaped) and unready (processes whose readiness an
 * ordered start waits for). They are what make sv_core_next_spawn cheap.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fxring.h"
#include "core/supervision.h"

typedef enum plan_phase {
	PLAN_IDLE     = 0,
	PLAN_STOPPING = 1, /* siblings stop one by one, reverse start order */
	PLAN_DELAY    = 2, /* all stopped; the plan timer is armed */
} plan_phase;

struct sv_core {
	sv_strategy strategy;
	sv_cgroup **groups; /* [ngroups], start order */
	size_t      ngroups;
	uint32_t    next_id;
	bool        shutting_down;
	size_t      live;
	uint64_t    guards; /* source of timer guards */
	struct {
		plan_phase  phase;
		sv_position first; /* range: every position >= first */
		uint64_t    delay_ms;
		uint64_t    guard;
	} plan;
	sv_drains drains; /* reports of drains and rolls */
	sv_fxring fx; /* pending effects (core/fxring.h) */
};

/* ---- effect queue --------------------------------------------------------
 */

/* fx_push queues an effect (dropped, and fx.lost set, when out of
 * memory; the shell logs it. Timers are the only effects whose loss
 * matters, and the shell re-derives them, see supervisor.c). */
static void
fx_push(sv_core *c, const sv_fx *fx)
{
	sv_fxring_push(&c->fx, fx);
}

bool
sv_core_pop_effect(sv_core *c, sv_fx *fx)
{
	return sv_fxring_pop(&c->fx, fx);
}

/* key_of names a process of a seat. */
static sv_wkey
key_of(const sv_cgroup *g, const sv_seat *s, const sv_proc *p)
{
	sv_wkey k = {g->id, s->ordinal, p != NULL ? p->generation : 0};
	return k;
}

/* emit queues an event about seat s (may be NULL) of group g. */
static void
emit(sv_core *c, const sv_cgroup *g, const sv_seat *s, const sv_proc *p,
    sv_event ev)
{
	sv_fx fx = {.kind = SV_FX_EVENT};

	ev.group_id = g->id;
	if (s != NULL) {
		ev.ordinal    = s->ordinal;
		ev.generation = p != NULL ? p->generation : s->tok.generation;
		if (p != NULL) {
			ev.pid = p->pid;
		}
	}
	fx.ev = ev;
	fx_push(c, &fx);
}

/* timer_arm queues an SV_FX_TIMER effect and returns its guard. */
static uint64_t
timer_arm(sv_core *c, sv_timer_kind kind, sv_wkey key, uint64_t due_ms)
{
	sv_fx fx = {.kind = SV_FX_TIMER, .timer = kind, .key = key};

	fx.guard  = ++c->guards;
	fx.due_ms = due_ms;
	fx_push(c, &fx);
	return fx.guard;
}

/* timer_cancel queues an SV_FX_CANCEL effect. */
static void
timer_cancel(sv_core *c, sv_timer_kind kind, sv_wkey key)
{
	sv_fx fx = {.kind = SV_FX_CANCEL, .timer = kind, .key = key};
	fx_push(c, &fx);
}

/* signal_proc queues a signal to a process's group. */
static void
signal_proc(sv_core *c, const sv_cgroup *g, const sv_seat *s, const sv_proc *p,
    int signo)
{
	sv_fx fx = {.kind = SV_FX_SIGNAL, .signo = signo, .pgroup = true};

	fx.key = key_of(g, s, p);
	fx.pid = p->pid;
	fx_push(c, &fx);
}

/* ---- groups and seats ----------------------------------------------------
 */

/* group_find returns the group with id, and its position in *posp. */
static sv_cgroup *
group_find(const sv_core *c, uint32_t id, size_t *posp)
{
	for (size_t i = 0; i < c->ngroups; i++) {
		if (c->groups[i]->id == id) {
			if (posp != NULL) {
				*posp = i;
			}
			return c->groups[i];
		}
	}
	return NULL;
}

/* group_pos returns the position of g in start order. */
static size_t
group_pos(const sv_core *c, const sv_cgroup *g)
{
	size_t pos = 0;
	(void) group_find(c, g->id, &pos);
	return pos;
}

/* seat_set_pending marks (or unmarks) a seat as waiting for a spawn. */
static void
seat_set_pending(sv_cgroup *g, sv_seat *s, bool on)
{
	if (s->pending == on) {
		return;
	}
	s->pending = on;
	if (on) {
		g->npending++;
		if (s->ordinal < g->cursor) {
			g->cursor = s->ordinal;
		}
	} else {
		g->npending--;
	}
}

/* seat_renew gives the seat the next generation if the current one has
 * already been spawned. */
static void
seat_renew(sv_cgroup *g, sv_seat *s)
{
	if (s->used) {
		(void) sv_ordinals_renew(&g->ords, &s->tok);
		s->used = false;
	}
}

/* seat_cancel_backoff disarms a scheduled restart. */
static void
seat_cancel_backoff(sv_core *c, sv_cgroup *g, sv_seat *s)
{
	if (s->backoff) {
		s->backoff = false;
		s->guard   = 0;
		timer_cancel(c, SV_TIMER_SEAT, key_of(g, s, NULL));
	}
}

/* seat_can_start tells whether a seat may get a process at all. */
static bool
seat_can_start(const sv_core *c, const sv_cgroup *g, const sv_seat *s)
{
	return s->wanted && !c->shutting_down && !g->failed && !g->deleting;
}

/* seat_schedule makes a seat start after delay_ms (0: at the next
 * sv_core_next_spawn), with a fresh generation. */
static void
seat_schedule(
    sv_core *c, sv_cgroup *g, sv_seat *s, uint64_t delay_ms, uint64_t now_ms)
{
	seat_cancel_backoff(c, g, s);
	seat_set_pending(g, s, false);
	if (!seat_can_start(c, g, s)) {
		return;
	}
	seat_renew(g, s);
	if (delay_ms == 0) {
		seat_set_pending(g, s, true);
		return;
	}
	s->backoff = true;
	s->due_ms  = now_ms + delay_ms;
	s->guard = timer_arm(c, SV_TIMER_SEAT, key_of(g, s, NULL), s->due_ms);
}

/* seat_release gives the ordinal back (the worker is no longer wanted). */
static void
seat_release(sv_cgroup *g, sv_seat *s)
{
	if (s->wanted) {
		(void) sv_ordinals_release(&g->ords, s->tok);
		s->wanted = false;
	}
}

/* seat_rest settles a seat that has no process and will not restart:
 * nothing scheduled, the ordinal released unless still wanted. */
static void
seat_rest(sv_core *c, sv_cgroup *g, sv_seat *s, sv_why why, bool release)
{
	sv_event ev = {.kind = SV_EV_STOPPED, .why = why};

	seat_cancel_backoff(c, g, s);
	seat_set_pending(g, s, false);
	s->in_plan = false;
	if (release) {
		seat_release(g, s);
	}
	emit(c, g, s, NULL, ev);
}

/* group_free frees a group's memory. NULL is ignored. */
static void
group_free(sv_cgroup *g)
{
	if (g == NULL) {
		return;
	}
	sv_ordinals_fini(&g->ords);
	sv_intensity_fini(&g->intensity);
	free(g->seats);
	free(g->name);
	free(g);
}

/* group_maybe_delete removes a group being deleted once nothing is alive.
 * Returns true when it was removed (g is then gone). */
static bool
group_maybe_delete(sv_core *c, sv_cgroup *g)
{
	size_t   pos = 0;
	sv_event ev  = {.kind = SV_EV_GROUP_DELETED};

	if (!g->deleting || g->live > 0) {
		return false;
	}
	(void) group_find(c, g->id, &pos);
	emit(c, g, NULL, NULL, ev);
	memmove(&c->groups[pos], &c->groups[pos + 1],
	    (c->ngroups - pos - 1) * sizeof(sv_cgroup *));
	c->ngroups--;
	/* Positions after pos moved down by one: keep the plan's range. */
	if (c->plan.phase != PLAN_IDLE && c->plan.first.group > pos) {
		c->plan.first.group--;
	} else if (c->plan.phase != PLAN_IDLE && c->plan.first.group == pos) {
		c->plan.first.ordinal = 0;
	}
	group_free(g);
	return true;
}

/* ---- process records -----------------------------------------------------
 */

/* proc_find returns the process of a seat with the given generation. */
static sv_proc *
proc_find(sv_seat *s, uint64_t generation)
{
	if (s->cur.state != SV_PROC_NONE && s->cur.generation == generation) {
		return &s->cur;
	}
	if (s->old.state != SV_PROC_NONE && s->old.generation == generation) {
		return &s->old;
	}
	return NULL;
}

/* proc_arm arms the timer of a process at due_ms. */
static void
proc_arm(sv_core *c, const sv_cgroup *g, const sv_seat *s, sv_proc *p,
    uint64_t due_ms)
{
	p->due_ms = due_ms;
	p->guard  = timer_arm(c, SV_TIMER_PROC, key_of(g, s, p), due_ms);
}

/* proc_await sets whether an ordered start still waits for p. */
static void
proc_await(sv_cgroup *g, sv_proc *p, bool on)
{
	if (p->awaited != on) {
		p->awaited = on;
		if (on) {
			g->unready++;
		} else {
			g->unready--;
		}
	}
}

/* proc_forget clears a process record after its reap. */
static void
proc_forget(sv_core *c, sv_cgroup *g, sv_proc *p)
{
	proc_await(g, p, false);
	*p = (sv_proc) {0};
	g->live--;
	c->live--;
}

/* proc_stop asks a live process to stop: the group's stop signal (SIGKILL
 * if the stop timeout is 0), then the stop timer. A process already
 * stopping keeps its first reason, except that an operator restart, a
 * shutdown or a failure overrides a reason that would restart it
 * differently. */
static void
proc_stop(sv_core *c, sv_cgroup *g, sv_seat *s, sv_proc *p, sv_why why,
    uint64_t now_ms)
{
	sv_event ev = {.kind = SV_EV_STOPPING, .why = why};
	int      sig;

	switch (p->state) {
	case SV_PROC_STARTING:
	case SV_PROC_RUNNING:
		break;
	case SV_PROC_STOPPING:
		if (p->draining) {
			return; /* its deadline stands; it is not restarted */
		}
		if (why == SV_WHY_RESTART || why == SV_WHY_SHUTDOWN
		    || why == SV_WHY_FAILED || why == SV_WHY_UNWANTED
		    || why == SV_WHY_DELETED) {
			p->why = why;
		}
		return;
	default:
		return;
	}
	proc_await(g, p, false);
	p->state  = SV_PROC_STOPPING;
	p->why    = why;
	sig       = g->pol.stop_timeout_ms == 0 ? SIGKILL : g->pol.stop_signal;
	p->killed = sig == SIGKILL;
	emit(c, g, s, p, ev);
	signal_proc(c, g, s, p, sig);
	if (g->pol.stop_timeout_ms > 0) {
		proc_arm(c, g, s, p, now_ms + g->pol.stop_timeout_ms);
	} else {
		p->guard = 0;
		timer_cancel(c, SV_TIMER_PROC, key_of(g, s, p));
	}
}

static void old_stop(
    sv_core *c, sv_cgroup *g, sv_seat *s, sv_why why, uint64_t now_ms);

/* seat_stop stops whatever runs on a seat, or settles it if nothing does.
 * release: the ordinal is given back once the seat is at rest. */
static void
seat_stop(sv_core *c, sv_cgroup *g, sv_seat *s, sv_why why, uint64_t now_ms)
{
	if (s->rolling) {
		/* Neither generation of a roll overlap stays. */
		old_stop(c, g, s, why, now_ms);
	}
	if (s->cur.state == SV_PROC_STARTING || s->cur.state == SV_PROC_RUNNING
	    || s->cur.state == SV_PROC_STOPPING) {
		seat_cancel_backoff(c, g, s);
		seat_set_pending(g, s, false);
		s->in_plan = false;
		proc_stop(c, g, s, &s->cur, why, now_ms);
		return;
	}
	if (s->pending || s->backoff || s->in_plan) {
		seat_rest(c, g, s, why, !s->wanted);
	} else if (!s->wanted) {
		seat_release(g, s);
	}
}

/* ---- what follows an exit ------------------------------------------------
 */

static void plan_join(
    sv_core *c, sv_cgroup *g, sv_seat *s, uint64_t delay_ms, uint64_t now_ms);
static void plan_step(sv_core *c, uint64_t now_ms);
static void roll_end(sv_core *c, sv_cgroup *g, const char *reason);
static void roll_step(sv_core *c, sv_cgroup *g, uint64_t now_ms);
static void drain_exited(sv_core *c, const sv_cgroup *g, const sv_seat *s,
    const sv_proc *p, sv_exit x, uint64_t now_ms);
static bool roll_back(sv_core *c, sv_cgroup *g, sv_seat *s, uint64_t now_ms);
static void old_stop(
    sv_core *c, sv_cgroup *g, sv_seat *s, sv_why why, uint64_t now_ms);
static void proc_drain(sv_core *c, sv_cgroup *g, sv_seat *s, sv_proc *p,
    sv_drain *d, uint64_t deadline_ms, sv_why why, uint64_t now_ms);
static void roll_advance(
    sv_core *c, sv_cgroup *g, sv_seat *s, uint64_t now_ms);
static void drain_deadline(
    sv_core *c, sv_cgroup *g, sv_seat *s, sv_proc *p, sv_event ev);

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
	emit(c, g, NULL, NULL, ev);
	roll_end(c, g, "the group failed");
	for (uint32_t o = g->max_count; o-- > 0;) {
		seat_stop(c, g, &g->seats[o], SV_WHY_FAILED, now_ms);
		old_stop(c, g, &g->seats[o], SV_WHY_FAILED, now_ms);
	}
}

/* seat_after_exit decides what follows the end of the seat's current
 * process (exit or failed spawn); the record is already cleared.
 * min_delay_ms bounds the restart delay from below. */
static void
seat_after_exit(sv_core *c, sv_cgroup *g, sv_seat *s, sv_why why,
    const sv_exit *x, uint64_t uptime_ms, uint64_t min_delay_ms,
    uint64_t now_ms)
{
	sv_event ev = {.kind = SV_EV_RESTART_SCHEDULED};
	bool     abnormal, restart;
	uint64_t delay;

	if (!seat_can_start(c, g, s)) {
		seat_rest(c, g, s,
		    c->shutting_down  ? SV_WHY_SHUTDOWN
		        : g->deleting ? SV_WHY_DELETED
		        : g->failed   ? SV_WHY_FAILED
		                      : SV_WHY_UNWANTED,
		    !s->wanted);
		return;
	}
	switch (why) {
	case SV_WHY_RESTART:
		s->fast_failures = 0;
		s->restarts++;
		seat_schedule(c, g, s, 0, now_ms);
		return;
	case SV_WHY_STRATEGY:
		if (g->pol.restart == SV_RESTART_TEMPORARY) {
			s->in_plan = false;
			seat_rest(c, g, s, SV_WHY_COMPLETED, true);
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
		seat_rest(c, g, s, SV_WHY_COMPLETED, true);
		return;
	}
	if (sv_intensity_record(&g->intensity, now_ms)) {
		/* The seat has no process: it comes to rest here, unless it is
		 * in a plan (group_fail rests those). */
		bool rested = s->in_plan;
		group_fail(c, g, now_ms);
		if (!rested) {
			seat_rest(c, g, s, SV_WHY_FAILED, false);
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
	seat_schedule(c, g, s, delay, now_ms);
	ev.delay_ms = delay;
	ev.attempt  = s->fast_failures;
	emit(c, g, s, NULL, ev);
}

void
sv_core_exited(sv_core *c, sv_wkey key, sv_exit x, uint64_t now_ms)
{
	sv_cgroup *g = group_find(c, key.group_id, NULL);
	sv_seat   *s;
	sv_proc   *p;
	sv_event   ev = {.kind = SV_EV_EXITED, .exit = x};
	bool       was_old, in_plan;
	sv_why     why;
	uint64_t   uptime;

	if (g == NULL || key.ordinal >= g->max_count) {
		return;
	}
	s = &g->seats[key.ordinal];
	if ((p = proc_find(s, key.generation)) == NULL
	    || p->state == SV_PROC_SPAWNING) {
		return;
	}
	was_old      = p == &s->old;
	why          = p->why;
	uptime       = now_ms >= p->started_ms ? now_ms - p->started_ms : 0;
	ev.uptime_ms = uptime;
	ev.why       = why;
	emit(c, g, s, p, ev);
	if (p->guard != 0) {
		timer_cancel(c, SV_TIMER_PROC, key_of(g, s, p));
	}
	s->has_exit  = true;
	s->last_exit = x;
	in_plan      = s->in_plan;
	drain_exited(c, g, s, p, x, now_ms);
	if (p->draining && !was_old && !s->wanted) {
		/* Drained: it comes to rest, nothing replaces it. */
		proc_forget(c, g, p);
		s->in_plan = false;
		seat_rest(c, g, s, SV_WHY_DRAINED, true);
		(void) group_maybe_delete(c, g);
		plan_step(c, now_ms);
		return;
	}
	proc_forget(c, g, p);
	if (was_old) {
		/* An abandoned or drained process, or the old generation of a
		 * roll: the seat has already moved on. A roll overlap whose
		 * new generation is not even started is over. */
		if (s->rolling && s->cur.state == SV_PROC_NONE) {
			s->rolling = false;
			if (g->roll.active && g->roll.next == s->ordinal) {
				g->roll.next++;
				roll_step(c, g, now_ms);
			}
		}
		(void) group_maybe_delete(c, g);
		plan_step(c, now_ms);
		return;
	}
	if (s->rolling && roll_back(c, g, s, now_ms)) {
		(void) group_maybe_delete(c, g);
		plan_step(c, now_ms);
		return;
	}
	if (in_plan) {
		/* Stopped by a strategy restart, or failed during one: the
		 * plan starts it again. A failure still counts, except for a
		 * temporary worker, which is done. group_fail rests this seat
		 * with the others (it is still in the plan). */
		if (g->pol.restart == SV_RESTART_TEMPORARY || !s->wanted) {
			seat_rest(c, g, s,
			    !s->wanted ? SV_WHY_UNWANTED : SV_WHY_COMPLETED,
			    true);
		} else if (why == SV_WHY_NONE
		    && sv_intensity_record(&g->intensity, now_ms)) {
			group_fail(c, g, now_ms);
		}
	} else {
		seat_after_exit(c, g, s, why, &x, uptime, 0, now_ms);
	}
	(void) group_maybe_delete(c, g);
	plan_step(c, now_ms);
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
		for (uint32_t o = first; o < g->max_count; o++) {
			sv_seat *s = &g->seats[o];
			if (!s->wanted || g->failed || g->deleting) {
				continue;
			}
			seat_cancel_backoff(c, g, s);
			seat_set_pending(g, s, false);
			s->in_plan = true;
		}
	}
}

/* plan_join adds the failed seat s (its process already reaped) to the
 * plan, starting one if none is in progress. */
static void
plan_join(
    sv_core *c, sv_cgroup *g, sv_seat *s, uint64_t delay_ms, uint64_t now_ms)
{
	sv_position failed = {group_pos(c, g), s->ordinal};
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
		timer_cancel(c, SV_TIMER_PLAN, (sv_wkey) {0, 0, 0});
	}
	c->plan.phase = PLAN_STOPPING;
	plan_mark(c);
	ev.delay_ms = delay_ms;
	ev.attempt  = s->fast_failures;
	emit(c, g, s, NULL, ev);
	(void) now_ms;
}

/* plan_start ends a plan: every wanted seat of the range becomes pending;
 * sv_core_next_spawn starts them in start order. */
static void
plan_start(sv_core *c, uint64_t now_ms)
{
	c->plan.phase = PLAN_IDLE;
	c->plan.guard = 0;
	for (size_t gi = c->plan.first.group; gi < c->ngroups; gi++) {
		sv_cgroup *g = c->groups[gi];
		for (uint32_t o = 0; o < g->max_count; o++) {
			sv_seat *s = &g->seats[o];
			if (s->in_plan) {
				s->in_plan = false;
				seat_schedule(c, g, s, 0, now_ms);
			}
		}
	}
}

/* plan_step advances a plan in its stopping phase: waits while a seat of
 * the range is stopping, else stops the live seat with the highest
 * position, else moves to the delay (or starts at once). */
static void
plan_step(sv_core *c, uint64_t now_ms)
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
		for (uint32_t o = 0; o < g->max_count; o++) {
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
		last_s->in_plan = last_s->wanted && !last_g->failed;
		proc_stop(
		    c, last_g, last_s, &last_s->cur, SV_WHY_STRATEGY, now_ms);
		return;
	}
	if (c->plan.delay_ms == 0) {
		plan_start(c, now_ms);
		return;
	}
	c->plan.phase = PLAN_DELAY;
	c->plan.guard = timer_arm(
	    c, SV_TIMER_PLAN, (sv_wkey) {0, 0, 0}, now_ms + c->plan.delay_ms);
}

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
		for (uint32_t o = g->cursor; o < g->max_count; o++) {
			sv_seat *s = &g->seats[o];
			if (!s->pending) {
				continue;
			}
			g->cursor = o + 1;
			seat_set_pending(g, s, false);
			seat_renew(g, s);
			s->used = true;
			s->cur  = (sv_proc) {.state = SV_PROC_SPAWNING,
			     .generation            = s->tok.generation};
			g->live++;
			c->live++;
			*t = key_of(g, s, &s->cur);
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
	sv_cgroup *g = group_find(c, t.group_id, NULL);
	sv_seat   *s;

	if (g == NULL || t.ordinal >= g->max_count) {
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

void
sv_core_spawned(sv_core *c, sv_spawn_ticket t, int64_t pid, uint64_t now_ms)
{
	sv_cgroup *g  = NULL;
	sv_seat   *s  = NULL;
	sv_proc   *p  = spawn_seat(c, t, &g, &s);
	sv_event   ev = {.kind = SV_EV_STARTED};

	if (p == NULL) {
		return;
	}
	p->pid        = pid;
	p->started_ms = now_ms;
	emit(c, g, s, p, ev);
	if (g->pol.need_ready) {
		p->state = SV_PROC_STARTING;
		p->ready = false;
		proc_await(g, p, true);
		if (g->pol.start_timeout_ms > 0) {
			proc_arm(c, g, s, p, now_ms + g->pol.start_timeout_ms);
		}
	} else {
		p->state = SV_PROC_RUNNING;
		p->ready = true;
		if (g->pol.watchdog_ms > 0) {
			proc_arm(c, g, s, p, now_ms + g->pol.watchdog_ms);
		}
	}
	/* A drain that came while the spawn was on its way. */
	if (s->drain_on_spawn != 0) {
		sv_drain *d  = sv_drains_find(&c->drains, s->drain_on_spawn);
		uint64_t  dl = s->drain_on_spawn_ms;
		s->drain_on_spawn = 0;
		if (d != NULL) {
			proc_drain(c, g, s, p, d, dl, SV_WHY_DRAINED, now_ms);
			plan_step(c, now_ms);
			return;
		}
	}
	/* The new generation of a roll: its own ready timeout, or, without
	 * readiness, ready now: the old one is drained. */
	if (s->rolling && seat_can_start(c, g, s)) {
		if (p->state == SV_PROC_STARTING) {
			proc_arm(
			    c, g, s, p, now_ms + g->roll.ready_timeout_ms);
		} else {
			roll_advance(c, g, s, now_ms);
		}
	}
	/* A stop or shutdown that came while the spawn was on its way. */
	if (!seat_can_start(c, g, s)) {
		proc_stop(c, g, s, p,
		    c->shutting_down ? SV_WHY_SHUTDOWN : SV_WHY_UNWANTED,
		    now_ms);
	}
	/* A strategy restart that waited for this spawn. */
	plan_step(c, now_ms);
}

void
sv_core_spawn_failed(sv_core *c, sv_spawn_ticket t, int error, uint64_t now_ms)
{
	sv_cgroup *g  = NULL;
	sv_seat   *s  = NULL;
	sv_proc   *p  = spawn_seat(c, t, &g, &s);
	sv_event   ev = {.kind = SV_EV_SPAWN_FAILED, .error = error};

	if (p == NULL) {
		return;
	}
	emit(c, g, s, p, ev);
	proc_forget(c, g, p);
	s->drain_on_spawn = 0;
	if (s->rolling && roll_back(c, g, s, now_ms)) {
		(void) group_maybe_delete(c, g);
		plan_step(c, now_ms);
		return;
	}
	seat_after_exit(
	    c, g, s, SV_WHY_NONE, NULL, 0, SV_CORE_SPAWN_RETRY_MS, now_ms);
	(void) group_maybe_delete(c, g);
	plan_step(c, now_ms);
}

/* ---- readiness, watchdog, timers -----------------------------------------
 */

/* live_proc finds the live process named by key. */
static sv_proc *
live_proc(sv_core *c, sv_wkey key, sv_cgroup **gp, sv_seat **sp)
{
	sv_cgroup *g = group_find(c, key.group_id, NULL);
	sv_seat   *s;
	sv_proc   *p;

	if (g == NULL || key.ordinal >= g->max_count) {
		return NULL;
	}
	s = &g->seats[key.ordinal];
	if ((p = proc_find(s, key.generation)) == NULL
	    || p->state == SV_PROC_SPAWNING) {
		return NULL;
	}
	*gp = g;
	*sp = s;
	return p;
}

sv_err
sv_core_ready(sv_core *c, sv_wkey key, uint64_t now_ms)
{
	sv_cgroup *g  = NULL;
	sv_seat   *s  = NULL;
	sv_proc   *p  = live_proc(c, key, &g, &s);
	sv_event   ev = {.kind = SV_EV_READY};

	if (p == NULL) {
		return SV_ENOTFOUND;
	}
	if (p->state == SV_PROC_STARTING) {
		p->state = SV_PROC_RUNNING;
		proc_await(g, p, false);
		p->guard = 0;
		if (g->pol.watchdog_ms > 0) {
			proc_arm(c, g, s, p, now_ms + g->pol.watchdog_ms);
		} else if (g->pol.start_timeout_ms > 0) {
			timer_cancel(c, SV_TIMER_PROC, key_of(g, s, p));
		}
	}
	if (!p->ready && p->state == SV_PROC_RUNNING) {
		p->ready = true;
		emit(c, g, s, p, ev);
		if (s->rolling && p == &s->cur) {
			roll_advance(c, g, s, now_ms);
		}
	}
	return SV_OK;
}

sv_err
sv_core_extend(sv_core *c, sv_wkey key, uint64_t ms, uint64_t now_ms)
{
	sv_cgroup *g = NULL;
	sv_seat   *s = NULL;
	sv_proc   *p = live_proc(c, key, &g, &s);

	if (p == NULL) {
		return SV_ENOTFOUND;
	}
	if (p->guard != 0 && !p->draining
	    && (p->state == SV_PROC_STARTING || p->state == SV_PROC_STOPPING)
	    && now_ms + ms > p->due_ms) {
		proc_arm(c, g, s, p, now_ms + ms);
	}
	return SV_OK;
}

sv_err
sv_core_heartbeat(sv_core *c, sv_wkey key, uint64_t now_ms)
{
	sv_cgroup *g = NULL;
	sv_seat   *s = NULL;
	sv_proc   *p = live_proc(c, key, &g, &s);

	if (p == NULL) {
		return SV_ENOTFOUND;
	}
	if (p->state == SV_PROC_RUNNING && g->pol.watchdog_ms > 0) {
		proc_arm(c, g, s, p, now_ms + g->pol.watchdog_ms);
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

	if (p != &s->cur || s->old.state != SV_PROC_NONE) {
		signal_proc(c, g, s, p, SIGKILL);
		p->killed = true;
		return;
	}
	s->old       = *p;
	s->old.state = SV_PROC_ABANDONED;
	s->old.guard = 0;
	s->cur       = (sv_proc) {0};
	if (s->in_plan) {
		return; /* the plan starts it again */
	}
	seat_after_exit(c, g, s, why, NULL, 0, 0, now_ms);
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
			emit(c, g, s, p, ev);
			roll_end(
			    c, g, "a new generation was not ready in time");
			proc_stop(c, g, s, p, SV_WHY_ROLL, now_ms);
			break;
		}
		ev.abandon
		    = g->pol.on_start_timeout == SV_START_TIMEOUT_ABANDON;
		emit(c, g, s, p, ev);
		if (ev.abandon) {
			proc_await(g, p, false);
		} else {
			proc_stop(c, g, s, p, SV_WHY_START_TIMEOUT, now_ms);
		}
		break;
	case SV_PROC_RUNNING:
		ev.phase = SV_PHASE_WATCHDOG;
		emit(c, g, s, p, ev);
		proc_stop(c, g, s, p, SV_WHY_WATCHDOG, now_ms);
		break;
	case SV_PROC_STOPPING:
		ev.phase = SV_PHASE_STOP;
		if (p->draining) {
			drain_deadline(c, g, s, p, ev);
			break;
		}
		ev.abandon = g->pol.on_unresponsive == SV_UNRESPONSIVE_ABANDON
		    && !c->shutting_down;
		emit(c, g, s, p, ev);
		if (ev.abandon) {
			proc_abandon(c, g, s, p, now_ms);
		} else if (!p->killed) {
			sv_event esc = {.kind = SV_EV_ESCALATED};
			signal_proc(c, g, s, p, SIGKILL);
			p->killed = true;
			emit(c, g, s, p, esc);
		}
		break;
	default:
		break;
	}
}

void
sv_core_timer(sv_core *c, sv_timer_kind kind, sv_wkey key, uint64_t guard,
    uint64_t now_ms)
{
	sv_cgroup *g = NULL;
	sv_seat   *s = NULL;
	sv_proc   *p;

	switch (kind) {
	case SV_TIMER_PLAN:
		if (c->plan.phase == PLAN_DELAY && guard == c->plan.guard) {
			plan_start(c, now_ms);
		}
		return;
	case SV_TIMER_SEAT:
		if ((g = group_find(c, key.group_id, NULL)) == NULL
		    || key.ordinal >= g->max_count) {
			return;
		}
		s = &g->seats[key.ordinal];
		if (!s->backoff || s->guard != guard) {
			return;
		}
		s->backoff = false;
		s->guard   = 0;
		if (seat_can_start(c, g, s)) {
			seat_set_pending(g, s, true);
		}
		return;
	case SV_TIMER_PROC:
		if ((p = live_proc(c, key, &g, &s)) == NULL
		    || p->guard != guard || guard == 0) {
			return;
		}
		proc_timer(c, g, s, p, now_ms);
		plan_step(c, now_ms);
		return;
	}
}

/* ---- operator requests ---------------------------------------------------
 */

sv_err
sv_core_create(sv_strategy strategy, sv_core **corep)
{
	sv_core *c = calloc(1, sizeof(*c));

	if (c == NULL) {
		return SV_ENOMEM;
	}
	c->strategy = strategy;
	c->next_id  = 1;
	sv_fxring_init(&c->fx, sizeof(sv_fx));
	*corep = c;
	return SV_OK;
}

void
sv_core_destroy(sv_core *c)
{
	if (c == NULL) {
		return;
	}
	for (size_t i = 0; i < c->ngroups; i++) {
		group_free(c->groups[i]);
	}
	free(c->groups);
	sv_drains_fini(&c->drains);
	sv_fxring_fini(&c->fx);
	free(c);
}

/* group_acquire holds free ordinals below the limit and schedules them. */
static void
group_acquire(sv_core *c, sv_cgroup *g, uint64_t now_ms)
{
	sv_ordtoken tok;

	while (sv_ordinals_acquire(&g->ords, &tok) == SV_OK) {
		sv_seat *s       = &g->seats[tok.ordinal];
		s->tok           = tok;
		s->used          = false;
		s->wanted        = true;
		s->fast_failures = 0;
		if (s->cur.state == SV_PROC_NONE) {
			seat_schedule(c, g, s, 0, now_ms);
		} else if (s->cur.state == SV_PROC_STOPPING) {
			/* Scaled down, then up again before the old process
			 * was reaped: its exit starts the new one. */
			s->cur.why = SV_WHY_RESTART;
		}
	}
}

sv_err
sv_core_add_group(sv_core *c, const char *name, const sv_group_policy *pol,
    uint32_t count, uint32_t max_count, uint32_t *idp)
{
	sv_cgroup **ng;
	sv_cgroup  *g;
	sv_err      err;
	sv_event    ev = {.kind = SV_EV_GROUP_CREATED};

	if (c->shutting_down) {
		return SV_EBUSY;
	}
	if (max_count == 0 || max_count > SV_ORDINALS_MAX || count > max_count
	    || name == NULL) {
		return SV_EINVAL;
	}
	if (c->ngroups >= SV_CORE_MAX_GROUPS) {
		return SV_EEXHAUSTED;
	}
	if ((ng = realloc(c->groups, (c->ngroups + 1) * sizeof(sv_cgroup *)))
	    == NULL) {
		return SV_ENOMEM;
	}
	c->groups = ng;
	if ((g = calloc(1, sizeof(*g))) == NULL) {
		return SV_ENOMEM;
	}
	g->pol       = *pol;
	g->max_count = max_count;
	g->cursor    = max_count;
	if ((g->name = strdup(name)) == NULL
	    || (g->seats = calloc(max_count, sizeof(*g->seats))) == NULL) {
		group_free(g);
		return SV_ENOMEM;
	}
	if ((err = sv_ordinals_init(&g->ords, count, max_count)) != SV_OK
	    || (err = sv_intensity_init(
	            &g->intensity, pol->max_restarts, pol->max_window_ms))
	        != SV_OK) {
		group_free(g);
		return err;
	}
	for (uint32_t o = 0; o < max_count; o++) {
		g->seats[o].ordinal = o;
	}
	g->id                   = c->next_id++;
	c->groups[c->ngroups++] = g;
	emit(c, g, NULL, NULL, ev);
	group_acquire(c, g, 0);
	*idp = g->id;
	return SV_OK;
}

sv_err
sv_core_restore(sv_core *c, uint32_t id, uint32_t ordinal,
    uint64_t next_generation, const sv_adoptee *a, uint64_t now_ms)
{
	sv_cgroup *g = group_find(c, id, NULL);
	sv_seat   *s;
	sv_proc   *p;
	sv_event   ev = {.kind = SV_EV_ADOPTED};

	if (g == NULL) {
		return SV_ENOTFOUND;
	}
	if (ordinal >= g->max_count) {
		return SV_EINVAL;
	}
	s = &g->seats[ordinal];
	if (c->shutting_down || s->cur.state != SV_PROC_NONE) {
		return SV_EBUSY;
	}
	if (s->used || (a != NULL && a->generation == UINT64_MAX)) {
		return SV_EINVAL;
	}
	if (a != NULL && a->generation + 1 > next_generation) {
		next_generation = a->generation + 1;
	}
	sv_ordinals_floor(&g->ords, ordinal, next_generation);
	if (s->wanted) {
		/* Its token moves to the adoptee's generation, or to the
		 * floor for the spawn to come. */
		uint64_t gen = a != NULL ? a->generation
		                         : (next_generation > s->tok.generation
		                                 ? next_generation
		                                 : s->tok.generation);
		if (sv_ordinals_restore(&g->ords, &s->tok, gen) != SV_OK) {
			return SV_EINVAL;
		}
	}
	if (a == NULL) {
		return SV_OK;
	}
	seat_set_pending(g, s, false);
	s->used = s->wanted;
	p       = &s->cur;
	*p      = (sv_proc) {.state = SV_PROC_RUNNING,
	         .generation        = a->generation,
	         .pid               = a->pid,
	         .started_ms        = now_ms,
	         .ready             = true};
	g->live++;
	c->live++;
	emit(c, g, s, p, ev);
	if (!s->wanted || a->stopping) {
		proc_stop(c, g, s, p,
		    s->wanted ? SV_WHY_RESTART : SV_WHY_UNWANTED, now_ms);
	} else if (g->pol.need_ready && !a->ready) {
		p->state = SV_PROC_STARTING;
		p->ready = false;
		proc_await(g, p, true);
		if (g->pol.start_timeout_ms > 0) {
			proc_arm(c, g, s, p, now_ms + g->pol.start_timeout_ms);
		}
	} else if (g->pol.watchdog_ms > 0) {
		proc_arm(c, g, s, p, now_ms + g->pol.watchdog_ms);
	}
	return SV_OK;
}

sv_err
sv_core_restore_release(sv_core *c, uint32_t id, uint32_t ordinal)
{
	sv_cgroup *g = group_find(c, id, NULL);
	sv_seat   *s;

	if (g == NULL) {
		return SV_ENOTFOUND;
	}
	if (ordinal >= g->max_count) {
		return SV_EINVAL;
	}
	s = &g->seats[ordinal];
	if (s->cur.state != SV_PROC_NONE || s->used) {
		return SV_EBUSY;
	}
	seat_cancel_backoff(c, g, s);
	seat_set_pending(g, s, false);
	s->in_plan = false;
	seat_release(g, s);
	return SV_OK;
}

/* group_for_request finds a group an operator may change. */
static sv_err
group_for_request(sv_core *c, uint32_t id, sv_cgroup **gp)
{
	if ((*gp = group_find(c, id, NULL)) == NULL) {
		return SV_ENOTFOUND;
	}
	if (c->shutting_down || (*gp)->deleting) {
		return SV_EBUSY;
	}
	return SV_OK;
}

sv_err
sv_core_delete_group(sv_core *c, uint32_t id, uint64_t now_ms)
{
	sv_cgroup *g = group_find(c, id, NULL);

	if (g == NULL) {
		return SV_ENOTFOUND;
	}
	if (g->deleting) {
		return SV_OK;
	}
	g->deleting = true;
	roll_end(c, g, "the group is being deleted");
	for (uint32_t o = g->max_count; o-- > 0;) {
		sv_seat *s = &g->seats[o];
		seat_stop(c, g, s, SV_WHY_DELETED, now_ms);
		old_stop(c, g, s, SV_WHY_DELETED, now_ms);
		if (s->old.state == SV_PROC_ABANDONED) {
			signal_proc(c, g, s, &s->old, SIGKILL);
		}
	}
	(void) group_maybe_delete(c, g);
	plan_step(c, now_ms);
	return SV_OK;
}

sv_err
sv_core_scale(sv_core *c, uint32_t id, uint32_t count, uint32_t *previousp,
    uint64_t now_ms)
{
	sv_cgroup *g = NULL;
	sv_err     err;
	uint32_t   excess[64];
	size_t     n;
	sv_event   ev = {.kind = SV_EV_GROUP_SCALED, .count = count};

	if ((err = group_for_request(c, id, &g)) != SV_OK) {
		return err;
	}
	if (count > g->max_count) {
		return SV_EEXHAUSTED;
	}
	ev.previous = g->ords.held;
	if (previousp != NULL) {
		*previousp = g->ords.held;
	}
	(void) sv_ordinals_set_limit(&g->ords, count);
	/* Scale-down: the allocator names the held ordinals >= count, highest
	 * first; each is stopped and released. Repeat in chunks. */
	while ((n = sv_ordinals_excess(&g->ords, excess, 64)) > 0) {
		n = n < 64 ? n : 64;
		for (size_t i = 0; i < n; i++) {
			sv_seat *s = &g->seats[excess[i]];
			seat_release(g, s);
			seat_stop(c, g, s, SV_WHY_UNWANTED, now_ms);
		}
	}
	group_acquire(c, g, now_ms);
	emit(c, g, NULL, NULL, ev);
	plan_step(c, now_ms);
	return SV_OK;
}

sv_err
sv_core_restart(sv_core *c, uint32_t id, uint32_t ordinal, bool has_expected,
    uint64_t expected_generation, uint64_t now_ms)
{
	sv_cgroup *g = NULL;
	sv_seat   *s;
	sv_err     err;

	if ((err = group_for_request(c, id, &g)) != SV_OK) {
		return err;
	}
	if (ordinal >= g->max_count || !g->seats[ordinal].wanted) {
		return SV_ENOTFOUND;
	}
	s = &g->seats[ordinal];
	if (has_expected && s->tok.generation != expected_generation) {
		return SV_ECONFLICT;
	}
	if (g->failed) {
		return SV_EBUSY;
	}
	if (s->cur.draining || s->rolling) {
		return SV_EBUSY; /* being drained, or a roll is replacing it */
	}
	s->fast_failures = 0;
	if (s->in_plan) {
		return SV_OK; /* the strategy restart in progress covers it */
	}
	switch (s->cur.state) {
	case SV_PROC_STARTING:
	case SV_PROC_RUNNING:
	case SV_PROC_STOPPING:
		proc_stop(c, g, s, &s->cur, SV_WHY_RESTART, now_ms);
		break;
	case SV_PROC_SPAWNING:
		break; /* the process on its way is the fresh start */
	default:
		/* A waiting seat starts now, under a new generation even if
		 * the one it waited with was never spawned: a retried request
		 * that expected the old one then gets SV_ECONFLICT instead of
		 * restarting the fresh process. */
		s->used = true;
		s->restarts++;
		seat_schedule(c, g, s, 0, now_ms);
		break;
	}
	return SV_OK;
}

sv_err
sv_core_reset(sv_core *c, uint32_t id, uint64_t now_ms)
{
	sv_cgroup *g = NULL;
	sv_err     err;
	sv_event   ev = {.kind = SV_EV_GROUP_RESET};

	if ((err = group_for_request(c, id, &g)) != SV_OK) {
		return err;
	}
	sv_intensity_reset(&g->intensity);
	for (uint32_t o = 0; o < g->max_count; o++) {
		g->seats[o].fast_failures = 0;
	}
	if (g->failed) {
		g->failed    = false;
		g->reason[0] = '\0';
		for (uint32_t o = 0; o < g->max_count; o++) {
			sv_seat *s = &g->seats[o];
			if (s->wanted && s->cur.state == SV_PROC_NONE) {
				seat_schedule(c, g, s, 0, now_ms);
			} else if (s->wanted && !s->cur.draining
			    && s->cur.state == SV_PROC_STOPPING) {
				s->cur.why = SV_WHY_RESTART;
			}
		}
	}
	emit(c, g, NULL, NULL, ev);
	return SV_OK;
}

sv_err
sv_core_start_one(sv_core *c, uint32_t id, uint32_t *ordinalp, uint64_t now_ms)
{
	sv_cgroup  *g = NULL;
	sv_ordtoken tok;
	sv_err      err;

	if ((err = group_for_request(c, id, &g)) != SV_OK) {
		return err;
	}
	while ((err = sv_ordinals_acquire(&g->ords, &tok)) == SV_EEXHAUSTED
	    && g->ords.limit < g->max_count) {
		(void) sv_ordinals_set_limit(&g->ords, g->ords.limit + 1);
	}
	if (err != SV_OK) {
		return SV_EEXHAUSTED;
	}
	g->seats[tok.ordinal].tok    = tok;
	g->seats[tok.ordinal].used   = false;
	g->seats[tok.ordinal].wanted = true;
	if (g->seats[tok.ordinal].cur.state == SV_PROC_NONE) {
		seat_schedule(c, g, &g->seats[tok.ordinal], 0, now_ms);
	} else if (g->seats[tok.ordinal].cur.state == SV_PROC_STOPPING) {
		/* Its exit starts the new worker (as in group_acquire). */
		g->seats[tok.ordinal].cur.why = SV_WHY_RESTART;
	}
	*ordinalp = tok.ordinal;
	return SV_OK;
}

sv_err
sv_core_terminate_one(
    sv_core *c, uint32_t id, uint32_t ordinal, uint64_t now_ms)
{
	sv_cgroup *g = NULL;
	sv_err     err;

	if ((err = group_for_request(c, id, &g)) != SV_OK) {
		return err;
	}
	if (ordinal >= g->max_count || !g->seats[ordinal].wanted) {
		return SV_ENOTFOUND;
	}
	seat_release(g, &g->seats[ordinal]);
	seat_stop(c, g, &g->seats[ordinal], SV_WHY_UNWANTED, now_ms);
	plan_step(c, now_ms);
	return SV_OK;
}

/* ---- drain and rolling restart -------------------------------------------
 *
 * A drained process is STOPPING with `draining` set: proc_stop leaves it
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
 * (roll_back) and nothing else is rolled.
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

/* drain_exited records the reap of process p (about to be forgotten). */
static void
drain_exited(sv_core *c, const sv_cgroup *g, const sv_seat *s,
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

/* proc_drain tells live process p of seat s to drain under report d: a
 * notice, the drain signal, the deadline timer. deadline_ms 0: the
 * group's. A process already draining stays in its first drain. */
static void
proc_drain(sv_core *c, sv_cgroup *g, sv_seat *s, sv_proc *p, sv_drain *d,
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
	if (sv_drain_add(d, &w) != SV_OK) {
		c->fx.lost = true; /* drained all the same, unreported */
	}
	proc_await(g, p, false);
	p->draining     = true;
	p->drain_id     = d->id;
	p->drain_cap_ms = w.cap_ms;
	p->why          = why;
	ev.drain_id     = d->id;
	ev.delay_ms     = deadline_ms;
	emit(c, g, s, p, ev);
	sig = g->pol.drain_signal < 0 ? g->pol.stop_signal
	                              : g->pol.drain_signal;
	if (p->state != SV_PROC_STOPPING && sig != 0) {
		signal_proc(c, g, s, p, sig);
		p->killed = sig == SIGKILL;
	}
	p->state = SV_PROC_STOPPING;
	proc_arm(c, g, s, p, w.deadline_ms);
}

/* drain_deadline: a draining process reached its deadline: SIGKILL. */
static void
drain_deadline(sv_core *c, sv_cgroup *g, sv_seat *s, sv_proc *p, sv_event ev)
{
	sv_event    esc = {.kind = SV_EV_ESCALATED};
	sv_drained *w   = drain_row(c, g, s->ordinal, p);

	ev.abandon = false;
	emit(c, g, s, p, ev);
	if (w != NULL) {
		w->killed = true;
	}
	if (!p->killed) {
		signal_proc(c, g, s, p, SIGKILL);
		p->killed = true;
		emit(c, g, s, p, esc);
	}
}

/* old_stop stops the live old generation of a roll overlap (the seat's
 * process will not come back to it). */
static void
old_stop(sv_core *c, sv_cgroup *g, sv_seat *s, sv_why why, uint64_t now_ms)
{
	if (s->old.state == SV_PROC_STARTING || s->old.state == SV_PROC_RUNNING
	    || s->old.state == SV_PROC_STOPPING) {
		proc_stop(c, g, s, &s->old, why, now_ms);
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
		roll_end(c, g, "drained");
	}
	if (s->old.state == SV_PROC_STARTING || s->old.state == SV_PROC_RUNNING
	    || (s->old.state == SV_PROC_STOPPING && !s->old.draining)) {
		proc_drain(
		    c, g, s, &s->old, d, deadline_ms, SV_WHY_DRAINED, now_ms);
		any = true;
	}
	switch (s->cur.state) {
	case SV_PROC_STARTING:
	case SV_PROC_RUNNING:
	case SV_PROC_STOPPING:
		seat_release(g, s);
		seat_cancel_backoff(c, g, s);
		seat_set_pending(g, s, false);
		s->in_plan = false;
		proc_drain(
		    c, g, s, &s->cur, d, deadline_ms, SV_WHY_DRAINED, now_ms);
		return true;
	case SV_PROC_SPAWNING:
		seat_release(g, s);
		s->in_plan           = false;
		s->drain_on_spawn    = d->id;
		s->drain_on_spawn_ms = deadline_ms;
		return true;
	default:
		break;
	}
	if (s->wanted) {
		seat_rest(c, g, s, SV_WHY_DRAINED, true);
	}
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
		if ((err = group_for_request(c, id, &g)) != SV_OK) {
			return err;
		}
		if (scope == SV_DRAIN_WORKER
		    && (ordinal >= g->max_count
		        || (g->seats[ordinal].cur.state != SV_PROC_SPAWNING
		            && g->seats[ordinal].cur.state != SV_PROC_STARTING
		            && g->seats[ordinal].cur.state != SV_PROC_RUNNING
		            && g->seats[ordinal].cur.state
		                != SV_PROC_STOPPING))) {
			return SV_ENOTFOUND;
		}
	}
	if ((err = sv_drains_open(&c->drains, false, &d)) != SV_OK) {
		return err;
	}
	for (size_t gi = 0; gi < c->ngroups; gi++) {
		sv_cgroup *cg = c->groups[gi];
		if ((g != NULL && cg != g) || cg->deleting) {
			continue;
		}
		for (uint32_t o = 0; o < cg->max_count; o++) {
			if (scope != SV_DRAIN_WORKER || o == ordinal) {
				(void) seat_drain(c, cg, &cg->seats[o], d,
				    deadline_ms, now_ms);
			}
		}
	}
	plan_step(c, now_ms);
	*drain_idp = d->id;
	return SV_OK;
}

sv_err
sv_core_drain_extend(sv_core *c, sv_wkey key, uint64_t more_ms,
    uint64_t now_ms, uint64_t *deadlinep)
{
	sv_cgroup  *g = NULL;
	sv_seat    *s = NULL;
	sv_proc    *p = live_proc(c, key, &g, &s);
	sv_drained *w;
	uint64_t    due;

	if (p == NULL || !p->draining) {
		return SV_ENOTFOUND;
	}
	due = more_ms > UINT64_MAX - now_ms ? UINT64_MAX : now_ms + more_ms;
	if (due > p->drain_cap_ms) {
		due = p->drain_cap_ms;
	}
	if (p->guard != 0 && due > p->due_ms) {
		proc_arm(c, g, s, p, due);
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
	sv_proc    *p = live_proc(c, key, &g, &s);
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
	sv_proc   *p = live_proc((sv_core *) c, key, &g, &s);

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

/* roll_end ends group g's roll (reason: why it stopped early, NULL: it is
 * complete). */
static void
roll_end(sv_core *c, sv_cgroup *g, const char *reason)
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
	emit(c, g, NULL, NULL, ev);
}

/* roll_step starts the overlap of the next ordinal to roll, or ends the
 * roll when none is left. Waits while a seat is rolling. */
static void
roll_step(sv_core *c, sv_cgroup *g, uint64_t now_ms)
{
	(void) now_ms;
	if (!g->roll.active) {
		return;
	}
	for (uint32_t o = g->roll.next; o < g->max_count; o++) {
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
			roll_end(c, g,
			    "an ordinal still has an old process (abandoned "
			    "or draining)");
			return;
		}
		g->roll.next = o;
		s->old       = s->cur;
		s->cur       = (sv_proc) {0};
		s->rolling   = true;
		seat_renew(g, s);
		seat_set_pending(g, s, true);
		return;
	}
	roll_end(c, g, NULL);
}

/* roll_advance: the new generation of rolling seat s is ready: the old
 * one is drained, the roll goes on with the next ordinal. */
static void
roll_advance(sv_core *c, sv_cgroup *g, sv_seat *s, uint64_t now_ms)
{
	sv_drain *d = sv_drains_find(&c->drains, g->roll.drain_id);

	s->rolling = false;
	if (s->old.state == SV_PROC_RUNNING
	    || s->old.state == SV_PROC_STARTING) {
		if (d != NULL && g->roll.active) {
			proc_drain(
			    c, g, s, &s->old, d, 0, SV_WHY_ROLL, now_ms);
		} else {
			proc_stop(c, g, s, &s->old, SV_WHY_ROLL, now_ms);
		}
	}
	g->roll.next = s->ordinal + 1;
	roll_step(c, g, now_ms);
}

/* roll_back: the new generation of rolling seat s is gone before it was
 * ready: the old process becomes the seat's again and the roll stops.
 * Returns false when there is no old process left (the seat then goes on
 * as after any exit). */
static bool
roll_back(sv_core *c, sv_cgroup *g, sv_seat *s, uint64_t now_ms)
{
	s->rolling = false;
	roll_end(c, g, "a new generation exited or could not start");
	if (s->old.state == SV_PROC_NONE
	    || s->old.state == SV_PROC_ABANDONED) {
		return false;
	}
	s->cur = s->old;
	s->old = (sv_proc) {0};
	if (!seat_can_start(c, g, s) || !s->wanted) {
		proc_stop(c, g, s, &s->cur,
		    c->shutting_down  ? SV_WHY_SHUTDOWN
		        : g->deleting ? SV_WHY_DELETED
		        : g->failed   ? SV_WHY_FAILED
		                      : SV_WHY_UNWANTED,
		    now_ms);
	}
	return true;
}

sv_err
sv_core_roll(sv_core *c, uint32_t id, uint64_t ready_timeout_ms,
    uint64_t now_ms, uint64_t *drain_idp)
{
	sv_cgroup *g = NULL;
	sv_drain  *d = NULL;
	sv_err     err;

	if ((err = group_for_request(c, id, &g)) != SV_OK) {
		return err;
	}
	if (g->failed || g->roll.active) {
		return SV_EBUSY;
	}
	if ((err = sv_drains_open(&c->drains, true, &d)) != SV_OK) {
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
	roll_step(c, g, now_ms);
	*drain_idp = d->id;
	return SV_OK;
}

/* ---- shutdown ------------------------------------------------------------
 */

void
sv_core_shutdown(sv_core *c, uint64_t now_ms)
{
	bool again = c->shutting_down;

	c->shutting_down = true;
	if (c->plan.phase == PLAN_DELAY) {
		timer_cancel(c, SV_TIMER_PLAN, (sv_wkey) {0, 0, 0});
	}
	c->plan.phase = PLAN_IDLE;
	for (size_t gi = c->ngroups; gi-- > 0;) {
		sv_cgroup *g = c->groups[gi];
		roll_end(c, g, "the supervisor is shutting down");
		for (uint32_t o = g->max_count; o-- > 0;) {
			sv_seat *s = &g->seats[o];
			if (again) {
				if (s->cur.state != SV_PROC_NONE
				    && s->cur.state != SV_PROC_SPAWNING) {
					signal_proc(c, g, s, &s->cur, SIGKILL);
					s->cur.killed = true;
				}
			} else {
				seat_stop(c, g, s, SV_WHY_SHUTDOWN, now_ms);
				old_stop(c, g, s, SV_WHY_SHUTDOWN, now_ms);
			}
			if (s->old.state == SV_PROC_ABANDONED
			    || (again && s->old.state != SV_PROC_NONE)) {
				signal_proc(c, g, s, &s->old, SIGKILL);
				s->old.killed = true;
			}
		}
	}
}

/* ---- queries and names ---------------------------------------------------
 */

const sv_cgroup *
sv_core_group(const sv_core *c, uint32_t id)
{
	return group_find(c, id, NULL);
}

const sv_cgroup *
sv_core_group_named(const sv_core *c, const char *name)
{
	for (size_t i = 0; i < c->ngroups; i++) {
		if (strcmp(c->groups[i]->name, name) == 0) {
			return c->groups[i];
		}
	}
	return NULL;
}

size_t
sv_core_ngroups(const sv_core *c)
{
	return c->ngroups;
}

const sv_cgroup *
sv_core_group_at(const sv_core *c, size_t i)
{
	return i < c->ngroups ? c->groups[i] : NULL;
}

uint32_t
sv_core_group_count(const sv_cgroup *g)
{
	return g->ords.held;
}

sv_seat_state
sv_core_seat_state(const sv_cgroup *g, const sv_seat *s)
{
	switch (s->cur.state) {
	case SV_PROC_SPAWNING:
	case SV_PROC_STARTING:
		return SV_SEAT_STARTING;
	case SV_PROC_RUNNING:
		return SV_SEAT_RUNNING;
	case SV_PROC_STOPPING:
		return s->cur.draining ? SV_SEAT_DRAINING : SV_SEAT_STOPPING;
	default:
		break;
	}
	if (!s->wanted) {
		return SV_SEAT_EMPTY;
	}
	if (g->failed) {
		return SV_SEAT_FAILED;
	}
	if (s->in_plan) {
		return SV_SEAT_WAITING;
	}
	if (s->backoff) {
		return SV_SEAT_BACKOFF;
	}
	return s->pending ? SV_SEAT_STARTING : SV_SEAT_IDLE;
}

size_t
sv_core_live(const sv_core *c)
{
	return c->live;
}

bool
sv_core_shutting_down(const sv_core *c)
{
	return c->shutting_down;
}

bool
sv_core_done(const sv_core *c)
{
	return c->shutting_down && c->live == 0;
}

const char *
sv_why_name(sv_why why)
{
	static const char *const names[]
	    = {"exited", "restart", "strategy", "unwanted", "shutdown",
	        "group failed", "watchdog", "start timeout", "completed",
	        "group deleted", "drained", "rolling restart"};

	return (size_t) why < sizeof(names) / sizeof(names[0]) ? names[why]
	                                                       : "?";
}

static const char *const restart_type_names[]
    = {"permanent", "transient", "temporary"};

const char *
sv_restart_type_name(sv_restart_type t)
{
	return (size_t) t < 3 ? restart_type_names[t] : "?";
}

bool
sv_restart_type_parse(const char *name, sv_restart_type *t)
{
	for (size_t i = 0; i < 3; i++) {
		if (strcmp(name, restart_type_names[i]) == 0) {
			*t = (sv_restart_type) i;
			return true;
		}
	}
	return false;
}

const char *
sv_seat_state_name(sv_seat_state s)
{
	static const char *const names[] = {"empty", "starting", "running",
	    "stopping", "backoff", "waiting", "failed", "idle", "draining"};

	return (size_t) s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}
