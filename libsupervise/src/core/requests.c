/*
 * requests.c — operator requests to the supervision core: adding, restoring
 * and deleting groups, scale, restart, reset, start-one, terminate-one, and
 * shutdown. Each validates, then changes seats through seat.c and plan.c.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/supervision_internal.h"

/* group_acquire holds free ordinals below the limit and schedules them. */
static void
group_acquire(sv_core *c, sv_cgroup *g, uint64_t now_ms)
{
	sv_ordtoken  tok;
	svs_seat_arg a = {.now_ms = now_ms};

	while (sv_ordinals_acquire(&g->ords, &tok) == SV_OK) {
		sv_seat *s       = &g->seats[tok.ordinal];
		s->tok           = tok;
		s->used          = false;
		s->wanted        = true;
		s->fast_failures = 0;
		/* Scaled down, then up again before the old process was
		 * reaped: its exit starts the new one. */
		svs_seat_fire(c, g, s, SEV_HOLD, &a);
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
	/* Every allocation and the effect reservation come before the core
	 * changes: a larger groups array alone changes nothing. The group is
	 * freed by svs_group_free (on an error here, or when deleted). */
	ng = sv_mem_realloc(c->groups, (c->ngroups + 1) * sizeof(sv_cgroup *));
	if (ng == NULL) {
		return SV_ENOMEM;
	}
	c->groups = ng;
	if ((g = sv_mem_calloc(1, sizeof(*g))) == NULL) {
		return SV_ENOMEM;
	}
	g->pol       = *pol;
	g->max_count = max_count;
	g->cursor    = max_count;
	/* Seats are made for the ordinals held at first (count); more come
	 * as more become live (svs_seats_reserve), not max_count up front. */
	if ((g->name = sv_mem_strdup(name)) == NULL
	    || svs_seats_reserve(g, count) != SV_OK) {
		svs_group_free(g);
		return SV_ENOMEM;
	}
	if ((err = sv_ordinals_init(&g->ords, count, max_count)) != SV_OK
	    || (err = sv_intensity_init(
	            &g->intensity, pol->max_restarts, pol->max_window_ms))
	        != SV_OK
	    || (err = svs_fx_reserve(c, svs_fx_bound_group(g, count)))
	        != SV_OK) {
		svs_group_free(g);
		return err;
	}
	g->id                   = c->next_id++;
	c->groups[c->ngroups++] = g;
	svs_emit(c, g, NULL, NULL, ev);
	group_acquire(c, g, 0);
	*idp = g->id;
	return SV_OK;
}

/* restore_seat finds the seat of group id a restore names, growing the
 * group's seat array to hold it (a larger array alone changes nothing).
 * Errors: SV_ENOTFOUND (no group id), SV_EINVAL (ordinal >= max_count),
 * SV_ENOMEM. */
static sv_err
restore_seat(
    sv_core *c, uint32_t id, uint32_t ordinal, sv_cgroup **gp, sv_seat **sp)
{
	sv_cgroup *g = svs_group_find(c, id, NULL);

	if (g == NULL) {
		return SV_ENOTFOUND;
	}
	if (ordinal >= g->max_count) {
		return SV_EINVAL;
	}
	if (svs_seats_reserve(g, ordinal + 1) != SV_OK) {
		return SV_ENOMEM;
	}
	*gp = g;
	*sp = &g->seats[ordinal];
	return SV_OK;
}

sv_err
sv_core_restore(sv_core *c, uint32_t id, uint32_t ordinal,
    uint64_t next_generation, const sv_adoptee *a, uint64_t now_ms)
{
	sv_cgroup *g   = NULL;
	sv_seat   *s   = NULL;
	sv_err     err = restore_seat(c, id, ordinal, &g, &s);

	if (err != SV_OK) {
		return err;
	}
	if (c->shutting_down || s->cur.state != SV_PROC_NONE) {
		return SV_EBUSY;
	}
	if (s->used || (a != NULL && a->generation == UINT64_MAX)) {
		return SV_EINVAL;
	}
	if (svs_fx_reserve(c, svs_fx_bound_seat()) != SV_OK) {
		return SV_ENOMEM;
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
	svs_seat_fire(c, g, s, SEV_ADOPT,
	    &(svs_seat_arg) {.adoptee = a, .now_ms = now_ms});
	return SV_OK;
}

sv_err
sv_core_restore_release(sv_core *c, uint32_t id, uint32_t ordinal)
{
	sv_cgroup *g   = NULL;
	sv_seat   *s   = NULL;
	sv_err     err = restore_seat(c, id, ordinal, &g, &s);

	if (err != SV_OK) {
		return err;
	}
	if (s->cur.state != SV_PROC_NONE || s->used) {
		return SV_EBUSY;
	}
	if (svs_fx_reserve(c, svs_fx_bound_seat()) != SV_OK) {
		return SV_ENOMEM;
	}
	svs_seat_fire(c, g, s, SEV_RELEASE, NULL);
	return SV_OK;
}

/* svs_group_for_request finds a group an operator may change. */
sv_err
svs_group_for_request(sv_core *c, uint32_t id, sv_cgroup **gp)
{
	if ((*gp = svs_group_find(c, id, NULL)) == NULL) {
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
	sv_cgroup *g = svs_group_find(c, id, NULL);

	if (g == NULL) {
		return SV_ENOTFOUND;
	}
	if (g->deleting) {
		return SV_OK;
	}
	if (svs_fx_reserve(c, svs_fx_bound(c, g, 0)) != SV_OK) {
		return SV_ENOMEM;
	}
	g->deleting = true;
	svs_roll_end(c, g, "the group is being deleted");
	for (uint32_t o = g->nseats; o-- > 0;) {
		sv_seat *s = &g->seats[o];
		svs_seat_stop(c, g, s, SV_WHY_DELETED, now_ms);
		svs_old_stop(c, g, s, SV_WHY_DELETED, now_ms);
		if (svs_old_state(c, s) == SV_PROC_ABANDONED) {
			svs_signal_proc(c, g, s, svs_old(c, s), SIGKILL);
		}
	}
	(void) svs_group_maybe_delete(c, g);
	svs_plan_step(c, now_ms);
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

	if ((err = svs_group_for_request(c, id, &g)) != SV_OK) {
		return err;
	}
	if (count > g->max_count) {
		return SV_EEXHAUSTED;
	}
	if (svs_fx_reserve(c, svs_fx_bound(c, g, count)) != SV_OK
	    || svs_seats_reserve(g, count) != SV_OK) {
		return SV_ENOMEM;
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
			svs_seat_release(g, s);
			svs_seat_stop(c, g, s, SV_WHY_UNWANTED, now_ms);
		}
	}
	group_acquire(c, g, now_ms);
	svs_emit(c, g, NULL, NULL, ev);
	svs_plan_step(c, now_ms);
	return SV_OK;
}

sv_err
sv_core_restart(sv_core *c, uint32_t id, uint32_t ordinal, bool has_expected,
    uint64_t expected_generation, uint64_t now_ms)
{
	sv_cgroup *g = NULL;
	sv_seat   *s;
	sv_err     err;

	if ((err = svs_group_for_request(c, id, &g)) != SV_OK) {
		return err;
	}
	if (ordinal >= g->nseats || !g->seats[ordinal].wanted) {
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
	if (svs_fx_reserve(c, svs_fx_bound_seat()) != SV_OK) {
		return SV_ENOMEM;
	}
	s->fast_failures = 0;
	if (s->in_plan) {
		return SV_OK; /* the strategy restart in progress covers it */
	}
	/* A live process stops and comes back (one on its way is the fresh
	 * start); a waiting seat starts now, under a new generation even if
	 * the one it waited with was never spawned: a retried request that
	 * expected the old one then gets SV_ECONFLICT instead of restarting
	 * the fresh process. */
	svs_seat_fire(
	    c, g, s, SEV_RESTART, &(svs_seat_arg) {.now_ms = now_ms});
	return SV_OK;
}

sv_err
sv_core_reset(sv_core *c, uint32_t id, uint64_t now_ms)
{
	sv_cgroup *g = NULL;
	sv_err     err;
	sv_event   ev = {.kind = SV_EV_GROUP_RESET};

	if ((err = svs_group_for_request(c, id, &g)) != SV_OK) {
		return err;
	}
	if (svs_fx_reserve(c, svs_fx_bound_group(g, 0)) != SV_OK) {
		return SV_ENOMEM;
	}
	sv_intensity_reset(&g->intensity);
	for (uint32_t o = 0; o < g->nseats; o++) {
		g->seats[o].fast_failures = 0;
	}
	if (g->failed) {
		g->failed    = false;
		g->reason[0] = '\0';
		for (uint32_t o = 0; o < g->nseats; o++) {
			sv_seat *s = &g->seats[o];
			if (s->wanted) {
				svs_seat_fire(c, g, s, SEV_RESET,
				    &(svs_seat_arg) {.now_ms = now_ms});
			}
		}
	}
	svs_emit(c, g, NULL, NULL, ev);
	return SV_OK;
}

sv_err
sv_core_start_one(sv_core *c, uint32_t id, uint32_t *ordinalp, uint64_t now_ms)
{
	sv_cgroup  *g = NULL;
	sv_ordtoken tok;
	sv_err      err;

	if ((err = svs_group_for_request(c, id, &g)) != SV_OK) {
		return err;
	}
	/* The lowest free ordinal is at most the number held. */
	if (svs_fx_reserve(c, svs_fx_bound_seat()) != SV_OK
	    || (g->ords.held < g->max_count
	        && svs_seats_reserve(g, g->ords.held + 1) != SV_OK)) {
		return SV_ENOMEM;
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
	/* A process still stopping there starts the new worker when it is
	 * reaped (as in group_acquire). */
	svs_seat_fire(c, g, &g->seats[tok.ordinal], SEV_HOLD,
	    &(svs_seat_arg) {.now_ms = now_ms});
	*ordinalp = tok.ordinal;
	return SV_OK;
}

sv_err
sv_core_terminate_one(
    sv_core *c, uint32_t id, uint32_t ordinal, uint64_t now_ms)
{
	sv_cgroup *g = NULL;
	sv_err     err;

	if ((err = svs_group_for_request(c, id, &g)) != SV_OK) {
		return err;
	}
	if (ordinal >= g->nseats || !g->seats[ordinal].wanted) {
		return SV_ENOTFOUND;
	}
	if (svs_fx_reserve(c, svs_fx_bound(c, g, 0)) != SV_OK) {
		return SV_ENOMEM;
	}
	svs_seat_release(g, &g->seats[ordinal]);
	svs_seat_stop(c, g, &g->seats[ordinal], SV_WHY_UNWANTED, now_ms);
	svs_plan_step(c, now_ms);
	return SV_OK;
}

/* ---- shutdown ------------------------------------------------------------
 */

sv_err
sv_core_shutdown(sv_core *c, uint64_t now_ms)
{
	bool again = c->shutting_down;

	if (svs_fx_reserve(c, svs_fx_bound(c, NULL, 0)) != SV_OK) {
		return SV_ENOMEM;
	}
	c->shutting_down = true;
	if (c->plan.phase == PLAN_DELAY) {
		svs_timer_cancel(c, SV_TIMER_PLAN, (sv_wkey) {0, 0, 0});
	}
	c->plan.phase = PLAN_IDLE;
	for (size_t gi = c->ngroups; gi-- > 0;) {
		sv_cgroup *g = c->groups[gi];
		svs_roll_end(c, g, "the supervisor is shutting down");
		for (uint32_t o = g->nseats; o-- > 0;) {
			sv_seat *s = &g->seats[o];
			if (again) {
				if (s->cur.state != SV_PROC_NONE
				    && s->cur.state != SV_PROC_SPAWNING) {
					svs_signal_proc(
					    c, g, s, &s->cur, SIGKILL);
					s->cur.killed = true;
				}
			} else {
				svs_seat_stop(
				    c, g, s, SV_WHY_SHUTDOWN, now_ms);
				svs_old_stop(c, g, s, SV_WHY_SHUTDOWN, now_ms);
			}
			sv_proc *old = svs_old(c, s);
			if (old != NULL
			    && (old->state == SV_PROC_ABANDONED || again)) {
				svs_signal_proc(c, g, s, old, SIGKILL);
				old->killed = true;
			}
		}
	}
	return SV_OK;
}
