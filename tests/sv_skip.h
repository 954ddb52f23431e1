/*
 * sv_skip.h — honest skips for cmocka tests.
 *
 * cmocka's skip() marks a case skipped, but the executable still exits 0,
 * so ctest (and scripts/test.sh) would count it as passed. SV_SKIP(reason)
 * prints the reason, counts the skip and skips the case; SV_EXIT(rc) turns
 * the group's result into the process's exit status: a failure stays a
 * failure, otherwise any skipped case makes the executable exit 77, which
 * ctest reports as "Skipped" (SKIP_RETURN_CODE 77 on every test).
 */
#ifndef SV_TESTS_SKIP_H
#define SV_TESTS_SKIP_H

#include <stdio.h>

/* Cases skipped in this executable (one translation unit per test). */
static int sv_skipped_cases;

/* Skips the running case, saying why on stderr, and counts it. */
#define SV_SKIP(reason)                                                \
	do {                                                           \
		fprintf(stderr, "SKIP: %s: %s\n", __func__, (reason)); \
		sv_skipped_cases++;                                    \
		skip();                                                \
	} while (0)

/* The exit status for cmocka's result rc: rc if failed, 77 if skipped. */
#define SV_EXIT(rc) ((rc) != 0 ? (rc) : (sv_skipped_cases > 0 ? 77 : 0))

#endif
