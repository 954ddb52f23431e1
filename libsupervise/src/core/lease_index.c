/*
 * lease_index.c — the lease id index: from a lease id to its slot, a ref
 * index of the id map (idmap.h, sv_idref). A reference is 4 bytes,
 * (pool id << LINDEX_SLOT_BITS) | slot; the id it stands for is read from
 * the slot itself.
 */
#include "core/alloc.h"
#include "core/lease_internal.h"

/* index_slot returns the slot reference v stands for. */
static const lslot *
index_slot(const sv_lease_core *c, uint32_t v)
{
	return &c->pools[(v >> LINDEX_SLOT_BITS) - 1]
	            ->slots[v & ((1u << LINDEX_SLOT_BITS) - 1)];
}

/* index_hash is the hash of the lease id reference v stands for (ctx is
 * the core). */
static uint64_t
index_hash(const void *ctx, uint32_t v)
{
	return index_slot(ctx, v)->id;
}

/* index_eq tells whether reference v stands for lease id *key. */
static bool
index_eq(const void *ctx, uint32_t v, const void *key)
{
	return index_slot(ctx, v)->id == *(const uint64_t *) key;
}

/* svl_index_get returns the reference of lease id, 0 if there is none. */
uint32_t
svl_index_get(const sv_lease_core *c, uint64_t id)
{
	return sv_idref_get(&c->index, id, index_eq, c, &id);
}

/* svl_index_reserve makes room for n more entries. The table is allocated
 * through core/alloc.h (c->index.calloc, set by sv_lease_core_create) and
 * freed by sv_lease_core_destroy. Errors: SV_ENOMEM (the index is
 * unchanged). */
sv_err
svl_index_reserve(sv_lease_core *c, size_t n)
{
	return sv_idref_reserve(&c->index, n, index_hash, c);
}

/* svl_index_put enters slot i of p, whose id is set, after
 * svl_index_reserve. */
void
svl_index_put(sv_lease_core *c, const lpool *p, uint32_t i)
{
	sv_idref_add(
	    &c->index, p->slots[i].id, (p->id << LINDEX_SLOT_BITS) | i);
}

/* svl_index_del removes lease id (its slot still names it). */
void
svl_index_del(sv_lease_core *c, uint64_t id)
{
	size_t i;

	if (c->index.cap == 0
	    || c->index.b[i = sv_idref_find(&c->index, id, index_eq, c, &id)]
	        == 0) {
		return;
	}
	sv_idref_del_at(&c->index, i, index_hash, c);
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
