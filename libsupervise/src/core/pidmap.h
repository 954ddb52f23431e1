/*
 * pidmap.h — live worker processes by pid (pure data structure).
 *
 * A map from a pid to the worker key (group id, ordinal, generation) of
 * the process, over the id map (idmap.h): lookups cost the same with 1 or
 * 100,000 workers, so whoami finds its caller without scanning groups. The
 * map owns one sv_wkey per entry (allocated by a put of a new pid, freed
 * by its del or by sv_pidmap_fini), or, made with sv_pidmap_init_borrowed,
 * points to keys its caller keeps in its own records (sv_pidmap_put_ref:
 * no allocation per entry). A version number lets a caller cache an answer
 * derived from the map.
 */
#ifndef SV_CORE_PIDMAP_H
#define SV_CORE_PIDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "idmap.h"
#include "supervise/supervise.h"

/* The worker a process belongs to. */
typedef struct sv_wkey {
	uint32_t group_id;
	uint32_t ordinal;
	uint64_t generation;
} sv_wkey;

typedef struct sv_pidmap {
	sv_idmap map; /* pid -> sv_wkey *, each owned by the pidmap (or
	               * the caller's, if borrowed) */
	uint64_t version; /* >= 1, grows with every put and del */
	bool     borrowed; /* keys are the caller's (sv_pidmap_put_ref) */
} sv_pidmap;

/*
 * sv_pidmap_init prepares an empty map. Nothing is allocated until the first
 * insertion; free it with sv_pidmap_fini. Never fails.
 */
void sv_pidmap_init(sv_pidmap *m);

/* sv_pidmap_init_borrowed prepares an empty map whose entries point to
 * keys the caller owns: filled with sv_pidmap_put_ref only. */
void sv_pidmap_init_borrowed(sv_pidmap *m);

/* sv_pidmap_fini frees the table and every key in it. Idempotent. */
void sv_pidmap_fini(sv_pidmap *m);

/*
 * sv_pidmap_put maps pid (> 0) to key, replacing an existing entry.
 * Errors: SV_EINVAL (pid <= 0), SV_ENOMEM (the map is unchanged).
 */
sv_err sv_pidmap_put(sv_pidmap *m, int64_t pid, sv_wkey key);

/*
 * sv_pidmap_put_ref maps pid (> 0) to the key at *key, replacing an
 * existing entry, in a map made by sv_pidmap_init_borrowed. The map keeps
 * the pointer, not a copy: *key must stay valid (it may change) until pid
 * is deleted or replaced. Errors: SV_EINVAL (pid <= 0), SV_ENOMEM (the map
 * is unchanged).
 */
sv_err sv_pidmap_put_ref(sv_pidmap *m, int64_t pid, const sv_wkey *key);

/* sv_pidmap_get finds pid; on true *keyp holds its key. */
bool sv_pidmap_get(const sv_pidmap *m, int64_t pid, sv_wkey *keyp);

/* sv_pidmap_del removes pid; returns whether it was present. */
bool sv_pidmap_del(sv_pidmap *m, int64_t pid);

/*
 * sv_pidmap_version returns a number that grows whenever an entry is put
 * or deleted (never 0): an answer derived from the map, stored with the
 * version it was derived at, is current while the version is unchanged.
 */
uint64_t sv_pidmap_version(const sv_pidmap *m);

/* sv_pidmap_count returns the number of entries. */
size_t sv_pidmap_count(const sv_pidmap *m);

#endif /* SV_CORE_PIDMAP_H */
