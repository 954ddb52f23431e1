/*
 * bench_leases.c — measurement 8 of sv-bench (issue 7): leases. This file
 * runs its two halves, the throughput runs (leases_throughput.c) and the
 * memory of 10,000 leases (leases_memory.c), starts the daemon of each
 * (one idle group), measures the raw ping-pong ceiling printed beside
 * them, and writes the rows and details.
 *
 * Design: the raw ping-pong is the ceiling of any one-at-a-time
 * request/reply client on the machine (two processes, a socketpair,
 * blocking reads); it is measured first, in the same run, so a low lease
 * rate can be read against what the machine allows. See bench/README.md.
 */
#include "leases_bench.h"

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * ls_raw_pairs measures the ceiling of any one-at-a-time request/reply
 * client here: a child echoes 64-byte messages over a socketpair with
 * blocking reads, the parent sends and waits, two round trips per pair (as
 * an acquire + release). Returns pairs per second, 0 on failure. The child
 * is ended by closing its socket and is reaped by pid.
 */
static double
ls_raw_pairs(long pairs)
{
	int     sv[2];
	char    buf[64] = {0};
	pid_t   pid;
	int64_t t0, t1;
	bool    ok = true;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return 0;
	if ((pid = fork()) < 0) {
		close(sv[0]);
		close(sv[1]);
		return 0;
	}
	if (pid == 0) {
		ssize_t n;
		close(sv[0]);
		while ((n = read(sv[1], buf, sizeof(buf))) > 0)
			if (write(sv[1], buf, (size_t) n) != n)
				break;
		_exit(0);
	}
	close(sv[1]);
	t0 = now_ns();
	for (long i = 0; ok && i < 2 * pairs; i++)
		ok = write(sv[0], buf, sizeof(buf)) == (ssize_t) sizeof(buf)
		    && read(sv[0], buf, sizeof(buf)) == (ssize_t) sizeof(buf);
	t1 = now_ns();
	close(sv[0]);
	(void) waitpid(pid, NULL, 0);
	return ok && t1 > t0 ? (double) pairs * 1e9 / (double) (t1 - t0) : 0;
}

/* ls_daemon_start starts the daemon of a half; see leases_bench.h. */
int
ls_daemon_start(struct daemon *d, const char *name, const char *purpose,
    char *why, size_t whylen)
{
	const char      *argv[] = {SV_BENCH_STAMP_PATH, NULL};
	struct group_cfg g      = {.name = "idle",
	         .argv                   = argv,
	         .count                  = 0,
	         .min_uptime_ms          = -1,
	         .purpose                = purpose,
	         .env                    = g_sock_env};

	if (daemon_start(d, name, &g, why, whylen) != 0)
		return -1;
	if (daemon_wait_ready(d, 10000, why, whylen) != 0) {
		daemon_stop(d, 10000, NULL);
		return -1;
	}
	return 0;
}

/* leases_run runs scenario 8; see scenarios.h. */
int
leases_run(const struct opts *o, struct leases_result *res)
{
	int rv = 0;

	memset(res, 0, sizeof(*res));
	rx_flush();
	res->raw_pairs = ls_raw_pairs(o->quick ? 2000 : 5000);
	if (ls_throughput(o, res) != 0)
		rv = -1;
	else
		res->ok = true;
	if (!g_interrupted && ls_memory(res) != 0)
		rv = -1;
	return rv;
}

/* ------------------------------------------------------------------ */
/* Rows and details                                                   */
/* ------------------------------------------------------------------ */

/* leases_rows: the rate per run against 20,000/s, and the memory growth. */
int
leases_rows(const struct leases_result *res, struct row *rows)
{
	static const char *names[LEASES_CLIENT_RUNS]
	    = {"lease acq+rel, 1 client (pairs/s)",
	        "lease acq+rel, 4 clients (pairs/s)",
	        "lease acq+rel, 16 clients (pairs/s)"};
	double mib = (res->rss_leases_kb - res->rss0_kb) / 1024.0;
	int    r;

	for (r = 0; r < LEASES_CLIENT_RUNS; r++) {
		const struct leases_tp *tp = &res->tp[r];

		bool last = r == LEASES_CLIENT_RUNS - 1;

		/* the target is the daemon's throughput (the last run); the
		 * others are bounded by the clients' own wake-ups */
		rows[r] = (struct row) {.name = names[r],
		    .made                     = tp->ok,
		    .has_base                 = tp->ok,
		    .base                     = tp->echo_med,
		    .ours                     = tp->lease_med,
		    .kind                     = last ? T_CHECK : T_INFO,
		    .ttext                    = last ? ">= 20000/s" : NULL,
		    .check_ok                 = tp->lease_med >= 20000.0,
		    .higher                   = true};
	}
	rows[r++]
	    = (struct row) {.name = "daemon RSS growth, 10000 leases (MiB)",
	        .made             = res->mem_ok,
	        .has_base         = false,
	        .ours             = mib,
	        .kind             = T_ABS_LE,
	        .target           = 4,
	        .tunit            = "MiB"};
	return r;
}

/* leases_details prints latencies, block ranges and the memory stages. */
void
leases_details(const struct leases_result *res)
{
	long r, b;

	for (r = 0; r < LEASES_CLIENT_RUNS; r++) {
		const struct leases_tp *tp = &res->tp[r];
		double                  lo = 1e18, hi = 0;

		if (!tp->ok)
			continue;
		for (b = 0; b < tp->blocks; b++) {
			if (tp->lease_rate[b] < lo)
				lo = tp->lease_rate[b];
			if (tp->lease_rate[b] > hi)
				hi = tp->lease_rate[b];
		}
		printf("leases, %ld client(s): %ld blocks of %ld pairs; lease"
		       " pairs/s per block %.0f..%.0f; echo = 2 round trips"
		       " per pair, %.0f round trips/s; ListPools pairs (the"
		       " request path without lease work) %.0f/s\n",
		    tp->clients, tp->blocks, tp->pairs, lo, hi,
		    tp->echo_med * 2, tp->read_med);
		if (tp->clients == 1)
			printf("leases, 1 client: pair median %.1f us (p99 "
			       "%.1f), acquire %.1f us + release %.1f us; echo"
			       " pair median %.1f us (p99 %.1f); ListPools"
			       " pair median %.1f us\n",
			    tp->lease_pair_med_ns / 1e3,
			    tp->lease_pair_p99_ns / 1e3, tp->acq_med_ns / 1e3,
			    tp->rel_med_ns / 1e3, tp->echo_pair_med_ns / 1e3,
			    tp->echo_pair_p99_ns / 1e3,
			    tp->read_pair_med_ns / 1e3);
	}
	if (res->raw_pairs > 0)
		printf("leases: raw AF_UNIX ping-pong between two processes "
		       "(blocking read/write, 2 round trips per pair): %.0f "
		       "pairs/s, the ceiling of one client that waits for "
		       "each reply on this machine now; 1 client's lease "
		       "pairs reach %.2fx of it\n",
		    res->raw_pairs,
		    res->tp[0].ok ? res->tp[0].lease_med / res->raw_pairs
		                  : 0.0);
	if (res->mem_ok)
		printf("lease memory: %ld leases (%ld pools x %ld slots, %ld "
		       "sessions x 1 lease per pool), acquired in %.2f s; "
		       "daemon VmRSS %.2f MiB warmed up, %.2f with the "
		       "pools, %.2f with the sessions, %.2f with the leases "
		       "(leases alone +%.2f MiB, %.0f B/lease); VmHWM %.2f "
		       "MiB\n",
		    res->leases, res->pools, res->slots, res->sessions,
		    (double) res->fill_ns / 1e9, res->rss0_kb / 1024.0,
		    res->rss_pools_kb / 1024.0, res->rss_sessions_kb / 1024.0,
		    res->rss_leases_kb / 1024.0,
		    (res->rss_leases_kb - res->rss_sessions_kb) / 1024.0,
		    (res->rss_leases_kb - res->rss_sessions_kb) * 1024.0
		        / (double) (res->leases > 0 ? res->leases : 1),
		    res->hwm_kb / 1024.0);
}
