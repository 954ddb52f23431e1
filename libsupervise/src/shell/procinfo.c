/*
 * procinfo.c — process start times, the boot id, and claiming a process a
 * predecessor started (see procinfo.h); /proc is read through procstat.h.
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "procstat.h"
#include "shell/procinfo.h"

/* Most of an environment sv_proc_find_env reads per process. */
#define PI_ENV_MAX (64 * 1024)

/* sv_proc_start_time: see procinfo.h. */
sv_err
sv_proc_start_time(pid_t pid, uint64_t *ticksp)
{
	sv_procstat ps;
	sv_err      err = sv_procstat_read(pid, &ps);

	if (err == SV_OK) {
		*ticksp = ps.start_time;
	}
	return err;
}

/* sv_boot_id: see procinfo.h. */
sv_err
sv_boot_id(char *buf, size_t len)
{
	char    tmp[SV_BOOT_ID_LEN + 8];
	ssize_t n = sv_proc_read_file(
	    "/proc/sys/kernel/random/boot_id", tmp, sizeof(tmp), true);

	if (n <= 0) {
		return SV_ESYSTEM;
	}
	while (n > 0 && (tmp[n - 1] == '\n' || tmp[n - 1] == ' ')) {
		tmp[--n] = '\0';
	}
	if ((size_t) n + 1 > len) {
		return SV_EINVAL;
	}
	memcpy(buf, tmp, (size_t) n + 1);
	return SV_OK;
}

/* sv_proc_claim: see procinfo.h. */
sv_err
sv_proc_claim(pid_t pid, uint64_t start_time, int *pidfdp)
{
	uint64_t now;
	int      fd;
	sv_err   err;

	if (pid <= 0) {
		return SV_ENOTFOUND;
	}
	fd = (int) syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0) {
		return errno == ESRCH ? SV_ENOTFOUND : SV_ESYSTEM;
	}
	(void) fcntl(fd, F_SETFD, FD_CLOEXEC);
	if ((err = sv_proc_start_time(pid, &now)) != SV_OK
	    || now != start_time) {
		close(fd);
		return err == SV_ESYSTEM ? err : SV_ENOTFOUND;
	}
	/* Alive now, through the pidfd: the stat we read was its own. (A
	 * zombie still answers; its exit shows as the pidfd readable.) */
	if (syscall(SYS_pidfd_send_signal, fd, 0, NULL, 0) != 0) {
		close(fd);
		return SV_ENOTFOUND;
	}
	*pidfdp = fd;
	return SV_OK;
}

/* pi_env_has tells whether env (len bytes of NUL-separated strings) holds
 * every string of want. */
static bool
pi_env_has(const char *env, size_t len, const char *const *want, size_t n)
{
	size_t found = 0;

	for (size_t i = 0; i < n; i++) {
		size_t wl = strlen(want[i]);
		for (size_t off = 0; off < len;) {
			size_t el = strnlen(env + off, len - off);
			if (el == wl && memcmp(env + off, want[i], wl) == 0) {
				found++;
				break;
			}
			off += el + 1;
		}
	}
	return found == n;
}

/* sv_proc_find_env: see procinfo.h. */
sv_err
sv_proc_find_env(const char *const *want, size_t n, pid_t *pidp)
{
	DIR           *d;
	struct dirent *de;
	char          *env, path[64];
	sv_err         rv = SV_ENOTFOUND;

	if (n == 0 || n > 8) {
		return SV_EINVAL;
	}
	if ((d = opendir("/proc")) == NULL) {
		return SV_ESYSTEM;
	}
	if ((env = malloc(PI_ENV_MAX)) == NULL) {
		closedir(d);
		return SV_ENOMEM;
	}
	while (rv == SV_ENOTFOUND && (de = readdir(d)) != NULL) {
		char   *end;
		long    pid = strtol(de->d_name, &end, 10);
		ssize_t len;
		if (pid <= 0 || *end != '\0' || pid == (long) getpid()) {
			continue;
		}
		snprintf(path, sizeof(path), "/proc/%ld/environ", pid);
		if ((len = sv_proc_read_file(path, env, PI_ENV_MAX, false))
		    <= 0) {
			continue;
		}
		if (pi_env_has(env, (size_t) len, want, n)) {
			*pidp = (pid_t) pid;
			rv    = SV_OK;
		}
	}
	free(env);
	closedir(d);
	return rv;
}
