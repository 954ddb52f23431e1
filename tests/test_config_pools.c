/*
 * test_config_pools.c — the top-level `pools` list of the config
 * (daemon/config_pools.c, docs/config.md "Lease pools"): entries parse
 * with their defaults, every mistake is refused with one
 * "LABEL:LINE: KEY: what" line naming the key, and the path template rule
 * (svd_pool_path_check) holds for runtime pools too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"

/* load builds a one-group config with the given pools list. */
static sv_err
load(const char *pools, svd_config **cfgp, char *err, size_t errlen)
{
	char text[4096];

	snprintf(text, sizeof(text),
	    "groups = ( { name = \"w\"; purpose = \"p\"; count = 1;\n"
	    "  argv = [\"/bin/true\"]; } );\n"
	    "pools = %s;\n",
	    pools);
	return svd_config_load_text("t", text, cfgp, err, errlen);
}

/* refused checks that pools is refused with an error containing want. */
static void
refused(const char *pools, const char *want)
{
	svd_config *cfg = NULL;
	char        err[512];

	err[0] = '\0';
	assert_int_equal(load(pools, &cfg, err, sizeof(err)), SV_EINVAL);
	assert_null(cfg);
	if (strstr(err, want) == NULL) {
		fail_msg("error \"%s\" lacks \"%s\"", err, want);
	}
	assert_non_null(strstr(err, "t:"));
}

static void
test_valid(void **state)
{
	svd_config *cfg = NULL;
	char        err[512];

	(void) state;
	assert_int_equal(
	    load(
	        "( { name = \"m\"; slots = 4; ttl_ms = 100; grace_ms = 2000;\n"
	        "    path = \"/run/x/{slot}.db\"; on_release = \"truncate\";\n"
	        "    kind = \"directory\"; },\n"
	        "  { name = \"plain\"; slots = 1; } )",
	        &cfg, err, sizeof(err)),
	    SV_OK);
	assert_int_equal(cfg->npools, 2);
	assert_string_equal(cfg->pools[0].name, "m");
	assert_int_equal(cfg->pools[0].slots, 4);
	assert_int_equal(cfg->pools[0].ttl_ms, 100);
	assert_int_equal(cfg->pools[0].grace_ms, 2000);
	assert_string_equal(cfg->pools[0].path, "/run/x/{slot}.db");
	assert_int_equal(cfg->pools[0].policy, SV_LEASE_TRUNCATE);
	assert_true(cfg->pools[0].directory);
	/* Defaults. */
	assert_int_equal(cfg->pools[1].ttl_ms, 0);
	assert_int_equal(cfg->pools[1].grace_ms, 0);
	assert_null(cfg->pools[1].path);
	assert_int_equal(cfg->pools[1].policy, SV_LEASE_KEEP);
	assert_false(cfg->pools[1].directory);
	svd_config_free(cfg);
	/* No pools at all is fine. */
	assert_int_equal(load("()", &cfg, err, sizeof(err)), SV_OK);
	assert_int_equal(cfg->npools, 0);
	svd_config_free(cfg);
}

static void
test_errors(void **state)
{
	(void) state;
	refused("( { slots = 1; } )", "pools[0].name: missing required key");
	refused(
	    "( { name = \"m\"; } )", "pools[0].slots: missing required key");
	refused("( { name = \"m\"; slots = 0; } )",
	    "t:3: pools[0].slots: must be an "
	    "integer in 1..4096");
	refused("( { name = \"m\"; slots = 4097; } )", "pools[0].slots:");
	refused("( { name = \"m\"; slots = 1; }, { name = \"n\"; slots = "
	        "\"2\"; } )",
	    "pools[1].slots: must be an integer");
	refused("( { name = \"m\"; slots = 1; kind = 3; } )",
	    "pools[0].kind: must be a string");
	refused("( { name = \"a b\"; slots = 1; } )",
	    "pools[0].name: must be 1..64");
	refused("( { name = \"m\"; slots = 1; ttl_ms = -1; } )",
	    "pools[0].ttl_ms:");
	refused("( { name = \"m\"; slots = 1; grace_ms = 86400001; } )",
	    "pools[0].grace_ms:");
	refused("( { name = \"m\"; slots = 1; on_release = \"burn\"; } )",
	    "pools[0].on_release: must be one of");
	refused("( { name = \"m\"; slots = 1; kind = \"fifo\"; } )",
	    "pools[0].kind: must be one of");
	refused("( { name = \"m\"; slots = 1; path = \"rel/{slot}\"; } )",
	    "pools[0].path: must be an absolute path");
	refused("( { name = \"m\"; slots = 1; path = \"/a/{slot}/b\"; } )",
	    "path:");
	refused("( { name = \"m\"; slots = 1; path = \"/a/../{slot}\"; } )",
	    "path:");
	refused("( { name = \"m\"; slots = 1; colour = \"red\"; } )",
	    "pools[0].colour: unknown key");
	refused(
	    "( { name = \"m\"; slots = 1; }, { name = \"m\"; slots = 2; } )",
	    "pools[1].name: duplicate pool name \"m\" (also pools[0])");
	refused("{ name = \"m\"; slots = 1; }", "pools: must be a list");
	refused("( 3 )", "pools[0]: each entry must be a group");
}

static void
test_path_check(void **state)
{
	char long_path[1100];

	(void) state;
	assert_int_equal(svd_pool_path_check(NULL), SV_OK);
	assert_int_equal(svd_pool_path_check(""), SV_OK);
	assert_int_equal(svd_pool_path_check("/run/m/{slot}"), SV_OK);
	assert_int_equal(svd_pool_path_check("/run/m/slot-{slot}.db"), SV_OK);
	assert_int_equal(svd_pool_path_check("/run/m/x"), SV_EBADREQ);
	assert_int_equal(svd_pool_path_check("/run/{slot}/x"), SV_EBADREQ);
	assert_int_equal(svd_pool_path_check("run/{slot}"), SV_EBADREQ);
	assert_int_equal(svd_pool_path_check("/run/../{slot}"), SV_EBADREQ);
	memset(long_path, 'a', sizeof(long_path) - 1);
	long_path[0]                     = '/';
	long_path[sizeof(long_path) - 1] = '\0';
	memcpy(long_path + sizeof(long_path) - 8, "{slot}", 6);
	assert_int_equal(svd_pool_path_check(long_path), SV_EBADREQ);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_valid),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_path_check),
	};

	return cmocka_run_group_tests_name(
	    "test_config_pools", tests, NULL, NULL);
}
