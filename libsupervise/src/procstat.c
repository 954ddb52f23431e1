/*
 * procstat.c — the /proc reader: a small /proc file read whole, and
 * /proc/PID/stat parsed from its last ')' (see procstat.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "decimal.h"
#include "procstat.h"

/* The field of /proc/PID/stat that holds the start time (1-based). */
#define PS_FIELD_START_TIME 22

/* sv_proc_read_file: see procstat.h. */
ssize_t
sv_proc_read_file(const char *path, char *buf, size_t cap, bool line)
{
	int     fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, total = 0;
	int     e;

	if (fd < 0) {
		return -1;
	}
	while ((size_t) total < cap - 1
	    && (n = read(fd, buf + total, cap - 1 - (size_t) total)) != 0) {
		if (n < 0) {
			if (errno == EINTR) {
				continue;
			}
			e = errno;
			close(fd);
			buf[total] = '\0';
			errno      = e;
			return -1;
		}
		total += n;
		if (line && (size_t) total < cap - 1
		    && buf[total - 1] == '\n') {
			break;
		}
	}
	close(fd);
	buf[total] = '\0';
	return total;
}

/* ps_next finds the field after *pp (which is at the space before it, or
 * at the end): a non-empty run of bytes other than space and newline. On
 * true *fp and *np name it and *pp is moved past it. */
static bool
ps_next(const char **pp, const char *end, const char **fp, size_t *np)
{
	const char *p = *pp;
	const char *f;

	if (p >= end || *p != ' ') {
		return false;
	}
	f = ++p;
	while (p < end && *p != ' ' && *p != '\n' && *p != '\0') {
		p++;
	}
	if (p == f) {
		return false;
	}
	*fp = f;
	*np = (size_t) (p - f);
	*pp = p;
	return true;
}

/* ps_u64 parses f (n bytes) as a decimal number that fits 64 bits
 * (decimal.h). */
static bool
ps_u64(const char *f, size_t n, uint64_t *vp)
{
	return sv_decimal_u64(f, n, UINT64_MAX, vp);
}

/* ps_i64 parses f (n bytes) as an optionally negative decimal number
 * that fits an int64_t. */
static bool
ps_i64(const char *f, size_t n, int64_t *vp)
{
	bool     neg = n > 0 && f[0] == '-';
	uint64_t v;

	if (!ps_u64(f + neg, n - neg, &v)
	    || v > (neg ? (uint64_t) INT64_MAX + 1 : (uint64_t) INT64_MAX)) {
		return false;
	}
	*vp = neg ? (int64_t) (0 - v) : (int64_t) v;
	return true;
}

/* sv_procstat_parse: see procstat.h. "PID (COMM) S PPID ... START ...":
 * COMM ends at the last ')' of the line, whatever it holds. */
sv_err
sv_procstat_parse(const char *buf, size_t len, sv_procstat *ps)
{
	const char *open = memchr(buf, '(', len);
	const char *end  = buf + len;
	const char *p    = NULL, *f;
	size_t      n;
	sv_procstat out;

	for (const char *q = buf; q < end; q++) {
		if (*q == ')') {
			p = q;
		}
	}
	if (open == NULL || p == NULL || p < open) {
		return SV_EINVAL;
	}
	p++; /* the space before field 3 */
	if (!ps_next(&p, end, &f, &n) || n != 1) {
		return SV_EINVAL;
	}
	out.state = f[0];
	if (!ps_next(&p, end, &f, &n) || !ps_i64(f, n, &out.ppid)) {
		return SV_EINVAL;
	}
	for (int field = 5; field < PS_FIELD_START_TIME; field++) {
		if (!ps_next(&p, end, &f, &n)) {
			return SV_EINVAL;
		}
	}
	if (!ps_next(&p, end, &f, &n) || !ps_u64(f, n, &out.start_time)) {
		return SV_EINVAL;
	}
	*ps = out;
	return SV_OK;
}

/* sv_procstat_read: see procstat.h. */
sv_err
sv_procstat_read(pid_t pid, sv_procstat *ps)
{
	char    path[64], buf[SV_PROCSTAT_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long) pid);
	if ((n = sv_proc_read_file(path, buf, sizeof(buf), true)) < 0) {
		return errno == ENOENT || errno == ESRCH ? SV_ENOTFOUND
		                                         : SV_ESYSTEM;
	}
	if (sv_procstat_parse(buf, (size_t) n, ps) != SV_OK) {
		errno = EINVAL;
		return SV_ESYSTEM;
	}
	return SV_OK;
}
