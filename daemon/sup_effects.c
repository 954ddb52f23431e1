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
		if (p != NULL && p->io.fd >= 0
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
		(void) sv_signal(p->io.fd, fx->signo);
	} else if (fx->signo == SIGKILL) {
		/* Nothing in the group can run again, nor fork: the reap
		 * need not kill the group a second time. */
		p->group_killed = true;
	}
}

/* fx_timer_slot finds where the timer an effect names is held, with the
 * record its callback gets (*ownerp) and that callback (*cbp); NULL when
 * there is none: an unknown process, a seat cancel without a record, or
 * a seat arm whose record cannot be made. The plan timer is not held
 * there (fx_timer). */
static svd_tmr **
fx_timer_slot(svd_sup *s, const sv_fx *fx, void **ownerp, sv_timer_cb *cbp)
{
	svd_gsh  *g;
	svd_proc *p;
	svd_seat *st;

	switch (fx->timer) {
	case SV_TIMER_PLAN:
		return NULL;
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
		*ownerp = st;
		*cbp    = seat_timer_cb;
		return &st->tm;
	case SV_TIMER_PROC:
		if ((p = proc_find(s, fx->key)) == NULL) {
			return NULL;
		}
		*ownerp = p;
		*cbp    = proc_timer_cb;
		return &p->tm;
	}
	return NULL;
}

/* fx_fire_now hands the timer of fx to the core at once, when it cannot
 * be armed for want of memory: the core treats an early timer like a late
 * one, and never would be worse. */
static void
fx_fire_now(svd_sup *s, const sv_fx *fx, uint64_t now)
{
	svd_log("cannot arm a timer: out of memory; firing it now");
	SUP_CORE_RETRY("a timer",
	    sv_core_timer(s->core, fx->timer, fx->key, fx->guard, now));
}

/* fx_plan_timer arms or cancels the plan timer (held by the supervisor). */
static void
fx_plan_timer(svd_sup *s, const sv_fx *fx, uint64_t now)
{
	sv_loop_timer_stop(s->loop, &s->plan_timer);
	s->plan_guard = 0;
	if (fx->kind == SV_FX_CANCEL) {
		return;
	}
	s->plan_guard = fx->guard;
	if (sv_loop_timer_start(s->loop, &s->plan_timer,
	        fx->due_ms > now ? fx->due_ms - now : 0)
	    != SV_OK) {
		fx_fire_now(s, fx, now);
	}
}

/* fx_timer arms or cancels a timer. A seat's or a process's timer is
 * allocated when armed (kept when armed again) and freed when cancelled;
 * the record's callback frees it when it fires. */
static void
fx_timer(svd_sup *s, const sv_fx *fx)
{
	void       *owner = NULL;
	sv_timer_cb cb    = NULL;
	svd_tmr   **tp;
	uint64_t    now = sv_loop_now_ms();

	if (fx->timer == SV_TIMER_PLAN) {
		fx_plan_timer(s, fx, now);
		return;
	}
	if ((tp = fx_timer_slot(s, fx, &owner, &cb)) == NULL) {
		if (fx->kind == SV_FX_TIMER && fx->timer == SV_TIMER_SEAT
		    && gsh_find(s, fx->key.group_id) != NULL) {
			/* No memory for the seat's record: fire it now. */
			fx_fire_now(s, fx, now);
		}
		return;
	}
	if (fx->kind == SV_FX_CANCEL) {
		svd_tmr_drop(s->loop, tp);
		return;
	}
	if (*tp != NULL) {
		sv_loop_timer_stop(s->loop, &(*tp)->t);
	} else if ((*tp = malloc(sizeof(**tp))) != NULL) {
		sv_timer_init(&(*tp)->t, cb, owner);
	} else {
		fx_fire_now(s, fx, now); /* no memory for the timer */
		return;
	}
	(*tp)->guard = fx->guard;
	if (sv_loop_timer_start(
	        s->loop, &(*tp)->t, fx->due_ms > now ? fx->due_ms - now : 0)
	    != SV_OK) {
		/* No memory for the timer heap. */
		svd_tmr_drop(s->loop, tp);
		fx_fire_now(s, fx, now);
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
