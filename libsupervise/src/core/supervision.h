/*
 * supervision.h — the supervision state machine (pure decision core).
 *
 * sv_core holds every group, every seat and every process record of a
 * supervisor and decides everything: which ordinal, whether and when to
 * restart, which siblings stop, when to give up, what to signal. It performs
 * no I/O, reads no clock (every entry takes now_ms) and allocates only its
 * own tables. The daemon (the effect shell) feeds it events (a process
 * spawned or exited, a timer fired, a worker reported ready, an operator
 * asked for something) and carries out what it returns:
 *
 *   - effects, popped one by one with sv_core_pop_effect: signal a process,
 *     arm or cancel a timer, emit an event;
 *   - spawns, pulled one by one with sv_core_next_spawn, so that a large
 *     scale-up can be spread over several loop iterations and an ordered
 *     start can wait for readiness.
 *
 * A seat's state is stored (sv_seat_phase) and changed only through one
 * table, seat state x event -> handler, next state, doc (core/seat_table.c;
 * docs/supervision.md shows it and a test checks the two agree); this
 * header names the pieces.
 *
 * Seats and processes. A group of max_count seats owns ordinals
 * 0..max_count-1 (core/ordinal.h decides which are held). A seat is the
 * durable place of one ordinal: desired state, generation, failure history.
 * A process record is one OS process on that seat. A seat holds at most two:
 * `cur`, the current one, and `old`, an older one that is still alive after
 * the seat moved on (a stop that was abandoned, or the old generation of
 * a rolling restart, serving until its successor is ready and then
 * drained). That is the only declared overlap. `cur` is in the seat;
 * `old`, rare, is made on demand (core/oldrecs.h), and the entry points
 * that may move a process there reserve its record before they change
 * anything, as they reserve their effects.
 *
 * Drain (docs/supervision.md, "Drain and rolling restart"): a drained
 * process is told (an SV_EV_DRAINING event the shell publishes as a notice
 * on the worker's topic), sent its group's drain signal unless that is
 * none, SIGKILLed at its deadline, and never restarted; its ordinal is no
 * longer held. Reports are kept by core/drain.h.
 *
 * Out of memory. Every entry point that changes state reserves, before its
 * first change, room for every effect it can queue (and any other memory
 * it needs); when it cannot, it returns SV_ENOMEM having changed nothing
 * and queued nothing, and the shell calls it again later with the same
 * arguments. No effect is ever dropped (core/fxring.h). Allocations go
 * through core/alloc.h, where a test injects failures.
 *
 * Timers are keyed and guarded: every arm carries a guard number; a timer
 * that fires with a stale guard is ignored, so a stop or shutdown that
 * cancels a scheduled restart can never be undone by a late timer.
 */
#ifndef SV_CORE_SUPERVISION_H
#define SV_CORE_SUPERVISION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/backoff.h"
#include "core/drain.h"
#include "core/intensity.h"
#include "core/ordinal.h"
#include "core/pidmap.h"
#include "core/strategy.h"
#include "supervise/supervise.h"

/* A spawn that failed (bad argv, ...) is never retried sooner. */
#define SV_CORE_SPAWN_RETRY_MS 1000
/* Bound of the number of groups, including those created at runtime. */
#define SV_CORE_MAX_GROUPS 256
/* Length of a failure reason, terminator included. */
#define SV_CORE_REASON_LEN 160
/* Drain deadline and roll ready timeout when a policy says 0. */
#define SV_CORE_DRAIN_TIMEOUT_MS 30000
#define SV_CORE_ROLL_READY_MS    30000
/* A rolling restart's budgets when the request names none (Kubernetes'
 * maxSurge and maxUnavailable defaults for one process per seat). */
#define SV_CORE_ROLL_MAX_SURGE       1
#define SV_CORE_ROLL_MAX_UNAVAILABLE 0

/* When a worker that exited is restarted (OTP's restart types). */
typedef enum sv_restart_type {
	SV_RESTART_PERMANENT = 0, /* always */
	SV_RESTART_TRANSIENT = 1, /* after an abnormal exit only */
	SV_RESTART_TEMPORARY = 2, /* never; the ordinal is released */
} sv_restart_type;

/* What to do with a worker that does not stop within its stop timeout. */
typedef enum sv_on_unresponsive {
	SV_UNRESPONSIVE_ESCALATE = 0, /* SIGKILL its process group */
	SV_UNRESPONSIVE_ABANDON  = 1, /* stop waiting; the seat moves on */
} sv_on_unresponsive;

/* What to do with a worker that is not ready within its start timeout. */
typedef enum sv_on_start_timeout {
	SV_START_TIMEOUT_KILL    = 0, /* stop it; counts as a failure */
	SV_START_TIMEOUT_ABANDON = 1, /* stop waiting for its readiness */
} sv_on_start_timeout;

/* A group's supervision settings (docs/config.md has the defaults). */
typedef struct sv_group_policy {
	sv_restart_type    restart;
	sv_backoff_policy  backoff;
	uint32_t           max_restarts; /* 0: unlimited */
	uint64_t           max_window_ms; /* the intensity window */
	int                stop_signal;
	uint64_t           stop_timeout_ms; /* 0: SIGKILL at once */
	sv_on_unresponsive on_unresponsive;
	bool               need_ready; /* the worker reports readiness */
	bool               sequential; /* ordinal k+1 starts once k is ready */
	uint64_t           start_timeout_ms; /* 0: wait forever */
	sv_on_start_timeout on_start_timeout;
	uint64_t            watchdog_ms; /* 0: no watchdog */
	uint64_t            drain_timeout_ms; /* 0: SV_CORE_DRAIN_TIMEOUT_MS */
	uint64_t drain_extend_max_ms; /* DrainExtend: past the deadline */
	int      drain_signal; /* sent with the notice; 0: none; <0: the
	                        * stop signal */
} sv_group_policy;

/* Why the supervisor stopped a process (SV_WHY_NONE: it exited alone). */
typedef enum sv_why {
	SV_WHY_NONE          = 0,
	SV_WHY_RESTART       = 1, /* operator restart */
	SV_WHY_STRATEGY      = 2, /* a sibling failed (one_for_all, ...) */
	SV_WHY_UNWANTED      = 3, /* scale-down, group stop, terminate */
	SV_WHY_SHUTDOWN      = 4,
	SV_WHY_FAILED        = 5, /* the group exceeded its intensity */
	SV_WHY_WATCHDOG      = 6, /* missed heartbeat */
	SV_WHY_START_TIMEOUT = 7, /* not ready in time */
	SV_WHY_COMPLETED     = 8, /* exited and is not to be restarted */
	SV_WHY_DELETED       = 9, /* the group is being deleted */
	SV_WHY_DRAINED       = 10, /* drained: finish, exit, no restart */
	SV_WHY_ROLL          = 11, /* rolling restart: old generation drained,
	                            * or a new one that did not get ready */
} sv_why;

/* State of a process record. */
typedef enum sv_pstate {
	SV_PROC_NONE      = 0,
	SV_PROC_SPAWNING  = 1, /* handed to the shell, no pid yet */
	SV_PROC_STARTING  = 2, /* alive, readiness awaited */
	SV_PROC_RUNNING   = 3, /* alive (and ready, if readiness is used) */
	SV_PROC_STOPPING  = 4, /* signalled, not reaped yet */
	SV_PROC_ABANDONED = 5, /* did not stop; the seat moved on */
} sv_pstate;

/* How a process ended (from waitid). */
typedef struct sv_exit {
	int  code;
	int  signo;
	bool exited; /* true: exit code; false: killed by signo */
	bool core;
} sv_exit;

/* (Fields of sv_proc and sv_seat are ordered so that the compiler adds
 * no padding, and their enums are stored in a byte: a seat is in an array
 * of every seat in use.) */
typedef struct sv_proc {
	uint8_t  state; /* an sv_pstate */
	uint8_t  why; /* an sv_why: why it is being stopped */
	bool     ready;
	bool     awaited; /* readiness still awaited (sequential start) */
	bool     killed; /* SIGKILL sent */
	bool     draining; /* told to drain (state STOPPING) */
	uint64_t generation;
	int64_t  pid;
	uint64_t started_ms;
	uint64_t guard; /* guard of its timer (0: none armed) */
	uint64_t due_ms; /* when that timer fires */
	uint64_t drain_id; /* its report */
	uint64_t drain_cap_ms; /* latest deadline DrainExtend may set */
} sv_proc;

/* Seat as shown to clients (derived from the seat and its processes). */
typedef enum sv_seat_state {
	SV_SEAT_EMPTY    = 0, /* ordinal not held */
	SV_SEAT_STARTING = 1, /* waiting to spawn, spawning or not ready */
	SV_SEAT_RUNNING  = 2,
	SV_SEAT_STOPPING = 3,
	SV_SEAT_BACKOFF  = 4, /* restart timer armed */
	SV_SEAT_WAITING  = 5, /* part of a strategy restart in progress */
	SV_SEAT_FAILED   = 6, /* the group failed; waits for a reset */
	SV_SEAT_IDLE     = 7, /* held, but nothing will start it */
	SV_SEAT_DRAINING = 8, /* its process was told to drain */
} sv_seat_state;

/* Stored state of a seat (the rows of the seat table, core/seat_table.c;
 * docs/supervision.md, "Seat transitions"): where the seat is in its
 * start/restart cycle. A seat is LIVE while `cur` holds a process (whose
 * own sv_pstate says how far it got). Orthogonal facts stay flags: wanted,
 * used, in_plan and rolling on the seat; ready, awaited, killed and
 * draining on a process. */
typedef enum sv_seat_phase {
	SV_SP_REST    = 0, /* no process, nothing scheduled */
	SV_SP_PENDING = 1, /* waits for sv_core_next_spawn */
	SV_SP_BACKOFF = 2, /* restart timer armed */
	SV_SP_LIVE    = 3, /* `cur` holds a process */
	SV_SP_COUNT   = 4,
} sv_seat_phase;

typedef struct sv_seat {
	uint32_t ordinal;
	uint32_t fast_failures;
	uint8_t  state; /* an sv_seat_phase, changed only by
	                 * svs_seat_fire */
	bool     wanted; /* the ordinal is held: a worker should run */
	bool     used; /* tok's generation has been spawned */
	bool     in_plan; /* part of the strategy restart in progress */
	bool     rolling; /* roll overlap: cur new, old still serving */
	bool     has_exit;
	uint32_t old; /* its second process, a record of the core's pool
	               * (core/oldrecs.h): its number, 0 while it has none
	               * (read it with svs_old) */
	sv_exit     last_exit;
	uint64_t    due_ms; /* end of backoff */
	uint64_t    guard; /* guard of the seat timer */
	sv_ordtoken tok;
	sv_proc     cur;
	uint64_t    restarts;
	uint64_t    drain_on_spawn; /* drain id for the process on its way */
	uint64_t    drain_on_spawn_ms; /* and its deadline (relative) */
} sv_seat;

/* A group. Everything here is read-only outside supervision.c. */
typedef struct sv_cgroup {
	uint32_t        id; /* never reused within one sv_core */
	char           *name; /* owned */
	sv_group_policy pol;
	uint32_t        max_count;
	sv_ordinals     ords;
	sv_seat        *seats; /* [nseats]; ordinals past nseats have a
	                        * blank seat (never live, not held) */
	uint32_t nseats; /* <= max_count: grows with the ordinals
	                  * that become live, never shrinks */
	sv_intensity intensity;
	bool         failed;
	char         reason[SV_CORE_REASON_LEN];
	bool         deleting;
	uint32_t     npending;
	uint32_t     cursor; /* no pending seat below this ordinal */
	uint32_t     live; /* processes with a state other than NONE */
	uint32_t     unready; /* processes still awaited */
	struct {
		bool     active;
		uint64_t drain_id; /* the roll's report */
		uint32_t next; /* no ordinal below this is left to do */
		uint64_t ready_timeout_ms;
		uint32_t max_surge; /* live processes <= N + this */
		uint32_t max_unavailable; /* held seats not ready <= this */
	} roll;
} sv_cgroup;

/* Kinds of timers the shell keeps for the core. */
typedef enum sv_timer_kind {
	SV_TIMER_SEAT = 1, /* end of backoff: (group, ordinal) */
	SV_TIMER_PROC = 2, /* start, watchdog or stop timeout: a process */
	SV_TIMER_PLAN = 3, /* delay of a strategy restart */
} sv_timer_kind;

typedef enum sv_event_kind {
	SV_EV_STARTED           = 1,
	SV_EV_READY             = 2,
	SV_EV_EXITED            = 3,
	SV_EV_RESTART_SCHEDULED = 4,
	SV_EV_UNRESPONSIVE      = 5,
	SV_EV_ESCALATED         = 6,
	SV_EV_STOPPED           = 7, /* the seat came to rest, no restart */
	SV_EV_SPAWN_FAILED      = 8,
	SV_EV_GROUP_FAILED      = 9,
	SV_EV_GROUP_RESET       = 10,
	SV_EV_GROUP_SCALED      = 11,
	SV_EV_GROUP_CREATED     = 12,
	SV_EV_GROUP_DELETED     = 13,
	SV_EV_STOPPING          = 14, /* the supervisor signalled a worker */
	SV_EV_ADOPTED           = 15, /* taken over from a predecessor */
	SV_EV_DRAINING          = 16, /* drain notice: drain_id, delay_ms */
	SV_EV_ROLL_DONE         = 17, /* a rolling restart ended (group) */
} sv_event_kind;

/* Phase of an unresponsive worker. */
typedef enum sv_phase {
	SV_PHASE_START    = 1,
	SV_PHASE_WATCHDOG = 2,
	SV_PHASE_STOP     = 3,
} sv_phase;

typedef struct sv_event {
	sv_event_kind kind;
	uint32_t      group_id;
	uint32_t      ordinal; /* worker events */
	uint64_t      generation;
	int64_t       pid;
	sv_exit       exit; /* EXITED */
	uint64_t      uptime_ms; /* EXITED */
	uint64_t      delay_ms; /* RESTART_SCHEDULED */
	uint32_t      attempt; /* RESTART_SCHEDULED: consecutive failures */
	sv_phase      phase; /* UNRESPONSIVE */
	bool          abandon; /* UNRESPONSIVE: the action taken */
	sv_why        why; /* EXITED, STOPPED, STOPPING */
	int           error; /* SPAWN_FAILED: errno */
	uint32_t      count; /* GROUP_SCALED: new count */
	uint32_t      previous; /* GROUP_SCALED: old count */
	const char   *reason; /* GROUP_FAILED: points into the group;
	                       * ROLL_DONE: why it stopped, NULL if
	                       * complete (valid until the next call) */
	uint64_t drain_id; /* DRAINING, ROLL_DONE */
	uint64_t deadline_ms; /* STOPPING: when SIGKILL follows (absolute,
	                       * the now_ms clock); 0: SIGKILL was sent */
} sv_event;

typedef enum sv_fx_kind {
	SV_FX_SIGNAL = 1, /* send signo to pid (its process group if pgroup) */
	SV_FX_TIMER  = 2, /* arm (or re-arm) a timer at due_ms with guard */
	SV_FX_CANCEL = 3, /* cancel a timer */
	SV_FX_EVENT  = 4, /* publish ev */
} sv_fx_kind;

typedef struct sv_fx {
	sv_fx_kind    kind;
	sv_timer_kind timer;
	sv_wkey       key; /* the process, or the seat (generation unused) */
	int64_t       pid;
	int           signo;
	bool          pgroup;
	uint64_t      due_ms;
	uint64_t      guard;
	sv_event      ev;
} sv_fx;

/* What the shell must spawn: the process (group, ordinal, generation). */
typedef sv_wkey sv_spawn_ticket;

typedef struct sv_core sv_core;

/* A process a predecessor supervisor left running, verified by the shell
 * (same pid, same kernel start time) and handed to sv_core_restore. */
typedef struct sv_adoptee {
	uint64_t generation;
	int64_t  pid;
	bool     ready; /* it had reported ready */
	bool     stopping; /* the predecessor was stopping it */
	uint64_t stop_deadline_ms; /* stopping: when the predecessor meant
	                            * to SIGKILL it (absolute, the now_ms
	                            * clock of the same boot); 0: unknown */
} sv_adoptee;

/*
 * sv_core_create makes an empty supervisor core with the given strategy.
 * On SV_OK *corep belongs to the caller: free it with sv_core_destroy.
 * Errors: SV_ENOMEM.
 */
sv_err sv_core_create(sv_strategy strategy, sv_core **corep);

/* sv_core_destroy frees the core and its groups. NULL is ignored. */
void sv_core_destroy(sv_core *c);

/*
 * sv_core_add_group adds a group named name (copied) at the end of the start
 * order, wanting count workers (ordinals 0..count-1), at most max_count.
 * Its workers start through sv_core_next_spawn. Emits GROUP_CREATED.
 * On SV_OK *idp is the new group's id.
 * Errors: SV_EINVAL (count > max_count, max_count 0 or above
 * SV_ORDINALS_MAX, bad intensity), SV_EBUSY (shutting down), SV_EEXHAUSTED
 * (SV_CORE_MAX_GROUPS groups), SV_ENOMEM.
 */
sv_err sv_core_add_group(sv_core *c, const char *name,
    const sv_group_policy *pol, uint32_t count, uint32_t max_count,
    uint32_t *idp);

/*
 * sv_core_delete_group stops every worker of the group and removes it once
 * the last has been reaped (GROUP_DELETED; at once if none is alive).
 * Errors: SV_ENOTFOUND, SV_ENOMEM.
 */
sv_err sv_core_delete_group(sv_core *c, uint32_t id, uint64_t now_ms);

/* sv_core_group finds a group by id (NULL if none). */
const sv_cgroup *sv_core_group(const sv_core *c, uint32_t id);

/* sv_core_group_named finds a group by name (NULL if none). */
const sv_cgroup *sv_core_group_named(const sv_core *c, const char *name);

/* sv_core_ngroups and sv_core_group_at walk the groups in start order. */
size_t           sv_core_ngroups(const sv_core *c);
const sv_cgroup *sv_core_group_at(const sv_core *c, size_t i);

/* sv_core_group_count returns the number of held ordinals (the target). */
uint32_t sv_core_group_count(const sv_cgroup *g);

/* sv_core_seat_state derives what a client is shown for a seat. */
sv_seat_state sv_core_seat_state(const sv_cgroup *g, const sv_seat *s);

/* sv_core_seat_old returns seat s's second process (sv_seat.old), or a
 * blank record (state SV_PROC_NONE) when it has none; never NULL. Good
 * until the next call into c. */
const sv_proc *sv_core_seat_old(const sv_core *c, const sv_seat *s);

/* One process of a seat as shown to clients (core/seat_view.c). Times are
 * absolute (the core's clock); the shell subtracts its `now`. */
typedef struct sv_proc_view {
	bool          live; /* a process is held (state other than NONE) */
	bool          listed; /* shown as a row of its own */
	sv_seat_state state; /* as shown */
	uint64_t      generation;
	int64_t       pid; /* 0 when none (not live, or not spawned yet) */
	uint64_t      started_ms; /* uptime input; meaningful when pid > 0 */
	bool          ready;
	bool          draining;
	uint64_t      drain_due_ms; /* drain deadline, when draining */
} sv_proc_view;

/* A seat as the daemon shows it to clients (ListWorkers, GetStatus,
 * ListGroups, WhoAmI, the journal of an adoption), filled by
 * sv_core_seat_view: a plain copy, valid until the core is next called. */
typedef struct sv_seat_view {
	uint32_t      ordinal;
	sv_seat_state state; /* sv_core_seat_state */
	bool          wanted; /* the ordinal is held */
	uint64_t      generation; /* current's, or the next one when none */
	uint64_t      restart_due_ms; /* end of backoff, when BACKOFF */
	uint64_t      restarts;
	uint32_t      fast_failures;
	bool          has_exit; /* last_exit_code / last_signal are set */
	int           last_exit_code; /* -1: none, or killed by a signal */
	int           last_signal; /* 0: none, or exited */
	sv_proc_view  current; /* the current process (state as the seat's) */
	sv_proc_view  previous; /* the old generation a roll or drain keeps */
} sv_seat_view;

/* sv_seat_view_of fills *out for seat `ordinal` of group g of core c
 * (which must be below g->max_count). */
void sv_seat_view_of(
    const sv_core *c, const sv_cgroup *g, uint32_t ordinal, sv_seat_view *out);

/* sv_core_seat_view fills *out for seat `ordinal` of group `group_id`.
 * Errors: SV_ENOTFOUND (no such group, or ordinal >= max_count). */
sv_err sv_core_seat_view(
    const sv_core *c, uint32_t group_id, uint32_t ordinal, sv_seat_view *out);

/* sv_seat_view_proc returns the view of the seat's process of generation
 * gen: current if it is live and holds gen, else previous. */
const sv_proc_view *sv_seat_view_proc(const sv_seat_view *v, uint64_t gen);

/* sv_core_live returns the number of processes not yet reaped. */
size_t sv_core_live(const sv_core *c);

/* sv_core_shutting_down tells whether sv_core_shutdown was called. */
bool sv_core_shutting_down(const sv_core *c);

/* sv_core_done tells whether a shutdown has completed (nothing alive). */
bool sv_core_done(const sv_core *c);

/*
 * sv_core_pop_effect moves the oldest pending effect into *fx and returns
 * true, or returns false when there is none.
 */
bool sv_core_pop_effect(sv_core *c, sv_fx *fx);

/*
 * sv_core_next_spawn picks the next seat to start, in start order, marks its
 * process SPAWNING and returns true with the ticket in *t; false when
 * nothing is to be spawned now. The shell must answer each ticket with
 * sv_core_spawned or sv_core_spawn_failed before asking again.
 */
bool sv_core_next_spawn(sv_core *c, uint64_t now_ms, sv_spawn_ticket *t);

/* sv_core_spawned: the ticket's process runs as pid.
 * Errors: SV_ENOMEM (nothing changed: call again). */
sv_err sv_core_spawned(
    sv_core *c, sv_spawn_ticket t, int64_t pid, uint64_t now_ms);

/* sv_core_spawn_failed: the ticket could not be spawned (errno error).
 * Errors: SV_ENOMEM (nothing changed: call again). */
sv_err sv_core_spawn_failed(
    sv_core *c, sv_spawn_ticket t, int error, uint64_t now_ms);

/*
 * sv_core_exited: the process key was reaped with status x. Events for
 * unknown or stale keys are ignored.
 * Errors: SV_ENOMEM (nothing changed: call again).
 */
sv_err sv_core_exited(sv_core *c, sv_wkey key, sv_exit x, uint64_t now_ms);

/*
 * sv_core_ready: the process key reported readiness.
 * Errors: SV_ENOTFOUND (not a live process of this core), SV_ENOMEM.
 */
sv_err sv_core_ready(sv_core *c, sv_wkey key, uint64_t now_ms);

/*
 * sv_core_heartbeat: the process key is alive (watchdog).
 * Errors: SV_ENOTFOUND (not a live process of this core), SV_ENOMEM.
 */
sv_err sv_core_heartbeat(sv_core *c, sv_wkey key, uint64_t now_ms);

/*
 * sv_core_extend: the process key asks for more time (systemd's
 * EXTEND_TIMEOUT_USEC): a start or stop timeout that is armed fires no
 * sooner than ms from now. Anything else is left as it is.
 * Errors: SV_ENOTFOUND (not a live process of this core), SV_ENOMEM.
 */
sv_err sv_core_extend(sv_core *c, sv_wkey key, uint64_t ms, uint64_t now_ms);

/*
 * sv_core_timer: a timer armed by an SV_FX_TIMER effect fired. key and
 * guard are those of the effect. Stale timers are ignored.
 * Errors: SV_ENOMEM (nothing changed: fire it again).
 */
sv_err sv_core_timer(sv_core *c, sv_timer_kind kind, sv_wkey key,
    uint64_t guard, uint64_t now_ms);

/*
 * sv_core_scale sets the group's number of workers to count: ordinals
 * 0..count-1 are held, the workers above are stopped. *previousp (may be
 * NULL) receives the old count.
 * Errors: SV_ENOTFOUND, SV_EEXHAUSTED (count > max_count), SV_EBUSY
 * (shutting down or group being deleted), SV_ENOMEM.
 */
sv_err sv_core_scale(sv_core *c, uint32_t id, uint32_t count,
    uint32_t *previousp, uint64_t now_ms);

/*
 * sv_core_restart restarts one worker: a live one is stopped and starts
 * again at once when reaped; one waiting in backoff starts now. Its failure
 * history is cleared. With has_expected, the seat's generation must equal
 * expected_generation (compare-and-swap, so a retried request restarts at
 * most once).
 * Errors: SV_ENOTFOUND (no such group or held ordinal), SV_ECONFLICT
 * (generation mismatch), SV_EBUSY (the group failed, or shutting down),
 * SV_ENOMEM.
 */
sv_err sv_core_restart(sv_core *c, uint32_t id, uint32_t ordinal,
    bool has_expected, uint64_t expected_generation, uint64_t now_ms);

/*
 * sv_core_reset clears a group's failed state, its restart intensity and
 * every seat's failure history, and starts its held seats again.
 * Errors: SV_ENOTFOUND, SV_EBUSY (shutting down or being deleted),
 * SV_ENOMEM.
 */
sv_err sv_core_reset(sv_core *c, uint32_t id, uint64_t now_ms);

/*
 * sv_core_start_one holds one more ordinal (the lowest free one) and starts
 * a worker on it. *ordinalp receives the ordinal.
 * Errors: SV_ENOTFOUND, SV_EEXHAUSTED (max_count reached), SV_EBUSY,
 * SV_ENOMEM.
 */
sv_err sv_core_start_one(
    sv_core *c, uint32_t id, uint32_t *ordinalp, uint64_t now_ms);

/*
 * sv_core_terminate_one stops the worker on ordinal and releases the
 * ordinal; the group's count goes down by one.
 * Errors: SV_ENOTFOUND, SV_EBUSY, SV_ENOMEM.
 */
sv_err sv_core_terminate_one(
    sv_core *c, uint32_t id, uint32_t ordinal, uint64_t now_ms);

/*
 * sv_core_restore takes over one seat of a predecessor's state; call it for
 * a group right after sv_core_add_group, before any spawn.
 *   next_generation: every later process on the seat gets at least this
 *     generation (0: no floor), so generations continue across supervisor
 *     restarts.
 *   a: NULL, or the process that still runs on the seat. It becomes the
 *     seat's current process instead of a spawn and is announced with
 *     SV_EV_ADOPTED: running (ready as recorded; a group that awaits
 *     readiness waits again, under a fresh start timeout, for one that had
 *     not reported), or stopped again (stop signal, stop timer) when the
 *     predecessor was stopping it (it restarts on exit, as after an operator
 *     restart) or its ordinal is beyond the group's count (it is not
 *     replaced). A process the predecessor was stopping keeps its SIGKILL
 *     deadline (stop_deadline_ms) when that comes before a fresh stop
 *     timeout would end: restarting the supervisor does not put it off.
 * Errors: SV_ENOTFOUND (no group id), SV_EINVAL (ordinal >= max_count, or
 * generation below one the seat has used), SV_EBUSY (the seat already has
 * a process, or the core is shutting down), SV_ENOMEM.
 */
sv_err sv_core_restore(sv_core *c, uint32_t id, uint32_t ordinal,
    uint64_t next_generation, const sv_adoptee *a, uint64_t now_ms);

/*
 * sv_core_restore_release gives up a seat the predecessor had released (a
 * drained, terminated or completed ordinal: not wanted, not restarted).
 * Call it after sizes are restored and before sv_core_restore of that seat
 * and before any spawn: its planned start is cancelled and its ordinal
 * freed (the group holds one ordinal fewer; a later scale-up or start may
 * take it again). A process later adopted on it is stopped and not
 * replaced. Errors: SV_ENOTFOUND (no such group), SV_EINVAL (ordinal out of
 * range), SV_EBUSY (the seat already has a process), SV_ENOMEM.
 */
sv_err sv_core_restore_release(sv_core *c, uint32_t id, uint32_t ordinal);

/* What a drain covers. */
typedef enum sv_drain_scope {
	SV_DRAIN_WORKER = 0, /* (group id, ordinal) */
	SV_DRAIN_GROUP  = 1, /* every worker of group id */
	SV_DRAIN_ALL    = 2, /* every worker of every group */
} sv_drain_scope;

/*
 * sv_core_drain drains the workers in scope: each live process gets an
 * SV_EV_DRAINING notice and its group's drain signal (none if the policy
 * says 0), is no longer restarted, and is SIGKILLed deadline_ms after the
 * notice (0: its group's drain_timeout_ms). Their ordinals are released
 * (the group's count goes down, as with sv_core_terminate_one); held seats
 * without a process come to rest. A process on its way (SPAWNING) is
 * drained once spawned. A process already draining stays in its first
 * drain. On SV_OK *drain_idp names the report (sv_core_drain_report).
 * Errors: SV_ENOTFOUND (no group id; SV_DRAIN_WORKER: no live or starting
 * process on ordinal), SV_EBUSY (shutting down, group being deleted),
 * SV_EEXHAUSTED (too many unfinished reports), SV_ENOMEM.
 */
sv_err sv_core_drain(sv_core *c, sv_drain_scope scope, uint32_t id,
    uint32_t ordinal, uint64_t deadline_ms, uint64_t now_ms,
    uint64_t *drain_idp);

/*
 * sv_core_drain_extend: the draining process key asks for more time: its
 * deadline moves to now + more_ms, never earlier than it was and never past
 * its cap (first deadline + the group's drain_extend_max_ms). *deadlinep
 * (may be NULL) receives the deadline in effect (absolute).
 * Errors: SV_ENOTFOUND (not a live process of this core, or not draining),
 * SV_ENOMEM.
 */
sv_err sv_core_drain_extend(sv_core *c, sv_wkey key, uint64_t more_ms,
    uint64_t now_ms, uint64_t *deadlinep);

/*
 * sv_core_drain_ack: the draining process key has drained (served work
 * items, for the report); it is expected to exit next.
 * Errors: SV_ENOTFOUND (not a live process of this core, or not draining).
 */
sv_err sv_core_drain_ack(sv_core *c, sv_wkey key, uint64_t served);

/*
 * sv_core_roll starts a rolling restart of group id: for each ordinal in
 * order whose worker runs, the next generation starts beside the old one
 * (the seat's `old` record); once it is ready (readiness, or its spawn for
 * a group without readiness) the old one is drained (SV_WHY_ROLL) and the
 * next ordinal follows once the budgets allow (max_surge 1, max_unavailable
 * 0: the next ordinal waits until the drained process is reaped; see
 * sv_core_roll_budget). A new generation that is not ready within
 * ready_timeout_ms (0: the group's start_timeout_ms, else
 * SV_CORE_ROLL_READY_MS), exits or cannot be spawned stops the roll: it is
 * stopped and the old one stays the seat's process. SV_EV_ROLL_DONE ends
 * every roll. On SV_OK *drain_idp names its report.
 * Errors: SV_ENOTFOUND, SV_EBUSY (a roll in progress, the group failed,
 * shutting down, being deleted), SV_EEXHAUSTED, SV_ENOMEM.
 */
sv_err sv_core_roll(sv_core *c, uint32_t id, uint64_t ready_timeout_ms,
    uint64_t now_ms, uint64_t *drain_idp);

/*
 * sv_core_roll_budget is sv_core_roll with its budgets (Kubernetes' names
 * and meaning; sv_core_roll uses SV_CORE_ROLL_MAX_SURGE and
 * SV_CORE_ROLL_MAX_UNAVAILABLE): the roll starts a seat's next generation
 * only while the group's live processes (draining ones and those on their
 * way included; N: its held seats) stay within N + max_surge, and, when no
 * surge is left, drains a seat's process before its successor starts
 * only while the held seats without a ready process stay within
 * max_unavailable. Otherwise it waits for an exit or a readiness. The
 * report (sv_core_drain_report) carries both budgets.
 * Errors: those of sv_core_roll; SV_EINVAL (both budgets 0: nothing could
 * ever be replaced).
 */
sv_err sv_core_roll_budget(sv_core *c, uint32_t id, uint64_t ready_timeout_ms,
    uint32_t max_surge, uint32_t max_unavailable, uint64_t now_ms,
    uint64_t *drain_idp);

/* sv_core_drain_report returns report drain_id, or NULL (unknown, or
 * dropped: SV_DRAINS_KEEP are kept). */
const sv_drain *sv_core_drain_report(const sv_core *c, uint64_t drain_id);

/* sv_core_proc_deadline: the process key's drain deadline (absolute) in
 * *deadlinep; false if it is not a live draining process. */
bool sv_core_proc_deadline(const sv_core *c, sv_wkey key, uint64_t *deadlinep);

/*
 * sv_core_shutdown stops every worker (reverse start order) and cancels
 * every scheduled start. Called again, it sends SIGKILL to every process
 * still alive.
 * Errors: SV_ENOMEM (nothing changed: call again).
 */
sv_err sv_core_shutdown(sv_core *c, uint64_t now_ms);

/* sv_why_name returns "restart", "strategy", ... for logs and events. */
const char *sv_why_name(sv_why why);

/* sv_restart_type_name / _parse: "permanent", "transient", "temporary". */
const char *sv_restart_type_name(sv_restart_type t);
bool        sv_restart_type_parse(const char *name, sv_restart_type *t);

/* sv_event_kind_name returns "STARTED", "READY", ... (NULL for a value
 * that names no kind). */
const char *sv_event_kind_name(sv_event_kind kind);

/* sv_seat_state_name returns "running", "backoff", ... */
const char *sv_seat_state_name(sv_seat_state s);

#endif /* SV_CORE_SUPERVISION_H */
