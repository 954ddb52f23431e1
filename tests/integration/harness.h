/*
 * harness.h — shared fixture of the real-process integration tests.
 *
 * Design: every test case gets its own supervisor. it_start() makes a fresh
 * mkdtemp() directory, listens there on a PULL socket for the reports of
 * sv-testworker, writes a libconfig file naming the groups, starts
 * `supervised --config FILE --foreground` with posix_spawn and waits until
 * its control socket answers Hello. it_stop() ends that daemon (SIGTERM to
 * the pid we started, waitpid with a deadline, SIGKILL only as a last resort,
 * which counts as a failure) and checks that nothing was left behind.
 *
 * The test process makes itself a child subreaper (PR_SET_CHILD_SUBREAPER),
 * so a worker the daemon leaves alive or unreaped when it exits is
 * reparented to the test rather than to init, where the teardown sees it and
 * fails the test.
 *
 * Every wait has a deadline: reports are received with an nng receive
 * timeout, exits are awaited on a pidfd with poll(), and process-table
 * checks (/proc) are polled until they converge or a deadline passes. No
 * sleep is used as synchronisation.
 *
 * The daemon and worker paths come from the command line (ctest passes
 * $<TARGET_FILE:supervised> and $<TARGET_FILE:sv-testworker>); see it_args.
 */
#ifndef SV_IT_HARNESS_H
#define SV_IT_HARNESS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdbool.h>
#include <sys/types.h>

#include <cmocka.h>
#include <nng/nng.h>

#include "supervise/client.h"

/* Deadlines used across the suite, in milliseconds. */
#define IT_START_MS       10000 /* daemon up and answering Hello */
#define IT_REPORT_MS      10000 /* a worker's report after its spawn */
#define IT_CONVERGE_MS    5000 /* status list / process table agree */
#define IT_REAP_MS        2000 /* a killed child is reaped by the daemon */
#define IT_CALL_MS        5000 /* one client call */
/* Daemon exit after its stop timeout: its workers (up to 100, ASan
 * builds running their leak check at exit) are killed at the timeout and
 * reaped; on a machine with both CPUs busy that took more than 3 s. A
 * daemon that never kills or never exits still fails it. */
#define IT_STOP_MARGIN_MS 10000

/* Fails the test unless expr (an sv_err call on ctx->client) is SV_OK. */
#define IT_PASS(ctx, expr)                                                 \
	do {                                                               \
		sv_err it_e_ = (expr);                                     \
		if (it_e_ != SV_OK)                                        \
			fail_msg("%s: %s (%s)", #expr, sv_err_name(it_e_), \
			    sv_client_error_message((ctx)->client));       \
	} while (0)

/* Fails the test unless expr returns want; the message must be non-empty. */
#define IT_FAIL(ctx, expr, want)                                              \
	do {                                                                  \
		sv_err it_e_ = (expr);                                        \
		if (it_e_ != (want))                                          \
			fail_msg("%s: got %s, want %s (%s)", #expr,           \
			    sv_err_name(it_e_), sv_err_name(want),            \
			    sv_client_error_message((ctx)->client));          \
		if (sv_client_error_message((ctx)->client)[0] == '\0')        \
			fail_msg("%s: %s with an empty error message", #expr, \
			    sv_err_name(it_e_));                              \
	} while (0)

/*
 * Room for pids in a process-table scan or a list (it_children, it_list):
 * more than any test starts. A scan or list that finds more fails instead
 * of returning a cut set (/proc lists by pid, and pids wrap at pid_max, so
 * a cut would not keep the oldest processes and two cut sets of the same
 * processes could differ).
 */
#define IT_MAX_PROCS 256

/* One worker group of the generated config. */
struct it_group {
	const char *name;
	int         count;
	int         max_count; /* 0: the daemon's default */
	int         stop_timeout_ms; /* 0: the top-level value */
	bool ignore_term; /* worker ignores SIGTERM (SV_TEST_IGNORE_TERM) */
	const char *program; /* NULL: sv-testworker; else this argv[0] */
	const char *const *args; /* NULL or NULL-terminated: argv[1..] */
	const char        *extra; /* NULL or config lines inside the group
	                           * (restart, max_restarts, ...); a key
	                           * may appear once, so not min_uptime_ms */
	int backoff_ms; /* 0: no backoff (min_uptime_ms = 0); else
	                 * min_uptime_ms 60000, backoff doubling from
	                 * this value up to 4 times it */
	const char *const *env_extra; /* NULL or NULL-terminated: more
	                               * "NAME=value" entries of the env
	                               * line (the SV_TEST_* knobs of
	                               * sv-testworker.c), written as
	                               * given inside double quotes: a
	                               * libconfig escape such as \n
	                               * ("\\n" in C) becomes a newline */
};

/* Lines added at the top level of every generated config (for instance
 * "strategy = ..."); NULL: none. */
extern const char *it_config_top;

/* When true, the daemon is started in a session of its own (setsid), as a
 * service manager starts it; false (default): in the test's session. */
extern bool it_daemon_own_session;

/* One supervisor under test and the sockets the test uses to watch it. */
typedef struct it_ctx {
	char  dir[64]; /* mkdtemp directory, also the socket_dir */
	char  conf_path[128]; /* DIR/supervised.conf */
	char  sock_path[100]; /* DIR/control.sock (fits sun_path) */
	char  url[160]; /* ipc://DIR/control.sock */
	char  report_url[160]; /* ipc://DIR/report.sock */
	int   stop_timeout_ms; /* top-level stop_timeout_ms of the config */
	pid_t daemon; /* pid from posix_spawn, 0 when none */
	bool  reaped; /* waitpid() collected the daemon */
	int   status; /* its wait status once reaped */
	nng_socket pull; /* report listener */
	bool       pull_open;
	sv_client *client; /* connected admin client */
} it_ctx;

/* A worker's report: one line of key=value pairs. */
struct it_report {
	long      pid;
	long      ordinal; /* whoami's answer, -1 if whoami failed */
	long long generation; /* whoami's answer, -1 if whoami failed */
	long      id_pid; /* pid in whoami's identity */
	char      group[72];
	long      env_ordinal; /* $SUPERVISE_ORDINAL, -1 if unset */
	long long env_generation; /* $SUPERVISE_GENERATION, -1 if unset */
	char      env_group[72];
	int       rc; /* sv_err of sv_client_open / whoami */
	int       fd_max; /* highest fd the worker inherited, -1 unknown */
	char      raw[512];
};

/* One process of a /proc scan. */
struct it_proc {
	pid_t pid;
	char  state; /* 'R', 'S', 'Z', ... */
};

/*
 * it_args reads argv[1] (path of supervised) and argv[2] (path of
 * sv-testworker), makes the process a child subreaper and ignores SIGPIPE.
 * $SV_IT_FILTER, when set, is a cmocka pattern selecting the cases to run.
 * It exits with status 2 and a usage line on bad arguments.
 */
void it_args(int argc, char **argv);

/*
 * it_finish releases nng's global state (nng_fini) once every test has run
 * and returns failed, the cmocka result: main ends with
 * `return it_finish(cmocka_run_group_tests_name(...));`.
 */
int it_finish(int failed);

/* it_worker_program returns the path of sv-testworker given to it_args
 * (for group specs built by a test); NULL before it_args. */
const char *it_worker_program(void);

/* it_sibling_program writes the path of the program name built beside
 * sv-testworker (its directory, "/", name) into buf (harness_sibling.c);
 * call it after it_args. */
void it_sibling_program(char *buf, size_t len, const char *name);

/* it_now_ms returns CLOCK_MONOTONIC in milliseconds. */
int64_t it_now_ms(void);

/* it_pause_ms waits ms milliseconds: the interval between two polls of a
 * deadline loop over something that sends no notification (/proc, a
 * list), or a worker's scripted lifetime; never a synchronisation. */
void it_pause_ms(int ms);

/*
 * it_start fills ctx, writes the config for groups[0..n-1] and starts the
 * daemon; on success the admin client ctx->client is connected and Hello
 * has succeeded. Returns 0, or -1 after printing why (ctx is then cleaned).
 */
int it_start(it_ctx *ctx, const struct it_group *groups, size_t n);

/*
 * it_restart starts the daemon again on ctx's directory and config (after
 * the test killed or stopped the previous one), waits until it answers
 * Hello and reconnects ctx->client. Returns 0, or -1 after printing why
 * (the daemon, if it runs, is left to it_stop).
 */
int it_restart(it_ctx *ctx);

/*
 * it_reap_daemon waits up to deadline_ms for the daemon to exit. Returns 0
 * when it exited (ctx->status holds its status), -1 on timeout.
 */
int it_reap_daemon(it_ctx *ctx, int deadline_ms);

/*
 * it_runnable_by_others tells whether a user other than path's owner may
 * run it: the file executable by others and every directory on the way
 * searchable by them (a worker of a group with `user = "nobody"` runs it).
 * False for NULL or a path that does not resolve.
 */
bool it_runnable_by_others(const char *path);

/*
 * it_kill9_daemon SIGKILLs the daemon and reaps it (within IT_REAP_MS), as
 * a crash would end it; its workers run on. Returns 0, or -1 when the
 * daemon was not running or did not die of the signal in time.
 */
int it_kill9_daemon(it_ctx *ctx);

/*
 * it_term_daemon closes the client, stops the daemon with SIGTERM, reaps
 * it (within its stop timeout + IT_STOP_MARGIN_MS) and then the workers of
 * earlier daemons that it stopped (the test's children, reparented to it
 * as subreaper: it_reap_strays). Returns 0, or -1 when the daemon did not
 * exit in time.
 */
int it_term_daemon(it_ctx *ctx);

/*
 * it_reap_strays reaps the test's ended children (workers of a killed
 * daemon, reparented to the test) until none is left alive or deadline_ms
 * has passed (0: only those that have already ended).
 */
void it_reap_strays(int deadline_ms);

/*
 * it_stop SIGTERMs the daemon if it still runs, waits for it with a deadline
 * of its stop timeout plus a margin, SIGKILLs it only if it did not exit,
 * then checks for workers left behind, closes the sockets and removes the
 * directory. Returns 0 when everything ended cleanly with exit status 0,
 * -1 otherwise (the reason is printed).
 */
int it_stop(it_ctx *ctx);

/* it_setup_groups is a cmocka setup helper: calloc + it_start. */
int it_setup_groups(void **state, const struct it_group *groups, size_t n);

/* it_teardown is the cmocka teardown matching it_setup_groups. */
int it_teardown(void **state);

/* it_setup_g3 is it_setup_groups for one group "g" of 3 sv-testworker
 * processes with max_count 5 (the group of the identity, kill, admin and
 * wire tests). */
int it_setup_g3(void **state);

/* A scratch directory for the whole run of a test program (mkdtemp, 0700),
 * made by the cmocka group setup it_scratch_setup (sv-it-NAME-XXXXXX for
 * the program integration_NAME) and removed with everything in it by the
 * group teardown it_scratch_teardown; "" before the setup. */
extern char it_scratch_dir[64];
int         it_scratch_setup(void **state);
int         it_scratch_teardown(void **state);

/*
 * it_recv_report waits up to timeout_ms for the next worker report. Returns
 * 0, or the nng error (NNG_ETIMEDOUT when nothing came) or -1 for a line
 * that does not parse.
 */
int it_recv_report(it_ctx *ctx, int timeout_ms, struct it_report *r);

/*
 * it_report_field copies the value of the field " key=" of a report line
 * raw (up to the next space, at most len - 1 bytes) into buf, terminated.
 * Returns false, leaving buf alone, when raw has no such field.
 */
bool it_report_field(const char *raw, const char *key, char *buf, size_t len);

/*
 * it_expect_no_report asserts that no report arrives within ms: nothing
 * was spawned that should not have been. Not a synchronisation point.
 */
void it_expect_no_report(it_ctx *ctx, int ms);

/*
 * it_expect_reports receives exactly n reports (each within IT_REPORT_MS),
 * asserting that each parses and reports rc == SV_OK.
 */
void it_expect_reports(it_ctx *ctx, size_t n, struct it_report *out);

/*
 * it_proc_stat reads /proc/PID/stat. Returns 0 and fills the non-NULL
 * out-parameters, or -1 when the process does not exist.
 */
int it_proc_stat(
    pid_t pid, pid_t *ppidp, char *statep, unsigned long long *starttimep);

/*
 * it_children lists the processes whose parent is ppid (zombies included),
 * sorted by pid. Returns the count; fails the test when ppid has more than
 * max children.
 */
size_t it_children(pid_t ppid, struct it_proc *out, size_t max);

/*
 * it_wait_no_zombie polls until ppid has no zombie child or deadline_ms
 * passes. Returns 0 when none is left, else the number of zombies.
 */
int it_wait_no_zombie(pid_t ppid, int deadline_ms);

/*
 * it_list lists group (NULL: every group) through ctx->client and stores,
 * in list order, each entry's ordinal in ords[i] and pid in pids[i] (either
 * may be NULL). Returns the number of entries, or -1 on a client error or
 * when there are more than max entries (printed either way).
 */
int it_list(
    it_ctx *ctx, const char *group, uint32_t *ords, pid_t *pids, size_t max);

/*
 * it_wait_children_match polls until the set of live children of the
 * daemon equals the set of pids in the daemon's own list of every group,
 * or deadline_ms passes. Returns 0 on agreement, -1 on a client error or
 * on timeout (then the seats are printed, as by it_wait_workers).
 */
int it_wait_children_match(it_ctx *ctx, int deadline_ms);

/*
 * it_wait_workers is it_wait_children_match that also waits for the list
 * to hold exactly want entries, each with a pid (want < 0: any number).
 * On timeout it prints the daemon's status of every seat, whether each
 * seat's pid is a live child, and every live child in no seat.
 */
int it_wait_workers(it_ctx *ctx, int want, int deadline_ms);

/*
 * it_wait_ordinals polls the list of group until its ordinals are exactly
 * want[0..n-1] (ascending) or deadline_ms passes. Returns 0 or -1.
 */
int it_wait_ordinals(it_ctx *ctx, const char *group, const uint32_t *want,
    size_t n, int deadline_ms);

/*
 * it_asuser_dirs prepares ctx for a daemon whose workers run as uid:gid
 * (harness_asuser.c): makes ctx->dir, a fresh NAME-XXXXXX of mode 0711;
 * writes DIR/s, the socket_dir the daemon will make, into sdir; makes
 * DIR/out (0700, owned by uid:gid) and writes it into outdir; names
 * ctx->conf_path (DIR/supervised.conf, not written), ctx->sock_path (in
 * sdir) and ctx->url. Returns 0, or -1 (ctx->dir may then exist; the
 * teardown removes it).
 */
int it_asuser_dirs(it_ctx *ctx, const char *name, uid_t uid, gid_t gid,
    char *sdir, size_t sdir_len, char *outdir, size_t outdir_len);

/*
 * it_asuser_spawn writes ctx->conf_path: socket_dir = sdir, stop_timeout_ms
 * = ctx->stop_timeout_ms and the list of groups, whose entries (text in
 * libconfig, each ending in a newline) are groups; then it starts
 * `daemon --config CONF --foreground` with posix_spawn's defaults and the
 * test's environment, storing its pid in ctx->daemon. Returns 0 or -1. It
 * does not wait for the daemon to answer.
 */
int it_asuser_spawn(
    it_ctx *ctx, const char *daemon, const char *sdir, const char *groups);

/* it_daemon_alive returns true while the daemon has not exited. */
bool it_daemon_alive(it_ctx *ctx);

/*
 * it_hello_ok opens a fresh client to the daemon, runs Hello and closes it.
 * Returns SV_OK or the first error.
 */
sv_err it_hello_ok(it_ctx *ctx);

#endif /* SV_IT_HARNESS_H */
