/*
 * tree_fixture.h — the fake shell of the supervision tree's tests
 * (test_tree.c, test_tree_faults.c): a tree, a plan, a fake clock, and
 * helpers that send one event and write the plan as one line ("stop g2,
 * stop g1, start g1#1, ...": groups are g<id>, #n a generation, @t a
 * timer's due time) so that a test compares the exact ordered list of
 * actions. Every decision must leave the tree's misfire count at 0.
 * One translation unit per test: the helpers are static.
 */
#ifndef SV_TESTS_TREE_FIXTURE_H
#define SV_TESTS_TREE_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/tree.h"

/* ---- the fixture ---------------------------------------------------------
 */

typedef struct fx {
	sv_tree     *t;
	sv_tree_plan plan;
	uint64_t     now;
	char         out[8192]; /* the last plan, as one line */
	uint64_t     guard[SV_TREE_MAX_NODES]; /* last TIMER per node */
} fx;

/* node_id finds a node by name (fails the test if none). */
static inline uint32_t
node_id(const fx *f, const char *name)
{
	uint32_t id;

	assert_true(sv_tree_node_named(f->t, name, &id));
	return id;
}

/* node_name names node id. */
static inline const char *
node_name(fx *f, uint32_t id)
{
	sv_tree_node_info in;

	assert_int_equal(sv_tree_node_get(f->t, id, f->now, &in), SV_OK);
	return in.name;
}

/* format writes f->plan into f->out as one line and remembers guards. */
static inline void
format(fx *f)
{
	size_t n = 0;

	f->out[0] = '\0';
	for (size_t i = 0; i < f->plan.n; i++) {
		const sv_tree_action *a = &f->plan.a[i];
		char                  one[128];
		switch (a->kind) {
		case SV_TACT_START_GROUP:
			snprintf(one, sizeof(one), "start g%llu#%llu",
			    (unsigned long long) a->group,
			    (unsigned long long) a->generation);
			break;
		case SV_TACT_STOP_GROUP:
		case SV_TACT_FAIL_GROUP:
			snprintf(one, sizeof(one), "%s g%llu",
			    a->kind == SV_TACT_STOP_GROUP ? "stop" : "fail",
			    (unsigned long long) a->group);
			break;
		case SV_TACT_NODE_START:
			snprintf(one, sizeof(one), "node_start %s#%llu",
			    node_name(f, a->node),
			    (unsigned long long) a->generation);
			break;
		case SV_TACT_ESCALATE:
			snprintf(one, sizeof(one), "escalate %s>%s",
			    node_name(f, a->node), node_name(f, a->parent));
			break;
		case SV_TACT_TIMER:
			snprintf(one, sizeof(one), "timer %s@%llu",
			    node_name(f, a->node),
			    (unsigned long long) a->due_ms);
			f->guard[a->node] = a->guard;
			break;
		case SV_TACT_EXIT:
			snprintf(one, sizeof(one), "exit %d", a->status);
			break;
		default:
			snprintf(one, sizeof(one), "%s %s",
			    sv_tree_act_name(a->kind), node_name(f, a->node));
			break;
		}
		n += (size_t) snprintf(f->out + n, sizeof(f->out) - n, "%s%s",
		    i > 0 ? ", " : "", one);
		assert_true(n < sizeof(f->out));
	}
}

/* fire sends ev at f->now; the plan goes to f->out. */
static inline sv_err
fire(fx *f, sv_tree_ev ev)
{
	sv_err err = sv_tree_event(f->t, &ev, f->now, &f->plan);

	if (err != SV_OK) {
		assert_int_equal(f->plan.n, 0);
	}
	format(f);
	assert_int_equal(sv_tree_misfires(f->t), 0);
	return err;
}

/* node_ev sends node event k to node `name`; expects SV_OK. */
static inline const char *
node_ev(fx *f, sv_tree_ev_kind k, const char *name)
{
	sv_tree_ev ev = {.kind = k, .node = node_id(f, name)};

	if (k == SV_TEV_TIMER) {
		ev.guard = f->guard[ev.node];
	}
	assert_int_equal(fire(f, ev), SV_OK);
	return f->out;
}

/* group_gen returns the current generation of group g. */
static inline uint64_t
group_gen(const fx *f, uint64_t g)
{
	sv_tree_child_info ci;
	uint32_t           node, index;

	assert_true(sv_tree_group_at(f->t, g, &node, &index));
	assert_int_equal(sv_tree_child_get(f->t, node, index, &ci), SV_OK);
	return ci.generation;
}

/* child_err sends child event k about group g (current generation). */
static inline sv_err
child_err(fx *f, sv_tree_ev_kind k, uint64_t g)
{
	sv_tree_ev ev = {.kind = k, .group = g, .generation = group_gen(f, g)};

	return fire(f, ev);
}

/* child_ev is child_err expecting SV_OK; returns the plan's line. */
static inline const char *
child_ev(fx *f, sv_tree_ev_kind k, uint64_t g)
{
	assert_int_equal(child_err(f, k, g), SV_OK);
	return f->out;
}

/* node_state returns the state of node `name`. */
static inline sv_tree_state
node_state(fx *f, const char *name)
{
	sv_tree_node_info in;

	assert_int_equal(
	    sv_tree_node_get(f->t, node_id(f, name), f->now, &in), SV_OK);
	return in.state;
}

/* group_state returns the state of group g in its node. */
static inline sv_tree_cstate
group_state(const fx *f, uint64_t g)
{
	sv_tree_child_info ci;
	uint32_t           node, index;

	assert_true(sv_tree_group_at(f->t, g, &node, &index));
	assert_int_equal(sv_tree_child_get(f->t, node, index, &ci), SV_OK);
	return ci.state;
}

/* spec makes a node spec: no backoff, never auto shutdown, lenient. */
static inline sv_tree_node_spec
spec(const char *name, sv_strategy s, uint32_t max, uint64_t window)
{
	return (sv_tree_node_spec) {.name = name,
	    .strategy                     = s,
	    .max_restarts                 = max,
	    .max_window_ms                = window};
}

/* as makes a child spec. */
static inline sv_tree_child_spec
as(sv_restart_type r, sv_on_failure f, bool significant)
{
	return (sv_tree_child_spec) {
	    .restart = r, .on_failure = f, .significant = significant};
}

/* The usual child: permanent, escalates, not significant. */
#define ESC as(SV_RESTART_PERMANENT, SV_ON_FAILURE_ESCALATE, false)

/* make creates the tree with root spec r (root_as: how the root fails). */
static inline void
make(fx *f, sv_tree_node_spec r, sv_tree_child_spec root_as)
{
	*f = (fx) {0};
	assert_int_equal(sv_tree_create(&r, &root_as, &f->t), SV_OK);
}

/* add_node adds node spec s under `parent`. */
static inline void
add_node(fx *f, const char *parent, sv_tree_node_spec s, sv_tree_child_spec a)
{
	uint32_t id;

	assert_int_equal(
	    sv_tree_add_node(f->t, node_id(f, parent), &s, &a, &id), SV_OK);
	(void) id;
}

/* add_group adds group g under node `node`. */
static inline void
add_group(fx *f, const char *node, uint64_t g, sv_tree_child_spec a)
{
	assert_int_equal(
	    sv_tree_add_group(f->t, node_id(f, node), g, &a), SV_OK);
}

/* done frees the fixture. */
static inline void
done(fx *f)
{
	sv_tree_plan_fini(&f->plan);
	sv_tree_destroy(f->t);
}

/* three_levels builds root > mid > leaf > g1 g2, with g3 beside leaf in
 * mid and g4 beside mid in the root; every node one_for_one, intensity 1
 * in 10 s; the root escalates (the daemon exits). */
static inline void
three_levels(fx *f, sv_on_failure root_fails)
{
	make(f, spec("root", SV_STRATEGY_ONE_FOR_ONE, 1, 10000),
	    as(SV_RESTART_PERMANENT, root_fails, false));
	add_node(
	    f, "root", spec("mid", SV_STRATEGY_ONE_FOR_ONE, 1, 10000), ESC);
	add_node(
	    f, "mid", spec("leaf", SV_STRATEGY_ONE_FOR_ONE, 1, 10000), ESC);
	add_group(f, "leaf", 1, ESC);
	add_group(f, "leaf", 2, ESC);
	add_group(f, "mid", 3, ESC);
	add_group(f, "root", 4, ESC);
	assert_string_equal(node_ev(f, SV_TEV_BOOT, "root"),
	    "node_start root#0, node_start mid#0, node_start leaf#0, start "
	    "g1#0, start g2#0, start g3#0, start g4#0");
}

#endif
