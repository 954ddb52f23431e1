/*
 * harness_daemon.c — the supervised daemon under test: starting it on a
 * written config, waiting for its control socket, watching it while
 * sv-bench waits, stopping it and counting whether the stop was clean,
 * and the operations the scenarios make on its workers (kill and await
 * the replacement, empty a group, wait until given workers are gone) (see
 * harness.h).
 *
 * Design: one daemon runs at a time (g_daemon_pid; g_daemon points to its
 * struct daemon, for its name and log). daemon_alive reaps it without
 * blocking, so every wait notices a daemon that died. Each daemon_stop is
 * counted, and counted clean only when the daemon exited 0 in time and no
 * orphan was left: the "clean stops" row (harness_table.c) reads those
 * counts through daemon_stop_counts.
 */
#include "harness_priv.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

pid_t                 g_daemon_pid = -1;
static struct daemon *g_daemon; /* the one whose pid is g_daemon_pid */

/* Counts for the "clean stops" row. */
static int g_stops, g_clean_stops;

/* daemon_alive reaps the daemon if it exited; false then. */
bool
daemon_alive(void)
{
	char what[32];
	int  st;

	if (g_daemon_pid <= 0)
		return false;
	if (waitpid(g_daemon_pid, &st, WNOHANG) != g_daemon_pid)
		return true;
	g_daemon_pid = -1;
	if (g_daemon != NULL) {
		g_daemon->exit_status = st;
		note("supervised (%s) exited early: %s", g_daemon->name,
		    describe_status(st, what, sizeof(what)));
		log_tail(g_daemon->log, 15);
	}
	return false;
}

/* daemon_start starts supervised with the one group g. */
int
daemon_start(struct daemon *d, const char *name, const struct group_cfg *g,
    char *why, size_t whylen)
{
	return daemon_start_groups(d, name, g, 1, why, whylen);
}

/* daemon_start_groups writes the config and starts supervised. */
int
daemon_start_groups(struct daemon *d, const char *name,
    const struct group_cfg *g, size_t ng, char *why, size_t whylen)
{
	char *argv[]
	    = {"supervised", "--config", d->conf, "--foreground", NULL};
	pid_t pid;
	int   rv;

	memset(d, 0, sizeof(*d));
	d->exit_status = -1;
	snprintf(d->name, sizeof(d->name), "%s", name);
	if (dir_path(d->sockdir, sizeof(d->sockdir), name) != 0
	    || snprintf(d->conf, sizeof(d->conf), "%s.conf", d->sockdir)
	        >= (int) sizeof(d->conf)
	    || snprintf(d->log, sizeof(d->log), "%s.log", d->sockdir)
	        >= (int) sizeof(d->log)
	    || snprintf(d->sockpath, sizeof(d->sockpath), "%s/control.sock",
	           d->sockdir)
	        >= 100
	    || snprintf(
	           d->evsock, sizeof(d->evsock), "%s/events.sock", d->sockdir)
	        >= 100) {
		snprintf(why, whylen, "temporary path too long");
		return -1;
	}
	snprintf(d->url, sizeof(d->url), "ipc://%s", d->sockpath);
	snprintf(d->evurl, sizeof(d->evurl), "ipc://%s", d->evsock);
	if (ng < 1 || ng > 64) {
		snprintf(why, whylen, "%zu groups (1..64)", ng);
		return -1;
	}
	if (write_config(d->conf, d->sockdir, g, ng) != 0) {
		snprintf(why, whylen, "cannot write %.150s: %s", d->conf,
		    strerror(errno));
		return -1;
	}
	if ((rv = spawn_proc(
	         SV_SUPERVISED_PATH, argv, NULL, d->log, true, &pid))
	    != 0) {
		snprintf(why, whylen, "cannot start %s: %s",
		    SV_SUPERVISED_PATH, strerror(rv));
		return -1;
	}
	g_daemon_pid = pid;
	g_daemon     = d;
	return 0;
}

/* daemon_wait_ready waits for the control socket. */
int
daemon_wait_ready(struct daemon *d, long timeout_ms, char *why, size_t whylen)
{
	int64_t     deadline = now_ns() + timeout_ms * NS_PER_MS;
	struct stat sb;

	for (;;) {
		if (stat(d->sockpath, &sb) == 0 && S_ISSOCK(sb.st_mode))
			return 0;
		if (!daemon_alive()) {
			snprintf(why, whylen, "supervised exited at startup");
			return -2;
		}
		if (g_interrupted) {
			snprintf(why, whylen, "interrupted");
			return -1;
		}
		if (now_ns() >= deadline) {
			snprintf(why, whylen,
			    "no control socket %.150s after %ld ms",
			    d->sockpath, timeout_ms);
			return -1;
		}
		sleep_ms(2);
	}
}

/* daemon_stop ends the daemon and counts the stop. */
bool
daemon_stop(struct daemon *d, long timeout_ms, int64_t *elapsedp)
{
	char    what[32];
	int64_t t0       = now_ns();
	bool    timedout = false, clean;
	int     st, orphans;

	if (g_daemon_pid > 0) {
		st           = stop_child(g_daemon_pid, timeout_ms, &timedout);
		g_daemon_pid = -1;
		d->exit_status = st;
	}
	if (elapsedp != NULL)
		*elapsedp = now_ns() - t0;
	g_daemon = NULL;
	orphans  = sweep_orphans();
	clean = !timedout && d->exit_status != -1 && WIFEXITED(d->exit_status)
	    && WEXITSTATUS(d->exit_status) == 0 && orphans == 0;
	g_stops++;
	if (clean) {
		g_clean_stops++;
	} else {
		note(
		    "supervised (%s) did not stop cleanly: %s%s, %d orphan(s)",
		    d->name,
		    describe_status(d->exit_status, what, sizeof(what)),
		    timedout ? " after SIGKILL (SIGTERM deadline passed)" : "",
		    orphans);
		log_tail(d->log, 15);
	}
	return clean;
}

/* kill_await_replacement kills a worker and times its replacement. */
int
kill_await_replacement(
    pid_t pid, int64_t timeout_ns, struct sv_bench_stamp *st, int64_t *latp)
{
	int64_t t0 = now_ns();
	int     rv;

	if (kill(pid, SIGKILL) != 0)
		return -1;
	do
		rv = rx_stamp(st, t0 + timeout_ns);
	while (rv == 1 && st->pid == pid);
	if (rv == 1)
		*latp = st->t_ns - t0;
	return rv;
}

/* kill_block kills a victim k times in a row; see harness.h. */
int
kill_block(pid_t *pidp, long k, int64_t bound, bool *cutp, int64_t *out,
    long *np, char *why, size_t whylen)
{
	struct sv_bench_stamp st;
	int64_t               lat;
	long                  i;
	int                   rv;

	for (i = 0; i < k; i++) {
		if (now_ns() >= bound) {
			if (cutp != NULL) {
				*cutp = true;
			}
			return 0;
		}
		rv = kill_await_replacement(*pidp, 5 * NS_PER_SEC, &st, &lat);
		if (rv != 1) {
			snprintf(why, whylen,
			    "no replacement of the victim within 5 s (%s)",
			    rv == -2      ? "daemon exited"
			        : rv == 0 ? "deadline"
			                  : "kill failed or interrupted");
			return -1;
		}
		*pidp = st.pid;
		if (out != NULL)
			out[(*np)++] = lat;
	}
	return 0;
}

/* group_drain scales group to 0 and waits until it lists no worker. */
int
group_drain(
    sv_client *c, const char *group, long timeout_ms, char *why, size_t whylen)
{
	int64_t deadline = now_ns() + timeout_ms * NS_PER_MS;
	sv_err  err;

	if ((err = sv_client_scale(c, group, 0, (int) timeout_ms, NULL))
	    != SV_OK) {
		snprintf(why, whylen, "scale(%s, 0): %s: %s", group,
		    sv_strerror(err), sv_client_error_message(c));
		return -1;
	}
	for (;;) {
		sv_workers *w;
		size_t      left;

		if ((err = sv_client_list(c, group, RPC_TIMEOUT_MS, &w))
		    != SV_OK) {
			snprintf(why, whylen, "list(%s): %s: %s", group,
			    sv_strerror(err), sv_client_error_message(c));
			return -1;
		}
		left = sv_workers_count(w);
		sv_workers_free(w);
		if (left == 0)
			return 0;
		if (now_ns() >= deadline || g_interrupted) {
			snprintf(why, whylen,
			    "%zu worker(s) of %s left %ld ms after scale 0",
			    left, group, timeout_ms);
			return -1;
		}
		sleep_ms(5);
	}
}

/* daemon_wait_gone waits until none of pids is the daemon's child. */
long
daemon_wait_gone(const pid_t *pids, long n, int64_t deadline)
{
	long i = 0;

	while (i < n) {
		long ppid;
		char state;

		if (pids[i] > 0 && proc_stat_ppid(pids[i], &state, &ppid) == 0
		    && ppid == g_daemon_pid) {
			if (now_ns() >= deadline || g_interrupted
			    || !daemon_alive())
				return i;
			sleep_ms(2);
			continue;
		}
		i++;
	}
	return -1;
}

/* daemon_stop_counts reads the stop counts of the "clean stops" row. */
void
daemon_stop_counts(int *stopsp, int *cleanp)
{
	*stopsp = g_stops;
	*cleanp = g_clean_stops;
}
