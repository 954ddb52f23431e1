/*
 * req_drain.c — the drain requests: DrainWorkers, GetDrain,
 * RollingRestart, DrainExtend and DrainAck (core/drain.h, drain.h).
 */
#include "sup_internal.h"

/* ---- drain and rolling restart (core/drain.h, drain.h) --------------------
 */

/* req_drain_reply makes the reply the report of drain id. */
static sv_err
req_drain_reply(req_ctx *c, req_drain_rep *r, uint64_t id)
{
	const sv_drain *d = sv_core_drain_report(c->s->core, id);

	if (d == NULL) {
		return req_err(c, SV_ENOTFOUND,
		    "no drain %" PRIu64 " (the last %d are kept)", id,
		    SV_DRAINS_KEEP);
	}
	if (svd_drain_report(d, &r->dr, &c->arena[0], &c->arena[1]) != SV_OK) {
		return req_err(c, SV_EINTERNAL, "out of memory");
	}
	c->rep.body_case    = SUPERVISE__V1__ENVELOPE__BODY_DRAIN_REPORT;
	c->rep.drain_report = &r->dr;
	return SV_OK;
}

/* req_drain_workers answers DrainWorkers (admin). */
static sv_err
req_drain_workers(req_ctx *c, req_drain_rep *r)
{
	const Supervise__V1__DrainWorkers *dw = c->req->drain_workers;
	const sv_cgroup                   *g  = NULL;
	sv_drain_scope                     scope;
	uint64_t                           id = 0;
	sv_err                             err;

	if ((err = req_admin(c)) != SV_OK) {
		return err;
	}
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
		return g != NULL
		    ? req_core_err(c, err, g, dw->ordinal)
		    : req_err(c, err, "supervisor is shutting down");
	}
	sup_drain_effects(c->s);
	return req_drain_reply(c, r, id);
}

/* req_rolling_restart answers RollingRestart (admin). */
static sv_err
req_rolling_restart(req_ctx *c, req_drain_rep *r)
{
	const Supervise__V1__RollingRestart *rr = c->req->rolling_restart;
	const sv_cgroup                     *g  = NULL;
	uint64_t                             id = 0;
	sv_err                               err;

	if ((err = req_admin(c)) != SV_OK
	    || (err = req_group(c, rr->group, &g)) != SV_OK || g == NULL) {
		return err != SV_OK ? err : SV_EINTERNAL;
	}
	if (rr->ready_timeout_ms > SVD_MAX_TIMEOUT_MS) {
		return req_err(c, SV_ETOOLARGE,
		    "ready_timeout_ms above %" PRIu64,
		    (uint64_t) SVD_MAX_TIMEOUT_MS);
	}
	err = sv_core_roll(
	    c->s->core, g->id, rr->ready_timeout_ms, sv_loop_now_ms(), &id);
	if (err == SV_EBUSY && g->roll.active) {
		return req_err(
		    c, err, "%s: a rolling restart is in progress", g->name);
	}
	if (err != SV_OK) {
		return req_core_err(c, err, g, 0);
	}
	sup_run_effects(c->s);
	return req_drain_reply(c, r, id);
}

/* req_drain_worker answers DrainExtend and DrainAck: only the draining
 * worker process itself. */
static sv_err
req_drain_worker(req_ctx *c, req_drain_rep *r, bool ack)
{
	const sv_cgroup    *g = NULL;
	sv_seat_view        sv;
	const sv_seat_view *s = &sv;
	const sv_proc_view *p = NULL;
	sv_wkey             key;
	sv_err              err;

	if ((err = req_caller(c, &g, &sv, &p)) != SV_OK || g == NULL
	    || s == NULL || p == NULL) {
		return err != SV_OK ? err : SV_EINTERNAL;
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
	if (err != SV_OK) {
		return req_err(c, err, "%s[%" PRIu32 "] is not draining",
		    g->name, s->ordinal);
	}
	sup_drain_effects(c->s);
	c->rep.body_case = SUPERVISE__V1__ENVELOPE__BODY_ACK;
	c->rep.ack       = &r->ack;
	return SV_OK;
}

bool
req_drain(req_ctx *c, sv_err *errp)
{
	req_drain_rep *r;

	switch (c->req->body_case) {
	case SUPERVISE__V1__ENVELOPE__BODY_DRAIN_WORKERS:
	case SUPERVISE__V1__ENVELOPE__BODY_GET_DRAIN:
	case SUPERVISE__V1__ENVELOPE__BODY_ROLLING_RESTART:
	case SUPERVISE__V1__ENVELOPE__BODY_DRAIN_EXTEND:
	case SUPERVISE__V1__ENVELOPE__BODY_DRAIN_ACK:
		break;
	default:
		return false;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		*errp = req_err(c, SV_EINTERNAL, "out of memory");
		return true;
	}
	c->arena[2] = r;
	supervise__v1__ack__init(&r->ack);
	switch (c->req->body_case) {
	case SUPERVISE__V1__ENVELOPE__BODY_DRAIN_WORKERS:
		*errp = req_drain_workers(c, r);
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_GET_DRAIN:
		*errp = req_admin(c);
		if (*errp == SV_OK) {
			*errp = req_drain_reply(c, r, c->req->get_drain->id);
		}
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_ROLLING_RESTART:
		*errp = req_rolling_restart(c, r);
		break;
	default:
		*errp = req_drain_worker(c, r,
		    c->req->body_case
		        == SUPERVISE__V1__ENVELOPE__BODY_DRAIN_ACK);
		break;
	}
	return true;
}

/* req_handle routes a decoded request to its handler and encodes the
 * answer. */
