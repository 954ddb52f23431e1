/*
 * events_fixture.h — what the tests of the event socket (daemon/events.c)
 * share: a loop they run by hand, a PUB on a temporary ipc path, raw
 * AF_UNIX subscribers, and a reader that parses and checks frames.
 *
 * Design: every wait is "until the loop has seen X, or a deadline"
 * (DEADLINE_MS); nothing sleeps. pump runs one turn as the daemon does
 * (wait, dispatch: fd callbacks, timers, after-dispatch callbacks, where
 * the event socket writes what was published).
 */
#ifndef SV_TESTS_EVENTS_FIXTURE_H
#define SV_TESTS_EVENTS_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "events.h"
#include "shell/loop.h"

#define DEADLINE_MS 5000

/* One socket under test; ev_setup allocates it, ev_teardown frees it. */
typedef struct fx {
	char        dir[64];
	char        path[100];
	sv_loop    *loop;
	svd_events *ev;
} fx;

/* A subscriber's reading side: bytes not yet parsed into frames. */
typedef struct rd {
	int      fd;
	uint8_t  buf[1 << 16];
	size_t   len;
	uint64_t got, last_seq, first_seq;
	bool     gap; /* seq did not grow by one somewhere */
	uint64_t gaps; /* how many times */
	uint64_t run; /* frames in a row (seq + 1 each) ending the stream */
} rd;

/* ev_setup and ev_teardown are cmocka fixtures (*state is the fx). */
int ev_setup(void **state);
int ev_teardown(void **state);

/* pump runs the loop one turn: waits up to ms for readiness, dispatches
 * (fd callbacks, due timers, after-dispatch callbacks). */
void pump(fx *f, int ms);

/* pump_until_subs runs the loop until want subscribers are open. */
void pump_until_subs(fx *f, size_t want);

/* dial connects a raw stream to the socket; proto >= 0 sends that SP
 * header. The daemon's header is read and checked (PUB0). The caller
 * closes the descriptor. */
int dial(fx *f, int proto);

/* publish sends one worker event ("w/web/3/") with sequence number seq. */
void publish(fx *f, uint64_t seq);

/* frame_of writes into buf (cap bytes) the exact frame publish(f, seq)
 * puts on the wire and returns its length. */
size_t frame_of(uint64_t seq, uint8_t *buf, size_t cap);

/* rd_take reads what r->fd has (non-blocking) and parses whole frames,
 * checking each (type, topic, Event) and the sequence. */
void rd_take(rd *r);

#endif /* SV_TESTS_EVENTS_FIXTURE_H */
