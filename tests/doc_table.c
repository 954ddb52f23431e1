/*
 * doc_table.c — compare docs tables with the C state tables they are
 * generated from, and print them for regeneration (see doc_table.h);
 * a state machine's three tables are generated here from its doc_machine.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "doc_table.h"

/* doc_add appends a formatted row to r. */
void
doc_add(doc_rows *r, const char *fmt, ...)
{
	va_list ap;

	assert_true(r->n < DOC_MAXROWS);
	va_start(ap, fmt);
	vsnprintf(r->row[r->n++], DOC_ROWLEN, fmt, ap);
	va_end(ap);
}

/* doc_slurp reads a whole file into a malloc'ed string (the caller frees). */
char *
doc_slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf;
	long  n;

	if (f == NULL) {
		fail_msg("%s: cannot open", path);
	}
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n > 0);
	rewind(f);
	buf = malloc((size_t) n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t) n, f), (size_t) n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* doc_block_rows reads the rows between "<!-- name begin" and
 * "<!-- name end -->", skipping the header and separator lines. */
void
doc_block_rows(
    const char *doc, const char *path, const char *name, doc_rows *r)
{
	char        begin[64], end[64];
	const char *p, *e;
	int         line = 0;

	snprintf(begin, sizeof(begin), "<!-- %s begin", name);
	snprintf(end, sizeof(end), "<!-- %s end -->", name);
	p = strstr(doc, begin);
	if (p == NULL || (e = strstr(p, end)) == NULL) {
		fail_msg("%s: no \"%s\" ... \"%s\" block", path, begin, end);
	}
	r->n = 0;
	while (p < e) {
		const char *nl = memchr(p, '\n', (size_t) (e - p));
		size_t len = nl != NULL ? (size_t) (nl - p) : (size_t) (e - p);
		if (len > 0 && p[0] == '|' && line++ >= 2) {
			assert_true(len < DOC_ROWLEN && r->n < DOC_MAXROWS);
			memcpy(r->row[r->n], p, len);
			r->row[r->n++][len] = '\0';
		}
		p += len + 1;
	}
}

/* doc_table_check: each generated table equals the doc's, row by row. */
void
doc_table_check(const doc_source *s)
{
	static doc_rows want, have;
	char           *doc = doc_slurp(s->doc);
	int             bad = 0;

	for (size_t b = 0; b < s->nblocks; b++) {
		size_t n;
		want.n = 0;
		s->blocks[b].gen(&want, s->blocks[b].arg);
		doc_block_rows(doc, s->doc, s->blocks[b].name, &have);
		n = want.n > have.n ? want.n : have.n;
		for (size_t i = 0; i < n; i++) {
			const char *w = i < want.n ? want.row[i] : "(no row)";
			const char *h = i < have.n ? have.row[i] : "(no row)";
			if (strcmp(w, h) != 0) {
				fprintf(stderr,
				    "%s, table %s, row %zu differs:\n"
				    "  docs:    %s\n  C table: %s\n",
				    s->doc, s->blocks[b].name, i + 1, h, w);
				bad++;
				break;
			}
		}
	}
	free(doc);
	if (bad > 0) {
		fail_msg("%d table(s) of %s differ from %s (regenerate: %s "
		         "--print)",
		    bad, s->doc, s->source, s->prog);
	}
}

/* doc_table_print prints the generated blocks, markers included. */
void
doc_table_print(const doc_source *s)
{
	static doc_rows r;

	for (size_t b = 0; b < s->nblocks; b++) {
		r.n = 0;
		s->blocks[b].gen(&r, s->blocks[b].arg);
		printf(
		    "<!-- %s begin: generated from %s (%s --print) -->\n%s\n",
		    s->blocks[b].name, s->source, s->prog,
		    s->blocks[b].header);
		for (size_t i = 0; i < r.n; i++) {
			printf("%s\n", r.row[i]);
		}
		printf("<!-- %s end -->\n\n", s->blocks[b].name);
	}
}

/* machine_states gives the rows of a machine's states table. */
static void
machine_states(doc_rows *r, const void *arg)
{
	const doc_machine *m = arg;

	for (int st = 0; st < m->nstates; st++) {
		doc_add(r, "| `%s` | %s |", m->text(DOC_STATE_NAME, st),
		    m->text(DOC_STATE_DOC, st));
	}
}

/* machine_events gives the rows of a machine's events table. */
static void
machine_events(doc_rows *r, const void *arg)
{
	const doc_machine *m = arg;

	for (int ev = 0; ev < m->nevents; ev++) {
		doc_add(r, "| `%s` | %s |", m->text(DOC_EVENT_NAME, ev),
		    m->text(DOC_EVENT_DOC, ev));
	}
}

/* machine_table gives the rows of a machine's transition table: every
 * cell with a handler, states in order, events in order within a state. */
static void
machine_table(doc_rows *r, const void *arg)
{
	const doc_machine *m = arg;

	for (int st = 0; st < m->nstates; st++) {
		for (int ev = 0; ev < m->nevents; ev++) {
			doc_cell c = {0};
			if (!m->cell(st, ev, &c)) {
				continue;
			}
			assert_null(strchr(c.doc, '|'));
			doc_add(r, "| `%s` | `%s` | `%s` | `%s` | %s |",
			    m->text(DOC_STATE_NAME, st),
			    m->text(DOC_EVENT_NAME, ev), c.next, c.handler,
			    c.doc);
		}
	}
}

/* machine_run fills the three blocks of m (names and headers in the
 * caller's buffers) and checks them with the doc or prints them. */
static void
machine_run(const doc_machine *m, bool print)
{
	char       names[3][64], events_header[96];
	doc_block  blocks[3];
	doc_source s = {
	    .doc     = m->doc,
	    .source  = m->source,
	    .prog    = m->prog,
	    .blocks  = blocks,
	    .nblocks = 3,
	};

	snprintf(names[0], sizeof(names[0]), "%s-states", m->prefix);
	snprintf(names[1], sizeof(names[1]), "%s-events", m->prefix);
	snprintf(names[2], sizeof(names[2]), "%s-table", m->prefix);
	snprintf(events_header, sizeof(events_header),
	    "| event | what happens to the %s |\n|---|---|", m->subject);
	blocks[0] = (doc_block) {
	    names[0], "| state | meaning |\n|---|---|", machine_states, m};
	blocks[1] = (doc_block) {names[1], events_header, machine_events, m};
	blocks[2] = (doc_block) {names[2],
	    "| state | event | next | handler | what happens |\n"
	    "|---|---|---|---|---|",
	    machine_table, m};
	if (print) {
		doc_table_print(&s);
	} else {
		doc_table_check(&s);
	}
}

/* doc_machine_check: each of m's tables equals the doc's, row by row. */
void
doc_machine_check(const doc_machine *m)
{
	machine_run(m, false);
}

/* doc_machine_print prints m's three blocks for regeneration. */
void
doc_machine_print(const doc_machine *m)
{
	machine_run(m, true);
}
