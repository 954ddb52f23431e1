/*
 * lease.h — leases on slots of pools (pure decision core).
 *
 * A pool is a named set of slots 0..slots-1 that the supervisor owns (for
 * example one metrics file per slot). A holder takes a slot by acquiring a
 * lease on the pool and gets {lease id, pool, slot, fencing token, expiry}.
 * sv_lease_core decides every grant, renewal, release, wait, revocation and
 * restart re-claim. Like core/supervision.h it performs no I/O, reads no
 * clock (every entry takes now_ms) and allocates only its own tables. The
 * shell (the daemon, once wired) feeds it what it learned from the kernel
 * and the connections, and carries out the effects it pops with
 * sv_lease_pop_effect: reply to a waiting acquirer, send a revocation
 * notice to a holder, publish an event, arm or cancel a timer, prepare or
 * reclaim a slot's resource.
 *
 * Holders. A holder is either a worker process, named by its kernel-verified
 * key (group id, ordinal, generation) — two generations of one ordinal are
 * two holders — or a session that this core opened for a non-worker client
 * (a tool), with its own TTL. The core never reads identities out of message
 * content: the shell resolves the caller and passes the holder in.
 *
 * Fencing tokens. token = (epoch << 32) | counter, with a counter per slot
 * that starts at 1 in each epoch; the epoch is given at creation and must
 * grow across supervisor restarts. So tokens of one slot strictly increase
 * for ever, and a resource can refuse a holder whose token is stale.
 *
 * Timers are keyed and guarded as in supervision.h: every arm carries a
 * fresh guard; a timer that fires with a stale guard is ignored.
 *
 * Lossless. Every entry point that changes state first reserves what it
 * can need (effects, table room: core/lease_reserve.c); when that fails it
 * returns SV_ENOMEM having changed nothing and queued no effect, so the
 * shell may call it again with the same arguments. Every such entry point
 * lists SV_ENOMEM among its errors, including those about something that
 * has already happened (a reap, a timer), which the shell retries.
 *
 * The state machine (slot state x event), the reclaim rules, the restart
 * re-claim and the bounds are in docs/leases.md.
 */
#ifndef SV_CORE_LEASE_H
#define SV_CORE_LEASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/pidmap.h"
#include "supervise/supervise.h"

/* Longest pool name in bytes (as a group name, SVW_MAX_NAME). */
#define SV_LEASE_NAME_MAX 64u
/* Bound of the number of pools of one core. */
#define SV_LEASE_MAX_POOLS 256u
/* Bound of the number of slots of one pool (as SV_ORDINALS_MAX). */
#define SV_LEASE_MAX_SLOTS 4096u
/* Bound of the acquirers waiting on one pool. */
#define SV_LEASE_MAX_WAITERS 1024u
/* Bound of the open sessions of one core. */
#define SV_LEASE_MAX_SESSIONS 1024u
/* Bound of every duration (TTL, grace, wait): one day. */
#define SV_LEASE_MAX_MS (24ull * 3600ull * 1000ull)
/* Largest epoch (lease ids must fit the lease index, a signed 64-bit key). */
#define SV_LEASE_MAX_EPOCH 0x7fffffffu

/* What happens to a slot's resource when its lease ends. */
typedef enum sv_lease_policy {
	SV_LEASE_KEEP     = 0, /* leave it as it is */
	SV_LEASE_TRUNCATE = 1, /* empty it */
	SV_LEASE_REMOVE   = 2, /* delete it */
} sv_lease_policy;

typedef enum sv_holder_kind {
	SV_HOLDER_WORKER  = 1, /* a worker process, by its key */
	SV_HOLDER_SESSION = 2, /* a session opened by sv_lease_session_open */
} sv_holder_kind;

/* Who holds (or asks for) a lease. Only the field of the kind is used. */
typedef struct sv_lease_holder {
	sv_holder_kind kind;
	sv_wkey        worker; /* WORKER */
	uint64_t       session; /* SESSION */
} sv_lease_holder;

/* State of a slot. */
typedef enum sv_lease_state {
	SV_LEASE_FREE      = 0,
	SV_LEASE_HELD      = 1,
	SV_LEASE_UNCLAIMED = 2, /* restored after a restart, not re-claimed */
} sv_lease_state;

/* A lease as shown to the shell (grant replies, lists, effects). */
typedef struct sv_lease_info {
	uint64_t        id; /* never 0; never reused */
	uint32_t        pool_id;
	uint32_t        slot;
	uint64_t        token;
	uint64_t        expiry_ms; /* 0: no TTL */
	sv_lease_holder holder;
	sv_lease_state  state;
	bool            disconnected; /* the holder's connection is gone */
} sv_lease_info;

/* An acquire request. */
typedef struct sv_lease_req {
	uint32_t pool_id;
	bool     has_slot; /* ask for this slot rather than the lowest free */
	uint32_t slot;
	bool     wait; /* queue when nothing fits, until deadline_ms */
	uint64_t deadline_ms; /* absolute, in the now_ms clock */
} sv_lease_req;

/* Why a lease ended. */
typedef enum sv_lease_reason {
	SV_LREASON_NONE            = 0,
	SV_LREASON_RELEASED        = 1, /* the holder released it */
	SV_LREASON_HOLDER_GONE     = 2, /* the worker was reaped */
	SV_LREASON_DISCONNECTED    = 3, /* connection gone past the grace */
	SV_LREASON_EXPIRED         = 4, /* TTL lapsed without renewal */
	SV_LREASON_UNCLAIMED       = 5, /* restored, not re-claimed in time */
	SV_LREASON_SESSION_EXPIRED = 6, /* its session's TTL lapsed */
	SV_LREASON_SESSION_CLOSED  = 7, /* its session was closed */
	SV_LREASON_ABORTED         = 8, /* the shell could not prepare it */
} sv_lease_reason;

typedef enum sv_lease_event_kind {
	SV_LEV_GRANTED        = 1,
	SV_LEV_RELEASED       = 2, /* ended by its holder (no notice) */
	SV_LEV_REVOKED        = 3, /* ended by the supervisor (with notice) */
	SV_LEV_CLAIMED        = 4, /* re-claimed after a restart */
	SV_LEV_CLAIM_REFUSED  = 5, /* lease: the slot as it is */
	SV_LEV_WAIT_TIMEOUT   = 6, /* lease.pool_id: the pool waited on */
	SV_LEV_RESTORED       = 7, /* loaded by sv_lease_restore */
	SV_LEV_DISCONNECTED   = 8, /* grace started */
	SV_LEV_RECONNECTED    = 9, /* grace ended, lease kept */
	SV_LEV_ABORTED        = 10, /* a grant undone (sv_lease_abort) */
	SV_LEV_SESSION_OPENED = 11, /* lease.holder: the session */
	SV_LEV_SESSION_ENDED  = 12, /* reason: expired or closed */
} sv_lease_event_kind;

typedef enum sv_lease_timer_kind {
	SV_LTIMER_SLOT    = 1, /* key: (pool_id << 32) | slot */
	SV_LTIMER_WAITER  = 2, /* key: waiter id */
	SV_LTIMER_SESSION = 3, /* key: session id */
} sv_lease_timer_kind;

typedef enum sv_lease_fx_kind {
	/* Answer the queued acquire `waiter`: err SV_OK with lease, or
	 * SV_ETIMEDOUT (deadline), or SV_ECLOSED (its holder went away, nobody
	 * to answer: the shell just forgets the request). */
	SV_LFX_REPLY_WAITER = 1,
	/* Tell lease.holder that lease was revoked for reason. */
	SV_LFX_NOTICE_REVOKED = 2,
	/* Publish event (about lease, with reason). */
	SV_LFX_EVENT = 3,
	/* Arm or re-arm timer (timer, key) at due_ms with guard: it replaces
	 * any timer of the same kind and key. */
	SV_LFX_TIMER_ARM = 4,
	/* Cancel timer (timer, key). */
	SV_LFX_TIMER_CANCEL = 5,
	/* Create or reset the resource of (lease.pool_id, lease.slot) for
	 * lease.holder; comes before the grant it belongs to. */
	SV_LFX_RESOURCE_PREPARE = 6,
	/* The lease on (lease.pool_id, lease.slot) ended: apply policy. */
	SV_LFX_RESOURCE_RECLAIM = 7,
} sv_lease_fx_kind;

typedef struct sv_lease_fx {
	sv_lease_fx_kind    kind;
	sv_lease_event_kind event; /* EVENT */
	sv_lease_reason     reason; /* EVENT, NOTICE_REVOKED */
	sv_lease_info       lease; /* the lease concerned */
	uint64_t            waiter; /* REPLY_WAITER; EVENT WAIT_TIMEOUT */
	sv_err              err; /* REPLY_WAITER */
	sv_lease_timer_kind timer; /* TIMER_ARM, TIMER_CANCEL */
	uint64_t            key;
	uint64_t            due_ms;
	uint64_t            guard;
	sv_lease_policy     policy; /* RESOURCE_RECLAIM */
} sv_lease_fx;

/*
 * A lease as journaled by the shell and given back to sv_lease_restore
 * after a supervisor restart. The pool is named (pool ids are not stable
 * across restarts). expiry_ms is in the old supervisor's clock and is only
 * informational: a restored lease gets a claim deadline instead.
 */
typedef struct sv_lease_record {
	char            pool[SV_LEASE_NAME_MAX + 1];
	uint32_t        slot;
	uint64_t        id;
	uint64_t        token;
	uint64_t        expiry_ms;
	sv_lease_holder holder;
	uint32_t        session_uid; /* SESSION holders: the session's owner */
	uint64_t        session_ttl_ms; /* SESSION holders */
} sv_lease_record;

/* Cursor of sv_lease_next; start from SV_LEASE_ITER_INIT. */
typedef struct sv_lease_iter {
	uint32_t pool; /* index */
	uint32_t slot;
} sv_lease_iter;
#define SV_LEASE_ITER_INIT \
	{                  \
		0, 0       \
	}

typedef struct sv_lease_core sv_lease_core;

/*
 * sv_lease_core_create makes an empty lease core for supervisor epoch
 * `epoch` (it must be greater than the epoch of every lease restored into
 * it). On SV_OK *cp belongs to the caller: free it with
 * sv_lease_core_destroy. Errors: SV_EINVAL (epoch above SV_LEASE_MAX_EPOCH
 * or 0), SV_ENOMEM.
 */
sv_err sv_lease_core_create(uint32_t epoch, sv_lease_core **cp);

/* sv_lease_core_destroy frees the core, its pools and sessions. NULL is
 * ignored. Pending effects are dropped. */
void sv_lease_core_destroy(sv_lease_core *c);

/*
 * sv_lease_pool_add declares a pool of `slots` slots named name (copied):
 * ttl_ms is the lease TTL (0: none), grace_ms how long a holder's connection
 * may be gone before its leases are revoked (0: at once), policy what a
 * lease's end does to the slot's resource, has_resource whether the pool
 * owns per-slot resources (then grants are preceded by RESOURCE_PREPARE and
 * ends followed by RESOURCE_RECLAIM effects). On SV_OK *idp (may be NULL)
 * is the pool id (never 0).
 * Errors: SV_EBADREQ (empty name, or a byte outside [A-Za-z0-9_.-]),
 * SV_ETOOLARGE (name over SV_LEASE_NAME_MAX bytes, slots over
 * SV_LEASE_MAX_SLOTS, ttl_ms or grace_ms over SV_LEASE_MAX_MS), SV_EINVAL
 * (slots 0, unknown policy), SV_ECONFLICT (a pool has that name),
 * SV_EEXHAUSTED (SV_LEASE_MAX_POOLS pools), SV_ENOMEM.
 */
sv_err sv_lease_pool_add(sv_lease_core *c, const char *name, uint32_t slots,
    uint64_t ttl_ms, uint64_t grace_ms, sv_lease_policy policy,
    bool has_resource, uint32_t *idp);

/* sv_lease_pool_find returns the id of the pool named name, or 0. */
uint32_t sv_lease_pool_find(const sv_lease_core *c, const char *name);

/* sv_lease_pool_name returns the name of pool id (NULL if none); valid as
 * long as the core. */
const char *sv_lease_pool_name(const sv_lease_core *c, uint32_t id);

/* A pool as the core holds it (sv_lease_pool_get): a snapshot. */
typedef struct sv_lease_pool_info {
	uint32_t        id;
	const char     *name; /* the core's copy: valid as long as the core */
	uint32_t        slots;
	uint64_t        ttl_ms;
	uint64_t        grace_ms;
	sv_lease_policy policy;
	bool            has_resource;
	uint32_t        held; /* as sv_lease_pool_held */
	uint32_t        waiting; /* as sv_lease_pool_waiting */
} sv_lease_pool_info;

/* sv_lease_pool_count returns the number of pools: their ids are 1 to
 * that number (pools are never removed). */
uint32_t sv_lease_pool_count(const sv_lease_core *c);

/* sv_lease_pool_get fills *out (not NULL) with pool id and returns true,
 * or returns false when there is no such pool. */
bool sv_lease_pool_get(
    const sv_lease_core *c, uint32_t id, sv_lease_pool_info *out);

/* sv_lease_pool_held returns the number of slots of pool id that are held
 * or unclaimed (0 if there is no such pool). */
uint32_t sv_lease_pool_held(const sv_lease_core *c, uint32_t id);

/* sv_lease_pool_waiting returns the number of acquires queued on pool id
 * (0 if there is no such pool). */
uint32_t sv_lease_pool_waiting(const sv_lease_core *c, uint32_t id);

/*
 * sv_lease_session_open opens a session for a non-worker client whose
 * kernel-verified uid is uid. It lives ttl_ms unless renewed; at its end
 * its leases are revoked. On SV_OK *idp is the session id (never 0).
 * Errors: SV_EINVAL (ttl_ms 0), SV_ETOOLARGE (ttl_ms over SV_LEASE_MAX_MS),
 * SV_EEXHAUSTED (SV_LEASE_MAX_SESSIONS open), SV_ENOMEM.
 */
sv_err sv_lease_session_open(sv_lease_core *c, uint32_t uid, uint64_t ttl_ms,
    uint64_t now_ms, uint64_t *idp);

/* An open session as the core holds it (sv_lease_session_get). */
typedef struct sv_lease_session_info {
	uint64_t id;
	uint32_t uid; /* its owner */
	uint64_t ttl_ms;
	uint64_t expiry_ms; /* in the now_ms clock */
} sv_lease_session_info;

/* sv_lease_session_get fills *out (not NULL) with open session id and
 * returns true, or returns false when no such session is open. */
bool sv_lease_session_get(
    const sv_lease_core *c, uint64_t id, sv_lease_session_info *out);

/*
 * sv_lease_session_renew gives session id a fresh TTL. It is also how a
 * client resumes a session restored after a supervisor restart.
 * Errors: SV_ENOTFOUND (no such session), SV_EPERM (uid is not its owner),
 * SV_ENOMEM.
 */
sv_err sv_lease_session_renew(
    sv_lease_core *c, uint64_t id, uint32_t uid, uint64_t now_ms);

/*
 * sv_lease_session_close ends session id: its leases end (RELEASED events,
 * reason SESSION_CLOSED), its waiters are answered SV_ECLOSED. Closing a
 * session that does not exist is a successful no-op.
 * Errors: SV_EPERM (uid is not its owner), SV_ENOMEM.
 */
sv_err sv_lease_session_close(
    sv_lease_core *c, uint64_t id, uint32_t uid, uint64_t now_ms);

/*
 * sv_lease_acquire asks for a lease on req->pool_id for holder h: the
 * requested slot (req->has_slot) or the lowest free one. Three outcomes:
 *   - granted: SV_OK, *g filled, *waiterp set to 0;
 *   - already held by h: SV_OK with that same lease (idempotent; a holder
 *     has at most one lease per pool);
 *   - queued (req->wait and nothing fits): SV_OK, *waiterp set to the
 *     waiter id; the answer comes later as a REPLY_WAITER effect, granted in
 *     FIFO order as slots free, or SV_ETIMEDOUT at req->deadline_ms. Asking
 *     again while queued gives the same waiter id. Waiter ids are
 *     handles of this core only (not journaled, not unique across
 *     restarts).
 * Errors: SV_ENOTFOUND (no such pool, or h is a session that is not open),
 * SV_EINVAL (slot out of range, bad holder kind, req or waiterp NULL;
 * g may be NULL), SV_ETOOLARGE (deadline
 * more than SV_LEASE_MAX_MS away), SV_EEXHAUSTED (no free slot, no wait
 * or deadline already passed), SV_EBUSY (the requested slot is taken and
 * no wait; or SV_LEASE_MAX_WAITERS already wait), SV_ECONFLICT (h holds
 * another slot of this pool, or an unclaimed restored lease in it: claim
 * it with sv_lease_claim), SV_ENOMEM.
 */
sv_err sv_lease_acquire(sv_lease_core *c, const sv_lease_holder *h,
    const sv_lease_req *req, uint64_t now_ms, sv_lease_info *g,
    uint64_t *waiterp);

/*
 * sv_lease_cancel_wait withdraws waiter id (its client went away). No
 * REPLY_WAITER follows. Unknown ids are a successful no-op.
 * Errors: SV_ENOMEM.
 */
sv_err sv_lease_cancel_wait(sv_lease_core *c, uint64_t id, uint64_t now_ms);

/*
 * sv_lease_renew extends lease id by its pool's TTL from now. *g (may be
 * NULL) receives the lease. Errors: SV_ENOTFOUND (no such lease),
 * SV_EPERM (h is not its holder), SV_ECONFLICT (restored and not re-claimed
 * yet), SV_ENOMEM.
 */
sv_err sv_lease_renew(sv_lease_core *c, const sv_lease_holder *h, uint64_t id,
    uint64_t now_ms, sv_lease_info *g);

/*
 * sv_lease_release ends lease id (RELEASED event, RESOURCE_RECLAIM for a
 * pool with resources) and gives the slot to the first fitting waiter.
 * Releasing a lease that no longer exists is a successful no-op.
 * Errors: SV_EPERM (h is not its holder), SV_ENOMEM.
 */
sv_err sv_lease_release(
    sv_lease_core *c, const sv_lease_holder *h, uint64_t id, uint64_t now_ms);

/*
 * sv_lease_abort undoes the grant of lease id because the shell could not
 * prepare its resource (ABORTED event, no notice): the slot is free again
 * (its token stays used). Unknown ids are ignored. Errors: SV_ENOMEM.
 */
sv_err sv_lease_abort(sv_lease_core *c, uint64_t id, uint64_t now_ms);

/*
 * sv_lease_holder_gone: worker key was reaped. Each of its leases is
 * revoked (HOLDER_GONE) and each freed slot goes to the first fitting
 * waiter; its waiters are answered SV_ECLOSED. Errors: SV_ENOMEM.
 */
sv_err sv_lease_holder_gone(sv_lease_core *c, sv_wkey key, uint64_t now_ms);

/*
 * sv_lease_holder_disconnected: every connection of holder h is gone. Its
 * waiters are answered SV_ECLOSED; each of its held leases is revoked
 * (DISCONNECTED) once its pool's grace has passed without
 * sv_lease_holder_reconnected (at once for a grace of 0).
 * Errors: SV_ENOMEM.
 */
sv_err sv_lease_holder_disconnected(
    sv_lease_core *c, const sv_lease_holder *h, uint64_t now_ms);

/* sv_lease_holder_reconnected: holder h is connected again; its leases in
 * grace are kept. Errors: SV_ENOMEM. */
sv_err sv_lease_holder_reconnected(
    sv_lease_core *c, const sv_lease_holder *h, uint64_t now_ms);

/*
 * sv_lease_timer: a timer armed by an SV_LFX_TIMER_ARM effect fired; kind,
 * key and guard are the effect's. Stale timers are ignored.
 * Errors: SV_ENOMEM.
 */
sv_err sv_lease_timer(sv_lease_core *c, sv_lease_timer_kind kind, uint64_t key,
    uint64_t guard, uint64_t now_ms);

/*
 * sv_lease_restore loads n leases journaled before a supervisor restart as
 * UNCLAIMED (RESTORED events); each is revoked (UNCLAIMED) unless its
 * holder re-claims it within claim_grace_ms. A record holder that is a
 * session re-creates the session (fresh TTL) if it is not open. Call it
 * after the pools are declared and before anything is acquired. A record
 * is skipped (counted in *skippedp, may be NULL) when its pool is unknown,
 * its slot out of range or already taken, its holder malformed, or its
 * token or id not from an earlier epoch.
 * Errors: SV_EINVAL (recs NULL with n > 0), SV_ETOOLARGE (claim_grace_ms
 * over SV_LEASE_MAX_MS), SV_ENOMEM (none is loaded).
 */
sv_err sv_lease_restore(sv_lease_core *c, const sv_lease_record *recs,
    size_t n, uint64_t claim_grace_ms, uint64_t now_ms, size_t *skippedp);

/*
 * sv_lease_claim: holder h reconnects after a restart and re-claims the
 * lease it held on (pool_id, slot) with token. If that slot holds an
 * unclaimed lease of h with that token, h keeps it (CLAIMED event, a fresh
 * TTL) and *g (may be NULL) receives it; claiming again what h already
 * re-claimed gives the same lease. Errors: SV_ENOTFOUND (no such pool, or
 * the slot is free: the lease is gone), SV_EINVAL (slot out of range),
 * SV_ECONFLICT (another holder, another token: CLAIM_REFUSED event),
 * SV_ENOMEM.
 */
sv_err sv_lease_claim(sv_lease_core *c, const sv_lease_holder *h,
    uint32_t pool_id, uint32_t slot, uint64_t token, uint64_t now_ms,
    sv_lease_info *g);

/*
 * sv_lease_next walks every held or unclaimed lease (pool order, then
 * slot), for listing and journaling: it fills *info and, if rec is not
 * NULL, *rec, and returns true; false at the end. If h is not NULL only
 * h's leases are shown (what a holder may list; an admin passes NULL).
 */
bool sv_lease_next(const sv_lease_core *c, sv_lease_iter *it,
    const sv_lease_holder *h, sv_lease_info *info, sv_lease_record *rec);

/* sv_lease_count returns the number of held or unclaimed leases. */
size_t sv_lease_count(const sv_lease_core *c);

/*
 * sv_lease_pop_effect moves the oldest pending effect into *fx and returns
 * true, or returns false when there is none.
 */
bool sv_lease_pop_effect(sv_lease_core *c, sv_lease_fx *fx);

/* sv_lease_holder_eq tells whether a and b are the same holder. */
bool sv_lease_holder_eq(const sv_lease_holder *a, const sv_lease_holder *b);

/* Names for logs and events: "held", "revoked", "holder-gone", "keep"... */
const char *sv_lease_state_name(sv_lease_state s);
const char *sv_lease_event_name(sv_lease_event_kind k);
const char *sv_lease_reason_name(sv_lease_reason r);
const char *sv_lease_policy_name(sv_lease_policy p);

#endif /* SV_CORE_LEASE_H */
