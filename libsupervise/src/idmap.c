/*
 * idmap.c — the id map: 64-bit id -> pointer, open addressing with linear
 * probing and backward-shift removal, in two bucket layouts: {key, value}
 * (sv_idmap) and a 32-bit reference whose key the caller's entry holds
 * (sv_idref). See idmap.h for the contract.
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

/* idmap_stays tells whether an entry at bucket j whose home is `home` may
 * stay when bucket i (earlier in its probe run) is emptied: its home lies
 * cyclically in (i, j]. */
static bool
idmap_stays(size_t i, size_t j, size_t home)
{
	return i <= j ? (i < home && home <= j) : (i < home || home <= j);
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
		if (idmap_stays(i, j, idmap_home(m->ents[j].key, m->cap))) {
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

/* ---- the ref index ------------------------------------------------------
 */

/* sv_idref_fini: see idmap.h. */
void
sv_idref_fini(sv_idref *x)
{
	free(x->b);
	x->b   = NULL;
	x->cap = 0;
	x->n   = 0;
}

/* idref_place returns the first empty bucket of hash's probe run. */
static size_t
idref_place(const uint32_t *b, size_t cap, uint64_t hash)
{
	size_t i = idmap_home(hash, cap);

	while (b[i] != 0) {
		i = (i + 1) & (cap - 1);
	}
	return i;
}

/* sv_idref_reserve: see idmap.h. Grows to the smallest power of two that
 * holds the references, rehashing into a new array (freed by
 * sv_idref_fini). */
sv_err
sv_idref_reserve(sv_idref *x, size_t extra, sv_idref_hash hf, const void *ctx)
{
	void *(*alloc)(size_t, size_t)
	    = x->calloc != NULL ? x->calloc : sv_idmap_calloc;
	size_t    want, cap;
	uint32_t *b;

	if (extra > SIZE_MAX / 2 - x->n) {
		return SV_ENOMEM;
	}
	want = x->n + extra;
	if (x->cap > 0 && idmap_fits(want, x->cap)) {
		return SV_OK;
	}
	cap = x->cap == 0 ? SV_IDMAP_MIN_CAP : x->cap;
	while (!idmap_fits(want, cap)) {
		if (cap > SIZE_MAX / 2 / sizeof(*b)) {
			return SV_ENOMEM;
		}
		cap *= 2;
	}
	if ((b = alloc(cap, sizeof(*b))) == NULL) {
		return SV_ENOMEM;
	}
	for (size_t i = 0; i < x->cap; i++) {
		if (x->b[i] != 0) {
			b[idref_place(b, cap, hf(ctx, x->b[i]))] = x->b[i];
		}
	}
	free(x->b);
	x->b   = b;
	x->cap = cap;
	return SV_OK;
}

/* sv_idref_find: see idmap.h. */
size_t
sv_idref_find(const sv_idref *x, uint64_t hash, sv_idref_eq eq,
    const void *ctx, const void *key)
{
	size_t i = idmap_home(hash, x->cap);

	while (x->b[i] != 0 && !eq(ctx, x->b[i], key)) {
		i = (i + 1) & (x->cap - 1);
	}
	return i;
}

/* sv_idref_get: see idmap.h. */
uint32_t
sv_idref_get(const sv_idref *x, uint64_t hash, sv_idref_eq eq, const void *ctx,
    const void *key)
{
	return x->cap == 0 ? 0 : x->b[sv_idref_find(x, hash, eq, ctx, key)];
}

/* sv_idref_add: see idmap.h. */
void
sv_idref_add(sv_idref *x, uint64_t hash, uint32_t ref)
{
	x->b[idref_place(x->b, x->cap, hash)] = ref;
	x->n++;
}

/* sv_idref_del_at: see idmap.h. As sv_idmap_del: the hole is filled by
 * the next reference of the run that may not stay, repeatedly. */
void
sv_idref_del_at(sv_idref *x, size_t i, sv_idref_hash hf, const void *ctx)
{
	size_t mask = x->cap - 1;

	for (size_t j = (i + 1) & mask; x->b[j] != 0; j = (j + 1) & mask) {
		if (idmap_stays(i, j, idmap_home(hf(ctx, x->b[j]), x->cap))) {
			continue;
		}
		x->b[i] = x->b[j];
		i       = j;
	}
	x->b[i] = 0;
	x->n--;
}
