/*
 * leases_pools.c — the pool requests: CreatePool (administration; the pool
 * is journaled so that a successor declares it again; one whose existing
 * directories a symbolic link or another user could redirect is refused,
 * svd_pool_dir_check) and ListPools (each
 * pool's declaration, held and waiting counts, read from the core).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "leases_internal.h"
#include "log.h"

/* ls_pool_info fills pi for p (strings are p's or static). */
static void
ls_pool_info(svd_leases *l, const ls_pool *p, Supervise__V1__PoolInfo *pi)
{
	supervise__v1__pool_info__init(pi);
	pi->name       = (char *) p->name;
	pi->slots      = p->slots;
	pi->held       = sv_lease_pool_held(l->core, p->id);
	pi->waiting    = sv_lease_pool_waiting(l->core, p->id);
	pi->ttl_ms     = p->ttl_ms;
	pi->grace_ms   = p->grace_ms;
	pi->path       = p->path != NULL ? (char *) p->path : (char *) "";
	pi->on_release = (char *) sv_lease_policy_name(p->policy);
	pi->kind       = p->directory ? (char *) "directory" : (char *) "file";
}

/* ls_policy_parse maps "keep" (or ""), "truncate", "remove". */
static bool
ls_policy_parse(const char *s, sv_lease_policy *p)
{
	if (s == NULL || s[0] == '\0' || strcmp(s, "keep") == 0) {
		*p = SV_LEASE_KEEP;
	} else if (strcmp(s, "truncate") == 0) {
		*p = SV_LEASE_TRUNCATE;
	} else if (strcmp(s, "remove") == 0) {
		*p = SV_LEASE_REMOVE;
	} else {
		return false;
	}
	return true;
}

sv_err
ls_create_pool(svd_leases *l, const svw_env *req, const svd_lease_caller *c,
    svw_env *rep, void **arena)
{
	const Supervise__V1__CreatePool *r = req->create_pool;
	sv_lease_policy                  pol;
	Supervise__V1__PoolInfo         *pi;
	uint32_t                         id;
	ls_pool                          pv;
	bool                             dir;
	sv_err                           err;
	char                             why[600];

	if (!c->admin) {
		return ls_fail(
		    c, SV_EPERM, "creating a pool is administration");
	}
	if (!ls_policy_parse(r->on_release, &pol)) {
		return ls_fail(c, SV_EBADREQ,
		    "on_release must be \"keep\", \"truncate\" or \"remove\"");
	}
	if (r->kind[0] != '\0' && strcmp(r->kind, "file") != 0
	    && strcmp(r->kind, "directory") != 0) {
		return ls_fail(
		    c, SV_EBADREQ, "kind must be \"file\" or \"directory\"");
	}
	dir = strcmp(r->kind, "directory") == 0;
	if ((err = svd_pool_path_check(r->path)) != SV_OK) {
		return ls_fail(c, err,
		    "path must be empty or an absolute path of at most %u "
		    "bytes with {slot} in its last component and no \"..\"",
		    SVD_POOL_PATH_MAX);
	}
	if ((err = svd_pool_dir_check(r->path, why, sizeof(why))) != SV_OK) {
		return ls_fail(c, err == SV_EBADREQ ? SV_EBADREQ : SV_EPERM,
		    "%s: the supervisor makes slot files only under "
		    "directories owned by root or by its own user and "
		    "writable by no one else",
		    why);
	}
	err = ls_pool_add(l, r->name, r->slots, r->ttl_ms, r->grace_ms,
	    r->path, pol, dir, &id);
	switch (err) {
	case SV_OK:
		break;
	case SV_ECONFLICT:
		return ls_fail(c, err, "a pool named \"%s\" exists", r->name);
	case SV_EBADREQ:
		return ls_fail(c, err,
		    "pool name must be 1..64 characters of [A-Za-z0-9_.-]");
	case SV_ETOOLARGE:
		return ls_fail(c, err,
		    "name over 64 bytes, slots over %u, or ttl_ms/grace_ms "
		    "over one day",
		    SV_LEASE_MAX_SLOTS);
	case SV_EINVAL:
		return ls_fail(c, SV_EBADREQ, "slots must be > 0");
	default:
		return ls_fail(
		    c, err, "cannot create pool: %s", sv_strerror(err));
	}
	svd_log("pool %s: created (%" PRIu32 " slots)", r->name, r->slots);
	ls_journal_pool(l, ls_pool_view(l, id, &pv));
	if ((pi = malloc(sizeof(*pi))) == NULL) {
		return ls_fail(c, SV_ENOMEM, "out of memory");
	}
	arena[0] = pi;
	ls_pool_info(l, ls_pool_view(l, id, &pv), pi);
	rep->body_case = SUPERVISE__V1__ENVELOPE__BODY_POOL_INFO;
	rep->pool_info = pi;
	return SV_OK;
}

sv_err
ls_list_pools(
    svd_leases *l, const svd_lease_caller *c, svw_env *rep, void **arena)
{
	Supervise__V1__PoolList  *pl;
	Supervise__V1__PoolInfo  *items;
	Supervise__V1__PoolInfo **ptrs;
	size_t                    n = 0;

	pl    = malloc(sizeof(*pl));
	items = calloc(SV_LEASE_MAX_POOLS, sizeof(*items));
	ptrs  = calloc(SV_LEASE_MAX_POOLS, sizeof(Supervise__V1__PoolInfo *));
	arena[0] = pl;
	arena[1] = items;
	arena[2] = ptrs;
	if (pl == NULL || items == NULL || ptrs == NULL) {
		return ls_fail(c, SV_ENOMEM, "out of memory");
	}
	supervise__v1__pool_list__init(pl);
	for (uint32_t id = 1; id <= sv_lease_pool_count(l->core); id++) {
		ls_pool pv;
		if (ls_pool_view(l, id, &pv) != NULL) {
			ls_pool_info(l, &pv, &items[n]);
			ptrs[n] = &items[n];
			n++;
		}
	}
	pl->n_pools    = n;
	pl->pools      = ptrs;
	rep->body_case = SUPERVISE__V1__ENVELOPE__BODY_POOL_LIST;
	rep->pool_list = pl;
	return SV_OK;
}
