/*
 * test_restart.c — the restart decision (core/restart.c): release when not
 * wanted, immediate restart when healthy or requested, capped exponential
 * backoff for fast failures, reset after a healthy run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/restart.h"

static const sv_restart_policy pol = {1000, 100, 1000};

/* An unwanted ordinal is released whatever its history. */
static void
test_not_wanted(void **state)
{
	sv_restart_state st = {5};
	sv_exit_facts    f  = {10, false, true};
	sv_exit_decision d  = sv_restart_decide(&pol, &st, &f);

	(void) state;
	assert_int_equal(d.action, SV_EXIT_RELEASE);
	assert_int_equal(st.fast_failures, 0);
}

/* A healthy exit restarts at once and clears the history. */
static void
test_healthy(void **state)
{
	sv_restart_state st = {3};
	sv_exit_facts    f  = {1000, true, false};
	sv_exit_decision d  = sv_restart_decide(&pol, &st, &f);

	(void) state;
	assert_int_equal(d.action, SV_EXIT_RESTART);
	assert_int_equal(d.delay_ms, 0);
	assert_int_equal(st.fast_failures, 0);
}

/* Fast failures back off 100, 200, 400, 800, then stay at the 1000 cap;
 * a requested restart is immediate and resets the sequence. */
static void
test_backoff_sequence(void **state)
{
	sv_restart_state st     = {0};
	sv_exit_facts    f      = {999, true, false};
	const uint64_t   want[] = {100, 200, 400, 800, 1000, 1000, 1000};

	(void) state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		sv_exit_decision d = sv_restart_decide(&pol, &st, &f);
		assert_int_equal(d.action, SV_EXIT_RESTART);
		assert_int_equal(d.delay_ms, want[i]);
	}
	f.requested        = true;
	sv_exit_decision d = sv_restart_decide(&pol, &st, &f);
	assert_int_equal(d.delay_ms, 0);
	assert_int_equal(st.fast_failures, 0);
	f.requested = false;
	d           = sv_restart_decide(&pol, &st, &f);
	assert_int_equal(d.delay_ms, 100);
}

/* min_uptime_ms = 0 disables backoff; huge counts never overflow. */
static void
test_no_backoff_and_overflow(void **state)
{
	sv_restart_policy p0  = {0, 100, 1000};
	sv_restart_policy big = {10, UINT64_MAX / 3, UINT64_MAX};
	sv_restart_state  st  = {0};
	sv_exit_facts     f   = {0, true, false};

	(void) state;
	for (int i = 0; i < 100; i++) {
		assert_int_equal(sv_restart_decide(&p0, &st, &f).delay_ms, 0);
	}
	st.fast_failures = UINT32_MAX - 1;
	for (int i = 0; i < 3; i++) {
		sv_exit_decision d = sv_restart_decide(&big, &st, &f);
		assert_true(d.delay_ms >= UINT64_MAX / 3);
	}
	assert_int_equal(st.fast_failures, UINT32_MAX);
	/* A zero initial delay stays zero, and quickly. */
	sv_restart_policy zero = {10, 0, 5000};
	st.fast_failures       = UINT32_MAX - 1;
	assert_int_equal(sv_restart_decide(&zero, &st, &f).delay_ms, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_not_wanted),
	    cmocka_unit_test(test_healthy),
	    cmocka_unit_test(test_backoff_sequence),
	    cmocka_unit_test(test_no_backoff_and_overflow),
	};
	return cmocka_run_group_tests_name("restart", tests, NULL, NULL);
}
