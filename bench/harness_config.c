/*
 * harness_config.c — the temporary directory and the daemon configs
 * written into it: paths under g_dir, one supervised config per daemon
 * (its groups from struct group_cfg), and the removal of the whole tree
 * at the end (see harness.h, harness_priv.h).
 *
 * Design: every file a run creates lives under g_dir (configs, logs, the
 * daemons' socket directories, the report socket), so one depth-first
 * removal at cleanup leaves nothing behind, and --keep keeps all of it
 * for reading. A config sets only what a group_cfg field asks for; every
 * other key keeps the daemon's default.
 */
#include "harness_priv.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* rm_entry is the nftw callback of rm_rf. */
static int
rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void) sb;
	(void) flag;
	(void) ftw;
	if (remove(path) != 0)
		note("cannot remove %s: %s", path, strerror(errno));
	return 0;
}

/* rm_rf removes the tree at path, depth first, not following links. */
void
rm_rf(const char *path)
{
	nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* dir_path joins g_dir and name; -1 when it does not fit. */
int
dir_path(char *buf, size_t size, const char *name)
{
	int n = snprintf(buf, size, "%s/%s", g_dir, name);

	return n < 0 || (size_t) n >= size ? -1 : 0;
}

/* cfg_str writes s as a libconfig string literal. */
static void
cfg_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* write_group writes one group of a config (see struct group_cfg). */
static void
write_group(FILE *f, const struct group_cfg *g)
{
	size_t i;

	fputs("  {\n    name = ", f);
	cfg_str(f, g->name);
	fputs(";\n    argv = [ ", f);
	for (i = 0; g->argv[i] != NULL; i++) {
		if (i > 0)
			fputs(", ", f);
		cfg_str(f, g->argv[i]);
	}
	fprintf(f, " ];\n    count = %ld;\n", g->count);
	if (g->max_count > 0)
		fprintf(f, "    max_count = %ld;\n", g->max_count);
	if (g->min_uptime_ms >= 0)
		fprintf(f, "    min_uptime_ms = %ld;\n", g->min_uptime_ms);
	if (g->backoff_initial_ms > 0)
		fprintf(f, "    backoff_initial_ms = %ld;\n",
		    g->backoff_initial_ms);
	if (g->backoff_factor > 0)
		fprintf(f, "    backoff_factor = %.3f;\n", g->backoff_factor);
	if (g->backoff_max_ms > 0)
		fprintf(f, "    backoff_max_ms = %ld;\n", g->backoff_max_ms);
	fputs("    purpose = ", f);
	cfg_str(f, g->purpose);
	fputs(";\n", f);
	if (g->env != NULL) {
		fputs("    env = [ ", f);
		cfg_str(f, g->env);
		fputs(" ];\n", f);
	}
	fputs("  }", f);
}

/* write_config writes a supervised config with groups g[0..ng) to path. */
int
write_config(const char *path, const char *sockdir, const struct group_cfg *g,
    size_t ng)
{
	FILE  *f = fopen(path, "w");
	size_t i;

	if (f == NULL)
		return -1;
	fputs("# written by sv-bench\nsocket_dir = ", f);
	cfg_str(f, sockdir);
	fputs(";\nstop_timeout_ms = 5000;\ngroups = (\n", f);
	for (i = 0; i < ng; i++) {
		write_group(f, &g[i]);
		fputs(i + 1 < ng ? ",\n" : "\n", f);
	}
	fputs(");\n", f);
	return fclose(f) == 0 ? 0 : -1;
}
