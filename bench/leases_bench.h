/*
 * leases_bench.h — what the three files of measurement 8 (leases) share:
 * the throughput runs (leases_throughput.c), the memory of 10,000 leases
 * (leases_memory.c), and the scenario's run, rows and details
 * (bench_leases.c, which also starts the daemon of each half), with the
 * constants more than one of them uses.
 *
 * Design: scenarios.h holds the result struct and the scenario's public
 * steps; this header only joins the files of the one scenario.
 */
#ifndef SV_BENCH_LEASES_BENCH_H
#define SV_BENCH_LEASES_BENCH_H

#include "scenarios.h"

#define LS_SESSION_TTL 600000 /* ms: a session outlives the measurement */

/*
 * ls_throughput runs the echo server and a daemon and the throughput runs
 * (1, 4, LEASES_CLIENTS clients) into res->tp. Returns 0, or -1 with
 * res->why set.
 */
int ls_throughput(const struct opts *o, struct leases_result *res);

/*
 * ls_memory starts a fresh daemon, holds 10,000 leases and reads its
 * VmRSS at each stage into res. Returns 0, or -1 with res->why_mem set.
 */
int ls_memory(struct leases_result *res);

/*
 * ls_daemon_start starts a daemon d named name with the one idle group
 * both halves use (sv-bench-stamp, count 0, its purpose purpose) and waits
 * up to 10 s for its control socket. Returns 0 with the daemon running (the
 * caller stops it), or -1 with why set and no daemon left running.
 */
int ls_daemon_start(struct daemon *d, const char *name, const char *purpose,
    char *why, size_t whylen);

#endif /* SV_BENCH_LEASES_BENCH_H */
