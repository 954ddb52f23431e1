/*
 * bench_worker.h — what sv-bench's standalone worker programs share: the
 * monotonic clock in nanoseconds and the numbers of the environment
 * (SUPERVISE_ORDINAL, SUPERVISE_GENERATION) read leniently, with a default.
 *
 * Design: header-only (static inline functions, libc alone), because the
 * workers are separate small programs (sv-bench-stamp links neither nng nor
 * libsupervise, and sv-bench-activity and sv-bench-bindings-c link only the
 * public library), so a shared object file would be one more thing each
 * of their targets lists. Used by stamp_worker.c, drain_worker.c,
 * bench_activity.c and bench_bindings_worker.c; sv-bench itself reads the
 * clock through harness.h (now_ns).
 */
#ifndef SV_BENCH_WORKER_H
#define SV_BENCH_WORKER_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* bw_now_ns reads CLOCK_MONOTONIC in nanoseconds. */
static inline int64_t
bw_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * bw_env_ll returns the environment variable name as a decimal number, or
 * dflt when it is unset, empty, not a number or out of range.
 */
static inline long long
bw_env_ll(const char *name, long long dflt)
{
	const char *s = getenv(name);
	char       *end;
	long long   v;

	if (s == NULL || *s == '\0')
		return dflt;
	errno = 0;
	v     = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return dflt;
	return v;
}

/* bw_env_ordinal is $SUPERVISE_ORDINAL as an int32, -1 when absent or bad. */
static inline int32_t
bw_env_ordinal(void)
{
	long long ord = bw_env_ll("SUPERVISE_ORDINAL", -1);

	return ord < 0 || ord > INT32_MAX ? -1 : (int32_t) ord;
}

#endif /* SV_BENCH_WORKER_H */
