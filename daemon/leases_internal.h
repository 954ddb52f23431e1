/*
 * leases_internal.h — the lease shell's records and the functions its files
 * share (private to daemon/leases*.c; the supervisor's API is leases.h).
 *
 * The shell holds only what the core does not: per pool the description of
 * its slots' resource (ls_res: path template and kind), the loop timers the
 * core asked for, the deferred replies of waiting acquires, the grants
 * whose resource could not be made, and the connections of workers. A
 * pool's declaration and a session's owner and TTL are read from the core
 * when needed (sv_lease_pool_get, sv_lease_session_get), never copied.
 *
 * The files, one concept each:
 *   leases.c            creation, destruction, and what the supervisor tells
 *                       the shell (a reaped worker, connections added/gone)
 *   leases_effects.c    the effect interpreter: every core effect carried out
 *   leases_timers.c     the core's timers as loop timers (a small hash)
 *   leases_resources.c  a slot's file or directory: made, kept, emptied,
 * removed leases_records.c    what leaves the shell about a lease: Lease
 * messages, lease events, journal records leases_restore.c    a predecessor's
 * pools and leases restored at takeover leases_requests.c   the lease requests
 * (acquire, renew, release, list, claim) and the dispatch of every
 * lease-family request leases_sessions.c   the session requests leases_pools.c
 * the pool requests
 */
#ifndef SVD_LEASES_INTERNAL_H
#define SVD_LEASES_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core_retry.h"
#include "errf.h"
#include "idmap.h"
#include "leases.h"

/* Kinds of the core's timers (sv_lease_timer_kind 1 ..): one id map each. */
#define LS_TIMER_KINDS 3u
/* Lease ids whose grant was aborted, remembered until answered. */
#define LS_ABORTED_MAX 8u
/* Longest rendered resource path. */
#define LS_PATH_MAX 1100u

/* The identity of a slot's file or directory that the daemon made
 * (leases_resources.c): only that object is ever chowned, truncated or
 * removed. ino 0: none known. */
typedef struct ls_ident {
	uint64_t dev, ino;
} ls_ident;

/* What the shell keeps of a pool: only what the core does not hold, the
 * description of its per-slot resource and what it made of it. */
typedef struct ls_res {
	char     *path; /* template, or NULL: no resource */
	bool      directory;
	ls_ident *made; /* [nmade], by slot; NULL without a path; owned */
	uint32_t  nmade;
} ls_res;

/* A grant whose resource could not be made, remembered until answered. */
typedef struct ls_abort {
	uint64_t id; /* 0: unused */
	sv_err   err; /* SV_EPERM, SV_EBADREQ, SV_EINTERNAL */
	char     msg[400];
} ls_abort;

/* A pool as the shell sees it, composed on demand (ls_pool_view) from the
 * core's record and the shell's ls_res: a view, never stored. */
typedef struct ls_pool {
	uint32_t        id;
	const char     *name; /* the core's */
	uint32_t        slots;
	uint64_t        ttl_ms, grace_ms;
	sv_lease_policy policy;
	bool            directory;
	const char     *path; /* template, or NULL: no resource */
} ls_pool;

/* A loop timer armed for the core (leases_timers.c). */
typedef struct ls_timer {
	sv_timer            t;
	struct svd_leases  *l;
	sv_lease_timer_kind kind;
	uint64_t            key, guard;
} ls_timer;

/* A waiting AcquireLease whose reply is deferred (leases_effects.c). */
typedef struct ls_deferred {
	bool        used;
	uint64_t    waiter;
	uint64_t    request_id;
	svd_done_cb done;
	void       *arg;
	uint32_t    pipe;
	uint32_t    pool_id;
	uint64_t    wait_ms;
} ls_deferred;

/* A connection of a worker, for its disconnect grace (leases.c). */
typedef struct ls_pipe {
	uint32_t pipe; /* 0: unused */
	sv_wkey  key; /* the worker that opened it */
} ls_pipe;

/* The lease shell (leases.h). */
struct svd_leases {
	sv_lease_core *core;
	sv_loop       *loop;
	svd_lease_host h;
	ls_res         res[SV_LEASE_MAX_POOLS]; /* of pool id at id - 1 */
	sv_idmap       timers[LS_TIMER_KINDS]; /* key -> ls_timer *, owned */
	ls_deferred    deferred[SVD_LEASE_MAX_DEFERRED];
	ls_pipe       *pipes; /* [SVD_LEASE_MAX_PIPES] */
	ls_abort       aborted[LS_ABORTED_MAX];
	unsigned       naborted;
};

/* Strings of one Lease message, kept beside it. */
typedef struct ls_lease_msg {
	Supervise__V1__Lease m;
	char                 holder[SVW_MAX_NAME + 48];
	char                 resource[LS_PATH_MAX];
} ls_lease_msg;

/* Functions shared between the shell's files, by the file that defines
 * them (each is described there). */

/* leases.c */
ls_pool *ls_pool_view(svd_leases *l, uint32_t id, ls_pool *buf);
sv_err   ls_pool_add(svd_leases *l, const char *name, uint32_t slots,
      uint64_t ttl_ms, uint64_t grace_ms, const char *path,
      sv_lease_policy policy, bool directory, uint32_t *idp);

/* leases_timers.c */
void ls_timer_cancel(svd_leases *l, sv_lease_timer_kind kind, uint64_t key);
void ls_timer_arm(svd_leases *l, const sv_lease_fx *fx);
void ls_timers_destroy(svd_leases *l);

/* leases_resources.c */
bool      ls_render(const ls_pool *p, uint32_t slot, char *buf, size_t len);
ls_ident *ls_made_of(svd_leases *l, uint32_t pool_id, uint32_t slot);
sv_err    ls_prepare(svd_leases *l, const ls_pool *p, const sv_lease_info *li,
       char *msg, size_t mlen);
void      ls_reclaim(svd_leases *l, const ls_pool *p, uint32_t slot);

/* leases_effects.c */
ls_deferred *ls_deferred_find(svd_leases *l, uint64_t waiter);
bool         ls_was_aborted(
            svd_leases *l, uint64_t id, sv_err *err, char *msg, size_t len);
void ls_effects(svd_leases *l);

/* LS_CORE_RETRY gives the lease core call, an entry point about something
 * that has already happened (a reap, a timer, a connection gone), again
 * for as long as it answers SV_ENOMEM: it then changed nothing and queued
 * no effect (core/lease.h), so nothing is dropped (core_retry.h). */
#define LS_CORE_RETRY(what, call) SVD_CORE_RETRY("lease", what, call)

/* leases_records.c */
void ls_holder_name(
    svd_leases *l, const sv_lease_holder *h, char *buf, size_t len);
void ls_lease_fill(svd_leases *l, const sv_lease_info *li, ls_lease_msg *lm);
void ls_publish(svd_leases *l, sv_lease_event_kind kind, sv_lease_reason why,
    const sv_lease_info *li);
void ls_journal_lease(svd_leases *l, const sv_lease_info *li, bool live);
void ls_journal_pool(svd_leases *l, const ls_pool *p);

/* leases_requests.c */
/* ls_fail records a message for the caller (sv_errf into c->emsg) and
 * returns err. */
#define ls_fail(c, err, ...) \
	sv_errf((c)->emsg, (c)->emsglen, (err), __VA_ARGS__)
sv_err ls_holder(svd_leases *l, const svd_lease_caller *c, uint64_t session,
    sv_lease_holder *h);
sv_err ls_pool_named(svd_leases *l, const svd_lease_caller *c,
    const char *name, ls_pool *buf, ls_pool **pp);
sv_err ls_core_err(
    const svd_lease_caller *c, sv_err err, const ls_pool *p, const char *what);

/* leases_sessions.c */
sv_err ls_session_req(svd_leases *l, const svw_env *req,
    const svd_lease_caller *c, svw_env *rep, void **arena);

/* leases_pools.c */
sv_err ls_create_pool(svd_leases *l, const svw_env *req,
    const svd_lease_caller *c, svw_env *rep, void **arena);
sv_err ls_list_pools(
    svd_leases *l, const svd_lease_caller *c, svw_env *rep, void **arena);

#endif /* SVD_LEASES_INTERNAL_H */
