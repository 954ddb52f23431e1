/*
 * test_tree.c — the supervision tree's decisions (core/tree.h) driven by
 * synthetic events and a fake clock: no process, no timer, no I/O.
 *
 * Every decision's plan is written as one line ("stop g2, stop g1, start
 * g1#1, ...": groups are g<id>, #n a generation, @t a timer's due time) and
 * compared whole with the line the rules give, so each test asserts the
 * exact ordered list of actions. After every decision the tree must have
 * counted no misfire (no move outside its cell, no action past the
 * reserved plan).
 *
 * Tests:
 *   - every strategy x child kind (group, node) x failure position (first,
 *     middle, last);
 *   - escalation through three levels up to the daemon's exit;
 *   - intensity at a node exactly at its limit and one past, and the
 *     window sliding;
 *   - backoff on a subtree restart (the restart timer, a stale guard, a
 *     range widened while waiting);
 *   - significant children with any_significant and all_significant, at
 *     the root (exit 0) and below it;
 *   - strict start: in order, one by one, and the rollback order;
 *   - the implicit root with "stay": today's behaviour (failed, waits for
 *     reset), whatever the strategy;
 *   - operator stop of a node and of a group;
 *   - bounds and refusals, each with its typed error and nothing changed;
 *   - the plan's allocation failing: SV_ENOMEM and the tree unchanged, and
 *     building a tree under allocation failures.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/alloc.h"
#include "core/tree.h"
#include "sv_alloc_fault.h" /* FI, fi_hook, fi_arm: the injection */

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
static uint32_t
node_id(const fx *f, const char *name)
{
	uint32_t id;

	assert_true(sv_tree_node_named(f->t, name, &id));
	return id;
}

/* node_name names node id. */
static const char *
node_name(fx *f, uint32_t id)
{
	sv_tree_node_info in;

	assert_int_equal(sv_tree_node_get(f->t, id, f->now, &in), SV_OK);
	return in.name;
}

/* format writes f->plan into f->out as one line and remembers guards. */
static void
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
static sv_err
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
static const char *
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
static uint64_t
group_gen(const fx *f, uint64_t g)
{
	sv_tree_child_info ci;
	uint32_t           node, index;

	assert_true(sv_tree_group_at(f->t, g, &node, &index));
	assert_int_equal(sv_tree_child_get(f->t, node, index, &ci), SV_OK);
	return ci.generation;
}

/* child_err sends child event k about group g (current generation). */
static sv_err
child_err(fx *f, sv_tree_ev_kind k, uint64_t g)
{
	sv_tree_ev ev = {.kind = k, .group = g, .generation = group_gen(f, g)};

	return fire(f, ev);
}

/* child_ev is child_err expecting SV_OK; returns the plan's line. */
static const char *
child_ev(fx *f, sv_tree_ev_kind k, uint64_t g)
{
	assert_int_equal(child_err(f, k, g), SV_OK);
	return f->out;
}

/* node_state returns the state of node `name`. */
static sv_tree_state
node_state(fx *f, const char *name)
{
	sv_tree_node_info in;

	assert_int_equal(
	    sv_tree_node_get(f->t, node_id(f, name), f->now, &in), SV_OK);
	return in.state;
}

/* group_state returns the state of group g in its node. */
static sv_tree_cstate
group_state(const fx *f, uint64_t g)
{
	sv_tree_child_info ci;
	uint32_t           node, index;

	assert_true(sv_tree_group_at(f->t, g, &node, &index));
	assert_int_equal(sv_tree_child_get(f->t, node, index, &ci), SV_OK);
	return ci.state;
}

/* spec makes a node spec: no backoff, never auto shutdown, lenient. */
static sv_tree_node_spec
spec(const char *name, sv_strategy s, uint32_t max, uint64_t window)
{
	return (sv_tree_node_spec) {.name = name,
	    .strategy                     = s,
	    .max_restarts                 = max,
	    .max_window_ms                = window};
}

/* as makes a child spec. */
static sv_tree_child_spec
as(sv_restart_type r, sv_on_failure f, bool significant)
{
	return (sv_tree_child_spec) {
	    .restart = r, .on_failure = f, .significant = significant};
}

/* The usual child: permanent, escalates, not significant. */
#define ESC as(SV_RESTART_PERMANENT, SV_ON_FAILURE_ESCALATE, false)

/* make creates the tree with root spec r (root_as: how the root fails). */
static void
make(fx *f, sv_tree_node_spec r, sv_tree_child_spec root_as)
{
	*f = (fx) {0};
	assert_int_equal(sv_tree_create(&r, &root_as, &f->t), SV_OK);
}

/* add_node adds node spec s under `parent`. */
static void
add_node(fx *f, const char *parent, sv_tree_node_spec s, sv_tree_child_spec a)
{
	uint32_t id;

	assert_int_equal(
	    sv_tree_add_node(f->t, node_id(f, parent), &s, &a, &id), SV_OK);
	(void) id;
}

/* add_group adds group g under node `node`. */
static void
add_group(fx *f, const char *node, uint64_t g, sv_tree_child_spec a)
{
	assert_int_equal(sv_tree_add_group(f->t, node_id(f, node), g, &a), SV_OK);
}

/* done frees the fixture. */
static void
done(fx *f)
{
	sv_tree_plan_fini(&f->plan);
	sv_tree_destroy(f->t);
}

/* ---- strategies ----------------------------------------------------------
 */

/* What a root with three group children g1 g2 g3 does when the group at
 * position p fails: [strategy][p]. The range (the failed group in its
 * place) stops in reverse order, then starts in order, each under its
 * next generation. */
static const char *const groups_want[3][3] = {
    {"stop g1, start g1#1", "stop g2, start g2#1", "stop g3, start g3#1"},
    {"stop g3, stop g2, stop g1, start g1#1, start g2#1, start g3#1",
        "stop g3, stop g2, stop g1, start g1#1, start g2#1, start g3#1",
        "stop g3, stop g2, stop g1, start g1#1, start g2#1, start g3#1"},
    {"stop g3, stop g2, stop g1, start g1#1, start g2#1, start g3#1",
        "stop g3, stop g2, start g2#1, start g3#1", "stop g3, start g3#1"},
};

/* The same with node children a b c (each holding g1, g2, g3, intensity
 * 1): the second failure of the inner group in a row makes its node give
 * up and escalate; the root's part follows [strategy][p]. A restarted
 * node is generation 1; its group, restarted once inside it, 2. */
static const char *const nodes_want[3][3] = {
    {"node_start a#1, start g1#2", "node_start b#1, start g2#2",
        "node_start c#1, start g3#2"},
    {"stop g3, node_stopped c, stop g2, node_stopped b, node_start a#1, "
     "start g1#2, node_start b#1, start g2#1, node_start c#1, start g3#1",
        "stop g3, node_stopped c, stop g1, node_stopped a, node_start a#1, "
        "start g1#1, node_start b#1, start g2#2, node_start c#1, start g3#1",
        "stop g2, node_stopped b, stop g1, node_stopped a, node_start a#1, "
        "start g1#1, node_start b#1, start g2#1, node_start c#1, start "
        "g3#2"},
    {"stop g3, node_stopped c, stop g2, node_stopped b, node_start a#1, "
     "start g1#2, node_start b#1, start g2#1, node_start c#1, start g3#1",
        "stop g3, node_stopped c, node_start b#1, start g2#2, node_start "
        "c#1, start g3#1",
        "node_start c#1, start g3#2"},
};

/* test_strategy_groups: every strategy x failure position, group
 * children. */
static void
test_strategy_groups(void **state)
{
	(void) state;
	for (int s = 0; s < 3; s++) {
		for (uint64_t p = 0; p < 3; p++) {
			fx f;
			make(&f, spec("root", (sv_strategy) s, 10, 10000),
			    as(SV_RESTART_PERMANENT, SV_ON_FAILURE_STAY, false));
			for (uint64_t g = 1; g <= 3; g++) {
				add_group(&f, "root", g, ESC);
			}
			assert_string_equal(node_ev(&f, SV_TEV_BOOT, "root"),
			    "node_start root#0, start g1#0, start g2#0, start "
			    "g3#0");
			f.now = 10;
			assert_string_equal(
			    child_ev(&f, SV_TEV_CHILD_FAILED, p + 1),
			    groups_want[s][p]);
			assert_int_equal(node_state(&f, "root"), SV_TNS_RUNNING);
			for (uint64_t g = 1; g <= 3; g++) {
				assert_int_equal(
				    group_state(&f, g), SV_TCS_RUNNING);
			}
			done(&f);
		}
	}
}

/* test_strategy_nodes: every strategy x failure position, node
 * children that escalate. */
static void
test_strategy_nodes(void **state)
{
	static const char *const names[] = {"a", "b", "c"};

	(void) state;
	for (int s = 0; s < 3; s++) {
		for (uint64_t p = 0; p < 3; p++) {
			fx   f;
			char want[1024];
			make(&f, spec("root", (sv_strategy) s, 10, 10000),
			    as(SV_RESTART_PERMANENT, SV_ON_FAILURE_STAY, false));
			for (uint64_t g = 1; g <= 3; g++) {
				add_node(&f, "root",
				    spec(names[g - 1], SV_STRATEGY_ONE_FOR_ONE,
				        1, 10000),
				    ESC);
				add_group(&f, names[g - 1], g, ESC);
			}
			assert_string_equal(node_ev(&f, SV_TEV_BOOT, "root"),
			    "node_start root#0, node_start a#0, start g1#0, "
			    "node_start b#0, start g2#0, node_start c#0, "
			    "start g3#0");
			f.now = 10;
			snprintf(want, sizeof(want), "stop g%d, start g%d#1",
			    (int) p + 1, (int) p + 1);
			assert_string_equal(
			    child_ev(&f, SV_TEV_CHILD_FAILED, p + 1), want);
			f.now = 20;
			snprintf(want, sizeof(want),
			    "stop g%d, node_failed %s, escalate %s>root, %s",
			    (int) p + 1, names[p], names[p], nodes_want[s][p]);
			assert_string_equal(
			    child_ev(&f, SV_TEV_CHILD_FAILED, p + 1), want);
			for (int k = 0; k < 3; k++) {
				assert_int_equal(
				    node_state(&f, names[k]), SV_TNS_RUNNING);
			}
			done(&f);
		}
	}
}

/* ---- escalation ----------------------------------------------------------
 */

/* three_levels builds root > mid > leaf > g1 g2, with g3 beside leaf in
 * mid and g4 beside mid in the root; every node one_for_one, intensity 1
 * in 10 s; the root escalates (the daemon exits). */
static void
three_levels(fx *f, sv_on_failure root_fails)
{
	make(f, spec("root", SV_STRATEGY_ONE_FOR_ONE, 1, 10000),
	    as(SV_RESTART_PERMANENT, root_fails, false));
	add_node(f, "root", spec("mid", SV_STRATEGY_ONE_FOR_ONE, 1, 10000), ESC);
	add_node(f, "mid", spec("leaf", SV_STRATEGY_ONE_FOR_ONE, 1, 10000), ESC);
	add_group(f, "leaf", 1, ESC);
	add_group(f, "leaf", 2, ESC);
	add_group(f, "mid", 3, ESC);
	add_group(f, "root", 4, ESC);
	assert_string_equal(node_ev(f, SV_TEV_BOOT, "root"),
	    "node_start root#0, node_start mid#0, node_start leaf#0, start "
	    "g1#0, start g2#0, start g3#0, start g4#0");
}

/* test_escalate_three_levels: g1 crash-loops; leaf gives up twice, mid
 * twice, and the root's second restart is past its intensity: each level
 * stops what is left of it in reverse order, and the daemon exits with
 * SV_TREE_EXIT_FAILED. */
static void
test_escalate_three_levels(void **state)
{
	fx f;

	(void) state;
	three_levels(&f, SV_ON_FAILURE_ESCALATE);
	f.now = 10;
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_FAILED, 1),
	    "stop g1, start g1#1");
	f.now = 20;
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_FAILED, 1),
	    "stop g2, stop g1, node_failed leaf, escalate leaf>mid, "
	    "node_start leaf#1, start g1#2, start g2#1");
	f.now = 30;
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_FAILED, 1),
	    "stop g1, start g1#3");
	f.now = 40;
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_FAILED, 1),
	    "stop g2, stop g1, node_failed leaf, escalate leaf>mid, stop g3, "
	    "node_failed mid, escalate mid>root, node_start mid#1, node_start "
	    "leaf#2, start g1#4, start g2#2, start g3#1");
	f.now = 50;
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_FAILED, 1),
	    "stop g1, start g1#5");
	f.now = 60;
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_FAILED, 1),
	    "stop g2, stop g1, node_failed leaf, escalate leaf>mid, "
	    "node_start leaf#3, start g1#6, start g2#3");
	f.now = 70;
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_FAILED, 1),
	    "stop g1, start g1#7");
	f.now = 80;
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_FAILED, 1),
	    "stop g2, stop g1, node_failed leaf, escalate leaf>mid, stop g3, "
	    "node_failed mid, escalate mid>root, stop g4, node_failed root, "
	    "exit 75");
	assert_int_equal(node_state(&f, "root"), SV_TNS_FAILED);
	assert_int_equal(node_state(&f, "mid"), SV_TNS_FAILED);
	assert_int_equal(node_state(&f, "leaf"), SV_TNS_FAILED);
	for (uint64_t g = 1; g <= 4; g++) {
		assert_int_equal(group_state(&f, g), SV_TCS_STOPPED);
	}
	/* Nothing runs: a late event is refused, the plan stays empty. */
	assert_int_equal(child_err(&f, SV_TEV_CHILD_FAILED, 4), SV_EBUSY);
	done(&f);
}

/* test_escalate_stay: the same tree whose mid sits in the root with
 * on_failure stay: mid gives up, is marked failed and waits; the root
 * and g4 carry on; a reset of mid starts it afresh. A root with stay that
 * gives up exits nothing. */
static void
test_escalate_stay(void **state)
{
	fx                 f;
	sv_tree_child_spec stay
	    = as(SV_RESTART_PERMANENT, SV_ON_FAILURE_STAY, false);

	(void) state;
	make(&f, spec("root", SV_STRATEGY_ONE_FOR_ALL, 1, 10000), stay);
	add_node(&f, "root", spec("mid", SV_STRATEGY_ONE_FOR_ONE, 1, 10000),
	    stay);
	add_group(&f, "mid", 3, ESC);
	add_group(&f, "root", 4, ESC);
	assert_string_equal(node_ev(&f, SV_TEV_BOOT, "root"),
	    "node_start root#0, node_start mid#0, start g3#0, start g4#0");
	f.now = 10;
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_FAILED, 3),
	    "stop g3, start g3#1");
	f.now = 20;
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_FAILED, 3),
	    "stop g3, node_failed mid");
	assert_int_equal(node_state(&f, "mid"), SV_TNS_FAILED);
	assert_int_equal(node_state(&f, "root"), SV_TNS_RUNNING);
	assert_int_equal(group_state(&f, 4), SV_TCS_RUNNING);
	f.now = 30;
	assert_string_equal(node_ev(&f, SV_TEV_RESET, "mid"),
	    "node_start mid#1, start g3#2");
	/* The root (stay) gives up: g4 fails twice under one_for_all. */
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_FAILED, 4),
	    "stop g4, stop g3, node_stopped mid, node_start mid#2, start "
	    "g3#3, start g4#1");
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_FAILED, 4),
	    "stop g4, stop g3, node_stopped mid, node_failed root");
	assert_int_equal(node_state(&f, "root"), SV_TNS_FAILED);
	assert_string_equal(node_ev(&f, SV_TEV_RESET, "root"),
	    "node_start root#1, node_start mid#3, start g3#4, start g4#2");
	done(&f);
}

/* ---- intensity and backoff -----------------------------------------------
 */

/* test_intensity_limit: node A allows 3 restarts in 1 s: the third
 * within the window is served, the fourth gives up; after a fresh start
 * a restart that left the window no longer counts, and one past the limit
 * again gives up. */
static void
test_intensity_limit(void **state)
{
	fx                f;
	sv_tree_node_info in;

	(void) state;
	make(&f, spec("root", SV_STRATEGY_ONE_FOR_ONE, 100, 1000),
	    as(SV_RESTART_PERMANENT, SV_ON_FAILURE_STAY, false));
	add_node(&f, "root", spec("A", SV_STRATEGY_ONE_FOR_ONE, 3, 1000), ESC);
	add_group(&f, "A", 1, ESC);
	add_group(&f, "A", 2, ESC);
	node_ev(&f, SV_TEV_BOOT, "root");
	for (int k = 1; k <= 3; k++) {
		char want[64];
		f.now = 100 * (uint64_t) k;
		snprintf(want, sizeof(want), "stop g1, start g1#%d", k);
		assert_string_equal(child_ev(&f, SV_TEV_CHILD_FAILED, 1), want);
	}
	assert_int_equal(sv_tree_node_get(f.t, 1, f.now, &in), SV_OK);
	assert_int_equal(in.intensity_used, 3);
	f.now = 400;
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_FAILED, 1),
	    "stop g2, stop g1, node_failed A, escalate A>root, node_start A#1, "
	    "start g1#4, start g2#1");
	assert_int_equal(sv_tree_node_get(f.t, 1, f.now, &in), SV_OK);
	assert_int_equal(in.intensity_used, 0); /* fresh */
	assert_int_equal(in.generation, 1);
	for (uint64_t at = 1000; at <= 1200; at += 100) {
		f.now = at;
		child_ev(&f, SV_TEV_CHILD_FAILED, 2);
	}
	f.now = 2000; /* 1000 left the window exactly now */
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_FAILED, 2),
	    "stop g2, start g2#5");
	f.now = 2001; /* 1100, 1200, 2000: at the limit; one past */
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_FAILED, 2),
	    "stop g2, stop g1, node_failed A, escalate A>root, node_start A#2, "
	    "start g1#5, start g2#6");
	assert_int_equal(sv_tree_node_get(f.t, 0, f.now, &in), SV_OK);
	assert_int_equal(in.restarts, 2);
	done(&f);
}

/* A node spec with a backoff: 100 ms after a fast failure, doubling, at
 * most 400 ms; healthy after 1 s. */
static sv_tree_node_spec
backoff_spec(const char *name, sv_strategy s)
{
	sv_tree_node_spec n = spec(name, s, 100, 100000);

	n.backoff = (sv_backoff_policy) {
	    .healthy_ms = 1000, .initial_ms = 100, .max_ms = 400, .factor = 2};
	return n;
}

/* test_backoff: a fast failure waits for the restart timer (stops first,
 * starts when it fires); a stale guard is refused; a failure while
 * waiting widens the range and re-arms at the later due time; a healthy
 * run restarts at once. */
static void
test_backoff(void **state)
{
	fx         f;
	sv_tree_ev stale;

	(void) state;
	make(&f, spec("root", SV_STRATEGY_ONE_FOR_ONE, 10, 1000),
	    as(SV_RESTART_PERMANENT, SV_ON_FAILURE_STAY, false));
	add_node(&f, "root", backoff_spec("A", SV_STRATEGY_REST_FOR_ONE), ESC);
	for (uint64_t g = 1; g <= 3; g++) {
		add_group(&f, "A", g, ESC);
	}
	node_ev(&f, SV_TEV_BOOT, "root");
	f.now = 10;
	assert_string_equal(
	    child_ev(&f, SV_TEV_CHILD_FAILED, 3), "stop g3, timer A@110");
	assert_int_equal(node_state(&f, "A"), SV_TNS_RESTARTING);
	stale = (sv_tree_ev) {
	    .kind = SV_TEV_TIMER, .node = 1, .guard = f.guard[1]};
	f.now = 20;
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_FAILED, 1),
	    "stop g2, stop g1, timer A@120");
	assert_int_equal(child_err(&f, SV_TEV_CHILD_FAILED, 3), SV_ECONFLICT);
	f.now = 110;
	assert_int_equal(fire(&f, stale), SV_ECONFLICT);
	f.now = 120;
	assert_string_equal(node_ev(&f, SV_TEV_TIMER, "A"),
	    "start g1#1, start g2#1, start g3#1");
	assert_int_equal(node_state(&f, "A"), SV_TNS_RUNNING);
	assert_int_equal(fire(&f, stale), SV_ECONFLICT);
	f.now = 170; /* g1's second fast failure: 200 ms */
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_FAILED, 1),
	    "stop g3, stop g2, stop g1, timer A@370");
	f.now = 370;
	node_ev(&f, SV_TEV_TIMER, "A");
	f.now = 1370; /* healthy: at once, history cleared */
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_FAILED, 1),
	    "stop g3, stop g2, stop g1, start g1#3, start g2#3, start g3#3");
	done(&f);
}

/* ---- significant children and auto shutdown ------------------------------
 */

/* test_auto_shutdown_any_root: a migration (temporary, significant) ends
 * normally: the root with any_significant stops the app and the daemon
 * exits 0. */
static void
test_auto_shutdown_any_root(void **state)
{
	fx                f;
	sv_tree_node_spec r = spec("root", SV_STRATEGY_ONE_FOR_ONE, 10, 1000);

	(void) state;
	r.auto_shutdown = SV_AUTO_SHUTDOWN_ANY;
	make(&f, r, ESC);
	add_group(&f, "root", 1,
	    as(SV_RESTART_TEMPORARY, SV_ON_FAILURE_ESCALATE, true));
	add_group(&f, "root", 2, ESC);
	add_group(&f, "root", 3, ESC);
	node_ev(&f, SV_TEV_BOOT, "root");
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_EXITED, 1),
	    "auto_shutdown root, stop g3, stop g2, node_stopped root, exit 0");
	assert_int_equal(node_state(&f, "root"), SV_TNS_STOPPED);
	assert_int_equal(group_state(&f, 1), SV_TCS_DONE);
	done(&f);
}

/* test_auto_shutdown_all: a node with all_significant ends once both of
 * its significant children ended (a transient one normally, a temporary
 * one by failing); its parent sees a transient child end normally; a
 * transient significant child that fails is restarted, not counted. */
static void
test_auto_shutdown_all(void **state)
{
	fx                f;
	sv_tree_node_spec b = spec("batch", SV_STRATEGY_ONE_FOR_ONE, 10, 1000);

	(void) state;
	b.auto_shutdown = SV_AUTO_SHUTDOWN_ALL;
	make(&f, spec("root", SV_STRATEGY_ONE_FOR_ALL, 10, 1000), ESC);
	add_node(&f, "root", b,
	    as(SV_RESTART_TRANSIENT, SV_ON_FAILURE_ESCALATE, false));
	add_group(&f, "batch", 1,
	    as(SV_RESTART_TRANSIENT, SV_ON_FAILURE_ESCALATE, true));
	add_group(&f, "batch", 2,
	    as(SV_RESTART_TEMPORARY, SV_ON_FAILURE_ESCALATE, true));
	add_group(&f, "batch", 3, ESC);
	add_group(&f, "root", 9, ESC);
	assert_string_equal(node_ev(&f, SV_TEV_BOOT, "root"),
	    "node_start root#0, node_start batch#0, start g1#0, start g2#0, "
	    "start g3#0, start g9#0");
	assert_string_equal(
	    child_ev(&f, SV_TEV_CHILD_FAILED, 1), "stop g1, start g1#1");
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_EXITED, 1), "");
	assert_int_equal(group_state(&f, 1), SV_TCS_DONE);
	assert_int_equal(node_state(&f, "batch"), SV_TNS_RUNNING);
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_FAILED, 2),
	    "stop g2, auto_shutdown batch, stop g3, node_stopped batch");
	assert_int_equal(node_state(&f, "batch"), SV_TNS_STOPPED);
	assert_int_equal(node_state(&f, "root"), SV_TNS_RUNNING);
	assert_int_equal(group_state(&f, 9), SV_TCS_RUNNING);
	done(&f);
}

/* test_auto_shutdown_permanent_node: a node that shuts itself down but
 * sits in its parent as permanent is started again (OTP: a permanent
 * child always is), counted against the parent's intensity. */
static void
test_auto_shutdown_permanent_node(void **state)
{
	fx                f;
	sv_tree_node_spec j = spec("job", SV_STRATEGY_ONE_FOR_ONE, 10, 1000);
	sv_tree_node_info in;

	(void) state;
	j.auto_shutdown = SV_AUTO_SHUTDOWN_ANY;
	make(&f, spec("root", SV_STRATEGY_ONE_FOR_ONE, 10, 1000), ESC);
	add_node(&f, "root", j, ESC);
	add_group(&f, "job", 1,
	    as(SV_RESTART_TEMPORARY, SV_ON_FAILURE_ESCALATE, true));
	node_ev(&f, SV_TEV_BOOT, "root");
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_EXITED, 1),
	    "auto_shutdown job, node_stopped job, node_start job#1, start g1#1");
	assert_int_equal(sv_tree_node_get(f.t, 0, f.now, &in), SV_OK);
	assert_int_equal(in.intensity_used, 1);
	done(&f);
}

/* ---- strict start --------------------------------------------------------
 */

/* test_strict_rollback: a strict root starts g1..g4 one by one; g3
 * cannot start: g3, g2, g1 stop in that order and the daemon exits with
 * SV_TREE_EXIT_START_FAILED naming g3's place. */
static void
test_strict_rollback(void **state)
{
	fx                f;
	sv_tree_node_spec r = spec("root", SV_STRATEGY_ONE_FOR_ONE, 10, 1000);

	(void) state;
	r.start = SV_START_STRICT;
	make(&f, r, ESC);
	for (uint64_t g = 1; g <= 4; g++) {
		add_group(&f, "root", g, ESC);
	}
	assert_string_equal(
	    node_ev(&f, SV_TEV_BOOT, "root"), "node_start root#0, start g1#0");
	assert_int_equal(node_state(&f, "root"), SV_TNS_STARTING);
	assert_int_equal(group_state(&f, 1), SV_TCS_STARTING);
	assert_int_equal(child_err(&f, SV_TEV_CHILD_STARTED, 2), SV_ECONFLICT);
	assert_string_equal(
	    child_ev(&f, SV_TEV_CHILD_STARTED, 1), "start g2#0");
	assert_string_equal(
	    child_ev(&f, SV_TEV_CHILD_STARTED, 2), "start g3#0");
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_START_FAILED, 3),
	    "stop g3, stop g2, stop g1, node_failed root, exit 78");
	assert_int_equal(f.plan.a[f.plan.n - 1].cause_node, 0);
	assert_int_equal(f.plan.a[f.plan.n - 1].cause_child, 2);
	assert_int_equal(node_state(&f, "root"), SV_TNS_FAILED);
	done(&f);
}

/* strict_tree builds a strict root > a (lenient: g1), b (strict: g2 g3),
 * g4 and boots it: a is up at once, b waits for g2. */
static void
strict_tree(fx *f)
{
	sv_tree_node_spec r = spec("root", SV_STRATEGY_ONE_FOR_ONE, 10, 1000);
	sv_tree_node_spec b = spec("b", SV_STRATEGY_ONE_FOR_ONE, 10, 1000);

	r.start = SV_START_STRICT;
	b.start = SV_START_STRICT;
	make(f, r, ESC);
	add_node(f, "root", spec("a", SV_STRATEGY_ONE_FOR_ONE, 10, 1000), ESC);
	add_group(f, "a", 1, ESC);
	add_node(f, "root", b, ESC);
	add_group(f, "b", 2, ESC);
	add_group(f, "b", 3, ESC);
	add_group(f, "root", 4, ESC);
	assert_string_equal(node_ev(f, SV_TEV_BOOT, "root"),
	    "node_start root#0, node_start a#0, start g1#0, node_start b#0, "
	    "start g2#0");
	assert_int_equal(node_state(f, "b"), SV_TNS_STARTING);
}

/* test_strict_nested: a strict node child reports to its strict parent
 * once it is up, and the parent goes on; a start failure deep down rolls
 * back level by level and the daemon exits. */
static void
test_strict_nested(void **state)
{
	fx f;

	(void) state;
	strict_tree(&f);
	assert_string_equal(
	    child_ev(&f, SV_TEV_CHILD_STARTED, 2), "start g3#0");
	assert_string_equal(
	    child_ev(&f, SV_TEV_CHILD_STARTED, 3), "start g4#0");
	assert_int_equal(node_state(&f, "b"), SV_TNS_RUNNING);
	assert_int_equal(node_state(&f, "root"), SV_TNS_STARTING);
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_STARTED, 4), "");
	assert_int_equal(node_state(&f, "root"), SV_TNS_RUNNING);
	done(&f);

	strict_tree(&f);
	assert_string_equal(
	    child_ev(&f, SV_TEV_CHILD_STARTED, 2), "start g3#0");
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_START_FAILED, 3),
	    "stop g3, stop g2, node_failed b, escalate b>root, stop g1, "
	    "node_stopped a, node_failed root, exit 78");
	done(&f);
}

/* test_strict_one_shot: in a strict start a one-shot child (temporary)
 * that ends normally lets the next one start: a migration before the
 * app. A permanent child that ends fails the start. */
static void
test_strict_one_shot(void **state)
{
	fx                f;
	sv_tree_node_spec r = spec("root", SV_STRATEGY_ONE_FOR_ONE, 10, 1000);

	(void) state;
	r.start = SV_START_STRICT;
	make(&f, r, ESC);
	add_group(&f, "root", 1,
	    as(SV_RESTART_TEMPORARY, SV_ON_FAILURE_ESCALATE, false));
	add_group(&f, "root", 2, ESC);
	add_group(&f, "root", 3, ESC);
	node_ev(&f, SV_TEV_BOOT, "root");
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_EXITED, 1), "start g2#0");
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_EXITED, 2),
	    "node_failed root, exit 78");
	done(&f);
}

/* ---- the implicit root ---------------------------------------------------
 */

/* test_implicit_root: a file without nodes: every group stays failed
 * until its reset, whatever the strategy and however often groups fail;
 * the root never gives up; a group created at runtime counts as started;
 * a reset starts the group from scratch. */
static void
test_implicit_root(void **state)
{
	fx                 f   = {0};
	sv_tree_child_spec imp = sv_tree_implicit_child();
	sv_tree_node_info  in;

	(void) state;
	assert_int_equal(
	    sv_tree_create_implicit(SV_STRATEGY_ONE_FOR_ALL, &f.t), SV_OK);
	assert_int_equal(imp.on_failure, SV_ON_FAILURE_STAY);
	for (uint64_t g = 1; g <= 3; g++) {
		add_group(&f, "root", g, imp);
	}
	assert_string_equal(node_ev(&f, SV_TEV_BOOT, "root"),
	    "node_start root#0, start g1#0, start g2#0, start g3#0");
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_FAILED, 2), "fail g2");
	assert_int_equal(group_state(&f, 2), SV_TCS_FAILED);
	assert_int_equal(child_err(&f, SV_TEV_CHILD_FAILED, 2), SV_ECONFLICT);
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_FAILED, 1), "fail g1");
	add_group(&f, "root", 4, imp);
	assert_int_equal(group_state(&f, 4), SV_TCS_RUNNING);
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_FAILED, 4), "fail g4");
	assert_int_equal(node_state(&f, "root"), SV_TNS_RUNNING);
	assert_int_equal(group_state(&f, 3), SV_TCS_RUNNING);
	assert_int_equal(sv_tree_node_get(f.t, 0, f.now, &in), SV_OK);
	assert_int_equal(in.intensity_used, 0);
	assert_int_equal(in.restarts, 0);
	assert_int_equal(child_err(&f, SV_TEV_CHILD_RESET, 3), SV_ECONFLICT);
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_RESET, 2), "start g2#1");
	assert_int_equal(group_state(&f, 2), SV_TCS_RUNNING);
	for (int k = 0; k < 50; k++) {
		assert_string_equal(
		    child_ev(&f, SV_TEV_CHILD_FAILED, 2), "fail g2");
		child_ev(&f, SV_TEV_CHILD_RESET, 2);
	}
	assert_int_equal(node_state(&f, "root"), SV_TNS_RUNNING);
	done(&f);
}

/* ---- operator stop -------------------------------------------------------
 */

/* test_stop: stopping a node stops its subtree in reverse order and its
 * parent carries on; a group the operator stopped is not restarted and
 * its later events are stale; a stopped node boots again under its next
 * generation; stopping the root stops everything; again, nothing. */
static void
test_stop(void **state)
{
	fx f;

	(void) state;
	make(&f, spec("root", SV_STRATEGY_ONE_FOR_ALL, 10, 1000), ESC);
	add_node(&f, "root", spec("A", SV_STRATEGY_ONE_FOR_ONE, 10, 1000), ESC);
	add_group(&f, "A", 1, ESC);
	add_group(&f, "A", 2, ESC);
	add_group(&f, "root", 3, ESC);
	node_ev(&f, SV_TEV_BOOT, "root");
	assert_string_equal(node_ev(&f, SV_TEV_STOP, "A"),
	    "stop g2, stop g1, node_stopped A");
	assert_int_equal(node_state(&f, "root"), SV_TNS_RUNNING);
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_STOPPED, 3), "");
	assert_int_equal(child_err(&f, SV_TEV_CHILD_FAILED, 3), SV_ECONFLICT);
	assert_string_equal(node_ev(&f, SV_TEV_BOOT, "A"),
	    "node_start A#1, start g1#1, start g2#1");
	assert_string_equal(node_ev(&f, SV_TEV_STOP, "root"),
	    "stop g2, stop g1, node_stopped A, node_stopped root");
	assert_string_equal(node_ev(&f, SV_TEV_STOP, "root"), "");
	assert_int_equal(node_state(&f, "A"), SV_TNS_STOPPED);
	done(&f);
}

/* ---- bounds and refusals -------------------------------------------------
 */

/* snap writes every node's and child's state into buf, to check that a
 * refused call changed nothing. */
static void
snap(fx *f, char *buf, size_t cap)
{
	size_t n = 0;

	for (uint32_t id = 0; id < sv_tree_nnodes(f->t); id++) {
		sv_tree_node_info in;
		assert_int_equal(sv_tree_node_get(f->t, id, f->now, &in), SV_OK);
		n += (size_t) snprintf(buf + n, cap - n,
		    "%s:%d g%llu r%llu i%u c%u;", in.name, (int) in.state,
		    (unsigned long long) in.generation,
		    (unsigned long long) in.restarts, in.intensity_used,
		    in.nchildren);
		for (uint32_t k = 0; k < in.nchildren; k++) {
			sv_tree_child_info ci;
			assert_int_equal(
			    sv_tree_child_get(f->t, id, k, &ci), SV_OK);
			n += (size_t) snprintf(buf + n, cap - n,
			    " %llu:%d%s g%llu f%u",
			    (unsigned long long) ci.id, (int) ci.state,
			    ci.pending ? "p" : "",
			    (unsigned long long) ci.generation,
			    ci.fast_failures);
		}
		assert_true(n < cap);
	}
}

/* refused fires ev, expects err, an empty plan and nothing changed. */
static void
refused(fx *f, sv_tree_ev ev, sv_err err)
{
	char before[4096], after[4096];

	snap(f, before, sizeof(before));
	assert_int_equal(fire(f, ev), err);
	assert_int_equal(f->plan.n, 0);
	snap(f, after, sizeof(after));
	assert_string_equal(before, after);
}

/* test_bounds_build: names, specs, depth, children, nodes and groups
 * beyond their bounds are refused with their typed errors. */
static void
test_bounds_build(void **state)
{
	fx                 f;
	char               name[SV_TREE_NAME_MAX + 2];
	sv_tree_node_spec  s   = spec("x", SV_STRATEGY_ONE_FOR_ONE, 1, 1000);
	sv_tree_child_spec sig = as(SV_RESTART_PERMANENT, SV_ON_FAILURE_ESCALATE,
	    true);
	sv_tree_child_spec esc = ESC;
	sv_tree           *bad = NULL;
	uint32_t           id, parent = 0;

	(void) state;
	make(&f, spec("root", SV_STRATEGY_ONE_FOR_ONE, 1, 1000), ESC);
	memset(name, 'n', sizeof(name));
	name[SV_TREE_NAME_MAX + 1] = '\0';
	s.name                     = name;
	assert_int_equal(sv_tree_add_node(f.t, 0, &s, &esc, &id), SV_EINVAL);
	name[SV_TREE_NAME_MAX] = '\0'; /* 64 characters: fine */
	assert_int_equal(sv_tree_add_node(f.t, 0, &s, &esc, &id), SV_OK);
	assert_int_equal(sv_tree_add_node(f.t, 0, &s, &esc, &id), SV_EINVAL);
	s.name = "a/b";
	assert_int_equal(sv_tree_add_node(f.t, 0, &s, &esc, &id), SV_EINVAL);
	s.name = "";
	assert_int_equal(sv_tree_add_node(f.t, 0, &s, &esc, &id), SV_EINVAL);
	s.name = "ok";
	assert_int_equal(sv_tree_add_node(f.t, 0, &s, &sig, &id), SV_EINVAL);
	assert_int_equal(sv_tree_add_group(f.t, 0, 7, &sig), SV_EINVAL);
	assert_int_equal(sv_tree_add_node(f.t, 99, &s, &esc, &id), SV_ENOTFOUND);
	s.max_restarts = SV_INTENSITY_MAX + 1;
	assert_int_equal(sv_tree_add_node(f.t, 0, &s, &esc, &id), SV_EINVAL);
	s.max_restarts  = 1;
	s.max_window_ms = 0;
	assert_int_equal(sv_tree_add_node(f.t, 0, &s, &esc, &id), SV_EINVAL);
	s.max_window_ms = 1000;
	s.strategy      = (sv_strategy) 3;
	assert_int_equal(sv_tree_add_node(f.t, 0, &s, &esc, &id), SV_EINVAL);
	s.strategy = SV_STRATEGY_ONE_FOR_ONE;
	assert_int_equal(sv_tree_add_group(f.t, 0, 7, &esc), SV_OK);
	assert_int_equal(sv_tree_add_group(f.t, 0, 7, &esc), SV_EINVAL);
	done(&f);
	assert_int_equal(sv_tree_create(&s, &sig, &bad), SV_EINVAL);
	assert_null(bad);

	/* Depth: SV_TREE_MAX_DEPTH levels, root included. */
	make(&f, spec("root", SV_STRATEGY_ONE_FOR_ONE, 1, 1000), ESC);
	for (int d = 1; d < SV_TREE_MAX_DEPTH; d++) {
		snprintf(name, sizeof(name), "d%d", d);
		s.name = name;
		assert_int_equal(
		    sv_tree_add_node(f.t, parent, &s, &esc, &parent), SV_OK);
	}
	s.name = "deeper";
	assert_int_equal(
	    sv_tree_add_node(f.t, parent, &s, &esc, &id), SV_EEXHAUSTED);
	done(&f);

	/* Children per node, then nodes per tree, then groups per tree. */
	make(&f, spec("root", SV_STRATEGY_ONE_FOR_ONE, 1, 1000), ESC);
	for (uint64_t g = 0; g < SV_TREE_MAX_CHILDREN; g++) {
		assert_int_equal(sv_tree_add_group(f.t, 0, g, &esc), SV_OK);
	}
	assert_int_equal(sv_tree_add_group(f.t, 0, 999, &esc), SV_EEXHAUSTED);
	s.name = "n";
	assert_int_equal(sv_tree_add_node(f.t, 0, &s, &esc, &id), SV_EEXHAUSTED);
	done(&f);
	make(&f, spec("root", SV_STRATEGY_ONE_FOR_ONE, 1, 1000), ESC);
	for (uint32_t k = 1; k < SV_TREE_MAX_NODES; k++) {
		snprintf(name, sizeof(name), "n%u", k);
		s.name = name;
		assert_int_equal(
		    sv_tree_add_node(f.t, k <= 60 ? 0 : 1, &s, &esc, &id), SV_OK);
	}
	s.name = "one-more";
	assert_int_equal(sv_tree_add_node(f.t, 1, &s, &esc, &id), SV_EEXHAUSTED);
	for (uint64_t g = 0; g < SV_TREE_MAX_GROUPS; g++) {
		assert_int_equal(
		    sv_tree_add_group(f.t, (uint32_t) (1 + g / 32), g, &esc),
		    SV_OK);
	}
	assert_int_equal(sv_tree_add_group(f.t, 20, 9999, &esc), SV_EEXHAUSTED);
	done(&f);
}

/* test_refusals: events the tree does not take are refused with their
 * typed error, an empty plan and the tree unchanged. */
static void
test_refusals(void **state)
{
	fx                f;
	sv_tree_node_spec r = spec("root", SV_STRATEGY_ONE_FOR_ONE, 10, 1000);
	uint64_t          gen;

	(void) state;
	r.start = SV_START_STRICT;
	make(&f, r, ESC);
	add_group(&f, "root", 1, ESC);
	add_group(&f, "root", 2, ESC);
	refused(&f, (sv_tree_ev) {.kind = SV_TEV_CHILD_FAILED, .group = 1},
	    SV_EBUSY);
	refused(&f, (sv_tree_ev) {.kind = SV_TEV_RESET}, SV_EBUSY);
	refused(&f, (sv_tree_ev) {.kind = SV_TEV_TIMER}, SV_ECONFLICT);
	node_ev(&f, SV_TEV_BOOT, "root");
	assert_int_equal(
	    sv_tree_add_group(f.t, 0, 3, &(sv_tree_child_spec) {0}), SV_EBUSY);
	refused(&f, (sv_tree_ev) {.kind = SV_TEV_BOOT}, SV_EBUSY);
	refused(&f, (sv_tree_ev) {.kind = SV_TEV_CHILD_RESET, .group = 1},
	    SV_EBUSY);
	child_ev(&f, SV_TEV_CHILD_STARTED, 1);
	child_ev(&f, SV_TEV_CHILD_STARTED, 2);
	gen = group_gen(&f, 1);
	refused(&f,
	    (sv_tree_ev) {
	        .kind = SV_TEV_CHILD_FAILED, .group = 1, .generation = gen + 1},
	    SV_ECONFLICT);
	refused(&f, (sv_tree_ev) {.kind = SV_TEV_CHILD_FAILED, .group = 42},
	    SV_ENOTFOUND);
	refused(&f, (sv_tree_ev) {.kind = SV_TEV_STOP, .node = 9}, SV_ENOTFOUND);
	refused(&f, (sv_tree_ev) {.kind = SV_TEV_RESET}, SV_EBUSY);
	refused(&f, (sv_tree_ev) {.kind = SV_TEV_TIMER, .guard = 0},
	    SV_ECONFLICT);
	refused(&f, (sv_tree_ev) {.kind = SV_TEV_COUNT}, SV_EINVAL);
	refused(&f, (sv_tree_ev) {.kind = SV_TEV_CHILD_RESET, .group = 2},
	    SV_ECONFLICT);
	done(&f);
}

/* ---- allocation failures -------------------------------------------------
 */

/* test_plan_enomem: a decision whose plan cannot be reserved fails with
 * SV_ENOMEM before it changes anything; retried, it gives the plan a run
 * without the failure gives. */
static void
test_plan_enomem(void **state)
{
	fx         f;
	char       before[4096], after[4096];
	sv_tree_ev ev;

	(void) state;
	three_levels(&f, SV_ON_FAILURE_ESCALATE);
	f.now = 10;
	child_ev(&f, SV_TEV_CHILD_FAILED, 1);
	f.now = 20;
	sv_tree_plan_fini(&f.plan); /* the next decision must allocate */
	ev = (sv_tree_ev) {.kind = SV_TEV_CHILD_FAILED,
	    .group               = 1,
	    .generation          = group_gen(&f, 1)};
	snap(&f, before, sizeof(before));
	sv_mem_set_hook(fi_hook, NULL);
	fi_arm(0);
	FI.all = true;
	assert_int_equal(sv_tree_event(f.t, &ev, f.now, &f.plan), SV_ENOMEM);
	assert_true(FI.hit);
	FI.all = false;
	sv_mem_set_hook(NULL, NULL);
	assert_int_equal(f.plan.n, 0);
	snap(&f, after, sizeof(after));
	assert_string_equal(before, after);
	assert_int_equal(fire(&f, ev), SV_OK);
	assert_string_equal(f.out,
	    "stop g2, stop g1, node_failed leaf, escalate leaf>mid, "
	    "node_start leaf#1, start g1#2, start g2#1");
	done(&f);
}

/* build builds the three-level tree through the API, stopping at the
 * first SV_ENOMEM (which must come from an injected failure). */
static sv_err
build(sv_tree **tp)
{
	sv_tree_node_spec  r = spec("root", SV_STRATEGY_ONE_FOR_ONE, 1, 1000);
	sv_tree_node_spec  m = spec("mid", SV_STRATEGY_ONE_FOR_ALL, 2, 1000);
	sv_tree_node_spec  l = spec("leaf", SV_STRATEGY_REST_FOR_ONE, 3, 1000);
	sv_tree_child_spec e = ESC;
	uint32_t           mid, leaf;
	sv_err             err;

	if ((err = sv_tree_create(&r, &e, tp)) != SV_OK
	    || (err = sv_tree_add_node(*tp, 0, &m, &e, &mid)) != SV_OK
	    || (err = sv_tree_add_node(*tp, mid, &l, &e, &leaf)) != SV_OK) {
		return err;
	}
	for (uint64_t g = 1; g <= 10; g++) {
		err = sv_tree_add_group(*tp, g % 2 ? leaf : mid, g, &e);
		if (err != SV_OK) {
			return err;
		}
	}
	return SV_OK;
}

/* test_build_enomem: building under the Nth allocation failing, for
 * every N: the failing call says SV_ENOMEM, the tree built so far stays
 * usable (it boots, it frees without leaks under ASan). */
static void
test_build_enomem(void **state)
{
	(void) state;
	for (uint64_t nth = 1;; nth++) {
		sv_tree     *t    = NULL;
		sv_tree_plan plan = {0};
		sv_tree_ev   boot = {.kind = SV_TEV_BOOT};
		sv_err       err;
		sv_mem_set_hook(fi_hook, NULL);
		fi_arm(nth);
		err = build(&t);
		sv_mem_set_hook(NULL, NULL);
		assert_int_equal(err, FI.hit ? SV_ENOMEM : SV_OK);
		if (t != NULL) {
			assert_int_equal(
			    sv_tree_event(t, &boot, 0, &plan), SV_OK);
			assert_int_equal(sv_tree_misfires(t), 0);
		}
		sv_tree_plan_fini(&plan);
		sv_tree_destroy(t);
		if (!FI.hit) {
			assert_true(nth > 5);
			break;
		}
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_strategy_groups),
	    cmocka_unit_test(test_strategy_nodes),
	    cmocka_unit_test(test_escalate_three_levels),
	    cmocka_unit_test(test_escalate_stay),
	    cmocka_unit_test(test_intensity_limit),
	    cmocka_unit_test(test_backoff),
	    cmocka_unit_test(test_auto_shutdown_any_root),
	    cmocka_unit_test(test_auto_shutdown_all),
	    cmocka_unit_test(test_auto_shutdown_permanent_node),
	    cmocka_unit_test(test_strict_rollback),
	    cmocka_unit_test(test_strict_nested),
	    cmocka_unit_test(test_strict_one_shot),
	    cmocka_unit_test(test_implicit_root),
	    cmocka_unit_test(test_stop),
	    cmocka_unit_test(test_bounds_build),
	    cmocka_unit_test(test_refusals),
	    cmocka_unit_test(test_plan_enomem),
	    cmocka_unit_test(test_build_enomem),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
