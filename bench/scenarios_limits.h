/*
 * scenarios_limits.h — two of sv-bench's resource-limit scenarios, kept
 * out of scenarios.h so that scenarios are added without editing one
 * another's lines: `journal` (bench_journal.c: the journal's size on disk
 * through 100,000 restarts and 10,000 lease grants and releases, and the
 * start-up after kill -9 with 1,000 workers and 10,000 leases) and
 * `evsubs` (bench_evsubs.c: restart latency with 1,000 event subscribers
 * attached, and with one that connects and disconnects in a loop).
 *
 * Design: the same four steps as every scenario of scenarios.h (run,
 * rows, details, and the why fields main prints as "could not measure").
 * A result owns no processes and no memory.
 */
#ifndef SV_BENCH_SCENARIOS_LIMITS_H
#define SV_BENCH_SCENARIOS_LIMITS_H

#include "harness.h"

/* Scenario bits beyond scenarios.h's (left room for others below). */
#define SC_JOURNAL (1u << 13)
#define SC_EVSUBS  (1u << 14)

/* ---- journal: size on disk, and start-up after kill -9 ---- */

#define JOURNAL_MAX_REPLAYS 8 /* kill -9 + start-ups measured at most */
#define JOURNAL_DECILES     10 /* sizes kept at 10%, 20%, ... 100% */

/* The journal's size through one phase (restarts, or lease pairs). */
struct journal_phase {
	long    target; /* operations wanted */
	long    done; /* operations done (restarts counted by the daemon) */
	int64_t ns; /* time the phase took */
	bool    cut; /* the time bound ended it before the target */
	long    samples; /* sizes read */
	long    compactions; /* samples smaller than the one before */
	long    max_b; /* the largest size seen, bytes */
	long    h1_max_b, h2_max_b; /* the largest in each half (by done) */
	long    decile_b[JOURNAL_DECILES]; /* first size seen past k/10 */
	long    end_b; /* the size once the phase ended */
};

struct journal_result {
	bool                 ok; /* both growth phases were measured */
	struct journal_phase restarts, leases;
	long                 start_b; /* the state directory before either */
	bool                 replay_ok; /* the start-ups were measured */
	long                 workers; /* workers up before the kills */
	long                 leases_held; /* leases held before the kills */
	long                 jbytes; /* the journal at the first kill, bytes */
	long    jprocs, jleases; /* its P and L records (U subtracted) */
	long    nreplays;
	int64_t hello_ns[JOURNAL_MAX_REPLAYS]; /* exec to Hello answered */
	int64_t replay_ns[JOURNAL_MAX_REPLAYS]; /* the daemon's own log */
	long    nlogged; /* start-ups whose log line was found */
	struct stats s_hello, s_replay;
	long         adopted; /* the first workers' pids listed at the end */
	char         why[256], why_replay[256];
};

/*
 * journal_run drives a daemon through the restarts of a crash-looping
 * group (backoff off) and then through lease grants and releases, reading
 * the size of its state directory as it goes; then, on a second daemon
 * with 1,000 workers and 10,000 leases held, kills it with SIGKILL and
 * times its successor from exec to an answered Hello, several times.
 * Returns 0, or -1 with res->why or res->why_replay set.
 */
int journal_run(const struct opts *o, struct journal_result *res);

/* journal_rows writes the scenario's table rows to rows; returns how many. */
int journal_rows(const struct journal_result *res, struct row *rows);

/* journal_details prints the scenario's lines under the table. */
void journal_details(const struct journal_result *res);

/* ---- evsubs: many subscribers, and one that churns ---- */

#define EVSUBS_N          1000 /* subscribers of part (a) */
#define EVSUBS_MAX_KILLS  50 /* per block and side */
#define EVSUBS_MAX_BLOCKS 4

/* One part: restart latency without and with its subscribers. */
struct evsubs_part {
	bool         ok;
	long         kills, blocks; /* kills per block, blocks per side */
	int64_t      without[EVSUBS_MAX_KILLS * EVSUBS_MAX_BLOCKS];
	int64_t      with[EVSUBS_MAX_KILLS * EVSUBS_MAX_BLOCKS];
	long         n_without, n_with;
	struct stats s_without, s_with;
	long         rss_before_kb, rss_after_kb; /* the daemon's VmRSS */
	long         fds_before, fds_after; /* its open descriptors */
	long         fds_peak; /* the most seen during the part */
	int64_t      cpu_without_ns, cpu_with_ns; /* daemon loop thread's CPU
	                                           * time over the kills */
};

struct evsubs_result {
	struct evsubs_part many; /* (a) EVSUBS_N subscribers attached */
	struct evsubs_part churn; /* (b) one connecting in a loop */
	long               attached; /* subscribers of (a) at their peak */
	long               heard; /* of those, how many got an event */
	long               rss_attached_kb; /* VmRSS with all attached */
	long               cycles; /* connect + handshake + close of (b) */
	long               churn_fail; /* cycles that failed */
	int64_t            churn_ns; /* time the churn ran */
	long               nofile; /* our RLIMIT_NOFILE soft limit */
	char               why[256];
};

/*
 * evsubs_run measures kill-to-replacement latency of a stamp worker in
 * alternating blocks without and with (a) EVSUBS_N subscribers attached
 * to the event socket and read by a thread, then (b) a thread that
 * connects, completes the SUB handshake and hangs up as fast as it can.
 * Returns 0, or -1 with res->why set.
 */
int evsubs_run(const struct opts *o, struct evsubs_result *res);

/* evsubs_rows writes the scenario's table rows to rows; returns how many. */
int evsubs_rows(const struct evsubs_result *res, struct row *rows);

/* evsubs_details prints the scenario's lines under the table. */
void evsubs_details(const struct evsubs_result *res);

#endif /* SV_BENCH_SCENARIOS_LIMITS_H */
