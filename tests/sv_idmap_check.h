/*
 * sv_idmap_check.h — the id map's layout, recomputed for the tests of the
 * id map (test_idmap.c) and of the pid map over it (test_pidmap.c): the
 * home bucket of a key, to build keys that collide, and the invariant
 * removal by backward shift must keep. Needs <cmocka.h> included first.
 */
#ifndef SV_TESTS_IDMAP_CHECK_H
#define SV_TESTS_IDMAP_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "idmap.h"

/* sv_idmap_home is the bucket where key x would go in a table of cap
 * buckets: the documented splitmix64 finaliser (idmap.h). */
static inline size_t
sv_idmap_home(uint64_t x, size_t cap)
{
	x ^= x >> 30;
	x *= UINT64_C(0xbf58476d1ce4e5b9);
	x ^= x >> 27;
	x *= UINT64_C(0x94d049bb133111eb);
	x ^= x >> 31;
	return (size_t) x & (cap - 1);
}

/* sv_idmap_check_runs asserts that every entry of m is reachable from its
 * home bucket without crossing an empty one, that the count is right,
 * that the table is at most three quarters full and that its size is a
 * power of two. */
static inline void
sv_idmap_check_runs(const sv_idmap *m)
{
	size_t n = 0;

	for (size_t i = 0; i < m->cap; i++) {
		if (m->ents[i].val == NULL) {
			continue;
		}
		n++;
		for (size_t j = sv_idmap_home(m->ents[i].key, m->cap); j != i;
		     j        = (j + 1) & (m->cap - 1)) {
			assert_non_null(m->ents[j].val);
		}
	}
	assert_int_equal(n, m->n);
	assert_true(m->n * 4 <= m->cap * 3);
	if (m->cap > 0) {
		assert_int_equal(m->cap & (m->cap - 1), 0);
	}
}

#endif
