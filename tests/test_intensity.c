/*
 * test_intensity.c — sliding-window restart intensity (core/intensity.c):
 * exactly max restarts within the window are allowed, the next one is
 * refused and not recorded; an entry leaves the window exactly window_ms
 * after it was recorded; max = 0 is unlimited; reset forgets; bad
 * parameters are refused. A randomized check compares against a plain
 * list of timestamps.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/intensity.h"

/* Exactly max restarts at the same instant are fine; max + 1 is not, and
 * the refused one is not recorded. */
static void
test_exactly_max(void **state)
{
	sv_intensity in;

	(void) state;
	assert_int_equal(sv_intensity_init(&in, 3, 1000), SV_OK);
	assert_false(sv_intensity_record(&in, 100));
	assert_false(sv_intensity_record(&in, 100));
	assert_false(sv_intensity_record(&in, 100));
	assert_int_equal(sv_intensity_count(&in, 100), 3);
	assert_true(sv_intensity_record(&in, 100));
	assert_int_equal(sv_intensity_count(&in, 100), 3);
	assert_true(sv_intensity_record(&in, 1099));
	sv_intensity_fini(&in);
}

/* The window is (now - window, now]: an entry recorded at t counts until
 * t + window - 1 and is gone at t + window exactly. */
static void
test_window_boundary(void **state)
{
	sv_intensity in;

	(void) state;
	assert_int_equal(sv_intensity_init(&in, 2, 1000), SV_OK);
	assert_false(sv_intensity_record(&in, 0));
	assert_false(sv_intensity_record(&in, 500));
	assert_true(sv_intensity_record(&in, 999)); /* 0 still counts */
	assert_int_equal(sv_intensity_count(&in, 999), 2);
	assert_int_equal(sv_intensity_count(&in, 1000), 1); /* 0 expired */
	assert_false(sv_intensity_record(&in, 1000));
	assert_true(sv_intensity_record(&in, 1499));
	assert_false(sv_intensity_record(&in, 1500)); /* 500 expired */
	assert_int_equal(sv_intensity_count(&in, 1500), 2);
	/* After a long pause everything has expired. */
	assert_int_equal(sv_intensity_count(&in, 100000), 0);
	assert_false(sv_intensity_record(&in, 100000));
	assert_false(sv_intensity_record(&in, 100000));
	assert_true(sv_intensity_record(&in, 100000));
	sv_intensity_fini(&in);
}

/* A steady rate of exactly max per window never trips, around the ring
 * many times; one more within any window does. */
static void
test_sliding(void **state)
{
	sv_intensity in;
	uint64_t     t = 0;

	(void) state;
	assert_int_equal(sv_intensity_init(&in, 5, 100), SV_OK);
	for (int i = 0; i < 1000; i++) {
		assert_false(sv_intensity_record(&in, t));
		t += 20; /* 5 per 100 ms */
	}
	assert_int_equal(sv_intensity_count(&in, t - 20), 5);
	/* 19 ms instead of 20: the oldest of the five is still inside. */
	assert_true(sv_intensity_record(&in, t - 1));
	assert_false(sv_intensity_record(&in, t));
	sv_intensity_fini(&in);
}

/* A window so long that time + window does not fit in 64 bits: nothing
 * ever expires (no wrap-around makes an entry look old). */
static void
test_huge_window(void **state)
{
	sv_intensity in;

	(void) state;
	assert_int_equal(sv_intensity_init(&in, 1, UINT64_MAX), SV_OK);
	assert_false(sv_intensity_record(&in, 5));
	assert_int_equal(sv_intensity_count(&in, 10), 1);
	assert_true(sv_intensity_record(&in, 10));
	assert_true(sv_intensity_record(&in, UINT64_MAX - 1));
	sv_intensity_fini(&in);
	assert_int_equal(sv_intensity_init(&in, 2, UINT64_MAX - 3), SV_OK);
	assert_false(sv_intensity_record(&in, 7));
	assert_false(sv_intensity_record(&in, UINT64_MAX - 1));
	/* UINT64_MAX - 8 ms after 7 is still less than the window. */
	assert_int_equal(sv_intensity_count(&in, UINT64_MAX - 1), 2);
	sv_intensity_fini(&in);
}

/* max = 0 is unlimited and needs no window; nothing is counted. */
static void
test_unlimited(void **state)
{
	sv_intensity in;

	(void) state;
	assert_int_equal(sv_intensity_init(&in, 0, 0), SV_OK);
	for (int i = 0; i < 100000; i++) {
		assert_false(sv_intensity_record(&in, 5));
	}
	assert_int_equal(sv_intensity_count(&in, 5), 0);
	sv_intensity_reset(&in);
	sv_intensity_fini(&in);
	assert_int_equal(sv_intensity_init(&in, 0, 1000), SV_OK);
	assert_false(sv_intensity_record(&in, 5));
	sv_intensity_fini(&in);
}

/* reset forgets every recorded restart. */
static void
test_reset(void **state)
{
	sv_intensity in;

	(void) state;
	assert_int_equal(sv_intensity_init(&in, 2, 1000), SV_OK);
	assert_false(sv_intensity_record(&in, 10));
	assert_false(sv_intensity_record(&in, 11));
	assert_true(sv_intensity_record(&in, 12));
	sv_intensity_reset(&in);
	assert_int_equal(sv_intensity_count(&in, 12), 0);
	assert_false(sv_intensity_record(&in, 12));
	assert_false(sv_intensity_record(&in, 13));
	assert_true(sv_intensity_record(&in, 14));
	sv_intensity_fini(&in);
	sv_intensity_fini(&in); /* idempotent */
}

/* Bad parameters: max above the bound, a limit with no window. */
static void
test_init_errors(void **state)
{
	sv_intensity in;

	(void) state;
	assert_int_equal(
	    sv_intensity_init(&in, SV_INTENSITY_MAX + 1, 1000), SV_EINVAL);
	assert_null(in.at);
	assert_int_equal(sv_intensity_init(&in, 1, 0), SV_EINVAL);
	assert_null(in.at);
	assert_int_equal(
	    sv_intensity_init(&in, SV_INTENSITY_MAX, UINT64_MAX), SV_OK);
	for (uint32_t i = 0; i < SV_INTENSITY_MAX; i++) {
		assert_false(sv_intensity_record(&in, i));
	}
	assert_true(sv_intensity_record(&in, SV_INTENSITY_MAX));
	sv_intensity_fini(&in);
}

/* Random non-decreasing times against a list of accepted timestamps:
 * record refuses exactly when max of them lie in (now - window, now]. */
static void
test_model(void **state)
{
	enum { MAXR = 7, N = 20000 };
	uint64_t      *acc  = calloc(N, sizeof(*acc));
	size_t         nacc = 0, lo = 0;
	sv_intensity   in;
	unsigned       seed = 4242;
	uint64_t       t    = 0;
	const uint64_t w    = 50;

	(void) state;
	assert_non_null(acc);
	assert_int_equal(sv_intensity_init(&in, MAXR, w), SV_OK);
	for (int i = 0; i < N; i++) {
		uint32_t inwin;
		t += (uint64_t) (rand_r(&seed) % 12);
		while (lo < nacc && acc[lo] + w <= t) {
			lo++; /* accepted times are sorted: drop the expired */
		}
		inwin = (uint32_t) (nacc - lo);
		assert_int_equal(sv_intensity_count(&in, t), inwin);
		if (sv_intensity_record(&in, t)) {
			assert_int_equal(inwin, MAXR);
		} else {
			assert_true(inwin < MAXR);
			acc[nacc++] = t;
		}
	}
	sv_intensity_fini(&in);
	free(acc);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exactly_max),
	    cmocka_unit_test(test_window_boundary),
	    cmocka_unit_test(test_sliding),
	    cmocka_unit_test(test_huge_window),
	    cmocka_unit_test(test_unlimited),
	    cmocka_unit_test(test_reset),
	    cmocka_unit_test(test_init_errors),
	    cmocka_unit_test(test_model),
	};
	return cmocka_run_group_tests_name("intensity", tests, NULL, NULL);
}
