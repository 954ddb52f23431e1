/*
 * test_lease_table_doc.c — docs/leases.md against the slot state machine
 * the lease core runs (core/lease_table.c):
 *
 *   - "lease-states", "lease-events" and "lease-table": the docs' tables of
 *     slot states, slot events and transitions (state, event, next state,
 *     handler, what happens) must equal, row by row and in order, what the
 *     C table gives; a changed, missing or extra row fails, naming it;
 *
 * and the dispatch itself: a pair the table has no cell for changes
 * nothing and is counted as a misfire; a cell moves the slot and keeps
 * the counts of leases right; a whole lease life (grant, disconnect,
 * reconnect, TTL) goes through cells only.
 *
 * `test_lease_table_doc --print` prints the three generated blocks
 * (markers included) so that the docs can be regenerated from the table.
 */
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "doc_table.h"
#include "core/lease_internal.h"

#ifndef SV_SOURCE_DIR
#error "SV_SOURCE_DIR must name the source tree"
#endif

#define DOC SV_SOURCE_DIR "/docs/leases.md"
/* gen_states gives the rows of the slot states table. */
static void
gen_states(doc_rows *r)
{
	for (int st = 0; st < SVL_PHASE_COUNT; st++) {
		doc_add(r, "| `%s` | %s |", svl_phase_name((svl_phase) st),
		    svl_phase_doc((svl_phase) st));
	}
}

/* gen_events gives the rows of the slot events table. */
static void
gen_events(doc_rows *r)
{
	for (int ev = 0; ev < SLE_COUNT; ev++) {
		doc_add(r, "| `%s` | %s |", svl_event_name((svl_event) ev),
		    svl_event_doc((svl_event) ev));
	}
}

/* gen_table gives the rows of the transition table: every cell with a
 * handler, states in order, events in order within a state. */
static void
gen_table(doc_rows *r)
{
	for (int st = 0; st < SVL_PHASE_COUNT; st++) {
		for (int ev = 0; ev < SLE_COUNT; ev++) {
			const svl_slot_cell *c
			    = svl_slot_cell_at((svl_phase) st, (svl_event) ev);
			assert_non_null(c);
			if (c->handler == NULL) {
				continue;
			}
			assert_null(strchr(c->doc, '|'));
			doc_add(r, "| `%s` | `%s` | `%s` | `%s` | %s |",
			    svl_phase_name((svl_phase) st),
			    svl_event_name((svl_event) ev),
			    svl_phase_name(c->next), c->name, c->doc);
		}
	}
}

static const doc_block blocks[] = {
    {"lease-states", "| state | meaning |\n|---|---|", gen_states},
    {"lease-events", "| event | what happens to the slot |\n|---|---|",
        gen_events},
    {"lease-table",
        "| state | event | next | handler | what happens |\n"
        "|---|---|---|---|---|",
        gen_table},
};

static const doc_source source = {
    .doc     = DOC,
    .source  = "core/lease_table.c",
    .prog    = "test_lease_table_doc",
    .blocks  = blocks,
    .nblocks = sizeof(blocks) / sizeof(blocks[0]),
};

/* test_blocks: each generated table equals the docs' table row by row. */
static void
test_blocks(void **state)
{
	(void) state;
	doc_table_check(&source);
}

/* test_fire: a free slot is granted through its cell (free -> held,
 * one lease counted); an event without a cell (a claim of a free slot)
 * changes nothing but the misfire count. */
static void
test_fire(void **state)
{
	sv_lease_core  *c  = NULL;
	sv_lease_holder h  = {.kind = SV_HOLDER_WORKER, .worker = {1, 0, 1}};
	sv_lease_req    rq = {0};
	sv_lease_info   g  = {0};
	svl_slot_arg    a  = {.now_ms = 5};
	uint64_t        w  = 0;
	lpool          *p;
	uint32_t        id = 0;

	(void) state;
	assert_int_equal(sv_lease_core_create(1, &c), SV_OK);
	assert_int_equal(
	    sv_lease_pool_add(c, "p", 2, 0, 0, SV_LEASE_KEEP, false, &id),
	    SV_OK);
	p          = svl_pool_get(c, id);
	rq.pool_id = id;
	assert_int_equal(sv_lease_acquire(c, &h, &rq, 1, &g, &w), SV_OK);
	assert_int_equal(p->slots[0].phase, SVL_HELD);
	assert_int_equal(p->nheld, 1);
	assert_int_equal(c->nleases, 1);
	assert_int_equal(c->misfires, 0);
	assert_false(svl_slot_fire(c, p, 1, SLE_CLAIM, &a));
	assert_int_equal(c->misfires, 1);
	assert_int_equal(p->slots[1].phase, SVL_FREE);
	assert_int_equal(p->nheld, 1);
	assert_int_equal(c->nleases, 1);
	sv_lease_core_destroy(c);
}

/* test_life: a lease on a pool with a TTL and a grace goes held -> grace
 * (disconnect) -> held (reconnect) -> grace -> free (TTL before grace),
 * shown to clients as held/disconnected, without a misfire. */
static void
test_life(void **state)
{
	sv_lease_core  *c  = NULL;
	sv_lease_holder h  = {.kind = SV_HOLDER_WORKER, .worker = {1, 0, 1}};
	sv_lease_req    rq = {0};
	sv_lease_info   g  = {0};
	sv_lease_fx     fx;
	uint64_t        w = 0, guard = 0, key = 0, due = 0;
	lpool          *p;
	uint32_t        id = 0;

	(void) state;
	assert_int_equal(sv_lease_core_create(1, &c), SV_OK);
	assert_int_equal(
	    sv_lease_pool_add(c, "p", 1, 100, 1000, SV_LEASE_KEEP, false, &id),
	    SV_OK);
	p          = svl_pool_get(c, id);
	rq.pool_id = id;
	assert_int_equal(sv_lease_acquire(c, &h, &rq, 0, &g, &w), SV_OK);
	assert_int_equal(sv_lease_holder_disconnected(c, &h, 10), SV_OK);
	assert_int_equal(p->slots[0].phase, SVL_GRACE);
	assert_int_equal(sv_lease_renew(c, &h, g.id, 10, &g), SV_OK);
	assert_int_equal(g.state, SV_LEASE_HELD);
	assert_true(g.disconnected);
	assert_int_equal(sv_lease_holder_reconnected(c, &h, 20), SV_OK);
	assert_int_equal(p->slots[0].phase, SVL_HELD);
	assert_int_equal(sv_lease_holder_disconnected(c, &h, 30), SV_OK);
	while (sv_lease_pop_effect(c, &fx)) {
		if (fx.kind == SV_LFX_TIMER_ARM) {
			key   = fx.key;
			guard = fx.guard;
			due   = fx.due_ms;
		}
	}
	assert_int_equal(due, 110); /* the TTL (10 + 100) before the grace */
	assert_int_equal(
	    sv_lease_timer(c, SV_LTIMER_SLOT, key, guard, due), SV_OK);
	assert_int_equal(p->slots[0].phase, SVL_FREE);
	assert_int_equal(p->nheld, 0);
	assert_int_equal(c->nleases, 0);
	assert_int_equal(c->misfires, 0);
	sv_lease_core_destroy(c);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_blocks),
	    cmocka_unit_test(test_fire),
	    cmocka_unit_test(test_life),
	};

	if (argc > 1 && strcmp(argv[1], "--print") == 0) {
		doc_table_print(&source);
		return 0;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
