/*
 * cli_format_test.c — unit tests of supervisectl's pure helpers: JSON
 * string escaping (cli/json.c), uptime, time and truncated-text rendering,
 * strict number and group-name parsing, option lookup and the exit-code
 * map (cli/util.c).
 *
 * Design: the helpers write to a FILE, so each test captures the output
 * with open_memstream and compares whole strings. Nothing here talks to a
 * supervisor; the end-to-end behaviour is cli_test.sh's job.
 *
 * Layout: capture helper, json tests, uptime, time and truncation tests,
 * parsing and option tests, main.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli.h"
#include "json.h"

/* ---- capture helper ----------------------------------------------------- */

/* json_of returns json_string(s) as a new string; free it with free(). */
static char *
json_of(const char *s)
{
	char  *buf = NULL;
	size_t len = 0;
	FILE  *f   = open_memstream(&buf, &len);

	assert_non_null(f);
	json_string(f, s);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* expect_json checks that json_string(in) writes exactly want. */
static void
expect_json(const char *in, const char *want)
{
	char *got = json_of(in);

	assert_string_equal(got, want);
	free(got);
}

/* ---- json --------------------------------------------------------------- */

/* test_json_plain: ASCII passes through, NULL is the empty string. */
static void
test_json_plain(void **state)
{
	(void) state;
	expect_json("web", "\"web\"");
	expect_json("", "\"\"");
	expect_json(NULL, "\"\"");
}

/* test_json_escapes: quotes, backslash and control characters. */
static void
test_json_escapes(void **state)
{
	(void) state;
	expect_json("a\"b\\c", "\"a\\\"b\\\\c\"");
	expect_json("\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\"");
	expect_json("\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\"");
}

/* test_json_utf8: valid UTF-8 is kept, invalid bytes become U+FFFD. */
static void
test_json_utf8(void **state)
{
	(void) state;
	expect_json("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
	    "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
	expect_json("\xff", "\"\\ufffd\"");
	expect_json("\xc0\xaf", "\"\\ufffd\\ufffd\""); /* overlong */
	/* A UTF-16 surrogate encoded in UTF-8. */
	expect_json("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");
	expect_json("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	expect_json("a\xe2\x82", "\"a\\ufffd\\ufffd\""); /* truncated */
}

/* test_json_key: the comma goes before every member but the first. */
static void
test_json_key(void **state)
{
	char  *buf   = NULL;
	size_t len   = 0;
	FILE  *f     = open_memstream(&buf, &len);
	int    first = 1;

	(void) state;
	assert_non_null(f);
	json_key(f, &first, "a");
	fputs("1", f);
	json_key(f, &first, "b");
	fputs("2", f);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(buf, "\"a\":1,\"b\":2");
	free(buf);
}

/* ---- uptime ------------------------------------------------------------- */

/* expect_uptime checks the rendering of ms. */
static void
expect_uptime(uint64_t ms, const char *want)
{
	char buf[CLI_UPTIME_BUFSZ];

	cli_fmt_uptime(buf, sizeof buf, ms);
	assert_string_equal(buf, want);
}

/* test_uptime: every unit, its boundaries, and no rounding up. */
static void
test_uptime(void **state)
{
	(void) state;
	expect_uptime(0, "0ms");
	expect_uptime(850, "850ms");
	expect_uptime(999, "999ms");
	expect_uptime(1000, "1.0s");
	expect_uptime(12345, "12.3s");
	expect_uptime(59999, "59.9s");
	expect_uptime(60000, "1m00s");
	expect_uptime(302000, "5m02s");
	expect_uptime(3599999, "59m59s");
	expect_uptime(3600000, "1h00m");
	expect_uptime(11040000, "3h04m");
	expect_uptime(86399999, "23h59m");
	expect_uptime(86400000, "1d00h");
	expect_uptime(183600000, "2d03h");
	expect_uptime(UINT64_MAX, "213503982334d14h");
}

/* expect_time checks the rendering of a Unix time in ms. */
static void
expect_time(uint64_t ms, const char *want)
{
	char buf[CLI_TIME_BUFSZ];

	cli_fmt_time(buf, sizeof buf, ms);
	assert_string_equal(buf, want);
}

/* test_time: UTC, ISO 8601, milliseconds zero-padded. */
static void
test_time(void **state)
{
	(void) state;
	expect_time(0, "1970-01-01T00:00:00.000Z");
	expect_time(1735787045678ULL, "2025-01-02T03:04:05.678Z");
	expect_time(951782400007ULL, "2000-02-29T00:00:00.007Z");
	expect_time(4102444799999ULL, "2099-12-31T23:59:59.999Z");
}

/* expect_trunc checks cli_fmt_trunc(s, max). */
static void
expect_trunc(const char *s, size_t max, const char *want)
{
	char buf[64];

	cli_fmt_trunc(buf, sizeof buf, s, max);
	assert_string_equal(buf, want);
	assert_true(strlen(buf) <= max);
}

/* test_trunc: short text is kept, long text ends in "..." within max
 * bytes, never cut inside a UTF-8 sequence. */
static void
test_trunc(void **state)
{
	(void) state;
	expect_trunc("", 10, "");
	expect_trunc(NULL, 10, "");
	expect_trunc("0123456789", 10, "0123456789");
	expect_trunc("0123456789a", 10, "0123456...");
	expect_trunc("abcd", 3, "...");
	/* "\xc3\xa9" is two bytes: cutting after byte 6 would split it. */
	expect_trunc("abcdef\xc3\xa9ghij", 10, "abcdef...");
	expect_trunc("abcde\xc3\xa9ghijk", 10, "abcde\xc3\xa9...");
	/* A 4-byte sequence straddling the cut is dropped whole. */
	expect_trunc("abcde\xf0\x9f\x98\x80ghij", 10, "abcde...");
}

/* ---- parsing ------------------------------------------------------------ */

/* test_parse_u32: strict decimal only, bounded by max. */
static void
test_parse_u32(void **state)
{
	uint32_t v = 42;

	(void) state;
	assert_int_equal(cli_parse_u32("0", UINT32_MAX, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(cli_parse_u32("4294967295", UINT32_MAX, &v), 0);
	assert_int_equal(v, UINT32_MAX);
	assert_int_equal(cli_parse_u32("007", UINT32_MAX, &v), 0);
	assert_int_equal(v, 7);

	v = 42;
	assert_int_equal(cli_parse_u32("4294967296", UINT32_MAX, &v), -1);
	assert_int_equal(
	    cli_parse_u32("99999999999999999999999", UINT32_MAX, &v), -1);
	assert_int_equal(cli_parse_u32("11", 10, &v), -1);
	assert_int_equal(cli_parse_u32("", UINT32_MAX, &v), -1);
	assert_int_equal(cli_parse_u32(NULL, UINT32_MAX, &v), -1);
	assert_int_equal(cli_parse_u32("-1", UINT32_MAX, &v), -1);
	assert_int_equal(cli_parse_u32("-0", UINT32_MAX, &v), -1);
	assert_int_equal(cli_parse_u32("+1", UINT32_MAX, &v), -1);
	assert_int_equal(cli_parse_u32(" 1", UINT32_MAX, &v), -1);
	assert_int_equal(cli_parse_u32("1 ", UINT32_MAX, &v), -1);
	assert_int_equal(cli_parse_u32("3x", UINT32_MAX, &v), -1);
	assert_int_equal(cli_parse_u32("0x10", UINT32_MAX, &v), -1);
	assert_int_equal(v, 42); /* untouched on error */
}

/* test_parse_u64: the same rules as u32, over 64 bits. */
static void
test_parse_u64(void **state)
{
	uint64_t v = 42;

	(void) state;
	assert_int_equal(
	    cli_parse_u64("18446744073709551615", UINT64_MAX, &v), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(cli_parse_u64("4294967296", UINT64_MAX, &v), 0);
	assert_true(v == 4294967296ULL);

	v = 42;
	assert_int_equal(
	    cli_parse_u64("18446744073709551616", UINT64_MAX, &v), -1);
	assert_int_equal(cli_parse_u64("-1", UINT64_MAX, &v), -1);
	assert_int_equal(cli_parse_u64("+1", UINT64_MAX, &v), -1);
	assert_int_equal(cli_parse_u64("1e3", UINT64_MAX, &v), -1);
	assert_int_equal(cli_parse_u64("101", 100, &v), -1);
	assert_true(v == 42); /* untouched on error */
}

/* test_opt: the last value of a repeated option wins; absent is NULL. */
static void
test_opt(void **state)
{
	const struct cli_opt opts[]
	    = {{"count", "1"}, {"set", "a=b"}, {"count", "2"}};
	struct cli cli = {"ipc:///x", 1000, 0, opts, 3, -1};

	(void) state;
	assert_string_equal(cli_opt(&cli, "count"), "2");
	assert_string_equal(cli_opt(&cli, "set"), "a=b");
	assert_null(cli_opt(&cli, "for"));
	cli.nopts = 0;
	assert_null(cli_opt(&cli, "count"));
}

/* test_check_group: the config.md rule, 1..64 of [A-Za-z0-9_.-]. */
static void
test_check_group(void **state)
{
	char long_name[CLI_GROUP_MAX + 2];

	(void) state;
	assert_int_equal(cli_check_group("t", "web"), CLI_EXIT_OK);
	assert_int_equal(cli_check_group("t", "A-z_0.9"), CLI_EXIT_OK);
	memset(long_name, 'g', CLI_GROUP_MAX);
	long_name[CLI_GROUP_MAX] = '\0';
	assert_int_equal(cli_check_group("t", long_name), CLI_EXIT_OK);

	/* The failures below print their error line to stderr. */
	long_name[CLI_GROUP_MAX]     = 'g';
	long_name[CLI_GROUP_MAX + 1] = '\0';
	assert_int_equal(cli_check_group("t", long_name), CLI_EXIT_USAGE);
	assert_int_equal(cli_check_group("t", ""), CLI_EXIT_USAGE);
	assert_int_equal(cli_check_group("t", "a b"), CLI_EXIT_USAGE);
	assert_int_equal(cli_check_group("t", "a/b"), CLI_EXIT_USAGE);
	assert_int_equal(cli_check_group("t", "caf\xc3\xa9"), CLI_EXIT_USAGE);
}

/* test_exit_code: typed errors 1, EINVAL 100, local failures 111. */
static void
test_exit_code(void **state)
{
	(void) state;
	assert_int_equal(cli_exit_code(SV_OK), CLI_EXIT_OK);
	assert_int_equal(cli_exit_code(SV_ENOTFOUND), CLI_EXIT_ANSWER);
	assert_int_equal(cli_exit_code(SV_ENOTWORKER), CLI_EXIT_ANSWER);
	assert_int_equal(cli_exit_code(SV_EEXHAUSTED), CLI_EXIT_ANSWER);
	assert_int_equal(cli_exit_code(SV_EBUSY), CLI_EXIT_ANSWER);
	assert_int_equal(cli_exit_code(SV_ECONFLICT), CLI_EXIT_ANSWER);
	assert_int_equal(cli_exit_code(SV_EBADREQ), CLI_EXIT_ANSWER);
	/* A code from a newer supervisor is still its refusal. */
	assert_int_equal(cli_exit_code((sv_err) 42), CLI_EXIT_ANSWER);
	assert_int_equal(cli_exit_code(SV_EINVAL), CLI_EXIT_USAGE);
	assert_int_equal(cli_exit_code(SV_ENOMEM), CLI_EXIT_SYSTEM);
	assert_int_equal(cli_exit_code(SV_ETIMEDOUT), CLI_EXIT_SYSTEM);
	assert_int_equal(cli_exit_code(SV_ECONNECT), CLI_EXIT_SYSTEM);
	assert_int_equal(cli_exit_code(SV_ECLOSED), CLI_EXIT_SYSTEM);
	assert_int_equal(cli_exit_code(SV_EPROTO), CLI_EXIT_SYSTEM);
	assert_int_equal(cli_exit_code(SV_ESYSTEM), CLI_EXIT_SYSTEM);
}

/* main runs every test. */
int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_json_plain),
	    cmocka_unit_test(test_json_escapes),
	    cmocka_unit_test(test_json_utf8),
	    cmocka_unit_test(test_json_key),
	    cmocka_unit_test(test_uptime),
	    cmocka_unit_test(test_time),
	    cmocka_unit_test(test_trunc),
	    cmocka_unit_test(test_parse_u32),
	    cmocka_unit_test(test_parse_u64),
	    cmocka_unit_test(test_opt),
	    cmocka_unit_test(test_check_group),
	    cmocka_unit_test(test_exit_code),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
