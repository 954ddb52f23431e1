/*
 * ordinal.c — the ordinal allocator (see ordinal.h for the rules).
 *
 * Representation: three arrays indexed by ordinal, sized once for the
 * group's maximum so raising the limit never reallocates. acquire scans from
 * 0 for the lowest free ordinal; groups are at most SV_ORDINALS_MAX wide and
 * acquisition happens once per spawn, so the scan is cheaper than keeping a
 * free-list ordered.
 */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/ordinal.h"

sv_err
sv_ordinals_init(sv_ordinals *o, uint32_t limit, uint32_t max)
{
	memset(o, 0, sizeof(*o));
	if (max == 0 || max > SV_ORDINALS_MAX || limit > max) {
		return SV_EINVAL;
	}
	o->is_held  = sv_mem_calloc(max, sizeof(*o->is_held));
	o->cur_gen  = sv_mem_calloc(max, sizeof(*o->cur_gen));
	o->next_gen = sv_mem_calloc(max, sizeof(*o->next_gen));
	if (o->is_held == NULL || o->cur_gen == NULL || o->next_gen == NULL) {
		sv_ordinals_fini(o);
		return SV_ENOMEM;
	}
	o->limit = limit;
	o->max   = max;
	return SV_OK;
}

void
sv_ordinals_fini(sv_ordinals *o)
{
	free(o->is_held);
	free(o->cur_gen);
	free(o->next_gen);
	memset(o, 0, sizeof(*o));
}

/* ord_take marks ordinal held under a fresh generation. */
static void
ord_take(sv_ordinals *o, uint32_t ordinal, sv_ordtoken *tok)
{
	o->is_held[ordinal] = 1;
	o->cur_gen[ordinal] = o->next_gen[ordinal]++;
	o->held++;
	tok->ordinal    = ordinal;
	tok->generation = o->cur_gen[ordinal];
}

sv_err
sv_ordinals_acquire(sv_ordinals *o, sv_ordtoken *tok)
{
	for (uint32_t i = 0; i < o->limit; i++) {
		if (!o->is_held[i]) {
			ord_take(o, i, tok);
			return SV_OK;
		}
	}
	return SV_EEXHAUSTED;
}

/* ord_current tells whether tok is the live token of a held ordinal. */
static bool
ord_current(const sv_ordinals *o, sv_ordtoken tok)
{
	return tok.ordinal < o->max && o->is_held[tok.ordinal]
	    && o->cur_gen[tok.ordinal] == tok.generation;
}

sv_err
sv_ordinals_renew(sv_ordinals *o, sv_ordtoken *tok)
{
	if (!ord_current(o, *tok)) {
		return SV_ENOTFOUND;
	}
	o->cur_gen[tok->ordinal] = o->next_gen[tok->ordinal]++;
	tok->generation          = o->cur_gen[tok->ordinal];
	return SV_OK;
}

sv_err
sv_ordinals_restore(sv_ordinals *o, sv_ordtoken *tok, uint64_t gen)
{
	if (!ord_current(o, *tok)) {
		return SV_ENOTFOUND;
	}
	if (gen < o->cur_gen[tok->ordinal] || gen == UINT64_MAX) {
		return SV_EINVAL;
	}
	o->cur_gen[tok->ordinal] = gen;
	if (o->next_gen[tok->ordinal] <= gen) {
		o->next_gen[tok->ordinal] = gen + 1;
	}
	tok->generation = gen;
	return SV_OK;
}

void
sv_ordinals_floor(sv_ordinals *o, uint32_t ordinal, uint64_t next)
{
	if (ordinal < o->max && o->next_gen[ordinal] < next) {
		o->next_gen[ordinal] = next;
	}
}

sv_err
sv_ordinals_release(sv_ordinals *o, sv_ordtoken tok)
{
	if (tok.ordinal >= o->max) {
		return SV_EINVAL;
	}
	if (ord_current(o, tok)) {
		o->is_held[tok.ordinal] = 0;
		o->held--;
	}
	return SV_OK;
}

bool
sv_ordinals_is_held(const sv_ordinals *o, uint32_t ordinal)
{
	return ordinal < o->max && o->is_held[ordinal];
}

sv_err
sv_ordinals_set_limit(sv_ordinals *o, uint32_t limit)
{
	if (limit > o->max) {
		return SV_EEXHAUSTED;
	}
	o->limit = limit;
	return SV_OK;
}

size_t
sv_ordinals_excess(const sv_ordinals *o, uint32_t *out, size_t cap)
{
	size_t n = 0;
	for (uint32_t i = o->max; i-- > o->limit;) {
		if (o->is_held[i]) {
			if (n < cap) {
				out[n] = i;
			}
			n++;
		}
	}
	return n;
}
