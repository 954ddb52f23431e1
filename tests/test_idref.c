/*
 * test_idref.c — the ref index of the id map (libsupervise/src/idmap.c,
 * sv_idref): references to entries kept in the test's own array, found by
 * a key the entry holds. A random model run against a plain scan, with
 * keys built to share one hash (so lookups must use the equality, not the
 * hash) and with removals by backward shift checked against the invariant
 * (every reference reachable from its home without crossing an empty
 * bucket); a moved entry re-pointed through sv_idref_find; allocation
 * failure at a growth: the index is unchanged and still usable, and a
 * reservation makes the adds that follow allocate nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "idmap.h"

#define NENT 2000

/* The entries: keys[ref - 1], live[ref - 1]. */
typedef struct table {
	uint64_t keys[NENT];
	bool     live[NENT];
	uint64_t hmod; /* hashes are key % hmod: collisions on purpose */
} table;

/* t_hash is the hash of the key of entry ref. */
static uint64_t
t_hash(const void *ctx, uint32_t ref)
{
	const table *t = ctx;

	return t->keys[ref - 1] % t->hmod;
}

/* t_eq tells whether entry ref has key *key. */
static bool
t_eq(const void *ctx, uint32_t ref, const void *key)
{
	const table *t = ctx;

	return t->keys[ref - 1] == *(const uint64_t *) key;
}

/* check_runs asserts that every reference is reachable from its home
 * without crossing an empty bucket, that the count is right and the
 * table at most three quarters full. */
static void
check_runs(const sv_idref *x, const table *t)
{
	size_t n = 0;

	for (size_t i = 0; i < x->cap; i++) {
		uint64_t key;
		if (x->b[i] == 0) {
			continue;
		}
		n++;
		key = t->keys[x->b[i] - 1];
		assert_int_equal(
		    sv_idref_find(x, key % t->hmod, t_eq, t, &key), i);
	}
	assert_int_equal(n, x->n);
	assert_true(x->n * 4 <= x->cap * 3);
}

/* test_model: random adds and removals against a scan of the array. */
static void
test_model(void **state)
{
	static table t;
	sv_idref     x    = {0};
	uint64_t     seed = 42;

	(void) state;
	memset(&t, 0, sizeof(t));
	t.hmod = 37; /* many keys per hash */
	for (int step = 0; step < 20000; step++) {
		uint32_t r;
		seed = seed * UINT64_C(6364136223846793005) + 1;
		r    = (uint32_t) (seed >> 33) % NENT;
		if (!t.live[r]) {
			t.keys[r] = (seed >> 20) | 1; /* a fresh key */
			assert_int_equal(
			    sv_idref_reserve(&x, 1, t_hash, &t), SV_OK);
			sv_idref_add(&x, t.keys[r] % t.hmod, r + 1);
			t.live[r] = true;
		} else {
			uint64_t key = t.keys[r];
			size_t   i
			    = sv_idref_find(&x, key % t.hmod, t_eq, &t, &key);
			assert_int_equal(x.b[i], r + 1);
			sv_idref_del_at(&x, i, t_hash, &t);
			t.live[r] = false;
		}
		if (step % 1000 == 0) {
			check_runs(&x, &t);
		}
	}
	check_runs(&x, &t);
	for (uint32_t r = 0; r < NENT; r++) {
		uint64_t key = t.keys[r];
		uint32_t got = sv_idref_get(&x, key % t.hmod, t_eq, &t, &key);
		assert_int_equal(got, t.live[r] ? r + 1 : 0);
	}
	sv_idref_fini(&x);
	assert_int_equal(x.cap, 0);
	assert_int_equal(x.n, 0);
}

/* test_move: an entry moved to another array index is re-pointed in its
 * bucket and found there (the journal's swap-with-last removal). */
static void
test_move(void **state)
{
	static table t;
	sv_idref     x = {0};
	uint64_t     k = 7;
	size_t       i;

	(void) state;
	memset(&t, 0, sizeof(t));
	t.hmod = 1000;
	for (uint32_t r = 0; r < 10; r++) {
		t.keys[r] = r + 1;
		assert_int_equal(sv_idref_reserve(&x, 1, t_hash, &t), SV_OK);
		sv_idref_add(&x, t.keys[r] % t.hmod, r + 1);
	}
	/* Entry 9 (key 10) moves into entry 6 (key 7), which goes. */
	i = sv_idref_find(&x, k % t.hmod, t_eq, &t, &k);
	sv_idref_del_at(&x, i, t_hash, &t);
	k         = 10;
	i         = sv_idref_find(&x, k % t.hmod, t_eq, &t, &k);
	t.keys[6] = t.keys[9];
	x.b[i]    = 7;
	assert_int_equal(sv_idref_get(&x, 10, t_eq, &t, &k), 7);
	k = 7;
	assert_int_equal(sv_idref_get(&x, 7, t_eq, &t, &k), 0);
	assert_int_equal(x.n, 9);
	sv_idref_fini(&x);
}

static int fail_next;

/* maybe_calloc fails when fail_next is set, else is calloc. */
static void *
maybe_calloc(size_t n, size_t size)
{
	if (fail_next) {
		return NULL;
	}
	return calloc(n, size);
}

/* test_enomem: a growth that cannot allocate leaves the index as it was;
 * after a reservation the adds it covers never allocate. */
static void
test_enomem(void **state)
{
	static table t;
	sv_idref     x = {.calloc = maybe_calloc};
	size_t       cap;

	(void) state;
	memset(&t, 0, sizeof(t));
	t.hmod = UINT64_MAX;
	for (uint32_t r = 0; r < 12; r++) {
		t.keys[r] = UINT64_C(1000) + r;
		assert_int_equal(sv_idref_reserve(&x, 1, t_hash, &t), SV_OK);
		sv_idref_add(&x, t_hash(&t, r + 1), r + 1);
	}
	cap       = x.cap;
	fail_next = 1;
	assert_int_equal(sv_idref_reserve(&x, cap, t_hash, &t), SV_ENOMEM);
	assert_int_equal(x.cap, cap);
	assert_int_equal(x.n, 12);
	check_runs(&x, &t);
	fail_next = 0;
	assert_int_equal(sv_idref_reserve(&x, 100, t_hash, &t), SV_OK);
	fail_next = 1; /* the 100 adds reserved must not allocate */
	for (uint32_t r = 12; r < 112; r++) {
		t.keys[r] = UINT64_C(1000) + r;
		sv_idref_add(&x, t_hash(&t, r + 1), r + 1);
	}
	fail_next = 0;
	check_runs(&x, &t);
	assert_int_equal(x.n, 112);
	sv_idref_fini(&x);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_model),
	    cmocka_unit_test(test_move),
	    cmocka_unit_test(test_enomem),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
