/*
 * cli.h — what the files of supervisectl share.
 *
 * Design: supervisectl is one main (supervisectl.c) that parses the global
 * options and dispatches to one function per subcommand, grouped by concern:
 * cmd_status.c (status), cmd_groups.c (groups, reset), cmd_whoami.c
 * (whoami), cmd_hello.c (hello), cmd_admin.c (scale, stop, restart, start,
 * terminate: one worker or one group's size), cmd_spawn.c (spawn, delete:
 * groups created at runtime), cmd_worker.c (ready, heartbeat: sent by a
 * worker about itself) and cmd_events.c (events). util.c holds argument
 * checking, text formatting and the error reporting that maps every failure
 * to one of the four fixed exit codes below. A subcommand receives only its
 * positional arguments; the options its table entry declares (all of them
 * "--name VALUE" or "--name=VALUE") are parsed by main into struct cli. It
 * returns the process exit code and never calls exit() itself, so every
 * handle is freed on every path (cmd_worker.c's exec chain-loading is the
 * one deliberate exception: exec replaces the process).
 */
#ifndef SUPERVISECTL_CLI_H
#define SUPERVISECTL_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <supervise/client.h>

/* Exit codes, fixed project-wide (s6 convention); see docs/supervisectl.md. */
#define CLI_EXIT_OK     0 /* success */
#define CLI_EXIT_ANSWER 1 /* the supervisor answered with an error */
#define CLI_EXIT_USAGE  100 /* bad option or argument, unknown command */
#define CLI_EXIT_SYSTEM 111 /* cannot connect, timeout, protocol, memory */

#define CLI_PROG "supervisectl"

/* Bounds on arguments; the group rule is the one of docs/config.md. */
#define CLI_GROUP_MAX       64
#define CLI_TIMEOUT_DEFAULT 5000
#define CLI_UPTIME_BUFSZ    32
#define CLI_TIME_BUFSZ      32 /* "2025-01-02T03:04:05.678Z" */
/* Most command options in one invocation (--env and --set may repeat; the
 * supervisor takes at most 256 of each). */
#define CLI_OPTS_MAX 600
/* Free text (purpose, status line) is cut to this many bytes in tables. */
#define CLI_TEXT_COL_MAX 40

/* One command option: its name without "--" and its value. */
struct cli_opt {
	const char *name;
	const char *value;
};

/* Settings from the global options, shared by every subcommand. */
struct cli {
	const char           *url; /* control socket URL, never NULL or "" */
	int                   timeout_ms; /* per call, connect included */
	int                   json; /* --json given */
	const struct cli_opt *opts; /* the command's options, in order */
	size_t                nopts;
	int ndash; /* positional arguments before "--", -1 without "--" */
};

/* A subcommand: its positional arguments only, returns an exit code. */
typedef int cli_cmd_fn(const struct cli *cli, int argc, char **argv);

cli_cmd_fn cmd_status;
cli_cmd_fn cmd_whoami;
cli_cmd_fn cmd_hello;
cli_cmd_fn cmd_scale;
cli_cmd_fn cmd_stop;
cli_cmd_fn cmd_restart;
cli_cmd_fn cmd_start;
cli_cmd_fn cmd_terminate;
cli_cmd_fn cmd_groups;
cli_cmd_fn cmd_reset;
cli_cmd_fn cmd_spawn;
cli_cmd_fn cmd_delete;
cli_cmd_fn cmd_ready;
cli_cmd_fn cmd_heartbeat;
cli_cmd_fn cmd_events;
cli_cmd_fn cmd_leases; /* cmd_leases.c */
cli_cmd_fn cmd_pools;
cli_cmd_fn cmd_lease;
cli_cmd_fn cmd_session;
cli_cmd_fn cmd_pool;
cli_cmd_fn cmd_drain; /* cmd_drain.c */
cli_cmd_fn cmd_restart_any;
cli_cmd_fn cmd_drain_ack;
cli_cmd_fn cmd_drain_extend;
cli_cmd_fn cmd_top; /* cmd_top.c */

/*
 * cli_opt returns the value of the last option name (without "--") given
 * to the command, or NULL when it was not given. The string is argv's.
 */
const char *cli_opt(const struct cli *cli, const char *name);

/*
 * cli_error prints the one error line
 *   supervisectl: <what>: <sv_strerror(err)> (<detail>)
 * to stderr, where what is formatted from fmt and detail is
 * sv_client_error_message(client) (left out with its parentheses when client
 * is NULL, or the message is empty or only repeats sv_strerror). It returns
 * the exit code for err.
 */
int cli_error(const sv_client *client, sv_err err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * cli_error_detail is cli_error with the detail given by the caller (NULL
 * or "" for none) instead of read from a client handle, for errors of an
 * sv_events reader or of a system call.
 */
int cli_error_detail(sv_err err, const char *detail, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * cli_usage_error prints the error line for a usage error,
 *   supervisectl: <what>: invalid argument (<detail>)
 * where detail is formatted from fmt, and returns CLI_EXIT_USAGE. Usage
 * errors thus have the same shape as every other error line.
 */
int cli_usage_error(const char *what, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* cli_exit_code maps an sv_err to the exit code documented for it. */
int cli_exit_code(sv_err err);

/*
 * cli_connect opens a client on cli->url within cli->timeout_ms. On success
 * it returns CLI_EXIT_OK and *clientp must be closed with sv_client_close();
 * otherwise it has printed the error line and returns the exit code.
 */
int cli_connect(const struct cli *cli, sv_client **clientp);

/*
 * cli_timeout is the timeout to pass to the next call: what is left of
 * cli->timeout_ms since cli_connect for the first call after it (so that
 * -t bounds connecting and that call together, also when the socket
 * appears late and then never answers), the whole cli->timeout_ms for
 * every later call. A negative cli->timeout_ms (no deadline) is returned
 * as is; a time already past gives 1 ms (the call then times out).
 */
int cli_timeout(const struct cli *cli);

/*
 * cli_group_call runs a command whose only argument is a group: it checks
 * the name (usage error naming cmd), connects, calls call(client, group,
 * timeout) and prints "GROUP: verb" or, with --json, {"group": GROUP}.
 * Returns the exit code; any failure has printed its one error line.
 */
int cli_group_call(const struct cli *cli, const char *cmd, const char *group,
    sv_err (*call)(sv_client *, const char *, int), const char *verb);

/*
 * cli_query runs a command that connects, asks one thing and prints the
 * answer: it connects, calls run(cli, client), which makes the call and on
 * SV_OK prints the answer (text, or JSON with --json) and frees it, and on
 * an error returns it having printed nothing; the error line then names
 * what. Returns the exit code; any failure has printed its one error line.
 */
int cli_query(const struct cli *cli, const char *what,
    sv_err (*run)(const struct cli *, sv_client *));

/*
 * cli_check_group returns CLI_EXIT_OK when s is a valid group name
 * ([A-Za-z0-9_.-], 1..CLI_GROUP_MAX characters); otherwise it prints a usage
 * error naming cmd and returns CLI_EXIT_USAGE.
 */
int cli_check_group(const char *cmd, const char *s);

/*
 * cli_parse_u32 parses s as a decimal number in 0..max, strictly: digits
 * only (no sign, space or suffix), no overflow. Returns 0 and sets *out on
 * success, -1 otherwise (*out untouched).
 */
int cli_parse_u32(const char *s, uint32_t max, uint32_t *out);

/* cli_parse_u64 is cli_parse_u32 for 64-bit values in 0..max. */
int cli_parse_u64(const char *s, uint64_t max, uint64_t *out);

/*
 * cli_fmt_uptime writes ms as a short human duration into buf (size >=
 * CLI_UPTIME_BUFSZ): "850ms", "12.3s", "5m02s", "3h04m", "2d03h". Values
 * are truncated, never rounded up.
 */
void cli_fmt_uptime(char *buf, size_t size, uint64_t ms);

/*
 * cli_fmt_time writes the wall-clock time ms (milliseconds since the Unix
 * epoch) into buf (size >= CLI_TIME_BUFSZ) as UTC in ISO 8601 with
 * milliseconds: "2025-01-02T03:04:05.678Z".
 */
void cli_fmt_time(char *buf, size_t size, uint64_t ms);

/* cli_durability_line prints one line when h says the supervisor's journal
 * lost durability and returns 1; else prints nothing, returns 0
 * (cmd_hello.c). */
int cli_durability_line(const sv_hello *h);

/*
 * cli_fmt_trunc copies s (NULL is "") into buf (size > max) and, when s is
 * longer than max bytes, cuts it to at most max bytes ending in "...",
 * never inside a UTF-8 sequence. max must be at least 3.
 */
void cli_fmt_trunc(char *buf, size_t size, const char *s, size_t max);

/*
 * cli_put_clean writes s to f with every control character replaced by '?',
 * so that a value from the wire cannot break a line-oriented output. NULL
 * is written as "".
 */
void cli_put_clean(FILE *f, const char *s);

/*
 * cli_fmt_activity writes worker i's activity cell into buf (size bytes,
 * terminated): "N NAME AGE" ("2 request: db query 1.5s", NAME cut to
 * CLI_TEXT_COL_MAX bytes), or "" when the worker is idle (cmd_top.c).
 */
void cli_fmt_activity(char *buf, size_t size, const sv_workers *w, size_t i);

/*
 * cli_status_show prints w as `status` does: the table, or the JSON array
 * with --json (cmd_status.c).
 */
void cli_status_show(const struct cli *cli, const sv_workers *w);

/* cli_now_ms reads CLOCK_MONOTONIC in milliseconds (deadlines of the
 * commands that follow or refresh). */
uint64_t cli_now_ms(void);

/* cli_kind_name returns "process", "thread" or "unspecified". */
const char *cli_kind_name(sv_kind kind);

#endif /* SUPERVISECTL_CLI_H */
