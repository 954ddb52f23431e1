/*
 * bench_whoami_n.c — scenario 6 of sv-bench: the cost of whoami against
 * the number of workers supervised. Target: the median whoami latency with
 * 1,000 workers <= 1.2 x the median with 1 (finding the caller is a hash
 * lookup, not a scan).
 *
 * Design: one daemon with two groups: "who", one worker that is sv-bench
 * again ("--role who CMDSOCK"), and "idle", stamp workers that only wait,
 * at count 0. The "who" worker opens one sv_client on $SUPERVISE_URL,
 * warms up with 200 calls and reports ready; it then waits on a datagram
 * socket of its own (CMDSOCK in the temporary directory) for commands from
 * sv-bench, and answers each by timing n whoami calls (CLOCK_MONOTONIC
 * around sv_client_whoami ... sv_identity_free) and sending median, p99,
 * mean and minimum back. sv-bench drives the phases: "one" with the idle
 * group at 0 (one worker supervised), "many" with it scaled to 999 (1,000
 * workers supervised) once all 999 have reported in; with more than one
 * pair the idle group goes back to 0 in between (and sv-bench waits until
 * the daemon has reaped all 999), and the ratio is taken
 * between the medians of the phase medians. The same process, connection
 * and daemon serve every phase, so only the number of workers changes.
 *
 * File layout: role "who"; orchestration helpers; run; rows and details.
 */
#include "scenarios.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <supervise/client.h>

/* Workers supervised in the "many" phase, the "who" worker included. */
#define WHON_WORKERS 1000

/* Most whoami calls one command may ask for. */
#define WHON_MAX_CALLS 1000000

/* ------------------------------------------------------------------ */
/* Role "who": the supervised worker timing whoami                    */
/* ------------------------------------------------------------------ */

/*
 * who_bind binds a datagram socket at path (removing a stale one of an
 * earlier generation). Returns the fd or -1.
 */
static int
who_bind(const char *path)
{
	struct sockaddr_un sa;
	int                fd;

	if (sv_bench_addr(&sa, path) != 0)
		return -1;
	(void) unlink(path);
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * who_measure times n whoami calls on c into r (n, median, p99, mean,
 * minimum, group size). Returns 0, or -1 with r->msg set.
 */
static int
who_measure(sv_client *c, uint32_t n, struct sv_bench_who *r)
{
	int64_t     *v = malloc(sizeof(int64_t) * n);
	struct stats s;
	uint32_t     i;

	if (v == NULL) {
		snprintf(r->msg, sizeof(r->msg), "out of memory");
		return -1;
	}
	for (i = 0; i < n; i++) {
		int64_t      t0 = now_ns();
		sv_identity *id;
		sv_err       err = sv_client_whoami(c, RPC_TIMEOUT_MS, &id);

		if (err != SV_OK) {
			snprintf(r->msg, sizeof(r->msg), "whoami %u: %s: %s",
			    i, sv_strerror(err), sv_client_error_message(c));
			free(v);
			return -1;
		}
		r->group_size = sv_identity_group_size(id);
		sv_identity_free(id);
		v[i] = now_ns() - t0;
	}
	s          = stats_of(v, n);
	r->n       = n;
	r->med_ns  = s.med;
	r->p99_ns  = s.p99;
	r->mean_ns = s.mean;
	r->min_ns  = s.min;
	free(v);
	return 0;
}

/* whon_role_who serves sv-bench's commands; see scenarios.h. */
int
whon_role_who(const char *cmdsock)
{
	static struct sv_bench_who r;
	struct sv_bench_who_cmd    cmd;
	sv_client                 *c      = NULL;
	pid_t                      parent = getppid();
	bool                       ok     = false;
	int                        fd, i;

	memset(&r, 0, sizeof(r));
	r.magic = SV_BENCH_MAGIC_WHO;
	r.pid   = (int32_t) getpid();
	if ((fd = who_bind(cmdsock)) < 0) {
		snprintf(r.msg, sizeof(r.msg), "cannot bind %.100s: %s",
		    cmdsock, strerror(errno));
	} else if (sv_client_open(&c, NULL, RPC_TIMEOUT_MS) != SV_OK) {
		snprintf(r.msg, sizeof(r.msg), "sv_client_open($%s) failed",
		    SV_ENV_URL);
	} else {
		for (ok = true, i = 0; ok && i < 200; i++) {
			sv_identity *id = NULL;

			ok = sv_client_whoami(c, RPC_TIMEOUT_MS, &id) == SV_OK;
			sv_identity_free(id);
		}
		if (!ok)
			snprintf(r.msg, sizeof(r.msg), "warm-up failed: %s",
			    sv_client_error_message(c));
	}
	r.status = ok ? 0 : 1;
	(void) sv_bench_send(&r, sizeof(r));
	/* Serve until the daemon's SIGTERM, or until the daemon is gone. */
	while (getppid() == parent) {
		struct pollfd p = {fd, POLLIN, 0};
		ssize_t       n;

		if (fd < 0 || poll(&p, 1, 1000) != 1) {
			if (fd < 0)
				sleep(1);
			continue;
		}
		n = recv(fd, &cmd, sizeof(cmd), 0);
		if (n != (ssize_t) sizeof(cmd)
		    || cmd.magic != SV_BENCH_MAGIC_WCMD)
			continue;
		memset(r.msg, 0, sizeof(r.msg));
		r.seq = cmd.seq;
		r.n   = 0;
		if (!ok)
			snprintf(r.msg, sizeof(r.msg), "not ready");
		else if (cmd.n < 1 || cmd.n > WHON_MAX_CALLS)
			snprintf(
			    r.msg, sizeof(r.msg), "bad call count %u", cmd.n);
		r.status = r.msg[0] == '\0' && who_measure(c, cmd.n, &r) == 0
		    ? 0
		    : 1;
		(void) sv_bench_send(&r, sizeof(r));
	}
	sv_client_close(c);
	if (fd >= 0)
		close(fd);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Orchestration helpers                                              */
/* ------------------------------------------------------------------ */

/*
 * await_who waits until deadline for the "who" worker's report with seq,
 * skipping other datagrams. Returns 0, or -1 with why set.
 */
static int
await_who(uint32_t seq, int64_t deadline, struct sv_bench_who *r, char *why,
    size_t whylen)
{
	for (;;) {
		ssize_t n = rx_recv(r, sizeof(*r), slice_deadline(deadline));

		if (n == (ssize_t) sizeof(*r) && r->magic == SV_BENCH_MAGIC_WHO
		    && r->seq == seq) {
			if (r->status == 0)
				return 0;
			snprintf(why, whylen, "whoami worker: %s", r->msg);
			return -1;
		}
		if (n < 0) {
			snprintf(why, whylen, "interrupted or socket error");
			return -1;
		}
		if (!daemon_alive()) {
			snprintf(why, whylen, "supervised exited");
			return -1;
		}
		if (now_ns() >= deadline) {
			snprintf(why, whylen,
			    "no answer %u from the whoami worker", seq);
			return -1;
		}
	}
}

/*
 * who_phase asks the "who" worker for one timed phase of calls whoami
 * calls and waits for its answer. Returns 0, or -1 with why set.
 */
static int
who_phase(const char *cmdsock, uint32_t seq, long calls,
    struct sv_bench_who *r, char *why, size_t whylen)
{
	struct sv_bench_who_cmd cmd
	    = {SV_BENCH_MAGIC_WCMD, seq, (uint32_t) calls, 0};
	int64_t deadline = now_ns() + 5 * NS_PER_SEC;

	while (sv_bench_send_to(cmdsock, &cmd, sizeof(cmd)) != 0) {
		if (now_ns() >= deadline || g_interrupted) {
			snprintf(why, whylen, "cannot send to %.150s: %s",
			    cmdsock, strerror(errno));
			return -1;
		}
		sleep_ms(5);
	}
	/* 20 s of slack plus 5 ms per call. */
	deadline = now_ns() + 20 * NS_PER_SEC + calls * 5 * NS_PER_MS;
	return await_who(seq, deadline, r, why, whylen);
}

/*
 * idle_up scales group "idle" to n and waits until n distinct ordinals have
 * reported (seen[] and pids[] have room for n; pids[] gets each ordinal's
 * pid). Returns 0 with the time taken, or -1.
 */
static int
idle_up(sv_client *c, long n, unsigned char *seen, pid_t *pids, int64_t *nsp,
    char *why, size_t whylen)
{
	struct sv_bench_stamp st;
	int64_t               t0  = now_ns(), deadline;
	long                  got = 0;
	sv_err                err;
	int                   rv;

	memset(seen, 0, (size_t) n);
	if ((err = sv_client_scale(c, "idle", (uint32_t) n, 60000, NULL))
	    != SV_OK) {
		snprintf(why, whylen, "scale(idle, %ld): %s: %s", n,
		    sv_strerror(err), sv_client_error_message(c));
		return -1;
	}
	deadline = t0 + 30 * NS_PER_SEC + n * 20 * NS_PER_MS;
	while (got < n) {
		rv = rx_stamp(&st, deadline);
		if (rv != 1) {
			snprintf(why, whylen,
			    "only %ld of %ld idle workers reported", got, n);
			return -1;
		}
		if (st.ordinal >= 0 && st.ordinal < n && !seen[st.ordinal]) {
			seen[st.ordinal] = 1;
			pids[st.ordinal] = st.pid;
			got++;
		}
	}
	*nsp = now_ns() - t0;
	return 0;
}

/*
 * idle_down scales group "idle" to 0 and waits until none of the n pids
 * is a child of the daemon any more (exited and reaped), so that the next
 * phase does not run during the teardown. Returns 0, or -1 with why.
 */
static int
idle_down(sv_client *c, const pid_t *pids, long n, char *why, size_t whylen)
{
	int64_t deadline = now_ns() + 30 * NS_PER_SEC;
	long    i;

	if (group_drain(c, "idle", 30000, why, whylen) != 0)
		return -1;
	if ((i = daemon_wait_gone(pids, n, deadline)) >= 0) {
		snprintf(why, whylen,
		    "idle worker %d still there 30 s after scale 0",
		    (int) pids[i]);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Run                                                                */
/* ------------------------------------------------------------------ */

/* whon_pairs runs the phase pairs on a started daemon; 0 or -1. */
static int
whon_pairs(const struct daemon *d, const char *cmdsock, long pairs,
    unsigned char *seen, pid_t *pids, struct whon_result *res)
{
	char               *why    = res->why;
	size_t              whylen = sizeof(res->why);
	struct sv_bench_who r;
	sv_client          *c   = NULL;
	uint32_t            seq = 0;
	sv_err              err;
	long                p;
	int                 ret = -1;

	if (await_who(0, now_ns() + 20 * NS_PER_SEC, &r, why, whylen) != 0)
		return -1;
	if ((err = sv_client_open(&c, d->url, RPC_TIMEOUT_MS)) != SV_OK) {
		snprintf(why, whylen, "sv_client_open: %s", sv_strerror(err));
		return -1;
	}
	for (p = 0; p < pairs; p++) {
		note("6/7 whoami with 1 worker, pair %ld/%ld", p + 1, pairs);
		if (p > 0
		    && idle_down(c, pids, WHON_WORKERS - 1, why, whylen) != 0)
			goto out;
		if (who_phase(cmdsock, ++seq, res->calls, &r, why, whylen)
		    != 0)
			goto out;
		res->one_med_ns[p] = r.med_ns;
		res->one_p99_ns[p] = r.p99_ns;
		res->size_one      = r.group_size;
		note("6/7 whoami with %d workers, pair %ld/%ld", WHON_WORKERS,
		    p + 1, pairs);
		if (idle_up(c, WHON_WORKERS - 1, seen, pids, &res->up_ns[p],
		        why, whylen)
		    != 0)
			goto out;
		if (who_phase(cmdsock, ++seq, res->calls, &r, why, whylen)
		    != 0)
			goto out;
		res->many_med_ns[p] = r.med_ns;
		res->many_p99_ns[p] = r.p99_ns;
		res->size_many      = r.group_size;
		res->pairs          = p + 1;
	}
	ret = 0;
out:
	sv_client_close(c);
	return ret;
}

/* median_of is the median of v[0..n) (n <= WHON_MAX_PAIRS), v unchanged. */
static int64_t
median_of(const int64_t *v, long n)
{
	int64_t tmp[WHON_MAX_PAIRS];

	memcpy(tmp, v, sizeof(int64_t) * (size_t) n);
	return stats_of(tmp, (size_t) n).med;
}

/* whon_run runs scenario 6; see scenarios.h. */
int
whon_run(const struct opts *o, struct whon_result *res)
{
	char             cmdsock[PATH_MAX];
	const char      *wargv[]  = {g_self, "--role", "who", cmdsock, NULL};
	const char      *iargv[]  = {SV_BENCH_STAMP_PATH, NULL};
	struct group_cfg groups[] = {
	    {.name             = "who",
	        .argv          = wargv,
	        .count         = 1,
	        .min_uptime_ms = -1,
	        .purpose       = "sv-bench whoami-timing worker",
	        .env           = g_sock_env},
	    {.name             = "idle",
	        .argv          = iargv,
	        .count         = 0,
	        .max_count     = WHON_WORKERS,
	        .min_uptime_ms = -1,
	        .purpose       = "sv-bench idle worker",
	        .env           = g_sock_env},
	};
	unsigned char *seen;
	pid_t         *pids;
	struct daemon  d;
	int            ret = -1;

	memset(res, 0, sizeof(*res));
	res->calls   = o->quick ? 1000 : 3000;
	res->workers = WHON_WORKERS;
	if (g_interrupted)
		return -1;
	if (dir_path(cmdsock, sizeof(cmdsock), "who.sock") != 0
	    || strlen(cmdsock)
	        >= sizeof(((struct sockaddr_un *) 0)->sun_path)) {
		snprintf(
		    res->why, sizeof(res->why), "temporary path too long");
		return -1;
	}
	seen = calloc(WHON_WORKERS, 1);
	pids = calloc(WHON_WORKERS, sizeof(pid_t));
	if (seen == NULL || pids == NULL) {
		snprintf(res->why, sizeof(res->why), "out of memory");
		free(seen);
		free(pids);
		return -1;
	}
	rx_flush();
	if (daemon_start_groups(
	        &d, "d6", groups, 2, res->why, sizeof(res->why))
	    == 0) {
		if (daemon_wait_ready(&d, 10000, res->why, sizeof(res->why))
		    == 0)
			ret = whon_pairs(
			    &d, cmdsock, o->quick ? 1 : 2, seen, pids, res);
		daemon_stop(&d, 30000, NULL);
	}
	free(seen);
	free(pids);
	if (res->pairs > 0) {
		res->one_ns   = median_of(res->one_med_ns, res->pairs);
		res->many_ns  = median_of(res->many_med_ns, res->pairs);
		res->one_p99  = median_of(res->one_p99_ns, res->pairs);
		res->many_p99 = median_of(res->many_p99_ns, res->pairs);
	}
	res->ok = ret == 0;
	return ret;
}

/* ------------------------------------------------------------------ */
/* Rows and details                                                   */
/* ------------------------------------------------------------------ */

/* whon_rows writes the median row (the target) and the p99 row. */
int
whon_rows(const struct whon_result *res, struct row *rows)
{
	rows[0]
	    = (struct row) {.name = "whoami median, 1 -> 1000 workers (us)",
	        .made             = res->ok,
	        .has_base         = res->ok,
	        .base             = res->one_ns / 1e3,
	        .ours             = res->many_ns / 1e3,
	        .kind             = T_RATIO_LE,
	        .target           = 1.2};
	rows[1] = (struct row) {.name = "whoami p99, 1 -> 1000 workers (us)",
	    .made                     = res->ok,
	    .has_base                 = res->ok,
	    .base                     = res->one_p99 / 1e3,
	    .ours                     = res->many_p99 / 1e3,
	    .kind                     = T_INFO};
	return 2;
}

/* whon_details prints every phase pair. */
void
whon_details(const struct whon_result *res)
{
	long i;

	for (i = 0; i < res->pairs; i++)
		printf("whoami-n pair %ld: %ld calls per phase; median 1 "
		       "worker %.1f us, %ld workers %.1f us (ratio %.2f); p99 "
		       "%.1f / %.1f us; %ld idle workers up in %.0f ms\n",
		    i + 1, res->calls, res->one_med_ns[i] / 1e3, res->workers,
		    res->many_med_ns[i] / 1e3,
		    (double) res->many_med_ns[i] / (double) res->one_med_ns[i],
		    res->one_p99_ns[i] / 1e3, res->many_p99_ns[i] / 1e3,
		    res->workers - 1, res->up_ns[i] / 1e6);
}
