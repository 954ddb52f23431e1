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
 * that the doc can be regenerated.  Used from cmocka tests only.
 */
#ifndef SV_TESTS_DOC_TABLE_H
#define SV_TESTS_DOC_TABLE_H

#include <stddef.h>

#define DOC_MAXROWS 256
#define DOC_ROWLEN  512

/* Rows of one table, each a line "| a | b | ... |" as the docs write it. */
typedef struct doc_rows {
	size_t n;
	char   row[DOC_MAXROWS][DOC_ROWLEN];
} doc_rows;

/* One generated block: its marker name, header lines and generator. */
typedef struct doc_block {
	const char *name;
	const char *header;
	void (*gen)(doc_rows *r);
} doc_block;

/* What a test's tables are checked against and where they come from. */
typedef struct doc_source {
	const char      *doc; /* path of the markdown file */
	const char      *source; /* the C file the tables come from */
	const char      *prog; /* the test program (for --print) */
	const doc_block *blocks;
	size_t           nblocks;
} doc_source;

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

#endif
