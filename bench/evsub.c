/*
 * evsub.c — the event stream subscriber of sv-bench's scenarios (see
 * evsub.h for the contract).
 *
 * Design: nng SUB with the empty subscription (everything), a receive
 * buffer of the largest size nng accepts, and a receive timeout set before
 * each receive to what is left of the caller's deadline, at most 100 ms,
 * so that each wait is cut into slices that notice g_interrupted. Decoding
 * uses the generated protobuf-c code of the public .proto (sv_proto, linked
 * into sv-bench only).
 *
 * File layout: decoding; open, receive, close; the raw attach.
 */
#include "evsub.h"

#include "harness.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <nng/protocol/pubsub0/sub.h>

#include "supervise/v1/supervise.pb-c.h"

/* ------------------------------------------------------------------ */
/* Decoding                                                           */
/* ------------------------------------------------------------------ */

/* evsub_decode decodes one message body; see evsub.h. */
int
evsub_decode(const uint8_t *body, size_t len, struct bench_event *ev)
{
	const uint8_t        *nul = memchr(body, '\0', len);
	Supervise__V1__Event *e;
	size_t                tlen;

	if (nul == NULL)
		return -1;
	tlen = (size_t) (nul - body) + 1;
	e    = supervise__v1__event__unpack(NULL, len - tlen, body + tlen);
	if (e == NULL)
		return -1;
	memset(ev, 0, sizeof(*ev));
	ev->seq          = e->seq;
	ev->time_unix_ms = e->time_unix_ms;
	ev->ordinal      = e->ordinal;
	ev->generation   = e->generation;
	ev->pid          = e->pid;
	snprintf(ev->group, sizeof(ev->group), "%s",
	    e->group != NULL ? e->group : "");
	switch (e->kind_case) {
	case SUPERVISE__V1__EVENT__KIND_STARTED:
		ev->kind = BEV_STARTED;
		break;
	case SUPERVISE__V1__EVENT__KIND_EXITED:
		ev->kind = BEV_EXITED;
		break;
	case SUPERVISE__V1__EVENT__KIND_RESTART_SCHEDULED:
		ev->kind     = BEV_RESTART_SCHEDULED;
		ev->delay_ms = e->restart_scheduled->delay_ms;
		ev->attempt  = e->restart_scheduled->attempt;
		break;
	default:
		ev->kind = BEV_OTHER;
		break;
	}
	supervise__v1__event__free_unpacked(e, NULL);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Open, receive, close                                               */
/* ------------------------------------------------------------------ */

/* evsub_open subscribes to everything at url; see evsub.h. */
int
evsub_open(struct evsub *s, const char *url, int64_t deadline, char *why,
    size_t whylen)
{
	int rv;

	memset(s, 0, sizeof(*s));
	if ((rv = nng_sub0_open(&s->sock)) != 0) {
		snprintf(why, whylen, "nng_sub0_open: %s", nng_strerror(rv));
		return -1;
	}
	s->open = true;
	/* The largest queue nng allows: the scenarios read every event. */
	(void) nng_socket_set_int(s->sock, NNG_OPT_RECVBUF, 8192);
	if ((rv = nng_socket_set(s->sock, NNG_OPT_SUB_SUBSCRIBE, "", 0)) != 0
	    || (rv = nng_socket_set_ms(s->sock, NNG_OPT_RECVTIMEO, 100))
	        != 0) {
		snprintf(why, whylen, "sub options: %s", nng_strerror(rv));
		evsub_close(s);
		return -1;
	}
	while ((rv = nng_dial(s->sock, url, NULL, 0)) != 0) {
		if (g_interrupted || now_ns() >= deadline) {
			snprintf(why, whylen, "cannot dial %.150s: %s", url,
			    nng_strerror(rv));
			evsub_close(s);
			return -1;
		}
		sleep_ms(5);
	}
	return 0;
}

/* evsub_recv waits for one decodable event; see evsub.h. */
int
evsub_recv(struct evsub *s, struct bench_event *ev, int64_t deadline)
{
	for (;;) {
		int64_t  left = deadline - now_ns();
		nng_msg *m;
		int      rv;

		if (left > 100 * NS_PER_MS)
			left = 100 * NS_PER_MS;
		if (left < NS_PER_MS)
			left = NS_PER_MS;
		(void) nng_socket_set_ms(s->sock, NNG_OPT_RECVTIMEO,
		    (nng_duration) (left / NS_PER_MS));
		rv = nng_recvmsg(s->sock, &m, 0);

		if (rv == 0) {
			int64_t t  = now_ns();
			int     ok = evsub_decode(
			        nng_msg_body(m), nng_msg_len(m), ev);

			nng_msg_free(m);
			if (ok == 0) {
				ev->rx_ns = t;
				return 1;
			}
			s->undecodable++;
			continue;
		}
		if (rv != NNG_ETIMEDOUT || g_interrupted)
			return -1;
		if (now_ns() >= deadline)
			return 0;
	}
}

/* evsub_close closes the socket once. */
void
evsub_close(struct evsub *s)
{
	if (s->open)
		nng_close(s->sock);
	s->open = false;
}

/* ------------------------------------------------------------------ */
/* The raw attach                                                     */
/* ------------------------------------------------------------------ */

/* evsub_raw_attach completes a SUB peer's handshake; see evsub.h. */
int
evsub_raw_attach(const char *path, int64_t deadline, char *why, size_t whylen)
{
	static const uint8_t hdr[8] = {0, 'S', 'P', 0, 0, EVSUB_SP_SUB, 0, 0};
	struct sockaddr_un   sa;
	uint8_t              peer[8];
	size_t               got = 0;
	int                  fd;

	if (sv_bench_addr(&sa, path) != 0) {
		snprintf(why, whylen, "event socket path too long");
		return -1;
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0
	    || connect(fd, (struct sockaddr *) &sa, sizeof(sa)) != 0
	    || send(fd, hdr, sizeof(hdr), MSG_NOSIGNAL) != sizeof(hdr)) {
		snprintf(why, whylen, "subscriber: connect %.150s: %s", path,
		    strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while (got < sizeof(peer)) {
		struct pollfd p    = {fd, POLLIN, 0};
		int64_t       left = deadline - now_ns();
		ssize_t       n;

		if (left <= 0 || g_interrupted
		    || poll(&p, 1, (int) (left / NS_PER_MS) + 1) < 0)
			break;
		n = recv(fd, peer + got, sizeof(peer) - got, MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			break;
		if (n > 0)
			got += (size_t) n;
	}
	if (got < sizeof(peer) || memcmp(peer, "\0SP\0", 4) != 0
	    || peer[4] != 0 || peer[5] != EVSUB_SP_PUB) {
		snprintf(why, whylen,
		    "subscriber: no PUB header from the event socket");
		close(fd);
		return -1;
	}
	return fd;
}
