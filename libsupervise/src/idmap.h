/*
 * idmap.h — the id map: a hash map from a 64-bit id to a pointer (a pure
 * data structure, shared by the core and the daemon), and its compact
 * form for entries kept by the caller, the ref index (sv_idref, below).
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

/*
 * The ref index: the same table (a bucket from sv_idmap_mix of a 64-bit
 * hash, linear probing, at most three quarters full, doubling, backward
 * shift removal) for entries that live in the caller's own arrays. A
 * bucket is a 32-bit reference (0: empty) chosen by the caller (an array
 * index + 1, a packed (pool, slot)...), and the key of a reference is read
 * back from the entry through the caller's functions: 4 bytes a bucket
 * instead of 16, for indexes of many entries whose key the entry already
 * holds (the lease core's lease ids, the journal's leases and names).
 *
 * Who frees: the index owns its bucket array (sv_idref_fini frees it);
 * the entries are the caller's. Errors as for the map: only growing
 * allocates, through x->calloc (NULL: sv_idmap_calloc); after
 * sv_idref_reserve(x, k, ...) succeeds the next k adds cannot fail.
 */
typedef struct sv_idref {
	uint32_t *b; /* [cap]; owned; 0: empty */
	size_t    cap; /* 0 or a power of two */
	size_t    n; /* references */
	void *(*calloc)(size_t nmemb, size_t size); /* NULL: sv_idmap_calloc */
} sv_idref;

/* The hash of the key of the entry ref stands for (the same hash its
 * probe is given to sv_idref_find). */
typedef uint64_t (*sv_idref_hash)(const void *ctx, uint32_t ref);

/* Whether the entry ref stands for has key `key` (the caller's type). */
typedef bool (*sv_idref_eq)(const void *ctx, uint32_t ref, const void *key);

/* sv_idref_fini frees x's buckets and leaves it empty (its calloc kept). */
void sv_idref_fini(sv_idref *x);

/*
 * sv_idref_reserve makes room for `extra` more references without
 * growing, rehashing (through hf, ctx) into a larger table when needed.
 * Errors: SV_ENOMEM (x unchanged).
 */
sv_err sv_idref_reserve(
    sv_idref *x, size_t extra, sv_idref_hash hf, const void *ctx);

/* sv_idref_get returns the reference whose entry has key (hash: its
 * hash), or 0. */
uint32_t sv_idref_get(const sv_idref *x, uint64_t hash, sv_idref_eq eq,
    const void *ctx, const void *key);

/*
 * sv_idref_find returns the bucket holding the reference whose entry has
 * key (hash: its hash), or the empty bucket where it would go (x->b[i] is
 * 0 then). x->cap must not be 0. A caller may store another reference
 * for the same key in that bucket (an entry that moved).
 */
size_t sv_idref_find(const sv_idref *x, uint64_t hash, sv_idref_eq eq,
    const void *ctx, const void *key);

/* sv_idref_add enters ref (its key's hash: hash; the key not present),
 * within a reservation (sv_idref_reserve). */
void sv_idref_add(sv_idref *x, uint64_t hash, uint32_t ref);

/* sv_idref_del_at empties bucket i (from sv_idref_find, not empty) and
 * moves the later references of its probe run back (hashes through hf). */
void sv_idref_del_at(sv_idref *x, size_t i, sv_idref_hash hf, const void *ctx);

#endif /* SV_IDMAP_H */
