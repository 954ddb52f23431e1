/*
 * leases_timers.c — the lease core's timers as loop timers: one sv_timer
 * per (kind, key) in a small chained hash, re-armed in place, carrying the
 * guard the core gave; a fired timer goes back to the core
 * (sv_lease_timer) and its effects are carried out.
 */
#include <stdlib.h>

#include "leases_internal.h"
#include "log.h"
#include "shell/loop.h"

/* ls_timer_bucket hashes (kind, key). */
static size_t
ls_timer_bucket(sv_lease_timer_kind kind, uint64_t key)
{
	uint64_t x = key * 0x9e3779b97f4a7c15ull + (uint64_t) kind;
	return (size_t) (x >> 40) % LS_TIMER_BUCKETS;
}

/* ls_timer_find returns the timer (kind, key), or NULL. */
static ls_timer *
ls_timer_find(svd_leases *l, sv_lease_timer_kind kind, uint64_t key)
{
	for (ls_timer *t = l->timers[ls_timer_bucket(kind, key)]; t != NULL;
	     t           = t->next) {
		if (t->kind == kind && t->key == key) {
			return t;
		}
	}
	return NULL;
}

/* ls_timer_cb hands a fired timer to the core. */
static void
ls_timer_cb(sv_loop *loop, sv_timer *st)
{
	ls_timer   *t = st->arg;
	svd_leases *l = t->l;

	(void) loop;
	LS_CORE_RETRY("a timer",
	    sv_lease_timer(
	        l->core, t->kind, t->key, t->guard, sv_loop_now_ms()));
	ls_effects(l);
}

/* ls_timer_cancel removes timer (kind, key) if there is one. */
void
ls_timer_cancel(svd_leases *l, sv_lease_timer_kind kind, uint64_t key)
{
	ls_timer **pp = &l->timers[ls_timer_bucket(kind, key)];

	for (; *pp != NULL; pp = &(*pp)->next) {
		ls_timer *t = *pp;
		if (t->kind == kind && t->key == key) {
			sv_loop_timer_stop(l->loop, &t->t);
			*pp = t->next;
			free(t);
			return;
		}
	}
}

/* ls_timer_arm arms (or re-arms) timer (kind, key) at due_ms. */
void
ls_timer_arm(svd_leases *l, const sv_lease_fx *fx)
{
	ls_timer *t   = ls_timer_find(l, fx->timer, fx->key);
	uint64_t  now = sv_loop_now_ms();

	if (t == NULL) {
		size_t b = ls_timer_bucket(fx->timer, fx->key);
		if ((t = calloc(1, sizeof(*t))) == NULL) {
			svd_log("leases: cannot arm a timer: out of memory; "
			        "firing it now");
			LS_CORE_RETRY("a timer",
			    sv_lease_timer(
			        l->core, fx->timer, fx->key, fx->guard, now));
			return;
		}
		sv_timer_init(&t->t, ls_timer_cb, t);
		t->l         = l;
		t->kind      = fx->timer;
		t->key       = fx->key;
		t->next      = l->timers[b];
		l->timers[b] = t;
	}
	sv_loop_timer_stop(l->loop, &t->t);
	t->guard = fx->guard;
	if (sv_loop_timer_start(
	        l->loop, &t->t, fx->due_ms > now ? fx->due_ms - now : 0)
	    != SV_OK) {
		svd_log("leases: cannot arm a timer; firing it now");
		LS_CORE_RETRY("a timer",
		    sv_lease_timer(
		        l->core, fx->timer, fx->key, fx->guard, now));
	}
}
