/*
 * cmd_groups.c — the group-level subcommands: `groups [GROUP]` (one
 * ListGroups call) and `reset GROUP` (ResetGroup).
 *
 * Design: `groups` prints the supervisor's per-group counters as a table
 * for people,
 *   GROUP  COUNT  RUNNING  READY  STARTING  STOPPING  BACKOFF  RESTART
 *   STRATEGY  FAILED
 * where COUNT is "held/max_count" and FAILED, last because it carries free
 * text, is "no" or "yes: REASON"; or, with --json, an array with one
 * object per group holding every field of GroupInfo, purpose included. The
 * table is measured in a first pass, like status, so it needs no
 * allocation. `reset` clears the failed state and restart history of a
 * group and prints "GROUP: reset" ({"group"} in JSON); the workers start
 * asynchronously, so a script that needs them polls `status` or follows
 * `events`.
 *
 * Layout: groups_cells, groups_table, groups_json, cmd_groups, cmd_reset.
 */
#include "cli.h"
#include "json.h"

#include <inttypes.h>
#include <string.h>

/* Column indexes, in display order. */
enum {
	GCOL_GROUP,
	GCOL_COUNT,
	GCOL_RUNNING,
	GCOL_READY,
	GCOL_STARTING,
	GCOL_STOPPING,
	GCOL_BACKOFF,
	GCOL_RESTART,
	GCOL_STRATEGY,
	GCOL_FAILED,
	GCOL_N
};

static const char *const groups_headers[GCOL_N]
    = {"GROUP", "COUNT", "RUNNING", "READY", "STARTING", "STOPPING", "BACKOFF",
        "RESTART", "STRATEGY", "FAILED"};

/* The formatted numeric cells of one row. */
struct groups_row {
	char num[GCOL_N][24];
};

/*
 * groups_cells formats the cells of group i of g into row and points
 * cells[0..GCOL_FAILED) at them (strings of g or of row).
 */
static void
groups_cells(const sv_groups *g, size_t i, struct groups_row *row,
    const char *cells[GCOL_FAILED])
{
	snprintf(row->num[GCOL_COUNT], sizeof row->num[0],
	    "%" PRIu32 "/%" PRIu32, sv_groups_count_wanted(g, i),
	    sv_groups_max_count(g, i));
	snprintf(row->num[GCOL_RUNNING], sizeof row->num[0], "%" PRIu32,
	    sv_groups_running(g, i));
	snprintf(row->num[GCOL_READY], sizeof row->num[0], "%" PRIu32,
	    sv_groups_ready(g, i));
	snprintf(row->num[GCOL_STARTING], sizeof row->num[0], "%" PRIu32,
	    sv_groups_starting(g, i));
	snprintf(row->num[GCOL_STOPPING], sizeof row->num[0], "%" PRIu32,
	    sv_groups_stopping(g, i));
	snprintf(row->num[GCOL_BACKOFF], sizeof row->num[0], "%" PRIu32,
	    sv_groups_backoff(g, i));
	cells[GCOL_GROUP]    = sv_groups_name(g, i);
	cells[GCOL_COUNT]    = row->num[GCOL_COUNT];
	cells[GCOL_RUNNING]  = row->num[GCOL_RUNNING];
	cells[GCOL_READY]    = row->num[GCOL_READY];
	cells[GCOL_STARTING] = row->num[GCOL_STARTING];
	cells[GCOL_STOPPING] = row->num[GCOL_STOPPING];
	cells[GCOL_BACKOFF]  = row->num[GCOL_BACKOFF];
	cells[GCOL_RESTART]  = sv_groups_restart(g, i);
	cells[GCOL_STRATEGY] = sv_groups_strategy(g, i);
}

/* groups_cell prints s padded to width (right-aligned if right) and the
 * two-space column gap; control characters are replaced. */
static void
groups_cell(const char *s, size_t width, int right)
{
	size_t len = strlen(s);
	int    pad = (int) (width > len ? width - len : 0);

	if (right)
		printf("%*s", pad, "");
	cli_put_clean(stdout, s);
	if (!right)
		printf("%*s", pad, "");
	fputs("  ", stdout);
}

/* groups_table prints g as an aligned table with a header line. */
static void
groups_table(const sv_groups *g)
{
	size_t            width[GCOL_N], n = sv_groups_count(g), i, c;
	struct groups_row row;
	const char       *cells[GCOL_FAILED];

	for (c = 0; c < GCOL_N; c++)
		width[c] = strlen(groups_headers[c]);
	for (i = 0; i < n; i++) {
		groups_cells(g, i, &row, cells);
		for (c = 0; c < GCOL_FAILED; c++)
			if (strlen(cells[c]) > width[c])
				width[c] = strlen(cells[c]);
	}
	for (c = 0; c < GCOL_FAILED; c++)
		groups_cell(groups_headers[c], width[c],
		    c != GCOL_GROUP && c != GCOL_RESTART
		        && c != GCOL_STRATEGY);
	puts(groups_headers[GCOL_FAILED]);
	for (i = 0; i < n; i++) {
		groups_cells(g, i, &row, cells);
		for (c = 0; c < GCOL_FAILED; c++)
			groups_cell(cells[c], width[c],
			    c != GCOL_GROUP && c != GCOL_RESTART
			        && c != GCOL_STRATEGY);
		if (sv_groups_failed(g, i)) {
			fputs("yes: ", stdout);
			cli_put_clean(stdout, sv_groups_failure_reason(g, i));
			putchar('\n');
		} else {
			puts("no");
		}
	}
}

/* groups_json prints g as a JSON array of objects, one per line. */
static void
groups_json(const sv_groups *g)
{
	size_t n = sv_groups_count(g), i;

	if (n == 0) {
		puts("[]");
		return;
	}
	puts("[");
	for (i = 0; i < n; i++) {
		int first = 1;

		fputs("  {", stdout);
		json_key(stdout, &first, "group");
		json_string(stdout, sv_groups_name(g, i));
		json_key(stdout, &first, "count");
		printf("%" PRIu32, sv_groups_count_wanted(g, i));
		json_key(stdout, &first, "max_count");
		printf("%" PRIu32, sv_groups_max_count(g, i));
		json_key(stdout, &first, "running");
		printf("%" PRIu32, sv_groups_running(g, i));
		json_key(stdout, &first, "ready");
		printf("%" PRIu32, sv_groups_ready(g, i));
		json_key(stdout, &first, "starting");
		printf("%" PRIu32, sv_groups_starting(g, i));
		json_key(stdout, &first, "stopping");
		printf("%" PRIu32, sv_groups_stopping(g, i));
		json_key(stdout, &first, "backoff");
		printf("%" PRIu32, sv_groups_backoff(g, i));
		json_key(stdout, &first, "restart");
		json_string(stdout, sv_groups_restart(g, i));
		json_key(stdout, &first, "strategy");
		json_string(stdout, sv_groups_strategy(g, i));
		json_key(stdout, &first, "failed");
		fputs(sv_groups_failed(g, i) ? "true" : "false", stdout);
		json_key(stdout, &first, "failure_reason");
		json_string(stdout, sv_groups_failure_reason(g, i));
		json_key(stdout, &first, "purpose");
		json_string(stdout, sv_groups_purpose(g, i));
		fputs(i + 1 < n ? "},\n" : "}\n", stdout);
	}
	puts("]");
}

/* cmd_groups lists every group, or group argv[0]. */
int
cmd_groups(const struct cli *cli, int argc, char **argv)
{
	const char *group = argc > 0 ? argv[0] : NULL;
	sv_client  *client;
	sv_groups  *g;
	sv_err      err;
	int         rc;

	if (group != NULL && (rc = cli_check_group("groups", group)) != 0)
		return rc;
	if ((rc = cli_connect(cli, &client)) != 0)
		return rc;
	err = sv_client_groups(client, group, cli_timeout(cli), &g);
	if (err != SV_OK) {
		rc = group != NULL ? cli_error(client, err, "groups %s", group)
		                   : cli_error(client, err, "groups");
		sv_client_close(client);
		return rc;
	}
	if (cli->json)
		groups_json(g);
	else
		groups_table(g);
	sv_groups_free(g);
	sv_client_close(client);
	return CLI_EXIT_OK;
}

/* cmd_reset clears the failed state of group argv[0]. */
int
cmd_reset(const struct cli *cli, int argc, char **argv)
{
	(void) argc;
	return cli_group_call(cli, "reset", argv[0], sv_client_reset, "reset");
}
