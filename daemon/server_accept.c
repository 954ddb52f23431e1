/*
 * server_accept.c — taking a control connection (see server_internal.h):
 * who the peer is, whether it is admitted, refusing it, and closing it
 * when idle.
 *
 * Who is asking (issue 6, item 2): SO_PEERCRED gives the pid and uid of the
 * process that connected; a pidfd of that very process comes from
 * SO_PEERPIDFD (Linux 6.5) or, on older kernels, from pidfd_open() at
 * accept. Before each answer the supervisor asks the pidfd whether that
 * process still lives, so a connection is never answered for a process
 * that started after it was made (docs/protocol.md, section 6). Whether
 * the peer is a live worker, or descends from one, is asked of the
 * supervisor's pid table at accept (the walk is remembered for the
 * connection's requests).
 *
 * Admission (conn_admit.h decides): the counts it needs (all connections,
 * those of the peer's process — a worker's whole tree —, those of its
 * uid) come from one pass over the admitted connections, at most
 * SVD_ADMIT_CAP_MAX of them, at each accept. A refused connection is not
 * cut at once: it gets our header, and its first request is answered with
 * Error{EXHAUSTED} and a message saying which bound it met; then it is
 * closed (within SRV_REFUSE_MS in any case). At most SRV_REFUSING_MAX
 * refused connections wait for their answer; past that a refused one is
 * closed at once (a flood gets hang-ups, not descriptors).
 *
 * Idle: an admitted connection of a peer that is not a worker, with no
 * request waiting for a deferred answer and no whole request received for
 * connection_idle_timeout_ms, is closed. The bound is checked when its
 * timer fires (armed once per idle period, not per request). Workers'
 * connections are never closed for idleness: leases held by a worker
 * follow its connections (docs/leases.md), and connections_per_process
 * bounds them already.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <nng/nng.h>

#include "server_internal.h"
#include "wire/wire_msg.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

/* srv_peer fills c's pid, uid and pidfd from the kernel. */
static void
srv_peer(srv_conn *c)
{
	struct ucred cr;
	socklen_t    len = sizeof(cr);
	int          fd  = -1;

	c->pid   = 0;
	c->uid   = UINT64_MAX;
	c->pidfd = -1;
	if (getsockopt(c->io.fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0
	    || cr.pid <= 0) {
		return;
	}
	c->pid = (uint64_t) cr.pid;
	c->uid = (uint64_t) cr.uid;
	len    = sizeof(fd);
	if (getsockopt(c->io.fd, SOL_SOCKET, SO_PEERPIDFD, &fd, &len) == 0
	    && fd >= 0) {
		c->pidfd = fd;
		return;
	}
	/* Older kernels: the connecting process, if it still runs now. */
	c->pidfd = (int) syscall(SYS_pidfd_open, cr.pid, 0);
}

/* srv_same_process tells whether a and b count as one process for the
 * per-process bound: the same worker (with its tree), or the same pid. */
static bool
srv_same_process(const srv_conn *a, const srv_conn *b)
{
	if (a->worker || b->worker) {
		return a->worker && b->worker
		    && a->wkey.group_id == b->wkey.group_id
		    && a->wkey.ordinal == b->wkey.ordinal
		    && a->wkey.generation == b->wkey.generation;
	}
	return a->pid != 0 && a->pid == b->pid;
}

/* srv_admit decides for the new connection c (not yet in any list); on
 * refusal c->refusal says why. */
static svd_admit_verdict
srv_admit(svd_server *srv, srv_conn *c)
{
	const svd_admit_limits *l = &srv->limits;
	svd_admit_counts        n = {0, 0, 0};
	svd_admit_peer          p;
	svd_admit_verdict       v;

	p.privileged = c->uid == 0 || c->uid == srv->self_uid;
	p.worker     = c->worker;
	for (const srv_conn *o = srv->conns; o != NULL; o = o->next) {
		n.total++;
		if (srv_same_process(o, c)) {
			n.process++;
		}
		if (o->uid == c->uid) {
			n.uid++;
		}
	}
	v = svd_admit(l, &p, &n);
	switch (v) {
	case SVD_ADMIT_OK:
		break;
	case SVD_ADMIT_PROCESS:
		snprintf(c->refusal, sizeof(c->refusal),
		    "too many control connections: %s %llu holds %u, the "
		    "limit (connections_per_process); close some first",
		    c->worker ? "the worker of pid" : "pid",
		    (unsigned long long) c->pid, n.process);
		break;
	case SVD_ADMIT_UID:
		snprintf(c->refusal, sizeof(c->refusal),
		    "too many control connections: uid %llu holds %u, the "
		    "limit (connections_per_uid); close some first",
		    (unsigned long long) c->uid, n.uid);
		break;
	case SVD_ADMIT_FULL:
	default:
		snprintf(c->refusal, sizeof(c->refusal),
		    "too many control connections: %u open, none left for "
		    "this peer (cap %u, of which %u kept for root, the "
		    "supervisor's uid and workers); try again later",
		    n.total, l->cap, l->reserve);
		break;
	}
	return v;
}

/* srv_accept: see server_internal.h. */
void
srv_accept(void *arg, int fd)
{
	svd_server *srv = arg;
	srv_conn   *c;
	uint8_t     hello[SVD_SP_HELLO_LEN];

	if ((c = calloc(1, sizeof(*c))) == NULL) {
		srv_log_limited(srv, 0, "out of memory; connection closed");
		close(fd);
		return;
	}
	c->srv = srv;
	c->io  = (sv_io) {fd, srv_conn_cb, c};
	c->id  = ++srv->next_id != 0 ? srv->next_id : ++srv->next_id;
	sv_timer_init(&c->timer, srv_conn_timer_cb, c);
	srv_peer(c);
	c->worker = svd_sup_peer_worker(srv->sup, c->pid, &c->memo, &c->wkey);
	if (srv_admit(srv, c) != SVD_ADMIT_OK) {
		srv_log_limited(srv, c->pid, c->refusal);
		if (srv->nrefusing >= SRV_REFUSING_MAX) {
			goto drop;
		}
		c->refused = true;
	}
	/* Our header first; a fresh socket's buffer always takes it. */
	svd_sp_hello(hello, SVD_SP_REP0);
	if (write(fd, hello, sizeof(hello)) != (ssize_t) sizeof(hello)
	    || sv_loop_add_io(srv->loop, &c->io, EPOLLIN) != SV_OK) {
		goto drop;
	}
	c->state = SRV_HELLO;
	if (c->refused) {
		c->next       = srv->refusing;
		srv->refusing = c;
		srv->nrefusing++;
	} else {
		c->next    = srv->conns;
		srv->conns = c;
		srv->nconns++;
	}
	(void) sv_loop_timer_start(
	    srv->loop, &c->timer, c->refused ? SRV_REFUSE_MS : SRV_HELLO_MS);
	return;
drop:
	if (c->pidfd >= 0) {
		close(c->pidfd);
	}
	close(fd);
	free(c);
}

/* srv_refuse: see server_internal.h. The Error carries the Envelope's
 * request id when the body decodes (0 otherwise, as for any undecodable
 * request). */
void
srv_refuse(srv_conn *c, const uint8_t *bt, size_t btlen, const uint8_t *body,
    size_t n)
{
	svw_env *env = NULL;
	nng_msg *rep = NULL;
	uint64_t rid = 0;

	if (svw_decode(body, n, SVW_MAX_REQUEST, &env, &rid) == SV_OK) {
		rid = env->request_id;
		svw_free(env);
	}
	if (svw_encode_error(rid, SV_EEXHAUSTED, c->refusal, &rep) == SV_OK) {
		srv_send(c, bt, btlen, nng_msg_body(rep), nng_msg_len(rep));
		nng_msg_free(rep);
	}
	srv_doom(c);
}

/* srv_idle_arm: see server_internal.h. */
void
srv_idle_arm(srv_conn *c)
{
	uint64_t now = sv_loop_now_ms(), due;

	if (c->worker || c->refused || c->srv->idle_ms == 0
	    || c->state != SRV_OPEN) {
		return;
	}
	due = c->last_req + c->srv->idle_ms;
	(void) sv_loop_timer_start(
	    c->srv->loop, &c->timer, due > now ? due - now : 0);
}

/* srv_idle_fired: see server_internal.h. A connection with a request
 * waiting for a deferred answer, or that sent a whole request within the
 * bound, is not idle. */
void
srv_idle_fired(srv_conn *c)
{
	uint64_t now = sv_loop_now_ms();

	for (size_t i = 0; i < SRV_PIPE_INFLIGHT; i++) {
		if (c->slots[i].c != NULL) {
			c->last_req = now;
			break;
		}
	}
	if (now - c->last_req < c->srv->idle_ms) {
		srv_idle_arm(c);
		return;
	}
	srv_log_limited(c->srv, c->pid,
	    "idle for connection_idle_timeout_ms; connection closed");
	srv_kill(c);
}
