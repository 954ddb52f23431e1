/*
 * supervisor.h — supervised's state and its effect shell: groups of worker
 * slots, what happens when a worker exits, and the answers to requests.
 *
 * Threads: the state is guarded by one mutex. The main thread runs the event
 * loop (pidfds, timers, signals, wake-ups) and holds the mutex except while
 * waiting; nng's threads call svd_sup_dispatch, which takes it to read the
 * state or change what is wanted. Spawning happens on the main thread only:
 * a request that needs new processes records the new target and wakes the
 * loop, which reconciles in bounded batches so queries are never starved.
 *
 * Decisions (which ordinal, restart or release, how long to back off) come
 * from the pure core (core/ordinal.h, core/restart.h); this file carries
 * them out.
 */
#ifndef SVD_SUPERVISOR_H
#define SVD_SUPERVISOR_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <nng/nng.h>

#include "config.h"
#include "supervise/supervise.h"

typedef struct svd_sup svd_sup;

/*
 * svd_sup_create builds the supervisor for cfg (which it borrows: keep cfg
 * alive until svd_sup_destroy) with control URL url. Nothing is spawned yet.
 * On SV_OK *supp belongs to the caller: free it with svd_sup_destroy.
 * Errors: SV_ENOMEM, SV_ESYSTEM.
 */
sv_err svd_sup_create(const svd_config *cfg, const char *url, svd_sup **supp);

/*
 * svd_sup_destroy frees the supervisor. Call only after svd_sup_run has
 * returned (no live children) and the server is closed.
 */
void svd_sup_destroy(svd_sup *s);

/* svd_sup_id returns the supervisor instance id (32 hex digits). */
const char *svd_sup_id(const svd_sup *s);

/*
 * svd_sup_run starts every group and runs the event loop until a shutdown
 * (a signal on sigfd, a signalfd for SIGTERM/SIGINT/
 * SIGHUP; -1 for none) has stopped and reaped every worker. Returns SV_OK,
 * or SV_ESYSTEM if the loop failed.
 */
sv_err svd_sup_run(svd_sup *s, int sigfd);

/*
 * svd_sup_dispatch answers one request of len bytes from a peer with the
 * given kernel credentials. On SV_OK *replyp is the reply (always an
 * Envelope: the answer or an Error) and belongs to the caller. It fails only
 * when no reply can be built (SV_ENOMEM). Thread-safe.
 */
sv_err svd_sup_dispatch(svd_sup *s, const void *buf, size_t len,
    uint64_t peer_pid, uint64_t peer_uid, nng_msg **replyp);

/* svd_log writes one timestamped line to stderr. */
void svd_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* SVD_SUPERVISOR_H */
