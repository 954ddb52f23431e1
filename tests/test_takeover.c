/*
 * test_takeover.c — the takeover plan (core/takeover.c) and the records
 * each event makes durable (core/durable.c), without processes: seats and
 * observations are plain structs. Every branch of the plan: forget (gone,
 * unclaimable, other boot), kill (group gone, beyond max_count,
 * die_with_supervisor, a newer generation), adopt (newest claimed, the
 * unrecorded spawn, first of equals), respawn (with and without a floor), the
 * floor and release records, the probe, the size rule, a bad input; every
 * record an event makes and every condition of a release.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/durable.h"
#include "core/takeover.h"

/* seat makes a kept seat on the same boot with n processes procs. */
static sv_to_seat
seat(const sv_to_proc *procs, uint32_t n)
{
	return (sv_to_seat) {.same_boot = true,
	    .configured                 = true,
	    .in_range                   = true,
	    .next_generation            = 5,
	    .procs                      = procs,
	    .nprocs                     = n};
}

/* proc makes a process of generation gen, claimed (a pidfd) or gone. */
static sv_to_proc
proc(uint64_t gen, bool claimed)
{
	return (sv_to_proc) {.generation = gen,
	    .pid                         = 100 + (int64_t) gen,
	    .pidfd                       = claimed,
	    .gone                        = !claimed};
}

/* check_step asserts step i of plan. */
static void
check_step(const sv_to_plan *plan, uint32_t i, sv_to_action a, sv_to_reason r,
    uint32_t proc_index)
{
	assert_true(i < plan->nsteps);
	assert_int_equal(plan->steps[i].action, a);
	assert_int_equal(plan->steps[i].reason, r);
	assert_int_equal(plan->steps[i].proc, proc_index);
}

/* The one claimed process of a kept seat is adopted; floor recorded. */
static void
test_adopt_one(void **state)
{
	sv_to_proc p[1] = {proc(4, true)};
	sv_to_seat in   = seat(p, 1);
	sv_to_plan plan;

	(void) state;
	assert_int_equal(sv_takeover_plan(&in, &plan), SV_OK);
	assert_int_equal(plan.nsteps, 1);
	check_step(&plan, 0, SV_TO_ADOPT, SV_TOR_NEWEST, 0);
	assert_true(plan.record_floor);
	assert_false(plan.release);
	assert_false(plan.apply_floor);
	assert_int_equal(plan.floor, 5);
}

/* Two claimed generations: the newer is adopted, the older killed, in
 * whichever order the journal lists them; kills come before the adoption. */
static void
test_newer_holds(void **state)
{
	sv_to_proc a[2] = {proc(3, true), proc(4, true)};
	sv_to_proc b[2] = {proc(4, true), proc(3, true)};
	sv_to_seat in   = seat(a, 2);
	sv_to_plan plan;

	(void) state;
	assert_int_equal(sv_takeover_plan(&in, &plan), SV_OK);
	assert_int_equal(plan.nsteps, 2);
	check_step(&plan, 0, SV_TO_KILL, SV_TOR_NEWER_HOLDS, 0);
	check_step(&plan, 1, SV_TO_ADOPT, SV_TOR_NEWEST, 1);
	in = seat(b, 2);
	assert_int_equal(sv_takeover_plan(&in, &plan), SV_OK);
	assert_int_equal(plan.nsteps, 2);
	check_step(&plan, 0, SV_TO_KILL, SV_TOR_NEWER_HOLDS, 1);
	check_step(&plan, 1, SV_TO_ADOPT, SV_TOR_NEWEST, 0);
}

/* Equal generations (cannot come from one journal, but the plan must not
 * adopt two): the first is adopted, the other killed. */
static void
test_first_of_equals(void **state)
{
	sv_to_proc p[2] = {proc(4, true), proc(4, true)};
	sv_to_seat in   = seat(p, 2);
	sv_to_plan plan;

	(void) state;
	assert_int_equal(sv_takeover_plan(&in, &plan), SV_OK);
	assert_int_equal(plan.nsteps, 2);
	check_step(&plan, 0, SV_TO_KILL, SV_TOR_NEWER_HOLDS, 1);
	check_step(&plan, 1, SV_TO_ADOPT, SV_TOR_NEWEST, 0);
}

/* A newer generation that is gone does not hold the seat: the older one
 * still alive is adopted, the gone one forgotten. */
static void
test_gone_newer(void **state)
{
	sv_to_proc p[2] = {proc(3, true), proc(4, false)};
	sv_to_seat in   = seat(p, 2);
	sv_to_plan plan;

	(void) state;
	assert_int_equal(sv_takeover_plan(&in, &plan), SV_OK);
	assert_int_equal(plan.nsteps, 2);
	check_step(&plan, 0, SV_TO_FORGET, SV_TOR_GONE, 1);
	check_step(&plan, 1, SV_TO_ADOPT, SV_TOR_NEWEST, 0);
}

/* A process the shell could not tell about (no pidfd to be had, but not
 * known gone) is left alone, not adopted, with its own reason. */
static void
test_unclaimable(void **state)
{
	sv_to_proc p[2] = {proc(3, true), proc(4, false)};
	sv_to_seat in   = seat(p, 2);
	sv_to_plan plan;

	(void) state;
	p[1].gone = false;
	assert_int_equal(sv_takeover_plan(&in, &plan), SV_OK);
	assert_int_equal(plan.nsteps, 2);
	check_step(&plan, 0, SV_TO_FORGET, SV_TOR_UNCLAIMABLE, 1);
	check_step(&plan, 1, SV_TO_ADOPT, SV_TOR_NEWEST, 0);
}

/* The spawn found by its environment (a third process) is the newest. */
static void
test_unrecorded_adopted(void **state)
{
	sv_to_proc p[3] = {proc(2, true), proc(3, true), proc(4, true)};
	sv_to_seat in   = seat(p, 3);
	sv_to_plan plan;

	(void) state;
	p[2].unrecorded = true;
	in.spawning     = true;
	assert_int_equal(sv_takeover_plan(&in, &plan), SV_OK);
	assert_int_equal(plan.nsteps, 3);
	check_step(&plan, 0, SV_TO_KILL, SV_TOR_NEWER_HOLDS, 0);
	check_step(&plan, 1, SV_TO_KILL, SV_TOR_NEWER_HOLDS, 1);
	check_step(&plan, 2, SV_TO_ADOPT, SV_TOR_NEWEST, 2);
}

/* Nothing claimed: every process forgotten, the seat respawned with its
 * floor applied; without a floor there is nothing to apply. */
static void
test_respawn(void **state)
{
	sv_to_proc p[2] = {proc(3, false), proc(4, false)};
	sv_to_seat in   = seat(p, 2);
	sv_to_plan plan;

	(void) state;
	assert_int_equal(sv_takeover_plan(&in, &plan), SV_OK);
	assert_int_equal(plan.nsteps, 3);
	check_step(&plan, 0, SV_TO_FORGET, SV_TOR_GONE, 0);
	check_step(&plan, 1, SV_TO_FORGET, SV_TOR_GONE, 1);
	check_step(&plan, 2, SV_TO_RESPAWN, SV_TOR_NOTHING_ALIVE, SV_TO_SEAT);
	assert_true(plan.apply_floor);
	assert_true(plan.record_floor);

	in                 = seat(NULL, 0);
	in.next_generation = 0;
	assert_int_equal(sv_takeover_plan(&in, &plan), SV_OK);
	assert_int_equal(plan.nsteps, 1);
	check_step(&plan, 0, SV_TO_RESPAWN, SV_TOR_NOTHING_ALIVE, SV_TO_SEAT);
	assert_false(plan.apply_floor);
	assert_false(plan.record_floor);
}

/* A journal from another boot: nothing can be alive, even a process the
 * shell (wrongly) says it claimed; the seat respawns. */
static void
test_other_boot(void **state)
{
	sv_to_proc p[2] = {proc(3, true), proc(4, false)};
	sv_to_seat in   = seat(p, 2);
	sv_to_plan plan;

	(void) state;
	in.same_boot = false;
	assert_int_equal(sv_takeover_plan(&in, &plan), SV_OK);
	assert_int_equal(plan.nsteps, 3);
	check_step(&plan, 0, SV_TO_FORGET, SV_TOR_OTHER_BOOT, 0);
	check_step(&plan, 1, SV_TO_FORGET, SV_TOR_OTHER_BOOT, 1);
	check_step(&plan, 2, SV_TO_RESPAWN, SV_TOR_NOTHING_ALIVE, SV_TO_SEAT);
	assert_true(plan.record_floor);
}

/* A group the config no longer has: claimed processes killed, gone ones
 * forgotten, no seat step, nothing journaled for the seat. */
static void
test_group_gone(void **state)
{
	sv_to_proc p[2] = {proc(3, true), proc(4, false)};
	sv_to_seat in   = seat(p, 2);
	sv_to_plan plan;

	(void) state;
	in.configured = false;
	in.in_range   = false;
	in.released   = true;
	assert_int_equal(sv_takeover_plan(&in, &plan), SV_OK);
	assert_int_equal(plan.nsteps, 2);
	check_step(&plan, 0, SV_TO_KILL, SV_TOR_GROUP_GONE, 0);
	check_step(&plan, 1, SV_TO_FORGET, SV_TOR_GONE, 1);
	assert_false(plan.record_floor);
	assert_false(plan.release);
}

/* An ordinal at or beyond max_count: every claimed process killed, the
 * newest too. */
static void
test_beyond_max(void **state)
{
	sv_to_proc p[2] = {proc(3, true), proc(4, true)};
	sv_to_seat in   = seat(p, 2);
	sv_to_plan plan;

	(void) state;
	in.in_range = false;
	assert_int_equal(sv_takeover_plan(&in, &plan), SV_OK);
	assert_int_equal(plan.nsteps, 2);
	check_step(&plan, 0, SV_TO_KILL, SV_TOR_BEYOND_MAX, 0);
	check_step(&plan, 1, SV_TO_KILL, SV_TOR_BEYOND_MAX, 1);
	assert_false(plan.record_floor);
}

/* die_with_supervisor: claimed processes killed, the seat respawned. */
static void
test_die_with_supervisor(void **state)
{
	sv_to_proc p[1] = {proc(4, true)};
	sv_to_seat in   = seat(p, 1);
	sv_to_plan plan;

	(void) state;
	in.die_with_supervisor = true;
	assert_int_equal(sv_takeover_plan(&in, &plan), SV_OK);
	assert_int_equal(plan.nsteps, 2);
	check_step(&plan, 0, SV_TO_KILL, SV_TOR_DIE_WITH_SUPERVISOR, 0);
	check_step(&plan, 1, SV_TO_RESPAWN, SV_TOR_NOTHING_ALIVE, SV_TO_SEAT);
	assert_true(plan.apply_floor);
}

/* A released seat is released again before its adoption (the core then
 * stops what it adopts), and only for a kept seat. */
static void
test_released(void **state)
{
	sv_to_proc p[1] = {proc(4, true)};
	sv_to_seat in   = seat(p, 1);
	sv_to_plan plan;

	(void) state;
	in.released = true;
	assert_int_equal(sv_takeover_plan(&in, &plan), SV_OK);
	assert_true(plan.release);
	check_step(&plan, 0, SV_TO_ADOPT, SV_TOR_NEWEST, 0);
	in.in_range = false;
	assert_int_equal(sv_takeover_plan(&in, &plan), SV_OK);
	assert_false(plan.release);
}

/* What the shell must observe: claims and the search only on the same
 * boot, the search only for an unresolved spawn. */
static void
test_probe(void **state)
{
	sv_to_seat  in = seat(NULL, 0);
	sv_to_probe pr;

	(void) state;
	sv_takeover_probe(&in, &pr);
	assert_true(pr.claim);
	assert_false(pr.search);
	in.spawning = true;
	sv_takeover_probe(&in, &pr);
	assert_true(pr.claim);
	assert_true(pr.search);
	in.same_boot = false;
	sv_takeover_probe(&in, &pr);
	assert_false(pr.claim);
	assert_false(pr.search);
}

/* Too many processes, or none given for a count: refused, plan empty. */
static void
test_bad_input(void **state)
{
	sv_to_proc p[SV_TAKEOVER_PROCS + 1];
	sv_to_seat in;
	sv_to_plan plan;

	(void) state;
	memset(p, 0, sizeof(p));
	in = seat(p, SV_TAKEOVER_PROCS + 1);
	assert_int_equal(sv_takeover_plan(&in, &plan), SV_EINVAL);
	assert_int_equal(plan.nsteps, 0);
	in = seat(NULL, 1);
	assert_int_equal(sv_takeover_plan(&in, &plan), SV_EINVAL);
}

/* The journaled size is restored only under the same config count, when
 * it differs and fits max_count. */
static void
test_size(void **state)
{
	(void) state;
	assert_true(sv_takeover_size(5, 3, 3, 8));
	assert_false(sv_takeover_size(5, 3, 4, 8)); /* count edited */
	assert_false(sv_takeover_size(3, 3, 3, 8)); /* nothing to do */
	assert_false(sv_takeover_size(9, 3, 3, 8)); /* beyond max_count */
	assert_true(sv_takeover_size(8, 3, 3, 8));
}

/* Every reason has its own text. */
static void
test_reason_text(void **state)
{
	(void) state;
	for (int a = SV_TOR_NEWEST; a <= SV_TOR_LAST; a++) {
		assert_string_not_equal(
		    sv_takeover_reason_text((sv_to_reason) a), "?");
		for (int b = SV_TOR_NEWEST; b < a; b++) {
			assert_string_not_equal(
			    sv_takeover_reason_text((sv_to_reason) a),
			    sv_takeover_reason_text((sv_to_reason) b));
		}
	}
	assert_string_equal(sv_takeover_reason_text(SV_TOR_NEWER_HOLDS),
	    "a newer generation holds the seat");
}

/* facts of a known seat no longer wanted, nothing in the way. */
static sv_durable_facts
released_facts(void)
{
	return (sv_durable_facts) {
	    .group_known = true, .proc_known = true, .seat_known = true};
}

/* records runs sv_durable_records and returns the number of records,
 * writing the kinds to k. */
static uint32_t
records(sv_event_kind kind, sv_why why, const sv_durable_facts *f,
    sv_jkind k[SV_DURABLE_MAX])
{
	sv_event        ev = {.kind = kind, .why = why};
	sv_durable_plan plan;

	sv_durable_records(&ev, f, &plan);
	memcpy(k, plan.kinds, sizeof(plan.kinds));
	return plan.n;
}

/* Each event's records. */
static void
test_durable_records(void **state)
{
	sv_durable_facts f = released_facts();
	sv_jkind         k[SV_DURABLE_MAX];

	(void) state;
	f.seat_wanted = true;
	assert_int_equal(records(SV_EV_STARTED, 0, &f, k), 1);
	assert_int_equal(k[0], SV_J_STARTED);
	assert_int_equal(records(SV_EV_ADOPTED, 0, &f, k), 1);
	f.ready = true;
	assert_int_equal(records(SV_EV_ADOPTED, 0, &f, k), 2);
	assert_int_equal(k[0], SV_J_STARTED);
	assert_int_equal(k[1], SV_J_READY);
	f.proc_known = false; /* no pid to write */
	assert_int_equal(records(SV_EV_ADOPTED, 0, &f, k), 0);
	assert_int_equal(records(SV_EV_STARTED, 0, &f, k), 0);
	assert_int_equal(records(SV_EV_READY, 0, &f, k), 1);
	assert_int_equal(k[0], SV_J_READY);
	assert_int_equal(records(SV_EV_STOPPING, SV_WHY_RESTART, &f, k), 1);
	assert_int_equal(k[0], SV_J_STOPPING);
	assert_int_equal(records(SV_EV_EXITED, 0, &f, k), 1);
	assert_int_equal(k[0], SV_J_REAPED);
	assert_int_equal(records(SV_EV_GROUP_SCALED, 0, &f, k), 1);
	assert_int_equal(k[0], SV_J_GROUP);
	assert_int_equal(records(SV_EV_GROUP_CREATED, 0, &f, k), 1);
	assert_int_equal(k[0], SV_J_GROUP);
	assert_int_equal(records(SV_EV_GROUP_DELETED, 0, &f, k), 1);
	assert_int_equal(k[0], SV_J_DELETED);
	assert_int_equal(records(SV_EV_RESTART_SCHEDULED, 0, &f, k), 0);
	f.group_known = false; /* nothing is journaled of an unknown group */
	assert_int_equal(records(SV_EV_EXITED, 0, &f, k), 0);
}

/* A release: a drain, or a stop as unwanted or drained, of a seat no
 * longer wanted, once; never while shutting down or deleting. */
static void
test_durable_release(void **state)
{
	sv_durable_facts f = released_facts();
	sv_jkind         k[SV_DURABLE_MAX];
	sv_event         ev;

	(void) state;
	assert_int_equal(records(SV_EV_STOPPING, SV_WHY_UNWANTED, &f, k), 2);
	assert_int_equal(k[0], SV_J_STOPPING);
	assert_int_equal(k[1], SV_J_FREED);
	assert_int_equal(records(SV_EV_STOPPED, SV_WHY_DRAINED, &f, k), 1);
	assert_int_equal(k[0], SV_J_FREED);
	assert_int_equal(records(SV_EV_DRAINING, 0, &f, k), 1);
	assert_int_equal(k[0], SV_J_FREED);
	/* A completed worker of a temporary group: not released. */
	assert_int_equal(records(SV_EV_STOPPED, SV_WHY_COMPLETED, &f, k), 0);
	ev = (sv_event) {.kind = SV_EV_STOPPED, .why = SV_WHY_UNWANTED};
	assert_true(sv_durable_release(&ev, &f));
	ev.kind = SV_EV_EXITED; /* only stops and drains release */
	assert_false(sv_durable_release(&ev, &f));
	ev.kind       = SV_EV_STOPPED;
	f             = released_facts();
	f.seat_wanted = true;
	assert_false(sv_durable_release(&ev, &f));
	f          = released_facts();
	f.released = true; /* once per release */
	assert_false(sv_durable_release(&ev, &f));
	f          = released_facts();
	f.deleting = true;
	assert_false(sv_durable_release(&ev, &f));
	f               = released_facts();
	f.shutting_down = true;
	assert_false(sv_durable_release(&ev, &f));
	f            = released_facts();
	f.seat_known = false;
	assert_false(sv_durable_release(&ev, &f));
	f             = released_facts();
	f.group_known = false;
	assert_false(sv_durable_release(&ev, &f));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_adopt_one),
	    cmocka_unit_test(test_newer_holds),
	    cmocka_unit_test(test_first_of_equals),
	    cmocka_unit_test(test_gone_newer),
	    cmocka_unit_test(test_unclaimable),
	    cmocka_unit_test(test_unrecorded_adopted),
	    cmocka_unit_test(test_respawn),
	    cmocka_unit_test(test_other_boot),
	    cmocka_unit_test(test_group_gone),
	    cmocka_unit_test(test_beyond_max),
	    cmocka_unit_test(test_die_with_supervisor),
	    cmocka_unit_test(test_released),
	    cmocka_unit_test(test_probe),
	    cmocka_unit_test(test_bad_input),
	    cmocka_unit_test(test_size),
	    cmocka_unit_test(test_reason_text),
	    cmocka_unit_test(test_durable_records),
	    cmocka_unit_test(test_durable_release),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
