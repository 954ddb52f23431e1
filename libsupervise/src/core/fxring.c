/*
 * fxring.c — the cores' effect queue (see fxring.h): a ring of records that
 * grows only when a reservation asks for more room than is free. It
 * doubles, starting at 64 records, and is unrolled into the new buffer so
 * the oldest record is first again. When the last record is popped the
 * ring starts again at the front of its buffer: a reservation may make the
 * buffer far larger than what is ever queued at once (a bound for every
 * seat of a group), and so only the records in flight at once are ever
 * written, the rest of the buffer never becomes resident memory.
 */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/fxring.h"

/* sv_fxring_init: see fxring.h. */
void
sv_fxring_init(sv_fxring *r, size_t esize)
{
	memset(r, 0, sizeof(*r));
	r->esize = esize;
}

/* sv_fxring_fini: see fxring.h. */
void
sv_fxring_fini(sv_fxring *r)
{
	free(r->buf);
	sv_fxring_init(r, r->esize);
}

/* fxr_at returns record i counted from the head. */
static unsigned char *
fxr_at(const sv_fxring *r, size_t i)
{
	return r->buf + ((r->head + i) % r->cap) * r->esize;
}

/* fxr_grow makes the capacity at least need records (doubling); the ring
 * is unchanged when that fails. */
static sv_err
fxr_grow(sv_fxring *r, size_t need)
{
	size_t         cap = r->cap == 0 ? 64 : r->cap;
	unsigned char *nb;

	while (cap < need) {
		if (cap > SIZE_MAX / 2 / r->esize) {
			return SV_ENOMEM;
		}
		cap *= 2;
	}
	if ((nb = sv_mem_malloc(cap * r->esize)) == NULL) {
		return SV_ENOMEM;
	}
	for (size_t i = 0; i < r->n; i++) {
		memcpy(nb + i * r->esize, fxr_at(r, i), r->esize);
	}
	free(r->buf);
	r->buf  = nb;
	r->cap  = cap;
	r->head = 0;
	return SV_OK;
}

/* sv_fxring_reserve: see fxring.h. */
sv_err
sv_fxring_reserve(sv_fxring *r, size_t n)
{
	if (n > SIZE_MAX - r->n) {
		return SV_ENOMEM;
	}
	if (r->cap - r->n < n && fxr_grow(r, r->n + n) != SV_OK) {
		return SV_ENOMEM;
	}
	r->budget = n;
	return SV_OK;
}

/* fxr_append copies e after the last record (there is room). */
static void
fxr_append(sv_fxring *r, const void *e)
{
	memcpy(fxr_at(r, r->n), e, r->esize);
	r->n++;
}

/* sv_fxring_push: see fxring.h. */
void
sv_fxring_push(sv_fxring *r, const void *e)
{
	assert(r->budget > 0 && r->n < r->cap);
	if (r->budget == 0 || r->n == r->cap) {
		/* The entry point's bound was too low: a bug. Never lose the
		 * record; without memory for it, stop here. */
		r->overruns++;
		if (r->n == r->cap && fxr_grow(r, r->n + 1) != SV_OK) {
			fprintf(stderr,
			    "fxring: effect beyond its reservation "
			    "and no memory for it\n");
			abort();
		}
	} else {
		r->budget--;
	}
	fxr_append(r, e);
}

/* sv_fxring_pop: see fxring.h. */
bool
sv_fxring_pop(sv_fxring *r, void *e)
{
	if (r->n == 0) {
		return false;
	}
	memcpy(e, fxr_at(r, 0), r->esize);
	r->head = (r->head + 1) % r->cap;
	r->n--;
	if (r->n == 0) {
		r->head = 0; /* rewind: see the top of this file */
	}
	return true;
}
