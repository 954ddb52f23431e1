/*
 * test_backoff.c — capped exponential backoff (core/backoff.c): the delay
 * of the k-th consecutive fast failure is initial * factor^(k-1) up to the
 * cap; an exit after a healthy run clears the history and restarts at
 * once; healthy_ms = 0 disables backoff; the factor is clamped to
 * [1, SV_BACKOFF_MAX_FACTOR]; nothing overflows for huge k or huge values.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/backoff.h"

/* policy builds a backoff policy. */
static sv_backoff_policy
policy(uint64_t healthy, uint64_t initial, uint64_t max, double factor)
{
	sv_backoff_policy p = {healthy, initial, max, factor};
	return p;
}

/* k = 0 is no failure; then 100, 200, 400, ... until the cap. */
static void
test_sequence(void **state)
{
	sv_backoff_policy p      = policy(1000, 100, 30000, 2.0);
	const uint64_t    want[] = {0, 100, 200, 400, 800, 1600, 3200, 6400,
	       12800, 25600, 30000, 30000, 30000};

	(void) state;
	for (uint32_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		assert_int_equal(sv_backoff_delay(&p, k), want[k]);
	}
}

/* Factor 3 and a cap that is not a power of the factor: the cap wins at
 * the first step that would exceed it, and stays. */
static void
test_cap(void **state)
{
	sv_backoff_policy p = policy(1000, 10, 500, 3.0);

	(void) state;
	assert_int_equal(sv_backoff_delay(&p, 1), 10);
	assert_int_equal(sv_backoff_delay(&p, 2), 30);
	assert_int_equal(sv_backoff_delay(&p, 3), 90);
	assert_int_equal(sv_backoff_delay(&p, 4), 270);
	assert_int_equal(sv_backoff_delay(&p, 5), 500);
	assert_int_equal(sv_backoff_delay(&p, 6), 500);
	assert_int_equal(sv_backoff_delay(&p, 1000), 500);
	/* An initial delay above the cap is capped at once. */
	p = policy(1000, 900, 500, 2.0);
	assert_int_equal(sv_backoff_delay(&p, 1), 500);
	/* A cap equal to the initial delay: constant. */
	p = policy(1000, 250, 250, 2.0);
	for (uint32_t k = 1; k < 20; k++) {
		assert_int_equal(sv_backoff_delay(&p, k), 250);
	}
}

/* sv_backoff_next counts fast failures, and a healthy run (uptime >=
 * healthy_ms, the boundary included) clears them with no delay. */
static void
test_next_and_healthy_reset(void **state)
{
	sv_backoff_policy p  = policy(1000, 100, 30000, 2.0);
	uint32_t          ff = 0;

	(void) state;
	assert_int_equal(sv_backoff_next(&p, &ff, 0), 100);
	assert_int_equal(ff, 1);
	assert_int_equal(sv_backoff_next(&p, &ff, 999), 200);
	assert_int_equal(ff, 2);
	assert_int_equal(sv_backoff_next(&p, &ff, 10), 400);
	assert_int_equal(ff, 3);
	/* Exactly healthy_ms of uptime is healthy: immediate, history gone. */
	assert_int_equal(sv_backoff_next(&p, &ff, 1000), 0);
	assert_int_equal(ff, 0);
	/* The next fast failure starts from the initial delay again. */
	assert_int_equal(sv_backoff_next(&p, &ff, 5), 100);
	assert_int_equal(ff, 1);
	assert_int_equal(sv_backoff_next(&p, &ff, UINT64_MAX), 0);
	assert_int_equal(ff, 0);
}

/* healthy_ms = 0 disables backoff: every restart is immediate and the
 * count stays 0, whatever the other fields say. */
static void
test_disabled(void **state)
{
	sv_backoff_policy p  = policy(0, 100, 30000, 2.0);
	uint32_t          ff = 7;

	(void) state;
	for (int i = 0; i < 10; i++) {
		assert_int_equal(sv_backoff_next(&p, &ff, 0), 0);
		assert_int_equal(ff, 0);
	}
	assert_int_equal(sv_backoff_delay(&p, 1), 0);
	assert_int_equal(sv_backoff_delay(&p, 50), 0);
}

/* The factor is clamped: below 1 acts as 1 (constant), above the bound
 * acts as the bound; NaN-free inputs only (the config validates). */
static void
test_factor_bounds(void **state)
{
	sv_backoff_policy p = policy(1000, 100, UINT64_C(1) << 40, 0.5);

	(void) state;
	for (uint32_t k = 1; k < 10; k++) {
		assert_int_equal(sv_backoff_delay(&p, k), 100);
	}
	p.factor = 1.0;
	assert_int_equal(sv_backoff_delay(&p, 1), 100);
	assert_int_equal(sv_backoff_delay(&p, 100000), 100);
	p.factor = 1000.0; /* clamped to 16 */
	assert_int_equal(sv_backoff_delay(&p, 1), 100);
	assert_int_equal(sv_backoff_delay(&p, 2), 1600);
	assert_int_equal(sv_backoff_delay(&p, 3), 25600);
	p.factor = SV_BACKOFF_MAX_FACTOR;
	assert_int_equal(sv_backoff_delay(&p, 3), 25600);
	p.factor = 1.5;
	assert_int_equal(sv_backoff_delay(&p, 2), 150);
	assert_int_equal(sv_backoff_delay(&p, 3), 225);
}

/* Huge k, huge cap, huge initial: the result is the cap (or below it) and
 * never wraps; the computation ends quickly. */
static void
test_no_overflow(void **state)
{
	sv_backoff_policy p  = policy(1000, 100, UINT64_MAX, 16.0);
	uint32_t          ff = UINT32_MAX - 1;

	(void) state;
	assert_int_equal(sv_backoff_delay(&p, UINT32_MAX), UINT64_MAX);
	p.max_ms = 30000;
	assert_int_equal(sv_backoff_delay(&p, UINT32_MAX), 30000);
	p.factor = 1.001; /* slow growth: many steps, still bounded */
	assert_int_equal(sv_backoff_delay(&p, UINT32_MAX), 30000);
	p = policy(1000, UINT64_MAX, UINT64_MAX, 2.0);
	assert_int_equal(sv_backoff_delay(&p, 1), UINT64_MAX);
	assert_int_equal(sv_backoff_delay(&p, 2), UINT64_MAX);
	/* Initial 0: always 0, for any k. */
	p = policy(1000, 0, 30000, 2.0);
	assert_int_equal(sv_backoff_delay(&p, 1), 0);
	assert_int_equal(sv_backoff_delay(&p, UINT32_MAX), 0);
	/* The failure count saturates instead of wrapping to 0. */
	p = policy(1000, 100, 30000, 2.0);
	assert_int_equal(sv_backoff_next(&p, &ff, 0), 30000);
	assert_int_equal(ff, UINT32_MAX);
	assert_int_equal(sv_backoff_next(&p, &ff, 0), 30000);
	assert_int_equal(ff, UINT32_MAX);
	/* The result is monotonic in k up to the cap. */
	p = policy(1000, 3, 1000000007, 1.7);
	for (uint32_t k = 1; k < 200; k++) {
		assert_true(
		    sv_backoff_delay(&p, k) <= sv_backoff_delay(&p, k + 1));
		assert_true(sv_backoff_delay(&p, k) <= p.max_ms);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sequence),
	    cmocka_unit_test(test_cap),
	    cmocka_unit_test(test_next_and_healthy_reset),
	    cmocka_unit_test(test_disabled),
	    cmocka_unit_test(test_factor_bounds),
	    cmocka_unit_test(test_no_overflow),
	};
	return cmocka_run_group_tests_name("backoff", tests, NULL, NULL);
}
