/*
 * lease.c — requests from holders: acquire (grant, idempotent re-ask, or
 * a queued wait), renew, release, and the shell's abort of a grant whose
 * resource it could not prepare (see lease.h; the state machine is in
 * docs/leases.md; the core's layout in lease_internal.h).
 */
#include "core/lease_internal.h"

/* svl_holder_check validates a holder given by the shell. */
sv_err
svl_holder_check(const sv_lease_core *c, const sv_lease_holder *h)
{
	if (h == NULL) {
		return SV_EINVAL;
	}
	switch (h->kind) {
	case SV_HOLDER_WORKER:
		return SV_OK;
	case SV_HOLDER_SESSION:
		return svl_session_get(c, h->session) != NULL ? SV_OK
		                                              : SV_ENOTFOUND;
	}
	return SV_EINVAL;
}

/* lease_end_reserve reserves what ending one lease of p can need. */
static sv_err
lease_end_reserve(sv_lease_core *c, const lpool *p)
{
	size_t nfx = 0, nidx = 0;

	svl_end_bound(p, &nfx, &nidx);
	return svl_reserve(c, nfx, nidx);
}

/* sv_lease_acquire: see core/lease.h. */
sv_err
sv_lease_acquire(sv_lease_core *c, const sv_lease_holder *h,
    const sv_lease_req *req, uint64_t now_ms, sv_lease_info *g,
    uint64_t *waiterp)
{
	lpool  *p;
	int64_t i;
	sv_err  rv;

	if (req == NULL || waiterp == NULL) {
		return SV_EINVAL;
	}
	*waiterp = 0;
	if ((rv = svl_holder_check(c, h)) != SV_OK) {
		return rv;
	}
	if ((p = svl_pool_get(c, req->pool_id)) == NULL) {
		return SV_ENOTFOUND;
	}
	if (req->has_slot && req->slot >= p->nslots) {
		return SV_EINVAL;
	}
	if ((i = svl_holder_slot(p, h)) >= 0) {
		if (p->slots[i].phase == SVL_UNCLAIMED
		    || (req->has_slot && req->slot != (uint32_t) i)) {
			return SV_ECONFLICT;
		}
		if (g != NULL) {
			*g = svl_info_of(p, (uint32_t) i);
		}
		return SV_OK;
	}
	if ((i = svl_waiter_of(p, h)) >= 0) {
		*waiterp = p->w[i].id;
		return SV_OK;
	}
	if (req->wait && req->deadline_ms > now_ms
	    && req->deadline_ms - now_ms > SV_LEASE_MAX_MS) {
		return SV_ETOOLARGE;
	}
	if (req->has_slot) {
		i = p->slots[req->slot].phase == SVL_FREE ? (int64_t) req->slot
		                                          : -1;
	} else {
		lwaiter any = {.has_slot = false};
		i           = svl_waiter_fit(p, &any);
	}
	if (i >= 0) {
		/* A grant: 3 effects, 1 index entry (lease_reserve.c). */
		if ((rv = svl_reserve(c, 3, 1)) != SV_OK) {
			return rv;
		}
		return svl_lease_grant(c, p, (uint32_t) i, h, now_ms, g);
	}
	if (!req->wait || req->deadline_ms <= now_ms) {
		return req->has_slot ? SV_EBUSY : SV_EEXHAUSTED;
	}
	if (p->nw < SV_LEASE_MAX_WAITERS
	    && ((rv = svl_reserve(c, 1, 0)) != SV_OK
	        || (rv = svl_waiters_reserve(p)) != SV_OK)) {
		return rv;
	}
	return svl_waiter_add(c, p, h, req, waiterp);
}

/* sv_lease_renew: see core/lease.h. */
sv_err
sv_lease_renew(sv_lease_core *c, const sv_lease_holder *h, uint64_t id,
    uint64_t now_ms, sv_lease_info *g)
{
	lpool   *p = NULL;
	uint32_t i = 0;
	lslot   *s;
	sv_err   rv;

	if (!svl_lease_find(c, id, &p, &i)) {
		return SV_ENOTFOUND;
	}
	s = &p->slots[i];
	if (h == NULL || !svl_slot_held_by(s, h)) {
		return SV_EPERM;
	}
	if (s->phase == SVL_UNCLAIMED) {
		return SV_ECONFLICT;
	}
	if ((rv = svl_reserve(c, 1, 0)) != SV_OK) {
		return rv;
	}
	{
		svl_slot_arg a = {.now_ms = now_ms};
		svl_slot_fire(c, p, i, SLE_RENEW, &a);
	}
	if (g != NULL) {
		*g = svl_info_of(p, i);
	}
	return SV_OK;
}

/* sv_lease_release: see core/lease.h. */
sv_err
sv_lease_release(
    sv_lease_core *c, const sv_lease_holder *h, uint64_t id, uint64_t now_ms)
{
	lpool   *p = NULL;
	uint32_t i = 0;
	sv_err   rv;

	if (!svl_lease_find(c, id, &p, &i)) {
		return SV_OK;
	}
	if (h == NULL || !svl_slot_held_by(&p->slots[i], h)) {
		return SV_EPERM;
	}
	if ((rv = lease_end_reserve(c, p)) != SV_OK) {
		return rv;
	}
	svl_lease_end(c, p, i, SV_LREASON_RELEASED, now_ms);
	return SV_OK;
}

/* sv_lease_abort: see core/lease.h. */
sv_err
sv_lease_abort(sv_lease_core *c, uint64_t id, uint64_t now_ms)
{
	lpool   *p = NULL;
	uint32_t i = 0;
	sv_err   rv;

	if (!svl_lease_find(c, id, &p, &i)) {
		return SV_OK;
	}
	if ((rv = lease_end_reserve(c, p)) != SV_OK) {
		return rv;
	}
	svl_lease_end(c, p, i, SV_LREASON_ABORTED, now_ms);
	return SV_OK;
}
