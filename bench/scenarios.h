/*
 * scenarios.h — the interface between sv-bench's main (sv_bench.c) and its
 * three scenarios, one file each: bench_whoami.c, bench_crash.c and
 * bench_spawn.c.
 *
 * Design: every scenario has the same four steps, called by main in this
 * order: run (measure "ours" and its raw baseline into a result struct,
 * with a reason per failed side), rows (its lines of the result table),
 * details (its lines under the table) and, from the result's why fields,
 * the "could not measure" lines main prints last. A result owns no
 * processes: a scenario stops everything it started before run returns
 * (harness.c's cleanup() is the backstop for interruptions). Apart from
 * the crash latencies (crash_init/crash_free), results hold no memory.
 */
#ifndef SV_BENCH_SCENARIOS_H
#define SV_BENCH_SCENARIOS_H

#include "harness.h"

/* Payload of the echo baseline's round trips, in bytes. */
#define WHOAMI_ECHO_PAYLOAD 64

/* Most alternating raw/supervised rounds of the spawn scenario. */
#define SPAWN_MAX_ROUNDS 16

/* ---- Scenario 1: whoami round trip vs a bare nng echo ---- */

struct whoami_result {
	bool                ok; /* both kinds were measured */
	struct sv_bench_rtt rtt; /* the worker's report */
	char                why[256]; /* reason when !ok */
};

/*
 * whoami_run starts the echo server and a daemon whose one worker is
 * sv-bench in role "rtt", waits for its report and stops both. Fills res;
 * returns 0, or -1 with res->why set.
 */
int whoami_run(const struct opts *o, struct whoami_result *res);

/* whoami_rows writes the scenario's table rows to rows; returns how many. */
int whoami_rows(const struct whoami_result *res, struct row *rows);

/* whoami_details prints the scenario's lines under the table. */
void whoami_details(const struct whoami_result *res);

/*
 * whoami_role_echo is "sv-bench --role echo URL": a bare nng REP echo
 * server on url until SIGTERM/SIGINT. Returns the exit status.
 */
int whoami_role_echo(const char *url);

/*
 * whoami_role_rtt is "sv-bench --role rtt ECHO_URL N BLOCKS", run by the
 * daemon as its worker: times N echo and N whoami round trips in BLOCKS
 * interleaved blocks, reports one struct sv_bench_rtt, then waits for the
 * daemon's SIGTERM. Does not return.
 */
int whoami_role_rtt(const char *echo_url, const char *nstr, const char *bstr);

/* ---- Scenario 2: crash to replacement exec'd ---- */

/* Latencies of one side (raw or supervised) of the crash scenario. */
struct crash_side {
	int64_t     *lat; /* kill to replacement's stamp, ns; kills entries */
	long         n; /* how many were measured */
	struct stats s; /* summary of lat[0..n), after crash_run */
	char         why[256]; /* reason when this side failed */
	bool         ok;
};

struct crash_result {
	long              warm; /* warm-up kills before the measured ones */
	long              anomalies; /* ordinal != 0 or generation not up */
	struct crash_side raw, ours;
};

/*
 * crash_init allocates res's latency arrays for o->kills kills. Returns 0,
 * or -1 when out of memory; free with crash_free in both cases.
 */
int crash_init(const struct opts *o, struct crash_result *res);

/* crash_free frees what crash_init allocated. */
void crash_free(struct crash_result *res);

/*
 * crash_run measures the raw baseline (sv-bench supervising a stamp worker
 * itself), then the daemon (a group of one, min_uptime_ms 0). Each side is
 * skipped once g_interrupted is set. Returns 0 when both were measured.
 */
int crash_run(const struct opts *o, struct crash_result *res);

/* crash_rows writes the scenario's table rows to rows; returns how many. */
int crash_rows(const struct crash_result *res, struct row *rows);

/* crash_details prints the scenario's lines under the table. */
void crash_details(const struct opts *o, const struct crash_result *res);

/* ---- Scenario 3: spawning N workers; the daemon's RSS ---- */

struct spawn_result {
	bool    ok; /* every round of both sides was measured */
	long    rounds; /* rounds completed by both sides */
	int64_t raw_ns[SPAWN_MAX_ROUNDS]; /* first spawn to latest stamp */
	int64_t ours_ns[SPAWN_MAX_ROUNDS]; /* scale call to latest stamp */
	int64_t scale_ns[SPAWN_MAX_ROUNDS]; /* sv_client_scale duration */
	int64_t raw_med_ns, ours_med_ns; /* medians over the rounds */
	int64_t stop_ns; /* SIGTERM to daemon exit, N workers alive */
	long    initial; /* group count the daemon started with */
	long    rss_idle_kb, rss_kb, hwm_kb, threads, fds;
	char    why_raw[256], why[256]; /* reasons, per side */
};

/*
 * spawn_run alternates o->rounds raw posix_spawn loops of o->workers stamp
 * workers with supervised scale-ups from 0 to o->workers, then stops the
 * daemon with the last round's workers alive. Returns 0 when every round
 * was measured, -1 with res->why_raw or res->why set.
 */
int spawn_run(const struct opts *o, struct spawn_result *res);

/* spawn_rows writes the scenario's table rows to rows; returns how many. */
int spawn_rows(
    const struct opts *o, const struct spawn_result *res, struct row *rows);

/* spawn_details prints the scenario's lines under the table. */
void spawn_details(const struct opts *o, const struct spawn_result *res);

#endif /* SV_BENCH_SCENARIOS_H */
