/*
 * sv_proc.h — what the tests and the benchmark read of another process in
 * /proc: how many descriptors it holds, and one "Key: N kB" line of one of
 * its files (status, smaps_rollup). Header-only (static functions), shared
 * by tests/ and bench/ so that both count the same way.
 */
#ifndef SV_TEST_PROC_H
#define SV_TEST_PROC_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/* sv_proc_fd_count counts the open descriptors of pid (entries of
 * /proc/PID/fd); -1 when the directory cannot be read. */
static inline long
sv_proc_fd_count(pid_t pid)
{
	char           path[64];
	struct dirent *e;
	long           n = 0;
	DIR           *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int) pid);
	if (pid <= 0 || (d = opendir(path)) == NULL) {
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		n += e->d_name[0] != '.';
	}
	closedir(d);
	return n;
}

/* sv_proc_kb reads the number of the line "KEY: N kB" of /proc/PID/FILE
 * (key without its colon); -1 when the file or the line is missing. */
static inline long
sv_proc_kb(pid_t pid, const char *file, const char *key)
{
	char   path[96], line[256];
	size_t klen = strlen(key);
	long   v    = -1;
	FILE  *f;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int) pid, file);
	if (pid <= 0 || (f = fopen(path, "r")) == NULL) {
		return -1;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
			v = strtol(line + klen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

#endif
