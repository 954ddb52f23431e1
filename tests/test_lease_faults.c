/*
 * test_lease_faults.c — lossless effects of the lease core under
 * allocation failure: random lease sequences (pools, a restore and its
 * claims, acquires with and without waiting, renewals, releases, aborts,
 * sessions opened, renewed, closed and expired, holders reaped,
 * disconnected and reconnected, withdrawn waits, timers as the clock
 * moves) run while the core's allocation seam (core/alloc.h) fails one
 * allocation, the Nth, for N = 1, 2, 3, ... until a run makes fewer than N
 * allocations (sqlite's approach; tests/test_core_faults.c does the same
 * for the supervision core).
 *
 * Every entry point goes through CALL, which snapshots the core first. An
 * entry point that returns SV_ENOMEM must have changed nothing (snapshot
 * equal, no effect queued); CALL then calls it again, as the daemon does.
 * An allocation failure is never swallowed (an entry point that hit one
 * returns SV_ENOMEM), and no effect is pushed beyond a reservation
 * (fxring overruns stay 0).
 *
 * After each step the core and the effects it emitted agree: every timer
 * the core has armed (slot, waiter, session) is armed in the fake shell
 * with the same guard. And since a failed call is retried with the same
 * inputs, a run with an injected failure must produce exactly the
 * transcript of the run without one: every call's result, every grant's
 * lease id and fencing token, every effect in order. A dropped effect, or
 * a grant lost to a failed allocation, shows as a difference.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/alloc.h"
#include "core/lease_internal.h"
#include "sv_alloc_fault.h" /* FI, fi_hook, fi_arm: the injection */

/* ---- the transcript ----------------------------------------------------- */

typedef struct tr {
	char  *s;
	size_t n, cap;
} tr;

/* tr_add appends a formatted line to t (grown with plain realloc: the
 * test's own memory is not under injection). */
static void
tr_add(tr *t, const char *fmt, ...)
{
	va_list ap;
	char    line[512];
	int     k;

	va_start(ap, fmt);
	k = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	assert_true(k > 0 && (size_t) k < sizeof(line));
	if (t->n + (size_t) k + 2 > t->cap) {
		t->cap = (t->cap + (size_t) k + 2) * 2;
		t->s   = realloc(t->s, t->cap);
		assert_non_null(t->s);
	}
	memcpy(t->s + t->n, line, (size_t) k);
	t->n += (size_t) k;
	t->s[t->n++] = '\n';
	t->s[t->n]   = '\0';
}

/* ---- the fake shell: effects and timers --------------------------------- */

#define MAXT 4096

typedef struct ftimer {
	sv_lease_timer_kind kind;
	uint64_t            key, guard, due;
} ftimer;

typedef struct run {
	sv_lease_core *c;
	uint64_t       now;
	uint64_t       rng;
	tr             t;
	ftimer         tm[MAXT];
	size_t         ntm;
	uint64_t       sessions[16];
	size_t         nsessions;
	uint64_t       waiters[64];
	size_t         nwaiters;
	uint64_t       ab[64]; /* grants to abort */
	size_t         nab;
} run;

/* rnd returns a pseudo-random number below n (xorshift64). */
static uint32_t
rnd(run *r, uint32_t n)
{
	r->rng ^= r->rng << 13;
	r->rng ^= r->rng >> 7;
	r->rng ^= r->rng << 17;
	return (uint32_t) (r->rng % n);
}

/* tm_find returns the index of timer (kind, key), or -1. */
static int64_t
tm_find(const run *r, sv_lease_timer_kind kind, uint64_t key)
{
	for (size_t i = 0; i < r->ntm; i++) {
		if (r->tm[i].kind == kind && r->tm[i].key == key) {
			return (int64_t) i;
		}
	}
	return -1;
}

/* tm_del removes timer i. */
static void
tm_del(run *r, size_t i)
{
	r->tm[i] = r->tm[--r->ntm];
}

/* drain pops every effect into the transcript and the fake timers. */
static void
drain(run *r)
{
	sv_lease_fx fx;

	while (sv_lease_pop_effect(r->c, &fx)) {
		int64_t k;
		tr_add(&r->t,
		    "  fx %d ev %d why %d lease %llx pool %u slot %u tok %llx "
		    "st %d hk %d w %llx err %d timer %d key %llx due %llu "
		    "guard %llu pol %d",
		    fx.kind, fx.event, fx.reason,
		    (unsigned long long) fx.lease.id, fx.lease.pool_id,
		    fx.lease.slot, (unsigned long long) fx.lease.token,
		    fx.lease.state, fx.lease.holder.kind,
		    (unsigned long long) fx.waiter, fx.err, fx.timer,
		    (unsigned long long) fx.key,
		    (unsigned long long) fx.due_ms,
		    (unsigned long long) fx.guard, fx.policy);
		switch (fx.kind) {
		case SV_LFX_TIMER_ARM:
			if ((k = tm_find(r, fx.timer, fx.key)) < 0) {
				assert_true(r->ntm < MAXT);
				k = (int64_t) r->ntm++;
			}
			r->tm[k]
			    = (ftimer) {fx.timer, fx.key, fx.guard, fx.due_ms};
			break;
		case SV_LFX_TIMER_CANCEL:
			if ((k = tm_find(r, fx.timer, fx.key)) >= 0) {
				tm_del(r, (size_t) k);
			}
			break;
		case SV_LFX_RESOURCE_PREPARE:
			/* Now and then the shell cannot make the resource:
			 * slot 2 with an odd token counter. */
			if (fx.lease.slot == 2 && (fx.lease.token & 1) != 0
			    && r->nab < 64) {
				r->ab[r->nab++] = fx.lease.id;
			}
			break;
		default:
			break;
		}
	}
}

/* ---- snapshots of the core ---------------------------------------------- */

/* snap appends to t everything a caller could see of c, and its counters. */
static void
snap(const sv_lease_core *c, tr *t)
{
	tr_add(t, "%u %u %u %llu %llu %zu %zu %zu %u", c->npools,
	    c->next_lease, c->next_session,
	    (unsigned long long) c->next_waiter,
	    (unsigned long long) c->guards, c->nleases, c->index.n, c->fx.n,
	    c->nsessions);
	for (uint32_t pi = 0; pi < c->npools; pi++) {
		const lpool *p = c->pools[pi];
		tr_add(t, "pool %u held %u nw %u", p->id, p->nheld, p->nw);
		for (uint32_t i = 0; i < p->nslots; i++) {
			const lslot *s = &p->slots[i];
			tr_add(t,
			    " s %llx %llx %llu %llu %llu %llu %llu %u %u %u "
			    "%u %u",
			    (unsigned long long) s->id,
			    (unsigned long long) s->token,
			    (unsigned long long) s->expiry_ms,
			    (unsigned long long) s->end_ms,
			    (unsigned long long) s->guard,
			    (unsigned long long) s->due_ms,
			    (unsigned long long) s->hgen, s->hgroup,
			    s->hordinal, s->counter, s->phase, s->hkind);
		}
		for (uint32_t k = 0; k < p->nw; k++) {
			tr_add(t, " w %llx %llu %llu",
			    (unsigned long long) p->w[k].id,
			    (unsigned long long) p->w[k].deadline_ms,
			    (unsigned long long) p->w[k].guard);
		}
	}
	for (uint32_t i = 0; i < c->nsessions; i++) {
		const lsession *s = &c->sessions[i];
		tr_add(t, "sess %llx %u %llu %llu", (unsigned long long) s->id,
		    s->uid, (unsigned long long) s->expiry_ms,
		    (unsigned long long) s->guard);
	}
}

/* CALL runs expr (an sv_err) on r's core: on SV_ENOMEM the core must be
 * unchanged, and expr is run again; a failed allocation must surface as
 * SV_ENOMEM. rv receives the final result. */
#define CALL(r, rv, expr)                                       \
	do {                                                    \
		for (;;) {                                      \
			tr before = {0}, after = {0};           \
			snap((r)->c, &before);                  \
			FI.pending = false;                     \
			(rv)       = (expr);                    \
			if ((rv) != SV_ENOMEM) {                \
				assert_false(FI.pending);       \
				free(before.s);                 \
				break;                          \
			}                                       \
			FI.enomem++;                            \
			assert_true(FI.pending);                \
			snap((r)->c, &after);                   \
			assert_string_equal(before.s, after.s); \
			free(before.s);                         \
			free(after.s);                          \
		}                                               \
		assert_int_equal((r)->c->fx.overruns, 0);       \
	} while (0)

/* settle carries out the effects and, as the daemon does, aborts each grant
 * whose resource the fake shell "could not make" (see drain), until
 * nothing is left. */
static void
settle(run *r)
{
	drain(r);
	while (r->nab > 0) {
		uint64_t id = r->ab[--r->nab];
		sv_err   rv;

		CALL(r, rv, sv_lease_abort(r->c, id, r->now));
		tr_add(&r->t, "abort %llx: %d", (unsigned long long) id, rv);
		drain(r);
	}
}

/* check: every timer the core has armed is armed in the fake shell with
 * the same guard (a lost TIMER_ARM shows here). */
static void
check(const run *r)
{
	const sv_lease_core *c = r->c;

	for (uint32_t pi = 0; pi < c->npools; pi++) {
		const lpool *p = c->pools[pi];
		for (uint32_t i = 0; i < p->nslots; i++) {
			int64_t k;
			if (p->slots[i].guard == 0) {
				continue;
			}
			k = tm_find(
			    r, SV_LTIMER_SLOT, ((uint64_t) p->id << 32) | i);
			assert_true(k >= 0);
			assert_int_equal(r->tm[k].guard, p->slots[i].guard);
		}
		for (uint32_t w = 0; w < p->nw; w++) {
			int64_t k = tm_find(r, SV_LTIMER_WAITER, p->w[w].id);
			assert_true(k >= 0);
			assert_int_equal(r->tm[k].guard, p->w[w].guard);
		}
	}
	for (uint32_t i = 0; i < c->nsessions; i++) {
		int64_t k = tm_find(r, SV_LTIMER_SESSION, c->sessions[i].id);
		assert_true(k >= 0);
		assert_int_equal(r->tm[k].guard, c->sessions[i].guard);
	}
}

/* worker returns test worker n (0..3) as a holder. */
static sv_lease_holder
worker(uint32_t n)
{
	sv_lease_holder h = {.kind = SV_HOLDER_WORKER};

	h.worker = (sv_wkey) {1, n, 1};
	return h;
}

/* holder picks a worker or an open session. */
static sv_lease_holder
holder(run *r)
{
	sv_lease_holder h = {.kind = SV_HOLDER_SESSION};

	if (r->nsessions == 0 || rnd(r, 3) != 0) {
		return worker(rnd(r, 4));
	}
	h.session = r->sessions[rnd(r, (uint32_t) r->nsessions)];
	return h;
}

/* pick_lease finds a random lease of the core (false: none). */
static bool
pick_lease(run *r, sv_lease_info *li)
{
	sv_lease_iter it = SV_LEASE_ITER_INIT;
	size_t        n  = sv_lease_count(r->c), k;

	if (n == 0) {
		return false;
	}
	k = rnd(r, (uint32_t) n);
	while (sv_lease_next(r->c, &it, NULL, li, NULL)) {
		if (k-- == 0) {
			return true;
		}
	}
	return false;
}

/* fire fires, earliest first, every fake timer that is due. */
static void
fire(run *r)
{
	for (;;) {
		size_t best = r->ntm;
		sv_err rv;
		ftimer t;

		for (size_t i = 0; i < r->ntm; i++) {
			const ftimer *x = &r->tm[i];
			if (x->due <= r->now
			    && (best == r->ntm || x->due < r->tm[best].due
			        || (x->due == r->tm[best].due
			            && (x->kind < r->tm[best].kind
			                || (x->kind == r->tm[best].kind
			                    && x->key < r->tm[best].key))))) {
				best = i;
			}
		}
		if (best == r->ntm) {
			return;
		}
		t = r->tm[best];
		tm_del(r, best);
		CALL(r, rv,
		    sv_lease_timer(r->c, t.kind, t.key, t.guard, r->now));
		tr_add(&r->t, "timer %d %llx: %d", t.kind,
		    (unsigned long long) t.key, rv);
		settle(r);
	}
}

/* setup makes the core, its pools, and restores a predecessor's leases. */
static void
setup(run *r)
{
	static const struct {
		const char     *name;
		uint32_t        slots;
		uint64_t        ttl, grace;
		sv_lease_policy pol;
		bool            res;
	} pools[] = {
	    {"a", 4, 300, 100, SV_LEASE_TRUNCATE, true},
	    {"b", 2, 0, 0, SV_LEASE_KEEP, false},
	    {"c", 3, 150, 50, SV_LEASE_REMOVE, true},
	};
	sv_lease_record recs[4]
	    = {{.pool = "a"}, {.pool = "a"}, {.pool = "b"}, {.pool = "zz"}};
	size_t skipped = 0;
	sv_err rv;

	while ((rv = sv_lease_core_create(2, &r->c)) == SV_ENOMEM) {
		assert_true(FI.pending);
		FI.pending = false;
	}
	assert_int_equal(rv, SV_OK);
	for (size_t i = 0; i < sizeof(pools) / sizeof(pools[0]); i++) {
		uint32_t id = 0;
		CALL(r, rv,
		    sv_lease_pool_add(r->c, pools[i].name, pools[i].slots,
		        pools[i].ttl, pools[i].grace, pools[i].pol,
		        pools[i].res, &id));
		tr_add(&r->t, "pool %s: %d %u", pools[i].name, rv, id);
	}
	recs[0].slot   = 0;
	recs[0].id     = (1ull << 32) | 1;
	recs[0].token  = (1ull << 32) | 5;
	recs[0].holder = worker(0);
	recs[1].slot   = 1;
	recs[1].id     = (1ull << 32) | 2;
	recs[1].token  = (1ull << 32) | 3;
	recs[1].holder = (sv_lease_holder) {
	    .kind = SV_HOLDER_SESSION, .session = (1ull << 32) | 7};
	recs[1].session_uid    = 1000;
	recs[1].session_ttl_ms = 400;
	recs[2].slot           = 1;
	recs[2].id             = (1ull << 32) | 3;
	recs[2].token          = (1ull << 32) | 9;
	recs[2].holder         = worker(1);
	recs[3].id             = (1ull << 32) | 4;
	CALL(r, rv, sv_lease_restore(r->c, recs, 4, 250, r->now, &skipped));
	tr_add(&r->t, "restore: %d skipped %zu", rv, skipped);
	r->sessions[r->nsessions++] = (1ull << 32) | 7;
	settle(r);
}

/* step does one random thing to the core. */
static void
step(run *r)
{
	sv_lease_info   li = {0};
	sv_lease_holder h;
	uint64_t        id = 0;
	sv_err          rv;

	switch (rnd(r, 11)) {
	case 0:
	case 1: {
		sv_lease_req req = {.pool_id = 1 + rnd(r, 3)};
		uint64_t     w   = 0;
		h                = holder(r);
		req.has_slot     = rnd(r, 3) == 0;
		req.slot         = rnd(r, 3);
		req.wait         = rnd(r, 2) == 0;
		req.deadline_ms  = r->now + 50 + rnd(r, 400);
		CALL(r, rv, sv_lease_acquire(r->c, &h, &req, r->now, &li, &w));
		tr_add(&r->t, "acquire: %d id %llx tok %llx w %llx", rv,
		    (unsigned long long) li.id, (unsigned long long) li.token,
		    (unsigned long long) w);
		if (rv == SV_OK && w != 0 && r->nwaiters < 64) {
			r->waiters[r->nwaiters++] = w;
		}
		break;
	}
	case 2:
		if (pick_lease(r, &li)) {
			h = rnd(r, 5) == 0 ? worker(3) : li.holder;
			CALL(r, rv, sv_lease_release(r->c, &h, li.id, r->now));
			tr_add(&r->t, "release %llx: %d",
			    (unsigned long long) li.id, rv);
		}
		break;
	case 3:
		if (pick_lease(r, &li)) {
			h  = li.holder;
			id = li.id;
			CALL(r, rv, sv_lease_renew(r->c, &h, id, r->now, &li));
			tr_add(&r->t, "renew %llx: %d exp %llu",
			    (unsigned long long) id, rv,
			    (unsigned long long) li.expiry_ms);
		}
		break;
	case 4:
		if (r->nsessions < 16) {
			CALL(r, rv,
			    sv_lease_session_open(
			        r->c, 1000, 100 + rnd(r, 300), r->now, &id));
			tr_add(&r->t, "session open: %d %llx", rv,
			    (unsigned long long) id);
			if (rv == SV_OK) {
				r->sessions[r->nsessions++] = id;
			}
		}
		break;
	case 5:
		if (r->nsessions > 0) {
			id = r->sessions[rnd(r, (uint32_t) r->nsessions)];
			if (rnd(r, 2) == 0) {
				CALL(r, rv,
				    sv_lease_session_renew(
				        r->c, id, 1000, r->now));
			} else {
				CALL(r, rv,
				    sv_lease_session_close(
				        r->c, id, 1000, r->now));
			}
			tr_add(&r->t, "session %llx: %d",
			    (unsigned long long) id, rv);
		}
		break;
	case 6:
		h = worker(rnd(r, 4));
		CALL(r, rv, sv_lease_holder_gone(r->c, h.worker, r->now));
		tr_add(&r->t, "gone %u: %d", h.worker.ordinal, rv);
		break;
	case 7:
		h = holder(r);
		if (rnd(r, 2) == 0) {
			CALL(r, rv,
			    sv_lease_holder_disconnected(r->c, &h, r->now));
		} else {
			CALL(r, rv,
			    sv_lease_holder_reconnected(r->c, &h, r->now));
		}
		tr_add(&r->t, "connection: %d", rv);
		break;
	case 8:
		if (r->nwaiters > 0) {
			id = r->waiters[rnd(r, (uint32_t) r->nwaiters)];
			CALL(r, rv, sv_lease_cancel_wait(r->c, id, r->now));
			tr_add(&r->t, "cancel %llx: %d",
			    (unsigned long long) id, rv);
		}
		break;
	case 9: {
		sv_lease_iter it = SV_LEASE_ITER_INIT;
		while (sv_lease_next(r->c, &it, NULL, &li, NULL)) {
			if (li.state == SV_LEASE_UNCLAIMED) {
				uint64_t tok = li.token + (rnd(r, 4) == 0);
				h            = li.holder;
				CALL(r, rv,
				    sv_lease_claim(r->c, &h, li.pool_id,
				        li.slot, tok, r->now, &li));
				tr_add(&r->t, "claim: %d", rv);
				break;
			}
		}
		break;
	}
	default:
		r->now += 1 + rnd(r, 120);
		tr_add(&r->t, "now %llu", (unsigned long long) r->now);
		fire(r);
		break;
	}
	settle(r);
	check(r);
}

/* run_seq runs sequence seed with the fail_at-th allocation failing (0:
 * none); its transcript goes to *out (the caller frees out->s). */
static void
run_seq(uint64_t seed, uint64_t fail_at, tr *out)
{
	static run r;

	memset(&r, 0, sizeof(r));
	r.rng = seed * 0x9E3779B97F4A7C15ull + 1;
	r.now = 1000;
	fi_arm(fail_at);
	sv_mem_set_hook(fi_hook, NULL);
	setup(&r);
	for (int i = 0; i < 200; i++) {
		step(&r);
	}
	/* The end: every holder goes, every deadline passes; nothing may be
	 * left held, waiting or armed in the core. */
	for (uint32_t n = 0; n < 4; n++) {
		sv_err rv;
		CALL(&r, rv,
		    sv_lease_holder_gone(r.c, worker(n).worker, r.now));
		tr_add(&r.t, "end gone %u: %d", n, rv);
		settle(&r);
	}
	for (size_t i = 0; i < r.nsessions; i++) {
		sv_err rv;
		CALL(&r, rv,
		    sv_lease_session_close(r.c, r.sessions[i], 1000, r.now));
		tr_add(&r.t, "end close: %d", rv);
		settle(&r);
	}
	r.now += 100000;
	fire(&r);
	check(&r);
	assert_int_equal(sv_lease_count(r.c), 0);
	assert_int_equal(r.c->nsessions, 0);
	assert_int_equal(r.c->misfires, 0); /* every slot event had a cell */
	for (uint32_t pi = 0; pi < r.c->npools; pi++) {
		assert_int_equal(r.c->pools[pi]->nw, 0);
	}
	sv_mem_set_hook(NULL, NULL);
	sv_lease_core_destroy(r.c);
	*out = r.t;
}

/* first_diff prints where two transcripts part. */
static void
first_diff(const char *a, const char *b)
{
	size_t line = 1, i = 0, start = 0;

	for (; a[i] != '\0' && a[i] == b[i]; i++) {
		if (a[i] == '\n') {
			line++;
			start = i + 1;
		}
	}
	fprintf(stderr,
	    "transcripts differ at line %zu:\n  want: %.160s\n  got:  "
	    "%.160s\n",
	    line, a + start, b + start);
}

/* For each sequence: fail allocation N = 1, 2, ... until a run completes
 * without reaching N; every run must match the run without failure. */
static void
test_every_allocation_fails_in_turn(void **state)
{
	uint64_t runs = 0;

	(void) state;
	for (uint64_t seed = 1; seed <= 150; seed++) {
		tr ref = {0};
		run_seq(seed, 0, &ref);
		for (uint64_t n = 1;; n++) {
			tr   got = {0};
			bool hit;
			run_seq(seed, n, &got);
			hit = FI.hit;
			runs++;
			if (strcmp(ref.s, got.s) != 0) {
				fprintf(stderr,
				    "seed %llu, allocation %llu failed\n",
				    (unsigned long long) seed,
				    (unsigned long long) n);
				first_diff(ref.s, got.s);
				fail();
			}
			free(got.s);
			if (!hit) {
				break;
			}
		}
		free(ref.s);
	}
	fprintf(stderr, "%llu runs, %llu SV_ENOMEM answers, all retried\n",
	    (unsigned long long) runs, (unsigned long long) FI.enomem);
	assert_true(FI.enomem > 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_allocation_fails_in_turn),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
