/*
 * backoff.c — capped exponential backoff (rules in backoff.h).
 */
#include "core/backoff.h"

uint64_t
sv_backoff_delay(const sv_backoff_policy *p, uint32_t k)
{
	double f = p->factor;
	double d = (double) p->initial_ms;

	if (k == 0 || p->healthy_ms == 0) {
		return 0;
	}
	if (f < 1.0) {
		f = 1.0;
	} else if (f > SV_BACKOFF_MAX_FACTOR) {
		f = SV_BACKOFF_MAX_FACTOR;
	}
	/* Grows until the cap. With a factor close to 1 that could take many
	 * steps: after 10,000 the delay is what it is (still capped). */
	for (uint32_t i = 1; i < k && i < 10000 && d < (double) p->max_ms;
	     i++) {
		d *= f;
		if (f == 1.0 || d == 0) {
			break;
		}
	}
	if (d >= (double) p->max_ms) {
		return p->max_ms;
	}
	return (uint64_t) d;
}

uint64_t
sv_backoff_next(
    const sv_backoff_policy *p, uint32_t *fast_failures, uint64_t uptime_ms)
{
	if (p->healthy_ms == 0 || uptime_ms >= p->healthy_ms) {
		*fast_failures = 0;
		return 0;
	}
	if (*fast_failures < UINT32_MAX) {
		(*fast_failures)++;
	}
	return sv_backoff_delay(p, *fast_failures);
}
