/*
 * lease.c — leases on slots of pools (see lease.h and the state machine in
 * docs/leases.md).
 *
 * Divisions: tables and effect queue; lookups; the slot timer; grant and
 * end of a lease (the two transitions everything else goes through);
 * waiters; sessions; pools; requests from holders; reclaim; restart
 * re-claim; listing; names.
 *
 * Layout. A pool owns an array of slots; a slot record is the lease on it
 * (at most one: the "one live lease per slot" invariant is structural) and
 * keeps the slot's token counter between leases. A slot record is 72 bytes
 * (x86-64), leased or not: the holder is kept unpacked into its fields and
 * one deadline serves the claim (UNCLAIMED) and the grace (disconnected).
 * A hash index of lease ids finds a lease from its id; a bucket is 4 bytes,
 * (pool id << 12) | slot, and the lease id it stands for is read from that
 * slot. Each pool has a FIFO of waiters; a waiter id carries the pool's
 * index in its low 8 bits so that a timer finds it without a search.
 *
 * Every change of a slot goes through lease_grant or lease_end, which keep
 * the derived counts (pool nheld, core nleases), the index and the slot's
 * timer right, and emit the events. lease_end hands the freed slot to the
 * waiters before it returns.
 */
#include <stdlib.h>
#include <string.h>

#include "core/fxring.h"
#include "core/lease.h"

typedef struct lslot {
	uint64_t id;
	uint64_t token; /* of the current (or last) lease */
	uint64_t expiry_ms; /* HELD, pool with TTL; else 0 */
	uint64_t end_ms; /* UNCLAIMED: claim deadline; HELD and
	                  * disconnected: end of the grace; else 0 */
	uint64_t guard; /* of the slot timer, 0: none armed */
	uint64_t due_ms; /* of that timer */
	uint64_t hgen; /* holder: the worker's generation, or the session */
	uint32_t hgroup, hordinal; /* holder: the worker's group, ordinal */
	uint32_t counter; /* last token counter used in this epoch */
	uint8_t  state; /* sv_lease_state */
	uint8_t  hkind; /* sv_holder_kind of the holder; 0: none */
	bool     disconnected; /* HELD: grace running */
} lslot;

/* The slot tables' size rests on this (docs/leases.md, "Bounds"). */
_Static_assert(sizeof(lslot) <= 72, "a slot record stays compact");

/* The lease id index (see the layout above). */
typedef struct lindex {
	uint32_t *b; /* [cap]; 0: empty */
	size_t    cap; /* 0 or a power of two */
	size_t    n;
} lindex;

/* Bits of the slot in an index bucket: SV_LEASE_MAX_SLOTS must fit. */
#define LINDEX_SLOT_BITS 12u
_Static_assert(SV_LEASE_MAX_SLOTS <= (1u << LINDEX_SLOT_BITS),
    "a slot number must fit an index bucket");
_Static_assert(SV_LEASE_MAX_POOLS < (1u << (32u - LINDEX_SLOT_BITS)),
    "a pool id must fit an index bucket");

typedef struct lwaiter {
	uint64_t        id;
	sv_lease_holder holder;
	bool            has_slot;
	uint32_t        slot;
	uint64_t        deadline_ms;
	uint64_t        guard;
} lwaiter;

typedef struct lpool {
	uint32_t        id; /* index + 1 */
	char            name[SV_LEASE_NAME_MAX + 1];
	uint32_t        nslots;
	uint64_t        ttl_ms;
	uint64_t        grace_ms;
	sv_lease_policy policy;
	bool            has_resource;
	uint32_t        nheld;
	lslot          *slots; /* [nslots] */
	lwaiter        *w; /* FIFO, oldest first */
	uint32_t        nw, capw;
} lpool;

typedef struct lsession {
	uint64_t id;
	uint32_t uid;
	uint64_t ttl_ms;
	uint64_t expiry_ms;
	uint64_t guard;
} lsession;

struct sv_lease_core {
	uint32_t  epoch;
	lpool    *pools[SV_LEASE_MAX_POOLS];
	uint32_t  npools;
	lsession *sessions;
	uint32_t  nsessions, capsessions;
	uint32_t  next_lease; /* counters of ids within this epoch */
	uint32_t  next_session;
	uint64_t  next_waiter;
	uint64_t  guards; /* source of timer guards */
	lindex    index; /* lease id -> (pool id, slot) */
	size_t    nleases;
	sv_fxring fx; /* pending effects (core/fxring.h) */
};

/* ---- tables and effect queue ---------------------------------------------
 */

/* fx_push queues an effect; out of memory, it is dropped and fx.lost
 * is set (core/fxring.h). */
static void
fx_push(sv_lease_core *c, const sv_lease_fx *fx)
{
	sv_fxring_push(&c->fx, fx);
}

bool
sv_lease_pop_effect(sv_lease_core *c, sv_lease_fx *fx)
{
	return sv_fxring_pop(&c->fx, fx);
}

bool
sv_lease_effects_lost(const sv_lease_core *c)
{
	return c->fx.lost;
}

/* slot_holder is the holder of slot s (kind 0 when free). */
static sv_lease_holder
slot_holder(const lslot *s)
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

/* slot_set_holder makes h (NULL: nobody) the holder of slot s. */
static void
slot_set_holder(lslot *s, const sv_lease_holder *h)
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

/* slot_held_by tells whether h holds slot s (held or unclaimed). */
static bool
slot_held_by(const lslot *s, const sv_lease_holder *h)
{
	sv_lease_holder x = slot_holder(s);

	return s->state != SV_LEASE_FREE && sv_lease_holder_eq(&x, h);
}

/* info_of describes the lease on slot i of pool p. */
static sv_lease_info
info_of(const lpool *p, uint32_t i)
{
	const lslot  *s    = &p->slots[i];
	sv_lease_info info = {0};

	info.id           = s->id;
	info.pool_id      = p->id;
	info.slot         = i;
	info.token        = s->token;
	info.expiry_ms    = s->expiry_ms;
	info.holder       = slot_holder(s);
	info.state        = (sv_lease_state) s->state;
	info.disconnected = s->disconnected;
	return info;
}

/* emit queues an event about lease. */
static void
emit(sv_lease_core *c, sv_lease_event_kind ev, sv_lease_reason why,
    const sv_lease_info *lease)
{
	sv_lease_fx fx = {.kind = SV_LFX_EVENT, .event = ev, .reason = why};

	if (lease != NULL) {
		fx.lease = *lease;
	}
	fx.err = SV_OK;
	fx_push(c, &fx);
}

/* timer_arm queues a TIMER_ARM effect and returns its guard. */
static uint64_t
timer_arm(
    sv_lease_core *c, sv_lease_timer_kind kind, uint64_t key, uint64_t due_ms)
{
	sv_lease_fx fx = {.kind = SV_LFX_TIMER_ARM, .timer = kind, .key = key};

	fx.guard  = ++c->guards;
	fx.due_ms = due_ms;
	fx.err    = SV_OK;
	fx_push(c, &fx);
	return fx.guard;
}

/* timer_cancel queues a TIMER_CANCEL effect. */
static void
timer_cancel(sv_lease_core *c, sv_lease_timer_kind kind, uint64_t key)
{
	sv_lease_fx fx
	    = {.kind = SV_LFX_TIMER_CANCEL, .timer = kind, .key = key};

	fx.err = SV_OK;
	fx_push(c, &fx);
}

/* reply queues the answer to waiter id. */
static void
reply(sv_lease_core *c, uint64_t id, sv_err err, const sv_lease_info *lease)
{
	sv_lease_fx fx = {.kind = SV_LFX_REPLY_WAITER, .waiter = id};

	fx.err = err;
	if (lease != NULL) {
		fx.lease = *lease;
	}
	fx_push(c, &fx);
}

/* ---- lookups -------------------------------------------------------------
 */

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

static lpool *
pool_get(const sv_lease_core *c, uint32_t id)
{
	if (id == 0 || id > c->npools) {
		return NULL;
	}
	return c->pools[id - 1];
}

static lsession *
session_get(const sv_lease_core *c, uint64_t id)
{
	for (uint32_t i = 0; i < c->nsessions; i++) {
		if (c->sessions[i].id == id) {
			return &c->sessions[i];
		}
	}
	return NULL;
}

/* holder_check validates a holder given by the shell. */
static sv_err
holder_check(const sv_lease_core *c, const sv_lease_holder *h)
{
	if (h == NULL) {
		return SV_EINVAL;
	}
	switch (h->kind) {
	case SV_HOLDER_WORKER:
		return SV_OK;
	case SV_HOLDER_SESSION:
		return session_get(c, h->session) != NULL ? SV_OK
		                                          : SV_ENOTFOUND;
	}
	return SV_EINVAL;
}

/* holder_slot returns the slot of p that h holds (held or unclaimed), or
 * -1. A holder has at most one per pool. */
static int64_t
holder_slot(const lpool *p, const sv_lease_holder *h)
{
	for (uint32_t i = 0; i < p->nslots; i++) {
		if (slot_held_by(&p->slots[i], h)) {
			return i;
		}
	}
	return -1;
}

/* ---- the lease id index --------------------------------------------------
 */

/* index_ref is the bucket value of slot i of p. */
static uint32_t
index_ref(const lpool *p, uint32_t i)
{
	return (p->id << LINDEX_SLOT_BITS) | i;
}

/* index_slot returns the slot bucket value v stands for. */
static const lslot *
index_slot(const sv_lease_core *c, uint32_t v)
{
	return &c->pools[(v >> LINDEX_SLOT_BITS) - 1]
	            ->slots[v & ((1u << LINDEX_SLOT_BITS) - 1)];
}

/* index_home is the first bucket of lease id in a table of cap buckets
 * (Fibonacci hashing). */
static size_t
index_home(uint64_t id, size_t cap)
{
	return (size_t) ((id * UINT64_C(0x9E3779B97F4A7C15)) >> 32)
	    & (cap - 1);
}

/* index_find returns the bucket of lease id, or the empty bucket where
 * it would go. The table must not be empty. */
static size_t
index_find(const sv_lease_core *c, uint64_t id)
{
	const lindex *x = &c->index;
	size_t        i = index_home(id, x->cap);

	while (x->b[i] != 0 && index_slot(c, x->b[i])->id != id) {
		i = (i + 1) & (x->cap - 1);
	}
	return i;
}

/* index_get returns the bucket value of lease id, 0 if there is none. */
static uint32_t
index_get(const sv_lease_core *c, uint64_t id)
{
	return c->index.cap == 0 ? 0 : c->index.b[index_find(c, id)];
}

/* index_reserve makes room for one more entry (at most three quarters
 * full), rehashing into a table twice the size. */
static sv_err
index_reserve(sv_lease_core *c)
{
	lindex   *x = &c->index;
	size_t    cap;
	uint32_t *b;

	if ((x->n + 1) * 4 <= x->cap * 3) {
		return SV_OK;
	}
	cap = x->cap == 0 ? 64 : x->cap * 2;
	if ((b = calloc(cap, sizeof(*b))) == NULL) {
		return SV_ENOMEM;
	}
	for (size_t k = 0; k < x->cap; k++) {
		if (x->b[k] != 0) {
			size_t i = index_home(index_slot(c, x->b[k])->id, cap);
			while (b[i] != 0) {
				i = (i + 1) & (cap - 1);
			}
			b[i] = x->b[k];
		}
	}
	free(x->b);
	x->b   = b;
	x->cap = cap;
	return SV_OK;
}

/* index_put enters slot i of p, whose id is set, after index_reserve. */
static void
index_put(sv_lease_core *c, const lpool *p, uint32_t i)
{
	lindex *x = &c->index;
	size_t  k = index_home(p->slots[i].id, x->cap);

	while (x->b[k] != 0) {
		k = (k + 1) & (x->cap - 1);
	}
	x->b[k] = index_ref(p, i);
	x->n++;
}

/* index_del removes lease id (its slot still names it): backward shift,
 * moving later entries of the probe run into the hole unless their home
 * lies cyclically in (i, j]. */
static void
index_del(sv_lease_core *c, uint64_t id)
{
	lindex *x = &c->index;
	size_t  i, j;

	if (x->cap == 0 || x->b[i = index_find(c, id)] == 0) {
		return;
	}
	j = i;
	for (;;) {
		size_t home;
		j = (j + 1) & (x->cap - 1);
		if (x->b[j] == 0) {
			break;
		}
		home = index_home(index_slot(c, x->b[j])->id, x->cap);
		if (i <= j ? (i < home && home <= j)
		           : (i < home || home <= j)) {
			continue;
		}
		x->b[i] = x->b[j];
		i       = j;
	}
	x->b[i] = 0;
	x->n--;
}

/* lease_find finds lease id; on success *pp and *ip name its slot. */
static bool
lease_find(const sv_lease_core *c, uint64_t id, lpool **pp, uint32_t *ip)
{
	uint32_t v;
	lpool   *p;
	uint32_t i;

	if (id == 0 || (v = index_get(c, id)) == 0) {
		return false;
	}
	p = pool_get(c, v >> LINDEX_SLOT_BITS);
	i = v & ((1u << LINDEX_SLOT_BITS) - 1);
	if (p == NULL || i >= p->nslots || p->slots[i].state == SV_LEASE_FREE
	    || p->slots[i].id != id) {
		return false;
	}
	*pp = p;
	*ip = i;
	return true;
}

/* slot_key is the timer key of slot i of p. */
static uint64_t
slot_key(const lpool *p, uint32_t i)
{
	return ((uint64_t) p->id << 32) | i;
}

/* ---- the slot timer ------------------------------------------------------
 */

/* slot_due tells when something must happen to slot s (false: never). */
static bool
slot_due(const lslot *s, uint64_t *duep)
{
	bool     any = false;
	uint64_t due = 0;

	if (s->state == SV_LEASE_UNCLAIMED) {
		*duep = s->end_ms;
		return true;
	}
	if (s->state != SV_LEASE_HELD) {
		return false;
	}
	if (s->expiry_ms != 0) {
		due = s->expiry_ms;
		any = true;
	}
	if (s->disconnected && (!any || s->end_ms < due)) {
		due = s->end_ms;
		any = true;
	}
	*duep = due;
	return any;
}

/* slot_timer makes the armed timer of slot i match what is due: armed
 * again only when the due time changed, cancelled when nothing is due. */
static void
slot_timer(sv_lease_core *c, lpool *p, uint32_t i)
{
	lslot   *s   = &p->slots[i];
	uint64_t due = 0;

	if (!slot_due(s, &due)) {
		if (s->guard != 0) {
			timer_cancel(c, SV_LTIMER_SLOT, slot_key(p, i));
			s->guard = 0;
		}
		return;
	}
	if (s->guard != 0 && s->due_ms == due) {
		return;
	}
	s->due_ms = due;
	s->guard  = timer_arm(c, SV_LTIMER_SLOT, slot_key(p, i), due);
}

/* ---- grant and end of a lease --------------------------------------------
 */

static void grant_waiters(sv_lease_core *c, lpool *p, uint64_t now_ms);

/* lease_grant gives free slot i of p to h with the next token. */
static sv_err
lease_grant(sv_lease_core *c, lpool *p, uint32_t i, const sv_lease_holder *h,
    uint64_t now_ms, sv_lease_info *g)
{
	lslot        *s = &p->slots[i];
	uint64_t      id;
	sv_lease_info info;
	sv_err        rv;

	/* 2^32 - 1 grants of one slot, or leases of one core, in one epoch:
	 * a restart (a new epoch) is needed to go on. */
	if (s->counter == UINT32_MAX || c->next_lease == UINT32_MAX) {
		return SV_EEXHAUSTED;
	}
	id = ((uint64_t) c->epoch << 32) | (c->next_lease + 1u);
	if ((rv = index_reserve(c)) != SV_OK) {
		return rv;
	}
	c->next_lease++;
	s->counter++;
	s->state = SV_LEASE_HELD;
	s->id    = id;
	s->token = ((uint64_t) c->epoch << 32) | s->counter;
	slot_set_holder(s, h);
	s->expiry_ms    = p->ttl_ms != 0 ? now_ms + p->ttl_ms : 0;
	s->disconnected = false;
	s->end_ms       = 0;
	index_put(c, p, i);
	p->nheld++;
	c->nleases++;
	info = info_of(p, i);
	if (p->has_resource) {
		sv_lease_fx fx
		    = {.kind = SV_LFX_RESOURCE_PREPARE, .lease = info};
		fx.err    = SV_OK;
		fx.policy = p->policy;
		fx_push(c, &fx);
	}
	emit(c, SV_LEV_GRANTED, SV_LREASON_NONE, &info);
	slot_timer(c, p, i);
	if (g != NULL) {
		*g = info;
	}
	return SV_OK;
}

/* lease_end ends the lease on slot i of p for why, then hands the slot to
 * the waiters. A revocation (an end the holder did not ask for) is one
 * REVOKED event and one notice to the holder. */
static void
lease_end(sv_lease_core *c, lpool *p, uint32_t i, sv_lease_reason why,
    uint64_t now_ms)
{
	lslot        *s    = &p->slots[i];
	sv_lease_info info = info_of(p, i);

	switch (why) {
	case SV_LREASON_RELEASED:
	case SV_LREASON_SESSION_CLOSED:
		emit(c, SV_LEV_RELEASED, why, &info);
		break;
	case SV_LREASON_ABORTED:
		emit(c, SV_LEV_ABORTED, why, &info);
		break;
	default: {
		sv_lease_fx fx
		    = {.kind = SV_LFX_NOTICE_REVOKED, .reason = why};
		fx.lease = info;
		fx.err   = SV_OK;
		fx_push(c, &fx);
		emit(c, SV_LEV_REVOKED, why, &info);
		break;
	}
	}
	if (p->has_resource) {
		sv_lease_fx fx
		    = {.kind = SV_LFX_RESOURCE_RECLAIM, .lease = info};
		fx.err    = SV_OK;
		fx.policy = p->policy;
		fx.reason = why;
		fx_push(c, &fx);
	}
	index_del(c, s->id);
	s->state        = SV_LEASE_FREE;
	s->id           = 0;
	s->expiry_ms    = 0;
	s->end_ms       = 0;
	s->disconnected = false;
	slot_set_holder(s, NULL);
	slot_timer(c, p, i);
	p->nheld--;
	c->nleases--;
	grant_waiters(c, p, now_ms);
}

/* ---- waiters -------------------------------------------------------------
 */

static void
waiter_remove(lpool *p, uint32_t k)
{
	memmove(&p->w[k], &p->w[k + 1], (p->nw - k - 1) * sizeof(p->w[0]));
	p->nw--;
}

/* waiter_find finds waiter id (its pool is in the low 8 bits). */
static bool
waiter_find(const sv_lease_core *c, uint64_t id, lpool **pp, uint32_t *kp)
{
	lpool *p = pool_get(c, (uint32_t) (id & 0xffu) + 1u);

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

/* waiter_fit returns the slot a waiter would get now, or -1. */
static int64_t
waiter_fit(const lpool *p, const lwaiter *w)
{
	if (w->has_slot) {
		return p->slots[w->slot].state == SV_LEASE_FREE
		    ? (int64_t) w->slot
		    : -1;
	}
	for (uint32_t i = 0; i < p->nslots; i++) {
		if (p->slots[i].state == SV_LEASE_FREE) {
			return i;
		}
	}
	return -1;
}

/* grant_waiters answers, oldest first, every waiter of p that a free slot
 * fits. A waiter for a slot that is taken does not hold back the others. */
static void
grant_waiters(sv_lease_core *c, lpool *p, uint64_t now_ms)
{
	uint32_t k = 0;

	while (k < p->nw && p->nheld < p->nslots) {
		lwaiter       w = p->w[k];
		int64_t       i = waiter_fit(p, &w);
		sv_lease_info g = {0};
		sv_err        rv;

		if (i < 0) {
			k++;
			continue;
		}
		waiter_remove(p, k);
		timer_cancel(c, SV_LTIMER_WAITER, w.id);
		/* Acquire and restore never let a holder wait on a pool where
		 * it holds a lease; refuse rather than grant a second one. */
		rv = holder_slot(p, &w.holder) >= 0
		    ? SV_ECONFLICT
		    : lease_grant(c, p, (uint32_t) i, &w.holder, now_ms, &g);
		reply(c, w.id, rv, rv == SV_OK ? &g : NULL);
	}
}

/* waiters_drop answers SV_ECLOSED to every waiter of h, in every pool. */
static void
waiters_drop(sv_lease_core *c, const sv_lease_holder *h)
{
	for (uint32_t pi = 0; pi < c->npools; pi++) {
		lpool *p = c->pools[pi];
		for (uint32_t k = 0; k < p->nw;) {
			if (!sv_lease_holder_eq(&p->w[k].holder, h)) {
				k++;
				continue;
			}
			timer_cancel(c, SV_LTIMER_WAITER, p->w[k].id);
			reply(c, p->w[k].id, SV_ECLOSED, NULL);
			waiter_remove(p, k);
		}
	}
}

void
sv_lease_cancel_wait(sv_lease_core *c, uint64_t id, uint64_t now_ms)
{
	lpool   *p = NULL;
	uint32_t k = 0;

	(void) now_ms;
	if (waiter_find(c, id, &p, &k)) {
		timer_cancel(c, SV_LTIMER_WAITER, id);
		waiter_remove(p, k);
	}
}

/* waiter_timer: the deadline of waiter k of p may have come. */
static void
waiter_timer(sv_lease_core *c, lpool *p, uint32_t k, uint64_t now_ms)
{
	lwaiter      *w  = &p->w[k];
	sv_lease_info at = {.pool_id = p->id};

	if (now_ms < w->deadline_ms) {
		w->guard
		    = timer_arm(c, SV_LTIMER_WAITER, w->id, w->deadline_ms);
		return;
	}
	at.holder = w->holder;
	reply(c, w->id, SV_ETIMEDOUT, NULL);
	{
		sv_lease_fx fx = {.kind = SV_LFX_EVENT,
		    .event              = SV_LEV_WAIT_TIMEOUT,
		    .lease              = at,
		    .waiter             = w->id};
		fx.err         = SV_OK;
		fx_push(c, &fx);
	}
	waiter_remove(p, k);
}

/* ---- sessions ------------------------------------------------------------
 */

/* session_add records a session (the caller checked the bounds). */
static sv_err
session_add(sv_lease_core *c, uint64_t id, uint32_t uid, uint64_t ttl_ms,
    uint64_t now_ms)
{
	lsession *s;

	if (c->nsessions == c->capsessions) {
		uint32_t  cap = c->capsessions == 0 ? 16 : c->capsessions * 2;
		lsession *n   = realloc(c->sessions, cap * sizeof(*n));
		if (n == NULL) {
			return SV_ENOMEM;
		}
		c->sessions    = n;
		c->capsessions = cap;
	}
	s            = &c->sessions[c->nsessions++];
	s->id        = id;
	s->uid       = uid;
	s->ttl_ms    = ttl_ms;
	s->expiry_ms = now_ms + ttl_ms;
	s->guard     = timer_arm(c, SV_LTIMER_SESSION, id, s->expiry_ms);
	{
		sv_lease_info info  = {0};
		info.holder.kind    = SV_HOLDER_SESSION;
		info.holder.session = id;
		emit(c, SV_LEV_SESSION_OPENED, SV_LREASON_NONE, &info);
	}
	return SV_OK;
}

/* holder_end ends every lease of h for why (waiters first, so that a slot
 * freed here never goes to h itself). */
static void
holder_end(sv_lease_core *c, const sv_lease_holder *h, sv_lease_reason why,
    uint64_t now_ms)
{
	waiters_drop(c, h);
	for (uint32_t pi = 0; pi < c->npools; pi++) {
		lpool  *p = c->pools[pi];
		int64_t i = holder_slot(p, h);
		if (i >= 0) {
			lease_end(c, p, (uint32_t) i, why, now_ms);
		}
	}
}

/* session_end ends session id and its leases. */
static void
session_end(
    sv_lease_core *c, uint64_t id, sv_lease_reason why, uint64_t now_ms)
{
	sv_lease_holder h    = {.kind = SV_HOLDER_SESSION, .session = id};
	sv_lease_info   info = {0};

	holder_end(c, &h, why, now_ms);
	for (uint32_t i = 0; i < c->nsessions; i++) {
		if (c->sessions[i].id == id) {
			c->sessions[i] = c->sessions[--c->nsessions];
			break;
		}
	}
	timer_cancel(c, SV_LTIMER_SESSION, id);
	info.holder = h;
	emit(c, SV_LEV_SESSION_ENDED, why, &info);
}

sv_err
sv_lease_session_open(sv_lease_core *c, uint32_t uid, uint64_t ttl_ms,
    uint64_t now_ms, uint64_t *idp)
{
	uint64_t id;
	sv_err   rv;

	if (ttl_ms == 0) {
		return SV_EINVAL;
	}
	if (ttl_ms > SV_LEASE_MAX_MS) {
		return SV_ETOOLARGE;
	}
	if (c->nsessions >= SV_LEASE_MAX_SESSIONS
	    || c->next_session == UINT32_MAX) {
		return SV_EEXHAUSTED;
	}
	id = ((uint64_t) c->epoch << 32) | (c->next_session + 1u);
	if ((rv = session_add(c, id, uid, ttl_ms, now_ms)) != SV_OK) {
		return rv;
	}
	c->next_session++;
	*idp = id;
	return SV_OK;
}

bool
sv_lease_session_get(
    const sv_lease_core *c, uint64_t id, sv_lease_session_info *out)
{
	const lsession *s = session_get(c, id);

	if (s == NULL || id == 0) {
		return false;
	}
	*out
	    = (sv_lease_session_info) {s->id, s->uid, s->ttl_ms, s->expiry_ms};
	return true;
}

sv_err
sv_lease_session_renew(
    sv_lease_core *c, uint64_t id, uint32_t uid, uint64_t now_ms)
{
	lsession *s = session_get(c, id);

	if (s == NULL) {
		return SV_ENOTFOUND;
	}
	if (s->uid != uid) {
		return SV_EPERM;
	}
	s->expiry_ms = now_ms + s->ttl_ms;
	s->guard     = timer_arm(c, SV_LTIMER_SESSION, id, s->expiry_ms);
	return SV_OK;
}

sv_err
sv_lease_session_close(
    sv_lease_core *c, uint64_t id, uint32_t uid, uint64_t now_ms)
{
	lsession *s = session_get(c, id);

	if (s == NULL) {
		return SV_OK;
	}
	if (s->uid != uid) {
		return SV_EPERM;
	}
	session_end(c, id, SV_LREASON_SESSION_CLOSED, now_ms);
	return SV_OK;
}

/* ---- pools ---------------------------------------------------------------
 */

sv_err
sv_lease_core_create(uint32_t epoch, sv_lease_core **cp)
{
	sv_lease_core *c;

	if (epoch == 0 || epoch > SV_LEASE_MAX_EPOCH) {
		return SV_EINVAL;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		return SV_ENOMEM;
	}
	c->epoch = epoch;
	sv_fxring_init(&c->fx, sizeof(sv_lease_fx));
	*cp = c;
	return SV_OK;
}

void
sv_lease_core_destroy(sv_lease_core *c)
{
	if (c == NULL) {
		return;
	}
	for (uint32_t i = 0; i < c->npools; i++) {
		free(c->pools[i]->slots);
		free(c->pools[i]->w);
		free(c->pools[i]);
	}
	free(c->index.b);
	free(c->sessions);
	sv_fxring_fini(&c->fx);
	free(c);
}

/* name_check: 1..SV_LEASE_NAME_MAX bytes of [A-Za-z0-9_.-], the rule of
 * group names (svw_check_name), with the same errors. */
static sv_err
name_check(const char *name)
{
	size_t n = 0;

	if (name == NULL || name[0] == '\0') {
		return SV_EBADREQ;
	}
	for (const char *q = name; *q != '\0'; q++, n++) {
		char ch = *q;
		if (n >= SV_LEASE_NAME_MAX) {
			return SV_ETOOLARGE;
		}
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')
		        || (ch >= '0' && ch <= '9') || ch == '_' || ch == '.'
		        || ch == '-')) {
			return SV_EBADREQ;
		}
	}
	return SV_OK;
}

sv_err
sv_lease_pool_add(sv_lease_core *c, const char *name, uint32_t slots,
    uint64_t ttl_ms, uint64_t grace_ms, sv_lease_policy policy,
    bool has_resource, uint32_t *idp)
{
	lpool *p;
	sv_err rv;

	if ((rv = name_check(name)) != SV_OK) {
		return rv;
	}
	if (slots > SV_LEASE_MAX_SLOTS || ttl_ms > SV_LEASE_MAX_MS
	    || grace_ms > SV_LEASE_MAX_MS) {
		return SV_ETOOLARGE;
	}
	if (slots == 0
	    || (policy != SV_LEASE_KEEP && policy != SV_LEASE_TRUNCATE
	        && policy != SV_LEASE_REMOVE)) {
		return SV_EINVAL;
	}
	if (sv_lease_pool_find(c, name) != 0) {
		return SV_ECONFLICT;
	}
	if (c->npools >= SV_LEASE_MAX_POOLS) {
		return SV_EEXHAUSTED;
	}
	if ((p = calloc(1, sizeof(*p))) == NULL) {
		return SV_ENOMEM;
	}
	if ((p->slots = calloc(slots, sizeof(*p->slots))) == NULL) {
		free(p);
		return SV_ENOMEM;
	}
	p->id = c->npools + 1;
	memcpy(p->name, name, strlen(name) + 1);
	p->nslots             = slots;
	p->ttl_ms             = ttl_ms;
	p->grace_ms           = grace_ms;
	p->policy             = policy;
	p->has_resource       = has_resource;
	c->pools[c->npools++] = p;
	if (idp != NULL) {
		*idp = p->id;
	}
	return SV_OK;
}

uint32_t
sv_lease_pool_find(const sv_lease_core *c, const char *name)
{
	for (uint32_t i = 0; name != NULL && i < c->npools; i++) {
		if (strcmp(c->pools[i]->name, name) == 0) {
			return c->pools[i]->id;
		}
	}
	return 0;
}

const char *
sv_lease_pool_name(const sv_lease_core *c, uint32_t id)
{
	const lpool *p = pool_get(c, id);

	return p != NULL ? p->name : NULL;
}

uint32_t
sv_lease_pool_held(const sv_lease_core *c, uint32_t id)
{
	const lpool *p = pool_get(c, id);

	return p != NULL ? p->nheld : 0;
}

uint32_t
sv_lease_pool_count(const sv_lease_core *c)
{
	return c->npools;
}

bool
sv_lease_pool_get(const sv_lease_core *c, uint32_t id, sv_lease_pool_info *out)
{
	const lpool *p = pool_get(c, id);

	if (p == NULL) {
		return false;
	}
	*out = (sv_lease_pool_info) {.id = p->id,
	    .name                        = p->name,
	    .slots                       = p->nslots,
	    .ttl_ms                      = p->ttl_ms,
	    .grace_ms                    = p->grace_ms,
	    .policy                      = p->policy,
	    .has_resource                = p->has_resource,
	    .held                        = p->nheld,
	    .waiting                     = p->nw};
	return true;
}

uint32_t
sv_lease_pool_waiting(const sv_lease_core *c, uint32_t id)
{
	const lpool *p = pool_get(c, id);

	return p != NULL ? p->nw : 0;
}

size_t
sv_lease_count(const sv_lease_core *c)
{
	return c->nleases;
}

/* ---- requests from holders -----------------------------------------------
 */

/* waiter_of returns the index of h's waiter in p, or -1. */
static int64_t
waiter_of(const lpool *p, const sv_lease_holder *h)
{
	for (uint32_t k = 0; k < p->nw; k++) {
		if (sv_lease_holder_eq(&p->w[k].holder, h)) {
			return k;
		}
	}
	return -1;
}

/* waiter_add queues h on p. */
static sv_err
waiter_add(sv_lease_core *c, lpool *p, const sv_lease_holder *h,
    const sv_lease_req *req, uint64_t *waiterp)
{
	lwaiter *w;

	if (p->nw >= SV_LEASE_MAX_WAITERS) {
		return SV_EBUSY;
	}
	if (p->nw == p->capw) {
		uint32_t cap = p->capw == 0 ? 8 : p->capw * 2;
		lwaiter *n   = realloc(p->w, cap * sizeof(*n));
		if (n == NULL) {
			return SV_ENOMEM;
		}
		p->w    = n;
		p->capw = cap;
	}
	w              = &p->w[p->nw++];
	w->id          = (++c->next_waiter << 8) | (uint64_t) (p->id - 1);
	w->holder      = *h;
	w->has_slot    = req->has_slot;
	w->slot        = req->slot;
	w->deadline_ms = req->deadline_ms;
	w->guard = timer_arm(c, SV_LTIMER_WAITER, w->id, req->deadline_ms);
	*waiterp = w->id;
	return SV_OK;
}

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
	if ((rv = holder_check(c, h)) != SV_OK) {
		return rv;
	}
	if ((p = pool_get(c, req->pool_id)) == NULL) {
		return SV_ENOTFOUND;
	}
	if (req->has_slot && req->slot >= p->nslots) {
		return SV_EINVAL;
	}
	if ((i = holder_slot(p, h)) >= 0) {
		if (p->slots[i].state == SV_LEASE_UNCLAIMED
		    || (req->has_slot && req->slot != (uint32_t) i)) {
			return SV_ECONFLICT;
		}
		if (g != NULL) {
			*g = info_of(p, (uint32_t) i);
		}
		return SV_OK;
	}
	if ((i = waiter_of(p, h)) >= 0) {
		*waiterp = p->w[i].id;
		return SV_OK;
	}
	if (req->wait && req->deadline_ms > now_ms
	    && req->deadline_ms - now_ms > SV_LEASE_MAX_MS) {
		return SV_ETOOLARGE;
	}
	if (req->has_slot) {
		i = p->slots[req->slot].state == SV_LEASE_FREE
		    ? (int64_t) req->slot
		    : -1;
	} else {
		lwaiter any = {.has_slot = false};
		i           = waiter_fit(p, &any);
	}
	if (i >= 0) {
		return lease_grant(c, p, (uint32_t) i, h, now_ms, g);
	}
	if (!req->wait || req->deadline_ms <= now_ms) {
		return req->has_slot ? SV_EBUSY : SV_EEXHAUSTED;
	}
	return waiter_add(c, p, h, req, waiterp);
}

sv_err
sv_lease_renew(sv_lease_core *c, const sv_lease_holder *h, uint64_t id,
    uint64_t now_ms, sv_lease_info *g)
{
	lpool   *p = NULL;
	uint32_t i = 0;
	lslot   *s;

	if (!lease_find(c, id, &p, &i)) {
		return SV_ENOTFOUND;
	}
	s = &p->slots[i];
	if (h == NULL || !slot_held_by(s, h)) {
		return SV_EPERM;
	}
	if (s->state == SV_LEASE_UNCLAIMED) {
		return SV_ECONFLICT;
	}
	s->expiry_ms = p->ttl_ms != 0 ? now_ms + p->ttl_ms : 0;
	slot_timer(c, p, i);
	if (g != NULL) {
		*g = info_of(p, i);
	}
	return SV_OK;
}

sv_err
sv_lease_release(
    sv_lease_core *c, const sv_lease_holder *h, uint64_t id, uint64_t now_ms)
{
	lpool   *p = NULL;
	uint32_t i = 0;

	if (!lease_find(c, id, &p, &i)) {
		return SV_OK;
	}
	if (h == NULL || !slot_held_by(&p->slots[i], h)) {
		return SV_EPERM;
	}
	lease_end(c, p, i, SV_LREASON_RELEASED, now_ms);
	return SV_OK;
}

void
sv_lease_abort(sv_lease_core *c, uint64_t id, uint64_t now_ms)
{
	lpool   *p = NULL;
	uint32_t i = 0;

	if (lease_find(c, id, &p, &i)) {
		lease_end(c, p, i, SV_LREASON_ABORTED, now_ms);
	}
}

/* ---- reclaim ---------------------------------------------------------------
 */

void
sv_lease_holder_gone(sv_lease_core *c, sv_wkey key, uint64_t now_ms)
{
	sv_lease_holder h = {.kind = SV_HOLDER_WORKER, .worker = key};

	holder_end(c, &h, SV_LREASON_HOLDER_GONE, now_ms);
}

void
sv_lease_holder_disconnected(
    sv_lease_core *c, const sv_lease_holder *h, uint64_t now_ms)
{
	if (h == NULL) {
		return;
	}
	waiters_drop(c, h);
	for (uint32_t pi = 0; pi < c->npools; pi++) {
		lpool  *p = c->pools[pi];
		int64_t i = holder_slot(p, h);
		lslot  *s;

		if (i < 0) {
			continue;
		}
		s = &p->slots[i];
		if (s->state != SV_LEASE_HELD || s->disconnected) {
			continue; /* unclaimed: its claim deadline rules */
		}
		if (p->grace_ms == 0) {
			lease_end(c, p, (uint32_t) i, SV_LREASON_DISCONNECTED,
			    now_ms);
			continue;
		}
		s->disconnected = true;
		s->end_ms       = now_ms + p->grace_ms;
		{
			sv_lease_info info = info_of(p, (uint32_t) i);
			emit(c, SV_LEV_DISCONNECTED, SV_LREASON_NONE, &info);
		}
		slot_timer(c, p, (uint32_t) i);
	}
}

void
sv_lease_holder_reconnected(
    sv_lease_core *c, const sv_lease_holder *h, uint64_t now_ms)
{
	(void) now_ms;
	for (uint32_t pi = 0; h != NULL && pi < c->npools; pi++) {
		lpool  *p = c->pools[pi];
		int64_t i = holder_slot(p, h);
		lslot  *s;

		if (i < 0 || !p->slots[i].disconnected) {
			continue;
		}
		s               = &p->slots[i];
		s->disconnected = false;
		s->end_ms       = 0;
		{
			sv_lease_info info = info_of(p, (uint32_t) i);
			emit(c, SV_LEV_RECONNECTED, SV_LREASON_NONE, &info);
		}
		slot_timer(c, p, (uint32_t) i);
	}
}

/* slot_fire: the timer of slot i of p fired; end the lease if a deadline
 * has come (claim, then grace, then TTL), else arm it again. */
static void
slot_fire(sv_lease_core *c, lpool *p, uint32_t i, uint64_t now_ms)
{
	lslot *s = &p->slots[i];

	s->guard = 0;
	if (s->state == SV_LEASE_UNCLAIMED && now_ms >= s->end_ms) {
		lease_end(c, p, i, SV_LREASON_UNCLAIMED, now_ms);
	} else if (s->state == SV_LEASE_HELD && s->disconnected
	    && now_ms >= s->end_ms) {
		lease_end(c, p, i, SV_LREASON_DISCONNECTED, now_ms);
	} else if (s->state == SV_LEASE_HELD && s->expiry_ms != 0
	    && now_ms >= s->expiry_ms) {
		lease_end(c, p, i, SV_LREASON_EXPIRED, now_ms);
	} else {
		slot_timer(c, p, i);
	}
}

void
sv_lease_timer(sv_lease_core *c, sv_lease_timer_kind kind, uint64_t key,
    uint64_t guard, uint64_t now_ms)
{
	lpool    *p = NULL;
	uint32_t  k = 0;
	lsession *s;

	if (guard == 0) {
		return;
	}
	switch (kind) {
	case SV_LTIMER_SLOT:
		p = pool_get(c, (uint32_t) (key >> 32));
		k = (uint32_t) key;
		if (p != NULL && k < p->nslots && p->slots[k].guard == guard) {
			slot_fire(c, p, k, now_ms);
		}
		return;
	case SV_LTIMER_WAITER:
		if (waiter_find(c, key, &p, &k) && p->w[k].guard == guard) {
			waiter_timer(c, p, k, now_ms);
		}
		return;
	case SV_LTIMER_SESSION:
		if ((s = session_get(c, key)) == NULL || s->guard != guard) {
			return;
		}
		if (now_ms >= s->expiry_ms) {
			session_end(
			    c, key, SV_LREASON_SESSION_EXPIRED, now_ms);
		} else {
			s->guard = timer_arm(
			    c, SV_LTIMER_SESSION, key, s->expiry_ms);
		}
		return;
	}
}

/* ---- restart re-claim ----------------------------------------------------
 */

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
	if ((s = session_get(c, r->holder.session)) != NULL) {
		return s->uid == r->session_uid;
	}
	if (r->holder.session == 0 || (r->holder.session >> 32) >= c->epoch
	    || r->session_ttl_ms == 0 || r->session_ttl_ms > SV_LEASE_MAX_MS
	    || c->nsessions >= SV_LEASE_MAX_SESSIONS) {
		return false;
	}
	*errp = session_add(
	    c, r->holder.session, r->session_uid, r->session_ttl_ms, now_ms);
	return *errp == SV_OK;
}

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
	for (size_t r = 0; r < n && rv == SV_OK; r++) {
		const sv_lease_record *rec = &recs[r];
		lpool                 *p;
		lslot                 *s;

		p = pool_get(c, sv_lease_pool_find(c, rec->pool));
		if (p == NULL || rec->slot >= p->nslots
		    || p->slots[rec->slot].state != SV_LEASE_FREE
		    || rec->id == 0 || (rec->id >> 32) >= c->epoch
		    || (uint32_t) rec->token == 0
		    || (rec->token >> 32) >= c->epoch
		    || index_get(c, rec->id) != 0
		    || holder_slot(p, &rec->holder) >= 0
		    || !restore_holder(c, rec, now_ms, &rv)) {
			skipped++;
			continue;
		}
		if ((rv = index_reserve(c)) != SV_OK) {
			break;
		}
		s        = &p->slots[rec->slot];
		s->state = SV_LEASE_UNCLAIMED;
		s->id    = rec->id;
		s->token = rec->token;
		slot_set_holder(s, &rec->holder);
		s->expiry_ms    = 0;
		s->disconnected = false;
		s->end_ms       = now_ms + claim_grace_ms;
		index_put(c, p, rec->slot);
		p->nheld++;
		c->nleases++;
		{
			sv_lease_info info = info_of(p, rec->slot);
			emit(c, SV_LEV_RESTORED, SV_LREASON_NONE, &info);
		}
		slot_timer(c, p, rec->slot);
	}
	if (skippedp != NULL) {
		*skippedp = skipped;
	}
	return rv;
}

sv_err
sv_lease_claim(sv_lease_core *c, const sv_lease_holder *h, uint32_t pool_id,
    uint32_t slot, uint64_t token, uint64_t now_ms, sv_lease_info *g)
{
	lpool        *p;
	lslot        *s;
	sv_lease_info info;
	sv_err        rv;

	if ((rv = holder_check(c, h)) != SV_OK) {
		return rv;
	}
	if ((p = pool_get(c, pool_id)) == NULL) {
		return SV_ENOTFOUND;
	}
	if (slot >= p->nslots) {
		return SV_EINVAL;
	}
	s = &p->slots[slot];
	if (s->state == SV_LEASE_FREE) {
		return SV_ENOTFOUND;
	}
	if (!slot_held_by(s, h) || s->token != token) {
		info = info_of(p, slot);
		emit(c, SV_LEV_CLAIM_REFUSED, SV_LREASON_NONE, &info);
		return SV_ECONFLICT;
	}
	if (s->state == SV_LEASE_UNCLAIMED) {
		s->state     = SV_LEASE_HELD;
		s->end_ms    = 0;
		s->expiry_ms = p->ttl_ms != 0 ? now_ms + p->ttl_ms : 0;
		info         = info_of(p, slot);
		emit(c, SV_LEV_CLAIMED, SV_LREASON_NONE, &info);
		slot_timer(c, p, slot);
	}
	if (g != NULL) {
		*g = info_of(p, slot);
	}
	return SV_OK;
}

/* ---- listing ---------------------------------------------------------------
 */

bool
sv_lease_next(const sv_lease_core *c, sv_lease_iter *it,
    const sv_lease_holder *h, sv_lease_info *info, sv_lease_record *rec)
{
	for (; it->pool < c->npools; it->pool++, it->slot = 0) {
		const lpool *p = c->pools[it->pool];
		for (; it->slot < p->nslots; it->slot++) {
			const lslot    *s = &p->slots[it->slot];
			const lsession *ss;
			if (s->state == SV_LEASE_FREE
			    || (h != NULL && !slot_held_by(s, h))) {
				continue;
			}
			*info = info_of(p, it->slot);
			if (rec != NULL) {
				memset(rec, 0, sizeof(*rec));
				memcpy(rec->pool, p->name, sizeof(rec->pool));
				rec->slot      = it->slot;
				rec->id        = s->id;
				rec->token     = s->token;
				rec->expiry_ms = s->expiry_ms;
				rec->holder    = slot_holder(s);
				if (s->hkind == SV_HOLDER_SESSION
				    && (ss = session_get(c, s->hgen))
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

/* ---- names -----------------------------------------------------------------
 */

const char *
sv_lease_state_name(sv_lease_state s)
{
	switch (s) {
	case SV_LEASE_FREE:
		return "free";
	case SV_LEASE_HELD:
		return "held";
	case SV_LEASE_UNCLAIMED:
		return "unclaimed";
	}
	return "unknown";
}

const char *
sv_lease_event_name(sv_lease_event_kind k)
{
	switch (k) {
	case SV_LEV_GRANTED:
		return "granted";
	case SV_LEV_RELEASED:
		return "released";
	case SV_LEV_REVOKED:
		return "revoked";
	case SV_LEV_CLAIMED:
		return "claimed";
	case SV_LEV_CLAIM_REFUSED:
		return "claim-refused";
	case SV_LEV_WAIT_TIMEOUT:
		return "wait-timeout";
	case SV_LEV_RESTORED:
		return "restored";
	case SV_LEV_DISCONNECTED:
		return "disconnected";
	case SV_LEV_RECONNECTED:
		return "reconnected";
	case SV_LEV_ABORTED:
		return "aborted";
	case SV_LEV_SESSION_OPENED:
		return "session-opened";
	case SV_LEV_SESSION_ENDED:
		return "session-ended";
	}
	return "unknown";
}

const char *
sv_lease_reason_name(sv_lease_reason r)
{
	switch (r) {
	case SV_LREASON_NONE:
		return "none";
	case SV_LREASON_RELEASED:
		return "released";
	case SV_LREASON_HOLDER_GONE:
		return "holder-gone";
	case SV_LREASON_DISCONNECTED:
		return "disconnected";
	case SV_LREASON_EXPIRED:
		return "expired";
	case SV_LREASON_UNCLAIMED:
		return "unclaimed";
	case SV_LREASON_SESSION_EXPIRED:
		return "session-expired";
	case SV_LREASON_SESSION_CLOSED:
		return "session-closed";
	case SV_LREASON_ABORTED:
		return "aborted";
	}
	return "unknown";
}

const char *
sv_lease_policy_name(sv_lease_policy p)
{
	switch (p) {
	case SV_LEASE_KEEP:
		return "keep";
	case SV_LEASE_TRUNCATE:
		return "truncate";
	case SV_LEASE_REMOVE:
		return "remove";
	}
	return "unknown";
}
