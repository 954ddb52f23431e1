/*
 * json.c — JSON string escaping for supervisectl.
 *
 * Design: strings that reach the output (group names, purposes, supervisor
 * messages) come from a config file or from the wire, so nothing can be
 * assumed about them. json_string therefore validates UTF-8 as it copies:
 * well-formed sequences (no overlongs, no surrogates, nothing above
 * U+10FFFF) pass through unchanged, and every other byte is replaced by
 * U+FFFD, which keeps the output parseable by any strict JSON reader.
 *
 * Layout: utf8_seq_len (validation), json_string, json_key.
 */
#include "json.h"

#include <stddef.h>

/*
 * utf8_seq_len returns the length (2..4) of the well-formed UTF-8 sequence
 * starting at s, whose first byte is >= 0x80, or 0 when it is ill-formed.
 * The bounds follow the table of RFC 3629 section 4.
 */
static size_t
utf8_seq_len(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t        len, i;

	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		if (s[0] == 0xe0)
			lo = 0xa0; /* overlong */
		else if (s[0] == 0xed)
			hi = 0x9f; /* UTF-16 surrogates */
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		if (s[0] == 0xf0)
			lo = 0x90; /* overlong */
		else if (s[0] == 0xf4)
			hi = 0x8f; /* above U+10FFFF */
	} else {
		return 0;
	}
	/* The second byte has the narrowed range; the NUL terminator is
	 * never a continuation byte, so a truncated sequence stops here. */
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

/* json_string writes s as an escaped JSON string literal (see json.h). */
void
json_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *) (s != NULL ? s : "");
	size_t               n;

	fputc('"', f);
	while (*p != '\0') {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\b':
			fputs("\\b", f);
			break;
		case '\f':
			fputs("\\f", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f) {
				fprintf(f, "\\u%04x", (unsigned) *p);
			} else if (*p < 0x80) {
				fputc(*p, f);
			} else if ((n = utf8_seq_len(p)) != 0) {
				fwrite(p, 1, n, f);
				p += n;
				continue;
			} else {
				fputs("\\ufffd", f);
			}
			break;
		}
		p++;
	}
	fputc('"', f);
}

/* json_key writes an object member name with its separator (see json.h). */
void
json_key(FILE *f, int *first, const char *key)
{
	if (!*first)
		fputc(',', f);
	*first = 0;
	json_string(f, key);
	fputc(':', f);
}
