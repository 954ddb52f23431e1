/*
 * harness_setup.c — the cmocka setup and teardown of the integration tests.
 *
 * Design: a case's setup allocates an it_ctx and starts a fresh daemon for
 * its groups (it_start); the teardown stops it (it_stop), failing the case
 * on anything left behind, and frees the context. it_setup_g3 is the setup
 * that several tests share: one group "g" of 3 sv-testworker processes that
 * may be scaled up to 5. it_scratch_setup and it_scratch_teardown are the
 * cmocka group setup and teardown of a test that plants files outside the
 * daemon's directory: one scratch directory for the whole run, named after
 * the test program.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sv_tmpdir.h"

char it_scratch_dir[64];

/* cmocka setup: a fresh daemon for groups; it_teardown frees the ctx. */
int
it_setup_groups(void **state, const struct it_group *groups, size_t n)
{
	it_ctx *ctx = calloc(1, sizeof(*ctx));

	if (ctx == NULL)
		return -1;
	if (it_start(ctx, groups, n) != 0) {
		free(ctx);
		return -1;
	}
	*state = ctx;
	return 0;
}

/* cmocka teardown: it_stop, failing the test on leftovers. */
int
it_teardown(void **state)
{
	it_ctx *ctx = *state;
	int     rc;

	if (ctx == NULL)
		return 0;
	rc = it_stop(ctx);
	free(ctx);
	*state = NULL;
	return rc;
}

/* cmocka setup: one group "g" of 3 workers, at most 5. */
int
it_setup_g3(void **state)
{
	static const struct it_group g[] = {
	    {.name = "g", .count = 3, .max_count = 5},
	};

	return it_setup_groups(state, g, 1);
}

/* cmocka group setup: makes it_scratch_dir, sv-it-NAME-XXXXXX for the
 * program integration_NAME. */
int
it_scratch_setup(void **state)
{
	const char *prog = program_invocation_short_name;
	char        name[64];

	(void) state;
	if (strncmp(prog, "integration_", strlen("integration_")) == 0)
		prog += strlen("integration_");
	snprintf(name, sizeof(name), "sv-it-%s", prog);
	return sv_tmpdir(it_scratch_dir, sizeof(it_scratch_dir), name);
}

/* cmocka group teardown: removes it_scratch_dir and all below it. */
int
it_scratch_teardown(void **state)
{
	(void) state;
	return sv_rmtree(it_scratch_dir);
}
