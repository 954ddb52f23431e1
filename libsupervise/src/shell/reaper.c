/*
 * reaper.c — subreaper, orphan reaping and the final sweep (see reaper.h).
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "procstat.h"
#include "shell/loop.h"
#include "shell/reaper.h"

/* Pids remembered as already killed by sv_reaper_finish (for its count). */
#define REAPER_MAX_KILLED 1024

sv_err
sv_reaper_enable(void)
{
	return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 ? SV_OK
	                                                      : SV_ESYSTEM;
}

size_t
sv_reaper_collect(sv_reaper_is_worker is_worker, void *arg)
{
	size_t n = 0;

	for (;;) {
		siginfo_t si;
		pid_t     pid;

		memset(&si, 0, sizeof(si));
		if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) != 0
		    || si.si_pid <= 0) {
			return n; /* ECHILD, or none has exited */
		}
		if (is_worker(arg, si.si_pid)) {
			return n; /* its pidfd handler reaps it */
		}
		/* Ours and unreaped, so the pid still names it. */
		pid = si.si_pid;
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t) pid, &si, WEXITED | WNOHANG) != 0) {
			return n;
		}
		n++;
	}
}

/* reaper_ppid reads the parent pid of pid from /proc/PID/stat; -1 when it
 * is gone or unreadable. *statep receives its state letter. */
static long
reaper_ppid(pid_t pid, char *statep)
{
	sv_procstat ps;

	if (sv_procstat_read(pid, &ps) != SV_OK) {
		return -1;
	}
	*statep = ps.state;
	return (long) ps.ppid;
}

/* reaper_kill_children sends SIGKILL to every live child not yet in
 * killed[0..*nk-1] and records it. Returns the number of children seen
 * (zombies included). */
static size_t
reaper_kill_children(pid_t *killed, size_t *nk, size_t *newly)
{
	DIR           *d = opendir("/proc");
	struct dirent *e;
	long           me   = (long) getpid();
	size_t         seen = 0;

	if (d == NULL) {
		return 0;
	}
	while ((e = readdir(d)) != NULL) {
		char  st = 0;
		pid_t pid;
		bool  known = false;

		if (e->d_name[0] < '1' || e->d_name[0] > '9') {
			continue;
		}
		pid = (pid_t) atol(e->d_name);
		if (reaper_ppid(pid, &st) != me) {
			continue;
		}
		seen++;
		if (st == 'Z') {
			continue;
		}
		for (size_t i = 0; i < *nk; i++) {
			known = known || killed[i] == pid;
		}
		/* Our unreaped child: the pid cannot have been reused. */
		(void) kill(pid, SIGKILL);
		if (!known) {
			(*newly)++;
			if (*nk < REAPER_MAX_KILLED) {
				killed[(*nk)++] = pid;
			}
		}
	}
	closedir(d);
	return seen;
}

size_t
sv_reaper_finish(int timeout_ms)
{
	pid_t    killed[REAPER_MAX_KILLED];
	size_t   nk = 0, newly = 0;
	int64_t  deadline = (int64_t) sv_loop_now_ms() + timeout_ms;
	sigset_t chld;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	for (;;) {
		int64_t         rest;
		struct timespec ts;

		while (waitpid(-1, NULL, WNOHANG) > 0) {
		}
		if (reaper_kill_children(killed, &nk, &newly) == 0) {
			break; /* no child left at all */
		}
		if ((rest = deadline - (int64_t) sv_loop_now_ms()) <= 0) {
			break;
		}
		/* SIGCHLD is blocked in every thread of the daemon; wait
		 * for the next one, or look again after 50 ms in case it was
		 * taken before we got here. */
		if (rest > 50) {
			rest = 50;
		}
		ts = (struct timespec) {0, (long) rest * 1000000L};
		(void) sigtimedwait(&chld, NULL, &ts);
	}
	return newly;
}
