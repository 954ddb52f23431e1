/*
 * harness_field.c — one "key=value" field of a worker's report line.
 *
 * Design: the scripted workers (sv-leaseworker, sv-subworker, ...) report
 * lines of space-separated key=value pairs after a leading word; the
 * harness parses the fields every worker sends (struct it_report), and a
 * test reads the fields of its own worker with it_report_field. A key is
 * found only after a space, so "pid" never matches inside "id_pid"; the
 * value ends at the next space or the end of the line.
 */
#include "harness.h"

#include <stdio.h>
#include <string.h>

/* Copies the value of " key=" in raw into buf (cut to len - 1 bytes). */
bool
it_report_field(const char *raw, const char *key, char *buf, size_t len)
{
	char        pat[32];
	const char *p;
	size_t      n = 0;

	snprintf(pat, sizeof(pat), " %s=", key);
	if ((p = strstr(raw, pat)) == NULL) {
		return false;
	}
	p += strlen(pat);
	while (p[n] != '\0' && p[n] != ' ' && n + 1 < len) {
		n++;
	}
	memcpy(buf, p, n);
	buf[n] = '\0';
	return true;
}
