/*
 * seat_table.c — the seat state machine of the supervision core: one
 * static table, seat state x event -> handler, next state, doc, and the one
 * function that moves a seat (svs_seat_fire).
 *
 * A seat's stored state (sv_seat_phase) says where it is in its start and
 * restart cycle: at rest, waiting for a spawn, waiting for its backoff
 * timer, or live (its `cur` record holds a process, whose own sv_pstate
 * says how far that process got). The facts that are not states stay
 * flags: wanted (the ordinal is held), used, in_plan (the strategy restart
 * in progress will start it again) and rolling on the seat; ready,
 * awaited, killed and draining on a process.
 *
 * svs_seat_fire looks the cell up, moves the seat to the cell's next state
 * (keeping the group's npending and cursor right), then runs the handler.
 * A handler may fire one follow-up event on the same seat: a seat that
 * would start but may not (its group failed, the supervisor is shutting
 * down) is brought to rest by HALT. A cell without a handler is an event
 * that cannot reach a seat in that state; firing it changes nothing and is
 * counted in sv_core.misfires, which the model test requires to stay 0.
 *
 * The callers decide which event happens (plan.c decides what follows an
 * exit, requests.c validates operator requests); the handlers here carry
 * the seat side out. docs/supervision.md, "Seat transitions", shows this
 * table row by row; tests/test_seat_table_doc.c fails when they differ.
 */
#include <stddef.h>

#include "core/supervision_internal.h"

/* leave_backoff disarms the restart timer of a seat that left BACKOFF. */
static void
leave_backoff(sv_core *c, sv_cgroup *g, sv_seat *s, sv_seat_phase from)
{
	if (from == SV_SP_BACKOFF) {
		s->guard = 0;
		svs_timer_cancel(c, SV_TIMER_SEAT, svs_key_of(g, s, NULL));
	}
}

/* halt brings a seat that may not start to rest, quietly. */
static void
halt(sv_core *c, sv_cgroup *g, sv_seat *s)
{
	svs_seat_fire(c, g, s, SEV_HALT, NULL);
}

/* why_not_startable names why a seat may not start (shutdown, deletion,
 * failure, else unwanted), in that order of precedence. */
static sv_why
why_not_startable(const sv_core *c, const sv_cgroup *g)
{
	return c->shutting_down ? SV_WHY_SHUTDOWN
	    : g->deleting       ? SV_WHY_DELETED
	    : g->failed         ? SV_WHY_FAILED
	                        : SV_WHY_UNWANTED;
}

/* old_take gives seat s (which has none) its second process record,
 * from the room the entry point reserved (svs_fx_reserve), and returns it
 * zeroed. */
static sv_proc *
old_take(sv_core *c, sv_seat *s)
{
	s->old = sv_oldrecs_take(&c->olds);
	return svs_old(c, s);
}

/* ---- handlers ------------------------------------------------------------
 */

/* h_nothing: only the state changes. */
static void
h_nothing(sv_core *c, sv_cgroup *g, sv_seat *s, sv_seat_phase from,
    const svs_seat_arg *a)
{
	(void) c, (void) g, (void) s, (void) from, (void) a;
}

/* h_spawn hands the seat's next generation to the shell as SPAWNING. */
static void
h_spawn(sv_core *c, sv_cgroup *g, sv_seat *s, sv_seat_phase from,
    const svs_seat_arg *a)
{
	(void) from, (void) a;
	svs_seat_renew(g, s);
	s->used = true;
	s->cur  = (sv_proc) {
	     .state = SV_PROC_SPAWNING, .generation = s->tok.generation};
	g->live++;
	c->live++;
}

/* h_queue: the seat waits for the next spawn with a fresh generation. */
static void
h_queue(sv_core *c, sv_cgroup *g, sv_seat *s, sv_seat_phase from,
    const svs_seat_arg *a)
{
	(void) a;
	leave_backoff(c, g, s, from);
	svs_seat_renew(g, s);
}

/* h_delay arms the seat's restart timer at now + delay. */
static void
h_delay(sv_core *c, sv_cgroup *g, sv_seat *s, sv_seat_phase from,
    const svs_seat_arg *a)
{
	leave_backoff(c, g, s, from);
	svs_seat_renew(g, s);
	s->due_ms = a->now_ms + a->delay_ms;
	s->guard  = svs_timer_arm(
	     c, SV_TIMER_SEAT, svs_key_of(g, s, NULL), s->due_ms);
}

/* h_halt drops a scheduled start without an event. */
static void
h_halt(sv_core *c, sv_cgroup *g, sv_seat *s, sv_seat_phase from,
    const svs_seat_arg *a)
{
	(void) a;
	leave_backoff(c, g, s, from);
}

/* h_backoff_over: the backoff is over; the seat waits for a spawn, or
 * rests if it may no longer start. */
static void
h_backoff_over(sv_core *c, sv_cgroup *g, sv_seat *s, sv_seat_phase from,
    const svs_seat_arg *a)
{
	(void) from, (void) a;
	s->guard = 0;
	if (!svs_seat_can_start(c, g, s)) {
		halt(c, g, s);
	}
}

/* h_rest settles the seat: nothing scheduled, out of the plan, the
 * ordinal released if asked, STOPPED(why). */
static void
h_rest(sv_core *c, sv_cgroup *g, sv_seat *s, sv_seat_phase from,
    const svs_seat_arg *a)
{
	sv_event ev = {.kind = SV_EV_STOPPED, .why = a->why};

	leave_backoff(c, g, s, from);
	s->in_plan = false;
	if (a->release) {
		svs_seat_release(g, s);
	}
	svs_emit(c, g, s, NULL, ev);
}

/* h_stop_idle: a resting seat waiting for the plan rests for good. */
static void
h_stop_idle(sv_core *c, sv_cgroup *g, sv_seat *s, sv_seat_phase from,
    const svs_seat_arg *a)
{
	if (s->in_plan) {
		h_rest(c, g, s, from, a);
	}
}

/* h_stop_proc stops the seat's process (out of the plan). One still being
 * spawned is stopped once spawned (sv_core_spawned); its seat only leaves
 * the plan (STOPPED) if it was in one. */
static void
h_stop_proc(sv_core *c, sv_cgroup *g, sv_seat *s, sv_seat_phase from,
    const svs_seat_arg *a)
{
	if (s->cur.state == SV_PROC_SPAWNING) {
		h_stop_idle(c, g, s, from, a);
		return;
	}
	s->in_plan = false;
	svs_proc_stop(c, g, s, &s->cur, a->why, a->now_ms);
}

/* h_restart_now: a waiting seat starts now under a new generation. */
static void
h_restart_now(sv_core *c, sv_cgroup *g, sv_seat *s, sv_seat_phase from,
    const svs_seat_arg *a)
{
	s->used = true;
	s->restarts++;
	h_queue(c, g, s, from, a);
}

/* h_restart_proc stops the live process (why restart); one still being
 * spawned is the fresh start. */
static void
h_restart_proc(sv_core *c, sv_cgroup *g, sv_seat *s, sv_seat_phase from,
    const svs_seat_arg *a)
{
	(void) from;
	if (s->cur.state != SV_PROC_SPAWNING) {
		svs_proc_stop(c, g, s, &s->cur, SV_WHY_RESTART, a->now_ms);
	}
}

/* h_hold: a held seat without a process starts at the next spawn, or
 * rests if it may not start. */
static void
h_hold(sv_core *c, sv_cgroup *g, sv_seat *s, sv_seat_phase from,
    const svs_seat_arg *a)
{
	if (!svs_seat_can_start(c, g, s)) {
		leave_backoff(c, g, s, from);
		halt(c, g, s);
		return;
	}
	h_queue(c, g, s, from, a);
}

/* h_hold_live: a process still stopping starts the new worker when it
 * is reaped (drained or not). */
static void
h_hold_live(sv_core *c, sv_cgroup *g, sv_seat *s, sv_seat_phase from,
    const svs_seat_arg *a)
{
	(void) c, (void) g, (void) from, (void) a;
	if (s->cur.state == SV_PROC_STOPPING) {
		s->cur.why = SV_WHY_RESTART;
	}
}

/* h_reset_live: a process stopping (not draining) starts again when it is
 * reaped. */
static void
h_reset_live(sv_core *c, sv_cgroup *g, sv_seat *s, sv_seat_phase from,
    const svs_seat_arg *a)
{
	(void) c, (void) g, (void) from, (void) a;
	if (!s->cur.draining && s->cur.state == SV_PROC_STOPPING) {
		s->cur.why = SV_WHY_RESTART;
	}
}

/* h_plan_join puts the seat in the plan; a scheduled start is dropped. */
static void
h_plan_join(sv_core *c, sv_cgroup *g, sv_seat *s, sv_seat_phase from,
    const svs_seat_arg *a)
{
	(void) a;
	leave_backoff(c, g, s, from);
	s->in_plan = true;
}

/* h_plan_stop stops the process with why strategy; the plan starts it
 * again if it is still wanted and its group has not failed. */
static void
h_plan_stop(sv_core *c, sv_cgroup *g, sv_seat *s, sv_seat_phase from,
    const svs_seat_arg *a)
{
	(void) from;
	s->in_plan = s->wanted && !g->failed;
	svs_proc_stop(c, g, s, &s->cur, SV_WHY_STRATEGY, a->now_ms);
}

/* h_plan_go: the plan is over for this seat: it starts at the next spawn,
 * or rests if it may not start. */
static void
h_plan_go(sv_core *c, sv_cgroup *g, sv_seat *s, sv_seat_phase from,
    const svs_seat_arg *a)
{
	s->in_plan = false;
	h_hold(c, g, s, from, a);
}

/* h_exit forgets the current process record (reaped, or never spawned). */
static void
h_exit(sv_core *c, sv_cgroup *g, sv_seat *s, sv_seat_phase from,
    const svs_seat_arg *a)
{
	(void) from, (void) a;
	svs_proc_forget(c, g, s, &s->cur);
}

/* h_abandon moves the current process to `old` as ABANDONED. */
static void
h_abandon(sv_core *c, sv_cgroup *g, sv_seat *s, sv_seat_phase from,
    const svs_seat_arg *a)
{
	sv_proc *old;

	(void) g, (void) from, (void) a;
	old        = old_take(c, s);
	*old       = s->cur;
	old->state = SV_PROC_ABANDONED;
	old->guard = 0;
	s->cur     = (sv_proc) {0};
}

/* h_overlap moves the running process to `old` (still serving) and lets
 * the seat spawn the next generation. */
static void
h_overlap(sv_core *c, sv_cgroup *g, sv_seat *s, sv_seat_phase from,
    const svs_seat_arg *a)
{
	(void) from, (void) a;
	*old_take(c, s) = s->cur;
	s->cur          = (sv_proc) {0};
	s->rolling      = true;
	svs_seat_renew(g, s);
}

/* h_rollback makes `old` the seat's process again; stopped if the seat
 * may no longer run one. */
static void
h_rollback(sv_core *c, sv_cgroup *g, sv_seat *s, sv_seat_phase from,
    const svs_seat_arg *a)
{
	(void) from;
	s->cur = *svs_old(c, s);
	sv_oldrecs_put(&c->olds, s->old);
	s->old = 0;
	if (!svs_seat_can_start(c, g, s) || !s->wanted) {
		svs_proc_stop(
		    c, g, s, &s->cur, why_not_startable(c, g), a->now_ms);
	}
}

/* h_drain_live releases the ordinal and drains the process (once spawned
 * if it is on its way). */
static void
h_drain_live(sv_core *c, sv_cgroup *g, sv_seat *s, sv_seat_phase from,
    const svs_seat_arg *a)
{
	(void) from;
	svs_seat_release(g, s);
	s->in_plan = false;
	if (s->cur.state == SV_PROC_SPAWNING) {
		s->drain_on_spawn    = a->drain->id;
		s->drain_on_spawn_ms = a->deadline_ms;
		return;
	}
	svs_proc_drain(c, g, s, &s->cur, a->drain, a->deadline_ms,
	    SV_WHY_DRAINED, a->now_ms);
}

/* h_drain_rest: a held seat without a process rests (drained, ordinal
 * released). */
static void
h_drain_rest(sv_core *c, sv_cgroup *g, sv_seat *s, sv_seat_phase from,
    const svs_seat_arg *a)
{
	svs_seat_arg r = {.why = SV_WHY_DRAINED, .release = true};

	(void) a;
	if (s->wanted) {
		h_rest(c, g, s, from, &r);
	}
}

/* h_release drops any planned start and gives the ordinal back, quietly. */
static void
h_release(sv_core *c, sv_cgroup *g, sv_seat *s, sv_seat_phase from,
    const svs_seat_arg *a)
{
	(void) a;
	leave_backoff(c, g, s, from);
	s->in_plan = false;
	svs_seat_release(g, s);
}

/* h_adopt makes a predecessor's process the seat's: ADOPTED, then stopped
 * (not wanted, or it was being stopped), awaited (not ready yet) or
 * watched. */
static void
h_adopt(sv_core *c, sv_cgroup *g, sv_seat *s, sv_seat_phase from,
    const svs_seat_arg *a)
{
	const sv_adoptee *ad = a->adoptee;
	sv_event          ev = {.kind = SV_EV_ADOPTED};
	sv_proc          *p  = &s->cur;

	(void) from;
	s->used = s->wanted;
	*p      = (sv_proc) {.state = SV_PROC_RUNNING,
	         .generation        = ad->generation,
	         .pid               = ad->pid,
	         .started_ms        = a->now_ms,
	         .ready             = true};
	g->live++;
	c->live++;
	svs_emit(c, g, s, p, ev);
	if (!s->wanted || ad->stopping) {
		svs_proc_stop_by(c, g, s, p,
		    s->wanted ? SV_WHY_RESTART : SV_WHY_UNWANTED, a->now_ms,
		    ad->stopping ? ad->stop_deadline_ms : 0);
	} else if (g->pol.need_ready && !ad->ready) {
		p->state = SV_PROC_STARTING;
		p->ready = false;
		svs_proc_await(g, p, true);
		if (g->pol.start_timeout_ms > 0) {
			svs_proc_arm(
			    c, g, s, p, a->now_ms + g->pol.start_timeout_ms);
		}
	} else if (g->pol.watchdog_ms > 0) {
		svs_proc_arm(c, g, s, p, a->now_ms + g->pol.watchdog_ms);
	}
}

/* ---- the table -----------------------------------------------------------
 */

/* CELL(state, event, handler, next state, doc): one cell of the table. */
#define CELL(st, ev, fn, nx, d) \
	[SV_SP_##st][SEV_##ev] = {fn, SV_SP_##nx, #fn, d}

/* clang-format off */
static const svs_seat_cell seat_table[SV_SP_COUNT][SEV_COUNT] = {
CELL(REST, QUEUE, h_queue, PENDING,
    "waits for the next spawn, fresh generation"),
CELL(REST, DELAY, h_delay, BACKOFF,
    "restart timer armed, fresh generation"),
CELL(REST, HALT, h_nothing, REST,
    "nothing to drop"),
CELL(REST, REST, h_rest, REST,
    "STOPPED(why), out of the plan, ordinal released if asked"),
CELL(REST, STOP, h_stop_idle, REST,
    "STOPPED(why) if it waited for the plan, else nothing"),
CELL(REST, RESTART, h_restart_now, PENDING,
    "starts now under a new generation"),
CELL(REST, HOLD, h_hold, PENDING,
    "starts at the next spawn (HALT if it may not start)"),
CELL(REST, RESET, h_hold, PENDING,
    "starts at the next spawn (HALT if it may not start)"),
CELL(REST, PLAN, h_plan_join, REST,
    "waits for the strategy restart (in_plan)"),
CELL(REST, PLAN_GO, h_plan_go, PENDING,
    "out of the plan; next spawn (HALT if it may not start)"),
CELL(REST, ROLLBACK, h_rollback, LIVE,
    "`old` is its process again (stopped if it may not run)"),
CELL(REST, DRAIN, h_drain_rest, REST,
    "if held: STOPPED(drained), ordinal released"),
CELL(REST, RELEASE, h_release, REST,
    "out of the plan, ordinal released, no event"),
CELL(REST, ADOPT, h_adopt, LIVE,
    "a predecessor's process is its own: ADOPTED"),

CELL(PENDING, SPAWN, h_spawn, LIVE,
    "handed to the shell: `cur` spawning, generation used"),
CELL(PENDING, QUEUE, h_queue, PENDING,
    "still waits for a spawn"),
CELL(PENDING, DELAY, h_delay, BACKOFF,
    "restart timer armed instead"),
CELL(PENDING, HALT, h_halt, REST,
    "start dropped, no event"),
CELL(PENDING, REST, h_rest, REST,
    "start dropped; STOPPED(why), ordinal released if asked"),
CELL(PENDING, STOP, h_rest, REST,
    "start dropped; STOPPED(why)"),
CELL(PENDING, RESTART, h_restart_now, PENDING,
    "starts under a new generation"),
CELL(PENDING, HOLD, h_hold, PENDING,
    "starts at the next spawn (HALT if it may not start)"),
CELL(PENDING, RESET, h_hold, PENDING,
    "starts at the next spawn (HALT if it may not start)"),
CELL(PENDING, PLAN, h_plan_join, REST,
    "start dropped; waits for the strategy restart"),
CELL(PENDING, PLAN_GO, h_plan_go, PENDING,
    "out of the plan; still waits for a spawn"),
CELL(PENDING, DRAIN, h_drain_rest, REST,
    "start dropped; STOPPED(drained), ordinal released"),
CELL(PENDING, RELEASE, h_release, REST,
    "start dropped, ordinal released, no event"),
CELL(PENDING, ADOPT, h_adopt, LIVE,
    "start dropped; a predecessor's process is its own"),

CELL(BACKOFF, QUEUE, h_queue, PENDING,
    "timer cancelled; waits for the next spawn"),
CELL(BACKOFF, DELAY, h_delay, BACKOFF,
    "timer re-armed"),
CELL(BACKOFF, TIMER, h_backoff_over, PENDING,
    "waits for the next spawn (HALT if it may not start)"),
CELL(BACKOFF, HALT, h_halt, REST,
    "timer cancelled, no event"),
CELL(BACKOFF, REST, h_rest, REST,
    "timer cancelled; STOPPED(why), ordinal released if asked"),
CELL(BACKOFF, STOP, h_rest, REST,
    "timer cancelled; STOPPED(why)"),
CELL(BACKOFF, RESTART, h_restart_now, PENDING,
    "timer cancelled; starts now under a new generation"),
CELL(BACKOFF, HOLD, h_hold, PENDING,
    "timer cancelled; starts at the next spawn"),
CELL(BACKOFF, RESET, h_hold, PENDING,
    "timer cancelled; starts at the next spawn"),
CELL(BACKOFF, PLAN, h_plan_join, REST,
    "timer cancelled; waits for the strategy restart"),
CELL(BACKOFF, PLAN_GO, h_plan_go, PENDING,
    "timer cancelled; out of the plan; waits for a spawn"),
CELL(BACKOFF, DRAIN, h_drain_rest, REST,
    "timer cancelled; STOPPED(drained), ordinal released"),
CELL(BACKOFF, RELEASE, h_release, REST,
    "timer cancelled, ordinal released, no event"),

CELL(LIVE, STOP, h_stop_proc, LIVE,
    "out of the plan, process stopped (why); spawning: as at rest"),
CELL(LIVE, RESTART, h_restart_proc, LIVE,
    "process stopped (why restart), unless still spawning"),
CELL(LIVE, HOLD, h_hold_live, LIVE,
    "a stopping process starts the new worker when reaped"),
CELL(LIVE, RESET, h_reset_live, LIVE,
    "a stopping, not draining process restarts when reaped"),
CELL(LIVE, PLAN, h_plan_join, LIVE,
    "in the strategy restart; the plan will stop it"),
CELL(LIVE, PLAN_STOP, h_plan_stop, LIVE,
    "stopped (why strategy); in_plan if wanted and group not failed"),
CELL(LIVE, EXIT, h_exit, REST,
    "`cur` forgotten; plan.c decides what follows"),
CELL(LIVE, ABANDON, h_abandon, REST,
    "`cur` moves to `old` as abandoned; plan.c decides what follows"),
CELL(LIVE, OVERLAP, h_overlap, PENDING,
    "`cur` moves to `old`, still serving; rolling, next generation"),
CELL(LIVE, DRAIN, h_drain_live, LIVE,
    "ordinal released, out of the plan; drained (once spawned)"),
};
/* clang-format on */

#undef CELL

/* seat_enter moves s to state next, keeping the group's count of pending
 * seats and its cursor (no pending seat below it) right. */
static void
seat_enter(sv_cgroup *g, sv_seat *s, sv_seat_phase next)
{
	if (s->state == SV_SP_PENDING && next != SV_SP_PENDING) {
		g->npending--;
	} else if (s->state != SV_SP_PENDING && next == SV_SP_PENDING) {
		g->npending++;
		if (s->ordinal < g->cursor) {
			g->cursor = s->ordinal;
		}
	}
	s->state = next;
}

/* svs_seat_fire moves seat s by event ev (see the design comment). */
void
svs_seat_fire(sv_core *c, sv_cgroup *g, sv_seat *s, svs_seat_event ev,
    const svs_seat_arg *a)
{
	static const svs_seat_arg none = {.why = SV_WHY_NONE};
	const svs_seat_cell      *cell = svs_seat_cell_at(s->state, ev);
	sv_seat_phase             from = s->state;

	if (cell == NULL || cell->handler == NULL) {
		c->misfires++;
		return;
	}
	seat_enter(g, s, cell->next);
	cell->handler(c, g, s, from, a != NULL ? a : &none);
}

/* svs_seat_cell_at returns the cell of (state, ev) (NULL if out of range). */
const svs_seat_cell *
svs_seat_cell_at(sv_seat_phase state, svs_seat_event ev)
{
	if ((unsigned) state >= SV_SP_COUNT || (unsigned) ev >= SEV_COUNT) {
		return NULL;
	}
	return &seat_table[state][ev];
}

/* The names and one-line docs of the states and events, as the docs show
 * them (indexed by sv_seat_phase and svs_seat_event). */
/* clang-format off */
static const char *const phase_names[SV_SP_COUNT][2] = {
[SV_SP_REST]    = {"rest",
    "no process, nothing scheduled (to clients: idle, empty, failed, or "
    "waiting if in_plan)"},
[SV_SP_PENDING] = {"pending", "waits for sv_core_next_spawn"},
[SV_SP_BACKOFF] = {"backoff", "its restart timer is armed"},
[SV_SP_LIVE]    = {"live",
    "`cur` holds a process (its own state says how far it got)"},
};

static const char *const event_names[SEV_COUNT][2] = {
[SEV_SPAWN]     = {"spawn", "sv_core_next_spawn hands it out"},
[SEV_QUEUE]     = {"queue", "start at the next spawn (after an exit)"},
[SEV_DELAY]     = {"delay", "start after a backoff delay"},
[SEV_TIMER]     = {"timer", "its backoff timer fired (current guard)"},
[SEV_HALT]      = {"halt", "its scheduled start is dropped: it may not start"},
[SEV_REST]      = {"rest", "comes to rest, no restart follows"},
[SEV_STOP]      = {"stop",
    "stop request: scale-down, terminate, group failure, deletion, shutdown"},
[SEV_RESTART]   = {"restart", "operator restart (validated first)"},
[SEV_HOLD]      = {"hold", "its ordinal is held afresh: add_group, scale-up, "
    "start_one"},
[SEV_RESET]     = {"reset", "its failed group is reset (held seats only)"},
[SEV_PLAN]      = {"plan", "joins a strategy restart"},
[SEV_PLAN_STOP] = {"plan_stop", "the strategy restart stops its process"},
[SEV_PLAN_GO]   = {"plan_go", "the strategy restart starts its seats"},
[SEV_EXIT]      = {"exit", "its process was reaped, or its spawn failed"},
[SEV_ABANDON]   = {"abandon", "its process did not stop in time (abandon)"},
[SEV_OVERLAP]   = {"overlap",
    "a rolling restart starts its next generation beside the old one"},
[SEV_ROLLBACK]  = {"rollback",
    "a roll's new generation is gone: the old one is the seat's again"},
[SEV_DRAIN]     = {"drain", "drain request"},
[SEV_RELEASE]   = {"release",
    "takeover: the predecessor had released the ordinal"},
[SEV_ADOPT]     = {"adopt", "takeover: a predecessor's process runs on it"},
};
/* clang-format on */

/* svs_seat_phase_name names a seat state as the docs do. */
const char *
svs_seat_phase_name(sv_seat_phase state)
{
	return (unsigned) state < SV_SP_COUNT ? phase_names[state][0] : "?";
}

/* svs_seat_phase_doc says in one line what a seat state means. */
const char *
svs_seat_phase_doc(sv_seat_phase state)
{
	return (unsigned) state < SV_SP_COUNT ? phase_names[state][1] : "?";
}

/* svs_seat_event_name names a seat event as the docs do. */
const char *
svs_seat_event_name(svs_seat_event ev)
{
	return (unsigned) ev < SEV_COUNT ? event_names[ev][0] : "?";
}

/* svs_seat_event_doc says in one line what a seat event is. */
const char *
svs_seat_event_doc(svs_seat_event ev)
{
	return (unsigned) ev < SEV_COUNT ? event_names[ev][1] : "?";
}
