/*
 * harness_text.c — sv-bench's words: parsing a bounded number from the
 * command line, progress and diagnostic lines on stderr, the tail of a
 * daemon log after a failure, and a wait status in words (see harness.h).
 *
 * Design: everything sv-bench says about itself goes to stderr prefixed
 * "sv-bench: " (note), so stdout holds only the header, the table and the
 * lines under it; a failure that involves a daemon copies the end of its
 * log next to the reason.
 */
#include "harness.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* parse_long reads a bounded decimal; -1 when s is not one. */
long
parse_long(const char *s, long lo, long hi)
{
	char *end;
	long  v;

	if (s == NULL)
		return -1;
	errno = 0;
	v     = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
		return -1;
	return v;
}

/* note prints one "sv-bench: " line on stderr. */
void
note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("sv-bench: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* log_tail copies the last lines of a log to stderr. */
void
log_tail(const char *path, int lines)
{
	static char buf[8192];
	FILE       *f = fopen(path, "r");
	size_t      n;
	long        sz;
	char       *p;
	int         seen = 0;

	if (f == NULL)
		return;
	fseek(f, 0, SEEK_END);
	sz = ftell(f);
	fseek(f, sz > (long) sizeof(buf) - 1 ? sz - (long) sizeof(buf) + 1 : 0,
	    SEEK_SET);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	for (p = buf + n; p > buf; p--)
		if (p[-1] == '\n' && p != buf + n && ++seen > lines)
			break;
	note("last lines of %s:", path);
	fputs(p, stderr);
	if (n > 0 && buf[n - 1] != '\n')
		fputc('\n', stderr);
}

/* describe_status formats a wait status into buf. */
const char *
describe_status(int st, char *buf, size_t size)
{
	if (st == -1)
		snprintf(buf, size, "unknown");
	else if (WIFEXITED(st))
		snprintf(buf, size, "exit %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(buf, size, "signal %d", WTERMSIG(st));
	else
		snprintf(buf, size, "status 0x%x", st);
	return buf;
}
