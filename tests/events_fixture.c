/*
 * events_fixture.c — the shared fixture of the event socket's tests (see
 * events_fixture.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "events_fixture.h"
#include "supervise/v1/supervise.pb-c.h"
#include "sv_tmpdir.h"

/* pump runs the loop once: waits up to ms for readiness, dispatches,
 * fires due timers. */
void
pump(fx *f, int ms)
{
	int n = 0;

	assert_int_equal(sv_loop_wait(f->loop, ms, &n), SV_OK);
	sv_loop_dispatch(f->loop, n);
	sv_loop_run_timers(f->loop, sv_loop_now_ms());
}

/* pump_until_subs runs the loop until want subscribers are open. */
void
pump_until_subs(fx *f, size_t want)
{
	uint64_t end = sv_loop_now_ms() + DEADLINE_MS;

	while (svd_events_subscribers(f->ev) != want) {
		assert_true(sv_loop_now_ms() < end);
		pump(f, 50);
	}
}

int
ev_setup(void **state)
{
	fx  *f = calloc(1, sizeof(*f));
	char url[160], err[256];

	assert_non_null(f);
	assert_int_equal(sv_tmpdir(f->dir, sizeof(f->dir), "sv-events"), 0);
	snprintf(f->path, sizeof(f->path), "%s/events.sock", f->dir);
	snprintf(url, sizeof(url), "ipc://%s", f->path);
	assert_int_equal(sv_loop_create(&f->loop), SV_OK);
	assert_int_equal(
	    svd_events_open(f->loop, url, &f->ev, err, sizeof(err)), SV_OK);
	*state = f;
	return 0;
}

int
ev_teardown(void **state)
{
	fx *f = *state;

	svd_events_close(f->ev);
	assert_int_equal(access(f->path, F_OK), -1); /* the file is gone */
	sv_loop_destroy(f->loop);
	rmdir(f->dir);
	free(f);
	return 0;
}

/* dial connects a raw stream to the socket; proto >= 0 sends that SP
 * header. The daemon's header is read and checked (PUB0). */
int
dial(fx *f, int proto)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	uint8_t  hdr[8] = {0, 'S', 'P', 0, 0, (uint8_t) proto, 0, 0}, peer[8];
	int      fd     = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	size_t   got    = 0;
	uint64_t end    = sv_loop_now_ms() + DEADLINE_MS;

	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", f->path);
	assert_int_equal(connect(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
	if (proto >= 0) {
		assert_int_equal(write(fd, hdr, 8), 8);
	}
	/* The loop accepts and writes its header. */
	while (got < sizeof(peer)) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t       r;
		assert_true(sv_loop_now_ms() < end);
		pump(f, 0);
		if (poll(&p, 1, 20) == 1) {
			r = read(fd, peer + got, sizeof(peer) - got);
			assert_true(r > 0);
			got += (size_t) r;
		}
	}
	assert_memory_equal(peer, "\0SP\0\0\x20\0\0", 8);
	return fd;
}

/* publish sends one worker event with sequence number seq. */
/* event_of fills e (and ws, which e points to) with the test's event. */
static void
event_of(
    uint64_t seq, Supervise__V1__Event *e, Supervise__V1__WorkerStarted *ws)
{
	*e  = (Supervise__V1__Event) SUPERVISE__V1__EVENT__INIT;
	*ws = (Supervise__V1__WorkerStarted)
	    SUPERVISE__V1__WORKER_STARTED__INIT;
	e->seq           = seq;
	e->supervisor_id = "test";
	e->group         = "web";
	e->ordinal       = 3;
	e->pid           = 1234;
	e->kind_case     = SUPERVISE__V1__EVENT__KIND_STARTED;
	e->started       = ws;
}

void
publish(fx *f, uint64_t seq)
{
	Supervise__V1__Event         e;
	Supervise__V1__WorkerStarted ws;

	event_of(seq, &e, &ws);
	svd_events_publish(f->ev, &e, 1);
}

size_t
frame_of(uint64_t seq, uint8_t *buf, size_t cap)
{
	static const char            topic[] = "w/web/3/";
	Supervise__V1__Event         e;
	Supervise__V1__WorkerStarted ws;
	size_t                       blen, flen;

	event_of(seq, &e, &ws);
	blen = supervise__v1__event__get_packed_size(&e);
	flen = sizeof(topic) + blen; /* the topic's NUL included */
	assert_true(9 + flen <= cap);
	buf[0] = 1;
	for (int i = 0; i < 8; i++) {
		buf[1 + i] = (uint8_t) (flen >> (56 - 8 * i));
	}
	memcpy(buf + 9, topic, sizeof(topic));
	supervise__v1__event__pack(&e, buf + 9 + sizeof(topic));
	return 9 + flen;
}

/* rd_take reads what fd has (non-blocking) and parses whole frames,
 * checking each (type, topic, Event) and the sequence. */
void
rd_take(rd *r)
{
	for (;;) {
		ssize_t n  = recv(r->fd, r->buf + r->len,
		     sizeof(r->buf) - r->len, MSG_DONTWAIT);
		size_t  at = 0;
		if (n <= 0) {
			assert_true(n < 0 && errno == EAGAIN);
			return;
		}
		r->len += (size_t) n;
		while (r->len - at >= 9) {
			uint64_t              flen = 0;
			size_t                tl;
			Supervise__V1__Event *e;
			for (int i = 1; i < 9; i++) {
				flen = flen << 8 | r->buf[at + i];
			}
			assert_int_equal(r->buf[at], 1);
			if (r->len - at - 9 < flen) {
				break;
			}
			tl = strnlen((char *) r->buf + at + 9, (size_t) flen);
			assert_true(tl < flen);
			assert_string_equal(
			    (char *) r->buf + at + 9, "w/web/3/");
			e = supervise__v1__event__unpack(NULL,
			    (size_t) flen - tl - 1, r->buf + at + 9 + tl + 1);
			assert_non_null(e);
			assert_int_equal(e->ordinal, 3);
			assert_string_equal(e->group, "web");
			if (r->got == 0) {
				r->first_seq = e->seq;
				r->run       = 1;
			} else if (e->seq != r->last_seq + 1) {
				assert_true(e->seq > r->last_seq);
				r->gap = true;
				r->gaps++;
				r->run = 1;
			} else {
				r->run++;
			}
			r->last_seq = e->seq;
			r->got++;
			supervise__v1__event__free_unpacked(e, NULL);
			at += 9 + (size_t) flen;
		}
		memmove(r->buf, r->buf + at, r->len - at);
		r->len -= at;
	}
}
