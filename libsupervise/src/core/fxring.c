/*
 * fxring.c — the cores' effect queue (see fxring.h). The ring doubles when
 * full, starting at 64 records, and is unrolled into the new buffer so the
 * oldest record is first again.
 */
#include <stdlib.h>
#include <string.h>

#include "core/fxring.h"

void
sv_fxring_init(sv_fxring *r, size_t esize)
{
	memset(r, 0, sizeof(*r));
	r->esize = esize;
}

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

void
sv_fxring_push(sv_fxring *r, const void *e)
{
	if (r->n == r->cap) {
		size_t         cap = r->cap == 0 ? 64 : r->cap * 2;
		unsigned char *nb  = malloc(cap * r->esize);
		if (nb == NULL) {
			r->lost = true;
			return;
		}
		for (size_t i = 0; i < r->n; i++) {
			memcpy(nb + i * r->esize, fxr_at(r, i), r->esize);
		}
		free(r->buf);
		r->buf  = nb;
		r->cap  = cap;
		r->head = 0;
	}
	memcpy(fxr_at(r, r->n), e, r->esize);
	r->n++;
}

bool
sv_fxring_pop(sv_fxring *r, void *e)
{
	if (r->n == 0) {
		return false;
	}
	memcpy(e, fxr_at(r, 0), r->esize);
	r->head = (r->head + 1) % r->cap;
	r->n--;
	return true;
}
