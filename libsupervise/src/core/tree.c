/*
 * tree.c — the supervision tree's records and its entry points (rules in
 * core/tree.h): building a tree of nodes and groups within its bounds,
 * queries, and sv_tree_event, which validates an event, reserves the whole
 * plan and only then hands the event to the node table
 * (core/tree_table.c), so that a decision either is carried out whole or
 * changes nothing.
 *
 * Memory: a tree owns its nodes (one allocation each, with the intensity
 * ring and the children array), all freed by sv_tree_destroy; a plan's
 * buffer is the caller's, grown here and freed by sv_tree_plan_fini.
 * Every allocation goes through core/alloc.h so that tests can fail one.
 */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/tree_internal.h"

/* name_ok says whether s is 1 .. SV_TREE_NAME_MAX of [A-Za-z0-9_.-]. */
static bool
name_ok(const char *s)
{
	size_t n;

	if (s == NULL || (n = strnlen(s, SV_TREE_NAME_MAX + 1)) == 0
	    || n > SV_TREE_NAME_MAX) {
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		        || (c >= '0' && c <= '9') || c == '_' || c == '-'
		        || c == '.')) {
			return false;
		}
	}
	return true;
}

/* node_spec_ok checks the enums and the backoff of a node's spec (the
 * intensity is checked by sv_intensity_init). */
static bool
node_spec_ok(const sv_tree_node_spec *s)
{
	return s != NULL && name_ok(s->name)
	    && (unsigned) s->strategy <= SV_STRATEGY_REST_FOR_ONE
	    && (unsigned) s->auto_shutdown <= SV_AUTO_SHUTDOWN_ALL
	    && (unsigned) s->start <= SV_START_STRICT
	    && (s->backoff.healthy_ms == 0
	        || (s->backoff.factor >= 1.0
	            && s->backoff.factor <= SV_BACKOFF_MAX_FACTOR));
}

/* child_spec_ok checks how a child sits: enums in range, and only a
 * transient or temporary child may be significant (OTP). */
static bool
child_spec_ok(const sv_tree_child_spec *c)
{
	return c != NULL && (unsigned) c->restart <= SV_RESTART_TEMPORARY
	    && (unsigned) c->on_failure <= SV_ON_FAILURE_STAY
	    && !(c->significant && c->restart == SV_RESTART_PERMANENT);
}

/* node_new allocates a stopped node from spec (who frees: node_free, by
 * sv_tree_destroy). Errors: SV_EINVAL (intensity), SV_ENOMEM. */
static sv_err
node_new(const sv_tree_node_spec *spec, uint32_t id, sv_tnode **np)
{
	sv_tnode *n = sv_mem_calloc(1, sizeof(*n));
	sv_err    err;

	if (n == NULL) {
		return SV_ENOMEM;
	}
	err = sv_intensity_init(
	    &n->intensity, spec->max_restarts, spec->max_window_ms);
	if (err != SV_OK) {
		sv_intensity_fini(&n->intensity);
		free(n);
		return err;
	}
	memcpy(n->name, spec->name, strlen(spec->name) + 1);
	n->id        = id;
	n->parent    = SV_TREE_NONE;
	n->spec      = *spec;
	n->spec.name = n->name;
	n->state     = SV_TNS_STOPPED;
	*np          = n;
	return SV_OK;
}

/* node_free frees a node and what it owns. NULL is ignored. */
static void
node_free(sv_tnode *n)
{
	if (n != NULL) {
		sv_intensity_fini(&n->intensity);
		free(n->children);
		free(n);
	}
}

/* sv_tree_create: see tree.h. */
sv_err
sv_tree_create(const sv_tree_node_spec *root,
    const sv_tree_child_spec *root_as, sv_tree **tp)
{
	sv_tree *t;
	sv_err   err;

	*tp = NULL;
	if (!node_spec_ok(root) || !child_spec_ok(root_as)) {
		return SV_EINVAL;
	}
	if ((t = sv_mem_calloc(1, sizeof(*t))) == NULL) {
		return SV_ENOMEM;
	}
	if ((err = node_new(root, SV_TREE_ROOT, &t->nodes[0])) != SV_OK) {
		free(t);
		return err;
	}
	t->nnodes  = 1;
	t->root_as = *root_as;
	*tp        = t;
	return SV_OK;
}

/* sv_tree_implicit_child: see tree.h. */
sv_tree_child_spec
sv_tree_implicit_child(void)
{
	return (sv_tree_child_spec) {
	    .restart = SV_RESTART_PERMANENT, .on_failure = SV_ON_FAILURE_STAY};
}

/* sv_tree_create_implicit: see tree.h. */
sv_err
sv_tree_create_implicit(sv_strategy strategy, sv_tree **tp)
{
	sv_tree_node_spec  root = {.name = "root", .strategy = strategy};
	sv_tree_child_spec as   = sv_tree_implicit_child();

	return sv_tree_create(&root, &as, tp);
}

/* sv_tree_destroy: see tree.h. */
void
sv_tree_destroy(sv_tree *t)
{
	if (t == NULL) {
		return;
	}
	for (uint32_t i = 0; i < t->nnodes; i++) {
		node_free(t->nodes[i]);
	}
	free(t);
}

/* children_reserve makes room for one more child of n (the array grows
 * geometrically up to SV_TREE_MAX_CHILDREN; freed with the node).
 * Errors: SV_ENOMEM (n unchanged). */
static sv_err
children_reserve(sv_tnode *n)
{
	sv_tchild *c;
	uint32_t   cap;

	if (n->nchildren < n->cap) {
		return SV_OK;
	}
	cap = n->cap == 0 ? 4 : n->cap * 2;
	if (cap > SV_TREE_MAX_CHILDREN) {
		cap = SV_TREE_MAX_CHILDREN;
	}
	if ((c = sv_mem_realloc(n->children, cap * sizeof(*c))) == NULL) {
		return SV_ENOMEM;
	}
	n->children = c;
	n->cap      = cap;
	return SV_OK;
}

/* parent_for_add finds node id and says whether a child may be added to
 * it now. */
static sv_err
parent_for_add(const sv_tree *t, uint32_t id, sv_tnode **np)
{
	sv_tnode *n = tp_node(t, id);

	if (n == NULL) {
		return SV_ENOTFOUND;
	}
	if (n->state == SV_TNS_STARTING || n->state == SV_TNS_RESTARTING) {
		return SV_EBUSY;
	}
	if (n->nchildren >= SV_TREE_MAX_CHILDREN) {
		return SV_EEXHAUSTED;
	}
	*np = n;
	return SV_OK;
}

/* sv_tree_add_node: see tree.h. */
sv_err
sv_tree_add_node(sv_tree *t, uint32_t parent, const sv_tree_node_spec *spec,
    const sv_tree_child_spec *as, uint32_t *nodep)
{
	sv_tnode *p, *n;
	uint32_t  dup;
	sv_err    err;

	if ((err = parent_for_add(t, parent, &p)) != SV_OK) {
		return err;
	}
	if (!node_spec_ok(spec) || !child_spec_ok(as)
	    || sv_tree_node_named(t, spec->name, &dup)) {
		return SV_EINVAL;
	}
	if (p->depth + 1 >= SV_TREE_MAX_DEPTH
	    || t->nnodes >= SV_TREE_MAX_NODES) {
		return SV_EEXHAUSTED;
	}
	if ((err = children_reserve(p)) != SV_OK
	    || (err = node_new(spec, t->nnodes, &n)) != SV_OK) {
		return err;
	}
	n->parent                   = p->id;
	n->index                    = p->nchildren;
	n->depth                    = p->depth + 1;
	t->nodes[t->nnodes++]       = n;
	p->children[p->nchildren++] = (sv_tchild) {.id = n->id,
	    .kind                                      = TK_NODE,
	    .state                                     = SV_TCS_STOPPED,
	    .spec                                      = *as};
	*nodep                      = n->id;
	return SV_OK;
}

/* sv_tree_add_group: see tree.h. */
sv_err
sv_tree_add_group(
    sv_tree *t, uint32_t node, uint64_t group, const sv_tree_child_spec *as)
{
	sv_tnode *n;
	uint32_t  dn, di;
	sv_err    err;
	bool      runs;

	if ((err = parent_for_add(t, node, &n)) != SV_OK) {
		return err;
	}
	if (!child_spec_ok(as) || sv_tree_group_at(t, group, &dn, &di)) {
		return SV_EINVAL;
	}
	if (t->ngroups >= SV_TREE_MAX_GROUPS) {
		return SV_EEXHAUSTED;
	}
	if ((err = children_reserve(n)) != SV_OK) {
		return err;
	}
	runs                        = n->state == SV_TNS_RUNNING;
	n->children[n->nchildren++] = (sv_tchild) {.id = group,
	    .kind                                      = TK_GROUP,
	    .state        = runs ? SV_TCS_RUNNING : SV_TCS_STOPPED,
	    .started_once = runs,
	    .spec         = *as};
	t->ngroups++;
	return SV_OK;
}

/* plan_reserve makes room for the longest plan the tree can produce now
 * (the buffer is the caller's: sv_tree_plan_fini frees it).
 * Errors: SV_ENOMEM (the plan as it was). */
static sv_err
plan_reserve(sv_tree_plan *p, size_t need)
{
	sv_tree_action *a;

	if (p->cap >= need) {
		return SV_OK;
	}
	if ((a = sv_mem_realloc(p->a, need * sizeof(*a))) == NULL) {
		return SV_ENOMEM;
	}
	p->a   = a;
	p->cap = need;
	return SV_OK;
}

/* child_check says whether child c may take external event kind with the
 * generation the shell names: a stale generation, or a child not in a
 * state the event is about, is a conflict. */
static sv_err
child_check(const sv_tchild *c, sv_tree_ev_kind kind, uint64_t generation)
{
	if (c->generation != generation) {
		return SV_ECONFLICT;
	}
	switch (kind) {
	case SV_TEV_CHILD_STOPPED:
		return tp_live(c) || c->state == SV_TCS_FAILED ? SV_OK
		                                               : SV_ECONFLICT;
	case SV_TEV_CHILD_RESET:
		return c->state == SV_TCS_FAILED ? SV_OK : SV_ECONFLICT;
	default:
		return tp_live(c) ? SV_OK : SV_ECONFLICT;
	}
}

/* event_target finds the node ev is about (and, for a child event, the
 * child's index) and checks what the table cannot see: a stale guard,
 * generation or child state, a non-root boot or reset under a parent
 * that does not run. */
static sv_err
event_target(
    const sv_tree *t, const sv_tree_ev *ev, sv_tnode **np, tree_arg *arg)
{
	const tree_cell *cell;
	sv_tnode        *n, *p;
	uint32_t         id, index = SV_TREE_NONE;

	if ((unsigned) ev->kind >= SV_TEV_COUNT) {
		return SV_EINVAL;
	}
	if (ev->kind >= SV_TEV_CHILD_STARTED) {
		if (!sv_tree_group_at(t, ev->group, &id, &index)) {
			return SV_ENOTFOUND;
		}
	} else {
		id = ev->node;
	}
	if ((n = tp_node(t, id)) == NULL) {
		return SV_ENOTFOUND;
	}
	cell = tree_cell_at((sv_tree_state) n->state, ev->kind);
	if (cell->handler == NULL) {
		return cell->refuse;
	}
	if (ev->kind == SV_TEV_TIMER && ev->guard != n->guard) {
		return SV_ECONFLICT;
	}
	if ((ev->kind == SV_TEV_BOOT || ev->kind == SV_TEV_RESET)
	    && (p = tp_node(t, n->parent)) != NULL
	    && p->state != SV_TNS_RUNNING && p->state != SV_TNS_RESTARTING) {
		return SV_EBUSY;
	}
	if (index != SV_TREE_NONE) {
		sv_err err = child_check(
		    &n->children[index], ev->kind, ev->generation);
		if (err != SV_OK) {
			return err;
		}
	}
	*np  = n;
	*arg = (tree_arg) {.child = index, .by_parent = false};
	return SV_OK;
}

/* sv_tree_event: see tree.h. */
sv_err
sv_tree_event(
    sv_tree *t, const sv_tree_ev *ev, uint64_t now_ms, sv_tree_plan *plan)
{
	sv_tnode *n = NULL;
	tree_arg  arg;
	sv_err    err;

	plan->n = 0;
	if ((err = event_target(t, ev, &n, &arg)) != SV_OK
	    || (err = plan_reserve(plan, tp_bound(t))) != SV_OK) {
		return err;
	}
	t->plan   = plan;
	t->now_ms = now_ms;
	err       = tree_fire(t, n, ev->kind, &arg);
	t->plan   = NULL;
	return err;
}

/* sv_tree_plan_fini: see tree.h. */
void
sv_tree_plan_fini(sv_tree_plan *plan)
{
	free(plan->a);
	*plan = (sv_tree_plan) {0};
}

/* sv_tree_nnodes: see tree.h. */
uint32_t
sv_tree_nnodes(const sv_tree *t)
{
	return t->nnodes;
}

/* sv_tree_node_named: see tree.h. */
bool
sv_tree_node_named(const sv_tree *t, const char *name, uint32_t *nodep)
{
	for (uint32_t i = 0; i < t->nnodes; i++) {
		if (strcmp(t->nodes[i]->name, name) == 0) {
			*nodep = i;
			return true;
		}
	}
	return false;
}

/* sv_tree_group_at: see tree.h. */
bool
sv_tree_group_at(
    const sv_tree *t, uint64_t group, uint32_t *nodep, uint32_t *indexp)
{
	for (uint32_t i = 0; i < t->nnodes; i++) {
		const sv_tnode *n = t->nodes[i];
		for (uint32_t j = 0; j < n->nchildren; j++) {
			if (n->children[j].kind == TK_GROUP
			    && n->children[j].id == group) {
				*nodep  = i;
				*indexp = j;
				return true;
			}
		}
	}
	return false;
}

/* sv_tree_node_get: see tree.h. */
sv_err
sv_tree_node_get(
    sv_tree *t, uint32_t node, uint64_t now_ms, sv_tree_node_info *out)
{
	sv_tnode *n = tp_node(t, node);

	if (n == NULL) {
		return SV_ENOTFOUND;
	}
	*out = (sv_tree_node_info) {
	    .name           = n->name,
	    .parent         = n->parent,
	    .index          = n->parent == SV_TREE_NONE ? 0 : n->index,
	    .depth          = n->depth,
	    .state          = (sv_tree_state) n->state,
	    .strategy       = n->spec.strategy,
	    .auto_shutdown  = n->spec.auto_shutdown,
	    .start          = n->spec.start,
	    .generation     = n->generation,
	    .restarts       = n->restarts,
	    .intensity_used = sv_intensity_count(&n->intensity, now_ms),
	    .max_restarts   = n->spec.max_restarts,
	    .nchildren      = n->nchildren,
	};
	return SV_OK;
}

/* sv_tree_child_get: see tree.h. */
sv_err
sv_tree_child_get(
    const sv_tree *t, uint32_t node, uint32_t index, sv_tree_child_info *out)
{
	const sv_tnode  *n = tp_node(t, node);
	const sv_tchild *c;

	if (n == NULL || index >= n->nchildren) {
		return SV_ENOTFOUND;
	}
	c    = &n->children[index];
	*out = (sv_tree_child_info) {
	    .is_node       = c->kind == TK_NODE,
	    .id            = c->id,
	    .spec          = c->spec,
	    .state         = (sv_tree_cstate) c->state,
	    .pending       = c->pending,
	    .generation    = c->generation,
	    .fast_failures = c->fast_failures,
	};
	return SV_OK;
}

/* sv_tree_misfires: see tree.h. */
uint64_t
sv_tree_misfires(const sv_tree *t)
{
	return t->misfires;
}

/* name_of returns names[i] of a table of n names, "?" past it. */
static const char *
name_of(const char *const *names, size_t n, unsigned i)
{
	return i < n && names[i] != NULL ? names[i] : "?";
}

/* NAME_OF(names, i): name_of over a static array of names. */
#define NAME_OF(names, i) \
	name_of((names), sizeof(names) / sizeof((names)[0]), (unsigned) (i))

/* sv_tree_act_name names an action kind ("start_group", ...). */
const char *
sv_tree_act_name(sv_tree_act_kind k)
{
	static const char *const names[] = {NULL, "start_group", "stop_group",
	    "fail_group", "node_start", "node_stopped", "node_failed",
	    "escalate", "auto_shutdown", "timer", "exit"};

	return NAME_OF(names, k);
}

/* sv_tree_cstate_name names a child state ("running", ...). */
const char *
sv_tree_cstate_name(sv_tree_cstate s)
{
	static const char *const names[]
	    = {"stopped", "starting", "running", "failed", "done"};

	return NAME_OF(names, s);
}

/* sv_on_failure_name: "escalate" or "stay". */
const char *
sv_on_failure_name(sv_on_failure f)
{
	static const char *const names[] = {"escalate", "stay"};

	return NAME_OF(names, f);
}

/* sv_auto_shutdown_name: "never", "any_significant", "all_significant". */
const char *
sv_auto_shutdown_name(sv_auto_shutdown a)
{
	static const char *const names[]
	    = {"never", "any_significant", "all_significant"};

	return NAME_OF(names, a);
}

/* sv_start_mode_name: "lenient" or "strict". */
const char *
sv_start_mode_name(sv_start_mode m)
{
	static const char *const names[] = {"lenient", "strict"};

	return NAME_OF(names, m);
}
