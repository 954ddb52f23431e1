/*
 * events.c — the event socket (see events.h): SP PUB over an AF_UNIX
 * stream, served on the supervisor's loop thread, never blocking.
 *
 * Wire (nng's ipc transport, sp_listen.h): our connection header says PUB0
 * (0x20) and the peer's must say SUB0 (0x21); then each event is one frame
 * (type 1, 64-bit length, topic, NUL, Event). A SUB sends nothing after its
 * header; a peer that does is closed, as nng's PUB does. Filtering is the
 * subscriber's (SP SUB filters on its side): every event goes to every
 * subscriber.
 *
 * Why not nng's PUB socket: it ran nng's threads in the daemon, and nng
 * 1.5.2 needed a libc sendmsg() interposer (a hang-up mid-handshake
 * stopped its listener, #1518) and an exit watchdog (closing a pipe whose
 * peer never read could hang), and a message in flight when the socket
 * closed leaked. Here there is no thread and nothing in flight that the
 * loop does not own.
 *
 * Deferred fan-out: publishing writes nothing. The message is built once
 * (frame header, topic, Event; reference counted), numbered, and appended
 * to one daemon-wide pending list (at most SVD_EVENTS_PENDING messages);
 * the fan-out, which hands every pending message to every subscriber and
 * writes, is an after-dispatch callback of the loop (shell/loop.h): it
 * runs once the turn's fd callbacks and timers have all run. A restart
 * publishes its events (exited, ...) in the pidfd's callback before it
 * spawns the replacement in the same callback (daemon/sup_spawn.c,
 * proc_exit_cb -> sup_run_effects), so the replacement is spawned before
 * any subscriber is written to; the writes for 1,000 subscribers no
 * longer sit between a worker's exit and its replacement's spawn. The
 * pending list is bounded: the publish that fills it fans out at once, so
 * one turn that publishes many events never gives a subscriber more than
 * SVD_EVENTS_PENDING (half its queue) at a time, and one that kept up
 * (empty queue) never drops for the deferral. svd_events_close fans out
 * what is pending before it closes.
 *
 * Coalescing: a subscriber's queue is written with one sendmsg of up to
 * SVD_EVENTS_QUEUE frames (an iovec per frame, the first from the offset
 * already written), so the few events of one restart cost one system
 * call per subscriber. A partial write leaves the frame it stopped in at
 * the head of the queue, finished first by the next write.
 *
 * Who receives a message (today's rule, unchanged by the deferral): the
 * subscribers connected (HELLO or OPEN) when it was published. Each
 * message has a number (ev->published counts them) and each subscriber
 * the number of the first message published after its accept (from); the
 * fan-out skips older ones, so a subscriber accepted while messages were
 * pending gets none of them, as it got none before. Order per subscriber
 * is publication order: messages enter its queue in that order.
 *
 * A subscriber is a small state machine driven by its epoll events:
 *   HELLO  our header sent, reading the peer's 8 bytes (bounded by
 *          EV_HELLO_MS); what is published meanwhile is queued (same
 *          drop rule) and written once the header checks out, so a
 *          client whose handshake completed (it has our header, sent at
 *          accept) misses nothing published after that      -> OPEN
 *   OPEN   receives what is published, at the fan-out: appended to its
 *          queue (SVD_EVENTS_QUEUE messages) and, when nothing was
 *          waiting there, written at once; what the socket does not take
 *          waits and is written when epoll says the socket is writable.
 *   DEAD   closed; freed by a zero-delay timer (an event later in the same
 *          epoll batch may still name it).
 * Drop rule (nng's PUB rule): when a subscriber's queue is full, its
 * oldest message not yet begun is dropped to make room, for that
 * subscriber only; a frame partly written is always finished, so the
 * stream stays whole. A subscriber closed with messages queued, or
 * pending for it, loses them. Every drop is counted (svd_events_dropped)
 * and logged: the first at once, then at most one line a second.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <limits.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "events.h"
#include "log.h"
#include "sp_listen.h"

/* The peer's SP header must come within this after accept. */
#define EV_HELLO_MS 5000
/* Subscribers served at once; more are accepted and closed at once. */
#define EV_SUBS_MAX 4096
/* Drops are summed up in the log at most once per this. */
#define EV_DROPLOG_MS 1000

/* One sendmsg takes a whole queue; IOV_MAX bounds an iovec. */
_Static_assert(SVD_EVENTS_QUEUE <= IOV_MAX, "a queue fits one sendmsg");
_Static_assert(
    SVD_EVENTS_PENDING >= 1 && SVD_EVENTS_PENDING <= SVD_EVENTS_QUEUE / 2,
    "a fan-out fills at most half a queue that was empty");

/* One published message, shared by the queues that hold it. */
typedef struct ev_msg {
	unsigned refs; /* queues holding it, +1 while pending */
	uint64_t num; /* its place in publication order (ev->published) */
	size_t   len; /* bytes of data: frame header, topic, NUL, Event */
	uint8_t  data[];
} ev_msg;

typedef struct ev_sub ev_sub;

struct ev_sub {
	sv_io       io;
	sv_timer    timer; /* HELLO bound */
	svd_events *ev;
	ev_sub     *next; /* in ev->subs, or ev->dead */
	enum { EV_HELLO, EV_OPEN, EV_DEAD } state;
	bool          out; /* watched for EPOLLOUT (something waits) */
	uint64_t      from; /* first message number it receives */
	uint64_t      pid; /* of the connecting process (log lines), 0: ? */
	uint8_t       hello[SVD_SP_HELLO_LEN];
	size_t        hello_got;
	ev_msg       *q[SVD_EVENTS_QUEUE]; /* ring: unsent messages */
	size_t        head, n; /* first and count */
	size_t        off; /* bytes of q[head] already written */
	unsigned long dropped; /* messages this subscriber lost */
};

struct svd_events {
	sv_loop        *loop;
	svd_sp_listener lst;
	sv_timer        reap; /* frees dead subscribers */
	sv_timer        droplog; /* sums drops up in the log */
	sv_defer        fanout; /* writes what is pending, after dispatch */
	ev_msg         *pending[SVD_EVENTS_PENDING]; /* publication order */
	size_t          npending;
	uint64_t        published; /* messages built since open */
	unsigned long   writes; /* see svd_events_writes */
	char            url[600];
	ev_sub         *subs, *dead;
	size_t          nsubs, nopen;
	unsigned long   dropped; /* see svd_events_dropped */
	unsigned long   logged; /* part of dropped already logged */
	uint64_t        last_pid; /* subscriber of the latest drop */
};

/* ev_msg_unref drops one reference to m, freeing it with the last. */
static void
ev_msg_unref(ev_msg *m)
{
	if (--m->refs == 0) {
		free(m);
	}
}

/* ev_log_drops logs the drops not logged yet. */
static void
ev_log_drops(svd_events *ev)
{
	svd_log("event socket: %lu messages dropped for subscribers that do "
	        "not keep up (latest: pid %" PRIu64 "; queue of %d full), "
	        "%lu since start",
	    ev->dropped - ev->logged, ev->last_pid, SVD_EVENTS_QUEUE,
	    ev->dropped);
	ev->logged = ev->dropped;
}

/* ev_droplog_cb logs the drops of the last second; quiet, it stops. */
static void
ev_droplog_cb(sv_loop *loop, sv_timer *t)
{
	svd_events *ev = t->arg;

	if (ev->dropped != ev->logged) {
		ev_log_drops(ev);
		(void) sv_loop_timer_start(loop, t, EV_DROPLOG_MS);
	}
}

/* ev_drop counts one message lost for s (NULL: the event itself could not
 * be built). The first drop after a quiet second is logged at once. */
static void
ev_drop(svd_events *ev, ev_sub *s)
{
	ev->dropped++;
	if (s != NULL) {
		s->dropped++;
		ev->last_pid = s->pid;
	}
	if (!sv_timer_armed(&ev->droplog)) {
		ev_log_drops(ev);
		(void) sv_loop_timer_start(
		    ev->loop, &ev->droplog, EV_DROPLOG_MS);
	}
}

/* ev_reap_cb frees the subscribers closed since it last ran. */
static void
ev_reap_cb(sv_loop *loop, sv_timer *t)
{
	svd_events *ev = t->arg;
	ev_sub     *s;

	(void) loop;
	while ((s = ev->dead) != NULL) {
		ev->dead = s->next;
		free(s);
	}
}

/* ev_kill closes subscriber s: messages still queued, and those pending
 * that would have been its own, count as dropped; the memory is freed by
 * the reap timer. */
static void
ev_kill(ev_sub *s)
{
	svd_events *ev = s->ev;
	ev_sub    **pp;

	if (s->state == EV_DEAD) {
		return;
	}
	if (s->state == EV_OPEN) {
		ev->nopen--;
	}
	s->state = EV_DEAD;
	sv_loop_timer_stop(ev->loop, &s->timer);
	sv_loop_del_io(ev->loop, &s->io);
	close(s->io.fd);
	s->io.fd = -1;
	for (; s->n > 0; s->n--) {
		ev_msg_unref(s->q[s->head]);
		s->head = (s->head + 1) % SVD_EVENTS_QUEUE;
		ev_drop(ev, s);
	}
	for (size_t i = 0; i < ev->npending; i++) {
		if (ev->pending[i]->num >= s->from) {
			ev_drop(ev, s); /* it would have been s's */
		}
	}
	for (pp = &ev->subs; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	}
	ev->nsubs--;
	s->next  = ev->dead;
	ev->dead = s;
	(void) sv_loop_timer_start(ev->loop, &ev->reap, 0);
}

/* ev_watch_out watches s for writability exactly while its queue holds
 * something (one epoll_ctl per change, none per write). */
static void
ev_watch_out(ev_sub *s)
{
	bool want = s->n > 0;

	if (want != s->out
	    && sv_loop_mod_io(
	           s->ev->loop, &s->io, want ? EPOLLIN | EPOLLOUT : EPOLLIN)
	        == SV_OK) {
		s->out = want;
	}
}

/* ev_writev writes s's queue, as much as the socket takes at once, with
 * one sendmsg (an iovec per frame, the head from its offset): the bytes
 * written (0 when the socket is full), or -1 when the connection is
 * broken. */
static ssize_t
ev_writev(ev_sub *s)
{
	struct iovec  iov[SVD_EVENTS_QUEUE];
	struct msghdr mh = {.msg_iov = iov};
	ssize_t       w;

	for (size_t i = 0; i < s->n; i++) {
		ev_msg *m   = s->q[(s->head + i) % SVD_EVENTS_QUEUE];
		size_t  off = i == 0 ? s->off : 0;
		iov[i]      = (struct iovec) {m->data + off, m->len - off};
	}
	mh.msg_iovlen = s->n;
	do {
		s->ev->writes++;
		w = sendmsg(s->io.fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
	} while (w < 0 && errno == EINTR);
	if (w < 0) {
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
	}
	return w;
}

/* ev_flush writes s's queue until the socket is full or the queue empty;
 * s is then watched for writability only while something waits. False
 * when s was closed. */
static bool
ev_flush(ev_sub *s)
{
	while (s->n > 0) {
		ssize_t w = ev_writev(s);
		size_t  left;
		if (w < 0) {
			ev_kill(s);
			return false;
		}
		if (w == 0) {
			break; /* full: epoll says when it takes more */
		}
		left = (size_t) w;
		while (s->n > 0 && left > 0) {
			ev_msg *m    = s->q[s->head];
			size_t  rest = m->len - s->off;
			if (left < rest) {
				s->off += left; /* stopped inside this frame */
				break;
			}
			left -= rest;
			ev_msg_unref(m);
			s->head = (s->head + 1) % SVD_EVENTS_QUEUE;
			s->n--;
			s->off = 0;
		}
		if (s->n > 0) {
			break; /* a partial write: the socket is full */
		}
	}
	ev_watch_out(s);
	return true;
}

/* ev_enqueue appends m to s's queue, first dropping the oldest message not
 * yet begun when the queue is full (the drop rule, top of this file). */
static void
ev_enqueue(ev_sub *s, ev_msg *m)
{
	if (s->n == SVD_EVENTS_QUEUE) {
		size_t victim
		    = s->off > 0 ? (s->head + 1) % SVD_EVENTS_QUEUE : s->head;
		ev_msg *old = s->q[victim];
		if (victim != s->head) {
			/* keep the partly written head: it moves up one */
			s->q[victim] = s->q[s->head];
		}
		s->head = (s->head + 1) % SVD_EVENTS_QUEUE;
		s->n--;
		ev_msg_unref(old);
		ev_drop(s->ev, s);
	}
	m->refs++;
	s->q[(s->head + s->n) % SVD_EVENTS_QUEUE] = m;
	s->n++;
}

/* ev_fanout hands every pending message to every subscriber that was
 * connected when it was published, in publication order, then writes
 * each OPEN subscriber's queue that was empty before (the others wait for
 * epoll's EPOLLOUT, as before). The pending list is empty after. */
static void
ev_fanout(svd_events *ev)
{
	ev_msg *msgs[SVD_EVENTS_PENDING];
	size_t  k = ev->npending;
	ev_sub *s, *next;

	if (k == 0) {
		return;
	}
	for (size_t i = 0; i < k; i++) {
		msgs[i] = ev->pending[i];
	}
	ev->npending = 0; /* from here on they are in queues, or not */
	sv_loop_defer_cancel(ev->loop, &ev->fanout);
	for (s = ev->subs; s != NULL; s = next) {
		bool idle = s->n == 0;
		next      = s->next; /* ev_flush may close s */
		for (size_t i = 0; i < k; i++) {
			if (msgs[i]->num >= s->from) {
				ev_enqueue(s, msgs[i]);
			}
		}
		if (s->state == EV_OPEN && idle && s->n > 0) {
			(void) ev_flush(s);
		}
	}
	for (size_t i = 0; i < k; i++) {
		ev_msg_unref(msgs[i]);
	}
}

/* ev_fanout_cb is the after-dispatch callback (shell/loop.h). */
static void
ev_fanout_cb(sv_loop *loop, sv_defer *d)
{
	(void) loop;
	ev_fanout(d->arg);
}

/* ev_hello advances s's connection header; false when s was closed. */
static bool
ev_hello(ev_sub *s)
{
	ssize_t r;

	do {
		r = read(s->io.fd, s->hello + s->hello_got,
		    sizeof(s->hello) - s->hello_got);
	} while (r < 0 && errno == EINTR);
	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		return true;
	}
	if (r <= 0) {
		ev_kill(s);
		return false;
	}
	s->hello_got += (size_t) r;
	if (s->hello_got < sizeof(s->hello)) {
		return true;
	}
	if (!svd_sp_hello_is(s->hello, SVD_SP_SUB0)) {
		svd_sp_log(&s->ev->lst,
		    "a peer that is not an SP SUB; connection closed");
		ev_kill(s);
		return false;
	}
	sv_loop_timer_stop(s->ev->loop, &s->timer);
	s->state = EV_OPEN;
	s->ev->nopen++;
	return s->n == 0 || ev_flush(s); /* what came during the handshake */
}

/* ev_sub_cb handles one subscriber's readiness. */
static void
ev_sub_cb(sv_loop *loop, sv_io *io, uint32_t events)
{
	ev_sub *s = io->arg;

	(void) loop;
	if (s->state == EV_DEAD) {
		return; /* closed earlier in this batch */
	}
	if (s->state == EV_HELLO) {
		(void) ev_hello(s);
		return;
	}
	if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0) {
		uint8_t buf[64];
		ssize_t r;
		do {
			r = read(s->io.fd, buf, sizeof(buf));
		} while (r < 0 && errno == EINTR);
		if (r >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
			/* a hang-up, an error, or bytes a SUB never sends */
			ev_kill(s);
			return;
		}
	}
	if ((events & EPOLLOUT) != 0) {
		(void) ev_flush(s);
	}
}

/* ev_sub_timer_cb: the peer did not say hello in time. */
static void
ev_sub_timer_cb(sv_loop *loop, sv_timer *t)
{
	(void) loop;
	ev_kill(t->arg);
}

/* ev_accept takes a connection the listener accepted (sp_listen.h). */
static void
ev_accept(void *arg, int fd)
{
	svd_events  *ev = arg;
	ev_sub      *s;
	uint8_t      hello[SVD_SP_HELLO_LEN];
	struct ucred cr;
	socklen_t    crlen = sizeof(cr);

	if (ev->nsubs >= EV_SUBS_MAX || (s = calloc(1, sizeof(*s))) == NULL) {
		close(fd);
		return;
	}
	s->ev   = ev;
	s->from = ev->published; /* nothing published before its accept */
	s->io   = (sv_io) {fd, ev_sub_cb, s};
	sv_timer_init(&s->timer, ev_sub_timer_cb, s);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) == 0
	    && cr.pid > 0) {
		s->pid = (uint64_t) cr.pid;
	}
	/* Our header first; a fresh socket's buffer always takes it. */
	svd_sp_hello(hello, SVD_SP_PUB0);
	if (write(fd, hello, sizeof(hello)) != (ssize_t) sizeof(hello)
	    || sv_loop_add_io(ev->loop, &s->io, EPOLLIN) != SV_OK) {
		close(fd);
		free(s);
		return;
	}
	s->state = EV_HELLO;
	s->next  = ev->subs;
	ev->subs = s;
	ev->nsubs++;
	(void) sv_loop_timer_start(ev->loop, &s->timer, EV_HELLO_MS);
}

sv_err
svd_events_open(sv_loop *loop, const char *url, svd_events **evp, char *errbuf,
    size_t errlen)
{
	svd_events *ev;
	sv_err      err;

	if ((ev = calloc(1, sizeof(*ev))) == NULL) {
		snprintf(errbuf, errlen, "out of memory");
		return SV_ENOMEM;
	}
	ev->loop = loop;
	snprintf(ev->url, sizeof(ev->url), "%s", url);
	sv_timer_init(&ev->reap, ev_reap_cb, ev);
	sv_timer_init(&ev->droplog, ev_droplog_cb, ev);
	sv_defer_init(&ev->fanout, ev_fanout_cb, ev);
	if ((err = svd_sp_listen(
	         &ev->lst, loop, url, "event", ev_accept, ev, errbuf, errlen))
	    != SV_OK) {
		free(ev);
		return err;
	}
	*evp = ev;
	return SV_OK;
}

const char *
svd_events_url(const svd_events *ev)
{
	return ev->url;
}

void
svd_events_publish(svd_events *ev, const Supervise__V1__Event *e, int worker)
{
	char topic[128];
	int  n;

	if (worker) {
		n = snprintf(topic, sizeof(topic), "w/%s/%" PRIu32 "/",
		    e->group, e->ordinal);
	} else {
		n = snprintf(topic, sizeof(topic), "g/%s/", e->group);
	}
	if (n < 0 || (size_t) n >= sizeof(topic)) {
		ev_drop(ev, NULL);
		return;
	}
	svd_events_publish_topic(ev, e, topic);
}

void
svd_events_publish_topic(
    svd_events *ev, const Supervise__V1__Event *e, const char *topic)
{
	size_t  tlen, blen;
	ev_msg *m;

	if (ev->subs == NULL) {
		return; /* PUB keeps nothing for nobody */
	}
	tlen = strlen(topic) + 1; /* the NUL ends the topic */
	blen = supervise__v1__event__get_packed_size(e);
	if ((m = malloc(sizeof(*m) + SVD_SP_FRAME_HDR + tlen + blen))
	    == NULL) {
		ev_drop(ev, NULL);
		return;
	}
	m->refs = 1; /* the pending list's, until the fan-out */
	m->num  = ev->published++;
	m->len  = SVD_SP_FRAME_HDR + tlen + blen;
	svd_sp_frame(m->data, tlen + blen);
	memcpy(m->data + SVD_SP_FRAME_HDR, topic, tlen);
	supervise__v1__event__pack(e, m->data + SVD_SP_FRAME_HDR + tlen);
	ev->pending[ev->npending++] = m;
	if (ev->npending == SVD_EVENTS_PENDING) {
		ev_fanout(ev); /* the bound: half a queue at a time */
	} else {
		sv_loop_defer(ev->loop, &ev->fanout);
	}
}

size_t
svd_events_subscribers(const svd_events *ev)
{
	return ev->nopen;
}

unsigned long
svd_events_dropped(const svd_events *ev)
{
	return ev->dropped;
}

unsigned long
svd_events_writes(const svd_events *ev)
{
	return ev->writes;
}

void
svd_events_close(svd_events *ev)
{
	if (ev == NULL) {
		return;
	}
	svd_sp_unlisten(&ev->lst);
	ev_fanout(ev); /* what is pending joins the queues, then as below */
	while (ev->subs != NULL) {
		ev_sub *s = ev->subs;
		if (s->state == EV_OPEN && s->n > 0) {
			(void) ev_flush(s); /* what the socket takes at once */
		}
		ev_kill(s); /* no-op if the flush closed it */
	}
	sv_loop_defer_cancel(ev->loop, &ev->fanout); /* nothing pending */
	sv_loop_timer_stop(ev->loop, &ev->reap);
	sv_loop_timer_stop(ev->loop, &ev->droplog);
	ev_reap_cb(ev->loop, &ev->reap);
	if (svd_events_dropped(ev) > 0) {
		svd_log("event socket closed: %lu messages dropped in all for "
		        "subscribers that did not keep up",
		    svd_events_dropped(ev));
	}
	free(ev);
}
