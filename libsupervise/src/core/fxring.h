/*
 * fxring.h — a growing FIFO of fixed-size records: the effect queue of the
 * pure cores (supervision.c, lease.c), which push effects while deciding
 * and let the shell pop them one by one.
 *
 * Lossless by reservation: before an entry point of a core changes any
 * state it calls sv_fxring_reserve with an upper bound of the effects it
 * can push; that is the only call that allocates, and when it fails the
 * entry point returns SV_ENOMEM having changed nothing. The pushes that
 * follow cannot fail. A push beyond the reservation is a bug in the bound:
 * it asserts (debug builds), is counted in `overruns` (tests check it is 0)
 * and, in release builds, still tries to grow rather than lose the record;
 * if even that fails the process aborts, since a lost effect would leave
 * the core and the world disagreeing.
 * */
#ifndef SV_CORE_FXRING_H
#define SV_CORE_FXRING_H

#include <stdbool.h>
#include <stddef.h>

#include "supervise/supervise.h"

typedef struct sv_fxring {
	unsigned char *buf; /* [cap * esize] */
	size_t         esize;
	size_t         cap, head, n;
	size_t         budget; /* pushes left of the last reservation */
	size_t         overruns; /* pushes beyond a reservation (bugs) */
} sv_fxring;

/* sv_fxring_init makes r an empty ring of records of esize bytes. It
 * allocates nothing until the first reservation; free with
 * sv_fxring_fini. */
void sv_fxring_init(sv_fxring *r, size_t esize);

/* sv_fxring_fini frees what r holds and leaves it empty. */
void sv_fxring_fini(sv_fxring *r);

/*
 * sv_fxring_reserve makes room for n more records and allows n pushes
 * (replacing what was left of an earlier reservation). The buffer is
 * allocated through core/alloc.h and freed by sv_fxring_fini.
 * Errors: SV_ENOMEM (r is unchanged).
 */
sv_err sv_fxring_reserve(sv_fxring *r, size_t n);

/* sv_fxring_push appends a copy of record e (esize bytes), within the last
 * reservation: it cannot fail (see the top of this file). */
void sv_fxring_push(sv_fxring *r, const void *e);

/* sv_fxring_pop moves the oldest record into e and returns true, or
 * returns false when the ring is empty. */
bool sv_fxring_pop(sv_fxring *r, void *e);

#endif
