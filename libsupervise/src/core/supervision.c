/*
 * supervision.c — the supervision core's record (see supervision.h and the
 * transition table in docs/supervision.md): creating and destroying a core,
 * its effect queue (every effect the core decides goes through here),
 * queries about groups and seats, and the names of its enums.
 *
 * The other files of the core: see supervision_internal.h.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/supervision_internal.h"

/* ---- effect queue --------------------------------------------------------
 *
 * Lossless: every entry point that changes state first reserves room for
 * the effects it can emit (svs_fx_reserve with a bound from svs_fx_bound)
 * and returns SV_ENOMEM, having changed nothing, when it cannot. The pushes
 * below then cannot fail (core/fxring.h). The shell re-derives nothing: an
 * effect that is not queued is never carried out.
 *
 * The bound. One seat, in one call, emits at most SVS_FX_PER_SEAT effects:
 * stopping its current process and a roll's old one (a STOPPING event, a
 * signal and a timer each), cancelling its backoff, coming to rest
 * (STOPPED), a SIGKILL to an abandoned process, joining a strategy plan
 * and being started by it. A group adds at most SVS_FX_PER_GROUP events of
 * its own (created, scaled, reset, failed, roll done, deleted), and the
 * call itself SVS_FX_BASE (the seat it is about, the plan timer). Only
 * seats with a live process or a held ordinal emit anything, so a group
 * counts min(max_count, live + held) seats, which keeps the ring small for
 * groups far below their max_count. A transition reaches past its own
 * group only through a strategy plan (one_for_all, rest_for_one), or when
 * it is about every group (shutdown, drain of everything).
 */

/* Effects of one call: see above. */
#define SVS_FX_BASE      32
#define SVS_FX_PER_GROUP 8
#define SVS_FX_PER_SEAT  12

/* fx_push queues an effect within the caller's reservation. */
static void
fx_push(sv_core *c, const sv_fx *fx)
{
	sv_fxring_push(&c->fx, fx);
}

/* fx_group_bound bounds the effects of a transition over all of group g
 * whose held ordinals may grow to at least `held`. */
static size_t
fx_group_bound(const sv_cgroup *g, uint32_t held)
{
	size_t seats;

	if (g == NULL) {
		return 0;
	}
	seats = (size_t) g->live + (g->ords.held > held ? g->ords.held : held);
	if (seats > g->max_count) {
		seats = g->max_count;
	}
	return SVS_FX_PER_GROUP + SVS_FX_PER_SEAT * seats;
}

/* svs_fx_bound bounds the effects of an entry point that may reach every
 * seat of group g (NULL: of every group), and through a strategy plan any
 * group; held: the held ordinals g may reach in this call. */
size_t
svs_fx_bound(const sv_core *c, const sv_cgroup *g, uint32_t held)
{
	size_t n = SVS_FX_BASE;

	if (g != NULL && !sv_strategy_has_plan(c->strategy)) {
		return n + fx_group_bound(g, held);
	}
	for (size_t i = 0; i < c->ngroups; i++) {
		n += fx_group_bound(
		    c->groups[i], c->groups[i] == g ? held : 0);
	}
	return n;
}

/* svs_fx_bound_group bounds the effects of an entry point that reaches
 * group g only (and no plan), its held ordinals growing to `held`. */
size_t
svs_fx_bound_group(const sv_cgroup *g, uint32_t held)
{
	return SVS_FX_BASE + fx_group_bound(g, held);
}

/* svs_fx_bound_seat bounds the effects of an entry point about one seat
 * that cannot reach further (readiness, heartbeat, restart, ...). */
size_t
svs_fx_bound_seat(void)
{
	return SVS_FX_BASE;
}

/* svs_fx_reserve makes room for n effects before a state change, and for
 * the second process records the call can take (core/oldrecs.h). A call
 * moves at most one process into `old` on each seat it reaches (an
 * abandoned stop, a roll's overlap), and every seat it reaches is counted
 * SVS_FX_PER_SEAT times in n, or is the one seat SVS_FX_BASE is about:
 * so 1 + n / SVS_FX_PER_SEAT records. Only the records used are ever
 * written (core/oldrecs.h). Errors: SV_ENOMEM (nothing changed). */
sv_err
svs_fx_reserve(sv_core *c, size_t n)
{
	if (sv_fxring_reserve(&c->fx, n) != SV_OK
	    || sv_oldrecs_reserve(&c->olds, 1 + n / SVS_FX_PER_SEAT)
	        != SV_OK) {
		return SV_ENOMEM;
	}
	return SV_OK;
}

bool
sv_core_pop_effect(sv_core *c, sv_fx *fx)
{
	return sv_fxring_pop(&c->fx, fx);
}

/* svs_key_of names a process of a seat. */
sv_wkey
svs_key_of(const sv_cgroup *g, const sv_seat *s, const sv_proc *p)
{
	sv_wkey k = {g->id, s->ordinal, p != NULL ? p->generation : 0};
	return k;
}

/* svs_emit queues an event about seat s (may be NULL) of group g. */
void
svs_emit(sv_core *c, const sv_cgroup *g, const sv_seat *s, const sv_proc *p,
    sv_event ev)
{
	sv_fx fx = {.kind = SV_FX_EVENT};

	ev.group_id = g->id;
	if (s != NULL) {
		ev.ordinal    = s->ordinal;
		ev.generation = p != NULL ? p->generation : s->tok.generation;
		if (p != NULL) {
			ev.pid = p->pid;
		}
	}
	fx.ev = ev;
	fx_push(c, &fx);
}

/* svs_timer_arm queues an SV_FX_TIMER effect and returns its guard. */
uint64_t
svs_timer_arm(sv_core *c, sv_timer_kind kind, sv_wkey key, uint64_t due_ms)
{
	sv_fx fx = {.kind = SV_FX_TIMER, .timer = kind, .key = key};

	fx.guard  = ++c->guards;
	fx.due_ms = due_ms;
	fx_push(c, &fx);
	return fx.guard;
}

/* svs_timer_cancel queues an SV_FX_CANCEL effect. */
void
svs_timer_cancel(sv_core *c, sv_timer_kind kind, sv_wkey key)
{
	sv_fx fx = {.kind = SV_FX_CANCEL, .timer = kind, .key = key};
	fx_push(c, &fx);
}

/* svs_signal_proc queues a signal to a process's group. */
void
svs_signal_proc(sv_core *c, const sv_cgroup *g, const sv_seat *s,
    const sv_proc *p, int signo)
{
	sv_fx fx = {.kind = SV_FX_SIGNAL, .signo = signo, .pgroup = true};

	fx.key = svs_key_of(g, s, p);
	fx.pid = p->pid;
	fx_push(c, &fx);
}

/* ---- operator requests ---------------------------------------------------
 */

sv_err
sv_core_create(sv_strategy strategy, sv_core **corep)
{
	sv_core *c = sv_mem_calloc(1, sizeof(*c)); /* sv_core_destroy frees */

	if (c == NULL) {
		return SV_ENOMEM;
	}
	c->strategy = strategy;
	c->next_id  = 1;
	sv_fxring_init(&c->fx, sizeof(sv_fx));
	*corep = c;
	return SV_OK;
}

void
sv_core_destroy(sv_core *c)
{
	if (c == NULL) {
		return;
	}
	for (size_t i = 0; i < c->ngroups; i++) {
		svs_group_free(c->groups[i]);
	}
	free(c->groups);
	sv_drains_fini(&c->drains);
	sv_fxring_fini(&c->fx);
	sv_oldrecs_fini(&c->olds);
	free(c);
}

/* ---- queries and names ---------------------------------------------------
 */

const sv_cgroup *
sv_core_group(const sv_core *c, uint32_t id)
{
	return svs_group_find(c, id, NULL);
}

const sv_cgroup *
sv_core_group_named(const sv_core *c, const char *name)
{
	for (size_t i = 0; i < c->ngroups; i++) {
		if (strcmp(c->groups[i]->name, name) == 0) {
			return c->groups[i];
		}
	}
	return NULL;
}

size_t
sv_core_ngroups(const sv_core *c)
{
	return c->ngroups;
}

const sv_cgroup *
sv_core_group_at(const sv_core *c, size_t i)
{
	return i < c->ngroups ? c->groups[i] : NULL;
}

uint32_t
sv_core_group_count(const sv_cgroup *g)
{
	return g->ords.held;
}

sv_seat_state
sv_core_seat_state(const sv_cgroup *g, const sv_seat *s)
{
	switch (s->cur.state) {
	case SV_PROC_SPAWNING:
	case SV_PROC_STARTING:
		return SV_SEAT_STARTING;
	case SV_PROC_RUNNING:
		return SV_SEAT_RUNNING;
	case SV_PROC_STOPPING:
		return s->cur.draining ? SV_SEAT_DRAINING : SV_SEAT_STOPPING;
	default:
		break;
	}
	if (!s->wanted) {
		return SV_SEAT_EMPTY;
	}
	if (g->failed) {
		return SV_SEAT_FAILED;
	}
	if (s->in_plan) {
		return SV_SEAT_WAITING;
	}
	switch (s->state) {
	case SV_SP_BACKOFF:
		return SV_SEAT_BACKOFF;
	case SV_SP_PENDING:
		return SV_SEAT_STARTING;
	default:
		return SV_SEAT_IDLE;
	}
}

size_t
sv_core_live(const sv_core *c)
{
	return c->live;
}

bool
sv_core_shutting_down(const sv_core *c)
{
	return c->shutting_down;
}

bool
sv_core_done(const sv_core *c)
{
	return c->shutting_down && c->live == 0;
}

const char *
sv_why_name(sv_why why)
{
	static const char *const names[]
	    = {"exited", "restart", "strategy", "unwanted", "shutdown",
	        "group failed", "watchdog", "start timeout", "completed",
	        "group deleted", "drained", "rolling restart"};

	return (size_t) why < sizeof(names) / sizeof(names[0]) ? names[why]
	                                                       : "?";
}

static const char *const restart_type_names[]
    = {"permanent", "transient", "temporary"};

const char *
sv_restart_type_name(sv_restart_type t)
{
	return (size_t) t < 3 ? restart_type_names[t] : "?";
}

bool
sv_restart_type_parse(const char *name, sv_restart_type *t)
{
	for (size_t i = 0; i < 3; i++) {
		if (strcmp(name, restart_type_names[i]) == 0) {
			*t = (sv_restart_type) i;
			return true;
		}
	}
	return false;
}

const char *
sv_seat_state_name(sv_seat_state s)
{
	static const char *const names[] = {"empty", "starting", "running",
	    "stopping", "backoff", "waiting", "failed", "idle", "draining"};

	return (size_t) s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

/* sv_event_kind_name names an event kind as logs and docs do. */
const char *
sv_event_kind_name(sv_event_kind kind)
{
	static const char *const names[] = {NULL, "STARTED", "READY", "EXITED",
	    "RESTART_SCHEDULED", "UNRESPONSIVE", "ESCALATED", "STOPPED",
	    "SPAWN_FAILED", "GROUP_FAILED", "GROUP_RESET", "GROUP_SCALED",
	    "GROUP_CREATED", "GROUP_DELETED", "STOPPING", "ADOPTED",
	    "DRAINING", "ROLL_DONE"};

	return (size_t) kind < sizeof(names) / sizeof(names[0]) ? names[kind]
	                                                        : NULL;
}
