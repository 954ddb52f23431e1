/*
 * fields.h — one table of fields per reply, walked by both of
 * supervisectl's emitters: the JSON array for programs and the aligned
 * table for people.
 *
 * Design: a reply (sv_workers, sv_groups, ...) is a list of n rows. Each
 * fact shown of a row is one cli_field: its JSON key and how its value is
 * read and written there, and, when it is also a column of the table, the
 * column's place, header, alignment and cell. The JSON emitter writes the
 * fields in the table's order; the table emitter writes the columns in
 * their order (which may differ: a column can show what several JSON keys
 * hold, and a JSON key can have no column). The last column is written
 * unpadded, so it is the one for free text. Getters write into a buffer
 * the emitter owns (CLI_FIELD_BUFSZ bytes) or return a string of the
 * reply; nothing is allocated.
 */
#ifndef SUPERVISECTL_FIELDS_H
#define SUPERVISECTL_FIELDS_H

#include <stddef.h>

/* Room a getter may write into, terminator included. */
#define CLI_FIELD_BUFSZ 128

/* The most columns a table has. */
#define CLI_FIELDS_MAX_COLS 16

/* How a field's JSON value is written: a string literal (escaped) or a
 * number or boolean written as it is. */
enum cli_json_kind { CLI_JSON_STRING, CLI_JSON_RAW };

/* cli_get returns row i of reply as text: buf (len bytes, written) or a
 * string the reply owns. Never NULL. */
typedef const char *(*cli_get)(
    const void *reply, size_t i, char *buf, size_t len);

/* One fact of a row. */
struct cli_field {
	const char        *key; /* JSON member name */
	enum cli_json_kind kind;
	cli_get            json; /* its JSON value */
	int                col; /* table column (0 first), -1: JSON only */
	const char        *header; /* the column's header */
	int                right; /* right-aligned column */
	cli_get            lead; /* NULL, or text written before the cell */
	cli_get            cell; /* the cell, without lead */
};

/* cli_fields_json writes the n rows of reply to stdout as a JSON array of
 * objects, one per line, with the nf fields of f in their order. */
void cli_fields_json(
    const struct cli_field *f, size_t nf, const void *reply, size_t n);

/* cli_fields_table writes the n rows of reply to stdout as a table: a
 * header line, then one line per row, every column but the last padded to
 * its widest cell and followed by two spaces. Control characters in cells
 * are replaced (cli_put_clean). */
void cli_fields_table(
    const struct cli_field *f, size_t nf, const void *reply, size_t n);

#endif /* SUPERVISECTL_FIELDS_H */
