/*
 * test_conn_admit.c — the control socket's admission decision
 * (daemon/conn_admit.c) as a table: the cap derived from the descriptor
 * limit, and for each kind of peer (unprivileged, privileged, worker below
 * and at its floor) the count at which it is first refused and by which
 * rule. Each row is checked at the boundary: one below it is admitted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "conn_admit.h"

/* The limits: cap from RLIMIT_NOFILE / 4, at most 4096, at least 8; the
 * reserve an eighth (rounded up, at least 2); 0 picks the defaults. */
static void
test_limits_for(void **state)
{
	svd_admit_limits l;

	(void) state;
	l = svd_admit_limits_for(1024, 0, 0);
	assert_int_equal(l.cap, 256);
	assert_int_equal(l.reserve, 32);
	assert_int_equal(l.per_process, SVD_ADMIT_PER_PROCESS);
	assert_int_equal(l.per_uid, SVD_ADMIT_PER_UID);
	assert_int_equal(l.worker_floor, SVD_ADMIT_WORKER_FLOOR);
	l = svd_admit_limits_for(1u << 20, 10, 20);
	assert_int_equal(l.cap, SVD_ADMIT_CAP_MAX);
	assert_int_equal(l.reserve, SVD_ADMIT_CAP_MAX / 8);
	assert_int_equal(l.per_process, 10);
	assert_int_equal(l.per_uid, 20);
	l = svd_admit_limits_for(0, 0, 0); /* unknown: unlimited */
	assert_int_equal(l.cap, SVD_ADMIT_CAP_MAX);
	l = svd_admit_limits_for(12, 0, 0);
	assert_int_equal(l.cap, 8);
	assert_int_equal(l.reserve, 2);
	l = svd_admit_limits_for(100, 0, 0);
	assert_int_equal(l.cap, 25);
	assert_int_equal(l.reserve, 4);
}

/* One row: a peer, counts, the verdict. */
struct row {
	bool              privileged, worker;
	uint32_t          total, process, uid;
	svd_admit_verdict want;
};

/* With cap 256, reserve 32, per_process 64, per_uid 256 -> use a per_uid of
 * 100 to tell the uid bound from the cap. */
static void
test_table(void **state)
{
	static const struct row rows[] = {
	    /* Unprivileged: per process, per uid, then cap - reserve. */
	    {false, false, 0, 0, 0, SVD_ADMIT_OK},
	    {false, false, 10, 63, 63, SVD_ADMIT_OK},
	    {false, false, 10, 64, 64, SVD_ADMIT_PROCESS},
	    {false, false, 150, 10, 99, SVD_ADMIT_OK},
	    {false, false, 150, 10, 100, SVD_ADMIT_UID},
	    {false, false, 223, 0, 0, SVD_ADMIT_OK},
	    {false, false, 224, 0, 0, SVD_ADMIT_FULL},
	    /* Privileged: no per-uid bound, half the reserve. */
	    {true, false, 150, 10, 200, SVD_ADMIT_OK},
	    {true, false, 10, 64, 64, SVD_ADMIT_PROCESS},
	    {true, false, 224, 0, 0, SVD_ADMIT_OK},
	    {true, false, 239, 0, 0, SVD_ADMIT_OK},
	    {true, false, 240, 0, 0, SVD_ADMIT_FULL},
	    /* A worker below its floor: anything under the cap. */
	    {false, true, 255, 1, 500, SVD_ADMIT_OK},
	    {false, true, 256, 0, 0, SVD_ADMIT_FULL},
	    {true, true, 255, 0, 0, SVD_ADMIT_OK},
	    /* A worker at its floor: as any peer of its uid. */
	    {false, true, 10, 2, 10, SVD_ADMIT_OK},
	    {false, true, 10, 64, 64, SVD_ADMIT_PROCESS},
	    {false, true, 224, 2, 10, SVD_ADMIT_FULL},
	    {false, true, 100, 2, 100, SVD_ADMIT_UID},
	    {true, true, 239, 2, 300, SVD_ADMIT_OK},
	    {true, true, 240, 2, 300, SVD_ADMIT_FULL},
	};
	svd_admit_limits l = svd_admit_limits_for(1024, 64, 100);

	(void) state;
	assert_int_equal(l.cap, 256);
	assert_int_equal(l.reserve, 32);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		svd_admit_peer    p = {r->privileged, r->worker};
		svd_admit_counts  n = {r->total, r->process, r->uid};
		svd_admit_verdict v = svd_admit(&l, &p, &n);

		if (v != r->want) {
			fail_msg("row %zu: got %d, want %d", i, (int) v,
			    (int) r->want);
		}
	}
}

/* The whole story of one flood: an unprivileged uid with many processes
 * fills its share, a worker flood stops at its per-process bound, and
 * still root and a fresh worker get in. */
static void
test_flood_leaves_room(void **state)
{
	svd_admit_limits l     = svd_admit_limits_for(1024, 0, 0);
	svd_admit_peer   other = {false, false}, root = {true, false};
	svd_admit_peer   worker = {false, true};
	svd_admit_counts n      = {0, 0, 0};
	uint32_t         taken  = 0;

	(void) state;
	/* Processes of one other uid, 64 each, until refused. */
	for (;;) {
		n.process = taken % 64;
		n.uid     = taken;
		if (svd_admit(&l, &other, &n) != SVD_ADMIT_OK) {
			break;
		}
		taken++;
		n.total++;
	}
	assert_true(n.total < l.cap - l.reserve + 1);
	/* Root still gets in, and a worker with no connection. */
	n.process = 0;
	n.uid     = 0;
	assert_int_equal(svd_admit(&l, &root, &n), SVD_ADMIT_OK);
	assert_int_equal(svd_admit(&l, &worker, &n), SVD_ADMIT_OK);
	/* Privileged peers fill their half of the reserve; workers below
	 * their floor still get the rest. */
	while (svd_admit(&l, &root, &n) == SVD_ADMIT_OK) {
		n.total++;
	}
	assert_int_equal(n.total, l.cap - l.reserve / 2);
	assert_int_equal(svd_admit(&l, &worker, &n), SVD_ADMIT_OK);
	n.total = l.cap;
	assert_int_equal(svd_admit(&l, &worker, &n), SVD_ADMIT_FULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_limits_for),
	    cmocka_unit_test(test_table),
	    cmocka_unit_test(test_flood_leaves_room),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
