/*
 * lease_restore.c — leases across a supervisor restart: the records the
 * shell journals (sv_lease_next, also the listing walk), their restore as
 * UNCLAIMED in the next epoch, and the re-claim by their holder.
 * A restore reserves for every record first (4 effects: a re-created
 * session's event and timer, RESTORED and the claim timer; an index entry;
 * a session), so it takes all the records it accepts or, on SV_ENOMEM,
 * none.
 */
#include <stdint.h>
#include <string.h>

#include "core/lease_internal.h"

/* restore_holder makes sure the holder of r can exist in this core: a
 * session is re-created if it is not open. */
static bool
restore_holder(
    sv_lease_core *c, const sv_lease_record *r, uint64_t now_ms, sv_err *errp)
{
	const lsession *s;

	*errp = SV_OK;
	if (r->holder.kind == SV_HOLDER_WORKER) {
		return true;
	}
	if (r->holder.kind != SV_HOLDER_SESSION) {
		return false;
	}
	if ((s = svl_session_get(c, r->holder.session)) != NULL) {
		return s->uid == r->session_uid;
	}
	if (r->holder.session == 0 || (r->holder.session >> 32) >= c->epoch
	    || r->session_ttl_ms == 0 || r->session_ttl_ms > SV_LEASE_MAX_MS
	    || c->nsessions >= SV_LEASE_MAX_SESSIONS) {
		return false;
	}
	*errp = svl_session_add(
	    c, r->holder.session, r->session_uid, r->session_ttl_ms, now_ms);
	return *errp == SV_OK;
}

/* sv_lease_restore: see core/lease.h. */
sv_err
sv_lease_restore(sv_lease_core *c, const sv_lease_record *recs, size_t n,
    uint64_t claim_grace_ms, uint64_t now_ms, size_t *skippedp)
{
	size_t skipped = 0;
	sv_err rv      = SV_OK;

	if (recs == NULL && n > 0) {
		return SV_EINVAL;
	}
	if (claim_grace_ms > SV_LEASE_MAX_MS) {
		return SV_ETOOLARGE;
	}
	if (n > SIZE_MAX / 8) {
		return SV_ENOMEM;
	}
	if ((rv = svl_reserve(c, 4 * n, n)) != SV_OK
	    || (rv = svl_sessions_reserve(c,
	            n > SV_LEASE_MAX_SESSIONS ? SV_LEASE_MAX_SESSIONS
	                                      : (uint32_t) n))
	        != SV_OK) {
		return rv;
	}
	for (size_t r = 0; r < n && rv == SV_OK; r++) {
		const sv_lease_record *rec = &recs[r];
		lpool                 *p;
		svl_slot_arg           a = {.now_ms = now_ms,
		              .rec                  = rec,
		              .claim_grace_ms       = claim_grace_ms};

		p = svl_pool_get(c, sv_lease_pool_find(c, rec->pool));
		if (p == NULL || rec->slot >= p->nslots
		    || p->slots[rec->slot].phase != SVL_FREE || rec->id == 0
		    || (rec->id >> 32) >= c->epoch
		    || (uint32_t) rec->token == 0
		    || (rec->token >> 32) >= c->epoch
		    || svl_index_get(c, rec->id) != 0
		    || svl_holder_slot(p, &rec->holder) >= 0
		    || !restore_holder(c, rec, now_ms, &rv)) {
			skipped++;
			continue;
		}
		if ((rv = svl_index_reserve(c, 1)) != SV_OK) {
			break; /* reserved above: cannot happen */
		}
		svl_slot_fire(c, p, rec->slot, SLE_RESTORE, &a);
	}
	if (skippedp != NULL) {
		*skippedp = skipped;
	}
	return rv;
}

/* sv_lease_claim: see core/lease.h. */
sv_err
sv_lease_claim(sv_lease_core *c, const sv_lease_holder *h, uint32_t pool_id,
    uint32_t slot, uint64_t token, uint64_t now_ms, sv_lease_info *g)
{
	lpool        *p;
	lslot        *s;
	sv_lease_info info;
	sv_err        rv;

	if ((rv = svl_holder_check(c, h)) != SV_OK) {
		return rv;
	}
	if ((p = svl_pool_get(c, pool_id)) == NULL) {
		return SV_ENOTFOUND;
	}
	if (slot >= p->nslots) {
		return SV_EINVAL;
	}
	s = &p->slots[slot];
	if (s->phase == SVL_FREE) {
		return SV_ENOTFOUND;
	}
	if ((rv = svl_reserve(c, 2, 0)) != SV_OK) {
		return rv;
	}
	if (!svl_slot_held_by(s, h) || s->token != token) {
		info = svl_info_of(p, slot);
		svl_emit(c, SV_LEV_CLAIM_REFUSED, SV_LREASON_NONE, &info);
		return SV_ECONFLICT;
	}
	{
		svl_slot_arg a = {.now_ms = now_ms};
		svl_slot_fire(c, p, slot, SLE_CLAIM, &a);
	}
	if (g != NULL) {
		*g = svl_info_of(p, slot);
	}
	return SV_OK;
}

/* sv_lease_next: see core/lease.h. */
bool
sv_lease_next(const sv_lease_core *c, sv_lease_iter *it,
    const sv_lease_holder *h, sv_lease_info *info, sv_lease_record *rec)
{
	for (; it->pool < c->npools; it->pool++, it->slot = 0) {
		const lpool *p = c->pools[it->pool];
		for (; it->slot < p->nslots; it->slot++) {
			const lslot    *s = &p->slots[it->slot];
			const lsession *ss;
			if (s->phase == SVL_FREE
			    || (h != NULL && !svl_slot_held_by(s, h))) {
				continue;
			}
			*info = svl_info_of(p, it->slot);
			if (rec != NULL) {
				memset(rec, 0, sizeof(*rec));
				memcpy(rec->pool, p->name, sizeof(rec->pool));
				rec->slot      = it->slot;
				rec->id        = s->id;
				rec->token     = s->token;
				rec->expiry_ms = s->expiry_ms;
				rec->holder    = svl_slot_holder(s);
				if (s->hkind == SV_HOLDER_SESSION
				    && (ss = svl_session_get(c, s->hgen))
				        != NULL) {
					rec->session_uid    = ss->uid;
					rec->session_ttl_ms = ss->ttl_ms;
				}
			}
			it->slot++;
			return true;
		}
	}
	return false;
}
