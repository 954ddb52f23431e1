/*
 * json.h — the few JSON writing helpers supervisectl needs.
 *
 * Design: supervisectl only ever writes flat objects and arrays of flat
 * objects, so there is no document model, only two helpers that write
 * straight to a FILE: one for a correctly escaped string literal and one for
 * the "key": prefix of an object member with its separating comma. Numbers
 * are written by the caller with printf and the <inttypes.h> macros.
 */
#ifndef SUPERVISECTL_JSON_H
#define SUPERVISECTL_JSON_H

#include <stdio.h>

/*
 * json_string writes s to f as a JSON string literal, quotes included.
 * '"' and '\\' are escaped, \b \f \n \r \t use their short escapes, other
 * control characters (and DEL) become \u00XX. Valid UTF-8 is copied as is;
 * each byte of an invalid UTF-8 sequence becomes \ufffd, so the output is
 * always valid JSON. A NULL s is written as "".
 */
void json_string(FILE *f, const char *s);

/*
 * json_key writes the member name key followed by ':' to f, preceded by ','
 * unless *first is non-zero; it then clears *first. Start each object with
 * first = 1.
 */
void json_key(FILE *f, int *first, const char *key);

#endif /* SUPERVISECTL_JSON_H */
