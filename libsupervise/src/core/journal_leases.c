/*
 * journal_leases.c — the journal's lease mirror: the leases and runtime
 * pools a supervisor journaled (L, U and O records), kept so that a
 * compaction can write them again and a successor can restore them.
 *
 * Live leases sit in a dense array (a lease that ends is replaced by the
 * last one, so a snapshot lists them in the order this leaves). An index
 * finds a lease from its (pool, slot) without a scan, another a name from
 * its string: both ref indexes of the id map (idmap.h, sv_idref), whose
 * 4-byte buckets are entry numbers (leases[] index + 1, name id). Pool and
 * holder group names are interned: a lease holds ids into lnames, each name
 * counted by the leases that name it and freed with the last of them.
 * The identity of a slot's resource (DEV INO of an L record) is known only
 * for pools with a path, so it is not a field of every lease: a lease
 * holds an id into a side table (res), whose unused entries are chained
 * for reuse. A lease is 64 bytes; one with a resource 16 more.
 * Runtime pools are few (at most SV_JOURNAL_MAX_POOLS): a plain array.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/journal_internal.h"
#include "idmap.h"

/* j_lname is the string of name id id, "" for 0 or a free entry. */
static const char *
j_lname(const sv_jstate *st, uint32_t id)
{
	if (id == 0 || id > st->nlnames || st->lnames[id - 1].s == NULL) {
		return "";
	}
	return st->lnames[id - 1].s;
}

/* sv_jlease_pool: see journal.h. */
const char *
sv_jlease_pool(const sv_jstate *st, const sv_jlease *l)
{
	return j_lname(st, l->pool);
}

/* sv_jlease_group: see journal.h. */
const char *
sv_jlease_group(const sv_jstate *st, const sv_jlease *l)
{
	return j_lname(st, l->group);
}

/* What the lease table saves rests on this (x86-64: 64 bytes; the
 * identity of the slot's resource is in the side table). */
_Static_assert(sizeof(sv_jlease) <= 64, "a journaled lease stays compact");

/* sv_jlease_res: see journal.h. */
bool
sv_jlease_res(
    const sv_jstate *st, const sv_jlease *l, uint64_t *devp, uint64_t *inop)
{
	if (l->res == 0 || l->res > st->nres || st->res[l->res - 1].ino == 0) {
		*devp = *inop = 0;
		return false;
	}
	*devp = st->res[l->res - 1].dev;
	*inop = st->res[l->res - 1].ino;
	return true;
}

/* j_res_add enters the identity (dev, ino) of a slot's resource and sets
 * *idp to its id; ino 0 (none known) takes no entry and sets 0. The table
 * belongs to st (freed by svj_leases_free). */
static sv_err
j_res_add(sv_jstate *st, uint64_t dev, uint64_t ino, uint32_t *idp)
{
	uint32_t k;

	*idp = 0;
	if (ino == 0) {
		return SV_OK;
	}
	if (st->res_free != 0) {
		k            = st->res_free - 1;
		st->res_free = (uint32_t) st->res[k].dev;
	} else {
		if (st->nres == st->capres) {
			/* One lease a slot, plus the one replacing it. */
			uint32_t cap = st->capres == 0 ? 8 : st->capres * 2;
			sv_jres *r;
			if (cap > SV_JOURNAL_MAX_LEASES + 1) {
				cap = SV_JOURNAL_MAX_LEASES + 1;
			}
			if (cap == st->nres
			    || (r = realloc(st->res, cap * sizeof(*r)))
			        == NULL) {
				return SV_ENOMEM;
			}
			st->res    = r;
			st->capres = cap;
		}
		k = st->nres++;
	}
	st->res[k] = (sv_jres) {dev, ino};
	*idp       = k + 1;
	return SV_OK;
}

/* j_res_drop makes resource id id (0 is ignored) unused again. */
static void
j_res_drop(sv_jstate *st, uint32_t id)
{
	if (id == 0) {
		return;
	}
	st->res[id - 1] = (sv_jres) {st->res_free, 0};
	st->res_free    = id;
}

/* j_strhash is the FNV-1a hash of s. */
static uint32_t
j_strhash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s != '\0'; s++) {
		h = (h ^ (uint8_t) *s) * 16777619u;
	}
	return h;
}

/* Names: entry v is name id v; the key is the string. j_name_hash is the
 * key hash of entry v. */
static uint64_t
j_name_hash(const void *ctx, uint32_t v)
{
	const sv_jstate *st = ctx;

	return st->lnames[v - 1].hash;
}

/* j_name_eq tells whether entry v is the name key (a string). */
static bool
j_name_eq(const void *ctx, uint32_t v, const void *key)
{
	const sv_jstate *st = ctx;

	return strcmp(st->lnames[v - 1].s, key) == 0;
}

/* j_name_id returns the id of name s, or 0 if no lease names it. */
static uint32_t
j_name_id(const sv_jstate *st, const char *s)
{
	return sv_idref_get(&st->lname_index, j_strhash(s), j_name_eq, st, s);
}

/* j_name_ref counts one more lease naming s and sets *idp to its id,
 * entering s if it is new. */
static sv_err
j_name_ref(sv_jstate *st, const char *s, uint32_t *idp)
{
	uint32_t  id = j_name_id(st, s);
	uint32_t  k  = st->nlnames;
	sv_jname *n;
	char     *copy;
	sv_err    rv;

	if (id != 0) {
		st->lnames[id - 1].refs++;
		*idp = id;
		return SV_OK;
	}
	if (st->lnames_free > 0) {
		/* Reuse a freed entry (there are few names: a scan). */
		k = 0;
		while (st->lnames[k].s != NULL) {
			k++;
		}
	} else if (st->nlnames == st->caplnames) {
		uint32_t cap = st->caplnames == 0 ? 8 : st->caplnames * 2;
		/* At most two names a lease, and leases are bounded. */
		if (cap > 2 * SV_JOURNAL_MAX_LEASES) {
			return SV_ENOMEM;
		}
		if ((n = realloc(st->lnames, cap * sizeof(*n))) == NULL) {
			return SV_ENOMEM;
		}
		st->lnames    = n;
		st->caplnames = cap;
	}
	if ((copy = strdup(s)) == NULL) {
		return SV_ENOMEM;
	}
	n       = &st->lnames[k];
	n->s    = copy;
	n->refs = 1;
	n->hash = j_strhash(s);
	if ((rv = sv_idref_reserve(&st->lname_index, 1, j_name_hash, st))
	    != SV_OK) {
		free(copy);
		n->s = NULL; /* the entry stays free (or unused) */
		return rv;
	}
	sv_idref_add(&st->lname_index, n->hash, k + 1);
	if (k == st->nlnames) {
		st->nlnames++;
	} else {
		st->lnames_free--;
	}
	*idp = k + 1;
	return SV_OK;
}

/* j_name_unref counts one lease fewer naming name id (0 is ignored); the
 * last one frees the name. */
static void
j_name_unref(sv_jstate *st, uint32_t id)
{
	sv_jname *n;

	if (id == 0) {
		return;
	}
	n = &st->lnames[id - 1];
	if (--n->refs > 0) {
		return;
	}
	sv_idref_del_at(&st->lname_index,
	    sv_idref_find(&st->lname_index, n->hash, j_name_eq, st, n->s),
	    j_name_hash, st);
	free(n->s);
	n->s = NULL;
	st->lnames_free++;
}

/* Leases: entry v is leases[v - 1]; the key is (pool id, slot). */
typedef struct j_lkey {
	uint32_t pool, slot;
} j_lkey;

/* j_lkey_hash is the key hash of (pool id, slot). */
static uint64_t
j_lkey_hash(uint32_t pool, uint32_t slot)
{
	return ((uint64_t) pool << 32) | slot;
}

/* j_lease_hash is the key hash of entry v. */
static uint64_t
j_lease_hash(const void *ctx, uint32_t v)
{
	const sv_jstate *st = ctx;

	return j_lkey_hash(st->leases[v - 1].pool, st->leases[v - 1].slot);
}

/* j_lease_eq tells whether entry v is on key (a j_lkey). */
static bool
j_lease_eq(const void *ctx, uint32_t v, const void *key)
{
	const sv_jstate *st = ctx;
	const j_lkey    *k  = key;

	return st->leases[v - 1].pool == k->pool
	    && st->leases[v - 1].slot == k->slot;
}

/* j_lease_bucket returns the index bucket of the lease on (pool, slot),
 * whose content is 0 when there is none. The index must not be empty. */
static size_t
j_lease_bucket(const sv_jstate *st, uint32_t pool, uint32_t slot)
{
	j_lkey k = {pool, slot};

	return sv_idref_find(
	    &st->lease_index, j_lkey_hash(pool, slot), j_lease_eq, st, &k);
}

/* j_lease_find returns the live lease on (pool, slot), or NULL. */
static sv_jlease *
j_lease_find(const sv_jstate *st, const char *pool, uint32_t slot)
{
	uint32_t pid = j_name_id(st, pool);
	uint32_t v;

	if (pid == 0 || st->lease_index.cap == 0) {
		return NULL;
	}
	v = st->lease_index.b[j_lease_bucket(st, pid, slot)];
	return v != 0 ? &st->leases[v - 1] : NULL;
}

/* j_lease_remove removes lease l of st; the last lease takes its place. */
static void
j_lease_remove(sv_jstate *st, sv_jlease *l)
{
	size_t    i    = (size_t) (l - st->leases);
	size_t    last = st->nleases - 1;
	sv_jlease gone = *l;

	sv_idref_del_at(&st->lease_index,
	    j_lease_bucket(st, gone.pool, gone.slot), j_lease_hash, st);
	if (i != last) {
		size_t b = j_lease_bucket(
		    st, st->leases[last].pool, st->leases[last].slot);
		st->leases[i]        = st->leases[last];
		st->lease_index.b[b] = (uint32_t) i + 1;
	}
	st->nleases--;
	j_name_unref(st, gone.pool);
	j_name_unref(st, gone.group);
	j_res_drop(st, gone.res);
}

/* j_lease_put enters lease nl (its names already counted and its
 * resource entered for it): it replaces the live lease on its slot, or is
 * added. On failure the names are uncounted and the resource dropped
 * again. */
static sv_err
j_lease_put(sv_jstate *st, const sv_jlease *nl, char *err, size_t errlen)
{
	size_t b = 0;
	sv_err rv;

	if (st->lease_index.cap > 0) {
		b = j_lease_bucket(st, nl->pool, nl->slot);
		if (st->lease_index.b[b] != 0) {
			sv_jlease *l = &st->leases[st->lease_index.b[b] - 1];
			/* The same pool: its count moves to the new lease. */
			j_name_unref(st, l->pool);
			j_name_unref(st, l->group);
			j_res_drop(st, l->res);
			*l = *nl;
			return SV_OK;
		}
	}
	if (st->nleases == SV_JOURNAL_MAX_LEASES) {
		rv = svj_fail(
		    err, errlen, "more than %u leases", SV_JOURNAL_MAX_LEASES);
		goto fail;
	}
	if (st->nleases == st->capleases) {
		size_t     cap = st->capleases > 0 ? st->capleases * 2 : 16;
		sv_jlease *p   = realloc(st->leases, cap * sizeof(*p));
		if (p == NULL) {
			rv = SV_ENOMEM;
			goto fail;
		}
		st->leases    = p;
		st->capleases = cap;
	}
	if ((rv = sv_idref_reserve(&st->lease_index, 1, j_lease_hash, st))
	    != SV_OK) {
		goto fail;
	}
	st->leases[st->nleases] = *nl;
	sv_idref_add(&st->lease_index, j_lkey_hash(nl->pool, nl->slot),
	    (uint32_t) st->nleases + 1);
	st->nleases++;
	return SV_OK;
fail:
	j_name_unref(st, nl->pool);
	j_name_unref(st, nl->group);
	j_res_drop(st, nl->res);
	return rv;
}

/* svj_apply_lease handles L and U (name is the pool). */
sv_err
svj_apply_lease(sv_jstate *st, sv_jkind kind, const j_fields *fs,
    const char *name, char *err, size_t errlen)
{
	uint64_t slot, id, token, ord = 0, gen = 0, ses = 0, uid = 0, ttl = 0;
	uint64_t dev = 0, ino = 0;
	char     group[SV_JOURNAL_LEASE_NAME_MAX + 1];
	sv_jlease *l;
	sv_jlease  nl;
	sv_err     rv;

	if (strlen(name) > SV_JOURNAL_LEASE_NAME_MAX) {
		return svj_fail(err, errlen, "pool name too long");
	}
	/* L: 11 fields, or 13 with the resource's DEV INO (older journals
	 * have 11, and replay the same with no resource known). */
	if ((kind == SV_J_LEASE ? fs->count != 11u && fs->count != 13u
	                        : fs->count != 4u)
	    || !svj_u64(fs->f[2], fs->n[2], UINT32_MAX, &slot)
	    || !svj_u64(fs->f[3], fs->n[3], UINT64_MAX, &id) || id == 0) {
		return svj_fail(err, errlen, "bad lease record");
	}
	if (kind == SV_J_UNLEASE) {
		l = j_lease_find(st, name, (uint32_t) slot);
		if (l != NULL && l->id == id) {
			j_lease_remove(st, l);
		}
		return SV_OK;
	}
	memset(&nl, 0, sizeof(nl));
	if (!svj_u64(fs->f[4], fs->n[4], UINT64_MAX, &token)
	    || !svj_u64(fs->f[6], fs->n[6], UINT32_MAX, &ord)
	    || !svj_u64(fs->f[7], fs->n[7], UINT64_MAX, &gen)
	    || !svj_u64(fs->f[8], fs->n[8], UINT64_MAX, &ses)
	    || !svj_u64(fs->f[9], fs->n[9], UINT32_MAX, &uid)
	    || !svj_u64(fs->f[10], fs->n[10], UINT64_MAX, &ttl)
	    || (fs->count == 13u
	        && (!svj_u64(fs->f[11], fs->n[11], UINT64_MAX, &dev)
	            || !svj_u64(fs->f[12], fs->n[12], UINT64_MAX, &ino)
	            || ino == 0))) {
		return svj_fail(err, errlen, "bad lease record");
	}
	group[0] = '\0';
	if (fs->n[5] == 1 && fs->f[5][0] == '-') {
		if (ses == 0) {
			return svj_fail(err, errlen, "lease without a holder");
		}
	} else if (ses != 0
	    || !svj_decode(fs->f[5], fs->n[5], group, sizeof(group))) {
		return svj_fail(err, errlen, "bad lease holder");
	}
	nl.slot           = (uint32_t) slot;
	nl.id             = id;
	nl.token          = token;
	nl.ordinal        = (uint32_t) ord;
	nl.generation     = gen;
	nl.session        = ses;
	nl.session_uid    = (uint32_t) uid;
	nl.session_ttl_ms = ttl;
	if ((rv = j_res_add(st, dev, ino, &nl.res)) != SV_OK) {
		return rv;
	}
	if ((rv = j_name_ref(st, name, &nl.pool)) != SV_OK) {
		j_res_drop(st, nl.res);
		return rv;
	}
	if (group[0] != '\0'
	    && (rv = j_name_ref(st, group, &nl.group)) != SV_OK) {
		j_name_unref(st, nl.pool);
		j_res_drop(st, nl.res);
		return rv;
	}
	return j_lease_put(st, &nl, err, errlen);
}

/* sv_jstate_lease: see journal.h. */
const sv_jlease *
sv_jstate_lease(const sv_jstate *st, const char *pool, uint32_t slot)
{
	if (pool == NULL || strlen(pool) > SV_JOURNAL_LEASE_NAME_MAX) {
		return NULL;
	}
	return j_lease_find(st, pool, slot);
}

/* svj_apply_pool handles O (name is the pool): a runtime pool, replacing
 * an earlier record of the same name. */
sv_err
svj_apply_pool(sv_jstate *st, const j_fields *fs, const char *name, char *err,
    size_t errlen)
{
	uint64_t  slots, ttl, grace, pol, dir;
	sv_jpool *p    = NULL;
	char     *path = NULL;

	if (strlen(name) > SV_JOURNAL_LEASE_NAME_MAX || fs->count != 8
	    || !svj_u64(fs->f[2], fs->n[2], UINT32_MAX, &slots)
	    || !svj_u64(fs->f[3], fs->n[3], UINT64_MAX, &ttl)
	    || !svj_u64(fs->f[4], fs->n[4], UINT64_MAX, &grace)
	    || !svj_u64(fs->f[5], fs->n[5], 2, &pol)
	    || !svj_u64(fs->f[6], fs->n[6], 1, &dir)) {
		return svj_fail(err, errlen, "bad pool record");
	}
	if (!(fs->n[7] == 1 && fs->f[7][0] == '-')) {
		if ((path = malloc(SV_JOURNAL_PATH_MAX + 1)) == NULL) {
			return SV_ENOMEM;
		}
		if (!svj_decode(
		        fs->f[7], fs->n[7], path, SV_JOURNAL_PATH_MAX + 1)) {
			free(path);
			return svj_fail(err, errlen, "bad pool path");
		}
	}
	for (size_t i = 0; i < st->npools; i++) {
		if (strcmp(st->pools[i].name, name) == 0) {
			p = &st->pools[i];
		}
	}
	if (p == NULL) {
		sv_jpool *np;
		if (st->npools == SV_JOURNAL_MAX_POOLS) {
			free(path);
			return svj_fail(err, errlen, "more than %u pools",
			    SV_JOURNAL_MAX_POOLS);
		}
		np = realloc(st->pools, (st->npools + 1) * sizeof(*np));
		if (np == NULL) {
			free(path);
			return SV_ENOMEM;
		}
		st->pools = np;
		p         = &st->pools[st->npools++];
		memset(p, 0, sizeof(*p));
		snprintf(p->name, sizeof(p->name), "%s", name);
	}
	free(p->path);
	p->path      = path;
	p->slots     = (uint32_t) slots;
	p->ttl_ms    = ttl;
	p->grace_ms  = grace;
	p->policy    = (uint32_t) pol;
	p->directory = dir == 1;
	return SV_OK;
}

/* svj_leases_free frees the lease mirror of st: runtime pools, leases,
 * names, resources and the indexes (sv_jstate_free calls it). */
void
svj_leases_free(sv_jstate *st)
{
	for (size_t i = 0; i < st->npools; i++) {
		free(st->pools[i].path);
	}
	free(st->pools);
	free(st->leases);
	for (uint32_t i = 0; i < st->nlnames; i++) {
		free(st->lnames[i].s);
	}
	free(st->lnames);
	free(st->res);
	sv_idref_fini(&st->lease_index);
	sv_idref_fini(&st->lname_index);
}
