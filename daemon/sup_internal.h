/*
 * sup_internal.h — what the pieces of supervised's supervisor share (private
 * to daemon/sup_*.c and daemon/req_*.c; the public face is supervisor.h).
 *
 * The shell records (svd_proc, svd_gsh, svd_sup), the request context and
 * the functions one piece calls in another. Nothing here is for main.c or
 * the other daemon shells.
 */
#ifndef SVD_SUP_INTERNAL_H
#define SVD_SUP_INTERNAL_H

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "core/pidmap.h"
#include "core/supervision.h"
#include "core_retry.h"
#include "errf.h"
#include "activity.h"
#include "drain.h"
#include "events.h"
#include "leases.h"
#include "notify.h"
#include "sd_notify.h"
#include "subworkers.h"
#include "shell/cgroup.h"
#include "shell/loop.h"
#include "shell/procinfo.h"
#include "shell/reaper.h"
#include "shell/spawn.h"
#include "sockets.h"
#include "state.h"
#include "supervisor.h"
#include "wire/reqtable.h"
#include "wire/wire.h"
#include "wire/wire_msg.h"

/* Spawns per loop iteration, so requests are served in between. */
#define SUP_SPAWN_BATCH 32
/* How far up the process tree whoami looks for a worker. */
#define SUP_MAX_ANCESTRY 32
/* Event lines logged per second at most (the rest are counted). */
#define SUP_LOG_PER_SEC 200
/* Largest page of ListWorkers. */
#define SUP_MAX_PAGE 4096u

typedef struct svd_gsh  svd_gsh;
typedef struct svd_seat svd_seat;

/* An armed timer of a seat record (its backoff) or a process record,
 * made when the core arms it and freed when it fires, is cancelled or its
 * record goes (svd_tmr_drop): most records have none armed, and a pointer
 * is smaller than the timer. */
typedef struct svd_tmr {
	sv_timer t; /* t.arg: the seat or process record */
	uint64_t guard; /* the core's guard of the armed timer */
} svd_tmr;

/* The shell's record of one process: what the core cannot hold. */
/* (Fields ordered so that the compiler adds no padding: a seat record
 * holds one, and is a 136-byte block, a 144-byte malloc chunk.) */
typedef struct svd_proc {
	sv_wkey key;
	pid_t   pid;
	bool    adopted; /* started by a predecessor: not our child */
	bool    group_killed; /* its process group got SIGKILL (sup_effects.c);
	                       * read and cleared at the reap */
	sv_io io; /* io.fd: its pidfd, watched while it lives; -1: record
	           * unused */
	svd_tmr *tm; /* its armed timer (SV_TIMER_PROC), or NULL */
	char    *status; /* last status text, NULL: none (""); allocated when
	                  * a worker first sets one, kept by the record across
	                  * the processes that use it, freed with the seat
	                  * (sup_notify.c) */
	sv_cgleaf *cg; /* its own cgroup, or NULL (shell/cgroup.h) */
	uint64_t   start_time; /* kernel start time (shell/procinfo.h) */
	svd_act   *act; /* its activity region, or NULL (activity.h) */
	svd_seat  *seat; /* the seat record it is part of (seat->g->s: the
	                  * supervisor) */
} svd_proc;

/* The shell's record of one seat: its process records (up to two: the
 * current and an old one, as in the core) and its backoff timer. Made when
 * the seat first needs one (a spawn, an adoption, a backoff timer:
 * seat_make) and freed when it holds nothing and the core no longer wants
 * the seat (seat_maybe_free), or with its group; so the daemon's memory
 * grows with the seats in use, not with max_count. Each is its own block:
 * the loop holds pointers to its timers and descriptors' callbacks. The
 * second process record is made only when a seat first has two processes
 * at once (a roll's overlap, a drain or a stop outliving its restart:
 * proc_slot) and is then kept, like the first, until the seat record is
 * freed; seat_proc gives either. */
struct svd_seat {
	svd_gsh  *g;
	uint32_t  ordinal;
	svd_tmr  *tm; /* armed backoff timer (SV_TIMER_SEAT), or NULL */
	svd_proc  proc; /* the first process record */
	svd_proc *extra; /* the second, or NULL until first needed */
	svd_act  *act_spare; /* the region file made ahead for the seat's
	                      * next generation (svd_activity_prepare), or
	                      * NULL */
};

/* Process records a seat can have (svd_seat.proc and .extra). */
#define SEAT_PROCS 2

/* The shell's side of a group: its config and per-seat records. */
struct svd_gsh {
	svd_sup                *s;
	uint32_t                id; /* the core's group id */
	const svd_group_config *cfg;
	const char            **envbase;
	size_t                  nenvbase;
	svd_seat              **seats; /* [nseats], NULL: no record */
	uint32_t                nseats; /* <= max_count, grown by seat_make */
	svd_sockets *sockets; /* handed to every worker (sockets.h), or NULL */
	svd_config  *owned; /* a group created at runtime: its
	                     * own config (cfg points into it) */
	char *spec; /* a runtime group's config text (journaled), owned */
};

struct svd_sup {
	const svd_config *cfg;
	sv_loop          *loop;
	sv_core          *core;
	svd_gsh         **gsh; /* [ngsh], start order; each its own block */
	size_t            ngsh;
	sv_pidmap         pids;
	svd_events       *events;
	svd_notify       *notify;
	sv_cgtree        *cg; /* per-worker cgroups, or NULL */
	svd_state        *state; /* the journal, or NULL */
	svd_leases       *leases; /* the lease shell (leases.h) */
	svd_subw         *subw; /* sub-workers (subworkers.h) */
	svd_activity     *act; /* activity regions (activity.h), or NULL */
	uint64_t          epoch; /* grows with each supervisor on a state */
	sv_io             notify_io;
	unsigned long     notify_drops; /* datagrams refused */
	uint64_t          log_sec; /* second of the event lines counted */
	unsigned long     log_lines, log_suppressed;
	uint64_t          seq; /* last event sequence number */
	char              id[33];
	char              url[600];
	long              self_pid; /* getpid(), read once */
	sv_io             sig_io;
	sv_timer          plan_timer;
	sv_timer          dur_timer; /* snapshot retries (sup_durability.c) */
	uint64_t          plan_guard;
	uint64_t          turn; /* loop iterations, counted by svd_sup_run */
	uint64_t          notify_turn; /* the turn notify was last drained */
	bool              orphans_due; /* a worker was reaped this turn */
	bool              stale_due; /* an adopted worker was reaped */
	svd_sdn          *sdn; /* our own service manager, or NULL
	                        * (sup_manager.c) */
	sv_timer sdn_timer; /* when its plan wants a look */
};

/* Storage for the reply a handler builds (in the request's req_ctx; the
 * reply's body points into it until encoded). */
typedef struct req_reply {
	Supervise__V1__HelloReply             hello;
	Supervise__V1__Durability             dur;
	Supervise__V1__Identity               id;
	Supervise__V1__Frame                  fr;
	Supervise__V1__Frame                 *frames[1];
	Supervise__V1__WorkerList             wl;
	Supervise__V1__WorkerStatus           ws;
	Supervise__V1__GroupChange            gc;
	Supervise__V1__GroupList              gl;
	Supervise__V1__GroupInfo              gi;
	Supervise__V1__Ack                    ack;
	Supervise__V1__DrainReport            dr;
	Supervise__V1__RegisterSubWorkerReply reg;
	Supervise__V1__ReleaseSubWorkerReply  rel;
	const char *features[SV_REQ_MAX_FEATURES]; /* of hello */
} req_reply;

/* A request handler (sv_err handler(req_ctx *c), named by its row of
 * libsupervise/src/requests.def) fills rep or returns an error with a
 * message in emsg. The reply's messages live in out; heap memory hung off
 * rep goes into the arena, freed after encoding. The dispatch has checked
 * the caller (the row's who) before the handler runs. Handlers run on the
 * loop thread. */
typedef struct req_ctx {
	svd_sup         *s;
	const svw_env   *req;
	uint64_t         pid;
	uint64_t         uid;
	svw_env          rep; /* the reply being built */
	char            *emsg;
	size_t           emsglen;
	void            *arena[3];
	char             token[48];
	bool             peer_gone; /* the connecting process has exited */
	svd_lease_defer *defer; /* a waiting acquire parks here, or NULL */
	int              peer_pidfd; /* of the connecting process, or -1 */
	int     found; /* req_find_worker's answer: 0 not asked, 1, -1 */
	sv_wkey found_key; /* when found is 1 */
	svd_peer_memo *memo; /* the connection's, or NULL */
	req_reply      out; /* storage of the reply's messages */
} req_ctx;

/* sup_effects.c */
svd_gsh    *gsh_find(svd_sup *s, uint32_t id);
svd_proc   *proc_find(svd_sup *s, sv_wkey key);
const char *key_name(svd_sup *s, sv_wkey key, char *buf, size_t len);
void        sup_drain_effects(svd_sup *s);

/* The supervision core is called again while it answers SV_ENOMEM
 * (core_retry.h). */
#define SUP_CORE_CALL(err, what, call) \
	SVD_CORE_CALL(err, "supervision", what, call)
#define SUP_CORE_RETRY(what, call) SVD_CORE_RETRY("supervision", what, call)

/* sup_events.c */
void sup_event(svd_sup *s, const sv_event *ev);
void sup_event_after(svd_sup *s, const sv_event *ev);
bool sup_find_worker(svd_sup *s, long pid, sv_wkey *keyp);

/* sup_leasehost.c */
sv_err sup_leases_create(svd_sup *s, char *err, size_t errlen);
/* sup_durability.c */
void sup_durability_start(svd_sup *s);
void sup_durability_fill(svd_sup *s, Supervise__V1__Durability *d);

/* sup_notify.c */
void        sup_status_text(svd_sup *s, sv_wkey key, const char *text);
const char *proc_status(const svd_proc *p);
void        sup_notify_drain(svd_sup *s);

/* sup_manager.c */
void sup_manager_tick(svd_sup *s);

/* sup_spawn.c */
sv_err    env_build_base(svd_gsh *g);
svd_proc *proc_slot(svd_gsh *g, uint32_t ordinal);
void      sup_spawn(svd_sup *s, sv_spawn_ticket t);
void      sup_reap_orphans(svd_sup *s);
void      proc_exit_cb(sv_loop *loop, sv_io *io, uint32_t events);
void      proc_timer_cb(sv_loop *loop, sv_timer *t);
void      seat_timer_cb(sv_loop *loop, sv_timer *t);
void      plan_timer_cb(sv_loop *loop, sv_timer *t);
void      sup_run_effects(svd_sup *s);

/* sup_groups.c */
void      svd_tmr_drop(sv_loop *loop, svd_tmr **tp);
svd_seat *seat_get(const svd_gsh *g, uint32_t ordinal);
svd_proc *seat_proc(const svd_seat *st, int i);
svd_proc *seat_extra(svd_seat *st);
svd_seat *seat_make(svd_gsh *g, uint32_t ordinal);
void      seat_maybe_free(svd_gsh *g, uint32_t ordinal);
void      gsh_free(svd_gsh *g);
void      gsh_remove(svd_sup *s, uint32_t id);
sv_err    gsh_add(
       svd_sup *s, const svd_group_config *cfg, svd_config *owned, char *spec);

/* req_common.c */
/* req_err records a message for the caller (sv_errf into c->emsg) and
 * returns err. */
#define req_err(c, err, ...) \
	sv_errf((c)->emsg, (c)->emsglen, (err), __VA_ARGS__)
sv_err req_admin(req_ctx *c);
sv_err req_check_caller(req_ctx *c, sv_req_who who);
sv_err req_group(req_ctx *c, const char *name, const sv_cgroup **gp);
sv_err req_core_err(
    req_ctx *c, sv_err err, const sv_cgroup *g, uint32_t ordinal);
sv_err req_room(
    req_ctx *c, const char *name, const sv_cgroup *g, uint32_t count);
sv_err req_ack(req_ctx *c);

/* req_identity.c */
long   proc_ppid(long pid);
bool   req_find_worker(req_ctx *c, sv_wkey *keyp);
sv_err req_caller(req_ctx *c, const sv_cgroup **gp, sv_seat_view *vp,
    const sv_proc_view **pp);
sv_err req_caller_proc(req_ctx *c, const sv_cgroup **gp, sv_seat_view *vp,
    const sv_proc_view **pp);
sv_err req_hello(req_ctx *c);
sv_err req_whoami(req_ctx *c);
sv_err req_ready(req_ctx *c);
sv_err req_heartbeat(req_ctx *c);

/* req_workers.c */
Supervise__V1__WorkerState worker_state(sv_seat_state st);
sv_err                     req_list(req_ctx *c);
sv_err                     req_status(req_ctx *c);
sv_err                     req_scale(req_ctx *c);
sv_err                     req_stop(req_ctx *c);
sv_err                     req_restart(req_ctx *c);
sv_err                     req_start_worker(req_ctx *c);
sv_err                     req_terminate_worker(req_ctx *c);

/* req_groups.c */
void group_info(svd_sup *s, const sv_cgroup *g, Supervise__V1__GroupInfo *gi);
sv_err req_groups(req_ctx *c);
sv_err req_reset(req_ctx *c);
sv_err req_create_group(req_ctx *c);
sv_err req_delete_group(req_ctx *c);

/* req_drain.c */
sv_err req_drain_workers(req_ctx *c);
sv_err req_get_drain(req_ctx *c);
sv_err req_rolling_restart(req_ctx *c);
sv_err req_drain_extend(req_ctx *c);
sv_err req_drain_ack(req_ctx *c);

/* req_subworkers.c */
sv_err req_subworkers(req_ctx *c);

/* req_dispatch.c */
sv_err req_leases(req_ctx *c);
sv_err req_handle(req_ctx *c, nng_msg **replyp);
sv_err sup_dispatch(svd_sup *s, const void *buf, size_t len, uint64_t peer_pid,
    uint64_t peer_uid, int peer_pidfd, svd_peer_memo *memo,
    svd_lease_defer *defer, nng_msg **replyp);

#endif
