/*
 * fields.c — the JSON and table emitters over a reply's field table (see
 * fields.h).
 *
 * Design: the table is laid out in two passes over the reply, the first
 * measuring every column, so it needs no allocation however many rows
 * there are.
 */
#include "fields.h"

#include "cli.h"
#include "json.h"

#include <stdio.h>
#include <string.h>

void
cli_fields_json(
    const struct cli_field *f, size_t nf, const void *reply, size_t n)
{
	char buf[CLI_FIELD_BUFSZ];

	if (n == 0) {
		puts("[]");
		return;
	}
	puts("[");
	for (size_t i = 0; i < n; i++) {
		int first = 1;

		fputs("  {", stdout);
		for (size_t k = 0; k < nf; k++) {
			const char *v = f[k].json(reply, i, buf, sizeof buf);

			json_key(stdout, &first, f[k].key);
			if (f[k].kind == CLI_JSON_STRING)
				json_string(stdout, v);
			else
				fputs(v, stdout);
		}
		fputs(i + 1 < n ? "},\n" : "}\n", stdout);
	}
	puts("]");
}

/* fields_columns points bycol[c] at the field shown in column c and
 * returns the number of columns. */
static size_t
fields_columns(const struct cli_field *f, size_t nf,
    const struct cli_field *bycol[CLI_FIELDS_MAX_COLS])
{
	size_t ncol = 0;

	for (size_t k = 0; k < nf; k++) {
		if (f[k].col >= 0 && f[k].col < CLI_FIELDS_MAX_COLS) {
			bycol[f[k].col] = &f[k];
			if ((size_t) f[k].col + 1 > ncol)
				ncol = (size_t) f[k].col + 1;
		}
	}
	return ncol;
}

/* fields_put writes s padded to width (right-aligned if right) and the
 * two-space column gap; control characters are replaced. */
static void
fields_put(const char *lead, const char *s, size_t width, int right)
{
	size_t len = strlen(lead) + strlen(s);
	int    pad = (int) (width > len ? width - len : 0);

	if (right)
		printf("%*s", pad, "");
	cli_put_clean(stdout, lead);
	cli_put_clean(stdout, s);
	if (!right)
		printf("%*s", pad, "");
	fputs("  ", stdout);
}

/* fields_cell gets column field c of row i: *lead (or "") and the cell. */
static const char *
fields_cell(const struct cli_field *c, const void *reply, size_t i, char *lbuf,
    char *buf, const char **lead)
{
	*lead
	    = c->lead != NULL ? c->lead(reply, i, lbuf, CLI_FIELD_BUFSZ) : "";
	return c->cell(reply, i, buf, CLI_FIELD_BUFSZ);
}

void
cli_fields_table(
    const struct cli_field *f, size_t nf, const void *reply, size_t n)
{
	const struct cli_field *bycol[CLI_FIELDS_MAX_COLS] = {NULL};
	size_t                  width[CLI_FIELDS_MAX_COLS], ncol, c;
	char                    buf[CLI_FIELD_BUFSZ], lbuf[CLI_FIELD_BUFSZ];
	const char             *lead, *cell;

	ncol = fields_columns(f, nf, bycol);
	if (ncol == 0)
		return;
	for (c = 0; c < ncol; c++)
		width[c] = strlen(bycol[c]->header);
	for (size_t i = 0; i < n; i++) {
		for (c = 0; c + 1 < ncol; c++) {
			cell = fields_cell(
			    bycol[c], reply, i, lbuf, buf, &lead);
			if (strlen(lead) + strlen(cell) > width[c])
				width[c] = strlen(lead) + strlen(cell);
		}
	}
	for (c = 0; c + 1 < ncol; c++)
		fields_put("", bycol[c]->header, width[c], bycol[c]->right);
	puts(bycol[ncol - 1]->header);
	for (size_t i = 0; i < n; i++) {
		for (c = 0; c + 1 < ncol; c++) {
			cell = fields_cell(
			    bycol[c], reply, i, lbuf, buf, &lead);
			fields_put(lead, cell, width[c], bycol[c]->right);
		}
		cell = fields_cell(bycol[c], reply, i, lbuf, buf, &lead);
		cli_put_clean(stdout, lead);
		cli_put_clean(stdout, cell);
		putchar('\n');
	}
}
