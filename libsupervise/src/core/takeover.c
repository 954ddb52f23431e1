/*
 * takeover.c — the plan for a predecessor's workers after a supervisor
 * restart (pure decision core; takeover.h says what each action means).
 *
 * One seat at a time: every process the shell claimed (holds a pidfd of)
 * is either adopted (the newest generation of a seat the config keeps) or
 * killed with its reason; every process it could not claim is forgotten
 * (gone, or unclaimable); a kept seat with nothing adopted is respawned
 * with its generation continued.
 */
#include "core/takeover.h"

#include <string.h>

/* sv_takeover_probe: see takeover.h. */
void
sv_takeover_probe(const sv_to_seat *in, sv_to_probe *out)
{
	out->claim  = in->same_boot;
	out->search = in->same_boot && in->spawning;
}

/* to_step appends a step to plan (room is checked by the caller). */
static void
to_step(sv_to_plan *plan, sv_to_action a, sv_to_reason r, uint32_t proc)
{
	plan->steps[plan->nsteps++] = (sv_to_step) {a, r, proc};
}

/* to_keep_reason says why a claimed process of a seat cannot be kept
 * whatever its generation, or 0 if it may be adopted. */
static sv_to_reason
to_keep_reason(const sv_to_seat *in)
{
	if (!in->configured) {
		return SV_TOR_GROUP_GONE;
	}
	if (!in->in_range) {
		return SV_TOR_BEYOND_MAX;
	}
	if (in->die_with_supervisor) {
		return SV_TOR_DIE_WITH_SUPERVISOR;
	}
	return (sv_to_reason) 0;
}

/* sv_takeover_plan: see takeover.h. */
sv_err
sv_takeover_plan(const sv_to_seat *in, sv_to_plan *out)
{
	bool         kept = in->configured && in->in_range;
	sv_to_reason no   = to_keep_reason(in);
	uint32_t     best = SV_TO_SEAT;

	memset(out, 0, sizeof(*out));
	if (in->nprocs > SV_TAKEOVER_PROCS
	    || (in->nprocs > 0 && in->procs == NULL)) {
		return SV_EINVAL;
	}
	out->floor        = in->next_generation;
	out->record_floor = kept && in->next_generation > 0;
	out->release      = kept && in->released;
	/* The newest claimed generation, the first of equals. */
	for (uint32_t k = 0; no == 0 && k < in->nprocs; k++) {
		if (in->same_boot && in->procs[k].pidfd
		    && (best == SV_TO_SEAT
		        || in->procs[k].generation
		            > in->procs[best].generation)) {
			best = k;
		}
	}
	for (uint32_t k = 0; k < in->nprocs; k++) {
		if (!in->same_boot) {
			to_step(out, SV_TO_FORGET, SV_TOR_OTHER_BOOT, k);
		} else if (!in->procs[k].pidfd) {
			to_step(out, SV_TO_FORGET,
			    in->procs[k].gone ? SV_TOR_GONE
			                      : SV_TOR_UNCLAIMABLE,
			    k);
		} else if (no != 0) {
			to_step(out, SV_TO_KILL, no, k);
		} else if (k != best) {
			to_step(out, SV_TO_KILL, SV_TOR_NEWER_HOLDS, k);
		}
	}
	if (!kept) {
		return SV_OK;
	}
	if (best != SV_TO_SEAT) {
		to_step(out, SV_TO_ADOPT, SV_TOR_NEWEST, best);
	} else {
		to_step(out, SV_TO_RESPAWN, SV_TOR_NOTHING_ALIVE, SV_TO_SEAT);
		out->apply_floor = in->next_generation > 0;
	}
	return SV_OK;
}

/* sv_takeover_size: see takeover.h. */
bool
sv_takeover_size(uint32_t jcount, uint32_t jconfig_count,
    uint32_t config_count, uint32_t max_count)
{
	return jconfig_count == config_count && jcount != config_count
	    && jcount <= max_count;
}

/* sv_takeover_reason_text: see takeover.h. */
const char *
sv_takeover_reason_text(sv_to_reason r)
{
	switch (r) {
	case SV_TOR_NEWEST:
		return "the newest generation of its seat";
	case SV_TOR_GROUP_GONE:
		return "its group is no longer configured";
	case SV_TOR_BEYOND_MAX:
		return "its ordinal is beyond max_count";
	case SV_TOR_DIE_WITH_SUPERVISOR:
		return "its group has die_with_supervisor";
	case SV_TOR_NEWER_HOLDS:
		return "a newer generation holds the seat";
	case SV_TOR_GONE:
		return "is gone";
	case SV_TOR_UNCLAIMABLE:
		return "cannot be claimed (no pidfd): left alone";
	case SV_TOR_OTHER_BOOT:
		return "the journal is from another boot";
	case SV_TOR_NOTHING_ALIVE:
		return "no process of the seat is left to adopt";
	}
	return "?";
}
