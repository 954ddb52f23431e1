/*
 * cmd_drain.c — drain and rolling restart:
 *   drain GROUP | GROUP/ORDINAL | --all [--deadline D]
 *   restart GROUP --rolling [--ready-timeout MS]
 *   drain-ack [--served N]       (from the draining worker)
 *   drain-extend MS              (from the draining worker)
 *
 * Design: drain and restart --rolling send one request (DrainWorkers,
 * RollingRestart), then follow the report with GetDrain every
 * DRAIN_POLL_MS until it is done, showing progress on standard error
 * ("drain 4: 2 of 3 drained"; rewritten in place on a terminal, one line
 * per change otherwise), and print the reaping report: a table, or one
 * JSON object with --json. Waiting has no limit of its own: the supervisor
 * SIGKILLs every drained worker at its deadline, so the report ends; -t
 * bounds each call. drain-ack and drain-extend are what a draining worker
 * says about itself; like `ready`, the supervisor hears only the worker
 * process itself (a shell script uses exec).
 *
 * Exit status: 0 when the drain (or roll) completed, 1 when the supervisor
 * refused, or when a roll stopped early (the report says why).
 *
 * Layout: parsing (drain_deadline, drain_target), printing (drain_exit,
 * drain_table, drain_json), drain_follow, the commands.
 */
#include "cli.h"
#include "json.h"

#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Period of GetDrain while a drain runs. */
#define DRAIN_POLL_MS 50
/* Largest deadline, extension or ready timeout (one day, as the daemon). */
#define DRAIN_MAX_MS (24ull * 3600ull * 1000ull)

/*
 * drain_ms parses a duration: decimal milliseconds, or a number followed by
 * "ms" or "s". Returns 0, or -1 when it is not one (or above one day).
 */
static int
drain_ms(const char *s, uint64_t *out)
{
	char     num[24];
	size_t   n = strspn(s, "0123456789");
	uint64_t v, mul = 1;

	if (n == 0 || n >= sizeof num)
		return -1;
	if (strcmp(s + n, "s") == 0)
		mul = 1000;
	else if (s[n] != '\0' && strcmp(s + n, "ms") != 0)
		return -1;
	memcpy(num, s, n);
	num[n] = '\0';
	if (cli_parse_u64(num, DRAIN_MAX_MS, &v) != 0
	    || v * mul > DRAIN_MAX_MS)
		return -1;
	*out = v * mul;
	return 0;
}

/* drain_signame names a signal for the table ("KILL", "TERM", ...). */
static const char *
drain_signame(int sig)
{
	switch (sig) {
	case SIGKILL:
		return "KILL";
	case SIGTERM:
		return "TERM";
	case SIGINT:
		return "INT";
	case SIGQUIT:
		return "QUIT";
	case SIGHUP:
		return "HUP";
	case SIGABRT:
		return "ABRT";
	case SIGSEGV:
		return "SEGV";
	default:
		return NULL;
	}
}

/* drain_exit formats how row i ended: "exit 0", "signal KILL", "-". */
static void
drain_exit(const sv_drain_report *r, size_t i, char *buf, size_t size)
{
	const char *nm;

	if (!sv_drain_report_is_reaped(r, i))
		snprintf(buf, size, "-");
	else if (sv_drain_report_exited(r, i))
		snprintf(
		    buf, size, "exit %" PRId32, sv_drain_report_code(r, i));
	else if ((nm = drain_signame(sv_drain_report_signal(r, i))) != NULL)
		snprintf(buf, size, "signal %s", nm);
	else
		snprintf(buf, size, "signal %" PRId32,
		    sv_drain_report_signal(r, i));
}

/* drain_table prints the reaping report as a table. */
static void
drain_table(const sv_drain_report *r)
{
	uint64_t total = 0;

	printf("%-16s %7s %10s %8s %-12s %-5s %-6s %9s %7s\n", "GROUP",
	    "ORDINAL", "GENERATION", "PID", "EXIT", "ACK", "KILLED", "TIME",
	    "SERVED");
	for (size_t i = 0; i < sv_drain_report_count(r); i++) {
		char ex[32], tm[24], grp[CLI_GROUP_MAX + 1];
		cli_fmt_trunc(
		    grp, sizeof grp, sv_drain_report_group(r, i), 16);
		drain_exit(r, i, ex, sizeof ex);
		if (sv_drain_report_is_reaped(r, i))
			snprintf(tm, sizeof tm, "%" PRIu64 "ms",
			    sv_drain_report_time_to_exit_ms(r, i));
		else
			snprintf(tm, sizeof tm, "-");
		printf("%-16s %7" PRIu32 " %10" PRIu64 " %8" PRId64
		       " %-12s %-5s %-6s %9s %7" PRIu64 "\n",
		    grp, sv_drain_report_ordinal(r, i),
		    sv_drain_report_generation(r, i),
		    sv_drain_report_pid(r, i), ex,
		    sv_drain_report_acknowledged(r, i) ? "yes" : "no",
		    sv_drain_report_killed(r, i) ? "yes" : "no", tm,
		    sv_drain_report_served(r, i));
		total += sv_drain_report_served(r, i);
	}
	printf("%zu of %zu reaped; %" PRIu64 " served\n",
	    sv_drain_report_reaped(r), sv_drain_report_count(r), total);
	if (sv_drain_report_roll_failed(r))
		printf("rolling restart stopped: %s\n",
		    sv_drain_report_roll_reason(r));
}

/* drain_json prints the report as one JSON object. */
static void
drain_json(const sv_drain_report *r)
{
	int first = 1;

	putchar('{');
	json_key(stdout, &first, "id");
	printf("%" PRIu64, sv_drain_report_id(r));
	json_key(stdout, &first, "done");
	fputs(sv_drain_report_done(r) ? "true" : "false", stdout);
	json_key(stdout, &first, "rolling");
	fputs(sv_drain_report_rolling(r) ? "true" : "false", stdout);
	json_key(stdout, &first, "roll_failed");
	fputs(sv_drain_report_roll_failed(r) ? "true" : "false", stdout);
	json_key(stdout, &first, "roll_reason");
	json_string(stdout, sv_drain_report_roll_reason(r));
	json_key(stdout, &first, "workers");
	putchar('[');
	for (size_t i = 0; i < sv_drain_report_count(r); i++) {
		int f = 1;
		printf(i > 0 ? ",{" : "{");
		json_key(stdout, &f, "group");
		json_string(stdout, sv_drain_report_group(r, i));
		json_key(stdout, &f, "ordinal");
		printf("%" PRIu32, sv_drain_report_ordinal(r, i));
		json_key(stdout, &f, "generation");
		printf("%" PRIu64, sv_drain_report_generation(r, i));
		json_key(stdout, &f, "pid");
		printf("%" PRId64, sv_drain_report_pid(r, i));
		json_key(stdout, &f, "reaped");
		fputs(sv_drain_report_is_reaped(r, i) ? "true" : "false",
		    stdout);
		json_key(stdout, &f, "exit_code");
		if (sv_drain_report_is_reaped(r, i)
		    && sv_drain_report_exited(r, i))
			printf("%" PRId32, sv_drain_report_code(r, i));
		else
			fputs("null", stdout);
		json_key(stdout, &f, "signal");
		if (sv_drain_report_is_reaped(r, i)
		    && !sv_drain_report_exited(r, i))
			printf("%" PRId32, sv_drain_report_signal(r, i));
		else
			fputs("null", stdout);
		json_key(stdout, &f, "acknowledged");
		fputs(sv_drain_report_acknowledged(r, i) ? "true" : "false",
		    stdout);
		json_key(stdout, &f, "killed");
		fputs(sv_drain_report_killed(r, i) ? "true" : "false", stdout);
		json_key(stdout, &f, "time_to_exit_ms");
		printf("%" PRIu64, sv_drain_report_time_to_exit_ms(r, i));
		json_key(stdout, &f, "served");
		printf("%" PRIu64 "}", sv_drain_report_served(r, i));
	}
	puts("]}");
}

/*
 * drain_follow polls report *rp (replacing it) until it is done, showing
 * progress on stderr, then prints it. Returns the exit code.
 */
static int
drain_follow(const struct cli *cli, sv_client *client, const char *what,
    sv_drain_report **rp)
{
	int             tty  = isatty(STDERR_FILENO);
	size_t          last = SIZE_MAX;
	uint64_t        id   = sv_drain_report_id(*rp);
	struct timespec ts   = {0, DRAIN_POLL_MS * 1000000L};
	sv_err          err;

	for (;;) {
		size_t n = sv_drain_report_reaped(*rp);
		if (n != last) {
			fprintf(stderr,
			    "%s%s %" PRIu64 ": %zu of %zu drained%s",
			    tty ? "\r" : "", what, id, n,
			    sv_drain_report_count(*rp), tty ? "" : "\n");
			last = n;
		}
		if (sv_drain_report_done(*rp))
			break;
		nanosleep(&ts, NULL);
		sv_drain_report_free(*rp);
		*rp = NULL;
		err = sv_client_drain_report(client, id, cli->timeout_ms, rp);
		if (err != SV_OK) {
			if (tty)
				fputc('\n', stderr);
			return cli_error(client, err, "%s %" PRIu64, what, id);
		}
	}
	if (tty)
		fputc('\n', stderr);
	if (cli->json)
		drain_json(*rp);
	else
		drain_table(*rp);
	return sv_drain_report_roll_failed(*rp) ? CLI_EXIT_ANSWER
	                                        : CLI_EXIT_OK;
}

/* drain_target parses GROUP or GROUP/ORDINAL into group (a buffer) and
 * *ordinalp (-1: the whole group). Returns 0 or an exit code. */
static int
drain_target(const char *arg, char *group, size_t size, int64_t *ordinalp)
{
	const char *slash = strchr(arg, '/');
	size_t      len = slash != NULL ? (size_t) (slash - arg) : strlen(arg);
	uint32_t    o;
	int         rc;

	if (len >= size)
		return cli_usage_error("drain", "group name too long");
	memcpy(group, arg, len);
	group[len] = '\0';
	if ((rc = cli_check_group("drain", group)) != 0)
		return rc;
	*ordinalp = -1;
	if (slash != NULL) {
		if (cli_parse_u32(slash + 1, UINT32_MAX, &o) != 0)
			return cli_usage_error("drain",
			    "\"%s\" is not GROUP/ORDINAL with a decimal "
			    "ordinal",
			    arg);
		*ordinalp = o;
	}
	return 0;
}

/* cmd_drain: drain GROUP | GROUP/ORDINAL | --all [--deadline D]. The
 * flag --all arrives as a positional word. */
int
cmd_drain(const struct cli *cli, int argc, char **argv)
{
	const char      *d_opt = cli_opt(cli, "deadline");
	char             group[CLI_GROUP_MAX + 1];
	int64_t          ordinal  = -1;
	uint64_t         deadline = 0;
	int              all      = argc == 1 && strcmp(argv[0], "--all") == 0;
	sv_client       *client;
	sv_drain_report *r = NULL;
	sv_err           err;
	int              rc;

	if (argc != 1)
		return cli_usage_error("drain",
		    "usage: " CLI_PROG
		    " drain GROUP | GROUP/ORDINAL | --all [--deadline D]");
	if (d_opt != NULL && drain_ms(d_opt, &deadline) != 0)
		return cli_usage_error("drain",
		    "--deadline \"%s\" is not a duration (MS, or Ns, at most "
		    "one day)",
		    d_opt);
	if (!all
	    && (rc = drain_target(argv[0], group, sizeof group, &ordinal))
	        != 0)
		return rc;
	if ((rc = cli_connect(cli, &client)) != 0)
		return rc;
	err = sv_client_drain(client, all ? NULL : group, ordinal, deadline,
	    cli->timeout_ms, &r);
	if (err != SV_OK) {
		rc = cli_error(client, err, "drain %s", argv[0]);
		sv_client_close(client);
		return rc;
	}
	rc = drain_follow(cli, client, "drain", &r);
	sv_drain_report_free(r);
	sv_client_close(client);
	return rc;
}

/* cmd_restart_any: restart GROUP ORDINAL [--expect-generation G] (the
 * plain restart), or restart GROUP --rolling [--ready-timeout MS]. */
int
cmd_restart_any(const struct cli *cli, int argc, char **argv)
{
	const char      *t_opt   = cli_opt(cli, "ready-timeout");
	int              rolling = 0, n = 0;
	char            *args[2];
	uint64_t         ready = 0;
	sv_client       *client;
	sv_drain_report *r = NULL;
	sv_err           err;
	int              rc;

	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--rolling") == 0)
			rolling = 1;
		else if (n < 2)
			args[n++] = argv[i];
		else
			n = 3;
	}
	if (!rolling) {
		if (n != 2 || t_opt != NULL)
			return cli_usage_error("restart",
			    "usage: " CLI_PROG
			    " restart GROUP ORDINAL [--expect-generation G] | "
			    "GROUP --rolling [--ready-timeout MS]");
		return cmd_restart(cli, 2, args);
	}
	if (n != 1 || cli_opt(cli, "expect-generation") != NULL)
		return cli_usage_error("restart",
		    "usage: " CLI_PROG
		    " restart GROUP --rolling [--ready-timeout MS]");
	if ((rc = cli_check_group("restart", args[0])) != 0)
		return rc;
	if (t_opt != NULL && drain_ms(t_opt, &ready) != 0)
		return cli_usage_error("restart",
		    "--ready-timeout \"%s\" is not a duration", t_opt);
	if ((rc = cli_connect(cli, &client)) != 0)
		return rc;
	err = sv_client_rolling_restart(
	    client, args[0], ready, cli->timeout_ms, &r);
	if (err != SV_OK) {
		rc = cli_error(client, err, "restart %s --rolling", args[0]);
		sv_client_close(client);
		return rc;
	}
	rc = drain_follow(cli, client, "rolling restart", &r);
	sv_drain_report_free(r);
	sv_client_close(client);
	return rc;
}

/* cmd_drain_ack: the calling worker has drained [--served N]. */
int
cmd_drain_ack(const struct cli *cli, int argc, char **argv)
{
	const char *s_opt  = cli_opt(cli, "served");
	uint64_t    served = 0;
	sv_client  *client;
	sv_err      err;
	int         rc;

	(void) argc;
	(void) argv;
	if (s_opt != NULL && cli_parse_u64(s_opt, UINT64_MAX, &served) != 0)
		return cli_usage_error("drain-ack",
		    "--served \"%s\" is not a decimal number", s_opt);
	if ((rc = cli_connect(cli, &client)) != 0)
		return rc;
	err = sv_client_drain_ack(client, served, cli->timeout_ms);
	rc  = err != SV_OK ? cli_error(client, err, "drain-ack") : CLI_EXIT_OK;
	sv_client_close(client);
	return rc;
}

/* cmd_drain_extend: the calling worker asks for MS more. */
int
cmd_drain_extend(const struct cli *cli, int argc, char **argv)
{
	uint64_t   ms = 0;
	sv_client *client;
	sv_err     err;
	int        rc;

	(void) argc;
	if (drain_ms(argv[0], &ms) != 0)
		return cli_usage_error("drain-extend",
		    "\"%s\" is not a duration (MS, or Ns, at most one day)",
		    argv[0]);
	if ((rc = cli_connect(cli, &client)) != 0)
		return rc;
	err = sv_client_drain_extend(client, ms, cli->timeout_ms);
	rc  = err != SV_OK ? cli_error(client, err, "drain-extend")
	                   : CLI_EXIT_OK;
	sv_client_close(client);
	return rc;
}
