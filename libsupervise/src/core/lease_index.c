/*
 * lease_index.c — the lease id index: lease id -> its slot, over the id map
 * (idmap.h). The value is the slot's reference, (pool id <<
 * LINDEX_SLOT_BITS) | slot, never 0 since pool ids start at 1.
 */
#include <stdint.h>

#include "core/lease_internal.h"

/* index_ref is the reference of slot i of p, as an id map value. */
static void *
index_ref(const lpool *p, uint32_t i)
{
	return (void *) (uintptr_t) ((p->id << LINDEX_SLOT_BITS) | i);
}

/* svl_index_get returns the slot reference of lease id, 0 if there is
 * none. */
uint32_t
svl_index_get(const sv_lease_core *c, uint64_t id)
{
	return (uint32_t) (uintptr_t) sv_idmap_get(&c->index, id);
}

/* svl_index_reserve makes room for one more entry, so that the next
 * svl_index_put cannot fail. Errors: SV_ENOMEM (nothing changed). */
sv_err
svl_index_reserve(sv_lease_core *c)
{
	return sv_idmap_reserve(&c->index, 1);
}

/* svl_index_put enters slot i of p, whose id is set, after
 * svl_index_reserve (so it cannot fail). */
void
svl_index_put(sv_lease_core *c, const lpool *p, uint32_t i)
{
	sv_err rv = sv_idmap_put(&c->index, p->slots[i].id, index_ref(p, i));

	(void) rv; /* SV_OK: room was reserved */
}

/* svl_index_del removes lease id, if it is there. */
void
svl_index_del(sv_lease_core *c, uint64_t id)
{
	(void) sv_idmap_del(&c->index, id);
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
	if (p == NULL || i >= p->nslots || p->slots[i].state == SV_LEASE_FREE
	    || p->slots[i].id != id) {
		return false;
	}
	*pp = p;
	*ip = i;
	return true;
}
