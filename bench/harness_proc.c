/*
 * harness_proc.c — the processes sv-bench starts and ends itself: spawning
 * a child, stopping it with a deadline, the raw stamp workers of the
 * baselines (g_raw) and their environment, the bare echo server
 * (g_echo_pid), /proc readers, and the sweep of orphans a daemon left
 * behind (see harness.h for each contract).
 *
 * Design: sv-bench signals only processes it started, and knows each by
 * pid: the echo server, the one daemon running at a time (harness_daemon.c)
 * and its own raw stamp workers. Because sv-bench is a child subreaper
 * (harness_run.c), anything a daemon abandons becomes its child too;
 * sweep_orphans counts those against the "clean stops" row and ends them.
 * A SIGKILLed child runs no code of its own, so a blocking reap after
 * SIGKILL is bounded; every other wait has a deadline.
 */
#include "harness_priv.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

pid_t  g_echo_pid = -1;
pid_t *g_raw;
size_t g_nraw;

/* spawn_proc posix_spawns a child; 0 or an errno value. */
int
spawn_proc(const char *path, char *const argv[], char *const envp[],
    const char *logpath, bool newpgrp, pid_t *pidp)
{
	posix_spawn_file_actions_t fa, *fap = NULL;
	posix_spawnattr_t          at;
	sigset_t                   none;
	short                      flags = POSIX_SPAWN_SETSIGMASK;
	int                        rv;

	sigemptyset(&none);
	posix_spawnattr_init(&at);
	posix_spawnattr_setsigmask(&at, &none);
	if (newpgrp) {
		flags |= POSIX_SPAWN_SETPGROUP;
		posix_spawnattr_setpgroup(&at, 0);
	}
	posix_spawnattr_setflags(&at, flags);
	if (logpath != NULL) {
		fap = &fa;
		posix_spawn_file_actions_init(fap);
		posix_spawn_file_actions_addopen(
		    fap, 0, "/dev/null", O_RDONLY, 0);
		posix_spawn_file_actions_addopen(
		    fap, 1, logpath, O_WRONLY | O_CREAT | O_APPEND, 0600);
		posix_spawn_file_actions_adddup2(fap, 1, 2);
	}
	rv = posix_spawn(
	    pidp, path, fap, &at, argv, envp != NULL ? envp : environ);
	if (fap != NULL)
		posix_spawn_file_actions_destroy(fap);
	posix_spawnattr_destroy(&at);
	return rv;
}

/* bench_pidfd_open: see harness.h. */
int
bench_pidfd_open(pid_t pid)
{
	return (int) syscall(SYS_pidfd_open, pid, 0);
}

/*
 * kill_reap SIGKILLs our child pid and reaps it. A SIGKILLed child dies
 * without running any code of its own, so the blocking wait is bounded.
 * Returns its wait status.
 */
int
kill_reap(pid_t pid)
{
	int st = -1;

	kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return st;
}

/*
 * reap_deadline waits for our child pid until deadline (monotonic ns).
 * Returns 1 and its wait status in *statusp when reaped, 0 at the deadline.
 */
static int
reap_deadline(pid_t pid, int64_t deadline, int *statusp)
{
	int st;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid) {
			*statusp = st;
			return 1;
		}
		if (r < 0 && errno != EINTR) {
			*statusp = -1;
			return 1; /* not our child any more: nothing to wait */
		}
		if (now_ns() >= deadline)
			return 0;
		sleep_ms(2);
	}
}

/* stop_child ends our child: SIGTERM, deadline, SIGKILL. */
int
stop_child(pid_t pid, long timeout_ms, bool *timedoutp)
{
	int st = -1;

	*timedoutp = false;
	kill(pid, SIGTERM);
	if (!reap_deadline(pid, now_ns() + timeout_ms * NS_PER_MS, &st)) {
		*timedoutp = true;
		st         = kill_reap(pid);
	}
	return st;
}

/* proc_stat_rest reads /proc/PID/stat into buf; see harness.h. */
const char *
proc_stat_rest(pid_t pid, char *buf, size_t len)
{
	char  path[64], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
	if ((f = fopen(path, "r")) == NULL)
		return NULL;
	p = fgets(buf, (int) len, f);
	fclose(f);
	/* The command name may hold anything: parse after its last ')'. */
	if (p == NULL || (p = strrchr(buf, ')')) == NULL)
		return NULL;
	return p + 1;
}

/* proc_stat_ppid reads the state and parent of pid. */
int
proc_stat_ppid(pid_t pid, char *statep, long *ppidp)
{
	char        buf[512];
	const char *p = proc_stat_rest(pid, buf, sizeof(buf));

	return p != NULL && sscanf(p, " %c %ld", statep, ppidp) == 2 ? 0 : -1;
}

/* proc_status_kb reads one "Key:  N kB" line of /proc/pid/status. */
long
proc_status_kb(pid_t pid, const char *key)
{
	return sv_proc_kb(pid, "status", key);
}

/* is_tracked tells whether pid is a child sv-bench knows it started. */
static bool
is_tracked(pid_t pid)
{
	size_t i;

	if (pid == g_echo_pid || pid == g_daemon_pid)
		return true;
	for (i = 0; i < g_nraw; i++)
		if (g_raw[i] == pid)
			return true;
	return false;
}

/*
 * sweep_orphans finds our children that we did not start (with
 * PR_SET_CHILD_SUBREAPER, workers a daemon left behind, alive or zombie),
 * SIGKILLs and reaps them, and returns how many there were.
 */
int
sweep_orphans(void)
{
	DIR           *d = opendir("/proc");
	struct dirent *e;
	pid_t          me = getpid();
	int            n  = 0;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		long pid, ppid;
		char state;

		if ((pid = parse_long(e->d_name, 1, INT_MAX)) < 0)
			continue;
		if (proc_stat_ppid((pid_t) pid, &state, &ppid) != 0)
			continue;
		if (ppid != me || is_tracked((pid_t) pid))
			continue;
		note("orphan pid %ld (state %c) left behind by the daemon",
		    pid, state);
		(void) kill_reap((pid_t) pid);
		n++;
	}
	closedir(d);
	return n;
}

/* raw_reap_all ends and reaps every raw worker in g_raw. */
void
raw_reap_all(long timeout_ms)
{
	int64_t deadline = now_ns() + timeout_ms * NS_PER_MS;
	size_t  i, left;

	for (i = 0; i < g_nraw; i++)
		if (g_raw[i] > 0) /* never kill(-1) or kill(0) */
			kill(g_raw[i], SIGTERM);
	for (;;) {
		left = 0;
		for (i = 0; i < g_nraw; i++) {
			if (g_raw[i] <= 0)
				continue;
			pid_t r = waitpid(g_raw[i], NULL, WNOHANG);

			if (r == g_raw[i] || (r < 0 && errno == ECHILD))
				g_raw[i] = -1;
			else
				left++;
		}
		if (left == 0 || now_ns() >= deadline)
			break;
		sleep_ms(2);
	}
	if (left > 0)
		note("%zu raw workers ignored SIGTERM; killing them", left);
	for (i = 0; i < g_nraw; i++)
		if (g_raw[i] > 0)
			(void) kill_reap(g_raw[i]);
	g_nraw = 0;
}

/* envbuf_init builds the raw workers' environment. */
int
envbuf_init(struct envbuf *e)
{
	size_t n = 0, k = 0, i;

	while (environ[n] != NULL)
		n++;
	if ((e->envp = calloc(n + 4, sizeof(char *))) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		if (strncmp(environ[i], "SUPERVISE_", 10) == 0
		    || strncmp(environ[i], SV_BENCH_ENV_SOCK "=",
		           sizeof(SV_BENCH_ENV_SOCK))
		        == 0)
			continue;
		e->envp[k++] = environ[i];
	}
	e->envp[k++] = g_sock_env;
	e->envp[k++] = e->ord;
	e->envp[k++] = e->gen;
	e->envp[k]   = NULL;
	return 0;
}

/* envbuf_free frees what envbuf_init allocated. */
void
envbuf_free(struct envbuf *e)
{
	free(e->envp);
	e->envp = NULL;
}

/* raw_spawn_stamp starts one stamp worker itself. */
int
raw_spawn_stamp(struct envbuf *e, long ord, long long gen, pid_t *pidp)
{
	char *argv[] = {"sv-bench-stamp", NULL};

	snprintf(e->ord, sizeof(e->ord), "SUPERVISE_ORDINAL=%ld", ord);
	snprintf(e->gen, sizeof(e->gen), "SUPERVISE_GENERATION=%lld", gen);
	return spawn_proc(
	    SV_BENCH_STAMP_PATH, argv, e->envp, NULL, false, pidp);
}

/*
 * echo_start starts the echo server (g_echo_pid) and waits up to 5 s for
 * its socket. Returns 0, or -1 with why set (the server may still run:
 * echo_stop ends it).
 */
int
echo_start(const char *url, const char *sock, const char *log, char *why,
    size_t whylen)
{
	char *eargv[]
	    = {"sv-bench-echo", "--role", "echo", (char *) url, NULL};
	int64_t     deadline;
	struct stat sb;
	int         rv, st;

	if ((rv = spawn_proc(g_self, eargv, NULL, log, true, &g_echo_pid))
	    != 0) {
		g_echo_pid = -1;
		snprintf(why, whylen, "cannot start the echo server: %s",
		    strerror(rv));
		return -1;
	}
	deadline = now_ns() + 5 * NS_PER_SEC;
	while (stat(sock, &sb) != 0) {
		if (now_ns() >= deadline || g_interrupted
		    || waitpid(g_echo_pid, &st, WNOHANG) == g_echo_pid) {
			snprintf(why, whylen, "echo server did not listen");
			log_tail(log, 10);
			return -1;
		}
		sleep_ms(2);
	}
	return 0;
}

/* echo_stop ends the echo server, if it runs, and notes an unclean end. */
void
echo_stop(void)
{
	char what[32];
	bool timedout;
	int  st;

	if (g_echo_pid <= 0)
		return;
	st         = stop_child(g_echo_pid, 5000, &timedout);
	g_echo_pid = -1;
	if (timedout || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		note("echo server ended with %s",
		    describe_status(st, what, sizeof(what)));
}
