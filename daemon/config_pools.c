/*
 * config_pools.c — the top-level `pools` list of supervised's config
 * (docs/config.md, "Lease pools"): one entry per pool of leases
 * (docs/leases.md), checked key by key like the groups in config.c, with
 * the same "FILE:LINE: KEY: what" error lines.
 *
 *   pools = ( { name = "metrics"; slots = 4; ttl_ms = 0; grace_ms = 2000;
 *               path = "/run/app/metrics/{slot}.db";
 *               on_release = "keep"; kind = "file"; } );
 *
 * Bounds are the lease core's (core/lease.h): 1..256 pools, 1..4096 slots,
 * durations up to one day; the path is checked by svd_pool_path_check,
 * and its existing directories by svd_pool_dir_check (dir_trust.h): a
 * pool under a symbolic link or a directory another user may write to is
 * refused here, before anything is made there.
 */
#include <inttypes.h>
#include <libconfig.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "dir_trust.h"

/* pl_fail writes "FILE:LINE: KEY: message" and returns SV_EINVAL. */
static sv_err pl_fail(const char *path, const config_setting_t *s,
    const char *key, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static sv_err
pl_fail(const char *path, const config_setting_t *s, const char *key,
    char *err, size_t errlen, const char *fmt, ...)
{
	char    msg[1200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(err, errlen, "%s:%d: %s: %s", path,
	    s != NULL ? config_setting_source_line(s) : 0, key, msg);
	for (char *p = err; *p != '\0'; p++) {
		if ((unsigned char) *p < 0x20 || *p == 0x7f) {
			*p = '?';
		}
	}
	return SV_EINVAL;
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

/* pl_int reads an integer within [lo, hi]. */
static sv_err
pl_int(const char *path, const config_setting_t *e, const char *key,
    int64_t lo, int64_t hi, int64_t *out, char *err, size_t errlen)
{
	int     t = config_setting_type(e);
	int64_t v;

	if (t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64) {
		return pl_fail(path, e, key, err, errlen,
		    "must be an integer in %lld..%lld", (long long) lo,
		    (long long) hi);
	}
	v = config_setting_get_int64(e);
	if (v < lo || v > hi) {
		return pl_fail(path, e, key, err, errlen,
		    "must be an integer in %lld..%lld (got %lld)",
		    (long long) lo, (long long) hi, (long long) v);
	}
	*out = v;
	return SV_OK;
}

/* pl_string returns a string setting, or NULL after an error line. */
static const char *
pl_string(const char *path, const config_setting_t *e, const char *key,
    char *err, size_t errlen)
{
	if (config_setting_type(e) != CONFIG_TYPE_STRING) {
		(void) pl_fail(path, e, key, err, errlen, "must be a string");
		return NULL;
	}
	return config_setting_get_string(e);
}

/* pl_dirs refuses pool idx's path template str (setting e) if an existing
 * directory above its slots is not trusted (svd_pool_dir_check). */
static sv_err
pl_dirs(const char *path, const config_setting_t *e, size_t idx,
    const char *str, char *err, size_t errlen)
{
	char key[48], why[600];

	if (svd_pool_dir_check(str, why, sizeof(why)) == SV_OK) {
		return SV_OK;
	}
	snprintf(key, sizeof(key), "pools[%zu].path", idx);
	return pl_fail(path, e, key, err, errlen,
	    "%s: the supervisor makes slot files only under directories "
	    "owned by root or by its own user and writable by no one else",
	    why);
}

/* pl_entry reads pool entry idx. */
static sv_err
pl_entry(const char *path, const config_setting_t *s, size_t idx,
    svd_pool_config *p, char *err, size_t errlen)
{
	static const char *const keys[] = {"name", "slots", "ttl_ms",
	    "grace_ms", "path", "on_release", "kind", NULL};
	int64_t                  v      = 0;
	bool                     slots  = false;
	sv_err                   rv;

	if (config_setting_type(s) != CONFIG_TYPE_GROUP) {
		return pl_fail(path, s, "pools", err, errlen,
		    "each entry must be a group { ... }");
	}
	p->policy = SV_LEASE_KEEP;
	for (int i = 0; i < config_setting_length(s); i++) {
		const config_setting_t *e
		    = config_setting_get_elem(s, (unsigned) i);
		const char *key   = config_setting_name(e);
		const char *str   = NULL;
		bool        known = false;
		for (size_t k = 0; keys[k] != NULL; k++) {
			known = known || strcmp(keys[k], key) == 0;
		}
		if (!known) {
			return pl_fail(
			    path, e, key, err, errlen, "unknown key");
		}
		if (strcmp(key, "slots") == 0) {
			rv = pl_int(path, e, key, 1, SV_LEASE_MAX_SLOTS, &v,
			    err, errlen);
			p->slots = (uint32_t) v;
			slots    = true;
		} else if (strcmp(key, "ttl_ms") == 0
		    || strcmp(key, "grace_ms") == 0) {
			rv = pl_int(path, e, key, 0, (int64_t) SV_LEASE_MAX_MS,
			    &v, err, errlen);
			*(key[0] == 't' ? &p->ttl_ms : &p->grace_ms)
			    = (uint64_t) v;
		} else {
			if ((str = pl_string(path, e, key, err, errlen))
			    == NULL) {
				return SV_EINVAL;
			}
			rv = SV_OK;
			if (strcmp(key, "name") == 0) {
				size_t n  = strlen(str);
				bool   ok = n >= 1 && n <= SV_LEASE_NAME_MAX;
				for (size_t j = 0; ok && j < n; j++) {
					char ch = str[j];
					ok      = (ch >= 'a' && ch <= 'z')
					    || (ch >= 'A' && ch <= 'Z')
					    || (ch >= '0' && ch <= '9')
					    || ch == '_' || ch == '.'
					    || ch == '-';
				}
				if (!ok) {
					return pl_fail(path, e, key, err,
					    errlen,
					    "must be 1..64 characters of "
					    "[A-Za-z0-9_.-]");
				}
				free(p->name);
				if ((p->name = strdup(str)) == NULL) {
					return SV_ENOMEM;
				}
			} else if (strcmp(key, "path") == 0) {
				if (svd_pool_path_check(str) != SV_OK) {
					return pl_fail(path, e, key, err,
					    errlen,
					    "must be an absolute path of at "
					    "most %u bytes with {slot} in its "
					    "last component and no \"..\"",
					    SVD_POOL_PATH_MAX);
				}
				if ((rv = pl_dirs(
				         path, e, idx, str, err, errlen))
				    != SV_OK) {
					return rv;
				}
				free(p->path);
				p->path = NULL;
				if (str[0] != '\0'
				    && (p->path = strdup(str)) == NULL) {
					return SV_ENOMEM;
				}
			} else if (strcmp(key, "on_release") == 0) {
				if (strcmp(str, "keep") == 0) {
					p->policy = SV_LEASE_KEEP;
				} else if (strcmp(str, "truncate") == 0) {
					p->policy = SV_LEASE_TRUNCATE;
				} else if (strcmp(str, "remove") == 0) {
					p->policy = SV_LEASE_REMOVE;
				} else {
					return pl_fail(path, e, key, err,
					    errlen,
					    "must be one of \"keep\", "
					    "\"truncate\", \"remove\"");
				}
			} else { /* kind */
				if (strcmp(str, "file") != 0
				    && strcmp(str, "directory") != 0) {
					return pl_fail(path, e, key, err,
					    errlen,
					    "must be one of \"file\", "
					    "\"directory\"");
				}
				p->directory = strcmp(str, "directory") == 0;
			}
		}
		if (rv != SV_OK) {
			return rv;
		}
	}
	if (p->name == NULL) {
		return pl_fail(path, s, "name", err, errlen,
		    "missing required key \"name\"");
	}
	if (!slots) {
		return pl_fail(path, s, "slots", err, errlen,
		    "missing required key \"slots\"");
	}
	return SV_OK;
}

sv_err
svd_config_pools(const char *path, const config_setting_t *s, svd_config *cfg,
    char *err, size_t errlen)
{
	size_t n;

	if (config_setting_type(s) != CONFIG_TYPE_LIST) {
		return pl_fail(path, s, "pools", err, errlen,
		    "must be a list ( { ... }, ... )");
	}
	n = (size_t) config_setting_length(s);
	if (n > SV_LEASE_MAX_POOLS) {
		return pl_fail(path, s, "pools", err, errlen,
		    "at most %u entries (got %zu)", SV_LEASE_MAX_POOLS, n);
	}
	if (n == 0) {
		return SV_OK;
	}
	if ((cfg->pools = calloc(n, sizeof(*cfg->pools))) == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		return SV_ENOMEM;
	}
	cfg->npools = n;
	for (size_t i = 0; i < n; i++) {
		const config_setting_t *e
		    = config_setting_get_elem(s, (unsigned) i);
		sv_err rv = pl_entry(path, e, i, &cfg->pools[i], err, errlen);
		if (rv == SV_ENOMEM) {
			snprintf(err, errlen, "%s: out of memory", path);
		}
		if (rv != SV_OK) {
			return rv;
		}
		for (size_t j = 0; j < i; j++) {
			if (cfg->pools[j].name != NULL
			    && cfg->pools[i].name != NULL
			    && strcmp(cfg->pools[j].name, cfg->pools[i].name)
			        == 0) {
				return pl_fail(path, e, cfg->pools[i].name,
				    err, errlen, "duplicate pool name");
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
