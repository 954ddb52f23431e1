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
 *   - operator stop of a node and of a group.
 *
 * Bounds, refusals and allocation failures: test_tree_faults.c. The fake
 * shell: tree_fixture.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tree_fixture.h"

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
			    as(SV_RESTART_PERMANENT, SV_ON_FAILURE_STAY,
			        false));
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
			assert_int_equal(
			    node_state(&f, "root"), SV_TNS_RUNNING);
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
			    as(SV_RESTART_PERMANENT, SV_ON_FAILURE_STAY,
			        false));
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

/* test_strategy_restart_types: under one_for_all a temporary sibling
 * stopped by the strategy is not started again (done); a temporary child
 * that fails is only stopped; a transient one that fails is restarted
 * (not when it ends normally: test_auto_shutdown_all). */
static void
test_strategy_restart_types(void **state)
{
	fx f;

	(void) state;
	make(&f, spec("root", SV_STRATEGY_ONE_FOR_ALL, 10, 10000),
	    as(SV_RESTART_PERMANENT, SV_ON_FAILURE_STAY, false));
	add_group(&f, "root", 1, ESC);
	add_group(&f, "root", 2,
	    as(SV_RESTART_TEMPORARY, SV_ON_FAILURE_ESCALATE, false));
	add_group(&f, "root", 3,
	    as(SV_RESTART_TRANSIENT, SV_ON_FAILURE_ESCALATE, false));
	add_group(&f, "root", 4,
	    as(SV_RESTART_TEMPORARY, SV_ON_FAILURE_ESCALATE, false));
	node_ev(&f, SV_TEV_BOOT, "root");
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_FAILED, 4), "stop g4");
	assert_int_equal(group_state(&f, 4), SV_TCS_DONE);
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_FAILED, 3),
	    "stop g3, stop g2, stop g1, start g1#1, start g3#1");
	assert_int_equal(group_state(&f, 2), SV_TCS_DONE);
	assert_int_equal(group_state(&f, 3), SV_TCS_RUNNING);
	done(&f);
}

/* ---- escalation ----------------------------------------------------------
 */

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
	assert_string_equal(
	    child_ev(&f, SV_TEV_CHILD_FAILED, 1), "stop g1, start g1#1");
	f.now = 20;
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_FAILED, 1),
	    "stop g2, stop g1, node_failed leaf, escalate leaf>mid, "
	    "node_start leaf#1, start g1#2, start g2#1");
	f.now = 30;
	assert_string_equal(
	    child_ev(&f, SV_TEV_CHILD_FAILED, 1), "stop g1, start g1#3");
	f.now = 40;
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_FAILED, 1),
	    "stop g2, stop g1, node_failed leaf, escalate leaf>mid, stop g3, "
	    "node_failed mid, escalate mid>root, node_start mid#1, node_start "
	    "leaf#2, start g1#4, start g2#2, start g3#1");
	f.now = 50;
	assert_string_equal(
	    child_ev(&f, SV_TEV_CHILD_FAILED, 1), "stop g1, start g1#5");
	f.now = 60;
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_FAILED, 1),
	    "stop g2, stop g1, node_failed leaf, escalate leaf>mid, "
	    "node_start leaf#3, start g1#6, start g2#3");
	f.now = 70;
	assert_string_equal(
	    child_ev(&f, SV_TEV_CHILD_FAILED, 1), "stop g1, start g1#7");
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
	add_node(
	    &f, "root", spec("mid", SV_STRATEGY_ONE_FOR_ONE, 1, 10000), stay);
	add_group(&f, "mid", 3, ESC);
	add_group(&f, "root", 4, ESC);
	assert_string_equal(node_ev(&f, SV_TEV_BOOT, "root"),
	    "node_start root#0, node_start mid#0, start g3#0, start g4#0");
	f.now = 10;
	assert_string_equal(
	    child_ev(&f, SV_TEV_CHILD_FAILED, 3), "stop g3, start g3#1");
	f.now = 20;
	assert_string_equal(
	    child_ev(&f, SV_TEV_CHILD_FAILED, 3), "stop g3, node_failed mid");
	assert_int_equal(node_state(&f, "mid"), SV_TNS_FAILED);
	assert_int_equal(node_state(&f, "root"), SV_TNS_RUNNING);
	assert_int_equal(group_state(&f, 4), SV_TCS_RUNNING);
	f.now = 30;
	assert_string_equal(
	    node_ev(&f, SV_TEV_RESET, "mid"), "node_start mid#1, start g3#2");
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
		assert_string_equal(
		    child_ev(&f, SV_TEV_CHILD_FAILED, 1), want);
	}
	assert_int_equal(sv_tree_node_get(f.t, 1, f.now, &in), SV_OK);
	assert_int_equal(in.intensity_used, 3);
	f.now = 400;
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_FAILED, 1),
	    "stop g2, stop g1, node_failed A, escalate A>root, node_start "
	    "A#1, "
	    "start g1#4, start g2#1");
	assert_int_equal(sv_tree_node_get(f.t, 1, f.now, &in), SV_OK);
	assert_int_equal(in.intensity_used, 0); /* fresh */
	assert_int_equal(in.generation, 1);
	for (uint64_t at = 1000; at <= 1200; at += 100) {
		f.now = at;
		child_ev(&f, SV_TEV_CHILD_FAILED, 2);
	}
	f.now = 2000; /* 1000 left the window exactly now */
	assert_string_equal(
	    child_ev(&f, SV_TEV_CHILD_FAILED, 2), "stop g2, start g2#5");
	f.now = 2001; /* 1100, 1200, 2000: at the limit; one past */
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_FAILED, 2),
	    "stop g2, stop g1, node_failed A, escalate A>root, node_start "
	    "A#2, "
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

/* test_auto_shutdown_all_active: all_significant waits for the last
 * active significant child: one the operator stopped does not hold the
 * node up; the root then ends and the daemon exits 0. */
static void
test_auto_shutdown_all_active(void **state)
{
	fx                 f;
	sv_tree_node_spec  r = spec("root", SV_STRATEGY_ONE_FOR_ONE, 10, 1000);
	sv_tree_child_spec sig
	    = as(SV_RESTART_TRANSIENT, SV_ON_FAILURE_ESCALATE, true);

	(void) state;
	r.auto_shutdown = SV_AUTO_SHUTDOWN_ALL;
	make(&f, r, ESC);
	add_group(&f, "root", 1, sig);
	add_group(&f, "root", 2, sig);
	add_group(&f, "root", 3, ESC);
	node_ev(&f, SV_TEV_BOOT, "root");
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_STOPPED, 1), "");
	assert_string_equal(child_ev(&f, SV_TEV_CHILD_EXITED, 2),
	    "auto_shutdown root, stop g3, node_stopped root, exit 0");
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
	    "auto_shutdown job, node_stopped job, node_start job#1, start "
	    "g1#1");
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
	assert_string_equal(
	    child_ev(&f, SV_TEV_CHILD_EXITED, 1), "start g2#0");
	assert_string_equal(
	    child_ev(&f, SV_TEV_CHILD_EXITED, 2), "node_failed root, exit 78");
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
	add_node(
	    &f, "root", spec("A", SV_STRATEGY_ONE_FOR_ONE, 10, 1000), ESC);
	add_group(&f, "A", 1, ESC);
	add_group(&f, "A", 2, ESC);
	add_group(&f, "root", 3, ESC);
	node_ev(&f, SV_TEV_BOOT, "root");
	assert_string_equal(
	    node_ev(&f, SV_TEV_STOP, "A"), "stop g2, stop g1, node_stopped A");
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_strategy_groups),
	    cmocka_unit_test(test_strategy_nodes),
	    cmocka_unit_test(test_strategy_restart_types),
	    cmocka_unit_test(test_escalate_three_levels),
	    cmocka_unit_test(test_escalate_stay),
	    cmocka_unit_test(test_intensity_limit),
	    cmocka_unit_test(test_backoff),
	    cmocka_unit_test(test_auto_shutdown_any_root),
	    cmocka_unit_test(test_auto_shutdown_all),
	    cmocka_unit_test(test_auto_shutdown_all_active),
	    cmocka_unit_test(test_auto_shutdown_permanent_node),
	    cmocka_unit_test(test_strict_rollback),
	    cmocka_unit_test(test_strict_nested),
	    cmocka_unit_test(test_strict_one_shot),
	    cmocka_unit_test(test_implicit_root),
	    cmocka_unit_test(test_stop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
