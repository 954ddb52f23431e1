/*
 * transport.c — an SP REQ connection over a UNIX stream socket, with
 * deadlines (see transport.h for the wire format).
 *
 * Design: the socket is non-blocking; every read and write is tried first
 * and, when it would block, poll() waits for readiness until the deadline.
 * Nothing here starts a thread or keeps global state, so a child process
 * can drop an inherited connection and open its own (svt_forget).
 *
 * A frame is either read whole or the connection is closed: a deadline that
 * passes in the middle of a frame (either direction) leaves the byte stream
 * at an unknown position, so the connection is dropped and the next call
 * reconnects. A deadline that passes before the first byte of a reply keeps
 * the connection; the late reply is skipped by its request id later, as an
 * nng REQ socket would.
 *
 * The connection header exchange is never abandoned at a deadline: when
 * the supervisor's header has not come in time (a stopped or overloaded
 * supervisor), the connection is kept and the next call waits for the
 * header again. nng 1.5.2 (nanomsg/nng#1518) stops accepting connections
 * for good when a peer hangs up during the exchange. supervised serves its
 * sockets itself and is not affected, but another implementation of
 * supervise.v1 built on nng's REP socket would be, by a client that hung
 * up on every slow start.
 *
 * Divisions: clock and errors; raw I/O with deadlines; connecting and the
 * connection header; the request/reply exchange.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "transport.h"

#define SVT_HDR_LEN   8 /* connection header */
#define SVT_FRAME_HDR 9 /* message type byte + 64-bit length */
#define SVT_MSG_TYPE  1 /* the only message type of the ipc transport */
#define SVT_SKIP_BUF  4096 /* chunk used to skip stale replies */

/* Our connection header: an SP peer speaking REQ v0. */

/* ---- clock and errors ---------------------------------------------------
 */

int64_t
svt_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
svt_deadline(int timeout_ms)
{
	return timeout_ms < 0 ? -1 : svt_now_ms() + timeout_ms;
}

/* svt_passed tells whether deadline (-1: none) has passed. */
static bool
svt_passed(int64_t deadline)
{
	return deadline >= 0 && svt_now_ms() >= deadline;
}

/* svt_left turns deadline into a poll() timeout: -1 none, 0 passed. */
static int
svt_left(int64_t deadline)
{
	int64_t left;

	if (deadline < 0) {
		return -1;
	}
	left = deadline - svt_now_ms();
	if (left <= 0) {
		return 0;
	}
	return left > INT_MAX ? INT_MAX : (int) left;
}

/* svt_fail records a formatted detail in c and returns err. */
static sv_err
svt_fail(svt_conn *c, sv_err err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
	va_end(ap);
	return err;
}

/* svt_errno maps the errno of a failed socket call named what. */
static sv_err
svt_errno(svt_conn *c, int e, const char *what)
{
	switch (e) {
	case ECONNRESET:
	case EPIPE:
	case ENOTCONN:
	case ECONNABORTED:
		return svt_fail(c, SV_ECLOSED,
		    "the supervisor closed the connection (%s: %s)", what,
		    strerror(e));
	case ENOMEM:
		return svt_fail(c, SV_ENOMEM, "%s: %s", what, strerror(e));
	default:
		return svt_fail(c, SV_ESYSTEM, "%s: %s", what, strerror(e));
	}
}

/* svt_pause sleeps ms milliseconds, or until deadline if that is sooner. */
static void
svt_pause(int ms, int64_t deadline)
{
	int             left = svt_left(deadline);
	struct timespec until;

	if (left >= 0 && left < ms) {
		ms = left;
	}
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long) (ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL)
	    == EINTR) {
	}
}

/* svt_put64/svt_get64/svt_put32/svt_get32: big-endian integers. */
static void
svt_put64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8) {
		p[i] = (uint8_t) (v & 0xff);
	}
}

static uint64_t
svt_get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++) {
		v = (v << 8) | p[i];
	}
	return v;
}

static void
svt_put32(uint8_t *p, uint32_t v)
{
	for (int i = 3; i >= 0; i--, v >>= 8) {
		p[i] = (uint8_t) (v & 0xff);
	}
}

static uint32_t
svt_get32(const uint8_t *p)
{
	return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16)
	    | ((uint32_t) p[2] << 8) | (uint32_t) p[3];
}

/* ---- raw I/O with deadlines ----------------------------------------------
 */

/* svt_wait polls fd for events until deadline: SV_OK when something is
 * ready (including a hang-up, which the next call reports), SV_ETIMEDOUT,
 * or SV_ESYSTEM. */
static sv_err
svt_wait(svt_conn *c, int fd, short events, int64_t deadline)
{
	for (;;) {
		struct pollfd pfd  = {.fd = fd, .events = events};
		int           left = svt_left(deadline);
		int           n;

		if (left == 0) {
			return SV_ETIMEDOUT;
		}
		n = poll(&pfd, 1, left);
		if (n > 0) {
			return SV_OK;
		}
		if (n < 0 && errno != EINTR) {
			return svt_errno(c, errno, "poll");
		}
		/* Timed out or interrupted: svt_left decides again. */
	}
}

/*
 * svt_read reads exactly n bytes before deadline; *gotp receives how many
 * were read in any case. Errors: SV_ETIMEDOUT, SV_ECLOSED (end of stream or
 * reset), SV_ESYSTEM. The detail is set except for SV_ETIMEDOUT.
 */
static sv_err
svt_read(svt_conn *c, void *buf, size_t n, int64_t deadline, size_t *gotp)
{
	size_t got = 0;
	sv_err err = SV_OK;

	while (got < n) {
		ssize_t r = recv(
		    c->fd, (uint8_t *) buf + got, n - got, MSG_DONTWAIT);

		if (r > 0) {
			got += (size_t) r;
		} else if (r == 0) {
			err = svt_fail(c, SV_ECLOSED,
			    "the supervisor closed the connection");
			break;
		} else if (errno == EAGAIN || errno == EWOULDBLOCK) {
			if ((err = svt_wait(c, c->fd, POLLIN, deadline))
			    != SV_OK) {
				break;
			}
		} else if (errno != EINTR) {
			err = svt_errno(c, errno, "recv");
			break;
		}
	}
	*gotp = got;
	return err;
}

/* svt_write writes exactly n bytes before deadline, never raising SIGPIPE;
 * *sentp receives how many were written. Errors as svt_read. */
static sv_err
svt_write(
    svt_conn *c, const void *buf, size_t n, int64_t deadline, size_t *sentp)
{
	size_t sent = 0;
	sv_err err  = SV_OK;

	while (sent < n) {
		ssize_t r = send(c->fd, (const uint8_t *) buf + sent, n - sent,
		    MSG_NOSIGNAL | MSG_DONTWAIT);

		if (r >= 0) {
			sent += (size_t) r;
		} else if (errno == EAGAIN || errno == EWOULDBLOCK) {
			if ((err = svt_wait(c, c->fd, POLLOUT, deadline))
			    != SV_OK) {
				break;
			}
		} else if (errno != EINTR) {
			err = svt_errno(c, errno, "send");
			break;
		}
	}
	*sentp = sent;
	return err;
}

/* svt_hung_up tells whether an idle connection was closed by the peer. A
 * waiting byte (a late reply) means it is still up. */
static bool
svt_hung_up(svt_conn *c)
{
	uint8_t b;
	ssize_t r = recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);

	if (r > 0) {
		return false;
	}
	return r == 0
	    || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

/* ---- connecting and the connection header --------------------------------
 */

sv_err
svt_init(svt_conn *c, const char *url)
{
	uint32_t r;
	size_t   len;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	if (url == NULL || strncmp(url, "ipc://", 6) != 0) {
		return svt_fail(c, SV_EINVAL,
		    "not an ipc:// URL: \"%.64s\" (the supervisor listens "
		    "only on ipc://PATH)",
		    url != NULL ? url : "");
	}
	len = strlen(url + 6);
	if (len == 0 || len >= SVT_PATH_MAX) {
		return svt_fail(c, SV_EINVAL,
		    "socket path of %zu bytes in \"%.64s\": must be 1..%d",
		    len, url, SVT_PATH_MAX - 1);
	}
	memcpy(c->path, url + 6, len + 1);
	c->self_proto = SVT_REQ0;
	c->peer_proto = SVT_REP0;
	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t) sizeof(r)) {
		/* No entropy yet: any varying start will do. */
		r = (uint32_t) svt_now_ms() ^ ((uint32_t) getpid() << 16)
		    ^ (uint32_t) (uintptr_t) c;
	}
	c->last_id = r | SVT_ID_BIT;
	return SV_OK;
}

void
svt_close(svt_conn *c)
{
	if (c->fd >= 0) {
		close(c->fd);
	}
	c->fd      = -1;
	c->greeted = false;
}

void
svt_forget(svt_conn *c)
{
	struct stat st;

	if (c->fd >= 0 && fstat(c->fd, &st) == 0 && S_ISSOCK(st.st_mode)
	    && st.st_dev == c->dev && st.st_ino == c->ino) {
		close(c->fd);
	}
	c->fd      = -1;
	c->greeted = false;
}

/*
 * svt_attempt makes one connection attempt and sends our header. On
 * failure c has no connection and *retryp tells whether trying again later
 * may help (nobody listening yet, full backlog, peer hung up).
 */
static sv_err
svt_attempt(svt_conn *c, int64_t deadline, bool *retryp)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat        st;
	socklen_t          elen = sizeof(int);
	uint8_t            hdr[SVT_HDR_LEN]
	    = {0x00, 'S', 'P', 0x00, 0x00, 0x00, 0x00, 0x00};
	size_t sent;
	sv_err err;
	int    fd, e = 0;

	*retryp = false;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		return svt_errno(c, errno, "socket");
	}
	memcpy(sa.sun_path, c->path, strlen(c->path) + 1);
	if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) != 0) {
		e = errno;
		if (e == EINPROGRESS || e == EINTR) {
			/* Completes in the background: wait, then ask. */
			if ((err = svt_wait(c, fd, POLLOUT, deadline))
			    != SV_OK) {
				close(fd);
				*retryp = err == SV_ETIMEDOUT;
				return svt_fail(c, SV_ECONNECT,
				    "connecting to %s: timed out", c->path);
			}
			if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &elen)
			    != 0) {
				e = errno;
			}
		}
	}
	if (e != 0) {
		close(fd);
		*retryp = e == ENOENT || e == ECONNREFUSED || e == EAGAIN;
		return svt_fail(c, SV_ECONNECT, "cannot connect to %s: %s",
		    c->path, strerror(e));
	}
	if (fstat(fd, &st) == 0) {
		c->dev = st.st_dev;
		c->ino = st.st_ino;
	}
	c->fd      = fd;
	c->greeted = false;
	/* 8 bytes into a new socket's empty buffer: does not block. */
	hdr[5] = (uint8_t) c->self_proto;
	if ((err = svt_write(c, hdr, SVT_HDR_LEN, deadline, &sent)) != SV_OK) {
		svt_close(c);
		*retryp = err == SV_ECLOSED;
		return svt_fail(c, SV_ECONNECT,
		    "sending the connection header to %s failed", c->path);
	}
	return SV_OK;
}

/*
 * svt_greet reads and checks the peer's connection header. SV_ETIMEDOUT
 * with nothing read keeps the connection (the header may still come);
 * every other failure closes it: SV_ETIMEDOUT (part of a header),
 * SV_ECLOSED (hung up), SV_EPROTO (not an SP REP peer), SV_ESYSTEM.
 */
static sv_err
svt_greet(svt_conn *c, int64_t deadline)
{
	uint8_t  h[SVT_HDR_LEN];
	size_t   got;
	unsigned proto;
	sv_err   err = svt_read(c, h, sizeof(h), deadline, &got);

	if (err != SV_OK) {
		if (err != SV_ETIMEDOUT || got > 0) {
			svt_close(c);
		}
		if (err == SV_ETIMEDOUT) {
			return svt_fail(c, SV_ETIMEDOUT,
			    "no connection header from %s before the deadline",
			    c->path);
		}
		return err;
	}
	proto = ((unsigned) h[4] << 8) | h[5];
	if (h[0] != 0x00 || h[1] != 'S' || h[2] != 'P' || h[3] != 0x00
	    || h[6] != 0x00 || h[7] != 0x00) {
		svt_close(c);
		return svt_fail(c, SV_EPROTO,
		    "%s is not an SP socket (bad connection header)", c->path);
	}
	if (proto != c->peer_proto) {
		svt_close(c);
		return svt_fail(c, SV_EPROTO,
		    "%s speaks SP protocol 0x%04x, not 0x%04x", c->path, proto,
		    (unsigned) c->peer_proto);
	}
	c->greeted = true;
	return SV_OK;
}

/*
 * svt_dial connects as svt_connect describes, waiting for the peer's
 * header until greet_by (at most deadline; a time already past takes the
 * header only if it is there); *gave_upp tells whether it failed only
 * because nobody was listening when the deadline came.
 */
static sv_err
svt_dial(svt_conn *c, int64_t deadline, int64_t greet_by, bool *gave_upp)
{
	int    backoff = SVT_BACKOFF_MIN_MS;
	bool   retry;
	sv_err err;

	*gave_upp = false;
	svt_close(c);
	for (;;) {
		if ((err = svt_attempt(c, deadline, &retry)) == SV_OK) {
			err = svt_greet(c, greet_by);
			if (err == SV_OK
			    || (err == SV_ETIMEDOUT && c->fd >= 0)) {
				/* Exchanged, or the peer's header is still
				 * due: keep the connection, svt_call waits for
				 * it. Hanging up now would trip nng#1518 in
				 * a supervisor built on nng (see the top of
				 * this file).
				 */
				return SV_OK;
			}
			/* A peer that hangs up during the exchange may be a
			 * listener being replaced: try again. */
			retry = err == SV_ECLOSED;
		}
		if (!retry) {
			return err == SV_ETIMEDOUT ? SV_ECONNECT : err;
		}
		if (svt_passed(deadline)) {
			*gave_upp = true;
			return SV_ECONNECT;
		}
		svt_pause(backoff, deadline);
		backoff = backoff * 2 > SVT_BACKOFF_MAX_MS ? SVT_BACKOFF_MAX_MS
		                                           : backoff * 2;
	}
}

sv_err
svt_connect(svt_conn *c, int64_t deadline)
{
	bool gave_up;

	return svt_dial(c, deadline, deadline, &gave_up);
}

sv_err
svt_connect_nowait(svt_conn *c, int64_t deadline)
{
	bool gave_up;

	/* 0 is long past on CLOCK_MONOTONIC: the header only if there. */
	return svt_dial(c, deadline, 0, &gave_up);
}

/* ---- the request/reply exchange -------------------------------------------
 */

/*
 * svt_send makes sure c is connected and greeted, then writes frame
 * (n bytes) once. A connection that turns out closed before any byte of the
 * frame is written is replaced, until deadline.
 */
static sv_err
svt_send(svt_conn *c, const uint8_t *frame, size_t n, int64_t deadline)
{
	int    backoff = SVT_BACKOFF_MIN_MS;
	bool   gave_up;
	size_t sent;
	sv_err err;

	for (;;) {
		if (c->fd >= 0 && svt_hung_up(c)) {
			svt_close(c);
		}
		if (c->fd < 0
		    && (err = svt_dial(c, deadline, deadline, &gave_up))
		        != SV_OK) {
			if (gave_up) {
				char why[SVT_DETAIL_MAX];

				memcpy(why, c->detail, sizeof(why));
				return svt_fail(c, SV_ETIMEDOUT,
				    "no supervisor listening before the "
				    "deadline (%.200s)",
				    why);
			}
			return err;
		}
		if (!c->greeted && (err = svt_greet(c, deadline)) != SV_OK
		    && err != SV_ECLOSED) {
			return err;
		}
		if (c->greeted) {
			if (svt_passed(deadline)) {
				return svt_fail(c, SV_ETIMEDOUT,
				    "the deadline passed before the request "
				    "was sent");
			}
			err = svt_write(c, frame, n, deadline, &sent);
			if (err == SV_OK) {
				return SV_OK;
			}
			if (sent > 0 || err != SV_ECLOSED) {
				/* Cut in the middle of a frame. */
				svt_close(c);
				if (err == SV_ETIMEDOUT) {
					return svt_fail(c, SV_ETIMEDOUT,
					    "timed out sending the request");
				}
				return err;
			}
		}
		/* Closed before anything of the request left: the request
		 * was not delivered, so sending it on a new connection is
		 * safe for any request. */
		svt_close(c);
		if (svt_passed(deadline)) {
			return svt_fail(c, SV_ETIMEDOUT,
			    "the supervisor kept closing the connection until "
			    "the deadline");
		}
		svt_pause(backoff, deadline);
		backoff = backoff * 2 > SVT_BACKOFF_MAX_MS ? SVT_BACKOFF_MAX_MS
		                                           : backoff * 2;
	}
}

/* svt_skip reads and discards n bytes (the body of a stale reply). */
static sv_err
svt_skip(svt_conn *c, uint64_t n, int64_t deadline)
{
	uint8_t buf[SVT_SKIP_BUF];
	size_t  got;
	sv_err  err;

	while (n > 0) {
		size_t chunk = n > sizeof(buf) ? sizeof(buf) : (size_t) n;

		if ((err = svt_read(c, buf, chunk, deadline, &got)) != SV_OK) {
			return err;
		}
		n -= chunk;
	}
	return SV_OK;
}

/*
 * svt_recv reads frames until the reply to id. See svt_call for the
 * errors; a failure in the middle of a frame closes the connection.
 */
static sv_err
svt_recv(svt_conn *c, uint32_t id, size_t max_reply, int64_t deadline,
    void **replyp, size_t *lenp)
{
	uint8_t  h[SVT_FRAME_HDR + SVT_ID_LEN];
	uint64_t len;
	uint8_t *body;
	size_t   got;
	sv_err   err;

	for (;;) {
		err = svt_read(c, h, SVT_FRAME_HDR, deadline, &got);
		if (err == SV_ETIMEDOUT && got == 0) {
			/* Stream still aligned: keep the connection. */
			return svt_fail(c, SV_ETIMEDOUT,
			    "no reply from the supervisor before the "
			    "deadline");
		}
		if (err != SV_OK) {
			break;
		}
		len = svt_get64(h + 1);
		if (h[0] != SVT_MSG_TYPE) {
			err = svt_fail(c, SV_EPROTO,
			    "message of type %u (want %u)", h[0],
			    SVT_MSG_TYPE);
			break;
		}
		if (len < SVT_ID_LEN) {
			err = svt_fail(c, SV_EPROTO,
			    "reply of %llu bytes has no request id",
			    (unsigned long long) len);
			break;
		}
		if (len - SVT_ID_LEN > max_reply) {
			err = svt_fail(c, SV_ETOOLARGE,
			    "reply of %llu bytes exceeds the bound of %zu",
			    (unsigned long long) (len - SVT_ID_LEN),
			    max_reply);
			break;
		}
		len -= SVT_ID_LEN;
		err = svt_read(
		    c, h + SVT_FRAME_HDR, SVT_ID_LEN, deadline, &got);
		if (err != SV_OK) {
			break;
		}
		if (svt_get32(h + SVT_FRAME_HDR) != id) {
			/* A late reply to an earlier request: skip it. */
			if ((err = svt_skip(c, len, deadline)) != SV_OK) {
				break;
			}
			continue;
		}
		if ((body = malloc(len > 0 ? (size_t) len : 1)) == NULL) {
			err = svt_fail(c, SV_ENOMEM,
			    "no memory for a reply of %llu bytes",
			    (unsigned long long) len);
			break;
		}
		err = svt_read(c, body, (size_t) len, deadline, &got);
		if (err != SV_OK) {
			free(body);
			break;
		}
		*replyp = body;
		*lenp   = (size_t) len;
		return SV_OK;
	}
	svt_close(c);
	if (err == SV_ETIMEDOUT) {
		return svt_fail(c, SV_ETIMEDOUT,
		    "the deadline passed in the middle of a reply");
	}
	return err;
}

sv_err
svt_call(svt_conn *c, const void *req, size_t len, size_t max_reply,
    int64_t deadline, void **replyp, size_t *lenp)
{
	size_t   n = SVT_FRAME_HDR + SVT_ID_LEN + len;
	uint8_t *frame;
	uint32_t id;
	sv_err   err;

	if (len > SIZE_MAX - SVT_FRAME_HDR - SVT_ID_LEN) {
		return svt_fail(c, SV_ETOOLARGE, "request too large");
	}
	if ((frame = malloc(n)) == NULL) {
		return svt_fail(c, SV_ENOMEM, "no memory for the request");
	}
	/* Increasing ids; past 0xffffffff it wraps to 0x80000000. */
	id         = (c->last_id + 1) | SVT_ID_BIT;
	c->last_id = id;
	frame[0]   = SVT_MSG_TYPE;
	svt_put64(frame + 1, (uint64_t) len + SVT_ID_LEN);
	svt_put32(frame + SVT_FRAME_HDR, id);
	if (len > 0) {
		memcpy(frame + SVT_FRAME_HDR + SVT_ID_LEN, req, len);
	}
	err = svt_send(c, frame, n, deadline);
	free(frame);
	if (err != SV_OK) {
		return err;
	}
	return svt_recv(c, id, max_reply, deadline, replyp, lenp);
}

sv_err
svt_recv_raw(
    svt_conn *c, size_t max, int64_t deadline, void **msgp, size_t *lenp)
{
	uint8_t  h[SVT_FRAME_HDR];
	uint64_t len;
	uint8_t *body;
	size_t   got;
	sv_err   err;

	if (c->fd < 0 && (err = svt_connect(c, deadline)) != SV_OK) {
		return err;
	}
	if (!c->greeted && (err = svt_greet(c, deadline)) != SV_OK) {
		return err;
	}
	err = svt_read(c, h, SVT_FRAME_HDR, deadline, &got);
	if (err == SV_ETIMEDOUT && got == 0) {
		return svt_fail(
		    c, SV_ETIMEDOUT, "no message before the deadline");
	}
	if (err != SV_OK) {
		svt_close(c);
		return err;
	}
	len = svt_get64(h + 1);
	if (h[0] != SVT_MSG_TYPE || len > max) {
		svt_close(c);
		return svt_fail(c,
		    h[0] != SVT_MSG_TYPE ? SV_EPROTO : SV_ETOOLARGE,
		    "message of type %u and %llu bytes (bound %zu)", h[0],
		    (unsigned long long) len, max);
	}
	if ((body = malloc(len > 0 ? (size_t) len : 1)) == NULL) {
		svt_close(c);
		return svt_fail(c, SV_ENOMEM, "no memory for a message");
	}
	if ((err = svt_read(c, body, (size_t) len, deadline, &got)) != SV_OK) {
		free(body);
		svt_close(c);
		return err;
	}
	*msgp = body;
	*lenp = (size_t) len;
	return SV_OK;
}
