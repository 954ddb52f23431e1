/*
 * supervisor.h — supervised's state and its effect shell: groups of worker
 * slots, what happens when a worker exits, and the answers to requests.
 *
 * Threads: the loop thread (the one in svd_sup_run) is the only one that
 * reads or changes supervisor state, and the control socket (server.h) is
 * served on it: svd_sup_request answers each request there, with no
 * hand-off and no lock. Spawns run on the loop thread in
 * bounded batches so that requests are served in between.
 *
 * Decisions (which ordinal, restart or not, when, which siblings, when to
 * give up) come from the pure core (core/supervision.h); this file carries
 * them out.
 */
#ifndef SVD_SUPERVISOR_H
#define SVD_SUPERVISOR_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <nng/nng.h>

#include "config.h"
#include "core/pidmap.h"
#include "events.h"
#include "log.h"
#include "notify.h"
#include "sd_notify.h"
#include "shell/cgroup.h"
#include "shell/loop.h"
#include "state.h"
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
 * svd_sup_take_over makes the supervisor keep its durable state in st
 * (borrowed: close it after svd_sup_destroy) and takes over what prev, the
 * journal a predecessor left (read by svd_state_open), describes: runtime
 * groups, group sizes, generations, and every process of it that is still
 * alive, adopted instead of spawned (docs/durability.md). Call once, after
 * svd_sup_set_events and before svd_sup_run. Errors: SV_ESYSTEM (the new
 * journal could not be written; err says why).
 */
sv_err svd_sup_take_over(svd_sup *s, svd_state *st, const sv_jstate *prev,
    char *err, size_t errlen);

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
 * svd_sup_set_events makes the supervisor publish its events on ev (which
 * it borrows; NULL: none). Call before svd_sup_run.
 */
void svd_sup_set_events(svd_sup *s, svd_events *ev);

/*
 * svd_sup_set_notify makes the supervisor listen to systemd notify
 * datagrams on n (which it borrows) and give its path to workers as
 * NOTIFY_SOCKET. Call before svd_sup_run.
 */
void svd_sup_set_notify(svd_sup *s, svd_notify *n);

/*
 * svd_sup_set_manager makes the supervisor tell its own service manager
 * how it is through n (sd_notify.h; borrowed: free it after
 * svd_sup_destroy; NULL: no manager): READY=1, STATUS=, STOPPING=1,
 * watchdog pings, from the loop (sup_manager.c). Call before svd_sup_run.
 */
void svd_sup_set_manager(svd_sup *s, svd_sdn *n);

/*
 * svd_sup_set_cgroups gives each worker spawned from now on its own cgroup
 * in cg (shell/cgroup.h), killed whole when the worker exits. cg stays the
 * caller's; close it after svd_sup_destroy. NULL: no cgroups.
 */
void svd_sup_set_cgroups(svd_sup *s, sv_cgtree *cg);

/*
 * svd_done_cb receives the reply to a request (NULL: none could be built,
 * or the request was withdrawn; the caller then drops it). The reply
 * belongs to the callee. Called on the loop thread.
 */
typedef void (*svd_done_cb)(void *arg, nng_msg *reply);

/* svd_sup_loop returns the loop the supervisor runs (the control socket
 * registers its descriptors in it). Owned by the supervisor. */
sv_loop *svd_sup_loop(svd_sup *s);

/*
 * svd_peer_memo is what the supervisor remembers about the process at the
 * other end of a connection between its requests: whether it is a worker,
 * or descends from one, and which (finding out may read /proc once per
 * ancestor). The connection's owner keeps it, zeroed when the connection
 * is made (it holds no memory), and passes it with every request of that
 * connection. It is used only while no worker has been added to or removed
 * from the supervisor's pid table since it was written: the ancestors of a
 * live process change only when one of them dies (its children go to the
 * nearest subreaper above it), and a dead worker leaves the table.
 */
typedef struct svd_peer_memo {
	uint64_t version; /* the pid table's version when written; 0: none */
	bool     found; /* a worker or a descendant of one */
	sv_wkey  key; /* that worker, when found */
} svd_peer_memo;

/*
 * svd_sup_request answers one request (buf, len: an encoded Envelope,
 * borrowed) that came on connection conn (a server's id, 0 if unknown)
 * from a peer with the given kernel credentials, and calls done(arg, reply)
 * exactly once: before it returns, or later (on the loop thread) for a
 * request whose answer is deferred (an AcquireLease that waits). A deferred
 * request is withdrawn, done(arg, NULL), when svd_sup_conn_event says its
 * connection is gone. peer_pidfd (borrowed; -1 if none) is a pidfd of the
 * process that made the connection: if that process has exited, the
 * request is not answered for whatever process now has its pid. memo
 * (borrowed, may be NULL) is the connection's svd_peer_memo. Loop thread
 * only.
 */
void svd_sup_request(svd_sup *s, const void *buf, size_t len,
    uint64_t peer_pid, uint64_t peer_uid, int peer_pidfd, uint32_t conn,
    svd_peer_memo *memo, svd_done_cb done, void *arg);

/*
 * svd_sup_peer_worker tells whether process pid (the kernel's peer pid of
 * a connection) is a live worker or a descendant of one, with the worker
 * in *keyp; the answer is remembered in memo (borrowed, may be NULL) as
 * svd_sup_request would, so the connection's first request does not walk
 * /proc again. Loop thread only.
 */
bool svd_sup_peer_worker(
    svd_sup *s, uint64_t pid, svd_peer_memo *memo, sv_wkey *keyp);

/*
 * svd_sup_conn_event tells the supervisor that connection conn, opened by
 * process peer_pid, was added or is gone (the lease shell's disconnect
 * grace, docs/leases.md; a gone connection's deferred requests are
 * withdrawn before this returns). Loop thread only.
 */
void svd_sup_conn_event(
    svd_sup *s, uint32_t conn, uint64_t peer_pid, bool added);

/*
 * svd_sup_dispatch answers one request of len bytes from a peer with the
 * given kernel credentials. On SV_OK *replyp is the reply (always an
 * Envelope: the answer or an Error) and belongs to the caller. It fails only
 * when no reply can be built (SV_ENOMEM). Loop thread only (or a test with
 * no loop running).
 */
sv_err svd_sup_dispatch(svd_sup *s, const void *buf, size_t len,
    uint64_t peer_pid, uint64_t peer_uid, nng_msg **replyp);

/* Descriptors the daemon holds per worker: its pidfd (an activity region
 * is opened per read, not held). check_nofile (main.c) and room.c size
 * from this. */
#define SVD_FDS_PER_WORKER 1u

/* Descriptors the daemon holds whatever runs (sockets, epoll, timers,
 * signalfd, the journal, the log, a spare for accept): a generous count of
 * what a daemon with no worker has open. */
#define SVD_FDS_BASE 48u

#endif /* SVD_SUPERVISOR_H */
