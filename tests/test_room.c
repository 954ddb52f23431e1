/*
 * test_room.c — the decision of daemon/room.c: do N workers fit in the
 * machine's limits, and which limit does the refusal name. Each limit is
 * checked at its boundary (the last count that fits, the first that does
 * not), with the others unbounded.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "room.h"
#include "supervisor.h"

/* No bound known anywhere: everything fits. */
static const svd_room open_room = {
    .nofile = UINT64_MAX, .nproc = UINT64_MAX, .pid_max = 0, .threads_max = 0};

/* fits asserts that n workers fit in r, and returns nothing. */
static void
fits(const svd_room *r, uint64_t n)
{
	char why[256] = "";

	assert_true(svd_room_fits(r, n, why, sizeof(why)));
	assert_string_equal(why, "");
}

/* refused asserts that n workers do not fit in r and that the line names
 * want. */
static void
refused(const svd_room *r, uint64_t n, const char *want)
{
	char why[256] = "";

	assert_false(svd_room_fits(r, n, why, sizeof(why)));
	if (strstr(why, want) == NULL) {
		fail_msg("refusal of %llu workers: \"%s\" lacks \"%s\"",
		    (unsigned long long) n, why, want);
	}
	assert_null(strchr(why, '\n'));
}

/* Descriptors: SVD_FDS_BASE of the daemon's own plus one per worker. */
static void
test_nofile(void **state)
{
	svd_room r = open_room;

	(void) state;
	r.nofile = 120;
	fits(&r, (120 - SVD_FDS_BASE) / SVD_FDS_PER_WORKER);
	refused(
	    &r, (120 - SVD_FDS_BASE) / SVD_FDS_PER_WORKER + 1, "ulimit -n");
	refused(&r, 10000, "above the limit of 120");
	fits(&open_room, 1000000);
}

/* Each process bound refuses from its own value on, naming itself. */
static void
test_process_bounds(void **state)
{
	svd_room r = open_room;

	(void) state;
	r.pid_max = 100;
	fits(&r, 99);
	refused(&r, 100, "kernel.pid_max");

	r             = open_room;
	r.threads_max = 50;
	fits(&r, 49);
	refused(&r, 50, "kernel.threads-max");

	r       = open_room;
	r.nproc = 10;
	fits(&r, 9);
	refused(&r, 10, "ulimit -u");

	/* The descriptor bound is named first when both are passed. */
	r        = open_room;
	r.nofile = SVD_FDS_BASE + 5;
	r.nproc  = 3;
	refused(&r, 6, "ulimit -n");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nofile),
	    cmocka_unit_test(test_process_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
