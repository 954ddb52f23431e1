/*
 * req_drain.c — the drain requests: DrainWorkers, GetDrain,
 * RollingRestart, DrainExtend and DrainAck (core/drain.h, drain.h).
 */
#include "sup_internal.h"

/* ---- drain and rolling restart (core/drain.h, drain.h) --------------------
 */

/* req_drain_reply makes the reply the report of drain id. */
static sv_err
req_drain_reply(req_ctx *c, uint64_t id)
{
	Supervise__V1__DrainReport *dr = &c->out.dr;
	const sv_drain             *d  = sv_core_drain_report(c->s->core, id);

	if (d == NULL) {
		return req_err(c, SV_ENOTFOUND,
		    "no drain %" PRIu64 " (the last %d are kept)", id,
		    SV_DRAINS_KEEP);
	}
	if (svd_drain_report(d, dr, &c->arena[0], &c->arena[1]) != SV_OK) {
		return req_err(c, SV_EINTERNAL, "out of memory");
	}
	c->rep.body_case    = SUPERVISE__V1__ENVELOPE__BODY_DRAIN_REPORT;
	c->rep.drain_report = dr;
	return SV_OK;
}

/* req_drain_workers answers DrainWorkers (admin). */
sv_err
req_drain_workers(req_ctx *c)
{
	const Supervise__V1__DrainWorkers *dw = c->req->drain_workers;
	const sv_cgroup                   *g  = NULL;
	sv_drain_scope                     scope;
	uint64_t                           id = 0;
	sv_err                             err;

	if (dw->deadline_ms > SVD_MAX_TIMEOUT_MS) {
		return req_err(c, SV_ETOOLARGE, "deadline_ms above %" PRIu64,
		    (uint64_t) SVD_MAX_TIMEOUT_MS);
	}
	if (dw->all) {
		if (dw->group[0] != '\0' || dw->has_ordinal) {
			return req_err(
			    c, SV_EBADREQ, "all excludes group and ordinal");
		}
		scope = SV_DRAIN_ALL;
	} else {
		if (dw->group[0] == '\0') {
			return req_err(c, SV_EBADREQ,
			    "name a group (and an ordinal), or set all");
		}
		if ((err = req_group(c, dw->group, &g)) != SV_OK) {
			return err;
		}
		scope = dw->has_ordinal ? SV_DRAIN_WORKER : SV_DRAIN_GROUP;
	}
	err = sv_core_drain(c->s->core, scope, g != NULL ? g->id : 0,
	    dw->ordinal, dw->deadline_ms, sv_loop_now_ms(), &id);
	if (err == SV_ENOTFOUND && g != NULL) {
		return req_err(c, err,
		    "%s has no live worker at ordinal %" PRIu32, g->name,
		    dw->ordinal);
	}
	if (err == SV_EEXHAUSTED) {
		return req_err(
		    c, err, "%d drains are unfinished", SV_DRAINS_KEEP);
	}
	if (err != SV_OK) {
		return g != NULL ? req_core_err(c, err, g, dw->ordinal)
		    : err == SV_ENOMEM
		    ? req_err(c, err,
		        "the supervisor is out of memory; nothing was "
		        "changed, try again later")
		    : req_err(c, err, "supervisor is shutting down");
	}
	sup_drain_effects(c->s);
	return req_drain_reply(c, id);
}

/* req_get_drain answers GetDrain (admin): the report of one drain. */
sv_err
req_get_drain(req_ctx *c)
{
	return req_drain_reply(c, c->req->get_drain->id);
}

/* req_rolling_restart answers RollingRestart (admin). */
sv_err
req_rolling_restart(req_ctx *c)
{
	const Supervise__V1__RollingRestart *rr = c->req->rolling_restart;
	const sv_cgroup                     *g  = NULL;
	uint64_t                             id = 0;
	sv_err                               err;

	if ((err = req_group(c, rr->group, &g)) != SV_OK || g == NULL) {
		return err != SV_OK ? err : SV_EINTERNAL;
	}
	if (rr->ready_timeout_ms > SVD_MAX_TIMEOUT_MS) {
		return req_err(c, SV_ETOOLARGE,
		    "ready_timeout_ms above %" PRIu64,
		    (uint64_t) SVD_MAX_TIMEOUT_MS);
	}
	if (rr->has_budgets && rr->max_surge == 0
	    && rr->max_unavailable == 0) {
		return req_err(c, SV_EBADREQ,
		    "max_surge and max_unavailable are both 0: the roll could "
		    "never replace a worker");
	}
	err = sv_core_roll_budget(c->s->core, g->id, rr->ready_timeout_ms,
	    rr->has_budgets ? rr->max_surge : SV_CORE_ROLL_MAX_SURGE,
	    rr->has_budgets ? rr->max_unavailable
	                    : SV_CORE_ROLL_MAX_UNAVAILABLE,
	    sv_loop_now_ms(), &id);
	if (err == SV_EBUSY && g->roll.active) {
		return req_err(
		    c, err, "%s: a rolling restart is in progress", g->name);
	}
	if (err != SV_OK) {
		return req_core_err(c, err, g, 0);
	}
	sup_run_effects(c->s);
	return req_drain_reply(c, id);
}

/* req_drain_worker answers DrainExtend and DrainAck: only the draining
 * worker process itself. */
static sv_err
req_drain_worker(req_ctx *c, bool ack)
{
	const sv_cgroup    *g = NULL;
	sv_seat_view        sv;
	const sv_seat_view *s = &sv;
	const sv_proc_view *p = NULL;
	sv_wkey             key;
	sv_err              err;

	if ((err = req_caller_proc(c, &g, &sv, &p)) != SV_OK) {
		return err;
	}
	if (p->pid != (int64_t) c->pid) {
		return req_err(c, SV_EPERM,
		    "only the worker process itself (pid %" PRId64
		    ") may answer a drain for %s[%" PRIu32 "]",
		    p->pid, g->name, s->ordinal);
	}
	key = (sv_wkey) {g->id, s->ordinal, p->generation};
	err = ack
	    ? sv_core_drain_ack(c->s->core, key, c->req->drain_ack->served)
	    : sv_core_drain_extend(c->s->core, key,
	        c->req->drain_extend->more_ms, sv_loop_now_ms(), NULL);
	if (err == SV_ENOMEM) {
		return req_core_err(c, err, g, s->ordinal);
	}
	if (err != SV_OK) {
		return req_err(c, err, "%s[%" PRIu32 "] is not draining",
		    g->name, s->ordinal);
	}
	return req_ack(c);
}

/* req_drain_extend answers DrainExtend: the draining worker asks for more
 * time. */
sv_err
req_drain_extend(req_ctx *c)
{
	return req_drain_worker(c, false);
}

/* req_drain_ack answers DrainAck: the draining worker is done. */
sv_err
req_drain_ack(req_ctx *c)
{
	return req_drain_worker(c, true);
}
