/*
 * idmap.c — the id map: 64-bit id -> pointer, open addressing with linear
 * probing and backward-shift removal (see idmap.h for the contract).
 */
#include <stdlib.h>

#include "idmap.h"

void *(*sv_idmap_calloc)(size_t nmemb, size_t size) = calloc;

/* sv_idmap_mix: see idmap.h. */
uint64_t
sv_idmap_mix(uint64_t x)
{
	x ^= x >> 30;
	x *= UINT64_C(0xbf58476d1ce4e5b9);
	x ^= x >> 27;
	x *= UINT64_C(0x94d049bb133111eb);
	x ^= x >> 31;
	return x;
}

/* idmap_home is key's first bucket in a table of cap buckets. */
static size_t
idmap_home(uint64_t key, size_t cap)
{
	return (size_t) sv_idmap_mix(key) & (cap - 1);
}

/* idmap_find returns the bucket holding key, or the empty bucket that
 * ends its probe run (where it would go). cap must be non-zero and the
 * table not full. */
static size_t
idmap_find(const sv_idmap_ent *ents, size_t cap, uint64_t key)
{
	size_t i = idmap_home(key, cap);

	while (ents[i].val != NULL && ents[i].key != key) {
		i = (i + 1) & (cap - 1);
	}
	return i;
}

/* sv_idmap_init: see idmap.h. */
void
sv_idmap_init(sv_idmap *m)
{
	m->ents = NULL;
	m->cap  = 0;
	m->n    = 0;
}

/* sv_idmap_fini: see idmap.h. */
void
sv_idmap_fini(sv_idmap *m)
{
	free(m->ents);
	sv_idmap_init(m);
}

/* idmap_fits tells whether n entries fit cap buckets (three quarters). */
static bool
idmap_fits(size_t n, size_t cap)
{
	return n <= cap / 4 * 3;
}

/* sv_idmap_reserve: see idmap.h. Grows to the smallest power of two that
 * holds the entries, rehashing into a new array. */
sv_err
sv_idmap_reserve(sv_idmap *m, size_t extra)
{
	size_t        want, cap;
	sv_idmap_ent *ents;

	if (extra > SIZE_MAX / 2 - m->n) {
		return SV_ENOMEM;
	}
	want = m->n + extra;
	if (m->cap > 0 && idmap_fits(want, m->cap)) {
		return SV_OK;
	}
	cap = m->cap == 0 ? SV_IDMAP_MIN_CAP : m->cap;
	while (!idmap_fits(want, cap)) {
		if (cap > SIZE_MAX / 2 / sizeof(*ents)) {
			return SV_ENOMEM;
		}
		cap *= 2;
	}
	if ((ents = sv_idmap_calloc(cap, sizeof(*ents))) == NULL) {
		return SV_ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (m->ents[i].val != NULL) {
			ents[idmap_find(ents, cap, m->ents[i].key)]
			    = m->ents[i];
		}
	}
	free(m->ents);
	m->ents = ents;
	m->cap  = cap;
	return SV_OK;
}

/* sv_idmap_put: see idmap.h. */
sv_err
sv_idmap_put(sv_idmap *m, uint64_t key, void *val)
{
	size_t i;
	sv_err err;

	if (val == NULL) {
		return SV_EINVAL;
	}
	if (m->cap > 0) {
		i = idmap_find(m->ents, m->cap, key);
		if (m->ents[i].val != NULL) {
			m->ents[i].val = val;
			return SV_OK;
		}
	}
	if ((err = sv_idmap_reserve(m, 1)) != SV_OK) {
		return err;
	}
	i          = idmap_find(m->ents, m->cap, key);
	m->ents[i] = (sv_idmap_ent) {key, val};
	m->n++;
	return SV_OK;
}

/* sv_idmap_get: see idmap.h. */
void *
sv_idmap_get(const sv_idmap *m, uint64_t key)
{
	if (m->cap == 0) {
		return NULL;
	}
	return m->ents[idmap_find(m->ents, m->cap, key)].val;
}

/* sv_idmap_del: see idmap.h. The hole at i is filled by the next entry of
 * the run whose home does not lie cyclically in (i, j], repeatedly, until
 * the run ends. */
void *
sv_idmap_del(sv_idmap *m, uint64_t key)
{
	size_t i, j, mask;
	void  *val;

	if (m->cap == 0) {
		return NULL;
	}
	mask = m->cap - 1;
	i    = idmap_find(m->ents, m->cap, key);
	if ((val = m->ents[i].val) == NULL) {
		return NULL;
	}
	for (j = (i + 1) & mask; m->ents[j].val != NULL; j = (j + 1) & mask) {
		size_t home = idmap_home(m->ents[j].key, m->cap);
		if (i <= j ? (i < home && home <= j)
		           : (i < home || home <= j)) {
			continue; /* at or after its home: stays */
		}
		m->ents[i] = m->ents[j];
		i          = j;
	}
	m->ents[i].val = NULL;
	m->ents[i].key = 0;
	m->n--;
	return val;
}

/* sv_idmap_count: see idmap.h. */
size_t
sv_idmap_count(const sv_idmap *m)
{
	return m->n;
}

/* sv_idmap_next: see idmap.h. *cursor is the next bucket to look at. */
bool
sv_idmap_next(const sv_idmap *m, size_t *cursor, uint64_t *keyp, void **valp)
{
	for (size_t i = *cursor; i < m->cap; i++) {
		if (m->ents[i].val != NULL) {
			if (keyp != NULL) {
				*keyp = m->ents[i].key;
			}
			if (valp != NULL) {
				*valp = m->ents[i].val;
			}
			*cursor = i + 1;
			return true;
		}
	}
	*cursor = m->cap;
	return false;
}
