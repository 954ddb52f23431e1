/*
 * util.c — helpers shared by the supervisectl subcommands.
 *
 * Design: every failure of supervisectl ends in exactly one line on stderr
 * and one of four exit codes, and both are decided here so the subcommands
 * cannot drift apart. The mapping from sv_err to exit code relies on the
 * numbering of supervise.h: codes below 100 are typed errors sent by the
 * supervisor (exit 1), codes from 100 up are local conditions (exit 111),
 * except SV_EINVAL, which the library returns only for arguments it rejects
 * before talking to anyone (an over-long socket URL, say) and is therefore a
 * usage error (exit 100).
 *
 * Layout: error reporting (cli_exit_code, cli_error, cli_error_detail,
 * cli_usage_error, cli_connect, cli_query, cli_group_call), argument checking
 * (cli_opt, cli_check_group, cli_parse_u32, cli_parse_u64), text formatting
 * (cli_fmt_uptime, cli_fmt_time, cli_fmt_trunc, cli_put_clean,
 * cli_kind_name).
 */
#include "cli.h"
#include "json.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* Longest "what" or detail kept in an error line; the rest is cut. */
#define UTIL_MSG_MAX 512

/* ---- error reporting ---------------------------------------------------- */

/* cli_exit_code maps err to its documented exit code. */
int
cli_exit_code(sv_err err)
{
	if (err == SV_OK)
		return CLI_EXIT_OK;
	if (err == SV_EINVAL)
		return CLI_EXIT_USAGE;
	if ((int) err > 0 && (int) err < 100)
		return CLI_EXIT_ANSWER;
	return CLI_EXIT_SYSTEM;
}

/*
 * util_error_line writes "supervisectl: what: msg (detail)" and a newline to
 * stderr, cleaning what and detail of control characters so the message is
 * always exactly one line. A detail that is empty or merely repeats msg is
 * left out with its parentheses.
 */
static void
util_error_line(const char *what, const char *msg, const char *detail)
{
	fputs(CLI_PROG ": ", stderr);
	cli_put_clean(stderr, what);
	fprintf(stderr, ": %s", msg);
	/* nng's own messages often just repeat ours ("timed out"). */
	if (detail != NULL && detail[0] != '\0'
	    && strcasecmp(detail, msg) != 0) {
		fputs(" (", stderr);
		cli_put_clean(stderr, detail);
		fputc(')', stderr);
	}
	fputc('\n', stderr);
	fflush(stderr);
}

/* cli_error prints the error line for err and returns its exit code. */
int
cli_error(const sv_client *client, sv_err err, const char *fmt, ...)
{
	char    what[UTIL_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	util_error_line(what, sv_strerror(err),
	    client != NULL ? sv_client_error_message(client) : NULL);
	return cli_exit_code(err);
}

/* cli_error_detail prints the error line for err with the given detail. */
int
cli_error_detail(sv_err err, const char *detail, const char *fmt, ...)
{
	char    what[UTIL_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	util_error_line(what, sv_strerror(err), detail);
	return cli_exit_code(err);
}

/* cli_usage_error prints a usage error line and returns CLI_EXIT_USAGE. */
int
cli_usage_error(const char *what, const char *fmt, ...)
{
	char    detail[UTIL_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof detail, fmt, ap);
	va_end(ap);
	util_error_line(what, sv_strerror(SV_EINVAL), detail);
	return CLI_EXIT_USAGE;
}

/* The deadline (cli_now_ms) of the first call after cli_connect; 0 when
 * that call was made or nothing connected. One command runs per process. */
static uint64_t first_call_by;

/* cli_connect opens a client on cli->url, reporting a failure itself. */
int
cli_connect(const struct cli *cli, sv_client **clientp)
{
	sv_client *client = NULL;
	sv_err     err;

	first_call_by = cli->timeout_ms >= 0
	    ? cli_now_ms() + (uint64_t) cli->timeout_ms
	    : 0;
	err           = sv_client_open(&client, cli->url, cli->timeout_ms);
	if (err != SV_OK)
		return cli_error(NULL, err, "connect to %s", cli->url);
	*clientp = client;
	return CLI_EXIT_OK;
}

/* cli_timeout: see cli.h. */
int
cli_timeout(const struct cli *cli)
{
	uint64_t by = first_call_by, now;

	first_call_by = 0;
	if (cli->timeout_ms < 0 || by == 0) {
		return cli->timeout_ms;
	}
	now = cli_now_ms();
	return now + 1 >= by ? 1 : (int) (by - now);
}

/* cli_query: the whole of a command that asks one thing (cli.h). */
int
cli_query(const struct cli *cli, const char *what,
    sv_err (*run)(const struct cli *, sv_client *))
{
	sv_client *client = NULL;
	sv_err     err;
	int        rc;

	if ((rc = cli_connect(cli, &client)) != 0)
		return rc;
	err = run(cli, client);
	rc  = err != SV_OK ? cli_error(client, err, "%s", what) : CLI_EXIT_OK;
	sv_client_close(client);
	return rc;
}

/* cli_group_call: the whole of a command about one group (cli.h). */
int
cli_group_call(const struct cli *cli, const char *cmd, const char *group,
    sv_err (*call)(sv_client *, const char *, int), const char *verb)
{
	sv_client *client = NULL;
	sv_err     err;
	int        rc, first = 1;

	if ((rc = cli_check_group(cmd, group)) != 0)
		return rc;
	if ((rc = cli_connect(cli, &client)) != 0)
		return rc;
	err = call(client, group, cli_timeout(cli));
	if (err != SV_OK) {
		rc = cli_error(client, err, "%s %s", cmd, group);
	} else if (cli->json) {
		putchar('{');
		json_key(stdout, &first, "group");
		json_string(stdout, group);
		puts("}");
	} else {
		printf("%s: %s\n", group, verb);
	}
	sv_client_close(client);
	return rc;
}

/* ---- argument checking -------------------------------------------------- */

/* cli_opt returns the last value given to option name, or NULL. */
const char *
cli_opt(const struct cli *cli, const char *name)
{
	const char *value = NULL;
	size_t      i;

	for (i = 0; i < cli->nopts; i++)
		if (strcmp(cli->opts[i].name, name) == 0)
			value = cli->opts[i].value;
	return value;
}

/* cli_check_group checks a group name against the rule of docs/config.md. */
int
cli_check_group(const char *cmd, const char *s)
{
	size_t len = strlen(s), i;

	if (len == 0 || len > CLI_GROUP_MAX)
		return cli_usage_error(cmd,
		    "group name must be 1..%d characters, got %zu",
		    CLI_GROUP_MAX, len);
	for (i = 0; i < len; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		        || (c >= '0' && c <= '9') || c == '_' || c == '.'
		        || c == '-'))
			return cli_usage_error(cmd,
			    "group name \"%s\" has a character outside "
			    "[A-Za-z0-9_.-]",
			    s);
	}
	return CLI_EXIT_OK;
}

/* cli_parse_u64 parses a strict decimal number in 0..max. */
int
cli_parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char              *end;

	/* strtoull alone would accept leading space, '+' and '-' (negating
	 * the value), so require a digit first. */
	if (s == NULL || s[0] < '0' || s[0] > '9')
		return -1;
	errno = 0;
	v     = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v > max)
		return -1;
	*out = (uint64_t) v;
	return 0;
}

/* cli_parse_u32 parses a strict decimal number in 0..max. */
int
cli_parse_u32(const char *s, uint32_t max, uint32_t *out)
{
	uint64_t v;

	if (cli_parse_u64(s, max, &v) != 0)
		return -1;
	*out = (uint32_t) v;
	return 0;
}

/* ---- text formatting ---------------------------------------------------- */

/* cli_fmt_uptime renders ms with two significant units at most. */
void
cli_fmt_uptime(char *buf, size_t size, uint64_t ms)
{
	const uint64_t sec = 1000, min = 60 * sec, hour = 60 * min,
	               day = 24 * hour;

	if (ms < sec)
		snprintf(buf, size, "%" PRIu64 "ms", ms);
	else if (ms < min)
		snprintf(buf, size, "%" PRIu64 ".%" PRIu64 "s", ms / sec,
		    ms % sec / 100);
	else if (ms < hour)
		snprintf(buf, size, "%" PRIu64 "m%02" PRIu64 "s", ms / min,
		    ms % min / sec);
	else if (ms < day)
		snprintf(buf, size, "%" PRIu64 "h%02" PRIu64 "m", ms / hour,
		    ms % hour / min);
	else
		snprintf(buf, size, "%" PRIu64 "d%02" PRIu64 "h", ms / day,
		    ms % day / hour);
}

/* cli_fmt_time renders a Unix time in ms as UTC ISO 8601. */
void
cli_fmt_time(char *buf, size_t size, uint64_t ms)
{
	time_t    sec = (time_t) (ms / 1000);
	struct tm tm;
	char      date[24];

	if (gmtime_r(&sec, &tm) == NULL
	    || strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm) == 0) {
		snprintf(buf, size, "@%" PRIu64 "ms", ms);
		return;
	}
	snprintf(buf, size, "%s.%03uZ", date, (unsigned) (ms % 1000));
}

/* cli_fmt_trunc copies s, cut to max bytes with "..." when longer. */
void
cli_fmt_trunc(char *buf, size_t size, const char *s, size_t max)
{
	size_t len, keep;

	if (s == NULL)
		s = "";
	len = strlen(s);
	if (len <= max) {
		snprintf(buf, size, "%s", s);
		return;
	}
	keep = max - 3;
	/* Back off to the start of a UTF-8 sequence: s[keep] is the first
	 * byte cut, so it must not be a continuation byte. */
	while (keep > 0 && ((unsigned char) s[keep] & 0xc0) == 0x80)
		keep--;
	snprintf(buf, size, "%.*s...", (int) keep, s);
}

/* cli_put_clean writes s with control characters replaced by '?'. */
void
cli_put_clean(FILE *f, const char *s)
{
	const unsigned char *p;

	if (s == NULL)
		return;
	for (p = (const unsigned char *) s; *p != '\0'; p++)
		fputc(*p < 0x20 || *p == 0x7f ? '?' : *p, f);
}

/* cli_kind_name names a worker or frame kind. */
const char *
cli_kind_name(sv_kind kind)
{
	switch (kind) {
	case SV_KIND_PROCESS:
		return "process";
	case SV_KIND_THREAD:
		return "thread";
	case SV_KIND_UNSPECIFIED:
		break;
	}
	return "unspecified";
}

/* cli_now_ms: see cli.h. */
uint64_t
cli_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000u + (uint64_t) ts.tv_nsec / 1000000u;
}
