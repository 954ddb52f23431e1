/*
 * bench_idle.c — scenario 10 of sv-bench (issue 6, item 5): what an idle
 * supervisor costs. Target: an idle supervised, with 1 and with 100 idle
 * workers, wakes at most once a second; its CPU time per 30 s is printed
 * for information.
 *
 * Design. Three processes are watched from outside, through /proc only:
 *   - the baseline, "sv-bench --role idle SOCK": a raw process that
 *     reports one stamp datagram and then blocks in epoll_wait, with no
 *     timeout, on one eventfd nobody writes (the floor: a process that
 *     waits for an event that never comes);
 *   - the daemon, one supervised with one group "idle" of sv-bench-stamp
 *     workers (they report a stamp and pause());
 *   - sv-bench itself, as a cross-check that it stayed quiet.
 * A phase has 1 worker (the group's configured count), then 100 (one
 * sv_client_scale, then every ordinal's stamp awaited). After the last
 * stamp of a phase, sv-bench waits IDLE_SETTLE_MS, draining the report
 * socket (any stamp then is a restart, and is counted), so that the
 * daemon's one-off work after a spawn (the min_uptime timer at 1 s by
 * default, the cgroup spare sweep) is over. Then it snapshots the three
 * processes, sleeps one window in clock_nanosleep (30 s, --quick 5 s:
 * the window is the measurement; sv-bench does nothing during it), and
 * snapshots them again. Both processes are measured over the same window.
 *
 * A snapshot: per thread (/proc/PID/task/TID/status), voluntary_ctxt_
 * switches + nonvoluntary_ctxt_switches and the thread's name; and the
 * process's utime + stime (/proc/PID/stat, which includes threads that
 * ended). Wake-ups in the window = the sum over the threads of the end
 * snapshot of (end - start), counting the whole count of a thread born
 * inside the window; a thread that ended inside the window loses its
 * switches (their number is printed). Wake-ups per second = that sum /
 * the time between the two snapshots. CPU per 30 s = the CPU delta scaled
 * to 30 s, at clock-tick resolution (_SC_CLK_TCK, 10 ms here).
 *
 * Processes are started only through the harness: the daemon with
 * daemon_start (stopped with daemon_stop, SIGTERM), the baseline with
 * spawn_proc and recorded in g_raw (ended with raw_reap_all, SIGTERM),
 * so cleanup() can end both after an interruption. The baseline also
 * asks for SIGKILL at its parent's death.
 *
 * File layout: role "idle"; snapshots; waits; run; rows and details.
 */
#include "scenarios.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <supervise/client.h>

#define IDLE_SETTLE_MS       2000 /* quiet time after a phase's last stamp */
#define IDLE_WINDOW_MS       30000 /* the measurement window */
#define IDLE_WINDOW_QUICK_MS 5000 /* with --quick */
#define IDLE_MAX_THREADS     256 /* threads per snapshot */
#define IDLE_TARGET_PER_S    1.0 /* wake-ups per second, at most */

/* ------------------------------------------------------------------ */
/* Role "idle": the raw baseline                                      */
/* ------------------------------------------------------------------ */

/* idle_role_base blocks in epoll_wait for good; see scenarios.h. */
int
idle_role_base(const char *sock)
{
	struct epoll_event    ev = {.events = EPOLLIN}, out;
	struct sv_bench_stamp st;
	struct timespec       ts;
	int                   ep, fd;

	(void) prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	(void) prctl(PR_SET_NAME, "sv-bench-idle", 0, 0, 0);
	ep         = epoll_create1(EPOLL_CLOEXEC);
	fd         = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ev.data.fd = fd;
	if (ep < 0 || fd < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0
	    || setenv(SV_BENCH_ENV_SOCK, sock, 1) != 0) {
		fprintf(stderr, "sv-bench --role idle: set-up: %s\n",
		    strerror(errno));
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	memset(&st, 0, sizeof(st));
	st.magic      = SV_BENCH_MAGIC_STAMP;
	st.pid        = (int32_t) getpid();
	st.ordinal    = -1;
	st.generation = -1;
	st.t_ns       = (int64_t) ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
	if (sv_bench_send(&st, sizeof(st)) != 0) {
		fprintf(stderr, "sv-bench --role idle: cannot report\n");
		return 1;
	}
	/* Nothing writes the eventfd: this returns only if it were. SIGTERM
	 * (default disposition) ends the process. */
	for (;;)
		(void) epoll_wait(ep, &out, 1, -1);
}

/* ------------------------------------------------------------------ */
/* Snapshots                                                          */
/* ------------------------------------------------------------------ */

/* One thread of a snapshot. */
struct idle_thr {
	pid_t tid;
	long  sw; /* voluntary + nonvoluntary context switches */
	char  comm[16];
};

/* What /proc said about one process at one moment. */
struct idle_snap {
	bool            ok;
	int64_t         t_ns; /* CLOCK_MONOTONIC before the reads */
	long            cpu_ticks; /* utime + stime, clock ticks */
	size_t          n; /* threads in thr */
	bool            truncated; /* more than IDLE_MAX_THREADS threads */
	struct idle_thr thr[IDLE_MAX_THREADS];
};

/* The window's snapshots: [start, end] x [daemon, baseline, sv-bench]. */
static struct idle_snap g_snaps[2][3];

/*
 * thr_read reads the name and the context switches of thread tid of pid
 * into t. Returns 0, or -1 when the thread has ended or is unreadable.
 */
static int
thr_read(pid_t pid, long tid, struct idle_thr *t)
{
	char  path[96], line[160];
	long  v, vol = -1, nonvol = -1;
	FILE *f;

	snprintf(
	    path, sizeof(path), "/proc/%d/task/%ld/status", (int) pid, tid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	t->comm[0] = '\0';
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "Name:\t", 6) == 0) {
			snprintf(t->comm, sizeof(t->comm), "%.15s", line + 6);
			t->comm[strcspn(t->comm, "\n")] = '\0';
		} else if (sscanf(line, "voluntary_ctxt_switches: %ld", &v)
		    == 1) {
			vol = v;
		} else if (sscanf(line, "nonvoluntary_ctxt_switches: %ld", &v)
		    == 1) {
			nonvol = v;
		}
	}
	fclose(f);
	if (vol < 0 || nonvol < 0)
		return -1;
	t->tid = (pid_t) tid;
	t->sw  = vol + nonvol;
	return 0;
}

/* cpu_ticks_of reads utime + stime of pid from /proc/PID/stat; -1 if gone.
 */
static long
cpu_ticks_of(pid_t pid)
{
	char          buf[1024];
	const char   *p = proc_stat_rest(pid, buf, sizeof(buf));
	unsigned long ut, st;

	if (p == NULL)
		return -1;
	if (sscanf(p, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
	        &ut, &st)
	    != 2)
		return -1;
	return (long) (ut + st);
}

/*
 * snap_take fills s with pid's threads and CPU time. Returns 0, or -1
 * (s->ok false) when the process is gone or unreadable.
 */
static int
snap_take(pid_t pid, struct idle_snap *s)
{
	char           path[64];
	struct dirent *e;
	DIR           *d;

	s->ok        = false;
	s->n         = 0;
	s->truncated = false;
	s->t_ns      = now_ns();
	snprintf(path, sizeof(path), "/proc/%d/task", (int) pid);
	if ((d = opendir(path)) == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		long tid = parse_long(e->d_name, 1, INT_MAX);

		if (tid < 0)
			continue;
		if (s->n == IDLE_MAX_THREADS) {
			s->truncated = true;
			break;
		}
		if (thr_read(pid, tid, &s->thr[s->n]) == 0)
			s->n++;
	}
	closedir(d);
	if ((s->cpu_ticks = cpu_ticks_of(pid)) < 0 || s->n == 0)
		return -1;
	s->ok = true;
	return 0;
}

/* One thread's switches in the window, for the busiest-threads text. */
struct idle_busy {
	long        sw;
	const char *comm;
	pid_t       tid;
};

/* cmp_busy orders struct idle_busy by switches, most first. */
static int
cmp_busy(const void *a, const void *b)
{
	long x = ((const struct idle_busy *) a)->sw;
	long y = ((const struct idle_busy *) b)->sw;

	return (x < y) - (x > y);
}

/*
 * meas_of turns the snapshots a (window start) and b (window end) of one
 * process into m: switches, CPU, thread counts and the busiest threads.
 */
static void
meas_of(const struct idle_snap *a, const struct idle_snap *b, long clk_tck,
    struct idle_meas *m)
{
	static struct idle_busy busy[IDLE_MAX_THREADS];
	size_t                  i, j, nb = 0, len = 0;

	memset(m, 0, sizeof(*m));
	if (!a->ok || !b->ok || clk_tck <= 0)
		return;
	for (i = 0; i < b->n; i++) {
		long d = b->thr[i].sw;

		for (j = 0; j < a->n; j++)
			if (a->thr[j].tid == b->thr[i].tid)
				break;
		if (j < a->n)
			d -= a->thr[j].sw;
		else
			m->born++;
		m->switches += d;
		if (d > 0)
			busy[nb++] = (struct idle_busy) {
			    d, b->thr[i].comm, b->thr[i].tid};
	}
	for (j = 0; j < a->n; j++) {
		for (i = 0; i < b->n; i++)
			if (a->thr[j].tid == b->thr[i].tid)
				break;
		if (i == b->n)
			m->gone++;
	}
	m->ok        = true;
	m->window_ns = b->t_ns - a->t_ns;
	m->cpu_ms    = (b->cpu_ticks - a->cpu_ticks) * 1000 / clk_tck;
	m->threads0  = (long) a->n;
	m->threads1  = (long) b->n;
	m->truncated = a->truncated || b->truncated;
	qsort(busy, nb, sizeof(busy[0]), cmp_busy);
	m->top[0] = '\0';
	for (i = 0; i < nb && i < 4 && len < sizeof(m->top); i++) {
		int w = snprintf(m->top + len, sizeof(m->top) - len,
		    "%s%s/%d %ld", i > 0 ? ", " : "", busy[i].comm,
		    (int) busy[i].tid, busy[i].sw);

		if (w < 0)
			break;
		len += (size_t) w;
	}
}

/* ------------------------------------------------------------------ */
/* Waits                                                              */
/* ------------------------------------------------------------------ */

/*
 * window_sleep sleeps until the monotonic time end (the measurement
 * window itself), resuming after signals unless g_interrupted is set.
 */
static void
window_sleep(int64_t end)
{
	struct timespec ts
	    = {(time_t) (end / NS_PER_SEC), (long) (end % NS_PER_SEC)};

	while (!g_interrupted
	    && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL)
	        == EINTR)
		;
}

/*
 * await_stamps waits until deadline for stamps, marking seen[ordinal]
 * for ordinals below n, until *got reaches n. A stamp of an ordinal
 * already seen counts in *restarts. Returns 0, or -1 with why set.
 */
static int
await_stamps(unsigned char *seen, long n, long *got, long *restarts,
    int64_t deadline, char *why, size_t whylen)
{
	struct sv_bench_stamp st;

	while (*got < n) {
		int rv = rx_stamp(&st, deadline);

		if (rv != 1) {
			snprintf(why, whylen,
			    "%s: %ld of %ld idle workers reported",
			    rv == -2      ? "supervised exited"
			        : rv == 0 ? "deadline"
			                  : "interrupted",
			    *got, n);
			return -1;
		}
		if (st.ordinal < 0 || st.ordinal >= n)
			continue;
		if (seen[st.ordinal])
			(*restarts)++;
		else {
			seen[st.ordinal] = 1;
			(*got)++;
		}
	}
	return 0;
}

/*
 * settle waits IDLE_SETTLE_MS, counting the stamps that arrive (each
 * one a worker restarted) into *restarts. Returns 0, or -1 with why.
 */
static int
settle(long *restarts, char *why, size_t whylen)
{
	int64_t               deadline = now_ns() + IDLE_SETTLE_MS * NS_PER_MS;
	struct sv_bench_stamp st;
	int                   rv;

	while ((rv = rx_stamp(&st, deadline)) == 1)
		(*restarts)++;
	if (rv == 0)
		return 0;
	snprintf(why, whylen, "%s while settling",
	    rv == -2 ? "supervised exited" : "interrupted");
	return -1;
}

/*
 * window measures one window on the daemon (g_daemon_pid), the baseline
 * base_pid and sv-bench itself into ph. Returns 0, or -1 with why set.
 */
static int
window(pid_t base_pid, long window_ms, long clk_tck, struct idle_phase *ph,
    char *why, size_t whylen)
{
	const pid_t pids[3] = {g_daemon_pid, base_pid, getpid()};
	char        buf[sizeof(struct sv_bench_rtt)];
	int         k;

	for (k = 0; k < 3; k++)
		(void) snap_take(pids[k], &g_snaps[0][k]);
	window_sleep(g_snaps[0][0].t_ns + window_ms * NS_PER_MS);
	for (k = 0; k < 3; k++)
		(void) snap_take(pids[k], &g_snaps[1][k]);
	/* A stamp queued during the window is a worker that restarted. */
	while (rx_recv(buf, sizeof(buf), 0) > 0)
		ph->restarts++;
	if (g_interrupted) {
		snprintf(why, whylen, "interrupted during the window");
		return -1;
	}
	meas_of(&g_snaps[0][0], &g_snaps[1][0], clk_tck, &ph->daemon);
	meas_of(&g_snaps[0][1], &g_snaps[1][1], clk_tck, &ph->base);
	meas_of(&g_snaps[0][2], &g_snaps[1][2], clk_tck, &ph->self);
	if (!ph->daemon.ok || !daemon_alive()) {
		snprintf(why, whylen, "supervised gone during the window");
		return -1;
	}
	if (!ph->base.ok) {
		snprintf(why, whylen, "baseline gone during the window");
		return -1;
	}
	ph->ok = true;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Run                                                                */
/* ------------------------------------------------------------------ */

/*
 * base_start starts the baseline process, records it in g_raw and waits
 * for its stamp. Returns 0, or -1 with why set.
 */
static int
base_start(pid_t *pidp, char *why, size_t whylen)
{
	char *argv[] = {"sv-bench-idle", "--role", "idle", g_sock, NULL};
	struct sv_bench_stamp st;
	int64_t               deadline;
	int                   rv;

	if (g_nraw > 0)
		raw_reap_all(2000);
	if ((rv = spawn_proc(g_self, argv, NULL, NULL, true, pidp)) != 0) {
		snprintf(why, whylen, "cannot start the baseline: %s",
		    strerror(rv));
		return -1;
	}
	g_raw[g_nraw++] = *pidp;
	deadline        = now_ns() + 10 * NS_PER_SEC;
	do
		rv = rx_stamp(&st, deadline);
	while (rv == 1 && st.pid != *pidp);
	if (rv != 1) {
		snprintf(why, whylen, "the baseline did not report");
		return -1;
	}
	return 0;
}

/*
 * scale_to asks the daemon at url to run n workers in group "idle".
 * Returns 0, or -1 with why set.
 */
static int
scale_to(const char *url, long n, char *why, size_t whylen)
{
	sv_client *c = NULL;
	sv_err     err;

	if ((err = sv_client_open(&c, url, RPC_TIMEOUT_MS)) == SV_OK)
		err = sv_client_scale(
		    c, "idle", (uint32_t) n, RPC_TIMEOUT_MS, NULL);
	if (err != SV_OK)
		snprintf(why, whylen, "scale(idle, %ld): %s: %s", n,
		    sv_strerror(err),
		    c != NULL ? sv_client_error_message(c) : "");
	sv_client_close(c);
	return err == SV_OK ? 0 : -1;
}

/* idle_phases runs both phases on a started, ready daemon; 0 or -1. */
static int
idle_phases(const struct daemon *d, pid_t base_pid, struct idle_result *res)
{
	static const long workers[IDLE_PHASES] = {1, IDLE_WORKERS};
	unsigned char     seen[IDLE_WORKERS];
	long              got    = 0, p;
	char             *why    = res->why;
	size_t            whylen = sizeof(res->why);

	memset(seen, 0, sizeof(seen));
	for (p = 0; p < IDLE_PHASES; p++) {
		struct idle_phase *ph = &res->ph[p];
		int64_t            t0 = now_ns();

		ph->workers = workers[p];
		note("10 idle: %ld worker(s), settle %d ms, window %ld ms",
		    ph->workers, IDLE_SETTLE_MS, res->window_ms);
		if (p > 0 && scale_to(d->url, ph->workers, why, whylen) != 0)
			return -1;
		if (await_stamps(seen, ph->workers, &got, &ph->restarts,
		        t0 + 30 * NS_PER_SEC + ph->workers * 20 * NS_PER_MS,
		        why, whylen)
		    != 0)
			return -1;
		ph->up_ns = now_ns() - t0;
		if (settle(&ph->restarts, why, whylen) != 0
		    || window(base_pid, res->window_ms, res->clk_tck, ph, why,
		           whylen)
		        != 0)
			return -1;
		res->phases = p + 1;
	}
	return 0;
}

/* idle_run runs scenario 10; see scenarios.h. */
int
idle_run(const struct opts *o, struct idle_result *res)
{
	const char      *wargv[] = {SV_BENCH_STAMP_PATH, NULL};
	struct group_cfg g       = {.name = "idle",
	          .argv                   = wargv,
	          .count                  = 1,
	          .max_count              = IDLE_WORKERS,
	          .min_uptime_ms          = -1,
	          .purpose                = "sv-bench idle worker",
	          .env                    = g_sock_env};
	struct daemon    d;
	pid_t            base_pid = -1;
	int              ret      = -1;

	memset(res, 0, sizeof(*res));
	res->window_ms = o->quick ? IDLE_WINDOW_QUICK_MS : IDLE_WINDOW_MS;
	res->settle_ms = IDLE_SETTLE_MS;
	res->clk_tck   = sysconf(_SC_CLK_TCK);
	if (g_interrupted)
		return -1;
	rx_flush();
	if (base_start(&base_pid, res->why, sizeof(res->why)) == 0
	    && daemon_start(&d, "d10", &g, res->why, sizeof(res->why)) == 0) {
		if (daemon_wait_ready(&d, 10000, res->why, sizeof(res->why))
		    == 0)
			ret = idle_phases(&d, base_pid, res);
		daemon_stop(&d, 30000, NULL);
	}
	raw_reap_all(2000);
	res->ok = ret == 0;
	return ret;
}

/* ------------------------------------------------------------------ */
/* Rows and details                                                   */
/* ------------------------------------------------------------------ */

/* per_s is m's switches per second of its window. */
static double
per_s(const struct idle_meas *m)
{
	return m->window_ns > 0 ? m->switches * 1e9 / (double) m->window_ns
	                        : 0;
}

/* per_30s is m's CPU milliseconds scaled to a 30 s window. */
static double
per_30s(const struct idle_meas *m)
{
	return m->window_ns > 0 ? m->cpu_ms * 30e9 / (double) m->window_ns : 0;
}

/* idle_rows writes the wake-up rows (target) and the CPU rows (info). */
int
idle_rows(const struct idle_result *res, struct row *rows)
{
	static const char *const wake[IDLE_PHASES]
	    = {"idle wake-ups/s, 1 worker", "idle wake-ups/s, 100 workers"};
	static const char *const cpu[IDLE_PHASES]
	    = {"idle CPU ms per 30 s, 1 worker",
	        "idle CPU ms per 30 s, 100 workers"};
	int p;

	for (p = 0; p < IDLE_PHASES; p++) {
		const struct idle_phase *ph = &res->ph[p];

		rows[p] = (struct row) {.name = wake[p],
		    .made                     = ph->ok,
		    .has_base                 = ph->ok,
		    .base                     = per_s(&ph->base),
		    .ours                     = per_s(&ph->daemon),
		    .kind                     = T_ABS_LE,
		    .target                   = IDLE_TARGET_PER_S,
		    .tunit                    = "/s"};
		if (ph->ok)
			snprintf(rows[p].ours_text, sizeof(rows[p].ours_text),
			    "%.2f", per_s(&ph->daemon));
		rows[IDLE_PHASES + p] = (struct row) {.name = cpu[p],
		    .made                                   = ph->ok,
		    .has_base                               = ph->ok,
		    .base = per_30s(&ph->base),
		    .ours = per_30s(&ph->daemon),
		    .kind = T_INFO};
	}
	return 2 * IDLE_PHASES;
}

/* idle_details prints one line per phase and process measured. */
void
idle_details(const struct idle_result *res)
{
	static const char *const who[3]
	    = {"supervised", "baseline", "sv-bench"};
	long p;
	int  k;

	for (p = 0; p < res->phases; p++) {
		const struct idle_phase *ph = &res->ph[p];
		const struct idle_meas  *m[3]
		    = {&ph->daemon, &ph->base, &ph->self};

		printf("idle, %ld worker(s): up in %.0f ms, settle %ld ms, "
		       "window %.1f s, worker restarts seen %ld\n",
		    ph->workers, ph->up_ns / 1e6, res->settle_ms,
		    ph->daemon.window_ns / 1e9, ph->restarts);
		for (k = 0; k < 3; k++)
			printf(
			    "  %-10s %ld switches (%.2f/s), CPU %ld ms (tick "
			    "%ld ms), threads %ld -> %ld (born %ld, ended "
			    "%ld)%s; busiest: %s\n",
			    who[k], m[k]->switches, per_s(m[k]), m[k]->cpu_ms,
			    res->clk_tck > 0 ? 1000 / res->clk_tck : 0,
			    m[k]->threads0, m[k]->threads1, m[k]->born,
			    m[k]->gone,
			    m[k]->truncated ? " (thread list truncated)" : "",
			    m[k]->top[0] != '\0' ? m[k]->top : "none");
	}
}
