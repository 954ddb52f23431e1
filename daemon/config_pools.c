/*
 * config_pools.c — the top-level `pools` list of supervised's config
 * (docs/config.md, "Lease pools"): one entry per pool of leases
 * (docs/leases.md).
 *
 *   pools = ( { name = "metrics"; slots = 4; ttl_ms = 0; grace_ms = 2000;
 *               path = "/run/app/metrics/{slot}.db";
 *               on_release = "keep"; kind = "file"; } );
 *
 * Like a group, an entry is read through one table built from the
 * SV_POOL_KEY rows of config_keys.def (name, type, range, member of
 * svd_pool_config, reader): one loop looks each setting up and calls the
 * row's reader; a key without a row is "unknown key" and sets nothing.
 * Errors are config_read.h's one line, the key named by its path
 * ("pools[1].slots"). Bounds are the lease core's (core/lease.h): 1..256
 * pools, 1..4096 slots, durations up to one day; the path is checked by
 * svd_pool_path_check, and its existing directories by svd_pool_dir_check
 * (dir_trust.h): a pool under a symbolic link or a directory another user
 * may write to is refused here, before anything is made there.
 */
#include <libconfig.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "config_read.h"
#include "dir_trust.h"

typedef struct pl_key pl_key;

/* A reader of one pool key: checks setting e (named key in messages)
 * against row k and stores it at field, the row's member of the entry. */
typedef sv_err pl_parse(cfg_ctx *c, const config_setting_t *e, const char *key,
    const pl_key *k, void *field);

/* One row of the pool key table (config_keys.def). */
struct pl_key {
	const char        *name;
	int64_t            min, max; /* integer range, or length bounds */
	size_t             off; /* of the member in svd_pool_config */
	size_t             size; /* of that member */
	pl_parse          *parse;
	const char *const *choices; /* NULL-terminated, or NULL */
};

static pl_parse pl_p_name, pl_p_int, pl_p_path, pl_p_choice;

#define CFG_CHOICES(...) ((const char *const[]) {__VA_ARGS__, NULL})

/* The keys of a pool entry: the one list of what an entry may set. */
static const pl_key pl_keys[] = {
#define SV_GROUP_KEY(n, t, lo, hi, m, p, ch, sp, d)
#define SV_TOP_KEY(n, t, d)
#define SV_POOL_KEY(n, t, lo, hi, m, p, ch, d)                             \
	{#n, (int64_t) (lo), (int64_t) (hi), offsetof(svd_pool_config, m), \
	    sizeof(((svd_pool_config *) 0)->m), p, ch},
#include "config_keys.def"
#undef SV_GROUP_KEY
#undef SV_TOP_KEY
#undef SV_POOL_KEY
};

#define PL_NKEYS (sizeof(pl_keys) / sizeof(pl_keys[0]))

/* pl_key_find finds name's row, or returns NULL. */
static const pl_key *
pl_key_find(const char *name)
{
	for (size_t i = 0; i < PL_NKEYS; i++) {
		if (strcmp(pl_keys[i].name, name) == 0) {
			return &pl_keys[i];
		}
	}
	return NULL;
}

sv_err
svd_pool_path_check(const char *path)
{
	const char *last;

	if (path == NULL || path[0] == '\0') {
		return SV_OK;
	}
	if (path[0] != '/' || strlen(path) > SVD_POOL_PATH_MAX) {
		return SV_EBADREQ;
	}
	last = strrchr(path, '/');
	if (strstr(last, "{slot}") == NULL || strstr(path, "/../") != NULL
	    || strcmp(last, "/..") == 0) {
		return SV_EBADREQ;
	}
	return SV_OK;
}

/* svd_pool_dir_check: see config.h. */
sv_err
svd_pool_dir_check(const char *path, char *why, size_t whylen)
{
	char  dir[SVD_POOL_PATH_MAX + 1];
	char *cut;

	if (path == NULL || path[0] == '\0') {
		return SV_OK;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	/* Up to the first component that depends on the slot. */
	cut = strstr(dir, "{slot}");
	if (cut != NULL) {
		*cut = '\0';
	}
	if ((cut = strrchr(dir, '/')) == NULL) {
		return SV_OK; /* not absolute: svd_pool_path_check says so */
	}
	cut[cut == dir ? 1 : 0] = '\0';
	return svd_dir_check(dir, why, whylen);
}

/* pl_p_int reads an integer in the row's range into a uint32_t or a
 * uint64_t member. */
static sv_err
pl_p_int(cfg_ctx *c, const config_setting_t *e, const char *key,
    const pl_key *k, void *field)
{
	int64_t v   = 0;
	sv_err  err = cfg_int(c, e, key, k->min, k->max, &v);

	if (err == SV_OK && k->size == sizeof(uint32_t)) {
		*(uint32_t *) field = (uint32_t) v;
	} else if (err == SV_OK) {
		*(uint64_t *) field = (uint64_t) v;
	}
	return err;
}

/* pl_p_name reads the pool's name: 1..max characters of [A-Za-z0-9_.-]. */
static sv_err
pl_p_name(cfg_ctx *c, const config_setting_t *e, const char *key,
    const pl_key *k, void *field)
{
	char **out = field;
	sv_err err = cfg_str(c, e, key, (size_t) k->max, out);
	size_t n;
	bool   ok;

	if (err != SV_OK) {
		return err;
	}
	n  = strlen(*out);
	ok = n >= (size_t) k->min;
	for (size_t j = 0; ok && j < n; j++) {
		char ch = (*out)[j];
		ok      = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')
		    || (ch >= '0' && ch <= '9') || ch == '_' || ch == '.'
		    || ch == '-';
	}
	return ok ? SV_OK
	          : cfg_fail(c, e, key,
	              "must be 1..%lld characters of [A-Za-z0-9_.-]",
	              (long long) k->max);
}

/* pl_p_path reads a slot path template ("" is no path). */
static sv_err
pl_p_path(cfg_ctx *c, const config_setting_t *e, const char *key,
    const pl_key *k, void *field)
{
	char      **out = field;
	const char *v;
	char        why[600];

	if (config_setting_type(e) != CONFIG_TYPE_STRING) {
		return cfg_fail(c, e, key, "must be a string");
	}
	v = config_setting_get_string(e);
	if (svd_pool_path_check(v) != SV_OK) {
		return cfg_fail(c, e, key,
		    "must be an absolute path of at most %lld bytes with "
		    "{slot} in its last component and no \"..\"",
		    (long long) k->max);
	}
	if (svd_pool_dir_check(v, why, sizeof(why)) != SV_OK) {
		return cfg_fail(c, e, key,
		    "%s: the supervisor makes slot files only under "
		    "directories owned by root or by its own user and "
		    "writable by no one else",
		    why);
	}
	free(*out);
	*out = NULL;
	if (v[0] != '\0' && (*out = strdup(v)) == NULL) {
		return cfg_oom(c);
	}
	return SV_OK;
}

/* pl_p_choice reads one of the row's words into an enum member (its
 * index) or a bool member (the second word and later are true). */
static sv_err
pl_p_choice(cfg_ctx *c, const config_setting_t *e, const char *key,
    const pl_key *k, void *field)
{
	int    idx = 0;
	sv_err err;

	if (config_setting_type(e) != CONFIG_TYPE_STRING) {
		return cfg_fail(c, e, key, "must be a string");
	}
	if ((err = cfg_choice(c, e, key, k->choices, &idx)) != SV_OK) {
		return err;
	}
	if (k->size == sizeof(bool)) {
		*(bool *) field = idx != 0;
	} else {
		*(int *) field = idx;
	}
	return SV_OK;
}

/* pl_entry reads entry idx of the list. */
static sv_err
pl_entry(cfg_ctx *c, const config_setting_t *s, size_t idx, svd_pool_config *p)
{
	char base[32], key[160];
	bool slots = false;

	snprintf(base, sizeof(base), "pools[%zu]", idx);
	if (config_setting_type(s) != CONFIG_TYPE_GROUP) {
		return cfg_fail(
		    c, s, base, "each entry must be a group { ... }");
	}
	p->policy = SV_LEASE_KEEP;
	for (int i = 0; i < config_setting_length(s); i++) {
		const config_setting_t *e
		    = config_setting_get_elem(s, (unsigned) i);
		const char   *name = config_setting_name(e);
		const pl_key *k    = pl_key_find(name);
		sv_err        err;

		snprintf(key, sizeof(key), "%s.%s", base, name);
		if (k == NULL) {
			return cfg_fail(c, e, key, "unknown key");
		}
		if ((err = k->parse(c, e, key, k, (char *) p + k->off))
		    != SV_OK) {
			return err;
		}
		slots = slots || k->off == offsetof(svd_pool_config, slots);
	}
	if (p->name == NULL) {
		snprintf(key, sizeof(key), "%s.name", base);
		return cfg_fail(c, s, key, "missing required key \"name\"");
	}
	if (!slots) {
		snprintf(key, sizeof(key), "%s.slots", base);
		return cfg_fail(c, s, key, "missing required key \"slots\"");
	}
	return SV_OK;
}

sv_err
svd_config_pools(const char *path, const config_setting_t *s, svd_config *cfg,
    char *err, size_t errlen)
{
	cfg_ctx c = {.path = path, .err = err, .errlen = errlen};
	size_t  n;

	if (config_setting_type(s) != CONFIG_TYPE_LIST) {
		return cfg_fail(
		    &c, s, "pools", "must be a list ( { ... }, ... )");
	}
	n = (size_t) config_setting_length(s);
	if (n > SV_LEASE_MAX_POOLS) {
		return cfg_fail(&c, s, "pools", "at most %u entries (got %zu)",
		    SV_LEASE_MAX_POOLS, n);
	}
	if (n == 0) {
		return SV_OK;
	}
	if ((cfg->pools = calloc(n, sizeof(*cfg->pools))) == NULL) {
		return cfg_oom(&c);
	}
	cfg->npools = n;
	for (size_t i = 0; i < n; i++) {
		const config_setting_t *e
		    = config_setting_get_elem(s, (unsigned) i);
		sv_err rv = pl_entry(&c, e, i, &cfg->pools[i]);
		if (rv != SV_OK) {
			return rv;
		}
		for (size_t j = 0; j < i; j++) {
			if (cfg->pools[j].name != NULL
			    && cfg->pools[i].name != NULL
			    && strcmp(cfg->pools[j].name, cfg->pools[i].name)
			        == 0) {
				char key[48];
				snprintf(
				    key, sizeof(key), "pools[%zu].name", i);
				return cfg_fail(&c, e, key,
				    "duplicate pool name \"%s\" (also "
				    "pools[%zu])",
				    cfg->pools[i].name, j);
			}
		}
	}
	return SV_OK;
}

void
svd_config_pools_free(svd_config *cfg)
{
	for (size_t i = 0; i < cfg->npools; i++) {
		free(cfg->pools[i].name);
		free(cfg->pools[i].path);
	}
	free(cfg->pools);
	cfg->pools  = NULL;
	cfg->npools = 0;
}
