/*
 * test_tree_table_doc.c — docs/supervision.md against the node state
 * machine of the supervision tree (core/tree_table.c):
 *
 *   - "tree-states", "tree-events" and "tree-table": the docs' tables of
 *     node states, node events and transitions (state, event, next states,
 *     handler or refusal, what happens) must equal, row by row and in
 *     order, what the C table gives; a changed, missing or extra row
 *     fails, naming it;
 *   - every cell of the table is written out (a handler or a refusal with
 *     a typed error), and a refusal changes nothing.
 *
 * `test_tree_table_doc --print` prints the three generated blocks
 * (markers included) so that the docs can be regenerated from the table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "doc_table.h"
#include "core/tree_internal.h"

#ifndef SV_SOURCE_DIR
#error "SV_SOURCE_DIR must name the source tree"
#endif

#define DOC SV_SOURCE_DIR "/docs/supervision.md"

/* tree_text gives the name or doc of node state or event i. */
static const char *
tree_text(doc_text what, int i)
{
	switch (what) {
	case DOC_STATE_NAME:
		return sv_tree_state_name((sv_tree_state) i);
	case DOC_STATE_DOC:
		return tree_state_doc((sv_tree_state) i);
	case DOC_EVENT_NAME:
		return sv_tree_ev_name((sv_tree_ev_kind) i);
	default:
		return tree_ev_doc((sv_tree_ev_kind) i);
	}
}

/* tree_cell_doc gives cell (st, ev): its next states as names joined by
 * " or " (a refusal: the state stays), its handler or refusal, its doc.
 * The names live in a static buffer until the next call. */
static bool
tree_cell_doc(int st, int ev, doc_cell *out)
{
	static char      next[128];
	const tree_cell *c
	    = tree_cell_at((sv_tree_state) st, (sv_tree_ev_kind) ev);
	size_t n = 0;

	assert_non_null(c);
	assert_non_null(c->name);
	next[0] = '\0';
	for (int s = 0; s < SV_TNS_COUNT; s++) {
		if (c->next & (1u << s)) {
			n += (size_t) snprintf(next + n, sizeof(next) - n,
			    "%s%s", n > 0 ? " or " : "",
			    sv_tree_state_name((sv_tree_state) s));
		}
	}
	*out = (doc_cell) {next, c->name, c->doc};
	return true;
}

static const doc_machine machine = {
    .doc     = DOC,
    .source  = "core/tree_table.c",
    .prog    = "test_tree_table_doc",
    .prefix  = "tree",
    .subject = "node",
    .nstates = SV_TNS_COUNT,
    .nevents = SV_TEV_COUNT,
    .text    = tree_text,
    .cell    = tree_cell_doc,
};

/* test_blocks: each generated table equals the docs' table row by row. */
static void
test_blocks(void **state)
{
	(void) state;
	doc_machine_check(&machine);
}

/* test_cells: every cell is written out: a handler with the states it
 * may lead to, or a refusal with an error (SV_EBUSY or SV_ECONFLICT)
 * that leaves the state as it is. */
static void
test_cells(void **state)
{
	int refusals = 0;

	(void) state;
	for (int st = 0; st < SV_TNS_COUNT; st++) {
		for (int ev = 0; ev < SV_TEV_COUNT; ev++) {
			const tree_cell *c = tree_cell_at(
			    (sv_tree_state) st, (sv_tree_ev_kind) ev);
			assert_non_null(c->name);
			assert_non_null(c->doc);
			assert_int_not_equal(c->next, 0);
			if (c->handler == NULL) {
				assert_true(c->refuse == SV_EBUSY
				    || c->refuse == SV_ECONFLICT);
				assert_int_equal(c->next, 1u << st);
				refusals++;
			} else {
				assert_int_equal(c->refuse, SV_OK);
			}
		}
	}
	assert_int_equal(refusals, 24); /* of 50 cells */
	assert_null(tree_cell_at(SV_TNS_COUNT, SV_TEV_BOOT));
	assert_null(tree_cell_at(SV_TNS_STOPPED, SV_TEV_COUNT));
}

/* test_fire: a refusal returns its error and changes nothing; a cell
 * moves the node (stopped -> running on boot). */
static void
test_fire(void **state)
{
	sv_tree_node_spec  r    = {.name = "root"};
	sv_tree_child_spec as   = {0};
	sv_tree           *t    = NULL;
	sv_tree_plan       plan = {0};
	tree_arg           a    = {.child = SV_TREE_NONE};

	(void) state;
	assert_int_equal(sv_tree_create(&r, &as, &t), SV_OK);
	assert_int_equal(
	    tree_fire(t, t->nodes[0], SV_TEV_RESET, &a), SV_EBUSY);
	assert_int_equal(t->nodes[0]->state, SV_TNS_STOPPED);
	assert_int_equal(
	    sv_tree_event(t, &(sv_tree_ev) {.kind = SV_TEV_BOOT}, 0, &plan),
	    SV_OK);
	assert_int_equal(t->nodes[0]->state, SV_TNS_RUNNING);
	assert_int_equal(plan.n, 1);
	assert_int_equal(plan.a[0].kind, SV_TACT_NODE_START);
	assert_int_equal(sv_tree_misfires(t), 0);
	sv_tree_plan_fini(&plan);
	sv_tree_destroy(t);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_blocks),
	    cmocka_unit_test(test_cells),
	    cmocka_unit_test(test_fire),
	};

	if (argc > 1 && strcmp(argv[1], "--print") == 0) {
		doc_machine_print(&machine);
		return 0;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
