/*
 * server.c — the control socket (see server.h).
 *
 * Each context is a three-state machine driven by its aio callback:
 *   RECV  a request arrived: hand it to the loop thread      -> WAIT
 *   WAIT  the loop answered (srv_done): send the reply        -> SEND
 *   SEND  the reply left (or failed): receive the next request -> RECV
 * Callbacks run on nng's threads and never touch supervisor state: the
 * request goes through svd_sup_submit's queue. Shutdown follows nng's rule:
 * close the socket, stop every aio, then free them.
 *
 * One connection cannot stall the others (issue 6, item 4):
 *  - In flight per connection: a request is in flight from the moment a
 *    context receives it until its reply has been handed to the transport,
 *    and holds that context. A connection (nng pipe) may hold at most
 *    SRV_PIPE_INFLIGHT contexts; a request beyond that is dropped
 *    unanswered. The count is the number of contexts whose pipe field names
 *    the pipe: the "table" is the context array, bounded, no allocation.
 *  - Sends never wait on a slow reader: REP hands a reply to its pipe at
 *    once unless the pipe is still writing an earlier one (the peer does
 *    not read and the socket buffer is full). Each send carries a short aio
 *    timeout (SRV_SEND_TIMEOUT_MS; a context's NNG_OPT_SENDTIMEO is not
 *    used by nng 1.5.2 for an aio whose timeout is "infinite", the default
 *    of a fresh aio). On timeout the reply is dropped, the context freed,
 *    and the connection refused: every later request on it is dropped as it
 *    arrives, without reaching the loop, until the peer hangs up
 *    (NNG_PIPE_EV_REM_POST). Refused pipes are kept in a small table
 *    (SRV_REFUSED_MAX, oldest replaced first).
 *  - Why refuse rather than close: nng_pipe_close() on an ipc pipe whose
 *    peer is still writing races in nng 1.5.2 (ipc_pipe_recv_cb restarts
 *    the receive on an already stopped aio, whose completion then never
 *    comes): the pipe can never be reaped, nng's reaper thread blocks on it
 *    for good, no later pipe is freed and nng_close() hangs at exit. The
 *    slow-reader test triggered this every run. A refused connection costs
 *    one descriptor and one queued reply, like any idle connection.
 *  - Fair service: nng's REP queues pipes with a pending request in FIFO
 *    order and takes one request per pipe per turn; the loop answers in
 *    arrival order. One connection holds at most SRV_PIPE_INFLIGHT of the
 *    SRV_CONTEXTS contexts, so the others keep being served.
 * Refusals and drops are logged at most once per second, with a count of
 * the lines not logged, so a hostile peer cannot flood the log.
 *
 * Who is asking (issue 6, item 2): the kernel records the pid of the
 * process that connected, once, at connect(). If that process exits while
 * another keeps the connection (an inherited descriptor), its pid can be
 * reused, even by a worker. So when a pipe is added, a pidfd of its peer is
 * opened (the peer is then in the middle of the handshake, alive) and kept
 * in a table by pipe id; every request carries a duplicate of it to the
 * loop thread, which asks the pidfd whether the connecting process still
 * lives right before it answers. A connection is thus never answered for a
 * process that started after it was made (docs/protocol.md, section 6).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>

#include "accept_guard.h"
#include "leases.h"
#include "server.h"
#include "wire/wire.h"

/* Requests served concurrently: 16, plus one for each AcquireLease that
 * may wait for a slot (its reply is deferred, leases.h), so that waits
 * never take the contexts other requests need. */
#define SRV_CONTEXTS (16 + (int) SVD_LEASE_MAX_DEFERRED)
/* Requests one connection may have in flight; more are dropped. */
#define SRV_PIPE_INFLIGHT 2
/* A reply the pipe cannot take within this is dropped and the connection
 * refused. A reader that reads has its previous reply written at once. */
#define SRV_SEND_TIMEOUT_MS 20
/* Refused connections remembered at once. */
#define SRV_REFUSED_MAX 64
/* Connections whose peer's pidfd is kept (beyond: requests that need to
 * know the caller are answered as for an unknown process). */
#define SRV_PEERS_MAX 4096

static int srv_peer_dup(svd_server *srv, uint32_t id);

#define SRV_XSTR(x) #x
#define SRV_STR(x)  SRV_XSTR(x)

typedef struct srv_ctx {
	enum { SRV_RECV, SRV_WAIT, SRV_SEND } state;
	nng_aio    *aio;
	nng_ctx     ctx;
	svd_server *srv;
	uint32_t    pipe; /* pipe id of the request in flight, 0: none */
	uint64_t    pid; /* its peer pid (for the log) */
} srv_ctx;

struct svd_server {
	svd_sup        *sup;
	nng_socket      sock;
	nng_listener    l;
	svd_guard      *guard;
	int             mode; /* of the socket file: 0600, or 0666 */
	char            url[600];
	srv_ctx         ctxs[SRV_CONTEXTS];
	int             nctx;
	pthread_mutex_t mtx; /* guard, ctxs[].pipe, refused, the log limiter */
	uint32_t        refused[SRV_REFUSED_MAX]; /* pipe ids, 0: free */
	unsigned        refused_next; /* slot replaced next when full */
	int64_t         log_at; /* monotonic ms of the last line logged */
	unsigned long   unlogged; /* lines since then, not logged */
	struct {
		uint32_t pipe; /* 0: free */
		int      pidfd; /* of the process that connected */
	} peers[SRV_PEERS_MAX];
	size_t npeers; /* slots in use at the front, in any order */
};

/* srv_now_ms reads CLOCK_MONOTONIC in milliseconds. */
static int64_t
srv_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* srv_log_limited logs one line about pid's connection, at most one such
 * line per second (the others are counted). */
static void
srv_log_limited(svd_server *srv, uint64_t pid, const char *what)
{
	int64_t       now     = srv_now_ms();
	unsigned long skipped = 0;
	bool          log     = false;

	pthread_mutex_lock(&srv->mtx);
	if (now - srv->log_at >= 1000) {
		log           = true;
		skipped       = srv->unlogged;
		srv->unlogged = 0;
		srv->log_at   = now;
	} else {
		srv->unlogged++;
	}
	pthread_mutex_unlock(&srv->mtx);
	if (log) {
		svd_log("control connection of pid %llu: %s (%lu similar "
		        "lines not logged)",
		    (unsigned long long) pid, what, skipped);
	}
}

/* srv_refuse remembers pipe id as refused. */
static void
srv_refuse(svd_server *srv, uint32_t id)
{
	unsigned i;

	pthread_mutex_lock(&srv->mtx);
	for (i = 0; i < SRV_REFUSED_MAX; i++) {
		if (srv->refused[i] == id || srv->refused[i] == 0) {
			break;
		}
	}
	if (i == SRV_REFUSED_MAX) {
		i                 = srv->refused_next;
		srv->refused_next = (i + 1) % SRV_REFUSED_MAX;
	}
	srv->refused[i] = id;
	pthread_mutex_unlock(&srv->mtx);
}

/* srv_forget drops pipe id from the refused table (it is gone). */
static void
srv_forget(svd_server *srv, uint32_t id)
{
	pthread_mutex_lock(&srv->mtx);
	for (unsigned i = 0; i < SRV_REFUSED_MAX; i++) {
		if (srv->refused[i] == id) {
			srv->refused[i] = 0;
		}
	}
	pthread_mutex_unlock(&srv->mtx);
}

/* srv_recv arms the context for the next request (no timeout). */
static void
srv_recv(srv_ctx *c)
{
	c->state = SRV_RECV;
	nng_aio_set_timeout(c->aio, NNG_DURATION_INFINITE);
	nng_ctx_recv(c->ctx, c->aio);
}

/* srv_release ends the context's request: it no longer counts against its
 * pipe. */
static void
srv_release(srv_ctx *c)
{
	pthread_mutex_lock(&c->srv->mtx);
	c->pipe = 0;
	pthread_mutex_unlock(&c->srv->mtx);
}

/* srv_done sends the loop thread's reply (or drops the request). */
static void
srv_done(void *arg, nng_msg *rep)
{
	srv_ctx *c = arg;

	if (rep == NULL) {
		srv_release(c);
		srv_recv(c);
		return;
	}
	nng_aio_set_msg(c->aio, rep);
	c->state = SRV_SEND;
	nng_aio_set_timeout(c->aio, SRV_SEND_TIMEOUT_MS);
	nng_ctx_send(c->ctx, c->aio);
}

/* What srv_admit decided for a request. */
typedef enum { SRV_ADMIT, SRV_REFUSED, SRV_OVER_BOUND } srv_admission;

/* srv_admit decides on a request of pipe id: refused pipe, pipe at its
 * bound, or admitted (c now counts against the pipe). */
static srv_admission
srv_admit(svd_server *srv, srv_ctx *c, uint32_t id, uint64_t pid)
{
	srv_admission a = SRV_ADMIT;
	int           n = 0;

	pthread_mutex_lock(&srv->mtx);
	for (unsigned i = 0; i < SRV_REFUSED_MAX; i++) {
		if (srv->refused[i] == id) {
			a = SRV_REFUSED;
		}
	}
	for (int i = 0; i < srv->nctx; i++) {
		n += srv->ctxs[i].pipe == id;
	}
	if (a == SRV_ADMIT && n >= SRV_PIPE_INFLIGHT) {
		a = SRV_OVER_BOUND;
	}
	if (a == SRV_ADMIT) {
		c->pipe = id;
		c->pid  = pid;
	}
	pthread_mutex_unlock(&srv->mtx);
	return a;
}

/* srv_cb advances one context's state machine. */
static void
srv_cb(void *arg)
{
	srv_ctx      *c = arg;
	nng_msg      *req;
	nng_pipe      p;
	uint64_t      pid = 0, uid = UINT64_MAX;
	int           rv = nng_aio_result(c->aio);
	srv_admission a;

	if (c->state == SRV_SEND) {
		uint32_t id  = c->pipe;
		uint64_t who = c->pid;

		if (rv != 0) {
			nng_msg_free(nng_aio_get_msg(c->aio));
			nng_aio_set_msg(c->aio, NULL);
		}
		srv_release(c);
		if (rv == NNG_ECLOSED) {
			return;
		}
		if (rv == NNG_ETIMEDOUT) {
			srv_refuse(c->srv, id);
			srv_log_limited(c->srv, who,
			    "it does not read its replies; reply dropped, "
			    "connection refused until it hangs up");
		}
		srv_recv(c);
		return;
	}
	if (rv != 0) {
		if (rv != NNG_ECLOSED) {
			srv_recv(c);
		}
		return;
	}
	req = nng_aio_get_msg(c->aio);
	nng_aio_set_msg(c->aio, NULL);
	p = nng_msg_get_pipe(req);
	/* The kernel's view of the caller; unknown stays 0 / UINT64_MAX. */
	if (nng_pipe_get_uint64(p, NNG_OPT_IPC_PEER_PID, &pid) != 0) {
		pid = 0;
	}
	if (nng_pipe_get_uint64(p, NNG_OPT_IPC_PEER_UID, &uid) != 0) {
		uid = UINT64_MAX;
	}
	if ((a = srv_admit(c->srv, c, nng_pipe_id(p), pid)) != SRV_ADMIT) {
		nng_msg_free(req);
		if (a == SRV_OVER_BOUND) {
			srv_log_limited(c->srv, pid,
			    "more than " SRV_STR(
			        SRV_PIPE_INFLIGHT) " requests in flight; "
			                           "request dropped");
		}
		srv_recv(c);
		return;
	}
	c->state = SRV_WAIT;
	svd_sup_submit_pipe(c->srv->sup, req, pid, uid,
	    srv_peer_dup(c->srv, nng_pipe_id(p)), nng_pipe_id(p), srv_done, c);
}

/* srv_listen creates and starts the listener (mode srv->mode, bounded
 * requests). */
static int
srv_listen(svd_server *srv)
{
	int rv, mode;

	/* The mode may change after start (svd_server_set_mode). */
	pthread_mutex_lock(&srv->mtx);
	mode = srv->mode;
	pthread_mutex_unlock(&srv->mtx);
	if ((rv = nng_listener_create(&srv->l, srv->sock, srv->url)) != 0) {
		return rv;
	}
	if ((rv = nng_listener_set_size(
	         srv->l, NNG_OPT_RECVMAXSZ, SVW_MAX_REQUEST))
	        != 0
	    || (rv = nng_listener_set_int(
	            srv->l, NNG_OPT_IPC_PERMISSIONS, mode))
	        != 0
	    || (rv = nng_listener_start(srv->l, 0)) != 0) {
		nng_listener_close(srv->l);
	}
	return rv;
}

/* srv_relisten replaces a listener that stopped accepting (accept_guard). */
static bool
srv_relisten(void *arg)
{
	svd_server *srv = arg;
	int         rv;

	nng_listener_close(srv->l);
	if ((rv = srv_listen(srv)) != 0) {
		svd_log("cannot listen on %s: %s", srv->url, nng_strerror(rv));
		return false;
	}
	return true;
}

/* srv_peer_add keeps a pidfd of pipe p's peer (mutex held). */
static void
srv_peer_add(svd_server *srv, nng_pipe p)
{
	uint64_t pid = 0;
	int      fd;

	if (srv->npeers >= SRV_PEERS_MAX
	    || nng_pipe_get_uint64(p, NNG_OPT_IPC_PEER_PID, &pid) != 0
	    || pid == 0 || pid > INT32_MAX) {
		return;
	}
	/* The peer is in its handshake with us: alive, so this is it. */
	if ((fd = (int) syscall(SYS_pidfd_open, (pid_t) pid, 0)) < 0) {
		return;
	}
	srv->peers[srv->npeers].pipe  = nng_pipe_id(p);
	srv->peers[srv->npeers].pidfd = fd;
	srv->npeers++;
}

/* srv_peer_del closes the pidfd kept for pipe id (mutex held). */
static void
srv_peer_del(svd_server *srv, uint32_t id)
{
	for (size_t i = 0; i < srv->npeers; i++) {
		if (srv->peers[i].pipe == id) {
			close(srv->peers[i].pidfd);
			srv->peers[i] = srv->peers[--srv->npeers];
			return;
		}
	}
}

/* srv_peer_dup returns a duplicate of the pidfd kept for pipe id (the
 * caller owns it), or -1. */
static int
srv_peer_dup(svd_server *srv, uint32_t id)
{
	int fd = -1;

	pthread_mutex_lock(&srv->mtx);
	for (size_t i = 0; i < srv->npeers; i++) {
		if (srv->peers[i].pipe == id) {
			fd = fcntl(srv->peers[i].pidfd, F_DUPFD_CLOEXEC, 0);
			break;
		}
	}
	pthread_mutex_unlock(&srv->mtx);
	return fd;
}

/* srv_pipe_cb tells the accept guard about every accepted pipe, keeps its
 * peer's pidfd, and forgets both when the pipe is gone. It runs on nng's
 * pipe thread and must not close sockets or listeners. */
static void
srv_pipe_cb(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	svd_server *srv = arg;

	uint64_t pid = 0;

	if (nng_pipe_get_uint64(p, NNG_OPT_IPC_PEER_PID, &pid) != 0) {
		pid = 0;
	}
	if (ev == NNG_PIPE_EV_REM_POST) {
		srv_forget(srv, nng_pipe_id(p));
		pthread_mutex_lock(&srv->mtx);
		srv_peer_del(srv, nng_pipe_id(p));
		pthread_mutex_unlock(&srv->mtx);
		/* The lease shell's disconnect grace (leases.h). */
		svd_sup_pipe_event(srv->sup, nng_pipe_id(p), pid, false);
		return;
	}
	svd_sup_pipe_event(srv->sup, nng_pipe_id(p), pid, true);
	pthread_mutex_lock(&srv->mtx);
	srv_peer_add(srv, p);
	if (srv->guard != NULL) {
		svd_guard_accepted(srv->guard);
	}
	pthread_mutex_unlock(&srv->mtx);
}

sv_err
svd_server_start(svd_sup *sup, const char *url, svd_server **srvp,
    char *errbuf, size_t errlen)
{
	svd_server *srv;
	svd_guard  *guard = NULL;
	int         rv;

	if ((srv = calloc(1, sizeof(*srv))) == NULL) {
		snprintf(errbuf, errlen, "out of memory");
		return SV_ENOMEM;
	}
	srv->sup    = sup;
	srv->mode   = 0600;
	srv->log_at = INT64_MIN / 2;
	pthread_mutex_init(&srv->mtx, NULL);
	snprintf(srv->url, sizeof(srv->url), "%s", url);
	if ((rv = nng_rep0_open(&srv->sock)) != 0) {
		snprintf(errbuf, errlen, "cannot open socket: %s",
		    nng_strerror(rv));
		pthread_mutex_destroy(&srv->mtx);
		free(srv);
		return SV_ESYSTEM;
	}
	nng_pipe_notify(srv->sock, NNG_PIPE_EV_ADD_POST, srv_pipe_cb, srv);
	nng_pipe_notify(srv->sock, NNG_PIPE_EV_REM_POST, srv_pipe_cb, srv);
	if ((rv = srv_listen(srv)) != 0) {
		snprintf(errbuf, errlen, "cannot listen on %s: %s%s", url,
		    nng_strerror(rv),
		    rv == NNG_EADDRINUSE ? " (is another supervised running?)"
		                         : "");
		nng_close(srv->sock);
		pthread_mutex_destroy(&srv->mtx);
		free(srv);
		return rv == NNG_EADDRINUSE ? SV_EBUSY : SV_ESYSTEM;
	}
	for (int i = 0; i < SRV_CONTEXTS; i++) {
		srv_ctx *c = &srv->ctxs[i];
		c->srv     = srv;
		if ((rv = nng_aio_alloc(&c->aio, srv_cb, c)) != 0) {
			break;
		}
		if ((rv = nng_ctx_open(&c->ctx, srv->sock)) != 0) {
			nng_aio_free(c->aio);
			break;
		}
		srv->nctx++;
	}
	if (srv->nctx == SRV_CONTEXTS
	    && svd_guard_start(url, srv_relisten, srv, &guard) == SV_OK) {
		pthread_mutex_lock(&srv->mtx);
		srv->guard = guard;
		pthread_mutex_unlock(&srv->mtx);
	} else {
		snprintf(errbuf, errlen, "cannot start serving: %s",
		    rv != 0 ? nng_strerror(rv) : "no thread for the guard");
		svd_server_stop(srv);
		return SV_ENOMEM;
	}
	for (int i = 0; i < srv->nctx; i++) {
		srv_recv(&srv->ctxs[i]);
	}
	*srvp = srv;
	return SV_OK;
}

void
svd_server_stop(svd_server *srv)
{
	svd_guard *guard;

	if (srv == NULL) {
		return;
	}
	/* The guard first, so it cannot recreate the listener while we close.
	 */
	pthread_mutex_lock(&srv->mtx);
	guard      = srv->guard;
	srv->guard = NULL;
	pthread_mutex_unlock(&srv->mtx);
	svd_guard_stop(guard);
	nng_close(srv->sock);
	for (int i = 0; i < srv->nctx; i++) {
		nng_aio_stop(srv->ctxs[i].aio);
	}
	for (int i = 0; i < srv->nctx; i++) {
		nng_aio_free(srv->ctxs[i].aio);
	}
	for (size_t i = 0; i < srv->npeers; i++) {
		close(srv->peers[i].pidfd);
	}
	pthread_mutex_destroy(&srv->mtx);
	free(srv);
}

void
svd_server_set_mode(svd_server *srv, int mode)
{
	/* The accept guard may relisten at any time: under its lock. */
	pthread_mutex_lock(&srv->mtx);
	srv->mode = mode;
	pthread_mutex_unlock(&srv->mtx);
}
