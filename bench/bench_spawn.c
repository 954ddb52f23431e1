/*
 * bench_spawn.c — scenario 3 of sv-bench: spawning N trivial workers, and
 * the daemon's memory with them. Targets: supervised rate >= 0.8 x raw
 * rate; the daemon's VmRSS with the N workers alive <= 16 MiB.
 *
 * Design: a round pairs a raw measurement with a supervised one, and the
 * rounds alternate so that both sides see the same machine conditions.
 * In both, a helper thread starts the N stamp workers while the main
 * thread drains their datagrams (rx_collect), because the datagram
 * queue is short and a worker blocks in sendto until it is drained; that
 * delays the report, never the timestamp the measurement uses.
 *   - raw: the thread posix_spawns N workers back to back. Time = latest
 *     stamp - first spawn. sv-bench then ends and reaps them.
 *   - ours: one daemon for all rounds, its group at count 0 (or 1, stopped
 *     at once, if the daemon refuses 0). The thread calls sv_client_scale
 *     to N. Time = latest stamp - just before the call. Between rounds,
 *     sv_client_stop empties the group and sv-bench waits until the daemon
 *     has reaped every pid; the last round leaves its N workers running so
 *     that the final SIGTERM stop is measured with them alive.
 * Rate = N / the median time over the rounds. VmRSS is read right after
 * the N workers reported, the maximum over rounds kept; the baseline is the
 * same daemon at 0 workers.
 *
 * File layout: /proc reader (fd count); helper threads; stamp collection; raw
 * round; supervised daemon and round; run; rows and details.
 */
#include "scenarios.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <supervise/client.h>

/* ------------------------------------------------------------------ */
/* /proc reader (proc_status_kb is the harness's)                     */
/* ------------------------------------------------------------------ */

/* ------------------------------------------------------------------ */
/* Helper threads                                                     */
/* ------------------------------------------------------------------ */

/* What the raw helper thread does and how it went. */
struct raw_job {
	struct envbuf *env;
	long           n;
	int            err; /* errno of a failed posix_spawn, or 0 */
	int64_t        t_start;
	atomic_bool    failed;
};

/* raw_spawn_thread posix_spawns job->n stamp workers back to back. */
static void *
raw_spawn_thread(void *arg)
{
	struct raw_job *job = arg;
	long            i;

	job->t_start = now_ns();
	for (i = 0; i < job->n && !g_interrupted; i++) {
		pid_t pid;
		int   rv = raw_spawn_stamp(job->env, i, -1, &pid);

		if (rv != 0) {
			job->err = rv;
			atomic_store(&job->failed, true);
			break;
		}
		g_raw[g_nraw++] = pid;
	}
	return NULL;
}

/* What the supervised helper thread does and how it went. */
struct scale_job {
	sv_client  *c;
	uint32_t    n;
	sv_err      err;
	uint32_t    prev;
	int64_t     t_start, t_done;
	char        msg[160];
	atomic_bool failed;
};

/* scale_thread calls sv_client_scale while the main thread drains. */
static void *
scale_thread(void *arg)
{
	struct scale_job *job = arg;

	job->t_start = now_ns();
	job->err = sv_client_scale(job->c, "spawn", job->n, 60000, &job->prev);
	job->t_done = now_ns();
	if (job->err != SV_OK) {
		snprintf(job->msg, sizeof(job->msg), "%s",
		    sv_client_error_message(job->c));
		atomic_store(&job->failed, true);
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Stamp collection                                                   */
/* ------------------------------------------------------------------ */

/*
 * start_and_collect runs fn(job) on a helper thread that starts n workers,
 * collects their stamps meanwhile (deadline: 30 s + 20 ms per worker) and
 * joins the thread. seen[] and pids[] are cleared first. Returns how many
 * workers reported, with the latest stamp in *tmaxp, or -1 when the thread
 * could not be created (why set).
 */
static long
start_and_collect(void *(*fn)(void *), void *job, atomic_bool *failed, long n,
    unsigned char *seen, pid_t *pids, int64_t *tmaxp, char *why, size_t whylen)
{
	struct stamp_set set = {.seen = seen, .pids = pids, .size = n};
	int64_t          deadline;
	pthread_t        th;
	long             got;

	memset(seen, 0, (size_t) n);
	memset(pids, 0, sizeof(pid_t) * (size_t) n);
	*tmaxp = 0;
	rx_flush();
	if (pthread_create(&th, NULL, fn, job) != 0) {
		snprintf(why, whylen, "pthread_create failed");
		return -1;
	}
	deadline = now_ns() + 30 * NS_PER_SEC + n * 20 * NS_PER_MS;
	got      = rx_collect(&set, n, deadline, tmaxp, failed);
	pthread_join(th, NULL);
	return got;
}

/* ------------------------------------------------------------------ */
/* Raw round                                                          */
/* ------------------------------------------------------------------ */

/* State of the daemon kept across the rounds, and the round's stamps. */
struct spawn_ctx {
	struct daemon  d;
	bool           started;
	sv_client     *c;
	unsigned char *seen; /* ordinals reported this round */
	pid_t         *pids; /* pid of each ordinal this round */
};

/*
 * spawn_raw_round times one raw posix_spawn loop of N stamp workers, then
 * ends them. Returns 0 with *nsp, or -1 with why.
 */
static int
spawn_raw_round(const struct opts *o, struct spawn_ctx *x, int64_t *nsp,
    char *why, size_t whylen)
{
	struct raw_job job;
	struct envbuf  e;
	int64_t        tmax;
	long           got;
	int            ret = -1;

	memset(&job, 0, sizeof(job));
	if (envbuf_init(&e) != 0) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	job.env = &e;
	job.n   = o->workers;
	atomic_init(&job.failed, false);
	g_nraw = 0;
	got    = start_and_collect(raw_spawn_thread, &job, &job.failed,
	       o->workers, x->seen, x->pids, &tmax, why, whylen);
	if (got < 0)
		goto out;
	if (job.err != 0) {
		snprintf(why, whylen,
		    "posix_spawn failed after %zu workers: %s", g_nraw,
		    strerror(job.err));
		goto out;
	}
	if (got < o->workers) {
		snprintf(why, whylen, "only %ld of %ld raw workers reported",
		    got, o->workers);
		goto out;
	}
	*nsp = tmax - job.t_start;
	ret  = 0;
out:
	raw_reap_all(10000);
	envbuf_free(&e);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Supervised daemon and round                                        */
/* ------------------------------------------------------------------ */

/*
 * stop_group stops every worker of the group (sv_client_stop) and waits
 * until the daemon has reaped the first n pids of x->pids. Returns 0 or -1.
 */
static int
stop_group(struct spawn_ctx *x, long n, char *why, size_t whylen)
{
	sv_err err = sv_client_stop(x->c, "spawn", 60000, NULL);

	if (err != SV_OK) {
		snprintf(why, whylen, "sv_client_stop(spawn): %s: %s",
		    sv_strerror(err), sv_client_error_message(x->c));
		return -1;
	}
	if (daemon_wait_gone(x->pids, n, now_ns() + 30 * NS_PER_SEC) >= 0) {
		snprintf(why, whylen,
		    "workers still there 30 s after "
		    "sv_client_stop");
		return -1;
	}
	return 0;
}

/*
 * ours_start starts the daemon with the group at count 0 (or at 1 if it
 * refuses 0, then stops that worker), connects, and reads the idle RSS.
 * Returns 0 or -1 with why.
 */
static int
ours_start(const struct opts *o, struct spawn_ctx *x, struct spawn_result *res,
    char *why, size_t whylen)
{
	const char           *argv[] = {SV_BENCH_STAMP_PATH, NULL};
	struct group_cfg      g      = {.name = "spawn",
	              .argv                   = argv,
	              .count                  = 0,
	              .min_uptime_ms          = -1,
	              .purpose                = "sv-bench spawn-rate worker",
	              .env                    = g_sock_env};
	struct sv_bench_stamp st;
	sv_err                err;
	int                   rv;

	g.max_count = o->workers > 1024 ? o->workers : 0;
	rx_flush();
	if (daemon_start(&x->d, "d3", &g, why, whylen) != 0)
		return -1;
	x->started = true;
	rv         = daemon_wait_ready(&x->d, 10000, why, whylen);
	if (rv == -2) {
		/* The daemon may refuse count = 0: start at 1 instead. */
		note("supervised refused count = 0 (see %s); retrying with "
		     "count = 1",
		    x->d.log);
		g.count = 1;
		if (daemon_start(&x->d, "d3b", &g, why, whylen) != 0) {
			x->started = false;
			return -1;
		}
		rv = daemon_wait_ready(&x->d, 10000, why, whylen);
	}
	if (rv != 0)
		return -1;
	res->initial = g.count;
	if ((err = sv_client_open(&x->c, x->d.url, RPC_TIMEOUT_MS)) != SV_OK) {
		snprintf(why, whylen, "sv_client_open(%.150s): %s", x->d.url,
		    sv_strerror(err));
		return -1;
	}
	if (g.count == 1) {
		do
			rv = rx_stamp(&st, now_ns() + 10 * NS_PER_SEC);
		while (rv == 1 && st.ordinal != 0);
		if (rv != 1) {
			snprintf(why, whylen, "no stamp from ordinal 0");
			return -1;
		}
		memset(x->pids, 0, sizeof(pid_t) * (size_t) o->workers);
		x->pids[0] = st.pid;
		if (stop_group(x, 1, why, whylen) != 0)
			return -1;
	}
	/* Let the daemon settle, then read its idle RSS. */
	sleep_ms(100);
	res->rss_idle_kb = proc_status_kb(g_daemon_pid, "VmRSS");
	return 0;
}

/*
 * ours_round scales the group from 0 to N and times until N distinct
 * workers reported; reads the daemon's RSS (keeping the maximum over
 * rounds); unless last, stops the group again. Returns 0 or -1 with why.
 */
static int
ours_round(const struct opts *o, struct spawn_ctx *x, struct spawn_result *res,
    long round, bool last, char *why, size_t whylen)
{
	struct scale_job job;
	int64_t          tmax;
	long             got, kb;

	memset(&job, 0, sizeof(job));
	atomic_init(&job.failed, false);
	job.c = x->c;
	job.n = (uint32_t) o->workers;
	got   = start_and_collect(scale_thread, &job, &job.failed, o->workers,
	      x->seen, x->pids, &tmax, why, whylen);
	if (got < 0)
		return -1;
	if (job.err != SV_OK) {
		snprintf(why, whylen, "sv_client_scale(spawn, %ld): %s: %s",
		    o->workers, sv_strerror(job.err), job.msg);
		return -1;
	}
	if (got < o->workers) {
		snprintf(why, whylen,
		    "only %ld of %ld workers reported after "
		    "scale (daemon %s)",
		    got, o->workers, daemon_alive() ? "alive" : "exited");
		return -1;
	}
	res->ours_ns[round]  = tmax - job.t_start;
	res->scale_ns[round] = job.t_done - job.t_start;
	if ((kb = proc_status_kb(g_daemon_pid, "VmRSS")) < 0) {
		snprintf(why, whylen, "cannot read /proc/%d/status",
		    (int) g_daemon_pid);
		return -1;
	}
	if (kb > res->rss_kb)
		res->rss_kb = kb;
	res->hwm_kb  = proc_status_kb(g_daemon_pid, "VmHWM");
	res->threads = proc_status_kb(g_daemon_pid, "Threads");
	res->fds     = sv_proc_fd_count(g_daemon_pid);
	if (!last)
		return stop_group(x, o->workers, why, whylen);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Run                                                                */
/* ------------------------------------------------------------------ */

/* median_ns returns the median of v[0..n) without reordering v. */
static int64_t
median_ns(const int64_t v[SPAWN_MAX_ROUNDS], long n)
{
	int64_t tmp[SPAWN_MAX_ROUNDS];

	memcpy(tmp, v, sizeof(tmp));
	return stats_of(tmp, (size_t) n).med;
}

/* spawn_rounds runs the alternating rounds; 0, or -1 with a reason. */
static int
spawn_rounds(
    const struct opts *o, struct spawn_ctx *x, struct spawn_result *res)
{
	const size_t whylen = sizeof(res->why);
	long         r;

	for (r = 0; r < o->rounds; r++) {
		note("3/7 round %ld/%ld: raw posix_spawn loop of %ld", r + 1,
		    o->rounds, o->workers);
		if (spawn_raw_round(
		        o, x, &res->raw_ns[r], res->why_raw, whylen)
		    != 0)
			return -1;
		if (r == 0 && ours_start(o, x, res, res->why, whylen) != 0)
			return -1;
		note("3/7 round %ld/%ld: supervised scale 0 -> %ld", r + 1,
		    o->rounds, o->workers);
		if (ours_round(
		        o, x, res, r, r + 1 == o->rounds, res->why, whylen)
		    != 0)
			return -1;
		res->rounds = r + 1;
	}
	return 0;
}

/* spawn_run runs scenario 3; see scenarios.h. */
int
spawn_run(const struct opts *o, struct spawn_result *res)
{
	struct spawn_ctx x;
	int              ret = -1;

	memset(res, 0, sizeof(*res));
	if (g_interrupted)
		return -1;
	memset(&x, 0, sizeof(x));
	x.seen = calloc((size_t) o->workers, 1);
	x.pids = calloc((size_t) o->workers, sizeof(pid_t));
	if (x.seen == NULL || x.pids == NULL)
		snprintf(res->why, sizeof(res->why), "out of memory");
	else
		ret = spawn_rounds(o, &x, res);
	sv_client_close(x.c);
	if (x.started)
		daemon_stop(&x.d, 30000, &res->stop_ns);
	free(x.seen);
	free(x.pids);
	res->ok          = ret == 0;
	res->raw_med_ns  = median_ns(res->raw_ns, res->rounds);
	res->ours_med_ns = median_ns(res->ours_ns, res->rounds);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Rows and details                                                   */
/* ------------------------------------------------------------------ */

/* spawn_rows writes the rate row and the VmRSS row. */
int
spawn_rows(
    const struct opts *o, const struct spawn_result *res, struct row *rows)
{
	rows[0] = (struct row) {.name = "spawn N workers, rate (workers/s)",
	    .made                     = res->ok,
	    .has_base                 = res->ok,
	    .base
	    = res->raw_med_ns > 0 ? o->workers * 1e9 / res->raw_med_ns : 0,
	    .ours
	    = res->ours_med_ns > 0 ? o->workers * 1e9 / res->ours_med_ns : 0,
	    .kind   = T_RATIO_GE,
	    .target = 0.8};
	rows[1] = (struct row) {.name = "supervisor VmRSS, N workers (MiB)",
	    .made                     = res->ok,
	    .has_base                 = res->rss_idle_kb > 0,
	    .base                     = res->rss_idle_kb / 1024.0,
	    .ours                     = res->rss_kb / 1024.0,
	    .kind                     = T_ABS_LE,
	    .target                   = 16,
	    .tunit                    = "MiB",
	    .rec_ours                 = true};
	return 2;
}

/* spawn_details prints every completed round, then the daemon's figures. */
void
spawn_details(const struct opts *o, const struct spawn_result *res)
{
	long i;

	for (i = 0; i < res->rounds; i++)
		printf("spawn round %ld: %ld workers, raw %.1f ms (%.0f/s), "
		       "supervised %.1f ms (%.0f/s, scale call returned after "
		       "%.1f "
		       "ms), ratio %.2f\n",
		    i + 1, o->workers, res->raw_ns[i] / 1e6,
		    o->workers * 1e9 / res->raw_ns[i], res->ours_ns[i] / 1e6,
		    o->workers * 1e9 / res->ours_ns[i], res->scale_ns[i] / 1e6,
		    (double) res->raw_ns[i] / (double) res->ours_ns[i]);
	if (res->ok)
		printf(
		    "spawn: rates are N / median time (raw: first spawn to "
		    "last worker's stamp; supervised: scale call to last "
		    "stamp);"
		    " group started at count %ld; daemon VmRSS idle %.1f MiB, "
		    "max with %ld workers %.1f MiB, VmHWM %.1f MiB, %ld "
		    "threads,"
		    " %ld fds; SIGTERM to exit with %ld workers %.1f ms\n",
		    res->initial, res->rss_idle_kb / 1024.0, o->workers,
		    res->rss_kb / 1024.0, res->hwm_kb / 1024.0, res->threads,
		    res->fds, o->workers, res->stop_ns / 1e6);
}
