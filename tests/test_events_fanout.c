/*
 * test_events_fanout.c — the event socket's deferred, coalesced, bounded
 * fan-out (daemon/events.c, "Deferred fan-out").
 *
 * Design: the test runs the loop by hand (events_fixture.h), so "before
 * the turn's after-dispatch work" and "after it" are points the test
 * chooses, not moments it waits for. What is observed: the bytes each
 * subscriber can read (non-blocking recv, or a parse of whole frames),
 * svd_events_dropped, and svd_events_writes (sendmsg calls). Cases:
 * (a) publishing writes nothing until the end of the turn, not even while
 *     other callbacks of the same turn (fds, timers) run, then every
 *     subscriber has every frame in order;
 * (b) the frames of one turn arrive byte-exact, in order, in one write per
 *     subscriber;
 * (c) more than SVD_EVENTS_PENDING in one turn: handed over at the bound,
 *     so a reading subscriber loses nothing (the queue alone would drop);
 * (d) a subscriber that never reads keeps the drop rule: the oldest the
 *     socket took, then the newest, every loss counted;
 * (e) a subscriber accepted while messages are pending gets none of them
 *     (as before: only what is published after its accept);
 * (f) a subscriber that hangs up with messages pending for it: counted as
 *     dropped; close writes what is pending.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "events_fixture.h"

/* readable tells whether fd has a byte to read now (it is not consumed). */
static bool
readable(int fd)
{
	uint8_t b;
	ssize_t n = recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);

	if (n < 0) {
		assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
		return false;
	}
	return true;
}

/* A callback of test_deferred_in_turn: publishes one event and notes what
 * the subscribers had at that point. */
typedef struct probe {
	sv_io         io;
	fx           *f;
	int           sub[2]; /* the subscribers' client ends */
	uint64_t     *seq; /* the last published; it publishes the next */
	bool          ran, saw_bytes;
	unsigned long writes; /* svd_events_writes after its publish */
} probe;

/* probe_io_cb: an fd of the turn (like a pidfd whose callback publishes
 * and then spawns, daemon/sup_spawn.c proc_exit_cb). */
static void
probe_io_cb(sv_loop *loop, sv_io *io, uint32_t events)
{
	probe   *p = io->arg;
	uint64_t v;

	(void) loop;
	(void) events;
	assert_int_equal(read(io->fd, &v, sizeof(v)), sizeof(v));
	publish(p->f, ++*p->seq);
	p->ran       = true;
	p->writes    = svd_events_writes(p->f->ev);
	p->saw_bytes = readable(p->sub[0]) || readable(p->sub[1]);
}

/* probe_timer_cb: a timer of the same turn, publishing too. */
static void
probe_timer_cb(sv_loop *loop, sv_timer *t)
{
	probe *p = t->arg;

	(void) loop;
	publish(p->f, ++*p->seq);
	p->ran       = true;
	p->writes    = svd_events_writes(p->f->ev);
	p->saw_bytes = readable(p->sub[0]) || readable(p->sub[1]);
}

/* (a) Published outside a turn: nothing written until the turn's end. */
static void
test_deferred(void **state)
{
	fx           *f = *state;
	rd            r[2];
	unsigned long w0;

	memset(r, 0, sizeof(r));
	r[0].fd = dial(f, 0x21);
	r[1].fd = dial(f, 0x21);
	pump_until_subs(f, 2);
	w0 = svd_events_writes(f->ev);
	publish(f, 1);
	publish(f, 2);
	publish(f, 3);
	assert_int_equal(svd_events_writes(f->ev), w0);
	assert_false(readable(r[0].fd));
	assert_false(readable(r[1].fd));
	pump(f, 0); /* the turn's end: the fan-out */
	for (int i = 0; i < 2; i++) {
		rd_take(&r[i]);
		assert_int_equal(r[i].got, 3);
		assert_int_equal(r[i].first_seq, 1);
		assert_int_equal(r[i].last_seq, 3);
		assert_false(r[i].gap);
		close(r[i].fd);
	}
	assert_int_equal(svd_events_dropped(f->ev), 0);
	pump_until_subs(f, 0);
}

/* (a) In one turn, two fd callbacks and a timer publish; none of them
 * sees a byte written, however late in the turn it runs; at the end each
 * subscriber has the three frames, in publication order, from one write. */
static void
test_deferred_in_turn(void **state)
{
	fx           *f = *state;
	rd            r[2];
	probe         p[3];
	sv_timer      t;
	uint64_t      one = 1, seq = 0;
	unsigned long w0;
	int           n;

	memset(r, 0, sizeof(r));
	memset(p, 0, sizeof(p));
	r[0].fd = dial(f, 0x21);
	r[1].fd = dial(f, 0x21);
	pump_until_subs(f, 2);
	for (int i = 0; i < 3; i++) {
		p[i].f      = f;
		p[i].sub[0] = r[0].fd;
		p[i].sub[1] = r[1].fd;
		p[i].seq    = &seq;
	}
	for (int i = 0; i < 2; i++) {
		p[i].io = (sv_io) {eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK),
		    probe_io_cb, &p[i]};
		assert_true(p[i].io.fd >= 0);
		assert_int_equal(
		    sv_loop_add_io(f->loop, &p[i].io, EPOLLIN), SV_OK);
	}
	sv_timer_init(&t, probe_timer_cb, &p[2]);
	w0 = svd_events_writes(f->ev);
	assert_int_equal(write(p[0].io.fd, &one, sizeof(one)), sizeof(one));
	assert_int_equal(write(p[1].io.fd, &one, sizeof(one)), sizeof(one));
	assert_int_equal(sv_loop_timer_start(f->loop, &t, 0), SV_OK);
	assert_int_equal(sv_loop_wait(f->loop, DEADLINE_MS, &n), SV_OK);
	assert_int_equal(n, 2); /* both fds in this one turn */
	sv_loop_dispatch(f->loop, n);
	for (int i = 0; i < 3; i++) {
		assert_true(p[i].ran); /* the timer was due: same turn */
		assert_false(p[i].saw_bytes);
		assert_int_equal(p[i].writes, w0);
	}
	/* one sendmsg per subscriber for the three frames */
	assert_int_equal(svd_events_writes(f->ev), w0 + 2);
	for (int i = 0; i < 2; i++) {
		rd_take(&r[i]);
		assert_int_equal(r[i].got, 3);
		assert_false(r[i].gap);
		assert_int_equal(r[i].first_seq, 1);
		assert_int_equal(r[i].last_seq, 3);
		sv_loop_del_io(f->loop, &p[i].io);
		close(p[i].io.fd);
		close(r[i].fd);
	}
	assert_int_equal(svd_events_dropped(f->ev), 0);
	pump_until_subs(f, 0);
}

/* (b) The frames of one turn, byte for byte, in order, one write each. */
static void
test_coalesced_bytes(void **state)
{
	enum { N = SVD_EVENTS_PENDING - 1, SUBS = 3 };
	fx           *f = *state;
	int           fd[SUBS];
	uint8_t       want[N * 64], got[N * 64 + 1];
	size_t        wlen = 0;
	unsigned long w0;

	for (int i = 0; i < SUBS; i++) {
		fd[i] = dial(f, 0x21);
	}
	pump_until_subs(f, SUBS);
	for (uint64_t seq = 1; seq <= N; seq++) {
		wlen += frame_of(seq, want + wlen, sizeof(want) - wlen);
	}
	w0 = svd_events_writes(f->ev);
	for (uint64_t seq = 1; seq <= N; seq++) {
		publish(f, seq);
	}
	pump(f, 0);
	assert_int_equal(svd_events_writes(f->ev), w0 + SUBS);
	for (int i = 0; i < SUBS; i++) {
		/* one sendmsg of a few hundred bytes into an empty AF_UNIX
		 * stream: all of it is there now, and nothing more */
		ssize_t r = recv(fd[i], got, sizeof(got), MSG_DONTWAIT);
		assert_int_equal(r, (ssize_t) wlen);
		assert_memory_equal(got, want, wlen);
		close(fd[i]);
	}
	assert_int_equal(svd_events_dropped(f->ev), 0);
	pump_until_subs(f, 0);
}

/* (c) Three and a half pendings' worth in one turn, a reader that reads
 * only after the turn: nothing lost (handed over at the bound, half a
 * queue at a time), in order; one write per hand-over. */
static void
test_bound(void **state)
{
	enum { N = 3 * SVD_EVENTS_PENDING + SVD_EVENTS_PENDING / 2 };
	fx           *f = *state;
	rd            r = {0};
	unsigned long w0;

	_Static_assert(N > SVD_EVENTS_QUEUE, "more than one queue holds");
	r.fd = dial(f, 0x21);
	pump_until_subs(f, 1);
	w0 = svd_events_writes(f->ev);
	for (uint64_t seq = 1; seq <= N; seq++) {
		publish(f, seq);
	}
	/* three hand-overs at the bound happened already */
	assert_int_equal(svd_events_writes(f->ev), w0 + 3);
	pump(f, 0);
	assert_int_equal(svd_events_writes(f->ev), w0 + 4);
	rd_take(&r);
	assert_int_equal(r.got, N);
	assert_int_equal(r.first_seq, 1);
	assert_int_equal(r.last_seq, N);
	assert_false(r.gap);
	assert_int_equal(svd_events_dropped(f->ev), 0);
	close(r.fd);
	pump_until_subs(f, 0);
}

/* (d) A subscriber that never reads, fed a few events per turn: the drop
 * rule as before. It keeps the oldest its socket took and the newest its
 * queue holds, every loss is counted, and the stream stays whole (rd_take
 * checks every frame). */
static void
test_slow_drop_rule(void **state)
{
	enum { TURNS = 1500, PER = 3, TOTAL = TURNS * PER };
	fx      *f    = *state;
	rd       slow = {0}, fast = {0};
	uint64_t seq = 0, end;

	slow.fd = dial(f, 0x21);
	fast.fd = dial(f, 0x21);
	pump_until_subs(f, 2);
	for (int t = 0; t < TURNS; t++) {
		for (int k = 0; k < PER; k++) {
			publish(f, ++seq);
		}
		pump(f, 0);
		rd_take(&fast);
	}
	end = sv_loop_now_ms() + DEADLINE_MS;
	while (fast.got < TOTAL) {
		assert_true(sv_loop_now_ms() < end);
		pump(f, 20);
		rd_take(&fast);
	}
	assert_false(fast.gap);
	assert_true(svd_events_dropped(f->ev) > 0); /* all of them slow's */
	/* it reads now: got + dropped is everything, oldest and newest kept */
	end = sv_loop_now_ms() + DEADLINE_MS;
	while (slow.last_seq < TOTAL) {
		assert_true(sv_loop_now_ms() < end);
		pump(f, 20);
		rd_take(&slow);
	}
	assert_int_equal(slow.got + svd_events_dropped(f->ev), TOTAL);
	assert_int_equal(slow.first_seq, 1);
	/* one gap: what the socket took (from the first, in a row), then
	 * the newest the queue held (at least SVD_EVENTS_QUEUE - 1 of
	 * them: its head may have been a frame partly written, kept) */
	assert_int_equal(slow.gaps, 1);
	assert_true(slow.run >= SVD_EVENTS_QUEUE - 1);
	assert_true(slow.run <= SVD_EVENTS_QUEUE);
	print_message("[fanout] slow subscriber got %llu of %d, %lu dropped\n",
	    (unsigned long long) slow.got, TOTAL, svd_events_dropped(f->ev));
	close(slow.fd);
	close(fast.fd);
	pump_until_subs(f, 0);
}

/* (e) A subscriber accepted in the turn whose end hands over what was
 * published before: it gets none of that, then all that follows. */
static void
test_accepted_while_pending(void **state)
{
	fx      *f   = *state;
	rd       old = {0}, late = {0};
	uint64_t end;

	old.fd = dial(f, 0x21);
	pump_until_subs(f, 1);
	publish(f, 1);
	publish(f, 2);
	/* dial's first turn accepts the new one, then hands 1 and 2 over */
	late.fd = dial(f, 0x21);
	pump_until_subs(f, 2);
	publish(f, 3);
	end = sv_loop_now_ms() + DEADLINE_MS;
	while (late.got < 1 || old.got < 3) {
		assert_true(sv_loop_now_ms() < end);
		pump(f, 20);
		rd_take(&old);
		rd_take(&late);
	}
	assert_int_equal(old.got, 3);
	assert_false(old.gap);
	assert_int_equal(late.got, 1);
	assert_int_equal(late.first_seq, 3);
	assert_int_equal(svd_events_dropped(f->ev), 0);
	close(old.fd);
	close(late.fd);
	pump_until_subs(f, 0);
}

/* (f) A hang-up noticed in the turn, before the hand-over: what was
 * pending for it is counted as dropped (not lost silently). Then close:
 * what is pending is written to the others before the connections go. */
static void
test_hangup_and_close(void **state)
{
	fx     *f    = *state;
	rd      gone = {0}, stay = {0};
	uint8_t want[128], got[129];
	size_t  wlen;
	ssize_t n;

	gone.fd = dial(f, 0x21);
	stay.fd = dial(f, 0x21);
	pump_until_subs(f, 2);
	publish(f, 1);
	publish(f, 2);
	close(gone.fd);
	pump_until_subs(f, 1); /* the hang-up, then the hand-over */
	assert_int_equal(svd_events_dropped(f->ev), 2);
	rd_take(&stay);
	assert_int_equal(stay.got, 2);
	publish(f, 3);
	publish(f, 4);
	svd_events_close(f->ev); /* no turn in between */
	f->ev = NULL;
	/* 3 and 4, whole, then the end of the stream */
	wlen = frame_of(3, want, sizeof(want));
	wlen += frame_of(4, want + wlen, sizeof(want) - wlen);
	n = recv(stay.fd, got, sizeof(got), MSG_DONTWAIT);
	assert_int_equal(n, (ssize_t) wlen);
	assert_memory_equal(got, want, wlen);
	assert_int_equal(recv(stay.fd, got, 1, MSG_DONTWAIT), 0);
	close(stay.fd);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
	        test_deferred, ev_setup, ev_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_deferred_in_turn, ev_setup, ev_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_coalesced_bytes, ev_setup, ev_teardown),
	    cmocka_unit_test_setup_teardown(test_bound, ev_setup, ev_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_slow_drop_rule, ev_setup, ev_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_accepted_while_pending, ev_setup, ev_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_hangup_and_close, ev_setup, ev_teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests_name(
	    "test_events_fanout", tests, NULL, NULL);
}
