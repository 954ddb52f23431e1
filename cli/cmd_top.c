/*
 * cmd_top.c — `supervisectl top [GROUP] [--count N] [--for MS]`: a live
 * view of the workers and what they are doing (docs/activity.md), and the
 * ACTIVITY cell that `status` shares.
 *
 * Design: one connection, then a ListWorkers every CLI_TOP_PERIOD_MS
 * (the supervisor's view of an activity is at most 100 ms stale, so
 * refreshing faster shows nothing new) printed with the same table (or
 * JSON array) as `status`. When stdout is a terminal each refresh clears
 * the screen with ANSI "home, clear" and redraws; otherwise each refresh
 * is a new block after a blank line, so a pipe or a file gets a readable
 * log. It runs until interrupted (SIGINT's default action ends it), until N
 * refreshes have been printed (--count) or MS milliseconds have passed
 * (--for; the last refresh happens at the deadline). A request that fails
 * ends it with the error's exit code.
 */
#include "cli.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Time between two refreshes. */
#define CLI_TOP_PERIOD_MS 500u

void
cli_fmt_activity(char *buf, size_t size, const sv_workers *w, size_t i)
{
	uint32_t n = sv_workers_activities(w, i);
	char     name[CLI_TEXT_COL_MAX + 1], age[CLI_UPTIME_BUFSZ];

	if (size == 0) {
		return;
	}
	buf[0] = '\0';
	if (n == 0) {
		return; /* idle: nothing at all */
	}
	cli_fmt_trunc(
	    name, sizeof name, sv_workers_activity(w, i), CLI_TEXT_COL_MAX);
	cli_fmt_uptime(age, sizeof age, sv_workers_activity_age_ms(w, i));
	snprintf(buf, size, "%" PRIu32 " %s %s", n, name, age);
}

/* top_sleep_ms waits ms milliseconds (the refresh period, not a wait for
 * an event: there is none to wait for). */
static void
top_sleep_ms(uint64_t ms)
{
	struct timespec ts
	    = {(time_t) (ms / 1000u), (long) (ms % 1000u) * 1000000L};

	while (nanosleep(&ts, &ts) != 0) {
	}
}

/* top_header prints the line above each refresh. */
static void
top_header(const sv_workers *w)
{
	struct timespec ts;
	char            when[CLI_TIME_BUFSZ];
	size_t          n = sv_workers_count(w), busy = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	cli_fmt_time(when, sizeof when,
	    (uint64_t) ts.tv_sec * 1000u + (uint64_t) ts.tv_nsec / 1000000u);
	for (size_t i = 0; i < n; i++) {
		if (sv_workers_activities(w, i) > 0) {
			busy++;
		}
	}
	printf(
	    "%s  %zu worker%s, %zu busy\n", when, n, n == 1 ? "" : "s", busy);
}

/* cmd_top shows the workers of every group, or of argv[0], live. */
int
cmd_top(const struct cli *cli, int argc, char **argv)
{
	const char *group = argc > 0 ? argv[0] : NULL;
	const char *c_opt = cli_opt(cli, "count"),
	           *f_opt = cli_opt(cli, "for");
	uint64_t   count = 0, for_ms = 0, deadline = 0;
	int        tty = isatty(STDOUT_FILENO);
	sv_client *client;
	int        rc;

	if (group != NULL && (rc = cli_check_group("top", group)) != 0)
		return rc;
	if (c_opt != NULL
	    && (cli_parse_u64(c_opt, UINT32_MAX, &count) != 0 || count == 0))
		return cli_usage_error(
		    "top", "--count \"%s\" is not a number >= 1", c_opt);
	if (f_opt != NULL && cli_parse_u64(f_opt, UINT32_MAX, &for_ms) != 0)
		return cli_usage_error(
		    "top", "--for \"%s\" is not a decimal number", f_opt);
	if ((rc = cli_connect(cli, &client)) != 0)
		return rc;
	deadline = cli_now_ms() + for_ms;
	for (uint64_t k = 0;; k++) {
		sv_workers *w;
		uint64_t    now;
		sv_err      err
		    = sv_client_list(client, group, cli_timeout(cli), &w);

		if (err != SV_OK) {
			rc = cli_error(client, err, "top");
			break;
		}
		if (tty)
			fputs("\033[H\033[2J", stdout);
		else if (k > 0)
			putchar('\n');
		if (!cli->json)
			top_header(w);
		cli_status_show(cli, w);
		fflush(stdout);
		sv_workers_free(w);
		now = cli_now_ms();
		if ((count > 0 && k + 1 >= count)
		    || (f_opt != NULL && now >= deadline))
			break;
		if (f_opt != NULL && deadline - now < CLI_TOP_PERIOD_MS)
			top_sleep_ms(deadline - now);
		else
			top_sleep_ms(CLI_TOP_PERIOD_MS);
	}
	sv_client_close(client);
	return rc;
}
