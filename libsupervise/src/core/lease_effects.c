/*
 * lease_effects.c — the lease core's effect queue (core/fxring.h) and the
 * effects every transition emits: events, timer arms and cancels, answers
 * to waiters. The shell pops them with sv_lease_pop_effect and carries them
 * out in order. Every push is within a reservation (lease_reserve.c).
 */
#include "core/lease_internal.h"

/* svl_fx_push queues an effect, within the reservation its entry point
 * made (lease_reserve.c): it cannot fail. */
void
svl_fx_push(sv_lease_core *c, const sv_lease_fx *fx)
{
	sv_fxring_push(&c->fx, fx);
}

/* sv_lease_pop_effect: see core/lease.h. */
bool
sv_lease_pop_effect(sv_lease_core *c, sv_lease_fx *fx)
{
	return sv_fxring_pop(&c->fx, fx);
}

/* svl_emit queues an event about lease. */
void
svl_emit(sv_lease_core *c, sv_lease_event_kind ev, sv_lease_reason why,
    const sv_lease_info *lease)
{
	sv_lease_fx fx = {.kind = SV_LFX_EVENT, .event = ev, .reason = why};

	if (lease != NULL) {
		fx.lease = *lease;
	}
	fx.err = SV_OK;
	svl_fx_push(c, &fx);
}

/* svl_timer_arm queues a TIMER_ARM effect and returns its guard. */
uint64_t
svl_timer_arm(
    sv_lease_core *c, sv_lease_timer_kind kind, uint64_t key, uint64_t due_ms)
{
	sv_lease_fx fx = {.kind = SV_LFX_TIMER_ARM, .timer = kind, .key = key};

	fx.guard  = ++c->guards;
	fx.due_ms = due_ms;
	fx.err    = SV_OK;
	svl_fx_push(c, &fx);
	return fx.guard;
}

/* svl_timer_cancel queues a TIMER_CANCEL effect. */
void
svl_timer_cancel(sv_lease_core *c, sv_lease_timer_kind kind, uint64_t key)
{
	sv_lease_fx fx
	    = {.kind = SV_LFX_TIMER_CANCEL, .timer = kind, .key = key};

	fx.err = SV_OK;
	svl_fx_push(c, &fx);
}

/* svl_reply queues the answer to waiter id. */
void
svl_reply(
    sv_lease_core *c, uint64_t id, sv_err err, const sv_lease_info *lease)
{
	sv_lease_fx fx = {.kind = SV_LFX_REPLY_WAITER, .waiter = id};

	fx.err = err;
	if (lease != NULL) {
		fx.lease = *lease;
	}
	svl_fx_push(c, &fx);
}
