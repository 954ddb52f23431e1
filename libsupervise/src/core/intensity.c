/*
 * intensity.c — sliding-window restart intensity (rules in intensity.h).
 */
#include <stdlib.h>

#include "core/alloc.h"
#include "core/intensity.h"

sv_err
sv_intensity_init(sv_intensity *i, uint32_t max, uint64_t window_ms)
{
	*i = (sv_intensity) {0};
	if (max > SV_INTENSITY_MAX || (max > 0 && window_ms == 0)) {
		return SV_EINVAL;
	}
	i->max       = max;
	i->window_ms = window_ms;
	if (max > 0 && (i->at = sv_mem_calloc(max, sizeof(*i->at))) == NULL) {
		return SV_ENOMEM;
	}
	return SV_OK;
}

void
sv_intensity_fini(sv_intensity *i)
{
	free(i->at);
	i->at = NULL;
	i->n  = 0;
}

/* intensity_expire drops the entries that left the window at now_ms. */
static void
intensity_expire(sv_intensity *i, uint64_t now_ms)
{
	/* now_ms - at, not at + window_ms: a long window must not wrap. */
	while (i->n > 0 && now_ms >= i->at[i->head]
	    && now_ms - i->at[i->head] >= i->window_ms) {
		i->head = (i->head + 1) % i->max;
		i->n--;
	}
}

bool
sv_intensity_record(sv_intensity *i, uint64_t now_ms)
{
	if (i->max == 0) {
		return false;
	}
	intensity_expire(i, now_ms);
	if (i->n == i->max) {
		return true;
	}
	i->at[(i->head + i->n) % i->max] = now_ms;
	i->n++;
	return false;
}

uint32_t
sv_intensity_count(sv_intensity *i, uint64_t now_ms)
{
	if (i->max == 0) {
		return 0;
	}
	intensity_expire(i, now_ms);
	return i->n;
}

void
sv_intensity_reset(sv_intensity *i)
{
	i->head = 0;
	i->n    = 0;
}
