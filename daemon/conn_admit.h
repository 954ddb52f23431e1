/*
 * conn_admit.h — whether the control socket takes one more connection: a
 * pure decision over counts the server keeps (server_accept.c carries it
 * out). No system call, no clock, no allocation.
 *
 * Why: without a bound per peer, one process holding a few thousand idle
 * connections locked everybody out of the control socket (every worker,
 * and with a group that has `user` every local user, can connect). The
 * rules, in the order they are applied:
 *
 *   1. cap: never more than `cap` connections at once (the server derives
 *      it from RLIMIT_NOFILE: at most a quarter of the descriptors, at most
 *      SVD_ADMIT_CAP_MAX), whoever asks.
 *   2. worker floor: a live worker (or a descendant of one) holding fewer
 *      than `worker_floor` connections is let in, even into the reserve,
 *      so its Ready, Heartbeat, WhoAmI and lease renewals are never starved
 *      by another process.
 *   3. per process: one process holds at most `per_process` connections;
 *      a worker's descendants count as the worker (forking does not buy
 *      more).
 *   4. privileged peers (uid 0 or the daemon's own uid) have no per-uid
 *      bound and may use the first half of the reserve; the last half is
 *      kept for worker floors. (Processes of the daemon's uid outside any
 *      worker cannot be told from the administrator: they are trusted.)
 *   5. everybody else: at most `per_uid` connections per uid, and only the
 *      unreserved part (cap - reserve) of the cap.
 *
 * The peer is always identified by the kernel (SO_PEERCRED, then the pid
 * table of workers), never by what a message claims.
 */
#ifndef SVD_CONN_ADMIT_H
#define SVD_CONN_ADMIT_H

#include <stdbool.h>
#include <stdint.h>

/* Largest cap, whatever the descriptor limit. */
#define SVD_ADMIT_CAP_MAX 4096u
/* Connections a live worker is always let in up to (under the cap). */
#define SVD_ADMIT_WORKER_FLOOR 2u
/* Defaults of the config keys connections_per_process and
 * connections_per_uid (libsupervise/src/config_keys.def). */
#define SVD_ADMIT_PER_PROCESS 64u
#define SVD_ADMIT_PER_UID     256u

/* The bounds, fixed when the server starts. */
typedef struct svd_admit_limits {
	uint32_t cap; /* connections at once, all peers */
	uint32_t reserve; /* of cap: privileged peers and worker floors */
	uint32_t per_process; /* one process (a worker with its tree) */
	uint32_t per_uid; /* one unprivileged uid */
	uint32_t worker_floor; /* a live worker always gets this many */
} svd_admit_limits;

/* Who asks, as the kernel says. */
typedef struct svd_admit_peer {
	bool privileged; /* uid 0 or the daemon's uid */
	bool worker; /* a live worker, or a descendant of one */
} svd_admit_peer;

/* What is open now (the new connection not counted). */
typedef struct svd_admit_counts {
	uint32_t total; /* all connections */
	uint32_t process; /* of the peer's process (a worker: its tree) */
	uint32_t uid; /* of the peer's uid */
} svd_admit_counts;

typedef enum svd_admit_verdict {
	SVD_ADMIT_OK = 0,
	SVD_ADMIT_FULL, /* the cap, or the part of it open to this peer */
	SVD_ADMIT_PROCESS, /* the per-process bound */
	SVD_ADMIT_UID, /* the per-uid bound */
} svd_admit_verdict;

/*
 * svd_admit_limits_for derives the limits from the descriptor limit nofile
 * (0: unknown, taken as unlimited) and the two configured bounds (0: the
 * default): cap = min(nofile / 4, SVD_ADMIT_CAP_MAX), at least 8; reserve
 * = cap / 8 rounded up, at least 2.
 */
svd_admit_limits svd_admit_limits_for(
    uint64_t nofile, uint32_t per_process, uint32_t per_uid);

/* svd_admit decides for peer p given counts n under limits l. */
svd_admit_verdict svd_admit(const svd_admit_limits *l, const svd_admit_peer *p,
    const svd_admit_counts *n);

#endif /* SVD_CONN_ADMIT_H */
