/*
 * test_loop.c — the event loop (shell/loop.c): the timer heap fires in
 * deadline order under random arm/stop/re-arm, timeouts are computed from
 * the earliest timer, and fd callbacks run for ready descriptors; one
 * turn (sv_loop_dispatch) fires at most 64 due timers, so a ready fd is
 * served between batches of a thousand timers due together; after-dispatch
 * callbacks (sv_defer) run after a turn's fd callbacks and timers, in
 * arming order, once, and one armed by another waits for the next turn.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cmocka.h>

#include "shell/loop.h"

enum { NT = 500 };

static uint64_t fired_at[NT];
static int      fired_order[NT];
static int      nfired;

/* record_cb notes which timer fired, in order. */
static void
record_cb(sv_loop *loop, sv_timer *t)
{
	(void) loop;
	int i                 = (int) (intptr_t) t->arg;
	fired_at[i]           = t->deadline_ms;
	fired_order[nfired++] = i;
}

/* Random arm, stop and re-arm; then everything due fires in deadline order
 * exactly once, and stopped timers never fire. */
static void
test_heap_order(void **state)
{
	sv_loop *l;
	sv_timer t[NT];
	bool     armed[NT] = {false};
	unsigned seed      = 99;
	int      expect    = 0;

	(void) state;
	nfired = 0;
	assert_int_equal(sv_loop_create(&l), SV_OK);
	for (int i = 0; i < NT; i++) {
		sv_timer_init(&t[i], record_cb, (void *) (intptr_t) i);
	}
	for (int step = 0; step < 5000; step++) {
		int i = rand_r(&seed) % NT;
		if (rand_r(&seed) % 3 == 0) {
			sv_loop_timer_stop(l, &t[i]);
			armed[i] = false;
		} else {
			assert_int_equal(
			    sv_loop_timer_start(
			        l, &t[i], (uint64_t) (rand_r(&seed) % 100000)),
			    SV_OK);
			armed[i] = true;
		}
		assert_int_equal(sv_timer_armed(&t[i]), armed[i]);
	}
	for (int i = 0; i < NT; i++) {
		expect += armed[i];
	}
	/* Nothing is due now (deadlines are in the future or now). */
	assert_true(sv_loop_next_timeout(l, -1) >= 0);
	assert_int_equal(sv_loop_next_timeout(l, 0), 0);
	assert_int_equal(sv_loop_run_timers(l, UINT64_MAX), (size_t) expect);
	assert_int_equal(nfired, expect);
	for (int k = 1; k < nfired; k++) {
		assert_true(
		    fired_at[fired_order[k - 1]] <= fired_at[fired_order[k]]);
	}
	for (int k = 0; k < nfired; k++) {
		assert_true(armed[fired_order[k]]);
		assert_false(sv_timer_armed(&t[fired_order[k]]));
	}
	assert_int_equal(sv_loop_next_timeout(l, 1234), 1234);
	assert_int_equal(sv_loop_next_timeout(l, -1), -1);
	sv_loop_destroy(l);
}

/* rearm_cb re-arms its own timer once (a callback may arm timers). */
static void
rearm_cb(sv_loop *loop, sv_timer *t)
{
	int *count = t->arg;
	if ((*count)++ == 0) {
		assert_int_equal(sv_loop_timer_start(loop, t, 0), SV_OK);
	}
}

/* A timer re-armed from its callback with delay 0 fires again in the same
 * run (its deadline is not after now); waiting honours timers. */
static void
test_rearm_from_callback(void **state)
{
	sv_loop *l;
	sv_timer t;
	int      count = 0;

	(void) state;
	assert_int_equal(sv_loop_create(&l), SV_OK);
	sv_timer_init(&t, rearm_cb, &count);
	assert_int_equal(sv_loop_timer_start(l, &t, 5), SV_OK);
	/* poll waits for the timer deadline (about 5 ms), no fd needed. */
	uint64_t t0 = sv_loop_now_ms();
	while (count < 2 && sv_loop_now_ms() - t0 < 5000) {
		int n;
		assert_int_equal(
		    sv_loop_wait(l, sv_loop_next_timeout(l, -1), &n), SV_OK);
		sv_loop_dispatch(l, n);
	}
	assert_int_equal(count, 2);
	assert_true(sv_loop_now_ms() - t0 >= 5);
	sv_loop_destroy(l);
}

static int io_calls;

/* io_cb drains an eventfd. */
static void
io_cb(sv_loop *loop, sv_io *io, uint32_t events)
{
	uint64_t v;
	(void) loop;
	assert_true(events & EPOLLIN);
	assert_int_equal(read(io->fd, &v, sizeof(v)), sizeof(v));
	io_calls += (int) v;
}

/* 500 timers due together and a ready fd: the first turn fires 64 timers,
 * the wait that follows does not block (timers are still due), the fd is
 * served in the second turn while 372 timers are still waiting, and every
 * timer fires exactly once in deadline order over 8 turns. */
static void
test_dispatch_batches_timers(void **state)
{
	sv_loop *l;
	sv_timer t[NT];
	sv_io    io;
	int      n, turns = 0, fired_before_io = -1;
	uint64_t one = 1;

	(void) state;
	nfired   = 0;
	io_calls = 0;
	assert_int_equal(sv_loop_create(&l), SV_OK);
	for (int i = 0; i < NT; i++) {
		sv_timer_init(&t[i], record_cb, (void *) (intptr_t) i);
		assert_int_equal(sv_loop_timer_start(l, &t[i], 0), SV_OK);
	}
	sv_loop_dispatch(l, 0);
	turns++;
	assert_int_equal(nfired, 64);
	assert_int_equal(sv_loop_next_timeout(l, -1), 0);
	io.fd  = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	io.cb  = io_cb;
	io.arg = NULL;
	assert_true(io.fd >= 0);
	assert_int_equal(sv_loop_add_io(l, &io, EPOLLIN), SV_OK);
	assert_int_equal(write(io.fd, &one, sizeof(one)), sizeof(one));
	while (nfired < NT && turns < 100) {
		assert_int_equal(
		    sv_loop_wait(l, sv_loop_next_timeout(l, 1000), &n), SV_OK);
		if (n > 0 && fired_before_io < 0) {
			fired_before_io = nfired;
		}
		sv_loop_dispatch(l, n);
		turns++;
	}
	assert_int_equal(nfired, NT);
	assert_int_equal(turns, (NT + 63) / 64);
	assert_int_equal(fired_before_io, 64);
	assert_int_equal(io_calls, 1);
	for (int k = 1; k < nfired; k++) {
		assert_true(
		    fired_at[fired_order[k - 1]] <= fired_at[fired_order[k]]);
	}
	sv_loop_del_io(l, &io);
	close(io.fd);
	sv_loop_destroy(l);
}

/* A ready fd runs its callback; a removed fd does not. */
static void
test_io(void **state)
{
	sv_loop *l;
	sv_io    io;
	uint64_t three = 3;
	int      n;

	(void) state;
	io_calls = 0;
	assert_int_equal(sv_loop_create(&l), SV_OK);
	io.fd  = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	io.cb  = io_cb;
	io.arg = NULL;
	assert_true(io.fd >= 0);
	assert_int_equal(sv_loop_add_io(l, &io, EPOLLIN), SV_OK);
	assert_int_equal(sv_loop_wait(l, 0, &n), SV_OK);
	assert_int_equal(n, 0);
	assert_int_equal(write(io.fd, &three, sizeof(three)), sizeof(three));
	assert_int_equal(sv_loop_wait(l, 1000, &n), SV_OK);
	assert_int_equal(n, 1);
	sv_loop_dispatch(l, n);
	assert_int_equal(io_calls, 3);
	sv_loop_del_io(l, &io);
	assert_int_equal(write(io.fd, &three, sizeof(three)), sizeof(three));
	assert_int_equal(sv_loop_wait(l, 0, &n), SV_OK);
	assert_int_equal(n, 0);
	close(io.fd);
	sv_loop_destroy(l);
}

/* What ran, in order, in test_defer: 'i' fd, 't' timer, 'a'/'b'/'c'
 * after-dispatch callbacks. */
static char trace[32];
static int  ntrace;

/* trace_io_cb drains the eventfd, arms defer a, notes 'i'. */
static void
trace_io_cb(sv_loop *loop, sv_io *io, uint32_t events)
{
	uint64_t v;

	(void) events;
	assert_int_equal(read(io->fd, &v, sizeof(v)), sizeof(v));
	sv_loop_defer(loop, io->arg);
	sv_loop_defer(loop, io->arg); /* armed already: no-op */
	trace[ntrace++] = 'i';
}

/* trace_timer_cb notes 't'. */
static void
trace_timer_cb(sv_loop *loop, sv_timer *t)
{
	(void) loop;
	(void) t;
	trace[ntrace++] = 't';
}

/* What an after-dispatch callback of test_defer notes, and what it arms. */
typedef struct mark {
	char      letter;
	sv_defer *arm; /* armed from the callback, or NULL */
} mark;

/* trace_defer_cb notes its letter and arms what its mark says. */
static void
trace_defer_cb(sv_loop *loop, sv_defer *d)
{
	const mark *m = d->arg;

	trace[ntrace++] = m->letter;
	if (m->arm != NULL) {
		sv_loop_defer(loop, m->arm);
	}
}

/* After-dispatch callbacks: after the turn's fd callbacks and timers, in
 * arming order, once each; the loop does not sleep while one is armed; a
 * cancelled one never runs; one armed by another runs a turn later. */
static void
test_defer(void **state)
{
	sv_loop *l;
	sv_io    io;
	sv_timer t;
	sv_defer a, b, c, never;
	mark     ma = {'a', &c}, mb = {'b', NULL}, mc = {'c', NULL},
	     mn      = {'n', NULL};
	uint64_t one = 1;
	int      n;

	(void) state;
	ntrace = 0;
	assert_int_equal(sv_loop_create(&l), SV_OK);
	sv_defer_init(&a, trace_defer_cb, &ma);
	sv_defer_init(&b, trace_defer_cb, &mb);
	sv_defer_init(&c, trace_defer_cb, &mc);
	sv_defer_init(&never, trace_defer_cb, &mn);
	io.fd  = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	io.cb  = trace_io_cb;
	io.arg = &a;
	assert_true(io.fd >= 0);
	assert_int_equal(sv_loop_add_io(l, &io, EPOLLIN), SV_OK);
	sv_timer_init(&t, trace_timer_cb, NULL);
	assert_int_equal(sv_loop_next_timeout(l, -1), -1);
	/* b armed outside a turn: the loop must not sleep */
	sv_loop_defer(l, &b);
	sv_loop_defer(l, &never);
	assert_true(sv_defer_armed(&b));
	assert_int_equal(sv_loop_next_timeout(l, -1), 0);
	assert_int_equal(sv_loop_next_timeout(l, 500), 0);
	sv_loop_defer_cancel(l, &never);
	assert_false(sv_defer_armed(&never));
	assert_int_equal(sv_loop_timer_start(l, &t, 0), SV_OK);
	assert_int_equal(write(io.fd, &one, sizeof(one)), sizeof(one));
	assert_int_equal(sv_loop_wait(l, 1000, &n), SV_OK);
	assert_int_equal(n, 1);
	sv_loop_dispatch(l, n);
	trace[ntrace] = '\0';
	/* fd, timer, then b (armed first), then a (armed by the fd); c,
	 * armed by a, waits for the next turn, and the loop does not sleep */
	assert_string_equal(trace, "itba");
	assert_false(sv_defer_armed(&a));
	assert_false(sv_defer_armed(&b));
	assert_true(sv_defer_armed(&c));
	assert_int_equal(sv_loop_next_timeout(l, -1), 0);
	assert_int_equal(sv_loop_wait(l, 0, &n), SV_OK);
	assert_int_equal(n, 0);
	sv_loop_dispatch(l, n);
	trace[ntrace] = '\0';
	assert_string_equal(trace, "itbac");
	assert_false(sv_defer_armed(&c));
	assert_int_equal(sv_loop_next_timeout(l, -1), -1);
	/* destroying the loop disarms what is still armed */
	sv_loop_defer(l, &b);
	sv_loop_del_io(l, &io);
	close(io.fd);
	sv_loop_destroy(l);
	assert_false(sv_defer_armed(&b));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_heap_order),
	    cmocka_unit_test(test_rearm_from_callback),
	    cmocka_unit_test(test_io),
	    cmocka_unit_test(test_defer),
	    cmocka_unit_test(test_dispatch_batches_timers),
	};
	return cmocka_run_group_tests_name("loop", tests, NULL, NULL);
}
