/*
 * test_state_compact.c — the journal file stays bounded by the live state
 * however many records are appended (daemon/state.c, docs/durability.md,
 * "Compaction").
 *
 * A crash-looping seat is journaled as an S, P, X triple per restart, and
 * its live state never grows: one group, one seat, no live process. So
 * after any number of restarts the file must stay within one snapshot plus
 * the records compaction lets through (ST_COMPACT_MIN of them, or 4 times
 * the snapshot's, whichever is more). Before the fix, the compaction rule
 * compared the appended records with every record the mirror had ever
 * taken instead of the snapshot's, so each compaction came 5 times later
 * than the one before and the file grew with the number of restarts (at
 * 300,000 records, past 3 MiB; an hour of a crash loop would reach the
 * 64 MiB a successor refuses to read). The journal left must replay to the
 * same state: the seat's generation floor past the last restart.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "state.h"
#include "sv_tmpdir.h"

/* Restarts journaled: 3 records each. */
#define RESTARTS 100000
/* A bound far above one snapshot + 4096 records of this seat (about
 * 40 bytes each) and far below the unbounded growth (30 bytes a record). */
#define BOUND_BYTES (512L * 1024)

/* file_bytes returns the size of the file at path, -1 when missing. */
static long
file_bytes(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 ? (long) sb.st_size : -1;
}

/* A crash loop of 100,000 restarts keeps the journal below BOUND_BYTES at
 * every step and replays to the seat's last generation. */
static void
test_crash_loop_bounded(void **state)
{
	char       dir[4096], path[4200], err[512];
	svd_state *s = NULL;
	sv_jstate  prev;
	long       max = 0, now;
	uint64_t   gen;

	(void) state;
	assert_int_equal(sv_tmpdir(dir, sizeof(dir), "sv-test-compact"), 0);
	snprintf(path, sizeof(path), "%s/state", dir);
	assert_int_equal(
	    svd_state_open(dir, &s, &prev, err, sizeof(err)), SV_OK);
	sv_jstate_free(&prev);
	svd_state_record(s,
	    &(sv_jrec) {.kind = SV_J_GROUP,
	        .name         = "loop",
	        .count        = 1,
	        .config_count = 1});
	assert_int_equal(svd_state_begin(s, err, sizeof(err)), SV_OK);
	for (gen = 1; gen <= RESTARTS; gen++) {
		svd_state_record(s,
		    &(sv_jrec) {.kind = SV_J_SPAWNING,
		        .name         = "loop",
		        .generation   = gen});
		svd_state_record(s,
		    &(sv_jrec) {.kind = SV_J_STARTED,
		        .name         = "loop",
		        .generation   = gen,
		        .pid          = 1000 + (int64_t) (gen % 30000),
		        .start_time   = gen});
		svd_state_record(s,
		    &(sv_jrec) {.kind = SV_J_REAPED,
		        .name         = "loop",
		        .generation   = gen});
		if (gen % 1000 == 0) {
			now = file_bytes(path);
			if (now > max) {
				max = now;
			}
			if (max > BOUND_BYTES) {
				fail_msg("journal at %ld bytes after %llu "
				         "restarts (bound %ld)",
				    max, (unsigned long long) gen,
				    BOUND_BYTES);
			}
		}
	}
	assert_true(svd_state_durability(s)->ok);
	svd_state_close(s);

	/* What is left replays to the seat's floor past the last restart. */
	assert_int_equal(
	    svd_state_open(dir, &s, &prev, err, sizeof(err)), SV_OK);
	assert_int_equal(prev.ngroups, 1);
	assert_string_equal(prev.groups[0].name, "loop");
	assert_true(prev.groups[0].nseats >= 1);
	assert_int_equal(
	    prev.groups[0].seats[0].next_generation, RESTARTS + 1);
	assert_int_equal(prev.groups[0].seats[0].nprocs, 0);
	assert_int_equal(prev.nlive, 0);
	sv_jstate_free(&prev);
	svd_state_close(s);
	assert_int_equal(sv_rmtree(dir), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_crash_loop_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
