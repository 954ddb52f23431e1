/*
 * test_tree_faults.c — the supervision tree (core/tree.h) at its bounds and
 * under allocation failure, with the fake shell of tree_fixture.h:
 *
 *   - building beyond a bound (name length and characters, depth,
 *     children per node, nodes, groups, intensity, significant but
 *     permanent, duplicates) is refused with its typed error;
 *   - events the tree does not take are refused with their typed error
 *     (SV_EBUSY, SV_ECONFLICT, SV_ENOTFOUND, SV_EINVAL), an empty plan and
 *     the tree unchanged;
 *   - a decision whose plan cannot be reserved (core/alloc.h failing, as
 *     in test_core_faults.c) fails with SV_ENOMEM before it changes
 *     anything, and gives the same plan when called again;
 *   - building a tree while the Nth allocation fails, for every N: the
 *     call says SV_ENOMEM and what was built stays usable (ASan: no leak).
 */
#include "core/alloc.h"
#include "sv_alloc_fault.h" /* FI, fi_hook, fi_arm: the injection */
#include "tree_fixture.h"

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
		assert_int_equal(
		    sv_tree_node_get(f->t, id, f->now, &in), SV_OK);
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
			    " %llu:%d%s g%llu f%u", (unsigned long long) ci.id,
			    (int) ci.state, ci.pending ? "p" : "",
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
	sv_tree_node_spec  s = spec("x", SV_STRATEGY_ONE_FOR_ONE, 1, 1000);
	sv_tree_child_spec sig
	    = as(SV_RESTART_PERMANENT, SV_ON_FAILURE_ESCALATE, true);
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
	assert_int_equal(
	    sv_tree_add_node(f.t, 99, &s, &esc, &id), SV_ENOTFOUND);
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
	assert_int_equal(
	    sv_tree_add_node(f.t, 0, &s, &esc, &id), SV_EEXHAUSTED);
	done(&f);
	make(&f, spec("root", SV_STRATEGY_ONE_FOR_ONE, 1, 1000), ESC);
	for (uint32_t k = 1; k < SV_TREE_MAX_NODES; k++) {
		snprintf(name, sizeof(name), "n%u", k);
		s.name = name;
		assert_int_equal(
		    sv_tree_add_node(f.t, k <= 60 ? 0 : 1, &s, &esc, &id),
		    SV_OK);
	}
	s.name = "one-more";
	assert_int_equal(
	    sv_tree_add_node(f.t, 1, &s, &esc, &id), SV_EEXHAUSTED);
	for (uint64_t g = 0; g < SV_TREE_MAX_GROUPS; g++) {
		assert_int_equal(
		    sv_tree_add_group(f.t, (uint32_t) (1 + g / 32), g, &esc),
		    SV_OK);
	}
	assert_int_equal(
	    sv_tree_add_group(f.t, 20, 9999, &esc), SV_EEXHAUSTED);
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
	    (sv_tree_ev) {.kind = SV_TEV_CHILD_FAILED,
	        .group          = 1,
	        .generation     = gen + 1},
	    SV_ECONFLICT);
	refused(&f, (sv_tree_ev) {.kind = SV_TEV_CHILD_FAILED, .group = 42},
	    SV_ENOTFOUND);
	refused(
	    &f, (sv_tree_ev) {.kind = SV_TEV_STOP, .node = 9}, SV_ENOTFOUND);
	refused(&f, (sv_tree_ev) {.kind = SV_TEV_RESET}, SV_EBUSY);
	refused(
	    &f, (sv_tree_ev) {.kind = SV_TEV_TIMER, .guard = 0}, SV_ECONFLICT);
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
	    cmocka_unit_test(test_bounds_build),
	    cmocka_unit_test(test_refusals),
	    cmocka_unit_test(test_plan_enomem),
	    cmocka_unit_test(test_build_enomem),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
