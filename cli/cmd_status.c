/*
 * cmd_status.c — `supervisectl status [GROUP]`: list worker slots.
 *
 * Design: one ListWorkers call (every group, or GROUP; the library follows
 * the pages) and one ListGroups call for the failed groups, then either a
 * table for people or a JSON array for programs. The table is laid out in
 * two passes over the reply, the first measuring every column, so it needs
 * no allocation however many workers there are. The two free-text columns
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
 * Layout: status_cells, status_cell, status_table, status_failed,
 * status_json, cmd_status.
 */
#include "cli.h"
#include "json.h"

#include <inttypes.h>
#include <string.h>

/* The formatted cells of one row of the table. */
struct status_row {
	char        ordinal[16];
	char        generation[24];
	char        pid[24];
	const char *ready;
	char        uptime[CLI_UPTIME_BUFSZ];
	char        purpose[CLI_TEXT_COL_MAX + 1];
	char        activity[CLI_TEXT_COL_MAX + 48];
	char        status[CLI_TEXT_COL_MAX + 1];
};

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
	COL_STATUS,
	COL_N
};

static const char *const status_headers[COL_N]
    = {"GROUP", "ORDINAL", "GENERATION", "PID", "STATE", "READY", "UPTIME",
        "PURPOSE", "ACTIVITY", "STATUS"};

/* status_cells formats the cells of worker i of w into *row. */
static void
status_cells(const sv_workers *w, size_t i, struct status_row *row)
{
	int64_t     pid    = sv_workers_pid(w, i);
	const char *status = sv_workers_status_text(w, i);

	snprintf(row->ordinal, sizeof row->ordinal, "%" PRIu32,
	    sv_workers_ordinal(w, i));
	snprintf(row->generation, sizeof row->generation, "%" PRIu64,
	    sv_workers_generation(w, i));
	if (pid > 0) {
		snprintf(row->pid, sizeof row->pid, "%" PRId64, pid);
		cli_fmt_uptime(row->uptime, sizeof row->uptime,
		    sv_workers_uptime_ms(w, i));
		row->ready = sv_workers_ready(w, i) ? "yes" : "no";
	} else {
		strcpy(row->pid, "-");
		strcpy(row->uptime, "-");
		row->ready = "-";
	}
	cli_fmt_trunc(row->purpose, sizeof row->purpose,
	    sv_workers_purpose(w, i), CLI_TEXT_COL_MAX);
	cli_fmt_trunc(row->status, sizeof row->status,
	    status[0] != '\0' ? status : "-", CLI_TEXT_COL_MAX);
	cli_fmt_activity(row->activity, sizeof row->activity, w, i);
}

/*
 * status_cell prints s padded to width, left- or right-aligned, followed by
 * the two-space column gap. Control characters in s are replaced.
 */
static void
status_cell(const char *s, size_t width, int right)
{
	size_t len = strlen(s);

	if (right)
		printf("%*s", (int) (width > len ? width - len : 0), "");
	cli_put_clean(stdout, s);
	if (!right)
		printf("%*s", (int) (width > len ? width - len : 0), "");
	fputs("  ", stdout);
}

/* status_table prints w as an aligned table with a header line. */
static void
status_table(const sv_workers *w)
{
	size_t            width[COL_N], n = sv_workers_count(w), i, c;
	struct status_row row;

	for (c = 0; c < COL_N; c++)
		width[c] = strlen(status_headers[c]);
	for (i = 0; i < n; i++) {
		const char *cells[COL_STATUS];

		status_cells(w, i, &row);
		cells[COL_GROUP]    = sv_workers_group(w, i);
		cells[COL_ORDINAL]  = row.ordinal;
		cells[COL_GEN]      = row.generation;
		cells[COL_PID]      = row.pid;
		cells[COL_STATE]    = sv_state_name(sv_workers_state(w, i));
		cells[COL_READY]    = row.ready;
		cells[COL_UPTIME]   = row.uptime;
		cells[COL_PURPOSE]  = row.purpose;
		cells[COL_ACTIVITY] = row.activity;
		for (c = 0; c < COL_STATUS; c++)
			if (strlen(cells[c]) > width[c])
				width[c] = strlen(cells[c]);
	}

	for (c = 0; c < COL_STATUS; c++)
		status_cell(status_headers[c], width[c],
		    c != COL_GROUP && c != COL_STATE && c != COL_READY
		        && c != COL_PURPOSE && c != COL_ACTIVITY);
	puts(status_headers[COL_STATUS]);
	for (i = 0; i < n; i++) {
		status_cells(w, i, &row);
		status_cell(sv_workers_group(w, i), width[COL_GROUP], 0);
		status_cell(row.ordinal, width[COL_ORDINAL], 1);
		status_cell(row.generation, width[COL_GEN], 1);
		status_cell(row.pid, width[COL_PID], 1);
		status_cell(sv_state_name(sv_workers_state(w, i)),
		    width[COL_STATE], 0);
		status_cell(row.ready, width[COL_READY], 0);
		status_cell(row.uptime, width[COL_UPTIME], 1);
		status_cell(row.purpose, width[COL_PURPOSE], 0);
		status_cell(row.activity, width[COL_ACTIVITY], 0);
		cli_put_clean(stdout, row.status);
		putchar('\n');
	}
}

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

/* status_json prints w as a JSON array of objects, one per line. */
static void
status_json(const sv_workers *w)
{
	size_t n = sv_workers_count(w), i;

	if (n == 0) {
		puts("[]");
		return;
	}
	puts("[");
	for (i = 0; i < n; i++) {
		int first = 1;

		fputs("  {", stdout);
		json_key(stdout, &first, "group");
		json_string(stdout, sv_workers_group(w, i));
		json_key(stdout, &first, "ordinal");
		printf("%" PRIu32, sv_workers_ordinal(w, i));
		json_key(stdout, &first, "generation");
		printf("%" PRIu64, sv_workers_generation(w, i));
		json_key(stdout, &first, "pid");
		printf("%" PRId64, sv_workers_pid(w, i));
		json_key(stdout, &first, "state");
		json_string(stdout, sv_state_name(sv_workers_state(w, i)));
		json_key(stdout, &first, "uptime_ms");
		printf("%" PRIu64, sv_workers_uptime_ms(w, i));
		json_key(stdout, &first, "purpose");
		json_string(stdout, sv_workers_purpose(w, i));
		json_key(stdout, &first, "restarts");
		printf("%" PRIu64, sv_workers_restarts(w, i));
		json_key(stdout, &first, "last_exit_code");
		printf("%" PRId32, sv_workers_last_exit_code(w, i));
		json_key(stdout, &first, "last_signal");
		printf("%" PRId32, sv_workers_last_signal(w, i));
		json_key(stdout, &first, "ready");
		fputs(sv_workers_ready(w, i) ? "true" : "false", stdout);
		json_key(stdout, &first, "fast_failures");
		printf("%" PRIu32, sv_workers_fast_failures(w, i));
		json_key(stdout, &first, "restart_in_ms");
		printf("%" PRIu64, sv_workers_restart_in_ms(w, i));
		json_key(stdout, &first, "status_text");
		json_string(stdout, sv_workers_status_text(w, i));
		json_key(stdout, &first, "activities");
		printf("%" PRIu32, sv_workers_activities(w, i));
		json_key(stdout, &first, "activity");
		json_string(stdout, sv_workers_activity(w, i));
		json_key(stdout, &first, "activity_age_ms");
		printf("%" PRIu64, sv_workers_activity_age_ms(w, i));
		fputs(i + 1 < n ? "},\n" : "}\n", stdout);
	}
	puts("]");
}

/* cli_status_show prints w as status does (also for top, cmd_top.c). */
void
cli_status_show(const struct cli *cli, const sv_workers *w)
{
	if (cli->json)
		status_json(w);
	else
		status_table(w);
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
		status_json(w);
	} else {
		sv_hello *h = NULL;

		status_table(w);
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
