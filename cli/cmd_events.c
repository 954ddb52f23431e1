/*
 * cmd_events.c — `supervisectl events [GROUP[/ORDINAL]] [--count N]
 * [--for MS]`: follow the supervisor's event stream live.
 *
 * Design: Hello gives the event socket's URL (events_url); an sv_events
 * reader (client.h) subscribes there and the loop prints one line per
 * event until SIGINT or SIGTERM (exit 0), until --count events have been
 * printed, or until --for milliseconds have passed (exit 0).
 *
 * Filtering. GROUP/ORDINAL subscribes to the topic prefix
 * "w/GROUP/ORDINAL/", so the library drops everything else. GROUP alone
 * needs two prefixes ("w/GROUP/" and "g/GROUP/") and a reader has one, so
 * it reads everything and keeps the events whose group is GROUP. Reading
 * everything also keeps the sequence numbers meaningful: without a filter
 * and with a GROUP filter, a jump in seq means events were lost (the
 * supervisor never waits for a slow reader), and a line
 *   supervisectl: events: missed N events (seq A..B)
 * goes to stderr (so stdout stays one event per line). With an ORDINAL the
 * numbers jump over the other workers' events, so no gap is reported.
 *
 * Output. Text: "TIME SEQ GROUP[ORDINAL] gen G pid P KIND DETAILS" for a
 * worker event ("pid -" when it has no process), "TIME SEQ GROUP KIND
 * DETAILS" for a group event; TIME is UTC, ISO 8601 with milliseconds;
 * DETAILS are the library's "key=value" words. --json: one object per
 * line with seq, time_unix_ms, kind, group, ordinal, generation, pid
 * (those three null for group events), details and supervisor_id. stdout
 * is flushed after every event, so a pipe sees it at once.
 *
 * Signals and deadlines. The library retries a wait interrupted by a
 * signal, so the loop waits in slices of EVENTS_SLICE_MS and checks the
 * flag the handlers set between them: an interrupt is served within one
 * slice. Losing the connection (the supervisor went away or restarted) is
 * reported on stderr and exits 111; the reader never reconnects, since the
 * events in between would be lost without notice.
 *
 * Layout: signal handling, events_target (argument), events_text,
 * events_json, events_open (hello + subscribe), events_loop, cmd_events.
 */
#include "cli.h"
#include "json.h"

#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <time.h>

/* Longest wait between two checks of the stop flag. */
#define EVENTS_SLICE_MS 100
/* "w/" + group + "/" + ordinal + "/" */
#define EVENTS_PREFIX_MAX (CLI_GROUP_MAX + 32)

/* Set by SIGINT and SIGTERM: stop at the next check. */
static volatile sig_atomic_t events_stop;

/* events_on_signal records that the user asked to stop. */
static void
events_on_signal(int sig)
{
	(void) sig;
	events_stop = 1;
}

/* events_signals installs the SIGINT and SIGTERM handlers (no
 * SA_RESTART: it would not matter, the library retries anyway). */
static void
events_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = events_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* What to follow: every event, a group, or one worker. */
struct events_target {
	char     group[CLI_GROUP_MAX + 1]; /* "" for every group */
	int      has_ordinal;
	uint32_t ordinal;
	char     prefix[EVENTS_PREFIX_MAX]; /* "" unless has_ordinal */
};

/*
 * events_target parses "GROUP" or "GROUP/ORDINAL" (arg NULL: everything)
 * into *t. Returns CLI_EXIT_OK or CLI_EXIT_USAGE after printing the error.
 */
static int
events_target(const char *arg, struct events_target *t)
{
	const char *slash;
	char        group[CLI_GROUP_MAX + 2];
	size_t      glen;
	int         rc;

	memset(t, 0, sizeof *t);
	if (arg == NULL)
		return CLI_EXIT_OK;
	slash = strchr(arg, '/');
	glen  = slash != NULL ? (size_t) (slash - arg) : strlen(arg);
	/* One byte over the limit is enough for cli_check_group to refuse. */
	snprintf(group, sizeof group, "%.*s",
	    (int) (glen > CLI_GROUP_MAX + 1 ? CLI_GROUP_MAX + 1 : glen), arg);
	if ((rc = cli_check_group("events", group)) != 0)
		return rc;
	/* Checked: at most CLI_GROUP_MAX bytes. */
	memcpy(t->group, group, strlen(group) + 1);
	if (slash == NULL)
		return CLI_EXIT_OK;
	if (cli_parse_u32(slash + 1, UINT32_MAX, &t->ordinal) != 0)
		return cli_usage_error("events",
		    "ordinal \"%s\" is not a decimal number in 0..%" PRIu32,
		    slash + 1, UINT32_MAX);
	t->has_ordinal = 1;
	snprintf(t->prefix, sizeof t->prefix, "w/%s/%" PRIu32 "/", t->group,
	    t->ordinal);
	return CLI_EXIT_OK;
}

/* events_text prints e as one human line. */
static void
events_text(const sv_event *e)
{
	char        when[CLI_TIME_BUFSZ];
	const char *details = sv_event_details(e);

	cli_fmt_time(when, sizeof when, sv_event_time_unix_ms(e));
	printf("%s %" PRIu64 " ", when, sv_event_seq(e));
	cli_put_clean(stdout, sv_event_group(e));
	if (sv_event_is_worker(e)) {
		printf("[%" PRIu32 "] gen %" PRIu64, sv_event_ordinal(e),
		    sv_event_generation(e));
		if (sv_event_pid(e) > 0)
			printf(" pid %" PRId64, sv_event_pid(e));
		else
			fputs(" pid -", stdout);
	}
	putchar(' ');
	cli_put_clean(stdout, sv_event_kind(e));
	if (details[0] != '\0') {
		putchar(' ');
		cli_put_clean(stdout, details);
	}
	putchar('\n');
}

/* events_json prints e as one JSON object on one line. */
static void
events_json(const sv_event *e)
{
	int first = 1, worker = sv_event_is_worker(e);

	putchar('{');
	json_key(stdout, &first, "seq");
	printf("%" PRIu64, sv_event_seq(e));
	json_key(stdout, &first, "time_unix_ms");
	printf("%" PRIu64, sv_event_time_unix_ms(e));
	json_key(stdout, &first, "kind");
	json_string(stdout, sv_event_kind(e));
	json_key(stdout, &first, "group");
	json_string(stdout, sv_event_group(e));
	json_key(stdout, &first, "ordinal");
	if (worker)
		printf("%" PRIu32, sv_event_ordinal(e));
	else
		fputs("null", stdout);
	json_key(stdout, &first, "generation");
	if (worker)
		printf("%" PRIu64, sv_event_generation(e));
	else
		fputs("null", stdout);
	json_key(stdout, &first, "pid");
	if (worker)
		printf("%" PRId64, sv_event_pid(e));
	else
		fputs("null", stdout);
	json_key(stdout, &first, "details");
	json_string(stdout, sv_event_details(e));
	json_key(stdout, &first, "supervisor_id");
	json_string(stdout, sv_event_supervisor_id(e));
	puts("}");
}

/*
 * events_open asks the supervisor for its event socket and subscribes to
 * it with prefix (NULL: everything). Returns CLI_EXIT_OK with *evp set, or
 * an exit code after printing the error.
 */
static int
events_open(const struct cli *cli, const char *prefix, sv_events **evp)
{
	char       url[512];
	sv_client *client;
	sv_hello  *h;
	sv_err     err;
	int        rc;

	if ((rc = cli_connect(cli, &client)) != 0)
		return rc;
	err = sv_client_hello(client, cli_timeout(cli), &h);
	if (err != SV_OK) {
		rc = cli_error(client, err, "events: hello");
		sv_client_close(client);
		return rc;
	}
	snprintf(url, sizeof url, "%s", sv_hello_events_url(h));
	sv_hello_free(h);
	sv_client_close(client);
	if (url[0] == '\0')
		return cli_error_detail(SV_EUNKNOWNMSG,
		    "the supervisor publishes no events (protocol 1.0)",
		    "events");
	err = sv_events_open(evp, url, prefix, cli_timeout(cli));
	if (err != SV_OK)
		return cli_error_detail(
		    err, NULL, "events: subscribe to %s", url);
	return CLI_EXIT_OK;
}

/*
 * events_loop prints the events of ev that match t until a signal, count
 * events (0: no limit) or the monotonic deadline (0: none). Returns the
 * exit code.
 */
static int
events_loop(const struct cli *cli, sv_events *ev,
    const struct events_target *t, uint32_t count, int64_t deadline)
{
	uint64_t last = 0, printed = 0;
	int      gaps = !t->has_ordinal;

	while (!events_stop && (count == 0 || printed < count)) {
		int       slice = EVENTS_SLICE_MS;
		sv_event *e;
		sv_err    err;

		if (deadline != 0) {
			int64_t left = deadline - (int64_t) cli_now_ms();

			if (left <= 0)
				break;
			if (left < slice)
				slice = (int) left;
		}
		err = sv_events_next(ev, slice, &e);
		if (err == SV_ETIMEDOUT)
			continue;
		if (err != SV_OK) {
			cli_error_detail(err, sv_events_error_message(ev),
			    err == SV_ECLOSED || err == SV_ECONNECT
			        ? "events: the supervisor went away"
			        : "events: read");
			return CLI_EXIT_SYSTEM;
		}
		if (gaps && last != 0 && sv_event_seq(e) > last + 1) {
			fprintf(stderr,
			    CLI_PROG ": events: missed %" PRIu64
			             " events (seq %" PRIu64 "..%" PRIu64
			             ")\n",
			    sv_event_seq(e) - last - 1, last + 1,
			    sv_event_seq(e) - 1);
			fflush(stderr);
		}
		if (sv_event_seq(e) > last)
			last = sv_event_seq(e);
		if (t->group[0] == '\0'
		    || strcmp(sv_event_group(e), t->group) == 0) {
			if (cli->json)
				events_json(e);
			else
				events_text(e);
			printed++;
			if (fflush(stdout) != 0 || ferror(stdout)) {
				sv_event_free(e);
				break; /* main reports the write error */
			}
		}
		sv_event_free(e);
	}
	return CLI_EXIT_OK;
}

/* cmd_events follows the event stream of every group, GROUP, or one
 * worker GROUP/ORDINAL. */
int
cmd_events(const struct cli *cli, int argc, char **argv)
{
	const char *count_s = cli_opt(cli, "count"),
	           *for_s   = cli_opt(cli, "for");
	struct events_target t;
	uint32_t             count = 0, for_ms = 0;
	int64_t              deadline = 0;
	sv_events           *ev       = NULL;
	int                  rc;

	if ((rc = events_target(argc > 0 ? argv[0] : NULL, &t)) != 0)
		return rc;
	if (count_s != NULL
	    && (cli_parse_u32(count_s, UINT32_MAX, &count) != 0 || count == 0))
		return cli_usage_error("events",
		    "count \"%s\" is not a decimal number in 1..%" PRIu32,
		    count_s, UINT32_MAX);
	if (for_s != NULL
	    && (cli_parse_u32(for_s, INT_MAX, &for_ms) != 0 || for_ms == 0))
		return cli_usage_error("events",
		    "\"--for %s\" is not a decimal number of milliseconds in "
		    "1..%d",
		    for_s, INT_MAX);
	/* Handlers first: an interrupt while connecting also ends in 0. */
	events_signals();
	if ((rc = events_open(cli, t.has_ordinal ? t.prefix : NULL, &ev)) != 0)
		return rc;
	if (ev == NULL)
		return CLI_EXIT_SYSTEM;
	if (for_ms != 0)
		deadline = (int64_t) cli_now_ms() + for_ms;
	rc = events_loop(cli, ev, &t, count, deadline);
	sv_events_close(ev);
	return rc;
}
