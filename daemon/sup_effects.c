/*
 * sup_effects.c — the effect interpreter: finding the shell records of a
 * core group or worker, and carrying out the core's queued effects (signals,
 * timers, events) in order.
 */
#include "sup_internal.h"

svd_gsh *
gsh_find(svd_sup *s, uint32_t id)
{
	for (size_t i = 0; i < s->ngsh; i++) {
		if (s->gsh[i]->id == id) {
			return s->gsh[i];
		}
	}
	return NULL;
}

/* proc_find returns the shell record of a process key, or NULL. */
svd_proc *
proc_find(svd_sup *s, sv_wkey key)
{
	svd_gsh  *g = gsh_find(s, key.group_id);
	svd_seat *st;

	if (g == NULL || (st = seat_get(g, key.ordinal)) == NULL) {
		return NULL;
	}
	for (int i = 0; i < SEAT_PROCS; i++) {
		svd_proc *p = seat_proc(st, i);
		if (p != NULL && p->pidfd >= 0
		    && p->key.generation == key.generation) {
			return p;
		}
	}
	return NULL;
}

/* key_name formats "group[ordinal]" for logs. */
const char *
key_name(svd_sup *s, sv_wkey key, char *buf, size_t len)
{
	svd_gsh *g = gsh_find(s, key.group_id);

	snprintf(buf, len, "%s[%" PRIu32 "]", g != NULL ? g->cfg->name : "?",
	    key.ordinal);
	return buf;
}

/* ---- carrying out effects
 * ---------------------------------------------------
 */

/* fx_signal sends a signal to a process's group (workers lead their own
 * process group), falling back on its pidfd. */
static void
fx_signal(svd_sup *s, const sv_fx *fx)
{
	svd_proc *p = proc_find(s, fx->key);

	if (p == NULL) {
		return; /* already reaped */
	}
	if (!fx->pgroup || sv_signal_group(p->pid, fx->signo) != SV_OK) {
		(void) sv_signal(p->pidfd, fx->signo);
	} else if (fx->signo == SIGKILL) {
		/* Nothing in the group can run again, nor fork: the reap
		 * need not kill the group a second time. */
		p->group_killed = true;
	}
}

/* fx_timer_slot finds the timer (and its guard) an effect names. */
static sv_timer *
fx_timer_slot(svd_sup *s, const sv_fx *fx, uint64_t **guardp)
{
	svd_gsh  *g;
	svd_proc *p;
	svd_seat *st;

	switch (fx->timer) {
	case SV_TIMER_PLAN:
		*guardp = &s->plan_guard;
		return &s->plan_timer;
	case SV_TIMER_SEAT:
		/* A cancel needs no record; an arm makes one (NULL when out
		 * of memory: fx_timer then fires the timer at once). */
		g  = gsh_find(s, fx->key.group_id);
		st = g == NULL                 ? NULL
		    : fx->kind == SV_FX_CANCEL ? seat_get(g, fx->key.ordinal)
		                               : seat_make(g, fx->key.ordinal);
		if (st == NULL) {
			return NULL;
		}
		*guardp = &st->guard;
		return &st->timer;
	case SV_TIMER_PROC:
		if ((p = proc_find(s, fx->key)) == NULL) {
			return NULL;
		}
		*guardp = &p->guard;
		return &p->timer;
	}
	return NULL;
}

/* fx_timer arms or cancels a timer. */
static void
fx_timer(svd_sup *s, const sv_fx *fx)
{
	uint64_t *guard = NULL;
	sv_timer *t     = fx_timer_slot(s, fx, &guard);
	uint64_t  now   = sv_loop_now_ms();

	if (t == NULL) {
		if (fx->kind == SV_FX_TIMER && fx->timer == SV_TIMER_SEAT
		    && gsh_find(s, fx->key.group_id) != NULL) {
			/* No memory for the seat's record: fire it now rather
			 * than never, as below. */
			svd_log("cannot arm a timer: out of memory; firing it "
			        "now");
			SUP_CORE_RETRY("a timer",
			    sv_core_timer(
			        s->core, fx->timer, fx->key, fx->guard, now));
		}
		return;
	}
	sv_loop_timer_stop(s->loop, t);
	*guard = 0;
	if (fx->kind == SV_FX_CANCEL) {
		return;
	}
	*guard = fx->guard;
	if (sv_loop_timer_start(
	        s->loop, t, fx->due_ms > now ? fx->due_ms - now : 0)
	    != SV_OK) {
		/* No memory for the timer heap: fire it now rather than
		 * never; the core treats an early timer like a late one. */
		svd_log("cannot arm a timer: out of memory; firing it now");
		SUP_CORE_RETRY("a timer",
		    sv_core_timer(
		        s->core, fx->timer, fx->key, fx->guard, now));
	}
}

/* sup_drain_effects carries out every effect the core has queued. Request
 * handlers call it; only those whose reply shows a new process also run
 * spawns (sup_run_effects), the loop spawns the rest between requests. */
void
sup_drain_effects(svd_sup *s)
{
	sv_fx fx;

	while (sv_core_pop_effect(s->core, &fx)) {
		switch (fx.kind) {
		case SV_FX_SIGNAL:
			fx_signal(s, &fx);
			break;
		case SV_FX_TIMER:
		case SV_FX_CANCEL:
			fx_timer(s, &fx);
			break;
		case SV_FX_EVENT:
			sup_event(s, &fx.ev);
			sup_event_after(s, &fx.ev);
			break;
		}
	}
}
