/*
 * harness.h — what the sv-bench scenarios share: options, time and
 * statistics, the processes sv-bench starts, the report socket, the
 * temporary directory and daemon configs, daemon control, /proc readers,
 * and the result table.
 *
 * Design: sv-bench is one single-threaded orchestrator (the spawn scenario
 * adds one short-lived helper thread per round). The state every scenario
 * and the final cleanup must see (the temporary directory, the report
 * socket, the pids sv-bench started, the stop counts) lives in the g_*
 * globals below, owned by the harness files. A scenario starts processes only
 * through this harness, so cleanup() can always end them, by pid. Every
 * wait takes a deadline (CLOCK_MONOTONIC ns, from now_ns()) and returns
 * early once g_interrupted is set.
 *
 * Files (one concept each): harness_stats.c (clock, statistics, load
 * sample), harness_text.c (parsing, diagnostics), harness_proc.c (the
 * processes sv-bench starts itself, /proc readers, orphans),
 * harness_report.c (the report socket), harness_config.c (temporary
 * directory, daemon configs), harness_daemon.c (the daemon under test),
 * harness_table.c (the result table), harness_run.c (set-up, cleanup);
 * harness_priv.h joins them.
 *
 * Error convention: functions that can fail return 0 or -1 (with a reason
 * written into a caller's why buffer where there is one) or an errno value
 * where noted; none of them exits the process.
 */
#ifndef SV_BENCH_HARNESS_H
#define SV_BENCH_HARNESS_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <supervise/client.h>

#include "bench_wire.h"
#include "../tests/sv_proc.h" /* sv_proc_fd_count, sv_proc_kb */

#ifndef SV_SUPERVISED_PATH
#error "define SV_SUPERVISED_PATH (path of the supervised binary)"
#endif
#ifndef SV_BENCH_STAMP_PATH
#error "define SV_BENCH_STAMP_PATH (path of the sv-bench-stamp binary)"
#endif

#define NS_PER_MS      INT64_C(1000000)
#define NS_PER_SEC     INT64_C(1000000000)
#define RPC_TIMEOUT_MS 5000

/* The scenarios, as bits of struct opts's only. */
enum {
	SC_WHOAMI  = 1 << 0,
	SC_CRASH   = 1 << 1,
	SC_SPAWN   = 1 << 2,
	SC_LOOP    = 1 << 3,
	SC_BACKOFF = 1 << 4,
	SC_WHON    = 1 << 5,
	SC_EVENTS  = 1 << 6,
	SC_ALL     = (1 << 7) - 1
};

/* Command line of a benchmark run (parsed in sv_bench.c). */
struct opts {
	bool     quick;
	bool     keep;
	unsigned only; /* SC_* bits of the scenarios to run */
	long     events; /* events to publish in the events scenario */
	long     kills; /* measured kills in the crash scenario */
	long     workers; /* N in the spawn scenario */
	long     rtts; /* round trips of each kind in the whoami scenario */
	long     blocks; /* interleaved blocks in the whoami scenario */
	long     rounds; /* raw/supervised round pairs in the spawn scenario */
	const char *baseline; /* the recorded figures (bench/baseline.tsv) */
	bool        figures; /* print this run's figures in that format */
};

/* ---- Shared state (defined in harness_run.c, _proc.c, _daemon.c) ---- */

extern char   g_self[PATH_MAX]; /* absolute path of this program */
extern char   g_dir[PATH_MAX]; /* the temporary directory, "" if none */
extern char   g_sock[PATH_MAX]; /* the report socket in g_dir */
extern char   g_sock_env[PATH_MAX + 32]; /* "SV_BENCH_SOCK=<g_sock>" */
extern pid_t  g_echo_pid; /* echo server, while running, else -1 */
extern pid_t  g_daemon_pid; /* the one supervised, while running, else -1 */
extern pid_t *g_raw; /* raw stamp workers sv-bench spawned */
extern size_t g_nraw; /* how many of g_raw are in use */
extern volatile sig_atomic_t g_interrupted; /* SIGINT/SIGTERM/SIGHUP seen */

/* ---- Time, statistics, parsing, diagnostics ---- */

/* bench_pidfd_open returns a pidfd for pid (the pidfd_open system call,
 * which glibc 2.36 does not wrap), or -1 with errno set. The caller closes
 * it. */
int bench_pidfd_open(pid_t pid);

/* now_ns reads CLOCK_MONOTONIC in nanoseconds. */
int64_t now_ns(void);

/* sleep_ms sleeps about ms milliseconds (signals may cut it short). */
void sleep_ms(long ms);

/*
 * slice_deadline returns the earlier of deadline and 100 ms from now: the
 * deadline of one slice of a wait loop that must look at something else
 * (a helper thread, the daemon) at least every 100 ms.
 */
int64_t slice_deadline(int64_t deadline);

/* Summary of a sample, in the sample's unit. */
struct stats {
	size_t  n;
	int64_t med, p99, mean, min, max;
};

/*
 * stats_of sorts v[0..n) in place and summarises it: median (mean of the
 * two middle values for even n) and p99 by nearest rank. All zero for n 0.
 */
struct stats stats_of(int64_t *v, size_t n);

/* parse_long reads a decimal in [lo, hi] from s; -1 when it is not one. */
long parse_long(const char *s, long lo, long hi);

/* note prints "sv-bench: " and a progress or diagnostic line on stderr. */
void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* log_tail copies the last lines of the file at path to stderr. */
void log_tail(const char *path, int lines);

/*
 * cpu_busy_pct samples /proc/stat over ms milliseconds and returns the
 * share of CPU time (all CPUs) that was not idle or iowait, or -1. Run
 * while sv-bench itself is quiet, it tells whether something else is
 * competing for the CPUs.
 */
double cpu_busy_pct(long ms);

/* ---- Processes ---- */

/*
 * spawn_proc starts path with argv and envp (NULL: our environment) by
 * posix_spawn, signal mask cleared. With logpath, stdin is /dev/null and
 * stdout/stderr append to logpath; with newpgrp the child leads its own
 * process group, so a terminal's ^C reaches only sv-bench, which then stops
 * it in order. Returns 0 or an errno value.
 */
int spawn_proc(const char *path, char *const argv[], char *const envp[],
    const char *logpath, bool newpgrp, pid_t *pidp);

/*
 * stop_child sends SIGTERM to our child pid, waits up to timeout_ms, then
 * SIGKILLs and reaps it. Returns its wait status; *timedoutp tells whether
 * the SIGKILL was needed.
 */
int stop_child(pid_t pid, long timeout_ms, bool *timedoutp);

/* describe_status writes a wait status as "exit N" or "signal N" in buf. */
const char *describe_status(int st, char *buf, size_t size);

/*
 * proc_stat_ppid reads the state letter and parent pid of pid from
 * /proc/PID/stat. Returns 0, or -1 when pid is gone or unreadable.
 */
int proc_stat_ppid(pid_t pid, char *statep, long *ppidp);

/*
 * proc_stat_rest reads /proc/PID/stat into buf (len bytes) and returns
 * the fields after the command name (after its last ')': the name may hold
 * anything), pointing into buf; NULL when pid is gone or the line is not
 * what it should be.
 */
const char *proc_stat_rest(pid_t pid, char *buf, size_t len);

/*
 * raw_reap_all ends every raw worker in g_raw: SIGTERM, reap until
 * timeout_ms, then SIGKILL and reap whatever is left. Empties g_raw.
 */
void raw_reap_all(long timeout_ms);

/*
 * Environment for raw stamp workers: ours without SUPERVISE_* and
 * SV_BENCH_SOCK, plus SV_BENCH_SOCK, SUPERVISE_ORDINAL and
 * SUPERVISE_GENERATION whose values raw_spawn_stamp rewrites in place
 * (posix_spawn has copied them by the time it returns).
 */
struct envbuf {
	char **envp;
	char   ord[48];
	char   gen[48];
};

/* envbuf_init builds e; free it with envbuf_free. -1 when out of memory. */
int envbuf_init(struct envbuf *e);

/* envbuf_free frees what envbuf_init allocated. */
void envbuf_free(struct envbuf *e);

/*
 * raw_spawn_stamp starts one sv-bench-stamp with environment e, announcing
 * ordinal ord and generation gen. Returns 0 or an errno value. The caller
 * records the pid in g_raw so that cleanup can end it.
 */
int raw_spawn_stamp(struct envbuf *e, long ord, long long gen, pid_t *pidp);

/* ---- Report socket ---- */

/*
 * rx_recv waits until deadline for one datagram into buf. Returns its
 * length, 0 at the deadline, -1 on error or interruption.
 */
ssize_t rx_recv(void *buf, size_t size, int64_t deadline);

/* rx_flush discards every queued datagram. */
void rx_flush(void);

/*
 * rx_stamp waits until deadline for a stamp datagram, ignoring anything
 * else, and checking that the daemon (if one runs) is alive. Returns 1 with
 * *st filled, 0 at the deadline, -1 on error or interruption, -2 when the
 * daemon exited.
 */
int rx_stamp(struct sv_bench_stamp *st, int64_t deadline);

/*
 * The workers rx_collect counts, told apart by a key of their stamps: the
 * ordinal, or (by_pid) the pid. A stamp is new when its key is in
 * [0, size) (a pid: above 0) and seen[key] is still 0; rx_collect then sets
 * seen[key] and, when pids is not NULL, pids[key] to the stamp's pid.
 */
struct stamp_set {
	unsigned char *seen; /* a byte per key, size bytes */
	pid_t         *pids; /* NULL, or a pid per key, size of them */
	long           size;
	bool           by_pid;
};

/*
 * rx_collect waits for stamps, in slices of rx_stamp, until n new ones (see
 * struct stamp_set) came, the deadline passed, rx_stamp failed, or *stop
 * (NULL: none; looked at between slices) was set. Returns how many were
 * new; *tmaxp is raised to the latest stamp time among them.
 */
long rx_collect(const struct stamp_set *s, long n, int64_t deadline,
    int64_t *tmaxp, atomic_bool *stop);

/* ---- Temporary directory and daemon control ---- */

/* dir_path writes g_dir/name into buf; -1 when it does not fit. */
int dir_path(char *buf, size_t size, const char *name);

/* One group of a daemon config (daemon_start_groups takes several). */
struct group_cfg {
	const char        *name;
	const char *const *argv; /* NULL-terminated */
	long               count;
	long               max_count; /* 0: daemon default */
	long               min_uptime_ms; /* -1: daemon default */
	const char        *purpose;
	const char        *env; /* one "NAME=value" or NULL */
	long               backoff_initial_ms; /* 0: daemon default */
	double             backoff_factor; /* 0: daemon default */
	long               backoff_max_ms; /* 0: daemon default */
};

/* A supervised that sv-bench started, with the paths of its files. */
struct daemon {
	char name[16];
	char conf[PATH_MAX];
	char log[PATH_MAX];
	char sockdir[PATH_MAX];
	char sockpath[PATH_MAX];
	char url[PATH_MAX + 8];
	char evsock[PATH_MAX]; /* the event socket, socket_dir/events.sock */
	char evurl[PATH_MAX + 8]; /* "ipc://" evsock */
	int  exit_status; /* wait status once it exited, -1 before */
};

/*
 * daemon_start writes g_dir/<name>.conf for group g and starts
 * "supervised --config it --foreground" with output to g_dir/<name>.log and
 * its socket directory g_dir/<name>/. It becomes g_daemon_pid (only one
 * daemon runs at a time). Returns 0, or -1 with a reason in why.
 */
int daemon_start(struct daemon *d, const char *name, const struct group_cfg *g,
    char *why, size_t whylen);

/*
 * daemon_start_groups is daemon_start with the ng groups g[0..ng) (at most
 * 64, the daemon's limit), in that order in the config.
 */
int daemon_start_groups(struct daemon *d, const char *name,
    const struct group_cfg *g, size_t ng, char *why, size_t whylen);

/*
 * daemon_wait_ready waits until the control socket exists. Returns 0, -1
 * (deadline or interruption: why says which) or -2 (the daemon exited; its
 * status is in d->exit_status).
 */
int daemon_wait_ready(
    struct daemon *d, long timeout_ms, char *why, size_t whylen);

/* daemon_alive checks our daemon without blocking; false once it exited. */
bool daemon_alive(void);

/*
 * daemon_stop sends SIGTERM to the daemon and waits up to timeout_ms for
 * it to exit; then sweeps orphans. Counts the stop as clean when it exited
 * 0 in time and left no worker behind. *elapsedp (if not NULL) gets the
 * time it took. Returns true when clean.
 */
bool daemon_stop(struct daemon *d, long timeout_ms, int64_t *elapsedp);

/*
 * kill_await_replacement reads the clock, sends SIGKILL to pid (a worker of
 * our daemon, known from its own stamp) and waits until deadline_ns after
 * the kill for a stamp from another pid, ignoring late stamps of pid.
 * Returns 1 with the replacement's stamp in *st and kill-to-stamp in
 * *latp, 0 at the deadline, -1 on a failed kill or interruption, -2 when
 * the daemon exited.
 */
int kill_await_replacement(
    pid_t pid, int64_t timeout_ns, struct sv_bench_stamp *st, int64_t *latp);

/*
 * kill_block kills the victim (*pidp, updated to each replacement) k times,
 * each time waiting up to 5 s for its replacement's stamp, and appends the
 * latencies to out[*np..] (out NULL: a warm-up, nothing kept). It stops
 * early once bound (CLOCK_MONOTONIC ns; INT64_MAX: none) has passed,
 * setting *cutp (if not NULL). Returns 0, or -1 with why (whylen bytes).
 */
int kill_block(pid_t *pidp, long k, int64_t bound, bool *cutp, int64_t *out,
    long *np, char *why, size_t whylen);

/*
 * group_drain scales group to 0 on c and waits until timeout_ms for the
 * daemon to list none of its workers. Returns 0, or -1 with why set.
 */
int group_drain(sv_client *c, const char *group, long timeout_ms, char *why,
    size_t whylen);

/*
 * daemon_wait_gone waits until none of the n pids (0: unused) is a child
 * of our daemon any more (reaped, or the pid reused by another process).
 * Returns -1 once so; else the index of a pid still there when the
 * deadline passed, sv-bench was interrupted or the daemon exited.
 */
long daemon_wait_gone(const pid_t *pids, long n, int64_t deadline);

/* proc_status_kb reads "KEY:  N kB" of /proc/PID/status; -1 if none. */
long proc_status_kb(pid_t pid, const char *key);

/* ---- Result table ---- */

/*
 * What a row's result compares: nothing (info), ours / base against a bound
 * (LE, GE) or against a band around 1 (NEAR: |ours / base - 1| <= target),
 * ours against an absolute bound, or a yes/no check (check_ok).
 */
enum target_kind {
	T_INFO,
	T_RATIO_LE,
	T_RATIO_GE,
	T_RATIO_NEAR,
	T_ABS_LE,
	T_CHECK
};

/* One line of the table; ratio is always ours / base. */
struct row {
	const char      *name;
	bool             made; /* the measurement was made */
	bool             has_base;
	double           base, ours;
	enum target_kind kind;
	double           target;
	const char      *tunit; /* unit of an absolute target */
	char             ours_text[24]; /* replaces ours when set */
	const char      *ttext; /* replaces the target column when set */
	bool             check_ok; /* for T_CHECK */
	const char      *skip; /* not run in this mode, and why; NULL: run */
	bool higher; /* a larger figure is better (figures.h; implied by
	              * T_RATIO_GE) */
	bool rec_ours; /* recorded by ours even with a baseline (figures.h) */
};

/* print_table_header prints the blank line and the column titles. */
void print_table_header(void);

/*
 * print_row prints one line of the table with its ratio and result:
 * PASS or MISS against the target, info for a row without one, FAIL when
 * the measurement was not made or a ratio row (T_RATIO_*) has no baseline
 * or one not above 0, and "skip (why)" for a row marked skip. Returns
 * false when the row is FAIL (main then exits 1); a MISS returns true.
 */
bool print_row(const struct row *r);

/* row_fail_reason says why print_row calls r FAIL, or NULL when not. */
const char *row_fail_reason(const struct row *r);

/* stops_row fills r, the "clean stops" row, from the daemon_stop counts. */
void stops_row(struct row *r);

/* ---- Run set-up and tear-down ---- */

/*
 * setup_process resolves g_self, raises RLIMIT_NOFILE to the hard limit
 * (*nofilep gets the soft limit, -1 for unlimited), makes sv-bench a child
 * subreaper and installs the SIGINT/SIGTERM/SIGHUP handlers.
 */
void setup_process(long *nofilep);

/*
 * bench_open creates the temporary directory and binds the report socket
 * in it, and allocates g_raw for max_raw workers. Returns 0, or -1 after
 * printing why; call cleanup() in both cases.
 */
int bench_open(long max_raw);

/*
 * cleanup ends whatever sv-bench started that still runs, closes the
 * report socket, frees g_raw and removes g_dir unless keep.
 */
void cleanup(bool keep);

/*
 * echo_start starts the bare nng echo server ("sv-bench --role echo url",
 * g_echo_pid) and waits up to 5 s for its socket file sock. Returns 0, or
 * -1 with why set (the server may still run: echo_stop ends it).
 */
int echo_start(const char *url, const char *sock, const char *log, char *why,
    size_t whylen);

/* echo_stop ends the echo server, if it runs, and notes an unclean end. */
void echo_stop(void);

#endif /* SV_BENCH_HARNESS_H */
