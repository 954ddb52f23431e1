/*
 * test_tree_model.c — a randomized model test of the supervision tree
 * (core/tree.h): random trees (nodes under random parents, random
 * strategies, intensities, backoff, auto_shutdown, start modes; groups
 * under random nodes with random restart types, on_failure and
 * significance) driven by random event sequences with fixed seeds and a
 * fake clock. A fake shell carries each plan out and keeps its own view of
 * which groups run. After every decision:
 *
 *   - the tree counted no misfire (every move inside its cell, no action
 *     past the reserved plan);
 *   - nothing starts twice: START_GROUP only for a group the shell does
 *     not run, STOP_GROUP only for one it runs;
 *   - the shell's view and the tree agree: a group runs for the shell
 *     exactly when its slot is starting or running;
 *   - a node child's slot is live exactly when that node is starting,
 *     running or restarting;
 *   - EXIT comes last, and when it comes nothing runs any more.
 */
#include "tree_fixture.h"

#define NGROUPS 12
#define NSEEDS  400
#define NSTEPS  300

/* The fake shell's view of each group (ids 1 .. NGROUPS). */
typedef struct model {
	fx        f;
	bool      runs[NGROUPS + 1];
	uint32_t  ngroups;
	uint32_t  nnodes;
	bool      exited;
	uint32_t  seed;
	uint64_t *taken; /* [SV_TEV_COUNT]: events the tree took */
} model;

/* rnd is a small LCG, so that every seed gives the same run anywhere. */
static uint32_t
rnd(model *m, uint32_t n)
{
	m->seed = m->seed * 1103515245u + 12345u;
	return (m->seed >> 8) % n;
}

/* random_spec makes a random node spec named name. */
static sv_tree_node_spec
random_spec(model *m, const char *name)
{
	sv_tree_node_spec s = spec(name, (sv_strategy) rnd(m, 3),
	    1 + rnd(m, 3), 200 + 100 * (uint64_t) rnd(m, 10));

	if (rnd(m, 3) == 0) {
		s.backoff = (sv_backoff_policy) {.healthy_ms = 500,
		    .initial_ms                              = 50,
		    .max_ms                                  = 200,
		    .factor                                  = 2};
	}
	s.auto_shutdown = (sv_auto_shutdown) rnd(m, 3);
	s.start         = (sv_start_mode) rnd(m, 2);
	return s;
}

/* random_as makes a random child spec (significant only if allowed). */
static sv_tree_child_spec
random_as(model *m)
{
	sv_tree_child_spec a = as((sv_restart_type) rnd(m, 3),
	    rnd(m, 4) == 0 ? SV_ON_FAILURE_STAY : SV_ON_FAILURE_ESCALATE,
	    false);

	a.significant = a.restart != SV_RESTART_PERMANENT && rnd(m, 2) == 0;
	return a;
}

/* build makes a random tree of up to 6 nodes and NGROUPS groups. */
static void
build(model *m)
{
	static const char *const names[]
	    = {"root", "n1", "n2", "n3", "n4", "n5"};
	sv_tree_child_spec root_as = random_as(m);

	root_as.significant = false;
	make(&m->f, random_spec(m, "root"), root_as);
	m->nnodes = 1 + rnd(m, 6);
	for (uint32_t k = 1; k < m->nnodes; k++) {
		uint32_t           id;
		sv_tree_node_spec  s = random_spec(m, names[k]);
		sv_tree_child_spec a = random_as(m);
		assert_int_equal(
		    sv_tree_add_node(m->f.t, rnd(m, k), &s, &a, &id), SV_OK);
	}
	m->ngroups = 1 + rnd(m, NGROUPS);
	for (uint64_t g = 1; g <= m->ngroups; g++) {
		sv_tree_child_spec a = random_as(m);
		assert_int_equal(
		    sv_tree_add_group(m->f.t, rnd(m, m->nnodes), g, &a),
		    SV_OK);
	}
}

/* apply carries the last plan out in the shell's view. */
static void
apply(model *m)
{
	for (size_t i = 0; i < m->f.plan.n; i++) {
		const sv_tree_action *a = &m->f.plan.a[i];
		assert_false(m->exited); /* EXIT is last */
		switch (a->kind) {
		case SV_TACT_START_GROUP:
			assert_false(m->runs[a->group]); /* never twice */
			m->runs[a->group] = true;
			break;
		case SV_TACT_STOP_GROUP:
			assert_true(m->runs[a->group]);
			m->runs[a->group] = false;
			break;
		case SV_TACT_FAIL_GROUP:
			m->runs[a->group] = false;
			break;
		case SV_TACT_EXIT:
			m->exited = true;
			for (uint32_t g = 1; g <= m->ngroups; g++) {
				assert_false(m->runs[g]);
			}
			break;
		default:
			break;
		}
	}
}

/* check compares the shell's view with the tree's. */
static void
check(model *m)
{
	assert_int_equal(sv_tree_misfires(m->f.t), 0);
	for (uint32_t id = 0; id < m->nnodes; id++) {
		sv_tree_node_info in;
		assert_int_equal(
		    sv_tree_node_get(m->f.t, id, m->f.now, &in), SV_OK);
		for (uint32_t k = 0; k < in.nchildren; k++) {
			sv_tree_child_info ci;
			bool               live;
			assert_int_equal(
			    sv_tree_child_get(m->f.t, id, k, &ci), SV_OK);
			live = ci.state == SV_TCS_STARTING
			    || ci.state == SV_TCS_RUNNING;
			if (!ci.is_node) {
				assert_int_equal(m->runs[ci.id], live);
			} else {
				sv_tree_node_info kn;
				assert_int_equal(
				    sv_tree_node_get(m->f.t, (uint32_t) ci.id,
				        m->f.now, &kn),
				    SV_OK);
				assert_int_equal(live,
				    kn.state == SV_TNS_STARTING
				        || kn.state == SV_TNS_RUNNING
				        || kn.state == SV_TNS_RESTARTING);
			}
		}
	}
}

/* pick chooses an event kind, failures more often than stops (which
 * would leave most trees idle). */
static sv_tree_ev_kind
pick(model *m)
{
	static const uint32_t weight[SV_TEV_COUNT] = {
	    [SV_TEV_BOOT]               = 3,
	    [SV_TEV_STOP]               = 1,
	    [SV_TEV_RESET]              = 3,
	    [SV_TEV_TIMER]              = 4,
	    [SV_TEV_CHILD_STARTED]      = 6,
	    [SV_TEV_CHILD_START_FAILED] = 2,
	    [SV_TEV_CHILD_FAILED]       = 8,
	    [SV_TEV_CHILD_EXITED]       = 3,
	    [SV_TEV_CHILD_STOPPED]      = 1,
	    [SV_TEV_CHILD_RESET]        = 4,
	};
	uint32_t r = rnd(m, 35);

	for (int k = 0; k < SV_TEV_COUNT; k++) {
		if (r < weight[k]) {
			return (sv_tree_ev_kind) k;
		}
		r -= weight[k];
	}
	return SV_TEV_CHILD_FAILED;
}

/* step sends one random event; a refusal must leave everything as it
 * was (the shell's view is only changed when the tree took the event). */
static void
step(model *m)
{
	uint64_t   g   = 1 + rnd(m, m->ngroups);
	sv_tree_ev ev  = {.group = g, .generation = group_gen(&m->f, g)};
	bool       ran = m->runs[g];
	sv_err     err;

	m->f.now += rnd(m, 4) == 0 ? 0 : rnd(m, 300);
	ev.kind = pick(m);
	if (ev.kind < SV_TEV_CHILD_STARTED) {
		ev.node  = rnd(m, m->nnodes);
		ev.guard = m->f.guard[ev.node];
	}
	/* An ended or operator-stopped group no longer runs for the shell
	 * before it tells the tree. */
	if (ran
	    && (ev.kind == SV_TEV_CHILD_EXITED
	        || ev.kind == SV_TEV_CHILD_STOPPED)) {
		m->runs[g] = false;
	}
	err = fire(&m->f, ev);
	if (err != SV_OK) {
		m->runs[g] = ran;
		return;
	}
	m->taken[ev.kind]++;
	apply(m);
}

/* test_model: NSEEDS random trees, NSTEPS random events each (or until
 * the daemon exits). */
static void
test_model(void **state)
{
	uint64_t exits = 0, steps = 0, taken[SV_TEV_COUNT] = {0};

	(void) state;
	for (uint32_t seed = 1; seed <= NSEEDS; seed++) {
		model m = {.seed = seed, .taken = taken};
		build(&m);
		node_ev(&m.f, SV_TEV_BOOT, "root");
		apply(&m);
		check(&m);
		for (int s = 0; s < NSTEPS && !m.exited; s++) {
			step(&m);
			check(&m);
			steps++;
		}
		exits += m.exited;
		done(&m.f);
	}
	print_message("%llu steps, %llu runs ended with exit\n",
	    (unsigned long long) steps, (unsigned long long) exits);
	assert_true(exits > 0);
	/* Every kind of event was taken, many times. */
	for (int k = 0; k < SV_TEV_COUNT; k++) {
		print_message("  %s: %llu\n",
		    sv_tree_ev_name((sv_tree_ev_kind) k),
		    (unsigned long long) taken[k]);
		assert_true(taken[k] >= 50);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
