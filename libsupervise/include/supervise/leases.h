/*
 * leases.h — the client's lease calls: sessions, leases on a pool's
 * slots, pools (docs/leases.md; protocol: docs/protocol.md, section 11).
 *
 * Part of the C client: included by supervise/client.h (which a program
 * includes), and it includes client.h itself, so either may come first.
 * The conventions of client.h hold here: opaque handles, a deadline on
 * every call, NULL-safe accessors, the caller frees what it is given.
 */
#ifndef SUPERVISE_LEASES_H
#define SUPERVISE_LEASES_H

#include "supervise/client.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Leases (docs/leases.md; protocol: docs/protocol.md, section 11). The
 * supervisor owns pools of slots and hands out leases on them. The holder
 * is the calling worker as the kernel identifies it, or, for a caller that
 * is not a worker (a tool), a session it opened with
 * sv_client_session_open and passes as `session` (0: the caller itself).
 * A lease handle (sv_lease) is a copy of what the supervisor answered; it
 * belongs to the caller (sv_lease_free) and does not change afterwards.
 *
 * Every call takes timeout_ms, a deadline for the whole call. An acquire
 * that may wait (wait_ms > 0) has its wait shortened to fit the deadline:
 * the supervisor is asked to wait at most timeout_ms - 100 ms, so that its
 * SV_EDEADLINE answer arrives before the call would time out
 * (SV_TIMEOUT_INFINITE: no shortening).
 */
typedef struct sv_lease  sv_lease;
typedef struct sv_leases sv_leases;
typedef struct sv_pools  sv_pools;

/* The slot argument of sv_client_lease_acquire for "the lowest free". */
#define SV_LEASE_ANY_SLOT (-1)

/*
 * sv_client_lease_acquire acquires a lease on pool: on slot (0 .. slots-1,
 * e.g. the worker's ordinal) or, with SV_LEASE_ANY_SLOT, the lowest free
 * one; waiting up to wait_ms (0: not at all) for one to be freed. A holder
 * that already holds a lease in the pool gets that lease again. On SV_OK
 * *leasep belongs to the caller (sv_lease_free). Errors: SV_EINVAL (bad
 * argument), SV_ENOTFOUND (no such pool or session), SV_EEXHAUSTED (no
 * free slot), SV_EBUSY (the slot asked for is taken), SV_EDEADLINE (the
 * wait ended with no slot), SV_ECONFLICT (the holder holds another slot
 * of the pool, or has a restored lease there to claim), SV_ENOTWORKER,
 * SV_EPERM (another uid's session), and the transport's errors.
 */
SV_API sv_err sv_client_lease_acquire(sv_client *client, const char *pool,
    int64_t slot, uint32_t wait_ms, uint64_t session, int timeout_ms,
    sv_lease **leasep);

/*
 * sv_client_lease_renew extends lease id by its pool's TTL; *leasep (may
 * be NULL) receives the renewed lease, the caller's to free. Errors:
 * SV_ENOTFOUND (the lease is gone), SV_EPERM (the caller is not its
 * holder), SV_ECONFLICT (restored after a restart: claim it first).
 */
SV_API sv_err sv_client_lease_renew(sv_client *client, uint64_t id,
    uint64_t session, int timeout_ms, sv_lease **leasep);

/*
 * sv_client_lease_release ends lease id. Releasing a lease that is gone
 * succeeds. Errors: SV_EPERM (the caller is not its holder).
 */
SV_API sv_err sv_client_lease_release(
    sv_client *client, uint64_t id, uint64_t session, int timeout_ms);

/*
 * sv_client_lease_claim re-claims, after a supervisor restart, the lease
 * the caller held on (pool, slot) with token: it keeps its id and token.
 * On SV_OK *leasep (may be NULL) is the caller's. Errors: SV_ENOTFOUND
 * (no lease there any more: acquire a new one), SV_ECONFLICT (another
 * holder or another token).
 */
SV_API sv_err sv_client_lease_claim(sv_client *client, const char *pool,
    uint32_t slot, uint64_t token, uint64_t session, int timeout_ms,
    sv_lease **leasep);

/*
 * sv_client_lease_list lists leases (of pool, or of every pool for NULL or
 * ""): an administrator sees all, a worker its own, a tool those of the
 * session it names. On SV_OK *listp is the caller's (sv_leases_free).
 */
SV_API sv_err sv_client_lease_list(sv_client *client, const char *pool,
    uint64_t session, int timeout_ms, sv_leases **listp);
SV_API size_t sv_leases_count(const sv_leases *list);
/* The i-th lease; it belongs to the list (do not free it). */
SV_API const sv_lease *sv_leases_at(const sv_leases *list, size_t i);
/* sv_leases_free frees a list. NULL is ignored. */
SV_API void sv_leases_free(sv_leases *list);

/* Accessors of a lease; strings belong to the lease. A NULL l reads as
 * 0 / "". */
SV_API uint64_t    sv_lease_id(const sv_lease *l);
SV_API const char *sv_lease_pool(const sv_lease *l);
SV_API uint32_t    sv_lease_slot(const sv_lease *l);
/* The fencing token: strictly increasing per slot, across restarts. */
SV_API uint64_t sv_lease_token(const sv_lease *l);
/* Time left when the supervisor answered; 0: no TTL. */
SV_API uint64_t sv_lease_expires_in_ms(const sv_lease *l);
/* The slot's file or directory, "" if the pool owns none. */
SV_API const char *sv_lease_resource(const sv_lease *l);
/* The holder: "GROUP/ORDINAL@GENERATION" or "session:ID". */
SV_API const char *sv_lease_holder_name(const sv_lease *l);
/* 1: restored after a supervisor restart and not claimed yet. */
SV_API int      sv_lease_unclaimed(const sv_lease *l);
SV_API uint64_t sv_lease_epoch(const sv_lease *l);
/* sv_lease_free frees a lease. NULL is ignored. */
SV_API void sv_lease_free(sv_lease *l);

/*
 * Sessions: a caller that is not a worker holds leases through a session,
 * which lives ttl_ms (1 .. one day) unless renewed; its leases end with
 * it. sv_client_session_open puts its id in *idp. Errors: SV_EINVAL
 * (ttl_ms 0), SV_ETOOLARGE, SV_EEXHAUSTED; renew: SV_ENOTFOUND (expired),
 * SV_EPERM (another uid's). Closing a session that is gone succeeds.
 */
SV_API sv_err sv_client_session_open(
    sv_client *client, uint64_t ttl_ms, int timeout_ms, uint64_t *idp);
SV_API sv_err sv_client_session_renew(
    sv_client *client, uint64_t id, int timeout_ms);
SV_API sv_err sv_client_session_close(
    sv_client *client, uint64_t id, int timeout_ms);

/*
 * sv_client_pool_create (administration) declares a pool as a `pools`
 * entry of the config does: name, slots, ttl_ms (0: none), grace_ms,
 * path (NULL or "": no resource; else a template with {slot}), on_release
 * ("keep", "truncate", "remove"; NULL: keep), kind ("file", "directory";
 * NULL: file). Errors: SV_EINVAL (bad argument), SV_EPERM, SV_ECONFLICT
 * (the name is taken), SV_EBADREQ, SV_ETOOLARGE.
 */
SV_API sv_err sv_client_pool_create(sv_client *client, const char *name,
    uint32_t slots, uint64_t ttl_ms, uint64_t grace_ms, const char *path,
    const char *on_release, const char *kind, int timeout_ms);

/* sv_client_pools lists the pools. On SV_OK *poolsp is the caller's
 * (sv_pools_free). Accessors of pool i: out of range or a NULL p gives
 * 0 / "". */
SV_API sv_err sv_client_pools(
    sv_client *client, int timeout_ms, sv_pools **poolsp);
SV_API size_t      sv_pools_count(const sv_pools *p);
SV_API const char *sv_pools_name(const sv_pools *p, size_t i);
SV_API uint32_t    sv_pools_slots(const sv_pools *p, size_t i);
SV_API uint32_t    sv_pools_held(const sv_pools *p, size_t i);
SV_API uint64_t    sv_pools_ttl_ms(const sv_pools *p, size_t i);
SV_API uint64_t    sv_pools_grace_ms(const sv_pools *p, size_t i);
SV_API const char *sv_pools_path(const sv_pools *p, size_t i);
SV_API const char *sv_pools_on_release(const sv_pools *p, size_t i);
SV_API const char *sv_pools_kind(const sv_pools *p, size_t i);
/* sv_pools_free frees a list. NULL is ignored. */
SV_API void sv_pools_free(sv_pools *p);

#ifdef __cplusplus
}
#endif

#endif /* SUPERVISE_LEASES_H */
