/*
 * sv_lag.h — how late this machine wakes a timed wait right now, for the
 * upper bounds of deadline checks.
 *
 * Design: a check that a call honoured its deadline (took at least the
 * deadline, and less than the deadline plus a margin: not a second
 * deadline, not a retry loop) also counts how late the kernel ran the
 * thread once its timer expired. On an idle machine that is a few ms; with
 * every CPU busy and sanitizer builds it can pass any fixed margin while
 * the code is right. sv_lag_ms measures it in the same process, just
 * before the check: the worst overshoot of three short poll(2) timeouts
 * (the lateness of a wake-up hardly depends on the timeout's length). A bound
 * adds it; what the margin is for (a second deadline, hundreds of ms) stays
 * caught, since the lag of an idle machine is next to nothing and that of a
 * loaded one is measured, not assumed.
 */
#ifndef SV_TESTS_LAG_H
#define SV_TESTS_LAG_H

#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* sv_lag_now_ms is CLOCK_MONOTONIC in milliseconds. */
static inline int64_t
sv_lag_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* sv_lag_ms returns the worst of three overshoots (elapsed minus ms, at
 * least 0) of a poll(2) timeout of ms milliseconds. */
static inline int64_t
sv_lag_ms(int ms)
{
	int64_t worst = 0;

	for (int i = 0; i < 3; i++) {
		int64_t t0 = sv_lag_now_ms(), over;

		(void) poll(NULL, 0, ms);
		over = sv_lag_now_ms() - t0 - ms;
		if (over > worst)
			worst = over;
	}
	return worst;
}

/* sv_lag_within tells whether a call that took dt ms honoured a deadline:
 * dt >= lo and dt < hi + *lag, where *lag was measured before the call.
 * When dt is over that bound, the lag is measured again (a machine that
 * was loaded during the call usually still is just after it) and the
 * larger of the two counts; *lag keeps it. The lower bound never moves: a
 * call that returned before its deadline fails at once. A failing check
 * prints what it measured, so the log tells an early return from a late
 * one. */
static inline bool
sv_lag_within(int64_t dt, int64_t lo, int64_t hi, int64_t *lag)
{
	if (dt >= lo && dt >= hi + *lag) {
		int64_t now = sv_lag_ms(100);
		if (now > *lag)
			*lag = now;
	}
	if (dt >= lo && dt < hi + *lag)
		return true;
	fprintf(stderr,
	    "[lag] took %" PRId64 " ms; wanted at least %" PRId64
	    " and under %" PRId64 " + a measured lag of %" PRId64 " ms\n",
	    dt, lo, hi, *lag);
	return false;
}

#endif /* SV_TESTS_LAG_H */
