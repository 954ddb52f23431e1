/*
 * idmap.h — the id map: a hash map from a 64-bit id to a pointer (a pure
 * data structure, shared by the core and the daemon).
 *
 * Open addressing with linear probing: an entry is {key, value}, 16 bytes,
 * and a NULL value marks an empty bucket, so every key (0 included) may be
 * stored but a value may not be NULL. A key's home bucket comes from a
 * 64-bit mix of the key (splitmix64's finaliser), so close ids (pids,
 * counters, (pool << 32) | slot) spread over the table. Removal moves the
 * later entries of the probe run back into the hole (backward shift): no
 * tombstones, and a lookup never walks further than the longest run. The
 * table doubles before it would pass three quarters full and never
 * shrinks (sv_idmap_fini gives it back).
 *
 * Who frees. The map owns its bucket array only. Values belong to the
 * caller: sv_idmap_del and sv_idmap_fini never free them (iterate with
 * sv_idmap_next first to free owned values).
 *
 * Errors. Only growing allocates. A put of a new key that cannot grow the
 * table fails with SV_ENOMEM and leaves the map unchanged; after
 * sv_idmap_reserve(m, k) succeeds the next k puts of new keys cannot fail,
 * so a caller can reserve before it changes anything else.
 */
#ifndef SV_IDMAP_H
#define SV_IDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "supervise/supervise.h"

/* One bucket: val NULL means empty. */
typedef struct sv_idmap_ent {
	uint64_t key;
	void    *val;
} sv_idmap_ent;

/* A map. Zeroed memory is an empty map (as sv_idmap_init leaves it). */
typedef struct sv_idmap {
	sv_idmap_ent *ents; /* [cap]; owned */
	size_t        cap; /* 0 or a power of two */
	size_t        n; /* entries */
} sv_idmap;

/* Fewest buckets of a table that has any. */
#define SV_IDMAP_MIN_CAP 16u

/*
 * The allocator the maps use for their bucket arrays (calloc's contract).
 * It is calloc; a test may point it at a function that fails on purpose,
 * and must set it back. Not for use while another thread uses a map.
 */
extern void *(*sv_idmap_calloc)(size_t nmemb, size_t size);

/* sv_idmap_mix spreads a 64-bit key over 64 bits (splitmix64's
 * finaliser), so that close keys land far apart: the map's own bucket
 * choice, shared with the other hashed indexes of the library. */
uint64_t sv_idmap_mix(uint64_t x);

/* sv_idmap_init makes m an empty map; nothing is allocated yet. */
void sv_idmap_init(sv_idmap *m);

/* sv_idmap_fini frees m's buckets (not its values) and leaves it empty,
 * ready for use again. */
void sv_idmap_fini(sv_idmap *m);

/*
 * sv_idmap_reserve makes room for `extra` more entries without growing:
 * after it succeeds, that many puts of new keys cannot fail. Errors:
 * SV_ENOMEM (m unchanged).
 */
sv_err sv_idmap_reserve(sv_idmap *m, size_t extra);

/*
 * sv_idmap_put maps key to val, replacing the value of a key already
 * present (the old value is the caller's: look it up first if it must be
 * freed). Replacing never allocates. Errors: SV_EINVAL (val NULL),
 * SV_ENOMEM (the table could not grow; m unchanged).
 */
sv_err sv_idmap_put(sv_idmap *m, uint64_t key, void *val);

/* sv_idmap_get returns the value of key, or NULL. */
void *sv_idmap_get(const sv_idmap *m, uint64_t key);

/* sv_idmap_del removes key and returns its value (the caller's), or NULL
 * if it was not there. */
void *sv_idmap_del(sv_idmap *m, uint64_t key);

/* sv_idmap_count returns the number of entries. */
size_t sv_idmap_count(const sv_idmap *m);

/*
 * sv_idmap_next iterates: start with *cursor 0; each call that returns
 * true sets *keyp and *valp (either may be NULL) to the next entry, in no
 * particular order. The map must not change during an iteration.
 */
bool sv_idmap_next(
    const sv_idmap *m, size_t *cursor, uint64_t *keyp, void **valp);

#endif /* SV_IDMAP_H */
