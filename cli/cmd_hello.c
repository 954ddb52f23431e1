/*
 * cmd_hello.c — `supervisectl hello`: what the supervisor says about itself.
 *
 * Design: one Hello exchange; prints the server name, the protocol version
 * it chose (MAJOR.MINOR), its supervisor id (unique per daemon lifetime) and
 * its features. Because it has no side effect and needs no worker identity,
 * it is also the cheapest readiness probe: scripts loop on it until it
 * exits 0.
 *
 * When the supervisor says its journal lost durability (a full or
 * read-only state directory), one more line says so, with the reason and
 * since when; `status` prints the same line (cli_durability_line).
 *
 * Layout: cli_durability_line, hello_text, hello_json, hello_run, cmd_hello.
 */
#include "cli.h"
#include "json.h"

#include <inttypes.h>

/*
 * cli_durability_line prints, when h says durability is lost,
 *   durability:    LOST since TIME (REASON: MESSAGE); a supervisor restart
 *                  may not find the workers started since
 * on one line, and returns 1; nothing and 0 otherwise.
 */
int
cli_durability_line(const sv_hello *h)
{
	char when[CLI_TIME_BUFSZ];

	if (!sv_hello_durability_known(h) || sv_hello_durability_ok(h))
		return 0;
	cli_fmt_time(when, sizeof when, sv_hello_durability_since_ms(h));
	printf("durability:    LOST since %s (", when);
	cli_put_clean(stdout, sv_hello_durability_reason(h));
	fputs(": ", stdout);
	cli_put_clean(stdout, sv_hello_durability_message(h));
	puts("); a supervisor restart may not find the workers started "
	     "since");
	return 1;
}

/* hello_text prints h as "label: value" lines; features space-separated. */
static void
hello_text(const sv_hello *h)
{
	size_t n = sv_hello_feature_count(h), i;

	fputs("server:        ", stdout);
	cli_put_clean(stdout, sv_hello_server_name(h));
	printf("\nprotocol:      %" PRIu32 ".%" PRIu32 "\n",
	    sv_hello_version(h), sv_hello_minor_version(h));
	fputs("supervisor id: ", stdout);
	cli_put_clean(stdout, sv_hello_supervisor_id(h));
	fputs("\nfeatures:     ", stdout);
	if (n == 0)
		fputs(" none", stdout);
	for (i = 0; i < n; i++) {
		putchar(' ');
		cli_put_clean(stdout, sv_hello_feature(h, i));
	}
	putchar('\n');
	(void) cli_durability_line(h);
}

/* hello_json prints h as one JSON object on one line. */
static void
hello_json(const sv_hello *h)
{
	size_t n     = sv_hello_feature_count(h), i;
	int    first = 1;

	putchar('{');
	json_key(stdout, &first, "server_name");
	json_string(stdout, sv_hello_server_name(h));
	json_key(stdout, &first, "version");
	printf("%" PRIu32, sv_hello_version(h));
	json_key(stdout, &first, "minor_version");
	printf("%" PRIu32, sv_hello_minor_version(h));
	json_key(stdout, &first, "supervisor_id");
	json_string(stdout, sv_hello_supervisor_id(h));
	json_key(stdout, &first, "features");
	putchar('[');
	for (i = 0; i < n; i++) {
		if (i > 0)
			putchar(',');
		json_string(stdout, sv_hello_feature(h, i));
	}
	putchar(']');
	if (sv_hello_durability_known(h)) {
		int dfirst = 1;

		json_key(stdout, &first, "durability");
		putchar('{');
		json_key(stdout, &dfirst, "ok");
		fputs(sv_hello_durability_ok(h) ? "true" : "false", stdout);
		json_key(stdout, &dfirst, "reason");
		json_string(stdout, sv_hello_durability_reason(h));
		json_key(stdout, &dfirst, "since_ms");
		printf("%" PRIu64, sv_hello_durability_since_ms(h));
		json_key(stdout, &dfirst, "message");
		json_string(stdout, sv_hello_durability_message(h));
		putchar('}');
	}
	puts("}");
}

/* hello_run exchanges Hello on client and prints the reply (cli_query). */
static sv_err
hello_run(const struct cli *cli, sv_client *client)
{
	sv_hello *h;
	sv_err    err = sv_client_hello(client, cli_timeout(cli), &h);

	if (err == SV_OK) {
		(cli->json ? hello_json : hello_text)(h);
		sv_hello_free(h);
	}
	return err;
}

/* cmd_hello exchanges Hello with the supervisor and prints the reply. */
int
cmd_hello(const struct cli *cli, int argc, char **argv)
{
	(void) argc;
	(void) argv;
	return cli_query(cli, "hello", hello_run);
}
