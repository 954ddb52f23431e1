/*
 * fxring.h — a growing FIFO of fixed-size records: the effect queue of the
 * pure cores (supervision.c, lease.c), which push effects while deciding
 * and let the shell pop them one by one.
 *
 * Pushing never fails from the caller's point of view: when the ring
 * cannot grow, the record is dropped and `lost` is set, for the shell to
 * log (the cores re-derive what matters, see their headers).
 */
#ifndef SV_CORE_FXRING_H
#define SV_CORE_FXRING_H

#include <stdbool.h>
#include <stddef.h>

typedef struct sv_fxring {
	unsigned char *buf; /* [cap * esize] */
	size_t         esize;
	size_t         cap, head, n;
	bool           lost; /* a record was dropped (out of memory) */
} sv_fxring;

/* sv_fxring_init makes r an empty ring of records of esize bytes. It
 * allocates nothing until the first push; free with sv_fxring_fini. */
void sv_fxring_init(sv_fxring *r, size_t esize);

/* sv_fxring_fini frees what r holds and leaves it empty. */
void sv_fxring_fini(sv_fxring *r);

/* sv_fxring_push appends a copy of record e (esize bytes); when the ring
 * cannot grow the record is dropped and r->lost is set. */
void sv_fxring_push(sv_fxring *r, const void *e);

/* sv_fxring_pop moves the oldest record into e and returns true, or
 * returns false when the ring is empty. */
bool sv_fxring_pop(sv_fxring *r, void *e);

#endif
