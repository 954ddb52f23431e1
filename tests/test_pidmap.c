/*
 * test_pidmap.c — the pid -> worker map (core/pidmap.c, over idmap.c): put,
 * get, delete, replace, growth, pid <= 0 refused, and deletion by backward
 * shift. The model check drives thousands of random operations on pids
 * chosen to collide (same home slot, runs that wrap around the end of the
 * table) against a plain array, and after every step checks that every key
 * is findable and that no probe run has a hole (the property backward
 * shift must keep).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/pidmap.h"
#include "sv_idmap_check.h"

/* wkey builds a worker key. */
static sv_wkey
wkey(uint32_t g, uint32_t o, uint64_t gen)
{
	sv_wkey k = {g, o, gen};
	return k;
}

/* check_runs asserts the id map's invariant on the underlying map (see
 * sv_idmap_check_runs), that every entry holds a key and that the count is
 * right. */
static void
check_runs(const sv_pidmap *m)
{
	const sv_idmap *x = &m->map;

	sv_idmap_check_runs(x);
	for (size_t i = 0; i < x->cap; i++) {
		if (x->ents[i].val != NULL) {
			assert_true(x->ents[i].key > 0);
		}
	}
	assert_int_equal(x->n, sv_pidmap_count(m));
}

/* home is the bucket where pid would go in an id map of cap buckets. */
static size_t
home(int64_t pid, size_t cap)
{
	return sv_idmap_home((uint64_t) pid, cap);
}

/* Put, get, replace and delete a few pids. */
static void
test_basic(void **state)
{
	sv_pidmap m;
	sv_wkey   k;

	(void) state;
	sv_pidmap_init(&m);
	assert_false(sv_pidmap_get(&m, 1, &k)); /* empty, no table */
	assert_false(sv_pidmap_del(&m, 1));
	assert_int_equal(sv_pidmap_count(&m), 0);
	assert_int_equal(sv_pidmap_put(&m, 100, wkey(1, 2, 3)), SV_OK);
	assert_int_equal(sv_pidmap_put(&m, 200, wkey(4, 5, 6)), SV_OK);
	assert_int_equal(sv_pidmap_count(&m), 2);
	assert_true(sv_pidmap_get(&m, 100, &k));
	assert_int_equal(k.group_id, 1);
	assert_int_equal(k.ordinal, 2);
	assert_int_equal(k.generation, 3);
	assert_true(sv_pidmap_get(&m, 200, &k));
	assert_int_equal(k.generation, 6);
	assert_false(sv_pidmap_get(&m, 300, &k));
	/* Replace keeps the count. */
	assert_int_equal(sv_pidmap_put(&m, 100, wkey(7, 8, 9)), SV_OK);
	assert_int_equal(sv_pidmap_count(&m), 2);
	assert_true(sv_pidmap_get(&m, 100, &k));
	assert_int_equal(k.group_id, 7);
	assert_int_equal(k.generation, 9);
	assert_true(sv_pidmap_del(&m, 100));
	assert_false(sv_pidmap_del(&m, 100));
	assert_false(sv_pidmap_get(&m, 100, &k));
	assert_true(sv_pidmap_get(&m, 200, &k));
	assert_int_equal(sv_pidmap_count(&m), 1);
	/* Large pids (64-bit) work. */
	assert_int_equal(sv_pidmap_put(&m, INT64_MAX, wkey(1, 1, 1)), SV_OK);
	assert_true(sv_pidmap_get(&m, INT64_MAX, &k));
	check_runs(&m);
	sv_pidmap_fini(&m);
	sv_pidmap_fini(&m); /* idempotent */
	assert_int_equal(sv_pidmap_count(&m), 0);
}

/* The version moves on every put (new or replacing) and every delete that
 * removed something, and on nothing else. */
static void
test_version(void **state)
{
	sv_pidmap m;
	sv_wkey   k;
	uint64_t  v;

	(void) state;
	sv_pidmap_init(&m);
	v = sv_pidmap_version(&m);
	assert_true(v != 0);
	assert_false(sv_pidmap_del(&m, 5)); /* nothing to remove */
	assert_int_equal(sv_pidmap_version(&m), v);
	assert_int_equal(sv_pidmap_put(&m, 5, wkey(1, 0, 0)), SV_OK);
	assert_true(sv_pidmap_version(&m) > v);
	v = sv_pidmap_version(&m);
	assert_true(sv_pidmap_get(&m, 5, &k));
	assert_false(sv_pidmap_get(&m, 6, &k));
	assert_int_equal(
	    sv_pidmap_version(&m), v); /* lookups change nothing */
	assert_int_equal(sv_pidmap_put(&m, 5, wkey(1, 0, 1)), SV_OK);
	assert_true(sv_pidmap_version(&m) > v); /* a new generation */
	v = sv_pidmap_version(&m);
	assert_int_equal(sv_pidmap_put(&m, 0, wkey(1, 0, 1)), SV_EINVAL);
	assert_int_equal(sv_pidmap_version(&m), v);
	assert_false(sv_pidmap_del(&m, 6));
	assert_int_equal(sv_pidmap_version(&m), v);
	assert_true(sv_pidmap_del(&m, 5));
	assert_true(sv_pidmap_version(&m) > v);
	sv_pidmap_fini(&m);
}

/* pid <= 0 is refused by put and never found. */
static void
test_bad_pid(void **state)
{
	sv_pidmap m;
	sv_wkey   k = wkey(9, 9, 9);

	(void) state;
	sv_pidmap_init(&m);
	assert_int_equal(sv_pidmap_put(&m, 0, k), SV_EINVAL);
	assert_int_equal(sv_pidmap_put(&m, -1, k), SV_EINVAL);
	assert_int_equal(sv_pidmap_put(&m, INT64_MIN, k), SV_EINVAL);
	assert_int_equal(sv_pidmap_count(&m), 0);
	assert_int_equal(sv_pidmap_put(&m, 5, k), SV_OK);
	assert_false(sv_pidmap_get(&m, 0, &k));
	assert_false(sv_pidmap_get(&m, -5, &k));
	assert_false(sv_pidmap_del(&m, 0));
	assert_false(sv_pidmap_del(&m, -5));
	assert_int_equal(sv_pidmap_count(&m), 1);
	sv_pidmap_fini(&m);
}

/* Growth: 100,000 pids, every one findable, table doubled as needed. */
static void
test_growth(void **state)
{
	enum { N = 100000 };
	sv_pidmap m;
	sv_wkey   k;

	(void) state;
	sv_pidmap_init(&m);
	for (int64_t p = 1; p <= N; p++) {
		assert_int_equal(sv_pidmap_put(&m, p * 7,
		                     wkey(1, (uint32_t) p, (uint64_t) p)),
		    SV_OK);
	}
	assert_int_equal(sv_pidmap_count(&m), N);
	assert_true(m.map.cap * 3 >= 4 * (size_t) N);
	assert_int_equal(m.map.cap & (m.map.cap - 1), 0); /* power of two */
	for (int64_t p = 1; p <= N; p++) {
		assert_true(sv_pidmap_get(&m, p * 7, &k));
		assert_int_equal(k.ordinal, (uint32_t) p);
		assert_false(sv_pidmap_get(&m, p * 7 + 1, &k));
	}
	check_runs(&m);
	/* Delete every other one; the rest stays findable. */
	for (int64_t p = 1; p <= N; p += 2) {
		assert_true(sv_pidmap_del(&m, p * 7));
	}
	assert_int_equal(sv_pidmap_count(&m), N / 2);
	for (int64_t p = 1; p <= N; p++) {
		assert_int_equal(sv_pidmap_get(&m, p * 7, &k), p % 2 == 0);
	}
	check_runs(&m);
	sv_pidmap_fini(&m);
}

/* Backward shift at the end of the table: a probe run that wraps from the
 * last slot to slot 0 is repaired when its head is deleted. */
static void
test_wrap_delete(void **state)
{
	sv_pidmap m;
	int64_t   last[4];
	size_t    n = 0;
	sv_wkey   k;

	(void) state;
	sv_pidmap_init(&m);
	assert_int_equal(sv_pidmap_put(&m, 1, wkey(0, 0, 0)), SV_OK);
	/* Four pids whose home is the last slot of the first table. */
	for (int64_t p = 2; n < 4; p++) {
		if (home(p, m.map.cap) == m.map.cap - 1) {
			last[n++] = p;
		}
	}
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(
		    sv_pidmap_put(&m, last[i], wkey(1, (uint32_t) i, 0)),
		    SV_OK);
	}
	check_runs(&m);
	assert_true(sv_pidmap_del(&m, last[0]));
	check_runs(&m);
	for (size_t i = 1; i < 4; i++) {
		assert_true(sv_pidmap_get(&m, last[i], &k));
		assert_int_equal(k.ordinal, i);
	}
	assert_true(sv_pidmap_del(&m, last[2]));
	check_runs(&m);
	assert_true(sv_pidmap_get(&m, last[1], &k));
	assert_true(sv_pidmap_get(&m, last[3], &k));
	assert_true(sv_pidmap_get(&m, 1, &k));
	sv_pidmap_fini(&m);
}

/* Random put/replace/delete/get against a plain array of (pid, key). The
 * pid pool is built of clusters sharing a home slot in the tables the map
 * goes through (16 .. 512 buckets), so collisions and long runs are the
 * rule; the pool is small enough that the table grows and shrinks in
 * occupancy many times. */
static void
test_model(void **state)
{
	enum { POOL = 200, STEPS = 40000 };
	int64_t   pool[POOL];
	bool      in[POOL];
	sv_wkey   val[POOL];
	size_t    npool = 0;
	unsigned  seed  = 777;
	sv_pidmap m;
	size_t    count = 0;

	(void) state;
	memset(in, 0, sizeof(in));
	/* Half the pool: pids whose home in a 512-slot table is 511, 0 or
	 * 200 (the home in a smaller table is the same hash masked with fewer
	 * bits, so they collide there too, and 511/0 runs wrap around). The
	 * other half: consecutive pids. */
	for (int64_t p = 1; npool < POOL / 2; p++) {
		if (home(p, 512) == 511 || home(p, 512) == 0
		    || home(p, 512) == 200) {
			pool[npool++] = p;
		}
	}
	for (int64_t p = 1; npool < POOL; p++) {
		pool[npool++] = 1000000 + p;
	}
	sv_pidmap_init(&m);
	for (int step = 0; step < STEPS; step++) {
		size_t  i  = (size_t) rand_r(&seed) % POOL;
		int     op = rand_r(&seed) % 10;
		sv_wkey k;
		if (op < 5) {
			sv_wkey v = wkey((uint32_t) step, (uint32_t) i,
			    (uint64_t) rand_r(&seed));
			assert_int_equal(sv_pidmap_put(&m, pool[i], v), SV_OK);
			if (!in[i]) {
				count++;
			}
			in[i]  = true;
			val[i] = v;
		} else if (op < 9) {
			assert_int_equal(sv_pidmap_del(&m, pool[i]), in[i]);
			if (in[i]) {
				count--;
			}
			in[i] = false;
		} else {
			assert_int_equal(
			    sv_pidmap_get(&m, pool[i], &k), in[i]);
		}
		assert_int_equal(sv_pidmap_count(&m), count);
		if (step % 8 == 0 || (op >= 5 && op < 9)) {
			for (size_t j = 0; j < POOL; j++) {
				bool got = sv_pidmap_get(&m, pool[j], &k);
				assert_int_equal(got, in[j]);
				if (got) {
					assert_memory_equal(
					    &k, &val[j], sizeof(k));
				}
			}
			check_runs(&m);
		}
	}
	sv_pidmap_fini(&m);
}

/* no_calloc is an allocator that always fails. */
static void *
no_calloc(size_t nmemb, size_t size)
{
	(void) nmemb;
	(void) size;
	return NULL;
}

/* When the table cannot grow, a put of a new pid fails with SV_ENOMEM
 * and changes nothing (count, version, other entries); replacing the key
 * of a known pid needs no table growth and still works. */
static void
test_alloc_failure(void **state)
{
	sv_pidmap m;
	sv_wkey   k;
	uint64_t  v;

	(void) state;
	sv_pidmap_init(&m);
	sv_idmap_calloc = no_calloc;
	v               = sv_pidmap_version(&m);
	assert_int_equal(sv_pidmap_put(&m, 5, wkey(1, 2, 3)), SV_ENOMEM);
	assert_int_equal(sv_pidmap_count(&m), 0);
	assert_int_equal(sv_pidmap_version(&m), v);
	assert_false(sv_pidmap_get(&m, 5, &k));
	sv_idmap_calloc = calloc;
	assert_int_equal(sv_pidmap_put(&m, 5, wkey(1, 2, 3)), SV_OK);
	sv_idmap_calloc = no_calloc;
	assert_int_equal(sv_pidmap_put(&m, 5, wkey(4, 5, 6)), SV_OK);
	assert_true(sv_pidmap_get(&m, 5, &k));
	assert_int_equal(k.generation, 6);
	/* Fill the table to three quarters; the next new pid needs growth. */
	for (int64_t p = 6; sv_pidmap_count(&m) < m.map.cap / 4 * 3; p++) {
		assert_int_equal(sv_pidmap_put(&m, p, wkey(0, 0, 0)), SV_OK);
	}
	v = sv_pidmap_version(&m);
	assert_int_equal(sv_pidmap_put(&m, 1000, wkey(0, 0, 0)), SV_ENOMEM);
	assert_int_equal(sv_pidmap_version(&m), v);
	assert_false(sv_pidmap_get(&m, 1000, &k));
	check_runs(&m);
	sv_idmap_calloc = calloc;
	sv_pidmap_fini(&m);
}

/* A borrowed map points to the caller's keys: a get reads the key as the
 * caller last wrote it, a del leaves it to the caller, the owning put is
 * refused (and put_ref on an owning map). */
static void
test_borrowed(void **state)
{
	sv_pidmap m, own;
	sv_wkey   keys[3] = {{1, 0, 5}, {1, 1, 6}, {2, 0, 7}};
	sv_wkey   k;

	(void) state;
	sv_pidmap_init_borrowed(&m);
	sv_pidmap_init(&own);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(
		    sv_pidmap_put_ref(&m, 100 + i, &keys[i]), SV_OK);
	}
	assert_int_equal(sv_pidmap_put(&m, 200, keys[0]), SV_EINVAL);
	assert_int_equal(sv_pidmap_put_ref(&own, 200, &keys[0]), SV_EINVAL);
	assert_int_equal(sv_pidmap_put_ref(&m, 0, &keys[0]), SV_EINVAL);
	assert_int_equal(sv_pidmap_count(&m), 3);
	keys[1].generation = 9; /* the caller's record changed */
	assert_true(sv_pidmap_get(&m, 101, &k));
	assert_int_equal(k.generation, 9);
	assert_true(sv_pidmap_del(&m, 101));
	assert_false(sv_pidmap_get(&m, 101, &k));
	assert_int_equal(keys[1].ordinal, 1); /* still the caller's */
	check_runs(&m);
	sv_pidmap_fini(&m); /* frees no key: they are on the stack */
	sv_pidmap_fini(&own);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_basic),
	    cmocka_unit_test(test_bad_pid),
	    cmocka_unit_test(test_version),
	    cmocka_unit_test(test_growth),
	    cmocka_unit_test(test_wrap_delete),
	    cmocka_unit_test(test_model),
	    cmocka_unit_test(test_alloc_failure),
	    cmocka_unit_test(test_borrowed),
	};
	return cmocka_run_group_tests_name("pidmap", tests, NULL, NULL);
}
