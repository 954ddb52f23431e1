/*
 * cmd_admin.c — the administration subcommands: scale, stop, restart.
 *
 * Design: each one checks its arguments before connecting (so a typo costs
 * no round trip and exits 100), sends one request, and prints one line:
 *   scale GROUP N          GROUP: PREVIOUS -> N
 *   stop GROUP             GROUP: PREVIOUS -> 0
 *   restart GROUP ORDINAL  GROUP/ORDINAL: restarting
 * or, with --json, one object: {"group", "previous_count", "count"} for
 * scale and stop, {"group", "ordinal"} for restart. The requests return once
 * the supervisor has accepted the change; the processes start and stop
 * asynchronously, so callers that need the new state poll `status`.
 *
 * Layout: admin_change (shared output), cmd_scale, cmd_stop, cmd_restart.
 */
#include "cli.h"
#include "json.h"

#include <inttypes.h>

/* admin_change prints the result of scale or stop. */
static void
admin_change(const struct cli *cli, const char *group, uint32_t previous,
    uint32_t count)
{
	int first = 1;

	if (!cli->json) {
		printf("%s: %" PRIu32 " -> %" PRIu32 "\n", group, previous,
		    count);
		return;
	}
	putchar('{');
	json_key(stdout, &first, "group");
	json_string(stdout, group);
	json_key(stdout, &first, "previous_count");
	printf("%" PRIu32, previous);
	json_key(stdout, &first, "count");
	printf("%" PRIu32 "}\n", count);
}

/* cmd_scale sets the target size of group argv[0] to argv[1]. */
int
cmd_scale(const struct cli *cli, int argc, char **argv)
{
	const char *group = argv[0];
	sv_client  *client;
	uint32_t    count, previous = 0;
	sv_err      err;
	int         rc;

	(void) argc;
	if ((rc = cli_check_group("scale", group)) != 0)
		return rc;
	if (cli_parse_u32(argv[1], UINT32_MAX, &count) != 0)
		return cli_usage_error("scale",
		    "count \"%s\" is not a decimal number in 0..%" PRIu32,
		    argv[1], UINT32_MAX);
	if ((rc = cli_connect(cli, &client)) != 0)
		return rc;
	err = sv_client_scale(
	    client, group, count, cli->timeout_ms, &previous);
	if (err != SV_OK)
		rc = cli_error(
		    client, err, "scale %s to %" PRIu32, group, count);
	else
		admin_change(cli, group, previous, count);
	sv_client_close(client);
	return rc;
}

/* cmd_stop stops every worker of group argv[0]. */
int
cmd_stop(const struct cli *cli, int argc, char **argv)
{
	const char *group = argv[0];
	sv_client  *client;
	uint32_t    previous = 0;
	sv_err      err;
	int         rc;

	(void) argc;
	if ((rc = cli_check_group("stop", group)) != 0)
		return rc;
	if ((rc = cli_connect(cli, &client)) != 0)
		return rc;
	err = sv_client_stop(client, group, cli->timeout_ms, &previous);
	if (err != SV_OK)
		rc = cli_error(client, err, "stop %s", group);
	else
		admin_change(cli, group, previous, 0);
	sv_client_close(client);
	return rc;
}

/* cmd_restart restarts worker argv[1] of group argv[0]. */
int
cmd_restart(const struct cli *cli, int argc, char **argv)
{
	const char *group = argv[0];
	sv_client  *client;
	uint32_t    ordinal;
	sv_err      err;
	int         rc, first = 1;

	(void) argc;
	if ((rc = cli_check_group("restart", group)) != 0)
		return rc;
	if (cli_parse_u32(argv[1], UINT32_MAX, &ordinal) != 0)
		return cli_usage_error("restart",
		    "ordinal \"%s\" is not a decimal number in 0..%" PRIu32,
		    argv[1], UINT32_MAX);
	if ((rc = cli_connect(cli, &client)) != 0)
		return rc;
	err = sv_client_restart(client, group, ordinal, cli->timeout_ms);
	if (err != SV_OK) {
		rc = cli_error(
		    client, err, "restart %s/%" PRIu32, group, ordinal);
	} else if (cli->json) {
		putchar('{');
		json_key(stdout, &first, "group");
		json_string(stdout, group);
		json_key(stdout, &first, "ordinal");
		printf("%" PRIu32 "}\n", ordinal);
	} else {
		printf("%s/%" PRIu32 ": restarting\n", group, ordinal);
	}
	sv_client_close(client);
	return rc;
}
