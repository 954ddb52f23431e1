/*
 * pidmap.c — pid -> worker key, over the id map (see pidmap.h): the map
 * holds a pointer to a key the pidmap allocates per pid, or, borrowed, to
 * the caller's.
 */
#include <stdlib.h>

#include "core/pidmap.h"

/* sv_pidmap_init: see pidmap.h. */
void
sv_pidmap_init(sv_pidmap *m)
{
	sv_idmap_init(&m->map);
	m->version  = 1;
	m->borrowed = false;
}

/* sv_pidmap_init_borrowed: see pidmap.h. */
void
sv_pidmap_init_borrowed(sv_pidmap *m)
{
	sv_pidmap_init(m);
	m->borrowed = true;
}

/* sv_pidmap_fini: see pidmap.h. */
void
sv_pidmap_fini(sv_pidmap *m)
{
	size_t cur = 0;
	void  *key;

	while (!m->borrowed && sv_idmap_next(&m->map, &cur, NULL, &key)) {
		free(key);
	}
	sv_idmap_fini(&m->map);
	m->version = 1;
}

/* sv_pidmap_put: see pidmap.h. A known pid's key is overwritten in place;
 * a new pid's key is allocated and freed again if the map cannot grow. */
sv_err
sv_pidmap_put(sv_pidmap *m, int64_t pid, sv_wkey key)
{
	sv_wkey *k;
	sv_err   err;

	if (pid <= 0 || m->borrowed) {
		return SV_EINVAL;
	}
	if ((k = sv_idmap_get(&m->map, (uint64_t) pid)) == NULL) {
		if ((k = malloc(sizeof(*k))) == NULL) {
			return SV_ENOMEM;
		}
		if ((err = sv_idmap_put(&m->map, (uint64_t) pid, k))
		    != SV_OK) {
			free(k);
			return err;
		}
	}
	*k = key;
	m->version++;
	return SV_OK;
}

/* sv_pidmap_put_ref: see pidmap.h. */
sv_err
sv_pidmap_put_ref(sv_pidmap *m, int64_t pid, const sv_wkey *key)
{
	sv_err err;

	if (pid <= 0 || !m->borrowed) {
		return SV_EINVAL;
	}
	/* The map stores void *: the key stays the caller's, never written
	 * through. */
	if ((err = sv_idmap_put(&m->map, (uint64_t) pid, (void *) key))
	    != SV_OK) {
		return err;
	}
	m->version++;
	return SV_OK;
}

/* sv_pidmap_get: see pidmap.h. */
bool
sv_pidmap_get(const sv_pidmap *m, int64_t pid, sv_wkey *keyp)
{
	const sv_wkey *k;

	if (pid <= 0 || (k = sv_idmap_get(&m->map, (uint64_t) pid)) == NULL) {
		return false;
	}
	*keyp = *k;
	return true;
}

/* sv_pidmap_del: see pidmap.h. */
bool
sv_pidmap_del(sv_pidmap *m, int64_t pid)
{
	sv_wkey *k;

	if (pid <= 0 || (k = sv_idmap_del(&m->map, (uint64_t) pid)) == NULL) {
		return false;
	}
	if (!m->borrowed) {
		free(k);
	}
	m->version++;
	return true;
}

/* sv_pidmap_version: see pidmap.h. */
uint64_t
sv_pidmap_version(const sv_pidmap *m)
{
	return m->version;
}

/* sv_pidmap_count: see pidmap.h. */
size_t
sv_pidmap_count(const sv_pidmap *m)
{
	return sv_idmap_count(&m->map);
}
