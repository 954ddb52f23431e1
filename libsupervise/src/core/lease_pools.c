/*
 * lease_pools.c — the lease core and its pools: creation and destruction,
 * the declaration of a pool (name, slots, TTL, grace, policy, whether it
 * owns per-slot resources) and the pure accessors the shell reads a pool
 * from (sv_lease_pool_get and friends), so that the shell keeps no copy.
 * Pools are never removed: their ids are 1..npools.
 */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/lease_internal.h"

/* sv_lease_core_create: see core/lease.h. */
sv_err
sv_lease_core_create(uint32_t epoch, sv_lease_core **cp)
{
	sv_lease_core *c;

	if (epoch == 0 || epoch > SV_LEASE_MAX_EPOCH) {
		return SV_EINVAL;
	}
	if ((c = sv_mem_calloc(1, sizeof(*c))) == NULL) {
		return SV_ENOMEM;
	}
	c->epoch = epoch;
	/* The index grows through the fault seam too (core/alloc.h). */
	c->index.calloc = sv_mem_calloc;
	sv_fxring_init(&c->fx, sizeof(sv_lease_fx));
	*cp = c;
	return SV_OK;
}

/* sv_lease_core_destroy: see core/lease.h. */
void
sv_lease_core_destroy(sv_lease_core *c)
{
	if (c == NULL) {
		return;
	}
	for (uint32_t i = 0; i < c->npools; i++) {
		free(c->pools[i]->slots);
		free(c->pools[i]->w);
		free(c->pools[i]);
	}
	sv_idref_fini(&c->index);
	free(c->sessions);
	sv_fxring_fini(&c->fx);
	free(c);
}

/* svl_pool_get returns pool id, or NULL if there is none. */
lpool *
svl_pool_get(const sv_lease_core *c, uint32_t id)
{
	if (id == 0 || id > c->npools) {
		return NULL;
	}
	return c->pools[id - 1];
}

/* name_check: 1..SV_LEASE_NAME_MAX bytes of [A-Za-z0-9_.-], the rule of
 * group names (svw_check_name), with the same errors. */
static sv_err
name_check(const char *name)
{
	size_t n = 0;

	if (name == NULL || name[0] == '\0') {
		return SV_EBADREQ;
	}
	for (const char *q = name; *q != '\0'; q++, n++) {
		char ch = *q;
		if (n >= SV_LEASE_NAME_MAX) {
			return SV_ETOOLARGE;
		}
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')
		        || (ch >= '0' && ch <= '9') || ch == '_' || ch == '.'
		        || ch == '-')) {
			return SV_EBADREQ;
		}
	}
	return SV_OK;
}

/* sv_lease_pool_add: see core/lease.h. */
sv_err
sv_lease_pool_add(sv_lease_core *c, const char *name, uint32_t slots,
    uint64_t ttl_ms, uint64_t grace_ms, sv_lease_policy policy,
    bool has_resource, uint32_t *idp)
{
	lpool *p;
	sv_err rv;

	if ((rv = name_check(name)) != SV_OK) {
		return rv;
	}
	if (slots > SV_LEASE_MAX_SLOTS || ttl_ms > SV_LEASE_MAX_MS
	    || grace_ms > SV_LEASE_MAX_MS) {
		return SV_ETOOLARGE;
	}
	if (slots == 0
	    || (policy != SV_LEASE_KEEP && policy != SV_LEASE_TRUNCATE
	        && policy != SV_LEASE_REMOVE)) {
		return SV_EINVAL;
	}
	if (sv_lease_pool_find(c, name) != 0) {
		return SV_ECONFLICT;
	}
	if (c->npools >= SV_LEASE_MAX_POOLS) {
		return SV_EEXHAUSTED;
	}
	/* Both freed by sv_lease_core_destroy. */
	if ((p = sv_mem_calloc(1, sizeof(*p))) == NULL) {
		return SV_ENOMEM;
	}
	if ((p->slots = sv_mem_calloc(slots, sizeof(*p->slots))) == NULL) {
		free(p);
		return SV_ENOMEM;
	}
	p->id = c->npools + 1;
	memcpy(p->name, name, strlen(name) + 1);
	p->nslots             = slots;
	p->ttl_ms             = ttl_ms;
	p->grace_ms           = grace_ms;
	p->policy             = policy;
	p->has_resource       = has_resource;
	c->pools[c->npools++] = p;
	if (idp != NULL) {
		*idp = p->id;
	}
	return SV_OK;
}

/* sv_lease_pool_find: see core/lease.h. */
uint32_t
sv_lease_pool_find(const sv_lease_core *c, const char *name)
{
	for (uint32_t i = 0; name != NULL && i < c->npools; i++) {
		if (strcmp(c->pools[i]->name, name) == 0) {
			return c->pools[i]->id;
		}
	}
	return 0;
}

/* sv_lease_pool_name: see core/lease.h. */
const char *
sv_lease_pool_name(const sv_lease_core *c, uint32_t id)
{
	const lpool *p = svl_pool_get(c, id);

	return p != NULL ? p->name : NULL;
}

/* sv_lease_pool_count: see core/lease.h. */
uint32_t
sv_lease_pool_count(const sv_lease_core *c)
{
	return c->npools;
}

/* sv_lease_pool_get: see core/lease.h. */
bool
sv_lease_pool_get(const sv_lease_core *c, uint32_t id, sv_lease_pool_info *out)
{
	const lpool *p = svl_pool_get(c, id);

	if (p == NULL) {
		return false;
	}
	*out = (sv_lease_pool_info) {.id = p->id,
	    .name                        = p->name,
	    .slots                       = p->nslots,
	    .ttl_ms                      = p->ttl_ms,
	    .grace_ms                    = p->grace_ms,
	    .policy                      = p->policy,
	    .has_resource                = p->has_resource,
	    .held                        = p->nheld,
	    .waiting                     = p->nw};
	return true;
}

/* sv_lease_pool_held: see core/lease.h. */
uint32_t
sv_lease_pool_held(const sv_lease_core *c, uint32_t id)
{
	const lpool *p = svl_pool_get(c, id);

	return p != NULL ? p->nheld : 0;
}

/* sv_lease_pool_waiting: see core/lease.h. */
uint32_t
sv_lease_pool_waiting(const sv_lease_core *c, uint32_t id)
{
	const lpool *p = svl_pool_get(c, id);

	return p != NULL ? p->nw : 0;
}

/* sv_lease_count: see core/lease.h. */
size_t
sv_lease_count(const sv_lease_core *c)
{
	return c->nleases;
}
