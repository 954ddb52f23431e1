/*
 * procstat.h — the /proc reader: reading a small /proc file whole, and
 * parsing /proc/PID/stat into the few fields the supervisor uses (its
 * state letter, its parent, its kernel start time).
 *
 * The parser is pure (it takes the file's contents), so it is tested with
 * hostile input: the command name (field 2, in parentheses) is chosen by
 * the process itself and may hold spaces, parentheses and ") (" sequences,
 * so fields are counted from the last ')' of the line, never from the
 * first, and every number must be whole and fit its type.
 */
#ifndef SV_PROCSTAT_H
#define SV_PROCSTAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "supervise/supervise.h"

/* Longest /proc/PID/stat read (the command name is at most 64 bytes; the
 * rest, 50 numbers, fits many times over). */
#define SV_PROCSTAT_MAX 2048

/* What the supervisor reads of /proc/PID/stat. */
typedef struct sv_procstat {
	char     state; /* field 3: R, S, D, Z, T, ... */
	int64_t  ppid; /* field 4 */
	uint64_t start_time; /* field 22: clock ticks after boot */
} sv_procstat;

/*
 * sv_procstat_parse parses the contents of a /proc/PID/stat file (buf,
 * len bytes, need not be terminated) into *ps. Errors: SV_EINVAL (no
 * command name, a field missing, a number malformed or too large); *ps is
 * then unchanged.
 */
sv_err sv_procstat_parse(const char *buf, size_t len, sv_procstat *ps);

/*
 * sv_procstat_read reads and parses /proc/PID/stat of pid (one open, one
 * read in practice, one close). Errors: SV_ENOTFOUND (no such process),
 * SV_ESYSTEM (unreadable: errno says why; or malformed).
 */
sv_err sv_procstat_read(pid_t pid, sv_procstat *ps);

/*
 * sv_proc_read_file reads up to cap - 1 bytes of path into buf and
 * terminates it: to the end of the file or, with line, up to a short read
 * that ends a line (a one-line /proc file such as stat comes whole in one
 * read; this saves the read that would return 0). Returns the length, or
 * -1 with errno set. cap must be at least 1.
 */
ssize_t sv_proc_read_file(const char *path, char *buf, size_t cap, bool line);

#endif /* SV_PROCSTAT_H */
