/*
 * scenarios.h — the interface between sv-bench's main (sv_bench.c) and its
 * seven scenarios, one file each: bench_whoami.c, bench_crash.c,
 * bench_spawn.c (issue 2), bench_crashloop.c, bench_backoff.c,
 * bench_whoami_n.c, bench_events.c (issue 5), bench_leases.c,
 * bench_drain.c (issue 7), bench_idle.c (issue 6), bench_restart.c
 * (issue 20) and bench_scale.c (issues 15 and 20).
 *
 * Design: every scenario has the same four steps, called by main in this
 * order: run (measure "ours" and its raw baseline into a result struct,
 * with a reason per failed side), rows (its lines of the result table),
 * details (its lines under the table) and, from the result's why fields,
 * the "could not measure" lines main prints last. A result owns no
 * processes: a scenario stops everything it started before run returns
 * (harness_run.c's cleanup() is the backstop for interruptions). Apart from
 * the crash latencies (crash_init/crash_free), results hold no memory.
 */
#ifndef SV_BENCH_SCENARIOS_H
#define SV_BENCH_SCENARIOS_H

#include "harness.h"
#include "scenarios_limits.h" /* SC_JOURNAL, SC_EVSUBS */

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

/* ---- Scenario 2b (issue 20): restart after SIGKILL of a worker up T ---- */

#define RESTART_UPS        4 /* up times T: 0, 100 ms, 2 s, 10 s */
#define RESTART_LEVELS     3 /* other workers alive: 0, 100, 1000 */
#define RESTART_MAX_KILLS  64 /* measured kills per side and cell */
#define RESTART_MAX_OTHERS 1000 /* raw workers the scenario holds, less 1 */

/* One cell: kills of a worker up T, with `others` other workers alive. */
struct restart_cell {
	bool         run; /* measured in this mode (else: full mode only) */
	bool         ok; /* both sides measured every kill */
	long         up_ms; /* T */
	long         others; /* other workers alive, on each side */
	long         kills; /* measured kills per side asked for */
	long         n_raw, n_ours; /* measured kills made */
	int64_t      raw[RESTART_MAX_KILLS], ours[RESTART_MAX_KILLS];
	int64_t      up_max_ns; /* longest actual up time at a kill */
	int64_t      up_min_ns; /* shortest */
	struct stats s_raw, s_ours; /* kill to replacement's stamp, ns */
	char         name_med[64], name_p99[64]; /* row names */
};

struct restart_result {
	bool                ok; /* every cell run in this mode was measured */
	long                anomalies; /* ordinal != 0 or generation not up */
	struct restart_cell cell[RESTART_LEVELS][RESTART_UPS];
	char                why_raw[256], why[256]; /* reasons, per side */
};

/*
 * restart_run measures, for a worker up T = 0, 100 ms, 2 s, 10 s with 0,
 * 100 and 1000 other workers alive, SIGKILL to the replacement's stamp
 * under the daemon (a group of one, min_uptime_ms 0, beside a group of
 * the others) and under sv-bench's own raw supervisor loop (posix_spawn,
 * pidfd, epoll, waitid), the two sides' kills alternating in one
 * schedule. --quick leaves out T = 10 s and 1000 others. Returns 0, or -1
 * with res->why_raw or res->why set.
 */
int restart_run(const struct opts *o, struct restart_result *res);

/* restart_rows writes the scenario's table rows to rows; returns how many. */
int restart_rows(
    const struct opts *o, const struct restart_result *res, struct row *rows);

/* restart_details prints the scenario's lines under the table. */
void restart_details(const struct restart_result *res);

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

/* ---- Scenario 4: crash-loop throughput, backoff off ---- */

/* Most alternating raw/supervised rounds of the crash-loop scenario. */
#define LOOP_MAX_ROUNDS 8

struct loop_result {
	bool    ok; /* every round of both sides was measured */
	long    rounds; /* rounds completed by both sides */
	long    window_ms; /* length of one round's measuring window */
	long    raw_n[LOOP_MAX_ROUNDS]; /* spawn + wait cycles */
	int64_t raw_ns[LOOP_MAX_ROUNDS];
	long    ours_n[LOOP_MAX_ROUNDS]; /* restarts counted by the daemon */
	long ours_gen[LOOP_MAX_ROUNDS]; /* generation advance, same window */
	int64_t ours_ns[LOOP_MAX_ROUNDS];
	double  raw_rate, ours_rate; /* medians over the rounds, per second */
	char    why_raw[256], why[256]; /* reasons, per side */
};

/*
 * loop_run alternates raw rounds (sv-bench posix_spawns "sv-bench-stamp
 * --exit" and waits for it, in a loop) with supervised ones (a group of
 * one running it with min_uptime_ms = 0, restarts counted by the daemon).
 * Returns 0, or -1 with res->why_raw or res->why set.
 */
int loop_run(const struct opts *o, struct loop_result *res);

/* loop_rows writes the scenario's table rows to rows; returns how many. */
int loop_rows(const struct loop_result *res, struct row *rows);

/* loop_details prints the scenario's lines under the table. */
void loop_details(const struct loop_result *res);

/* ---- Scenario 5: backoff delays, measured vs configured ---- */

#define BACKOFF_STEPS       5 /* consecutive fast failures measured */
#define BACKOFF_MAX_SAMPLES 64 /* per step: runs x seats */

struct backoff_result {
	bool    ok; /* every seat of every run reached the last step */
	long    runs, seats; /* daemons started, seats per daemon */
	long    cfg_ms[BACKOFF_STEPS]; /* from the configuration */
	long    sched_ms[BACKOFF_STEPS]; /* RestartScheduled.delay_ms */
	long    sched_mismatches; /* delay_ms != cfg_ms, any step */
	long    n[BACKOFF_STEPS]; /* samples per step */
	int64_t rx_ns[BACKOFF_STEPS][BACKOFF_MAX_SAMPLES]; /* sv-bench clock */
	int64_t ev_ms[BACKOFF_STEPS][BACKOFF_MAX_SAMPLES]; /* event stamps */
	struct stats rx[BACKOFF_STEPS], ev[BACKOFF_STEPS];
	uint64_t     seq_gaps; /* events the subscriber missed */
	char         why[256];
};

/*
 * backoff_run starts a daemon per run whose seats run "sv-bench-stamp
 * --exit" with backoff_initial_ms 50, factor 2, max 400, and measures on
 * the event stream, per step 1..BACKOFF_STEPS, the delay from EXITED to
 * the next STARTED of the same seat. Returns 0, or -1 with res->why set.
 */
int backoff_run(const struct opts *o, struct backoff_result *res);

/* backoff_rows writes one row per step to rows; returns how many. */
int backoff_rows(const struct backoff_result *res, struct row *rows);

/* backoff_details prints the scenario's lines under the table. */
void backoff_details(const struct backoff_result *res);

/* ---- Scenario 6: whoami cost vs the number of workers ---- */

/* Most 1-worker / N-worker phase pairs of the whoami-n scenario. */
#define WHON_MAX_PAIRS 8

struct whon_result {
	bool     ok; /* every phase was measured */
	long     pairs; /* phase pairs completed */
	long     calls; /* whoami calls timed per phase */
	long     workers; /* workers supervised in the N phase, in all */
	int64_t  one_med_ns[WHON_MAX_PAIRS], one_p99_ns[WHON_MAX_PAIRS];
	int64_t  many_med_ns[WHON_MAX_PAIRS], many_p99_ns[WHON_MAX_PAIRS];
	int64_t  up_ns[WHON_MAX_PAIRS]; /* scale-up until all reported */
	int64_t  one_ns, many_ns; /* medians of the phase medians */
	int64_t  one_p99, many_p99; /* medians of the phase p99s */
	uint32_t size_one, size_many; /* group sizes whoami reported */
	char     why[256];
};

/*
 * whon_run starts a daemon with the whoami-timing worker (sv-bench --role
 * who) and an idle group of stamp workers, and times whoami with the idle
 * group at 0 and at N - 1 workers, in alternating phases. Returns 0, or -1
 * with res->why set.
 */
int whon_run(const struct opts *o, struct whon_result *res);

/* whon_rows writes the scenario's table rows to rows; returns how many. */
int whon_rows(const struct whon_result *res, struct row *rows);

/* whon_details prints the scenario's lines under the table. */
void whon_details(const struct whon_result *res);

/*
 * whon_role_who is "sv-bench --role who CMDSOCK", run by the daemon as its
 * worker: binds CMDSOCK, reports ready, then answers each struct
 * sv_bench_who_cmd with a struct sv_bench_who. Ends when its parent (the
 * daemon) is gone or at the daemon's SIGTERM. Returns the exit status.
 */
int whon_role_who(const char *cmdsock);

/* ---- Scenario 7: restart latency with a slow event subscriber ---- */

/* Most kills per block, and blocks per side, of the events scenario. */
#define EVENTS_MAX_KILLS  200
#define EVENTS_MAX_BLOCKS 4

struct events_result {
	bool         ok; /* every block was measured */
	long         kills; /* kills per block */
	long         blocks; /* blocks per side */
	int64_t      without[EVENTS_MAX_KILLS * EVENTS_MAX_BLOCKS];
	int64_t      with[EVENTS_MAX_KILLS * EVENTS_MAX_BLOCKS];
	long         n_without, n_with;
	struct stats s_without, s_with;
	uint64_t     target; /* events to publish with the slow subscriber */
	uint64_t     flooded; /* events published while it was attached */
	uint64_t     last_seq; /* the daemon's sequence number at the end */
	int64_t      flood_ns; /* time spent flooding */
	long unread_min; /* bytes queued unread at the subscriber, min */
	long slow_dropped; /* floods after which it was disconnected */
	bool cut; /* the time bound ended the blocks early */
	long rss_before_kb, rss_after_kb; /* the daemon's VmRSS */
	char why[256];
};

/*
 * events_run measures kill-to-replacement latency of a stamp worker in
 * blocks without and with a slow subscriber (a raw connection to the event
 * socket that completes the SP handshake and never reads), flooding the
 * event stream with a crash loop while the subscriber is attached. Returns
 * 0, or -1 with res->why set.
 */
int events_run(const struct opts *o, struct events_result *res);

/* events_rows writes the scenario's table rows to rows; returns how many. */
int events_rows(const struct events_result *res, struct row *rows);

/* events_details prints the scenario's lines under the table. */
void events_details(const struct events_result *res);

/* ---- Issue 7: leases and drain (bits beyond harness.h's SC_ALL) ---- */

#define SC_LEASES  (1u << 7)
#define SC_DRAIN   (1u << 8)
#define SC_IDLE    (1u << 9) /* scenario 10 (issue 6) */
#define SC_RESTART (1u << 10) /* scenario 2b (issue 20) */
#define SC_SCALE   (1u << 11) /* scenario 11 (issues 15 and 20) */
/* Every scenario: what sv-bench runs without --only. */
#define SC_EVERY                                                         \
	(SC_ALL | SC_LEASES | SC_DRAIN | SC_IDLE | SC_RESTART | SC_SCALE \
	    | SC_JOURNAL | SC_EVSUBS)

/* ---- Scenario 8: lease acquire + release rate; memory of 10,000 ---- */

#define LEASES_MAX_BLOCKS 16 /* interleaved echo/lease blocks */
/* Throughput runs: 1 client, 4 at once, then LEASES_CLIENTS at once. */
#define LEASES_CLIENT_RUNS 3
#define LEASES_CLIENTS     16 /* concurrent clients of the last run */

/* One throughput run: `clients` clients at once, echo and lease blocks. */
struct leases_tp {
	bool    ok;
	long    clients;
	long    blocks;
	long    pairs; /* pairs per block, all clients together */
	double  echo_rate[LEASES_MAX_BLOCKS]; /* echo pairs per second */
	double  lease_rate[LEASES_MAX_BLOCKS]; /* acquire+release per s */
	double  read_rate[LEASES_MAX_BLOCKS]; /* pairs of ListPools per s */
	double  echo_med, lease_med, read_med; /* medians over the blocks */
	int64_t echo_pair_med_ns, echo_pair_p99_ns; /* 1 client only */
	int64_t lease_pair_med_ns, lease_pair_p99_ns;
	int64_t acq_med_ns, rel_med_ns; /* 1 client: each call alone */
	int64_t read_pair_med_ns; /* 1 client: two ListPools calls */
};

struct leases_result {
	bool             ok; /* every throughput run was measured */
	struct leases_tp tp[LEASES_CLIENT_RUNS];
	bool             mem_ok; /* the memory measurement was made */
	long             pools, slots, sessions; /* what held the leases */
	long             leases; /* leases held, from ListPools */
	long             rss0_kb; /* daemon VmRSS, warmed up, no pools */
	long             rss_pools_kb, rss_sessions_kb, rss_leases_kb;
	long             hwm_kb; /* VmHWM at the end */
	int64_t          fill_ns; /* time to acquire every lease */
	double raw_pairs; /* raw AF_UNIX ping-pong, pairs/s; 0: none */
	char   why[256], why_mem[256];
};

/*
 * leases_run starts the bare echo server and a daemon, and times lease
 * acquire + release pairs (a session per client, pool of LEASES_CLIENTS
 * slots) against pairs of echo round trips in interleaved blocks, with 1
 * client, 4 and LEASES_CLIENTS at once; then, on a fresh daemon, holds
 * 10,000 leases (10 pools of 1,000 slots, 1,000 sessions) and reads the
 * daemon's VmRSS at each stage. Returns 0, or -1 with res->why or
 * res->why_mem set.
 */
int leases_run(const struct opts *o, struct leases_result *res);

/* leases_rows writes the scenario's table rows to rows; returns how many. */
int leases_rows(const struct leases_result *res, struct row *rows);

/* leases_details prints the scenario's lines under the table. */
void leases_details(const struct leases_result *res);

/* ---- Scenario 9: drain of N idle workers; drain notice latency ---- */

#define DRAIN_MAX_NOTICES 400 /* notice latencies measured at most */

/* One drain of a whole group of idle workers. */
struct drain_idle {
	bool    ok;
	long    workers; /* rows in the report */
	long    deadline_ms; /* the drain's deadline */
	int64_t done_ns; /* drain call to the first report seen done */
	int64_t call_ns; /* the drain call itself */
	int64_t up_ns; /* scale-up until every worker had stamped */
	long    max_exit_ms; /* the report's largest time_to_exit_ms */
	long    min_exit_ms, med_exit_ms; /* its smallest and median */
	long    killed, acked, exited, signalled, reaped;
	long    polls; /* GetDrain calls until done */
};

struct drain_result {
	bool              ok; /* every part was measured */
	struct drain_idle cooperative; /* workers that exit on the signal */
	struct drain_idle ignoring; /* workers killed at the deadline */
	bool              raw_ok; /* the raw baseline was measured */
	int64_t           raw_kill_ns; /* sv-bench SIGKILLs + reaps N itself */
	long              n; /* notice latencies measured */
	long         unconfirmed; /* workers not sure of their subscription */
	int64_t      lat[DRAIN_MAX_NOTICES]; /* drain call to notice */
	int64_t      rtt[DRAIN_MAX_NOTICES]; /* drain call's own duration */
	struct stats s_lat, s_rtt;
	char         why[256];
};

/*
 * drain_run starts a daemon with three groups: listening workers
 * (sv-bench-drain listen), drained one at a time to time the notice from
 * the drain call to its receipt in the worker; then o->workers idle
 * stamp workers drained at once (they exit on the drain signal), and
 * o->workers idle workers that ignore it (killed at the deadline), each
 * drain followed with GetDrain until done; and, as the floor of the last
 * one, sv-bench SIGKILLing and reaping o->workers idle stamp workers of
 * its own. Returns 0, or -1 with res->why.
 */
int drain_run(const struct opts *o, struct drain_result *res);

/* drain_rows writes the scenario's table rows to rows; returns how many. */
int drain_rows(const struct drain_result *res, struct row *rows);

/* drain_details prints the scenario's lines under the table. */
void drain_details(const struct drain_result *res);

/* ---- Scenario 10 (issue 6): an idle supervisor's wake-ups and CPU ---- */

#define IDLE_PHASES  2 /* 1 worker, then IDLE_WORKERS */
#define IDLE_WORKERS 100

/* One process over one window (bench_idle.c: how it is counted). */
struct idle_meas {
	bool    ok;
	long    switches; /* context switches of all threads in the window */
	long    cpu_ms; /* utime + stime in the window, ms */
	int64_t window_ns; /* between the two snapshots */
	long    threads0, threads1; /* threads at the start and at the end */
	long    born, gone; /* threads that began / ended in the window */
	bool    truncated; /* a snapshot had too many threads to list */
	char    top[160]; /* the busiest threads: "name/tid switches, ..." */
};

/* One phase: the daemon with `workers` idle workers, and the others. */
struct idle_phase {
	bool             ok;
	long             workers;
	int64_t          up_ns; /* scale-up until every worker stamped */
	long             restarts; /* stamps after all were up: restarts */
	struct idle_meas daemon, base, self; /* base: the raw baseline */
};

struct idle_result {
	bool              ok; /* both phases were measured */
	long              window_ms, settle_ms;
	long              clk_tck; /* _SC_CLK_TCK: the CPU time's unit */
	long              phases; /* phases measured */
	struct idle_phase ph[IDLE_PHASES];
	char              why[256];
};

/*
 * idle_run starts a raw baseline (sv-bench --role idle: blocked in
 * epoll_wait with no timeout) and a daemon with one idle stamp worker,
 * then 100, and over one window per phase (30 s, --quick 5 s) reads from
 * /proc the context switches of every thread and the CPU time of both.
 * Stops both. Returns 0, or -1 with res->why set.
 */
int idle_run(const struct opts *o, struct idle_result *res);

/* idle_rows writes the scenario's table rows to rows; returns how many. */
int idle_rows(const struct idle_result *res, struct row *rows);

/* idle_details prints the scenario's lines under the table. */
void idle_details(const struct idle_result *res);

/*
 * idle_role_base is "sv-bench --role idle SOCK": sends one stamp datagram
 * (ordinal -1) to SOCK, then blocks in epoll_wait with no timeout on an
 * eventfd nobody writes, until a signal ends it (SIGKILL also when its
 * parent dies). Returns 1 only when its set-up fails.
 */
int idle_role_base(const char *sock);

/* ---- Scenario 11: one daemon at 1, 1,000 and 10,000 workers ---- */

#define SCALE_SIZES   3 /* 1, 1000, 10000 workers */
#define SCALE_RAW_MAX 10000 /* the largest size: its raw loop is in g_raw */

/* One size: a fresh daemon scaled from 0 to `workers`. */
struct scale_step {
	bool    run; /* attempted (not skipped) */
	bool    ok; /* measured */
	bool    stopped_clean; /* the daemon exited 0, nothing left */
	long    workers;
	long    nofile; /* the daemon's descriptor limit (prlimit) */
	long    pss0_kb; /* daemon Pss before the scale-up */
	long    pss_kb, rss_kb, hwm_kb, threads; /* with the workers */
	int64_t call_ns; /* the ScaleGroup calls together */
	int64_t up_ns; /* first ScaleGroup call to the last stamp */
	bool    raw_ok; /* the raw loop of the same size was measured */
	int64_t
	    raw_up_ns; /* raw posix_spawn loop: first spawn to last stamp */
	int64_t status_ns; /* median ListWorkers of every group */
	int64_t stop_ns; /* SIGTERM to the daemon's exit */
	char    skip[160]; /* why it was not run */
	char    why[256]; /* why the measurement failed */
};

struct scale_result {
	struct scale_step step[SCALE_SIZES];
	char              why[300]; /* the first failure */
};

/*
 * scale_run runs each size the mode and the machine allow (--quick: 1 and
 * 1,000) on a fresh daemon with default settings under a descriptor
 * limit of 20,000, and measures PSS, up time, status time and stop time;
 * for 1,000 and more, also the up time of a raw posix_spawn loop of as many
 * workers (the floor) first.
 * Returns 0, or -1 with res->why set.
 */
int scale_run(const struct opts *o, struct scale_result *res);

/* scale_rows writes the scenario's table rows to rows; returns how many. */
int scale_rows(const struct scale_result *res, struct row *rows);

/* scale_details prints the scenario's lines under the table. */
void scale_details(const struct scale_result *res);

#endif /* SV_BENCH_SCENARIOS_H */
