/*
 * bench_restart.c — scenario 2b of sv-bench (issue 20): restart after
 * SIGKILL of a worker that has been up for T, for T = 0, 100 ms, 2 s and
 * 10 s, with 0, 100 and 1000 other workers alive, against a raw supervisor
 * loop doing the same in the same run.
 *
 * Design. The worker is sv-bench-stamp on both sides, and latency is
 * measured as scenario 2 measures it: sv-bench reads the clock, sends
 * SIGKILL, and the replacement's own stamp (CLOCK_MONOTONIC, first thing
 * in main) minus that time is the kill -> exec'd interval.
 *   - ours: one daemon (d2b) with two groups, `others` (idle stamp
 *     workers, scaled 0 -> 100 -> 1000 between levels) and `restart` (a
 *     group of one, min_uptime_ms = 0, so no backoff at T = 0). Every
 *     replacement must have ordinal 0 and a higher generation; the others
 *     are counted as identity anomalies.
 *   - raw: sv-bench is the supervisor. It holds the other workers itself
 *     (spawned by posix_spawn, a pidfd each, all in one epoll set, as a
 *     supervisor of N workers would), and per kill: epoll_wait until the
 *     killed worker's pidfd is readable, waitid(P_PIDFD) to reap it,
 *     posix_spawn of the replacement, pidfd_open and epoll_ctl. This is
 *     the floor of a supervisor on this machine with the same number of
 *     children and descriptors.
 * Up time. A worker is killed T after its own stamp (clock_nanosleep to
 * the absolute time), so "up T" means T after it exec'd. The two sides
 * share one schedule: each cell starts with one unmeasured kill of each
 * side (its replacement starts the clock), the raw one T/2 after ours, so
 * that their kills alternate T/2 apart and neither side's restart falls
 * in the other's measurement. The actual up times are printed (min/max)
 * to show the schedule held. Why T matters: the replacement's move into
 * its cgroup (cgroup v2 migration) was measured to cost a grace period of
 * RCU when the previous migration is 100 ms or more in the past (issue
 * 20; bench/README.md has the trace).
 * Sizes: --quick runs T = 0, 100 ms, 2 s with 0 and 100 others (10, 10 and
 * 3 kills per side); the full run adds T = 10 s and 1000 others (50, 30,
 * 15, 5 kills). Cells not run print a "skip (full mode only)" row.
 *
 * Processes are started only through the harness: the daemon with
 * daemon_start, the raw workers with raw_spawn_stamp and recorded in
 * g_raw (slot 0 the raw target, then the others), so cleanup() can end
 * them after an interruption.
 *
 * File layout: cells; raw side; supervised side; the schedule; run; rows
 * and details.
 */
#include "scenarios.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef P_PIDFD
#define P_PIDFD 3 /* linux/wait.h; glibc 2.36 may not define it */
#endif

/* Up times T of the cells, ms. */
static const long rs_up_ms[RESTART_UPS] = {0, 100, 2000, 10000};
/* Other workers alive at each level. */
static const long rs_others[RESTART_LEVELS] = {0, 100, RESTART_MAX_OTHERS};
/* Measured kills per side: full run, --quick (0: not run). */
static const long rs_kills_full[RESTART_UPS]  = {50, 30, 15, 5};
static const long rs_kills_quick[RESTART_UPS] = {10, 10, 3, 0};

/* ------------------------------------------------------------------ */
/* Cells                                                              */
/* ------------------------------------------------------------------ */

/* up_text writes T as "0 ms", "100 ms", "2 s" or "10 s" into buf. */
static void
up_text(long up_ms, char *buf, size_t size)
{
	if (up_ms >= 1000 && up_ms % 1000 == 0)
		snprintf(buf, size, "%ld s", up_ms / 1000);
	else
		snprintf(buf, size, "%ld ms", up_ms);
}

/* cells_init fills res's cells for the mode: sizes, names, run or not. */
static void
cells_init(const struct opts *o, struct restart_result *res)
{
	int lv, u;

	memset(res, 0, sizeof(*res));
	for (lv = 0; lv < RESTART_LEVELS; lv++) {
		for (u = 0; u < RESTART_UPS; u++) {
			struct restart_cell *c = &res->cell[lv][u];
			char                 up[24];

			c->up_ms  = rs_up_ms[u];
			c->others = rs_others[lv];
			c->kills
			    = o->quick ? rs_kills_quick[u] : rs_kills_full[u];
			if (o->quick && c->others > 100)
				c->kills = 0;
			c->run = c->kills > 0;
			up_text(c->up_ms, up, sizeof(up));
			snprintf(c->name_med, sizeof(c->name_med),
			    "restart up %s, %ld others: median ms", up,
			    c->others);
			snprintf(c->name_p99, sizeof(c->name_p99),
			    "restart up %s, %ld others: p99 ms", up,
			    c->others);
		}
	}
}

/* ------------------------------------------------------------------ */
/* Raw side                                                           */
/* ------------------------------------------------------------------ */

/* The raw supervisor: its epoll set and its target worker (g_raw[0]). */
struct rs_raw {
	int           ep; /* epoll over every raw worker's pidfd */
	int          *pfd; /* pidfd of g_raw[i], -1 when none */
	struct envbuf env;
	pid_t         pid; /* the target worker */
	long long     gen; /* its generation */
	int64_t       stamp_ns; /* its stamp */
};

/* stamp_of waits for pid's stamp into *st; 1 got it, else as rx_stamp. */
static int
stamp_of(pid_t pid, struct sv_bench_stamp *st, int64_t deadline)
{
	int rv;

	while ((rv = rx_stamp(st, deadline)) == 1)
		if (st->pid == pid)
			return 1;
	return rv;
}

/*
 * raw_spawn_slot starts the raw worker of g_raw slot i (ordinal i, the
 * target at 0), opens its pidfd and adds it to the epoll set. Returns 0,
 * or -1 with why set.
 */
static int
raw_spawn_slot(
    struct rs_raw *r, size_t i, long long gen, char *why, size_t whylen)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = i};
	pid_t              pid;
	int                rv;

	if ((rv = raw_spawn_stamp(&r->env, (long) i, gen, &pid)) != 0) {
		snprintf(why, whylen, "posix_spawn: %s", strerror(rv));
		return -1;
	}
	g_raw[i] = pid;
	if (i >= g_nraw)
		g_nraw = i + 1;
	if ((r->pfd[i] = bench_pidfd_open(pid)) < 0
	    || epoll_ctl(r->ep, EPOLL_CTL_ADD, r->pfd[i], &ev) != 0) {
		snprintf(
		    why, whylen, "pidfd_open/epoll_ctl: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * raw_open sets up the raw supervisor and starts its target worker, then
 * waits for its stamp. Returns 0, or -1 with why set; raw_close undoes it
 * in both cases.
 */
static int
raw_open(struct rs_raw *r, char *why, size_t whylen)
{
	struct sv_bench_stamp st;
	size_t                i;

	memset(r, 0, sizeof(*r));
	r->ep  = epoll_create1(EPOLL_CLOEXEC);
	r->pfd = calloc(RESTART_MAX_OTHERS + 1, sizeof(int));
	if (r->pfd != NULL)
		for (i = 0; i <= RESTART_MAX_OTHERS; i++)
			r->pfd[i] = -1;
	if (r->ep < 0 || r->pfd == NULL || envbuf_init(&r->env) != 0) {
		snprintf(why, whylen, "epoll or memory: %s", strerror(errno));
		return -1;
	}
	g_nraw = 0;
	if (raw_spawn_slot(r, 0, r->gen, why, whylen) != 0)
		return -1;
	r->pid = g_raw[0];
	if (stamp_of(r->pid, &st, now_ns() + 5 * NS_PER_SEC) != 1) {
		snprintf(why, whylen, "no stamp from the raw target worker");
		return -1;
	}
	r->stamp_ns = st.t_ns;
	return 0;
}

/*
 * raw_others grows the raw side's other workers (g_raw[1..]) to n and
 * waits for their stamps. Returns 0, or -1 with why set.
 */
static int
raw_others(struct rs_raw *r, long n, char *why, size_t whylen)
{
	struct sv_bench_stamp st;
	size_t                have = g_nraw - 1, i, want = (size_t) n;
	int64_t               deadline;
	long                  got = 0;

	rx_flush();
	for (i = have + 1; i <= want; i++)
		if (raw_spawn_slot(r, i, 0, why, whylen) != 0)
			return -1;
	deadline = now_ns() + 60 * NS_PER_SEC;
	while (got < (long) (want - have)) {
		if (rx_stamp(&st, deadline) != 1) {
			snprintf(why, whylen,
			    "%ld of %zu raw other workers stamped", got,
			    want - have);
			return -1;
		}
		got++;
	}
	return 0;
}

/*
 * raw_restart is one measured step of the raw supervisor: SIGKILL the
 * target, wait for its pidfd in the epoll set, reap it with waitid, start
 * the replacement and wait for its stamp. *latp gets kill to stamp.
 * Returns 0, or -1 with why set.
 */
static int
raw_restart(struct rs_raw *r, int64_t *latp, char *why, size_t whylen)
{
	struct sv_bench_stamp st;
	struct epoll_event    ev;
	siginfo_t             si;
	int64_t               t0 = now_ns();
	int                   n;

	if (kill(r->pid, SIGKILL) != 0) {
		snprintf(why, whylen, "kill(%d): %s", (int) r->pid,
		    strerror(errno));
		return -1;
	}
	for (;;) {
		int64_t left = t0 + 5 * NS_PER_SEC - now_ns();

		n = left > 0
		    ? epoll_wait(r->ep, &ev, 1, (int) (left / NS_PER_MS))
		    : 0;
		if (n < 0 && errno == EINTR && !g_interrupted)
			continue;
		if (n != 1 || ev.data.u64 == 0)
			break;
		/* Another raw worker ended: drop it, keep waiting. */
		(void) epoll_ctl(
		    r->ep, EPOLL_CTL_DEL, r->pfd[ev.data.u64], NULL);
	}
	memset(&si, 0, sizeof(si));
	if (n != 1
	    || syscall(SYS_waitid, P_PIDFD, r->pfd[0], &si, WEXITED, NULL)
	        != 0) {
		snprintf(why, whylen, "raw worker %d: no exit seen (%s)",
		    (int) r->pid, n == 1 ? strerror(errno) : "epoll");
		return -1;
	}
	close(r->pfd[0]); /* also leaves the epoll set */
	r->pfd[0] = -1;
	g_raw[0]  = 0; /* reaped: nothing for cleanup to signal */
	if (raw_spawn_slot(r, 0, ++r->gen, why, whylen) != 0)
		return -1;
	r->pid = g_raw[0];
	if (stamp_of(r->pid, &st, t0 + 5 * NS_PER_SEC) != 1) {
		snprintf(why, whylen, "no stamp from raw replacement %d",
		    (int) r->pid);
		return -1;
	}
	*latp       = st.t_ns - t0;
	r->stamp_ns = st.t_ns;
	return 0;
}

/* raw_close ends every raw worker and closes the supervisor's fds. */
static void
raw_close(struct rs_raw *r)
{
	size_t i;

	if (r->pfd != NULL)
		for (i = 0; i <= RESTART_MAX_OTHERS; i++)
			if (r->pfd[i] >= 0)
				close(r->pfd[i]);
	free(r->pfd);
	r->pfd = NULL;
	if (r->ep >= 0)
		close(r->ep);
	r->ep = -1;
	raw_reap_all(2000);
	envbuf_free(&r->env);
}

/* ------------------------------------------------------------------ */
/* Supervised side                                                    */
/* ------------------------------------------------------------------ */

/* The daemon side: its client, its target worker. */
struct rs_ours {
	struct daemon d;
	bool          started; /* the daemon was started: stop it */
	sv_client    *c;
	long          others; /* workers of group `others` now */
	pid_t         pid; /* the target worker */
	int64_t       gen; /* its generation */
	int64_t       stamp_ns; /* its stamp */
};

/*
 * ours_scale scales group to n on the daemon and waits for `expect` new
 * stamps; the last one is left in *st. Returns 0, or -1 with why set.
 */
static int
ours_scale(struct rs_ours *s, const char *group, long n, long expect,
    struct sv_bench_stamp *st, char *why, size_t whylen)
{
	int64_t deadline;
	sv_err  err;
	long    got = 0;
	int     rv;

	rx_flush();
	if ((err = sv_client_scale(
	         s->c, group, (uint32_t) n, RPC_TIMEOUT_MS, NULL))
	    != SV_OK) {
		snprintf(why, whylen, "scale(%s, %ld): %s: %s", group, n,
		    sv_strerror(err), sv_client_error_message(s->c));
		return -1;
	}
	deadline = now_ns() + 60 * NS_PER_SEC;
	while (got < expect) {
		if ((rv = rx_stamp(st, deadline)) != 1) {
			snprintf(why, whylen,
			    "%ld of %ld workers of %s stamped (%s)", got,
			    expect, group,
			    rv == -2 ? "daemon exited" : "deadline");
			return -1;
		}
		got++;
	}
	return 0;
}

/*
 * ours_open starts the daemon with groups `others` and `restart` at 0,
 * opens a client and scales `restart` to its one worker. Returns 0, or
 * -1 with why set; ours_close undoes it in both cases.
 */
static int
ours_open(struct rs_ours *s, char *why, size_t whylen)
{
	const char      *argv[] = {SV_BENCH_STAMP_PATH, NULL};
	struct group_cfg g[2]   = {
	      {.name             = "others",
	          .argv          = argv,
	          .count         = 0,
	          .max_count     = RESTART_MAX_OTHERS,
	          .min_uptime_ms = -1,
	          .purpose       = "sv-bench idle workers beside the target",
	          .env           = g_sock_env},
	      {.name             = "restart",
	          .argv          = argv,
	          .count         = 0,
	          .min_uptime_ms = 0,
	          .purpose       = "sv-bench restart-after-SIGKILL worker",
	          .env           = g_sock_env},
        };
	struct sv_bench_stamp st;
	sv_err                err;

	if (daemon_start_groups(&s->d, "d2b", g, 2, why, whylen) != 0)
		return -1;
	s->started = true;
	if (daemon_wait_ready(&s->d, 10000, why, whylen) != 0)
		return -1;
	if ((err = sv_client_open(&s->c, s->d.url, RPC_TIMEOUT_MS)) != SV_OK) {
		snprintf(why, whylen, "sv_client_open: %s", sv_strerror(err));
		return -1;
	}
	if (ours_scale(s, "restart", 1, 1, &st, why, whylen) != 0)
		return -1;
	s->pid      = st.pid;
	s->gen      = st.generation;
	s->stamp_ns = st.t_ns;
	return 0;
}

/*
 * ours_restart is one measured step on the daemon: SIGKILL its target and
 * wait for the replacement's stamp. *latp gets kill to stamp; a
 * replacement with another ordinal or no higher generation counts in
 * *anomaliesp. Returns 0, or -1 with why set.
 */
static int
ours_restart(struct rs_ours *s, int64_t *latp, long *anomaliesp, char *why,
    size_t whylen)
{
	struct sv_bench_stamp st;
	int                   rv;

	rv = kill_await_replacement(s->pid, 5 * NS_PER_SEC, &st, latp);
	if (rv != 1) {
		snprintf(why, whylen, "no replacement within 5 s (%s)",
		    rv == -2      ? "daemon exited"
		        : rv == 0 ? "deadline"
		                  : "kill failed or interrupted");
		return -1;
	}
	if (st.ordinal != 0 || st.generation <= s->gen)
		(*anomaliesp)++;
	s->pid      = st.pid;
	s->gen      = st.generation;
	s->stamp_ns = st.t_ns;
	return 0;
}

/* ours_close closes the client and stops the daemon. */
static void
ours_close(struct rs_ours *s)
{
	if (s->c != NULL)
		sv_client_close(s->c);
	s->c = NULL;
	if (s->started)
		daemon_stop(&s->d, 15000, NULL);
	s->started = false;
}

/* ------------------------------------------------------------------ */
/* The schedule                                                       */
/* ------------------------------------------------------------------ */

/* sleep_until sleeps until the monotonic time t (ns), or a signal. */
static void
sleep_until(int64_t t)
{
	struct timespec ts = {t / NS_PER_SEC, t % NS_PER_SEC};

	while (!g_interrupted && now_ns() < t
	    && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL)
	        == EINTR)
		;
}

/* note_up records an actual up time in c's min/max. */
static void
note_up(struct restart_cell *c, int64_t up)
{
	if (c->up_max_ns == 0 || up > c->up_max_ns)
		c->up_max_ns = up;
	if (c->up_min_ns == 0 || up < c->up_min_ns)
		c->up_min_ns = up;
}

/*
 * run_cell measures one cell: an unmeasured kill of each side (the raw
 * one T/2 after ours), then c->kills measured kills per side, each side's
 * worker killed T after its stamp, whichever is due first. Returns 0, or
 * -1 with res->why or res->why_raw set.
 */
static int
run_cell(struct restart_cell *c, struct rs_raw *r, struct rs_ours *s,
    struct restart_result *res)
{
	int64_t T = c->up_ms * NS_PER_MS, lat;

	if (ours_restart(s, &lat, &res->anomalies, res->why, sizeof(res->why))
	    != 0)
		return -1;
	sleep_until(now_ns() + T / 2);
	if (raw_restart(r, &lat, res->why_raw, sizeof(res->why_raw)) != 0)
		return -1;
	while (
	    !g_interrupted && (c->n_ours < c->kills || c->n_raw < c->kills)) {
		bool ours = c->n_raw >= c->kills
		    || (c->n_ours < c->kills && s->stamp_ns <= r->stamp_ns);
		int64_t stamp = ours ? s->stamp_ns : r->stamp_ns;

		sleep_until(stamp + T);
		note_up(c, now_ns() - stamp);
		if (ours) {
			if (ours_restart(s, &lat, &res->anomalies, res->why,
			        sizeof(res->why))
			    != 0)
				return -1;
			c->ours[c->n_ours++] = lat;
		} else {
			if (raw_restart(
			        r, &lat, res->why_raw, sizeof(res->why_raw))
			    != 0)
				return -1;
			c->raw[c->n_raw++] = lat;
		}
	}
	if (g_interrupted)
		return -1;
	c->ok = true;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Run                                                                */
/* ------------------------------------------------------------------ */

/* restart_run runs every cell of the mode; see scenarios.h. */
int
restart_run(const struct opts *o, struct restart_result *res)
{
	struct sv_bench_stamp st;
	struct rs_raw         r;
	struct rs_ours        s;
	int                   lv, u, ret = -1;

	cells_init(o, res);
	memset(&s, 0, sizeof(s));
	note("2b restart after SIGKILL of a worker up T, raw and supervised "
	     "alternating (%s)",
	    o->quick ? "--quick: T 0/100 ms/2 s, 0 and 100 others"
	             : "T 0/100 ms/2 s/10 s, 0/100/1000 others: minutes");
	rx_flush();
	if (raw_open(&r, res->why_raw, sizeof(res->why_raw)) != 0
	    || ours_open(&s, res->why, sizeof(res->why)) != 0)
		goto out;
	for (lv = 0; lv < RESTART_LEVELS && !g_interrupted; lv++) {
		long n = rs_others[lv];

		if (!res->cell[lv][0].run && !res->cell[lv][1].run)
			continue;
		if (raw_others(&r, n, res->why_raw, sizeof(res->why_raw)) != 0
		    || ours_scale(&s, "others", n, n - s.others, &st, res->why,
		           sizeof(res->why))
		        != 0)
			goto out;
		s.others = n;
		for (u = 0; u < RESTART_UPS; u++) {
			struct restart_cell *c = &res->cell[lv][u];

			if (!c->run)
				continue;
			note("2b restart: up %ld ms, %ld others, %ld kills "
			     "per side",
			    c->up_ms, c->others, c->kills);
			if (run_cell(c, &r, &s, res) != 0)
				goto out;
			c->s_raw  = stats_of(c->raw, (size_t) c->n_raw);
			c->s_ours = stats_of(c->ours, (size_t) c->n_ours);
		}
	}
	ret = g_interrupted ? -1 : 0;
out:
	ours_close(&s);
	raw_close(&r);
	res->ok = ret == 0;
	return ret;
}

/* ------------------------------------------------------------------ */
/* Rows and details                                                   */
/* ------------------------------------------------------------------ */

/*
 * restart_rows writes a median and a p99 row per cell run, and one skip
 * row per cell only the full run measures. The median rows of T = 0 (a
 * crash loop) and T = 2 s carry issue 20's target, <= 1.3x the raw loop.
 */
int
restart_rows(
    const struct opts *o, const struct restart_result *res, struct row *rows)
{
	int lv, u, n = 0;

	(void) o;
	for (lv = 0; lv < RESTART_LEVELS; lv++) {
		for (u = 0; u < RESTART_UPS; u++) {
			const struct restart_cell *c = &res->cell[lv][u];
			bool target = c->up_ms == 0 || c->up_ms == 2000;

			if (!c->run) {
				rows[n++] = (struct row) {.name = c->name_med,
				    .kind   = target ? T_RATIO_LE : T_INFO,
				    .target = 1.3,
				    .skip   = "full mode only"};
				continue;
			}
			rows[n++] = (struct row) {.name = c->name_med,
			    .made                       = c->ok,
			    .has_base                   = c->ok,
			    .base                       = c->s_raw.med / 1e6,
			    .ours                       = c->s_ours.med / 1e6,
			    .kind   = target ? T_RATIO_LE : T_INFO,
			    .target = 1.3};
			rows[n++] = (struct row) {.name = c->name_p99,
			    .made                       = c->ok,
			    .has_base                   = c->ok,
			    .base                       = c->s_raw.p99 / 1e6,
			    .ours                       = c->s_ours.p99 / 1e6,
			    .kind                       = T_INFO};
		}
	}
	return n;
}

/* restart_details prints per cell the counts, ranges and up times. */
void
restart_details(const struct restart_result *res)
{
	int lv, u;

	for (lv = 0; lv < RESTART_LEVELS; lv++) {
		for (u = 0; u < RESTART_UPS; u++) {
			const struct restart_cell *c = &res->cell[lv][u];

			if (!c->run || c->n_raw + c->n_ours == 0)
				continue;
			printf("restart up %ld ms, %ld others: %ld+%ld kills "
			       "(raw+ours, +1 unmeasured each); raw min/max "
			       "%.3f/%.3f ms, ours %.3f/%.3f ms; up at kill "
			       "%.1f..%.1f ms\n",
			    c->up_ms, c->others, c->n_raw, c->n_ours,
			    c->s_raw.min / 1e6, c->s_raw.max / 1e6,
			    c->s_ours.min / 1e6, c->s_ours.max / 1e6,
			    c->up_min_ns / 1e6, c->up_max_ns / 1e6);
		}
	}
	printf("restart: %ld identity anomalies (ordinal != 0 or generation "
	       "not increasing); baseline = sv-bench's own loop: posix_spawn, "
	       "pidfd in epoll, waitid(P_PIDFD), the same worker and the "
	       "same number of other workers\n",
	    res->anomalies);
}
