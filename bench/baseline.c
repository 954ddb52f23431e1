/*
 * baseline.c — loading bench/baseline.tsv and comparing a run's figures
 * with it (see baseline.h for the format and the rule).
 *
 * Design: the whole file is read into memory and split into lines; each
 * line is split on tabs into exactly six fields, and every field is
 * checked before anything is added, so a bad line never leaves a half
 * entry. The table is a growing array in file order; lookups are linear
 * (a run has about a hundred rows and looks each up once).
 */
#include "baseline.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BL_FIELDS 6

/* bl_init: see baseline.h. */
void
bl_init(struct bl_table *t)
{
	t->e   = NULL;
	t->n   = 0;
	t->cap = 0;
}

/* bl_free: see baseline.h. */
void
bl_free(struct bl_table *t)
{
	free(t->e);
	bl_init(t);
}

/* copy_field copies field f (len bytes) into dst of size dstlen; false
 * when it is empty, does not fit or holds a '|' (the README table). */
static bool
copy_field(char *dst, size_t dstlen, const char *f, size_t len)
{
	if (len == 0 || len >= dstlen || memchr(f, '|', len) != NULL)
		return false;
	memcpy(dst, f, len);
	dst[len] = '\0';
	return true;
}

/* parse_figure reads a finite decimal >= 0 filling all of f; -1 if not. */
static int
parse_figure(const char *f, size_t len, double *out)
{
	char   buf[64];
	char  *end;
	double v;

	if (len == 0 || len >= sizeof(buf))
		return -1;
	memcpy(buf, f, len);
	buf[len] = '\0';
	/* strtod would take "inf", "nan", hex and leading blanks. */
	if (strspn(buf, "0123456789.") != len)
		return -1;
	errno = 0;
	v     = strtod(buf, &end);
	if (errno != 0 || *end != '\0' || !isfinite(v) || v < 0)
		return -1;
	*out = v;
	return 0;
}

/*
 * parse_line fills e from one line (len bytes, no newline). Returns 0, or
 * -1 with the reason in why.
 */
static int
parse_line(struct bl_entry *e, const char *line, size_t len, const char **why)
{
	const char *f[BL_FIELDS];
	size_t      flen[BL_FIELDS];
	size_t      nf = 0, i = 0, start = 0;

	for (i = 0; i <= len; i++) {
		if (i < len && line[i] != '\t')
			continue;
		if (nf == BL_FIELDS) {
			*why = "more than 6 tab-separated fields";
			return -1;
		}
		f[nf]      = line + start;
		flen[nf++] = i - start;
		start      = i + 1;
	}
	if (nf != BL_FIELDS) {
		*why = "fewer than 6 tab-separated fields";
		return -1;
	}
	memset(e, 0, sizeof(*e));
	if (!copy_field(e->mode, sizeof(e->mode), f[0], flen[0])
	    || (strcmp(e->mode, "quick") != 0
	        && strcmp(e->mode, "full") != 0)) {
		*why = "mode is not quick or full";
		return -1;
	}
	if (!copy_field(e->row, sizeof(e->row), f[1], flen[1])) {
		*why = "row name empty, too long or holding '|'";
		return -1;
	}
	if (!copy_field(e->metric, sizeof(e->metric), f[2], flen[2])
	    || (strcmp(e->metric, "ratio") != 0
	        && strcmp(e->metric, "ours") != 0)) {
		*why = "metric is not ratio or ours";
		return -1;
	}
	if (parse_figure(f[3], flen[3], &e->figure) != 0) {
		*why = "figure is not a decimal >= 0";
		return -1;
	}
	if (!copy_field(e->unit, sizeof(e->unit), f[4], flen[4])) {
		*why = "unit empty, too long or holding '|'";
		return -1;
	}
	if (flen[5] == 5 && memcmp(f[5], "lower", 5) == 0)
		e->better = BL_LOWER;
	else if (flen[5] == 6 && memcmp(f[5], "higher", 6) == 0)
		e->better = BL_HIGHER;
	else {
		*why = "better is not lower or higher";
		return -1;
	}
	return 0;
}

/* add_entry appends e to t; SV_ETOOLARGE or SV_ENOMEM when it cannot. */
static sv_err
add_entry(struct bl_table *t, const struct bl_entry *e)
{
	if (t->n == BL_MAX_ENTRIES)
		return SV_ETOOLARGE;
	if (t->n == t->cap) {
		size_t           cap = t->cap == 0 ? 32 : t->cap * 2;
		struct bl_entry *ne  = realloc(t->e, cap * sizeof(*ne));

		if (ne == NULL)
			return SV_ENOMEM;
		t->e   = ne;
		t->cap = cap;
	}
	t->e[t->n++] = *e;
	return SV_OK;
}

/* bl_parse: see baseline.h. */
sv_err
bl_parse(
    struct bl_table *t, const char *text, size_t len, char *why, size_t whylen)
{
	size_t      pos = 0, lineno = 0;
	sv_err      err = SV_OK;
	const char *reason;

	while (pos < len) {
		const char *line = text + pos;
		const char *nl   = memchr(line, '\n', len - pos);
		size_t      ll = nl != NULL ? (size_t) (nl - line) : len - pos;
		struct bl_entry e;

		pos += ll + (nl != NULL ? 1 : 0);
		lineno++;
		if (ll > BL_MAX_LINE) {
			snprintf(why, whylen, "line %zu: longer than %d bytes",
			    lineno, BL_MAX_LINE);
			err = SV_ETOOLARGE;
			break;
		}
		if (ll == 0 || line[0] == '#')
			continue;
		if (memchr(line, '\0', ll) != NULL) {
			snprintf(
			    why, whylen, "line %zu: holds a NUL byte", lineno);
			err = SV_EINVAL;
			break;
		}
		if (parse_line(&e, line, ll, &reason) != 0) {
			snprintf(why, whylen, "line %zu: %s", lineno, reason);
			err = SV_EINVAL;
			break;
		}
		if (bl_find(t, e.mode, e.row, e.metric) != NULL) {
			snprintf(why, whylen,
			    "line %zu: %s / %s / %s recorded twice", lineno,
			    e.mode, e.row, e.metric);
			err = SV_EINVAL;
			break;
		}
		if ((err = add_entry(t, &e)) != SV_OK) {
			snprintf(why, whylen, "line %zu: %s", lineno,
			    err == SV_ENOMEM ? "out of memory"
			                     : "too many figures");
			break;
		}
	}
	if (err != SV_OK)
		bl_free(t);
	return err;
}

/* bl_load: see baseline.h. */
sv_err
bl_load(struct bl_table *t, const char *path, char *why, size_t whylen)
{
	FILE  *f = fopen(path, "r");
	char  *buf;
	size_t cap = (size_t) BL_MAX_ENTRIES * (BL_MAX_LINE + 1), n;
	sv_err err;

	if (f == NULL) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		return SV_ESYSTEM;
	}
	/* Comments count too, so allow twice the largest file of figures;
	 * anything longer is refused rather than read without end. */
	cap *= 2;
	if ((buf = malloc(cap + 1)) == NULL) {
		fclose(f);
		snprintf(why, whylen, "out of memory");
		return SV_ENOMEM;
	}
	n = fread(buf, 1, cap + 1, f);
	if (ferror(f)) {
		snprintf(why, whylen, "%s: read error", path);
		err = SV_ESYSTEM;
	} else if (n > cap) {
		snprintf(why, whylen, "%s: larger than %zu bytes", path, cap);
		err = SV_ETOOLARGE;
	} else {
		err = bl_parse(t, buf, n, why, whylen);
	}
	free(buf);
	fclose(f);
	return err;
}

/* bl_find: see baseline.h. */
const struct bl_entry *
bl_find(const struct bl_table *t, const char *mode, const char *row,
    const char *metric)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->e[i].row, row) == 0
		    && strcmp(t->e[i].mode, mode) == 0
		    && strcmp(t->e[i].metric, metric) == 0)
			return &t->e[i];
	return NULL;
}

/* bl_worse_pct: see baseline.h. */
double
bl_worse_pct(const struct bl_entry *e, double now)
{
	if (e->figure <= 0) {
		if (e->better == BL_HIGHER)
			return 0;
		return now > 0 ? INFINITY : 0;
	}
	if (e->better == BL_LOWER)
		return (now / e->figure - 1) * 100;
	return (1 - now / e->figure) * 100;
}

/* bl_check: see baseline.h. */
bool
bl_check(FILE *out, const struct bl_entry *e, double now, const char *src)
{
	double pct = bl_worse_pct(e, now);

	if (!(pct > BL_REGRESSION_PCT))
		return false;
	fprintf(out,
	    "REGRESSION %s (%s): %.6g %s now, %.6g recorded in %s (%s mode),"
	    " %.0f%% worse (%s is better; the limit is %.0f%%)\n",
	    e->row, e->metric, now, e->unit, e->figure, src, e->mode, pct,
	    e->better == BL_LOWER ? "lower" : "higher", BL_REGRESSION_PCT);
	return true;
}

/* bl_print_line: see baseline.h. */
void
bl_print_line(FILE *out, const struct bl_entry *e)
{
	fprintf(out, "%s\t%s\t%s\t%.6g\t%s\t%s\n", e->mode, e->row, e->metric,
	    e->figure, e->unit, e->better == BL_LOWER ? "lower" : "higher");
}

/* bl_print_markdown: see baseline.h. */
void
bl_print_markdown(FILE *out, const struct bl_table *t)
{
	fprintf(out,
	    "| mode | row | metric | figure | unit | better |\n"
	    "|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < t->n; i++) {
		const struct bl_entry *e = &t->e[i];

		fprintf(out, "| %s | %s | %s | %.6g | %s | %s |\n", e->mode,
		    e->row, e->metric, e->figure, e->unit,
		    e->better == BL_LOWER ? "lower" : "higher");
	}
}
