/*
 * harness_run.c — one sv-bench run's set-up and tear-down: the process
 * settings (descriptor limit, child subreaper, signal handlers), the
 * temporary directory with the report socket, and the cleanup that ends
 * whatever still runs (see harness.h).
 *
 * Design: the state every scenario and the final cleanup must see lives
 * in g_* globals owned by the harness files (this one owns the paths and
 * g_interrupted). A signal only sets g_interrupted; every wait loop checks
 * it and returns, so the scenario unwinds, and cleanup() is the backstop
 * that stops the daemon, the echo server and the raw workers by pid and
 * sweeps orphans before the directory is removed.
 */
#include "harness_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

char                  g_self[PATH_MAX];
char                  g_dir[PATH_MAX];
char                  g_sock[PATH_MAX];
char                  g_sock_env[PATH_MAX + 32];
volatile sig_atomic_t g_interrupted;

/* on_signal records SIGINT/SIGTERM/SIGHUP; every wait loop checks it. */
static void
on_signal(int sig)
{
	(void) sig;
	g_interrupted = 1;
}

/* setup_process sets limits, subreaper and signal handlers. */
void
setup_process(long *nofilep)
{
	struct sigaction sa;
	struct rlimit    rl;
	ssize_t          n;

	n = readlink("/proc/self/exe", g_self, sizeof(g_self) - 1);
	g_self[n > 0 ? n : 0] = '\0';
	/* The daemon inherits this: it may hold a pidfd per worker. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		if (rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			(void) setrlimit(RLIMIT_NOFILE, &rl);
			(void) getrlimit(RLIMIT_NOFILE, &rl);
		}
		*nofilep
		    = rl.rlim_cur == RLIM_INFINITY ? -1 : (long) rl.rlim_cur;
	}
	/* Workers a daemon abandons become our children: we count them. */
	(void) prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* bench_open makes the temp dir, report socket and g_raw. */
int
bench_open(long max_raw)
{
	char        base[PATH_MAX];
	const char *tmp = getenv("TMPDIR");

	snprintf(base, sizeof(base), "%s/sv-bench.XXXXXX",
	    tmp != NULL && tmp[0] == '/' && strlen(tmp) < 40 ? tmp : "/tmp");
	if (mkdtemp(base) == NULL) {
		note("mkdtemp %s: %s", base, strerror(errno));
		return -1;
	}
	snprintf(g_dir, sizeof(g_dir), "%s", base);
	if (dir_path(g_sock, sizeof(g_sock), "report.sock") != 0
	    || rx_open(g_sock) < 0) {
		note("cannot bind the report socket in %s", g_dir);
		return -1;
	}
	snprintf(g_sock_env, sizeof(g_sock_env), "%s=%s", SV_BENCH_ENV_SOCK,
	    g_sock);
	if ((g_raw = calloc((size_t) max_raw + 1, sizeof(pid_t))) == NULL) {
		note("out of memory");
		return -1;
	}
	return 0;
}

/* cleanup ends what still runs and removes the temp dir. */
void
cleanup(bool keep)
{
	bool timedout;

	if (g_daemon_pid > 0) {
		(void) stop_child(g_daemon_pid, 10000, &timedout);
		g_daemon_pid = -1;
	}
	if (g_echo_pid > 0) {
		(void) stop_child(g_echo_pid, 5000, &timedout);
		g_echo_pid = -1;
	}
	if (g_raw != NULL)
		raw_reap_all(2000);
	(void) sweep_orphans();
	rx_close();
	free(g_raw);
	g_raw = NULL;
	if (g_dir[0] != '\0') {
		if (keep)
			note("kept %s", g_dir);
		else
			rm_rf(g_dir);
	}
}
