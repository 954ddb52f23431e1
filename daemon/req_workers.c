/*
 * req_workers.c — the worker requests: ListWorkers, GetStatus, ScaleGroup,
 * StopGroup, RestartWorker, StartWorker, TerminateWorker, and how a seat is
 * shown to clients.
 */
#include "sup_internal.h"

Supervise__V1__WorkerState
worker_state(sv_seat_state st)
{
	switch (st) {
	case SV_SEAT_RUNNING:
		return SUPERVISE__V1__WORKER_STATE__WORKER_STATE_RUNNING;
	case SV_SEAT_STOPPING:
		return SUPERVISE__V1__WORKER_STATE__WORKER_STATE_STOPPING;
	case SV_SEAT_BACKOFF:
		return SUPERVISE__V1__WORKER_STATE__WORKER_STATE_BACKOFF;
	case SV_SEAT_STARTING:
		return SUPERVISE__V1__WORKER_STATE__WORKER_STATE_STARTING;
	case SV_SEAT_FAILED:
		return SUPERVISE__V1__WORKER_STATE__WORKER_STATE_FAILED;
	case SV_SEAT_WAITING:
		return SUPERVISE__V1__WORKER_STATE__WORKER_STATE_WAITING;
	case SV_SEAT_IDLE:
		return SUPERVISE__V1__WORKER_STATE__WORKER_STATE_IDLE;
	case SV_SEAT_DRAINING:
		return SUPERVISE__V1__WORKER_STATE__WORKER_STATE_DRAINING;
	default:
		return SUPERVISE__V1__WORKER_STATE__WORKER_STATE_UNSPECIFIED;
	}
}

/* proc_activity fills a WorkerStatus's activity fields from p's region
 * (activity.h: read at most every 100 ms; nothing when idle). */
static void
proc_activity(
    svd_sup *s, svd_proc *p, Supervise__V1__WorkerStatus *w, uint64_t now)
{
	const char *name;

	svd_activity_get(
	    s->act, p->act, now, &w->activities, &name, &w->activity_age_ms);
	w->activity = (char *) name;
}

/* seat_status fills a WorkerStatus from a seat's view (core/seat_view.c). */
static void
seat_status(svd_sup *s, const sv_cgroup *g, const sv_seat_view *v,
    Supervise__V1__WorkerStatus *w, uint64_t now)
{
	svd_gsh *gsh = gsh_find(s, g->id);

	supervise__v1__worker_status__init(w);
	w->group          = g->name;
	w->ordinal        = v->ordinal;
	w->generation     = v->generation;
	w->pid            = v->current.pid;
	w->purpose        = gsh != NULL ? gsh->cfg->purpose : "";
	w->restarts       = v->restarts;
	w->last_exit_code = v->last_exit_code;
	w->last_signal    = v->last_signal;
	if (v->current.live) {
		sv_wkey   key = {g->id, v->ordinal, v->current.generation};
		svd_proc *p   = proc_find(s, key);
		if (p != NULL) {
			w->status_text = (char *) proc_status(p);
			proc_activity(s, p, w, now);
		}
	}
	w->state         = worker_state(v->state);
	w->ready         = v->current.ready;
	w->fast_failures = v->fast_failures;
	if (v->current.pid > 0) {
		w->uptime_ms = now - v->current.started_ms;
	}
	if (v->state == SV_SEAT_BACKOFF && v->restart_due_ms > now) {
		w->restart_in_ms = v->restart_due_ms - now;
	}
	if (v->current.draining) {
		w->draining             = true;
		w->drain_deadline_in_ms = v->current.drain_due_ms > now
		    ? v->current.drain_due_ms - now
		    : 0;
	}
}

/* old_status fills a WorkerStatus for a seat's old process: same ordinal,
 * older generation (protocol.md, "Ordinals can overlap"). */
static void
old_status(svd_sup *s, const sv_cgroup *g, const sv_seat_view *v,
    Supervise__V1__WorkerStatus *w, uint64_t now)
{
	const sv_proc_view *p   = &v->previous;
	svd_gsh            *gsh = gsh_find(s, g->id);

	supervise__v1__worker_status__init(w);
	w->group          = g->name;
	w->ordinal        = v->ordinal;
	w->generation     = p->generation;
	w->pid            = p->pid;
	w->purpose        = gsh != NULL ? gsh->cfg->purpose : "";
	w->restarts       = v->restarts;
	w->last_exit_code = -1;
	w->state          = worker_state(p->state);
	w->ready          = p->ready;
	w->uptime_ms      = now - p->started_ms;
	{
		sv_wkey   key = {g->id, v->ordinal, p->generation};
		svd_proc *op  = proc_find(s, key);
		if (op != NULL) {
			proc_activity(s, op, w, now);
		}
	}
	if (p->draining) {
		w->draining = true;
		w->drain_deadline_in_ms
		    = p->drain_due_ms > now ? p->drain_due_ms - now : 0;
	}
}

/* seat_listed tells whether a seat appears in ListWorkers. */
static bool
seat_listed(const sv_core *core, const sv_cgroup *g, uint32_t ordinal)
{
	sv_seat_view v;

	sv_seat_view_of(core, g, ordinal, &v);
	return v.current.listed;
}

/* req_list answers ListWorkers, one page at a time when asked: the page
 * token is "GROUP_ID:ORDINAL" of the first seat of the next page. */
sv_err
req_list(req_ctx *c)
{
	Supervise__V1__WorkerList        *wl   = &c->out.wl;
	const Supervise__V1__ListWorkers *lw   = c->req->list_workers;
	const sv_cgroup                  *only = NULL;
	size_t                            n = 0, k = 0, gi0 = 0;
	uint32_t                          o0 = 0, tok_gid = 0;
	size_t                            page = lw->page_size;
	Supervise__V1__WorkerStatus      *items;
	Supervise__V1__WorkerStatus     **ptrs;
	uint64_t                          now  = sv_loop_now_ms();
	sv_core                          *core = c->s->core;
	sv_err                            err;

	if (lw->group[0] != '\0'
	    && (err = req_group(c, lw->group, &only)) != SV_OK) {
		return err;
	}
	if (page == 0 || page > SUP_MAX_PAGE) {
		page = lw->page_size == 0 ? SIZE_MAX : SUP_MAX_PAGE;
	}
	if (lw->page_token[0] != '\0') {
		char tail;
		if (sscanf(lw->page_token, "%" SCNu32 ":%" SCNu32 "%c",
		        &tok_gid, &o0, &tail)
		        != 2
		    || sv_core_group(core, tok_gid) == NULL) {
			return req_err(
			    c, SV_EBADREQ, "page_token is not valid");
		}
		while (sv_core_group_at(core, gi0)->id != tok_gid) {
			gi0++;
		}
	}
	for (size_t i = gi0; i < sv_core_ngroups(core); i++) {
		const sv_cgroup *g = sv_core_group_at(core, i);
		if (only == NULL || only == g) {
			for (uint32_t o = i == gi0 ? o0 : 0; o < g->nseats;
			     o++) {
				sv_seat_view v;
				sv_seat_view_of(c->s->core, g, o, &v);
				n += v.current.listed || v.previous.listed;
				n += v.current.listed && v.previous.listed;
			}
		}
	}
	n           = n < page ? n : page;
	items       = calloc(n + 1, sizeof(*items));
	ptrs        = calloc(n + 1, sizeof(Supervise__V1__WorkerStatus *));
	c->arena[0] = items;
	c->arena[1] = ptrs;
	if (items == NULL || ptrs == NULL) {
		return req_err(c, SV_EINTERNAL, "out of memory");
	}
	for (size_t i = gi0; i < sv_core_ngroups(core); i++) {
		const sv_cgroup *g = sv_core_group_at(core, i);
		if (only != NULL && only != g) {
			continue;
		}
		for (uint32_t o = i == gi0 ? o0 : 0; o < g->nseats; o++) {
			sv_seat_view v;
			sv_seat_view_of(c->s->core, g, o, &v);
			if (!v.current.listed && !v.previous.listed) {
				continue;
			}
			/* (a seat's two processes stay on one page: k may
			 * pass n by one, which the arrays have room for) */
			if (k >= n) {
				snprintf(c->token, sizeof(c->token),
				    "%" PRIu32 ":%" PRIu32, g->id, o);
				wl->next_page_token = c->token;
				goto done;
			}
			if (v.current.listed) {
				seat_status(c->s, g, &v, &items[k], now);
				ptrs[k] = &items[k];
				k++;
			}
			if (v.previous.listed) {
				old_status(c->s, g, &v, &items[k], now);
				ptrs[k] = &items[k];
				k++;
			}
		}
	}
done:
	wl->n_workers      = k;
	wl->workers        = ptrs;
	c->rep.body_case   = SUPERVISE__V1__ENVELOPE__BODY_WORKER_LIST;
	c->rep.worker_list = wl;
	return SV_OK;
}

/* req_seat finds the listed seat (group, ordinal). */
static sv_err
req_seat(req_ctx *c, const char *name, uint32_t ordinal, const sv_cgroup **gp,
    const sv_seat **sp)
{
	sv_err err = req_group(c, name, gp);

	if (err != SV_OK || *gp == NULL) {
		return err != SV_OK ? err : SV_EINTERNAL;
	}
	if (ordinal >= (*gp)->nseats
	    || !seat_listed(c->s->core, *gp, ordinal)) {
		return req_err(c, SV_ENOTFOUND,
		    "%s has no worker at ordinal %" PRIu32, name, ordinal);
	}
	*sp = &(*gp)->seats[ordinal];
	return SV_OK;
}

/* req_reply_status makes the reply a WorkerStatus of a seat. */
static sv_err
req_reply_status(req_ctx *c, const sv_cgroup *g, uint32_t ordinal,
    Supervise__V1__WorkerStatus *w)
{
	sv_seat_view v;

	sv_seat_view_of(c->s->core, g, ordinal, &v);
	seat_status(c->s, g, &v, w, sv_loop_now_ms());
	c->rep.body_case     = SUPERVISE__V1__ENVELOPE__BODY_WORKER_STATUS;
	c->rep.worker_status = w;
	return SV_OK;
}

/* req_status answers GetStatus. */
sv_err
req_status(req_ctx *c)
{
	const Supervise__V1__GetStatus *gs = c->req->get_status;
	Supervise__V1__WorkerStatus    *w  = &c->out.ws;
	const sv_cgroup                *g  = NULL;
	const sv_seat                  *s  = NULL;
	sv_err err = req_seat(c, gs->group, gs->ordinal, &g, &s);

	if (err != SV_OK || g == NULL || s == NULL) {
		return err != SV_OK ? err : SV_EINTERNAL;
	}
	return req_reply_status(c, g, s->ordinal, w);
}

/* req_resize sets a group's number of workers (admin: checked by the
 * dispatch). */
static sv_err
req_resize(req_ctx *c, const char *name, uint32_t count)
{
	Supervise__V1__GroupChange *gc   = &c->out.gc;
	const sv_cgroup            *g    = NULL;
	uint32_t                    prev = 0;
	sv_err                      err;

	if ((err = req_group(c, name, &g)) != SV_OK || g == NULL) {
		return err != SV_OK ? err : SV_EINTERNAL;
	}
	if (count > g->max_count) {
		return req_err(c, SV_EEXHAUSTED,
		    "%s: %u is above max_count %u", name, count, g->max_count);
	}
	if ((err = req_room(c, name, g, count)) != SV_OK) {
		return err;
	}
	err = sv_core_scale(c->s->core, g->id, count, &prev, sv_loop_now_ms());
	if (err != SV_OK) {
		return req_core_err(c, err, g, 0);
	}
	sup_drain_effects(c->s);
	gc->group           = g->name;
	gc->previous_count  = prev;
	gc->count           = count;
	c->rep.body_case    = SUPERVISE__V1__ENVELOPE__BODY_GROUP_CHANGE;
	c->rep.group_change = gc;
	return SV_OK;
}

/* req_scale answers ScaleGroup: the group's target size. */
sv_err
req_scale(req_ctx *c)
{
	return req_resize(
	    c, c->req->scale_group->group, c->req->scale_group->count);
}

/* req_stop answers StopGroup: target size 0. */
sv_err
req_stop(req_ctx *c)
{
	return req_resize(c, c->req->stop_group->group, 0);
}

/* req_restart restarts one worker: a live one stops and comes back with
 * the same ordinal and the next generation; one waiting in backoff starts
 * now, and the reply shows the new process. */
sv_err
req_restart(req_ctx *c)
{
	Supervise__V1__WorkerStatus        *w = &c->out.ws;
	const Supervise__V1__RestartWorker *r = c->req->restart_worker;
	const sv_cgroup                    *g = NULL;
	const sv_seat                      *s = NULL;
	sv_err                              err;

	if ((err = req_seat(c, r->group, r->ordinal, &g, &s)) != SV_OK
	    || g == NULL || s == NULL) {
		return err != SV_OK ? err : SV_EINTERNAL;
	}
	err = sv_core_restart(c->s->core, g->id, r->ordinal,
	    r->check_generation, r->expected_generation, sv_loop_now_ms());
	if (err == SV_ENOTFOUND) {
		return req_err(c, err, "%s[%" PRIu32 "] is being scaled away",
		    r->group, r->ordinal);
	}
	if (err != SV_OK) {
		return req_core_err(c, err, g, r->ordinal);
	}
	sup_run_effects(c->s);
	return req_reply_status(c, g, r->ordinal, w);
}

/* req_start_worker holds one more ordinal and starts a worker on it. */
sv_err
req_start_worker(req_ctx *c)
{
	Supervise__V1__WorkerStatus *w       = &c->out.ws;
	const sv_cgroup             *g       = NULL;
	uint32_t                     ordinal = 0;
	sv_err                       err;

	if ((err = req_group(c, c->req->start_worker->group, &g)) != SV_OK
	    || g == NULL) {
		return err != SV_OK ? err : SV_EINTERNAL;
	}
	if ((err = req_room(c, g->name, g, sv_core_group_count(g) + 1))
	    != SV_OK) {
		return err;
	}
	err = sv_core_start_one(c->s->core, g->id, &ordinal, sv_loop_now_ms());
	if (err != SV_OK) {
		return req_core_err(c, err, g, ordinal);
	}
	sup_run_effects(c->s);
	return req_reply_status(c, g, ordinal, w);
}

/* req_terminate_worker stops one worker and releases its ordinal. */
sv_err
req_terminate_worker(req_ctx *c)
{
	const Supervise__V1__TerminateWorker *t = c->req->terminate_worker;
	Supervise__V1__WorkerStatus          *w = &c->out.ws;
	const sv_cgroup                      *g = NULL;
	sv_err                                err;

	if ((err = req_group(c, t->group, &g)) != SV_OK || g == NULL) {
		return err != SV_OK ? err : SV_EINTERNAL;
	}
	err = sv_core_terminate_one(
	    c->s->core, g->id, t->ordinal, sv_loop_now_ms());
	if (err != SV_OK) {
		return req_core_err(c, err, g, t->ordinal);
	}
	sup_drain_effects(c->s);
	return req_reply_status(c, g, t->ordinal, w);
}

/* group_info fills a GroupInfo. */
