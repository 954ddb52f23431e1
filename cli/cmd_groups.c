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
 * object per group holding every field of GroupInfo, purpose included.
 * Every field shown is one line of groups_fields (fields.h), which both
 * the JSON and the table emitters walk. `reset` clears the failed state and
 * restart history of a group and prints "GROUP: reset" ({"group"} in JSON);
 * the workers start asynchronously, so a script that needs them polls `status`
 * or follows `events`.
 *
 * Layout: the getters, groups_fields, cmd_groups, cmd_reset.
 */
#include "cli.h"
#include "fields.h"

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
	GCOL_FAILED
};

/* Defines a getter NAME of a group's ACCESSOR (a uint32_t). */
#define GROUPS_NUM(name, accessor)                          \
	static const char *name(                            \
	    const void *r, size_t i, char *buf, size_t len) \
	{                                                   \
		snprintf(buf, len, "%" PRIu32,              \
		    accessor((const sv_groups *) r, i));    \
		return buf;                                 \
	}

/* Defines a getter NAME of a group's ACCESSOR (a string of the reply). */
#define GROUPS_STR(name, accessor)                          \
	static const char *name(                            \
	    const void *r, size_t i, char *buf, size_t len) \
	{                                                   \
		(void) buf;                                 \
		(void) len;                                 \
		return accessor((const sv_groups *) r, i);  \
	}

GROUPS_STR(gr_name, sv_groups_name)
GROUPS_NUM(gr_count, sv_groups_count_wanted)
GROUPS_NUM(gr_max_count, sv_groups_max_count)
GROUPS_NUM(gr_running, sv_groups_running)
GROUPS_NUM(gr_ready, sv_groups_ready)
GROUPS_NUM(gr_starting, sv_groups_starting)
GROUPS_NUM(gr_stopping, sv_groups_stopping)
GROUPS_NUM(gr_backoff, sv_groups_backoff)
GROUPS_STR(gr_restart, sv_groups_restart)
GROUPS_STR(gr_strategy, sv_groups_strategy)
GROUPS_STR(gr_failure_reason, sv_groups_failure_reason)
GROUPS_STR(gr_purpose, sv_groups_purpose)

/* gr_failed is "true" or "false" (JSON). */
static const char *
gr_failed(const void *r, size_t i, char *buf, size_t len)
{
	(void) buf;
	(void) len;
	return sv_groups_failed((const sv_groups *) r, i) ? "true" : "false";
}

/* cell_count is the COUNT cell: held/max_count. */
static const char *
cell_count(const void *r, size_t i, char *buf, size_t len)
{
	const sv_groups *g = r;

	snprintf(buf, len, "%" PRIu32 "/%" PRIu32,
	    sv_groups_count_wanted(g, i), sv_groups_max_count(g, i));
	return buf;
}

/* lead_failed is what the FAILED cell starts with: "yes: " before the
 * reason when the group failed. */
static const char *
lead_failed(const void *r, size_t i, char *buf, size_t len)
{
	(void) buf;
	(void) len;
	return sv_groups_failed((const sv_groups *) r, i) ? "yes: " : "";
}

/* cell_failed is the rest of the FAILED cell: the reason, or "no". */
static const char *
cell_failed(const void *r, size_t i, char *buf, size_t len)
{
	(void) buf;
	(void) len;
	return sv_groups_failed((const sv_groups *) r, i)
	    ? sv_groups_failure_reason((const sv_groups *) r, i)
	    : "no";
}

/* A group's fields: the JSON keys in their order, and the columns. */
static const struct cli_field groups_fields[] = {
    {"group", CLI_JSON_STRING, gr_name, GCOL_GROUP, "GROUP", 0, NULL, gr_name},
    {"count", CLI_JSON_RAW, gr_count, GCOL_COUNT, "COUNT", 1, NULL,
        cell_count},
    {"max_count", CLI_JSON_RAW, gr_max_count, -1, NULL, 0, NULL, NULL},
    {"running", CLI_JSON_RAW, gr_running, GCOL_RUNNING, "RUNNING", 1, NULL,
        gr_running},
    {"ready", CLI_JSON_RAW, gr_ready, GCOL_READY, "READY", 1, NULL, gr_ready},
    {"starting", CLI_JSON_RAW, gr_starting, GCOL_STARTING, "STARTING", 1, NULL,
        gr_starting},
    {"stopping", CLI_JSON_RAW, gr_stopping, GCOL_STOPPING, "STOPPING", 1, NULL,
        gr_stopping},
    {"backoff", CLI_JSON_RAW, gr_backoff, GCOL_BACKOFF, "BACKOFF", 1, NULL,
        gr_backoff},
    {"restart", CLI_JSON_STRING, gr_restart, GCOL_RESTART, "RESTART", 0, NULL,
        gr_restart},
    {"strategy", CLI_JSON_STRING, gr_strategy, GCOL_STRATEGY, "STRATEGY", 0,
        NULL, gr_strategy},
    {"failed", CLI_JSON_RAW, gr_failed, GCOL_FAILED, "FAILED", 0, lead_failed,
        cell_failed},
    {"failure_reason", CLI_JSON_STRING, gr_failure_reason, -1, NULL, 0, NULL,
        NULL},
    {"purpose", CLI_JSON_STRING, gr_purpose, -1, NULL, 0, NULL, NULL},
};

#define GROUPS_NFIELDS (sizeof groups_fields / sizeof groups_fields[0])

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
		cli_fields_json(
		    groups_fields, GROUPS_NFIELDS, g, sv_groups_count(g));
	else
		cli_fields_table(
		    groups_fields, GROUPS_NFIELDS, g, sv_groups_count(g));
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
