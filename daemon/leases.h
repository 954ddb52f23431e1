/*
 * leases.h — supervised's lease shell: the effect shell around the pure
 * lease core (core/lease.h, docs/leases.md), with the request handlers of
 * the lease, session and pool messages (docs/protocol.md, section 11).
 *
 * The supervisor (supervisor.c) owns one svd_leases and calls into it from
 * the loop thread only: requests, a reaped worker, a connection added or
 * gone, the journal at a takeover. Everything the shell needs from the
 * supervisor (group names and users, events, the journal, the caller's
 * identity) comes through the svd_lease_host callbacks, so this file never
 * sees the supervisor's state.
 *
 * A waiting AcquireLease does not block anything: its reply is deferred
 * (svd_lease_defer). The loop goes on serving; the answer is sent from the
 * loop thread when the core hands the slot over or the wait ends. At most
 * SVD_LEASE_MAX_DEFERRED requests wait at once (each holds one of the
 * control socket's contexts, which has that many more than it serves
 * otherwise); beyond that a wait is refused with BUSY.
 */
#ifndef SVD_LEASES_H
#define SVD_LEASES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "core/journal.h"
#include "core/lease.h"
#include "shell/loop.h"
#include "supervisor.h"
#include "wire/wire.h"

/* Acquires waiting for a slot at once, over all clients. */
#define SVD_LEASE_MAX_DEFERRED 48u
/* How long a lease restored after a takeover waits for its re-claim. */
#define SVD_LEASE_CLAIM_GRACE_MS 10000u
/* Connections tracked for disconnect detection (as the server's peers). */
#define SVD_LEASE_MAX_PIPES 4096u

typedef struct svd_leases svd_leases;

/* A request whose reply may be deferred: set by the supervisor, `taken`
 * set by the lease shell when it will answer later through done(arg). */
typedef struct svd_lease_defer {
	svd_done_cb done;
	void       *arg;
	uint32_t    pipe; /* the connection it came on, 0: unknown */
	bool        taken;
} svd_lease_defer;

/* What the lease shell asks of the supervisor (all on the loop thread). */
typedef struct svd_lease_host {
	void *arg;
	/* The name of group id, or NULL if there is none. */
	const char *(*group_name)(void *arg, uint32_t group_id);
	/* The id of the group named name, 0 if none. */
	uint32_t (*group_id)(void *arg, const char *name);
	/* The uid/gid a group's workers run as: false if the daemon's. */
	bool (*group_user)(
	    void *arg, uint32_t group_id, uid_t *uid, gid_t *gid);
	/* The pid of worker key (0 if not running). */
	int64_t (*worker_pid)(void *arg, sv_wkey key);
	/* Publish e under topic (the host fills seq, time, supervisor id). */
	void (*publish)(void *arg, Supervise__V1__Event *e, const char *topic);
	/* Journal a record (NULL host journal: none). */
	void (*journal)(void *arg, const sv_jrec *r);
	/* The worker that is process pid or its nearest ancestor. */
	bool (*find_worker)(void *arg, int64_t pid, sv_wkey *keyp);
	/* True when worker key's process has exited (not reaped yet). */
	bool (*worker_exited)(void *arg, sv_wkey key);
} svd_lease_host;

/* The caller of a request, as the kernel tells it. */
typedef struct svd_lease_caller {
	bool     is_worker; /* key is valid */
	sv_wkey  key;
	uint64_t uid;
	bool     admin; /* req_admin said yes */
	char    *emsg; /* where an error message goes */
	size_t   emsglen;
} svd_lease_caller;

/*
 * svd_leases_create makes the lease shell for supervisor epoch epoch
 * (1 .. SV_LEASE_MAX_EPOCH) with the pools of cfg, running its timers in
 * loop. On SV_OK *lp belongs to the caller: free it with
 * svd_leases_destroy. Errors: SV_EINVAL (epoch out of range: err says
 * so), SV_ENOMEM; a pool the core refuses is logged and skipped.
 */
sv_err svd_leases_create(const svd_config *cfg, sv_loop *loop, uint64_t epoch,
    const svd_lease_host *host, svd_leases **lp, char *err, size_t errlen);

/* svd_leases_destroy answers nothing (call svd_leases_stop first) and frees
 * l. NULL is ignored. */
void svd_leases_destroy(svd_leases *l);

/* svd_leases_stop drops every deferred request (done(arg, NULL)): the loop
 * is ending. */
void svd_leases_stop(svd_leases *l);

/*
 * svd_leases_restore loads the leases journaled by a predecessor (prev) as
 * unclaimed and records the survivors in the new journal. Call once, from
 * svd_sup_take_over, after the groups are known.
 */
void svd_leases_restore(svd_leases *l, const sv_jstate *prev);

/*
 * svd_leases_handle answers a lease, session or pool request (body kinds
 * 70..80 and 170..173) of caller c into rep (its body points into arena,
 * which the caller frees after encoding). Returns false when req is not
 * such a request. *errp is the outcome (SV_OK: rep filled; otherwise the
 * message is in c->emsg). When d is not NULL and the request waits, the
 * shell sets d->taken and answers later; rep is then left empty.
 */
bool svd_leases_handle(svd_leases *l, const svw_env *req,
    const svd_lease_caller *c, svd_lease_defer *d, svw_env *rep, void **arena,
    sv_err *errp);

/* svd_leases_worker_gone: worker key was reaped (same loop iteration). */
void svd_leases_worker_gone(svd_leases *l, sv_wkey key);

/*
 * svd_leases_pipe tells of connection pipe (from process pid) being
 * added or removed. A worker's last connection gone starts its leases'
 * disconnect grace; a new one ends it. A removed pipe's waiting acquires
 * are withdrawn.
 */
void svd_leases_pipe(svd_leases *l, uint32_t pipe, int64_t pid, bool added);

/* svd_leases_count returns the number of live leases. */
size_t svd_leases_count(const svd_leases *l);

#endif /* SVD_LEASES_H */
