/*
 * supervision_internal.h — the private record of the supervision core and
 * the helpers its files share (not part of the API; only core files that
 * implement supervision.h include it).
 *
 * The core is split by concept: supervision.c (the record, the effect
 * queue, queries), seat.c (groups, seats, process records), plan.c (what
 * follows an exit: restart type, intensity, backoff, the strategy plan),
 * lifecycle.c (spawning, readiness, watchdog and process timers),
 * requests.c (operator requests and shutdown), roll.c (drain and rolling
 * restart), seat_table.c (the seat state machine: state x event ->
 * handler, next state, doc, and the one function that moves a seat).
 *
 * A seat's state (sv_seat_phase) changes only through svs_seat_fire, which
 * looks the cell up in the table, moves the seat and runs the cell's
 * handler. Every function that changes a seat keeps three derived things
 * right: the group's npending/cursor (which seats wait for a spawn: kept
 * by svs_seat_fire on entering and leaving PENDING), live (the processes
 * not yet reaped) and unready (processes whose readiness an ordered start
 * waits for). They are what make sv_core_next_spawn cheap.
 */
#ifndef SV_CORE_SUPERVISION_INTERNAL_H
#define SV_CORE_SUPERVISION_INTERNAL_H

#include "core/fxring.h"
#include "core/oldrecs.h"
#include "core/supervision.h"

typedef enum plan_phase {
	PLAN_IDLE     = 0,
	PLAN_STOPPING = 1, /* siblings stop one by one, reverse start order */
	PLAN_DELAY    = 2, /* all stopped; the plan timer is armed */
} plan_phase;

struct sv_core {
	sv_strategy strategy;
	sv_cgroup **groups; /* [ngroups], start order */
	size_t      ngroups;
	uint32_t    next_id;
	bool        shutting_down;
	size_t      live;
	uint64_t    guards; /* source of timer guards */
	uint64_t    misfires; /* seat events no cell takes (seat_table.c) */
	struct {
		plan_phase  phase;
		sv_position first; /* range: every position >= first */
		uint64_t    delay_ms;
		uint64_t    guard;
	} plan;
	sv_drains  drains; /* reports of drains and rolls */
	sv_fxring  fx; /* pending effects (core/fxring.h) */
	sv_oldrecs olds; /* the seats' second processes (core/oldrecs.h) */
};

/* ---- supervision.c (the core record: create/destroy, the effect queue,
 * queries and names) ---- */

/* fx_bound bounds the effects of an entry point that may reach every seat
 * of group g (NULL: of every group), or any group through a strategy
 * plan; held: the held ordinals g may reach in this call. */
size_t svs_fx_bound(const sv_core *c, const sv_cgroup *g, uint32_t held);

/* fx_bound_group bounds the effects of an entry point that reaches group
 * g only (no plan), its held ordinals growing to `held`. */
size_t svs_fx_bound_group(const sv_cgroup *g, uint32_t held);

/* fx_bound_seat bounds the effects of an entry point about one seat. */
size_t svs_fx_bound_seat(void);

/* fx_reserve makes room for n effects, and for the second process records
 * a call bounded by n can take (core/oldrecs.h; pointers to those records
 * are stale after it): every entry point calls it before its first state
 * change. Errors: SV_ENOMEM (nothing changed). */
sv_err svs_fx_reserve(sv_core *c, size_t n);

/* key_of names a process of a seat. */
sv_wkey svs_key_of(const sv_cgroup *g, const sv_seat *s, const sv_proc *p);

/* emit queues an event about seat s (may be NULL) of group g. */
void svs_emit(sv_core *c, const sv_cgroup *g, const sv_seat *s,
    const sv_proc *p, sv_event ev);

/* timer_arm queues an SV_FX_TIMER effect and returns its guard. */
uint64_t svs_timer_arm(
    sv_core *c, sv_timer_kind kind, sv_wkey key, uint64_t due_ms);

/* timer_cancel queues an SV_FX_CANCEL effect. */
void svs_timer_cancel(sv_core *c, sv_timer_kind kind, sv_wkey key);

/* signal_proc queues a signal to a process's group. */
void svs_signal_proc(sv_core *c, const sv_cgroup *g, const sv_seat *s,
    const sv_proc *p, int signo);

/* ---- seat.c (groups, seats and process records) ---- */

/* group_find returns the group with id, and its position in *posp. */
sv_cgroup *svs_group_find(const sv_core *c, uint32_t id, size_t *posp);

/* group_pos returns the position of g in start order. */
size_t svs_group_pos(const sv_core *c, const sv_cgroup *g);

/* seats_reserve makes seats 0..n-1 exist (n is capped at max_count),
 * growing the array geometrically; the new seats are blank. Called by
 * every entry point that may make an ordinal live, before its first state
 * change (a larger array alone changes nothing). The array is freed with
 * the group (svs_group_free). Errors: SV_ENOMEM (nothing changed). */
sv_err svs_seats_reserve(sv_cgroup *g, uint32_t n);

/* seat_renew gives the seat the next generation if the current one has
 * already been spawned. */
void svs_seat_renew(sv_cgroup *g, sv_seat *s);

/* seat_can_start tells whether a seat may get a process at all. */
bool svs_seat_can_start(
    const sv_core *c, const sv_cgroup *g, const sv_seat *s);

/* seat_schedule makes a seat start after delay_ms (0: at the next
 * sv_core_next_spawn), with a fresh generation; a seat that may not start
 * loses its scheduled start instead. Fires QUEUE, DELAY or HALT. */
void svs_seat_schedule(
    sv_core *c, sv_cgroup *g, sv_seat *s, uint64_t delay_ms, uint64_t now_ms);

/* seat_release gives the ordinal back (the worker is no longer wanted). */
void svs_seat_release(sv_cgroup *g, sv_seat *s);

/* seat_rest settles a seat that has no process and will not restart:
 * nothing scheduled, STOPPED(why), the ordinal released if release.
 * Fires REST. */
void svs_seat_rest(
    sv_core *c, sv_cgroup *g, sv_seat *s, sv_why why, bool release);

/* group_free frees a group's memory. NULL is ignored. */
void svs_group_free(sv_cgroup *g);

/* group_maybe_delete removes a group being deleted once nothing is alive.
 * Returns true when it was removed (g is then gone). */
bool svs_group_maybe_delete(sv_core *c, sv_cgroup *g);

/* proc_find returns the process of a seat with the given generation. */
sv_proc *svs_proc_find(const sv_core *c, sv_seat *s, uint64_t generation);

/* old returns seat s's second process record, NULL when it has none; the
 * pointer is good until the next reservation (core/oldrecs.h). */
sv_proc *svs_old(const sv_core *c, const sv_seat *s);

/* old_state is the state of seat s's second process (SV_PROC_NONE when it
 * has none). */
sv_pstate svs_old_state(const sv_core *c, const sv_seat *s);

/* proc_arm arms the timer of a process at due_ms. */
void svs_proc_arm(sv_core *c, const sv_cgroup *g, const sv_seat *s, sv_proc *p,
    uint64_t due_ms);

/* proc_await sets whether an ordered start still waits for p. */
void svs_proc_await(sv_cgroup *g, sv_proc *p, bool on);

/* proc_forget clears process record p of seat s after its reap (the
 * second one is given back to the pool). */
void svs_proc_forget(sv_core *c, sv_cgroup *g, sv_seat *s, sv_proc *p);

/* proc_stop asks a live process to stop: the group's stop signal (SIGKILL
 * if the stop timeout is 0), then the stop timer. A process already
 * stopping keeps its first reason, except that an operator restart, a
 * shutdown or a failure overrides a reason that would restart it
 * differently. */
void svs_proc_stop(sv_core *c, sv_cgroup *g, sv_seat *s, sv_proc *p,
    sv_why why, uint64_t now_ms);
/* proc_stop_by is proc_stop with an earlier SIGKILL deadline (0: none). */
void svs_proc_stop_by(sv_core *c, sv_cgroup *g, sv_seat *s, sv_proc *p,
    sv_why why, uint64_t now_ms, uint64_t deadline_ms);

/* seat_stop stops whatever runs on a seat (both generations of a roll
 * overlap), or settles it if it only waited. Fires STOP. */
void svs_seat_stop(
    sv_core *c, sv_cgroup *g, sv_seat *s, sv_why why, uint64_t now_ms);

/* ---- seat_table.c (the seat state machine) ---- */

/* What happens to a seat: the columns of the seat table. */
typedef enum svs_seat_event {
	SEV_SPAWN     = 0, /* sv_core_next_spawn hands it out */
	SEV_QUEUE     = 1, /* start at the next spawn */
	SEV_DELAY     = 2, /* start after a backoff delay */
	SEV_TIMER     = 3, /* its backoff timer fired (guard checked) */
	SEV_HALT      = 4, /* its scheduled start is dropped, quietly */
	SEV_REST      = 5, /* comes to rest: STOPPED(why) */
	SEV_STOP      = 6, /* stop request (scale-down, failure, shutdown) */
	SEV_RESTART   = 7, /* operator restart (validated by the request) */
	SEV_HOLD      = 8, /* its ordinal is held afresh (scale-up, start) */
	SEV_RESET     = 9, /* its failed group is reset */
	SEV_PLAN      = 10, /* joins the strategy restart */
	SEV_PLAN_STOP = 11, /* the strategy restart stops its process */
	SEV_PLAN_GO   = 12, /* the strategy restart starts it again */
	SEV_EXIT      = 13, /* its process is gone (reaped, spawn failed) */
	SEV_ABANDON   = 14, /* its process would not stop: moved to `old` */
	SEV_OVERLAP   = 15, /* a roll moves its process to `old` */
	SEV_ROLLBACK  = 16, /* a roll gives it its `old` process back */
	SEV_DRAIN     = 17, /* drain request */
	SEV_RELEASE   = 18, /* takeover: the predecessor had released it */
	SEV_ADOPT     = 19, /* takeover: a predecessor's process is its own */
	SEV_COUNT     = 20,
} svs_seat_event;

/* The details an event carries (each handler reads its own). */
typedef struct svs_seat_arg {
	sv_why            why; /* REST, STOP */
	bool              release; /* REST: give the ordinal back */
	uint64_t          delay_ms; /* DELAY */
	uint64_t          now_ms;
	sv_drain         *drain; /* DRAIN: the report */
	uint64_t          deadline_ms; /* DRAIN: 0: the group's */
	const sv_adoptee *adoptee; /* ADOPT */
} svs_seat_arg;

/* A handler carries out a cell; from is the state the seat left. */
typedef void (*svs_seat_handler)(sv_core *c, sv_cgroup *g, sv_seat *s,
    sv_seat_phase from, const svs_seat_arg *a);

/* One cell of the table. A NULL handler: the event cannot reach a seat
 * in that state (svs_seat_fire then changes nothing). */
typedef struct svs_seat_cell {
	svs_seat_handler handler;
	sv_seat_phase    next;
	const char      *name; /* the handler's name, for the docs */
	const char      *doc; /* one line: what happens */
} svs_seat_cell;

/* seat_fire moves seat s by event ev: looks up its cell, sets the next
 * state (keeping npending/cursor right), then runs the handler, which may
 * fire a follow-up event on the same seat. */
void svs_seat_fire(sv_core *c, sv_cgroup *g, sv_seat *s, svs_seat_event ev,
    const svs_seat_arg *a);

/* seat_cell_at returns the cell of (state, ev) (NULL if out of range). */
const svs_seat_cell *svs_seat_cell_at(sv_seat_phase state, svs_seat_event ev);

/* seat_phase_name / seat_event_name: the names the docs use;
 * seat_phase_doc / seat_event_doc: their one-line meaning. */
const char *svs_seat_phase_name(sv_seat_phase state);
const char *svs_seat_phase_doc(sv_seat_phase state);
const char *svs_seat_event_name(svs_seat_event ev);
const char *svs_seat_event_doc(svs_seat_event ev);

/* ---- plan.c (what follows an exit, and the strategy plan) ---- */

/* seat_after_exit decides what follows the end of the seat's current
 * process (exit or failed spawn); the record is already cleared.
 * min_delay_ms bounds the restart delay from below. */
void svs_seat_after_exit(sv_core *c, sv_cgroup *g, sv_seat *s, sv_why why,
    const sv_exit *x, uint64_t uptime_ms, uint64_t min_delay_ms,
    uint64_t now_ms);

/* plan_start ends a plan: every wanted seat of the range becomes pending;
 * sv_core_next_spawn starts them in start order. */
void svs_plan_start(sv_core *c, uint64_t now_ms);

/* plan_step advances a plan in its stopping phase: waits while a seat of
 * the range is stopping, else stops the live seat with the highest
 * position, else moves to the delay (or starts at once). */
void svs_plan_step(sv_core *c, uint64_t now_ms);

/* ---- lifecycle.c (spawning, readiness, watchdog and process timers) ---- */

/* live_proc finds the live process named by key. */
sv_proc *svs_live_proc(sv_core *c, sv_wkey key, sv_cgroup **gp, sv_seat **sp);

/* ---- requests.c (operator requests and shutdown) ---- */

/* group_for_request finds a group an operator may change. */
sv_err svs_group_for_request(sv_core *c, uint32_t id, sv_cgroup **gp);

/* ---- roll.c (drain and rolling restart) ---- */

/* rows_reserve makes room for one more row in report drain_id (0 or
 * unknown: nothing to do). Errors: SV_ENOMEM (nothing changed). */
sv_err svs_rows_reserve(sv_core *c, uint64_t drain_id);

/* drain_exited records the reap of process p (about to be forgotten). */
void svs_drain_exited(sv_core *c, const sv_cgroup *g, const sv_seat *s,
    const sv_proc *p, sv_exit x, uint64_t now_ms);

/* proc_drain tells live process p of seat s to drain under report d: a
 * notice, the drain signal, the deadline timer. deadline_ms 0: the
 * group's. A process already draining stays in its first drain. */
void svs_proc_drain(sv_core *c, sv_cgroup *g, sv_seat *s, sv_proc *p,
    sv_drain *d, uint64_t deadline_ms, sv_why why, uint64_t now_ms);

/* drain_deadline: a draining process reached its deadline: SIGKILL. */
void svs_drain_deadline(
    sv_core *c, sv_cgroup *g, sv_seat *s, sv_proc *p, sv_event ev);

/* old_stop stops the live old generation of a roll overlap (the seat's
 * process will not come back to it). */
void svs_old_stop(
    sv_core *c, sv_cgroup *g, sv_seat *s, sv_why why, uint64_t now_ms);

/* roll_end ends group g's roll (reason: why it stopped early, NULL: it is
 * complete). */
void svs_roll_end(sv_core *c, sv_cgroup *g, const char *reason);

/* roll_step starts the overlap of the next ordinal to roll, or ends the
 * roll when none is left. Waits while a seat is rolling. */
void svs_roll_step(sv_core *c, sv_cgroup *g, uint64_t now_ms);

/* roll_advance: the new generation of rolling seat s is ready: the old
 * one is drained, the roll goes on with the next ordinal. */
void svs_roll_advance(sv_core *c, sv_cgroup *g, sv_seat *s, uint64_t now_ms);

/* roll_back: the new generation of rolling seat s is gone before it was
 * ready: the old process becomes the seat's again and the roll stops.
 * Returns false when there is no old process left (the seat then goes on
 * as after any exit). */
bool svs_roll_back(sv_core *c, sv_cgroup *g, sv_seat *s, uint64_t now_ms);

#endif
