/*
 * bench_whoami.c — scenario 1 of sv-bench: the whoami round trip against a
 * bare nng REQ/REP echo of the same size. Target: whoami median <= 1.2 x
 * echo median.
 *
 * Design: three processes. sv-bench starts a bare REP echo server as its
 * own child ("sv-bench --role echo URL": ctx + aio with 4 contexts, the
 * pattern the daemon serves with), then a daemon with a group of one worker
 * that is sv-bench again ("--role rtt"). That worker owns both clients in
 * one process: a fresh REQ socket with the options sv_client_open sets,
 * dialed to the echo server, and one sv_client on $SUPERVISE_URL. It warms
 * up, then times the two kinds in interleaved blocks (even blocks start
 * with echo, odd ones with whoami) so that drift in the machine hits both
 * alike, and sends medians, p99s and per-block medians back in one
 * datagram (struct sv_bench_rtt). It then waits for the daemon's SIGTERM:
 * exiting would make the daemon start it, and the measurement, again.
 *
 * File layout: role "echo"; role "rtt"; the orchestrating run; rows and
 * details.
 */
#include "scenarios.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <nng/protocol/reqrep0/req.h>

#include <supervise/client.h>

/* ------------------------------------------------------------------ */
/* Role "echo": the bare nng REP echo server (the baseline)           */
/* ------------------------------------------------------------------ */

#define ECHO_CTX 4

struct echo_work {
	enum { ECHO_INIT, ECHO_RECV, ECHO_SEND } state;
	nng_aio *aio;
	nng_ctx  ctx;
};

/* echo_cb is the ctx + aio state machine: receive, send the same back. */
static void
echo_cb(void *arg)
{
	struct echo_work *w = arg;
	nng_msg          *msg;
	int               rv;

	switch (w->state) {
	case ECHO_INIT:
		w->state = ECHO_RECV;
		nng_ctx_recv(w->ctx, w->aio);
		break;
	case ECHO_RECV:
		if ((rv = nng_aio_result(w->aio)) != 0) {
			if (rv != NNG_ECLOSED)
				nng_ctx_recv(w->ctx, w->aio);
			return;
		}
		msg = nng_aio_get_msg(w->aio);
		nng_aio_set_msg(w->aio, msg);
		w->state = ECHO_SEND;
		nng_ctx_send(w->ctx, w->aio);
		break;
	case ECHO_SEND:
		if ((rv = nng_aio_result(w->aio)) != 0) {
			nng_msg_free(nng_aio_get_msg(w->aio));
			if (rv == NNG_ECLOSED)
				return;
		}
		w->state = ECHO_RECV;
		nng_ctx_recv(w->ctx, w->aio);
		break;
	}
}

/* whoami_role_echo serves url until SIGTERM/SIGINT (exit status 0). */
int
whoami_role_echo(const char *url)
{
	struct echo_work w[ECHO_CTX];
	nng_listener     l;
	nng_socket       s;
	sigset_t         ss;
	int              i, sig, rv;

	/* Block the stop signals before nng starts its threads. */
	sigemptyset(&ss);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGINT);
	pthread_sigmask(SIG_BLOCK, &ss, NULL);
	if ((rv = nng_rep0_open(&s)) != 0
	    || (rv = nng_listener_create(&l, s, url)) != 0
	    || (rv = nng_listener_set_size(l, NNG_OPT_RECVMAXSZ, 1 << 20)) != 0
	    || (rv = nng_listener_set_int(l, NNG_OPT_IPC_PERMISSIONS, 0600))
	        != 0
	    || (rv = nng_listener_start(l, 0)) != 0) {
		fprintf(
		    stderr, "sv-bench echo: %s: %s\n", url, nng_strerror(rv));
		return 1;
	}
	for (i = 0; i < ECHO_CTX; i++) {
		if ((rv = nng_aio_alloc(&w[i].aio, echo_cb, &w[i])) != 0
		    || (rv = nng_ctx_open(&w[i].ctx, s)) != 0) {
			fprintf(
			    stderr, "sv-bench echo: %s\n", nng_strerror(rv));
			return 1;
		}
		w[i].state = ECHO_INIT;
		echo_cb(&w[i]);
	}
	while (sigwait(&ss, &sig) != 0)
		;
	nng_close(s);
	for (i = 0; i < ECHO_CTX; i++)
		nng_aio_stop(w[i].aio);
	for (i = 0; i < ECHO_CTX; i++)
		nng_aio_free(w[i].aio);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Role "rtt": the supervised worker timing echo and whoami           */
/* ------------------------------------------------------------------ */

/* echo_rt does one echo round trip on s; returns its ns or -1. */
static int64_t
echo_rt(nng_socket s)
{
	int64_t  t0 = now_ns();
	nng_msg *m, *r;

	if (nng_msg_alloc(&m, WHOAMI_ECHO_PAYLOAD) != 0)
		return -1;
	memset(nng_msg_body(m), 'x', WHOAMI_ECHO_PAYLOAD);
	if (nng_sendmsg(s, m, 0) != 0) {
		nng_msg_free(m);
		return -1;
	}
	if (nng_recvmsg(s, &r, 0) != 0)
		return -1;
	nng_msg_free(r);
	return now_ns() - t0;
}

/* whoami_rt does one whoami round trip on c; returns its ns or -1. */
static int64_t
whoami_rt(sv_client *c, uint32_t *ordinalp)
{
	int64_t      t0 = now_ns();
	sv_identity *id;

	if (sv_client_whoami(c, RPC_TIMEOUT_MS, &id) != SV_OK)
		return -1;
	*ordinalp = sv_identity_ordinal(id);
	sv_identity_free(id);
	return now_ns() - t0;
}

/*
 * echo_open opens the baseline socket: a fresh REQ socket, dialed once,
 * with the options sv_client_open sets (libsupervise/src/client/client.c):
 * no resend, reconnect 10..1000 ms, 4 MiB receive limit on the dialer. The
 * dial is retried for 5 s. Returns 0, or -1 with r->msg set.
 */
static int
echo_open(nng_socket *sp, const char *echo_url, struct sv_bench_rtt *r)
{
	int64_t deadline = now_ns() + 5 * NS_PER_SEC;
	int     rv;

	if ((rv = nng_req0_open(sp)) != 0
	    || (rv = nng_socket_set_ms(
	            *sp, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE))
	        != 0
	    || (rv = nng_socket_set_ms(*sp, NNG_OPT_RECONNMINT, 10)) != 0
	    || (rv = nng_socket_set_ms(*sp, NNG_OPT_RECONNMAXT, 1000)) != 0
	    || (rv = nng_socket_set_ms(*sp, NNG_OPT_RECVTIMEO, RPC_TIMEOUT_MS))
	        != 0
	    || (rv = nng_socket_set_ms(*sp, NNG_OPT_SENDTIMEO, RPC_TIMEOUT_MS))
	        != 0) {
		snprintf(r->msg, sizeof(r->msg), "echo socket: %s",
		    nng_strerror(rv));
		return -1;
	}
	for (;;) {
		nng_dialer d;

		if ((rv = nng_dialer_create(&d, *sp, echo_url)) != 0)
			break;
		nng_dialer_set_size(d, NNG_OPT_RECVMAXSZ, 4u << 20);
		if ((rv = nng_dialer_start(d, 0)) == 0)
			break;
		nng_dialer_close(d);
		if (now_ns() >= deadline)
			break;
		sleep_ms(5);
	}
	if (rv != 0) {
		snprintf(r->msg, sizeof(r->msg), "dial %s: %s", echo_url,
		    nng_strerror(rv));
		return -1;
	}
	return 0;
}

/* block_median copies v[0..n) to tmp and returns its median. */
static int64_t
block_median(const int64_t *v, int64_t *tmp, long n)
{
	memcpy(tmp, v, sizeof(int64_t) * (size_t) n);
	return stats_of(tmp, (size_t) n).med;
}

/*
 * rtt_measure fills r: echo and whoami round trips, alternating which kind
 * goes first in each block. Returns 0, or -1 with r->msg set.
 */
static int
rtt_measure(const char *echo_url, long n, long blocks, struct sv_bench_rtt *r)
{
	long         per = n / blocks, warm = per < 200 ? per : 200, b, i;
	int64_t     *echo = NULL, *who = NULL, *tmp = NULL, t;
	sv_client   *c = NULL;
	sv_identity *id;
	nng_socket   s   = NNG_SOCKET_INITIALIZER;
	uint32_t     ord = 0;
	struct stats se, sw;
	sv_err       err;
	int          ret = -1;

	n    = per * blocks;
	echo = malloc(sizeof(int64_t) * (size_t) n);
	who  = malloc(sizeof(int64_t) * (size_t) n);
	tmp  = malloc(sizeof(int64_t) * (size_t) per);
	if (echo == NULL || who == NULL || tmp == NULL) {
		snprintf(r->msg, sizeof(r->msg), "out of memory");
		goto out;
	}
	if (echo_open(&s, echo_url, r) != 0)
		goto out;
	if ((err = sv_client_open(&c, NULL, RPC_TIMEOUT_MS)) != SV_OK) {
		snprintf(r->msg, sizeof(r->msg), "sv_client_open($%s): %s",
		    SV_ENV_URL, sv_strerror(err));
		goto out;
	}
	if ((err = sv_client_whoami(c, RPC_TIMEOUT_MS, &id)) != SV_OK) {
		snprintf(r->msg, sizeof(r->msg), "whoami: %s: %s",
		    sv_strerror(err), sv_client_error_message(c));
		goto out;
	}
	sv_identity_free(id);
	for (i = 0; i < warm; i++) {
		if (echo_rt(s) < 0 || whoami_rt(c, &ord) < 0) {
			snprintf(r->msg, sizeof(r->msg), "warm-up failed");
			goto out;
		}
	}
	for (b = 0; b < blocks; b++) {
		int k;

		for (k = 0; k < 2; k++) {
			bool do_echo = (k == 0) == (b % 2 == 0);

			for (i = 0; i < per; i++) {
				t = do_echo ? echo_rt(s) : whoami_rt(c, &ord);
				if (t < 0) {
					snprintf(r->msg, sizeof(r->msg),
					    "%s round trip failed in block "
					    "%ld",
					    do_echo ? "echo" : "whoami", b);
					goto out;
				}
				(do_echo ? echo : who)[b * per + i] = t;
			}
		}
		r->echo_block_med_ns[b]
		    = block_median(echo + b * per, tmp, per);
		r->who_block_med_ns[b] = block_median(who + b * per, tmp, per);
	}
	se              = stats_of(echo, (size_t) n);
	sw              = stats_of(who, (size_t) n);
	r->ordinal      = (int32_t) ord;
	r->n            = (uint32_t) n;
	r->blocks       = (uint32_t) blocks;
	r->echo_med_ns  = se.med;
	r->echo_p99_ns  = se.p99;
	r->echo_mean_ns = se.mean;
	r->who_med_ns   = sw.med;
	r->who_p99_ns   = sw.p99;
	r->who_mean_ns  = sw.mean;
	ret             = 0;
out:
	sv_client_close(c);
	if (nng_socket_id(s) > 0)
		nng_close(s);
	free(echo);
	free(who);
	free(tmp);
	return ret;
}

/* whoami_role_rtt measures, reports one datagram, then waits for SIGTERM. */
int
whoami_role_rtt(const char *echo_url, const char *nstr, const char *bstr)
{
	static struct sv_bench_rtt r;
	long                       n = parse_long(nstr, 1, 10000000);
	long blocks = parse_long(bstr, 1, SV_BENCH_MAX_BLOCKS);

	memset(&r, 0, sizeof(r));
	r.magic   = SV_BENCH_MAGIC_RTT;
	r.pid     = (int32_t) getpid();
	r.ordinal = -1;
	if (n < 1 || blocks < 1 || n < blocks) {
		snprintf(r.msg, sizeof(r.msg), "bad arguments");
		r.status = 1;
	} else if (rtt_measure(echo_url, n, blocks, &r) != 0) {
		r.status = 1;
	}
	if (sv_bench_send(&r, sizeof(r)) != 0)
		fprintf(stderr, "sv-bench rtt: cannot send the report\n");
	for (;;)
		pause();
	return 0; /* not reached */
}

/* ------------------------------------------------------------------ */
/* The orchestrating run                                              */
/* ------------------------------------------------------------------ */

/*
 * await_report waits for the round-trip worker's report in *r until
 * deadline, watching the daemon. Returns 0, or -1 with why set.
 */
static int
await_report(const struct daemon *d, int64_t deadline, struct sv_bench_rtt *r,
    char *why, size_t whylen)
{
	for (;;) {
		ssize_t n = rx_recv(r, sizeof(*r), slice_deadline(deadline));

		if (n == (ssize_t) sizeof(*r)
		    && r->magic == SV_BENCH_MAGIC_RTT)
			return 0;
		if (n < 0) {
			snprintf(why, whylen, "interrupted or socket error");
			return -1;
		}
		if (!daemon_alive()) {
			snprintf(why, whylen,
			    "supervised exited during the "
			    "round-trip measurement");
			return -1;
		}
		if (now_ns() >= deadline) {
			snprintf(why, whylen,
			    "no report from the round-trip "
			    "worker (see %.150s)",
			    d->log);
			return -1;
		}
	}
}

/* whoami_run runs scenario 1; see scenarios.h. */
int
whoami_run(const struct opts *o, struct whoami_result *res)
{
	char echo_sock[PATH_MAX], echo_url[PATH_MAX + 8], echo_log[PATH_MAX];
	char nbuf[32], bbuf[32];
	const char *argv[]
	    = {g_self, "--role", "rtt", echo_url, nbuf, bbuf, NULL};
	struct group_cfg     g      = {.name = "rtt",
	             .argv                   = argv,
	             .count                  = 1,
	             .min_uptime_ms          = -1,
	             .purpose                = "sv-bench round-trip client",
	             .env                    = g_sock_env};
	struct sv_bench_rtt *r      = &res->rtt;
	char                *why    = res->why;
	size_t               whylen = sizeof(res->why);
	struct daemon        d;
	int64_t              deadline;
	int                  ret = -1;

	res->ok = false;
	if (dir_path(echo_sock, sizeof(echo_sock), "echo.sock") != 0
	    || dir_path(echo_log, sizeof(echo_log), "echo.log") != 0) {
		snprintf(why, whylen, "temporary path too long");
		return -1;
	}
	snprintf(echo_url, sizeof(echo_url), "ipc://%s", echo_sock);
	snprintf(nbuf, sizeof(nbuf), "%ld", o->rtts);
	snprintf(bbuf, sizeof(bbuf), "%ld", o->blocks);
	rx_flush();

	if (echo_start(echo_url, echo_sock, echo_log, why, whylen) != 0)
		goto stop_echo;
	if (daemon_start(&d, "d1", &g, why, whylen) != 0)
		goto stop_echo;
	if (daemon_wait_ready(&d, 10000, why, whylen) != 0)
		goto stop_daemon;
	/* 20 s of slack plus 2 ms per round trip, both kinds. */
	deadline = now_ns() + 20 * NS_PER_SEC + 2 * o->rtts * 2 * NS_PER_MS;
	if (await_report(&d, deadline, r, why, whylen) != 0)
		goto stop_daemon;
	if (r->status != 0) {
		snprintf(why, whylen, "round-trip worker failed: %s", r->msg);
		goto stop_daemon;
	}
	ret     = 0;
	res->ok = true;
stop_daemon:
	daemon_stop(&d, 10000, NULL);
stop_echo:
	echo_stop();
	return ret;
}

/* ------------------------------------------------------------------ */
/* Rows and details                                                   */
/* ------------------------------------------------------------------ */

/* whoami_rows writes the median row (the target) and the p99 row. */
int
whoami_rows(const struct whoami_result *res, struct row *rows)
{
	const struct sv_bench_rtt *r = &res->rtt;

	rows[0] = (struct row) {.name = "whoami RTT median (us)",
	    .made                     = res->ok,
	    .has_base                 = res->ok,
	    .base                     = r->echo_med_ns / 1e3,
	    .ours                     = r->who_med_ns / 1e3,
	    .kind                     = T_RATIO_LE,
	    .target                   = 1.2};
	rows[1] = (struct row) {.name = "whoami RTT p99 (us)",
	    .made                     = res->ok,
	    .has_base                 = res->ok,
	    .base                     = r->echo_p99_ns / 1e3,
	    .ours                     = r->who_p99_ns / 1e3,
	    .kind                     = T_INFO};
	return 2;
}

/* whoami_details prints the means and the range of per-block ratios. */
void
whoami_details(const struct whoami_result *res)
{
	const struct sv_bench_rtt *r  = &res->rtt;
	double                     lo = 1e9, hi = 0;
	uint32_t                   b;

	if (!res->ok)
		return;
	for (b = 0; b < r->blocks; b++) {
		double q = (double) r->who_block_med_ns[b]
		    / (double) r->echo_block_med_ns[b];
		lo = q < lo ? q : lo;
		hi = q > hi ? q : hi;
	}
	printf("whoami: %u round trips each in %u blocks; means echo "
	       "%.1f us, whoami %.1f us; per-block median ratio "
	       "%.2f..%.2f;"
	       " worker ordinal %d\n",
	    r->n, r->blocks, r->echo_mean_ns / 1e3, r->who_mean_ns / 1e3, lo,
	    hi, r->ordinal);
}
