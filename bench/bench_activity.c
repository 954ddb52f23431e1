/*
 * bench_activity.c — sv-bench-activity: the cost of one
 * sv_activity_enter + sv_activity_leave pair (issue 8, "Activity"; target
 * <= 1 us in C), against a raw baseline measured in the same run.
 *
 * Baseline: a pair of calls to two non-inlined functions that each do one
 * release store to an uncontended atomic word — the floor of any shared
 * memory protocol that publishes a begin and an end. The library's pair
 * additionally reads CLOCK_MONOTONIC (vDSO), copies the name and frames
 * its stores with a sequence counter; it is called through the shared
 * library's PLT, as a user's program calls it.
 *
 * Rows: the baseline; for information, one CLOCK_MONOTONIC read (the
 * part of the pair's cost that is the clock's); enter + leave at depth 1; the
 * same nested inside an open scope (depth 2, what the reader composes); the
 * disabled path; and 2 threads at once, each on its own slot (no shared cache
 * line). Each row is the median over RUNS runs of PAIRS pairs, in ns per pair.
 * The region is a memfd (no file system involved). Not a ctest test: the
 * figures depend on the machine. See bench/README.md.
 *
 * Usage: sv-bench-activity [--quick]. Exit 0 when every row was measured
 * (even if the target is missed), 1 on an error, 2 on a usage error.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "supervise/activity.h"

#include "bench_worker.h"

#define MAX_RUNS 64

static int  runs  = 21;
static long pairs = 200000;

static _Atomic uint64_t base_word;

__attribute__((noinline)) static void
base_enter(uint64_t v)
{
	atomic_store_explicit(&base_word, v, memory_order_release);
}

__attribute__((noinline)) static void
base_leave(uint64_t v)
{
	atomic_store_explicit(&base_word, v, memory_order_release);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *) a, y = *(const double *) b;
	return (x > y) - (x < y);
}

static double
median(double *v, int n)
{
	qsort(v, (size_t) n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

typedef enum mode { M_BASE, M_CLOCK, M_ENTER, M_NESTED, M_DISABLED } mode;

/* one_run returns ns per pair of one run, or a negative value on error. */
static double
one_run(sv_activity_region *r, mode m)
{
	int64_t t0, t1;

	if (m == M_NESTED && sv_activity_enter(r, "request") != SV_OK) {
		return -1;
	}
	t0 = bw_now_ns();
	for (long i = 0; i < pairs; i++) {
		if (m == M_BASE) {
			base_enter((uint64_t) i);
			base_leave((uint64_t) i + 1);
		} else if (m == M_CLOCK) {
			base_enter((uint64_t) bw_now_ns());
		} else if (sv_activity_enter(r, "db query") != SV_OK
		    || sv_activity_leave(r) != SV_OK) {
			return -1;
		}
	}
	t1 = bw_now_ns();
	if (m == M_NESTED && sv_activity_leave(r) != SV_OK) {
		return -1;
	}
	return (double) (t1 - t0) / (double) pairs;
}

/* row measures runs runs of mode m and returns the median, or < 0. */
static double
row(sv_activity_region *r, mode m)
{
	double v[MAX_RUNS];

	(void) one_run(r, m); /* warm-up: slot claim, caches */
	for (int i = 0; i < runs; i++) {
		if ((v[i] = one_run(r, m)) < 0) {
			return -1;
		}
	}
	return median(v, runs);
}

typedef struct par {
	sv_activity_region *r;
	pthread_barrier_t  *go;
	double              ns;
} par;

static void *
par_main(void *arg)
{
	par   *p = arg;
	double v[MAX_RUNS];

	(void) one_run(p->r, M_ENTER);
	pthread_barrier_wait(p->go);
	for (int i = 0; i < runs; i++) {
		if ((v[i] = one_run(p->r, M_ENTER)) < 0) {
			p->ns = -1;
			return NULL;
		}
	}
	p->ns = median(v, runs);
	return NULL;
}

/* row_parallel: 2 threads at once; the slower thread's median. */
static double
row_parallel(sv_activity_region *r)
{
	pthread_barrier_t go;
	pthread_t         th[2];
	par               p[2];
	double            worst = 0;

	pthread_barrier_init(&go, NULL, 2);
	for (int i = 0; i < 2; i++) {
		p[i] = (par) {r, &go, 0};
		if (pthread_create(&th[i], NULL, par_main, &p[i]) != 0) {
			return -1;
		}
	}
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		if (p[i].ns < 0) {
			worst = -1;
		} else if (worst >= 0 && p[i].ns > worst) {
			worst = p[i].ns;
		}
	}
	pthread_barrier_destroy(&go);
	return worst;
}

int
main(int argc, char **argv)
{
	sv_activity_region *r;
	sv_err              rv;
	int                 fd;
	double              base, clk, one, nested, off, two;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0) {
			runs  = 7;
			pairs = 50000;
		} else {
			fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
			return 2;
		}
	}
	if ((fd = memfd_create("sv-bench-activity", MFD_CLOEXEC)) < 0) {
		perror("memfd_create");
		return 1;
	}
	if ((rv = sv_activity_region_open_fd(&r, fd)) != SV_OK) {
		fprintf(stderr, "sv_activity_region_open_fd: %s\n",
		    sv_strerror(rv));
		return 1;
	}
	close(fd);
	base   = row(r, M_BASE);
	clk    = row(r, M_CLOCK);
	one    = row(r, M_ENTER);
	nested = row(r, M_NESTED);
	(void) sv_activity_disable(r, 1);
	off = row(r, M_DISABLED);
	(void) sv_activity_disable(r, 0);
	two = row_parallel(r);
	sv_activity_region_close(r);
	if (base <= 0 || clk < 0 || one < 0 || nested < 0 || off < 0
	    || two < 0) {
		fprintf(stderr, "sv-bench-activity: a measurement failed\n");
		return 1;
	}

	printf("sv-bench-activity: %d runs x %ld pairs, median ns per "
	       "enter + leave pair\n",
	    runs, pairs);
	printf(
	    "%-44s %10s %10s %8s\n", "row", "ns/pair", "x baseline", "target");
	printf("%-44s %10.1f %10s %8s\n",
	    "baseline: 2 release stores (noinline calls)", base, "1.0", "-");
	printf("%-44s %10.1f %10.1f %8s\n",
	    "(information) one clock_gettime + 1 store", clk, clk / base, "-");
	printf("%-44s %10.1f %10.1f %8s\n", "enter + leave, depth 1", one,
	    one / base, one <= 1000 ? "PASS" : "MISS");
	printf("%-44s %10.1f %10.1f %8s\n", "enter + leave, depth 2 (nested)",
	    nested, nested / base, nested <= 1000 ? "PASS" : "MISS");
	printf("%-44s %10.1f %10.1f %8s\n", "enter + leave, disabled", off,
	    off / base, off <= 1000 ? "PASS" : "MISS");
	printf("%-44s %10.1f %10.1f %8s\n",
	    "enter + leave, 2 threads at once (slower)", two, two / base,
	    two <= 1000 ? "PASS" : "MISS");
	printf("target: <= 1000 ns (1 us) per enter + leave pair\n");
	return 0;
}
