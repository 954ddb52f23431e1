/*
 * drain.c — the C client's drain and rolling-restart calls (supervise/
 * client.h, "Drain"; docs/protocol.md, section 12), over client.c's call
 * (client_call.h).
 *
 * A report handle keeps the decoded DrainReport envelope and reads from it,
 * so its strings live as long as the handle. Which requests are sent again
 * after a lost connection is the retry column of the request table
 * (libsupervise/src/requests.def): GetDrain, DrainExtend and DrainAck (the
 * same answer twice); DrainWorkers and RollingRestart are not (a second one
 * would open a second report) and report SV_ECLOSED instead.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "client/client_call.h"
#include "client/transport.h"
#include "supervise/client.h"
#include "wire/wire.h"

struct sv_drain_report {
	svw_env *env;
};

/* dc_report wraps the reply of a call that answers DrainReport. */
static sv_err
dc_report(
    sv_client *client, svw_env *req, int timeout_ms, sv_drain_report **reportp)
{
	void  *r = NULL;
	sv_err err;

	err = svc_call_kept(
	    client, req, timeout_ms, sizeof(sv_drain_report), &r);
	if (err == SV_OK) {
		*reportp = r;
	}
	return err;
}

sv_err
sv_client_drain(sv_client *client, const char *group, int64_t ordinal,
    uint64_t deadline_ms, int timeout_ms, sv_drain_report **reportp)
{
	svw_env                     req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__DrainWorkers d   = SUPERVISE__V1__DRAIN_WORKERS__INIT;
	sv_err                      err;

	if (client == NULL || reportp == NULL || ordinal > UINT32_MAX
	    || (group == NULL && ordinal >= 0)) {
		return SV_EINVAL;
	}
	if (group != NULL
	    && (err = svc_check_group(client, group, 0)) != SV_OK) {
		return err;
	}
	d.group           = group != NULL ? (char *) group : "";
	d.all             = group == NULL;
	d.has_ordinal     = ordinal >= 0;
	d.ordinal         = ordinal >= 0 ? (uint32_t) ordinal : 0;
	d.deadline_ms     = deadline_ms;
	req.body_case     = SUPERVISE__V1__ENVELOPE__BODY_DRAIN_WORKERS;
	req.drain_workers = &d;
	return dc_report(client, &req, timeout_ms, reportp);
}

sv_err
sv_client_drain_report(
    sv_client *client, uint64_t id, int timeout_ms, sv_drain_report **reportp)
{
	svw_env                 req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__GetDrain g   = SUPERVISE__V1__GET_DRAIN__INIT;

	if (client == NULL || reportp == NULL) {
		return SV_EINVAL;
	}
	g.id          = id;
	req.body_case = SUPERVISE__V1__ENVELOPE__BODY_GET_DRAIN;
	req.get_drain = &g;
	return dc_report(client, &req, timeout_ms, reportp);
}

/* dc_roll sends RollingRestart, with its budgets when budgets. */
static sv_err
dc_roll(sv_client *client, const char *group, uint64_t ready_timeout_ms,
    bool budgets, uint32_t max_surge, uint32_t max_unavailable, int timeout_ms,
    sv_drain_report **reportp)
{
	svw_env                       req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__RollingRestart r = SUPERVISE__V1__ROLLING_RESTART__INIT;
	sv_err                        err;

	if (client == NULL || reportp == NULL || group == NULL) {
		return SV_EINVAL;
	}
	if ((err = svc_check_group(client, group, 0)) != SV_OK) {
		return err;
	}
	r.group             = (char *) group;
	r.ready_timeout_ms  = ready_timeout_ms;
	r.has_budgets       = budgets;
	r.max_surge         = max_surge;
	r.max_unavailable   = max_unavailable;
	req.body_case       = SUPERVISE__V1__ENVELOPE__BODY_ROLLING_RESTART;
	req.rolling_restart = &r;
	return dc_report(client, &req, timeout_ms, reportp);
}

sv_err
sv_client_rolling_restart(sv_client *client, const char *group,
    uint64_t ready_timeout_ms, int timeout_ms, sv_drain_report **reportp)
{
	return dc_roll(
	    client, group, ready_timeout_ms, false, 0, 0, timeout_ms, reportp);
}

/* dc_has_feature asks the supervisor (Hello) whether it lists feature f:
 * SV_OK with *hasp, or the Hello's error. */
static sv_err
dc_has_feature(sv_client *client, const char *f, int timeout_ms, bool *hasp)
{
	sv_hello *h = NULL;
	sv_err    err;

	*hasp = false;
	if ((err = sv_client_hello(client, timeout_ms, &h)) != SV_OK) {
		return err;
	}
	for (size_t i = 0; i < sv_hello_feature_count(h); i++) {
		if (strcmp(sv_hello_feature(h, i), f) == 0) {
			*hasp = true;
		}
	}
	sv_hello_free(h);
	return SV_OK;
}

sv_err
sv_client_rolling_restart_budgets(sv_client *client, const char *group,
    uint64_t ready_timeout_ms, uint32_t max_surge, uint32_t max_unavailable,
    int timeout_ms, sv_drain_report **reportp)
{
	int64_t deadline = svt_deadline(timeout_ms);
	int64_t left;
	bool    has = false;
	sv_err  err;

	if (client == NULL || reportp == NULL || group == NULL
	    || (max_surge == 0 && max_unavailable == 0)) {
		return SV_EINVAL;
	}
	/* Discover, do not probe: an older supervisor would ignore the
	 * budgets and roll with its own overlap. */
	if ((err = dc_has_feature(
	         client, "admin.rolling_restart.budgets", timeout_ms, &has))
	    != SV_OK) {
		return err;
	}
	if (!has) {
		return SV_EUNKNOWNMSG;
	}
	left = deadline < 0 ? -1 : deadline - svt_now_ms();
	if (deadline >= 0 && left <= 0) {
		return SV_ETIMEDOUT;
	}
	return dc_roll(client, group, ready_timeout_ms, true, max_surge,
	    max_unavailable, deadline < 0 ? timeout_ms : (int) left, reportp);
}

sv_err
sv_client_drain_extend(sv_client *client, uint64_t more_ms, int timeout_ms)
{
	svw_env                    req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__DrainExtend x   = SUPERVISE__V1__DRAIN_EXTEND__INIT;

	if (client == NULL) {
		return SV_EINVAL;
	}
	x.more_ms        = more_ms;
	req.body_case    = SUPERVISE__V1__ENVELOPE__BODY_DRAIN_EXTEND;
	req.drain_extend = &x;
	return svc_send(client, &req, timeout_ms);
}

sv_err
sv_client_drain_ack(sv_client *client, uint64_t served, int timeout_ms)
{
	svw_env                 req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__DrainAck a   = SUPERVISE__V1__DRAIN_ACK__INIT;

	if (client == NULL) {
		return SV_EINVAL;
	}
	a.served      = served;
	req.body_case = SUPERVISE__V1__ENVELOPE__BODY_DRAIN_ACK;
	req.drain_ack = &a;
	return svc_send(client, &req, timeout_ms);
}

/* dc_body returns the DrainReport of a handle, or NULL. */
static const Supervise__V1__DrainReport *
dc_body(const sv_drain_report *r)
{
	return r != NULL ? r->env->drain_report : NULL;
}

/* dc_row returns row i of a report, or NULL. */
static const Supervise__V1__DrainedWorker *
dc_row(const sv_drain_report *r, size_t i)
{
	const Supervise__V1__DrainReport *d = dc_body(r);

	return d != NULL && i < d->n_workers ? d->workers[i] : NULL;
}

uint64_t
sv_drain_report_id(const sv_drain_report *r)
{
	return dc_body(r) != NULL ? dc_body(r)->id : 0;
}

int
sv_drain_report_done(const sv_drain_report *r)
{
	return dc_body(r) != NULL && dc_body(r)->done;
}

int
sv_drain_report_rolling(const sv_drain_report *r)
{
	return dc_body(r) != NULL && dc_body(r)->rolling;
}

int
sv_drain_report_roll_failed(const sv_drain_report *r)
{
	return dc_body(r) != NULL && dc_body(r)->roll_failed;
}

const char *
sv_drain_report_roll_reason(const sv_drain_report *r)
{
	return dc_body(r) != NULL ? dc_body(r)->roll_reason : "";
}

uint32_t
sv_drain_report_max_surge(const sv_drain_report *r)
{
	return dc_body(r) != NULL ? dc_body(r)->max_surge : 0;
}

uint32_t
sv_drain_report_max_unavailable(const sv_drain_report *r)
{
	return dc_body(r) != NULL ? dc_body(r)->max_unavailable : 0;
}

size_t
sv_drain_report_count(const sv_drain_report *r)
{
	return dc_body(r) != NULL ? dc_body(r)->n_workers : 0;
}

size_t
sv_drain_report_reaped(const sv_drain_report *r)
{
	size_t n = 0;

	for (size_t i = 0; i < sv_drain_report_count(r); i++) {
		n += dc_row(r, i)->reaped ? 1 : 0;
	}
	return n;
}

/* DC_ROW_FIELD defines sv_drain_report_NAME(r, i). */
#define DC_ROW_FIELD(type, name, field, dflt)                           \
	type sv_drain_report_##name(const sv_drain_report *r, size_t i) \
	{                                                               \
		const Supervise__V1__DrainedWorker *w = dc_row(r, i);   \
		return w != NULL ? (type) w->field : (dflt);            \
	}

DC_ROW_FIELD(const char *, group, group, "")
DC_ROW_FIELD(uint32_t, ordinal, ordinal, 0)
DC_ROW_FIELD(uint64_t, generation, generation, 0)
DC_ROW_FIELD(int64_t, pid, pid, 0)
DC_ROW_FIELD(int, is_reaped, reaped, 0)
DC_ROW_FIELD(int, exited, exited, 0)
DC_ROW_FIELD(int32_t, code, code, 0)
DC_ROW_FIELD(int32_t, signal, signal, 0)
DC_ROW_FIELD(int, acknowledged, acknowledged, 0)
DC_ROW_FIELD(int, killed, killed, 0)
DC_ROW_FIELD(uint64_t, time_to_exit_ms, time_to_exit_ms, 0)
DC_ROW_FIELD(uint64_t, served, served, 0)

void
sv_drain_report_free(sv_drain_report *r)
{
	if (r != NULL) {
		svw_free(r->env);
		free(r);
	}
}
