/*
 * test_procstat.c — the /proc reader (libsupervise/src/procstat.c): the
 * stat parser on real-shaped lines and on hostile command names (spaces,
 * parentheses, ") (" sequences, digits and a fake field list inside the
 * name), on truncated and malformed lines (a refusal leaves the output
 * untouched), on input that is not terminated; and the read function
 * against this process and its parent, and a pid that does not exist.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "procstat.h"

/* The fields after the command name of a real line (state S, ppid 27515,
 * start time 2027251 in field 22). */
#define TAIL                                                                 \
	" S 27515 27515 22792 0 -1 4194304 102 0 0 0 0 0 0 0 20 0 1 0 "      \
	"2027251 3133440 413 18446744073709551615 94211032911872 0 0 0 0 0 " \
	"0 0 0 17 0 0 0 0 0 0\n"

/* parse parses the terminated string s. */
static sv_err
parse(const char *s, sv_procstat *ps)
{
	return sv_procstat_parse(s, strlen(s), ps);
}

/* A plain line, and the same line with hostile command names: the
 * fields are always those after the last ')'. */
static void
test_hostile_comm(void **state)
{
	static const char *const lines[] = {
	    "27547 (cat)" TAIL,
	    "27547 (a b c)" TAIL,
	    "27547 () ()" TAIL, /* comm ") (" */
	    "27547 (x) (y)" TAIL,
	    "27547 ()))" TAIL,
	    "27547 (((()" TAIL,
	    "27547 ( ) R 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 9)" TAIL,
	    "27547 (\n)" TAIL,
	    "27547 (%s %n)" TAIL,
	};

	(void) state;
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		sv_procstat ps = {0, 0, 0};
		assert_int_equal(parse(lines[i], &ps), SV_OK);
		assert_int_equal(ps.state, 'S');
		assert_int_equal(ps.ppid, 27515);
		assert_int_equal(ps.start_time, 2027251);
	}
}

/* Numbers at their bounds; a negative ppid is accepted as the kernel
 * prints a signed field; the line may end right after field 22. */
static void
test_bounds(void **state)
{
	sv_procstat ps;

	(void) state;
	assert_int_equal(parse("1 (init) S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 "
	                       "1 0 18446744073709551615",
	                     &ps),
	    SV_OK);
	assert_int_equal(ps.ppid, 0);
	assert_true(ps.start_time == UINT64_MAX);
	assert_int_equal(parse("1 (z) Z -1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 "
	                       "0 0\n",
	                     &ps),
	    SV_OK);
	assert_int_equal(ps.state, 'Z');
	assert_int_equal(ps.ppid, -1);
	assert_true(ps.start_time == 0);
}

/* Malformed lines are refused and leave the output as it was. */
static void
test_malformed(void **state)
{
	static const char *const bad[] = {
	    "",
	    "27547 cat S 1",
	    "27547 (cat",
	    "27547 cat)" TAIL, /* no '(' before the last ')' */
	    ") 27547 (cat" TAIL,
	    "27547 (cat)",
	    "27547 () (" TAIL, /* the name cut short */
	    "27547 (cat) ",
	    "27547 (cat)S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5",
	    "27547 (cat)  S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5",
	    "27547 (cat) SS 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5",
	    "27547 (cat) S x 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5",
	    "27547 (cat) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0",
	    "27547 (cat) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 -5",
	    "27547 (cat) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5x",
	    "27547 (cat) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 "
	    "18446744073709551616",
	    "27547 (cat) S 9223372036854775808 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 "
	    "0 1 0 5",
	    "27547 (cat) S - 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5",
	    "27547 (cat) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1  5",
	};

	(void) state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		sv_procstat ps = {'?', 42, 43};
		assert_int_equal(parse(bad[i], &ps), SV_EINVAL);
		assert_int_equal(ps.state, '?');
		assert_int_equal(ps.ppid, 42);
		assert_true(ps.start_time == 43);
	}
	/* The smallest ppid there is parses. */
	{
		sv_procstat ps;
		assert_int_equal(parse("2 (k) S -9223372036854775808 1 1 0 -1 "
		                       "0 0 0 0 0 0 0 0 0 20 0 1 0 5",
		                     &ps),
		    SV_OK);
		assert_true(ps.ppid == INT64_MIN);
	}
}

/* The parser reads len bytes and no more: a buffer without a terminator,
 * followed by bytes that would change the answer if read. */
static void
test_length_bound(void **state)
{
	const char  line[] = "7 (a) S 3 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 "
	                     "12345";
	char        buf[sizeof(line) + 8];
	sv_procstat ps;

	(void) state;
	memcpy(buf, line, sizeof(line) - 1);
	memcpy(buf + sizeof(line) - 1, "67) Z 9 ", 8);
	assert_int_equal(sv_procstat_parse(buf, sizeof(line) - 1, &ps), SV_OK);
	assert_int_equal(ps.state, 'S');
	assert_int_equal(ps.ppid, 3);
	assert_true(ps.start_time == 12345);
	/* Cut inside field 22's number: still a whole number, shorter. */
	assert_int_equal(sv_procstat_parse(buf, sizeof(line) - 3, &ps), SV_OK);
	assert_true(ps.start_time == 123);
	/* Cut before field 22: refused. */
	assert_int_equal(
	    sv_procstat_parse(buf, sizeof(line) - 7, &ps), SV_EINVAL);
}

/* The read function: this process runs (R) under its parent; a pid that
 * cannot exist is not found. */
static void
test_read(void **state)
{
	sv_procstat me, parent;

	(void) state;
	assert_int_equal(sv_procstat_read(getpid(), &me), SV_OK);
	assert_int_equal(me.state, 'R');
	assert_int_equal(me.ppid, (int64_t) getppid());
	assert_true(me.start_time > 0);
	assert_int_equal(sv_procstat_read(getppid(), &parent), SV_OK);
	assert_true(parent.start_time <= me.start_time);
	assert_int_equal(sv_procstat_read(-1, &me), SV_ENOTFOUND);
	assert_int_equal(sv_procstat_read(0x7ffffffe, &me), SV_ENOTFOUND);
}

/* sv_proc_read_file reads a whole small file, terminated, and stops at
 * cap - 1 bytes. */
static void
test_read_file(void **state)
{
	char    buf[8];
	char    big[4096];
	ssize_t n;

	(void) state;
	n = sv_proc_read_file("/proc/self/stat", big, sizeof(big), true);
	assert_true(n > 0);
	assert_int_equal(big[n], '\0');
	assert_int_equal(big[n - 1], '\n');
	n = sv_proc_read_file("/proc/self/stat", buf, sizeof(buf), true);
	assert_int_equal(n, (ssize_t) sizeof(buf) - 1);
	assert_int_equal(buf[n], '\0');
	assert_int_equal(
	    sv_proc_read_file("/proc/0/none", buf, sizeof(buf), false), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hostile_comm),
	    cmocka_unit_test(test_bounds),
	    cmocka_unit_test(test_malformed),
	    cmocka_unit_test(test_length_bound),
	    cmocka_unit_test(test_read),
	    cmocka_unit_test(test_read_file),
	};
	return cmocka_run_group_tests_name("procstat", tests, NULL, NULL);
}
