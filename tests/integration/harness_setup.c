/*
 * harness_setup.c — the cmocka setup and teardown of the integration tests.
 *
 * Design: a case's setup allocates an it_ctx and starts a fresh daemon for
 * its groups (it_start); the teardown stops it (it_stop), failing the case
 * on anything left behind, and frees the context. it_setup_g3 is the setup
 * that several tests share: one group "g" of 3 sv-testworker processes that
 * may be scaled up to 5.
 */
#include "harness.h"

#include <stdlib.h>

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
