/*
 * tree_plan.c — the decisions the node table's handlers share
 * (core/tree_table.c): starting and stopping children and subtrees, the
 * strategy restart over a node's children, giving up past the intensity,
 * auto shutdown on significant children, telling the parent, and the plan
 * they append to. Rules in core/tree.h; docs/supervision.md, "Supervision
 * trees".
 *
 * Everything here runs inside one sv_tree_event, after its plan was
 * reserved (tp_bound), so nothing here can fail: a decision either is
 * refused before it starts or is carried out whole.
 *
 * Order of a plan. Stops come before starts, and a stop of a subtree goes
 * child by child in reverse order (a node child's own subtree first, then
 * its NODE_STOPPED or NODE_FAILED); starts go in order (a node child's
 * NODE_START, then its children). A failed group stops in its place in
 * that reverse order (its workers are already stopping: the group core
 * stops a group that exceeds its intensity; its STOP_GROUP waits for the
 * last one). A node child that failed or ended has stopped its own
 * subtree already, so an escalation stops the failing subtree first and
 * then, level by level, the rest of each node in reverse order.
 * A node tells its parent last, after its own actions, so that the
 * parent's decision follows in the plan. Re-entrance: a handler that tells
 * the parent returns right after, because the parent may already have
 * started the node again.
 */
#include <stddef.h>

#include "core/tree_internal.h"

/* A child's stable bound: one START, one STOP and one FAIL per group, and
 * NODE_START, NODE_STOPPED or NODE_FAILED, ESCALATE, AUTO_SHUTDOWN and
 * TIMER per node, in any one decision (a subtree is stopped before it is
 * started, and nothing fails inside one decision after a start), with
 * room to spare; EXIT once. */
#define TP_PER_GROUP 4
#define TP_PER_NODE  6
#define TP_SLACK     4

/* tp_bound: see tree_internal.h. */
size_t
tp_bound(const sv_tree *t)
{
	return TP_PER_GROUP * (size_t) t->ngroups
	    + TP_PER_NODE * (size_t) t->nnodes + TP_SLACK;
}

/* tp_push: see tree_internal.h. */
void
tp_push(sv_tree *t, sv_tree_action a)
{
	sv_tree_plan *p = t->plan;

	if (p == NULL || p->n >= p->cap) {
		t->misfires++;
		return;
	}
	p->a[p->n++] = a;
}

/* tp_act: see tree_internal.h. */
sv_tree_action
tp_act(sv_tree_act_kind kind, const sv_tnode *n)
{
	return (sv_tree_action) {
	    .kind        = kind,
	    .node        = n->id,
	    .child       = n->parent == SV_TREE_NONE ? SV_TREE_NONE : n->index,
	    .parent      = n->parent,
	    .cause_node  = SV_TREE_NONE,
	    .cause_child = SV_TREE_NONE,
	};
}

/* tp_act_group: see tree_internal.h. */
sv_tree_action
tp_act_group(sv_tree_act_kind kind, const sv_tnode *n, uint32_t i)
{
	sv_tree_action a = tp_act(kind, n);

	a.child      = i;
	a.group      = n->children[i].id;
	a.generation = n->children[i].generation;
	a.parent     = SV_TREE_NONE;
	return a;
}

/* tp_node: see tree_internal.h. */
sv_tnode *
tp_node(const sv_tree *t, uint32_t id)
{
	return id < t->nnodes ? t->nodes[id] : NULL;
}

/* tp_live: see tree_internal.h. */
bool
tp_live(const sv_tchild *c)
{
	return c->state == SV_TCS_STARTING || c->state == SV_TCS_RUNNING;
}

/* start_child starts child i of n: a group by START_GROUP (STARTING when
 * await, for a strict start, else RUNNING), a node by its BOOT. */
static void
start_child(sv_tree *t, sv_tnode *n, uint32_t i, bool await)
{
	sv_tchild *c = &n->children[i];
	sv_tnode  *k;
	tree_arg   a = {.child = SV_TREE_NONE, .by_parent = true};

	c->pending    = false;
	c->started_ms = t->now_ms;
	if (c->kind == TK_GROUP) {
		if (c->started_once) {
			c->generation++;
		}
		c->started_once = true;
		c->state        = await ? SV_TCS_STARTING : SV_TCS_RUNNING;
		tp_push(t, tp_act_group(SV_TACT_START_GROUP, n, i));
		return;
	}
	k = tp_node(t, (uint32_t) c->id);
	tree_fire_inner(t, k, SV_TEV_BOOT, &a);
	c->generation   = k->generation;
	c->started_once = true;
	c->state
	    = k->state == SV_TNS_RUNNING ? SV_TCS_RUNNING : SV_TCS_STARTING;
}

/* stop_child stops live child i of n: a group by STOP_GROUP, a node by
 * its STOP (its subtree in reverse order, then NODE_STOPPED). */
static void
stop_child(sv_tree *t, sv_tnode *n, uint32_t i)
{
	sv_tchild *c = &n->children[i];
	tree_arg   a = {.child = SV_TREE_NONE, .by_parent = true};

	c->pending = false;
	if (!tp_live(c)) {
		return;
	}
	if (c->kind == TK_GROUP) {
		tp_push(t, tp_act_group(SV_TACT_STOP_GROUP, n, i));
	} else {
		tree_fire_inner(
		    t, tp_node(t, (uint32_t) c->id), SV_TEV_STOP, &a);
	}
	c->state = SV_TCS_STOPPED;
}

/* tp_settle_failed: see tree_internal.h. */
void
tp_settle_failed(sv_tnode *n, uint32_t i, bool ended)
{
	sv_tchild *c = &n->children[i];

	if (c->kind == TK_NODE || ended) {
		c->state = SV_TCS_STOPPED;
	}
}

/* tp_stop_subtree: see tree_internal.h. */
void
tp_stop_subtree(sv_tree *t, sv_tnode *n)
{
	for (uint32_t i = n->nchildren; i-- > 0;) {
		stop_child(t, n, i);
	}
}

/* strict_run starts n's children from n->cursor on, one at a time, while
 * each comes up at once (a lenient node child); true, with n RUNNING, once
 * none is left; false while one is awaited. */
static bool
strict_run(sv_tree *t, sv_tnode *n)
{
	while (n->cursor < n->nchildren) {
		sv_tchild *c = &n->children[n->cursor];
		if (c->state != SV_TCS_DONE && c->state != SV_TCS_RUNNING) {
			start_child(t, n, n->cursor, true);
			if (c->state != SV_TCS_RUNNING) {
				return false;
			}
		}
		n->cursor++;
	}
	tp_set_state(t, n, SV_TNS_RUNNING);
	return true;
}

/* tp_boot: see tree_internal.h. */
void
tp_boot(sv_tree *t, sv_tnode *n)
{
	sv_tree_action a = tp_act(SV_TACT_NODE_START, n);

	sv_intensity_reset(&n->intensity);
	if (n->started_once) {
		n->generation++;
	}
	n->started_once = true;
	n->cursor       = 0;
	a.generation    = n->generation;
	tp_push(t, a);
	for (uint32_t i = 0; i < n->nchildren; i++) {
		/* None is live: a node boots from stopped or failed. */
		n->children[i].state         = SV_TCS_STOPPED;
		n->children[i].fast_failures = 0;
		n->children[i].pending       = false;
	}
	if (n->spec.start == SV_START_STRICT) {
		/* The parent (or the operator's boot) reads the outcome. */
		tp_set_state(t, n, SV_TNS_STARTING);
		(void) strict_run(t, n);
		return;
	}
	for (uint32_t i = 0; i < n->nchildren; i++) {
		start_child(t, n, i, false);
	}
	tp_set_state(t, n, SV_TNS_RUNNING);
}

/* tp_strict_advance: see tree_internal.h. */
void
tp_strict_advance(sv_tree *t, sv_tnode *n)
{
	if (strict_run(t, n)) {
		tp_tell_parent(
		    t, n, SV_TEV_CHILD_STARTED, SV_TREE_NONE, false);
	}
}

/* tp_give_up: see tree_internal.h. */
void
tp_give_up(sv_tree *t, sv_tnode *n, uint32_t cause, bool start_failure)
{
	tp_stop_subtree(t, n);
	tp_set_state(t, n, SV_TNS_FAILED);
	tp_push(t, tp_act(SV_TACT_NODE_FAILED, n));
	tp_tell_parent(t, n, SV_TEV_CHILD_FAILED, cause, start_failure);
}

/* range gives the children that restart with failed child i under n's
 * strategy: first .. last. */
static void
range(const sv_tnode *n, uint32_t i, uint32_t *first, uint32_t *last)
{
	*first = i;
	*last  = i;
	if (n->spec.strategy == SV_STRATEGY_ONE_FOR_ALL) {
		*first = 0;
		*last  = n->nchildren - 1;
	} else if (n->spec.strategy == SV_STRATEGY_REST_FOR_ONE) {
		*last = n->nchildren - 1;
	}
}

/* restart applies n's strategy to failed child i: the intensity first
 * (past it: give up), then the live children of the range, i included,
 * stop in reverse order and the range starts again in order, at once or
 * when the restart timer fires (the failed child's backoff). */
static void
restart(sv_tree *t, sv_tnode *n, uint32_t i)
{
	sv_tchild *c = &n->children[i];
	uint32_t   first, last;
	uint64_t   delay, due;

	if (sv_intensity_record(&n->intensity, t->now_ms)) {
		tp_give_up(t, n, i, false);
		return;
	}
	n->restarts++;
	delay = sv_backoff_next(&n->spec.backoff, &c->fast_failures,
	    t->now_ms >= c->started_ms ? t->now_ms - c->started_ms : 0);
	range(n, i, &first, &last);
	for (uint32_t j = last + 1; j-- > first;) {
		sv_tchild *s = &n->children[j];
		if (j != i && !tp_live(s)) {
			continue;
		}
		stop_child(t, n, j);
		if (j != i && s->spec.restart == SV_RESTART_TEMPORARY) {
			s->state = SV_TCS_DONE; /* never restarted */
		} else {
			s->pending = true;
		}
	}
	if (delay == 0 && n->state != SV_TNS_RESTARTING) {
		tp_restart_due(t, n);
		return;
	}
	due = t->now_ms + delay;
	if (n->state == SV_TNS_RESTARTING && n->due_ms > due) {
		due = n->due_ms;
	}
	tp_set_state(t, n, SV_TNS_RESTARTING);
	n->due_ms = due;
	n->guard  = ++t->guards;
	{
		sv_tree_action a = tp_act(SV_TACT_TIMER, n);
		a.due_ms         = due;
		a.guard          = n->guard;
		tp_push(t, a);
	}
}

/* tp_child_failed: see tree_internal.h. */
void
tp_child_failed(sv_tree *t, sv_tnode *n, uint32_t i, bool ended)
{
	sv_tchild *c = &n->children[i];

	if (!ended && c->spec.on_failure == SV_ON_FAILURE_STAY) {
		if (c->kind == TK_GROUP) {
			tp_push(t, tp_act_group(SV_TACT_FAIL_GROUP, n, i));
		}
		c->state   = SV_TCS_FAILED;
		c->pending = false;
		return;
	}
	tp_settle_failed(n, i, ended);
	if (c->spec.restart == SV_RESTART_TEMPORARY) {
		stop_child(t, n, i);
		tp_child_done(t, n, i);
		return;
	}
	restart(t, n, i);
}

/* tp_child_done: see tree_internal.h. */
bool
tp_child_done(sv_tree *t, sv_tnode *n, uint32_t i)
{
	sv_tchild *c = &n->children[i];

	c->state   = SV_TCS_DONE;
	c->pending = false;
	if (!c->spec.significant
	    || n->spec.auto_shutdown == SV_AUTO_SHUTDOWN_NEVER) {
		return false;
	}
	if (n->spec.auto_shutdown == SV_AUTO_SHUTDOWN_ALL) {
		/* OTP: when the last active significant child ends; one the
		 * operator stopped or that stays failed is not active. */
		for (uint32_t j = 0; j < n->nchildren; j++) {
			const sv_tchild *s = &n->children[j];
			if (s->spec.significant
			    && (tp_live(s) || s->pending)) {
				return false;
			}
		}
	}
	tp_push(t, tp_act(SV_TACT_AUTO_SHUTDOWN, n));
	tp_stop_subtree(t, n);
	tp_set_state(t, n, SV_TNS_STOPPED);
	tp_push(t, tp_act(SV_TACT_NODE_STOPPED, n));
	tp_tell_parent(t, n, SV_TEV_CHILD_EXITED, i, false);
	return true;
}

/* tp_restart_due: see tree_internal.h. */
void
tp_restart_due(sv_tree *t, sv_tnode *n)
{
	tp_set_state(t, n, SV_TNS_RUNNING);
	for (uint32_t i = 0; i < n->nchildren; i++) {
		if (n->children[i].pending) {
			start_child(t, n, i, false);
		}
	}
}

/* tp_child_reset: see tree_internal.h. */
void
tp_child_reset(sv_tree *t, sv_tnode *n, uint32_t i)
{
	n->children[i].fast_failures = 0;
	start_child(t, n, i, false);
}

/* settle_slot records in a parent that is not running (stopped or
 * failed, so it decides nothing) what became of its child c. */
static void
settle_slot(sv_tchild *c, sv_tree_ev_kind ev)
{
	c->pending = false;
	c->state   = ev == SV_TEV_CHILD_EXITED ? SV_TCS_DONE
	      : ev == SV_TEV_CHILD_FAILED      ? SV_TCS_FAILED
	                                       : SV_TCS_STOPPED;
}

/* tp_tell_parent: see tree_internal.h. */
void
tp_tell_parent(sv_tree *t, sv_tnode *n, sv_tree_ev_kind ev, uint32_t cause,
    bool start_failure)
{
	sv_tnode      *p;
	sv_tree_action a;
	tree_arg       arg = {.child = n->index, .by_parent = false};

	if (n->parent == SV_TREE_NONE) {
		a = tp_act(SV_TACT_EXIT, n);
		if (ev == SV_TEV_CHILD_FAILED
		    && t->root_as.on_failure == SV_ON_FAILURE_ESCALATE) {
			a.status = start_failure ? SV_TREE_EXIT_START_FAILED
			                         : SV_TREE_EXIT_FAILED;
		} else if (ev == SV_TEV_CHILD_EXITED) {
			a.status = SV_TREE_EXIT_DONE;
		} else {
			return;
		}
		a.cause_node  = n->id;
		a.cause_child = cause;
		tp_push(t, a);
		return;
	}
	p = tp_node(t, n->parent);
	if (ev == SV_TEV_CHILD_FAILED
	    && p->children[n->index].spec.on_failure
	        == SV_ON_FAILURE_ESCALATE) {
		tp_push(t, tp_act(SV_TACT_ESCALATE, n));
	}
	if (p->state == SV_TNS_STOPPED || p->state == SV_TNS_FAILED) {
		settle_slot(&p->children[n->index], ev);
		return;
	}
	tree_fire_inner(t, p, ev, &arg);
}
