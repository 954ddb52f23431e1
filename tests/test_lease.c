/*
 * test_lease.c — the lease core (core/lease*.c) driven by synthetic events
 * and a fake clock, with no process, no socket and no timer.
 *
 * A small fake shell stands in for the daemon: it drains the core's
 * effects, keeps the armed timers (kind + key -> due, guard; an arm
 * replaces, a cancel removes), logs every other effect in order, and fires
 * timers in due order when the fake clock moves.
 *
 * Tests: pool exhaustion; waiting with a deadline (FIFO grant, timeout at
 * the deadline); revocation on reap handing the slot to a waiter with a
 * higher token; TTL and renewal; disconnect grace; non-holders refused;
 * idempotent acquire and release; generations of one ordinal; resources;
 * sessions; a simulated supervisor restart (tokens, restore, re-claim,
 * conflicting claims, unclaimed leases revoked); 10,000 leases found by
 * id, released, journaled and re-claimed; holders of two kinds with the
 * same number; bounds; and a randomized model test checking the
 * invariants after every step.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/lease.h"

/* ---- the fake shell ------------------------------------------------------
 */

#define MAXTIMERS 4096

typedef struct ftimer {
	sv_lease_timer_kind kind;
	uint64_t            key;
	uint64_t            due;
	uint64_t            guard;
} ftimer;

typedef struct shell {
	sv_lease_core *c;
	uint64_t       now;
	ftimer         t[MAXTIMERS];
	size_t         nt;
	sv_lease_fx   *log; /* every effect but timers, in order */
	size_t         nlog, caplog;
} shell;

static void
sh_drain(shell *sh)
{
	sv_lease_fx fx;

	while (sv_lease_pop_effect(sh->c, &fx)) {
		size_t i;
		switch (fx.kind) {
		case SV_LFX_TIMER_ARM:
		case SV_LFX_TIMER_CANCEL:
			for (i = 0; i < sh->nt; i++) {
				if (sh->t[i].kind == fx.timer
				    && sh->t[i].key == fx.key) {
					break;
				}
			}
			if (fx.kind == SV_LFX_TIMER_CANCEL) {
				if (i < sh->nt) {
					sh->t[i] = sh->t[--sh->nt];
				}
				break;
			}
			if (i == sh->nt) {
				assert_true(sh->nt < MAXTIMERS);
				sh->nt++;
			}
			sh->t[i]
			    = (ftimer) {fx.timer, fx.key, fx.due_ms, fx.guard};
			break;
		default:
			if (sh->nlog == sh->caplog) {
				sh->caplog
				    = sh->caplog == 0 ? 256 : sh->caplog * 2;
				sh->log = realloc(
				    sh->log, sh->caplog * sizeof(*sh->log));
				assert_non_null(sh->log);
			}
			sh->log[sh->nlog++] = fx;
			break;
		}
	}
}

static void
sh_init(shell *sh, uint32_t epoch)
{
	memset(sh, 0, sizeof(*sh));
	assert_int_equal(sv_lease_core_create(epoch, &sh->c), SV_OK);
}

static void
sh_fini(shell *sh)
{
	sv_lease_core_destroy(sh->c);
	free(sh->log);
	sh->c = NULL;
}

/* sh_advance moves the clock to `to`, firing due timers in order. */
static void
sh_advance(shell *sh, uint64_t to)
{
	for (;;) {
		size_t best = SIZE_MAX;
		ftimer t;
		for (size_t i = 0; i < sh->nt; i++) {
			if (sh->t[i].due <= to
			    && (best == SIZE_MAX
			        || sh->t[i].due < sh->t[best].due
			        || (sh->t[i].due == sh->t[best].due
			            && sh->t[i].guard < sh->t[best].guard))) {
				best = i;
			}
		}
		if (best == SIZE_MAX) {
			break;
		}
		t           = sh->t[best];
		sh->t[best] = sh->t[--sh->nt];
		if (t.due > sh->now) {
			sh->now = t.due;
		}
		sv_lease_timer(sh->c, t.kind, t.key, t.guard, sh->now);
		sh_drain(sh);
	}
	if (to > sh->now) {
		sh->now = to;
	}
}

/* sh_timer finds the armed timer (kind, key), or NULL. */
static const ftimer *
sh_timer(const shell *sh, sv_lease_timer_kind kind, uint64_t key)
{
	for (size_t i = 0; i < sh->nt; i++) {
		if (sh->t[i].kind == kind && sh->t[i].key == key) {
			return &sh->t[i];
		}
	}
	return NULL;
}

/* count_ev counts logged events of kind (and reason, unless NONE) from
 * log index `from`. */
static size_t
count_ev(
    const shell *sh, size_t from, sv_lease_event_kind ev, sv_lease_reason why)
{
	size_t n = 0;

	for (size_t i = from; i < sh->nlog; i++) {
		if (sh->log[i].kind == SV_LFX_EVENT && sh->log[i].event == ev
		    && (why == SV_LREASON_NONE || sh->log[i].reason == why)) {
			n++;
		}
	}
	return n;
}

static size_t
count_fx(const shell *sh, size_t from, sv_lease_fx_kind kind)
{
	size_t n = 0;

	for (size_t i = from; i < sh->nlog; i++) {
		n += sh->log[i].kind == kind;
	}
	return n;
}

/* find_fx returns the first logged effect of kind from `from`, or NULL. */
static const sv_lease_fx *
find_fx(const shell *sh, size_t from, sv_lease_fx_kind kind)
{
	for (size_t i = from; i < sh->nlog; i++) {
		if (sh->log[i].kind == kind) {
			return &sh->log[i];
		}
	}
	return NULL;
}

/* reply_to returns the REPLY_WAITER effect for waiter id, or NULL. */
static const sv_lease_fx *
reply_to(const shell *sh, uint64_t id)
{
	const sv_lease_fx *r = NULL;

	for (size_t i = 0; i < sh->nlog; i++) {
		if (sh->log[i].kind == SV_LFX_REPLY_WAITER
		    && sh->log[i].waiter == id) {
			assert_null(r); /* exactly one reply per waiter */
			r = &sh->log[i];
		}
	}
	return r;
}

static sv_lease_holder
W(uint32_t group, uint32_t ordinal, uint64_t gen)
{
	sv_lease_holder h = {.kind = SV_HOLDER_WORKER};

	h.worker.group_id   = group;
	h.worker.ordinal    = ordinal;
	h.worker.generation = gen;
	return h;
}

static uint32_t
pool(shell *sh, const char *name, uint32_t slots, uint64_t ttl, uint64_t grace,
    bool resource)
{
	uint32_t id = 0;

	assert_int_equal(sv_lease_pool_add(sh->c, name, slots, ttl, grace,
	                     SV_LEASE_TRUNCATE, resource, &id),
	    SV_OK);
	assert_int_not_equal(id, 0);
	return id;
}

/* acq acquires without waiting (any slot if slot < 0). */
static sv_err
acq(shell *sh, const sv_lease_holder *h, uint32_t pid, int64_t slot,
    sv_lease_info *g)
{
	sv_lease_req req = {.pool_id = pid};
	uint64_t     w   = 1;
	sv_err       rv;

	req.has_slot = slot >= 0;
	req.slot     = slot >= 0 ? (uint32_t) slot : 0;
	rv           = sv_lease_acquire(sh->c, h, &req, sh->now, g, &w);
	assert_int_equal(w, 0);
	sh_drain(sh);
	return rv;
}

/* acq_wait acquires, waiting until deadline; returns the waiter id (0 if
 * granted at once, in *g). */
static uint64_t
acq_wait(shell *sh, const sv_lease_holder *h, uint32_t pid, int64_t slot,
    uint64_t deadline, sv_lease_info *g)
{
	sv_lease_req req = {.pool_id = pid, .wait = true};
	uint64_t     w   = 0;

	req.has_slot    = slot >= 0;
	req.slot        = slot >= 0 ? (uint32_t) slot : 0;
	req.deadline_ms = deadline;
	assert_int_equal(
	    sv_lease_acquire(sh->c, h, &req, sh->now, g, &w), SV_OK);
	sh_drain(sh);
	return w;
}

static sv_lease_state
slot_state(shell *sh, uint32_t pid, uint32_t slot, sv_lease_info *out)
{
	sv_lease_iter it = SV_LEASE_ITER_INIT;
	sv_lease_info info;

	while (sv_lease_next(sh->c, &it, NULL, &info, NULL)) {
		if (info.pool_id == pid && info.slot == slot) {
			if (out != NULL) {
				*out = info;
			}
			return info.state;
		}
	}
	return SV_LEASE_FREE;
}

/* revoked_at moves the clock to at - 1, where the lease on slot of pool
 * p is still in state before, then to at, where it is revoked for why:
 * the slot free, one REVOKED event and one revocation notice. */
static void
revoked_at(shell *sh, uint32_t p, uint32_t slot, uint64_t at,
    sv_lease_state before, sv_lease_reason why)
{
	size_t mark;

	sh_advance(sh, at - 1);
	assert_int_equal(slot_state(sh, p, slot, NULL), before);
	mark = sh->nlog;
	sh_advance(sh, at);
	assert_int_equal(slot_state(sh, p, slot, NULL), SV_LEASE_FREE);
	assert_int_equal(count_ev(sh, mark, SV_LEV_REVOKED, why), 1);
	assert_int_equal(count_fx(sh, mark, SV_LFX_NOTICE_REVOKED), 1);
}

/* ---- exhaustion and waiting ----------------------------------------------
 */

static void
test_exhausted(void **state)
{
	shell           sh;
	sv_lease_holder a = W(1, 0, 1), b = W(1, 1, 1), c = W(1, 2, 1);
	sv_lease_info   ga, gb, gc;
	uint32_t        p;

	(void) state;
	sh_init(&sh, 1);
	p = pool(&sh, "metrics", 2, 0, 0, false);
	assert_int_equal(acq(&sh, &a, p, -1, &ga), SV_OK);
	assert_int_equal(acq(&sh, &b, p, -1, &gb), SV_OK);
	assert_int_equal(ga.slot, 0); /* lowest free first */
	assert_int_equal(gb.slot, 1);
	assert_int_equal(ga.pool_id, p);
	assert_int_not_equal(ga.id, gb.id);
	assert_int_equal(acq(&sh, &c, p, -1, &gc), SV_EEXHAUSTED);
	assert_int_equal(acq(&sh, &c, p, 1, &gc), SV_EBUSY);
	assert_int_equal(acq(&sh, &c, p, 2, &gc), SV_EINVAL);
	assert_int_equal(acq(&sh, &c, p + 1, -1, &gc), SV_ENOTFOUND);
	/* A wait with a deadline already past is no wait. */
	{
		sv_lease_req req = {.pool_id = p, .wait = true};
		uint64_t     w   = 0;
		req.deadline_ms  = sh.now;
		assert_int_equal(
		    sv_lease_acquire(sh.c, &c, &req, sh.now, &gc, &w),
		    SV_EEXHAUSTED);
		assert_int_equal(w, 0);
	}
	assert_int_equal(sv_lease_pool_held(sh.c, p), 2);
	assert_int_equal(sv_lease_count(sh.c), 2);
	/* The core is where the shell reads a pool's declaration. */
	{
		sv_lease_pool_info pi;
		uint32_t           q = 0;
		assert_int_equal(sv_lease_pool_add(sh.c, "files", 3, 500, 70,
		                     SV_LEASE_REMOVE, true, &q),
		    SV_OK);
		assert_int_equal(sv_lease_pool_count(sh.c), 2);
		assert_true(sv_lease_pool_get(sh.c, p, &pi));
		assert_int_equal(pi.id, p);
		assert_string_equal(pi.name, "metrics");
		assert_int_equal(pi.slots, 2);
		assert_int_equal(pi.held, 2);
		assert_int_equal(pi.waiting, 0);
		assert_true(sv_lease_pool_get(sh.c, q, &pi));
		assert_int_equal(pi.id, q);
		assert_string_equal(pi.name, "files");
		assert_int_equal(pi.slots, 3);
		assert_int_equal(pi.ttl_ms, 500);
		assert_int_equal(pi.grace_ms, 70);
		assert_int_equal(pi.policy, SV_LEASE_REMOVE);
		assert_true(pi.has_resource);
		assert_int_equal(pi.held, 0);
		assert_false(sv_lease_pool_get(sh.c, 0, &pi));
		assert_false(sv_lease_pool_get(sh.c, q + 1, &pi));
	}
	/* Asking for a specific free slot gets exactly that slot. */
	assert_int_equal(sv_lease_release(sh.c, &a, ga.id, sh.now), SV_OK);
	assert_int_equal(acq(&sh, &c, p, 0, &gc), SV_OK);
	assert_int_equal(gc.slot, 0);
	sh_fini(&sh);
}

static void
test_wait_fifo_and_deadline(void **state)
{
	shell              sh;
	sv_lease_holder    a = W(1, 0, 1), b = W(1, 1, 1), c = W(1, 2, 1);
	sv_lease_holder    d = W(1, 3, 1);
	sv_lease_info      ga, g;
	uint64_t           wb, wc, wd;
	const sv_lease_fx *r;
	uint32_t           p;

	(void) state;
	sh_init(&sh, 1);
	p = pool(&sh, "one", 1, 0, 0, false);
	assert_int_equal(acq(&sh, &a, p, -1, &ga), SV_OK);
	sh.now = 10;
	wb     = acq_wait(&sh, &b, p, -1, 1000, &g);
	wc     = acq_wait(&sh, &c, p, -1, 2000, &g);
	wd     = acq_wait(&sh, &d, p, -1, 50, &g);
	assert_true(wb != 0 && wc != 0 && wd != 0);
	assert_true(wb != wc && wc != wd);
	/* The pool tells how many wait (ListPools shows it). */
	assert_int_equal(sv_lease_pool_waiting(sh.c, p), 3);
	assert_int_equal(sv_lease_pool_waiting(sh.c, p + 1), 0);
	/* Asking again while queued: the same waiter. */
	assert_int_equal(acq_wait(&sh, &b, p, -1, 1000, &g), wb);
	assert_int_equal(sv_lease_pool_waiting(sh.c, p), 3);

	/* d's deadline: not a millisecond early, exactly at 50. A shell
	 * whose timer fires early gets it armed again. */
	sh_advance(&sh, 49);
	assert_null(reply_to(&sh, wd));
	{
		const ftimer *t = sh_timer(&sh, SV_LTIMER_WAITER, wd);
		assert_non_null(t);
		assert_int_equal(t->due, 50);
		sv_lease_timer(sh.c, t->kind, t->key, t->guard, 49);
		sh_drain(&sh);
		assert_null(reply_to(&sh, wd));
		t = sh_timer(&sh, SV_LTIMER_WAITER, wd);
		assert_non_null(t);
		assert_int_equal(t->due, 50);
	}
	sh_advance(&sh, 50);
	r = reply_to(&sh, wd);
	assert_non_null(r);
	assert_int_equal(r->err, SV_ETIMEDOUT);
	assert_int_equal(count_ev(&sh, 0, SV_LEV_WAIT_TIMEOUT, 0), 1);
	assert_int_equal(sv_lease_pool_waiting(sh.c, p), 2);

	/* Release: b (first in line) gets the slot at once, c still waits. */
	sh_advance(&sh, 60);
	assert_int_equal(sv_lease_release(sh.c, &a, ga.id, sh.now), SV_OK);
	sh_drain(&sh);
	r = reply_to(&sh, wb);
	assert_non_null(r);
	assert_int_equal(r->err, SV_OK);
	assert_int_equal(r->lease.slot, 0);
	assert_true(sv_lease_holder_eq(&r->lease.holder, &b));
	assert_true(r->lease.token > ga.token);
	assert_null(reply_to(&sh, wc));
	assert_null(sh_timer(&sh, SV_LTIMER_WAITER, wb)); /* cancelled */
	assert_int_equal(sv_lease_pool_waiting(sh.c, p), 1);
	g = r->lease;
	assert_int_equal(sv_lease_release(sh.c, &b, g.id, sh.now), SV_OK);
	sh_drain(&sh);
	r = reply_to(&sh, wc);
	assert_non_null(r);
	assert_int_equal(r->err, SV_OK);
	assert_true(r->lease.token > g.token);
	assert_int_equal(sv_lease_pool_waiting(sh.c, p), 0);
	/* c's timer is gone: no timeout ever follows its grant. */
	sh_advance(&sh, 5000);
	assert_int_equal(count_fx(&sh, 0, SV_LFX_REPLY_WAITER), 3);
	assert_int_equal(count_ev(&sh, 0, SV_LEV_WAIT_TIMEOUT, 0), 1);
	sh_fini(&sh);
}

static void
test_wait_specific_slot_does_not_block(void **state)
{
	shell              sh;
	sv_lease_holder    a = W(1, 0, 1), b = W(1, 1, 1);
	sv_lease_holder    x = W(2, 0, 1), y = W(2, 1, 1);
	sv_lease_info      ga, gb, g;
	uint64_t           wx, wy;
	const sv_lease_fx *r;
	uint32_t           p;

	(void) state;
	sh_init(&sh, 1);
	p = pool(&sh, "two", 2, 0, 0, false);
	assert_int_equal(acq(&sh, &a, p, -1, &ga), SV_OK);
	assert_int_equal(acq(&sh, &b, p, -1, &gb), SV_OK);
	wx = acq_wait(&sh, &x, p, 0, 1000, &g); /* wants slot 0 only */
	wy = acq_wait(&sh, &y, p, -1, 1000, &g); /* any slot */
	/* Slot 1 frees: x does not want it, y (behind x) gets it. */
	assert_int_equal(sv_lease_release(sh.c, &b, gb.id, sh.now), SV_OK);
	sh_drain(&sh);
	assert_null(reply_to(&sh, wx));
	r = reply_to(&sh, wy);
	assert_non_null(r);
	assert_int_equal(r->lease.slot, 1);
	/* Slot 0 frees: x gets it. */
	sv_lease_holder_gone(sh.c, a.worker, sh.now);
	sh_drain(&sh);
	r = reply_to(&sh, wx);
	assert_non_null(r);
	assert_int_equal(r->err, SV_OK);
	assert_int_equal(r->lease.slot, 0);
	sh_fini(&sh);
}

/* ---- reclaim ---------------------------------------------------------------
 */

static void
test_holder_gone_gives_slot_to_waiter(void **state)
{
	shell              sh;
	sv_lease_holder    a = W(1, 0, 1), b = W(1, 1, 1);
	sv_lease_info      ga, g;
	uint64_t           wb;
	const sv_lease_fx *r, *n;
	size_t             mark;
	uint32_t           p;

	(void) state;
	sh_init(&sh, 1);
	p = pool(&sh, "one", 1, 0, 0, false);
	assert_int_equal(acq(&sh, &a, p, -1, &ga), SV_OK);
	sh.now = 100;
	wb     = acq_wait(&sh, &b, p, -1, 10000, &g);
	sh.now = 200;
	mark   = sh.nlog;
	sv_lease_holder_gone(sh.c, a.worker, sh.now);
	sh_drain(&sh);
	/* One revocation: one event, one notice addressed to a. */
	assert_int_equal(
	    count_ev(&sh, mark, SV_LEV_REVOKED, SV_LREASON_HOLDER_GONE), 1);
	assert_int_equal(count_fx(&sh, mark, SV_LFX_NOTICE_REVOKED), 1);
	n = find_fx(&sh, mark, SV_LFX_NOTICE_REVOKED);
	assert_true(sv_lease_holder_eq(&n->lease.holder, &a));
	assert_int_equal(n->lease.id, ga.id);
	assert_int_equal(n->reason, SV_LREASON_HOLDER_GONE);
	/* The waiter gets the slot in the same step (no timer), with a
	 * higher token. */
	r = reply_to(&sh, wb);
	assert_non_null(r);
	assert_int_equal(r->err, SV_OK);
	assert_int_equal(r->lease.slot, ga.slot);
	assert_true(r->lease.token > ga.token);
	assert_int_equal(r->lease.token, ga.token + 1);
	assert_int_equal(slot_state(&sh, p, 0, &g), SV_LEASE_HELD);
	assert_true(sv_lease_holder_eq(&g.holder, &b));
	/* A second reap of a is harmless. */
	mark = sh.nlog;
	sv_lease_holder_gone(sh.c, a.worker, sh.now);
	sh_drain(&sh);
	assert_int_equal(sh.nlog, mark);
	/* b's waiters are dropped when b goes away while waiting. */
	sh_fini(&sh);
}

static void
test_waiter_dropped_when_holder_gone(void **state)
{
	shell              sh;
	sv_lease_holder    a = W(1, 0, 1), b = W(1, 1, 1);
	sv_lease_info      ga, g;
	uint64_t           wb;
	const sv_lease_fx *r;
	uint32_t           p;

	(void) state;
	sh_init(&sh, 1);
	p = pool(&sh, "one", 1, 0, 0, false);
	assert_int_equal(acq(&sh, &a, p, -1, &ga), SV_OK);
	wb = acq_wait(&sh, &b, p, -1, 1000, &g);
	sv_lease_holder_gone(sh.c, b.worker, sh.now);
	sh_drain(&sh);
	r = reply_to(&sh, wb);
	assert_non_null(r);
	assert_int_equal(r->err, SV_ECLOSED);
	assert_null(sh_timer(&sh, SV_LTIMER_WAITER, wb));
	/* a's release then goes to nobody. */
	assert_int_equal(sv_lease_release(sh.c, &a, ga.id, sh.now), SV_OK);
	sh_drain(&sh);
	assert_int_equal(sv_lease_count(sh.c), 0);
	/* A cancelled wait is never answered. */
	assert_int_equal(acq(&sh, &a, p, -1, &ga), SV_OK);
	wb = acq_wait(&sh, &b, p, -1, 1000, &g);
	sv_lease_cancel_wait(sh.c, wb, sh.now);
	sh_drain(&sh);
	sh_advance(&sh, 2000);
	assert_null(reply_to(&sh, wb));
	sh_fini(&sh);
}

static void
test_ttl_and_renew(void **state)
{
	shell           sh;
	sv_lease_holder a = W(1, 0, 1);
	sv_lease_info   ga, g;
	const ftimer   *t;
	ftimer          stale;
	uint64_t        live;
	size_t          mark;
	uint32_t        p;

	(void) state;
	sh_init(&sh, 1);
	p = pool(&sh, "ttl", 1, 100, 1000, false);
	assert_int_equal(acq(&sh, &a, p, -1, &ga), SV_OK);
	assert_int_equal(ga.expiry_ms, 100);
	t = sh_timer(&sh, SV_LTIMER_SLOT, ((uint64_t) p << 32) | 0);
	assert_non_null(t);
	stale = *t;
	sh_advance(&sh, 90);
	assert_int_equal(sv_lease_renew(sh.c, &a, ga.id, sh.now, &g), SV_OK);
	sh_drain(&sh);
	assert_int_equal(g.expiry_ms, 190);
	assert_int_equal(g.token, ga.token); /* renewal keeps the token */
	/* The timer armed for 100 is stale now: firing it changes nothing,
	 * not even the armed timer. */
	t = sh_timer(&sh, SV_LTIMER_SLOT, ((uint64_t) p << 32) | 0);
	assert_non_null(t);
	assert_int_not_equal(t->guard, stale.guard);
	live = t->guard;
	mark = sh.nlog;
	sv_lease_timer(sh.c, stale.kind, stale.key, stale.guard, 100);
	sh_drain(&sh);
	assert_int_equal(sh.nlog, mark);
	t = sh_timer(&sh, SV_LTIMER_SLOT, ((uint64_t) p << 32) | 0);
	assert_non_null(t);
	assert_int_equal(t->guard, live);
	assert_int_equal(t->due, 190);
	sh_advance(&sh, 189);
	assert_int_equal(slot_state(&sh, p, 0, NULL), SV_LEASE_HELD);
	assert_int_equal(count_ev(&sh, 0, SV_LEV_REVOKED, 0), 0);
	revoked_at(&sh, p, 0, 190, SV_LEASE_HELD, SV_LREASON_EXPIRED);
	/* Renewing a revoked lease: it is gone. */
	assert_int_equal(
	    sv_lease_renew(sh.c, &a, ga.id, sh.now, &g), SV_ENOTFOUND);
	sh_fini(&sh);
}

static void
test_disconnect_grace(void **state)
{
	shell           sh;
	sv_lease_holder a = W(1, 0, 1), b = W(1, 1, 1);
	sv_lease_info   ga, gb, g = {0};
	size_t          mark;
	uint32_t        p, q;

	(void) state;
	sh_init(&sh, 1);
	p = pool(&sh, "graced", 2, 0, 50, false);
	q = pool(&sh, "nograce", 2, 0, 0, false);
	assert_int_equal(acq(&sh, &a, p, -1, &ga), SV_OK);
	sh.now = 10;
	sv_lease_holder_disconnected(sh.c, &a, sh.now);
	sh_drain(&sh);
	assert_int_equal(slot_state(&sh, p, 0, &g), SV_LEASE_HELD);
	assert_true(g.disconnected);
	sh_advance(&sh, 40);
	sv_lease_holder_reconnected(sh.c, &a, sh.now);
	sh_drain(&sh);
	sh_advance(&sh, 1000); /* long past the old grace end (60) */
	assert_int_equal(slot_state(&sh, p, 0, &g), SV_LEASE_HELD);
	assert_false(g.disconnected);
	assert_int_equal(g.id, ga.id);

	sv_lease_holder_disconnected(sh.c, &a, sh.now);
	sh_drain(&sh);
	revoked_at(&sh, p, 0, 1050, SV_LEASE_HELD, SV_LREASON_DISCONNECTED);

	/* A grace of 0 revokes at once. */
	assert_int_equal(acq(&sh, &b, q, -1, &gb), SV_OK);
	mark = sh.nlog;
	sv_lease_holder_disconnected(sh.c, &b, sh.now);
	sh_drain(&sh);
	assert_int_equal(slot_state(&sh, q, 0, NULL), SV_LEASE_FREE);
	assert_int_equal(
	    count_ev(&sh, mark, SV_LEV_REVOKED, SV_LREASON_DISCONNECTED), 1);
	sh_fini(&sh);
}

/* ---- who may do what -------------------------------------------------------
 */

static void
test_non_holder_refused(void **state)
{
	shell           sh;
	sv_lease_holder a = W(1, 0, 1), b = W(1, 1, 1), a2 = W(1, 0, 2);
	sv_lease_holder other_group = W(2, 0, 1);
	sv_lease_info   ga, g;
	uint32_t        p;

	(void) state;
	sh_init(&sh, 1);
	p = pool(&sh, "ttl", 2, 100, 0, false);
	assert_int_equal(acq(&sh, &a, p, -1, &ga), SV_OK);
	assert_int_equal(
	    sv_lease_renew(sh.c, &b, ga.id, sh.now, &g), SV_EPERM);
	assert_int_equal(
	    sv_lease_renew(sh.c, &a2, ga.id, sh.now, &g), SV_EPERM);
	assert_int_equal(
	    sv_lease_renew(sh.c, &other_group, ga.id, sh.now, &g), SV_EPERM);
	assert_int_equal(sv_lease_release(sh.c, &b, ga.id, sh.now), SV_EPERM);
	assert_int_equal(sv_lease_release(sh.c, &a2, ga.id, sh.now), SV_EPERM);
	sh_drain(&sh);
	assert_int_equal(slot_state(&sh, p, 0, &g), SV_LEASE_HELD);
	assert_true(sv_lease_holder_eq(&g.holder, &a));
	assert_int_equal(count_ev(&sh, 0, SV_LEV_RELEASED, 0), 0);
	assert_int_equal(
	    sv_lease_renew(sh.c, &a, ga.id + 1000, sh.now, &g), SV_ENOTFOUND);
	/* A holder's list shows its own leases only; an admin sees all. */
	{
		sv_lease_iter it = SV_LEASE_ITER_INIT;
		sv_lease_info info;
		size_t        n = 0;
		assert_int_equal(acq(&sh, &b, p, -1, &g), SV_OK);
		while (sv_lease_next(sh.c, &it, &b, &info, NULL)) {
			assert_true(sv_lease_holder_eq(&info.holder, &b));
			n++;
		}
		assert_int_equal(n, 1);
		it = (sv_lease_iter) SV_LEASE_ITER_INIT;
		n  = 0;
		while (sv_lease_next(sh.c, &it, NULL, &info, NULL)) {
			n++;
		}
		assert_int_equal(n, 2);
	}
	sh_fini(&sh);
}

static void
test_idempotent(void **state)
{
	shell           sh;
	sv_lease_holder a = W(1, 0, 1), b = W(1, 1, 1);
	sv_lease_info   ga, ga2, gb;
	size_t          mark;
	uint32_t        p;

	(void) state;
	sh_init(&sh, 1);
	p = pool(&sh, "pool", 3, 0, 0, false);
	assert_int_equal(acq(&sh, &a, p, -1, &ga), SV_OK);
	mark = sh.nlog;
	assert_int_equal(acq(&sh, &a, p, -1, &ga2), SV_OK);
	assert_int_equal(ga2.id, ga.id);
	assert_int_equal(ga2.token, ga.token);
	assert_int_equal(ga2.slot, ga.slot);
	assert_int_equal(acq(&sh, &a, p, ga.slot, &ga2), SV_OK);
	assert_int_equal(ga2.id, ga.id);
	assert_int_equal(count_ev(&sh, mark, SV_LEV_GRANTED, 0), 0);
	assert_int_equal(sv_lease_pool_held(sh.c, p), 1);
	/* Asking for another slot while holding one is a conflict. */
	assert_int_equal(acq(&sh, &a, p, 2, &ga2), SV_ECONFLICT);

	assert_int_equal(sv_lease_release(sh.c, &a, ga.id, sh.now), SV_OK);
	assert_int_equal(sv_lease_release(sh.c, &a, ga.id, sh.now), SV_OK);
	sh_drain(&sh);
	assert_int_equal(count_ev(&sh, 0, SV_LEV_RELEASED, 0), 1);
	/* The old id released again after the slot went to b: b keeps it. */
	assert_int_equal(acq(&sh, &b, p, ga.slot, &gb), SV_OK);
	assert_int_not_equal(gb.id, ga.id);
	assert_int_equal(sv_lease_release(sh.c, &a, ga.id, sh.now), SV_OK);
	sh_drain(&sh);
	assert_int_equal(slot_state(&sh, p, ga.slot, NULL), SV_LEASE_HELD);
	assert_int_equal(count_ev(&sh, 0, SV_LEV_RELEASED, 0), 1);
	sh_fini(&sh);
}

static void
test_generations_never_share(void **state)
{
	shell           sh;
	sv_lease_holder old = W(7, 3, 10), neu = W(7, 3, 11);
	sv_lease_info   go, gn, g;
	uint32_t        p;

	(void) state;
	sh_init(&sh, 1);
	p = pool(&sh, "byordinal", 8, 0, 0, false);
	/* Both ask for their ordinal's slot: only the first gets it. */
	assert_int_equal(acq(&sh, &old, p, 3, &go), SV_OK);
	assert_int_equal(acq(&sh, &neu, p, 3, &gn), SV_EBUSY);
	/* The new generation is not the old holder: no idempotent reply. */
	assert_int_equal(acq(&sh, &neu, p, -1, &gn), SV_OK);
	assert_int_not_equal(gn.slot, go.slot);
	assert_int_not_equal(gn.id, go.id);
	assert_int_equal(
	    sv_lease_renew(sh.c, &neu, go.id, sh.now, &g), SV_EPERM);
	assert_int_equal(
	    sv_lease_release(sh.c, &neu, go.id, sh.now), SV_EPERM);
	/* Reaping the old generation leaves the new one's lease alone. */
	sv_lease_holder_gone(sh.c, old.worker, sh.now);
	sh_drain(&sh);
	assert_int_equal(slot_state(&sh, p, go.slot, NULL), SV_LEASE_FREE);
	assert_int_equal(slot_state(&sh, p, gn.slot, &g), SV_LEASE_HELD);
	assert_true(sv_lease_holder_eq(&g.holder, &neu));
	assert_int_equal(count_fx(&sh, 0, SV_LFX_NOTICE_REVOKED), 1);
	sh_fini(&sh);
}

/* ---- resources and sessions ------------------------------------------------
 */

static void
test_resource_effects(void **state)
{
	shell              sh;
	sv_lease_holder    a = W(1, 0, 1), b = W(1, 1, 1);
	sv_lease_info      ga, gb;
	const sv_lease_fx *fx;
	size_t             mark;
	uint32_t           p, plain;

	(void) state;
	sh_init(&sh, 1);
	p     = pool(&sh, "files", 2, 0, 0, true);
	plain = pool(&sh, "plain", 2, 0, 0, false);
	mark  = sh.nlog;
	assert_int_equal(acq(&sh, &a, p, -1, &ga), SV_OK);
	/* The prepare comes first, then the grant's event. */
	assert_int_equal(sh.log[mark].kind, SV_LFX_RESOURCE_PREPARE);
	assert_int_equal(sh.log[mark].lease.slot, ga.slot);
	assert_int_equal(sh.log[mark].lease.token, ga.token);
	assert_int_equal(sh.log[mark + 1].kind, SV_LFX_EVENT);
	assert_int_equal(sh.log[mark + 1].event, SV_LEV_GRANTED);
	mark = sh.nlog;
	assert_int_equal(sv_lease_release(sh.c, &a, ga.id, sh.now), SV_OK);
	sh_drain(&sh);
	fx = find_fx(&sh, mark, SV_LFX_RESOURCE_RECLAIM);
	assert_non_null(fx);
	assert_int_equal(fx->policy, SV_LEASE_TRUNCATE);
	assert_int_equal(fx->lease.slot, ga.slot);
	mark = sh.nlog;
	assert_int_equal(acq(&sh, &b, p, -1, &gb), SV_OK);
	sv_lease_holder_gone(sh.c, b.worker, sh.now);
	sh_drain(&sh);
	assert_int_equal(count_fx(&sh, mark, SV_LFX_RESOURCE_PREPARE), 1);
	assert_int_equal(count_fx(&sh, mark, SV_LFX_RESOURCE_RECLAIM), 1);
	/* Abort: the prepare failed; no notice, the slot is free, the token
	 * is used up. */
	mark = sh.nlog;
	assert_int_equal(acq(&sh, &a, p, -1, &ga), SV_OK);
	sv_lease_abort(sh.c, ga.id, sh.now);
	sh_drain(&sh);
	assert_int_equal(count_ev(&sh, mark, SV_LEV_ABORTED, 0), 1);
	assert_int_equal(count_fx(&sh, mark, SV_LFX_NOTICE_REVOKED), 0);
	assert_int_equal(slot_state(&sh, p, ga.slot, NULL), SV_LEASE_FREE);
	assert_int_equal(acq(&sh, &b, p, ga.slot, &gb), SV_OK);
	assert_true(gb.token > ga.token);
	/* A pool without resources has no resource effects. */
	mark = sh.nlog;
	assert_int_equal(acq(&sh, &a, plain, -1, &ga), SV_OK);
	sv_lease_holder_gone(sh.c, a.worker, sh.now);
	sh_drain(&sh);
	assert_int_equal(count_fx(&sh, mark, SV_LFX_RESOURCE_PREPARE), 0);
	assert_int_equal(count_fx(&sh, mark, SV_LFX_RESOURCE_RECLAIM), 0);
	sh_fini(&sh);
}

static void
test_sessions(void **state)
{
	shell           sh;
	sv_lease_holder s     = {.kind = SV_HOLDER_SESSION};
	sv_lease_holder bogus = {.kind = SV_HOLDER_SESSION, .session = 99};
	sv_lease_info   g;
	uint64_t        id = 0;
	size_t          mark;
	uint32_t        p;

	(void) state;
	sh_init(&sh, 1);
	p = pool(&sh, "tools", 2, 0, 0, false);
	assert_int_equal(acq(&sh, &bogus, p, -1, &g), SV_ENOTFOUND);
	assert_int_equal(
	    sv_lease_session_open(sh.c, 1000, 100, sh.now, &id), SV_OK);
	sh_drain(&sh);
	assert_int_not_equal(id, 0);
	/* The core is where the shell reads a session's owner and TTL. */
	{
		sv_lease_session_info si = {0};
		assert_true(sv_lease_session_get(sh.c, id, &si));
		assert_int_equal(si.id, id);
		assert_int_equal(si.uid, 1000);
		assert_int_equal(si.ttl_ms, 100);
		assert_int_equal(si.expiry_ms, sh.now + 100);
		assert_false(sv_lease_session_get(sh.c, id + 1, &si));
		assert_false(sv_lease_session_get(sh.c, 0, &si));
	}
	s.session = id;
	assert_int_equal(acq(&sh, &s, p, -1, &g), SV_OK);
	sh_advance(&sh, 80);
	assert_int_equal(
	    sv_lease_session_renew(sh.c, id, 1001, sh.now), SV_EPERM);
	assert_int_equal(
	    sv_lease_session_renew(sh.c, id, 1000, sh.now), SV_OK);
	sh_drain(&sh);
	{
		sv_lease_session_info si = {0};
		assert_true(sv_lease_session_get(sh.c, id, &si));
		assert_int_equal(si.expiry_ms, 180);
	}
	revoked_at(
	    &sh, p, g.slot, 180, SV_LEASE_HELD, SV_LREASON_SESSION_EXPIRED);
	assert_int_equal(acq(&sh, &s, p, -1, &g), SV_ENOTFOUND);
	{
		sv_lease_session_info si;
		assert_false(sv_lease_session_get(sh.c, id, &si));
	}
	/* Closing releases (no notice); closing again is fine. */
	assert_int_equal(
	    sv_lease_session_open(sh.c, 1000, 100, sh.now, &id), SV_OK);
	s.session = id;
	assert_int_equal(acq(&sh, &s, p, -1, &g), SV_OK);
	assert_int_equal(
	    sv_lease_session_close(sh.c, id, 5, sh.now), SV_EPERM);
	mark = sh.nlog;
	assert_int_equal(
	    sv_lease_session_close(sh.c, id, 1000, sh.now), SV_OK);
	assert_int_equal(
	    sv_lease_session_close(sh.c, id, 1000, sh.now), SV_OK);
	sh_drain(&sh);
	assert_int_equal(
	    count_ev(&sh, mark, SV_LEV_RELEASED, SV_LREASON_SESSION_CLOSED),
	    1);
	assert_int_equal(count_fx(&sh, mark, SV_LFX_NOTICE_REVOKED), 0);
	assert_null(sh_timer(&sh, SV_LTIMER_SESSION, id));
	{
		sv_lease_session_info si;
		assert_false(sv_lease_session_get(sh.c, id, &si));
	}
	sh_fini(&sh);
}

/* ---- restart ---------------------------------------------------------------
 */

/* journal copies every lease of sh into recs (capacity cap). */
static size_t
journal(shell *sh, sv_lease_record *recs, size_t cap)
{
	sv_lease_iter it = SV_LEASE_ITER_INIT;
	sv_lease_info info;
	size_t        n = 0;

	while (n < cap && sv_lease_next(sh->c, &it, NULL, &info, &recs[n])) {
		assert_int_equal(recs[n].id, info.id);
		n++;
	}
	return n;
}

static void
test_restart_reclaim(void **state)
{
	shell           sh;
	sv_lease_holder a = W(1, 0, 1), b = W(1, 1, 1), c = W(1, 2, 1);
	sv_lease_holder t = {.kind = SV_HOLDER_SESSION};
	sv_lease_info   ga, gb, gc, g;
	sv_lease_record recs[8];
	uint64_t        tok1[4], sid = 0;
	size_t          n, skipped   = 0, mark;
	uint32_t        p;

	(void) state;
	sh_init(&sh, 5);
	p = pool(&sh, "m", 4, 1000, 0, false);
	/* Churn slot 0 a little so its counter is above 1. */
	for (int k = 0; k < 3; k++) {
		assert_int_equal(acq(&sh, &c, p, 0, &gc), SV_OK);
		assert_int_equal(
		    sv_lease_release(sh.c, &c, gc.id, sh.now), SV_OK);
	}
	assert_int_equal(acq(&sh, &a, p, 0, &ga), SV_OK);
	assert_int_equal(acq(&sh, &b, p, 1, &gb), SV_OK);
	assert_int_equal(ga.token, ((uint64_t) 5 << 32) | 4);
	assert_int_equal(gb.token, ((uint64_t) 5 << 32) | 1);
	assert_int_equal(
	    sv_lease_session_open(sh.c, 42, 500, sh.now, &sid), SV_OK);
	t.session = sid;
	assert_int_equal(acq(&sh, &t, p, 2, &g), SV_OK);
	tok1[0] = ga.token;
	tok1[1] = gb.token;
	tok1[2] = g.token;
	n       = journal(&sh, recs, 8);
	assert_int_equal(n, 3);
	assert_int_equal(recs[2].session_uid, 42);
	assert_int_equal(recs[2].session_ttl_ms, 500);
	sh_fini(&sh); /* kill -9 */

	/* The next supervisor: epoch 6, same pool, a journal to restore. */
	sh_init(&sh, 6);
	assert_int_equal(pool(&sh, "m", 4, 1000, 0, false), p);
	/* A record from this epoch or later, or for an unknown pool, is
	 * skipped. */
	recs[3]        = recs[0];
	recs[3].slot   = 3;
	recs[3].holder = c;
	recs[3].id     = recs[0].id + 100;
	recs[3].token  = ((uint64_t) 6 << 32) | 1; /* token of this epoch */
	recs[4]        = recs[3];
	recs[4].token  = recs[0].token;
	recs[4].id     = ((uint64_t) 6 << 32) | 1; /* id of this epoch */
	recs[5]        = recs[4];
	recs[5].id     = recs[3].id;
	memcpy(recs[5].pool, "gone", 5); /* unknown pool */
	recs[6]        = recs[5];
	recs[6].holder = a; /* a second lease of a in one pool */
	memcpy(recs[6].pool, "m", 2);
	recs[7]        = recs[6];
	recs[7].holder = c;
	recs[7].slot   = 0; /* a slot restored just before */
	sh.now         = 1000;
	assert_int_equal(
	    sv_lease_restore(sh.c, recs, 8, 200, sh.now, &skipped), SV_OK);
	sh_drain(&sh);
	assert_int_equal(skipped, 5);
	assert_int_equal(count_ev(&sh, 0, SV_LEV_RESTORED, 0), 3);
	assert_int_equal(sv_lease_count(sh.c), 3);
	assert_int_equal(slot_state(&sh, p, 0, NULL), SV_LEASE_UNCLAIMED);

	/* An unclaimed lease can be neither renewed nor acquired again. */
	assert_int_equal(
	    sv_lease_renew(sh.c, &a, recs[0].id, sh.now, &g), SV_ECONFLICT);
	assert_int_equal(acq(&sh, &a, p, -1, &g), SV_ECONFLICT);
	assert_int_equal(acq(&sh, &c, p, 0, &g), SV_EBUSY);

	/* a re-claims with its token and keeps its lease. */
	sh.now = 1050;
	assert_int_equal(
	    sv_lease_claim(sh.c, &a, p, 0, tok1[0], sh.now, &g), SV_OK);
	sh_drain(&sh);
	assert_int_equal(g.id, ga.id);
	assert_int_equal(g.token, tok1[0]);
	assert_int_equal(g.state, SV_LEASE_HELD);
	assert_int_equal(g.expiry_ms, 2050); /* a fresh TTL */
	assert_int_equal(
	    sv_lease_claim(sh.c, &a, p, 0, tok1[0], sh.now, &g), SV_OK);
	assert_int_equal(count_ev(&sh, 0, SV_LEV_CLAIMED, 0), 1);

	/* Conflicting claims: wrong token, wrong holder, held slot. */
	mark = sh.nlog;
	assert_int_equal(
	    sv_lease_claim(sh.c, &b, p, 1, tok1[1] - 1, sh.now, &g),
	    SV_ECONFLICT);
	assert_int_equal(
	    sv_lease_claim(sh.c, &c, p, 1, tok1[1], sh.now, &g), SV_ECONFLICT);
	assert_int_equal(
	    sv_lease_claim(sh.c, &c, p, 0, tok1[0], sh.now, &g), SV_ECONFLICT);
	assert_int_equal(
	    sv_lease_claim(sh.c, &a, p, 3, tok1[0], sh.now, &g), SV_ENOTFOUND);
	sh_drain(&sh);
	assert_int_equal(count_ev(&sh, mark, SV_LEV_CLAIM_REFUSED, 0), 3);
	assert_int_equal(slot_state(&sh, p, 1, NULL), SV_LEASE_UNCLAIMED);

	/* The tool resumes its session (owner checked) and re-claims. */
	assert_int_equal(
	    sv_lease_session_renew(sh.c, sid, 41, sh.now), SV_EPERM);
	assert_int_equal(sv_lease_session_renew(sh.c, sid, 42, sh.now), SV_OK);
	assert_int_equal(
	    sv_lease_claim(sh.c, &t, p, 2, tok1[2], sh.now, &g), SV_OK);
	sh_drain(&sh);

	/* b never comes back: revoked at the end of the claim grace. */
	revoked_at(&sh, p, 1, 1200, SV_LEASE_UNCLAIMED, SV_LREASON_UNCLAIMED);
	assert_int_equal(
	    sv_lease_claim(sh.c, &b, p, 1, tok1[1], sh.now, &g), SV_ENOTFOUND);

	/* New grants carry the new epoch: above every token before. */
	assert_int_equal(acq(&sh, &c, p, 1, &gc), SV_OK);
	assert_int_equal(gc.token, ((uint64_t) 6 << 32) | 1);
	assert_true(gc.token > tok1[1]);
	assert_true(gc.token > tok1[0]);
	assert_true(gc.id > ga.id);
	/* a's re-claimed lease is renewed like any other. */
	assert_int_equal(sv_lease_renew(sh.c, &a, ga.id, sh.now, &g), SV_OK);
	assert_int_equal(sv_lease_release(sh.c, &a, ga.id, sh.now), SV_OK);
	assert_int_equal(acq(&sh, &b, p, 0, &gb), SV_OK);
	assert_true(gb.token > tok1[0]);
	sh_fini(&sh);
}

/* ---- many leases -----------------------------------------------------------
 */

#define MANY       10000u
#define MANY_POOLS 3u
/* Leases released before the restart: the survivors' claim timers must
 * fit the fake shell's MAXTIMERS. */
#define MANY_GONE 6000u

/* 10,000 leases over 3 pools of the largest size: each is found from its
 * id for renew and release (the id index through its growth, and 6,000
 * deletions in a scrambled order); a released id is gone; the journal of
 * the 4,000 survivors restores into the next supervisor, which refuses a
 * record repeating an id and lets every holder re-claim its lease. */
static void
test_many_leases(void **state)
{
	shell            sh;
	sv_lease_info   *g    = calloc(MANY, sizeof(*g));
	sv_lease_record *recs = calloc(MANY + 1, sizeof(*recs));
	uint32_t        *perm = calloc(MANY, sizeof(*perm));
	uint32_t         p[MANY_POOLS];
	sv_lease_info    info;
	sv_lease_holder  h, o;
	char             name[16];
	uint32_t         x       = 88172645u;
	size_t           n       = 0;
	size_t           skipped = 0;

	(void) state;
	assert_non_null(g);
	assert_non_null(recs);
	assert_non_null(perm);
	sh_init(&sh, 3);
	for (uint32_t k = 0; k < MANY_POOLS; k++) {
		snprintf(name, sizeof(name), "p%u", k);
		p[k] = pool(&sh, name, SV_LEASE_MAX_SLOTS, 0, 0, false);
	}
	for (uint32_t i = 0; i < MANY; i++) {
		h = W(1, i, 1);
		assert_int_equal(
		    acq(&sh, &h, p[i % MANY_POOLS], -1, &g[i]), SV_OK);
		sh.nlog = 0;
	}
	assert_int_equal(sv_lease_count(sh.c), MANY);
	for (uint32_t i = 0; i < MANY; i++) {
		h = W(1, i, 1);
		o = W(1, i, 2);
		assert_int_equal(
		    sv_lease_renew(sh.c, &h, g[i].id, sh.now, &info), SV_OK);
		assert_int_equal(info.pool_id, g[i].pool_id);
		assert_int_equal(info.slot, g[i].slot);
		assert_int_equal(info.token, g[i].token);
		assert_int_equal(
		    sv_lease_renew(sh.c, &o, g[i].id, sh.now, &info),
		    SV_EPERM);
		perm[i] = i;
	}
	/* Release most of them, in a scrambled order. */
	for (uint32_t i = MANY - 1; i > 0; i--) {
		uint32_t j, t;
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		j       = x % (i + 1);
		t       = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	for (uint32_t k = 0; k < MANY_GONE; k++) {
		h = W(1, perm[k], 1);
		assert_int_equal(
		    sv_lease_release(sh.c, &h, g[perm[k]].id, sh.now), SV_OK);
		sh_drain(&sh);
		sh.nlog = 0;
	}
	assert_int_equal(sv_lease_count(sh.c), MANY - MANY_GONE);
	for (uint32_t k = 0; k < MANY; k++) {
		uint32_t i = perm[k];
		h          = W(1, i, 1);
		if (k < MANY_GONE) {
			assert_int_equal(
			    sv_lease_renew(sh.c, &h, g[i].id, sh.now, &info),
			    SV_ENOTFOUND);
			assert_int_equal(
			    sv_lease_release(sh.c, &h, g[i].id, sh.now),
			    SV_OK);
		} else {
			assert_int_equal(
			    sv_lease_renew(sh.c, &h, g[i].id, sh.now, &info),
			    SV_OK);
			assert_int_equal(info.slot, g[i].slot);
			assert_int_equal(info.pool_id, g[i].pool_id);
		}
	}
	assert_int_equal(sv_lease_count(sh.c), MANY - MANY_GONE);
	n = journal(&sh, recs, MANY);
	assert_int_equal(n, MANY - MANY_GONE);
	sh_fini(&sh); /* kill -9 */

	sh_init(&sh, 4);
	for (uint32_t k = 0; k < MANY_POOLS; k++) {
		snprintf(name, sizeof(name), "p%u", k);
		assert_int_equal(
		    pool(&sh, name, SV_LEASE_MAX_SLOTS, 0, 0, false), p[k]);
	}
	/* The same id again, on a free slot, for another holder. */
	recs[n]        = recs[0];
	recs[n].slot   = SV_LEASE_MAX_SLOTS - 1;
	recs[n].holder = W(2, 0, 1);
	assert_int_equal(
	    sv_lease_restore(sh.c, recs, n + 1, 1000, sh.now, &skipped),
	    SV_OK);
	sh_drain(&sh);
	sh.nlog = 0;
	assert_int_equal(skipped, 1);
	assert_int_equal(sv_lease_count(sh.c), MANY - MANY_GONE);
	for (size_t i = 0; i < n; i++) {
		uint32_t pid = sv_lease_pool_find(sh.c, recs[i].pool);
		assert_int_equal(
		    sv_lease_claim(sh.c, &recs[i].holder, pid, recs[i].slot,
		        recs[i].token, sh.now, &info),
		    SV_OK);
		assert_int_equal(info.id, recs[i].id);
		assert_int_equal(info.state, SV_LEASE_HELD);
		assert_int_equal(sv_lease_release(sh.c, &recs[i].holder,
		                     recs[i].id, sh.now),
		    SV_OK);
		sh_drain(&sh);
		sh.nlog = 0;
	}
	assert_int_equal(sv_lease_count(sh.c), 0);
	sh_fini(&sh);
	free(perm);
	free(recs);
	free(g);
}

/* A slot keeps its holder's kind: a session, and a worker whose generation
 * is that session's id, are two holders. */
static void
test_holder_kinds(void **state)
{
	shell           sh;
	sv_lease_holder t = {.kind = SV_HOLDER_SESSION};
	sv_lease_holder w;
	sv_lease_info   gt, gw, info;
	sv_lease_iter   it  = SV_LEASE_ITER_INIT;
	uint64_t        sid = 0;
	uint32_t        p;

	(void) state;
	sh_init(&sh, 2);
	p = pool(&sh, "k", 2, 0, 0, false);
	assert_int_equal(
	    sv_lease_session_open(sh.c, 7, 1000, sh.now, &sid), SV_OK);
	t.session = sid;
	w         = W(0, 0, sid);
	assert_int_equal(acq(&sh, &t, p, 0, &gt), SV_OK);
	assert_int_equal(gt.holder.kind, SV_HOLDER_SESSION);
	assert_int_equal(gt.holder.session, sid);
	assert_int_equal(
	    sv_lease_renew(sh.c, &w, gt.id, sh.now, &info), SV_EPERM);
	assert_int_equal(sv_lease_release(sh.c, &w, gt.id, sh.now), SV_EPERM);
	assert_int_equal(
	    sv_lease_claim(sh.c, &w, p, 0, gt.token, sh.now, &info),
	    SV_ECONFLICT);
	/* w holds nothing in the pool yet, so it gets the other slot. */
	assert_int_equal(acq(&sh, &w, p, -1, &gw), SV_OK);
	assert_int_equal(gw.slot, 1);
	assert_int_equal(gw.holder.kind, SV_HOLDER_WORKER);
	assert_int_equal(gw.holder.worker.generation, sid);
	assert_true(sv_lease_next(sh.c, &it, &w, &info, NULL));
	assert_int_equal(info.id, gw.id);
	assert_false(sv_lease_next(sh.c, &it, &w, &info, NULL));
	assert_int_equal(sv_lease_release(sh.c, &t, gt.id, sh.now), SV_OK);
	assert_int_equal(slot_state(&sh, p, 0, NULL), SV_LEASE_FREE);
	assert_int_equal(slot_state(&sh, p, 1, &info), SV_LEASE_HELD);
	assert_int_equal(info.holder.kind, SV_HOLDER_WORKER);
	sh_fini(&sh);
}

/* ---- bounds ----------------------------------------------------------------
 */

static void
test_bounds(void **state)
{
	shell           sh;
	char            name[SV_LEASE_NAME_MAX + 2];
	sv_lease_holder a = W(1, 0, 1);
	sv_lease_info   g;
	sv_lease_core  *c = NULL;
	uint32_t        p, id;
	uint64_t        sid;

	(void) state;
	assert_int_equal(sv_lease_core_create(0, &c), SV_EINVAL);
	assert_int_equal(
	    sv_lease_core_create(SV_LEASE_MAX_EPOCH + 1u, &c), SV_EINVAL);
	sh_init(&sh, 1);
	memset(name, 'a', sizeof(name));
	name[SV_LEASE_NAME_MAX + 1] = '\0'; /* 65 bytes */
	assert_int_equal(
	    sv_lease_pool_add(sh.c, name, 1, 0, 0, SV_LEASE_KEEP, false, &id),
	    SV_ETOOLARGE);
	name[SV_LEASE_NAME_MAX] = '\0'; /* 64 bytes */
	assert_int_equal(
	    sv_lease_pool_add(sh.c, name, 1, 0, 0, SV_LEASE_KEEP, false, &id),
	    SV_OK);
	assert_string_equal(sv_lease_pool_name(sh.c, id), name);
	assert_int_equal(
	    sv_lease_pool_add(sh.c, "", 1, 0, 0, SV_LEASE_KEEP, false, &id),
	    SV_EBADREQ);
	assert_int_equal(
	    sv_lease_pool_add(sh.c, "a/b", 1, 0, 0, SV_LEASE_KEEP, false, &id),
	    SV_EBADREQ);
	assert_int_equal(sv_lease_pool_add(sh.c, "x", SV_LEASE_MAX_SLOTS + 1,
	                     0, 0, SV_LEASE_KEEP, false, &id),
	    SV_ETOOLARGE);
	assert_int_equal(
	    sv_lease_pool_add(sh.c, "x", 0, 0, 0, SV_LEASE_KEEP, false, &id),
	    SV_EINVAL);
	assert_int_equal(sv_lease_pool_add(sh.c, "x", 1, SV_LEASE_MAX_MS + 1,
	                     0, SV_LEASE_KEEP, false, &id),
	    SV_ETOOLARGE);
	assert_int_equal(sv_lease_pool_add(sh.c, "x", 1, 0,
	                     SV_LEASE_MAX_MS + 1, SV_LEASE_KEEP, false, &id),
	    SV_ETOOLARGE);
	assert_int_equal(sv_lease_pool_add(sh.c, "x", 1, 0, 0,
	                     (sv_lease_policy) 9, false, &id),
	    SV_EINVAL);
	p = pool(&sh, "x", SV_LEASE_MAX_SLOTS, 0, 0, false);
	assert_int_equal(
	    sv_lease_pool_add(sh.c, "x", 1, 0, 0, SV_LEASE_KEEP, false, &id),
	    SV_ECONFLICT);
	for (uint32_t i = 2; i < SV_LEASE_MAX_POOLS; i++) {
		char n[16];
		snprintf(n, sizeof(n), "p%u", i);
		(void) pool(&sh, n, 1, 0, 0, false);
	}
	assert_int_equal(sv_lease_pool_add(sh.c, "onetoomany", 1, 0, 0,
	                     SV_LEASE_KEEP, false, &id),
	    SV_EEXHAUSTED);
	/* The largest slot exists; a waiter's deadline is bounded. */
	assert_int_equal(acq(&sh, &a, p, SV_LEASE_MAX_SLOTS - 1, &g), SV_OK);
	assert_int_equal(acq(&sh, &a, p, SV_LEASE_MAX_SLOTS, &g), SV_EINVAL);
	{
		sv_lease_req    req = {.pool_id = 1, .wait = true};
		sv_lease_holder b   = W(1, 1, 1);
		uint64_t        w   = 0;
		(void) acq(&sh, &a, 1, -1, &g); /* pool 1 has one slot */
		req.deadline_ms = sh.now + SV_LEASE_MAX_MS + 1;
		assert_int_equal(
		    sv_lease_acquire(sh.c, &b, &req, sh.now, &g, &w),
		    SV_ETOOLARGE);
		/* At most SV_LEASE_MAX_WAITERS wait on one pool. */
		req.deadline_ms = sh.now + 1000;
		for (uint32_t k = 0; k < SV_LEASE_MAX_WAITERS; k++) {
			sv_lease_holder h = W(9, k, 1);
			assert_int_equal(
			    sv_lease_acquire(sh.c, &h, &req, sh.now, &g, &w),
			    SV_OK);
			assert_int_not_equal(w, 0);
		}
		assert_int_equal(
		    sv_lease_acquire(sh.c, &b, &req, sh.now, &g, &w),
		    SV_EBUSY);
		sh_drain(&sh);
	}
	for (uint32_t k = 0; k < SV_LEASE_MAX_SESSIONS; k++) {
		assert_int_equal(
		    sv_lease_session_open(sh.c, 0, 1000, sh.now, &sid), SV_OK);
	}
	assert_int_equal(
	    sv_lease_session_open(sh.c, 0, 1000, sh.now, &sid), SV_EEXHAUSTED);
	assert_int_equal(
	    sv_lease_session_open(sh.c, 0, 0, sh.now, &sid), SV_EINVAL);
	assert_int_equal(
	    sv_lease_restore(sh.c, NULL, 0, SV_LEASE_MAX_MS + 1, sh.now, NULL),
	    SV_ETOOLARGE);
	sh_drain(&sh);
	sh_fini(&sh);
}

/* ---- randomized model test -------------------------------------------------
 */

#define M_POOLS   3
#define M_SLOTS   4
#define M_WORKERS 6

/* What the test believes from the effects alone. */
typedef struct mslot {
	bool            live;
	uint64_t        id;
	uint64_t        token;
	sv_lease_holder holder;
} mslot;

typedef struct model {
	shell    sh;
	uint32_t epoch;
	uint32_t npools;
	uint32_t nslots[M_POOLS];
	uint64_t ttl[M_POOLS], grace[M_POOLS];
	bool     res[M_POOLS];
	mslot    s[M_POOLS][M_SLOTS];
	uint64_t lasttok[M_POOLS][M_SLOTS]; /* across restarts */
	uint64_t gen[M_WORKERS];
	size_t   seen; /* log entries already checked */
	size_t   revoked, notices, grants, replies_ok;
	uint64_t answered[4096]; /* waiters answered (each at most once) */
	size_t   nanswered;
	uint64_t rng;
} model;

static uint32_t
rnd(model *m, uint32_t n)
{
	m->rng = m->rng * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t) (m->rng >> 33) % n;
}

static sv_lease_holder
m_worker(model *m, uint32_t k)
{
	return W(1, k, m->gen[k]);
}

/* m_check_log replays the new effects into the model. */
static void
m_check_log(model *m)
{
	shell *sh = &m->sh;

	for (; m->seen < sh->nlog; m->seen++) {
		const sv_lease_fx *fx = &sh->log[m->seen];
		uint32_t           pi = fx->lease.pool_id - 1;
		mslot             *ms;

		switch (fx->kind) {
		case SV_LFX_NOTICE_REVOKED:
			/* A notice is followed by its REVOKED event. */
			assert_true(m->seen + 1 < sh->nlog);
			assert_int_equal(
			    sh->log[m->seen + 1].kind, SV_LFX_EVENT);
			assert_int_equal(
			    sh->log[m->seen + 1].event, SV_LEV_REVOKED);
			assert_int_equal(
			    sh->log[m->seen + 1].lease.id, fx->lease.id);
			m->notices++;
			break;
		case SV_LFX_REPLY_WAITER:
			for (size_t a = 0; a < m->nanswered; a++) {
				assert_int_not_equal(
				    m->answered[a], fx->waiter);
			}
			if (m->nanswered < 4096) {
				m->answered[m->nanswered++] = fx->waiter;
			}
			if (fx->err == SV_OK) {
				ms = &m->s[pi][fx->lease.slot];
				assert_true(ms->live);
				assert_int_equal(ms->id, fx->lease.id);
				m->replies_ok++;
			}
			break;
		case SV_LFX_EVENT:
			if (fx->event == SV_LEV_WAIT_TIMEOUT
			    || fx->event == SV_LEV_SESSION_OPENED
			    || fx->event == SV_LEV_SESSION_ENDED
			    || fx->event == SV_LEV_DISCONNECTED
			    || fx->event == SV_LEV_RECONNECTED
			    || fx->event == SV_LEV_CLAIM_REFUSED) {
				break;
			}
			assert_true(pi < m->npools);
			assert_true(fx->lease.slot < m->nslots[pi]);
			ms = &m->s[pi][fx->lease.slot];
			switch (fx->event) {
			case SV_LEV_GRANTED:
				/* At most one live lease per slot; tokens of a
				 * slot strictly increase, across restarts. */
				assert_false(ms->live);
				assert_true(fx->lease.token
				    > m->lasttok[pi][fx->lease.slot]);
				m->lasttok[pi][fx->lease.slot]
				    = fx->lease.token;
				assert_int_equal(
				    fx->lease.token >> 32, m->epoch);
				ms->live   = true;
				ms->id     = fx->lease.id;
				ms->token  = fx->lease.token;
				ms->holder = fx->lease.holder;
				m->grants++;
				break;
			case SV_LEV_RESTORED:
				assert_false(ms->live);
				assert_int_equal(fx->lease.token,
				    m->lasttok[pi][fx->lease.slot]);
				ms->live   = true;
				ms->id     = fx->lease.id;
				ms->token  = fx->lease.token;
				ms->holder = fx->lease.holder;
				break;
			case SV_LEV_CLAIMED:
				assert_true(ms->live);
				assert_int_equal(ms->id, fx->lease.id);
				break;
			case SV_LEV_REVOKED:
				/* ... preceded by exactly one notice. */
				assert_true(m->seen > 0);
				assert_int_equal(sh->log[m->seen - 1].kind,
				    SV_LFX_NOTICE_REVOKED);
				m->revoked++;
				/* fall through */
			case SV_LEV_RELEASED:
			case SV_LEV_ABORTED:
				assert_true(ms->live);
				assert_int_equal(ms->id, fx->lease.id);
				assert_true(sv_lease_holder_eq(
				    &ms->holder, &fx->lease.holder));
				ms->live = false;
				break;
			default:
				fail();
			}
			break;
		default:
			break;
		}
	}
	assert_int_equal(m->revoked, m->notices);
}

/* m_check_core compares the core's list with the model. */
static void
m_check_core(model *m)
{
	sv_lease_iter it = SV_LEASE_ITER_INIT;
	sv_lease_info info;
	size_t        n = 0, live = 0;

	while (sv_lease_next(m->sh.c, &it, NULL, &info, NULL)) {
		mslot *ms = &m->s[info.pool_id - 1][info.slot];
		assert_true(ms->live);
		assert_int_equal(ms->id, info.id);
		assert_int_equal(ms->token, info.token);
		assert_true(sv_lease_holder_eq(&ms->holder, &info.holder));
		/* Nothing outlives its deadlines (timers fire on time). */
		if (info.state == SV_LEASE_HELD && info.expiry_ms != 0) {
			assert_true(info.expiry_ms > m->sh.now);
		}
		n++;
	}
	for (uint32_t p = 0; p < m->npools; p++) {
		for (uint32_t s = 0; s < m->nslots[p]; s++) {
			live += m->s[p][s].live;
			/* One lease per holder per pool. */
			for (uint32_t t = s + 1;
			     m->s[p][s].live && t < m->nslots[p]; t++) {
				assert_false(m->s[p][t].live
				    && sv_lease_holder_eq(&m->s[p][s].holder,
				        &m->s[p][t].holder));
			}
		}
	}
	assert_int_equal(n, live);
	assert_int_equal(sv_lease_count(m->sh.c), live);
}

static void
m_add_pools(model *m)
{
	for (uint32_t p = 0; p < m->npools; p++) {
		char     name[16];
		uint32_t id = 0;
		snprintf(name, sizeof(name), "p%u", p);
		assert_int_equal(
		    sv_lease_pool_add(m->sh.c, name, m->nslots[p], m->ttl[p],
		        m->grace[p], SV_LEASE_REMOVE, m->res[p], &id),
		    SV_OK);
		assert_int_equal(id, p + 1);
	}
}

/* m_restart journals the leases, kills the core and starts the next
 * epoch from the journal (waiters are lost with their connections). */
static void
m_restart(model *m)
{
	sv_lease_record recs[M_POOLS * M_SLOTS];
	size_t          n, skipped = 0;
	uint64_t        now = m->sh.now;

	n = journal(&m->sh, recs, M_POOLS * M_SLOTS);
	sh_fini(&m->sh);
	m->epoch++;
	sh_init(&m->sh, m->epoch);
	m->sh.now = now;
	m->seen   = 0;
	/* Waiter ids are handles of one core: they start again. */
	m->nanswered = 0;
	memset(m->s, 0, sizeof(m->s));
	m_add_pools(m);
	assert_int_equal(sv_lease_restore(m->sh.c, recs, n, 1 + rnd(m, 40),
	                     m->sh.now, &skipped),
	    SV_OK);
	assert_int_equal(skipped, 0);
	sh_drain(&m->sh);
}

static void
m_step(model *m)
{
	shell          *sh = &m->sh;
	uint32_t        k  = rnd(m, M_WORKERS);
	uint32_t        pi = rnd(m, m->npools);
	sv_lease_holder h  = m_worker(m, k);
	sv_lease_info   g;
	uint64_t        w  = 0;
	uint32_t        op = rnd(m, 100);

	if (op < 30) {
		sv_lease_req req = {.pool_id = pi + 1};
		req.has_slot     = rnd(m, 3) == 0;
		req.slot         = rnd(m, m->nslots[pi] + 1); /* maybe bad */
		req.wait         = rnd(m, 2) == 0;
		req.deadline_ms  = sh->now + rnd(m, 60);
		(void) sv_lease_acquire(sh->c, &h, &req, sh->now, &g, &w);
	} else if (op < 45) {
		/* Release by the holder or by someone else. */
		mslot          *ms  = &m->s[pi][rnd(m, m->nslots[pi])];
		sv_lease_holder who = rnd(m, 4) == 0 ? h : ms->holder;
		sv_err          rv;
		if (ms->live) {
			rv = sv_lease_release(sh->c, &who, ms->id, sh->now);
			assert_int_equal(rv,
			    sv_lease_holder_eq(&who, &ms->holder) ? SV_OK
			                                          : SV_EPERM);
		}
	} else if (op < 60) {
		mslot *ms = &m->s[pi][rnd(m, m->nslots[pi])];
		if (ms->live) {
			sv_err rv = sv_lease_renew(
			    sh->c, &ms->holder, ms->id, sh->now, &g);
			assert_true(rv == SV_OK || rv == SV_ECONFLICT);
		}
	} else if (op < 67) {
		sv_lease_holder_gone(sh->c, h.worker, sh->now);
		m->gen[k]++; /* its successor is another holder */
	} else if (op < 74) {
		sv_lease_holder_disconnected(sh->c, &h, sh->now);
	} else if (op < 81) {
		sv_lease_holder_reconnected(sh->c, &h, sh->now);
	} else if (op < 88) {
		/* Re-claim: right or wrong token, right or wrong holder. */
		uint32_t s  = rnd(m, m->nslots[pi]);
		mslot   *ms = &m->s[pi][s];
		if (ms->live) {
			sv_lease_holder who = rnd(m, 3) == 0 ? h : ms->holder;
			uint64_t tok = ms->token - (rnd(m, 4) == 0 ? 1 : 0);
			sv_err   rv  = sv_lease_claim(
			       sh->c, &who, pi + 1, s, tok, sh->now, &g);
			assert_int_equal(rv,
			    sv_lease_holder_eq(&who, &ms->holder)
			            && tok == ms->token
			        ? SV_OK
			        : SV_ECONFLICT);
		}
	} else if (op < 99) {
		sh_drain(sh);
		sh_advance(sh, sh->now + rnd(m, 30));
	} else {
		sh_drain(sh);
		m_check_log(m);
		m_restart(m);
	}
	sh_drain(sh);
	m_check_log(m);
	m_check_core(m);
}

static void
test_model(void **state)
{
	size_t steps = 0, revoked = 0, grants = 0, replies = 0;

	(void) state;
	for (uint64_t seed = 1; seed <= 40; seed++) {
		model *m = calloc(1, sizeof(*m));
		assert_non_null(m);
		m->rng    = seed;
		m->epoch  = 1;
		m->npools = 1 + (uint32_t) (seed % M_POOLS);
		for (uint32_t p = 0; p < m->npools; p++) {
			m->nslots[p] = 1 + rnd(m, M_SLOTS);
			m->ttl[p]    = rnd(m, 2) ? 0 : 20 + rnd(m, 40);
			m->grace[p]  = rnd(m, 3) == 0 ? 0 : 5 + rnd(m, 30);
			m->res[p]    = rnd(m, 2);
		}
		sh_init(&m->sh, m->epoch);
		m_add_pools(m);
		for (int i = 0; i < 250; i++) {
			m_step(m);
			steps++;
		}
		revoked += m->revoked;
		grants += m->grants;
		replies += m->replies_ok;
		sh_fini(&m->sh);
		free(m);
	}
	/* The run must have exercised what it checks (the number of steps is
	 * fixed by the loops above, so it is not asserted). */
	assert_true(revoked > 100);
	assert_true(grants > 500);
	assert_true(replies > 50);
	print_message("model: %zu steps, %zu grants, %zu revocations, %zu "
	              "waiter grants\n",
	    steps, grants, revoked, replies);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exhausted),
	    cmocka_unit_test(test_wait_fifo_and_deadline),
	    cmocka_unit_test(test_wait_specific_slot_does_not_block),
	    cmocka_unit_test(test_holder_gone_gives_slot_to_waiter),
	    cmocka_unit_test(test_waiter_dropped_when_holder_gone),
	    cmocka_unit_test(test_ttl_and_renew),
	    cmocka_unit_test(test_disconnect_grace),
	    cmocka_unit_test(test_non_holder_refused),
	    cmocka_unit_test(test_idempotent),
	    cmocka_unit_test(test_generations_never_share),
	    cmocka_unit_test(test_resource_effects),
	    cmocka_unit_test(test_sessions),
	    cmocka_unit_test(test_restart_reclaim),
	    cmocka_unit_test(test_bounds),
	    cmocka_unit_test(test_many_leases),
	    cmocka_unit_test(test_holder_kinds),
	    cmocka_unit_test(test_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
