/*
 * lease_slots.c — a slot's lease: who holds it, how it is shown
 * (sv_lease_info), its one timer (the nearest of TTL, grace and claim
 * deadline), the grant (free -> held, with the next fencing token) and the
 * end of a lease (-> free, then the hand-over to the waiters), both as
 * events of the slot machine (lease_table.c). Fencing tokens:
 * (epoch << 32) | counter, the counter kept per slot across leases.
 */
#include "core/lease_internal.h"

/* sv_lease_holder_eq: see core/lease.h. */
bool
sv_lease_holder_eq(const sv_lease_holder *a, const sv_lease_holder *b)
{
	if (a->kind != b->kind) {
		return false;
	}
	if (a->kind == SV_HOLDER_SESSION) {
		return a->session == b->session;
	}
	return a->worker.group_id == b->worker.group_id
	    && a->worker.ordinal == b->worker.ordinal
	    && a->worker.generation == b->worker.generation;
}

/* svl_slot_holder is the holder of slot s (kind 0 when free). */
sv_lease_holder
svl_slot_holder(const lslot *s)
{
	sv_lease_holder h = {0};

	h.kind = (sv_holder_kind) s->hkind;
	if (s->hkind == SV_HOLDER_SESSION) {
		h.session = s->hgen;
	} else if (s->hkind == SV_HOLDER_WORKER) {
		h.worker = (sv_wkey) {s->hgroup, s->hordinal, s->hgen};
	}
	return h;
}

/* svl_slot_set_holder makes h (NULL: nobody) the holder of slot s. */
void
svl_slot_set_holder(lslot *s, const sv_lease_holder *h)
{
	s->hkind    = h != NULL ? (uint8_t) h->kind : 0;
	s->hgen     = 0;
	s->hgroup   = 0;
	s->hordinal = 0;
	if (h != NULL && h->kind == SV_HOLDER_SESSION) {
		s->hgen = h->session;
	} else if (h != NULL && h->kind == SV_HOLDER_WORKER) {
		s->hgen     = h->worker.generation;
		s->hgroup   = h->worker.group_id;
		s->hordinal = h->worker.ordinal;
	}
}

/* svl_slot_held_by tells whether h holds slot s (held or unclaimed). */
bool
svl_slot_held_by(const lslot *s, const sv_lease_holder *h)
{
	sv_lease_holder x = svl_slot_holder(s);

	return s->phase != SVL_FREE && sv_lease_holder_eq(&x, h);
}

/* svl_holder_slot returns the slot of p that h holds (held or unclaimed), or
 * -1. A holder has at most one per pool. */
int64_t
svl_holder_slot(const lpool *p, const sv_lease_holder *h)
{
	for (uint32_t i = 0; i < p->nslots; i++) {
		if (svl_slot_held_by(&p->slots[i], h)) {
			return i;
		}
	}
	return -1;
}

/* svl_info_of describes the lease on slot i of pool p. */
sv_lease_info
svl_info_of(const lpool *p, uint32_t i)
{
	const lslot  *s    = &p->slots[i];
	sv_lease_info info = {0};

	info.id           = s->id;
	info.pool_id      = p->id;
	info.slot         = i;
	info.token        = s->token;
	info.expiry_ms    = s->expiry_ms;
	info.holder       = svl_slot_holder(s);
	info.state        = svl_phase_state((svl_phase) s->phase);
	info.disconnected = s->phase == SVL_GRACE;
	return info;
}

/* slot_key is the timer key of slot i of p. */
static uint64_t
slot_key(const lpool *p, uint32_t i)
{
	return ((uint64_t) p->id << 32) | i;
}

/* slot_due tells when something must happen to slot s (false: never). */
static bool
slot_due(const lslot *s, uint64_t *duep)
{
	bool     any = false;
	uint64_t due = 0;

	if (s->phase == SVL_UNCLAIMED) {
		*duep = s->end_ms;
		return true;
	}
	if (s->phase != SVL_HELD && s->phase != SVL_GRACE) {
		return false;
	}
	if (s->expiry_ms != 0) {
		due = s->expiry_ms;
		any = true;
	}
	if (s->phase == SVL_GRACE && (!any || s->end_ms < due)) {
		due = s->end_ms;
		any = true;
	}
	*duep = due;
	return any;
}

/* svl_slot_timer makes the armed timer of slot i match what is due: armed
 * again only when the due time changed, cancelled when nothing is due. */
void
svl_slot_timer(sv_lease_core *c, lpool *p, uint32_t i)
{
	lslot   *s   = &p->slots[i];
	uint64_t due = 0;

	if (!slot_due(s, &due)) {
		if (s->guard != 0) {
			svl_timer_cancel(c, SV_LTIMER_SLOT, slot_key(p, i));
			s->guard = 0;
		}
		return;
	}
	if (s->guard != 0 && s->due_ms == due) {
		return;
	}
	s->due_ms = due;
	s->guard  = svl_timer_arm(c, SV_LTIMER_SLOT, slot_key(p, i), due);
}

/* svl_lease_grant gives free slot i of p to h with the next token (the
 * GRANT event, once the id and token counters are known to have room).
 * Errors: SV_EEXHAUSTED, SV_ENOMEM (nothing changed). */
sv_err
svl_lease_grant(sv_lease_core *c, lpool *p, uint32_t i,
    const sv_lease_holder *h, uint64_t now_ms, sv_lease_info *g)
{
	svl_slot_arg a = {.now_ms = now_ms, .holder = h, .out = g};
	sv_err       rv;

	/* 2^32 - 1 grants of one slot, or leases of one core, in one epoch:
	 * a restart (a new epoch) is needed to go on. */
	if (p->slots[i].counter == UINT32_MAX || c->next_lease == UINT32_MAX) {
		return SV_EEXHAUSTED;
	}
	/* Within the entry point's reservation: allocates nothing. */
	if ((rv = svl_index_reserve(c, 1)) != SV_OK) {
		return rv;
	}
	svl_slot_fire(c, p, i, SLE_GRANT, &a);
	return SV_OK;
}

/* svl_lease_end ends the lease on slot i of p for why, by the event that
 * why names: a release (the holder's, or its session closed), an abort,
 * else a revocation. */
void
svl_lease_end(sv_lease_core *c, lpool *p, uint32_t i, sv_lease_reason why,
    uint64_t now_ms)
{
	svl_slot_arg a = {.now_ms = now_ms, .why = why};
	svl_event    ev
	    = why == SV_LREASON_RELEASED || why == SV_LREASON_SESSION_CLOSED
	    ? SLE_RELEASE
	    : why == SV_LREASON_ABORTED ? SLE_ABORT
	                                : SLE_REVOKE;

	svl_slot_fire(c, p, i, ev, &a);
}

/* svl_slot_end carries out the end of the lease that slot i of p held in
 * state `from` (the slot is free already): the events for why (a
 * revocation, an end the holder did not ask for, is one REVOKED event and
 * one notice to the holder), the resource reclaim, then the hand-over of
 * the slot to the waiters. */
void
svl_slot_end(sv_lease_core *c, lpool *p, uint32_t i, svl_phase from,
    sv_lease_reason why, uint64_t now_ms)
{
	lslot        *s    = &p->slots[i];
	sv_lease_info info = svl_info_of(p, i);

	info.state        = svl_phase_state(from);
	info.disconnected = from == SVL_GRACE;
	switch (why) {
	case SV_LREASON_RELEASED:
	case SV_LREASON_SESSION_CLOSED:
		svl_emit(c, SV_LEV_RELEASED, why, &info);
		break;
	case SV_LREASON_ABORTED:
		svl_emit(c, SV_LEV_ABORTED, why, &info);
		break;
	default: {
		sv_lease_fx fx
		    = {.kind = SV_LFX_NOTICE_REVOKED, .reason = why};
		fx.lease = info;
		fx.err   = SV_OK;
		svl_fx_push(c, &fx);
		svl_emit(c, SV_LEV_REVOKED, why, &info);
		break;
	}
	}
	if (p->has_resource) {
		sv_lease_fx fx
		    = {.kind = SV_LFX_RESOURCE_RECLAIM, .lease = info};
		fx.err    = SV_OK;
		fx.policy = p->policy;
		fx.reason = why;
		svl_fx_push(c, &fx);
	}
	svl_index_del(c, s->id);
	s->id        = 0;
	s->expiry_ms = 0;
	s->end_ms    = 0;
	svl_slot_set_holder(s, NULL);
	svl_slot_timer(c, p, i);
	svl_grant_waiters(c, p, now_ms);
}
