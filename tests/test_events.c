/*
 * test_events.c — the event socket (daemon/events.c) driven directly: a
 * loop, a PUB on a temporary ipc path, raw AF_UNIX subscribers.
 *
 * Design: the test owns the loop and runs it by hand (events_fixture.h:
 * pump runs one turn, and what was published is written at its end), so
 * every wait is "until the loop has seen X, or a deadline" and nothing
 * sleeps. The deferred fan-out itself is tested in test_events_fanout.c.
 * Cases:
 * the wire (headers, frame, topic, Event); the drop rule (a subscriber that
 * never reads loses messages, counted and logged, while one that reads
 * loses none, and the slow one keeps the newest); peers that are not SUBs,
 * or that send, are closed; hang-ups mid-handshake leave the socket
 * accepting (the case of nng 1.5.2's bug #1518).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
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

#define MANY 4000 /* events published at the slow subscriber */

/* The wire: headers, one frame, topic, NUL, Event. */
static void
test_wire(void **state)
{
	fx *f = *state;
	rd  r = {0};

	r.fd = dial(f, 0x21);
	pump_until_subs(f, 1);
	publish(f, 7);
	pump(f, 0); /* written at the end of the turn */
	rd_take(&r);
	assert_int_equal(r.got, 1);
	assert_int_equal(r.last_seq, 7);
	assert_int_equal(svd_events_dropped(f->ev), 0);
	close(r.fd);
	pump_until_subs(f, 0);
}

/* What is published after the handshake reached the client (it has our
 * header) but before the daemon read the client's header is not lost: it
 * is queued and written once the header checks out. */
static void
test_published_during_handshake(void **state)
{
	fx           *f      = *state;
	const uint8_t hdr[8] = {0, 'S', 'P', 0, 0, 0x21, 0, 0};
	rd            r      = {0};
	uint64_t      end    = sv_loop_now_ms() + DEADLINE_MS;

	r.fd = dial(f, -1); /* our header read, the SUB's not sent yet */
	assert_int_equal(svd_events_subscribers(f->ev), 0);
	publish(f, 1);
	publish(f, 2);
	assert_int_equal(write(r.fd, hdr, sizeof(hdr)), (ssize_t) sizeof(hdr));
	pump_until_subs(f, 1);
	while (r.got < 2 && sv_loop_now_ms() < end) {
		pump(f, 20);
		rd_take(&r);
	}
	assert_int_equal(r.got, 2);
	assert_int_equal(r.first_seq, 1);
	assert_int_equal(r.last_seq, 2);
	assert_false(r.gap);
	assert_int_equal(svd_events_dropped(f->ev), 0);
	close(r.fd);
	pump_until_subs(f, 0);
}

/* The drop rule: a subscriber that never reads loses messages, for itself
 * only; each is counted and logged; it keeps the oldest the socket took
 * and the newest the queue holds, and nothing in between is torn. */
static void
test_slow_subscriber(void **state)
{
	fx      *f    = *state;
	rd       fast = {0}, slow = {0};
	char     logpath[128], text[4096];
	int      saved, logfd;
	FILE    *lf;
	size_t   n;
	uint64_t end;

	/* svd_log writes straight to stderr before svd_log_start: catch it */
	snprintf(logpath, sizeof(logpath), "%s/log", f->dir);
	logfd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(logfd >= 0);
	fflush(stderr);
	saved = dup(2);
	dup2(logfd, 2);

	fast.fd = dial(f, 0x21);
	slow.fd = dial(f, 0x21);
	pump_until_subs(f, 2);
	for (uint64_t seq = 1; seq <= MANY; seq++) {
		publish(f, seq);
		pump(f, 0);
		rd_take(&fast);
	}
	end = sv_loop_now_ms() + DEADLINE_MS;
	while (fast.got < MANY) {
		assert_true(sv_loop_now_ms() < end);
		pump(f, 20);
		rd_take(&fast);
	}
	/* the reader lost nothing */
	assert_int_equal(fast.got, MANY);
	assert_false(fast.gap);
	assert_int_equal(fast.first_seq, 1);
	/* the other one lost some, all counted */
	assert_true(svd_events_dropped(f->ev) > 0);
	/* now it reads: what it gets plus what was dropped is everything */
	end = sv_loop_now_ms() + DEADLINE_MS;
	while (slow.last_seq < MANY) {
		assert_true(sv_loop_now_ms() < end);
		pump(f, 20);
		rd_take(&slow);
	}
	assert_int_equal(slow.got + svd_events_dropped(f->ev), MANY);
	assert_true(slow.gap);
	assert_int_equal(slow.first_seq, 1); /* the oldest the socket took */
	assert_int_equal(slow.last_seq, MANY); /* ... and the newest */
	print_message("[events] slow subscriber got %llu of %d, %lu dropped\n",
	    (unsigned long long) slow.got, MANY, svd_events_dropped(f->ev));
	close(fast.fd);
	close(slow.fd);
	pump_until_subs(f, 0);

	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(logfd);
	lf = fopen(logpath, "r");
	assert_non_null(lf);
	n       = fread(text, 1, sizeof(text) - 1, lf);
	text[n] = '\0';
	fclose(lf);
	unlink(logpath);
	assert_non_null(strstr(text,
	    "messages dropped for subscribers that "
	    "do not keep up"));
}

/* A peer that is not a SUB, or a SUB that sends, is closed; hang-ups in
 * the middle of the handshake leave the socket accepting. */
static void
test_bad_peers(void **state)
{
	fx      *f = *state;
	rd       r = {0};
	int      fd;
	uint8_t  b;
	uint64_t end;

	/* a REQ peer: closed at its header */
	fd  = dial(f, 0x30);
	end = sv_loop_now_ms() + DEADLINE_MS;
	for (;;) {
		ssize_t n = recv(fd, &b, 1, MSG_DONTWAIT);
		if (n == 0) {
			break;
		}
		assert_true(n < 0 && errno == EAGAIN);
		assert_true(sv_loop_now_ms() < end);
		pump(f, 20);
	}
	close(fd);
	assert_int_equal(svd_events_subscribers(f->ev), 0);

	/* a SUB that sends bytes after its header: closed */
	fd = dial(f, 0x21);
	pump_until_subs(f, 1);
	assert_int_equal(write(fd, "x", 1), 1);
	pump_until_subs(f, 0);
	close(fd);

	/* 100 hang-ups mid-handshake, half a header or none */
	for (int i = 0; i < 100; i++) {
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", f->path);
		assert_int_equal(
		    connect(s, (struct sockaddr *) &sa, sizeof(sa)), 0);
		if (i % 2 == 0) {
			assert_int_equal(write(s, "\0SP\0", 4), 4);
		}
		close(s);
		pump(f, 0);
	}
	/* still serving */
	r.fd = dial(f, 0x21);
	pump_until_subs(f, 1);
	publish(f, 1);
	pump(f, 0);
	rd_take(&r);
	assert_int_equal(r.got, 1);
	close(r.fd);
	pump_until_subs(f, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_wire, ev_setup, ev_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_published_during_handshake, ev_setup, ev_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_slow_subscriber, ev_setup, ev_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_bad_peers, ev_setup, ev_teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests_name("test_events", tests, NULL, NULL);
}
