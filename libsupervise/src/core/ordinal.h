/*
 * ordinal.h — the ordinal allocator of one worker group (pure decision core).
 *
 * A group of N workers owns ordinals 0..N-1. The allocator decides which
 * ordinal a new worker gets and which generation each (re)start carries. It
 * performs no I/O and takes no locks; the caller serialises access.
 *
 * Rules:
 *   - acquire returns the lowest free ordinal below the limit N; when all are
 *     held it fails with SV_EEXHAUSTED and never returns a number >= N.
 *   - A held ordinal is identified by a token (ordinal, generation).
 * Restarting a worker renews its token: same ordinal, next generation. The
 * ordinal is released only on permanent exit or scale-down.
 *   - release is idempotent and fenced by the generation: releasing a token
 *     that is no longer current (already released, or the ordinal was since
 *     re-acquired by another worker) changes nothing, so a double release can
 *     never hand one ordinal to two workers.
 *   - Generations of an ordinal strictly increase for the allocator's
 *     lifetime, across restarts, releases and re-acquisitions. The first
 *     token of an ordinal has generation 0.
 *   - Lowering the limit releases nothing by itself: the caller stops the
 *     workers holding ordinals >= the new limit (sv_ordinals_excess lists
 * them, highest first) and releases each when it has been reaped.
 *
 * Blue-green note: two processes may briefly carry the same ordinal (an old
 * one draining while its replacement starts). The generation is what tells
 * them apart; anything that must not be shared keys on (ordinal, generation).
 */
#ifndef SV_CORE_ORDINAL_H
#define SV_CORE_ORDINAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "supervise/supervise.h"

/* Hard upper bound of any group's size. */
#define SV_ORDINALS_MAX 4096u

/* A held ordinal: the pair that fences releases. */
typedef struct sv_ordtoken {
	uint32_t ordinal;
	uint64_t generation;
} sv_ordtoken;

/* Allocator state. Plain struct; fields are private to ordinal.c. */
typedef struct sv_ordinals {
	uint32_t  limit; /* N: ordinals 0..N-1 may be acquired */
	uint32_t  max; /* bound for limit, <= SV_ORDINALS_MAX */
	uint32_t  held; /* number of held ordinals */
	uint8_t  *is_held; /* [max] */
	uint64_t *cur_gen; /* [max] generation of the current token */
	uint64_t *next_gen; /* [max] generation the next token will carry */
} sv_ordinals;

/*
 * sv_ordinals_init prepares o for limit N = limit, which may later be raised
 * up to max. Arrays are allocated here; free them with sv_ordinals_fini.
 * Errors: SV_EINVAL (max 0 or above SV_ORDINALS_MAX, limit > max),
 * SV_ENOMEM.
 */
sv_err sv_ordinals_init(sv_ordinals *o, uint32_t limit, uint32_t max);

/* sv_ordinals_fini frees what sv_ordinals_init allocated. Idempotent. */
void sv_ordinals_fini(sv_ordinals *o);

/*
 * sv_ordinals_acquire takes the lowest free ordinal below the limit and
 * stores its token in *tok. Errors: SV_EEXHAUSTED when every ordinal below
 * the limit is held (*tok untouched).
 */
sv_err sv_ordinals_acquire(sv_ordinals *o, sv_ordtoken *tok);

/*
 * sv_ordinals_renew replaces the current token of a held ordinal with the
 * next generation, for a restart. *tok is updated in place.
 * Errors: SV_ENOTFOUND when *tok is not the current token of a held ordinal.
 */
sv_err sv_ordinals_renew(sv_ordinals *o, sv_ordtoken *tok);

/*
 * sv_ordinals_release frees the ordinal of tok if tok is its current token.
 * Releasing a stale or already released token is a successful no-op.
 * Errors: SV_EINVAL (ordinal outside 0..max-1).
 */
sv_err sv_ordinals_release(sv_ordinals *o, sv_ordtoken tok);

/*
 * sv_ordinals_restore re-issues tok, the current token of a held ordinal,
 * at generation gen (not lower than its current one) and makes every later
 * token of that ordinal larger than gen. A supervisor taking over its
 * predecessor's state uses it, so generations continue across supervisor
 * restarts. Errors: SV_ENOTFOUND (tok is not current), SV_EINVAL (gen is
 * lower than the current generation).
 */
sv_err sv_ordinals_restore(sv_ordinals *o, sv_ordtoken *tok, uint64_t gen);

/*
 * sv_ordinals_floor makes every later token of ordinal carry a generation
 * of at least next (out-of-range ordinals are ignored).
 */
void sv_ordinals_floor(sv_ordinals *o, uint32_t ordinal, uint64_t next);

/* sv_ordinals_is_held tells whether ordinal is held (false out of range). */
bool sv_ordinals_is_held(const sv_ordinals *o, uint32_t ordinal);

/*
 * sv_ordinals_set_limit changes N. Lowering it releases nothing (see the file
 * comment). Errors: SV_EEXHAUSTED (limit > max).
 */
sv_err sv_ordinals_set_limit(sv_ordinals *o, uint32_t limit);

/*
 * sv_ordinals_excess writes into out (capacity cap) the held ordinals >= the
 * current limit, highest first, and returns how many there are in total
 * (which may exceed cap). These are the workers a scale-down stops.
 */
size_t sv_ordinals_excess(const sv_ordinals *o, uint32_t *out, size_t cap);

#endif /* SV_CORE_ORDINAL_H */
