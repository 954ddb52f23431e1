/*
 * tree_internal.h — the private records of the supervision tree and the
 * helpers its files share (not part of the API; only tree.c, tree_plan.c
 * and tree_table.c include it, and the tests that look inside).
 *
 * The tree is split by concept: tree.c (the records, building the tree,
 * queries, and sv_tree_event: validation, plan reservation, dispatch),
 * tree_table.c (the node state machine: node state x event -> handler,
 * next states, doc, and the one function that moves a node), tree_plan.c
 * (the decisions the handlers share: starting and stopping children and
 * subtrees, the strategy restart, giving up, auto shutdown, telling the
 * parent, and appending actions to the plan).
 *
 * A node's state changes only inside tree_fire (through a cell's handler;
 * tree_plan.c's helpers set it on the handler's behalf). Children of a
 * node sit in an array in start order; a node child names its node by id.
 */
#ifndef SV_CORE_TREE_INTERNAL_H
#define SV_CORE_TREE_INTERNAL_H

#include "core/intensity.h"
#include "core/tree.h"

/* Kinds of child. */
enum { TK_GROUP = 0, TK_NODE = 1 };

/* One child of a node. */
typedef struct sv_tchild {
	uint64_t           id; /* group id, or node id */
	uint64_t           generation; /* of its latest start */
	uint64_t           started_ms; /* latest start or CHILD_STARTED */
	uint32_t           fast_failures; /* backoff history (backoff.h) */
	uint8_t            kind; /* TK_GROUP or TK_NODE */
	uint8_t            state; /* an sv_tree_cstate */
	bool               started_once; /* its next start is generation+1 */
	bool               pending; /* the restart timer will start it */
	sv_tree_child_spec spec;
} sv_tchild;

/* One node. */
typedef struct sv_tnode {
	char              name[SV_TREE_NAME_MAX + 1];
	uint32_t          id;
	uint32_t          parent; /* SV_TREE_NONE for the root */
	uint32_t          index; /* position in its parent */
	uint32_t          depth; /* 0: the root */
	sv_tree_node_spec spec; /* spec.name points at name */
	uint8_t           state; /* an sv_tree_state: tree_table.c only */
	sv_intensity      intensity;
	sv_tchild        *children; /* [nchildren], start order; owned */
	uint32_t          nchildren;
	uint32_t          cap;
	uint32_t          cursor; /* strict start: the child awaited */
	uint64_t          generation;
	bool              started_once;
	uint64_t          restarts;
	uint64_t          due_ms; /* restart timer, while restarting */
	uint64_t          guard; /* its guard (0: none armed) */
	const struct tree_cell *firing; /* the cell whose handler runs on it */
} sv_tnode;

struct sv_tree {
	sv_tnode          *nodes[SV_TREE_MAX_NODES]; /* [nnodes]; owned */
	uint32_t           nnodes;
	uint32_t           ngroups;
	sv_tree_child_spec root_as; /* how the root itself fails */
	uint64_t           guards; /* source of timer guards */
	uint64_t           misfires; /* see sv_tree_misfires */
	/* During one decision: */
	sv_tree_plan *plan; /* reserved by sv_tree_event */
	uint64_t      now_ms;
};

/* The details an event carries inside the tree. */
typedef struct tree_arg {
	uint32_t child; /* CHILD_*: index of the child in the node */
	bool     by_parent; /* BOOT, STOP: the parent asks (it updates its
	                     * own slot; the node does not tell it) */
} tree_arg;

/* ---- tree_table.c ---- */

/* A handler carries out a cell. */
typedef void (*tree_handler)(sv_tree *t, sv_tnode *n, const tree_arg *a);

/* One cell: a handler, or a refusal (refuse != SV_OK, handler NULL). */
typedef struct tree_cell {
	tree_handler handler;
	unsigned     next; /* mask of the states it may leave the node in */
	sv_err       refuse;
	const char  *name; /* the handler's name, for the docs */
	const char  *doc; /* one line: what happens */
} tree_cell;

/* tree_cell_at returns the cell of (state, ev) (NULL if out of range). */
const tree_cell *tree_cell_at(sv_tree_state st, sv_tree_ev_kind ev);

/* tree_fire runs the cell of (n's state, ev): a refusal changes nothing
 * and is returned; a handler runs, and a state it leaves n in that the
 * cell does not name counts as a misfire. */
sv_err tree_fire(
    sv_tree *t, sv_tnode *n, sv_tree_ev_kind ev, const tree_arg *a);

/* tree_fire_inner fires an event the tree itself raises (to a parent, or
 * to a child node); a refusal there is a broken rule: a misfire. */
void tree_fire_inner(
    sv_tree *t, sv_tnode *n, sv_tree_ev_kind ev, const tree_arg *a);

/* tp_set_state moves n to st: only a handler of a cell firing on n may,
 * and only to a state the cell names (else a misfire). Leaving RESTARTING
 * disarms the restart timer (its guard goes stale). */
void tp_set_state(sv_tree *t, sv_tnode *n, sv_tree_state st);

/* One-line meaning of a state or event, for the docs. */
const char *tree_state_doc(sv_tree_state s);
const char *tree_ev_doc(sv_tree_ev_kind k);

/* ---- tree_plan.c ---- */

/* tp_bound bounds the actions one decision can append. */
size_t tp_bound(const sv_tree *t);

/* tp_push appends an action to the plan (reserved: never fails; past
 * the reservation it is a misfire and dropped, which the tests catch). */
void tp_push(sv_tree *t, sv_tree_action a);

/* tp_act makes an action about node n (child: its index in its parent,
 * parent: its parent); tp_act_group one about group child i of n. */
sv_tree_action tp_act(sv_tree_act_kind kind, const sv_tnode *n);
sv_tree_action tp_act_group(
    sv_tree_act_kind kind, const sv_tnode *n, uint32_t i);

/* tp_node returns node id's record. */
sv_tnode *tp_node(const sv_tree *t, uint32_t id);

/* tp_live tells whether a child runs or is starting. */
bool tp_live(const sv_tchild *c);

/* tp_boot starts n afresh: fresh intensity and history, next generation,
 * NODE_START, then its children in order (lenient: all, RUNNING; strict:
 * one by one, STARTING until each reported). */
void tp_boot(sv_tree *t, sv_tnode *n);

/* tp_strict_advance starts children from n->cursor on while they come up
 * at once; RUNNING (and the parent told) once none is left. */
void tp_strict_advance(sv_tree *t, sv_tnode *n);

/* tp_settle_failed: child i of n failed (or ended, ended true): a node
 * child, or a group that ended, has nothing left to stop (STOPPED); a
 * failed group stays live so that it stops in its place in the order. */
void tp_settle_failed(sv_tnode *n, uint32_t i, bool ended);

/* tp_stop_subtree stops n's live children in reverse order, clears any
 * pending restart; the caller then sets n's state. */
void tp_stop_subtree(sv_tree *t, sv_tnode *n);

/* tp_give_up: n stops its subtree and fails (NODE_FAILED), then its
 * parent is told (or, at the root, the daemon exits when the root
 * escalates; status by start_failure). Cause: n's child index. */
void tp_give_up(sv_tree *t, sv_tnode *n, uint32_t cause, bool start_failure);

/* tp_child_failed: child i of running or restarting n failed (or a
 * permanent one ended, ended true): stay, not restarted, or restarted by
 * the strategy. */
void tp_child_failed(sv_tree *t, sv_tnode *n, uint32_t i, bool ended);

/* tp_child_done: child i of n ended and is not restarted; n ends itself
 * if auto_shutdown says so (returns true then). */
bool tp_child_done(sv_tree *t, sv_tnode *n, uint32_t i);

/* tp_restart_due: the restart timer fired: the pending children start in
 * order; RUNNING. */
void tp_restart_due(sv_tree *t, sv_tnode *n);

/* tp_child_reset: failed group i of n starts from scratch. */
void tp_child_reset(sv_tree *t, sv_tnode *n, uint32_t i);

/* tp_tell_parent tells n's parent what became of n (CHILD_STARTED,
 * _FAILED, _EXITED, _STOPPED); at the root, what the daemon does. */
void tp_tell_parent(sv_tree *t, sv_tnode *n, sv_tree_ev_kind ev,
    uint32_t cause, bool start_failure);

#endif
