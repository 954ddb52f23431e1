/*
 * cli.h — what the files of supervisectl share.
 *
 * Design: supervisectl is one main (supervisectl.c) that parses the global
 * options and dispatches to one function per subcommand, grouped by concern:
 * cmd_status.c (status), cmd_whoami.c (whoami), cmd_hello.c (hello) and
 * cmd_admin.c (scale, stop, restart). util.c holds argument checking, text
 * formatting and the error reporting that maps every failure to one of the
 * four fixed exit codes below. A subcommand receives only its positional
 * arguments (options already removed) and returns the process exit code; it
 * never calls exit() itself, so every handle is freed on every path.
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

/* Settings from the global options, shared by every subcommand. */
struct cli {
	const char *url; /* control socket URL, never NULL or "" */
	int         timeout_ms; /* per call, connect included */
	int         json; /* --json given */
};

/* A subcommand: its positional arguments only, returns an exit code. */
typedef int cli_cmd_fn(const struct cli *cli, int argc, char **argv);

cli_cmd_fn cmd_status;
cli_cmd_fn cmd_whoami;
cli_cmd_fn cmd_hello;
cli_cmd_fn cmd_scale;
cli_cmd_fn cmd_stop;
cli_cmd_fn cmd_restart;

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

/*
 * cli_fmt_uptime writes ms as a short human duration into buf (size >=
 * CLI_UPTIME_BUFSZ): "850ms", "12.3s", "5m02s", "3h04m", "2d03h". Values
 * are truncated, never rounded up.
 */
void cli_fmt_uptime(char *buf, size_t size, uint64_t ms);

/*
 * cli_put_clean writes s to f with every control character replaced by '?',
 * so that a value from the wire cannot break a line-oriented output. NULL
 * is written as "".
 */
void cli_put_clean(FILE *f, const char *s);

/* cli_kind_name returns "process", "thread" or "unspecified". */
const char *cli_kind_name(sv_kind kind);

#endif /* SUPERVISECTL_CLI_H */
