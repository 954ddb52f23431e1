/*
 * bench_evsubs.c — scenario `evsubs` of sv-bench: restart latency with
 * many event subscribers, and with one that connects and disconnects in a
 * loop. Targets: the median kill-to-replacement latency (a) with 1,000
 * subscribers attached and (b) with the churning subscriber is at most
 * 1.10 x the median without them, in the same run; and neither leaves the
 * daemon with more descriptors or memory than before (reported: fd count
 * and VmRSS before and after each part).
 *
 * Design: one daemon with one group, "victim", a stamp worker
 * (min_uptime_ms 0) whose restart latency is measured as in the crash
 * scenario (kill, then the replacement's own CLOCK_MONOTONIC stamp from
 * main). Each part alternates blocks: K kills without, then K kills
 * with, B times, so both sides see the same machine.
 *   (a) "with" = EVSUBS_N raw connections to the event socket, each of
 *       which completed the SP SUB handshake (evsub_raw_attach), read by a
 *       thread of sv-bench through one epoll set (so they keep up, as
 *       real subscribers do, and the daemon writes every event to each of
 *       them). A subscriber that got at least one byte past the handshake
 *       is counted as heard. They are attached before and closed after
 *       each "with" block.
 *   (b) "with" = a thread that connects, completes the handshake and
 *       closes, as fast as it can, for the whole block.
 * The event socket has no bound per uid (daemon/events.c: EV_SUBS_MAX,
 * 4,096 subscribers in all, from anyone); the control socket's admission
 * limits (daemon/conn_admit.h) do not apply to it. sv-bench raises its
 * own RLIMIT_NOFILE to the hard limit, and the daemon inherits it, so
 * 1,000 connections fit on both sides when the hard limit is above about
 * 1,100; the limit is printed under the table.
 * The daemon's open descriptors (/proc/PID/fd) and VmRSS are read before
 * each part and after it, once the last subscriber was closed and the
 * daemon had EVSUBS_SETTLE_MS to free it.
 *
 * File layout: descriptors and kills; the readers' and churn threads;
 * parts; run; rows and details.
 */
#include "scenarios_limits.h"

#include "evsub.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <supervise/client.h>

/* After the last subscriber closed, before the daemon is read, ms. */
#define EVSUBS_SETTLE_MS 200

/* ------------------------------------------------------------------ */
/* Descriptors and kills                                              */
/* ------------------------------------------------------------------ */

/*
 * daemon_cpu_ns reads the CPU time of the daemon's main thread (its loop:
 * the first field of /proc/PID/schedstat, ns); 0 when unreadable.
 */
static int64_t
daemon_cpu_ns(void)
{
	char      path[64];
	long long ns = 0;
	FILE     *f;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int) g_daemon_pid);
	if (g_daemon_pid <= 0 || (f = fopen(path, "r")) == NULL)
		return 0;
	if (fscanf(f, "%lld", &ns) != 1)
		ns = 0;
	fclose(f);
	return (int64_t) ns;
}

/*
 * kills kills the victim (*pidp, updated) k times, each time waiting up to
 * 5 s for its replacement's stamp, and appends the latencies to
 * out[*np..] (out NULL: a warm-up), adding the daemon's CPU time over
 * them to *cpup (if not NULL). Returns 0, or -1 with why.
 */
static int
kills(pid_t *pidp, long k, int64_t *out, long *np, int64_t *cpup, char *why,
    size_t whylen)
{
	int64_t cpu0 = daemon_cpu_ns();

	if (kill_block(pidp, k, INT64_MAX, NULL, out, np, why, whylen) != 0)
		return -1;
	if (cpup != NULL)
		*cpup += daemon_cpu_ns() - cpu0;
	return 0;
}

/* ------------------------------------------------------------------ */
/* The readers' and churn threads                                     */
/* ------------------------------------------------------------------ */

/* What a helper thread shares with the main thread. */
struct helper {
	pthread_t   tid;
	atomic_bool stop;
	const char *evsock; /* churn: the event socket */
	int        *fds; /* readers: the subscribers (EVSUBS_N) */
	long       *bytes; /* readers: bytes each got past the handshake */
	long        nfds;
	int         ep; /* readers: their epoll set */
	long        cycles, fail; /* churn: written by the thread only */
};

/* readers_main reads every subscriber that has data until told to stop. */
static void *
readers_main(void *arg)
{
	struct helper     *h = arg;
	struct epoll_event evs[64];
	static char        buf[65536];
	int                n, i;

	while (!atomic_load(&h->stop) && !g_interrupted) {
		n = epoll_wait(h->ep, evs, 64, 50);
		for (i = 0; i < n; i++) {
			long    k = (long) evs[i].data.u64;
			ssize_t got;

			while ((got = read(h->fds[k], buf, sizeof(buf))) > 0)
				h->bytes[k] += got;
			if (got == 0 || (got < 0 && errno != EAGAIN))
				(void) epoll_ctl(
				    h->ep, EPOLL_CTL_DEL, h->fds[k], NULL);
		}
	}
	return NULL;
}

/* churn_main connects, completes the handshake and closes, in a loop. */
static void *
churn_main(void *arg)
{
	struct helper *h = arg;
	char           why[256];
	int            fd;

	while (!atomic_load(&h->stop) && !g_interrupted) {
		fd = evsub_raw_attach(
		    h->evsock, now_ns() + NS_PER_SEC, why, sizeof(why));
		if (fd < 0)
			h->fail++;
		else
			close(fd);
		h->cycles++;
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Parts                                                              */
/* ------------------------------------------------------------------ */

/*
 * attach_all attaches EVSUBS_N subscribers to h->fds and starts the
 * readers' thread. Returns how many were attached (all, or -1 with why).
 */
static long
attach_all(const struct daemon *d, struct helper *h, char *why, size_t whylen)
{
	struct epoll_event ev = {.events = EPOLLIN};
	long               i;

	h->nfds = 0;
	atomic_store(&h->stop, false);
	if ((h->ep = epoll_create1(EPOLL_CLOEXEC)) < 0) {
		snprintf(why, whylen, "epoll_create1: %s", strerror(errno));
		return -1;
	}
	for (i = 0; i < EVSUBS_N; i++) {
		int fd = evsub_raw_attach(
		    d->evsock, now_ns() + 5 * NS_PER_SEC, why, whylen);

		if (fd < 0) {
			snprintf(why + strlen(why), whylen - strlen(why),
			    " (subscriber %ld of %d)", i + 1, EVSUBS_N);
			return -1;
		}
		(void) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
		h->fds[i]   = fd;
		h->bytes[i] = 0;
		h->nfds++;
		ev.data.u64 = (uint64_t) i;
		if (epoll_ctl(h->ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
			snprintf(
			    why, whylen, "epoll_ctl: %s", strerror(errno));
			return -1;
		}
	}
	if (pthread_create(&h->tid, NULL, readers_main, h) != 0) {
		snprintf(why, whylen, "cannot start the readers' thread");
		return -1;
	}
	return h->nfds;
}

/*
 * detach_all stops the readers' thread (joined when started is true) and
 * closes every subscriber and the epoll set.
 */
static void
detach_all(struct helper *h, bool started)
{
	long i;

	atomic_store(&h->stop, true);
	if (started)
		pthread_join(h->tid, NULL);
	for (i = 0; i < h->nfds; i++)
		close(h->fds[i]);
	h->nfds = 0;
	if (h->ep >= 0)
		close(h->ep);
	h->ep = -1;
}

/* part_mark reads the daemon's descriptors and VmRSS into *fdsp, *rssp. */
static void
part_mark(long *fdsp, long *rssp)
{
	*fdsp = sv_proc_fd_count(g_daemon_pid);
	*rssp = proc_status_kb(g_daemon_pid, "VmRSS");
}

/*
 * part_many runs part (a) on the started daemon: blocks without and with
 * EVSUBS_N subscribers. Returns 0, or -1 with res->why.
 */
static int
part_many(const struct daemon *d, pid_t *pidp, struct evsubs_result *res)
{
	struct evsubs_part *p      = &res->many;
	char               *why    = res->why;
	size_t              whylen = sizeof(res->why);
	struct helper       h      = {.ep = -1};
	long                b, i, heard;
	int                 ret = -1;

	h.fds   = calloc(EVSUBS_N, sizeof(*h.fds));
	h.bytes = calloc(EVSUBS_N, sizeof(*h.bytes));
	if (h.fds == NULL || h.bytes == NULL) {
		snprintf(why, whylen, "out of memory");
		goto out;
	}
	part_mark(&p->fds_before, &p->rss_before_kb);
	for (b = 0; b < p->blocks && !g_interrupted; b++) {
		note("evsubs (a) block %ld/%ld: %ld kills without, %d "
		     "subscribers, %ld kills with",
		    b + 1, p->blocks, p->kills, EVSUBS_N, p->kills);
		if (kills(pidp, p->kills, p->without, &p->n_without,
		        &p->cpu_without_ns, why, whylen)
		    != 0)
			goto out;
		if (attach_all(d, &h, why, whylen) < 0) {
			detach_all(&h, false);
			goto out;
		}
		if (h.nfds > res->attached)
			res->attached = h.nfds;
		if (sv_proc_fd_count(g_daemon_pid) > p->fds_peak)
			p->fds_peak = sv_proc_fd_count(g_daemon_pid);
		if (kills(pidp, p->kills, p->with, &p->n_with, &p->cpu_with_ns,
		        why, whylen)
		    != 0) {
			detach_all(&h, true);
			goto out;
		}
		if (res->rss_attached_kb == 0)
			res->rss_attached_kb
			    = proc_status_kb(g_daemon_pid, "VmRSS");
		atomic_store(&h.stop, true);
		pthread_join(h.tid, NULL);
		for (i = 0, heard = 0; i < h.nfds; i++)
			heard += h.bytes[i] > 0;
		if (b == 0 || heard < res->heard)
			res->heard = heard;
		detach_all(&h, false);
	}
	sleep_ms(EVSUBS_SETTLE_MS);
	part_mark(&p->fds_after, &p->rss_after_kb);
	ret = g_interrupted ? -1 : 0;
	if (ret != 0)
		snprintf(why, whylen, "interrupted");
out:
	free(h.fds);
	free(h.bytes);
	return ret;
}

/*
 * part_churn runs part (b) on the started daemon: blocks without and with
 * the churning subscriber. Returns 0, or -1 with res->why.
 */
static int
part_churn(const struct daemon *d, pid_t *pidp, struct evsubs_result *res)
{
	struct evsubs_part *p      = &res->churn;
	char               *why    = res->why;
	size_t              whylen = sizeof(res->why);
	long                b, fds;
	int64_t             t0;

	part_mark(&p->fds_before, &p->rss_before_kb);
	for (b = 0; b < p->blocks && !g_interrupted; b++) {
		struct helper h = {.evsock = d->evsock, .ep = -1};
		int           rv;

		note("evsubs (b) block %ld/%ld: %ld kills without, %ld with a "
		     "subscriber connecting in a loop",
		    b + 1, p->blocks, p->kills, p->kills);
		if (kills(pidp, p->kills, p->without, &p->n_without,
		        &p->cpu_without_ns, why, whylen)
		    != 0)
			return -1;
		atomic_store(&h.stop, false);
		if (pthread_create(&h.tid, NULL, churn_main, &h) != 0) {
			snprintf(why, whylen, "cannot start the churn thread");
			return -1;
		}
		t0 = now_ns();
		rv = kills(pidp, p->kills, p->with, &p->n_with,
		    &p->cpu_with_ns, why, whylen);
		if ((fds = sv_proc_fd_count(g_daemon_pid)) > p->fds_peak)
			p->fds_peak = fds;
		atomic_store(&h.stop, true);
		pthread_join(h.tid, NULL);
		res->churn_ns += now_ns() - t0;
		res->cycles += h.cycles;
		res->churn_fail += h.fail;
		if (rv != 0)
			return -1;
	}
	sleep_ms(EVSUBS_SETTLE_MS);
	part_mark(&p->fds_after, &p->rss_after_kb);
	if (g_interrupted) {
		snprintf(why, whylen, "interrupted");
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Run                                                                */
/* ------------------------------------------------------------------ */

/* part_init sizes one part for the run. */
static void
part_init(const struct opts *o, struct evsubs_part *p)
{
	p->kills  = o->quick ? 25 : EVSUBS_MAX_KILLS;
	p->blocks = o->quick ? 2 : EVSUBS_MAX_BLOCKS;
}

/* part_done summarises one part once its blocks ran. */
static void
part_done(struct evsubs_part *p, bool ok)
{
	p->s_without = stats_of(p->without, (size_t) p->n_without);
	p->s_with    = stats_of(p->with, (size_t) p->n_with);
	p->ok        = ok && p->n_without > 0 && p->n_with > 0;
}

/* evsubs_run runs the scenario; see scenarios_limits.h. */
int
evsubs_run(const struct opts *o, struct evsubs_result *res)
{
	const char           *argv[] = {SV_BENCH_STAMP_PATH, NULL};
	struct group_cfg      g      = {.name = "victim",
	              .argv                   = argv,
	              .count                  = 1,
	              .min_uptime_ms          = 0,
	              .purpose                = "sv-bench restart-latency worker",
	              .env                    = g_sock_env};
	struct sv_bench_stamp st;
	struct rlimit         rl;
	struct daemon         d;
	pid_t                 pid;
	bool                  many = false, churn = false;

	memset(res, 0, sizeof(*res));
	part_init(o, &res->many);
	part_init(o, &res->churn);
	res->nofile = getrlimit(RLIMIT_NOFILE, &rl) == 0
	        && rl.rlim_cur != RLIM_INFINITY
	    ? (long) rl.rlim_cur
	    : -1;
	if (g_interrupted)
		return -1;
	if (res->nofile >= 0 && res->nofile < EVSUBS_N + 100) {
		snprintf(res->why, sizeof(res->why),
		    "RLIMIT_NOFILE %ld is below the %d subscribers + 100 "
		    "this scenario holds",
		    res->nofile, EVSUBS_N);
		return -1;
	}
	rx_flush();
	if (daemon_start(&d, "de", &g, res->why, sizeof(res->why)) != 0)
		goto done;
	if (daemon_wait_ready(&d, 10000, res->why, sizeof(res->why)) != 0)
		goto stop;
	if (rx_stamp(&st, now_ns() + 10 * NS_PER_SEC) != 1) {
		snprintf(
		    res->why, sizeof(res->why), "no stamp from the victim");
		goto stop;
	}
	pid = st.pid;
	if (kills(&pid, 3, NULL, NULL, NULL, res->why, sizeof(res->why)) != 0)
		goto stop; /* warm-up */
	many = part_many(&d, &pid, res) == 0;
	if (many)
		churn = part_churn(&d, &pid, res) == 0;
stop:
	daemon_stop(&d, 30000, NULL);
done:
	part_done(&res->many, many);
	part_done(&res->churn, churn);
	return many && churn ? 0 : -1;
}

/* ------------------------------------------------------------------ */
/* Rows and details                                                   */
/* ------------------------------------------------------------------ */

/* evsubs_rows writes the two latency rows and the two no-growth rows. */
int
evsubs_rows(const struct evsubs_result *res, struct row *rows)
{
	const struct evsubs_part *a = &res->many, *b = &res->churn;

	rows[0]
	    = (struct row) {.name = "restart median, 1000 subscribers (ms)",
	        .made             = a->ok,
	        .has_base         = a->ok,
	        .base             = a->s_without.med / 1e6,
	        .ours             = a->s_with.med / 1e6,
	        .kind             = T_RATIO_LE,
	        .target           = 1.10};
	rows[1]
	    = (struct row) {.name = "restart median, subscriber churn (ms)",
	        .made             = b->ok,
	        .has_base         = b->ok,
	        .base             = b->s_without.med / 1e6,
	        .ours             = b->s_with.med / 1e6,
	        .kind             = T_RATIO_LE,
	        .target           = 1.10};
	rows[2] = (struct row) {.name = "daemon fds after 1000 subs, churn",
	    .made                     = a->ok && b->ok,
	    .kind                     = T_CHECK,
	    .ttext                    = "no growth",
	    .check_ok                 = a->fds_after <= a->fds_before
	        && b->fds_after <= b->fds_before && a->fds_before > 0};
	snprintf(rows[2].ours_text, sizeof(rows[2].ours_text), "%ld->%ld",
	    a->fds_before, b->fds_after);
	rows[3] = (struct row) {.name = "daemon VmRSS growth, churn (MiB)",
	    .made                     = b->ok,
	    .ours     = (b->rss_after_kb - b->rss_before_kb) / 1024.0,
	    .kind     = T_ABS_LE,
	    .target   = 1,
	    .tunit    = "MiB",
	    .rec_ours = true};
	return 4;
}

/* part_details prints one part's latencies and daemon figures. */
static void
part_details(const char *what, const struct evsubs_part *p)
{
	if (p->n_without == 0 && p->n_with == 0)
		return;
	printf("evsubs: %s: %ld blocks x %ld kills per side; restart "
	       "median/p99 without %.3f/%.3f ms, with %.3f/%.3f ms; daemon "
	       "loop CPU per kill without %.3f ms, with %.3f ms; daemon "
	       "fds %ld -> %ld (peak %ld), VmRSS %.1f -> %.1f MiB\n",
	    what, p->blocks, p->kills, p->s_without.med / 1e6,
	    p->s_without.p99 / 1e6, p->s_with.med / 1e6, p->s_with.p99 / 1e6,
	    p->n_without > 0 ? p->cpu_without_ns / 1e6 / p->n_without : 0.0,
	    p->n_with > 0 ? p->cpu_with_ns / 1e6 / p->n_with : 0.0,
	    p->fds_before, p->fds_after, p->fds_peak,
	    p->rss_before_kb / 1024.0, p->rss_after_kb / 1024.0);
}

/* evsubs_details prints both parts, the subscribers and the churn. */
void
evsubs_details(const struct evsubs_result *res)
{
	part_details("(a) 1000 subscribers", &res->many);
	part_details("(b) churn", &res->churn);
	if (res->attached > 0)
		printf("evsubs: (a) %ld subscribers attached from one uid "
		       "(RLIMIT_NOFILE %ld; the event socket has no per-uid "
		       "bound, 4096 in all), at least %ld heard events in "
		       "every block; daemon VmRSS with them attached %.1f "
		       "MiB\n",
		    res->attached, res->nofile, res->heard,
		    res->rss_attached_kb / 1024.0);
	if (res->churn_ns > 0)
		printf("evsubs: (b) %ld connect + handshake + close cycles in "
		       "%.1f s (%.0f/s), %ld failed\n",
		    res->cycles, res->churn_ns / 1e9,
		    res->cycles * 1e9 / res->churn_ns, res->churn_fail);
}
