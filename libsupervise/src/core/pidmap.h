/*
 * pidmap.h — live worker processes by pid (pure data structure).
 *
 * An open-addressing hash table (linear probing, deletion by backward
 * shift, no tombstones) from a pid to the worker key (group id, ordinal,
 * generation) of the process. Lookups cost the same with 1 or 100,000
 * workers: whoami finds its caller without scanning groups. The table
 * grows by doubling at 50% load; it never shrinks below its initial size.
 */
#ifndef SV_CORE_PIDMAP_H
#define SV_CORE_PIDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "supervise/supervise.h"

/* The worker a process belongs to. */
typedef struct sv_wkey {
	uint32_t group_id;
	uint32_t ordinal;
	uint64_t generation;
} sv_wkey;

typedef struct sv_pidmap_slot {
	int64_t pid; /* 0: empty */
	sv_wkey key;
} sv_pidmap_slot;

typedef struct sv_pidmap {
	sv_pidmap_slot *slots;
	size_t          cap; /* power of two */
	size_t          n;
	uint64_t        version; /* >= 1, grows with every put and del */
} sv_pidmap;

/*
 * sv_pidmap_init prepares an empty map. The table is allocated on the first
 * insertion; free it with sv_pidmap_fini. Never fails.
 */
void sv_pidmap_init(sv_pidmap *m);

/* sv_pidmap_fini frees the table. Idempotent. */
void sv_pidmap_fini(sv_pidmap *m);

/*
 * sv_pidmap_put maps pid (> 0) to key, replacing an existing entry.
 * Errors: SV_EINVAL (pid <= 0), SV_ENOMEM (the map is unchanged).
 */
sv_err sv_pidmap_put(sv_pidmap *m, int64_t pid, sv_wkey key);

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
