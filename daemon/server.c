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
 */
#include <stdio.h>
#include <stdlib.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>

#include "accept_guard.h"
#include "server.h"
#include "wire/wire.h"

/* Requests served concurrently. */
#define SRV_CONTEXTS 8
/* A reply that cannot be handed to the transport within this is dropped. */
#define SRV_SEND_TIMEOUT_MS 1000

typedef struct srv_ctx {
	enum { SRV_RECV, SRV_WAIT, SRV_SEND } state;
	nng_aio    *aio;
	nng_ctx     ctx;
	svd_server *srv;
} srv_ctx;

struct svd_server {
	svd_sup     *sup;
	nng_socket   sock;
	nng_listener l;
	svd_guard   *guard;
	char         url[600];
	srv_ctx      ctxs[SRV_CONTEXTS];
	int          nctx;
};

/* srv_done sends the loop thread's reply (or drops the request). */
static void
srv_done(void *arg, nng_msg *rep)
{
	srv_ctx *c = arg;

	if (rep == NULL) {
		c->state = SRV_RECV;
		nng_ctx_recv(c->ctx, c->aio);
		return;
	}
	nng_aio_set_msg(c->aio, rep);
	c->state = SRV_SEND;
	nng_ctx_send(c->ctx, c->aio);
}

/* srv_cb advances one context's state machine. */
static void
srv_cb(void *arg)
{
	srv_ctx *c = arg;
	nng_msg *req;
	nng_pipe p;
	uint64_t pid = 0, uid = UINT64_MAX;
	int      rv = nng_aio_result(c->aio);

	if (c->state == SRV_SEND) {
		if (rv != 0) {
			nng_msg_free(nng_aio_get_msg(c->aio));
		}
		if (rv == NNG_ECLOSED) {
			return;
		}
		c->state = SRV_RECV;
		nng_ctx_recv(c->ctx, c->aio);
		return;
	}
	if (rv != 0) {
		if (rv != NNG_ECLOSED) {
			nng_ctx_recv(c->ctx, c->aio);
		}
		return;
	}
	req = nng_aio_get_msg(c->aio);
	p   = nng_msg_get_pipe(req);
	/* The kernel's view of the caller; unknown stays 0 / UINT64_MAX. */
	if (nng_pipe_get_uint64(p, NNG_OPT_IPC_PEER_PID, &pid) != 0) {
		pid = 0;
	}
	if (nng_pipe_get_uint64(p, NNG_OPT_IPC_PEER_UID, &uid) != 0) {
		uid = UINT64_MAX;
	}
	c->state = SRV_WAIT;
	svd_sup_submit(c->srv->sup, req, pid, uid, srv_done, c);
}

/* srv_listen creates and starts the listener (0600, bounded requests). */
static int
srv_listen(svd_server *srv)
{
	int rv;

	if ((rv = nng_listener_create(&srv->l, srv->sock, srv->url)) != 0) {
		return rv;
	}
	if ((rv = nng_listener_set_size(
	         srv->l, NNG_OPT_RECVMAXSZ, SVW_MAX_REQUEST))
	        != 0
	    || (rv = nng_listener_set_int(
	            srv->l, NNG_OPT_IPC_PERMISSIONS, 0600))
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

/* srv_pipe_cb tells the accept guard about every accepted pipe. It runs on
 * nng's pipe thread and must not close sockets or listeners. */
static void
srv_pipe_cb(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	svd_server *srv = arg;

	(void) p;
	if (ev == NNG_PIPE_EV_ADD_POST && srv->guard != NULL) {
		svd_guard_accepted(srv->guard);
	}
}

sv_err
svd_server_start(svd_sup *sup, const char *url, svd_server **srvp,
    char *errbuf, size_t errlen)
{
	svd_server *srv;
	int         rv;

	if ((srv = calloc(1, sizeof(*srv))) == NULL) {
		snprintf(errbuf, errlen, "out of memory");
		return SV_ENOMEM;
	}
	srv->sup = sup;
	snprintf(srv->url, sizeof(srv->url), "%s", url);
	if ((rv = nng_rep0_open(&srv->sock)) != 0) {
		snprintf(errbuf, errlen, "cannot open socket: %s",
		    nng_strerror(rv));
		free(srv);
		return SV_ESYSTEM;
	}
	nng_pipe_notify(srv->sock, NNG_PIPE_EV_ADD_POST, srv_pipe_cb, srv);
	if ((rv = srv_listen(srv)) != 0) {
		snprintf(errbuf, errlen, "cannot listen on %s: %s%s", url,
		    nng_strerror(rv),
		    rv == NNG_EADDRINUSE ? " (is another supervised running?)"
		                         : "");
		nng_close(srv->sock);
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
		nng_ctx_set_ms(c->ctx, NNG_OPT_SENDTIMEO, SRV_SEND_TIMEOUT_MS);
		srv->nctx++;
	}
	if (srv->nctx < SRV_CONTEXTS
	    || svd_guard_start(url, srv_relisten, srv, &srv->guard) != SV_OK) {
		snprintf(errbuf, errlen, "cannot start serving: %s",
		    rv != 0 ? nng_strerror(rv) : "no thread for the guard");
		svd_server_stop(srv);
		return SV_ENOMEM;
	}
	for (int i = 0; i < srv->nctx; i++) {
		srv->ctxs[i].state = SRV_RECV;
		nng_ctx_recv(srv->ctxs[i].ctx, srv->ctxs[i].aio);
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
	/* The guard first, so it cannot recreate the listener while we close.
	 */
	svd_guard_stop(srv->guard);
	srv->guard = NULL;
	nng_close(srv->sock);
	for (int i = 0; i < srv->nctx; i++) {
		nng_aio_stop(srv->ctxs[i].aio);
	}
	for (int i = 0; i < srv->nctx; i++) {
		nng_aio_free(srv->ctxs[i].aio);
	}
	free(srv);
}
