/*
 * oldrecs.h — the seats' second process records (sv_seat.old), made on
 * demand: a seat holds a second process only in a roll's overlap or after
 * a stop it abandoned, so most seats never have one, and the record lives
 * in one pool of the core instead of in every seat (64 B a seat less).
 *
 * A seat names its record by a number (index + 1; 0: none). The records
 * are in one array, which moves when it grows, so a pointer to a record
 * is good only until the next reservation (svs_fx_reserve): an entry
 * point looks its processes up after its reservation.
 *
 * Lossless by reservation, as the effects are (core/fxring.h): the moves
 * into `old` are made by transitions that cannot fail, so before an entry
 * point changes anything it reserves room for as many records as it can
 * take at once; that is the only call that allocates, and when it fails
 * the entry point returns SV_ENOMEM having changed nothing. A take beyond
 * the reservation is a bug in the bound: it asserts (debug builds), is
 * counted in `overruns` (tests check it is 0) and stops the process, since
 * growing then would move records the caller points to.
 *
 * Only the records in use at once are ever written: records are handed
 * out from the front of the array, freed ones first, and when the last
 * one is given back the pool starts at the front again, so a reservation
 * far larger than what is ever used costs address space, not memory.
 */
#ifndef SV_CORE_OLDRECS_H
#define SV_CORE_OLDRECS_H

#include <stddef.h>
#include <stdint.h>

#include "core/supervision.h"

typedef struct sv_oldrecs {
	sv_proc *rec; /* [cap] */
	uint32_t cap;
	uint32_t top; /* rec[top..cap) unused since the pool was empty */
	uint32_t used; /* records held by seats */
	uint32_t free; /* a free record below top (number; 0: none);
	                * each links the next through its pid */
	uint32_t limit; /* records in use allowed by the last reservation */
	size_t   overruns; /* takes beyond a reservation (bugs) */
} sv_oldrecs;

/* sv_oldrecs_fini frees the pool's array (the seats' numbers become
 * invalid) and leaves it empty. An empty pool is all zero. */
void sv_oldrecs_fini(sv_oldrecs *r);

/*
 * sv_oldrecs_reserve makes room for n more records in use at once. It may
 * move the records (debug builds move them whenever one is in use, so that
 * a stale pointer shows under a sanitizer). The array is allocated through
 * core/alloc.h and freed by sv_oldrecs_fini.
 * Errors: SV_ENOMEM (r is unchanged).
 */
sv_err sv_oldrecs_reserve(sv_oldrecs *r, size_t n);

/* sv_oldrecs_take hands out a zeroed record, within the last reservation
 * (it cannot fail), and returns its number. */
uint32_t sv_oldrecs_take(sv_oldrecs *r);

/* sv_oldrecs_put gives back record number id (not 0). */
void sv_oldrecs_put(sv_oldrecs *r, uint32_t id);

/* sv_oldrecs_at returns record number id, NULL for 0. */
sv_proc *sv_oldrecs_at(const sv_oldrecs *r, uint32_t id);

#endif
