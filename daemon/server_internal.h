/*
 * server_internal.h — what the two halves of the control socket share:
 * server.c (a connection's state machine: reading frames, answering,
 * writing replies, closing) and server_accept.c (taking a connection:
 * who the peer is, whether it is admitted (conn_admit.h), refusing it with
 * a typed Error, and closing it when idle). Internal to the server.
 */
#ifndef SVD_SERVER_INTERNAL_H
#define SVD_SERVER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conn_admit.h"
#include "core/pidmap.h"
#include "server.h"
#include "shell/loop.h"
#include "sp_listen.h"
#include "wire/wire.h"

/* Requests one connection may have waiting for a deferred answer. */
#define SRV_PIPE_INFLIGHT 2
/* A reply the connection cannot take within this closes it. */
#define SRV_SEND_TIMEOUT_MS 20
/* The peer's SP header must come within this after accept. */
#define SRV_HELLO_MS 5000
/* A refused connection gets this long to send the request its refusal
 * answers; then it is closed. */
#define SRV_REFUSE_MS 1000
/* Refused connections kept at once to be answered; more are closed at
 * once (the peer sees a hang-up). */
#define SRV_REFUSING_MAX 32
/* Backtrace words before the request id (nng's default TTL is 8). */
#define SRV_MAX_HOPS 8
/* Largest frame taken, backtrace included (as nng's NNG_OPT_RECVMAXSZ
 * counted it: the largest Envelope is 65,532 bytes, docs/protocol.md). */
#define SRV_MAX_FRAME SVW_MAX_REQUEST
/* Frames up to this size are read into the connection itself. */
#define SRV_INLINE 256
/* Longest refusal message. */
#define SRV_REFUSAL_MAX 200

typedef struct srv_conn srv_conn;

/* One request waiting for a deferred answer. */
typedef struct srv_slot {
	srv_conn *c; /* NULL: free */
	uint8_t   bt[4 * SRV_MAX_HOPS]; /* its backtrace */
	size_t    btlen;
} srv_slot;

struct srv_conn {
	sv_io       io;
	sv_timer    timer; /* HELLO bound, BLOCKED bound, or idle bound */
	svd_server *srv;
	srv_conn   *next; /* in srv->conns, srv->refusing, or srv->dead */
	uint32_t    id; /* never 0 */
	enum { SRV_HELLO, SRV_OPEN, SRV_BLOCKED, SRV_DEAD } state;
	bool          doomed; /* to be closed by the reap timer */
	bool          refused; /* answered EXHAUSTED, then closed */
	bool          worker; /* the peer is a live worker or descends */
	sv_wkey       wkey; /* that worker, when worker */
	int           pidfd; /* of the connecting process, -1: none */
	uint64_t      pid, uid;
	uint64_t      last_req; /* loop ms of the last whole request */
	uint8_t       hello[SVD_SP_HELLO_LEN];
	size_t        hello_got;
	uint8_t       hdr[SVD_SP_FRAME_HDR]; /* frame header being read */
	size_t        hdr_got;
	uint8_t      *msg; /* frame being read: inline or malloc'd */
	size_t        msg_len, msg_got;
	uint8_t       inline_msg[SRV_INLINE];
	uint8_t      *out; /* unwritten rest of a reply (malloc'd) */
	size_t        out_len, out_off;
	srv_slot      slots[SRV_PIPE_INFLIGHT];
	svd_peer_memo memo; /* the supervisor's, about the peer */
	char          refusal[SRV_REFUSAL_MAX]; /* when refused: why */
};

struct svd_server {
	svd_sup        *sup;
	sv_loop        *loop;
	svd_sp_listener lst; /* the listening socket (sp_listen.h) */
	sv_timer        reap; /* frees dead connections */
	srv_conn       *conns; /* admitted */
	srv_conn       *refusing; /* refused, waiting to be answered */
	srv_conn       *dead;
	size_t          nconns, nrefusing;
	uint32_t        next_id;
	bool            stopping; /* svd_server_stop: the supervisor is done */
	uint64_t        self_uid; /* the daemon's uid: privileged */
	uint64_t        idle_ms; /* connection_idle_timeout_ms; 0: never */
	svd_admit_limits limits;
	uint64_t         log_at; /* loop ms of the last line logged */
	unsigned long    unlogged; /* lines since then, not logged */
};

/* srv_conn_cb handles one connection's readiness (server.c). */
void srv_conn_cb(sv_loop *loop, sv_io *io, uint32_t events);

/* srv_conn_timer_cb: a connection's timer fired (server.c). */
void srv_conn_timer_cb(sv_loop *loop, sv_timer *t);

/* srv_log_limited logs one line about pid's connection, at most one such
 * line per second (server.c). */
void srv_log_limited(svd_server *srv, uint64_t pid, const char *what);

/* srv_kill closes connection c at once (server.c). */
void srv_kill(srv_conn *c);

/* srv_doom has c closed by the reap timer (server.c). */
void srv_doom(srv_conn *c);

/* srv_send writes one reply frame to c (server.c). */
void srv_send(
    srv_conn *c, const uint8_t *bt, size_t btlen, const void *body, size_t n);

/* srv_accept takes a connection the listener accepted: admits it, or
 * keeps it to be refused (server_accept.c). */
void srv_accept(void *arg, int fd);

/* srv_refuse answers the whole frame a refused connection c has read (its
 * first request) with Error{EXHAUSTED} and has c closed
 * (server_accept.c). bt is the frame's backtrace (btlen bytes), body the
 * Envelope after it. */
void srv_refuse(srv_conn *c, const uint8_t *bt, size_t btlen,
    const uint8_t *body, size_t n);

/* srv_idle_arm arms c's idle bound, when c is subject to one: a
 * non-worker's OPEN connection (server_accept.c). */
void srv_idle_arm(srv_conn *c);

/* srv_idle_fired decides, for c's timer firing while c is OPEN, whether c
 * is idle (then closes it) or re-arms the bound (server_accept.c). */
void srv_idle_fired(srv_conn *c);

#endif /* SVD_SERVER_INTERNAL_H */
