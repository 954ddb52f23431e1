/*
 * supervisectl.c — main of supervisectl, the command-line client of
 * supervised.
 *
 *   supervisectl [-s URL] [-t MS] [--json] COMMAND [ARGS...] [--json]
 *
 * Design: global options come first and are parsed with getopt_long in
 * "+" mode, which stops at the first non-option word, the command. The
 * command's own words are then scanned by hand: "--json", "-h"/"--help" and
 * "--" (end of options, needed for a group named "-x" and before the
 * program of spawn) are recognised anywhere, "--NAME VALUE" and
 * "--NAME=VALUE" are taken when the command's table entry declares NAME,
 * any other word starting with '-' (but a negative number) is a usage
 * error, and the rest are positional arguments, counted against the command
 * table. Only then is the socket URL resolved (-s, else $SUPERVISE_URL,
 * else sv_default_url()), so a usage error never depends on the
 * environment.
 *
 * Exit codes are fixed (cli.h, docs/supervisectl.md): 0 success, 1 the
 * supervisor answered with an error, 100 usage error, 111 system failure.
 * Every error is exactly one line on stderr. A failure to write stdout
 * (full disk, closed pipe) is a system failure too.
 *
 * Layout: command table, usage, option parsing (main_options), command
 * argument parsing (main_command_option, main_command_args), URL
 * resolution (main_url), main.
 */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/*
 * A supervisectl command: the number of positional arguments it takes and
 * the options it accepts (NULL-terminated names without "--", each taking
 * a value), or NULL for none.
 */
/* The parts of --help, in the order printed. */
enum main_section {
	MAIN_QUERY,
	MAIN_CONTROL,
	MAIN_LEASES,
	MAIN_WORKER,
	MAIN_NSECTIONS
};

static const char *const main_section_titles[MAIN_NSECTIONS] = {
    [MAIN_QUERY]   = "Queries",
    [MAIN_CONTROL] = "Control",
    [MAIN_LEASES]  = "Leases and pools",
    [MAIN_WORKER]  = "From a worker (the worker process itself; a shell script"
                     " uses exec)",
};

struct main_command {
	const char        *name;
	cli_cmd_fn        *fn; /* NULL for help */
	int                min_args;
	int                max_args;
	const char        *synopsis;
	const char *const *options;
	const char *const *flags; /* words like "--all", passed on as
	                           * positional arguments; NULL: none */
	enum main_section section; /* where --help lists it */
	const char       *help; /* what it does, for --help: lines split
	                         * by '\n'; a synopsis with " | " lists
	                         * its forms one per line */
};

static const char *const main_restart_opts[]   = {"expect-generation",
      "ready-timeout", "max-surge", "max-unavailable", "wait", NULL};
static const char *const main_restart_flags[]  = {"--rolling", NULL};
static const char *const main_drain_opts[]     = {"deadline", "wait", NULL};
static const char *const main_drain_flags[]    = {"--all", NULL};
static const char *const main_drain_ack_opts[] = {"served", NULL};
static const char *const main_spawn_opts[]
    = {"count", "purpose", "max-count", "cwd", "env", "set", NULL};
static const char *const main_events_opts[] = {"count", "for", NULL};
static const char *const main_top_opts[]    = {"count", "for", NULL};

static const char *const main_session_opts[] = {"session", NULL};
static const char *const main_lease_opts[] = {"slot", "wait", "session", NULL};
static const char *const main_pool_opts[]
    = {"ttl", "grace", "path", "on-release", "kind", NULL};

/* The program of spawn: at most 256 words, the config file's bound. */
#define MAIN_SPAWN_ARGV_MAX 256
/* ready's chain-loaded program, same bound. */
#define MAIN_READY_ARGV_MAX 256

static const struct main_command main_commands[] = {
    {"status", cmd_status, 0, 1, "status [GROUP]", NULL, NULL, MAIN_QUERY,
        "list workers: GROUP ORDINAL GENERATION PID STATE\nREADY UPTIME "
        "PURPOSE STATUS, then one line per\nfailed group"},
    {"groups", cmd_groups, 0, 1, "groups [GROUP]", NULL, NULL, MAIN_QUERY,
        "list groups: counts, restart type, strategy, failed"},
    {"whoami", cmd_whoami, 0, 0, "whoami", NULL, NULL, MAIN_QUERY,
        "identity of the calling worker (run it inside one)"},
    {"hello", cmd_hello, 0, 0, "hello", NULL, NULL, MAIN_QUERY,
        "server name, protocol version, supervisor id,\nfeatures"},
    {"events", cmd_events, 0, 1,
        "events [GROUP[/ORDINAL]] [--count N] [--for MS]", main_events_opts,
        NULL, MAIN_QUERY,
        "follow the event stream live, one line per event,\nuntil "
        "interrupted, N events or MS milliseconds"},
    {"top", cmd_top, 0, 1, "top [GROUP] [--count N] [--for MS]", main_top_opts,
        NULL, MAIN_QUERY,
        "status with activities, refreshed every 500 ms,\nuntil "
        "interrupted, N refreshes or MS milliseconds"},
    {"scale", cmd_scale, 2, 2, "scale GROUP N", NULL, NULL, MAIN_CONTROL,
        "set the number of workers of GROUP to N"},
    {"stop", cmd_stop, 1, 1, "stop GROUP", NULL, NULL, MAIN_CONTROL,
        "stop every worker of GROUP (scale back up to restart)"},
    {"restart", cmd_restart_any, 2, 2,
        "restart GROUP ORDINAL [--expect-generation G]"
        " | restart GROUP --rolling [--ready-timeout MS] [--max-surge N]"
        " [--max-unavailable N] [--wait MS]",
        main_restart_opts, main_restart_flags, MAIN_CONTROL,
        "restart one worker (only if its generation is G),\nor roll the "
        "group: start each next generation\nbeside the old one, then "
        "drain the old one once\nthe new one is ready; at most N + "
        "max-surge\n(default 1) processes live, at most "
        "max-unavailable\n(default 0) workers not ready; follow the "
        "report\nfor at most MS"},
    {"drain", cmd_drain, 1, 1,
        "drain GROUP | GROUP/ORDINAL | --all [--deadline D] [--wait MS]",
        main_drain_opts, main_drain_flags, MAIN_CONTROL,
        "ask workers to finish and exit (no restart); wait\n(at most MS), "
        "then print the reaping report"},
    {"reset", cmd_reset, 1, 1, "reset GROUP", NULL, NULL, MAIN_CONTROL,
        "clear a failed group and start its workers again"},
    {"start", cmd_start, 1, 1, "start GROUP", NULL, NULL, MAIN_CONTROL,
        "start one more worker; prints its ordinal"},
    {"terminate", cmd_terminate, 2, 2, "terminate GROUP ORDINAL", NULL, NULL,
        MAIN_CONTROL, "stop one worker and release its ordinal"},
    {"spawn", cmd_spawn, 2, 1 + MAIN_SPAWN_ARGV_MAX,
        "spawn NAME --count N --purpose P [--max-count M] [--cwd DIR]"
        " [--env NAME=VALUE]... [--set KEY=VALUE]... -- PROGRAM [ARGS...]",
        main_spawn_opts, NULL, MAIN_CONTROL,
        "create a group at runtime (--set: any config key)"},
    {"delete", cmd_delete, 1, 1, "delete GROUP", NULL, NULL, MAIN_CONTROL,
        "stop every worker of GROUP and remove it"},
    {"leases", cmd_leases, 0, 1, "leases [POOL] [--session ID]",
        main_session_opts, NULL, MAIN_LEASES,
        "list leases: id, pool, slot, fencing token, expiry,\nholder, "
        "resource"},
    {"pools", cmd_pools, 0, 0, "pools", NULL, NULL, MAIN_LEASES,
        "list lease pools: slots, held, waiting"},
    {"lease", cmd_lease, 2, 4,
        "lease acquire POOL [--slot N] [--wait MS] [--session ID]"
        " | lease renew|release ID [--session ID]"
        " | lease claim POOL SLOT TOKEN [--session ID]",
        main_lease_opts, NULL, MAIN_LEASES,
        "take, renew, give back or re-claim a lease (as the\ncalling "
        "worker, or for a session)"},
    {"session", cmd_session, 2, 2,
        "session open TTL_MS | session renew|close ID", NULL, NULL,
        MAIN_LEASES, "a lease session for a holder that is not a worker"},
    {"pool", cmd_pool, 3, 3,
        "pool create NAME SLOTS [--ttl MS] [--grace MS] [--path TEMPLATE]"
        " [--on-release keep|truncate|remove] [--kind file|directory]",
        main_pool_opts, NULL, MAIN_LEASES, "create a lease pool at runtime"},
    {"ready", cmd_ready, 0, 1 + MAIN_READY_ARGV_MAX,
        "ready [STATUS] [-- PROGRAM [ARGS...]]", NULL, NULL, MAIN_WORKER,
        "report readiness (and a status line), then exec\nPROGRAM if "
        "given"},
    {"drain-ack", cmd_drain_ack, 0, 0, "drain-ack [--served N]",
        main_drain_ack_opts, NULL, MAIN_WORKER,
        "tell the supervisor this worker has drained"},
    {"drain-extend", cmd_drain_extend, 1, 1, "drain-extend MS", NULL, NULL,
        MAIN_WORKER, "ask for MS more before the drain deadline"},
    {"heartbeat", cmd_heartbeat, 0, MAIN_READY_ARGV_MAX,
        "heartbeat [-- PROGRAM [ARGS...]]", NULL, NULL, MAIN_WORKER,
        "feed the watchdog, then exec PROGRAM if given"},
    {"help", NULL, 0, 1, "help", NULL, NULL, MAIN_WORKER, "show this help"},
};

#define MAIN_NCOMMANDS (sizeof main_commands / sizeof main_commands[0])

/* Long-only option values, outside the range of characters. */
enum { OPT_JSON = 256 };

/* Buffer for the URL from sv_default_url(). */
#define MAIN_URL_MAX 4096

/* Column where --help starts a command's description. */
#define MAIN_HELP_COL 27

/* Width of --help's lines, and the indent of a synopsis' next lines. */
#define MAIN_HELP_WIDTH 79
#define MAIN_HELP_MORE  8

/* main_usage_wrap prints the first len bytes of a synopsis form at column
 * 2, breaking it at spaces outside brackets before MAIN_HELP_WIDTH, and
 * returns the column where it ended. */
static int
main_usage_wrap(FILE *f, const char *form, int len)
{
	int col = 2, at = 0;

	fputs("  ", f);
	while (at < len) {
		int word = at, depth = 0;
		while (word < len && (form[word] != ' ' || depth > 0)) {
			depth += form[word] == '[' ? 1
			    : form[word] == ']'    ? -1
			                           : 0;
			word++;
		}
		if (at > 0 && col + 1 + (word - at) > MAIN_HELP_WIDTH) {
			fprintf(f, "\n%*s", MAIN_HELP_MORE, "");
			col = MAIN_HELP_MORE;
		} else if (at > 0) {
			fputc(' ', f);
			col++;
		}
		fprintf(f, "%.*s", word - at, form + at);
		col += word - at;
		at = word < len ? word + 1 : word;
	}
	return col;
}

/* main_next_form returns where the synopsis form at form ends: the next
 * " | " followed by the command's name (a bar between arguments, as in
 * "drain GROUP | --all", does not end it), or NULL at the last form. */
static const char *
main_next_form(const char *name, const char *form)
{
	size_t n = strlen(name);

	for (const char *bar = strstr(form, " | "); bar != NULL;
	     bar             = strstr(bar + 3, " | ")) {
		if (strncmp(bar + 3, name, n) == 0 && bar[3 + n] == ' ') {
			return bar;
		}
	}
	return NULL;
}

/* main_usage_command prints one command of the table for --help: its
 * synopsis (each form on a line of its own, a form too
 * wide for the column on a line by itself), then its description, each of
 * its lines at MAIN_HELP_COL. */
static void
main_usage_command(FILE *f, const struct main_command *c)
{
	const char *form = c->synopsis, *help = c->help;
	int         col = 0;

	while (form != NULL) {
		const char *bar = main_next_form(c->name, form);
		int         len
		    = bar != NULL ? (int) (bar - form) : (int) strlen(form);
		if (col > 0) {
			fputc('\n', f);
		}
		col  = main_usage_wrap(f, form, len);
		form = bar != NULL ? bar + 3 : NULL;
	}
	while (help != NULL) {
		const char *nl = strchr(help, '\n');
		int len = nl != NULL ? (int) (nl - help) : (int) strlen(help);
		if (col >= MAIN_HELP_COL - 1) {
			fputc('\n', f);
			col = 0;
		}
		fprintf(f, "%*s%.*s\n", MAIN_HELP_COL - col, "", len, help);
		col  = 0;
		help = nl != NULL ? nl + 1 : NULL;
	}
}

/* main_usage prints the full help text to f: the commands from
 * main_commands, section by section, then the options and exit codes. */
static void
main_usage(FILE *f)
{
	char url[MAIN_URL_MAX];

	if (sv_default_url(url, sizeof url) != SV_OK)
		strcpy(url, "(none)");
	fputs("Usage: " CLI_PROG " [OPTIONS] COMMAND [ARGS...] [--json]\n"
	      "\n"
	      "Query and control the worker groups of a supervised daemon.\n",
	    f);
	for (int sec = 0; sec < MAIN_NSECTIONS; sec++) {
		fprintf(f, "\n%s:\n", main_section_titles[sec]);
		for (size_t i = 0; i < MAIN_NCOMMANDS; i++) {
			if ((int) main_commands[i].section == sec) {
				main_usage_command(f, &main_commands[i]);
			}
		}
	}
	fprintf(f,
	    "\n"
	    "Options (before COMMAND; --json and -h also after it):\n"
	    "  -s, --socket URL   control socket URL (default: $" SV_ENV_URL
	    ", else\n"
	    "                     %s)\n"
	    "  -t, --timeout MS   timeout of each call, connect included"
	    " (default %d)\n"
	    "      --json         machine-readable JSON output\n"
	    "  -h, --help         show this help and exit\n"
	    "  -V, --version      show the version and exit\n"
	    "\n"
	    "GROUP is 1..%d characters of [A-Za-z0-9_.-]; N, ORDINAL, G and MS"
	    " are decimal\n"
	    "numbers. Use -- before a GROUP that starts with '-'.\n"
	    "\n"
	    "Exit status:\n"
	    "  0    success\n"
	    "  1    the supervisor answered with an error (no such group or"
	    " worker, not a\n"
	    "       supervised worker, resource exhausted, busy, conflict, bad"
	    " request, ...)\n"
	    "  100  usage error (bad option or argument, unknown command)\n"
	    "  111  system failure (cannot connect, timeout, protocol error,"
	    " out of memory,\n"
	    "       the supervisor went away)\n",
	    url, CLI_TIMEOUT_DEFAULT, CLI_GROUP_MAX);
}

/* main_version prints the versions of supervisectl and of the library. */
static void
main_version(void)
{
	printf(CLI_PROG " %s (libsupervise %s, protocol %d.%d)\n",
	    SV_VERSION_STRING, sv_version(), SV_PROTOCOL_VERSION,
	    SV_PROTOCOL_MINOR);
}

/*
 * main_options parses the global options into *cli and *socketp, leaving
 * optind at the command. It returns -1 to go on, or an exit code: 0 after
 * --help or --version, CLI_EXIT_USAGE after printing a usage error.
 */
static int
main_options(int argc, char **argv, struct cli *cli, const char **socketp)
{
	static const struct option longopts[] = {
	    {"socket", required_argument, NULL, 's'},
	    {"timeout", required_argument, NULL, 't'},
	    {"json", no_argument, NULL, OPT_JSON},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	uint32_t timeout;
	int      c;

	opterr = 0; /* one error line, ours */
	while (
	    (c = getopt_long(argc, argv, "+:s:t:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (optarg[0] == '\0')
				return cli_usage_error(
				    "--socket", "the URL is empty");
			*socketp = optarg;
			break;
		case 't':
			/* 0 would be "try once without waiting", which fails
			 * at random for a request that needs a reply. */
			if (cli_parse_u32(optarg, INT_MAX, &timeout) != 0
			    || timeout == 0)
				return cli_usage_error("--timeout",
				    "\"%s\" is not a decimal number of"
				    " milliseconds in 1..%d",
				    optarg, INT_MAX);
			cli->timeout_ms = (int) timeout;
			break;
		case OPT_JSON:
			cli->json = 1;
			break;
		case 'h':
			main_usage(stdout);
			return CLI_EXIT_OK;
		case 'V':
			main_version();
			return CLI_EXIT_OK;
		case ':':
			return cli_usage_error("usage",
			    "option \"%s\" needs an argument",
			    argv[optind - 1]);
		default:
			if (optopt != 0)
				return cli_usage_error("usage",
				    "unknown option \"-%c\"; see " CLI_PROG
				    " --help",
				    optopt);
			return cli_usage_error("usage",
			    "unknown option \"%s\"; see " CLI_PROG " --help",
			    argv[optind - 1]);
		}
	}
	return -1;
}

/*
 * main_command_option handles the word a = "--NAME[=VALUE]" when NAME is an
 * option of cmd: it stores the option in opts[*nopts] (the value from a, or
 * the next word argv[*ip + 1], advancing *ip). Returns 1 when taken, 0 when
 * NAME is not an option of cmd, or an exit code after printing a usage
 * error.
 */
static int
main_command_option(int argc, char **argv, int *ip,
    const struct main_command *cmd, struct cli_opt *opts, size_t *nopts)
{
	const char *a = argv[*ip] + 2, *eq = strchr(a, '=');
	size_t      len = eq != NULL ? (size_t) (eq - a) : strlen(a), k;

	if (cmd->options == NULL)
		return 0;
	for (k = 0; cmd->options[k] != NULL; k++)
		if (strlen(cmd->options[k]) == len
		    && strncmp(cmd->options[k], a, len) == 0)
			break;
	if (cmd->options[k] == NULL)
		return 0;
	if (*nopts >= CLI_OPTS_MAX)
		return cli_usage_error(
		    cmd->name, "more than %d options", CLI_OPTS_MAX);
	opts[*nopts].name = cmd->options[k];
	if (eq != NULL) {
		opts[*nopts].value = eq + 1;
	} else if (*ip + 1 < argc) {
		opts[*nopts].value = argv[++*ip];
	} else {
		return cli_usage_error(cmd->name,
		    "option \"--%s\" needs a value; usage: " CLI_PROG " %s",
		    cmd->options[k], cmd->synopsis);
	}
	++*nopts;
	return 1;
}

/* main_command_flag tells whether a is one of cmd's flags. */
static int
main_command_flag(const struct main_command *cmd, const char *a)
{
	for (size_t k = 0; cmd->flags != NULL && cmd->flags[k] != NULL; k++)
		if (strcmp(cmd->flags[k], a) == 0)
			return 1;
	return 0;
}

/*
 * main_command_args scans the words after the command (argv[first..argc)),
 * handling --json, -h/--help, -- and the command's options (stored in opts,
 * recorded in cli), and packs the positional arguments at
 * argv[first..first+*np). Returns -1 to go on, or an exit code as
 * main_options does.
 */
static int
main_command_args(int argc, char **argv, int first,
    const struct main_command *cmd, struct cli *cli, struct cli_opt *opts,
    int *np)
{
	size_t nopts = 0;
	int    i, n = 0, options = 1, rc;

	cli->ndash = -1;
	for (i = first; i < argc; i++) {
		const char *a = argv[i];

		if (options && strcmp(a, "--") == 0) {
			options    = 0;
			cli->ndash = n;
		} else if (options && strcmp(a, "--json") == 0) {
			cli->json = 1;
		} else if (options
		    && (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)) {
			main_usage(stdout);
			return CLI_EXIT_OK;
		} else if (options && a[0] == '-' && a[1] == '-'
		    && (rc = main_command_option(
		            argc, argv, &i, cmd, opts, &nopts))
		        != 0) {
			if (rc != 1)
				return rc;
		} else if (options && a[0] == '-' && a[1] != '\0'
		    && (a[1] < '0' || a[1] > '9')
		    && !main_command_flag(cmd, a)) {
			return cli_usage_error(cmd->name,
			    "unknown option \"%s\"; usage: " CLI_PROG " %s", a,
			    cmd->synopsis);
		} else {
			argv[first + n++] = argv[i];
		}
	}
	if (n < cmd->min_args || n > cmd->max_args)
		return cli_usage_error(cmd->name,
		    "%s arguments; usage: " CLI_PROG " %s",
		    n < cmd->min_args ? "missing" : "too many", cmd->synopsis);
	cli->opts  = opts;
	cli->nopts = nopts;
	*np        = n;
	return -1;
}

/*
 * main_url sets cli->url from -s (socketp), else $SUPERVISE_URL, else the
 * default URL written into buf. Returns -1 to go on, or an exit code.
 */
static int
main_url(struct cli *cli, const char *socketp, char *buf, size_t size)
{
	const char *env = getenv(SV_ENV_URL);
	sv_err      err;

	if (socketp != NULL) {
		cli->url = socketp;
	} else if (env != NULL && env[0] != '\0') {
		cli->url = env;
	} else {
		err = sv_default_url(buf, size);
		if (err != SV_OK) {
			/* Not the supervisor's answer, whatever the code. */
			cli_error(NULL, err, "default socket URL");
			return CLI_EXIT_SYSTEM;
		}
		cli->url = buf;
	}
	return -1;
}

/* main parses the command line, runs one command and checks stdout. */
int
main(int argc, char **argv)
{
	static struct cli_opt opts[CLI_OPTS_MAX];
	struct cli cli = {NULL, CLI_TIMEOUT_DEFAULT, 0, NULL, 0, -1};
	const struct main_command *cmd        = NULL;
	const char                *socket_url = NULL;
	char                       url[MAIN_URL_MAX];
	size_t                     i;
	int                        rc, n = 0;

	if ((rc = main_options(argc, argv, &cli, &socket_url)) >= 0)
		return rc;
	if (optind >= argc)
		return cli_usage_error(
		    "usage", "no command given; see " CLI_PROG " --help");
	for (i = 0; i < MAIN_NCOMMANDS; i++)
		if (strcmp(argv[optind], main_commands[i].name) == 0)
			cmd = &main_commands[i];
	if (cmd == NULL)
		return cli_usage_error("usage",
		    "unknown command \"%s\"; see " CLI_PROG " --help",
		    argv[optind]);
	rc = main_command_args(argc, argv, optind + 1, cmd, &cli, opts, &n);
	if (rc >= 0)
		return rc;

	if (cmd->fn == NULL) {
		main_usage(stdout);
		rc = CLI_EXIT_OK;
	} else if ((rc = main_url(&cli, socket_url, url, sizeof url)) < 0) {
		rc = cmd->fn(&cli, n, argv + optind + 1);
	}

	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr,
		    CLI_PROG ": write to standard output: %s (%s)\n",
		    sv_strerror(SV_ESYSTEM), strerror(errno));
		return rc != CLI_EXIT_OK ? rc : CLI_EXIT_SYSTEM;
	}
	return rc;
}
