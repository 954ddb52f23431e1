/*
 * figures.c — a run's figures against bench/baseline.tsv (see figures.h).
 */
#include "figures.h"

#include <stdio.h>
#include <string.h>

/* row_unit writes the unit of r's own figure into buf: the absolute
 * target's unit, else the last "(...)" of the name, else "-". */
static void
row_unit(const struct row *r, char *buf, size_t size)
{
	const char *open = strrchr(r->name, '(');
	const char *close;

	if (r->tunit != NULL && r->tunit[0] != '\0') {
		snprintf(buf, size, "%s", r->tunit);
		return;
	}
	if (open != NULL && (close = strchr(open, ')')) != NULL
	    && close > open + 1 && (size_t) (close - open - 1) < size) {
		memcpy(buf, open + 1, (size_t) (close - open - 1));
		buf[close - open - 1] = '\0';
		return;
	}
	snprintf(buf, size, "-");
}

/* row_figure: see figures.h. */
bool
row_figure(const struct row *r, const char *mode, struct bl_entry *e)
{
	bool ratio = r->has_base && r->base > 0 && !r->rec_ours;

	if (r->skip != NULL || !r->made || row_fail_reason(r) != NULL)
		return false;
	if (r->kind == T_CHECK && !r->has_base)
		return false;
	memset(e, 0, sizeof(*e));
	snprintf(e->mode, sizeof(e->mode), "%s", mode);
	snprintf(e->row, sizeof(e->row), "%s", r->name);
	snprintf(e->metric, sizeof(e->metric), "%s", ratio ? "ratio" : "ours");
	e->figure = ratio ? r->ours / r->base : r->ours;
	if (ratio)
		snprintf(e->unit, sizeof(e->unit), "x");
	else
		row_unit(r, e->unit, sizeof(e->unit));
	e->better = r->higher || r->kind == T_RATIO_GE ? BL_HIGHER : BL_LOWER;
	return e->figure >= 0;
}

/* figures_compare: see figures.h. */
int
figures_compare(
    const struct row *rows, int n, const char *mode, const char *path)
{
	struct bl_table t;
	char            why[256];
	sv_err          err;
	int             i, compared = 0, regressed = 0, unrecorded = 0;

	bl_init(&t);
	if ((err = bl_load(&t, path, why, sizeof(why))) != SV_OK) {
		printf("baseline: not compared (%s: %s)\n", sv_err_name(err),
		    why);
		return 0;
	}
	for (i = 0; i < n; i++) {
		struct bl_entry        now;
		const struct bl_entry *rec;

		if (!row_figure(&rows[i], mode, &now))
			continue;
		if ((rec = bl_find(&t, mode, now.row, now.metric)) == NULL) {
			unrecorded++;
			continue;
		}
		compared++;
		regressed += bl_check(stdout, rec, now.figure, path) ? 1 : 0;
	}
	printf("baseline: %d figures compared with %s (%s mode), %d "
	       "REGRESSION (more than %.0f%% worse), %d not recorded there"
	       "; reported only, the exit status does not change\n",
	    compared, path, mode, regressed, BL_REGRESSION_PCT, unrecorded);
	bl_free(&t);
	return regressed;
}

/* figures_print: see figures.h. */
void
figures_print(
    const struct row *rows, int n, const char *mode, const char *path)
{
	struct bl_table t;
	char            why[256];
	int             i;

	bl_init(&t);
	/* Unreadable: every better comes from the rows (t stays empty). */
	(void) bl_load(&t, path, why, sizeof(why));
	printf("# sv-bench figures of this run (%s mode), in the format of "
	       "bench/baseline.tsv: mode, row, metric, figure, unit, "
	       "better\n",
	    mode);
	for (i = 0; i < n; i++) {
		struct bl_entry        e;
		const struct bl_entry *rec;

		if (!row_figure(&rows[i], mode, &e))
			continue;
		if ((rec = bl_find(&t, mode, e.row, e.metric)) != NULL)
			e.better = rec->better;
		bl_print_line(stdout, &e);
	}
	bl_free(&t);
}
