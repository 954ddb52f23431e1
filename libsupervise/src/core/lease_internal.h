/*
 * lease_internal.h — the lease core's records and the functions its files
 * share (private to core/lease*.c; the API is core/lease.h).
 *
 * Layout. A pool owns an array of slots; a slot record is the lease on it
 * (at most one: the "one live lease per slot" invariant is structural) and
 * keeps the slot's token counter between leases. A slot record is 72 bytes
 * (x86-64), leased or not: the holder is kept unpacked into its fields and
 * one deadline serves the claim (UNCLAIMED) and the grace (disconnected).
 * A hash index of lease ids finds a lease from its id (lease_index.c, a
 * ref index of idmap.h); a bucket is 4 bytes, (pool id << 12) | slot, and
 * the lease id it stands for is read from that slot. Each pool has a FIFO of
 * waiters; a waiter id carries the pool's index in its low 8 bits so that a
 * timer finds it without a search.
 *
 * A slot's state is stored (svl_phase: free, held, grace, unclaimed) and
 * every change of a slot goes through svl_slot_fire (lease_table.c): one
 * static table, state x event -> handler, next state, doc. Entering and
 * leaving free keeps the derived counts (pool nheld, core nleases) right;
 * the handlers keep the index and the slot's timer right and emit the
 * events; a lease that ends hands the freed slot to the waiters before
 * the event returns. The entry points validate a request and decide
 * which event happens; docs/leases.md shows the table row by row.
 *
 * Lossless: every public entry point reserves first (lease_reserve.c) and
 * returns SV_ENOMEM having changed nothing; below that, nothing allocates.
 *
 * The files, one concept each:
 *   lease_pools.c     the core and its pools: creation, declaration, lookups
 *   lease_effects.c   the effect queue and the effects transitions emit
 *   lease_reserve.c   the bounds an entry point reserves before it acts
 *   lease_index.c     the lease id index
 *   lease_table.c     the slot state machine: the table and svl_slot_fire
 *   lease_slots.c     a slot's lease: its holder, its timer, grant and end
 *   lease_waiters.c   the FIFO of acquires waiting on a pool
 *   lease_sessions.c  sessions of non-worker holders
 *   lease.c           requests from holders: acquire, renew, release, abort
 *   lease_reclaim.c   leases ended by the supervisor: reap, disconnect,
 *                     deadlines (the timer entry point)
 *   lease_restore.c   across a restart: records out (sv_lease_next), back
 *                     in (restore) and re-claimed (claim)
 *   lease_names.c     names of states, events, reasons and policies
 */
#ifndef SV_CORE_LEASE_INTERNAL_H
#define SV_CORE_LEASE_INTERNAL_H

#include "core/fxring.h"
#include "idmap.h"
#include "core/lease.h"

/* The stored state of a slot (the slot machine, lease_table.c). Clients
 * see free, held (grace: held and disconnected) or unclaimed. */
typedef enum svl_phase {
	SVL_FREE,
	SVL_HELD,
	SVL_GRACE, /* held, its holder's connections gone: grace runs */
	SVL_UNCLAIMED,
	SVL_PHASE_COUNT
} svl_phase;

/* What can happen to a slot (docs/leases.md, "Slot transitions"). */
typedef enum svl_event {
	SLE_GRANT,
	SLE_RESTORE,
	SLE_CLAIM,
	SLE_RENEW,
	SLE_RELEASE,
	SLE_ABORT,
	SLE_REVOKE,
	SLE_DISCONNECT,
	SLE_CUT,
	SLE_RECONNECT,
	SLE_TIMER,
	SLE_EXPIRE,
	SLE_GRACE_OVER,
	SLE_CLAIM_OVER,
	SLE_COUNT
} svl_event;

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
	uint8_t  phase; /* svl_phase (lease_table.c) */
	uint8_t  hkind; /* sv_holder_kind of the holder; 0: none */
} lslot;

/* The slot tables' size rests on this (docs/leases.md, "Bounds"). */
_Static_assert(sizeof(lslot) <= 72, "a slot record stays compact");

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
	sv_idref  index; /* lease id -> (pool id, slot): idmap.h */
	size_t    nleases;
	uint64_t  misfires; /* slot events without a cell (stays 0) */
	sv_fxring fx; /* pending effects (core/fxring.h) */
};

/* Functions shared between the core's files, by the file that defines
 * them (each is described there). */

/* lease_effects.c */
void svl_fx_push(sv_lease_core *c, const sv_lease_fx *fx);
void svl_emit(sv_lease_core *c, sv_lease_event_kind ev, sv_lease_reason why,
    const sv_lease_info *lease);
uint64_t svl_timer_arm(
    sv_lease_core *c, sv_lease_timer_kind kind, uint64_t key, uint64_t due_ms);
void svl_timer_cancel(
    sv_lease_core *c, sv_lease_timer_kind kind, uint64_t key);
void svl_reply(
    sv_lease_core *c, uint64_t id, sv_err err, const sv_lease_info *lease);

/* lease_reserve.c */
void svl_end_bound(const lpool *p, size_t *nfx, size_t *nidx);
void svl_waiters_bound(
    const sv_lease_core *c, const sv_lease_holder *h, size_t *nfx);
void   svl_holder_end_bound(const sv_lease_core *c, const sv_lease_holder *h,
      size_t *nfx, size_t *nidx);
sv_err svl_reserve(sv_lease_core *c, size_t nfx, size_t nidx);
sv_err svl_sessions_reserve(sv_lease_core *c, uint32_t n);
sv_err svl_waiters_reserve(lpool *p);

/* lease_index.c */
uint32_t svl_index_get(const sv_lease_core *c, uint64_t id);
sv_err   svl_index_reserve(sv_lease_core *c, size_t n);
void     svl_index_put(sv_lease_core *c, const lpool *p, uint32_t i);
void     svl_index_del(sv_lease_core *c, uint64_t id);
bool     svl_lease_find(
        const sv_lease_core *c, uint64_t id, lpool **pp, uint32_t *ip);

/* What a slot event carries (each field names the events that read it). */
typedef struct svl_slot_arg {
	uint64_t               now_ms; /* all */
	sv_lease_reason        why; /* RELEASE, REVOKE */
	const sv_lease_holder *holder; /* GRANT */
	const sv_lease_record *rec; /* RESTORE */
	uint64_t               claim_grace_ms; /* RESTORE */
	sv_lease_info *out; /* GRANT: the lease granted (may be NULL) */
} svl_slot_arg;

struct lpool;

/* A slot handler: carries out an event on slot i of p, which has just
 * moved from state `from` to the cell's next state. */
typedef void (*svl_slot_fn)(sv_lease_core *c, struct lpool *p, uint32_t i,
    svl_phase from, const svl_slot_arg *a);

/* One cell of the slot table: handler NULL means no transition. */
typedef struct svl_slot_cell {
	svl_slot_fn handler;
	svl_phase   next;
	const char *name; /* the handler's name, for the docs */
	const char *doc; /* what happens, one line */
} svl_slot_cell;

/* lease_table.c */
bool svl_slot_fire(sv_lease_core *c, struct lpool *p, uint32_t i, svl_event ev,
    const svl_slot_arg *a);
const svl_slot_cell *svl_slot_cell_at(svl_phase st, svl_event ev);
sv_lease_state       svl_phase_state(svl_phase st);
const char          *svl_phase_name(svl_phase st);
const char          *svl_phase_doc(svl_phase st);
const char          *svl_event_name(svl_event ev);
const char          *svl_event_doc(svl_event ev);

/* lease_slots.c */
sv_lease_holder svl_slot_holder(const lslot *s);
void            svl_slot_set_holder(lslot *s, const sv_lease_holder *h);
bool            svl_slot_held_by(const lslot *s, const sv_lease_holder *h);
int64_t         svl_holder_slot(const lpool *p, const sv_lease_holder *h);
sv_lease_info   svl_info_of(const lpool *p, uint32_t i);
void            svl_slot_timer(sv_lease_core *c, lpool *p, uint32_t i);
sv_err          svl_lease_grant(sv_lease_core *c, lpool *p, uint32_t i,
             const sv_lease_holder *h, uint64_t now_ms, sv_lease_info *g);
void svl_lease_end(sv_lease_core *c, lpool *p, uint32_t i, sv_lease_reason why,
    uint64_t now_ms);
void svl_slot_end(sv_lease_core *c, lpool *p, uint32_t i, svl_phase from,
    sv_lease_reason why, uint64_t now_ms);

/* lease_waiters.c */
bool svl_waiter_find(
    const sv_lease_core *c, uint64_t id, lpool **pp, uint32_t *kp);
int64_t svl_waiter_of(const lpool *p, const sv_lease_holder *h);
int64_t svl_waiter_fit(const lpool *p, const lwaiter *w);
sv_err  svl_waiter_add(sv_lease_core *c, lpool *p, const sv_lease_holder *h,
     const sv_lease_req *req, uint64_t *waiterp);
void    svl_grant_waiters(sv_lease_core *c, lpool *p, uint64_t now_ms);
void    svl_waiters_drop(sv_lease_core *c, const sv_lease_holder *h);
sv_err  svl_waiter_timer(
     sv_lease_core *c, lpool *p, uint32_t k, uint64_t now_ms);

/* lease_sessions.c */
lsession *svl_session_get(const sv_lease_core *c, uint64_t id);
sv_err    svl_session_add(sv_lease_core *c, uint64_t id, uint32_t uid,
       uint64_t ttl_ms, uint64_t now_ms);
sv_err    svl_session_timer(
       sv_lease_core *c, uint64_t id, uint64_t guard, uint64_t now_ms);

/* lease_pools.c */
lpool *svl_pool_get(const sv_lease_core *c, uint32_t id);

/* lease.c */
sv_err svl_holder_check(const sv_lease_core *c, const sv_lease_holder *h);

/* lease_reclaim.c */
void svl_holder_end(sv_lease_core *c, const sv_lease_holder *h,
    sv_lease_reason why, uint64_t now_ms);

#endif /* SV_CORE_LEASE_INTERNAL_H */
