/*
 * tree_table.c — the node state machine of the supervision tree: one static
 * table, node state x event -> handler (or refusal), next states, doc, and
 * the one function that moves a node (tree_fire).
 *
 * Every cell is written out. A cell either refuses (a typed sv_err:
 * SV_EBUSY when the node's state does not take the event, SV_ECONFLICT for
 * a restart timer that is no longer armed) and changes nothing, or runs a
 * handler. A handler's outcome may depend on the decision (a failed child
 * restarts at once, waits for a timer, or the node gives up or shuts
 * down), so a cell names the set of states it may move the node to;
 * tp_set_state checks every move against the cell firing on that node,
 * and a move outside it counts as a misfire (sv_tree_misfires), which the
 * tests require to stay 0. Events the tree raises itself (a node telling
 * its parent, a parent booting or stopping a node child) go through the
 * same table (tree_fire_inner).
 *
 * The handlers are thin: they pick the child, then call the decisions of
 * core/tree_plan.c. docs/supervision.md, "Supervision trees", shows this
 * table row by row; tests/test_tree_table_doc.c fails when they differ.
 */
#include <stddef.h>

#include "core/tree_internal.h"

/* ---- handlers ------------------------------------------------------------
 */

/* h_nothing: nothing to do (a stopped node asked to stop). */
static void
h_nothing(sv_tree *t, sv_tnode *n, const tree_arg *a)
{
	(void) t, (void) n, (void) a;
}

/* h_boot starts the node afresh; when the operator asked (not its
 * parent), its parent's slot follows (live again, not pending). */
static void
h_boot(sv_tree *t, sv_tnode *n, const tree_arg *a)
{
	sv_tchild *c;

	tp_boot(t, n);
	if (a->by_parent || n->parent == SV_TREE_NONE) {
		return;
	}
	c               = &tp_node(t, n->parent)->children[n->index];
	c->pending      = false;
	c->started_once = true;
	c->generation   = n->generation;
	c->started_ms   = t->now_ms;
	c->state
	    = n->state == SV_TNS_RUNNING ? SV_TCS_RUNNING : SV_TCS_STARTING;
}

/* h_stop stops the node's subtree in reverse order: NODE_STOPPED; the
 * parent is told unless it asked. */
static void
h_stop(sv_tree *t, sv_tnode *n, const tree_arg *a)
{
	tp_stop_subtree(t, n);
	tp_set_state(t, n, SV_TNS_STOPPED);
	tp_push(t, tp_act(SV_TACT_NODE_STOPPED, n));
	if (!a->by_parent) {
		tp_tell_parent(
		    t, n, SV_TEV_CHILD_STOPPED, SV_TREE_NONE, false);
	}
}

/* h_timer: the restart timer fired: the pending children start. */
static void
h_timer(sv_tree *t, sv_tnode *n, const tree_arg *a)
{
	(void) a;
	tp_restart_due(t, n);
}

/* h_next: a strict start's child is up; the next one starts (or the node
 * runs, and its parent is told). */
static void
h_next(sv_tree *t, sv_tnode *n, const tree_arg *a)
{
	sv_tchild *c = &n->children[a->child];

	c->state      = SV_TCS_RUNNING;
	c->started_ms = t->now_ms;
	if (a->child == n->cursor) {
		n->cursor++;
		tp_strict_advance(t, n);
	}
}

/* h_rollback: a strict start failed at a child: the children started
 * so far, that one included, stop in reverse order and the node fails. */
static void
h_rollback(sv_tree *t, sv_tnode *n, const tree_arg *a)
{
	tp_settle_failed(n, a->child, false);
	tp_give_up(t, n, a->child, true);
}

/* h_start_exit: a child ended during a strict start: a permanent one
 * fails the start; another is done (auto shutdown, or the start goes
 * on). */
static void
h_start_exit(sv_tree *t, sv_tnode *n, const tree_arg *a)
{
	if (n->children[a->child].spec.restart == SV_RESTART_PERMANENT) {
		tp_settle_failed(n, a->child, true);
		tp_give_up(t, n, a->child, true);
		return;
	}
	if (tp_child_done(t, n, a->child)) {
		return;
	}
	if (a->child == n->cursor) {
		n->cursor++;
		tp_strict_advance(t, n);
	}
}

/* h_child_stopped: the operator stopped a child: it is not restarted; a
 * strict start goes on past it. */
static void
h_child_stopped(sv_tree *t, sv_tnode *n, const tree_arg *a)
{
	sv_tchild *c = &n->children[a->child];

	c->state   = SV_TCS_STOPPED;
	c->pending = false;
	if (n->state == SV_TNS_STARTING && a->child == n->cursor) {
		n->cursor++;
		tp_strict_advance(t, n);
	}
}

/* h_started: a child is up; its uptime counts from now. */
static void
h_started(sv_tree *t, sv_tnode *n, const tree_arg *a)
{
	sv_tchild *c = &n->children[a->child];

	c->state      = SV_TCS_RUNNING;
	c->started_ms = t->now_ms;
}

/* h_failed: a child failed: stay, or the strategy (intensity first). */
static void
h_failed(sv_tree *t, sv_tnode *n, const tree_arg *a)
{
	tp_child_failed(t, n, a->child, false);
}

/* h_exited: a child ended normally: a permanent one is restarted like a
 * failure; another is done (and may end the node). */
static void
h_exited(sv_tree *t, sv_tnode *n, const tree_arg *a)
{
	if (n->children[a->child].spec.restart == SV_RESTART_PERMANENT) {
		tp_child_failed(t, n, a->child, true);
		return;
	}
	(void) tp_child_done(t, n, a->child);
}

/* h_child_reset: a failed group starts from scratch. */
static void
h_child_reset(sv_tree *t, sv_tnode *n, const tree_arg *a)
{
	tp_child_reset(t, n, a->child);
}

/* ---- the table -----------------------------------------------------------
 */

#define M(st) (1u << SV_TNS_##st)

/* CELL(state, event, handler, next states, doc); REFUSE(state, event,
 * error, doc): one cell each. */
#define CELL(st, ev, fn, nx, d) \
	[SV_TNS_##st][SV_TEV_##ev] = {fn, nx, SV_OK, #fn, d}
#define REFUSE(st, ev, err, d) \
	[SV_TNS_##st][SV_TEV_##ev] = {NULL, M(st), SV_##err, "refuse " #err, d}

/* clang-format off */
static const tree_cell tree_table[SV_TNS_COUNT][SV_TEV_COUNT] = {
CELL(STOPPED, BOOT, h_boot, M(STARTING) | M(RUNNING),
    "NODE_START, children start in order (strict: one by one)"),
CELL(STOPPED, STOP, h_nothing, M(STOPPED),
    "nothing runs: nothing to do"),
REFUSE(STOPPED, RESET, EBUSY, "not failed: boot it"),
REFUSE(STOPPED, TIMER, ECONFLICT, "no restart timer armed"),
REFUSE(STOPPED, CHILD_STARTED, EBUSY, "no child runs"),
REFUSE(STOPPED, CHILD_START_FAILED, EBUSY, "no child runs"),
REFUSE(STOPPED, CHILD_FAILED, EBUSY, "no child runs"),
REFUSE(STOPPED, CHILD_EXITED, EBUSY, "no child runs"),
REFUSE(STOPPED, CHILD_STOPPED, EBUSY, "no child runs"),
REFUSE(STOPPED, CHILD_RESET, EBUSY, "boot the node"),

REFUSE(STARTING, BOOT, EBUSY, "already starting"),
CELL(STARTING, STOP, h_stop, M(STOPPED),
    "started children stop in reverse order; NODE_STOPPED"),
REFUSE(STARTING, RESET, EBUSY, "not failed"),
REFUSE(STARTING, TIMER, ECONFLICT, "no restart timer armed"),
CELL(STARTING, CHILD_STARTED, h_next, M(STARTING) | M(RUNNING),
    "the next child starts; after the last, running (parent told)"),
CELL(STARTING, CHILD_START_FAILED, h_rollback, M(FAILED),
    "rollback: started children stop in reverse order; NODE_FAILED"),
CELL(STARTING, CHILD_FAILED, h_rollback, M(FAILED),
    "rollback: started children stop in reverse order; NODE_FAILED"),
CELL(STARTING, CHILD_EXITED, h_start_exit,
    M(STARTING) | M(RUNNING) | M(STOPPED) | M(FAILED),
    "permanent: rollback; else done (auto shutdown, or the start goes on)"),
CELL(STARTING, CHILD_STOPPED, h_child_stopped, M(STARTING) | M(RUNNING),
    "the child stays stopped; the start goes on past it"),
REFUSE(STARTING, CHILD_RESET, EBUSY, "wait for the start to end"),

REFUSE(RUNNING, BOOT, EBUSY, "already running"),
CELL(RUNNING, STOP, h_stop, M(STOPPED),
    "children stop in reverse order; NODE_STOPPED (parent told)"),
REFUSE(RUNNING, RESET, EBUSY, "not failed"),
REFUSE(RUNNING, TIMER, ECONFLICT, "no restart timer armed"),
CELL(RUNNING, CHILD_STARTED, h_started, M(RUNNING),
    "the child runs; its uptime counts from now"),
CELL(RUNNING, CHILD_START_FAILED, h_failed,
    M(RUNNING) | M(RESTARTING) | M(FAILED) | M(STOPPED),
    "as child_failed (a lenient start does not roll back)"),
CELL(RUNNING, CHILD_FAILED, h_failed,
    M(RUNNING) | M(RESTARTING) | M(FAILED) | M(STOPPED),
    "stay: marked failed; else intensity, then strategy or give up"),
CELL(RUNNING, CHILD_EXITED, h_exited,
    M(RUNNING) | M(RESTARTING) | M(FAILED) | M(STOPPED),
    "permanent: as child_failed; else done (auto shutdown may follow)"),
CELL(RUNNING, CHILD_STOPPED, h_child_stopped, M(RUNNING),
    "the child stays stopped, not restarted"),
CELL(RUNNING, CHILD_RESET, h_child_reset, M(RUNNING),
    "the failed group starts from scratch (next generation)"),

REFUSE(RESTARTING, BOOT, EBUSY, "already running"),
CELL(RESTARTING, STOP, h_stop, M(STOPPED),
    "timer dropped; live children stop in reverse order; NODE_STOPPED"),
REFUSE(RESTARTING, RESET, EBUSY, "not failed"),
CELL(RESTARTING, TIMER, h_timer, M(RUNNING),
    "the pending children start in order"),
CELL(RESTARTING, CHILD_STARTED, h_started, M(RESTARTING),
    "the child runs; its uptime counts from now"),
CELL(RESTARTING, CHILD_START_FAILED, h_failed,
    M(RESTARTING) | M(FAILED) | M(STOPPED),
    "as child_failed"),
CELL(RESTARTING, CHILD_FAILED, h_failed,
    M(RESTARTING) | M(FAILED) | M(STOPPED),
    "as running; the range widens, the timer is re-armed (latest due)"),
CELL(RESTARTING, CHILD_EXITED, h_exited,
    M(RESTARTING) | M(FAILED) | M(STOPPED),
    "as running"),
CELL(RESTARTING, CHILD_STOPPED, h_child_stopped, M(RESTARTING),
    "the child stays stopped, not restarted"),
CELL(RESTARTING, CHILD_RESET, h_child_reset, M(RESTARTING),
    "the failed group starts from scratch (next generation)"),

CELL(FAILED, BOOT, h_boot, M(STARTING) | M(RUNNING),
    "started afresh (its parent restarts it): as reset"),
CELL(FAILED, STOP, h_stop, M(STOPPED),
    "nothing runs; NODE_STOPPED, no longer failed (parent told)"),
CELL(FAILED, RESET, h_boot, M(STARTING) | M(RUNNING),
    "fresh intensity and history; NODE_START, children start in order"),
REFUSE(FAILED, TIMER, ECONFLICT, "no restart timer armed"),
REFUSE(FAILED, CHILD_STARTED, EBUSY, "no child runs"),
REFUSE(FAILED, CHILD_START_FAILED, EBUSY, "no child runs"),
REFUSE(FAILED, CHILD_FAILED, EBUSY, "no child runs"),
REFUSE(FAILED, CHILD_EXITED, EBUSY, "no child runs"),
REFUSE(FAILED, CHILD_STOPPED, EBUSY, "no child runs"),
REFUSE(FAILED, CHILD_RESET, EBUSY, "reset the node"),
};
/* clang-format on */

#undef CELL
#undef REFUSE
#undef M

/* tree_cell_at: see tree_internal.h. */
const tree_cell *
tree_cell_at(sv_tree_state st, sv_tree_ev_kind ev)
{
	if ((unsigned) st >= SV_TNS_COUNT || (unsigned) ev >= SV_TEV_COUNT) {
		return NULL;
	}
	return &tree_table[st][ev];
}

/* tp_set_state: see tree_internal.h. */
void
tp_set_state(sv_tree *t, sv_tnode *n, sv_tree_state st)
{
	if (n->firing == NULL || (n->firing->next & (1u << st)) == 0) {
		t->misfires++;
	}
	n->state = (uint8_t) st;
	if (st != SV_TNS_RESTARTING) {
		n->guard  = 0;
		n->due_ms = 0;
	}
}

/* tree_fire: see tree_internal.h. */
sv_err
tree_fire(sv_tree *t, sv_tnode *n, sv_tree_ev_kind ev, const tree_arg *a)
{
	const tree_cell *cell = tree_cell_at((sv_tree_state) n->state, ev);
	const tree_cell *outer;

	if (cell == NULL) {
		return SV_EINVAL;
	}
	if (cell->handler == NULL) {
		return cell->refuse;
	}
	outer     = n->firing;
	n->firing = cell;
	cell->handler(t, n, a);
	n->firing = outer;
	return SV_OK;
}

/* tree_fire_inner: see tree_internal.h. */
void
tree_fire_inner(sv_tree *t, sv_tnode *n, sv_tree_ev_kind ev, const tree_arg *a)
{
	if (tree_fire(t, n, ev, a) != SV_OK) {
		t->misfires++;
	}
}

/* The names and one-line docs of the states and events, as the docs show
 * them (indexed by sv_tree_state and sv_tree_ev_kind). */
/* clang-format off */
static const char *const state_text[SV_TNS_COUNT][2] = {
[SV_TNS_STOPPED]    = {"stopped",
    "nothing of it runs: not started yet, stopped, or ended (auto shutdown)"},
[SV_TNS_STARTING]   = {"starting",
    "strict start: its children start one by one; one is awaited"},
[SV_TNS_RUNNING]    = {"running", "its children were started"},
[SV_TNS_RESTARTING] = {"restarting",
    "a strategy restart waits for its timer (the failed child's backoff)"},
[SV_TNS_FAILED]     = {"failed",
    "gave up (intensity, or a strict start); its subtree is stopped"},
};

static const char *const ev_text[SV_TEV_COUNT][2] = {
[SV_TEV_BOOT]               = {"boot",
    "start it: the operator, the daemon at start, or its parent restarting it"},
[SV_TEV_STOP]               = {"stop", "stop its subtree: operator, "
    "shutdown, or its parent stopping it"},
[SV_TEV_RESET]              = {"reset", "the operator resets a failed node"},
[SV_TEV_TIMER]              = {"timer",
    "its restart timer fired (current guard only)"},
[SV_TEV_CHILD_STARTED]      = {"child_started",
    "a child is up (a group ready, a node child's strict start done)"},
[SV_TEV_CHILD_START_FAILED] = {"child_start_failed",
    "a child could not start (or be ready in its start timeout)"},
[SV_TEV_CHILD_FAILED]       = {"child_failed",
    "a group past its intensity, or a node child that gave up"},
[SV_TEV_CHILD_EXITED]       = {"child_exited",
    "a child ended normally (every worker completed; auto shutdown)"},
[SV_TEV_CHILD_STOPPED]      = {"child_stopped",
    "the operator stopped a child"},
[SV_TEV_CHILD_RESET]        = {"child_reset",
    "the operator resets a failed group (on_failure stay)"},
};
/* clang-format on */

/* sv_tree_state_name names a node state as the docs do. */
const char *
sv_tree_state_name(sv_tree_state s)
{
	return (unsigned) s < SV_TNS_COUNT ? state_text[s][0] : "?";
}

/* tree_state_doc says in one line what a node state means. */
const char *
tree_state_doc(sv_tree_state s)
{
	return (unsigned) s < SV_TNS_COUNT ? state_text[s][1] : "?";
}

/* sv_tree_ev_name names a node event as the docs do. */
const char *
sv_tree_ev_name(sv_tree_ev_kind k)
{
	return (unsigned) k < SV_TEV_COUNT ? ev_text[k][0] : "?";
}

/* tree_ev_doc says in one line what a node event is. */
const char *
tree_ev_doc(sv_tree_ev_kind k)
{
	return (unsigned) k < SV_TEV_COUNT ? ev_text[k][1] : "?";
}
