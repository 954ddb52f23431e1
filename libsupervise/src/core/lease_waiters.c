/*
 * lease_waiters.c — the acquires waiting on a pool: a FIFO per pool,
 * each with a deadline timer. A freed slot goes to the oldest waiter it
 * fits; a waiter for a taken slot does not hold back the others. A waiter
 * id carries its pool's index in its low 8 bits.
 */
#include <string.h>

#include "core/lease_internal.h"

/* waiter_remove takes waiter k out of p's FIFO, keeping the order. */
static void
waiter_remove(lpool *p, uint32_t k)
{
	memmove(&p->w[k], &p->w[k + 1], (p->nw - k - 1) * sizeof(p->w[0]));
	p->nw--;
}

/* svl_waiter_find finds waiter id (its pool is in the low 8 bits). */
bool
svl_waiter_find(const sv_lease_core *c, uint64_t id, lpool **pp, uint32_t *kp)
{
	lpool *p = svl_pool_get(c, (uint32_t) (id & 0xffu) + 1u);

	if (id == 0 || p == NULL) {
		return false;
	}
	for (uint32_t k = 0; k < p->nw; k++) {
		if (p->w[k].id == id) {
			*pp = p;
			*kp = k;
			return true;
		}
	}
	return false;
}

/* svl_waiter_of returns the index of h's waiter in p, or -1. */
int64_t
svl_waiter_of(const lpool *p, const sv_lease_holder *h)
{
	for (uint32_t k = 0; k < p->nw; k++) {
		if (sv_lease_holder_eq(&p->w[k].holder, h)) {
			return k;
		}
	}
	return -1;
}

/* svl_waiter_fit returns the slot a waiter would get now, or -1. */
int64_t
svl_waiter_fit(const lpool *p, const lwaiter *w)
{
	if (w->has_slot) {
		return p->slots[w->slot].phase == SVL_FREE ? (int64_t) w->slot
		                                           : -1;
	}
	for (uint32_t i = 0; i < p->nslots; i++) {
		if (p->slots[i].phase == SVL_FREE) {
			return i;
		}
	}
	return -1;
}

/* svl_waiter_add queues h on p (1 effect, reserved by the caller, as is
 * the FIFO's room: svl_waiters_reserve). */
sv_err
svl_waiter_add(sv_lease_core *c, lpool *p, const sv_lease_holder *h,
    const sv_lease_req *req, uint64_t *waiterp)
{
	lwaiter *w;

	if (p->nw >= SV_LEASE_MAX_WAITERS) {
		return SV_EBUSY;
	}
	if (p->nw == p->capw) {
		return SV_ENOMEM; /* not reserved: a bug of the caller */
	}
	w              = &p->w[p->nw++];
	w->id          = (++c->next_waiter << 8) | (uint64_t) (p->id - 1);
	w->holder      = *h;
	w->has_slot    = req->has_slot;
	w->slot        = req->slot;
	w->deadline_ms = req->deadline_ms;
	w->guard = svl_timer_arm(c, SV_LTIMER_WAITER, w->id, req->deadline_ms);
	*waiterp = w->id;
	return SV_OK;
}

/* svl_grant_waiters answers, oldest first, every waiter of p that a free slot
 * fits. A waiter for a slot that is taken does not hold back the others. */
void
svl_grant_waiters(sv_lease_core *c, lpool *p, uint64_t now_ms)
{
	uint32_t k = 0;

	while (k < p->nw && p->nheld < p->nslots) {
		lwaiter       w = p->w[k];
		int64_t       i = svl_waiter_fit(p, &w);
		sv_lease_info g = {0};
		sv_err        rv;

		if (i < 0) {
			k++;
			continue;
		}
		waiter_remove(p, k);
		svl_timer_cancel(c, SV_LTIMER_WAITER, w.id);
		/* Acquire and restore never let a holder wait on a pool where
		 * it holds a lease; refuse rather than grant a second one. */
		rv = svl_holder_slot(p, &w.holder) >= 0
		    ? SV_ECONFLICT
		    : svl_lease_grant(
		        c, p, (uint32_t) i, &w.holder, now_ms, &g);
		svl_reply(c, w.id, rv, rv == SV_OK ? &g : NULL);
	}
}

/* svl_waiters_drop answers SV_ECLOSED to every waiter of h, in every pool. */
void
svl_waiters_drop(sv_lease_core *c, const sv_lease_holder *h)
{
	for (uint32_t pi = 0; pi < c->npools; pi++) {
		lpool *p = c->pools[pi];
		for (uint32_t k = 0; k < p->nw;) {
			if (!sv_lease_holder_eq(&p->w[k].holder, h)) {
				k++;
				continue;
			}
			svl_timer_cancel(c, SV_LTIMER_WAITER, p->w[k].id);
			svl_reply(c, p->w[k].id, SV_ECLOSED, NULL);
			waiter_remove(p, k);
		}
	}
}

/* sv_lease_cancel_wait: see core/lease.h. */
sv_err
sv_lease_cancel_wait(sv_lease_core *c, uint64_t id, uint64_t now_ms)
{
	lpool   *p = NULL;
	uint32_t k = 0;
	sv_err   rv;

	(void) now_ms;
	if (!svl_waiter_find(c, id, &p, &k)) {
		return SV_OK;
	}
	if ((rv = svl_reserve(c, 1, 0)) != SV_OK) {
		return rv;
	}
	svl_timer_cancel(c, SV_LTIMER_WAITER, id);
	waiter_remove(p, k);
	return SV_OK;
}

/* svl_waiter_timer: the deadline of waiter k of p may have come (2
 * effects at most). Errors: SV_ENOMEM (nothing changed). */
sv_err
svl_waiter_timer(sv_lease_core *c, lpool *p, uint32_t k, uint64_t now_ms)
{
	lwaiter      *w  = &p->w[k];
	sv_lease_info at = {.pool_id = p->id};
	sv_err        rv;

	if ((rv = svl_reserve(c, 2, 0)) != SV_OK) {
		return rv;
	}
	if (now_ms < w->deadline_ms) {
		w->guard = svl_timer_arm(
		    c, SV_LTIMER_WAITER, w->id, w->deadline_ms);
		return SV_OK;
	}
	at.holder = w->holder;
	svl_reply(c, w->id, SV_ETIMEDOUT, NULL);
	{
		sv_lease_fx fx = {.kind = SV_LFX_EVENT,
		    .event              = SV_LEV_WAIT_TIMEOUT,
		    .lease              = at,
		    .waiter             = w->id};
		fx.err         = SV_OK;
		svl_fx_push(c, &fx);
	}
	waiter_remove(p, k);
	return SV_OK;
}
