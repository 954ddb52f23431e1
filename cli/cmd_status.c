/*
 * cmd_status.c — `supervisectl status [GROUP]`: list worker slots.
 *
 * Design: one ListWorkers call (every group, or GROUP; the library follows
 * the pages) and one ListGroups call for the failed groups, then either a
 * table for people or a JSON array for programs. The two free-text columns
 * are cut to CLI_TEXT_COL_MAX bytes: PURPOSE, padded, and STATUS (the
 * worker's status line, "-" when it has none), last and unpadded. A slot
 * without a process (backoff, failed, ...) shows "-" for PID, READY and
 * UPTIME. After the table comes one line per failed group with the reason
 * and the command that clears it. The JSON keys are part of the CLI's
 * interface, documented in docs/supervisectl.md: add keys, never rename
 * them; JSON values are never cut.
 *
 * Last, in the table form, one Hello: when the supervisor's journal lost
 * durability, the line cli_durability_line prints (cmd_hello.c).
 *
 * A supervisor that does not know ListGroups (protocol 1.0) answers with a
 * typed error: the failed lines are then left out, the table still printed.
 *
 * Every field shown is one line of status_fields (fields.h), which both
 * the JSON and the table emitters walk.
 *
 * Layout: the getters, status_fields, status_failed, cli_status_show,
 * cmd_status.
 */
#include "cli.h"
#include "fields.h"

#include <inttypes.h>
#include <string.h>

/* Column indexes, in display order. */
enum {
	COL_GROUP,
	COL_ORDINAL,
	COL_GEN,
	COL_PID,
	COL_STATE,
	COL_READY,
	COL_UPTIME,
	COL_PURPOSE,
	COL_ACTIVITY,
	COL_STATUS
};

/* Defines a getter NAME of a worker's FMT-formatted ACCESSOR (a number). */
#define STATUS_NUM(name, fmt, accessor)                                      \
	static const char *name(                                             \
	    const void *r, size_t i, char *buf, size_t len)                  \
	{                                                                    \
		snprintf(                                                    \
		    buf, len, "%" fmt, accessor((const sv_workers *) r, i)); \
		return buf;                                                  \
	}

/* Defines a getter NAME of a worker's ACCESSOR (a string of the reply). */
#define STATUS_STR(name, accessor)                          \
	static const char *name(                            \
	    const void *r, size_t i, char *buf, size_t len) \
	{                                                   \
		(void) buf;                                 \
		(void) len;                                 \
		return accessor((const sv_workers *) r, i); \
	}

STATUS_STR(st_group, sv_workers_group)
STATUS_NUM(st_ordinal, PRIu32, sv_workers_ordinal)
STATUS_NUM(st_generation, PRIu64, sv_workers_generation)
STATUS_NUM(st_pid, PRId64, sv_workers_pid)
STATUS_NUM(st_uptime_ms, PRIu64, sv_workers_uptime_ms)
STATUS_STR(st_purpose, sv_workers_purpose)
STATUS_NUM(st_restarts, PRIu64, sv_workers_restarts)
STATUS_NUM(st_last_exit_code, PRId32, sv_workers_last_exit_code)
STATUS_NUM(st_last_signal, PRId32, sv_workers_last_signal)
STATUS_NUM(st_fast_failures, PRIu32, sv_workers_fast_failures)
STATUS_NUM(st_restart_in_ms, PRIu64, sv_workers_restart_in_ms)
STATUS_STR(st_status_text, sv_workers_status_text)
STATUS_NUM(st_activities, PRIu32, sv_workers_activities)
STATUS_STR(st_activity, sv_workers_activity)
STATUS_NUM(st_activity_age_ms, PRIu64, sv_workers_activity_age_ms)

/* st_state is the worker's state name. */
static const char *
st_state(const void *r, size_t i, char *buf, size_t len)
{
	(void) buf;
	(void) len;
	return sv_state_name(sv_workers_state((const sv_workers *) r, i));
}

/* st_ready is "true" or "false" (JSON). */
static const char *
st_ready(const void *r, size_t i, char *buf, size_t len)
{
	(void) buf;
	(void) len;
	return sv_workers_ready((const sv_workers *) r, i) ? "true" : "false";
}

/* st_has_pid tells whether the slot has a process: the PID, READY and
 * UPTIME cells show "-" when it has not. */
static int
st_has_pid(const void *r, size_t i)
{
	return sv_workers_pid((const sv_workers *) r, i) > 0;
}

/* cell_pid is the PID cell. */
static const char *
cell_pid(const void *r, size_t i, char *buf, size_t len)
{
	return st_has_pid(r, i) ? st_pid(r, i, buf, len) : "-";
}

/* cell_ready is the READY cell: yes, no or -. */
static const char *
cell_ready(const void *r, size_t i, char *buf, size_t len)
{
	(void) buf;
	(void) len;
	if (!st_has_pid(r, i))
		return "-";
	return sv_workers_ready((const sv_workers *) r, i) ? "yes" : "no";
}

/* cell_uptime is the UPTIME cell, for people ("5m02s"). */
static const char *
cell_uptime(const void *r, size_t i, char *buf, size_t len)
{
	if (!st_has_pid(r, i))
		return "-";
	cli_fmt_uptime(
	    buf, len, sv_workers_uptime_ms((const sv_workers *) r, i));
	return buf;
}

/* cell_purpose is the PURPOSE cell, cut to CLI_TEXT_COL_MAX bytes. */
static const char *
cell_purpose(const void *r, size_t i, char *buf, size_t len)
{
	cli_fmt_trunc(buf, len, sv_workers_purpose((const sv_workers *) r, i),
	    CLI_TEXT_COL_MAX);
	return buf;
}

/* cell_activity is the ACTIVITY cell (cli_fmt_activity). */
static const char *
cell_activity(const void *r, size_t i, char *buf, size_t len)
{
	cli_fmt_activity(buf, len, (const sv_workers *) r, i);
	return buf;
}

/* cell_status is the STATUS cell: the status line cut to
 * CLI_TEXT_COL_MAX bytes, "-" when there is none. */
static const char *
cell_status(const void *r, size_t i, char *buf, size_t len)
{
	const char *s = sv_workers_status_text((const sv_workers *) r, i);

	cli_fmt_trunc(buf, len, s[0] != '\0' ? s : "-", CLI_TEXT_COL_MAX);
	return buf;
}

/* A worker's fields: the JSON keys in their order, and the columns. */
static const struct cli_field status_fields[] = {
    {"group", CLI_JSON_STRING, st_group, COL_GROUP, "GROUP", 0, NULL,
        st_group},
    {"ordinal", CLI_JSON_RAW, st_ordinal, COL_ORDINAL, "ORDINAL", 1, NULL,
        st_ordinal},
    {"generation", CLI_JSON_RAW, st_generation, COL_GEN, "GENERATION", 1, NULL,
        st_generation},
    {"pid", CLI_JSON_RAW, st_pid, COL_PID, "PID", 1, NULL, cell_pid},
    {"state", CLI_JSON_STRING, st_state, COL_STATE, "STATE", 0, NULL,
        st_state},
    {"uptime_ms", CLI_JSON_RAW, st_uptime_ms, COL_UPTIME, "UPTIME", 1, NULL,
        cell_uptime},
    {"purpose", CLI_JSON_STRING, st_purpose, COL_PURPOSE, "PURPOSE", 0, NULL,
        cell_purpose},
    {"restarts", CLI_JSON_RAW, st_restarts, -1, NULL, 0, NULL, NULL},
    {"last_exit_code", CLI_JSON_RAW, st_last_exit_code, -1, NULL, 0, NULL,
        NULL},
    {"last_signal", CLI_JSON_RAW, st_last_signal, -1, NULL, 0, NULL, NULL},
    {"ready", CLI_JSON_RAW, st_ready, COL_READY, "READY", 0, NULL, cell_ready},
    {"fast_failures", CLI_JSON_RAW, st_fast_failures, -1, NULL, 0, NULL, NULL},
    {"restart_in_ms", CLI_JSON_RAW, st_restart_in_ms, -1, NULL, 0, NULL, NULL},
    {"status_text", CLI_JSON_STRING, st_status_text, COL_STATUS, "STATUS", 0,
        NULL, cell_status},
    {"activities", CLI_JSON_RAW, st_activities, -1, NULL, 0, NULL, NULL},
    {"activity", CLI_JSON_STRING, st_activity, COL_ACTIVITY, "ACTIVITY", 0,
        NULL, cell_activity},
    {"activity_age_ms", CLI_JSON_RAW, st_activity_age_ms, -1, NULL, 0, NULL,
        NULL},
};

#define STATUS_NFIELDS (sizeof status_fields / sizeof status_fields[0])

/*
 * status_failed prints, for each failed group of g,
 *   group GROUP failed: REASON (supervisectl reset GROUP)
 */
static void
status_failed(const sv_groups *g)
{
	size_t n = sv_groups_count(g), i;

	for (i = 0; i < n; i++) {
		const char *reason = sv_groups_failure_reason(g, i);

		if (!sv_groups_failed(g, i))
			continue;
		fputs("group ", stdout);
		cli_put_clean(stdout, sv_groups_name(g, i));
		fputs(" failed: ", stdout);
		cli_put_clean(stdout,
		    reason[0] != '\0' ? reason : "restart intensity exceeded");
		fputs(" (" CLI_PROG " reset ", stdout);
		cli_put_clean(stdout, sv_groups_name(g, i));
		puts(")");
	}
}

/* cli_status_show prints w as status does (also for top, cmd_top.c). */
void
cli_status_show(const struct cli *cli, const sv_workers *w)
{
	if (cli->json)
		cli_fields_json(
		    status_fields, STATUS_NFIELDS, w, sv_workers_count(w));
	else
		cli_fields_table(
		    status_fields, STATUS_NFIELDS, w, sv_workers_count(w));
}

/* cmd_status lists the workers of every group, or of argv[0]. */
int
cmd_status(const struct cli *cli, int argc, char **argv)
{
	const char *group = argc > 0 ? argv[0] : NULL;
	sv_client  *client;
	sv_workers *w;
	sv_groups  *g = NULL;
	sv_err      err;
	int         rc;

	if (group != NULL && (rc = cli_check_group("status", group)) != 0)
		return rc;
	if ((rc = cli_connect(cli, &client)) != 0)
		return rc;
	err = sv_client_list(client, group, cli_timeout(cli), &w);
	if (err != SV_OK) {
		rc = group != NULL ? cli_error(client, err, "status %s", group)
		                   : cli_error(client, err, "status");
		sv_client_close(client);
		return rc;
	}
	if (!cli->json) {
		err = sv_client_groups(client, group, cli_timeout(cli), &g);
		/* A typed refusal (an older supervisor without ListGroups, or
		 * GROUP deleted meanwhile) only costs the failed lines. */
		if (err != SV_OK && cli_exit_code(err) != CLI_EXIT_ANSWER) {
			rc = cli_error(client, err, "status: list groups");
			sv_workers_free(w);
			sv_client_close(client);
			return rc;
		}
	}
	if (cli->json) {
		cli_status_show(cli, w);
	} else {
		sv_hello *h = NULL;

		cli_status_show(cli, w);
		if (g != NULL)
			status_failed(g);
		/* Best effort: a failed Hello only costs this line. */
		if (sv_client_hello(client, cli_timeout(cli), &h) == SV_OK)
			(void) cli_durability_line(h);
		sv_hello_free(h);
	}
	sv_groups_free(g);
	sv_workers_free(w);
	sv_client_close(client);
	return CLI_EXIT_OK;
}
