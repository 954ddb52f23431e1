/*
 * backoff.h — how long a failing worker waits before its next start (pure
 * decision core).
 *
 * Capped exponential backoff with a reset after a healthy run:
 *   - An exit after at least healthy_ms of uptime is healthy: the history is
 *     cleared and the restart is immediate (runit and s6 wait 1 s here;
 *     supervisord waits for its next tick).
 *   - An exit sooner is a fast failure: the k-th consecutive one waits
 *     min(initial_ms * factor^(k-1), max_ms).
 *   - healthy_ms = 0 disables backoff: every restart is immediate.
 * No clock is read here: the caller passes the uptime.
 */
#ifndef SV_CORE_BACKOFF_H
#define SV_CORE_BACKOFF_H

#include <stdint.h>

/* Upper bound of factor, so that a bad config cannot overflow anything. */
#define SV_BACKOFF_MAX_FACTOR 16.0

typedef struct sv_backoff_policy {
	uint64_t healthy_ms; /* uptime that counts as a healthy run */
	uint64_t initial_ms; /* delay after the first fast failure */
	uint64_t max_ms; /* cap */
	double   factor; /* growth per fast failure, 1.0 .. 16.0 */
} sv_backoff_policy;

/*
 * sv_backoff_next records one exit after uptime_ms in *fast_failures (the
 * seat's count of consecutive fast failures) and returns the delay before
 * the next start. It never fails and allocates nothing.
 */
uint64_t sv_backoff_next(
    const sv_backoff_policy *p, uint32_t *fast_failures, uint64_t uptime_ms);

/*
 * sv_backoff_delay returns the delay for the k-th consecutive fast failure
 * (k >= 1); 0 for k = 0.
 */
uint64_t sv_backoff_delay(const sv_backoff_policy *p, uint32_t k);

#endif /* SV_CORE_BACKOFF_H */
