/*
 * bench_drain.c — measurement 9 of sv-bench (issue 7): how long a drain of
 * N idle workers takes against its deadline, and the latency of the drain
 * notice from the C client's drain call to the worker.
 *
 * Design. One daemon with three groups:
 *   - "notice": DRAIN_WAVE workers running "sv-bench-drain listen"
 *     (drain_worker.c). Each subscribes to its own topic, proves the
 *     subscription live and reports ready. sv-bench then drains them one
 *     at a time (sv_client_drain(group, ordinal)): latency = the worker's
 *     CLOCK_MONOTONIC when the "drain" event arrived − sv-bench's clock
 *     just before the drain call (same machine, same clock). A drained
 *     ordinal is released, so after a wave sv-bench scales the group back
 *     to DRAIN_WAVE and the next generation reports ready. Waves run until
 *     the wanted number of notices is measured.
 *   - "coop": idle sv-bench-stamp workers, which end on the drain signal
 *     (SIGTERM, the default stop signal).
 *   - "deaf": idle "sv-bench-drain ignore" workers, which block SIGTERM
 *     and are SIGKILLed at the drain deadline.
 *   Each idle group is scaled from 0 to N (o->workers, by default 1,000;
 *   every worker's stamp awaited), then drained as a whole with deadline
 *   DRAIN_DEADLINE_MS; sv-bench follows the report with GetDrain every
 *   DRAIN_POLL_MS until it is done (every row reaped). The figure is the
 *   time from the drain call to the first report seen done, so it
 *   includes up to one poll interval and one GetDrain round trip of
 *   slack; the report's largest time_to_exit_ms (notice to reap, the
 *   daemon's clock) is printed beside it.
 * No raw baseline exists for a drain; the deadline is the reference, and
 * the drain call's own duration is printed beside the notice latency.
 *
 * Processes are started only through the harness (harness_daemon.c: the
 * daemon); the daemon starts the workers and sv-bench stops it with SIGTERM at
 * the end.
 */
#include "scenarios.h"

#include "drain_wire.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <supervise/client.h>

#define DRAIN_WAVE         10 /* listening workers per wave */
#define DRAIN_DEADLINE_MS  1000 /* the idle drains' deadline */
#define DRAIN_POLL_MS      5 /* GetDrain interval while waiting */
#define DRAIN_NOTICE_DL_MS 5000 /* the listening workers' drain deadline */

/* ------------------------------------------------------------------ */
/* Reports from the workers                                           */
/* ------------------------------------------------------------------ */

/*
 * dr_note waits until deadline for a drain datagram of kind (from pid,
 * or any pid for 0), ignoring every other datagram. Returns 1 with *n
 * filled, 0 at the deadline, -1 on error or interruption, -2 when the
 * daemon exited.
 */
static int
dr_note(
    uint32_t kind, pid_t pid, struct sv_bench_drain_note *n, int64_t deadline)
{
	union {
		struct sv_bench_drain_note n;
		struct sv_bench_rtt        big; /* the largest datagram */
	} u;

	for (;;) {
		ssize_t len = rx_recv(&u, sizeof(u), slice_deadline(deadline));

		if (len < 0)
			return -1;
		if (len == (ssize_t) sizeof(u.n)
		    && u.n.magic == SV_BENCH_MAGIC_DRAIN && u.n.kind == kind
		    && (pid == 0 || u.n.pid == pid)) {
			*n = u.n;
			return 1;
		}
		if (len > 0)
			continue;
		if (!daemon_alive())
			return -2;
		if (now_ns() >= deadline)
			return 0;
	}
}

/*
 * dr_stamps waits until deadline for n stamps (any pid). Returns 0, or -1
 * with why set.
 */
static int
dr_stamps(long n, int64_t deadline, char *why, size_t whylen)
{
	struct sv_bench_stamp st;
	long                  got = 0;

	while (got < n) {
		int rv = rx_stamp(&st, deadline);

		if (rv == 1) {
			got++;
			continue;
		}
		snprintf(why, whylen, "%ld of %ld workers stamped (%s)", got,
		    n,
		    rv == 0        ? "deadline"
		        : rv == -2 ? "daemon exited"
		                   : "interrupted");
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Notice latency                                                     */
/* ------------------------------------------------------------------ */

/*
 * dr_wave waits for DRAIN_WAVE ready reports, then drains each of those
 * workers alone and records its notice latency. Returns 0, or -1 with why.
 */
static int
dr_wave(sv_client *c, long want, struct drain_result *res, char *why,
    size_t whylen)
{
	struct sv_bench_drain_note ready[DRAIN_WAVE], n;
	int64_t                    deadline = now_ns() + 20 * NS_PER_SEC;
	long                       k;
	int                        rv;

	for (k = 0; k < DRAIN_WAVE; k++) {
		if ((rv = dr_note(DRAIN_NOTE_READY, 0, &ready[k], deadline))
		    != 1) {
			snprintf(why, whylen,
			    "%ld of %d listening workers ready (%d)", k,
			    DRAIN_WAVE, rv);
			return -1;
		}
		if (!(ready[k].flags & DRAIN_FLAG_CONFIRMED))
			res->unconfirmed++;
	}
	for (k = 0; k < DRAIN_WAVE && res->n < want; k++) {
		sv_drain_report *r = NULL;
		int64_t          t0, t1;
		sv_err           err;

		t0  = now_ns();
		err = sv_client_drain(c, "notice", ready[k].ordinal,
		    DRAIN_NOTICE_DL_MS, RPC_TIMEOUT_MS, &r);
		t1  = now_ns();
		sv_drain_report_free(r);
		if (err != SV_OK) {
			snprintf(why, whylen, "drain notice/%d: %s: %s",
			    (int) ready[k].ordinal, sv_strerror(err),
			    sv_client_error_message(c));
			return -1;
		}
		if ((rv = dr_note(DRAIN_NOTE_NOTICE, ready[k].pid, &n,
		         t1 + 2 * NS_PER_SEC))
		    != 1) {
			snprintf(why, whylen,
			    "no notice at worker pid %d within 2 s (%d)",
			    (int) ready[k].pid, rv);
			return -1;
		}
		res->lat[res->n] = n.t_ns - t0;
		res->rtt[res->n] = t1 - t0;
		res->n++;
	}
	return 0;
}

/* dr_notices measures want notice latencies, wave by wave. */
static int
dr_notices(sv_client *c, long want, struct drain_result *res, char *why,
    size_t whylen)
{
	sv_err err;

	note("9/9 drain: notice latency, %ld drains of one listening worker",
	    want);
	while (res->n < want) {
		if (dr_wave(c, want, res, why, whylen) != 0)
			return -1;
		if (res->n >= want)
			break;
		/* the drained ordinals were released: start the next ones */
		if ((err = sv_client_scale(
		         c, "notice", DRAIN_WAVE, RPC_TIMEOUT_MS, NULL))
		    != SV_OK) {
			snprintf(why, whylen, "scale notice: %s: %s",
			    sv_strerror(err), sv_client_error_message(c));
			return -1;
		}
	}
	res->s_lat = stats_of(res->lat, (size_t) res->n);
	res->s_rtt = stats_of(res->rtt, (size_t) res->n);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Drain of N idle workers                                            */
/* ------------------------------------------------------------------ */

/*
 * dr_tally fills x's counts and time_to_exit figures from a finished
 * report. Returns 0, or -1 when out of memory.
 */
static int
dr_tally(const sv_drain_report *r, struct drain_idle *x)
{
	size_t       i, n = sv_drain_report_count(r);
	int64_t     *ms = calloc(n + 1, sizeof(*ms));
	struct stats s;

	if (ms == NULL)
		return -1;
	x->workers = (long) n;
	for (i = 0; i < n; i++) {
		ms[i] = (int64_t) sv_drain_report_time_to_exit_ms(r, i);
		x->killed += sv_drain_report_killed(r, i) != 0;
		x->acked += sv_drain_report_acknowledged(r, i) != 0;
		x->reaped += sv_drain_report_is_reaped(r, i) != 0;
		if (sv_drain_report_exited(r, i))
			x->exited++;
		else
			x->signalled++;
	}
	s              = stats_of(ms, n);
	x->min_exit_ms = (long) s.min;
	x->med_exit_ms = (long) s.med;
	x->max_exit_ms = (long) s.max;
	free(ms);
	return 0;
}

/*
 * dr_idle scales group to nworkers, waits for their stamps, drains the
 * group with DRAIN_DEADLINE_MS and follows the report until done. Returns
 * 0, or -1 with why set.
 */
static int
dr_idle(sv_client *c, const char *group, long nworkers, bool deaf,
    struct drain_idle *x, char *why, size_t whylen)
{
	sv_drain_report *r = NULL;
	int64_t          t0, first_poll, deadline;
	uint64_t         id;
	sv_err           err;
	int              rv;

	note("9/9 drain: %ld idle workers (%s), deadline %d ms", nworkers,
	    deaf ? "ignoring the drain" : "exit on the drain signal",
	    DRAIN_DEADLINE_MS);
	x->deadline_ms = DRAIN_DEADLINE_MS;
	rx_flush();
	t0 = now_ns();
	if ((err = sv_client_scale(
	         c, group, (uint32_t) nworkers, RPC_TIMEOUT_MS, NULL))
	    != SV_OK) {
		snprintf(why, whylen, "scale %s: %s: %s", group,
		    sv_strerror(err), sv_client_error_message(c));
		return -1;
	}
	if (dr_stamps(nworkers, t0 + 60 * NS_PER_SEC, why, whylen) != 0)
		return -1;
	x->up_ns = now_ns() - t0;

	t0  = now_ns();
	err = sv_client_drain(
	    c, group, -1, DRAIN_DEADLINE_MS, RPC_TIMEOUT_MS, &r);
	x->call_ns = now_ns() - t0;
	if (err != SV_OK) {
		snprintf(why, whylen, "drain %s: %s: %s", group,
		    sv_strerror(err), sv_client_error_message(c));
		return -1;
	}
	id = sv_drain_report_id(r);
	sv_drain_report_free(r);
	/* ignoring workers cannot be done before the deadline: poll from
	 * just before it, so the polls do not load the daemon meanwhile */
	first_poll = deaf ? t0 + (DRAIN_DEADLINE_MS - 20) * NS_PER_MS : t0;
	deadline   = t0 + (DRAIN_DEADLINE_MS + 10000) * NS_PER_MS;
	while (now_ns() < first_poll && !g_interrupted)
		sleep_ms(1);
	for (;;) {
		r = NULL;
		if ((err = sv_client_drain_report(c, id, RPC_TIMEOUT_MS, &r))
		    != SV_OK) {
			snprintf(why, whylen, "GetDrain %llu: %s: %s",
			    (unsigned long long) id, sv_strerror(err),
			    sv_client_error_message(c));
			return -1;
		}
		x->polls++;
		if (sv_drain_report_done(r)) {
			x->done_ns = now_ns() - t0;
			rv         = dr_tally(r, x);
			sv_drain_report_free(r);
			if (rv != 0) {
				snprintf(why, whylen, "out of memory");
				return -1;
			}
			break;
		}
		sv_drain_report_free(r);
		if (now_ns() >= deadline || g_interrupted) {
			snprintf(why, whylen,
			    "drain of %s not done %d ms after"
			    " its deadline",
			    group, 10000);
			return -1;
		}
		sleep_ms(DRAIN_POLL_MS);
	}
	if (x->workers != nworkers || x->reaped != nworkers) {
		snprintf(why, whylen,
		    "drain of %s: %ld rows, %ld reaped, %ld workers", group,
		    x->workers, x->reaped, nworkers);
		return -1;
	}
	x->ok = true;
	return 0;
}

/*
 * dr_raw_spawn starts one "sv-bench-drain ignore", the program of the deaf
 * group (the same binary, so its exit costs the kernel the same), with
 * environment e announcing ordinal ord. Returns 0 or an errno value.
 */
static int
dr_raw_spawn(struct envbuf *e, long ord, pid_t *pidp)
{
	char *argv[] = {"sv-bench-drain", "ignore", NULL};

	snprintf(e->ord, sizeof(e->ord), "SUPERVISE_ORDINAL=%ld", ord);
	snprintf(e->gen, sizeof(e->gen), "SUPERVISE_GENERATION=1");
	return spawn_proc(
	    SV_BENCH_DRAIN_PATH, argv, e->envp, NULL, false, pidp);
}

/*
 * dr_raw is the floor of the deadline kill: sv-bench starts nworkers idle
 * workers of the deaf group's program itself, waits for their stamps,
 * then times SIGKILL to every one and reaping them all. Returns 0, or -1
 * with why set.
 */
static int
dr_raw(long nworkers, struct drain_result *res, char *why, size_t whylen)
{
	struct envbuf e;
	int64_t       t0;
	size_t        i;
	int           rv;

	note("9/9 drain: raw SIGKILL + reap of %ld idle workers", nworkers);
	if (envbuf_init(&e) != 0) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	rx_flush();
	for (i = 0; i < (size_t) nworkers; i++) {
		pid_t pid;

		if ((rv = dr_raw_spawn(&e, (long) i, &pid)) != 0) {
			snprintf(why, whylen, "raw spawn: %s", strerror(rv));
			break;
		}
		g_raw[g_nraw++] = pid;
	}
	envbuf_free(&e);
	if (g_nraw < (size_t) nworkers
	    || dr_stamps(nworkers, now_ns() + 60 * NS_PER_SEC, why, whylen)
	        != 0) {
		raw_reap_all(2000);
		return -1;
	}
	t0 = now_ns();
	for (i = 0; i < g_nraw; i++)
		kill(g_raw[i], SIGKILL);
	/* SIGKILLed children die without running code: the waits end */
	for (i = 0; i < g_nraw; i++)
		while (waitpid(g_raw[i], NULL, 0) < 0 && errno == EINTR)
			;
	res->raw_kill_ns = now_ns() - t0;
	res->raw_ok      = true;
	g_nraw           = 0;
	return 0;
}

/* drain_run runs scenario 9; see scenarios.h. */
int
drain_run(const struct opts *o, struct drain_result *res)
{
	const char      *largv[] = {SV_BENCH_DRAIN_PATH, "listen", NULL};
	const char      *cargv[] = {SV_BENCH_STAMP_PATH, NULL};
	const char      *dargv[] = {SV_BENCH_DRAIN_PATH, "ignore", NULL};
	long             max     = o->workers > 1024 ? o->workers : 0;
	struct group_cfg g[3]    = {
	       {.name             = "notice",
	           .argv          = largv,
	           .count         = DRAIN_WAVE,
	           .min_uptime_ms = -1,
	           .purpose       = "sv-bench drain notice listener",
	           .env           = g_sock_env},
	       {.name             = "coop",
	           .argv          = cargv,
	           .count         = 0,
	           .max_count     = max,
	           .min_uptime_ms = -1,
	           .purpose       = "sv-bench idle worker (exits on drain)",
	           .env           = g_sock_env},
	       {.name             = "deaf",
	           .argv          = dargv,
	           .count         = 0,
	           .max_count     = max,
	           .min_uptime_ms = -1,
	           .purpose       = "sv-bench idle worker (ignores drain)",
	           .env           = g_sock_env},
        };
	char         *why    = res->why;
	size_t        whylen = sizeof(res->why);
	long          want   = o->quick ? 20 : 200;
	struct daemon d;
	sv_client    *c = NULL;
	sv_err        err;
	int           ret = -1;

	memset(res, 0, sizeof(*res));
	rx_flush();
	if (daemon_start_groups(&d, "d9", g, 3, why, whylen) != 0)
		return -1;
	if (daemon_wait_ready(&d, 10000, why, whylen) != 0)
		goto stop;
	if ((err = sv_client_open(&c, d.url, RPC_TIMEOUT_MS)) != SV_OK) {
		snprintf(why, whylen, "sv_client_open: %s", sv_strerror(err));
		goto stop;
	}
	if (dr_notices(c, want, res, why, whylen) != 0)
		goto stop;
	if (dr_idle(
	        c, "coop", o->workers, false, &res->cooperative, why, whylen)
	        != 0
	    || dr_idle(
	           c, "deaf", o->workers, true, &res->ignoring, why, whylen)
	        != 0)
		goto stop;
	ret = 0;
stop:
	sv_client_close(c);
	daemon_stop(&d, 10000, NULL);
	if (ret == 0 && !g_interrupted
	    && dr_raw(o->workers, res, why, whylen) != 0)
		ret = -1;
	res->ok = ret == 0;
	return ret;
}

/* ------------------------------------------------------------------ */
/* Rows and details                                                   */
/* ------------------------------------------------------------------ */

/*
 * drain_rows: the idle drain of cooperative workers against deadline + 50
 * ms (the ignoring one for information: its target is the next to last
 * row); the notice; the raw floor; the ignoring workers' overrun of the
 * deadline against twice that floor.
 */
int
drain_rows(const struct drain_result *res, struct row *rows)
{
	const struct drain_idle *x[2] = {&res->cooperative, &res->ignoring};
	static const char *names[2]   = {"drain N idle, exit on signal (ms)",
	      "drain N idle, ignoring it (ms)"};
	int                i;

	for (i = 0; i < 2; i++)
		rows[i] = (struct row) {.name = names[i],
		    .made                     = x[i]->ok,
		    .has_base                 = x[i]->ok,
		    .base                     = (double) DRAIN_DEADLINE_MS,
		    .ours                     = x[i]->done_ns / 1e6,
		    .kind                     = i == 0 ? T_ABS_LE : T_INFO,
		    .target                   = DRAIN_DEADLINE_MS + 50,
		    .tunit                    = "ms"};
	rows[2] = (struct row) {.name = "drain notice latency median (ms)",
	    .made                     = res->n > 0,
	    .ours                     = res->s_lat.med / 1e6,
	    .kind                     = T_ABS_LE,
	    .target                   = 10,
	    .tunit                    = "ms"};
	rows[3] = (struct row) {.name = "drain notice latency p99 (ms)",
	    .made                     = res->n > 0,
	    .ours                     = res->s_lat.p99 / 1e6,
	    .kind                     = T_ABS_LE,
	    .target                   = 10,
	    .tunit                    = "ms"};
	rows[4] = (struct row) {.name = "raw SIGKILL + reap N idle (ms)",
	    .made                     = res->raw_ok,
	    .ours                     = res->raw_kill_ns / 1e6,
	    .kind                     = T_INFO};
	/* the deadline kill against the kernel's own floor for the same
	 * program: last reap (daemon's clock) - deadline, at most twice the
	 * raw kill + reap of as many processes (issue 20) */
	rows[5] = (struct row) {.name = "ignoring: last reap - deadline (ms)",
	    .made                     = res->ignoring.ok && res->raw_ok,
	    .has_base                 = res->raw_ok,
	    .base                     = res->raw_kill_ns / 1e6,
	    .ours
	    = (double) (res->ignoring.max_exit_ms - res->ignoring.deadline_ms),
	    .kind   = T_RATIO_LE,
	    .target = 2.0};
	for (i = 2; i < 4; i++)
		snprintf(rows[i].ours_text, sizeof(rows[i].ours_text), "%.2f",
		    rows[i].ours);
	return 6;
}

/* drain_details prints each idle drain's report and the notice figures. */
void
drain_details(const struct drain_result *res)
{
	const struct drain_idle *x[2]    = {&res->cooperative, &res->ignoring};
	static const char       *what[2] = {"exit on signal", "ignoring it"};
	int                      i;

	for (i = 0; i < 2; i++)
		if (x[i]->ok)
			printf("drain, %s: %ld workers up in %.0f ms; drain "
			       "call %.1f ms; done seen %.1f ms after the call"
			       " (deadline %ld ms; GetDrain every %d ms, %ld "
			       "polls); report: time_to_exit min %ld, "
			       "median %ld, max %ld ms, "
			       "%ld killed, %ld exited, %ld by signal, %ld "
			       "acknowledged\n",
			    what[i], x[i]->workers, x[i]->up_ns / 1e6,
			    x[i]->call_ns / 1e6, x[i]->done_ns / 1e6,
			    x[i]->deadline_ms, DRAIN_POLL_MS, x[i]->polls,
			    x[i]->min_exit_ms, x[i]->med_exit_ms,
			    x[i]->max_exit_ms, x[i]->killed, x[i]->exited,
			    x[i]->signalled, x[i]->acked);
	if (res->n > 0)
		printf("drain notice: %ld drains of one listening worker "
		       "(waves of %d); drain call to the worker's receipt "
		       "median %.2f ms, p99 %.2f, min %.2f, max %.2f; the "
		       "drain call itself median %.2f ms, p99 %.2f; %ld "
		       "workers could not confirm their subscription\n",
		    res->n, DRAIN_WAVE, res->s_lat.med / 1e6,
		    res->s_lat.p99 / 1e6, res->s_lat.min / 1e6,
		    res->s_lat.max / 1e6, res->s_rtt.med / 1e6,
		    res->s_rtt.p99 / 1e6, res->unconfirmed);
}
