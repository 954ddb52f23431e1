/*
 * lease_reclaim.c — leases ended by the supervisor rather than by their
 * holder: a reaped worker (holder gone), a holder whose connections are
 * gone (disconnect grace), and deadlines (TTL, grace, claim), which reach
 * the core through sv_lease_timer, the entry point of every timer. Each
 * entry point reserves first (lease_reserve.c) and may answer SV_ENOMEM
 * having changed nothing; the shell then calls it again.
 */
#include "core/lease_internal.h"

/* svl_holder_end ends every lease of h for why (waiters first, so that a slot
 * freed here never goes to h itself), within a reservation made from
 * svl_holder_end_bound. */
void
svl_holder_end(sv_lease_core *c, const sv_lease_holder *h, sv_lease_reason why,
    uint64_t now_ms)
{
	svl_waiters_drop(c, h);
	for (uint32_t pi = 0; pi < c->npools; pi++) {
		lpool  *p = c->pools[pi];
		int64_t i = svl_holder_slot(p, h);
		if (i >= 0) {
			svl_lease_end(c, p, (uint32_t) i, why, now_ms);
		}
	}
}

/* sv_lease_holder_gone: see core/lease.h. */
sv_err
sv_lease_holder_gone(sv_lease_core *c, sv_wkey key, uint64_t now_ms)
{
	sv_lease_holder h   = {.kind = SV_HOLDER_WORKER, .worker = key};
	size_t          nfx = 0, nidx = 0;
	sv_err          rv;

	svl_holder_end_bound(c, &h, &nfx, &nidx);
	if ((rv = svl_reserve(c, nfx, nidx)) != SV_OK) {
		return rv;
	}
	svl_holder_end(c, &h, SV_LREASON_HOLDER_GONE, now_ms);
	return SV_OK;
}

/* disconnect_reserve reserves what sv_lease_holder_disconnected(h) can
 * need: its waiters dropped, then per lease an end (no grace) or an event
 * and a timer. */
static sv_err
disconnect_reserve(sv_lease_core *c, const sv_lease_holder *h)
{
	size_t nfx = 0, nidx = 0;

	svl_waiters_bound(c, h, &nfx);
	for (uint32_t pi = 0; pi < c->npools; pi++) {
		const lpool *p = c->pools[pi];
		if (svl_holder_slot(p, h) < 0) {
			continue;
		}
		if (p->grace_ms == 0) {
			svl_end_bound(p, &nfx, &nidx);
		} else {
			nfx += 2;
		}
	}
	return svl_reserve(c, nfx, nidx);
}

/* sv_lease_holder_disconnected: see core/lease.h. */
sv_err
sv_lease_holder_disconnected(
    sv_lease_core *c, const sv_lease_holder *h, uint64_t now_ms)
{
	sv_err rv;

	if (h == NULL) {
		return SV_OK;
	}
	if ((rv = disconnect_reserve(c, h)) != SV_OK) {
		return rv;
	}
	svl_waiters_drop(c, h);
	for (uint32_t pi = 0; pi < c->npools; pi++) {
		lpool       *p = c->pools[pi];
		int64_t      i = svl_holder_slot(p, h);
		svl_slot_arg a = {.now_ms = now_ms};

		if (i >= 0) {
			svl_slot_fire(c, p, (uint32_t) i,
			    p->grace_ms == 0 ? SLE_CUT : SLE_DISCONNECT, &a);
		}
	}
	return SV_OK;
}

/* sv_lease_holder_reconnected: see core/lease.h. */
sv_err
sv_lease_holder_reconnected(
    sv_lease_core *c, const sv_lease_holder *h, uint64_t now_ms)
{
	size_t       nfx = 0;
	svl_slot_arg a   = {.now_ms = now_ms};
	sv_err       rv;

	for (uint32_t pi = 0; h != NULL && pi < c->npools; pi++) {
		nfx += svl_holder_slot(c->pools[pi], h) >= 0 ? 2 : 0;
	}
	if ((rv = svl_reserve(c, nfx, 0)) != SV_OK) {
		return rv;
	}
	for (uint32_t pi = 0; h != NULL && pi < c->npools; pi++) {
		lpool  *p = c->pools[pi];
		int64_t i = svl_holder_slot(p, h);

		if (i >= 0) {
			svl_slot_fire(c, p, (uint32_t) i, SLE_RECONNECT, &a);
		}
	}
	return SV_OK;
}

/* slot_due_event decides what the timer of slot s stands for at now_ms:
 * the deadline that has come (claim, then grace, then TTL), else an early
 * timer. */
static svl_event
slot_due_event(const lslot *s, uint64_t now_ms)
{
	if (s->phase == SVL_UNCLAIMED && now_ms >= s->end_ms) {
		return SLE_CLAIM_OVER;
	}
	if (s->phase == SVL_GRACE && now_ms >= s->end_ms) {
		return SLE_GRACE_OVER;
	}
	if ((s->phase == SVL_HELD || s->phase == SVL_GRACE)
	    && s->expiry_ms != 0 && now_ms >= s->expiry_ms) {
		return SLE_EXPIRE;
	}
	return SLE_TIMER;
}

/* slot_fire: the timer of slot i of p fired; the slot moves by the event
 * slot_due_event names. Reserves an end's bound first (it covers the
 * re-arm). */
static sv_err
slot_fire(sv_lease_core *c, lpool *p, uint32_t i, uint64_t now_ms)
{
	lslot       *s   = &p->slots[i];
	size_t       nfx = 0, nidx = 0;
	svl_slot_arg a = {.now_ms = now_ms};
	sv_err       rv;

	svl_end_bound(p, &nfx, &nidx);
	if ((rv = svl_reserve(c, nfx, nidx)) != SV_OK) {
		return rv;
	}
	s->guard = 0;
	svl_slot_fire(c, p, i, slot_due_event(s, now_ms), &a);
	return SV_OK;
}

/* sv_lease_timer: see core/lease.h. */
sv_err
sv_lease_timer(sv_lease_core *c, sv_lease_timer_kind kind, uint64_t key,
    uint64_t guard, uint64_t now_ms)
{
	lpool   *p = NULL;
	uint32_t k = 0;

	if (guard == 0) {
		return SV_OK;
	}
	switch (kind) {
	case SV_LTIMER_SLOT:
		p = svl_pool_get(c, (uint32_t) (key >> 32));
		k = (uint32_t) key;
		if (p != NULL && k < p->nslots && p->slots[k].guard == guard) {
			return slot_fire(c, p, k, now_ms);
		}
		return SV_OK;
	case SV_LTIMER_WAITER:
		if (svl_waiter_find(c, key, &p, &k)
		    && p->w[k].guard == guard) {
			return svl_waiter_timer(c, p, k, now_ms);
		}
		return SV_OK;
	case SV_LTIMER_SESSION:
		return svl_session_timer(c, key, guard, now_ms);
	}
	return SV_OK;
}
