/*
 * supervisor.c — supervised's effect shell around the pure supervision core
 * (see supervisor.h for the threading model, core/supervision.h and
 * docs/supervision.md for the decisions).
 *
 * Nothing here decides. The core says what to spawn, signal, time and
 * announce; this file spawns with posix_spawn, watches pidfds, keeps timers
 * in the loop's heap, maps pids to workers with a hash, logs and publishes
 * events, and turns requests into core calls and core state into replies.
 *
 * Divisions: logging; environment; shell records; carrying out effects;
 * events; spawning and reaping; the request queue and the loop; requests.
 */
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
#include "activity.h"
#include "drain.h"
#include "events.h"
#include "leases.h"
#include "notify.h"
#include "subworkers.h"
#include "shell/cgroup.h"
#include "shell/loop.h"
#include "shell/procinfo.h"
#include "shell/reaper.h"
#include "shell/spawn.h"
#include "sockets.h"
#include "state.h"
#include "supervisor.h"
#include "wire/wire.h"
#include "wire/wire_msg.h"

extern char **environ;

/* Spawns per loop iteration, so requests are served in between. */
#define SUP_SPAWN_BATCH 32
/* How far up the process tree whoami looks for a worker. */
#define SUP_MAX_ANCESTRY 32
/* Event lines logged per second at most (the rest are counted). */
#define SUP_LOG_PER_SEC 200
/* Largest page of ListWorkers. */
#define SUP_MAX_PAGE 4096u

typedef struct svd_gsh svd_gsh;

/* The shell's record of one process: what the core cannot hold. */
typedef struct svd_proc {
	svd_sup   *s;
	sv_wkey    key;
	pid_t      pid;
	int        pidfd; /* -1: record unused */
	sv_io      io;
	sv_timer   timer;
	uint64_t   guard; /* guard of the armed timer */
	char       status[SVD_NOTIFY_STATUS_MAX + 1]; /* last status text */
	sv_cgleaf *cg; /* its own cgroup, or NULL (shell/cgroup.h) */
	uint64_t   start_time; /* kernel start time (shell/procinfo.h) */
	bool       adopted; /* started by a predecessor: not our child */
	svd_act   *act; /* its activity region, or NULL (activity.h) */
} svd_proc;

/* The shell's side of a group: its config and per-seat records. */
struct svd_gsh {
	svd_sup                *s;
	uint32_t                id; /* the core's group id */
	const svd_group_config *cfg;
	const char            **envbase;
	size_t                  nenvbase;
	svd_proc               *procs; /* [2 * max_count]: two per seat */
	sv_timer               *seat_timers; /* [max_count] */
	svd_sockets *sockets; /* handed to every worker (sockets.h), or NULL */
	uint64_t    *seat_guards; /* [max_count] */
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
	uint64_t          plan_guard;
	uint64_t          turn; /* loop iterations, counted by svd_sup_run */
	uint64_t          notify_turn; /* the turn notify was last drained */
	bool              orphans_due; /* a worker was reaped this turn */
	bool              stale_due; /* an adopted worker was reaped */
};

/* ---- environment ----------------------------------------------------------
 */

/* env_name_len returns the length of NAME in "NAME=value". */
static size_t
env_name_len(const char *e)
{
	const char *eq = strchr(e, '=');
	return eq != NULL ? (size_t) (eq - e) : strlen(e);
}

/* env_overridden tells whether the group's env sets the same NAME as e. */
static bool
env_overridden(const svd_group_config *cfg, const char *e)
{
	size_t n = env_name_len(e);

	if (svd_env_reserved(e)) {
		return true;
	}
	for (size_t i = 0; i < cfg->nenv; i++) {
		if (env_name_len(cfg->env[i]) == n
		    && strncmp(cfg->env[i], e, n) == 0) {
			return true;
		}
	}
	return false;
}

/* env_build_base collects the daemon's environment, minus what the group
 * overrides, plus the group's env. Strings are borrowed. */
static sv_err
env_build_base(svd_gsh *g)
{
	size_t n = 0, k = 0;

	for (char **e = environ; e != NULL && *e != NULL; e++) {
		n++;
	}
	g->envbase = calloc(n + g->cfg->nenv + 1, sizeof(*g->envbase));
	if (g->envbase == NULL) {
		return SV_ENOMEM;
	}
	for (char **e = environ; e != NULL && *e != NULL; e++) {
		if (!env_overridden(g->cfg, *e)) {
			g->envbase[k++] = *e;
		}
	}
	for (size_t i = 0; i < g->cfg->nenv; i++) {
		g->envbase[k++] = g->cfg->env[i];
	}
	g->nenvbase = k;
	return SV_OK;
}

/* ---- shell records --------------------------------------------------------
 */

static void   proc_exit_cb(sv_loop *loop, sv_io *io, uint32_t events);
static void   proc_timer_cb(sv_loop *loop, sv_timer *t);
static void   seat_timer_cb(sv_loop *loop, sv_timer *t);
static void   sup_run_effects(svd_sup *s);
static void   gsh_remove(svd_sup *s, uint32_t id);
static sv_err sup_dispatch(svd_sup *s, const void *buf, size_t len,
    uint64_t peer_pid, uint64_t peer_uid, int peer_pidfd, svd_peer_memo *memo,
    svd_lease_defer *defer, nng_msg **replyp);
static void   sup_notify_drain(svd_sup *s);
static void   sup_journal_freed(
      svd_sup *s, const sv_event *ev, const svd_gsh *g);

/* gsh_find returns the shell group of a core group id. */
static svd_gsh *
gsh_find(svd_sup *s, uint32_t id)
{
	for (size_t i = 0; i < s->ngsh; i++) {
		if (s->gsh[i]->id == id) {
			return s->gsh[i];
		}
	}
	return NULL;
}

/* proc_find returns the shell record of a process key, or NULL. */
static svd_proc *
proc_find(svd_sup *s, sv_wkey key)
{
	svd_gsh *g = gsh_find(s, key.group_id);

	if (g == NULL || key.ordinal >= g->cfg->max_count) {
		return NULL;
	}
	for (int i = 0; i < 2; i++) {
		svd_proc *p = &g->procs[2 * key.ordinal + (uint32_t) i];
		if (p->pidfd >= 0 && p->key.generation == key.generation) {
			return p;
		}
	}
	return NULL;
}

/* key_name formats "group[ordinal]" for logs. */
static const char *
key_name(svd_sup *s, sv_wkey key, char *buf, size_t len)
{
	svd_gsh *g = gsh_find(s, key.group_id);

	snprintf(buf, len, "%s[%" PRIu32 "]", g != NULL ? g->cfg->name : "?",
	    key.ordinal);
	return buf;
}

/* ---- carrying out effects
 * ---------------------------------------------------
 */

/* fx_signal sends a signal to a process's group (workers lead their own
 * process group), falling back on its pidfd. */
static void
fx_signal(svd_sup *s, const sv_fx *fx)
{
	svd_proc *p = proc_find(s, fx->key);

	if (p == NULL) {
		return; /* already reaped */
	}
	if (!fx->pgroup || sv_signal_group(p->pid, fx->signo) != SV_OK) {
		(void) sv_signal(p->pidfd, fx->signo);
	}
}

/* fx_timer_slot finds the timer (and its guard) an effect names. */
static sv_timer *
fx_timer_slot(svd_sup *s, const sv_fx *fx, uint64_t **guardp)
{
	svd_gsh  *g;
	svd_proc *p;

	switch (fx->timer) {
	case SV_TIMER_PLAN:
		*guardp = &s->plan_guard;
		return &s->plan_timer;
	case SV_TIMER_SEAT:
		g = gsh_find(s, fx->key.group_id);
		if (g == NULL || fx->key.ordinal >= g->cfg->max_count) {
			return NULL;
		}
		*guardp = &g->seat_guards[fx->key.ordinal];
		return &g->seat_timers[fx->key.ordinal];
	case SV_TIMER_PROC:
		if ((p = proc_find(s, fx->key)) == NULL) {
			return NULL;
		}
		*guardp = &p->guard;
		return &p->timer;
	}
	return NULL;
}

/* fx_timer arms or cancels a timer. */
static void
fx_timer(svd_sup *s, const sv_fx *fx)
{
	uint64_t *guard = NULL;
	sv_timer *t     = fx_timer_slot(s, fx, &guard);
	uint64_t  now   = sv_loop_now_ms();

	if (t == NULL) {
		return;
	}
	sv_loop_timer_stop(s->loop, t);
	*guard = 0;
	if (fx->kind == SV_FX_CANCEL) {
		return;
	}
	*guard = fx->guard;
	if (sv_loop_timer_start(
	        s->loop, t, fx->due_ms > now ? fx->due_ms - now : 0)
	    != SV_OK) {
		/* No memory for the timer heap: fire it now rather than
		 * never; the core treats an early timer like a late one. */
		svd_log("cannot arm a timer: out of memory; firing it now");
		sv_core_timer(s->core, fx->timer, fx->key, fx->guard, now);
	}
}

static void sup_event(svd_sup *s, const sv_event *ev);
static void sup_event_after(svd_sup *s, const sv_event *ev);

/* sup_drain_effects carries out every effect the core has queued. Request
 * handlers call it; only those whose reply shows a new process also run
 * spawns (sup_run_effects), the loop spawns the rest between requests. */
static void
sup_drain_effects(svd_sup *s)
{
	sv_fx fx;

	while (sv_core_pop_effect(s->core, &fx)) {
		switch (fx.kind) {
		case SV_FX_SIGNAL:
			fx_signal(s, &fx);
			break;
		case SV_FX_TIMER:
		case SV_FX_CANCEL:
			fx_timer(s, &fx);
			break;
		case SV_FX_EVENT:
			sup_event(s, &fx.ev);
			sup_event_after(s, &fx.ev);
			break;
		}
	}
}

/* ---- events
 * -----------------------------------------------------------------
 */

/* sup_log_event writes the human line of an event. */
static void
sup_log_event(svd_sup *s, const sv_event *ev, const char *group)
{
	char     nm[96];
	sv_wkey  key = {ev->group_id, ev->ordinal, ev->generation};
	uint64_t sec = sv_loop_now_ms() / 1000;

	/* A crash loop without backoff must not fill the disk: at most
	 * SUP_LOG_PER_SEC event lines a second; the rest are counted and the
	 * count is logged once the second is over. Events are still
	 * published in full. */
	if (sec != s->log_sec) {
		if (s->log_suppressed > 0) {
			svd_log(
			    "%lu event lines suppressed in the last second "
			    "(more than %d a second; see the event stream "
			    "for all of them)",
			    s->log_suppressed, SUP_LOG_PER_SEC);
		}
		s->log_sec        = sec;
		s->log_lines      = 0;
		s->log_suppressed = 0;
	}
	if (++s->log_lines > SUP_LOG_PER_SEC) {
		s->log_suppressed++;
		return;
	}
	key_name(s, key, nm, sizeof(nm));
	switch (ev->kind) {
	case SV_EV_STARTED:
		svd_log("%s: started pid %" PRId64 " generation %" PRIu64, nm,
		    ev->pid, ev->generation);
		break;
	case SV_EV_READY:
		svd_log("%s: pid %" PRId64 " is ready", nm, ev->pid);
		break;
	case SV_EV_EXITED:
		if (!ev->exit.exited && ev->exit.signo == 0) {
			svd_log("%s: pid %" PRId64 " ended after %" PRIu64
			        " ms (status unknown)%s%s",
			    nm, ev->pid, ev->uptime_ms,
			    ev->why != SV_WHY_NONE ? "; stopped for " : "",
			    ev->why != SV_WHY_NONE ? sv_why_name(ev->why)
			                           : "");
		} else if (ev->exit.exited) {
			svd_log("%s: pid %" PRId64
			        " exited with status %d after "
			        "%" PRIu64 " ms%s%s",
			    nm, ev->pid, ev->exit.code, ev->uptime_ms,
			    ev->why != SV_WHY_NONE ? "; stopped for " : "",
			    ev->why != SV_WHY_NONE ? sv_why_name(ev->why)
			                           : "");
		} else {
			svd_log("%s: pid %" PRId64
			        " killed by signal %d (%s)%s "
			        "after %" PRIu64 " ms%s%s",
			    nm, ev->pid, ev->exit.signo,
			    strsignal(ev->exit.signo),
			    ev->exit.core ? ", core dumped" : "",
			    ev->uptime_ms,
			    ev->why != SV_WHY_NONE ? "; stopped for " : "",
			    ev->why != SV_WHY_NONE ? sv_why_name(ev->why)
			                           : "");
		}
		break;
	case SV_EV_RESTART_SCHEDULED:
		svd_log("%s: restarting in %" PRIu64
		        " ms as generation %" PRIu64
		        " (consecutive fast failures: %" PRIu32 ")",
		    nm, ev->delay_ms, ev->generation, ev->attempt);
		break;
	case SV_EV_UNRESPONSIVE:
		svd_log("%s: pid %" PRId64 " unresponsive (%s); %s", nm,
		    ev->pid,
		    ev->phase == SV_PHASE_START ? "not ready in time"
		        : ev->phase == SV_PHASE_WATCHDOG
		        ? "missed its heartbeat"
		        : "did not stop in time",
		    ev->abandon ? "abandoning it" : "stopping it");
		break;
	case SV_EV_ESCALATED:
		svd_log("%s: sending SIGKILL to pid %" PRId64, nm, ev->pid);
		break;
	case SV_EV_STOPPING:
		svd_log("%s: stopping pid %" PRId64 " (%s)", nm, ev->pid,
		    sv_why_name(ev->why));
		break;
	case SV_EV_STOPPED:
		svd_log("%s: stopped (%s)", nm, sv_why_name(ev->why));
		break;
	case SV_EV_SPAWN_FAILED:
		/* Logged by sup_spawn, with the program's name. */
		break;
	case SV_EV_GROUP_FAILED:
		svd_log("%s: group failed: %s; `supervisectl reset %s` starts "
		        "it again",
		    group, ev->reason, group);
		break;
	case SV_EV_GROUP_RESET:
		svd_log("%s: group reset", group);
		break;
	case SV_EV_GROUP_SCALED:
		if (ev->previous != ev->count) {
			svd_log("%s: target %" PRIu32 " -> %" PRIu32, group,
			    ev->previous, ev->count);
		}
		break;
	case SV_EV_ADOPTED:
		svd_log("%s: adopted pid %" PRId64 " generation %" PRIu64
		        " from the previous supervisor",
		    nm, ev->pid, ev->generation);
		break;
	case SV_EV_DRAINING:
		svd_log("%s: draining pid %" PRId64 " (drain %" PRIu64
		        "%s; SIGKILL in %" PRIu64 " ms)",
		    nm, ev->pid, ev->drain_id,
		    ev->why == SV_WHY_ROLL ? ", rolling restart" : "",
		    ev->delay_ms);
		break;
	case SV_EV_ROLL_DONE:
		svd_log("%s: rolling restart %" PRIu64 " %s%s", group,
		    ev->drain_id,
		    ev->reason != NULL ? "stopped: " : "complete",
		    ev->reason != NULL ? ev->reason : "");
		break;
	case SV_EV_GROUP_CREATED:
	case SV_EV_GROUP_DELETED:
		break;
	}
}

/* sup_journal_event records what an event changes of the durable state
 * (state.h): processes started, adopted, ready, being stopped, reaped;
 * groups resized, created, deleted. */
static void
sup_journal_event(svd_sup *s, const sv_event *ev, svd_gsh *g)
{
	sv_jrec r = {.ordinal = ev->ordinal, .generation = ev->generation};
	const svd_proc *p;
	sv_wkey         key = {ev->group_id, ev->ordinal, ev->generation};

	if (s->state == NULL || g == NULL) {
		return;
	}
	r.name = g->cfg->name;
	switch (ev->kind) {
	case SV_EV_STARTED:
	case SV_EV_ADOPTED:
		if ((p = proc_find(s, key)) == NULL) {
			return;
		}
		r.kind       = SV_J_STARTED;
		r.pid        = p->pid;
		r.start_time = p->start_time;
		svd_state_record(s->state, &r);
		if (ev->kind == SV_EV_ADOPTED) {
			const sv_cgroup *cg = sv_core_group(s->core, g->id);
			if (cg != NULL && ev->ordinal < cg->max_count
			    && cg->seats[ev->ordinal].cur.ready) {
				r.kind = SV_J_READY;
				svd_state_record(s->state, &r);
			}
		}
		return;
	case SV_EV_READY:
		r.kind = SV_J_READY;
		break;
	case SV_EV_STOPPING:
		r.kind = SV_J_STOPPING;
		svd_state_record(s->state, &r);
		sup_journal_freed(s, ev, g);
		return;
	case SV_EV_DRAINING:
	case SV_EV_STOPPED:
		sup_journal_freed(s, ev, g);
		return;
	case SV_EV_EXITED:
		r.kind = SV_J_REAPED;
		break;
	case SV_EV_GROUP_SCALED:
	case SV_EV_GROUP_CREATED:
		r.kind         = SV_J_GROUP;
		r.ordinal      = 0;
		r.count        = ev->kind == SV_EV_GROUP_SCALED
		           ? ev->count
		           : sv_core_group(s->core, g->id)->ords.limit;
		r.config_count = g->cfg->count;
		r.spec         = g->spec;
		break;
	case SV_EV_GROUP_DELETED:
		r.kind    = SV_J_DELETED;
		r.ordinal = 0;
		break;
	default:
		return;
	}
	svd_state_record(s->state, &r);
}

/* sup_journal_freed writes an F record when the seat of event ev is no
 * longer wanted because an operator released its ordinal (a drain, a
 * terminate, a scale-down), so a successor must not start it again
 * (docs/durability.md). Not while shutting down or deleting the group:
 * those leave what is wanted as it was. */
static void
sup_journal_freed(svd_sup *s, const sv_event *ev, const svd_gsh *g)
{
	const sv_cgroup *cg = sv_core_group(s->core, ev->group_id);
	const sv_jgroup *jg;

	/* What an operator released (a drain, a terminate, a scale-down);
	 * not a worker of a temporary group that completed, which the next
	 * supervisor runs again as before. */
	if (ev->kind != SV_EV_DRAINING && ev->why != SV_WHY_UNWANTED
	    && ev->why != SV_WHY_DRAINED) {
		return;
	}
	if (cg == NULL || cg->deleting || sv_core_shutting_down(s->core)
	    || ev->ordinal >= cg->max_count || cg->seats[ev->ordinal].wanted) {
		return;
	}
	/* Once per release: a terminate says STOPPING, then STOPPED. */
	jg = sv_jstate_group(svd_state_mirror(s->state), g->cfg->name);
	if (jg != NULL && ev->ordinal < jg->nseats
	    && jg->seats[ev->ordinal].released) {
		return;
	}
	svd_state_record(s->state,
	    &(sv_jrec) {.kind = SV_J_FREED,
	        .name         = g->cfg->name,
	        .ordinal      = ev->ordinal,
	        .generation   = ev->generation});
}

/* sup_event logs an event and publishes it on the event socket. */
static void
sup_event(svd_sup *s, const sv_event *ev)
{
	svd_gsh                    *g     = gsh_find(s, ev->group_id);
	const char                 *group = g != NULL ? g->cfg->name : "?";
	Supervise__V1__Event        e     = SUPERVISE__V1__EVENT__INIT;
	Supervise__V1__WorkerExited ex    = SUPERVISE__V1__WORKER_EXITED__INIT;
	Supervise__V1__RestartScheduled rs
	    = SUPERVISE__V1__RESTART_SCHEDULED__INIT;
	Supervise__V1__WorkerUnresponsive un
	    = SUPERVISE__V1__WORKER_UNRESPONSIVE__INIT;
	Supervise__V1__WorkerStopped  st = SUPERVISE__V1__WORKER_STOPPED__INIT;
	Supervise__V1__WorkerStopping sg
	    = SUPERVISE__V1__WORKER_STOPPING__INIT;
	Supervise__V1__SpawnFailed   sf = SUPERVISE__V1__SPAWN_FAILED__INIT;
	Supervise__V1__GroupFailed   gf = SUPERVISE__V1__GROUP_FAILED__INIT;
	Supervise__V1__GroupScaled   gs = SUPERVISE__V1__GROUP_SCALED__INIT;
	Supervise__V1__WorkerStarted ws = SUPERVISE__V1__WORKER_STARTED__INIT;
	Supervise__V1__WorkerReady   wr = SUPERVISE__V1__WORKER_READY__INIT;
	Supervise__V1__WorkerEscalated we
	    = SUPERVISE__V1__WORKER_ESCALATED__INIT;
	Supervise__V1__GroupReset    gr = SUPERVISE__V1__GROUP_RESET__INIT;
	Supervise__V1__GroupCreated  gc = SUPERVISE__V1__GROUP_CREATED__INIT;
	Supervise__V1__GroupDeleted  gd = SUPERVISE__V1__GROUP_DELETED__INIT;
	Supervise__V1__WorkerAdopted wa = SUPERVISE__V1__WORKER_ADOPTED__INIT;
	Supervise__V1__DrainNotice   dn = SUPERVISE__V1__DRAIN_NOTICE__INIT;
	struct timespec              ts;
	int                          worker = 1;

	sup_log_event(s, ev, group);
	sup_journal_event(s, ev, g);
	if (ev->kind == SV_EV_ROLL_DONE) {
		return; /* logged only; the report (GetDrain) tells the rest */
	}
	s->seq++;
	if (s->events == NULL) {
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	e.seq           = s->seq;
	e.supervisor_id = s->id;
	e.time_unix_ms
	    = (uint64_t) ts.tv_sec * 1000u + (uint64_t) ts.tv_nsec / 1000000u;
	e.group      = (char *) group;
	e.ordinal    = ev->ordinal;
	e.generation = ev->generation;
	e.pid        = ev->pid;
	switch (ev->kind) {
	case SV_EV_STARTED:
		e.kind_case = SUPERVISE__V1__EVENT__KIND_STARTED;
		e.started   = &ws;
		break;
	case SV_EV_READY:
		e.kind_case = SUPERVISE__V1__EVENT__KIND_READY;
		e.ready     = &wr;
		break;
	case SV_EV_EXITED:
		ex.exited      = ev->exit.exited;
		ex.code        = ev->exit.code;
		ex.signal      = ev->exit.signo;
		ex.core_dumped = ev->exit.core;
		ex.uptime_ms   = ev->uptime_ms;
		ex.stopped_by  = ev->why != SV_WHY_NONE
		     ? (char *) sv_why_name(ev->why)
		     : (char *) "";
		e.kind_case    = SUPERVISE__V1__EVENT__KIND_EXITED;
		e.exited       = &ex;
		break;
	case SV_EV_RESTART_SCHEDULED:
		rs.delay_ms = ev->delay_ms;
		rs.attempt  = ev->attempt;
		e.kind_case = SUPERVISE__V1__EVENT__KIND_RESTART_SCHEDULED;
		e.restart_scheduled = &rs;
		break;
	case SV_EV_UNRESPONSIVE:
		un.phase       = ev->phase == SV_PHASE_START ? "start"
		          : ev->phase == SV_PHASE_WATCHDOG   ? "watchdog"
		                                             : "stop";
		un.action      = ev->abandon          ? "abandon"
		         : ev->phase == SV_PHASE_STOP ? "escalate"
		                                      : "kill";
		e.kind_case    = SUPERVISE__V1__EVENT__KIND_UNRESPONSIVE;
		e.unresponsive = &un;
		break;
	case SV_EV_ESCALATED:
		e.kind_case = SUPERVISE__V1__EVENT__KIND_ESCALATED;
		e.escalated = &we;
		break;
	case SV_EV_STOPPING:
		sg.reason   = (char *) sv_why_name(ev->why);
		e.kind_case = SUPERVISE__V1__EVENT__KIND_STOPPING;
		e.stopping  = &sg;
		break;
	case SV_EV_STOPPED:
		st.reason   = (char *) sv_why_name(ev->why);
		e.kind_case = SUPERVISE__V1__EVENT__KIND_STOPPED;
		e.stopped   = &st;
		break;
	case SV_EV_SPAWN_FAILED:
		sf.error       = strerror(ev->error);
		e.kind_case    = SUPERVISE__V1__EVENT__KIND_SPAWN_FAILED;
		e.spawn_failed = &sf;
		break;
	case SV_EV_GROUP_FAILED:
		gf.reason   = (char *) (ev->reason != NULL ? ev->reason : "");
		e.kind_case = SUPERVISE__V1__EVENT__KIND_GROUP_FAILED;
		e.group_failed = &gf;
		worker         = 0;
		break;
	case SV_EV_GROUP_RESET:
		e.kind_case   = SUPERVISE__V1__EVENT__KIND_GROUP_RESET;
		e.group_reset = &gr;
		worker        = 0;
		break;
	case SV_EV_GROUP_SCALED:
		gs.previous_count = ev->previous;
		gs.count          = ev->count;
		e.kind_case       = SUPERVISE__V1__EVENT__KIND_GROUP_SCALED;
		e.group_scaled    = &gs;
		worker            = 0;
		break;
	case SV_EV_ADOPTED:
		wa.previous_epoch = s->epoch > 0 ? s->epoch - 1 : 0;
		e.kind_case       = SUPERVISE__V1__EVENT__KIND_ADOPTED;
		e.adopted         = &wa;
		break;
	case SV_EV_GROUP_CREATED:
		e.kind_case     = SUPERVISE__V1__EVENT__KIND_GROUP_CREATED;
		e.group_created = &gc;
		worker          = 0;
		break;
	case SV_EV_GROUP_DELETED:
		e.kind_case     = SUPERVISE__V1__EVENT__KIND_GROUP_DELETED;
		e.group_deleted = &gd;
		worker          = 0;
		break;
	case SV_EV_DRAINING:
		/* On the worker's own topic: a worker subscribed to
		 * w/GROUP/ORDINAL/ hears it at once. */
		svd_drain_notice(&e, &dn, ev->drain_id, ev->delay_ms);
		break;
	case SV_EV_ROLL_DONE:
		break;
	}
	if (!worker) {
		e.ordinal    = 0;
		e.generation = 0;
		e.pid        = 0;
	}
	svd_events_publish(s->events, &e, worker);
}

/* sup_event_after does what must follow an event once it is out: a
 * deleted group's shell side goes. */
static void
sup_event_after(svd_sup *s, const sv_event *ev)
{
	if (ev->kind == SV_EV_GROUP_DELETED) {
		svd_log("%s: deleted",
		    gsh_find(s, ev->group_id) != NULL
		        ? gsh_find(s, ev->group_id)->cfg->name
		        : "?");
		gsh_remove(s, ev->group_id);
	}
}

static long proc_ppid(long pid);

/* sup_find_worker finds the worker that is process pid or its nearest
 * ancestor (at most SUP_MAX_ANCESTRY levels up): the pid hash answers in
 * constant time per step; /proc is read only for processes that are not
 * workers themselves. */
static bool
sup_find_worker(svd_sup *s, long pid, sv_wkey *keyp)
{
	for (int depth = 0; depth < SUP_MAX_ANCESTRY && pid > 1; depth++) {
		if (sv_pidmap_get(&s->pids, pid, keyp)) {
			return true;
		}
		if (pid == s->self_pid) {
			break;
		}
		pid = proc_ppid(pid);
	}
	return false;
}

/* ---- the lease shell's host callbacks (leases.h) -------------------------
 */

static const char *
lh_group_name(void *arg, uint32_t group_id)
{
	svd_gsh *g = gsh_find(arg, group_id);
	return g != NULL ? g->cfg->name : NULL;
}

static uint32_t
lh_group_id(void *arg, const char *name)
{
	svd_sup         *s = arg;
	const sv_cgroup *g = sv_core_group_named(s->core, name);
	return g != NULL ? g->id : 0;
}

static bool
lh_group_user(void *arg, uint32_t group_id, uid_t *uid, gid_t *gid)
{
	svd_gsh *g = gsh_find(arg, group_id);

	if (g == NULL || !g->cfg->creds.set) {
		return false;
	}
	*uid = g->cfg->creds.uid;
	*gid = g->cfg->creds.gid;
	return true;
}

static int64_t
lh_worker_pid(void *arg, sv_wkey key)
{
	svd_proc *p = proc_find(arg, key);
	return p != NULL && p->pidfd >= 0 ? (int64_t) p->pid : 0;
}

static void
lh_publish(void *arg, Supervise__V1__Event *e, const char *topic)
{
	svd_sup        *s = arg;
	struct timespec ts;

	s->seq++;
	if (s->events == NULL) {
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	e->seq           = s->seq;
	e->supervisor_id = s->id;
	e->time_unix_ms
	    = (uint64_t) ts.tv_sec * 1000u + (uint64_t) ts.tv_nsec / 1000000u;
	svd_events_publish_topic(s->events, e, topic);
}

static void
lh_journal(void *arg, const sv_jrec *r)
{
	svd_sup *s = arg;
	if (s->state != NULL) {
		svd_state_record(s->state, r);
	}
}

static bool
lh_find_worker(void *arg, int64_t pid, sv_wkey *keyp)
{
	return sup_find_worker(arg, (long) pid, keyp);
}

static bool
lh_worker_exited(void *arg, sv_wkey key)
{
	svd_proc     *p = proc_find(arg, key);
	struct pollfd pfd;

	if (p == NULL || p->pidfd < 0) {
		return false;
	}
	pfd = (struct pollfd) {p->pidfd, POLLIN, 0};
	return poll(&pfd, 1, 0) > 0;
}

/* sup_leases_create (re)makes the lease shell for the current epoch. */
static sv_err
sup_leases_create(svd_sup *s, char *err, size_t errlen)
{
	svd_lease_host h
	    = {s, lh_group_name, lh_group_id, lh_group_user, lh_worker_pid,
	        lh_publish, lh_journal, lh_find_worker, lh_worker_exited};

	svd_leases_destroy(s->leases);
	s->leases = NULL;
	return svd_leases_create(s->cfg, s->loop, s->epoch > 0 ? s->epoch : 1,
	    &h, &s->leases, err, errlen);
}

/* sup_status_text records a worker's status line and, when it changed,
 * logs and publishes it. */
static void
sup_status_text(svd_sup *s, sv_wkey key, const char *text)
{
	svd_proc                       *p = proc_find(s, key);
	svd_gsh                        *g = gsh_find(s, key.group_id);
	Supervise__V1__Event            e = SUPERVISE__V1__EVENT__INIT;
	Supervise__V1__WorkerStatusText st
	    = SUPERVISE__V1__WORKER_STATUS_TEXT__INIT;
	char            nm[96];
	struct timespec ts;

	if (p == NULL || g == NULL || strcmp(p->status, text) == 0) {
		return;
	}
	snprintf(p->status, sizeof(p->status), "%s", text);
	svd_log("%s: status: %s", key_name(s, key, nm, sizeof(nm)), p->status);
	s->seq++;
	if (s->events == NULL) {
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	e.seq           = s->seq;
	e.supervisor_id = s->id;
	e.time_unix_ms
	    = (uint64_t) ts.tv_sec * 1000u + (uint64_t) ts.tv_nsec / 1000000u;
	e.group       = (char *) g->cfg->name;
	e.ordinal     = key.ordinal;
	e.generation  = key.generation;
	e.pid         = p->pid;
	st.text       = p->status;
	e.kind_case   = SUPERVISE__V1__EVENT__KIND_STATUS_TEXT;
	e.status_text = &st;
	svd_events_publish(s->events, &e, 1);
}

/* sup_notify_one applies one datagram from the notify socket. Only the
 * worker process itself is heard (the kernel's credentials name it; its
 * pid cannot be reused while we have not reaped it). */
static void
sup_notify_one(svd_sup *s, const svd_notify_msg *m)
{
	sv_wkey  key;
	uint64_t now = sv_loop_now_ms();

	if (!sv_pidmap_get(&s->pids, m->pid, &key)) {
		/* A descendant is heard only where its group allows it. */
		svd_gsh *g = NULL;
		if (!sup_find_worker(s, m->pid, &key)
		    || (g = gsh_find(s, key.group_id)) == NULL
		    || !g->cfg->notify_all) {
			if (s->notify_drops++ % 100 == 0) {
				svd_log(
				    "notify datagram from pid %d, which is "
				    "not a worker (or a descendant of one "
				    "with notify_access = \"all\"): dropped "
				    "(%lu so far)",
				    (int) m->pid, s->notify_drops);
			}
			return;
		}
	}
	if (m->has_status) {
		sup_status_text(s, key, m->status);
	}
	if (m->has_extend) {
		(void) sv_core_extend(
		    s->core, key, m->extend_usec / 1000, now);
	}
	if (m->ready) {
		(void) sv_core_ready(s->core, key, now);
	}
	if (m->watchdog) {
		(void) sv_core_heartbeat(s->core, key, now);
	}
}

/* sup_notify_drain reads every queued notify datagram (at most a batch). */
static void
sup_notify_drain(svd_sup *s)
{
	svd_notify_msg m;

	for (int i = 0; s->notify != NULL && i < 256; i++) {
		sv_err err = svd_notify_recv(s->notify, &m);
		if (err == SV_OK) {
			sup_notify_one(s, &m);
		} else if (err == SV_EBADREQ) {
			if (s->notify_drops++ % 100 == 0) {
				svd_log(
				    "notify datagram from pid %d refused: %s "
				    "(%lu so far)",
				    (int) m.pid, m.why != NULL ? m.why : "?",
				    s->notify_drops);
			}
		} else {
			break;
		}
	}
}

/* sup_notify_cb: the notify socket is readable. */
static void
sup_notify_cb(sv_loop *loop, sv_io *io, uint32_t events)
{
	svd_sup *s = io->arg;

	(void) loop;
	(void) events;
	sup_notify_drain(s);
	sup_run_effects(s);
}

void
svd_sup_set_notify(svd_sup *s, svd_notify *n)
{
	s->notify    = n;
	s->notify_io = (sv_io) {svd_notify_fd(n), sup_notify_cb, s};
	if (sv_loop_add_io(s->loop, &s->notify_io, EPOLLIN) != SV_OK) {
		svd_log("cannot watch the notify socket; NOTIFY_SOCKET is not "
		        "given to workers");
		s->notify = NULL;
	}
}

/* ---- spawning and reaping -------------------------------------------------
 */

/* proc_slot returns a free shell record of the ticket's seat. */
static svd_proc *
proc_slot(svd_gsh *g, uint32_t ordinal)
{
	for (int i = 0; i < 2; i++) {
		svd_proc *p = &g->procs[2 * ordinal + (uint32_t) i];
		if (p->pidfd < 0) {
			return p;
		}
	}
	return NULL;
}

/* sup_spawn starts the process of one ticket and tells the core. */
static void
sup_spawn(svd_sup *s, sv_spawn_ticket t)
{
	svd_gsh     *g = gsh_find(s, t.group_id);
	char         v_url[700], v_group[96], v_ord[48], v_gen[64], v_id[64];
	char         v_purpose[SVD_MAX_PURPOSE + 32], nm[96], v_notify[160];
	const char **envp;
	size_t       k;
	sv_spawn_req req;
	svd_proc    *p;
	pid_t        pid;
	int          pidfd, eno = ENOMEM, procsfd = -1;
	uint64_t     now;
	sv_cgleaf   *leaf = NULL;
	svd_act     *act  = NULL;
	char         v_act[SVD_ACTIVITY_ENV_MAX];

	if (g == NULL || (p = proc_slot(g, t.ordinal)) == NULL) {
		sv_core_spawn_failed(s->core, t, EAGAIN, sv_loop_now_ms());
		return;
	}
	k    = g->nenvbase;
	envp = malloc((k + 10) * sizeof(*envp));
	if (envp == NULL) {
		sv_core_spawn_failed(s->core, t, ENOMEM, sv_loop_now_ms());
		return;
	}
	memcpy(envp, g->envbase, k * sizeof(*envp));
	snprintf(v_url, sizeof(v_url), "SUPERVISE_URL=%s", s->url);
	snprintf(v_group, sizeof(v_group), "SUPERVISE_GROUP=%s", g->cfg->name);
	snprintf(
	    v_ord, sizeof(v_ord), "SUPERVISE_ORDINAL=%" PRIu32, t.ordinal);
	snprintf(v_gen, sizeof(v_gen), "SUPERVISE_GENERATION=%" PRIu64,
	    t.generation);
	snprintf(v_purpose, sizeof(v_purpose), "SUPERVISE_PURPOSE=%s",
	    g->cfg->purpose);
	snprintf(v_id, sizeof(v_id), "SUPERVISE_SUPERVISOR_ID=%s", s->id);
	envp[k++] = v_url;
	envp[k++] = v_group;
	envp[k++] = v_ord;
	envp[k++] = v_gen;
	envp[k++] = v_purpose;
	envp[k++] = v_id;
	if (g->sockets != NULL) {
		envp[k++] = svd_sockets_env(g->sockets);
	}
	if (s->notify != NULL) {
		snprintf(v_notify, sizeof(v_notify), "NOTIFY_SOCKET=%s",
		    svd_notify_path(s->notify));
		envp[k++] = v_notify;
	}
	if (g->cfg->activity
	    && svd_activity_begin(s->act, g->cfg->name, t.ordinal,
	           t.generation, &g->cfg->creds, &act, v_act, sizeof(v_act))
	        == SV_OK) {
		envp[k++] = v_act;
	}
	envp[k] = NULL;

	/* Its own cgroup, if we have them; without one it still runs (its
	 * process group is killed after it exits). */
	if (s->cg != NULL) {
		char label[96];
		snprintf(label, sizeof(label), "%s.%" PRIu32, g->cfg->name,
		    t.ordinal);
		if (sv_cgtree_leaf(s->cg, label, &leaf) != SV_OK
		    || (procsfd = sv_cgleaf_open_procs(s->cg, leaf)) < 0) {
			svd_log("%s: no cgroup of its own: %s",
			    key_name(s, t, nm, sizeof(nm)), strerror(errno));
			sv_cgtree_release(s->cg, leaf);
			leaf = NULL;
		}
	}
	/* Before the spawn: a crash between it and the P record leaves a
	 * process the successor must look for (docs/durability.md). */
	svd_state_record(s->state,
	    &(sv_jrec) {.kind = SV_J_SPAWNING,
	        .name         = g->cfg->name,
	        .ordinal      = t.ordinal,
	        .generation   = t.generation});
	req.path            = g->cfg->argv[0];
	req.argv            = g->cfg->argv;
	req.envp            = (char *const *) envp;
	req.cwd             = g->cfg->cwd;
	req.creds           = &g->cfg->creds;
	req.join_cgroup     = procsfd >= 0;
	req.cgroup_procs_fd = procsfd;
	req.die_with_parent = g->cfg->die_with_supervisor;
	req.pass_fds        = svd_sockets_fds(g->sockets, &req.npass_fds);
	if (sv_spawn(&req, &pid, &pidfd, &eno) != SV_OK) {
		free(envp);
		svd_activity_end(s->act, act);
		if (procsfd >= 0) {
			close(procsfd);
		}
		sv_cgtree_release(s->cg, leaf);
		svd_log("%s: cannot spawn %s: %s",
		    key_name(s, t, nm, sizeof(nm)), g->cfg->argv[0],
		    strerror(eno));
		sv_core_spawn_failed(s->core, t, eno, sv_loop_now_ms());
		return;
	}
	free(envp);
	if (procsfd >= 0) {
		close(procsfd);
	}
	p->cg      = leaf;
	p->key     = t;
	p->pid     = pid;
	p->pidfd   = pidfd;
	p->guard   = 0;
	p->adopted = false;
	p->act     = act;
	/* What tells this process from a later one with its pid, for the
	 * journal (a zombie still has it, so this cannot fail for a child). */
	if (s->state != NULL
	    && sv_proc_start_time(pid, &p->start_time) != SV_OK) {
		p->start_time = 0;
	}
	p->io = (sv_io) {pidfd, proc_exit_cb, p};
	now   = sv_loop_now_ms();
	if (sv_loop_add_io(s->loop, &p->io, EPOLLIN) != SV_OK
	    || sv_pidmap_put(&s->pids, pid, t) != SV_OK) {
		sv_exit_info xi;
		svd_log("%s: cannot watch pid %d; killing it",
		    key_name(s, t, nm, sizeof(nm)), (int) pid);
		sv_loop_del_io(s->loop, &p->io);
		sv_signal(pidfd, SIGKILL);
		while (sv_reap(pidfd, &xi) == SV_EBUSY) {
			/* SIGKILL cannot be caught: this ends promptly. */
			struct timespec ts = {0, 1000000};
			nanosleep(&ts, NULL);
		}
		close(pidfd);
		p->pidfd = -1;
		sv_cgtree_release(s->cg, p->cg);
		p->cg = NULL;
		svd_activity_end(s->act, p->act);
		p->act = NULL;
		sv_core_spawn_failed(s->core, t, ENOMEM, now);
		return;
	}
	sv_core_spawned(s->core, t, pid, now);
	svd_subw_attach(s->subw, t, pid, g->cfg->max_subworkers);
}

/* sup_is_worker tells sv_reaper_collect whether pid is a worker. */
static bool
sup_is_worker(void *arg, pid_t pid)
{
	svd_sup *s = arg;
	sv_wkey  key;

	return sv_pidmap_get(&s->pids, pid, &key);
}

/* sup_reap_orphans reaps exited orphans (descendants of workers
 * reparented to the daemon, a child subreaper), but no worker, and
 * removes the released cgroups that have become empty. Called on SIGCHLD
 * and once after each loop turn in which a worker was reaped (not per
 * worker: waitid(P_ALL) scans every child of the daemon, so a mass exit
 * of n workers would cost n scans of n). */
static void
sup_reap_orphans(svd_sup *s)
{
	(void) sv_reaper_collect(sup_is_worker, s);
	(void) sv_cgtree_sweep(s->cg);
}

void
svd_sup_set_cgroups(svd_sup *s, sv_cgtree *cg)
{
	s->cg = cg;
}

/* proc_exit_cb reaps a process whose pidfd became readable. */
static void
proc_exit_cb(sv_loop *loop, sv_io *io, uint32_t events)
{
	svd_proc    *p = io->arg;
	svd_sup     *s = p->s;
	sv_exit_info xi;
	sv_exit      x;
	char         nm[96];

	(void) events;
	/* Datagrams the worker sent before it died are still credited to
	 * its pid, which cannot be reused before the reap below. Once per
	 * turn is enough: every death reported in this turn happened before
	 * the loop's epoll_wait returned, so its datagrams were queued. */
	if (s->notify_turn != s->turn) {
		s->notify_turn = s->turn;
		sup_notify_drain(s);
	}
	/* An adopted process is not our child: init reaps it and its exit
	 * status is lost to us (docs/durability.md). */
	switch (p->adopted ? SV_EINVAL : sv_reap(p->pidfd, &xi)) {
	case SV_OK:
		break;
	case SV_EBUSY:
		return; /* not exited yet (spurious wake-up) */
	default:
		/* Someone else reaped our child: do not spin on a readable
		 * pidfd; account for it as an exit of unknown status. */
		if (p->adopted) {
			svd_log("%s: adopted pid %d exited (status unknown)",
			    key_name(s, p->key, nm, sizeof(nm)), (int) p->pid);
		} else {
			svd_log("%s: cannot collect the status of pid %d: %s",
			    key_name(s, p->key, nm, sizeof(nm)), (int) p->pid,
			    strerror(errno));
		}
		xi = (sv_exit_info) {false, -1, 0, false};
		break;
	}
	sv_loop_del_io(loop, io);
	sv_loop_timer_stop(loop, &p->timer);
	close(p->pidfd);
	p->pidfd = -1;
	(void) sv_pidmap_del(&s->pids, p->pid);
	/* Nothing a worker started may outlive it: whatever is left in its
	 * process group gets SIGKILL. (The group id cannot have been reused
	 * yet: we are in the callback that reaped its leader.) */
	(void) sv_signal_group(p->pid, SIGKILL);
	/* And whatever left the process group but not its cgroup. */
	if (p->cg != NULL) {
		sv_cgtree_release(s->cg, p->cg);
		p->cg = NULL;
	}
	/* Orphans that exited while this worker's zombie was in the way:
	 * reaped after this turn (svd_sup_run). */
	s->orphans_due = true;
	/* An adopted worker lived in its dead supervisor's cgroup tree:
	 * that tree may be empty now (looked at after this turn). */
	s->stale_due = s->stale_due || p->adopted;
	x            = (sv_exit) {xi.exited, xi.code, xi.signo, xi.core};
	sv_core_exited(s->core, p->key, x, sv_loop_now_ms());
	/* Its leases go now, in this iteration: a waiter gets the slot. */
	svd_leases_worker_gone(s->leases, p->key);
	svd_subw_worker_gone(s->subw, p->key); /* its sub-workers too */
	/* Its activity region goes too: no stale stack is ever shown. */
	svd_activity_end(s->act, p->act);
	p->act = NULL;
	sup_run_effects(s);
}

/* proc_timer_cb and seat_timer_cb hand a fired timer to the core. */
static void
proc_timer_cb(sv_loop *loop, sv_timer *t)
{
	svd_proc *p = t->arg;
	uint64_t  g = p->guard;

	(void) loop;
	p->guard = 0;
	sv_core_timer(p->s->core, SV_TIMER_PROC, p->key, g, sv_loop_now_ms());
	sup_run_effects(p->s);
}

static void
seat_timer_cb(sv_loop *loop, sv_timer *t)
{
	svd_gsh *g       = t->arg;
	size_t   ordinal = (size_t) (t - g->seat_timers);
	sv_wkey  key     = {g->id, (uint32_t) ordinal, 0};
	uint64_t guard   = g->seat_guards[ordinal];

	(void) loop;
	g->seat_guards[ordinal] = 0;
	sv_core_timer(g->s->core, SV_TIMER_SEAT, key, guard, sv_loop_now_ms());
	sup_run_effects(g->s);
}

static void
plan_timer_cb(sv_loop *loop, sv_timer *t)
{
	svd_sup *s     = t->arg;
	sv_wkey  key   = {0, 0, 0};
	uint64_t guard = s->plan_guard;

	(void) loop;
	s->plan_guard = 0;
	sv_core_timer(s->core, SV_TIMER_PLAN, key, guard, sv_loop_now_ms());
	sup_run_effects(s);
}

/* sup_run_effects carries out queued effects, then up to one batch of
 * spawns (each of which may queue more effects). Returns with spawns
 * possibly left for the next loop iteration (sup_spawns_left). */
static void
sup_run_effects(svd_sup *s)
{
	sv_spawn_ticket t;

	sup_drain_effects(s);
	for (int i = 0; i < SUP_SPAWN_BATCH
	     && sv_core_next_spawn(s->core, sv_loop_now_ms(), &t);
	     i++) {
		sup_spawn(s, t);
		sup_drain_effects(s);
	}
}

/* ---- groups
 * -----------------------------------------------------------------
 */

/* gsh_free frees the shell side of a group (its processes are gone, or
 * the daemon is exiting). NULL is ignored. */
static void
gsh_free(svd_gsh *g)
{
	if (g == NULL) {
		return;
	}
	if (g->procs != NULL) {
		for (uint32_t o = 0; o < 2 * g->cfg->max_count; o++) {
			if (g->procs[o].pidfd >= 0) {
				close(g->procs[o].pidfd);
			}
			svd_activity_drop(g->procs[o].act);
		}
	}
	free(g->procs);
	free(g->seat_timers);
	free(g->seat_guards);
	free(g->envbase);
	svd_config_free(g->owned);
	free(g->spec);
	svd_sockets_close(g->sockets);
	free(g);
}

/* gsh_remove takes a deleted group's shell side out and frees it. */
static void
gsh_remove(svd_sup *s, uint32_t id)
{
	for (size_t i = 0; i < s->ngsh; i++) {
		if (s->gsh[i]->id == id) {
			svd_gsh *g = s->gsh[i];
			memmove(&s->gsh[i], &s->gsh[i + 1],
			    (s->ngsh - i - 1) * sizeof(svd_gsh *));
			s->ngsh--;
			for (uint32_t t = 0; t < g->cfg->max_count; t++) {
				sv_loop_timer_stop(
				    s->loop, &g->seat_timers[t]);
			}
			gsh_free(g);
			return;
		}
	}
}

static sv_err gsh_init(svd_sup *s, svd_gsh *g, const svd_group_config *cfg);

/* gsh_add creates the shell side of a group and adds the group to the
 * core. owned (may be NULL) is the config cfg belongs to, and spec (may be
 * NULL) the text it was made from; the group then owns both. On failure
 * nothing is left behind (owned and spec are not freed). */
static sv_err
gsh_add(svd_sup *s, const svd_group_config *cfg, svd_config *owned, char *spec)
{
	svd_gsh *g;
	sv_err   err;

	if (s->ngsh >= SV_CORE_MAX_GROUPS) {
		return SV_EEXHAUSTED;
	}
	if ((g = calloc(1, sizeof(*g))) == NULL) {
		return SV_ENOMEM;
	}
	if ((err = gsh_init(s, g, cfg)) != SV_OK) {
		gsh_free(g);
		return err;
	}
	g->owned          = owned;
	g->spec           = spec;
	s->gsh[s->ngsh++] = g;
	return SV_OK;
}

/* gsh_init prepares the shell side of one group and adds it to the core. */
static sv_err
gsh_init(svd_sup *s, svd_gsh *g, const svd_group_config *cfg)
{
	uint32_t n = cfg->max_count;

	g->s   = s;
	g->cfg = cfg;
	if ((g->procs = calloc(2 * (size_t) n, sizeof(*g->procs))) == NULL
	    || (g->seat_timers = calloc(n, sizeof(*g->seat_timers))) == NULL
	    || (g->seat_guards = calloc(n, sizeof(*g->seat_guards))) == NULL) {
		return SV_ENOMEM;
	}
	for (uint32_t i = 0; i < 2 * n; i++) {
		g->procs[i].s     = s;
		g->procs[i].pidfd = -1;
		sv_timer_init(&g->procs[i].timer, proc_timer_cb, &g->procs[i]);
	}
	for (uint32_t i = 0; i < n; i++) {
		sv_timer_init(&g->seat_timers[i], seat_timer_cb, g);
	}
	{
		char msg[600];
		if (svd_sockets_open(cfg, &g->sockets, msg, sizeof(msg))
		    != SV_OK) {
			svd_log("%s", msg);
			return SV_ESYSTEM;
		}
	}
	if (env_build_base(g) != SV_OK) {
		return SV_ENOMEM;
	}
	return sv_core_add_group(
	    s->core, cfg->name, &cfg->pol, cfg->count, cfg->max_count, &g->id);
}

/* ---- taking over a predecessor's state ------------------------------------
 *
 * A supervisor that finds a journal (state.h) replays it, then, before it
 * spawns anything: recreates the groups created at runtime, restores each
 * group's size unless the config changed it since, and goes seat by seat:
 * a process still alive with the same pid and kernel start time is
 * adopted (pidfd, no spawn), every other seat spawns with its generation
 * continued. The new journal (a snapshot of all that) replaces the old one
 * in one rename, so a crash during the takeover loses nothing either.
 */

/* to_kill ends a process left by the predecessor that nothing will adopt:
 * SIGKILL to it and its process group (its pidfd proves it is the same
 * process, so the group id is still its own). */
static void
to_kill(
    int pidfd, pid_t pid, const char *why, const char *group, uint32_t ordinal)
{
	svd_log("%s[%" PRIu32 "]: killing pid %d left by the previous "
	        "supervisor: %s",
	    group, ordinal, (int) pid, why);
	(void) sv_signal_group(pid, SIGKILL);
	(void) sv_signal(pidfd, SIGKILL);
	close(pidfd);
}

/* to_adopt makes a verified process of the predecessor the current one of
 * seat (g, ordinal). */
static void
to_adopt(svd_sup *s, svd_gsh *g, uint32_t ordinal, const sv_jproc *jp,
    int pidfd, uint64_t floor)
{
	svd_proc  *p   = proc_slot(g, ordinal);
	sv_adoptee a   = {jp->generation, jp->pid, jp->ready, jp->stopping};
	sv_wkey    key = {g->id, ordinal, jp->generation};

	if (p == NULL
	    || sv_pidmap_put(&s->pids, (pid_t) jp->pid, key) != SV_OK) {
		to_kill(pidfd, (pid_t) jp->pid, "no room to track it",
		    g->cfg->name, ordinal);
		(void) sv_core_restore(
		    s->core, g->id, ordinal, floor, NULL, sv_loop_now_ms());
		return;
	}
	p->key        = key;
	p->pid        = (pid_t) jp->pid;
	p->pidfd      = pidfd;
	p->guard      = 0;
	p->cg         = NULL;
	p->adopted    = true;
	p->start_time = jp->start_time;
	p->io         = (sv_io) {pidfd, proc_exit_cb, p};
	/* The region the predecessor made for it, if any (activity.h). */
	p->act = svd_activity_adopt(
	    s->act, g->cfg->name, ordinal, jp->generation);
	if (sv_loop_add_io(s->loop, &p->io, EPOLLIN) != SV_OK
	    || sv_core_restore(
	           s->core, g->id, ordinal, floor, &a, sv_loop_now_ms())
	        != SV_OK) {
		sv_loop_del_io(s->loop, &p->io);
		(void) sv_pidmap_del(&s->pids, p->pid);
		p->pidfd = -1;
		svd_activity_end(s->act, p->act);
		p->act = NULL;
		to_kill(pidfd, (pid_t) jp->pid, "cannot watch it",
		    g->cfg->name, ordinal);
		(void) sv_core_restore(
		    s->core, g->id, ordinal, floor, NULL, sv_loop_now_ms());
		return;
	}
	svd_subw_attach(s->subw, key, jp->pid, g->cfg->max_subworkers);
}

/* to_seat takes over one seat of a journaled group (g NULL: the group is
 * gone from the config; its processes are killed). */
/* to_unrecorded looks for the process of a spawn the predecessor began
 * but did not record (S without P): by its environment, which names the
 * predecessor, the group, the ordinal and the generation. On success it
 * fills *jp as if the P record had been written. */
static bool
to_unrecorded(const char *prev_id, const char *name, uint32_t ordinal,
    uint64_t gen, sv_jproc *jp)
{
	char        v_id[96], v_group[300], v_ord[48], v_gen[64];
	const char *want[4] = {v_id, v_group, v_ord, v_gen};
	pid_t       pid;
	uint64_t    start;

	snprintf(v_id, sizeof(v_id), "SUPERVISE_SUPERVISOR_ID=%s", prev_id);
	snprintf(v_group, sizeof(v_group), "SUPERVISE_GROUP=%s", name);
	snprintf(v_ord, sizeof(v_ord), "SUPERVISE_ORDINAL=%" PRIu32, ordinal);
	snprintf(v_gen, sizeof(v_gen), "SUPERVISE_GENERATION=%" PRIu64, gen);
	if (sv_proc_find_env(want, 4, &pid) != SV_OK
	    || sv_proc_start_time(pid, &start) != SV_OK) {
		return false;
	}
	*jp = (sv_jproc) {gen, pid, start, false, false};
	svd_log("%s[%" PRIu32 "]: found pid %d, spawned by the previous "
	        "supervisor just before it died",
	    name, ordinal, (int) pid);
	return true;
}

static void
to_seat(svd_sup *s, svd_gsh *g, const char *name, uint32_t ordinal,
    const sv_jseat *js, bool same_boot, const char *prev_id)
{
	const sv_jproc *best    = NULL;
	int             bestfd  = -1;
	uint64_t        floor   = js->next_generation;
	bool            in_core = g != NULL && ordinal < g->cfg->max_count;
	sv_jproc        found[SV_JOURNAL_SEAT_PROCS + 1];
	uint32_t        nfound = js->nprocs;

	memcpy(found, js->procs, js->nprocs * sizeof(found[0]));
	if (same_boot && js->spawning
	    && to_unrecorded(prev_id, name, ordinal, js->spawning_generation,
	        &found[nfound])) {
		nfound++;
	}
	for (uint32_t k = 0; k < nfound; k++) {
		const sv_jproc *jp = &found[k];
		int             fd;
		if (!same_boot
		    || sv_proc_claim((pid_t) jp->pid, jp->start_time, &fd)
		        != SV_OK) {
			if (same_boot) {
				svd_log("%s[%" PRIu32 "]: pid %" PRId64
				        " generation %" PRIu64
				        " of the previous supervisor is gone",
				    name, ordinal, jp->pid, jp->generation);
			}
			continue;
		}
		if (!in_core) {
			to_kill(fd, (pid_t) jp->pid,
			    g == NULL ? "its group is no longer configured"
			              : "its ordinal is beyond max_count",
			    name, ordinal);
		} else if (g->cfg->die_with_supervisor) {
			to_kill(fd, (pid_t) jp->pid,
			    "its group has die_with_supervisor", name,
			    ordinal);
		} else if (best == NULL || jp->generation > best->generation) {
			if (best != NULL) {
				to_kill(bestfd, (pid_t) best->pid,
				    "a newer generation holds the seat", name,
				    ordinal);
			}
			best   = jp;
			bestfd = fd;
		} else {
			to_kill(fd, (pid_t) jp->pid,
			    "a newer generation holds the seat", name,
			    ordinal);
		}
	}
	if (!in_core) {
		return;
	}
	if (best != NULL) {
		to_adopt(s, g, ordinal, best, bestfd, floor);
	} else if (floor > 0) {
		(void) sv_core_restore(
		    s->core, g->id, ordinal, floor, NULL, sv_loop_now_ms());
	}
}

/* to_runtime_groups recreates the groups the predecessor had created at
 * runtime (from their journaled text) unless the config now has one of
 * that name. */
static void
to_runtime_groups(svd_sup *s, const sv_jstate *prev)
{
	for (size_t i = 0; i < prev->ngroups; i++) {
		const sv_jgroup *jg = &prev->groups[i];
		svd_config      *cfg;
		char             msg[512], *spec;
		if (jg->spec == NULL
		    || sv_core_group_named(s->core, jg->name) != NULL) {
			continue;
		}
		if (svd_config_load_text(
		        "journal", jg->spec, &cfg, msg, sizeof(msg))
		    != SV_OK) {
			svd_log("%s: cannot recreate the runtime group: %s",
			    jg->name, msg);
			continue;
		}
		if ((spec = strdup(jg->spec)) == NULL
		    || gsh_add(s, &cfg->groups[0], cfg, spec) != SV_OK) {
			svd_log(
			    "%s: cannot recreate the runtime group", jg->name);
			free(spec);
			svd_config_free(cfg);
			continue;
		}
		svd_log(
		    "%s: runtime group recreated from the journal", jg->name);
	}
}

sv_err
svd_sup_take_over(
    svd_sup *s, svd_state *st, const sv_jstate *prev, char *err, size_t errlen)
{
	bool     same_boot;
	size_t   adopted_before = sv_core_live(s->core);
	uint64_t now            = sv_loop_now_ms();

	s->state  = st;
	s->epoch  = prev->epoch + 1;
	same_boot = prev->boot_id[0] != '\0'
	    && strcmp(prev->boot_id, svd_state_boot_id(st)) == 0;
	if (prev->epoch > 0 && !same_boot) {
		svd_log("the journal is from another boot: none of its "
		        "processes can be alive");
	}
	svd_state_record(st,
	    &(sv_jrec) {
	        .kind = SV_J_EPOCH, .name = s->id, .generation = s->epoch});
	to_runtime_groups(s, prev);
	/* Sizes first (a scale emits its own record), then every group's
	 * record, then the seats. */
	for (size_t i = 0; i < s->ngsh; i++) {
		svd_gsh         *g  = s->gsh[i];
		const sv_jgroup *jg = sv_jstate_group(prev, g->cfg->name);
		uint32_t         previous;
		if (jg != NULL && jg->config_count == g->cfg->count
		    && jg->count != g->cfg->count
		    && jg->count <= g->cfg->max_count) {
			(void) sv_core_scale(
			    s->core, g->id, jg->count, &previous, now);
			svd_log("%s: size %" PRIu32
			        " restored from the journal (the config says "
			        "%" PRIu32 ")",
			    g->cfg->name, jg->count, g->cfg->count);
		}
		svd_state_record(st,
		    &(sv_jrec) {.kind = SV_J_GROUP,
		        .name         = g->cfg->name,
		        .spec         = g->spec,
		        .count = sv_core_group(s->core, g->id)->ords.limit,
		        .config_count = g->cfg->count});
	}
	sup_drain_effects(s);
	for (size_t i = 0; i < prev->ngroups; i++) {
		const sv_jgroup *jg = &prev->groups[i];
		svd_gsh         *g  = NULL;
		const sv_cgroup *cg = sv_core_group_named(s->core, jg->name);
		if (cg != NULL) {
			g = gsh_find(s, cg->id);
		}
		for (uint32_t o = 0; o < jg->nseats; o++) {
			const sv_jseat *js = &jg->seats[o];
			if (g != NULL && o < g->cfg->max_count
			    && js->next_generation > 0) {
				svd_state_record(st,
				    &(sv_jrec) {.kind = SV_J_FLOOR,
				        .name         = g->cfg->name,
				        .ordinal      = o,
				        .generation   = js->next_generation});
			}
			/* A released ordinal stays released: a process
			 * adopted on it is stopped, not replaced. */
			bool freed = g != NULL && o < g->cfg->max_count
			    && js->released
			    && sv_core_restore_release(s->core, g->id, o)
			        == SV_OK;
			if (js->nprocs > 0 || js->spawning || g != NULL) {
				to_seat(s, g, jg->name, o, js, same_boot,
				    prev->supervisor_id);
			}
			if (freed) {
				svd_state_record(st,
				    &(sv_jrec) {.kind = SV_J_FREED,
				        .name         = g->cfg->name,
				        .ordinal      = o,
				        .generation   = js->next_generation});
			}
		}
	}
	/* The adoptions' events record them in the journal's mirror. */
	sup_drain_effects(s);
	if (prev->epoch > 0) {
		svd_log("took over from supervisor %s (epoch %" PRIu64
		        "): %zu worker%s adopted",
		    prev->supervisor_id[0] != '\0' ? prev->supervisor_id : "?",
		    prev->epoch, sv_core_live(s->core) - adopted_before,
		    sv_core_live(s->core) - adopted_before == 1 ? "" : "s");
	}
	/* Leases: a core of the new epoch, then the predecessor's leases,
	 * unclaimed until their holders claim them (docs/leases.md). */
	if (sup_leases_create(s, err, errlen) != SV_OK) {
		return SV_ESYSTEM;
	}
	svd_leases_restore(s->leases, prev);
	return svd_state_begin(st, err, errlen);
}

/* ---- requests from the control socket and the loop ------------------------
 */

sv_loop *
svd_sup_loop(svd_sup *s)
{
	return s->loop;
}

void
svd_sup_conn_event(svd_sup *s, uint32_t conn, uint64_t peer_pid, bool added)
{
	svd_leases_pipe(s->leases, conn, (int64_t) peer_pid, added);
}

void
svd_sup_request(svd_sup *s, const void *buf, size_t len, uint64_t peer_pid,
    uint64_t peer_uid, int peer_pidfd, uint32_t conn, svd_peer_memo *memo,
    svd_done_cb done, void *arg)
{
	nng_msg        *rep = NULL;
	svd_lease_defer d   = {done, arg, conn, false};

	if (sup_dispatch(
	        s, buf, len, peer_pid, peer_uid, peer_pidfd, memo, &d, &rep)
	    != SV_OK) {
		rep = NULL;
	}
	if (!d.taken) { /* else the lease shell answers later */
		done(arg, rep);
	}
	/* What the request changed is carried out by svd_sup_run after this
	 * batch of events. */
}

/* sup_sig_cb handles SIGTERM/SIGINT (shutdown) and SIGHUP (ignored). */
static void
sup_sig_cb(sv_loop *loop, sv_io *io, uint32_t events)
{
	svd_sup                *s = io->arg;
	struct signalfd_siginfo si;

	(void) loop;
	(void) events;
	while (read(io->fd, &si, sizeof(si)) == (ssize_t) sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			sup_reap_orphans(s);
			continue;
		}
		if (si.ssi_signo == SIGHUP) {
			svd_log("SIGHUP ignored: configuration reload is not "
			        "supported yet");
			continue;
		}
		svd_log("received %s; %s %zu workers",
		    strsignal((int) si.ssi_signo),
		    sv_core_shutting_down(s->core) ? "killing" : "stopping",
		    sv_core_live(s->core));
		sv_core_shutdown(s->core, sv_loop_now_ms());
		sup_run_effects(s);
	}
}

sv_err
svd_sup_create(const svd_config *cfg, const char *url, svd_sup **supp)
{
	svd_sup      *s;
	unsigned char rnd[16];
	sv_err        err = SV_OK;

	if ((s = calloc(1, sizeof(*s))) == NULL) {
		return SV_ENOMEM;
	}
	s->cfg = cfg;
	sv_pidmap_init(&s->pids);
	sv_timer_init(&s->plan_timer, plan_timer_cb, s);
	snprintf(s->url, sizeof(s->url), "%s", url);
	s->self_pid = (long) getpid();
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t) sizeof(rnd)) {
		/* Fall back on time and pid; the id only has to be unique. */
		uint64_t a = (uint64_t) time(NULL), b = (uint64_t) getpid();
		memcpy(rnd, &a, 8);
		memcpy(rnd + 8, &b, 8);
	}
	for (size_t i = 0; i < sizeof(rnd); i++) {
		snprintf(s->id + 2 * i, 3, "%02x", rnd[i]);
	}
	if ((err = sv_loop_create(&s->loop)) != SV_OK
	    || (err = sv_core_create(cfg->strategy, &s->core)) != SV_OK
	    || (err = svd_subw_create(s->loop, &s->subw)) != SV_OK) {
		goto fail;
	}
	if ((s->gsh = calloc(SV_CORE_MAX_GROUPS, sizeof(svd_gsh *))) == NULL) {
		err = SV_ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < cfg->ngroups; i++) {
		if ((err = gsh_add(s, &cfg->groups[i], NULL, NULL)) != SV_OK) {
			goto fail;
		}
	}
	/* Group creation events are not worth logging at start-up. */
	{
		sv_fx fx;
		while (sv_core_pop_effect(s->core, &fx)) {
		}
	}
	{
		char lerr[200];
		if ((err = sup_leases_create(s, lerr, sizeof(lerr)))
		    != SV_OK) {
			svd_log("%s", lerr);
			goto fail;
		}
	}
	/* Without a socket directory (a test) workers get no region. */
	if (cfg->socket_dir != NULL
	    && (err = svd_activity_create(cfg->socket_dir, &s->act))
	        != SV_OK) {
		goto fail;
	}
	*supp = s;
	return SV_OK;
fail:
	svd_sup_destroy(s);
	return err;
}

void
svd_sup_set_events(svd_sup *s, svd_events *ev)
{
	s->events = ev;
}

void
svd_sup_destroy(svd_sup *s)
{
	if (s == NULL) {
		return;
	}
	/* The leases' timers live in the loop: they go first. */
	svd_leases_destroy(s->leases);
	s->leases = NULL;
	svd_subw_destroy(s->subw); /* its child watches are in the loop */
	s->subw = NULL;
	/* The loop first: destroying it touches timers that may still be
	 * armed, and those live in the groups. */
	sv_loop_destroy(s->loop);
	s->loop = NULL;
	for (size_t i = 0; i < s->ngsh; i++) {
		gsh_free(s->gsh[i]);
	}
	free(s->gsh);
	svd_activity_destroy(s->act);
	sv_core_destroy(s->core);
	sv_pidmap_fini(&s->pids);
	free(s);
}

const char *
svd_sup_id(const svd_sup *s)
{
	return s->id;
}

sv_err
svd_sup_run(svd_sup *s, int sigfd)
{
	sv_err          err = SV_OK;
	int             n, timeout;
	sv_spawn_ticket t;

	if (sigfd >= 0) {
		s->sig_io = (sv_io) {sigfd, sup_sig_cb, s};
		if (sv_loop_add_io(s->loop, &s->sig_io, EPOLLIN) != SV_OK) {
			return SV_ESYSTEM;
		}
	}
	for (;;) {
		sup_run_effects(s);
		if (sv_core_done(s->core)) {
			break;
		}
		/* More spawns waiting: poll without blocking, so requests
		 * are served between batches. */
		timeout = sv_core_next_spawn(s->core, sv_loop_now_ms(), &t)
		    ? (sup_spawn(s, t), 0)
		    : sv_loop_next_timeout(s->loop, -1);
		err     = sv_loop_wait(s->loop, timeout, &n);
		if (err != SV_OK) {
			svd_log("event loop failed: %s", strerror(errno));
			break;
		}
		s->turn++;
		sv_loop_dispatch(s->loop, n);
		if (s->orphans_due) {
			s->orphans_due = false;
			sup_reap_orphans(s);
		}
		if (s->stale_due) { /* one look, however many exited */
			s->stale_due = false;
			(void) sv_cgtree_sweep_stale(s->cg, NULL);
		}
	}
	svd_leases_stop(s->leases); /* drop the waiting acquires */
	if (sigfd >= 0) {
		sv_loop_del_io(s->loop, &s->sig_io);
	}
	if (err == SV_OK) {
		svd_log("all workers stopped");
	}
	return err;
}

/* ---- requests -------------------------------------------------------------
 */

/* A request handler fills rep (an envelope on the caller's stack) or
 * returns an error with a message in emsg. Heap memory hung off rep goes
 * into the arena, freed after encoding. Handlers run on the loop thread. */
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
} req_ctx;

/* req_err records a message and returns err. */
static sv_err
req_err(req_ctx *c, sv_err err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->emsg, c->emsglen, fmt, ap);
	va_end(ap);
	return err;
}

static bool req_find_worker(req_ctx *c, sv_wkey *keyp);

/* req_admin checks that the caller may change the supervisor's state: its
 * uid is root's or the daemon's, and it is not a worker (or a descendant
 * of one) unless that worker's group is granted admin. */
static sv_err
req_admin(req_ctx *c)
{
	sv_wkey key;

	if (c->uid != 0 && c->uid != (uint64_t) geteuid()) {
		return req_err(c, SV_EPERM,
		    "uid %" PRIu64 " may not administer this supervisor",
		    c->uid);
	}
	if (c->peer_gone) {
		/* It may have been a worker: what holds the connection now is
		 * not known. */
		return req_err(c, SV_EPERM,
		    "the process that opened this connection (pid %" PRIu64
		    ") has exited; administer over a connection of your own",
		    c->pid);
	}
	if (req_find_worker(c, &key)) {
		svd_gsh *g = gsh_find(c->s, key.group_id);
		if (g == NULL || !g->cfg->admin) {
			return req_err(c, SV_EPERM,
			    "pid %" PRIu64 " belongs to worker %s[%" PRIu32
			    "], whose group is not granted admin (admin = "
			    "true in its config)",
			    c->pid, g != NULL ? g->cfg->name : "?",
			    key.ordinal);
		}
	}
	if (sv_core_shutting_down(c->s->core)) {
		return req_err(c, SV_EBUSY, "supervisor is shutting down");
	}
	return SV_OK;
}

/* req_group validates a group name and finds the group. */
static sv_err
req_group(req_ctx *c, const char *name, const sv_cgroup **gp)
{
	sv_err err = svw_check_name(name);

	if (err != SV_OK) {
		return req_err(c, err,
		    "group name must be 1..64 characters of [A-Za-z0-9_.-]");
	}
	if ((*gp = sv_core_group_named(c->s->core, name)) == NULL) {
		return req_err(c, SV_ENOTFOUND, "no group named \"%s\"", name);
	}
	return SV_OK;
}

/* req_core_err turns an error of the core into a reply with a message. */
static sv_err
req_core_err(req_ctx *c, sv_err err, const sv_cgroup *g, uint32_t ordinal)
{
	switch (err) {
	case SV_OK:
		return SV_OK;
	case SV_ENOTFOUND:
		return req_err(c, err, "%s has no worker at ordinal %" PRIu32,
		    g->name, ordinal);
	case SV_EEXHAUSTED:
		return req_err(c, err, "%s: max_count %" PRIu32 " reached",
		    g->name, g->max_count);
	case SV_ECONFLICT:
		return req_err(c, err,
		    "%s[%" PRIu32 "] is at generation %" PRIu64
		    ", not the expected one",
		    g->name, ordinal,
		    ordinal < g->max_count ? g->seats[ordinal].tok.generation
		                           : 0);
	case SV_EBUSY:
		if (g->failed) {
			return req_err(c, err,
			    "group %s failed (%s); `supervisectl reset %s` "
			    "starts it again",
			    g->name, g->reason, g->name);
		}
		return req_err(c, err,
		    "group %s is shutting down or being "
		    "deleted",
		    g->name);
	default:
		return req_err(c, err, "%s: %s", g->name, sv_strerror(err));
	}
}

static const char *const req_features[] = {"identity", "admin.list",
    "admin.status", "admin.scale", "admin.stop", "admin.restart",
    "admin.restart.expected_generation", "admin.reset", "admin.groups",
    "admin.start_worker", "admin.terminate_worker", "admin.list.pages",
    "ready", "heartbeat", "events", "admin.create_group", "admin.delete_group",
    "durable", "leases", "admin.drain", "admin.rolling_restart", "drain",
    "leases.sessions", "leases.pools", "subworkers", "activity"};

/* req_hello answers Hello with the version and features. */
static sv_err
req_hello(req_ctx *c, Supervise__V1__HelloReply *hr)
{
	const Supervise__V1__Hello *h = c->req->hello;

	if (strlen(h->client_name) > SVW_MAX_TEXT) {
		return req_err(c, SV_ETOOLARGE, "client_name too long");
	}
	if ((h->min_version != 0 && h->min_version > SV_PROTOCOL_VERSION)
	    || (h->max_version != 0 && h->max_version < SV_PROTOCOL_VERSION)) {
		return req_err(c, SV_EVERSION,
		    "client speaks versions %u..%u; this server speaks %d",
		    h->min_version, h->max_version, SV_PROTOCOL_VERSION);
	}
	hr->version        = SV_PROTOCOL_VERSION;
	hr->minor_version  = SV_PROTOCOL_MINOR;
	hr->server_name    = "supervised/" SV_VERSION_STRING;
	hr->supervisor_id  = c->s->id;
	hr->n_features     = sizeof(req_features) / sizeof(req_features[0]);
	hr->features       = (char **) req_features;
	hr->events_url     = c->s->events != NULL
	        ? (char *) svd_events_url(c->s->events)
	        : (char *) "";
	hr->epoch          = c->s->epoch;
	c->rep.body_case   = SUPERVISE__V1__ENVELOPE__BODY_HELLO_REPLY;
	c->rep.hello_reply = hr;
	return SV_OK;
}

/* proc_ppid reads the parent pid of pid from /proc, or -1 (one open, one
 * read, one close: it runs for every request of a non-worker). */
static long
proc_ppid(long pid)
{
	char    path[64], buf[512];
	char   *rp;
	long    ppid = -1;
	char    st;
	int     fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		return -1;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0) {
		return -1;
	}
	buf[n] = '\0';
	if ((rp = strrchr(buf, ')')) == NULL
	    || sscanf(rp + 1, " %c %ld", &st, &ppid) != 2) {
		ppid = -1;
	}
	return ppid;
}

/* req_find_worker finds the worker that is the caller or its nearest
 * ancestor (sup_find_worker). */
static bool
req_find_worker(req_ctx *c, sv_wkey *keyp)
{
	/* Asked once per request, and remembered for the connection while
	 * the pid table is unchanged (svd_peer_memo): the walk may read
	 * /proc at each level. */
	if (c->found == 0) {
		uint64_t       v = sv_pidmap_version(&c->s->pids);
		svd_peer_memo *m = c->memo;

		if (c->peer_gone || c->pid == 0) {
			c->found = -1;
		} else if (m != NULL && m->version == v) {
			c->found     = m->found ? 1 : -1;
			c->found_key = m->key;
		} else {
			c->found = sup_find_worker(
			               c->s, (long) c->pid, &c->found_key)
			    ? 1
			    : -1;
			if (m != NULL) {
				m->version = v;
				m->found   = c->found > 0;
				m->key     = c->found_key;
			}
		}
	}
	if (c->found > 0) {
		*keyp = c->found_key;
	}
	return c->found > 0;
}

/* req_caller finds the worker that is the caller or its nearest ancestor
 * (req_find_worker), or answers NOT_A_WORKER. */
static sv_err
req_caller(
    req_ctx *c, const sv_cgroup **gp, const sv_seat **sp, const sv_proc **pp)
{
	sv_wkey          key;
	const sv_cgroup *g;

	if (c->peer_gone) {
		return req_err(c, SV_ENOTWORKER,
		    "the process that opened this connection (pid %" PRIu64
		    ") has exited; its pid may belong to another process now",
		    c->pid);
	}
	if (c->pid == 0) {
		return req_err(c, SV_ENOTWORKER,
		    "the caller's process cannot be identified");
	}
	if (req_find_worker(c, &key)
	    && (g = sv_core_group(c->s->core, key.group_id)) != NULL
	    && key.ordinal < g->max_count) {
		const sv_seat *s = &g->seats[key.ordinal];
		*gp              = g;
		*sp              = s;
		*pp = s->cur.generation == key.generation ? &s->cur : &s->old;
		return SV_OK;
	}
	return req_err(c, SV_ENOTWORKER,
	    "pid %" PRIu64 " is neither a worker of supervisor %s "
	    "nor a descendant of one",
	    c->pid, c->s->id);
}

/* req_whoami answers for the caller, identified by the kernel (the peer
 * pid of the connection) or by its nearest supervised ancestor. */
static sv_err
req_whoami(req_ctx *c, Supervise__V1__Identity *id, Supervise__V1__Frame *fr,
    Supervise__V1__Frame **frames)
{
	const sv_cgroup *g = NULL;
	const sv_seat   *s = NULL;
	const sv_proc   *p = NULL;
	sv_err           err;
	svd_gsh         *gsh;
	uint64_t         dl = 0;

	if ((err = req_caller(c, &g, &s, &p)) != SV_OK || g == NULL
	    || s == NULL || p == NULL) {
		return err != SV_OK ? err : SV_EINTERNAL;
	}
	gsh               = gsh_find(c->s, g->id);
	fr->kind          = SUPERVISE__V1__WORKER_KIND__WORKER_KIND_PROCESS;
	fr->ordinal       = s->ordinal;
	fr->generation    = p->generation;
	fr->name          = g->name;
	frames[0]         = fr;
	id->group         = g->name;
	id->ordinal       = s->ordinal;
	id->generation    = p->generation;
	id->kind          = SUPERVISE__V1__WORKER_KIND__WORKER_KIND_PROCESS;
	id->pid           = p->pid;
	id->purpose       = gsh != NULL ? gsh->cfg->purpose : "";
	id->supervisor_id = c->s->id;
	id->n_context     = 1;
	id->context       = frames;
	id->parent        = NULL; /* a top-level process has no parent frame */
	id->group_size    = sv_core_group_count(g);
	if (sv_core_proc_deadline(c->s->core,
	        (sv_wkey) {g->id, s->ordinal, p->generation}, &dl)) {
		uint64_t now             = sv_loop_now_ms();
		id->draining             = true;
		id->drain_deadline_in_ms = dl > now ? dl - now : 0;
	}
	/* A registered child is answered as its sub-worker (v1.4). */
	if (c->arena[2] == NULL) {
		(void) svd_subw_whoami(
		    c->s->subw, (int64_t) c->pid, g->name, id, &c->arena[2]);
	}
	c->rep.body_case = SUPERVISE__V1__ENVELOPE__BODY_IDENTITY;
	c->rep.identity  = id;
	return SV_OK;
}

/* req_ready_heartbeat handles Ready and Heartbeat from a worker. */
static sv_err
req_ready_heartbeat(req_ctx *c, bool ready, Supervise__V1__Ack *ack)
{
	const sv_cgroup *g = NULL;
	const sv_seat   *s = NULL;
	const sv_proc   *p = NULL;
	sv_wkey          key;
	sv_err           err;

	if ((err = req_caller(c, &g, &s, &p)) != SV_OK || g == NULL
	    || s == NULL || p == NULL) {
		return err != SV_OK ? err : SV_EINTERNAL;
	}
	if (p->pid != (int64_t) c->pid) {
		svd_gsh *gs = gsh_find(c->s, g->id);
		if (gs == NULL || !gs->cfg->notify_all) {
			return req_err(c, SV_EPERM,
			    "only the worker process itself (pid %" PRId64
			    ") may report for %s[%" PRIu32
			    "] (notify_access = \"all\" lets its descendants)",
			    p->pid, g->name, s->ordinal);
		}
	}
	key = (sv_wkey) {g->id, s->ordinal, p->generation};
	if (ready && c->req->ready->status[0] != '\0') {
		char text[SVD_NOTIFY_STATUS_MAX + 1];
		snprintf(text, sizeof(text), "%s", c->req->ready->status);
		for (char *q = text; *q != '\0'; q++) {
			if ((unsigned char) *q < 0x20) {
				*q = '?';
			}
		}
		sup_status_text(c->s, key, text);
	}
	err = ready ? sv_core_ready(c->s->core, key, sv_loop_now_ms())
	            : sv_core_heartbeat(c->s->core, key, sv_loop_now_ms());
	if (err != SV_OK) {
		return req_err(c, err, "worker is not running");
	}
	sup_drain_effects(c->s);
	c->rep.body_case = SUPERVISE__V1__ENVELOPE__BODY_ACK;
	c->rep.ack       = ack;
	return SV_OK;
}

/* worker_state maps a seat state to the protocol's. */
static Supervise__V1__WorkerState
worker_state(sv_seat_state st)
{
	switch (st) {
	case SV_SEAT_RUNNING:
		return SUPERVISE__V1__WORKER_STATE__WORKER_STATE_RUNNING;
	case SV_SEAT_STOPPING:
		return SUPERVISE__V1__WORKER_STATE__WORKER_STATE_STOPPING;
	case SV_SEAT_BACKOFF:
		return SUPERVISE__V1__WORKER_STATE__WORKER_STATE_BACKOFF;
	case SV_SEAT_STARTING:
		return SUPERVISE__V1__WORKER_STATE__WORKER_STATE_STARTING;
	case SV_SEAT_FAILED:
		return SUPERVISE__V1__WORKER_STATE__WORKER_STATE_FAILED;
	case SV_SEAT_WAITING:
		return SUPERVISE__V1__WORKER_STATE__WORKER_STATE_WAITING;
	case SV_SEAT_IDLE:
		return SUPERVISE__V1__WORKER_STATE__WORKER_STATE_IDLE;
	case SV_SEAT_DRAINING:
		return SUPERVISE__V1__WORKER_STATE__WORKER_STATE_DRAINING;
	default:
		return SUPERVISE__V1__WORKER_STATE__WORKER_STATE_UNSPECIFIED;
	}
}

/* proc_activity fills a WorkerStatus's activity fields from p's region
 * (activity.h: read at most every 100 ms; nothing when idle). */
static void
proc_activity(
    svd_sup *s, svd_proc *p, Supervise__V1__WorkerStatus *w, uint64_t now)
{
	const char *name;

	svd_activity_get(
	    s->act, p->act, now, &w->activities, &name, &w->activity_age_ms);
	w->activity = (char *) name;
}

/* seat_status fills a WorkerStatus from a seat. */
static void
seat_status(svd_sup *s, const sv_cgroup *g, const sv_seat *st,
    Supervise__V1__WorkerStatus *w, uint64_t now)
{
	svd_gsh      *gsh = gsh_find(s, g->id);
	sv_seat_state ss  = sv_core_seat_state(g, st);

	supervise__v1__worker_status__init(w);
	w->group          = g->name;
	w->ordinal        = st->ordinal;
	w->generation     = st->cur.state != SV_PROC_NONE ? st->cur.generation
	                                                  : st->tok.generation;
	w->pid            = st->cur.state != SV_PROC_NONE ? st->cur.pid : 0;
	w->purpose        = gsh != NULL ? gsh->cfg->purpose : "";
	w->restarts       = st->restarts;
	w->last_exit_code = -1;
	w->last_signal    = 0;
	if (st->has_exit) {
		w->last_exit_code
		    = st->last_exit.exited ? st->last_exit.code : -1;
		w->last_signal
		    = st->last_exit.exited ? 0 : st->last_exit.signo;
	}
	if (st->cur.state != SV_PROC_NONE) {
		sv_wkey   key = {g->id, st->ordinal, st->cur.generation};
		svd_proc *p   = proc_find(s, key);
		if (p != NULL) {
			w->status_text = p->status;
			proc_activity(s, p, w, now);
		}
	}
	w->state         = worker_state(ss);
	w->ready         = st->cur.ready;
	w->fast_failures = st->fast_failures;
	if (st->cur.pid > 0) {
		w->uptime_ms = now - st->cur.started_ms;
	}
	if (ss == SV_SEAT_BACKOFF && st->due_ms > now) {
		w->restart_in_ms = st->due_ms - now;
	}
	if (st->cur.draining) {
		w->draining = true;
		w->drain_deadline_in_ms
		    = st->cur.due_ms > now ? st->cur.due_ms - now : 0;
	}
}

/* old_listed tells whether a seat's old process is listed too: the old
 * generation of a rolling restart (serving, then draining) or a drained
 * one; abandoned processes are not. */
static bool
old_listed(const sv_seat *st)
{
	return st->old.state == SV_PROC_STARTING
	    || st->old.state == SV_PROC_RUNNING
	    || st->old.state == SV_PROC_STOPPING;
}

/* old_status fills a WorkerStatus for a seat's old process: same ordinal,
 * older generation (protocol.md, "Ordinals can overlap"). */
static void
old_status(svd_sup *s, const sv_cgroup *g, const sv_seat *st,
    Supervise__V1__WorkerStatus *w, uint64_t now)
{
	const sv_proc *p   = &st->old;
	svd_gsh       *gsh = gsh_find(s, g->id);

	supervise__v1__worker_status__init(w);
	w->group          = g->name;
	w->ordinal        = st->ordinal;
	w->generation     = p->generation;
	w->pid            = p->pid;
	w->purpose        = gsh != NULL ? gsh->cfg->purpose : "";
	w->restarts       = st->restarts;
	w->last_exit_code = -1;
	w->state          = p->draining
	             ? SUPERVISE__V1__WORKER_STATE__WORKER_STATE_DRAINING
	             : p->state == SV_PROC_STOPPING
	             ? SUPERVISE__V1__WORKER_STATE__WORKER_STATE_STOPPING
	             : SUPERVISE__V1__WORKER_STATE__WORKER_STATE_RUNNING;
	w->ready          = p->ready;
	w->uptime_ms      = now - p->started_ms;
	{
		sv_wkey   key = {g->id, st->ordinal, p->generation};
		svd_proc *op  = proc_find(s, key);
		if (op != NULL) {
			proc_activity(s, op, w, now);
		}
	}
	if (p->draining) {
		w->draining = true;
		w->drain_deadline_in_ms
		    = p->due_ms > now ? p->due_ms - now : 0;
	}
}

/* seat_listed tells whether a seat appears in ListWorkers. */
static bool
seat_listed(const sv_cgroup *g, const sv_seat *st)
{
	return sv_core_seat_state(g, st) != SV_SEAT_EMPTY;
}

/* req_list answers ListWorkers, one page at a time when asked: the page
 * token is "GROUP_ID:ORDINAL" of the first seat of the next page. */
static sv_err
req_list(req_ctx *c, Supervise__V1__WorkerList *wl)
{
	const Supervise__V1__ListWorkers *lw   = c->req->list_workers;
	const sv_cgroup                  *only = NULL;
	size_t                            n = 0, k = 0, gi0 = 0;
	uint32_t                          o0 = 0, tok_gid = 0;
	size_t                            page = lw->page_size;
	Supervise__V1__WorkerStatus      *items;
	Supervise__V1__WorkerStatus     **ptrs;
	uint64_t                          now  = sv_loop_now_ms();
	sv_core                          *core = c->s->core;
	sv_err                            err;

	if (lw->group[0] != '\0'
	    && (err = req_group(c, lw->group, &only)) != SV_OK) {
		return err;
	}
	if (page == 0 || page > SUP_MAX_PAGE) {
		page = lw->page_size == 0 ? SIZE_MAX : SUP_MAX_PAGE;
	}
	if (lw->page_token[0] != '\0') {
		char tail;
		if (sscanf(lw->page_token, "%" SCNu32 ":%" SCNu32 "%c",
		        &tok_gid, &o0, &tail)
		        != 2
		    || sv_core_group(core, tok_gid) == NULL) {
			return req_err(
			    c, SV_EBADREQ, "page_token is not valid");
		}
		while (sv_core_group_at(core, gi0)->id != tok_gid) {
			gi0++;
		}
	}
	for (size_t i = gi0; i < sv_core_ngroups(core); i++) {
		const sv_cgroup *g = sv_core_group_at(core, i);
		if (only == NULL || only == g) {
			for (uint32_t o = i == gi0 ? o0 : 0; o < g->max_count;
			     o++) {
				n += seat_listed(g, &g->seats[o])
				    || old_listed(&g->seats[o]);
				n += seat_listed(g, &g->seats[o])
				    && old_listed(&g->seats[o]);
			}
		}
	}
	n           = n < page ? n : page;
	items       = calloc(n + 1, sizeof(*items));
	ptrs        = calloc(n + 1, sizeof(Supervise__V1__WorkerStatus *));
	c->arena[0] = items;
	c->arena[1] = ptrs;
	if (items == NULL || ptrs == NULL) {
		return req_err(c, SV_EINTERNAL, "out of memory");
	}
	for (size_t i = gi0; i < sv_core_ngroups(core); i++) {
		const sv_cgroup *g = sv_core_group_at(core, i);
		if (only != NULL && only != g) {
			continue;
		}
		for (uint32_t o = i == gi0 ? o0 : 0; o < g->max_count; o++) {
			bool cur = seat_listed(g, &g->seats[o]);
			if (!cur && !old_listed(&g->seats[o])) {
				continue;
			}
			/* (a seat's two processes stay on one page: k may
			 * pass n by one, which the arrays have room for) */
			if (k >= n) {
				snprintf(c->token, sizeof(c->token),
				    "%" PRIu32 ":%" PRIu32, g->id, o);
				wl->next_page_token = c->token;
				goto done;
			}
			if (cur) {
				seat_status(
				    c->s, g, &g->seats[o], &items[k], now);
				ptrs[k] = &items[k];
				k++;
			}
			if (old_listed(&g->seats[o])) {
				old_status(
				    c->s, g, &g->seats[o], &items[k], now);
				ptrs[k] = &items[k];
				k++;
			}
		}
	}
done:
	wl->n_workers      = k;
	wl->workers        = ptrs;
	c->rep.body_case   = SUPERVISE__V1__ENVELOPE__BODY_WORKER_LIST;
	c->rep.worker_list = wl;
	return SV_OK;
}

/* req_seat finds the listed seat (group, ordinal). */
static sv_err
req_seat(req_ctx *c, const char *name, uint32_t ordinal, const sv_cgroup **gp,
    const sv_seat **sp)
{
	sv_err err = req_group(c, name, gp);

	if (err != SV_OK || *gp == NULL) {
		return err != SV_OK ? err : SV_EINTERNAL;
	}
	if (ordinal >= (*gp)->max_count
	    || !seat_listed(*gp, &(*gp)->seats[ordinal])) {
		return req_err(c, SV_ENOTFOUND,
		    "%s has no worker at ordinal %" PRIu32, name, ordinal);
	}
	*sp = &(*gp)->seats[ordinal];
	return SV_OK;
}

/* req_reply_status makes the reply a WorkerStatus of a seat. */
static sv_err
req_reply_status(req_ctx *c, const sv_cgroup *g, uint32_t ordinal,
    Supervise__V1__WorkerStatus *w)
{
	seat_status(c->s, g, &g->seats[ordinal], w, sv_loop_now_ms());
	c->rep.body_case     = SUPERVISE__V1__ENVELOPE__BODY_WORKER_STATUS;
	c->rep.worker_status = w;
	return SV_OK;
}

/* req_status answers GetStatus. */
static sv_err
req_status(req_ctx *c, Supervise__V1__WorkerStatus *w)
{
	const sv_cgroup *g   = NULL;
	const sv_seat   *s   = NULL;
	sv_err           err = req_seat(
	              c, c->req->get_status->group, c->req->get_status->ordinal, &g, &s);

	if (err != SV_OK || g == NULL || s == NULL) {
		return err != SV_OK ? err : SV_EINTERNAL;
	}
	return req_reply_status(c, g, s->ordinal, w);
}

/* req_resize sets a group's number of workers. */
static sv_err
req_resize(req_ctx *c, const char *name, uint32_t count,
    Supervise__V1__GroupChange *gc)
{
	const sv_cgroup *g    = NULL;
	uint32_t         prev = 0;
	sv_err           err;

	if ((err = req_admin(c)) != SV_OK
	    || (err = req_group(c, name, &g)) != SV_OK || g == NULL) {
		return err != SV_OK ? err : SV_EINTERNAL;
	}
	if (count > g->max_count) {
		return req_err(c, SV_EEXHAUSTED,
		    "%s: %u is above max_count %u", name, count, g->max_count);
	}
	err = sv_core_scale(c->s->core, g->id, count, &prev, sv_loop_now_ms());
	if (err != SV_OK) {
		return req_core_err(c, err, g, 0);
	}
	sup_drain_effects(c->s);
	gc->group           = g->name;
	gc->previous_count  = prev;
	gc->count           = count;
	c->rep.body_case    = SUPERVISE__V1__ENVELOPE__BODY_GROUP_CHANGE;
	c->rep.group_change = gc;
	return SV_OK;
}

/* req_restart restarts one worker: a live one stops and comes back with
 * the same ordinal and the next generation; one waiting in backoff starts
 * now, and the reply shows the new process. */
static sv_err
req_restart(req_ctx *c, Supervise__V1__WorkerStatus *w)
{
	const Supervise__V1__RestartWorker *r = c->req->restart_worker;
	const sv_cgroup                    *g = NULL;
	const sv_seat                      *s = NULL;
	sv_err                              err;

	if ((err = req_admin(c)) != SV_OK
	    || (err = req_seat(c, r->group, r->ordinal, &g, &s)) != SV_OK
	    || g == NULL || s == NULL) {
		return err != SV_OK ? err : SV_EINTERNAL;
	}
	err = sv_core_restart(c->s->core, g->id, r->ordinal,
	    r->check_generation, r->expected_generation, sv_loop_now_ms());
	if (err == SV_ENOTFOUND) {
		return req_err(c, err, "%s[%" PRIu32 "] is being scaled away",
		    r->group, r->ordinal);
	}
	if (err != SV_OK) {
		return req_core_err(c, err, g, r->ordinal);
	}
	sup_run_effects(c->s);
	return req_reply_status(c, g, r->ordinal, w);
}

/* req_start_worker holds one more ordinal and starts a worker on it. */
static sv_err
req_start_worker(req_ctx *c, Supervise__V1__WorkerStatus *w)
{
	const sv_cgroup *g       = NULL;
	uint32_t         ordinal = 0;
	sv_err           err;

	if ((err = req_admin(c)) != SV_OK
	    || (err = req_group(c, c->req->start_worker->group, &g)) != SV_OK
	    || g == NULL) {
		return err != SV_OK ? err : SV_EINTERNAL;
	}
	err = sv_core_start_one(c->s->core, g->id, &ordinal, sv_loop_now_ms());
	if (err != SV_OK) {
		return req_core_err(c, err, g, ordinal);
	}
	sup_run_effects(c->s);
	return req_reply_status(c, g, ordinal, w);
}

/* req_terminate_worker stops one worker and releases its ordinal. */
static sv_err
req_terminate_worker(req_ctx *c, Supervise__V1__WorkerStatus *w)
{
	const Supervise__V1__TerminateWorker *t = c->req->terminate_worker;
	const sv_cgroup                      *g = NULL;
	sv_err                                err;

	if ((err = req_admin(c)) != SV_OK
	    || (err = req_group(c, t->group, &g)) != SV_OK || g == NULL) {
		return err != SV_OK ? err : SV_EINTERNAL;
	}
	err = sv_core_terminate_one(
	    c->s->core, g->id, t->ordinal, sv_loop_now_ms());
	if (err != SV_OK) {
		return req_core_err(c, err, g, t->ordinal);
	}
	sup_drain_effects(c->s);
	return req_reply_status(c, g, t->ordinal, w);
}

/* group_info fills a GroupInfo. */
static void
group_info(svd_sup *s, const sv_cgroup *g, Supervise__V1__GroupInfo *gi)
{
	svd_gsh *gsh = gsh_find(s, g->id);

	supervise__v1__group_info__init(gi);
	gi->name           = g->name;
	gi->count          = sv_core_group_count(g);
	gi->max_count      = g->max_count;
	gi->failed         = g->failed;
	gi->failure_reason = g->failed ? (char *) g->reason : (char *) "";
	gi->restart        = (char *) sv_restart_type_name(g->pol.restart);
	gi->strategy       = (char *) sv_strategy_name(s->cfg->strategy);
	gi->purpose        = gsh != NULL ? gsh->cfg->purpose : "";
	for (uint32_t o = 0; o < g->max_count; o++) {
		const sv_seat *st = &g->seats[o];
		switch (sv_core_seat_state(g, st)) {
		case SV_SEAT_RUNNING:
			gi->running++;
			gi->ready += st->cur.ready;
			break;
		case SV_SEAT_STARTING:
			gi->starting++;
			gi->running += st->cur.pid > 0;
			break;
		case SV_SEAT_STOPPING:
			gi->stopping++;
			gi->running++;
			break;
		case SV_SEAT_BACKOFF:
			gi->backoff++;
			break;
		default:
			break;
		}
	}
}

/* req_groups answers ListGroups. */
static sv_err
req_groups(req_ctx *c, Supervise__V1__GroupList *gl)
{
	const char                *name = c->req->list_groups->group;
	const sv_cgroup           *only = NULL;
	size_t                     n = sv_core_ngroups(c->s->core), k = 0;
	Supervise__V1__GroupInfo  *items;
	Supervise__V1__GroupInfo **ptrs;
	sv_err                     err;

	if (name[0] != '\0' && (err = req_group(c, name, &only)) != SV_OK) {
		return err;
	}
	items       = calloc(n + 1, sizeof(*items));
	ptrs        = calloc(n + 1, sizeof(Supervise__V1__GroupInfo *));
	c->arena[0] = items;
	c->arena[1] = ptrs;
	if (items == NULL || ptrs == NULL) {
		return req_err(c, SV_EINTERNAL, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		const sv_cgroup *g = sv_core_group_at(c->s->core, i);
		if (only == NULL || only == g) {
			group_info(c->s, g, &items[k]);
			ptrs[k] = &items[k];
			k++;
		}
	}
	gl->n_groups      = k;
	gl->groups        = ptrs;
	c->rep.body_case  = SUPERVISE__V1__ENVELOPE__BODY_GROUP_LIST;
	c->rep.group_list = gl;
	return SV_OK;
}

/* req_reset clears a failed group and starts it again. */
static sv_err
req_reset(req_ctx *c, Supervise__V1__GroupInfo *gi)
{
	const sv_cgroup *g = NULL;
	sv_err           err;

	if ((err = req_admin(c)) != SV_OK
	    || (err = req_group(c, c->req->reset_group->group, &g)) != SV_OK
	    || g == NULL) {
		return err != SV_OK ? err : SV_EINTERNAL;
	}
	if ((err = sv_core_reset(c->s->core, g->id, sv_loop_now_ms()))
	    != SV_OK) {
		return req_core_err(c, err, g, 0);
	}
	sup_drain_effects(c->s);
	group_info(c->s, g, gi);
	c->rep.body_case  = SUPERVISE__V1__ENVELOPE__BODY_GROUP_INFO;
	c->rep.group_info = gi;
	return SV_OK;
}

/* spec_quote writes str to f as a libconfig string literal. */
static void
spec_quote(FILE *f, const char *str)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *) str; *p != 0;
	     p++) {
		if (*p == '"' || *p == '\\') {
			fprintf(f, "\\%c", *p);
		} else if (*p < 0x20 || *p == 0x7f) {
			fprintf(f, "\\x%02x", *p);
		} else {
			fputc(*p, f);
		}
	}
	fputc('"', f);
}

/* spec_literal tells whether an option value can be written as is: an
 * integer, a decimal number, true or false. */
static bool
spec_literal(const char *v)
{
	size_t digits = 0, dots = 0;

	if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0) {
		return true;
	}
	for (const char *p = v + (*v == '-'); *p != '\0'; p++) {
		if (*p >= '0' && *p <= '9') {
			digits++;
		} else if (*p == '.' && dots == 0) {
			dots++;
		} else {
			return false;
		}
	}
	return digits > 0 && digits <= 20;
}

/* spec_render writes a GroupSpec as the text of a config file with one
 * group, so that svd_config_load_text checks it by the file's rules.
 * Returns a malloc'ed string (the caller frees it) or NULL, with a message
 * in c for what cannot even be written. */
static char *
spec_render(req_ctx *c, const Supervise__V1__GroupSpec *sp)
{
	static const char *const typed[] = {"name", "argv", "count", "purpose",
	    "env", "cwd", "max_count", "groups"};
	char                    *text    = NULL;
	size_t                   len     = 0;
	FILE                    *f       = open_memstream(&text, &len);

	if (f == NULL) {
		req_err(c, SV_EINTERNAL, "out of memory");
		return NULL;
	}
	fprintf(f, "stop_timeout_ms = %" PRIu64 ";\ngroups = ( {\n  name = ",
	    c->s->cfg->stop_timeout_ms);
	spec_quote(f, sp->name);
	fprintf(f, ";\n  argv = [");
	for (size_t i = 0; i < sp->n_argv; i++) {
		fputs(i > 0 ? ", " : " ", f);
		spec_quote(f, sp->argv[i]);
	}
	fprintf(f, " ];\n  count = %" PRIu32 ";\n  purpose = ", sp->count);
	spec_quote(f, sp->purpose);
	fputs(";\n", f);
	if (sp->n_env > 0) {
		fputs("  env = [", f);
		for (size_t i = 0; i < sp->n_env; i++) {
			fputs(i > 0 ? ", " : " ", f);
			spec_quote(f, sp->env[i]);
		}
		fputs(" ];\n", f);
	}
	if (sp->cwd[0] != '\0') {
		fputs("  cwd = ", f);
		spec_quote(f, sp->cwd);
		fputs(";\n", f);
	}
	if (sp->max_count > 0) {
		fprintf(f, "  max_count = %" PRIu32 ";\n", sp->max_count);
	}
	for (size_t i = 0; i < sp->n_options; i++) {
		const char *k  = sp->options[i]->key;
		size_t      n  = strlen(k);
		bool        ok = n > 0 && n <= 32;
		for (size_t j = 0; ok && j < n; j++) {
			ok = (k[j] >= 'a' && k[j] <= 'z') || k[j] == '_';
		}
		for (size_t j = 0; ok && j < sizeof(typed) / sizeof(typed[0]);
		     j++) {
			ok = strcmp(k, typed[j]) != 0;
		}
		if (!ok) {
			fclose(f);
			free(text);
			req_err(c, SV_EBADREQ,
			    "option \"%.40s\": not a key of a group, or one "
			    "that GroupSpec has a field for",
			    k);
			return NULL;
		}
		fprintf(f, "  %s = ", k);
		if (spec_literal(sp->options[i]->value)) {
			fputs(sp->options[i]->value, f);
		} else {
			spec_quote(f, sp->options[i]->value);
		}
		fputs(";\n", f);
	}
	fputs("} );\n", f);
	if (fclose(f) != 0) {
		free(text);
		req_err(c, SV_EINTERNAL, "out of memory");
		return NULL;
	}
	return text;
}

/* req_create_group checks a GroupSpec by the config file's rules and adds
 * the group. */
static sv_err
req_create_group(req_ctx *c, Supervise__V1__GroupInfo *gi)
{
	const Supervise__V1__GroupSpec *sp  = c->req->create_group->spec;
	svd_config                     *cfg = NULL;
	char                           *text;
	char                            msg[SVW_MAX_TEXT];
	sv_err                          err;

	if ((err = req_admin(c)) != SV_OK) {
		return err;
	}
	if (sp == NULL) {
		return req_err(c, SV_EBADREQ, "CreateGroup needs a spec");
	}
	if ((text = spec_render(c, sp)) == NULL) {
		return SV_EBADREQ;
	}
	err = svd_config_load_text("spec", text, &cfg, msg, sizeof(msg));
	if (err != SV_OK) {
		free(text);
		return req_err(c, err == SV_ENOMEM ? SV_EINTERNAL : SV_EBADREQ,
		    "%s", msg);
	}
	if (sv_core_group_named(c->s->core, cfg->groups[0].name) != NULL) {
		free(text);
		svd_config_free(cfg);
		return req_err(
		    c, SV_EBADREQ, "a group named \"%s\" exists", sp->name);
	}
	/* The text goes to the journal with the group (a successor
	 * recreates the group from it). */
	if ((err = gsh_add(c->s, &cfg->groups[0], cfg, text)) != SV_OK) {
		free(text);
		svd_config_free(cfg);
		return req_err(c, err == SV_EEXHAUSTED ? err : SV_EINTERNAL,
		    err == SV_EEXHAUSTED ? "at most %d groups"
		                         : "cannot create the group (%d)",
		    SV_CORE_MAX_GROUPS);
	}
	sup_drain_effects(c->s);
	group_info(c->s, sv_core_group_named(c->s->core, sp->name), gi);
	c->rep.body_case  = SUPERVISE__V1__ENVELOPE__BODY_GROUP_INFO;
	c->rep.group_info = gi;
	return SV_OK;
}

/* req_delete_group stops a group's workers and removes it once they are
 * reaped. The reply describes the group as it was taken (copied, since the
 * group may be gone by the time the reply is encoded). */
static sv_err
req_delete_group(req_ctx *c, Supervise__V1__GroupInfo *gi)
{
	const sv_cgroup *g = NULL;
	sv_err           err;

	if ((err = req_admin(c)) != SV_OK
	    || (err = req_group(c, c->req->delete_group->group, &g)) != SV_OK
	    || g == NULL) {
		return err != SV_OK ? err : SV_EINTERNAL;
	}
	group_info(c->s, g, gi);
	c->arena[0] = strdup(gi->name);
	c->arena[1] = strdup(gi->purpose);
	c->arena[2] = strdup(gi->failure_reason);
	if (c->arena[0] == NULL || c->arena[1] == NULL
	    || c->arena[2] == NULL) {
		return req_err(c, SV_EINTERNAL, "out of memory");
	}
	gi->name           = c->arena[0];
	gi->purpose        = c->arena[1];
	gi->failure_reason = c->arena[2];
	if ((err = sv_core_delete_group(c->s->core, g->id, sv_loop_now_ms()))
	    != SV_OK) {
		return req_core_err(c, err, g, 0);
	}
	sup_drain_effects(c->s);
	c->rep.body_case  = SUPERVISE__V1__ENVELOPE__BODY_GROUP_INFO;
	c->rep.group_info = gi;
	return SV_OK;
}

/* req_leases hands a lease, session or pool request to the lease shell
 * with the caller as the kernel tells it. False: not such a request. */
static bool
req_leases(req_ctx *c, sv_err *errp)
{
	svd_lease_caller lc
	    = {false, {0, 0, 0}, c->uid, false, c->emsg, c->emsglen};
	bool handled;

	lc.is_worker = req_find_worker(c, &lc.key);
	lc.admin     = req_admin(c) == SV_OK;
	c->emsg[0]   = '\0';
	handled      = svd_leases_handle(
	         c->s->leases, c->req, &lc, c->defer, &c->rep, c->arena, errp);
	if (handled) {
		sup_run_effects(c->s);
	}
	return handled;
}

/* ---- drain and rolling restart (core/drain.h, drain.h) --------------------
 */

/* Reply storage of the drain requests (in the arena: freed after
 * encoding). */
typedef struct req_drain_rep {
	Supervise__V1__DrainReport dr;
	Supervise__V1__Ack         ack;
} req_drain_rep;

/* req_drain_reply makes the reply the report of drain id. */
static sv_err
req_drain_reply(req_ctx *c, req_drain_rep *r, uint64_t id)
{
	const sv_drain *d = sv_core_drain_report(c->s->core, id);

	if (d == NULL) {
		return req_err(c, SV_ENOTFOUND,
		    "no drain %" PRIu64 " (the last %d are kept)", id,
		    SV_DRAINS_KEEP);
	}
	if (svd_drain_report(d, &r->dr, &c->arena[0], &c->arena[1]) != SV_OK) {
		return req_err(c, SV_EINTERNAL, "out of memory");
	}
	c->rep.body_case    = SUPERVISE__V1__ENVELOPE__BODY_DRAIN_REPORT;
	c->rep.drain_report = &r->dr;
	return SV_OK;
}

/* req_drain_workers answers DrainWorkers (admin). */
static sv_err
req_drain_workers(req_ctx *c, req_drain_rep *r)
{
	const Supervise__V1__DrainWorkers *dw = c->req->drain_workers;
	const sv_cgroup                   *g  = NULL;
	sv_drain_scope                     scope;
	uint64_t                           id = 0;
	sv_err                             err;

	if ((err = req_admin(c)) != SV_OK) {
		return err;
	}
	if (dw->deadline_ms > SVD_MAX_TIMEOUT_MS) {
		return req_err(c, SV_ETOOLARGE, "deadline_ms above %" PRIu64,
		    (uint64_t) SVD_MAX_TIMEOUT_MS);
	}
	if (dw->all) {
		if (dw->group[0] != '\0' || dw->has_ordinal) {
			return req_err(
			    c, SV_EBADREQ, "all excludes group and ordinal");
		}
		scope = SV_DRAIN_ALL;
	} else {
		if (dw->group[0] == '\0') {
			return req_err(c, SV_EBADREQ,
			    "name a group (and an ordinal), or set all");
		}
		if ((err = req_group(c, dw->group, &g)) != SV_OK) {
			return err;
		}
		scope = dw->has_ordinal ? SV_DRAIN_WORKER : SV_DRAIN_GROUP;
	}
	err = sv_core_drain(c->s->core, scope, g != NULL ? g->id : 0,
	    dw->ordinal, dw->deadline_ms, sv_loop_now_ms(), &id);
	if (err == SV_ENOTFOUND && g != NULL) {
		return req_err(c, err,
		    "%s has no live worker at ordinal %" PRIu32, g->name,
		    dw->ordinal);
	}
	if (err == SV_EEXHAUSTED) {
		return req_err(
		    c, err, "%d drains are unfinished", SV_DRAINS_KEEP);
	}
	if (err != SV_OK) {
		return g != NULL
		    ? req_core_err(c, err, g, dw->ordinal)
		    : req_err(c, err, "supervisor is shutting down");
	}
	sup_drain_effects(c->s);
	return req_drain_reply(c, r, id);
}

/* req_rolling_restart answers RollingRestart (admin). */
static sv_err
req_rolling_restart(req_ctx *c, req_drain_rep *r)
{
	const Supervise__V1__RollingRestart *rr = c->req->rolling_restart;
	const sv_cgroup                     *g  = NULL;
	uint64_t                             id = 0;
	sv_err                               err;

	if ((err = req_admin(c)) != SV_OK
	    || (err = req_group(c, rr->group, &g)) != SV_OK || g == NULL) {
		return err != SV_OK ? err : SV_EINTERNAL;
	}
	if (rr->ready_timeout_ms > SVD_MAX_TIMEOUT_MS) {
		return req_err(c, SV_ETOOLARGE,
		    "ready_timeout_ms above %" PRIu64,
		    (uint64_t) SVD_MAX_TIMEOUT_MS);
	}
	err = sv_core_roll(
	    c->s->core, g->id, rr->ready_timeout_ms, sv_loop_now_ms(), &id);
	if (err == SV_EBUSY && g->roll.active) {
		return req_err(
		    c, err, "%s: a rolling restart is in progress", g->name);
	}
	if (err != SV_OK) {
		return req_core_err(c, err, g, 0);
	}
	sup_run_effects(c->s);
	return req_drain_reply(c, r, id);
}

/* req_drain_worker answers DrainExtend and DrainAck: only the draining
 * worker process itself. */
static sv_err
req_drain_worker(req_ctx *c, req_drain_rep *r, bool ack)
{
	const sv_cgroup *g = NULL;
	const sv_seat   *s = NULL;
	const sv_proc   *p = NULL;
	sv_wkey          key;
	sv_err           err;

	if ((err = req_caller(c, &g, &s, &p)) != SV_OK || g == NULL
	    || s == NULL || p == NULL) {
		return err != SV_OK ? err : SV_EINTERNAL;
	}
	if (p->pid != (int64_t) c->pid) {
		return req_err(c, SV_EPERM,
		    "only the worker process itself (pid %" PRId64
		    ") may answer a drain for %s[%" PRIu32 "]",
		    p->pid, g->name, s->ordinal);
	}
	key = (sv_wkey) {g->id, s->ordinal, p->generation};
	err = ack
	    ? sv_core_drain_ack(c->s->core, key, c->req->drain_ack->served)
	    : sv_core_drain_extend(c->s->core, key,
	        c->req->drain_extend->more_ms, sv_loop_now_ms(), NULL);
	if (err != SV_OK) {
		return req_err(c, err, "%s[%" PRIu32 "] is not draining",
		    g->name, s->ordinal);
	}
	sup_drain_effects(c->s);
	c->rep.body_case = SUPERVISE__V1__ENVELOPE__BODY_ACK;
	c->rep.ack       = &r->ack;
	return SV_OK;
}

/* ---- sub-workers (subworkers.h, docs/subworkers.md) -----------------------
 */

/* Reply storage of the sub-worker requests (in the arena). */
typedef struct req_subw_rep {
	Supervise__V1__Identity               id;
	Supervise__V1__Frame                  fr;
	Supervise__V1__Frame                 *frames[1];
	Supervise__V1__RegisterSubWorkerReply reg;
	Supervise__V1__ReleaseSubWorkerReply  rel;
} req_subw_rep;

/* req_subworkers answers RegisterSubWorker and ReleaseSubWorker through
 * the sub-worker shell, with the caller as the kernel tells it; false for
 * any other body. A registration's identity is the caller's process's
 * (WhoAmI) made the sub-worker's. */
static bool
req_subworkers(req_ctx *c, sv_err *errp)
{
	svd_subw_caller sc = {0};
	sv_subw_grant   g  = {0};
	req_subw_rep   *r;

	if (!svd_subw_is_request(c->req)) {
		return false;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		*errp = req_err(c, SV_EINTERNAL, "out of memory");
		return true;
	}
	c->arena[1] = r;
	sc.pid      = c->peer_gone ? 0 : (int64_t) c->pid;
	sc.ppid     = sc.pid > 0 ? (int64_t) proc_ppid((long) sc.pid) : -1;
	sc.pidfd    = c->peer_pidfd;
	sc.is_worker
	    = sc.pid > 0 && sv_pidmap_get(&c->s->pids, (long) sc.pid, &sc.key);
	sc.emsg    = c->emsg;
	sc.emsglen = c->emsglen;
	if ((*errp = svd_subw_handle(c->s->subw, c->req, &sc, &g)) != SV_OK) {
		return true;
	}
	if (c->req->body_case
	    == SUPERVISE__V1__ENVELOPE__BODY_RELEASE_SUB_WORKER) {
		supervise__v1__release_sub_worker_reply__init(&r->rel);
		c->rep.body_case
		    = SUPERVISE__V1__ENVELOPE__BODY_RELEASE_SUB_WORKER_REPLY;
		c->rep.release_sub_worker_reply = &r->rel;
		return true;
	}
	supervise__v1__identity__init(&r->id);
	supervise__v1__frame__init(&r->fr);
	supervise__v1__register_sub_worker_reply__init(&r->reg);
	if ((*errp = req_whoami(c, &r->id, &r->fr, r->frames)) != SV_OK) {
		return true;
	}
	if (c->arena[0] == NULL
	    && svd_subw_fill(c->s->subw, &g, r->id.group, &r->id, &c->arena[0])
	        != SV_OK) {
		*errp = req_err(c, SV_EINTERNAL, "cannot make the identity");
		return true;
	}
	r->reg.identity = &r->id;
	r->reg.again    = g.again;
	c->rep.body_case
	    = SUPERVISE__V1__ENVELOPE__BODY_REGISTER_SUB_WORKER_REPLY;
	c->rep.register_sub_worker_reply = &r->reg;
	return true;
}

/* req_drain routes the drain requests; false for any other body. */
static bool
req_drain(req_ctx *c, sv_err *errp)
{
	req_drain_rep *r;

	switch (c->req->body_case) {
	case SUPERVISE__V1__ENVELOPE__BODY_DRAIN_WORKERS:
	case SUPERVISE__V1__ENVELOPE__BODY_GET_DRAIN:
	case SUPERVISE__V1__ENVELOPE__BODY_ROLLING_RESTART:
	case SUPERVISE__V1__ENVELOPE__BODY_DRAIN_EXTEND:
	case SUPERVISE__V1__ENVELOPE__BODY_DRAIN_ACK:
		break;
	default:
		return false;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		*errp = req_err(c, SV_EINTERNAL, "out of memory");
		return true;
	}
	c->arena[2] = r;
	supervise__v1__ack__init(&r->ack);
	switch (c->req->body_case) {
	case SUPERVISE__V1__ENVELOPE__BODY_DRAIN_WORKERS:
		*errp = req_drain_workers(c, r);
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_GET_DRAIN:
		*errp = req_admin(c);
		if (*errp == SV_OK) {
			*errp = req_drain_reply(c, r, c->req->get_drain->id);
		}
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_ROLLING_RESTART:
		*errp = req_rolling_restart(c, r);
		break;
	default:
		*errp = req_drain_worker(c, r,
		    c->req->body_case
		        == SUPERVISE__V1__ENVELOPE__BODY_DRAIN_ACK);
		break;
	}
	return true;
}

/* req_handle routes a decoded request to its handler and encodes the
 * answer. */
static sv_err
req_handle(req_ctx *c, nng_msg **replyp)
{
	Supervise__V1__HelloReply   hr = SUPERVISE__V1__HELLO_REPLY__INIT;
	Supervise__V1__Identity     id = SUPERVISE__V1__IDENTITY__INIT;
	Supervise__V1__Frame        fr = SUPERVISE__V1__FRAME__INIT;
	Supervise__V1__Frame       *frames[1];
	Supervise__V1__WorkerList   wl  = SUPERVISE__V1__WORKER_LIST__INIT;
	Supervise__V1__WorkerStatus ws  = SUPERVISE__V1__WORKER_STATUS__INIT;
	Supervise__V1__GroupChange  gc  = SUPERVISE__V1__GROUP_CHANGE__INIT;
	Supervise__V1__GroupList    gl  = SUPERVISE__V1__GROUP_LIST__INIT;
	Supervise__V1__GroupInfo    gi  = SUPERVISE__V1__GROUP_INFO__INIT;
	Supervise__V1__Ack          ack = SUPERVISE__V1__ACK__INIT;
	sv_err                      err;

	supervise__v1__envelope__init(&c->rep);
	c->rep.version    = SV_PROTOCOL_VERSION;
	c->rep.request_id = c->req->request_id;
	switch (c->req->body_case) {
	case SUPERVISE__V1__ENVELOPE__BODY_HELLO:
		err = req_hello(c, &hr);
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_WHOAMI:
		err = req_whoami(c, &id, &fr, frames);
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_LIST_WORKERS:
		err = req_list(c, &wl);
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_GET_STATUS:
		err = req_status(c, &ws);
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_SCALE_GROUP:
		err = req_resize(c, c->req->scale_group->group,
		    c->req->scale_group->count, &gc);
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_STOP_GROUP:
		err = req_resize(c, c->req->stop_group->group, 0, &gc);
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_RESTART_WORKER:
		err = req_restart(c, &ws);
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_RESET_GROUP:
		err = req_reset(c, &gi);
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_LIST_GROUPS:
		err = req_groups(c, &gl);
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_START_WORKER:
		err = req_start_worker(c, &ws);
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_TERMINATE_WORKER:
		err = req_terminate_worker(c, &ws);
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_READY:
		err = req_ready_heartbeat(c, true, &ack);
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_CREATE_GROUP:
		err = req_create_group(c, &gi);
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_DELETE_GROUP:
		err = req_delete_group(c, &gi);
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_HEARTBEAT:
		err = req_ready_heartbeat(c, false, &ack);
		break;
	default:
		if (req_drain(c, &err) || req_subworkers(c, &err)) {
			break;
		}
		if (req_leases(c, &err)) {
			if (c->defer != NULL && c->defer->taken) {
				/* Answered later by the lease shell. */
				supervise__v1__envelope__init(&c->rep);
				free(c->arena[0]);
				free(c->arena[1]);
				free(c->arena[2]);
				*replyp = NULL;
				return SV_OK;
			}
			break;
		}
		err = req_err(c, SV_EBADREQ,
		    "message kind %d is not a request",
		    (int) c->req->body_case);
		break;
	}
	if (err == SV_OK) {
		err = svw_encode(&c->rep, SVW_MAX_REPLY, replyp);
		if (err == SV_ETOOLARGE) {
			req_err(c, err,
			    "reply exceeds %u bytes; ask for pages "
			    "(ListWorkers.page_size) or one group",
			    SVW_MAX_REPLY);
		} else if (err != SV_OK) {
			req_err(c, err, "cannot encode reply");
		}
	}
	/* The body pointed into this frame: forget it. */
	supervise__v1__envelope__init(&c->rep);
	free(c->arena[0]);
	free(c->arena[1]);
	free(c->arena[2]);
	return err;
}

sv_err
svd_sup_dispatch(svd_sup *s, const void *buf, size_t len, uint64_t peer_pid,
    uint64_t peer_uid, nng_msg **replyp)
{
	return sup_dispatch(
	    s, buf, len, peer_pid, peer_uid, -1, NULL, NULL, replyp);
}

/* sup_dispatch is svd_sup_dispatch with the connecting process's pidfd
 * (or -1: not known, trust peer_pid): a process that has exited is no
 * longer the caller, whatever now runs under its pid. */
static sv_err
sup_dispatch(svd_sup *s, const void *buf, size_t len, uint64_t peer_pid,
    uint64_t peer_uid, int peer_pidfd, svd_peer_memo *memo,
    svd_lease_defer *defer, nng_msg **replyp)
{
	svw_env *req = NULL;
	uint64_t rid;
	char     emsg[SVW_MAX_TEXT];
	sv_err   err;
	req_ctx  c
	    = {s, NULL, peer_pid, peer_uid, SUPERVISE__V1__ENVELOPE__INIT,
	        emsg, sizeof(emsg), {NULL, NULL, NULL}, "", false};

	emsg[0]      = '\0';
	c.defer      = defer;
	c.peer_pidfd = peer_pidfd;
	c.memo       = memo;
	/* Asked right before the answer, on the thread that answers: a
	 * pidfd that is readable means the process has exited. */
	if (peer_pidfd >= 0) {
		struct pollfd pfd = {peer_pidfd, POLLIN, 0};
		c.peer_gone       = poll(&pfd, 1, 0) > 0;
	}
	err = svw_decode(buf, len, SVW_MAX_REQUEST, &req, &rid);
	switch (err) {
	case SV_OK:
		break;
	case SV_ETOOLARGE:
		snprintf(emsg, sizeof(emsg), "request of %zu bytes exceeds %u",
		    len, SVW_MAX_REQUEST);
		break;
	case SV_EVERSION:
		snprintf(emsg, sizeof(emsg), "this server speaks version %d",
		    SV_PROTOCOL_VERSION);
		break;
	case SV_EUNKNOWNMSG:
		snprintf(emsg, sizeof(emsg),
		    "message kind not known to this server (features: see "
		    "Hello)");
		break;
	default:
		snprintf(emsg, sizeof(emsg),
		    "not a supervise.v1 Envelope (or version missing)");
		break;
	}
	if (err == SV_OK) {
		c.req = req;
		err   = req_handle(&c, replyp);
		svw_free(req);
	}
	if (err == SV_OK) {
		return SV_OK;
	}
	return svw_encode_error(rid, err, emsg, replyp);
}
