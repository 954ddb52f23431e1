/*
 * harness_asuser.c — the directories of a daemon whose workers run as
 * another user, and its plain spawn.
 *
 * Design: a test whose group has `user = "nobody"` cannot use it_start's
 * private directory, because the worker (running as nobody) must reach the
 * control socket and write its output. it_asuser_dirs lays out a directory
 * that user may search (0711) with the daemon's socket_dir below it and an
 * output directory owned by that user; it_asuser_spawn writes the config
 * (socket_dir, stop_timeout_ms and the test's groups) and starts the daemon
 * with a plain posix_spawn of `DAEMON --config CONF --foreground` and the
 * test's environment. The test waits for the daemon itself; it_teardown stops
 * it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"

#include <spawn.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../sv_tmpdir.h"

extern char **environ;

/* Makes ctx->dir (0711), names sdir, makes outdir for uid:gid, names the
 * config, the control socket in sdir and its url. */
int
it_asuser_dirs(it_ctx *ctx, const char *name, uid_t uid, gid_t gid, char *sdir,
    size_t sdir_len, char *outdir, size_t outdir_len)
{
	if (sv_tmpdir(ctx->dir, sizeof(ctx->dir), name) != 0
	    || chmod(ctx->dir, 0711) != 0)
		return -1;
	snprintf(sdir, sdir_len, "%s/s", ctx->dir);
	snprintf(outdir, outdir_len, "%s/out", ctx->dir);
	if (mkdir(outdir, 0700) != 0 || chown(outdir, uid, gid) != 0)
		return -1;
	snprintf(ctx->conf_path, sizeof(ctx->conf_path), "%s/supervised.conf",
	    ctx->dir);
	snprintf(
	    ctx->sock_path, sizeof(ctx->sock_path), "%s/control.sock", sdir);
	snprintf(ctx->url, sizeof(ctx->url), "ipc://%s", ctx->sock_path);
	return 0;
}

/* Writes the config of groups to ctx->conf_path, then spawns
 * `daemon --config ctx->conf_path --foreground` into ctx->daemon. */
int
it_asuser_spawn(
    it_ctx *ctx, const char *daemon, const char *sdir, const char *groups)
{
	char *argv[5];
	FILE *f;

	if ((f = fopen(ctx->conf_path, "w")) == NULL)
		return -1;
	fprintf(f,
	    "socket_dir = \"%s\";\n"
	    "stop_timeout_ms = %d;\n"
	    "groups = (\n"
	    "%s"
	    ");\n",
	    sdir, ctx->stop_timeout_ms, groups);
	if (fclose(f) != 0)
		return -1;
	argv[0] = (char *) daemon;
	argv[1] = (char *) "--config";
	argv[2] = ctx->conf_path;
	argv[3] = (char *) "--foreground";
	argv[4] = NULL;
	return posix_spawn(&ctx->daemon, daemon, NULL, NULL, argv, environ)
	        != 0
	    ? -1
	    : 0;
}
