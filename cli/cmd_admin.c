/*
 * cmd_admin.c — the administration subcommands that change a group's size
 * or one worker: scale, stop, restart, start, terminate.
 *
 * Design: each one checks its arguments before connecting (so a typo costs
 * no round trip and exits 100), sends one request, and prints one line:
 *   scale GROUP N              GROUP: PREVIOUS -> N
 *   stop GROUP                 GROUP: PREVIOUS -> 0
 *   restart GROUP ORDINAL      GROUP/ORDINAL: restarting
 *   start GROUP                ORDINAL (the new worker's, alone, for $(...))
 *   terminate GROUP ORDINAL    GROUP/ORDINAL: terminating
 * or, with --json, one object: {"group", "previous_count", "count"} for
 * scale and stop, {"group", "ordinal"} for the others (restart adds
 * "expected_generation" when it was given). `restart --expect-generation G`
 * is a compare-and-swap (sv_client_restart_if): a worker whose generation
 * is no longer G is left alone and the supervisor's CONFLICT exits 1. The
 * requests return once the supervisor has accepted the change; the
 * processes start and stop asynchronously, so callers that need the new
 * state poll `status` or follow `events`.
 *
 * Layout: admin_change and admin_worker (shared output), admin_ordinal
 * (argument), cmd_scale, cmd_stop, cmd_restart, cmd_start, cmd_terminate.
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

/*
 * admin_worker prints the result of a command about one worker: "GROUP/
 * ORDINAL: verb", or {"group","ordinal"} plus "expected_generation" when
 * expected is not NULL.
 */
static void
admin_worker(const struct cli *cli, const char *group, uint32_t ordinal,
    const char *verb, const uint64_t *expected)
{
	int first = 1;

	if (!cli->json) {
		printf("%s/%" PRIu32 ": %s\n", group, ordinal, verb);
		return;
	}
	putchar('{');
	json_key(stdout, &first, "group");
	json_string(stdout, group);
	json_key(stdout, &first, "ordinal");
	printf("%" PRIu32, ordinal);
	if (expected != NULL) {
		json_key(stdout, &first, "expected_generation");
		printf("%" PRIu64, *expected);
	}
	puts("}");
}

/*
 * admin_ordinal parses the ordinal s for command cmd. Returns CLI_EXIT_OK,
 * or CLI_EXIT_USAGE after printing the error.
 */
static int
admin_ordinal(const char *cmd, const char *s, uint32_t *ordinalp)
{
	if (cli_parse_u32(s, UINT32_MAX, ordinalp) != 0)
		return cli_usage_error(cmd,
		    "ordinal \"%s\" is not a decimal number in 0..%" PRIu32, s,
		    UINT32_MAX);
	return CLI_EXIT_OK;
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
	    client, group, count, cli_timeout(cli), &previous);
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
	err = sv_client_stop(client, group, cli_timeout(cli), &previous);
	if (err != SV_OK)
		rc = cli_error(client, err, "stop %s", group);
	else
		admin_change(cli, group, previous, 0);
	sv_client_close(client);
	return rc;
}

/* cmd_restart restarts worker argv[1] of group argv[0], only if its
 * generation is still --expect-generation when that is given. */
int
cmd_restart(const struct cli *cli, int argc, char **argv)
{
	const char *group = argv[0],
	           *g_opt = cli_opt(cli, "expect-generation");
	sv_client *client;
	uint32_t   ordinal;
	uint64_t   expected = 0;
	sv_err     err;
	int        rc;

	(void) argc;
	if ((rc = cli_check_group("restart", group)) != 0
	    || (rc = admin_ordinal("restart", argv[1], &ordinal)) != 0)
		return rc;
	if (g_opt != NULL && cli_parse_u64(g_opt, UINT64_MAX, &expected) != 0)
		return cli_usage_error("restart",
		    "generation \"%s\" is not a decimal number in 0..%" PRIu64,
		    g_opt, UINT64_MAX);
	if ((rc = cli_connect(cli, &client)) != 0)
		return rc;
	if (g_opt != NULL)
		err = sv_client_restart_if(
		    client, group, ordinal, expected, cli_timeout(cli));
	else
		err = sv_client_restart(
		    client, group, ordinal, cli_timeout(cli));
	if (err != SV_OK && g_opt != NULL)
		rc = cli_error(client, err,
		    "restart %s/%" PRIu32 " at generation %" PRIu64, group,
		    ordinal, expected);
	else if (err != SV_OK)
		rc = cli_error(
		    client, err, "restart %s/%" PRIu32, group, ordinal);
	else
		admin_worker(cli, group, ordinal, "restarting",
		    g_opt != NULL ? &expected : NULL);
	sv_client_close(client);
	return rc;
}

/* cmd_start starts one more worker of group argv[0] and prints its
 * ordinal. */
int
cmd_start(const struct cli *cli, int argc, char **argv)
{
	const char *group = argv[0];
	sv_client  *client;
	uint32_t    ordinal = 0;
	sv_err      err;
	int         rc;

	(void) argc;
	if ((rc = cli_check_group("start", group)) != 0)
		return rc;
	if ((rc = cli_connect(cli, &client)) != 0)
		return rc;
	err = sv_client_start_worker(
	    client, group, cli_timeout(cli), &ordinal);
	if (err != SV_OK)
		rc = cli_error(client, err, "start %s", group);
	else if (cli->json)
		admin_worker(cli, group, ordinal, NULL, NULL);
	else
		printf("%" PRIu32 "\n", ordinal);
	sv_client_close(client);
	return rc;
}

/* cmd_terminate stops worker argv[1] of group argv[0] and releases its
 * ordinal. */
int
cmd_terminate(const struct cli *cli, int argc, char **argv)
{
	const char *group = argv[0];
	sv_client  *client;
	uint32_t    ordinal;
	sv_err      err;
	int         rc;

	(void) argc;
	if ((rc = cli_check_group("terminate", group)) != 0
	    || (rc = admin_ordinal("terminate", argv[1], &ordinal)) != 0)
		return rc;
	if ((rc = cli_connect(cli, &client)) != 0)
		return rc;
	err = sv_client_terminate_worker(
	    client, group, ordinal, cli_timeout(cli));
	if (err != SV_OK)
		rc = cli_error(
		    client, err, "terminate %s/%" PRIu32, group, ordinal);
	else
		admin_worker(cli, group, ordinal, "terminating", NULL);
	sv_client_close(client);
	return rc;
}
