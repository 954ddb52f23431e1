/*
 * lease_reserve.c — the lease core's reservations: before an entry point
 * changes any state it computes, from its inputs, an upper bound of what
 * it can need (effects queued, lease id index entries, session and waiter
 * table room) and reserves all of it here. That is where the lease core
 * allocates (through core/alloc.h); when it fails the entry point returns
 * SV_ENOMEM having changed nothing, and the pushes that follow cannot fail
 * (core/fxring.h).
 *
 * The bounds, by transition (lease_slots.c, lease_waiters.c):
 *   grant                  3 effects (prepare, GRANTED, slot timer), 1 entry
 *   end of a lease         4 effects (notice, event, reclaim, slot timer)
 *                          plus the hand-over to the waiters: a grant
 *                          (cancel, grant, reply: 5) for at most
 *                          min(waiters, free slots after the end) of them,
 *                          a refusal (cancel, reply: 2) for at most
 *                          min(waiters, held slots) of them
 *   a dropped waiter       2 effects (cancel, reply)
 */
#include "core/alloc.h"
#include "core/lease_internal.h"

/* min_u32 is the smaller of a and b. */
static uint32_t
min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* svl_end_bound adds to *nfx and *nidx what ending one lease of p can need
 * (its effects, and index entries for the waiters it hands slots to). */
void
svl_end_bound(const lpool *p, size_t *nfx, size_t *nidx)
{
	uint32_t grants = min_u32(p->nw, p->nslots - p->nheld + 1u);
	uint32_t refuse = min_u32(p->nw, p->nheld);

	*nfx += 4u + 5u * (size_t) grants + 2u * (size_t) refuse;
	*nidx += grants;
}

/* svl_waiters_bound adds to *nfx what dropping every waiter of h needs. */
void
svl_waiters_bound(
    const sv_lease_core *c, const sv_lease_holder *h, size_t *nfx)
{
	for (uint32_t pi = 0; pi < c->npools; pi++) {
		const lpool *p = c->pools[pi];
		for (uint32_t k = 0; k < p->nw; k++) {
			if (sv_lease_holder_eq(&p->w[k].holder, h)) {
				*nfx += 2;
			}
		}
	}
}

/* svl_holder_end_bound adds to *nfx and *nidx what svl_holder_end(h) can
 * need: its waiters dropped, then each of its leases ended. */
void
svl_holder_end_bound(const sv_lease_core *c, const sv_lease_holder *h,
    size_t *nfx, size_t *nidx)
{
	svl_waiters_bound(c, h, nfx);
	for (uint32_t pi = 0; pi < c->npools; pi++) {
		if (svl_holder_slot(c->pools[pi], h) >= 0) {
			svl_end_bound(c->pools[pi], nfx, nidx);
		}
	}
}

/* svl_reserve makes room for nfx effects and nidx more index entries.
 * Errors: SV_ENOMEM (nothing the core shows has changed; the ring or the
 * index may have grown). */
sv_err
svl_reserve(sv_lease_core *c, size_t nfx, size_t nidx)
{
	sv_err rv;

	if ((rv = sv_fxring_reserve(&c->fx, nfx)) != SV_OK) {
		return rv;
	}
	return svl_index_reserve(c, nidx);
}

/* svl_sessions_reserve makes room for n more sessions in the table (bounded
 * by SV_LEASE_MAX_SESSIONS); the table is freed by
 * sv_lease_core_destroy. Errors: SV_ENOMEM (the table is unchanged). */
sv_err
svl_sessions_reserve(sv_lease_core *c, uint32_t n)
{
	uint32_t  need = c->nsessions + min_u32(n, SV_LEASE_MAX_SESSIONS);
	uint32_t  cap  = c->capsessions == 0 ? 16 : c->capsessions;
	lsession *t;

	if (need <= c->capsessions) {
		return SV_OK;
	}
	while (cap < need) {
		cap *= 2;
	}
	if ((t = sv_mem_realloc(c->sessions, cap * sizeof(*t))) == NULL) {
		return SV_ENOMEM;
	}
	c->sessions    = t;
	c->capsessions = cap;
	return SV_OK;
}

/* svl_waiters_reserve makes room for one more waiter of p; the FIFO is
 * freed by sv_lease_core_destroy. Errors: SV_ENOMEM (p is unchanged). */
sv_err
svl_waiters_reserve(lpool *p)
{
	uint32_t cap;
	lwaiter *n;

	if (p->nw < p->capw) {
		return SV_OK;
	}
	cap = p->capw == 0 ? 8 : p->capw * 2;
	if ((n = sv_mem_realloc(p->w, cap * sizeof(*n))) == NULL) {
		return SV_ENOMEM;
	}
	p->w    = n;
	p->capw = cap;
	return SV_OK;
}
