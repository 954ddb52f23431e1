/*
 * cmd_leases.c — the lease subcommands (docs/supervisectl.md, "Leases"):
 *   leases [POOL] [--session ID]      ListLeases, a table or --json
 *   pools                             ListPools, a table or --json
 *   lease acquire POOL [--slot N] [--wait MS] [--session ID]
 *   lease renew ID [--session ID]
 *   lease release ID [--session ID]
 *   lease claim POOL SLOT TOKEN [--session ID]
 *   session open TTL_MS | session renew ID | session close ID
 *   pool create NAME SLOTS [--ttl MS] [--grace MS] [--path TEMPLATE]
 *        [--on-release keep|truncate|remove] [--kind file|directory]
 *
 * Design: one function per subcommand word, each one call through the
 * public client API. The holder of a lease is the caller as the kernel
 * sees it: supervisectl run by a worker (or a descendant) holds for that
 * worker, but its connection ends with the command, which starts the
 * pool's disconnect grace; a tool therefore opens a session (`session
 * open`) and passes --session to every lease command. A lease prints as
 * one line "ID POOL SLOT TOKEN HOLDER EXPIRES RESOURCE" in tables and as
 * one object with every field in --json. A waiting acquire is bounded by
 * --timeout as every call (the wait is shortened to fit, client.h).
 *
 * Layout: helpers; lease_print_*; cmd_leases, cmd_pools, cmd_lease,
 * cmd_session, cmd_pool.
 */
#include "cli.h"
#include "json.h"

#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

/* The limits of the numbers the commands take. */
#define LEASE_SLOT_MAX  4095u
#define LEASE_MS_MAX    (24ull * 3600ull * 1000ull)
#define LEASE_WAIT_MAX  UINT32_MAX
#define LEASE_SLOTS_MAX 4096u

/* lease_session reads --session (0 when absent). -1: bad value. */
static int
lease_session(const struct cli *cli, const char *cmd, uint64_t *sp)
{
	const char *v = cli_opt(cli, "session");

	*sp = 0;
	if (v != NULL && (cli_parse_u64(v, UINT64_MAX, sp) != 0 || *sp == 0)) {
		cli_usage_error(
		    cmd, "--session must be a session id, not \"%s\"", v);
		return -1;
	}
	return 0;
}

/* lease_json writes l as one JSON object (no newline). */
static void
lease_json(const sv_lease *l)
{
	int first = 1;

	putchar('{');
	json_key(stdout, &first, "id");
	printf("%" PRIu64, sv_lease_id(l));
	json_key(stdout, &first, "pool");
	json_string(stdout, sv_lease_pool(l));
	json_key(stdout, &first, "slot");
	printf("%" PRIu32, sv_lease_slot(l));
	json_key(stdout, &first, "token");
	printf("%" PRIu64, sv_lease_token(l));
	json_key(stdout, &first, "epoch");
	printf("%" PRIu64, sv_lease_epoch(l));
	json_key(stdout, &first, "expires_in_ms");
	printf("%" PRIu64, sv_lease_expires_in_ms(l));
	json_key(stdout, &first, "resource");
	json_string(stdout, sv_lease_resource(l));
	json_key(stdout, &first, "holder");
	json_string(stdout, sv_lease_holder_name(l));
	json_key(stdout, &first, "unclaimed");
	fputs(sv_lease_unclaimed(l) ? "true" : "false", stdout);
	putchar('}');
}

/* lease_expiry formats the EXPIRES cell. */
static void
lease_expiry(const sv_lease *l, char *buf, size_t len)
{
	if (sv_lease_unclaimed(l)) {
		snprintf(buf, len, "unclaimed");
	} else if (sv_lease_expires_in_ms(l) == 0) {
		snprintf(buf, len, "-");
	} else {
		cli_fmt_uptime(buf, len, sv_lease_expires_in_ms(l));
	}
}

/* lease_line prints one lease as a table row (fixed widths, then the
 * free-form holder and resource). */
static void
lease_line(const sv_lease *l)
{
	char exp[CLI_UPTIME_BUFSZ];

	lease_expiry(l, exp, sizeof(exp));
	printf("%-20" PRIu64 "  ", sv_lease_id(l));
	cli_put_clean(stdout, sv_lease_pool(l));
	printf("  %4" PRIu32 "  %-20" PRIu64 "  %-9s  ", sv_lease_slot(l),
	    sv_lease_token(l), exp);
	cli_put_clean(stdout, sv_lease_holder_name(l));
	fputs("  ", stdout);
	cli_put_clean(stdout,
	    sv_lease_resource(l)[0] != '\0' ? sv_lease_resource(l) : "-");
	putchar('\n');
}

/* lease_print prints one lease (a command's answer). */
static void
lease_print(const struct cli *cli, const sv_lease *l)
{
	if (cli->json) {
		lease_json(l);
		putchar('\n');
		return;
	}
	puts("ID                    POOL  SLOT  TOKEN                 EXPIRES "
	     "   HOLDER  RESOURCE");
	lease_line(l);
}

/* cmd_leases lists leases (of pool argv[0]). */
int
cmd_leases(const struct cli *cli, int argc, char **argv)
{
	const char *pool = argc > 0 ? argv[0] : NULL;
	sv_client  *client;
	sv_leases  *list = NULL;
	uint64_t    session;
	sv_err      err;
	int         rc;

	if (lease_session(cli, "leases", &session) != 0) {
		return CLI_EXIT_USAGE;
	}
	if (pool != NULL && (rc = cli_check_group("leases", pool)) != 0) {
		return rc;
	}
	if ((rc = cli_connect(cli, &client)) != 0) {
		return rc;
	}
	err = sv_client_lease_list(
	    client, pool, session, cli_timeout(cli), &list);
	if (err != SV_OK) {
		rc = cli_error(client, err, "leases");
		sv_client_close(client);
		return rc;
	}
	if (cli->json) {
		size_t n = sv_leases_count(list);
		puts(n == 0 ? "[]" : "[");
		for (size_t i = 0; i < n; i++) {
			fputs("  ", stdout);
			lease_json(sv_leases_at(list, i));
			fputs(i + 1 < n ? ",\n" : "\n", stdout);
		}
		if (n > 0) {
			puts("]");
		}
	} else {
		puts("ID                    POOL  SLOT  TOKEN                 "
		     "EXPIRES    HOLDER  RESOURCE");
		for (size_t i = 0; i < sv_leases_count(list); i++) {
			lease_line(sv_leases_at(list, i));
		}
	}
	sv_leases_free(list);
	sv_client_close(client);
	return CLI_EXIT_OK;
}

/* cmd_pools lists the pools. */
int
cmd_pools(const struct cli *cli, int argc, char **argv)
{
	sv_client *client;
	sv_pools  *p = NULL;
	sv_err     err;
	int        rc;
	size_t     n;

	(void) argc;
	(void) argv;
	if ((rc = cli_connect(cli, &client)) != 0) {
		return rc;
	}
	if ((err = sv_client_pools(client, cli_timeout(cli), &p)) != SV_OK) {
		rc = cli_error(client, err, "pools");
		sv_client_close(client);
		return rc;
	}
	n = sv_pools_count(p);
	if (cli->json) {
		puts(n == 0 ? "[]" : "[");
		for (size_t i = 0; i < n; i++) {
			int first = 1;
			fputs("  {", stdout);
			json_key(stdout, &first, "name");
			json_string(stdout, sv_pools_name(p, i));
			json_key(stdout, &first, "slots");
			printf("%" PRIu32, sv_pools_slots(p, i));
			json_key(stdout, &first, "held");
			printf("%" PRIu32, sv_pools_held(p, i));
			json_key(stdout, &first, "ttl_ms");
			printf("%" PRIu64, sv_pools_ttl_ms(p, i));
			json_key(stdout, &first, "grace_ms");
			printf("%" PRIu64, sv_pools_grace_ms(p, i));
			json_key(stdout, &first, "path");
			json_string(stdout, sv_pools_path(p, i));
			json_key(stdout, &first, "on_release");
			json_string(stdout, sv_pools_on_release(p, i));
			json_key(stdout, &first, "kind");
			json_string(stdout, sv_pools_kind(p, i));
			fputs(i + 1 < n ? "},\n" : "}\n", stdout);
		}
		if (n > 0) {
			puts("]");
		}
	} else {
		puts("POOL  HELD/SLOTS  TTL_MS  GRACE_MS  ON_RELEASE  KIND  "
		     "PATH");
		for (size_t i = 0; i < n; i++) {
			cli_put_clean(stdout, sv_pools_name(p, i));
			printf("  %" PRIu32 "/%" PRIu32 "  %" PRIu64
			       "  %" PRIu64 "  %s  %s  ",
			    sv_pools_held(p, i), sv_pools_slots(p, i),
			    sv_pools_ttl_ms(p, i), sv_pools_grace_ms(p, i),
			    sv_pools_on_release(p, i), sv_pools_kind(p, i));
			cli_put_clean(stdout,
			    sv_pools_path(p, i)[0] != '\0'
			        ? sv_pools_path(p, i)
			        : "-");
			putchar('\n');
		}
	}
	sv_pools_free(p);
	sv_client_close(client);
	return CLI_EXIT_OK;
}

/* lease_acquire: lease acquire POOL [--slot N] [--wait MS]. */
static int
lease_acquire(const struct cli *cli, sv_client *client, int argc, char **argv,
    uint64_t session)
{
	const char *sv = cli_opt(cli, "slot"), *wv = cli_opt(cli, "wait");
	uint32_t    slot = 0, wait = 0;
	sv_lease   *l = NULL;
	sv_err      err;

	if (argc != 2) {
		return cli_usage_error("lease acquire",
		    "usage: lease acquire "
		    "POOL [--slot N] "
		    "[--wait MS]");
	}
	if (cli_check_group("lease acquire", argv[1]) != 0) {
		return CLI_EXIT_USAGE;
	}
	if (sv != NULL && cli_parse_u32(sv, LEASE_SLOT_MAX, &slot) != 0) {
		return cli_usage_error(
		    "lease acquire", "--slot must be 0..%u", LEASE_SLOT_MAX);
	}
	if (wv != NULL && cli_parse_u32(wv, LEASE_WAIT_MAX, &wait) != 0) {
		return cli_usage_error(
		    "lease acquire", "--wait must be milliseconds");
	}
	err = sv_client_lease_acquire(client, argv[1],
	    sv != NULL ? (int64_t) slot : SV_LEASE_ANY_SLOT, wait, session,
	    cli_timeout(cli), &l);
	if (err != SV_OK) {
		return cli_error(client, err, "lease acquire %s", argv[1]);
	}
	lease_print(cli, l);
	sv_lease_free(l);
	return CLI_EXIT_OK;
}

/* lease_claim: lease claim POOL SLOT TOKEN. */
static int
lease_claim(const struct cli *cli, sv_client *client, int argc, char **argv,
    uint64_t session)
{
	uint32_t  slot;
	uint64_t  token;
	sv_lease *l = NULL;
	sv_err    err;

	if (argc != 4 || cli_check_group("lease claim", argv[1]) != 0
	    || cli_parse_u32(argv[2], LEASE_SLOT_MAX, &slot) != 0
	    || cli_parse_u64(argv[3], UINT64_MAX, &token) != 0) {
		return cli_usage_error(
		    "lease claim", "usage: lease claim POOL SLOT TOKEN");
	}
	err = sv_client_lease_claim(
	    client, argv[1], slot, token, session, cli_timeout(cli), &l);
	if (err != SV_OK) {
		return cli_error(
		    client, err, "lease claim %s %s", argv[1], argv[2]);
	}
	lease_print(cli, l);
	sv_lease_free(l);
	return CLI_EXIT_OK;
}

/* lease_by_id: lease renew ID, lease release ID. */
static int
lease_by_id(const struct cli *cli, sv_client *client, int argc, char **argv,
    uint64_t session)
{
	uint64_t  id;
	sv_lease *l = NULL;
	sv_err    err;
	int       first = 1;

	if (argc != 2 || cli_parse_u64(argv[1], UINT64_MAX, &id) != 0
	    || id == 0) {
		return cli_usage_error(argv[0], "usage: lease %s ID", argv[0]);
	}
	if (strcmp(argv[0], "renew") == 0) {
		err = sv_client_lease_renew(
		    client, id, session, cli_timeout(cli), &l);
		if (err != SV_OK) {
			return cli_error(
			    client, err, "lease renew %s", argv[1]);
		}
		lease_print(cli, l);
		sv_lease_free(l);
		return CLI_EXIT_OK;
	}
	err = sv_client_lease_release(client, id, session, cli_timeout(cli));
	if (err != SV_OK) {
		return cli_error(client, err, "lease release %s", argv[1]);
	}
	if (cli->json) {
		putchar('{');
		json_key(stdout, &first, "released");
		printf("%" PRIu64 "}\n", id);
	} else {
		printf("lease %" PRIu64 ": released\n", id);
	}
	return CLI_EXIT_OK;
}

/* cmd_lease dispatches lease acquire|renew|release|claim. */
int
cmd_lease(const struct cli *cli, int argc, char **argv)
{
	sv_client *client;
	uint64_t   session;
	int        rc;

	if (lease_session(cli, "lease", &session) != 0) {
		return CLI_EXIT_USAGE;
	}
	if (strcmp(argv[0], "acquire") != 0 && strcmp(argv[0], "renew") != 0
	    && strcmp(argv[0], "release") != 0
	    && strcmp(argv[0], "claim") != 0) {
		return cli_usage_error("lease",
		    "\"%s\" is not acquire, renew, release or claim", argv[0]);
	}
	if ((rc = cli_connect(cli, &client)) != 0) {
		return rc;
	}
	if (strcmp(argv[0], "acquire") == 0) {
		rc = lease_acquire(cli, client, argc, argv, session);
	} else if (strcmp(argv[0], "claim") == 0) {
		rc = lease_claim(cli, client, argc, argv, session);
	} else {
		rc = lease_by_id(cli, client, argc, argv, session);
	}
	sv_client_close(client);
	return rc;
}

/* cmd_session: session open TTL_MS | session renew|close ID. */
int
cmd_session(const struct cli *cli, int argc, char **argv)
{
	sv_client *client;
	uint64_t   v, id = 0;
	sv_err     err;
	int        rc, first = 1;
	bool       open = strcmp(argv[0], "open") == 0;

	(void) argc;
	if (!open && strcmp(argv[0], "renew") != 0
	    && strcmp(argv[0], "close") != 0) {
		return cli_usage_error(
		    "session", "\"%s\" is not open, renew or close", argv[0]);
	}
	if (cli_parse_u64(argv[1], open ? LEASE_MS_MAX : UINT64_MAX, &v) != 0
	    || v == 0) {
		if (open) {
			return cli_usage_error("session open",
			    "TTL must be 1..%llu ms",
			    (unsigned long long) LEASE_MS_MAX);
		}
		return cli_usage_error(
		    "session", "\"%s\" is not a session id", argv[1]);
	}
	if ((rc = cli_connect(cli, &client)) != 0) {
		return rc;
	}
	if (open) {
		err = sv_client_session_open(client, v, cli_timeout(cli), &id);
	} else if (strcmp(argv[0], "renew") == 0) {
		id  = v;
		err = sv_client_session_renew(client, v, cli_timeout(cli));
	} else {
		id  = v;
		err = sv_client_session_close(client, v, cli_timeout(cli));
	}
	if (err != SV_OK) {
		rc = cli_error(client, err, "session %s", argv[0]);
	} else if (cli->json) {
		putchar('{');
		json_key(stdout, &first, "session");
		printf("%" PRIu64, id);
		json_key(stdout, &first, "state");
		json_string(stdout,
		    strcmp(argv[0], "close") == 0 ? "closed"
		        : open                    ? "open"
		                                  : "renewed");
		puts("}");
	} else if (open) {
		printf("%" PRIu64 "\n", id);
	} else {
		printf("session %" PRIu64 ": %s\n", id,
		    strcmp(argv[0], "close") == 0 ? "closed" : "renewed");
	}
	sv_client_close(client);
	return rc;
}

/* cmd_pool: pool create NAME SLOTS [options]. */
int
cmd_pool(const struct cli *cli, int argc, char **argv)
{
	const char *tv = cli_opt(cli, "ttl"), *gv = cli_opt(cli, "grace");
	uint32_t    slots;
	uint64_t    ttl = 0, grace = 0;
	sv_client  *client;
	sv_err      err;
	int         rc, first = 1;

	if (argc != 3 || strcmp(argv[0], "create") != 0) {
		return cli_usage_error(
		    "pool", "usage: pool create NAME SLOTS");
	}
	if ((rc = cli_check_group("pool create", argv[1])) != 0) {
		return rc;
	}
	if (cli_parse_u32(argv[2], LEASE_SLOTS_MAX, &slots) != 0 || slots == 0
	    || (tv != NULL && cli_parse_u64(tv, LEASE_MS_MAX, &ttl) != 0)
	    || (gv != NULL && cli_parse_u64(gv, LEASE_MS_MAX, &grace) != 0)) {
		return cli_usage_error("pool create",
		    "SLOTS must be 1..%u, --ttl and --grace 0..%llu ms",
		    LEASE_SLOTS_MAX, (unsigned long long) LEASE_MS_MAX);
	}
	if ((rc = cli_connect(cli, &client)) != 0) {
		return rc;
	}
	err = sv_client_pool_create(client, argv[1], slots, ttl, grace,
	    cli_opt(cli, "path"), cli_opt(cli, "on-release"),
	    cli_opt(cli, "kind"), cli_timeout(cli));
	if (err != SV_OK) {
		rc = cli_error(client, err, "pool create %s", argv[1]);
	} else if (cli->json) {
		putchar('{');
		json_key(stdout, &first, "pool");
		json_string(stdout, argv[1]);
		puts("}");
	} else {
		printf("pool %s: created\n", argv[1]);
	}
	sv_client_close(client);
	return rc;
}
