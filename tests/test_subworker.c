/*
 * test_subworker.c — sub-ordinals of threads and forked children
 * (core/subworker.c), without processes: pids are plain numbers standing
 * for what the shell would read from the kernel. Allocation order, reuse
 * after release, label memory, requested numbers, bounds, telling two
 * processes' thread 0 apart, who may claim and release, nesting refusal,
 * reclaim on death and inheritance by the next generation, eviction of
 * memory, and a randomised model check against a simple reference.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/subworker.h"

static const sv_wkey P0 = {1, 0, 0}; /* group 1, ordinal 0, generation 0 */
static const sv_wkey P1 = {1, 1, 0}; /* group 1, ordinal 1 */

/* thr makes a thread request for label (no number, no tid). */
static sv_subw_request
thr(const char *label)
{
	sv_subw_request r = {0};
	r.label           = label;
	r.label_len       = label != NULL ? strlen(label) : 0;
	return r;
}

/* thr_n makes a thread request for label asking for number n. */
static sv_subw_request
thr_n(const char *label, uint32_t n)
{
	sv_subw_request r = thr(label);
	r.has_number      = true;
	r.number          = n;
	return r;
}

/* Threads get 0, 1, 2 with sub-generation 0, under their process. */
static void
test_thread_sequential(void **state)
{
	sv_subworkers   s;
	sv_subw_grant   g;
	sv_subw_request r;
	const char     *labels[] = {"main", "io", "cron"};
	uint32_t        t, c;

	(void) state;
	assert_int_equal(sv_subw_init(&s, 8), SV_OK);
	assert_int_equal(sv_subw_attach(&s, P0, 100, 0), SV_OK);
	for (uint32_t i = 0; i < 3; i++) {
		r = thr(labels[i]);
		assert_int_equal(sv_subw_claim_thread(&s, 100, &r, &g), SV_OK);
		assert_int_equal(g.sub_ordinal, i);
		assert_int_equal(g.generation, 0);
		assert_int_equal(g.kind, SV_SUBW_THREAD);
		assert_int_equal(g.pid, 100);
		assert_int_equal(g.proc_pid, 100);
		assert_int_equal(g.proc.ordinal, 0);
		assert_false(g.again);
		assert_true(sv_subw_held(&s, P0, SV_SUBW_THREAD, i));
		/* Threads and children are numbered apart. */
		assert_false(sv_subw_held(&s, P0, SV_SUBW_PROCESS, i));
	}
	assert_int_equal(sv_subw_count(&s, P0, &t, &c), SV_OK);
	assert_int_equal(t, 3);
	assert_int_equal(c, 0);
	sv_subw_fini(&s);
}

/* A released number is handed out again, lowest first, to a new label;
 * a label that comes back takes its old number even if a lower one is
 * free; generations of a number grow. */
static void
test_reuse_and_memory(void **state)
{
	sv_subworkers   s;
	sv_subw_grant   a, b, c, d;
	sv_subw_request r;

	(void) state;
	assert_int_equal(sv_subw_init(&s, 8), SV_OK);
	assert_int_equal(sv_subw_attach(&s, P0, 100, 0), SV_OK);
	r = thr("a");
	assert_int_equal(sv_subw_claim_thread(&s, 100, &r, &a), SV_OK);
	r = thr("b");
	assert_int_equal(sv_subw_claim_thread(&s, 100, &r, &b), SV_OK);
	r = thr("c");
	assert_int_equal(sv_subw_claim_thread(&s, 100, &r, &c), SV_OK);
	assert_int_equal(c.sub_ordinal, 2);

	/* b ends; a new role takes its number, at the next generation. */
	assert_int_equal(sv_subw_release(&s, 100, &b), SV_OK);
	assert_false(sv_subw_held(&s, P0, SV_SUBW_THREAD, 1));
	r = thr("d");
	assert_int_equal(sv_subw_claim_thread(&s, 100, &r, &d), SV_OK);
	assert_int_equal(d.sub_ordinal, 1);
	assert_int_equal(d.generation, 1);

	/* a and c end; c comes back and takes 2 again although 0 is free. */
	assert_int_equal(sv_subw_release(&s, 100, &a), SV_OK);
	assert_int_equal(sv_subw_release(&s, 100, &c), SV_OK);
	r = thr("c");
	assert_int_equal(sv_subw_claim_thread(&s, 100, &r, &c), SV_OK);
	assert_int_equal(c.sub_ordinal, 2);
	assert_int_equal(c.generation, 1);
	/* A new label takes the lowest free one. */
	r = thr("e");
	assert_int_equal(sv_subw_claim_thread(&s, 100, &r, &a), SV_OK);
	assert_int_equal(a.sub_ordinal, 0);
	assert_int_equal(a.generation, 1);

	/* A stale release (b's old grant, number 1 now d's) changes nothing;
	 * a second release of a grant too. */
	assert_int_equal(sv_subw_release(&s, 100, &b), SV_OK);
	assert_true(sv_subw_held(&s, P0, SV_SUBW_THREAD, 1));
	assert_int_equal(sv_subw_release(&s, 100, &d), SV_OK);
	assert_int_equal(sv_subw_release(&s, 100, &d), SV_OK);
	assert_false(sv_subw_held(&s, P0, SV_SUBW_THREAD, 1));
	sv_subw_fini(&s);
}

/* A held label claimed again is the same grant; conflicting details are
 * refused; bad labels are refused. */
static void
test_idempotent_reclaim(void **state)
{
	sv_subworkers   s;
	sv_subw_grant   g, h;
	sv_subw_request r;

	(void) state;
	assert_int_equal(sv_subw_init(&s, 8), SV_OK);
	assert_int_equal(sv_subw_attach(&s, P0, 100, 0), SV_OK);
	r     = thr("worker");
	r.tid = 101;
	assert_int_equal(sv_subw_claim_thread(&s, 100, &r, &g), SV_OK);
	assert_int_equal(sv_subw_claim_thread(&s, 100, &r, &h), SV_OK);
	assert_true(h.again);
	assert_int_equal(h.sub_ordinal, g.sub_ordinal);
	assert_int_equal(h.generation, g.generation);
	assert_int_equal(h.tid, 101);
	/* Without a tid the re-claim is the same too. */
	r = thr("worker");
	assert_int_equal(sv_subw_claim_thread(&s, 100, &r, &h), SV_OK);
	assert_true(h.again);
	/* Another live thread with the same label is a conflict. */
	r.tid = 102;
	memset(&h, 0x5a, sizeof(h));
	assert_int_equal(sv_subw_claim_thread(&s, 100, &r, &h), SV_ECONFLICT);
	assert_int_equal(h.sub_ordinal, 0x5a5a5a5a); /* untouched */
	/* The label is held under 0: asking for it under 3 conflicts. */
	r = thr_n("worker", 3);
	assert_int_equal(sv_subw_claim_thread(&s, 100, &r, &h), SV_ECONFLICT);
	r = thr_n("worker", 0);
	assert_int_equal(sv_subw_claim_thread(&s, 100, &r, &h), SV_OK);
	assert_true(h.again);

	/* Labels: required for threads, bounded, no NUL. */
	r = thr(NULL);
	assert_int_equal(sv_subw_claim_thread(&s, 100, &r, &h), SV_EINVAL);
	char long_label[SV_SUBW_LABEL_MAX + 2];
	memset(long_label, 'x', sizeof(long_label));
	long_label[SV_SUBW_LABEL_MAX + 1] = '\0';
	r                                 = thr(long_label);
	assert_int_equal(sv_subw_claim_thread(&s, 100, &r, &h), SV_EINVAL);
	long_label[SV_SUBW_LABEL_MAX] = '\0';
	r                             = thr(long_label);
	assert_int_equal(sv_subw_claim_thread(&s, 100, &r, &h), SV_OK);
	r           = thr("ab");
	r.label     = "a\0b";
	r.label_len = 3;
	assert_int_equal(sv_subw_claim_thread(&s, 100, &r, &h), SV_EINVAL);
	sv_subw_fini(&s);
}

/* A requested number is given if free, refused if held or out of range,
 * and later lowest-free claims go around it. */
static void
test_requested_numbers(void **state)
{
	sv_subworkers   s;
	sv_subw_grant   g;
	sv_subw_request r;

	(void) state;
	assert_int_equal(sv_subw_init(&s, 8), SV_OK);
	assert_int_equal(sv_subw_attach(&s, P0, 100, 16), SV_OK);
	r = thr_n("shard-5", 5);
	assert_int_equal(sv_subw_claim_thread(&s, 100, &r, &g), SV_OK);
	assert_int_equal(g.sub_ordinal, 5);
	r = thr_n("other", 5);
	assert_int_equal(sv_subw_claim_thread(&s, 100, &r, &g), SV_ECONFLICT);
	r = thr_n("other", 16);
	assert_int_equal(sv_subw_claim_thread(&s, 100, &r, &g), SV_EINVAL);
	r = thr_n("other", 15);
	assert_int_equal(sv_subw_claim_thread(&s, 100, &r, &g), SV_OK);
	assert_int_equal(g.sub_ordinal, 15);
	for (uint32_t want = 0; want < 5; want++) {
		char l[8] = {'t', (char) ('0' + want), '\0'};
		r         = thr(l);
		assert_int_equal(sv_subw_claim_thread(&s, 100, &r, &g), SV_OK);
		assert_int_equal(g.sub_ordinal, want);
	}
	r = thr("t5");
	assert_int_equal(sv_subw_claim_thread(&s, 100, &r, &g), SV_OK);
	assert_int_equal(g.sub_ordinal, 6); /* 5 is held */
	sv_subw_fini(&s);
}

/* The bound counts threads and children together; never a number >= it. */
static void
test_bounds(void **state)
{
	sv_subworkers   s;
	sv_subw_grant   g, t0;
	sv_subw_request r;

	(void) state;
	assert_int_equal(sv_subw_init(&s, 8), SV_OK);
	assert_int_equal(sv_subw_attach(&s, P0, 100, 4), SV_OK);
	r = thr("t0");
	assert_int_equal(sv_subw_claim_thread(&s, 100, &r, &t0), SV_OK);
	r = thr("t1");
	assert_int_equal(sv_subw_claim_thread(&s, 100, &r, &g), SV_OK);
	r = thr(NULL);
	assert_int_equal(sv_subw_claim_child(&s, 200, 100, &r, &g), SV_OK);
	assert_int_equal(g.sub_ordinal, 0);
	assert_int_equal(sv_subw_claim_child(&s, 201, 100, &r, &g), SV_OK);
	assert_int_equal(g.sub_ordinal, 1);
	assert_int_equal(
	    sv_subw_claim_child(&s, 202, 100, &r, &g), SV_EEXHAUSTED);
	r = thr("t2");
	assert_int_equal(sv_subw_claim_thread(&s, 100, &r, &g), SV_EEXHAUSTED);
	/* Re-claims still succeed at the bound. */
	r = thr("t1");
	assert_int_equal(sv_subw_claim_thread(&s, 100, &r, &g), SV_OK);
	/* Freeing one makes room for exactly one. */
	assert_int_equal(sv_subw_release(&s, 100, &t0), SV_OK);
	r = thr("t2");
	assert_int_equal(sv_subw_claim_thread(&s, 100, &r, &g), SV_OK);
	assert_int_equal(g.sub_ordinal, 0);
	r = thr("t3");
	assert_int_equal(sv_subw_claim_thread(&s, 100, &r, &g), SV_EEXHAUSTED);

	/* A process with the default bound holds SV_SUBW_DEFAULT_MAX. */
	assert_int_equal(sv_subw_attach(&s, P1, 300, 0), SV_OK);
	for (uint32_t i = 0; i < SV_SUBW_DEFAULT_MAX; i++) {
		char l[16];
		snprintf(l, sizeof(l), "t%u", i);
		r = thr(l);
		assert_int_equal(sv_subw_claim_thread(&s, 300, &r, &g), SV_OK);
		assert_int_equal(g.sub_ordinal, i);
	}
	r = thr("one-more");
	assert_int_equal(sv_subw_claim_thread(&s, 300, &r, &g), SV_EEXHAUSTED);

	/* Init and attach bounds. */
	sv_subworkers bad;
	assert_int_equal(sv_subw_init(&bad, 0), SV_EINVAL);
	assert_int_equal(sv_subw_init(&bad, SV_SUBW_MAX_PROCS + 1), SV_EINVAL);
	assert_int_equal(
	    sv_subw_attach(&s, (sv_wkey) {1, 2, 0}, 400, SV_SUBW_MAX + 1),
	    SV_EINVAL);
	assert_int_equal(
	    sv_subw_attach(&s, (sv_wkey) {1, 2, 0}, 0, 4), SV_EINVAL);
	sv_subw_fini(&s);
}

/* Two processes each have a thread 0; the parent frame tells them apart.
 * Neither may release the other's. */
static void
test_two_processes_thread0(void **state)
{
	sv_subworkers   s;
	sv_subw_grant   a, b;
	sv_subw_request r = thr("main");
	sv_subw_frame   fa[SV_SUBW_DEPTH], fb[SV_SUBW_DEPTH];
	size_t          n = 0;

	(void) state;
	assert_int_equal(sv_subw_init(&s, 8), SV_OK);
	assert_int_equal(sv_subw_attach(&s, P0, 100, 0), SV_OK);
	assert_int_equal(sv_subw_attach(&s, P1, 110, 0), SV_OK);
	assert_int_equal(sv_subw_claim_thread(&s, 100, &r, &a), SV_OK);
	assert_int_equal(sv_subw_claim_thread(&s, 110, &r, &b), SV_OK);
	assert_int_equal(a.sub_ordinal, 0);
	assert_int_equal(b.sub_ordinal, 0);

	assert_int_equal(sv_subw_context(&s, &a, "web", fa, &n), SV_OK);
	assert_int_equal(n, 2);
	assert_int_equal(sv_subw_context(&s, &b, "web", fb, &n), SV_OK);
	assert_int_equal(fa[0].kind, SV_SUBW_PROCESS);
	assert_int_equal(fa[0].ordinal, 0);
	assert_string_equal(fa[0].name, "web");
	assert_int_equal(fa[1].kind, SV_SUBW_THREAD);
	assert_int_equal(fa[1].ordinal, 0);
	assert_string_equal(fa[1].name, "main");
	assert_int_equal(fb[0].ordinal, 1); /* the parent frame differs */
	assert_int_equal(fb[1].ordinal, 0);
	assert_int_equal(fb[1].kind, SV_SUBW_THREAD);

	/* Process 110 may not release process 100's thread, nor claim under
	 * it (the process is the caller's own, by pid). */
	assert_int_equal(sv_subw_release(&s, 110, &a), SV_EPERM);
	assert_true(sv_subw_held(&s, P0, SV_SUBW_THREAD, 0));
	assert_int_equal(sv_subw_release(&s, 999, &a), SV_EPERM);
	/* Unknown callers are no workers. */
	assert_int_equal(sv_subw_claim_thread(&s, 999, &r, &a), SV_ENOTWORKER);
	/* An unknown process is not found. */
	sv_subw_grant ghost = a;
	ghost.proc          = (sv_wkey) {7, 7, 7};
	assert_int_equal(sv_subw_release(&s, 100, &ghost), SV_ENOTFOUND);
	assert_int_equal(
	    sv_subw_context(&s, &ghost, "web", fa, &n), SV_ENOTFOUND);
	ghost.kind = (sv_subw_kind) 9;
	assert_int_equal(sv_subw_release(&s, 100, &ghost), SV_EINVAL);
	assert_int_equal(sv_subw_release(&s, 100, &a), SV_OK);
	/* A released grant has no context. */
	assert_int_equal(sv_subw_context(&s, &a, "web", fa, &n), SV_ENOTFOUND);
	sv_subw_fini(&s);
}

/* Forked children: verified by their kernel parent, numbered apart from
 * threads, released by their own exit or release only, never nested. */
static void
test_children(void **state)
{
	sv_subworkers   s;
	sv_subw_grant   c0, c1, g;
	sv_subw_request r = thr(NULL);
	sv_subw_frame   f[SV_SUBW_DEPTH];
	size_t          n;

	(void) state;
	assert_int_equal(sv_subw_init(&s, 8), SV_OK);
	assert_int_equal(sv_subw_attach(&s, P0, 100, 0), SV_OK);
	assert_int_equal(sv_subw_attach(&s, P1, 110, 0), SV_OK);
	assert_int_equal(sv_subw_claim_child(&s, 200, 100, &r, &c0), SV_OK);
	assert_int_equal(c0.kind, SV_SUBW_PROCESS);
	assert_int_equal(c0.pid, 200);
	assert_int_equal(c0.proc_pid, 100);
	assert_int_equal(c0.sub_ordinal, 0);
	r = thr("puma-1");
	assert_int_equal(sv_subw_claim_child(&s, 201, 100, &r, &c1), SV_OK);
	assert_int_equal(c1.sub_ordinal, 1);
	/* Re-claim by the same child is the same grant. */
	assert_int_equal(sv_subw_claim_child(&s, 201, 100, &r, &g), SV_OK);
	assert_true(g.again);
	assert_int_equal(g.sub_ordinal, 1);
	r = thr_n(NULL, 0);
	assert_int_equal(
	    sv_subw_claim_child(&s, 201, 100, &r, &g), SV_ECONFLICT);
	/* The child is registered under 100: claiming under 110 is denied. */
	r = thr(NULL);
	assert_int_equal(sv_subw_claim_child(&s, 201, 110, &r, &g), SV_EPERM);
	/* A worker is not a child; an unknown parent is no worker. */
	assert_int_equal(sv_subw_claim_child(&s, 110, 100, &r, &g), SV_EPERM);
	assert_int_equal(
	    sv_subw_claim_child(&s, 300, 999, &r, &g), SV_ENOTWORKER);
	/* A third level is refused: a child of a child, a thread of one. */
	assert_int_equal(
	    sv_subw_claim_child(&s, 300, 200, &r, &g), SV_ETOOLARGE);
	r = thr("t");
	assert_int_equal(sv_subw_claim_thread(&s, 200, &r, &g), SV_ETOOLARGE);

	/* Context [process 0, process 1] with the child's label. */
	assert_int_equal(sv_subw_context(&s, &c1, "web", f, &n), SV_OK);
	assert_int_equal(n, 2);
	assert_int_equal(f[0].kind, SV_SUBW_PROCESS);
	assert_int_equal(f[0].ordinal, 0);
	assert_int_equal(f[1].kind, SV_SUBW_PROCESS);
	assert_int_equal(f[1].ordinal, 1);
	assert_string_equal(f[1].name, "puma-1");
	assert_int_equal(sv_subw_context(&s, &c0, "web", f, &n), SV_OK);
	assert_string_equal(f[1].name, "web");
	/* WhoAmI of a registered child. */
	assert_true(sv_subw_find_child(&s, 201, &g));
	assert_int_equal(g.sub_ordinal, 1);
	assert_int_equal(g.proc.ordinal, 0);
	assert_false(sv_subw_find_child(&s, 100, &g));

	/* The parent may not release its child; another child neither. */
	assert_int_equal(sv_subw_release(&s, 100, &c1), SV_EPERM);
	assert_int_equal(sv_subw_release(&s, 200, &c1), SV_EPERM);
	assert_true(sv_subw_held(&s, P0, SV_SUBW_PROCESS, 1));
	/* The child releases itself; twice is a no-op. */
	assert_int_equal(sv_subw_release(&s, 201, &c1), SV_OK);
	assert_int_equal(sv_subw_release(&s, 201, &c1), SV_OK);
	assert_false(sv_subw_held(&s, P0, SV_SUBW_PROCESS, 1));
	assert_false(sv_subw_find_child(&s, 201, &g));
	/* The exit of child 200 releases 0. */
	assert_true(sv_subw_child_exited(&s, 200));
	assert_false(sv_subw_child_exited(&s, 200));
	assert_false(sv_subw_held(&s, P0, SV_SUBW_PROCESS, 0));
	/* Puma re-forks its worker 1: with the label it gets 1 back. */
	r = thr("puma-1");
	assert_int_equal(sv_subw_claim_child(&s, 202, 100, &r, &g), SV_OK);
	assert_int_equal(g.sub_ordinal, 1);
	assert_int_equal(g.generation, 1);
	sv_subw_fini(&s);
}

/* The death of a process frees all its sub-ordinals in one call; its next
 * generation finds its threads' numbers by label and continues their
 * generations; the old grants are gone. */
static void
test_reclaim_on_death(void **state)
{
	sv_subworkers   s;
	sv_subw_grant   t[3], c[2], g;
	sv_subw_request r;
	const char     *labels[] = {"a", "b", "c"};
	int64_t         orphans[4];
	size_t          n = 99;
	uint32_t        nt, nc;

	(void) state;
	assert_int_equal(sv_subw_init(&s, 8), SV_OK);
	assert_int_equal(sv_subw_attach(&s, P0, 100, 0), SV_OK);
	for (int i = 0; i < 3; i++) {
		r = thr(labels[i]);
		assert_int_equal(
		    sv_subw_claim_thread(&s, 100, &r, &t[i]), SV_OK);
	}
	r = thr(NULL);
	assert_int_equal(sv_subw_claim_child(&s, 200, 100, &r, &c[0]), SV_OK);
	assert_int_equal(sv_subw_claim_child(&s, 201, 100, &r, &c[1]), SV_OK);

	assert_int_equal(
	    sv_subw_process_exited(&s, P0, orphans, 1, &n), SV_OK);
	assert_int_equal(n, 2); /* total, although cap was 1 */
	assert_true(orphans[0] == 200 || orphans[0] == 201);
	assert_int_equal(sv_subw_count(&s, P0, &nt, &nc), SV_ENOTFOUND);
	for (uint32_t i = 0; i < 3; i++) {
		assert_false(sv_subw_held(&s, P0, SV_SUBW_THREAD, i));
	}
	assert_false(sv_subw_find_child(&s, 200, &g));
	assert_false(sv_subw_child_exited(&s, 201));
	/* Idempotent; old grants and the old pid are gone. */
	assert_int_equal(sv_subw_process_exited(&s, P0, NULL, 0, &n), SV_OK);
	assert_int_equal(n, 0);
	assert_int_equal(sv_subw_release(&s, 100, &t[0]), SV_ENOTFOUND);
	r = thr("a");
	assert_int_equal(sv_subw_claim_thread(&s, 100, &r, &g), SV_ENOTWORKER);
	assert_int_equal(
	    sv_subw_process_exited(&s, (sv_wkey) {9, 9, 9}, NULL, 0, &n),
	    SV_ENOTFOUND);
	/* The dead key cannot come back. */
	assert_int_equal(sv_subw_attach(&s, P0, 100, 0), SV_ECONFLICT);

	/* Generation 1 of the seat: the roles get their numbers back. */
	sv_wkey next = {1, 0, 1};
	assert_int_equal(sv_subw_attach(&s, next, 150, 0), SV_OK);
	const char *order[] = {"c", "a", "b"};
	uint32_t    want[]  = {2, 0, 1};
	for (int i = 0; i < 3; i++) {
		r = thr(order[i]);
		assert_int_equal(sv_subw_claim_thread(&s, 150, &r, &g), SV_OK);
		assert_int_equal(g.sub_ordinal, want[i]);
		assert_int_equal(g.generation, 1);
		assert_int_equal(g.proc.generation, 1);
	}
	r = thr(NULL);
	assert_int_equal(sv_subw_claim_child(&s, 250, 150, &r, &g), SV_OK);
	assert_int_equal(g.sub_ordinal, 0);
	assert_int_equal(g.generation, 1);
	sv_subw_fini(&s);
}

/* Attach refuses pids and keys that would make two processes one; the
 * memory of the oldest dead process is evicted when the table is full. */
static void
test_attach_and_eviction(void **state)
{
	sv_subworkers   s;
	sv_subw_grant   g;
	sv_subw_request r = thr("x");
	size_t          n;

	(void) state;
	assert_int_equal(sv_subw_init(&s, 2), SV_OK);
	assert_int_equal(sv_subw_attach(&s, P0, 100, 0), SV_OK);
	assert_int_equal(sv_subw_attach(&s, P0, 100, 8), SV_OK); /* no-op */
	assert_int_equal(sv_subw_attach(&s, P0, 101, 0), SV_ECONFLICT);
	assert_int_equal(sv_subw_attach(&s, P1, 100, 0), SV_ECONFLICT);
	assert_int_equal(sv_subw_attach(&s, P1, 110, 0), SV_OK);
	/* Full of live processes. */
	assert_int_equal(
	    sv_subw_attach(&s, (sv_wkey) {1, 2, 0}, 120, 0), SV_EEXHAUSTED);
	/* A registered child's pid is no worker's. */
	sv_subw_request none = thr(NULL);
	assert_int_equal(sv_subw_claim_child(&s, 200, 100, &none, &g), SV_OK);
	assert_int_equal(sv_subw_process_exited(&s, P1, NULL, 0, &n), SV_OK);
	assert_int_equal(
	    sv_subw_attach(&s, (sv_wkey) {1, 2, 0}, 200, 0), SV_ECONFLICT);

	/* P0's thread "x" takes 1 so that memory is observable. */
	r = thr_n("x", 1);
	assert_int_equal(sv_subw_claim_thread(&s, 100, &r, &g), SV_OK);
	assert_int_equal(sv_subw_process_exited(&s, P0, NULL, 0, &n), SV_OK);
	assert_int_equal(n, 1);
	/* Two dead entries; a third seat evicts the older (P1). */
	assert_int_equal(
	    sv_subw_attach(&s, (sv_wkey) {1, 2, 0}, 120, 0), SV_OK);
	assert_int_equal(
	    sv_subw_process_exited(&s, P1, NULL, 0, &n), SV_ENOTFOUND);
	/* P0's memory survived: its next generation finds "x" at 1. */
	assert_int_equal(
	    sv_subw_attach(&s, (sv_wkey) {1, 0, 5}, 130, 0), SV_OK);
	r = thr("x");
	assert_int_equal(sv_subw_claim_thread(&s, 130, &r, &g), SV_OK);
	assert_int_equal(g.sub_ordinal, 1);
	assert_int_equal(g.generation, 1);
	sv_subw_fini(&s);
	sv_subw_fini(&s); /* idempotent */
}

/*
 * The model: three seats of group 1 with small bounds, random operations,
 * and a reference that keeps, per seat and kind, who holds each number,
 * its generation counter and the last label. The core must choose exactly
 * the numbers the reference chooses and never let two live sub-workers
 * hold one number or exceed the bound.
 */
#define M_SEATS  3
#define M_MAX    5u
#define M_LABELS 8

typedef struct m_slot {
	bool          held;
	int           label; /* -1: none */
	uint64_t      next_gen;
	int64_t       pid; /* child */
	sv_subw_grant grant;
} m_slot;

typedef struct m_seat {
	bool     live;
	uint64_t gen;
	int64_t  pid;
	m_slot   sp[2][M_MAX]; /* [0] children, [1] threads */
} m_seat;

static const char *m_labels[M_LABELS]
    = {"a", "b", "c", "d", "e", "f", "g", "h"};

static uint32_t
m_total(const m_seat *st)
{
	uint32_t n = 0;
	for (int k = 0; k < 2; k++) {
		for (uint32_t i = 0; i < M_MAX; i++) {
			n += st->sp[k][i].held;
		}
	}
	return n;
}

/* m_pick is the reference choice of a number for a new sub-worker. */
static int
m_pick(const m_slot *sp, int label)
{
	if (label >= 0) {
		for (uint32_t i = 0; i < M_MAX; i++) {
			if (!sp[i].held && sp[i].label == label) {
				return (int) i;
			}
		}
	}
	for (uint32_t i = 0; i < M_MAX; i++) {
		if (!sp[i].held) {
			return (int) i;
		}
	}
	return -1;
}

/* m_claim runs one claim on the core and on the reference. */
static void
m_claim(sv_subworkers *s, m_seat *st, int k, int label, int req, int64_t child,
    unsigned *seed)
{
	sv_subw_request r = thr(label >= 0 ? m_labels[label] : NULL);
	sv_subw_grant   g;
	m_slot         *sp = st->sp[k];
	if (req >= 0) {
		r.has_number = true;
		r.number     = (uint32_t) req;
	}
	sv_err err = k == 1 ? sv_subw_claim_thread(s, st->pid, &r, &g)
	                    : sv_subw_claim_child(s, child, st->pid, &r, &g);
	(void) seed;
	if (req >= (int) M_MAX) {
		assert_int_equal(err, SV_EINVAL);
		return;
	}
	if (k == 1) {
		for (uint32_t i = 0; i < M_MAX; i++) {
			if (sp[i].held && sp[i].label == label) {
				if (req >= 0 && (uint32_t) req != i) {
					assert_int_equal(err, SV_ECONFLICT);
					return;
				}
				assert_int_equal(err, SV_OK);
				assert_true(g.again);
				assert_int_equal(g.sub_ordinal, i);
				assert_int_equal(
				    g.generation, sp[i].grant.generation);
				return;
			}
		}
	}
	if (m_total(st) >= M_MAX) {
		assert_int_equal(err, SV_EEXHAUSTED);
		return;
	}
	int n = req;
	if (req >= 0 && sp[req].held) {
		assert_int_equal(err, SV_ECONFLICT);
		return;
	}
	if (req < 0) {
		n = m_pick(sp, label);
	}
	assert_true(n >= 0);
	assert_int_equal(err, SV_OK);
	assert_false(g.again);
	assert_int_equal(g.sub_ordinal, (uint32_t) n);
	assert_int_equal(g.generation, sp[n].next_gen);
	assert_int_equal(g.proc.generation, st->gen);
	sp[n].held  = true;
	sp[n].label = label;
	sp[n].next_gen++;
	sp[n].pid   = k == 0 ? child : 0;
	sp[n].grant = g;
}

/* m_check compares what the core reports with the reference. */
static void
m_check(const sv_subworkers *s, const m_seat *seats)
{
	for (uint32_t q = 0; q < M_SEATS; q++) {
		const m_seat *st  = &seats[q];
		sv_wkey       key = {1, q, st->gen};
		uint32_t      nt, nc;
		if (!st->live) {
			assert_int_equal(
			    sv_subw_count(s, key, &nt, &nc), SV_ENOTFOUND);
			continue;
		}
		assert_int_equal(sv_subw_count(s, key, &nt, &nc), SV_OK);
		uint32_t et = 0, ec = 0;
		for (uint32_t i = 0; i <= M_MAX; i++) {
			bool ht = i < M_MAX && st->sp[1][i].held;
			bool hc = i < M_MAX && st->sp[0][i].held;
			assert_int_equal(
			    sv_subw_held(s, key, SV_SUBW_THREAD, i), ht);
			assert_int_equal(
			    sv_subw_held(s, key, SV_SUBW_PROCESS, i), hc);
			et += ht;
			ec += hc;
			if (hc) {
				sv_subw_grant g;
				assert_true(sv_subw_find_child(
				    s, st->sp[0][i].pid, &g));
				assert_int_equal(g.sub_ordinal, i);
				assert_int_equal(g.proc.ordinal, q);
			}
		}
		assert_int_equal(nt, et);
		assert_int_equal(nc, ec);
		assert_true(nt + nc <= M_MAX);
	}
}

static void
test_model(void **state)
{
	sv_subworkers s;
	m_seat        seats[M_SEATS];
	unsigned      seed      = 424242;
	int64_t       next_pid  = 1000;
	int           exercised = 0;

	(void) state;
	memset(seats, 0, sizeof(seats));
	for (int q = 0; q < M_SEATS; q++) {
		for (int k = 0; k < 2; k++) {
			for (uint32_t i = 0; i < M_MAX; i++) {
				seats[q].sp[k][i].label = -1;
			}
		}
	}
	assert_int_equal(sv_subw_init(&s, 16), SV_OK);
	for (int step = 0; step < 20000; step++) {
		m_seat  *st = &seats[rand_r(&seed) % M_SEATS];
		int      q  = (int) (st - seats);
		int      op = rand_r(&seed) % 10;
		int      k  = rand_r(&seed) % 2;
		uint32_t i  = (uint32_t) (rand_r(&seed) % M_MAX);
		m_slot  *sl = &st->sp[k][i];
		size_t   n;
		if (!st->live) {
			/* attach (the next generation after a death) */
			st->gen += st->pid != 0 ? 1 : 0;
			st->pid = next_pid++;
			assert_int_equal(
			    sv_subw_attach(&s,
			        (sv_wkey) {1, (uint32_t) q, st->gen}, st->pid,
			        M_MAX),
			    SV_OK);
			st->live = true;
		} else if (op <= 3) {
			int label = rand_r(&seed) % (M_LABELS + 1) - 1;
			int req   = rand_r(&seed) % 4 == 0
			      ? rand_r(&seed) % (int) (M_MAX + 1)
			      : -1;
			if (k == 1 && label < 0) {
				label = 0;
			}
			m_claim(&s, st, k, label, req, next_pid++, &seed);
			exercised++;
		} else if (op <= 6 && sl->held) {
			/* end of a thread, or a child releasing itself */
			int64_t who = k == 1 ? st->pid : sl->pid;
			assert_int_equal(
			    sv_subw_release(&s, who, &sl->grant), SV_OK);
			/* the same grant again: a no-op */
			assert_int_equal(
			    sv_subw_release(&s, who, &sl->grant), SV_OK);
			sl->held = false;
		} else if (op == 7 && sl->held && k == 0) {
			assert_true(sv_subw_child_exited(&s, sl->pid));
			sl->held = false;
		} else if (op == 7 && sl->held && k == 1) {
			/* someone else may not end it */
			assert_int_equal(
			    sv_subw_release(&s, sl->grant.pid + 7, &sl->grant),
			    SV_EPERM);
		} else if (op == 8 && rand_r(&seed) % 8 == 0) {
			uint32_t expect = 0;
			for (uint32_t j = 0; j < M_MAX; j++) {
				expect += st->sp[0][j].held;
				st->sp[0][j].held = false;
				st->sp[1][j].held = false;
			}
			assert_int_equal(
			    sv_subw_process_exited(&s,
			        (sv_wkey) {1, (uint32_t) q, st->gen}, NULL, 0,
			        &n),
			    SV_OK);
			assert_int_equal(n, expect);
			st->live = false;
		}
		m_check(&s, seats);
	}
	assert_true(exercised > 5000);
	sv_subw_fini(&s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_thread_sequential),
	    cmocka_unit_test(test_reuse_and_memory),
	    cmocka_unit_test(test_idempotent_reclaim),
	    cmocka_unit_test(test_requested_numbers),
	    cmocka_unit_test(test_bounds),
	    cmocka_unit_test(test_two_processes_thread0),
	    cmocka_unit_test(test_children),
	    cmocka_unit_test(test_reclaim_on_death),
	    cmocka_unit_test(test_attach_and_eviction),
	    cmocka_unit_test(test_model),
	};
	return cmocka_run_group_tests_name("subworker", tests, NULL, NULL);
}
