/*
 * transport.h — one SP REQ connection over a UNIX stream socket, with
 * deadlines (internal to the client library).
 *
 * The supervisor listens with an nng REP socket on ipc://PATH. This module
 * speaks the same wire protocol (SP "req0" over the ipc transport) directly
 * on an AF_UNIX socket, without nng: no threads, no global state, nothing
 * that breaks in a child after fork(). Wire format (nng 1.5.2, read from
 * src/sp/transport/ipc/ipc.c and src/sp/protocol/reqrep0/):
 *
 *   connection header, each side sends 8 bytes, then reads the peer's:
 *       0x00 'S' 'P' 0x00, protocol id (16-bit big-endian), 0x00 0x00
 *       (REQ0 is 0x0030, REP0 is 0x0031)
 *   every message: 1 type byte (1), 64-bit big-endian length of what
 *       follows, then the SP header and the body. A REQ0 request's header
 *       is its 32-bit big-endian request id with the high bit set; REP0
 *       answers with the same 4 bytes in front of the reply body.
 *
 * Every blocking function takes an absolute deadline in CLOCK_MONOTONIC
 * milliseconds (svt_deadline); a negative deadline waits forever. A
 * connection serves one request at a time: the caller serialises calls.
 * Every descriptor is close-on-exec and no write raises SIGPIPE.
 */
#ifndef SV_CLIENT_TRANSPORT_H
#define SV_CLIENT_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "supervise/supervise.h"

#define SVT_PATH_MAX   108 /* sizeof(((struct sockaddr_un *) 0)->sun_path) */
#define SVT_DETAIL_MAX 256
#define SVT_REQ0       0x30 /* SP protocol id of REQ v0 (us) */
#define SVT_REP0       0x31 /* SP protocol id of REP v0 (the supervisor) */
#define SVT_SUB0       0x21 /* SP protocol id of SUB v0 (an event reader) */
#define SVT_PUB0       0x20 /* SP protocol id of PUB v0 (the event socket) */
#define SVT_ID_BIT     0x80000000u /* set in every request id */
#define SVT_ID_LEN                                        \
	4 /* REQ0 header (the request id), counted in the \
	   * frame length the peer bounds */
#define SVT_BACKOFF_MIN_MS 2 /* first pause between connection attempts */
#define SVT_BACKOFF_MAX_MS 64 /* longest pause between connection attempts */

/* One connection to the supervisor. Plain data: the caller owns it. */
typedef struct svt_conn {
	int      fd; /* connected socket, -1 when there is none */
	bool     greeted; /* the peer's connection header was read and valid */
	dev_t    dev; /* identity of fd's socket (fstat), so that svt_forget */
	ino_t    ino; /* never closes a descriptor that was reused */
	uint32_t last_id; /* request id of the last request, high bit set */
	uint16_t self_proto; /* SP protocol we speak (svt_init: REQ0) */
	uint16_t peer_proto; /* SP protocol the peer must speak (REP0) */
	char     path[SVT_PATH_MAX]; /* the socket file */
	char     detail[SVT_DETAIL_MAX]; /* why the last operation failed */
} svt_conn;

/* svt_now_ms reads CLOCK_MONOTONIC in milliseconds. */
int64_t svt_now_ms(void);

/* svt_deadline turns a relative timeout (negative: none) into an absolute
 * deadline for the functions below (-1: none). */
int64_t svt_deadline(int timeout_ms);

/*
 * svt_init prepares c for url, "ipc://PATH" with a non-empty PATH that fits
 * a UNIX socket address. It connects nothing. The first request id is
 * random. Errors: SV_EINVAL (other scheme, empty or too long path; the
 * reason is in c->detail).
 */
sv_err svt_init(svt_conn *c, const char *url);

/*
 * svt_connect connects c (which must have no connection) and exchanges
 * connection headers. While nobody listens (no socket file, connection
 * refused, full backlog) or the peer hangs up before its header, it tries
 * again after a pause growing from SVT_BACKOFF_MIN_MS to SVT_BACKOFF_MAX_MS
 * until deadline; a deadline already past allows exactly one attempt. The
 * peer's header is awaited until deadline; if it has not come by then, the
 * connection is kept (hanging up would trip nng#1518 in a supervisor
 * built on nng's REP socket) and svt_call finishes the exchange under its own
 * deadline. Errors (c->detail says why; c then has no connection): SV_ECONNECT
 * (nobody listening before the deadline, or the socket cannot be reached),
 * SV_EPROTO (the peer is not an SP REP socket), SV_ENOMEM, SV_ESYSTEM.
 */
sv_err svt_connect(svt_conn *c, int64_t deadline);

/*
 * svt_connect_nowait is svt_connect without waiting for the peer's header:
 * once connected (retrying while nobody listens, until deadline) it reads
 * the header only if it is already there, and leaves the rest of the
 * exchange to svt_call, under the call's own deadline. So a connection
 * followed by a call, each given the same timeout, is not bounded by twice
 * that timeout when the peer accepts and does not answer (a stopped
 * supervisor). Errors as svt_connect (SV_EPROTO only for a header that
 * was already there).
 */
sv_err svt_connect_nowait(svt_conn *c, int64_t deadline);

/*
 * svt_call sends the request body req (len bytes) and waits for its reply,
 * connecting first (as svt_connect) when c has no connection. A connection
 * found closed before anything of the request was written is replaced at
 * once, so a request is sent at most once per call. Replies to other
 * request ids (late answers to an earlier call) are read and skipped. On
 * SV_OK *replyp (*lenp bytes, at most max_reply) belongs to the caller, who
 * frees it with free(). Errors (c->detail says why; *replyp untouched):
 *   SV_ETIMEDOUT  deadline passed (also while nobody was listening)
 *   SV_ECLOSED    the connection was lost after the request was written:
 *                 the supervisor may or may not have received it
 *   SV_ETOOLARGE  a reply longer than max_reply (nothing is allocated)
 *   SV_EPROTO     the peer broke the SP protocol
 *   SV_ECONNECT, SV_ENOMEM, SV_ESYSTEM
 * After any error but SV_ETIMEDOUT before the reply began, the connection
 * is closed and the next call reconnects.
 */
sv_err svt_call(svt_conn *c, const void *req, size_t len, size_t max_reply,
    int64_t deadline, void **replyp, size_t *lenp);

/*
 * svt_recv_raw reads one message of a protocol without a header (a PUB
 * socket's, after svt_init and setting self_proto/peer_proto to SUB0 and
 * PUB0), connecting first when c has no connection. On SV_OK *msgp (*lenp
 * bytes, at most max) belongs to the caller (free()). Errors as svt_call;
 * SV_ETIMEDOUT with nothing read keeps the connection.
 */
sv_err svt_recv_raw(
    svt_conn *c, size_t max, int64_t deadline, void **msgp, size_t *lenp);

/* svt_close closes c's connection, if any; c can connect again. */
void svt_close(svt_conn *c);

/*
 * svt_forget drops a connection inherited through fork(): it closes the
 * descriptor only if it still refers to the socket svt_connect opened (the
 * process may have closed it and reused the number), which leaves the
 * parent's connection (another reference to the same socket) untouched.
 * It never writes to the socket. c can connect again.
 */
void svt_forget(svt_conn *c);

#endif /* SV_CLIENT_TRANSPORT_H */
