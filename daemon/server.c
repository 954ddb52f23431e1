/*
 * server.c — the control socket (see server.h): SP REQ/REP over an AF_UNIX
 * stream, served on the supervisor's loop thread.
 *
 * Wire (what nng's ipc transport speaks, so any nng REQ socket and the
 * thread-free libsupervise client are served alike): after connect each
 * side sends the 8-byte SP header {0, 'S', 'P', 0, protocol (16 bits, big
 * endian), 0, 0}; ours says REP0 (0x31) and the peer's must say REQ0
 * (0x30). Then each message is one frame: a type byte (1), a 64-bit
 * big-endian length, and the message: the backtrace (4-byte words, the
 * last one, the request id, with its high bit set; more words when the
 * request went through nng devices, at most SRV_MAX_HOPS) and the body, an
 * Envelope. The reply is a frame with the same backtrace and the reply's
 * body. A request without a request id within SRV_MAX_HOPS words is
 * dropped, as nng's REP does. The listener and the two headers are shared
 * with the event socket (sp_listen.h).
 *
 * Why not nng's REP socket: every request crossed from an nng thread to
 * the loop thread and back (a queue, an eventfd wake-up, a pidfd
 * duplicated per request, a context switch each way), which made a lease
 * acquire + release cost more than two bare nng echoes; and nng 1.5.2 has
 * bugs on exactly the paths a hostile or slow peer takes (a listener that
 * stops accepting after a hang-up mid-handshake, #1518; a pipe closed
 * while its peer writes that can never be freed, so nng_close() hangs).
 * Serving the stream here makes each request one read of its header, one
 * of its body (in the same wake-up when it is there), the answer, and one
 * writev, with no thread hand-off.
 *
 * A connection is a small state machine driven by its epoll events:
 *   HELLO   our header sent, reading the peer's 8 bytes (bounded by
 *           SRV_HELLO_MS)                                     -> OPEN
 *   OPEN    reading frames; each whole frame is answered at once, one
 *           frame per readiness event, so every ready connection gets a
 *           turn in each loop iteration (fair service)
 *   BLOCKED a reply could not be written whole: the rest is kept and the
 *           connection is watched for writability only (no reading: a peer
 *           that does not read cannot make us queue more). Written within
 *           SRV_SEND_TIMEOUT_MS -> OPEN; else the connection is closed.
 * Bad headers, oversize frames (SVW_MAX_REQUEST plus the backtrace) and
 * read errors close the connection (the peer sees a hang-up, as with nng).
 *
 * A request whose answer is deferred (an AcquireLease that waits, leases.h)
 * holds one of the connection's SRV_PIPE_INFLIGHT slots until the lease
 * shell answers it; a request that arrives while every slot is taken is
 * dropped unanswered (the sender times out). When a connection goes, the
 * supervisor is told first (svd_sup_conn_event), which withdraws its
 * waiting acquires synchronously, so no answer can name a freed
 * connection. Connections are freed only from a zero-delay timer: the loop
 * runs timers after the whole batch of epoll events, one of which may still
 * name a connection another callback has just closed.
 *
 * Taking a connection (who the peer is, whether it is admitted, refusing
 * it with Error{EXHAUSTED}, closing it when idle) is server_accept.c's;
 * the structures both files share are in server_internal.h. A refused
 * connection runs the same state machine up to its first request, which
 * srv_request hands to srv_refuse instead of the supervisor.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <nng/nng.h>

#include "server_internal.h"

/* srv_log_limited logs one line about pid's connection, at most one such
 * line per second (the others are counted). */
void
srv_log_limited(svd_server *srv, uint64_t pid, const char *what)
{
	uint64_t now = sv_loop_now_ms();

	if (srv->log_at != 0 && now - srv->log_at < 1000) {
		srv->unlogged++;
		return;
	}
	svd_log("control connection of pid %llu: %s (%lu similar lines not "
	        "logged)",
	    (unsigned long long) pid, what, srv->unlogged);
	srv->unlogged = 0;
	srv->log_at   = now;
}

/* srv_reap_cb closes the doomed connections and frees the closed ones. */
static void
srv_reap_cb(sv_loop *loop, sv_timer *t)
{
	svd_server *srv = t->arg;
	srv_conn   *c, *next;

	(void) loop;
	for (c = srv->conns; c != NULL; c = next) {
		next = c->next;
		if (c->doomed) {
			srv_kill(c);
		}
	}
	for (c = srv->refusing; c != NULL; c = next) {
		next = c->next;
		if (c->doomed) {
			srv_kill(c);
		}
	}
	while ((c = srv->dead) != NULL) {
		srv->dead = c->next;
		free(c);
	}
}

/* srv_msg_free drops the frame being read. */
static void
srv_msg_free(srv_conn *c)
{
	if (c->msg != NULL && c->msg != c->inline_msg) {
		free(c->msg);
	}
	c->msg     = NULL;
	c->msg_len = c->msg_got = 0;
	c->hdr_got              = 0;
}

/* srv_kill closes connection c: the supervisor hears of it first (which
 * withdraws its deferred requests), then the descriptors go; the memory is
 * freed by the reap timer. */
void
srv_kill(srv_conn *c)
{
	svd_server *srv = c->srv;
	srv_conn  **pp;

	if (c->state == SRV_DEAD) {
		return;
	}
	if (c->state != SRV_HELLO && !c->refused && !srv->stopping) {
		svd_sup_conn_event(srv->sup, c->id, c->pid, false);
	}
	c->state = SRV_DEAD;
	sv_loop_timer_stop(srv->loop, &c->timer);
	sv_loop_del_io(srv->loop, &c->io);
	close(c->io.fd);
	c->io.fd = -1;
	if (c->pidfd >= 0) {
		close(c->pidfd);
		c->pidfd = -1;
	}
	srv_msg_free(c);
	free(c->out);
	c->out = NULL;
	for (pp = c->refused ? &srv->refusing : &srv->conns; *pp != NULL;
	     pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	if (c->refused) {
		srv->nrefusing--;
	} else {
		srv->nconns--;
	}
	c->next   = srv->dead;
	srv->dead = c;
	(void) sv_loop_timer_start(srv->loop, &srv->reap, 0);
}

/* srv_doom has c closed by the reap timer: srv_send may run inside the
 * lease shell (a deferred answer), which must not be re-entered by the
 * connection-gone notice that closing sends. */
void
srv_doom(srv_conn *c)
{
	c->doomed = true;
	(void) sv_loop_timer_start(c->srv->loop, &c->srv->reap, 0);
}

/* srv_watch sets the events c is watched for. */
static void
srv_watch(srv_conn *c, uint32_t events)
{
	(void) sv_loop_mod_io(c->srv->loop, &c->io, events);
}

/* srv_send writes one reply frame (backtrace bt, body of n bytes) to c. What
 * the socket does not take at once is kept, and c waits for writability. */
void
srv_send(
    srv_conn *c, const uint8_t *bt, size_t btlen, const void *body, size_t n)
{
	uint8_t      hdr[SVD_SP_FRAME_HDR];
	struct iovec iov[3];
	ssize_t      w;
	size_t       total = sizeof(hdr) + btlen + n, off;

	svd_sp_frame(hdr, btlen + n);
	if (c->state == SRV_BLOCKED) {
		w = 0; /* keep the order: append behind what waits */
	} else {
		iov[0] = (struct iovec) {hdr, sizeof(hdr)};
		iov[1] = (struct iovec) {(void *) bt, btlen};
		iov[2] = (struct iovec) {(void *) body, n};
		do {
			w = writev(c->io.fd, iov, 3);
		} while (w < 0 && errno == EINTR);
		if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
			srv_doom(c);
			return;
		}
		if (w < 0) {
			w = 0;
		}
		if ((size_t) w == total) {
			return;
		}
	}
	/* Keep the rest: [pending][hdr][bt][body] minus what was written. */
	{
		size_t   keep = c->out_len - c->out_off + total - (size_t) w;
		uint8_t *buf  = malloc(keep);
		size_t   at   = 0;
		if (buf == NULL) {
			srv_doom(c);
			return;
		}
		if (c->out != NULL) {
			memcpy(
			    buf, c->out + c->out_off, c->out_len - c->out_off);
			at = c->out_len - c->out_off;
			free(c->out);
		}
		off = (size_t) w;
		if (off < sizeof(hdr)) {
			memcpy(buf + at, hdr + off, sizeof(hdr) - off);
			at += sizeof(hdr) - off;
			off = 0;
		} else {
			off -= sizeof(hdr);
		}
		if (off < btlen) {
			memcpy(buf + at, bt + off, btlen - off);
			at += btlen - off;
			off = 0;
		} else {
			off -= btlen;
		}
		if (n > off) {
			memcpy(
			    buf + at, (const uint8_t *) body + off, n - off);
			at += n - off;
		}
		c->out     = buf;
		c->out_len = at;
		c->out_off = 0;
	}
	if (c->state != SRV_BLOCKED) {
		c->state = SRV_BLOCKED;
		srv_watch(c, EPOLLOUT);
		(void) sv_loop_timer_start(
		    c->srv->loop, &c->timer, SRV_SEND_TIMEOUT_MS);
	}
}

/* srv_flush writes what a BLOCKED connection keeps; done: OPEN again. */
static void
srv_flush(srv_conn *c)
{
	ssize_t w;

	do {
		w = write(
		    c->io.fd, c->out + c->out_off, c->out_len - c->out_off);
	} while (w < 0 && errno == EINTR);
	if (w < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			srv_kill(c);
		}
		return;
	}
	c->out_off += (size_t) w;
	if (c->out_off < c->out_len) {
		return;
	}
	free(c->out);
	c->out     = NULL;
	c->out_len = c->out_off = 0;
	c->state                = SRV_OPEN;
	sv_loop_timer_stop(c->srv->loop, &c->timer);
	srv_watch(c, EPOLLIN);
	srv_idle_arm(c);
}

/* srv_done is the supervisor's answer to the request in slot arg (NULL:
 * none; the request is dropped). Runs on the loop thread, at once or later
 * for a deferred request. */
static void
srv_done(void *arg, nng_msg *rep)
{
	srv_slot *sl = arg;
	srv_conn *c  = sl->c;

	sl->c = NULL;
	if (rep == NULL) {
		return;
	}
	if (c != NULL && c->state != SRV_DEAD && !c->doomed) {
		c->last_req = sv_loop_now_ms(); /* a deferred answer */
		srv_send(
		    c, sl->bt, sl->btlen, nng_msg_body(rep), nng_msg_len(rep));
	}
	nng_msg_free(rep);
}

/* srv_request answers the whole frame c has read. */
static void
srv_request(srv_conn *c)
{
	size_t    hops;
	srv_slot *sl = NULL;

	/* The backtrace ends at the first word with its high bit set. */
	for (hops = 0; hops < SRV_MAX_HOPS; hops++) {
		if (4 * (hops + 1) > c->msg_len) {
			return; /* no request id: dropped */
		}
		if ((c->msg[4 * hops] & 0x80u) != 0) {
			break;
		}
	}
	if (hops == SRV_MAX_HOPS) {
		return;
	}
	c->last_req = sv_loop_now_ms();
	if (c->refused) {
		srv_refuse(c, c->msg, 4 * (hops + 1), c->msg + 4 * (hops + 1),
		    c->msg_len - 4 * (hops + 1));
		return;
	}
	for (size_t i = 0; i < SRV_PIPE_INFLIGHT; i++) {
		if (c->slots[i].c == NULL) {
			sl = &c->slots[i];
			break;
		}
	}
	if (sl == NULL) {
		srv_log_limited(c->srv, c->pid,
		    "more than 2 requests in flight; request dropped");
		return;
	}
	sl->c     = c;
	sl->btlen = 4 * (hops + 1);
	memcpy(sl->bt, c->msg, sl->btlen);
	svd_sup_request(c->srv->sup, c->msg + sl->btlen,
	    c->msg_len - sl->btlen, c->pid, c->uid, c->pidfd, c->id, &c->memo,
	    srv_done, sl);
}

/* srv_read reads what is there (nonblocking) into buf; false when the
 * connection is to be closed. *got grows by what was read. */
static bool
srv_read(srv_conn *c, uint8_t *buf, size_t want, size_t *got)
{
	ssize_t r;

	do {
		r = read(c->io.fd, buf + *got, want - *got);
	} while (r < 0 && errno == EINTR);
	if (r == 0) {
		return false;
	}
	if (r < 0) {
		return errno == EAGAIN || errno == EWOULDBLOCK;
	}
	*got += (size_t) r;
	return true;
}

/* srv_readable advances c by at most one frame. */
static void
srv_readable(srv_conn *c)
{
	if (c->state == SRV_HELLO) {
		if (!srv_read(c, c->hello, sizeof(c->hello), &c->hello_got)) {
			srv_kill(c);
			return;
		}
		if (c->hello_got < sizeof(c->hello)) {
			return;
		}
		if (!svd_sp_hello_is(c->hello, SVD_SP_REQ0)) {
			srv_log_limited(c->srv, c->pid,
			    "not an SP REQ peer; connection closed");
			srv_kill(c);
			return;
		}
		c->state = SRV_OPEN;
		if (c->refused) {
			return; /* its timer (SRV_REFUSE_MS) still runs */
		}
		sv_loop_timer_stop(c->srv->loop, &c->timer);
		svd_sup_conn_event(c->srv->sup, c->id, c->pid, true);
		c->last_req = sv_loop_now_ms();
		srv_idle_arm(c);
		return;
	}
	if (c->hdr_got < sizeof(c->hdr)) {
		uint64_t len;
		bool     typed;
		if (!srv_read(c, c->hdr, sizeof(c->hdr), &c->hdr_got)) {
			srv_kill(c);
			return;
		}
		if (c->hdr_got < sizeof(c->hdr)) {
			return;
		}
		typed = svd_sp_frame_len(c->hdr, &len);
		if (!typed || len > SRV_MAX_FRAME) {
			srv_log_limited(c->srv, c->pid,
			    !typed ? "bad frame; connection closed"
			           : "request over 64 KiB; "
			             "connection closed");
			srv_kill(c);
			return;
		}
		c->msg_len = (size_t) len;
		c->msg_got = 0;
		c->msg     = len <= SRV_INLINE ? c->inline_msg : malloc(len);
		if (c->msg == NULL) {
			srv_kill(c);
			return;
		}
	}
	if (c->msg_got < c->msg_len
	    && !srv_read(c, c->msg, c->msg_len, &c->msg_got)) {
		srv_kill(c);
		return;
	}
	if (c->msg_got < c->msg_len) {
		return;
	}
	srv_request(c);
	srv_msg_free(c);
}

/* srv_conn_cb handles one connection's readiness. */
void
srv_conn_cb(sv_loop *loop, sv_io *io, uint32_t events)
{
	srv_conn *c = io->arg;

	(void) loop;
	if (c->state == SRV_DEAD || c->doomed) {
		return; /* closed (or to be) earlier in this batch */
	}
	if (c->state == SRV_BLOCKED) {
		if ((events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) != 0) {
			srv_flush(c);
		}
		return;
	}
	if ((events & (EPOLLIN | EPOLLERR | EPOLLHUP)) != 0) {
		srv_readable(c);
	}
}

/* srv_conn_timer_cb: the peer did not say hello, or did not take its
 * reply, in time; a refused connection did not send the request its
 * refusal answers in time; or an open connection may be idle. */
void
srv_conn_timer_cb(sv_loop *loop, sv_timer *t)
{
	srv_conn *c = t->arg;

	(void) loop;
	if (c->state == SRV_OPEN && !c->refused) {
		srv_idle_fired(c);
		return;
	}
	if (c->state == SRV_BLOCKED) {
		srv_log_limited(c->srv, c->pid,
		    "it does not read its replies; reply dropped, connection "
		    "closed");
	}
	srv_kill(c);
}

sv_err
svd_server_start(svd_sup *sup, const svd_config *cfg, const char *url,
    svd_server **srvp, char *errbuf, size_t errlen)
{
	svd_server   *srv;
	struct rlimit rl;
	uint64_t      nofile = 0;
	sv_err        err;

	if ((srv = calloc(1, sizeof(*srv))) == NULL) {
		snprintf(errbuf, errlen, "out of memory");
		return SV_ENOMEM;
	}
	srv->sup  = sup;
	srv->loop = svd_sup_loop(sup);
	/* The cap is a quarter of the descriptors: the rest is for
	 * workers' pidfds, activity regions, sockets and the journal. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0
	    && rl.rlim_cur != RLIM_INFINITY) {
		nofile = (uint64_t) rl.rlim_cur;
	}
	srv->limits   = svd_admit_limits_for(nofile,
            cfg != NULL ? cfg->conns_per_process : 0,
            cfg != NULL ? cfg->conns_per_uid : 0);
	srv->idle_ms  = cfg != NULL ? cfg->conn_idle_ms : SVD_CONN_IDLE_MS;
	srv->self_uid = (uint64_t) geteuid();
	sv_timer_init(&srv->reap, srv_reap_cb, srv);
	if ((err = svd_sp_listen(&srv->lst, srv->loop, url, "control",
	         srv_accept, srv, errbuf, errlen))
	    != SV_OK) {
		free(srv);
		return err;
	}
	*srvp = srv;
	return SV_OK;
}

void
svd_server_stop(svd_server *srv)
{
	if (srv == NULL) {
		return;
	}
	svd_sp_unlisten(&srv->lst);
	srv->stopping = true;
	while (srv->conns != NULL) {
		srv_kill(srv->conns);
	}
	while (srv->refusing != NULL) {
		srv_kill(srv->refusing);
	}
	sv_loop_timer_stop(srv->loop, &srv->reap);
	srv_reap_cb(srv->loop, &srv->reap);
	free(srv);
}
