/*
 * doc_table.h — the one checker for docs tables generated from a C state
 * table (core/seat_table.c, core/lease_table.c, ...).
 *
 * A doc holds each generated table between two markers:
 *
 *   <!-- NAME begin: generated from SOURCE (PROG --print) -->
 *   | header | ... |
 *   |---|---|
 *   | row | ... |
 *   <!-- NAME end -->
 *
 * A test describes its tables as doc_block rows (marker name, header lines,
 * a generator that fills the rows the C table gives) and calls
 * doc_table_check(), which fails naming the first differing row of each
 * table, or doc_table_print() for `--print`, which writes the blocks so
 * that the doc can be regenerated.  A state machine table (states, events
 * and the cells between them) is described once as a doc_machine and
 * checked or printed as its three blocks with doc_machine_check() and
 * doc_machine_print().  Used from cmocka tests only.
 */
#ifndef SV_TESTS_DOC_TABLE_H
#define SV_TESTS_DOC_TABLE_H

#include <stdbool.h>
#include <stddef.h>

#define DOC_MAXROWS 256
#define DOC_ROWLEN  512

/* Rows of one table, each a line "| a | b | ... |" as the docs write it. */
typedef struct doc_rows {
	size_t n;
	char   row[DOC_MAXROWS][DOC_ROWLEN];
} doc_rows;

/* One generated block: its marker name, header lines and generator (which
 * is handed arg). */
typedef struct doc_block {
	const char *name;
	const char *header;
	void (*gen)(doc_rows *r, const void *arg);
	const void *arg;
} doc_block;

/* What a test's tables are checked against and where they come from. */
typedef struct doc_source {
	const char      *doc; /* path of the markdown file */
	const char      *source; /* the C file the tables come from */
	const char      *prog; /* the test program (for --print) */
	const doc_block *blocks;
	size_t           nblocks;
} doc_source;

/* What a state machine says of one state or event. */
typedef enum doc_text {
	DOC_STATE_NAME,
	DOC_STATE_DOC,
	DOC_EVENT_NAME,
	DOC_EVENT_DOC,
} doc_text;

/* One cell of a state machine: next state, handler name and its doc. */
typedef struct doc_cell {
	const char *next;
	const char *handler;
	const char *doc;
} doc_cell;

/* A state machine whose states, events and transitions a doc tables as
 * the blocks PREFIX-states, PREFIX-events and PREFIX-table. */
typedef struct doc_machine {
	const char *doc; /* path of the markdown file */
	const char *source; /* the C file the table comes from */
	const char *prog; /* the test program (for --print) */
	const char *prefix; /* "seat" gives seat-states, seat-events, ... */
	const char *subject; /* "seat": "what happens to the seat" */
	int         nstates;
	int         nevents;
	/* text gives the name or the doc of state or event i. */
	const char *(*text)(doc_text what, int i);
	/* cell fills *out for (st, ev); false when the cell has no handler. */
	bool (*cell)(int st, int ev, doc_cell *out);
} doc_machine;

/* doc_add appends a printf-formatted row to r (fails the test when full). */
void doc_add(doc_rows *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* doc_slurp reads the file at path into a NUL-terminated malloc'ed string;
 * the caller frees it.  Fails the test when the file cannot be read. */
char *doc_slurp(const char *path);

/* doc_block_rows fills r with the table rows (after the header and the
 * separator line) between the NAME markers of doc (the text of path). */
void doc_block_rows(
    const char *doc, const char *path, const char *name, doc_rows *r);

/* doc_table_check compares every block of s with the doc, row by row and
 * in order; prints each table's first difference and fails when any. */
void doc_table_check(const doc_source *s);

/* doc_table_print prints every block of s, markers included. */
void doc_table_print(const doc_source *s);

/* doc_machine_check checks the three blocks of m (see doc_table_check). */
void doc_machine_check(const doc_machine *m);

/* doc_machine_print prints the three blocks of m, markers included. */
void doc_machine_print(const doc_machine *m);

#endif
