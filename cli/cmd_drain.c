/*
 * cmd_drain.c — drain and rolling restart:
 *   drain GROUP | GROUP/ORDINAL | --all [--deadline D] [--wait MS]
 *   restart GROUP --rolling [--ready-timeout MS] [--max-surge N]
 *       [--max-unavailable N] [--wait MS]
 *   drain-ack [--served N]       (from the draining worker)
 *   drain-extend MS              (from the draining worker)
 *
 * Design: drain and restart --rolling send one request (DrainWorkers,
 * RollingRestart), then follow the report with GetDrain every
 * DRAIN_POLL_MS until it is done, showing progress on standard error
 * ("drain 4: 2 of 3 drained"; rewritten in place on a terminal, one line
 * per change otherwise), and print the reaping report: a table, or one
 * JSON object with --json. --wait MS bounds the following (the drain goes
 * on in the supervisor; the command says it stopped following and exits
 * 111); without it the command follows until the report is done; -t
 * bounds each call. A report lives in the supervisor's memory only: when
 * the supervisor id changes while following (Hello after each poll), the
 * command says the report was lost with the supervisor. drain-ack and
 * drain-extend are what a draining worker says about itself; like `ready`, the
 * supervisor hears only the worker process itself (a shell script uses exec).
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
	json_key(stdout, &first, "max_surge");
	printf("%" PRIu32, sv_drain_report_max_surge(r));
	json_key(stdout, &first, "max_unavailable");
	printf("%" PRIu32, sv_drain_report_max_unavailable(r));
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

/* drain_supervisor copies the supervisor id of client's supervisor (Hello)
 * into id; "" when it cannot be asked within timeout_ms. */
static void
drain_supervisor(sv_client *client, int timeout_ms, char *id, size_t size)
{
	sv_hello *h = NULL;

	id[0] = '\0';
	if (sv_client_hello(client, timeout_ms, &h) == SV_OK)
		snprintf(id, size, "%s", sv_hello_supervisor_id(h));
	sv_hello_free(h);
}

/* drain_transient tells whether err may pass once the supervisor is back
 * (a restart in progress). */
static int
drain_transient(sv_err err)
{
	return err == SV_ECONNECT || err == SV_ECLOSED || err == SV_ETIMEDOUT;
}

/*
 * drain_follow polls report *rp (replacing it) until it is done, showing
 * progress on stderr, then prints it. It stops following after wait_ms
 * (0: no bound) with a line saying so (the drain goes on), and when the
 * supervisor that keeps the report has been replaced (its reports are in
 * its memory only) it says the report was lost with it. A connection lost
 * is retried for -t. Returns the exit code.
 */
static int
drain_follow(const struct cli *cli, sv_client *client, const char *what,
    uint64_t wait_ms, sv_drain_report **rp)
{
	int              tty  = isatty(STDERR_FILENO);
	size_t           last = SIZE_MAX;
	uint64_t         id   = sv_drain_report_id(*rp);
	struct timespec  ts   = {0, DRAIN_POLL_MS * 1000000L};
	uint64_t         t0 = cli_now_ms(), down_since = 0;
	char             sup[128], now[128], detail[512];
	sv_drain_report *nr = NULL;
	sv_err           err;

	drain_supervisor(client, cli_timeout(cli), sup, sizeof sup);
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
		if (wait_ms > 0 && cli_now_ms() - t0 >= wait_ms) {
			if (tty)
				fputc('\n', stderr);
			snprintf(detail, sizeof detail,
			    "stopped following after --wait %" PRIu64
			    " ms with %zu of %zu drained; the supervisor "
			    "goes on with it",
			    wait_ms, n, sv_drain_report_count(*rp));
			return cli_error_detail(
			    SV_ETIMEDOUT, detail, "%s %" PRIu64, what, id);
		}
		nanosleep(&ts, NULL);
		err = sv_client_drain_report(
		    client, id, cli_timeout(cli), &nr);
		if (err == SV_OK) {
			sv_drain_report_free(*rp);
			*rp = nr;
		}
		if (err != SV_OK && drain_transient(err)
		    && (down_since == 0
		        || cli_now_ms() - down_since
		            < (uint64_t) cli->timeout_ms)) {
			/* The supervisor may be restarting: ask again. */
			down_since
			    = down_since != 0 ? down_since : cli_now_ms();
			continue;
		}
		drain_supervisor(client, cli_timeout(cli), now, sizeof now);
		if (sup[0] != '\0' && now[0] != '\0'
		    && strcmp(sup, now) != 0) {
			if (tty)
				fputc('\n', stderr);
			snprintf(detail, sizeof detail,
			    "the report was lost with the supervisor: it "
			    "restarted (supervisor %s, now %s), and reports "
			    "live in its memory only; see `" CLI_PROG
			    " status` for the workers",
			    sup, now);
			return cli_error_detail(
			    SV_ENOTFOUND, detail, "%s %" PRIu64, what, id);
		}
		if (err != SV_OK) {
			if (tty)
				fputc('\n', stderr);
			return cli_error(client, err, "%s %" PRIu64, what, id);
		}
		down_since = 0;
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

/* drain_wait parses --wait MS (how long to follow the report; absent: until
 * it is done) into *waitp. Returns 0 or an exit code. */
static int
drain_wait(const struct cli *cli, const char *cmd, uint64_t *waitp)
{
	const char *o = cli_opt(cli, "wait");

	*waitp = 0;
	if (o != NULL && (drain_ms(o, waitp) != 0 || *waitp == 0))
		return cli_usage_error(cmd,
		    "--wait \"%s\" is not a duration (MS, or Ns, from 1 ms "
		    "to one day)",
		    o);
	return 0;
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
	uint64_t         deadline = 0, wait = 0;
	int              all = argc == 1 && strcmp(argv[0], "--all") == 0;
	sv_client       *client;
	sv_drain_report *r = NULL;
	sv_err           err;
	int              rc;

	if (argc != 1)
		return cli_usage_error("drain",
		    "usage: " CLI_PROG
		    " drain GROUP | GROUP/ORDINAL | --all [--deadline D] "
		    "[--wait MS]");
	if ((rc = drain_wait(cli, "drain", &wait)) != 0)
		return rc;
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
	    cli_timeout(cli), &r);
	if (err != SV_OK) {
		rc = cli_error(client, err, "drain %s", argv[0]);
		sv_client_close(client);
		return rc;
	}
	rc = drain_follow(cli, client, "drain", wait, &r);
	sv_drain_report_free(r);
	sv_client_close(client);
	return rc;
}

/* drain_budget parses --NAME N (a count of processes) into *vp, *setp
 * when given. Returns 0 or an exit code. */
static int
drain_budget(const struct cli *cli, const char *name, uint32_t *vp, int *setp)
{
	const char *o = cli_opt(cli, name);

	if (o == NULL)
		return 0;
	if (cli_parse_u32(o, UINT32_MAX, vp) != 0)
		return cli_usage_error("restart",
		    "--%s \"%s\" is not a decimal number of processes", name,
		    o);
	*setp = 1;
	return 0;
}

/* cmd_restart_any: restart GROUP ORDINAL [--expect-generation G] (the
 * plain restart), or restart GROUP --rolling [--ready-timeout MS]
 * [--max-surge N] [--max-unavailable N] [--wait MS]. */
int
cmd_restart_any(const struct cli *cli, int argc, char **argv)
{
	const char      *t_opt   = cli_opt(cli, "ready-timeout");
	int              rolling = 0, n = 0, budgets = 0;
	char            *args[2];
	uint64_t         ready = 0, wait = 0;
	uint32_t         surge = 1, unavailable = 0;
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
		if (n != 2 || t_opt != NULL
		    || cli_opt(cli, "max-surge") != NULL
		    || cli_opt(cli, "max-unavailable") != NULL
		    || cli_opt(cli, "wait") != NULL)
			return cli_usage_error("restart",
			    "usage: " CLI_PROG
			    " restart GROUP ORDINAL [--expect-generation G] | "
			    "GROUP --rolling [--ready-timeout MS] "
			    "[--max-surge "
			    "N] [--max-unavailable N] [--wait MS]");
		return cmd_restart(cli, 2, args);
	}
	if (n != 1 || cli_opt(cli, "expect-generation") != NULL)
		return cli_usage_error("restart",
		    "usage: " CLI_PROG
		    " restart GROUP --rolling [--ready-timeout MS] "
		    "[--max-surge N] [--max-unavailable N] [--wait MS]");
	if ((rc = cli_check_group("restart", args[0])) != 0)
		return rc;
	if (t_opt != NULL && drain_ms(t_opt, &ready) != 0)
		return cli_usage_error("restart",
		    "--ready-timeout \"%s\" is not a duration", t_opt);
	if ((rc = drain_budget(cli, "max-surge", &surge, &budgets)) != 0
	    || (rc = drain_budget(
	            cli, "max-unavailable", &unavailable, &budgets))
	        != 0
	    || (rc = drain_wait(cli, "restart", &wait)) != 0)
		return rc;
	if (budgets && surge == 0 && unavailable == 0)
		return cli_usage_error("restart",
		    "--max-surge 0 with --max-unavailable 0 could never "
		    "replace a worker");
	if ((rc = cli_connect(cli, &client)) != 0)
		return rc;
	err = budgets ? sv_client_rolling_restart_budgets(client, args[0],
	          ready, surge, unavailable, cli_timeout(cli), &r)
	              : sv_client_rolling_restart(
	                  client, args[0], ready, cli_timeout(cli), &r);
	if (err == SV_EUNKNOWNMSG && budgets) {
		rc = cli_error_detail(err,
		    "this supervisor does not offer "
		    "admin.rolling_restart.budgets (--max-surge, "
		    "--max-unavailable); nothing was sent",
		    "restart %s --rolling", args[0]);
		sv_client_close(client);
		return rc;
	}
	if (err != SV_OK) {
		rc = cli_error(client, err, "restart %s --rolling", args[0]);
		sv_client_close(client);
		return rc;
	}
	rc = drain_follow(cli, client, "rolling restart", wait, &r);
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
	err = sv_client_drain_ack(client, served, cli_timeout(cli));
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
	err = sv_client_drain_extend(client, ms, cli_timeout(cli));
	rc  = err != SV_OK ? cli_error(client, err, "drain-extend")
	                   : CLI_EXIT_OK;
	sv_client_close(client);
	return rc;
}
