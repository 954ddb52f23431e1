/*
 * cmd_spawn.c — groups created and removed at runtime:
 *   spawn NAME --count N --purpose P [--max-count M] [--cwd DIR]
 *         [--env NAME=VALUE]... [--set KEY=VALUE]... -- PROGRAM [ARGS...]
 *   delete GROUP
 *
 * Design: spawn builds an sv_groupspec (client.h) from its options and
 * sends one CreateGroup. Only the shape of the command line is checked
 * here (exit 100): NAME is a valid group name and the only word before
 * "--", the program comes after it, --count and --purpose are given,
 * numbers are numbers, --env and --set have the NAME=VALUE form, each
 * --set KEY is a key of a config group that GroupSpec gives as an option
 * (restart, max_restarts, ready, stop_signal, ...: the OPTION rows of
 * libsupervise/src/config_keys.def, the daemon's own key table), and no
 * list is longer than the supervisor's 256 entries. Everything else — the
 * ranges, the meaning of each value, a name already taken — is the
 * supervisor's decision, taken by the very rules of the config file;
 * its refusal is printed with the one-line message it sends
 * ("spec:LINE: groups[0].KEY: what") and exits 1. On success spawn prints
 * "NAME: created (count N)" ({"group","count"} in JSON); the workers start
 * right after the reply.
 *
 * delete stops every worker of the group and removes it once they are
 * reaped; it prints "GROUP: deleting" ({"group"}).
 *
 * Layout: spawn_keys (the option rows), spawn_pair (NAME=VALUE check),
 * spawn_set_key (--set KEY check), spawn_spec (options to spec),
 * cmd_spawn, cmd_delete.
 */
#include "cli.h"
#include "json.h"

#include <inttypes.h>
#include <string.h>

/* The supervisor's bound on argv, env and options of one group. */
#define SPAWN_LIST_MAX 256
/* Longest --set KEY accepted (config keys are short words). */
#define SPAWN_KEY_MAX 64

/* The group keys a GroupSpec carries as options (--set), from the rows of
 * the daemon's key table; the FIELD rows are spawn's own options. */
static const struct {
	const char *name;
	int         option;
} spawn_keys[] = {
#define FIELD                                       0
#define OPTION                                      1
#define SV_GROUP_KEY(n, t, lo, hi, m, p, ch, sp, d) {#n, sp},
#define SV_TOP_KEY(n, t, d)
#include "../libsupervise/src/config_keys.def"
#undef SV_GROUP_KEY
#undef SV_TOP_KEY
#undef FIELD
#undef OPTION
};

/*
 * spawn_set_key checks that the KEY of "--set KEY=VALUE" s (klen bytes)
 * is an option row of the key table. Returns 1, or 0 after printing a
 * usage error.
 */
static int
spawn_set_key(const char *s, size_t klen)
{
	for (size_t i = 0; i < sizeof(spawn_keys) / sizeof(spawn_keys[0]);
	     i++) {
		if (strlen(spawn_keys[i].name) == klen
		    && strncmp(spawn_keys[i].name, s, klen) == 0) {
			if (spawn_keys[i].option)
				return 1;
			cli_usage_error("spawn",
			    "--set %.*s: give it as spawn's own option or "
			    "argument, not with --set",
			    (int) klen, s);
			return 0;
		}
	}
	cli_usage_error("spawn",
	    "--set %.*s: not a key of a group (docs/config.md)", (int) klen,
	    s);
	return 0;
}

/*
 * spawn_pair checks that s has the form NAME=VALUE with a non-empty NAME
 * of at most SPAWN_KEY_MAX bytes (keymax 0: no bound) and returns the
 * length of NAME, or 0 after printing a usage error about option opt.
 */
static size_t
spawn_pair(const char *opt, const char *s, size_t keymax)
{
	const char *eq = strchr(s, '=');

	if (eq == NULL || eq == s) {
		cli_usage_error("spawn", "--%s \"%s\" is not of the form %s",
		    opt, s,
		    strcmp(opt, "env") == 0 ? "NAME=VALUE" : "KEY=VALUE");
		return 0;
	}
	if (keymax != 0 && (size_t) (eq - s) > keymax) {
		cli_usage_error(
		    "spawn", "--%s key longer than %zu bytes", opt, keymax);
		return 0;
	}
	return (size_t) (eq - s);
}

/*
 * spawn_spec builds *specp from the command line of spawn: name, the
 * program words prog[0..nprog), and the options of cli; *countp gets
 * the count. Returns CLI_EXIT_OK, or an exit code after printing the
 * error; on error *specp is NULL.
 */
static int
spawn_spec(const struct cli *cli, const char *name, char **prog, int nprog,
    sv_groupspec **specp, uint32_t *countp)
{
	const char *count_s = cli_opt(cli, "count"),
	           *purpose = cli_opt(cli, "purpose"),
	           *max_s   = cli_opt(cli, "max-count"),
	           *cwd     = cli_opt(cli, "cwd");
	uint32_t      count, max_count = 0;
	size_t        nenv = 0, nset = 0, i;
	sv_groupspec *spec = NULL;
	sv_err        err  = SV_OK;
	int           k;

	*specp = NULL;
	if (count_s == NULL || purpose == NULL)
		return cli_usage_error("spawn",
		    "--count and --purpose are required; see " CLI_PROG
		    " --help");
	if (cli_parse_u32(count_s, UINT32_MAX, &count) != 0)
		return cli_usage_error("spawn",
		    "count \"%s\" is not a decimal number in 0..%" PRIu32,
		    count_s, UINT32_MAX);
	if (max_s != NULL && cli_parse_u32(max_s, UINT32_MAX, &max_count) != 0)
		return cli_usage_error("spawn",
		    "max count \"%s\" is not a decimal number in 0..%" PRIu32,
		    max_s, UINT32_MAX);
	for (i = 0; i < cli->nopts; i++) {
		const char *o = cli->opts[i].name, *v = cli->opts[i].value;

		if (strcmp(o, "env") == 0) {
			if (spawn_pair(o, v, 0) == 0)
				return CLI_EXIT_USAGE;
			nenv++;
		} else if (strcmp(o, "set") == 0) {
			size_t klen = spawn_pair(o, v, SPAWN_KEY_MAX);
			if (klen == 0 || !spawn_set_key(v, klen))
				return CLI_EXIT_USAGE;
			nset++;
		}
	}
	if (nenv > SPAWN_LIST_MAX || nset > SPAWN_LIST_MAX)
		return cli_usage_error("spawn", "more than %d --%s options",
		    SPAWN_LIST_MAX, nenv > SPAWN_LIST_MAX ? "env" : "set");

	err = sv_groupspec_new(name, purpose, count, &spec);
	for (k = 0; err == SV_OK && k < nprog; k++)
		err = sv_groupspec_add_arg(spec, prog[k]);
	if (err == SV_OK && max_s != NULL)
		err = sv_groupspec_set_max_count(spec, max_count);
	if (err == SV_OK && cwd != NULL)
		err = sv_groupspec_set_cwd(spec, cwd);
	for (i = 0; err == SV_OK && i < cli->nopts; i++) {
		const char *o = cli->opts[i].name, *v = cli->opts[i].value;
		char        key[SPAWN_KEY_MAX + 1];

		if (strcmp(o, "env") == 0) {
			err = sv_groupspec_add_env(spec, v);
		} else if (strcmp(o, "set") == 0) {
			size_t klen = (size_t) (strchr(v, '=') - v);

			memcpy(key, v, klen);
			key[klen] = '\0';
			err       = sv_groupspec_set(spec, key, v + klen + 1);
		}
	}
	if (err != SV_OK) {
		sv_groupspec_free(spec);
		return cli_error(NULL, err, "spawn %s", name);
	}
	*specp  = spec;
	*countp = count;
	return CLI_EXIT_OK;
}

/* cmd_spawn creates group argv[0] running argv[1..] (after "--"). */
int
cmd_spawn(const struct cli *cli, int argc, char **argv)
{
	const char   *name = argv[0];
	sv_groupspec *spec;
	sv_client    *client;
	uint32_t      count = 0;
	sv_err        err;
	int           rc, first = 1;

	if (cli->ndash != 1)
		return cli_usage_error("spawn",
		    "give NAME, the options, then -- and the program; "
		    "usage: " CLI_PROG
		    " spawn NAME --count N --purpose P ... -- PROGRAM "
		    "[ARGS...]");
	if ((rc = cli_check_group("spawn", name)) != 0)
		return rc;
	if ((rc = spawn_spec(cli, name, argv + 1, argc - 1, &spec, &count))
	    != 0)
		return rc;
	if ((rc = cli_connect(cli, &client)) != 0) {
		sv_groupspec_free(spec);
		return rc;
	}
	err = sv_client_create_group(client, spec, cli_timeout(cli));
	if (err != SV_OK) {
		rc = cli_error(client, err, "spawn %s", name);
	} else if (cli->json) {
		putchar('{');
		json_key(stdout, &first, "group");
		json_string(stdout, name);
		json_key(stdout, &first, "count");
		printf("%" PRIu32 "}\n", count);
	} else {
		printf("%s: created (count %" PRIu32 ")\n", name, count);
	}
	sv_groupspec_free(spec);
	sv_client_close(client);
	return rc;
}

/* cmd_delete stops every worker of group argv[0] and removes the group. */
int
cmd_delete(const struct cli *cli, int argc, char **argv)
{
	(void) argc;
	return cli_group_call(
	    cli, "delete", argv[0], sv_client_delete_group, "deleting");
}
