/*
 * tree.h — supervision trees (pure decision core, OTP's supervisors of
 * supervisors): a tree of supervisor nodes whose children are groups (an
 * opaque id the caller gives) or other nodes, and the decisions that follow
 * when a child fails, ends, starts or is stopped.
 *
 * What the tree decides and what it leaves to the group core. Inside a
 * group, sv_core (core/supervision.h) restarts workers, applies the
 * group's intensity and backoff and, when the group exceeds its intensity,
 * marks it failed and stops its workers. The tree takes over from there:
 * the shell reports that group's failure (SV_TEV_CHILD_FAILED) and the tree
 * decides what its node does. A node has a strategy over its children
 * (core/strategy.h), a restart intensity of its own (core/intensity.h),
 * a backoff for restarting a subtree (core/backoff.h), an auto_shutdown
 * and a start mode; each child, group or node, has a restart type
 * (sv_restart_type), an on_failure and a significant flag.
 *
 * Decisions are pure: sv_tree_event takes the tree, one event and the time
 * (now_ms; no clock is read) and answers a plan, an ordered list of
 * actions for the shell (start group, stop group, mark a group failed,
 * node started, stopped or failed, escalate, arm a restart timer, exit the
 * daemon). The shell carries the actions out in order, and a stop is a
 * barrier: the action after SV_TACT_STOP_GROUP starts once every worker of
 * that group has been reaped, so "stop in reverse order" is the order of
 * the actions. The tree's state is already the state after the plan.
 *
 * Every decision reserves its plan before it changes anything: it either
 * returns the whole plan or fails (SV_ENOMEM, or a refusal) with the tree
 * unchanged and an empty plan. A node's state changes only through one
 * table, node state x event -> handler, next states, doc
 * (core/tree_table.c; docs/supervision.md, "Supervision trees", shows it
 * and tests/test_tree_table_doc.c checks the two agree). Combinations that
 * cannot be served are rows that refuse with a typed error.
 *
 * The rules, in short (docs/supervision.md has them in full):
 *   - on_failure "stay": a failed child is marked failed and waits for a
 *     reset (SV_TEV_CHILD_RESET); its node carries on. The implicit root
 *     (sv_tree_create_implicit) gives every child "stay": today's flat
 *     supervisor exactly.
 *   - on_failure "escalate" (the default inside explicit nodes): the node
 *     counts the failure against its intensity and applies its strategy
 *     (one_for_one: that child; one_for_all: every child; rest_for_one:
 *     that child and those after it): the live children of the range stop
 *     in reverse order and start again in order, each from scratch, after
 *     the failed child's backoff delay (a restart timer when not 0). A
 *     temporary child is never restarted; a transient one only after a
 *     failure; a permanent one always, also after a normal end.
 *   - A node past its intensity stops its subtree in reverse order, fails
 *     (SV_TACT_NODE_FAILED) and fails as a child of its parent
 *     (SV_TACT_ESCALATE); a root whose own on_failure is escalate then
 *     exits the daemon with SV_TREE_EXIT_FAILED.
 *   - Significant children (transient or temporary only) and auto_shutdown
 *     (OTP 24): when any / the last active significant child ends (a
 *     transient one normally, a temporary one for any reason), the node
 *     stops its subtree and ends normally, which its parent sees as a
 *     normal end of that child; at the root the daemon exits 0.
 *   - Start: lenient (default) starts every child at once, in order;
 *     strict starts one child, waits for SV_TEV_CHILD_STARTED, then the
 *     next; a child that fails to start stops those already started in
 *     reverse order and fails the node (at the root, escalate:
 *     SV_TREE_EXIT_START_FAILED). Strategy restarts are lenient.
 *
 * Generations. Every child slot counts its starts: a group's first start
 * is generation 0, each later one adds 1 (SV_TACT_START_GROUP carries it),
 * and the shell's events about that group carry it back, so an event about
 * an incarnation that is gone is refused (SV_ECONFLICT). A node's
 * generation counts how often its subtree was restarted (SV_TACT_NODE_START
 * carries it; identity frames will name it).
 */
#ifndef SV_CORE_TREE_H
#define SV_CORE_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/backoff.h"
#include "core/strategy.h"
#include "core/supervision.h"
#include "supervise/supervise.h"

/* Bounds. Node levels from the root down, root included. */
#define SV_TREE_MAX_DEPTH 8
/* Children (groups and nodes) of one node. */
#define SV_TREE_MAX_CHILDREN 64
/* Nodes of one tree, root included. */
#define SV_TREE_MAX_NODES 64
/* Groups of one tree (as many as a group core may hold). */
#define SV_TREE_MAX_GROUPS SV_CORE_MAX_GROUPS
/* Length of a node name (1 .. this many of [A-Za-z0-9_.-], as a group's),
 * without the terminator. */
#define SV_TREE_NAME_MAX 64

/* Exit status of the daemon when a root with on_failure escalate fails
 * (EX_TEMPFAIL of sysexits.h: whatever runs the daemon should start it
 * again; nothing is left running to adopt). */
#define SV_TREE_EXIT_FAILED 75
/* Exit status when a strict root fails to start (EX_CONFIG: starting it
 * again as it is would fail the same way, unless the cause was
 * transient). */
#define SV_TREE_EXIT_START_FAILED 78
/* Exit status after a root's auto shutdown (the work is done). */
#define SV_TREE_EXIT_DONE 0

/* Node ids are indexes in creation order; the root is 0. */
#define SV_TREE_ROOT 0u
/* No node, no child (in actions). */
#define SV_TREE_NONE UINT32_MAX

/* What happens to a child that fails (or that its node gives up on). */
typedef enum sv_on_failure {
	SV_ON_FAILURE_ESCALATE
	= 0, /* its node decides (strategy, intensity) */
	SV_ON_FAILURE_STAY = 1, /* marked failed, waits for a reset */
} sv_on_failure;

/* When a node with significant children ends itself (OTP 24). */
typedef enum sv_auto_shutdown {
	SV_AUTO_SHUTDOWN_NEVER = 0,
	SV_AUTO_SHUTDOWN_ANY   = 1, /* any_significant */
	SV_AUTO_SHUTDOWN_ALL   = 2, /* all_significant */
} sv_auto_shutdown;

/* How a node starts its children (at boot and reset). */
typedef enum sv_start_mode {
	SV_START_LENIENT = 0, /* all at once, in order; no waiting */
	SV_START_STRICT  = 1, /* one by one; a failure rolls back */
} sv_start_mode;

/* A node's own settings. */
typedef struct sv_tree_node_spec {
	const char       *name; /* copied */
	sv_strategy       strategy;
	uint32_t          max_restarts; /* 0: unlimited */
	uint64_t          max_window_ms;
	sv_backoff_policy backoff; /* restarting a subtree (healthy_ms 0:
	                            * no delay) */
	sv_auto_shutdown auto_shutdown;
	sv_start_mode    start;
} sv_tree_node_spec;

/* How a child (group or node) sits in its node; for the root, how the
 * root itself is treated when it fails (only its on_failure counts in
 * this slice: its restart type is for a parent supervisor). */
typedef struct sv_tree_child_spec {
	sv_restart_type restart;
	sv_on_failure   on_failure;
	bool            significant; /* transient or temporary only */
} sv_tree_child_spec;

/* Node states (rows of the node table, core/tree_table.c). */
typedef enum sv_tree_state {
	SV_TNS_STOPPED    = 0, /* nothing of it runs: not started, or ended */
	SV_TNS_STARTING   = 1, /* strict start: waits for one child */
	SV_TNS_RUNNING    = 2,
	SV_TNS_RESTARTING = 3, /* a strategy restart waits for its timer */
	SV_TNS_FAILED     = 4, /* gave up; its subtree is stopped */
	SV_TNS_COUNT      = 5,
} sv_tree_state;

/* Events (columns of the node table). The CHILD_ ones from the shell name
 * a group by id and the generation of its start. */
typedef enum sv_tree_ev_kind {
	SV_TEV_BOOT               = 0, /* start a stopped or failed node */
	SV_TEV_STOP               = 1, /* stop a node's subtree (operator) */
	SV_TEV_RESET              = 2, /* start a failed node afresh */
	SV_TEV_TIMER              = 3, /* its restart timer fired (guard) */
	SV_TEV_CHILD_STARTED      = 4, /* a child is up (ready) */
	SV_TEV_CHILD_START_FAILED = 5, /* a child could not start */
	SV_TEV_CHILD_FAILED       = 6, /* a child exceeded its intensity */
	SV_TEV_CHILD_EXITED       = 7, /* a child ended normally */
	SV_TEV_CHILD_STOPPED      = 8, /* the operator stopped a child */
	SV_TEV_CHILD_RESET        = 9, /* the operator reset a failed group */
	SV_TEV_COUNT              = 10,
} sv_tree_ev_kind;

/* One event from the shell. */
typedef struct sv_tree_ev {
	sv_tree_ev_kind kind;
	uint32_t        node; /* BOOT, STOP, RESET, TIMER */
	uint64_t        guard; /* TIMER: the guard of its SV_TACT_TIMER */
	uint64_t        group; /* CHILD_*: the group's id */
	uint64_t        generation; /* CHILD_*: the group's generation */
} sv_tree_ev;

/* What the shell is to do, in order. */
typedef enum sv_tree_act_kind {
	SV_TACT_START_GROUP = 1, /* start group from scratch (fresh
	                          * intensity and backoff), generation */
	SV_TACT_STOP_GROUP = 2, /* stop its workers; a barrier */
	SV_TACT_FAIL_GROUP = 3, /* it stays failed until reset (today) */
	SV_TACT_NODE_START = 4, /* node (re)starts, generation; its
	                         * children's actions follow */
	SV_TACT_NODE_STOPPED  = 5, /* node's subtree stopped (normal) */
	SV_TACT_NODE_FAILED   = 6, /* node's subtree stopped; it failed */
	SV_TACT_ESCALATE      = 7, /* node's failure goes to its parent */
	SV_TACT_AUTO_SHUTDOWN = 8, /* node ends itself: significant
	                            * children ended (its stops follow) */
	SV_TACT_TIMER = 9, /* arm node's restart timer: due_ms, guard */
	SV_TACT_EXIT  = 10, /* the daemon exits with status, after
	                     * carrying out everything before */
} sv_tree_act_kind;

typedef struct sv_tree_action {
	sv_tree_act_kind kind;
	uint32_t         node; /* the node concerned, or the group's node */
	uint32_t         child; /* the group's or node's index in its
	                         * parent (SV_TREE_NONE: the root) */
	uint64_t group; /* *_GROUP */
	uint64_t generation; /* START_GROUP, NODE_START */
	uint32_t parent; /* ESCALATE */
	uint64_t due_ms; /* TIMER */
	uint64_t guard; /* TIMER */
	int      status; /* EXIT */
	uint32_t cause_node; /* EXIT: the child that caused it */
	uint32_t cause_child; /* (node, index), SV_TREE_NONE: none */
} sv_tree_action;

/* A plan: the caller's, reused from call to call. Zero it before first
 * use; sv_tree_event grows it (sv_mem_realloc); the caller frees it with
 * sv_tree_plan_fini. */
typedef struct sv_tree_plan {
	sv_tree_action *a;
	size_t          n;
	size_t          cap;
} sv_tree_plan;

/* A child's state as its node sees it. */
typedef enum sv_tree_cstate {
	SV_TCS_STOPPED = 0, /* not running: not started, stopped, or
	                     * waiting for a restart (pending) */
	SV_TCS_STARTING = 1, /* started; a strict start waits for it */
	SV_TCS_RUNNING  = 2,
	SV_TCS_FAILED   = 3, /* on_failure stay: waits for a reset */
	SV_TCS_DONE     = 4, /* ended and not restarted */
} sv_tree_cstate;

/* A child as a query shows it. */
typedef struct sv_tree_child_info {
	bool               is_node;
	uint64_t           id; /* group id, or node id */
	sv_tree_child_spec spec;
	sv_tree_cstate     state;
	bool               pending; /* a restart timer will start it */
	uint64_t           generation;
	uint32_t           fast_failures; /* the subtree's backoff history */
} sv_tree_child_info;

/* A node as a query shows it. */
typedef struct sv_tree_node_info {
	const char      *name; /* valid while the tree lives */
	uint32_t         parent; /* SV_TREE_NONE for the root */
	uint32_t         index; /* its position in its parent */
	uint32_t         depth; /* 0: the root */
	sv_tree_state    state;
	sv_strategy      strategy;
	sv_auto_shutdown auto_shutdown;
	sv_start_mode    start;
	uint64_t         generation;
	uint64_t         restarts; /* strategy restarts it carried out */
	uint32_t         intensity_used; /* restarts in the window at now */
	uint32_t         max_restarts;
	uint32_t         nchildren;
} sv_tree_node_info;

typedef struct sv_tree sv_tree;

/*
 * sv_tree_create makes a tree of one stopped root node; root_as says how
 * the root itself fails (on_failure escalate: the daemon exits). On SV_OK
 * *tp belongs to the caller: free it with sv_tree_destroy.
 * Errors: SV_EINVAL (bad name or spec), SV_ENOMEM.
 */
sv_err sv_tree_create(const sv_tree_node_spec *root,
    const sv_tree_child_spec *root_as, sv_tree **tp);

/*
 * sv_tree_create_implicit makes the root of a file without nodes: named
 * "root", the given strategy, no intensity limit, lenient, on_failure
 * stay for itself; add its groups with sv_tree_add_group and
 * sv_tree_implicit_child. Free with sv_tree_destroy. Errors: SV_ENOMEM.
 */
sv_err sv_tree_create_implicit(sv_strategy strategy, sv_tree **tp);

/* sv_tree_implicit_child: how a group sits in the implicit root
 * (permanent, on_failure stay, not significant). */
sv_tree_child_spec sv_tree_implicit_child(void);

/* sv_tree_destroy frees the tree. NULL is ignored. */
void sv_tree_destroy(sv_tree *t);

/*
 * sv_tree_add_node adds a stopped node (spec, name copied) as the last
 * child of parent, sitting there as `as`. A parent that runs does not
 * start it: SV_TEV_BOOT does. On SV_OK *nodep is its id.
 * Errors: SV_ENOTFOUND (no parent), SV_EINVAL (bad name, duplicate name,
 * bad spec, significant but permanent), SV_EEXHAUSTED (SV_TREE_MAX_DEPTH,
 * _CHILDREN or _NODES reached), SV_EBUSY (parent starting or restarting),
 * SV_ENOMEM. A node added to a failed node starts with its reset.
 */
sv_err sv_tree_add_node(sv_tree *t, uint32_t parent,
    const sv_tree_node_spec *spec, const sv_tree_child_spec *as,
    uint32_t *nodep);

/*
 * sv_tree_add_group adds group `group` (an id the caller chooses, unique
 * in the tree) as the last child of node. Under a running node it counts
 * as started (generation 0: the caller starts it, as today's groups);
 * under a stopped one it starts with the node.
 * Errors: SV_ENOTFOUND (no node), SV_EINVAL (duplicate id, significant
 * but permanent), SV_EEXHAUSTED (SV_TREE_MAX_CHILDREN or
 * SV_TREE_MAX_GROUPS reached), SV_EBUSY (node starting or restarting),
 * SV_ENOMEM.
 */
sv_err sv_tree_add_group(
    sv_tree *t, uint32_t node, uint64_t group, const sv_tree_child_spec *as);

/*
 * sv_tree_event decides what follows ev at now_ms: *plan (the caller's,
 * not NULL; emptied first) receives the actions, the tree moves to the
 * state after them.
 * Errors, with the tree unchanged and the plan empty: SV_ENOTFOUND (no
 * such node or group), SV_EINVAL (a CHILD_RESET of a node child: reset the
 * node), SV_ECONFLICT (stale: a generation or guard that is not the
 * current one, or a child not in a state the event is about), SV_EBUSY
 * (the node table refuses the event in the node's state), SV_ENOMEM.
 */
sv_err sv_tree_event(
    sv_tree *t, const sv_tree_ev *ev, uint64_t now_ms, sv_tree_plan *plan);

/* sv_tree_plan_fini frees a plan's buffer. Idempotent. */
void sv_tree_plan_fini(sv_tree_plan *plan);

/* sv_tree_nnodes returns the number of nodes (ids 0 .. n-1). */
uint32_t sv_tree_nnodes(const sv_tree *t);

/* sv_tree_node_named finds a node by name; false if none. */
bool sv_tree_node_named(const sv_tree *t, const char *name, uint32_t *nodep);

/* sv_tree_group_at finds the node and index of group; false if none. */
bool sv_tree_group_at(
    const sv_tree *t, uint64_t group, uint32_t *nodep, uint32_t *indexp);

/* sv_tree_node_get fills *out for node at now_ms (the intensity window).
 * Errors: SV_ENOTFOUND. */
sv_err sv_tree_node_get(
    sv_tree *t, uint32_t node, uint64_t now_ms, sv_tree_node_info *out);

/* sv_tree_child_get fills *out for child index of node.
 * Errors: SV_ENOTFOUND. */
sv_err sv_tree_child_get(
    const sv_tree *t, uint32_t node, uint32_t index, sv_tree_child_info *out);

/* sv_tree_misfires counts internal events no cell took and handlers that
 * left a state their cell does not name: always 0 unless a rule is
 * broken (the tests require 0). */
uint64_t sv_tree_misfires(const sv_tree *t);

/* Names for logs, events and docs ("?" when unknown). */
const char *sv_tree_state_name(sv_tree_state s);
const char *sv_tree_ev_name(sv_tree_ev_kind k);
const char *sv_tree_act_name(sv_tree_act_kind k);
const char *sv_tree_cstate_name(sv_tree_cstate s);
const char *sv_on_failure_name(sv_on_failure f);
const char *sv_auto_shutdown_name(sv_auto_shutdown a);
const char *sv_start_mode_name(sv_start_mode m);

#endif /* SV_CORE_TREE_H */
