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
/* lease_text gives the name or doc of slot state or event i. */
static const char *
lease_text(doc_text what, int i)
{
	switch (what) {
	case DOC_STATE_NAME:
		return svl_phase_name((svl_phase) i);
	case DOC_STATE_DOC:
		return svl_phase_doc((svl_phase) i);
	case DOC_EVENT_NAME:
		return svl_event_name((svl_event) i);
	default:
		return svl_event_doc((svl_event) i);
	}
}

/* lease_cell gives the slot cell of (st, ev); false when no handler. */
static bool
lease_cell(int st, int ev, doc_cell *out)
{
	const svl_slot_cell *c
	    = svl_slot_cell_at((svl_phase) st, (svl_event) ev);

	assert_non_null(c);
	*out = (doc_cell) {svl_phase_name(c->next), c->name, c->doc};
	return c->handler != NULL;
}

static const doc_machine machine = {
    .doc     = DOC,
    .source  = "core/lease_table.c",
    .prog    = "test_lease_table_doc",
    .prefix  = "lease",
    .subject = "slot",
    .nstates = SVL_PHASE_COUNT,
    .nevents = SLE_COUNT,
    .text    = lease_text,
    .cell    = lease_cell,
};

/* test_blocks: each generated table equals the docs' table row by row. */
static void
test_blocks(void **state)
{
	(void) state;
	doc_machine_check(&machine);
}

/* The one holder of the dispatch tests. */
static const sv_lease_holder holder
    = {.kind = SV_HOLDER_WORKER, .worker = {1, 0, 1}};

/* granted makes *c, a core with one pool of nslots slots (ttl_ms and
 * grace_ms as sv_lease_pool_add takes them), and grants holder a lease at
 * now_ms into *g; returns the pool.  The caller destroys *c. */
static lpool *
granted(sv_lease_core **c, uint32_t nslots, uint64_t ttl_ms, uint64_t grace_ms,
    uint64_t now_ms, sv_lease_info *g)
{
	sv_lease_req rq = {0};
	uint64_t     w  = 0;
	uint32_t     id = 0;

	assert_int_equal(sv_lease_core_create(1, c), SV_OK);
	assert_int_equal(sv_lease_pool_add(*c, "p", nslots, ttl_ms, grace_ms,
	                     SV_LEASE_KEEP, false, &id),
	    SV_OK);
	rq.pool_id = id;
	assert_int_equal(
	    sv_lease_acquire(*c, &holder, &rq, now_ms, g, &w), SV_OK);
	return svl_pool_get(*c, id);
}

/* test_fire: a free slot is granted through its cell (free -> held,
 * one lease counted); an event without a cell (a claim of a free slot)
 * changes nothing but the misfire count. */
static void
test_fire(void **state)
{
	sv_lease_core *c = NULL;
	sv_lease_info  g = {0};
	svl_slot_arg   a = {.now_ms = 5};
	lpool         *p;

	(void) state;
	p = granted(&c, 2, 0, 0, 1, &g);
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
	sv_lease_core *c = NULL;
	sv_lease_info  g = {0};
	sv_lease_fx    fx;
	uint64_t       guard = 0, key = 0, due = 0;
	lpool         *p;

	(void) state;
	p = granted(&c, 1, 100, 1000, 0, &g);
	assert_int_equal(sv_lease_holder_disconnected(c, &holder, 10), SV_OK);
	assert_int_equal(p->slots[0].phase, SVL_GRACE);
	assert_int_equal(sv_lease_renew(c, &holder, g.id, 10, &g), SV_OK);
	assert_int_equal(g.state, SV_LEASE_HELD);
	assert_true(g.disconnected);
	assert_int_equal(sv_lease_holder_reconnected(c, &holder, 20), SV_OK);
	assert_int_equal(p->slots[0].phase, SVL_HELD);
	assert_int_equal(sv_lease_holder_disconnected(c, &holder, 30), SV_OK);
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
		doc_machine_print(&machine);
		return 0;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
