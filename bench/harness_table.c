/*
 * harness_table.c — the result table: its one line format, each row's
 * ratio and result, and the "clean stops" row (see harness.h).
 *
 * Design: a row states what was measured (made), its baseline (has_base,
 * base), ours, and the kind of target; the result follows from those
 * alone. A row whose measurement was not made is FAIL. A ratio row (one
 * whose target is a multiple of the baseline) whose baseline is missing
 * or not above zero is FAIL too: a ratio against nothing proves nothing,
 * and before this rule such a row passed whenever ours happened to be 0.
 * print_row returns false for every FAIL, and main turns any FAIL into
 * exit status 1. A measured row that misses its target prints MISS and
 * does not change the exit status. A row marked skipped (a cell only the
 * full run measures) prints "skip" with its reason and is neither.
 */
#include "harness_priv.h"

#include <stdio.h>
#include <string.h>

/* The one format of the table's lines, header and rows alike. */
#define ROW_FMT "%-42s %10s %10s %8s %12s  %s\n"

/* print_table_header prints the column titles. */
void
print_table_header(void)
{
	printf("\n" ROW_FMT, "measurement", "baseline", "ours", "ratio",
	    "target", "result");
}

/* is_ratio_kind tells whether a target is a multiple of the baseline. */
static bool
is_ratio_kind(enum target_kind k)
{
	return k == T_RATIO_LE || k == T_RATIO_GE || k == T_RATIO_NEAR;
}

/* row_fail_reason says why r is FAIL, or NULL when it is not. */
const char *
row_fail_reason(const struct row *r)
{
	if (r->skip != NULL)
		return NULL;
	if (!r->made)
		return "the measurement was not made";
	if (is_ratio_kind(r->kind) && !r->has_base)
		return "ratio row without a baseline";
	if (is_ratio_kind(r->kind) && !(r->base > 0))
		return "ratio row whose baseline is not above 0";
	return NULL;
}

/* target_text writes the target column of r into buf. */
static void
target_text(const struct row *r, char *buf, size_t size)
{
	switch (r->kind) {
	case T_INFO:
		snprintf(buf, size, "-");
		break;
	case T_RATIO_LE:
		snprintf(buf, size, "<= %.2fx", r->target);
		break;
	case T_RATIO_GE:
		snprintf(buf, size, ">= %.2fx", r->target);
		break;
	case T_RATIO_NEAR:
		snprintf(buf, size, "+-%.0f%%", r->target * 100);
		break;
	case T_ABS_LE:
		snprintf(buf, size, "<= %g %s", r->target, r->tunit);
		break;
	case T_CHECK:
		snprintf(buf, size, "all");
		break;
	}
	if (r->ttext != NULL)
		snprintf(buf, size, "%s", r->ttext);
}

/*
 * target_met tells whether r, made and with a usable baseline where its
 * kind needs one, meets its target (true for an info row).
 */
static bool
target_met(const struct row *r)
{
	switch (r->kind) {
	case T_INFO:
		return true;
	case T_RATIO_LE:
		return r->ours <= r->target * r->base;
	case T_RATIO_GE:
		return r->ours >= r->target * r->base;
	case T_RATIO_NEAR:
		return r->ours <= (1 + r->target) * r->base
		    && r->ours >= (1 - r->target) * r->base;
	case T_ABS_LE:
		return r->ours <= r->target;
	case T_CHECK:
		return r->check_ok;
	}
	return false;
}

/* print_row prints one row; false when it is FAIL. */
bool
print_row(const struct row *r)
{
	char        base[24] = "-", ours[24] = "n/a", ratio[16] = "-", tgt[24];
	char        result[64];
	const char *fail = row_fail_reason(r);

	target_text(r, tgt, sizeof(tgt));
	if (r->skip != NULL) {
		snprintf(result, sizeof(result), "skip (%s)", r->skip);
		printf(ROW_FMT, r->name, "-", "-", "-", tgt, result);
		return true;
	}
	if (r->has_base)
		snprintf(base, sizeof(base), "%.1f", r->base);
	if (r->made) {
		if (r->ours_text[0] != '\0')
			snprintf(ours, sizeof(ours), "%s", r->ours_text);
		else
			snprintf(ours, sizeof(ours), "%.1f", r->ours);
		if (r->has_base && r->base > 0)
			snprintf(
			    ratio, sizeof(ratio), "%.2fx", r->ours / r->base);
	}
	if (fail != NULL)
		snprintf(result, sizeof(result), "FAIL");
	else if (r->kind == T_INFO)
		snprintf(result, sizeof(result), "info");
	else
		snprintf(result, sizeof(result), "%s",
		    target_met(r) ? "PASS" : "MISS");
	printf(ROW_FMT, r->name, base, ours, ratio, tgt, result);
	return fail == NULL;
}

/* stops_row builds the "clean stops" row. */
void
stops_row(struct row *r)
{
	int stops, clean;

	daemon_stop_counts(&stops, &clean);
	memset(r, 0, sizeof(*r));
	r->name     = "clean stops (SIGTERM: exit 0, no orphans)";
	r->made     = stops > 0;
	r->kind     = T_CHECK;
	r->check_ok = stops > 0 && clean == stops;
	snprintf(r->ours_text, sizeof(r->ours_text), "%d/%d", clean, stops);
}
