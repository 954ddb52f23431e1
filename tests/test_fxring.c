/*
 * test_fxring.c — the cores' effect queue (core/fxring.c): FIFO order
 * across reservations, growth while the records wrap around the end of
 * the buffer, and the rewind when the ring empties.
 *
 * The rewind is what keeps the daemon's memory to what is in flight: a
 * reservation may make the buffer far larger than the effects ever queued
 * at once (a bound for every seat of a group), and pages of it that are
 * never written are never resident. A ring whose head kept advancing while
 * it emptied would, over time, write every record of the buffer. The test
 * fills the buffer with a sentinel and checks that a long run of small
 * push/pop rounds writes only the first records.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/fxring.h"

/* A record larger than a word, so a copy is more than one store. */
typedef struct rec {
	uint64_t seq;
	uint64_t check;
	char     pad[40];
} rec;

/* mk builds record number seq. */
static rec
mk(uint64_t seq)
{
	rec e;

	memset(&e, 0, sizeof(e));
	e.seq   = seq;
	e.check = ~seq;
	memset(e.pad, (int) (seq & 0x7f), sizeof(e.pad));
	return e;
}

/* expect_pop pops one record and checks it is number seq. */
static void
expect_pop(sv_fxring *r, uint64_t seq)
{
	rec e;

	assert_true(sv_fxring_pop(r, &e));
	assert_int_equal(e.seq, seq);
	assert_int_equal(e.check, ~seq);
}

/* An empty ring pops nothing; records come out in the order pushed. */
static void
test_fifo(void **state)
{
	sv_fxring r;
	rec       e;

	(void) state;
	sv_fxring_init(&r, sizeof(rec));
	assert_false(sv_fxring_pop(&r, &e));
	assert_int_equal(sv_fxring_reserve(&r, 3), SV_OK);
	for (uint64_t i = 0; i < 3; i++) {
		e = mk(i);
		sv_fxring_push(&r, &e);
	}
	for (uint64_t i = 0; i < 3; i++) {
		expect_pop(&r, i);
	}
	assert_false(sv_fxring_pop(&r, &e));
	assert_int_equal(r.overruns, 0);
	sv_fxring_fini(&r);
}

/* Records wrapped around the end of the buffer keep their order when a
 * reservation makes it grow, and after. */
static void
test_grow_wrapped(void **state)
{
	sv_fxring r;
	uint64_t  in = 0, out = 0;
	rec       e;

	(void) state;
	sv_fxring_init(&r, sizeof(rec));
	/* Move the head near the end while records stay queued. */
	assert_int_equal(sv_fxring_reserve(&r, 60), SV_OK);
	for (int i = 0; i < 60; i++) {
		e = mk(in++);
		sv_fxring_push(&r, &e);
	}
	for (int i = 0; i < 50; i++) {
		expect_pop(&r, out++);
	}
	assert_int_equal(sv_fxring_reserve(&r, 40), SV_OK);
	for (int i = 0; i < 40; i++) {
		e = mk(in++);
		sv_fxring_push(&r, &e);
	}
	/* 50 queued, some past the end: this one must grow. */
	assert_int_equal(sv_fxring_reserve(&r, 100), SV_OK);
	assert_true(r.cap >= 150);
	for (int i = 0; i < 100; i++) {
		e = mk(in++);
		sv_fxring_push(&r, &e);
	}
	while (out < in) {
		expect_pop(&r, out++);
	}
	assert_false(sv_fxring_pop(&r, &e));
	assert_int_equal(r.overruns, 0);
	sv_fxring_fini(&r);
}

/* A ring that empties starts again at the front of its buffer: rounds of
 * at most k records in flight write only the first k records of a much
 * larger buffer, however many rounds there are. */
static void
test_rewind_when_empty(void **state)
{
	enum { K = 3, BIG = 4096, ROUNDS = 5000 };
	sv_fxring r;
	uint64_t  in = 0, out = 0;
	rec       e;

	(void) state;
	sv_fxring_init(&r, sizeof(rec));
	/* A large bound, as an entry point that may reach every seat. */
	assert_int_equal(sv_fxring_reserve(&r, BIG), SV_OK);
	assert_true(r.cap >= BIG);
	memset(r.buf, 0xa5, r.cap * r.esize);
	for (int round = 0; round < ROUNDS; round++) {
		int k = 1 + round % K;
		assert_int_equal(sv_fxring_reserve(&r, (size_t) k), SV_OK);
		for (int i = 0; i < k; i++) {
			e = mk(in++);
			sv_fxring_push(&r, &e);
		}
		while (out < in) {
			expect_pop(&r, out++);
		}
	}
	assert_false(sv_fxring_pop(&r, &e));
	for (size_t b = K * r.esize; b < r.cap * r.esize; b++) {
		if (r.buf[b] != 0xa5) {
			fail_msg("byte %zu of %zu written (record %zu): the "
			         "ring did not rewind when it emptied",
			    b, r.cap * r.esize, b / r.esize);
		}
	}
	/* And a reservation after the rewind does not grow it. */
	assert_int_equal(sv_fxring_reserve(&r, BIG), SV_OK);
	assert_true(r.cap < 2 * BIG);
	assert_int_equal(r.overruns, 0);
	sv_fxring_fini(&r);
}

/* A model check: random reservations, pushes and pops against a counter
 * of what is queued. */
static void
test_model(void **state)
{
	sv_fxring r;
	uint64_t  in = 0, out = 0, seed = 12345;
	rec       e;

	(void) state;
	sv_fxring_init(&r, sizeof(rec));
	for (int step = 0; step < 20000; step++) {
		seed     = seed * 6364136223846793005u + 1442695040888963407u;
		size_t n = (size_t) (seed >> 33) % 50;
		size_t p = (size_t) (seed >> 45) % 60;
		assert_int_equal(sv_fxring_reserve(&r, n), SV_OK);
		for (size_t i = 0; i < n; i++) {
			e = mk(in++);
			sv_fxring_push(&r, &e);
		}
		for (size_t i = 0; i < p && out < in; i++) {
			expect_pop(&r, out++);
		}
		assert_int_equal(r.n, in - out);
	}
	while (out < in) {
		expect_pop(&r, out++);
	}
	assert_false(sv_fxring_pop(&r, &e));
	assert_int_equal(r.overruns, 0);
	sv_fxring_fini(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fifo),
	    cmocka_unit_test(test_grow_wrapped),
	    cmocka_unit_test(test_rewind_when_empty),
	    cmocka_unit_test(test_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
