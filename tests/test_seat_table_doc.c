/*
 * test_seat_table_doc.c — docs/supervision.md against the seat state
 * machine the core runs (core/seat_table.c) and the event kinds it emits:
 *
 *   - "seat-states", "seat-events" and "seat-table": the docs' tables of
 *     seat states, seat events and transitions (state, event, next state,
 *     handler, what happens) must equal, row by row and in order, what the
 *     C table gives; a changed, missing or extra row fails, naming it;
 *   - "event-kinds": the docs' table of events (SV_EV_*) lists every kind
 *     sv_event_kind_name knows, once, and nothing else.
 *
 * and the dispatch itself: a pair the table has no cell for changes
 * nothing and is counted as a misfire; a cell moves the seat.
 *
 * `test_seat_table_doc --print` prints the three generated blocks (markers
 * included) so that the docs can be regenerated from the table.
 */
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "doc_table.h"
#include "core/supervision_internal.h"

#ifndef SV_SOURCE_DIR
#error "SV_SOURCE_DIR must name the source tree"
#endif

#define DOC SV_SOURCE_DIR "/docs/supervision.md"
/* seat_text gives the name or doc of seat state or event i. */
static const char *
seat_text(doc_text what, int i)
{
	switch (what) {
	case DOC_STATE_NAME:
		return svs_seat_phase_name((sv_seat_phase) i);
	case DOC_STATE_DOC:
		return svs_seat_phase_doc((sv_seat_phase) i);
	case DOC_EVENT_NAME:
		return svs_seat_event_name((svs_seat_event) i);
	default:
		return svs_seat_event_doc((svs_seat_event) i);
	}
}

/* seat_cell gives the seat cell of (st, ev); false when no handler. */
static bool
seat_cell(int st, int ev, doc_cell *out)
{
	const svs_seat_cell *c
	    = svs_seat_cell_at((sv_seat_phase) st, (svs_seat_event) ev);

	assert_non_null(c);
	*out = (doc_cell) {svs_seat_phase_name(c->next), c->name, c->doc};
	return c->handler != NULL;
}

static const doc_machine machine = {
    .doc     = DOC,
    .source  = "core/seat_table.c",
    .prog    = "test_seat_table_doc",
    .prefix  = "seat",
    .subject = "seat",
    .nstates = SV_SP_COUNT,
    .nevents = SEV_COUNT,
    .text    = seat_text,
    .cell    = seat_cell,
};

/* test_blocks: each generated table equals the docs' table row by row. */
static void
test_blocks(void **state)
{
	(void) state;
	doc_machine_check(&machine);
}

/* cell_name copies the first cell of a row, without backticks. */
static void
cell_name(const char *row, char *out, size_t cap)
{
	size_t n = 0;

	for (const char *p = row + 1; *p != '\0' && *p != '|'; p++) {
		if (*p != '`' && *p != ' ' && n + 1 < cap) {
			out[n++] = *p;
		}
	}
	out[n] = '\0';
}

/* test_event_kinds: the docs' events table names every event kind once,
 * and only those. */
static void
test_event_kinds(void **state)
{
	static doc_rows have;
	char           *doc      = doc_slurp(DOC);
	int             seen[64] = {0};
	int             kinds    = 0;

	(void) state;
	doc_block_rows(doc, DOC, "event-kinds", &have);
	free(doc);
	for (size_t i = 0; i < have.n; i++) {
		char name[64];
		int  k;
		cell_name(have.row[i], name, sizeof(name));
		for (k = 1; k < 64; k++) {
			const char *kn = sv_event_kind_name((sv_event_kind) k);
			if (kn != NULL && strcmp(kn, name) == 0) {
				break;
			}
		}
		if (k == 64) {
			fail_msg("%s: events table row \"%s\" names no event "
			         "kind",
			    DOC, name);
		}
		if (seen[k]++ > 0) {
			fail_msg("%s: events table lists %s twice", DOC, name);
		}
	}
	for (int k = 1; k < 64; k++) {
		const char *kn = sv_event_kind_name((sv_event_kind) k);
		if (kn == NULL) {
			continue;
		}
		kinds++;
		if (seen[k] == 0) {
			fail_msg("%s: events table lacks %s", DOC, kn);
		}
	}
	assert_int_equal(kinds, SV_EV_ROLL_DONE);
}

/* test_fire: a pending seat spawns through its cell (pending -> live);
 * an event without a cell (exit of a seat at rest) changes nothing but the
 * misfire count. */
static void
test_fire(void **state)
{
	sv_core        *c   = NULL;
	sv_group_policy pol = {.stop_signal = 15, .stop_timeout_ms = 1000};
	sv_spawn_ticket t;
	sv_cgroup      *g;
	uint32_t        id;
	sv_fx           fx;

	(void) state;
	assert_int_equal(sv_core_create(SV_STRATEGY_ONE_FOR_ONE, &c), SV_OK);
	assert_int_equal(sv_core_add_group(c, "g", &pol, 1, 2, &id), SV_OK);
	g = (sv_cgroup *) sv_core_group(c, id);
	assert_int_equal(g->seats[0].state, SV_SP_PENDING);
	assert_int_equal(g->seats[1].state, SV_SP_REST);
	assert_int_equal(g->npending, 1);
	assert_true(sv_core_next_spawn(c, 0, &t));
	assert_int_equal(g->seats[0].state, SV_SP_LIVE);
	assert_int_equal(g->seats[0].cur.state, SV_PROC_SPAWNING);
	assert_int_equal(g->npending, 0);
	while (sv_core_pop_effect(c, &fx)) {
	}
	assert_int_equal(c->misfires, 0);
	svs_seat_fire(c, g, &g->seats[1], SEV_EXIT, NULL);
	assert_int_equal(c->misfires, 1);
	assert_int_equal(g->seats[1].state, SV_SP_REST);
	assert_int_equal(g->live, 1);
	assert_false(sv_core_pop_effect(c, &fx));
	sv_core_destroy(c);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_blocks),
	    cmocka_unit_test(test_event_kinds),
	    cmocka_unit_test(test_fire),
	};

	if (argc > 1 && strcmp(argv[1], "--print") == 0) {
		doc_machine_print(&machine);
		return 0;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
