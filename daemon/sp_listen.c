/*
 * sp_listen.c — the SP listener over ipc:// that the control socket and the
 * event socket share (see sp_listen.h): binding with stale-file
 * replacement, accepting in batches on the loop, shedding connections with
 * a spare descriptor (or backing off) when out of descriptors; and the
 * connection and frame headers of nng's ipc wire.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "sp_listen.h"

void
svd_sp_log(svd_sp_listener *l, const char *what)
{
	uint64_t now = sv_loop_now_ms();

	if (l->log_at != 0 && now - l->log_at < 1000) {
		l->unlogged++;
		return;
	}
	svd_log("%s socket: %s (%lu similar lines not logged)", l->what, what,
	    l->unlogged);
	l->unlogged = 0;
	l->log_at   = now;
}

/* lst_backoff_cb ends an EMFILE back-off: the listener is watched again. */
static void
lst_backoff_cb(sv_loop *loop, sv_timer *t)
{
	svd_sp_listener *l = t->arg;

	if (!l->watched && l->fd >= 0
	    && sv_loop_add_io(loop, &l->io, EPOLLIN) == SV_OK) {
		l->watched = true;
	}
}

/* lst_spare_open (re)opens the spare descriptor: /dev/null, kept so that
 * a connection can still be accepted (and closed) when the process is out
 * of descriptors. */
static void
lst_spare_open(svd_sp_listener *l)
{
	if (l->spare < 0) {
		l->spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}
}

/* lst_shed accepts one waiting connection with the spare descriptor and
 * closes it at once (the peer sees a hang-up instead of waiting in the
 * backlog until its deadline), then takes the spare back. false when
 * there was no spare to give up. */
static bool
lst_shed(svd_sp_listener *l)
{
	int fd;

	if (l->spare < 0) {
		return false;
	}
	close(l->spare);
	l->spare = -1;
	fd       = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd >= 0) {
		close(fd);
	}
	lst_spare_open(l);
	svd_sp_log(l,
	    "out of descriptors; a connection was accepted and closed at "
	    "once");
	return fd >= 0;
}

/* lst_accept_cb takes up to SVD_SP_ACCEPT_BATCH waiting connections and
 * hands each to the owner. Out of descriptors, each waiting connection is
 * accepted with the spare and closed (lst_shed), so the listener never
 * spins on a readable backlog it cannot take; without a spare, it stops
 * watching for SVD_SP_EMFILE_MS. */
static void
lst_accept_cb(sv_loop *loop, sv_io *io, uint32_t events)
{
	svd_sp_listener *l = io->arg;

	(void) events;
	for (int i = 0; i < SVD_SP_ACCEPT_BATCH; i++) {
		int fd
		    = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if ((errno == EMFILE || errno == ENFILE)
			    && lst_shed(l)) {
				continue;
			}
			if (errno == EMFILE || errno == ENFILE
			    || errno == ENOBUFS || errno == ENOMEM) {
				/* Out of descriptors: stop looking for a
				 * while; the backlog waits. */
				svd_sp_log(l,
				    "out of descriptors; not "
				    "accepting for 100 ms");
				sv_loop_del_io(loop, &l->io);
				l->watched = false;
				(void) sv_loop_timer_start(
				    loop, &l->backoff, SVD_SP_EMFILE_MS);
			}
			return; /* EAGAIN, ECONNABORTED, ...: next time */
		}
		l->accept(l->arg, fd);
	}
}

/* lst_bind creates, binds and listens on l->path, mode 0600. A socket file
 * left by a process that is gone (nothing accepts on it) is replaced; one
 * that answers means another server: SV_EBUSY. */
static sv_err
lst_bind(svd_sp_listener *l, char *errbuf, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int                fd;

	memcpy(sa.sun_path, l->path, strlen(l->path) + 1);
	for (int attempt = 0;; attempt++) {
		if ((fd = socket(AF_UNIX,
		         SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0))
		    < 0) {
			snprintf(errbuf, errlen, "cannot open socket: %s",
			    strerror(errno));
			return SV_ESYSTEM;
		}
		if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) == 0) {
			break;
		}
		if (errno == EADDRINUSE && attempt == 0) {
			/* Stale or live? A live server accepts. */
			int probe
			    = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
			int live = probe >= 0
			    && connect(
			           probe, (struct sockaddr *) &sa, sizeof(sa))
			        == 0;
			if (probe >= 0) {
				close(probe);
			}
			close(fd);
			if (live) {
				snprintf(errbuf, errlen,
				    "cannot listen on ipc://%s: address in "
				    "use "
				    "(is another supervised running?)",
				    l->path);
				return SV_EBUSY;
			}
			(void) unlink(l->path);
			continue;
		}
		snprintf(errbuf, errlen, "cannot listen on ipc://%s: %s",
		    l->path, strerror(errno));
		close(fd);
		return errno == EADDRINUSE ? SV_EBUSY : SV_ESYSTEM;
	}
	if (chmod(l->path, 0600) != 0 || listen(fd, 128) != 0) {
		snprintf(errbuf, errlen, "cannot listen on ipc://%s: %s",
		    l->path, strerror(errno));
		(void) unlink(l->path);
		close(fd);
		return SV_ESYSTEM;
	}
	l->fd = fd;
	return SV_OK;
}

sv_err
svd_sp_listen(svd_sp_listener *l, sv_loop *loop, const char *url,
    const char *what, svd_sp_accept_fn fn, void *arg, char *errbuf,
    size_t errlen)
{
	sv_err err;

	*l = (svd_sp_listener) {.loop = loop,
	    .fd                       = -1,
	    .spare                    = -1,
	    .what                     = what,
	    .accept                   = fn,
	    .arg                      = arg};
	if (strncmp(url, "ipc://", 6) != 0
	    || strlen(url + 6) >= sizeof(l->path)) {
		snprintf(errbuf, errlen,
		    "cannot listen on %s: not an ipc:// "
		    "URL of a path under 108 bytes",
		    url);
		return SV_EINVAL;
	}
	memcpy(l->path, url + 6, strlen(url + 6) + 1);
	sv_timer_init(&l->backoff, lst_backoff_cb, l);
	if ((err = lst_bind(l, errbuf, errlen)) != SV_OK) {
		return err;
	}
	l->io = (sv_io) {l->fd, lst_accept_cb, l};
	if (sv_loop_add_io(loop, &l->io, EPOLLIN) != SV_OK) {
		snprintf(errbuf, errlen, "cannot watch the %s socket: %s",
		    what, strerror(errno));
		(void) unlink(l->path);
		close(l->fd);
		l->fd = -1;
		return SV_ESYSTEM;
	}
	l->watched = true;
	lst_spare_open(l);
	return SV_OK;
}

void
svd_sp_unlisten(svd_sp_listener *l)
{
	if (l->fd < 0) {
		return;
	}
	if (l->watched) {
		sv_loop_del_io(l->loop, &l->io);
		l->watched = false;
	}
	sv_loop_timer_stop(l->loop, &l->backoff);
	close(l->fd);
	l->fd = -1;
	if (l->spare >= 0) {
		close(l->spare);
		l->spare = -1;
	}
	(void) unlink(l->path);
}

void
svd_sp_hello(uint8_t out[SVD_SP_HELLO_LEN], uint16_t proto)
{
	memset(out, 0, SVD_SP_HELLO_LEN);
	out[1] = 'S';
	out[2] = 'P';
	out[4] = (uint8_t) (proto >> 8);
	out[5] = (uint8_t) proto;
}

bool
svd_sp_hello_is(const uint8_t in[SVD_SP_HELLO_LEN], uint16_t proto)
{
	uint8_t want[SVD_SP_HELLO_LEN];

	svd_sp_hello(want, proto);
	return memcmp(in, want, sizeof(want)) == 0;
}

void
svd_sp_frame(uint8_t out[SVD_SP_FRAME_HDR], uint64_t len)
{
	out[0] = 1;
	for (int i = 0; i < 8; i++) {
		out[1 + i] = (uint8_t) (len >> (56 - 8 * i));
	}
}

bool
svd_sp_frame_len(const uint8_t in[SVD_SP_FRAME_HDR], uint64_t *lenp)
{
	uint64_t len = 0;

	for (int i = 0; i < 8; i++) {
		len = len << 8 | in[1 + i];
	}
	*lenp = len;
	return in[0] == 1;
}
