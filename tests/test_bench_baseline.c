/*
 * test_bench_baseline.c — sv-bench's recorded figures (bench/baseline.tsv,
 * read by bench/baseline.c):
 *
 *   - one fact, one place: bench/README.md's "baseline-figures" table
 *     must equal, row by row, the table generated from baseline.tsv (a
 *     changed, missing or extra row fails, naming it);
 *   - the rule: a figure 26 % worse than the recorded one prints a
 *     REGRESSION line and a figure 24 % worse does not, for "lower" and
 *     "higher" figures alike and for every figure the file records;
 *   - hostile files: every malformed line gives a typed error naming the
 *     line and leaves the table empty; random bytes never crash the
 *     parser.
 *
 * `test_bench_baseline --print` prints the README block (markers
 * included), generated from baseline.tsv, to paste after a refresh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "baseline.h"
#include "doc_table.h"

#ifndef SV_SOURCE_DIR
#error "SV_SOURCE_DIR must name the source tree"
#endif

#define TSV    SV_SOURCE_DIR "/bench/baseline.tsv"
#define README SV_SOURCE_DIR "/bench/README.md"
#define BEGIN  "<!-- baseline-figures begin"
#define END    "<!-- baseline-figures end -->"

/* load_tsv loads the checked-in baseline.tsv into t. */
static void
load_tsv(struct bl_table *t)
{
	char   why[256] = "";
	sv_err err;

	bl_init(t);
	err = bl_load(t, TSV, why, sizeof(why));
	if (err != SV_OK) {
		fail_msg("%s: %s", TSV, why);
	}
	assert_true(t->n > 0);
}

/* markdown returns the generated table of t (malloc'ed; caller frees). */
static char *
markdown(const struct bl_table *t)
{
	char  *buf = NULL;
	size_t len = 0;
	FILE  *f   = open_memstream(&buf, &len);

	assert_non_null(f);
	bl_print_markdown(f, t);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* readme_block returns the table lines ('|' first) of the README block,
 * each ending in '\n' (malloc'ed; the caller frees). */
static char *
readme_block(void)
{
	char       *doc = doc_slurp(README);
	const char *p   = strstr(doc, BEGIN);
	const char *e   = p != NULL ? strstr(p, END) : NULL;
	char       *out;
	size_t      n = 0;

	if (p == NULL || e == NULL) {
		fail_msg("%s: no \"%s\" ... \"%s\" block", README, BEGIN, END);
		return NULL;
	}
	out = malloc((size_t) (e - p) + 1);
	assert_non_null(out);
	while (p < e) {
		const char *nl = memchr(p, '\n', (size_t) (e - p));
		size_t      len
		    = nl != NULL ? (size_t) (nl - p) + 1 : (size_t) (e - p);
		if (p[0] == '|') {
			memcpy(out + n, p, len);
			n += len;
		}
		p += len;
	}
	out[n] = '\0';
	free(doc);
	return out;
}

/* next_line returns the line at *p (without its newline, in buf) and
 * advances *p; NULL at the end. */
static const char *
next_line(const char **p, char *buf, size_t size)
{
	const char *nl;
	size_t      len;

	if (**p == '\0') {
		return NULL;
	}
	nl  = strchr(*p, '\n');
	len = nl != NULL ? (size_t) (nl - *p) : strlen(*p);
	snprintf(buf, size, "%.*s", (int) len, *p);
	*p += len + (nl != NULL ? 1 : 0);
	return buf;
}

/* test_readme_agrees: README's table equals the one made from the tsv. */
static void
test_readme_agrees(void **state)
{
	struct bl_table t;
	char           *want, *have;
	const char     *w, *h;
	char            wl[512], hl[512];
	int             row = 0, bad = 0;

	(void) state;
	load_tsv(&t);
	want = markdown(&t);
	have = readme_block();
	w    = want;
	h    = have;
	for (;;) {
		const char *a = next_line(&w, wl, sizeof(wl));
		const char *b = next_line(&h, hl, sizeof(hl));

		if (a == NULL && b == NULL) {
			break;
		}
		row++;
		if (a == NULL || b == NULL || strcmp(a, b) != 0) {
			fprintf(stderr,
			    "%s, baseline-figures line %d differs from %s:\n"
			    "  README:       %s\n  baseline.tsv: %s\n",
			    README, row, TSV, b != NULL ? b : "(no line)",
			    a != NULL ? a : "(no line)");
			bad++;
		}
	}
	free(want);
	free(have);
	bl_free(&t);
	if (bad > 0) {
		fail_msg(
		    "%d line(s) of bench/README.md's recorded figures differ"
		    " from bench/baseline.tsv (regenerate: "
		    "test_bench_baseline --print)",
		    bad);
	}
}

/* regressed runs bl_check on (e, now) and returns whether it printed a
 * REGRESSION line (and checks the line names the row). */
static bool
regressed(const struct bl_entry *e, double now)
{
	char  *buf = NULL;
	size_t len = 0;
	FILE  *f   = open_memstream(&buf, &len);
	bool   r;

	assert_non_null(f);
	r = bl_check(f, e, now, "baseline.tsv");
	assert_int_equal(fclose(f), 0);
	assert_int_equal(r, len > 0);
	if (r) {
		assert_true(strncmp(buf, "REGRESSION ", 11) == 0);
		assert_non_null(strstr(buf, e->row));
		assert_non_null(strchr(buf, '\n'));
	}
	free(buf);
	return r;
}

/* worse returns e's figure made pct percent worse. */
static double
worse(const struct bl_entry *e, double pct)
{
	return e->better == BL_LOWER ? e->figure * (1 + pct / 100)
	                             : e->figure * (1 - pct / 100);
}

/* test_rule_both_ways: 26 % worse is a REGRESSION, 24 % is not; better
 * figures never are. */
static void
test_rule_both_ways(void **state)
{
	struct bl_entry lo
	    = {"quick", "lat (ms)", "ratio", 1.30, "x", BL_LOWER};
	struct bl_entry hi
	    = {"quick", "rate (/s)", "ratio", 0.85, "x", BL_HIGHER};

	(void) state;
	assert_true(regressed(&lo, worse(&lo, 26)));
	assert_false(regressed(&lo, worse(&lo, 24)));
	assert_false(regressed(&lo, worse(&lo, 25)));
	assert_false(regressed(&lo, 0.5));
	assert_true(regressed(&hi, worse(&hi, 26)));
	assert_false(regressed(&hi, worse(&hi, 24)));
	assert_false(regressed(&hi, 2.0));
	/* A figure recorded as 0 that should stay low: any rise counts. */
	lo.figure = 0;
	assert_true(regressed(&lo, 0.1));
	assert_false(regressed(&lo, 0));
	hi.figure = 0;
	assert_false(regressed(&hi, 0));
}

/* test_rule_every_recorded: the rule holds for every checked-in figure. */
static void
test_rule_every_recorded(void **state)
{
	struct bl_table t;

	(void) state;
	load_tsv(&t);
	for (size_t i = 0; i < t.n; i++) {
		const struct bl_entry *e = &t.e[i];

		if (e->figure <= 0) {
			continue; /* no percentage of 0 */
		}
		if (!regressed(e, worse(e, 26))) {
			fail_msg("%s / %s: 26%% worse is no REGRESSION",
			    e->mode, e->row);
		}
		if (regressed(e, worse(e, 24))) {
			fail_msg("%s / %s: 24%% worse is a REGRESSION",
			    e->mode, e->row);
		}
	}
	bl_free(&t);
}

/* test_parse_good: comments, blank lines, no final newline; lookups. */
static void
test_parse_good(void **state)
{
	static const char text[]
	    = "# comment\n"
	      "\n"
	      "quick\twhoami RTT median (us)\tratio\t1.10\tx\tlower\n"
	      "full\tspawn N workers, rate "
	      "(workers/s)\tratio\t0.85\tx\thigher";
	struct bl_table        t;
	const struct bl_entry *e;
	char                   why[128] = "";

	(void) state;
	bl_init(&t);
	assert_int_equal(
	    bl_parse(&t, text, strlen(text), why, sizeof(why)), SV_OK);
	assert_int_equal(t.n, 2);
	e = bl_find(&t, "quick", "whoami RTT median (us)", "ratio");
	assert_non_null(e);
	assert_true(e->figure > 1.09 && e->figure < 1.11);
	assert_int_equal(e->better, BL_LOWER);
	assert_null(bl_find(&t, "full", "whoami RTT median (us)", "ratio"));
	assert_null(bl_find(&t, "quick", "whoami RTT median (us)", "ours"));
	e = bl_find(&t, "full", "spawn N workers, rate (workers/s)", "ratio");
	assert_non_null(e);
	assert_int_equal(e->better, BL_HIGHER);
	bl_free(&t);
}

/* test_parse_hostile: each bad file is refused with its code and line. */
static void
test_parse_hostile(void **state)
{
	static const struct {
		const char *text;
		sv_err      err;
	} bad[] = {
	    {"quick\trow\tratio\t1\tx\n", SV_EINVAL},
	    {"quick\trow\tratio\t1\tx\tlower\textra\n", SV_EINVAL},
	    {"fast\trow\tratio\t1\tx\tlower\n", SV_EINVAL},
	    {"quick\t\tratio\t1\tx\tlower\n", SV_EINVAL},
	    {"quick\trow|x\tratio\t1\tx\tlower\n", SV_EINVAL},
	    {"quick\trow\tmedian\t1\tx\tlower\n", SV_EINVAL},
	    {"quick\trow\tratio\t-1\tx\tlower\n", SV_EINVAL},
	    {"quick\trow\tratio\tnan\tx\tlower\n", SV_EINVAL},
	    {"quick\trow\tratio\tinf\tx\tlower\n", SV_EINVAL},
	    {"quick\trow\tratio\t0x10\tx\tlower\n", SV_EINVAL},
	    {"quick\trow\tratio\t 1\tx\tlower\n", SV_EINVAL},
	    {"quick\trow\tratio\t1.2.3\tx\tlower\n", SV_EINVAL},
	    {"quick\trow\tratio\t\tx\tlower\n", SV_EINVAL},
	    {"quick\trow\tratio\t1\t\tlower\n", SV_EINVAL},
	    {"quick\trow\tratio\t1\tx\tbetter\n", SV_EINVAL},
	    {"quick\trow\tratio\t1\tx\tlower \n", SV_EINVAL},
	    {"quick\trow\tratio\t1\tx\tlower\n"
	     "quick\trow\tratio\t2\tx\tlower\n",
	        SV_EINVAL},
	    {"quick row ratio 1 x lower\n", SV_EINVAL},
	};
	char            why[128];
	char            longline[BL_MAX_LINE + 32];
	struct bl_table t;

	(void) state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		bl_init(&t);
		if (bl_parse(
		        &t, bad[i].text, strlen(bad[i].text), why, sizeof(why))
		    != bad[i].err) {
			fail_msg("case %zu not refused with %s", i,
			    sv_err_name(bad[i].err));
		}
		assert_int_equal(t.n, 0);
		assert_null(t.e);
		assert_true(strncmp(why, "line ", 5) == 0);
	}
	/* The line number is that of the bad line. */
	{
		static const char two[] = "# c\nquick\tr\tours\t1\tms\tlower\n"
		                          "quick\tr\tours\t1\tms\twrong\n";
		bl_init(&t);
		assert_int_equal(
		    bl_parse(&t, two, strlen(two), why, sizeof(why)),
		    SV_EINVAL);
		assert_true(strncmp(why, "line 3:", 7) == 0);
	}
	/* An over-long line, and a NUL byte inside a line. */
	memset(longline, 'a', sizeof(longline));
	bl_init(&t);
	assert_int_equal(
	    bl_parse(&t, longline, sizeof(longline), why, sizeof(why)),
	    SV_ETOOLARGE);
	{
		static const char nul[] = "quick\tr\0w\tours\t1\tms\tlower\n";
		bl_init(&t);
		assert_int_equal(
		    bl_parse(&t, nul, sizeof(nul) - 1, why, sizeof(why)),
		    SV_EINVAL);
	}
	/* A file that is not there. */
	bl_init(&t);
	assert_int_equal(
	    bl_load(&t, SV_SOURCE_DIR "/bench/no-such.tsv", why, sizeof(why)),
	    SV_ESYSTEM);
}

/* test_parse_random: random bytes and mutated lines never crash. */
static void
test_parse_random(void **state)
{
	static const char good[]   = "quick\trow\tratio\t1.5\tx\tlower\n";
	char              buf[256] = {0};
	char              why[128];
	unsigned          seed = 20;

	(void) state;
	for (int i = 0; i < 20000; i++) {
		struct bl_table t;
		size_t          len;

		seed = seed * 1103515245u + 12345u;
		if (i % 2 == 0) {
			len = (seed >> 8) % sizeof(buf);
			for (size_t k = 0; k < len; k++) {
				seed   = seed * 1103515245u + 12345u;
				buf[k] = (char) (seed >> 16);
			}
		} else {
			len = sizeof(good) - 1;
			memcpy(buf, good, len);
			buf[(seed >> 8) % len] = (char) (seed >> 16);
		}
		bl_init(&t);
		if (bl_parse(&t, buf, len, why, sizeof(why)) == SV_OK) {
			bl_free(&t);
		} else {
			assert_int_equal(t.n, 0);
		}
	}
}

/* print_block prints the README block generated from the tsv. */
static int
print_block(void)
{
	struct bl_table t;
	char            why[256] = "";

	bl_init(&t);
	if (bl_load(&t, TSV, why, sizeof(why)) != SV_OK) {
		fprintf(stderr, "%s: %s\n", TSV, why);
		return 1;
	}
	printf("%s: generated from bench/baseline.tsv "
	       "(test_bench_baseline --print) -->\n",
	    BEGIN);
	bl_print_markdown(stdout, &t);
	printf("%s\n", END);
	bl_free(&t);
	return 0;
}

/* main runs the tests, or prints the README block with --print. */
int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_readme_agrees),
	    cmocka_unit_test(test_rule_both_ways),
	    cmocka_unit_test(test_rule_every_recorded),
	    cmocka_unit_test(test_parse_good),
	    cmocka_unit_test(test_parse_hostile),
	    cmocka_unit_test(test_parse_random),
	};

	if (argc == 2 && strcmp(argv[1], "--print") == 0) {
		return print_block();
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
