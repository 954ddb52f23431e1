/*
 * bench_crash.c — scenario 2 of sv-bench: crash to replacement exec'd.
 * Target: median <= 2 ms.
 *
 * Design: the worker is sv-bench-stamp (stamp_worker.c), whose first act is
 * to read CLOCK_MONOTONIC and whose datagram carries that stamp with its
 * pid, ordinal and generation. Each round reads the clock, SIGKILLs the
 * current worker (its pid taken from its own datagram) and waits up to 5 s
 * for a stamp from a different pid; latency = that stamp - the kill time,
 * i.e. until the replacement has been exec'd, loaded and reached main.
 * Both sides run `warm` unmeasured kills first.
 *   - raw: sv-bench is the supervisor itself (pidfd poll, waitpid,
 *     posix_spawn, pidfd_open): the floor for any supervisor here.
 *   - ours: a daemon with a group of one, min_uptime_ms = 0. Every
 *     replacement must have ordinal 0 and a higher generation; the others
 *     are counted as identity anomalies. Killing the daemon's worker is the
 *     one place sv-bench signals a process it did not start: it is the
 *     object of the measurement.
 *
 * File layout: raw side; supervised side; run; rows and details.
 */
#include "scenarios.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Raw side                                                           */
/* ------------------------------------------------------------------ */

/* wait_stamp_of waits for pid's stamp; 1 got, else as rx_stamp. */
static int
wait_stamp_of(pid_t pid, struct sv_bench_stamp *st, int64_t deadline)
{
	int rv;

	while ((rv = rx_stamp(st, deadline)) == 1)
		if (pid <= 0 || st->pid == pid)
			return 1;
	return rv;
}

/*
 * raw_start spawns the raw worker of generation gen as g_raw[0], opens its
 * pidfd into *pfdp and waits up to 5 s for its stamp into *st. Returns 0,
 * or -1 with why set (what to say of the stamp is the caller's: first).
 */
static int
raw_start(struct envbuf *e, long gen, pid_t *pidp, int *pfdp,
    struct sv_bench_stamp *st, bool first, char *why, size_t whylen)
{
	int rv;

	if ((rv = raw_spawn_stamp(e, 0, gen, pidp)) != 0) {
		snprintf(why, whylen, "posix_spawn: %s", strerror(rv));
		return -1;
	}
	g_raw[0] = *pidp;
	g_nraw   = 1;
	if ((*pfdp = bench_pidfd_open(*pidp)) < 0) {
		snprintf(why, whylen, "pidfd_open: %s", strerror(errno));
		return -1;
	}
	if (wait_stamp_of(*pidp, st, now_ns() + 5 * NS_PER_SEC) != 1) {
		if (first)
			snprintf(
			    why, whylen, "no stamp from the first raw worker");
		else
			snprintf(why, whylen, "no stamp from raw worker %d",
			    (int) *pidp);
		return -1;
	}
	return 0;
}

/*
 * crash_raw is the baseline: sv-bench supervises one stamp worker itself
 * (kill, pidfd poll, waitpid, posix_spawn) and times kill to the
 * replacement's stamp. Returns 0, or -1 with side->why set.
 */
static int
crash_raw(const struct opts *o, long warm, struct crash_side *side)
{
	struct sv_bench_stamp st;
	struct envbuf         e;
	long                  k, gen = 0;
	pid_t                 pid;
	int                   pfd = -1, ret = -1;

	rx_flush();
	if (envbuf_init(&e) != 0) {
		snprintf(side->why, sizeof(side->why), "out of memory");
		return -1;
	}
	if (raw_start(
	        &e, gen, &pid, &pfd, &st, true, side->why, sizeof(side->why))
	    != 0)
		goto out;
	for (k = -warm; k < o->kills; k++) {
		struct pollfd p  = {pfd, POLLIN, 0};
		int64_t       t0 = now_ns();

		kill(pid, SIGKILL);
		if (poll(&p, 1, 5000) != 1 || waitpid(pid, NULL, 0) != pid) {
			snprintf(side->why, sizeof(side->why),
			    "raw worker %d did not die", (int) pid);
			goto out;
		}
		g_nraw = 0;
		close(pfd);
		pfd = -1;
		if (raw_start(&e, ++gen, &pid, &pfd, &st, false, side->why,
		        sizeof(side->why))
		    != 0)
			goto out;
		if (k >= 0)
			side->lat[side->n++] = st.t_ns - t0;
	}
	ret = 0;
out:
	if (pfd >= 0)
		close(pfd);
	raw_reap_all(2000);
	envbuf_free(&e);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Supervised side                                                    */
/* ------------------------------------------------------------------ */

/*
 * crash_ours times SIGKILL of the daemon's worker to its replacement's
 * stamp, group of 1 with min_uptime_ms = 0. Counts identity anomalies in
 * *anomaliesp. Returns 0, or -1 with side->why set.
 */
static int
crash_ours(
    const struct opts *o, long warm, struct crash_side *side, long *anomaliesp)
{
	const char           *argv[] = {SV_BENCH_STAMP_PATH, NULL};
	struct group_cfg      g      = {.name = "crash",
	              .argv                   = argv,
	              .count                  = 1,
	              .min_uptime_ms          = 0,
	              .purpose = "sv-bench crash-to-replacement worker",
	              .env     = g_sock_env};
	char                 *why    = side->why;
	size_t                whylen = sizeof(side->why);
	struct sv_bench_stamp st;
	struct daemon         d;
	int64_t               lastgen;
	long                  k;
	pid_t                 pid;
	int                   rv, ret = -1;

	rx_flush();
	if (daemon_start(&d, "d2", &g, why, whylen) != 0)
		return -1;
	if (daemon_wait_ready(&d, 10000, why, whylen) != 0)
		goto stop;
	if ((rv = rx_stamp(&st, now_ns() + 10 * NS_PER_SEC)) != 1) {
		snprintf(why, whylen, "no stamp from the first worker (%s)",
		    rv == -2 ? "daemon exited" : "deadline");
		goto stop;
	}
	pid     = st.pid;
	lastgen = st.generation;
	for (k = -warm; k < o->kills; k++) {
		int64_t t0 = now_ns();

		if (kill(pid, SIGKILL) != 0) {
			snprintf(why, whylen, "kill(%d): %s", (int) pid,
			    strerror(errno));
			goto stop;
		}
		do
			rv = rx_stamp(&st, t0 + 5 * NS_PER_SEC);
		while (rv == 1 && st.pid == pid);
		if (rv != 1) {
			snprintf(why, whylen,
			    "no replacement within 5 s after "
			    "kill %ld (%s)",
			    k + warm + 1,
			    rv == -2      ? "daemon exited"
			        : rv == 0 ? "deadline"
			                  : "interrupted");
			goto stop;
		}
		if (st.ordinal != 0 || st.generation <= lastgen)
			(*anomaliesp)++;
		lastgen = st.generation;
		pid     = st.pid;
		if (k >= 0)
			side->lat[side->n++] = st.t_ns - t0;
	}
	ret = 0;
stop:
	daemon_stop(&d, 10000, NULL);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Run                                                                */
/* ------------------------------------------------------------------ */

/* crash_init allocates the latency arrays; see scenarios.h. */
int
crash_init(const struct opts *o, struct crash_result *res)
{
	memset(res, 0, sizeof(*res));
	res->raw.lat  = calloc((size_t) o->kills, sizeof(int64_t));
	res->ours.lat = calloc((size_t) o->kills, sizeof(int64_t));
	return res->raw.lat != NULL && res->ours.lat != NULL ? 0 : -1;
}

/* crash_free frees the latency arrays. */
void
crash_free(struct crash_result *res)
{
	free(res->raw.lat);
	free(res->ours.lat);
	res->raw.lat  = NULL;
	res->ours.lat = NULL;
}

/* crash_run runs both sides of scenario 2; see scenarios.h. */
int
crash_run(const struct opts *o, struct crash_result *res)
{
	res->warm = o->kills < 50 ? 2 : 5;
	note("2/7 crash to replacement: raw baseline");
	res->raw.ok
	    = !g_interrupted && crash_raw(o, res->warm, &res->raw) == 0;
	note("2/7 crash to replacement: supervised");
	res->ours.ok = !g_interrupted
	    && crash_ours(o, res->warm, &res->ours, &res->anomalies) == 0;
	res->raw.s  = stats_of(res->raw.lat, (size_t) res->raw.n);
	res->ours.s = stats_of(res->ours.lat, (size_t) res->ours.n);
	return res->raw.ok && res->ours.ok ? 0 : -1;
}

/* ------------------------------------------------------------------ */
/* Rows and details                                                   */
/* ------------------------------------------------------------------ */

/* crash_rows writes the median row (the target) and the p99 row. */
int
crash_rows(const struct crash_result *res, struct row *rows)
{
	const struct stats *r = &res->raw.s, *s = &res->ours.s;

	rows[0] = (struct row) {.name = "crash -> replacement median (ms)",
	    .made                     = res->ours.ok,
	    .has_base                 = res->raw.ok,
	    .base                     = r->med / 1e6,
	    .ours                     = s->med / 1e6,
	    .kind                     = T_ABS_LE,
	    .target                   = 2,
	    .tunit                    = "ms"};
	rows[1] = (struct row) {.name = "crash -> replacement p99 (ms)",
	    .made                     = res->ours.ok,
	    .has_base                 = res->raw.ok,
	    .base                     = r->p99 / 1e6,
	    .ours                     = s->p99 / 1e6,
	    .kind                     = T_INFO};
	return 2;
}

/* crash_details prints min/max per side and the identity anomalies. */
void
crash_details(const struct opts *o, const struct crash_result *res)
{
	const struct stats *r = &res->raw.s, *s = &res->ours.s;

	if (res->raw.ok)
		printf(
		    "crash, raw: %ld kills (+%ld warm-up), min/max %.3f/%.3f "
		    "ms\n",
		    o->kills, res->warm, r->min / 1e6, r->max / 1e6);
	if (res->ours.ok)
		printf("crash, supervised: %ld kills (+%ld warm-up), min/max "
		       "%.3f/%.3f ms, %ld identity anomalies (ordinal != 0 or "
		       "generation not increasing)\n",
		    o->kills, res->warm, s->min / 1e6, s->max / 1e6,
		    res->anomalies);
	if ((res->ours.ok || res->raw.ok) && o->kills < 200)
		printf(
		    "crash: fewer than the 200 kills the target asks for\n");
}
