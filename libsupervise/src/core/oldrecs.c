/*
 * oldrecs.c — the pool of the seats' second process records (see
 * oldrecs.h): an array that grows only when a reservation asks for more
 * room than is free, by half again at least; a free list threaded through
 * the records given back; and a reset to the front of the array whenever
 * the last record in use is given back.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/oldrecs.h"

/* sv_oldrecs_fini: see oldrecs.h. */
void
sv_oldrecs_fini(sv_oldrecs *r)
{
	free(r->rec);
	memset(r, 0, sizeof(*r));
}

/* oldrecs_move puts the records into a new array of cap records (at least
 * r->top); r is unchanged when that fails. */
static sv_err
oldrecs_move(sv_oldrecs *r, uint32_t cap)
{
	/* freed by sv_oldrecs_fini, or by the next move */
	sv_proc *nr = sv_mem_malloc((size_t) cap * sizeof(sv_proc));

	if (nr == NULL) {
		return SV_ENOMEM;
	}
	if (r->top > 0) {
		memcpy(nr, r->rec, (size_t) r->top * sizeof(sv_proc));
	}
	free(r->rec);
	r->rec = nr;
	r->cap = cap;
	return SV_OK;
}

/* sv_oldrecs_reserve: see oldrecs.h. */
sv_err
sv_oldrecs_reserve(sv_oldrecs *r, size_t n)
{
	size_t need;

	if (n > UINT32_MAX - r->used) {
		return SV_ENOMEM;
	}
	need = r->used + n;
	if (need > r->cap) {
		size_t cap = r->cap + r->cap / 2;
		if (cap < need) {
			cap = need;
		}
		if (cap > UINT32_MAX) {
			cap = UINT32_MAX;
		}
		if (oldrecs_move(r, (uint32_t) cap) != SV_OK) {
			return SV_ENOMEM;
		}
	}
#ifndef NDEBUG
	/* Debug builds: move whatever is in use, so that a pointer kept
	 * across a reservation reads freed memory under a sanitizer. */
	else if (r->used > 0 && oldrecs_move(r, r->cap) != SV_OK) {
		return SV_ENOMEM;
	}
#endif
	r->limit = (uint32_t) need;
	return SV_OK;
}

/* sv_oldrecs_take: see oldrecs.h. */
uint32_t
sv_oldrecs_take(sv_oldrecs *r)
{
	uint32_t id;

	assert(r->used < r->limit);
	if (r->used >= r->limit) {
		/* The entry point's bound was too low: a bug. */
		r->overruns++;
		if (r->used == r->cap) {
			fprintf(stderr,
			    "oldrecs: a second process record beyond "
			    "its reservation\n");
			abort();
		}
	}
	if (r->free != 0) {
		id      = r->free;
		r->free = (uint32_t) r->rec[id - 1].pid;
	} else {
		id = ++r->top;
	}
	r->used++;
	r->rec[id - 1] = (sv_proc) {0};
	return id;
}

/* sv_oldrecs_put: see oldrecs.h. */
void
sv_oldrecs_put(sv_oldrecs *r, uint32_t id)
{
	assert(id != 0 && id <= r->top && r->used > 0);
	r->used--;
	if (r->used == 0) {
		/* None in use: start at the front again. */
		r->top  = 0;
		r->free = 0;
		return;
	}
	r->rec[id - 1]     = (sv_proc) {0};
	r->rec[id - 1].pid = r->free;
	r->free            = id;
}

/* sv_oldrecs_at: see oldrecs.h. */
sv_proc *
sv_oldrecs_at(const sv_oldrecs *r, uint32_t id)
{
	return id == 0 ? NULL : &r->rec[id - 1];
}
