/*
 * seat_view.c — the seat view: what the daemon shows clients about a seat
 * (state as shown, generation, pid, readiness, drain, uptime and backoff
 * inputs, restarts, last exit), and about the old generation a roll or a
 * drain keeps beside it.
 *
 * The daemon's requests (ListWorkers, GetStatus, ListGroups, WhoAmI, Ready)
 * and its journal read a seat only through this plain copy, so the rules
 * "which generation is shown when no process is held", "is the old process
 * listed" and "how is it shown" live here once, next to the seat they
 * describe, instead of being re-derived from sv_seat / sv_proc fields in
 * each request. Pure: no clock (times stay absolute; the shell subtracts
 * its `now`), no allocation, no effect.
 */
#include <string.h>

#include "core/supervision_internal.h"

/* proc_view copies what is shown of process p (shown as `state`). */
static void
proc_view(const sv_proc *p, sv_seat_state state, sv_proc_view *out)
{
	out->live         = p->state != SV_PROC_NONE;
	out->state        = state;
	out->generation   = p->generation;
	out->pid          = out->live ? p->pid : 0;
	out->started_ms   = p->started_ms;
	out->ready        = p->ready;
	out->draining     = p->draining;
	out->drain_due_ms = p->draining ? p->due_ms : 0;
}

/* old_state is how a seat's old process is shown: draining, stopping, or
 * still serving (running) while its successor starts. */
static sv_seat_state
old_state(const sv_proc *p)
{
	if (p->draining) {
		return SV_SEAT_DRAINING;
	}
	return p->state == SV_PROC_STOPPING ? SV_SEAT_STOPPING
	                                    : SV_SEAT_RUNNING;
}

/* sv_seat_view_of fills *out from seat `ordinal` of g. The old process is
 * listed while it starts, runs or stops (the old generation of a rolling
 * restart, or a drained one); an abandoned one is not. */
void
sv_seat_view_of(
    const sv_core *c, const sv_cgroup *g, uint32_t ordinal, sv_seat_view *out)
{
	/* An ordinal past the seats made so far has never been live: a
	 * blank seat. */
	const sv_seat  blank = {.ordinal = ordinal};
	const sv_seat *s   = ordinal < g->nseats ? &g->seats[ordinal] : &blank;
	const sv_proc *old = sv_core_seat_old(c, s);

	memset(out, 0, sizeof(*out));
	out->ordinal        = s->ordinal;
	out->state          = sv_core_seat_state(g, s);
	out->wanted         = s->wanted;
	out->restarts       = s->restarts;
	out->fast_failures  = s->fast_failures;
	out->restart_due_ms = out->state == SV_SEAT_BACKOFF ? s->due_ms : 0;
	out->has_exit       = s->has_exit;
	out->last_exit_code = -1;
	out->last_signal    = 0;
	if (s->has_exit) {
		out->last_exit_code
		    = s->last_exit.exited ? s->last_exit.code : -1;
		out->last_signal
		    = s->last_exit.exited ? 0 : s->last_exit.signo;
	}
	proc_view(&s->cur, out->state, &out->current);
	out->generation
	    = out->current.live ? s->cur.generation : s->tok.generation;
	out->current.generation = out->generation;
	proc_view(old, old_state(old), &out->previous);
	out->previous.listed = old->state == SV_PROC_STARTING
	    || old->state == SV_PROC_RUNNING || old->state == SV_PROC_STOPPING;
	out->current.listed = out->state != SV_SEAT_EMPTY;
}

/* sv_core_seat_view finds the group and fills *out (sv_seat_view_of). */
sv_err
sv_core_seat_view(
    const sv_core *c, uint32_t group_id, uint32_t ordinal, sv_seat_view *out)
{
	const sv_cgroup *g = sv_core_group(c, group_id);

	if (g == NULL || ordinal >= g->max_count) {
		return SV_ENOTFOUND;
	}
	sv_seat_view_of(c, g, ordinal, out);
	return SV_OK;
}

/* sv_seat_view_proc picks the process of generation gen: the current one
 * if it is live and holds gen, else the old one (the caller found gen
 * among the live processes, so it is one of the two). */
const sv_proc_view *
sv_seat_view_proc(const sv_seat_view *v, uint64_t gen)
{
	return v->current.live && v->current.generation == gen ? &v->current
	                                                       : &v->previous;
}
