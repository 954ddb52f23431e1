/*
 * figures.h — a run's figures as bench/baseline.tsv records them: which
 * figure of a table row is recorded, the comparison of a run with the
 * recorded figures (REGRESSION lines), and `sv-bench --figures`.
 *
 * Design: a row is recorded by one figure. A row with a baseline of the
 * same run above 0 is recorded by its ratio (ours / baseline), which
 * carries less of the machine's load than either side alone; a row
 * without one, or marked rec_ours (an absolute quantity such as the
 * daemon's memory), by ours itself. A yes/no row without a baseline
 * (clean stops, events published) and a row not measured or skipped have
 * no figure. Which way is better comes from the row (higher, or a ">="
 * target), unless the file already records the figure: then the file's
 * word stands. Comparing never changes sv-bench's exit status.
 */
#ifndef SV_BENCH_FIGURES_H
#define SV_BENCH_FIGURES_H

#include <stdbool.h>

#include "baseline.h"
#include "harness.h"

/*
 * row_figure fills e (mode copied in) with the figure row r is recorded
 * by; false when r has none in this run.
 */
bool row_figure(const struct row *r, const char *mode, struct bl_entry *e);

/*
 * figures_compare compares rows[0..n) with the figures of mode in the
 * file at path: prints one "REGRESSION ..." line per figure more than
 * BL_REGRESSION_PCT % worse, then one "baseline: ..." summary line (how
 * many compared, how many regressions, or why nothing was compared).
 * Returns the number of REGRESSION lines; a file that cannot be read is
 * reported on that line and counts as 0.
 */
int figures_compare(
    const struct row *rows, int n, const char *mode, const char *path);

/*
 * figures_print prints the figures of rows[0..n) in the file format, after
 * a comment line saying how they were made, for a maintainer to refresh
 * the file with. The file at path (if readable) supplies the better
 * column of figures it already records.
 */
void figures_print(
    const struct row *rows, int n, const char *mode, const char *path);

#endif /* SV_BENCH_FIGURES_H */
