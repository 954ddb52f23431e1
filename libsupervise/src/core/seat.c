/*
 * seat.c — groups, seats and process records of the supervision core: finding
 * a group, the seat helpers the seat table's callers share (schedule, rest,
 * stop: each fires one event through seat_table.c), releasing an ordinal,
 * and arming, stopping and forgetting the process records on a seat.
 * Decisions about what happens next live in plan.c.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/supervision_internal.h"

/* ---- groups and seats ----------------------------------------------------
 */

/* svs_group_find returns the group with id, and its position in *posp. */
sv_cgroup *
svs_group_find(const sv_core *c, uint32_t id, size_t *posp)
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

/* svs_group_pos returns the position of g in start order. */
size_t
svs_group_pos(const sv_core *c, const sv_cgroup *g)
{
	size_t pos = 0;
	(void) svs_group_find(c, g->id, &pos);
	return pos;
}

/* Fewest seats a group's array grows to at once. */
#define SEATS_MIN 4u

/* svs_seats_reserve makes seats 0..n-1 exist, growing the array to twice
 * its size at least (bounded by max_count), so a group that scales up one
 * worker at a time reallocates O(log n) times. The array belongs to the
 * group and is freed by svs_group_free. */
sv_err
svs_seats_reserve(sv_cgroup *g, uint32_t n)
{
	uint32_t cap;
	sv_seat *ns;

	if (n > g->max_count) {
		n = g->max_count;
	}
	if (n <= g->nseats) {
		return SV_OK;
	}
	cap = g->nseats > g->max_count / 2 ? g->max_count : 2 * g->nseats;
	if (cap < n) {
		cap = n;
	}
	if (cap < SEATS_MIN) {
		cap = g->max_count < SEATS_MIN ? g->max_count : SEATS_MIN;
	}
	if ((ns = sv_mem_realloc(g->seats, (size_t) cap * sizeof(*ns)))
	    == NULL) {
		return SV_ENOMEM;
	}
	memset(ns + g->nseats, 0, (size_t) (cap - g->nseats) * sizeof(*ns));
	for (uint32_t o = g->nseats; o < cap; o++) {
		ns[o].ordinal = o;
	}
	g->seats  = ns;
	g->nseats = cap;
	return SV_OK;
}

/* svs_seat_renew gives the seat the next generation if the current one has
 * already been spawned. */
void
svs_seat_renew(sv_cgroup *g, sv_seat *s)
{
	if (s->used) {
		(void) sv_ordinals_renew(&g->ords, &s->tok);
		s->used = false;
	}
}

/* svs_seat_can_start tells whether a seat may get a process at all. */
bool
svs_seat_can_start(const sv_core *c, const sv_cgroup *g, const sv_seat *s)
{
	return s->wanted && !c->shutting_down && !g->failed && !g->deleting;
}

/* svs_seat_schedule makes a seat start after delay_ms (0: at the next
 * sv_core_next_spawn), with a fresh generation; a seat that may not start
 * loses its scheduled start instead. Fires QUEUE, DELAY or HALT. */
void
svs_seat_schedule(
    sv_core *c, sv_cgroup *g, sv_seat *s, uint64_t delay_ms, uint64_t now_ms)
{
	svs_seat_arg a = {.delay_ms = delay_ms, .now_ms = now_ms};

	if (!svs_seat_can_start(c, g, s)) {
		svs_seat_fire(c, g, s, SEV_HALT, &a);
	} else {
		svs_seat_fire(
		    c, g, s, delay_ms == 0 ? SEV_QUEUE : SEV_DELAY, &a);
	}
}

/* svs_seat_release gives the ordinal back (the worker is no longer wanted). */
void
svs_seat_release(sv_cgroup *g, sv_seat *s)
{
	if (s->wanted) {
		(void) sv_ordinals_release(&g->ords, s->tok);
		s->wanted = false;
	}
}

/* svs_seat_rest settles a seat that has no process and will not restart:
 * nothing scheduled, STOPPED(why), the ordinal released if release.
 * Fires REST. */
void
svs_seat_rest(sv_core *c, sv_cgroup *g, sv_seat *s, sv_why why, bool release)
{
	svs_seat_arg a = {.why = why, .release = release};

	svs_seat_fire(c, g, s, SEV_REST, &a);
}

/* svs_group_free frees a group's memory. NULL is ignored. */
void
svs_group_free(sv_cgroup *g)
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

/* svs_group_maybe_delete removes a group being deleted once nothing is alive.
 * Returns true when it was removed (g is then gone). */
bool
svs_group_maybe_delete(sv_core *c, sv_cgroup *g)
{
	size_t   pos = 0;
	sv_event ev  = {.kind = SV_EV_GROUP_DELETED};

	if (!g->deleting || g->live > 0) {
		return false;
	}
	(void) svs_group_find(c, g->id, &pos);
	svs_emit(c, g, NULL, NULL, ev);
	memmove(&c->groups[pos], &c->groups[pos + 1],
	    (c->ngroups - pos - 1) * sizeof(sv_cgroup *));
	c->ngroups--;
	/* Positions after pos moved down by one: keep the plan's range. */
	if (c->plan.phase != PLAN_IDLE && c->plan.first.group > pos) {
		c->plan.first.group--;
	} else if (c->plan.phase != PLAN_IDLE && c->plan.first.group == pos) {
		c->plan.first.ordinal = 0;
	}
	svs_group_free(g);
	return true;
}

/* ---- process records -----------------------------------------------------
 */

/* svs_proc_find returns the process of a seat with the given generation. */
sv_proc *
svs_proc_find(const sv_core *c, sv_seat *s, uint64_t generation)
{
	sv_proc *old = svs_old(c, s);

	if (s->cur.state != SV_PROC_NONE && s->cur.generation == generation) {
		return &s->cur;
	}
	if (old != NULL && old->generation == generation) {
		return old;
	}
	return NULL;
}

/* svs_old returns seat s's second process record, NULL when it has none
 * (a record in use always holds a process: its state is not NONE). */
sv_proc *
svs_old(const sv_core *c, const sv_seat *s)
{
	return sv_oldrecs_at(&c->olds, s->old);
}

/* sv_core_seat_old: see supervision.h. */
const sv_proc *
sv_core_seat_old(const sv_core *c, const sv_seat *s)
{
	static const sv_proc none = {.state = SV_PROC_NONE};
	const sv_proc       *old  = svs_old(c, s);

	return old != NULL ? old : &none;
}

/* svs_old_state is the state of seat s's second process (NONE: none). */
sv_pstate
svs_old_state(const sv_core *c, const sv_seat *s)
{
	const sv_proc *old = svs_old(c, s);

	return old != NULL ? (sv_pstate) old->state : SV_PROC_NONE;
}

/* svs_proc_arm arms the timer of a process at due_ms. */
void
svs_proc_arm(sv_core *c, const sv_cgroup *g, const sv_seat *s, sv_proc *p,
    uint64_t due_ms)
{
	p->due_ms = due_ms;
	p->guard
	    = svs_timer_arm(c, SV_TIMER_PROC, svs_key_of(g, s, p), due_ms);
}

/* svs_proc_await sets whether an ordered start still waits for p. */
void
svs_proc_await(sv_cgroup *g, sv_proc *p, bool on)
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

/* svs_proc_forget clears process record p of seat s after its reap; the
 * second one goes back to the pool. */
void
svs_proc_forget(sv_core *c, sv_cgroup *g, sv_seat *s, sv_proc *p)
{
	svs_proc_await(g, p, false);
	if (p == &s->cur) {
		*p = (sv_proc) {0};
	} else {
		sv_oldrecs_put(&c->olds, s->old);
		s->old = 0;
	}
	g->live--;
	c->live--;
}

/* svs_proc_stop asks a live process to stop: the group's stop signal (SIGKILL
 * if the stop timeout is 0), then the stop timer. A process already
 * stopping keeps its first reason, except that an operator restart, a
 * shutdown or a failure overrides a reason that would restart it
 * differently. */
void
svs_proc_stop(sv_core *c, sv_cgroup *g, sv_seat *s, sv_proc *p, sv_why why,
    uint64_t now_ms)
{
	svs_proc_stop_by(c, g, s, p, why, now_ms, 0);
}

/* svs_proc_stop_by is svs_proc_stop with the SIGKILL deadline given:
 * deadline_ms (absolute, now_ms's clock) if it is not 0 and comes before
 * the stop timeout would end (a deadline already past: SIGKILL at once,
 * through the stop timer), else now_ms + the stop timeout. The STOPPING
 * event carries the deadline chosen (0: SIGKILL sent now) so the shell can
 * journal it. */
void
svs_proc_stop_by(sv_core *c, sv_cgroup *g, sv_seat *s, sv_proc *p, sv_why why,
    uint64_t now_ms, uint64_t deadline_ms)
{
	sv_event ev = {.kind = SV_EV_STOPPING, .why = why};
	int      sig;
	uint64_t due = now_ms + g->pol.stop_timeout_ms;

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
	svs_proc_await(g, p, false);
	p->state  = SV_PROC_STOPPING;
	p->why    = why;
	sig       = g->pol.stop_timeout_ms == 0 ? SIGKILL : g->pol.stop_signal;
	p->killed = sig == SIGKILL;
	if (deadline_ms != 0 && deadline_ms < due) {
		due = deadline_ms < now_ms ? now_ms : deadline_ms;
	}
	ev.deadline_ms = sig == SIGKILL ? 0 : due;
	svs_emit(c, g, s, p, ev);
	svs_signal_proc(c, g, s, p, sig);
	if (g->pol.stop_timeout_ms > 0) {
		svs_proc_arm(c, g, s, p, due);
	} else {
		p->guard = 0;
		svs_timer_cancel(c, SV_TIMER_PROC, svs_key_of(g, s, p));
	}
}

/* svs_seat_stop stops whatever runs on a seat (both generations of a roll
 * overlap), or settles it if it only waited. Fires STOP. */
void
svs_seat_stop(
    sv_core *c, sv_cgroup *g, sv_seat *s, sv_why why, uint64_t now_ms)
{
	svs_seat_arg a = {.why = why, .release = !s->wanted, .now_ms = now_ms};

	if (s->rolling) {
		/* Neither generation of a roll overlap stays. */
		svs_old_stop(c, g, s, why, now_ms);
	}
	svs_seat_fire(c, g, s, SEV_STOP, &a);
}
