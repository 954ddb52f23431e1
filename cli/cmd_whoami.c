/*
 * cmd_whoami.c — `supervisectl whoami`: the identity of the calling worker.
 *
 * Design: the supervisor identifies the caller by the peer credentials of
 * the connection (the process itself or its nearest supervised ancestor), so
 * running supervisectl from a worker's shell script reports that worker. Run
 * anywhere else, the supervisor answers SV_ENOTWORKER and we exit 1. Frames
 * are written "kind:name/ordinal" ("process:web/1"), outermost first and
 * joined by " > "; a top-level worker's parent is "none" (null in JSON).
 *
 * Layout: whoami_frame_text, whoami_text, whoami_frame_json, whoami_json,
 * whoami_run, cmd_whoami.
 */
#include "cli.h"
#include "json.h"

#include <inttypes.h>

/* whoami_frame_text prints one frame as "kind:name/ordinal". */
static void
whoami_frame_text(sv_kind kind, uint32_t ordinal, const char *name)
{
	printf("%s:", cli_kind_name(kind));
	cli_put_clean(stdout, name);
	printf("/%" PRIu32, ordinal);
}

/* whoami_text prints id as "label: value" lines. */
static void
whoami_text(const sv_identity *id)
{
	size_t      n = sv_identity_frame_count(id), i;
	sv_kind     kind;
	uint32_t    ordinal;
	const char *name;

	fputs("group:         ", stdout);
	cli_put_clean(stdout, sv_identity_group(id));
	printf("\nordinal:       %" PRIu32 "\n", sv_identity_ordinal(id));
	printf("generation:    %" PRIu64 "\n", sv_identity_generation(id));
	printf("kind:          %s\n", cli_kind_name(sv_identity_kind(id)));
	printf("pid:           %" PRId64 "\n", sv_identity_pid(id));
	fputs("purpose:       ", stdout);
	cli_put_clean(stdout, sv_identity_purpose(id));
	fputs("\nsupervisor id: ", stdout);
	cli_put_clean(stdout, sv_identity_supervisor_id(id));
	printf("\ngroup size:    %" PRIu32 "\n", sv_identity_group_size(id));
	fputs("context:       ", stdout);
	if (n == 0)
		fputs("none", stdout);
	for (i = 0; i < n; i++) {
		if (sv_identity_frame(id, i, &kind, &ordinal, &name) != SV_OK)
			continue;
		if (i > 0)
			fputs(" > ", stdout);
		whoami_frame_text(kind, ordinal, name);
	}
	fputs("\nparent:        ", stdout);
	if (sv_identity_parent(id, &kind, &ordinal, &name) == SV_OK)
		whoami_frame_text(kind, ordinal, name);
	else
		fputs("none", stdout);
	putchar('\n');
}

/* whoami_frame_json prints one frame as {"kind":..,"name":..,"ordinal":..}. */
static void
whoami_frame_json(sv_kind kind, uint32_t ordinal, const char *name)
{
	int first = 1;

	putchar('{');
	json_key(stdout, &first, "kind");
	json_string(stdout, cli_kind_name(kind));
	json_key(stdout, &first, "name");
	json_string(stdout, name);
	json_key(stdout, &first, "ordinal");
	printf("%" PRIu32 "}", ordinal);
}

/* whoami_json prints id as one JSON object on one line. */
static void
whoami_json(const sv_identity *id)
{
	size_t      n     = sv_identity_frame_count(id), i;
	int         first = 1, first_frame = 1;
	sv_kind     kind;
	uint32_t    ordinal;
	const char *name;

	putchar('{');
	json_key(stdout, &first, "group");
	json_string(stdout, sv_identity_group(id));
	json_key(stdout, &first, "ordinal");
	printf("%" PRIu32, sv_identity_ordinal(id));
	json_key(stdout, &first, "generation");
	printf("%" PRIu64, sv_identity_generation(id));
	json_key(stdout, &first, "kind");
	json_string(stdout, cli_kind_name(sv_identity_kind(id)));
	json_key(stdout, &first, "pid");
	printf("%" PRId64, sv_identity_pid(id));
	json_key(stdout, &first, "purpose");
	json_string(stdout, sv_identity_purpose(id));
	json_key(stdout, &first, "supervisor_id");
	json_string(stdout, sv_identity_supervisor_id(id));
	json_key(stdout, &first, "group_size");
	printf("%" PRIu32, sv_identity_group_size(id));
	json_key(stdout, &first, "context");
	putchar('[');
	for (i = 0; i < n; i++) {
		if (sv_identity_frame(id, i, &kind, &ordinal, &name) != SV_OK)
			continue;
		if (!first_frame)
			putchar(',');
		first_frame = 0;
		whoami_frame_json(kind, ordinal, name);
	}
	putchar(']');
	json_key(stdout, &first, "parent");
	if (sv_identity_parent(id, &kind, &ordinal, &name) == SV_OK)
		whoami_frame_json(kind, ordinal, name);
	else
		fputs("null", stdout);
	puts("}");
}

/* whoami_run asks WhoAmI on client and prints the answer (cli_query). */
static sv_err
whoami_run(const struct cli *cli, sv_client *client)
{
	sv_identity *id;
	sv_err       err = sv_client_whoami(client, cli_timeout(cli), &id);

	if (err == SV_OK) {
		(cli->json ? whoami_json : whoami_text)(id);
		sv_identity_free(id);
	}
	return err;
}

/* cmd_whoami asks the supervisor who the calling process is. */
int
cmd_whoami(const struct cli *cli, int argc, char **argv)
{
	(void) argc;
	(void) argv;
	return cli_query(cli, "whoami", whoami_run);
}
