/*
 * sp_listen.h — an SP listener over ipc:// served on the loop, shared by
 * the control socket (server.c, REP0) and the event socket (events.c,
 * PUB0); plus the two headers of nng's ipc wire that both write.
 *
 * The wire (what nng's ipc transport speaks): after connect each side
 * sends the 8-byte connection header {0, 'S', 'P', 0, protocol id (16
 * bits, big endian), 0, 0}; then every message is one frame: a type byte
 * (1), a 64-bit big-endian length, and that many bytes.
 *
 * A listener binds PATH with mode 0600 (a socket file nobody accepts on is
 * replaced; one that answers means another server: SV_EBUSY), accepts in
 * batches when the loop says it is readable, and hands each new
 * connection (non-blocking, close-on-exec) to its owner's callback. Out of
 * descriptors, it gives up a spare descriptor (/dev/null, opened at
 * listen) to accept each waiting connection and close it at once, so the
 * peer hears a hang-up and the listener never spins on a backlog it cannot
 * take; without a spare it stops watching for SVD_SP_EMFILE_MS. Either is
 * logged (at most one line a second). No thread, no allocation after
 * start.
 */
#ifndef SVD_SP_LISTEN_H
#define SVD_SP_LISTEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/un.h>

#include "shell/loop.h"
#include "supervise/supervise.h"

#define SVD_SP_PUB0 0x20 /* the event socket */
#define SVD_SP_SUB0 0x21 /* its peers */
#define SVD_SP_REQ0 0x30 /* peers of the control socket */
#define SVD_SP_REP0 0x31 /* the control socket */

#define SVD_SP_HELLO_LEN 8 /* connection header */
#define SVD_SP_FRAME_HDR 9 /* frame header: type byte + 64-bit length */

/* Connections accepted per readiness event of a listener. */
#define SVD_SP_ACCEPT_BATCH 64
/* Back-off of a listener when the process is out of descriptors. */
#define SVD_SP_EMFILE_MS 100

/* svd_sp_accept_fn takes a new connection fd (its owner from now on). */
typedef void (*svd_sp_accept_fn)(void *arg, int fd);

/* A listener; plain data embedded in its owner. */
typedef struct svd_sp_listener {
	sv_loop         *loop;
	int              fd; /* listening socket, -1: none */
	int              spare; /* /dev/null kept for EMFILE, -1: none */
	sv_io            io;
	bool             watched; /* io is in the loop */
	sv_timer         backoff; /* EMFILE back-off */
	char             path[sizeof(((struct sockaddr_un *) 0)->sun_path)];
	const char      *what; /* "control", "event": for the log */
	svd_sp_accept_fn accept;
	void            *arg;
	uint64_t         log_at; /* loop ms of the last line logged */
	unsigned long    unlogged; /* lines since then, not logged */
} svd_sp_listener;

/*
 * svd_sp_listen binds url (ipc://PATH, PATH under 108 bytes) with mode
 * 0600, listens, and watches it on loop; each accepted connection goes to
 * fn(arg, fd). what names the socket in log lines (a string that outlives
 * l). On error errbuf holds one line and l listens on nothing. Errors:
 * SV_EINVAL (not an ipc:// URL, or a path too long), SV_EBUSY (another
 * server listens on url), SV_ESYSTEM.
 */
sv_err svd_sp_listen(svd_sp_listener *l, sv_loop *loop, const char *url,
    const char *what, svd_sp_accept_fn fn, void *arg, char *errbuf,
    size_t errlen);

/* svd_sp_unlisten stops watching, closes the socket and removes its file.
 * A listener that listens on nothing is left as it is. */
void svd_sp_unlisten(svd_sp_listener *l);

/* svd_sp_log logs "WHAT socket: what" for l, at most one line a second
 * (the others are counted, and the count is given with the next line). */
void svd_sp_log(svd_sp_listener *l, const char *what);

/* svd_sp_hello writes the connection header of protocol proto into out. */
void svd_sp_hello(uint8_t out[SVD_SP_HELLO_LEN], uint16_t proto);

/* svd_sp_hello_is tells whether in is the connection header of proto. */
bool svd_sp_hello_is(const uint8_t in[SVD_SP_HELLO_LEN], uint16_t proto);

/* svd_sp_frame writes the header of a frame of len bytes into out. */
void svd_sp_frame(uint8_t out[SVD_SP_FRAME_HDR], uint64_t len);

/* svd_sp_frame_len reads a frame header: false when its type is not 1,
 * else true with the length in *lenp. */
bool svd_sp_frame_len(const uint8_t in[SVD_SP_FRAME_HDR], uint64_t *lenp);

#endif /* SVD_SP_LISTEN_H */
