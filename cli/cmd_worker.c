/*
 * cmd_worker.c — what a worker says about itself:
 *   ready [STATUS] [-- PROGRAM [ARGS...]]
 *   heartbeat [-- PROGRAM [ARGS...]]
 *
 * Design: one Ready (with the optional status line) or Heartbeat request.
 * The supervisor identifies the caller by the kernel's credentials of the
 * connection and hears only the worker process itself: run anywhere else,
 * supervisectl gets NOT_A_WORKER (exit 1, as whoami), and run as a child
 * of a worker — `supervisectl ready` as a plain command of the worker's
 * shell script — it gets PERMISSION_DENIED (exit 1). A shell script
 * therefore reports with exec, which keeps its pid:
 *   exec supervisectl ready "listening on :8080" -- /usr/bin/server ...
 * After a successful request, the words after "--" are executed in place
 * of supervisectl (execvp, so PROGRAM is searched in PATH); the worker
 * keeps its pid, its environment and its descriptors. Chains compose:
 *   exec supervisectl ready up -- supervisectl heartbeat -- prog
 * A failed request exits 1 or 111 without running PROGRAM; a PROGRAM that
 * cannot be executed is a system failure (exit 111). Nothing is printed on
 * success, with or without --json: there is no data to show.
 *
 * Layout: worker_exec, worker_request, cmd_ready, cmd_heartbeat.
 */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Longest status line the protocol takes (client.h, sv_client_ready). */
#define WORKER_STATUS_MAX 1024

/*
 * worker_exec replaces the process with prog[0..n) (n >= 1). It returns
 * only on failure, with the exit code after printing the error.
 */
static int
worker_exec(const char *cmd, char **prog, int n)
{
	char **args = calloc((size_t) n + 1, sizeof *args);
	int    e;

	if (args == NULL)
		return cli_error_detail(SV_ENOMEM, NULL, "%s", cmd);
	memcpy(args, prog, (size_t) n * sizeof *args);
	if (fflush(stdout) != 0) {
		e = errno;
		free(args);
		return cli_error_detail(SV_ESYSTEM, strerror(e),
		    "%s: write to standard output", cmd);
	}
	execvp(args[0], args);
	e = errno;
	free(args);
	return cli_error_detail(
	    SV_ESYSTEM, strerror(e), "%s: exec %s", cmd, prog[0]);
}

/*
 * worker_request sends Ready (status, may be NULL) when ready is set,
 * Heartbeat otherwise, then executes prog[0..nprog) when nprog > 0.
 * Returns the exit code.
 */
static int
worker_request(const struct cli *cli, int ready, const char *status,
    char **prog, int nprog)
{
	const char *cmd = ready ? "ready" : "heartbeat";
	sv_client  *client;
	sv_err      err;
	int         rc;

	if ((rc = cli_connect(cli, &client)) != 0)
		return rc;
	err = ready ? sv_client_ready(client, status, cli_timeout(cli))
	            : sv_client_heartbeat(client, cli_timeout(cli));
	if (err != SV_OK) {
		rc = cli_error(client, err, "%s", cmd);
		sv_client_close(client);
		return rc;
	}
	sv_client_close(client);
	if (nprog > 0)
		return worker_exec(cmd, prog, nprog);
	return CLI_EXIT_OK;
}

/* cmd_ready reports the calling worker ready, with status argv[0] when
 * given before "--", then runs the program after "--" if any. */
int
cmd_ready(const struct cli *cli, int argc, char **argv)
{
	int         nstatus = cli->ndash >= 0 ? cli->ndash : argc;
	const char *status  = nstatus > 0 ? argv[0] : NULL;

	if (nstatus > 1)
		return cli_usage_error("ready",
		    "one STATUS word at most (quote it); usage: " CLI_PROG
		    " ready [STATUS] [-- PROGRAM [ARGS...]]");
	if (cli->ndash >= 0 && argc == nstatus)
		return cli_usage_error(
		    "ready", "a program must follow \"--\"");
	if (status != NULL && strlen(status) > WORKER_STATUS_MAX)
		return cli_usage_error("ready",
		    "status of %zu bytes; at most %d", strlen(status),
		    WORKER_STATUS_MAX);
	return worker_request(cli, 1, status, argv + nstatus, argc - nstatus);
}

/* cmd_heartbeat feeds the calling worker's watchdog, then runs the
 * program after "--" if any. */
int
cmd_heartbeat(const struct cli *cli, int argc, char **argv)
{
	if ((cli->ndash < 0 && argc > 0) || cli->ndash > 0)
		return cli_usage_error("heartbeat",
		    "too many arguments; usage: " CLI_PROG
		    " heartbeat [-- PROGRAM [ARGS...]]");
	if (cli->ndash >= 0 && argc == 0)
		return cli_usage_error(
		    "heartbeat", "a program must follow \"--\"");
	return worker_request(cli, 0, NULL, argv, argc);
}
