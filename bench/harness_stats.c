/*
 * harness_stats.c — sv-bench's clock and statistics: the monotonic clock
 * every measurement reads, the bounded sleeps of its wait loops, the
 * median/p99 summary of a sample, and the CPU-load sample printed around
 * a run (see harness.h for each contract).
 *
 * Design: every time in sv-bench is CLOCK_MONOTONIC in nanoseconds, the
 * clock the workers stamp with, so a worker's stamp and sv-bench's kill
 * time are directly comparable. stats_of sorts in place (the caller's
 * array is the sample; nothing is allocated) and uses the nearest rank
 * for p99, so a p99 of fewer than 100 values is the maximum.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* now_ns reads CLOCK_MONOTONIC in nanoseconds. */
int64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
}

/* sleep_ms sleeps about ms milliseconds. */
void
sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * NS_PER_MS};

	nanosleep(&ts, NULL);
}

/* slice_deadline caps deadline at 100 ms from now. */
int64_t
slice_deadline(int64_t deadline)
{
	int64_t slice = now_ns() + 100 * NS_PER_MS;

	return slice < deadline ? slice : deadline;
}

/* cmp_i64 orders int64_t values for qsort. */
static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;

	return (x > y) - (x < y);
}

/* stats_of sorts v and returns its median, p99, mean, min, max. */
struct stats
stats_of(int64_t *v, size_t n)
{
	struct stats s;
	long double  sum = 0;
	size_t       i, r;

	memset(&s, 0, sizeof(s));
	if (n == 0)
		return s;
	qsort(v, n, sizeof(*v), cmp_i64);
	for (i = 0; i < n; i++)
		sum += v[i];
	s.n    = n;
	s.med  = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	r      = (99 * n + 99) / 100; /* ceil(0.99 n), 1-based */
	s.p99  = v[r - 1];
	s.mean = (int64_t) (sum / n);
	s.min  = v[0];
	s.max  = v[n - 1];
	return s;
}

/* cpu_busy_pct is the non-idle CPU share over ms, or -1. */
double
cpu_busy_pct(long ms)
{
	unsigned long long a[2][10], tot[2], idle[2];
	int                k, i;

	for (k = 0; k < 2; k++) {
		FILE *f = fopen("/proc/stat", "r");
		int   n;

		if (f == NULL)
			return -1;
		memset(a[k], 0, sizeof(a[k]));
		n = fscanf(f,
		    "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu "
		    "%llu",
		    &a[k][0], &a[k][1], &a[k][2], &a[k][3], &a[k][4], &a[k][5],
		    &a[k][6], &a[k][7], &a[k][8], &a[k][9]);
		fclose(f);
		if (n < 5)
			return -1;
		/* guest and guest_nice (8, 9) are already in user and nice. */
		for (tot[k] = 0, i = 0; i < 8; i++)
			tot[k] += a[k][i];
		idle[k] = a[k][3] + a[k][4];
		if (k == 0)
			sleep_ms(ms);
	}
	if (tot[1] <= tot[0])
		return -1;
	return 100.0
	    * (1.0
	        - (double) (idle[1] - idle[0]) / (double) (tot[1] - tot[0]));
}
