/*
 * test_idmap.c — the id map (libsupervise/src/idmap.c): put, get, replace,
 * delete, key 0 and NULL values, growth, iteration, keys built to collide
 * (one home bucket, runs that wrap past the end of the table), removal by
 * backward shift checked against the invariant it must keep (every entry
 * reachable from its home without crossing an empty bucket), a random
 * model run against a plain array, and allocation failure injected at
 * every growth: the map is unchanged and still usable.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "idmap.h"
#include "sv_idmap_check.h"

/* V turns a small number into a non-NULL value. */
#define V(x) ((void *) (uintptr_t) (x))

/* Put, get, replace and delete a few keys; key 0 and UINT64_MAX are keys
 * like any other; a NULL value is refused. */
static void
test_basic(void **state)
{
	sv_idmap m;

	(void) state;
	sv_idmap_init(&m);
	assert_null(sv_idmap_get(&m, 1)); /* empty, no table */
	assert_null(sv_idmap_del(&m, 1));
	assert_int_equal(sv_idmap_count(&m), 0);
	assert_int_equal(sv_idmap_put(&m, 1, NULL), SV_EINVAL);
	assert_int_equal(sv_idmap_count(&m), 0);
	assert_int_equal(sv_idmap_put(&m, 100, V(1)), SV_OK);
	assert_int_equal(sv_idmap_put(&m, 0, V(2)), SV_OK);
	assert_int_equal(sv_idmap_put(&m, UINT64_MAX, V(3)), SV_OK);
	assert_int_equal(sv_idmap_count(&m), 3);
	assert_ptr_equal(sv_idmap_get(&m, 100), V(1));
	assert_ptr_equal(sv_idmap_get(&m, 0), V(2));
	assert_ptr_equal(sv_idmap_get(&m, UINT64_MAX), V(3));
	assert_null(sv_idmap_get(&m, 101));
	/* Replacing keeps the count; a NULL never replaces. */
	assert_int_equal(sv_idmap_put(&m, 100, V(4)), SV_OK);
	assert_int_equal(sv_idmap_put(&m, 100, NULL), SV_EINVAL);
	assert_int_equal(sv_idmap_count(&m), 3);
	assert_ptr_equal(sv_idmap_get(&m, 100), V(4));
	assert_ptr_equal(sv_idmap_del(&m, 100), V(4));
	assert_null(sv_idmap_del(&m, 100));
	assert_null(sv_idmap_get(&m, 100));
	assert_ptr_equal(sv_idmap_del(&m, 0), V(2));
	assert_null(sv_idmap_get(&m, 0));
	assert_int_equal(sv_idmap_count(&m), 1);
	sv_idmap_check_runs(&m);
	sv_idmap_fini(&m);
	sv_idmap_fini(&m); /* idempotent */
	assert_int_equal(sv_idmap_count(&m), 0);
	assert_null(sv_idmap_get(&m, UINT64_MAX));
	/* Usable again after fini. */
	assert_int_equal(sv_idmap_put(&m, 7, V(7)), SV_OK);
	assert_ptr_equal(sv_idmap_get(&m, 7), V(7));
	sv_idmap_fini(&m);
}

/* Growth: 100,000 sequential and 100,000 spread keys, every one findable,
 * the table a power of two at most three quarters full; deleting half
 * leaves the other half findable. */
static void
test_growth(void **state)
{
	enum { N = 100000 };
	sv_idmap m;

	(void) state;
	sv_idmap_init(&m);
	for (uint64_t k = 1; k <= N; k++) {
		assert_int_equal(sv_idmap_put(&m, k, V(k)), SV_OK);
		assert_int_equal(
		    sv_idmap_put(&m, k << 40 | 0xffu, V(k + N)), SV_OK);
	}
	assert_int_equal(sv_idmap_count(&m), 2 * N);
	assert_true(m.cap * 3 >= 2 * (size_t) N * 4);
	sv_idmap_check_runs(&m);
	for (uint64_t k = 1; k <= N; k++) {
		assert_ptr_equal(sv_idmap_get(&m, k), V(k));
		assert_ptr_equal(sv_idmap_get(&m, k << 40 | 0xffu), V(k + N));
		assert_null(sv_idmap_get(&m, k << 40));
	}
	for (uint64_t k = 1; k <= N; k += 2) {
		assert_ptr_equal(sv_idmap_del(&m, k), V(k));
	}
	assert_int_equal(sv_idmap_count(&m), N + N / 2);
	for (uint64_t k = 1; k <= N; k++) {
		assert_int_equal(sv_idmap_get(&m, k) != NULL, k % 2 == 0);
	}
	sv_idmap_check_runs(&m);
	sv_idmap_fini(&m);
}

/* Keys that share one home bucket (the last of the first table, so their
 * run wraps to bucket 0): all findable, and deleting the head and the
 * middle of the run shifts the rest back without losing any. */
static void
test_collisions(void **state)
{
	sv_idmap m;
	uint64_t same[6];
	size_t   n = 0;

	(void) state;
	sv_idmap_init(&m);
	assert_int_equal(sv_idmap_reserve(&m, 0), SV_OK);
	assert_int_equal(m.cap, SV_IDMAP_MIN_CAP);
	for (uint64_t k = 1; n < 6; k++) {
		if (sv_idmap_home(k, m.cap) == m.cap - 1) {
			same[n++] = k;
		}
	}
	/* A key at home 0, which the wrapping run must step over. */
	for (uint64_t k = 1;; k++) {
		if (sv_idmap_home(k, m.cap) == 0) {
			assert_int_equal(sv_idmap_put(&m, k, V(99)), SV_OK);
			break;
		}
	}
	for (size_t i = 0; i < 6; i++) {
		assert_int_equal(sv_idmap_put(&m, same[i], V(i + 1)), SV_OK);
	}
	assert_int_equal(m.cap, SV_IDMAP_MIN_CAP); /* no growth yet */
	sv_idmap_check_runs(&m);
	assert_ptr_equal(sv_idmap_del(&m, same[0]), V(1));
	sv_idmap_check_runs(&m);
	assert_ptr_equal(sv_idmap_del(&m, same[3]), V(4));
	sv_idmap_check_runs(&m);
	for (size_t i = 0; i < 6; i++) {
		assert_ptr_equal(sv_idmap_get(&m, same[i]),
		    i == 0 || i == 3 ? NULL : V(i + 1));
	}
	assert_int_equal(sv_idmap_count(&m), 5);
	/* Deleting what is left, from the tail, empties the table. */
	for (size_t i = 6; i-- > 0;) {
		(void) sv_idmap_del(&m, same[i]);
		sv_idmap_check_runs(&m);
	}
	assert_int_equal(sv_idmap_count(&m), 1);
	sv_idmap_fini(&m);
}

/* Iteration visits every entry once, and an empty map none. */
static void
test_iterate(void **state)
{
	enum { N = 1000 };
	sv_idmap m;
	bool     seen[N + 1];
	size_t   cur = 0, n = 0;
	uint64_t k;
	void    *v;

	(void) state;
	sv_idmap_init(&m);
	assert_false(sv_idmap_next(&m, &cur, &k, &v));
	memset(seen, 0, sizeof(seen));
	for (uint64_t i = 1; i <= N; i++) {
		assert_int_equal(sv_idmap_put(&m, i * 3, V(i)), SV_OK);
	}
	cur = 0;
	while (sv_idmap_next(&m, &cur, &k, &v)) {
		uint64_t i = (uint64_t) (uintptr_t) v;
		assert_true(i >= 1 && i <= N);
		assert_int_equal(k, i * 3);
		assert_false(seen[i]);
		seen[i] = true;
		n++;
	}
	assert_int_equal(n, N);
	assert_false(sv_idmap_next(&m, &cur, NULL, NULL)); /* stays done */
	sv_idmap_fini(&m);
}

/* Random put/replace/delete/get over a pool of keys built to collide
 * (homes 511, 0 and 200 in a 512-bucket table, so also in every smaller
 * table) and of consecutive keys, against a plain array. */
static void
test_model(void **state)
{
	enum { POOL = 300, STEPS = 60000 };
	uint64_t pool[POOL];
	bool     in[POOL];
	uint64_t val[POOL];
	size_t   npool = 0, count = 0;
	unsigned seed = 4242;
	sv_idmap m;

	(void) state;
	memset(in, 0, sizeof(in));
	for (uint64_t k = 1; npool < POOL / 2; k++) {
		size_t h = sv_idmap_home(k, 512);
		if (h == 511 || h == 0 || h == 200) {
			pool[npool++] = k;
		}
	}
	for (uint64_t k = 1; npool < POOL; k++) {
		pool[npool++] = 1000000 + k;
	}
	sv_idmap_init(&m);
	for (int step = 0; step < STEPS; step++) {
		size_t i  = (size_t) rand_r(&seed) % POOL;
		int    op = rand_r(&seed) % 10;
		if (op < 5) {
			uint64_t v = (uint64_t) step + 1;
			assert_int_equal(
			    sv_idmap_put(&m, pool[i], V(v)), SV_OK);
			count += in[i] ? 0 : 1;
			in[i]  = true;
			val[i] = v;
		} else if (op < 9) {
			void *got = sv_idmap_del(&m, pool[i]);
			assert_ptr_equal(got, in[i] ? V(val[i]) : NULL);
			count -= in[i] ? 1 : 0;
			in[i] = false;
		} else {
			assert_ptr_equal(sv_idmap_get(&m, pool[i]),
			    in[i] ? V(val[i]) : NULL);
		}
		assert_int_equal(sv_idmap_count(&m), count);
		if (step % 16 == 0 || (op >= 5 && op < 9)) {
			for (size_t j = 0; j < POOL; j++) {
				assert_ptr_equal(sv_idmap_get(&m, pool[j]),
				    in[j] ? V(val[j]) : NULL);
			}
			sv_idmap_check_runs(&m);
		}
	}
	sv_idmap_fini(&m);
}

/* The injected allocator: fails once `fail_at` reaches 0 (counting down
 * on every call), then succeeds again. */
static int fail_at = -1;
static int alloc_calls;

/* failing_calloc is calloc but for the call fail_at picks. */
static void *
failing_calloc(size_t nmemb, size_t size)
{
	alloc_calls++;
	if (fail_at >= 0 && fail_at-- == 0) {
		return NULL;
	}
	return calloc(nmemb, size);
}

/* Allocation failure at each growth in turn: the put that needed it
 * fails with SV_ENOMEM, the map keeps exactly what it had (and its
 * table), replacing an existing key still succeeds, and the same put
 * succeeds once memory is back. Reserve guarantees the next puts. */
static void
test_alloc_failure(void **state)
{
	enum { N = 2000 };
	int growths = 0;

	(void) state;
	sv_idmap_calloc = failing_calloc;
	/* Count the growths of N puts. */
	{
		sv_idmap m;
		sv_idmap_init(&m);
		alloc_calls = 0;
		for (uint64_t k = 0; k < N; k++) {
			assert_int_equal(sv_idmap_put(&m, k, V(k + 1)), SV_OK);
		}
		growths = alloc_calls;
		sv_idmap_fini(&m);
	}
	assert_true(growths >= 8);
	for (int f = 0; f < growths; f++) {
		sv_idmap m;
		int      failures = 0;
		sv_idmap_init(&m);
		fail_at = f;
		for (uint64_t k = 0; k < N; k++) {
			sv_err err = sv_idmap_put(&m, k, V(k + 1));
			if (err == SV_ENOMEM) {
				sv_idmap_ent *ents = m.ents;
				size_t        cap  = m.cap;
				failures++;
				assert_int_equal(sv_idmap_count(&m), k);
				assert_ptr_equal(m.ents, ents);
				assert_int_equal(m.cap, cap);
				assert_null(sv_idmap_get(&m, k));
				for (uint64_t j = 0; j < k; j++) {
					assert_ptr_equal(
					    sv_idmap_get(&m, j), V(j + 1));
				}
				if (k > 0) { /* replacing needs no memory */
					fail_at = 0;
					assert_int_equal(
					    sv_idmap_put(&m, 0, V(1)), SV_OK);
					fail_at = -1;
				}
				sv_idmap_check_runs(&m);
				err = sv_idmap_put(&m, k, V(k + 1));
			}
			assert_int_equal(err, SV_OK);
		}
		assert_int_equal(failures, 1);
		assert_int_equal(sv_idmap_count(&m), N);
		sv_idmap_check_runs(&m);
		sv_idmap_fini(&m);
	}
	/* Reserve: a failed reserve changes nothing; a good one makes the
	 * next puts of new keys succeed with the allocator failing. */
	{
		sv_idmap m;
		sv_idmap_init(&m);
		fail_at = 0;
		assert_int_equal(sv_idmap_reserve(&m, 100), SV_ENOMEM);
		assert_int_equal(m.cap, 0);
		assert_int_equal(sv_idmap_reserve(&m, 100), SV_OK);
		fail_at = 0; /* every growth would fail now */
		for (uint64_t k = 0; k < 100; k++) {
			assert_int_equal(sv_idmap_put(&m, k, V(k + 1)), SV_OK);
		}
		assert_int_equal(fail_at, 0); /* never asked */
		/* Fill to three quarters: no growth needed, none asked. */
		for (uint64_t k = 100; k < m.cap / 4 * 3; k++) {
			assert_int_equal(sv_idmap_put(&m, k, V(k + 1)), SV_OK);
		}
		assert_int_equal(fail_at, 0);
		assert_int_equal(sv_idmap_put(&m, m.cap, V(1)), SV_ENOMEM);
		assert_int_equal(sv_idmap_count(&m), m.cap / 4 * 3);
		assert_int_equal(
		    sv_idmap_reserve(&m, SIZE_MAX - 10), SV_ENOMEM);
		fail_at = -1;
		sv_idmap_check_runs(&m);
		sv_idmap_fini(&m);
	}
	sv_idmap_calloc = calloc;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_basic),
	    cmocka_unit_test(test_growth),
	    cmocka_unit_test(test_collisions),
	    cmocka_unit_test(test_iterate),
	    cmocka_unit_test(test_model),
	    cmocka_unit_test(test_alloc_failure),
	};
	return cmocka_run_group_tests_name("idmap", tests, NULL, NULL);
}
