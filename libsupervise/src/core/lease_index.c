/*
 * lease_index.c — the lease id index: an open-addressing hash table
 * (linear probing, Fibonacci hashing, backward-shift deletion) from a lease
 * id to its slot. A bucket is 4 bytes, (pool id << LINDEX_SLOT_BITS) |
 * slot; the id it stands for is read from the slot itself.
 */
#include <stdlib.h>

#include "core/alloc.h"
#include "core/lease_internal.h"

/* index_ref is the bucket value of slot i of p. */
static uint32_t
index_ref(const lpool *p, uint32_t i)
{
	return (p->id << LINDEX_SLOT_BITS) | i;
}

/* index_slot returns the slot bucket value v stands for. */
static const lslot *
index_slot(const sv_lease_core *c, uint32_t v)
{
	return &c->pools[(v >> LINDEX_SLOT_BITS) - 1]
	            ->slots[v & ((1u << LINDEX_SLOT_BITS) - 1)];
}

/* index_home is the first bucket of lease id in a table of cap buckets
 * (Fibonacci hashing). */
static size_t
index_home(uint64_t id, size_t cap)
{
	return (size_t) ((id * UINT64_C(0x9E3779B97F4A7C15)) >> 32)
	    & (cap - 1);
}

/* index_find returns the bucket of lease id, or the empty bucket where
 * it would go. The table must not be empty. */
static size_t
index_find(const sv_lease_core *c, uint64_t id)
{
	const lindex *x = &c->index;
	size_t        i = index_home(id, x->cap);

	while (x->b[i] != 0 && index_slot(c, x->b[i])->id != id) {
		i = (i + 1) & (x->cap - 1);
	}
	return i;
}

/* svl_index_get returns the bucket value of lease id, 0 if there is none. */
uint32_t
svl_index_get(const sv_lease_core *c, uint64_t id)
{
	return c->index.cap == 0 ? 0 : c->index.b[index_find(c, id)];
}

/* svl_index_reserve makes room for n more entries (at most three quarters
 * full), rehashing into a table doubled as often as needed. The table is
 * allocated through core/alloc.h and freed by sv_lease_core_destroy.
 * Errors: SV_ENOMEM (the index is unchanged). */
sv_err
svl_index_reserve(sv_lease_core *c, size_t n)
{
	lindex   *x = &c->index;
	size_t    cap;
	uint32_t *b;

	if ((x->n + n) * 4 <= x->cap * 3) {
		return SV_OK;
	}
	cap = x->cap == 0 ? 64 : x->cap * 2;
	while ((x->n + n) * 4 > cap * 3) {
		cap *= 2;
	}
	if ((b = sv_mem_calloc(cap, sizeof(*b))) == NULL) {
		return SV_ENOMEM;
	}
	for (size_t k = 0; k < x->cap; k++) {
		if (x->b[k] != 0) {
			size_t i = index_home(index_slot(c, x->b[k])->id, cap);
			while (b[i] != 0) {
				i = (i + 1) & (cap - 1);
			}
			b[i] = x->b[k];
		}
	}
	free(x->b);
	x->b   = b;
	x->cap = cap;
	return SV_OK;
}

/* svl_index_put enters slot i of p, whose id is set, after svl_index_reserve.
 */
void
svl_index_put(sv_lease_core *c, const lpool *p, uint32_t i)
{
	lindex *x = &c->index;
	size_t  k = index_home(p->slots[i].id, x->cap);

	while (x->b[k] != 0) {
		k = (k + 1) & (x->cap - 1);
	}
	x->b[k] = index_ref(p, i);
	x->n++;
}

/* svl_index_del removes lease id (its slot still names it): backward shift,
 * moving later entries of the probe run into the hole unless their home
 * lies cyclically in (i, j]. */
void
svl_index_del(sv_lease_core *c, uint64_t id)
{
	lindex *x = &c->index;
	size_t  i, j;

	if (x->cap == 0 || x->b[i = index_find(c, id)] == 0) {
		return;
	}
	j = i;
	for (;;) {
		size_t home;
		j = (j + 1) & (x->cap - 1);
		if (x->b[j] == 0) {
			break;
		}
		home = index_home(index_slot(c, x->b[j])->id, x->cap);
		if (i <= j ? (i < home && home <= j)
		           : (i < home || home <= j)) {
			continue;
		}
		x->b[i] = x->b[j];
		i       = j;
	}
	x->b[i] = 0;
	x->n--;
}

/* svl_lease_find finds lease id; on success *pp and *ip name its slot. */
bool
svl_lease_find(const sv_lease_core *c, uint64_t id, lpool **pp, uint32_t *ip)
{
	uint32_t v;
	lpool   *p;
	uint32_t i;

	if (id == 0 || (v = svl_index_get(c, id)) == 0) {
		return false;
	}
	p = svl_pool_get(c, v >> LINDEX_SLOT_BITS);
	i = v & ((1u << LINDEX_SLOT_BITS) - 1);
	if (p == NULL || i >= p->nslots || p->slots[i].phase == SVL_FREE
	    || p->slots[i].id != id) {
		return false;
	}
	*pp = p;
	*ip = i;
	return true;
}
