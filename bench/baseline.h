/*
 * baseline.h — the recorded figures of sv-bench (bench/baseline.tsv) and
 * the regression check of a run against them.
 *
 * Design: bench/baseline.tsv is the one place where the figures a
 * maintainer accepted are written down; bench/README.md's "Recorded
 * figures" table is generated from it and checked against it by
 * tests/test_bench_baseline.c. One line per figure, six fields separated
 * by one tab each:
 *
 *   mode    quick or full (the two modes measure different sizes)
 *   row     the row's name exactly as the table prints it
 *   metric  ratio (ours / baseline of the same run) or ours (the figure
 *           itself, for a row without a baseline)
 *   figure  a decimal >= 0
 *   unit    what the figure counts in ("x" for a ratio)
 *   better  lower or higher
 *
 * Lines starting with '#' and empty lines are comments. A figure now is a
 * REGRESSION when it is more than BL_REGRESSION_PCT % worse than the
 * recorded one: for "lower", now > figure * 1.25; for "higher", now <
 * figure * 0.75. A REGRESSION is reported, never a failure: sv-bench's exit
 * status does not change (bench/README.md).
 *
 * Input is not trusted: a malformed file gives a typed error (sv_err) and
 * the line and reason in a caller's buffer, never a crash. Nothing here
 * reads a clock or runs a benchmark; it is plain data and arithmetic, so
 * the unit test links it alone.
 */
#ifndef SV_BENCH_BASELINE_H
#define SV_BENCH_BASELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <supervise/supervise.h>

/* A figure more than this many percent worse is a REGRESSION. */
#define BL_REGRESSION_PCT 25.0
/* Longest line of the file, newline excluded. */
#define BL_MAX_LINE 400
/* Most figures one file may hold. */
#define BL_MAX_ENTRIES 1024
/* Field sizes, terminator included. */
#define BL_MODE_LEN   8
#define BL_ROW_LEN    64
#define BL_METRIC_LEN 8
#define BL_UNIT_LEN   16

/* Which way a figure improves. */
enum bl_better { BL_LOWER, BL_HIGHER };

/* One recorded figure (one line of the file). */
struct bl_entry {
	char           mode[BL_MODE_LEN]; /* "quick" or "full" */
	char           row[BL_ROW_LEN];
	char           metric[BL_METRIC_LEN]; /* "ratio" or "ours" */
	double         figure;
	char           unit[BL_UNIT_LEN];
	enum bl_better better;
};

/* Every figure of one file, in file order. */
struct bl_table {
	struct bl_entry *e; /* malloc'ed; bl_free frees it */
	size_t           n, cap;
};

/* bl_init makes an empty table (no allocation). */
void bl_init(struct bl_table *t);

/* bl_free frees what the table holds and empties it. */
void bl_free(struct bl_table *t);

/*
 * bl_parse reads the text of a baseline file (len bytes, need not end in
 * a newline) into t, which must be empty. On an error t is left empty and
 * why gets "line N: reason". Errors: SV_EINVAL (a malformed line: wrong
 * number of fields, unknown mode, metric or better, a figure that is not
 * a finite decimal >= 0, an empty or over-long field, a '|' in a field, a
 * duplicate mode + row + metric), SV_ETOOLARGE (a line over BL_MAX_LINE
 * or more than BL_MAX_ENTRIES figures), SV_ENOMEM.
 */
sv_err bl_parse(struct bl_table *t, const char *text, size_t len, char *why,
    size_t whylen);

/*
 * bl_load reads the file at path into t (empty) with bl_parse. Errors:
 * those of bl_parse, and SV_ESYSTEM when the file cannot be read (errno
 * in why).
 */
sv_err bl_load(struct bl_table *t, const char *path, char *why, size_t whylen);

/* bl_find returns the figure of (mode, row, metric), or NULL. */
const struct bl_entry *bl_find(const struct bl_table *t, const char *mode,
    const char *row, const char *metric);

/*
 * bl_worse_pct returns how many percent now is worse than e's figure
 * (negative: better). A figure of 0 that must stay low is infinitely
 * worse for any now above 0; one that should be high cannot get worse.
 */
double bl_worse_pct(const struct bl_entry *e, double now);

/*
 * bl_check compares now with e and, when it is more than
 * BL_REGRESSION_PCT % worse, prints one line "REGRESSION ..." to out
 * naming the row, the metric, both figures and the percentage, with src
 * (the file's name) as where the figure is recorded. Returns whether it
 * printed.
 */
bool bl_check(
    FILE *out, const struct bl_entry *e, double now, const char *src);

/* bl_print_line prints e as one line of the file format (tab-separated). */
void bl_print_line(FILE *out, const struct bl_entry *e);

/*
 * bl_print_markdown prints t as the Markdown table of bench/README.md
 * ("| mode | row | metric | figure | unit | better |", a separator, one
 * line per figure in file order).
 */
void bl_print_markdown(FILE *out, const struct bl_table *t);

#endif /* SV_BENCH_BASELINE_H */
