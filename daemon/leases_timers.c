/*
 * leases_timers.c — the lease core's timers as loop timers: one sv_timer
 * per (kind, key), found through one id map per kind (idmap.h), re-armed
 * in place, carrying the guard the core gave; a fired timer goes back to
 * the core (sv_lease_timer) and its effects are carried out.
 */
#include <stdlib.h>

#include "leases_internal.h"
#include "log.h"
#include "shell/loop.h"

_Static_assert(SV_LTIMER_SLOT == 1 && SV_LTIMER_SESSION == LS_TIMER_KINDS,
    "one id map per timer kind, kinds 1 .. LS_TIMER_KINDS");

/* ls_timer_known tells whether kind is one the shell keeps timers of. */
static bool
ls_timer_known(sv_lease_timer_kind kind)
{
	return (unsigned) kind >= 1 && (unsigned) kind <= LS_TIMER_KINDS;
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
	ls_timer *t;

	if (!ls_timer_known(kind)) {
		return;
	}
	if ((t = sv_idmap_del(&l->timers[kind - 1], key)) != NULL) {
		sv_loop_timer_stop(l->loop, &t->t);
		free(t);
	}
}

/* ls_timer_arm arms (or re-arms) timer (kind, key) at due_ms. A timer that
 * cannot be kept (no memory, an unknown kind) fires now instead, logged. */
void
ls_timer_arm(svd_leases *l, const sv_lease_fx *fx)
{
	uint64_t  now = sv_loop_now_ms();
	sv_idmap *m;
	ls_timer *t;

	if (!ls_timer_known(fx->timer)) {
		svd_log("leases: timer of unknown kind %d; firing it now",
		    (int) fx->timer);
		sv_lease_timer(l->core, fx->timer, fx->key, fx->guard, now);
		return;
	}
	m = &l->timers[fx->timer - 1];
	if ((t = sv_idmap_get(m, fx->key)) == NULL) {
		if ((t = calloc(1, sizeof(*t))) == NULL
		    || sv_idmap_put(m, fx->key, t) != SV_OK) {
			free(t);
			svd_log("leases: cannot arm a timer: out of memory; "
			        "firing it now");
			LS_CORE_RETRY("a timer",
			    sv_lease_timer(
			        l->core, fx->timer, fx->key, fx->guard, now));
			return;
		}
		sv_timer_init(&t->t, ls_timer_cb, t);
		t->l    = l;
		t->kind = fx->timer;
		t->key  = fx->key;
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

/* ls_timers_destroy stops and frees every timer, and the maps
 * (svd_leases_destroy calls it). */
void
ls_timers_destroy(svd_leases *l)
{
	for (size_t k = 0; k < LS_TIMER_KINDS; k++) {
		size_t cur = 0;
		void  *v;
		while (sv_idmap_next(&l->timers[k], &cur, NULL, &v)) {
			ls_timer *t = v;
			if (l->loop != NULL) {
				sv_loop_timer_stop(l->loop, &t->t);
			}
			free(t);
		}
		sv_idmap_fini(&l->timers[k]);
	}
}
