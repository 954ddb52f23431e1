/*
 * test_ordinal.c — the ordinal allocator (core/ordinal.c), exhaustively and
 * without processes: allocation order, lowest-free reuse, fenced idempotent
 * release, exhaustion, scale down and up, generation monotonicity, and a
 * randomised model check against a trivially correct reference.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/ordinal.h"

/* Sequential acquisition hands out 0, 1, 2 with generation 0. */
static void
test_sequential(void **state)
{
	sv_ordinals o;
	sv_ordtoken t;

	(void) state;
	assert_int_equal(sv_ordinals_init(&o, 3, 8), SV_OK);
	for (uint32_t i = 0; i < 3; i++) {
		assert_int_equal(sv_ordinals_acquire(&o, &t), SV_OK);
		assert_int_equal(t.ordinal, i);
		assert_int_equal(t.generation, 0);
		assert_true(sv_ordinals_is_held(&o, i));
	}
	sv_ordinals_fini(&o);
}

/* A released ordinal is the next one handed out (lowest free first). */
static void
test_lowest_free_reuse(void **state)
{
	sv_ordinals o;
	sv_ordtoken t[4], u;

	(void) state;
	assert_int_equal(sv_ordinals_init(&o, 4, 4), SV_OK);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(sv_ordinals_acquire(&o, &t[i]), SV_OK);
	}
	assert_int_equal(sv_ordinals_release(&o, t[2]), SV_OK);
	assert_int_equal(sv_ordinals_release(&o, t[1]), SV_OK);
	assert_int_equal(sv_ordinals_acquire(&o, &u), SV_OK);
	assert_int_equal(u.ordinal, 1);
	assert_int_equal(u.generation, 1); /* second token of ordinal 1 */
	assert_int_equal(sv_ordinals_acquire(&o, &u), SV_OK);
	assert_int_equal(u.ordinal, 2);
	sv_ordinals_fini(&o);
}

/* Releasing twice is a no-op the second time, even after the ordinal was
 * re-acquired by someone else: it can never be handed out twice. */
static void
test_double_release(void **state)
{
	sv_ordinals o;
	sv_ordtoken a, b, c;

	(void) state;
	assert_int_equal(sv_ordinals_init(&o, 2, 2), SV_OK);
	assert_int_equal(sv_ordinals_acquire(&o, &a), SV_OK);
	assert_int_equal(sv_ordinals_release(&o, a), SV_OK);
	assert_int_equal(sv_ordinals_release(&o, a), SV_OK);
	assert_false(sv_ordinals_is_held(&o, 0));
	assert_int_equal(o.held, 0);
	assert_int_equal(sv_ordinals_acquire(&o, &b), SV_OK);
	assert_int_equal(b.ordinal, 0);
	/* The stale token of the first holder must not free b's ordinal. */
	assert_int_equal(sv_ordinals_release(&o, a), SV_OK);
	assert_true(sv_ordinals_is_held(&o, 0));
	assert_int_equal(sv_ordinals_acquire(&o, &c), SV_OK);
	assert_int_equal(c.ordinal, 1);
	assert_int_equal(sv_ordinals_acquire(&o, &c), SV_EEXHAUSTED);
	assert_int_equal(o.held, 2);
	sv_ordinals_fini(&o);
}

/* Exhaustion is an error and never an ordinal >= N. */
static void
test_exhaustion(void **state)
{
	sv_ordinals o;
	sv_ordtoken t = {77, 77};

	(void) state;
	assert_int_equal(sv_ordinals_init(&o, 0, 4), SV_OK);
	assert_int_equal(sv_ordinals_acquire(&o, &t), SV_EEXHAUSTED);
	assert_int_equal(t.ordinal, 77); /* untouched on error */
	assert_int_equal(sv_ordinals_set_limit(&o, 1), SV_OK);
	assert_int_equal(sv_ordinals_acquire(&o, &t), SV_OK);
	assert_int_equal(t.ordinal, 0);
	for (int i = 0; i < 10; i++) {
		assert_int_equal(sv_ordinals_acquire(&o, &t), SV_EEXHAUSTED);
		assert_int_equal(t.ordinal, 0);
	}
	assert_int_equal(sv_ordinals_set_limit(&o, 5), SV_EEXHAUSTED);
	sv_ordinals_fini(&o);
}

/* Invalid construction is refused. */
static void
test_init_bounds(void **state)
{
	sv_ordinals o;

	(void) state;
	assert_int_equal(sv_ordinals_init(&o, 1, 0), SV_EINVAL);
	assert_int_equal(sv_ordinals_init(&o, 5, 4), SV_EINVAL);
	assert_int_equal(
	    sv_ordinals_init(&o, 1, SV_ORDINALS_MAX + 1), SV_EINVAL);
	assert_int_equal(
	    sv_ordinals_init(&o, SV_ORDINALS_MAX, SV_ORDINALS_MAX), SV_OK);
	sv_ordinals_fini(&o);
	sv_ordinals_fini(&o); /* idempotent */
	assert_int_equal(
	    sv_ordinals_release(&o, (sv_ordtoken) {0, 0}), SV_EINVAL);
}

/* Scale down lists the highest held ordinals; after their release and a
 * scale up, the freed ordinals come back lowest first. */
static void
test_scale_down_up(void **state)
{
	sv_ordinals o;
	sv_ordtoken t[5], u;
	uint32_t    ex[8];
	size_t      n;

	(void) state;
	assert_int_equal(sv_ordinals_init(&o, 5, 8), SV_OK);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(sv_ordinals_acquire(&o, &t[i]), SV_OK);
	}
	assert_int_equal(sv_ordinals_set_limit(&o, 2), SV_OK);
	/* Lowering the limit releases nothing by itself. */
	assert_int_equal(o.held, 5);
	n = sv_ordinals_excess(&o, ex, 8);
	assert_int_equal(n, 3);
	assert_int_equal(ex[0], 4);
	assert_int_equal(ex[1], 3);
	assert_int_equal(ex[2], 2);
	/* Capacity smaller than the answer: count is still complete. */
	assert_int_equal(sv_ordinals_excess(&o, ex, 1), 3);
	assert_int_equal(ex[0], 4);
	for (size_t i = 2; i < 5; i++) {
		assert_int_equal(sv_ordinals_release(&o, t[i]), SV_OK);
	}
	assert_int_equal(sv_ordinals_excess(&o, ex, 8), 0);
	assert_int_equal(sv_ordinals_acquire(&o, &u), SV_EEXHAUSTED);
	assert_int_equal(sv_ordinals_set_limit(&o, 4), SV_OK);
	assert_int_equal(sv_ordinals_acquire(&o, &u), SV_OK);
	assert_int_equal(u.ordinal, 2);
	assert_int_equal(u.generation, 1);
	assert_int_equal(sv_ordinals_acquire(&o, &u), SV_OK);
	assert_int_equal(u.ordinal, 3);
	assert_int_equal(sv_ordinals_acquire(&o, &u), SV_EEXHAUSTED);
	sv_ordinals_fini(&o);
}

/* Restarts renew the token: same ordinal, generation +1; a stale token
 * cannot renew. */
static void
test_generation_monotonic(void **state)
{
	sv_ordinals o;
	sv_ordtoken t, old;

	(void) state;
	assert_int_equal(sv_ordinals_init(&o, 2, 2), SV_OK);
	assert_int_equal(sv_ordinals_acquire(&o, &t), SV_OK);
	assert_int_equal(sv_ordinals_acquire(&o, &old), SV_OK);
	old = t;
	for (uint64_t g = 1; g <= 10; g++) {
		assert_int_equal(sv_ordinals_renew(&o, &t), SV_OK);
		assert_int_equal(t.ordinal, 0);
		assert_int_equal(t.generation, g);
	}
	assert_int_equal(sv_ordinals_renew(&o, &old), SV_ENOTFOUND);
	/* Release and re-acquire continues the sequence. */
	assert_int_equal(sv_ordinals_release(&o, t), SV_OK);
	assert_int_equal(sv_ordinals_renew(&o, &t), SV_ENOTFOUND);
	assert_int_equal(sv_ordinals_acquire(&o, &t), SV_OK);
	assert_int_equal(t.ordinal, 0);
	assert_int_equal(t.generation, 11);
	sv_ordinals_fini(&o);
}

/* Random operations against a reference model: every acquire returns the
 * lowest free ordinal below the limit, no ordinal is ever held twice, and
 * generations of each ordinal strictly increase. */
static void
test_model(void **state)
{
	enum { MAX = 16 };
	sv_ordinals o;
	bool        held[MAX] = {false};
	sv_ordtoken live[MAX];
	int64_t     lastgen[MAX];
	uint32_t    limit = 8;
	unsigned    seed  = 12345;

	(void) state;
	for (int i = 0; i < MAX; i++) {
		lastgen[i] = -1;
	}
	assert_int_equal(sv_ordinals_init(&o, limit, MAX), SV_OK);
	for (int step = 0; step < 200000; step++) {
		int         op = rand_r(&seed) % 5;
		uint32_t    k  = (uint32_t) (rand_r(&seed) % MAX);
		sv_ordtoken t;
		if (op == 0 || op == 1) {
			uint32_t expect = UINT32_MAX;
			for (uint32_t i = 0; i < limit; i++) {
				if (!held[i]) {
					expect = i;
					break;
				}
			}
			sv_err err = sv_ordinals_acquire(&o, &t);
			if (expect == UINT32_MAX) {
				assert_int_equal(err, SV_EEXHAUSTED);
				continue;
			}
			assert_int_equal(err, SV_OK);
			assert_int_equal(t.ordinal, expect);
			assert_true((int64_t) t.generation > lastgen[expect]);
			lastgen[expect] = (int64_t) t.generation;
			held[expect]    = true;
			live[expect]    = t;
		} else if (op == 2) {
			/* release, sometimes twice, sometimes a stale token */
			if (held[k]) {
				sv_ordtoken tk = live[k];
				assert_int_equal(
				    sv_ordinals_release(&o, tk), SV_OK);
				held[k] = false;
				assert_int_equal(
				    sv_ordinals_release(&o, tk), SV_OK);
			} else {
				sv_ordtoken stale = {k,
				    (uint64_t) (lastgen[k] < 0 ? 0
				                               : lastgen[k])};
				assert_int_equal(
				    sv_ordinals_release(&o, stale), SV_OK);
			}
		} else if (op == 3) {
			if (held[k]) {
				assert_int_equal(
				    sv_ordinals_renew(&o, &live[k]), SV_OK);
				assert_true(
				    (int64_t) live[k].generation > lastgen[k]);
				lastgen[k] = (int64_t) live[k].generation;
			}
		} else {
			limit = (uint32_t) (rand_r(&seed) % (MAX + 1));
			assert_int_equal(
			    sv_ordinals_set_limit(&o, limit), SV_OK);
		}
		for (uint32_t i = 0; i < MAX; i++) {
			assert_int_equal(sv_ordinals_is_held(&o, i), held[i]);
		}
	}
	sv_ordinals_fini(&o);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sequential),
	    cmocka_unit_test(test_lowest_free_reuse),
	    cmocka_unit_test(test_double_release),
	    cmocka_unit_test(test_exhaustion),
	    cmocka_unit_test(test_init_bounds),
	    cmocka_unit_test(test_scale_down_up),
	    cmocka_unit_test(test_generation_monotonic),
	    cmocka_unit_test(test_model),
	};
	return cmocka_run_group_tests_name("ordinal", tests, NULL, NULL);
}
