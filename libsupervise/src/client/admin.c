/*
 * admin.c — administering groups and workers (supervise/client.h): scale,
 * stop, restart (plain and compare-and-swap), reset, start and terminate
 * one worker, delete a group, and the group list (sv_groups). Creating a
 * group is groupspec.c.
 *
 * Which of these are sent again after a lost connection is the retry column
 * of the request table (libsupervise/src/requests.def): scale, stop, reset,
 * delete and the list are idempotent; restart only with its compare-and-swap;
 * start_worker and terminate_worker never (a second copy would start or stop
 * another worker). An sv_groups handle keeps its reply (a GroupList, or one
 * GroupInfo); its accessors are NULL-safe like those of sv_workers.
 */
#include <stdbool.h>
#include <stdlib.h>

#include "client/client_call.h"
#include "supervise/client.h"
#include "wire/wire.h"

struct sv_groups {
	svw_env *env; /* a GroupList, or one GroupInfo */
};

/* cl_group_change finishes scale/stop: store the previous count. */
static sv_err
cl_group_change(
    sv_client *c, svw_env *req, int timeout_ms, uint32_t *previousp)
{
	svw_env *rep = NULL;
	sv_err   err = svc_call(c, req, timeout_ms, &rep);

	if (err != SV_OK) {
		return err;
	}
	if (previousp != NULL) {
		*previousp = rep->group_change->previous_count;
	}
	svw_free(rep);
	return SV_OK;
}

sv_err
sv_client_scale(sv_client *client, const char *group, uint32_t count,
    int timeout_ms, uint32_t *previousp)
{
	svw_env                   req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__ScaleGroup s   = SUPERVISE__V1__SCALE_GROUP__INIT;
	sv_err                    err;

	if ((err = svc_check_group(client, group, 0)) != SV_OK) {
		return err;
	}
	s.group         = (char *) group;
	s.count         = count;
	req.body_case   = SUPERVISE__V1__ENVELOPE__BODY_SCALE_GROUP;
	req.scale_group = &s;
	return cl_group_change(client, &req, timeout_ms, previousp);
}

sv_err
sv_client_stop(
    sv_client *client, const char *group, int timeout_ms, uint32_t *previousp)
{
	svw_env                  req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__StopGroup s   = SUPERVISE__V1__STOP_GROUP__INIT;
	sv_err                   err;

	if ((err = svc_check_group(client, group, 0)) != SV_OK) {
		return err;
	}
	s.group        = (char *) group;
	req.body_case  = SUPERVISE__V1__ENVELOPE__BODY_STOP_GROUP;
	req.stop_group = &s;
	return cl_group_change(client, &req, timeout_ms, previousp);
}

/* cl_restart sends RestartWorker, with the compare-and-swap when cas. */
static sv_err
cl_restart(sv_client *client, const char *group, uint32_t ordinal, bool cas,
    uint64_t expected_generation, int timeout_ms)
{
	svw_env                      req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__RestartWorker r   = SUPERVISE__V1__RESTART_WORKER__INIT;
	sv_err                       err;

	if ((err = svc_check_group(client, group, 0)) != SV_OK) {
		return err;
	}
	r.group               = (char *) group;
	r.ordinal             = ordinal;
	r.check_generation    = cas;
	r.expected_generation = expected_generation;
	req.body_case         = SUPERVISE__V1__ENVELOPE__BODY_RESTART_WORKER;
	req.restart_worker    = &r;
	/* Without the compare-and-swap a lost connection is reported, never
	 * resent; with it a resent copy gets CONFLICT at worst. */
	return svc_send(client, &req, timeout_ms);
}

sv_err
sv_client_restart(
    sv_client *client, const char *group, uint32_t ordinal, int timeout_ms)
{
	return cl_restart(client, group, ordinal, false, 0, timeout_ms);
}

sv_err
sv_client_restart_if(sv_client *client, const char *group, uint32_t ordinal,
    uint64_t expected_generation, int timeout_ms)
{
	return cl_restart(
	    client, group, ordinal, true, expected_generation, timeout_ms);
}

sv_err
sv_client_reset(sv_client *client, const char *group, int timeout_ms)
{
	svw_env                   req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__ResetGroup r   = SUPERVISE__V1__RESET_GROUP__INIT;
	sv_err                    err;

	if ((err = svc_check_group(client, group, 0)) != SV_OK) {
		return err;
	}
	r.group         = (char *) group;
	req.body_case   = SUPERVISE__V1__ENVELOPE__BODY_RESET_GROUP;
	req.reset_group = &r;
	return svc_send(client, &req, timeout_ms);
}

sv_err
sv_client_groups(
    sv_client *client, const char *group, int timeout_ms, sv_groups **groupsp)
{
	svw_env                   req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__ListGroups l   = SUPERVISE__V1__LIST_GROUPS__INIT;
	void                     *g   = NULL;
	sv_err                    err;

	if (groupsp == NULL) {
		return SV_EINVAL;
	}
	if ((err = svc_check_group(client, group, 1)) != SV_OK) {
		return err;
	}
	l.group         = group != NULL ? (char *) group : "";
	req.body_case   = SUPERVISE__V1__ENVELOPE__BODY_LIST_GROUPS;
	req.list_groups = &l;
	err = svc_call_kept(client, &req, timeout_ms, sizeof(sv_groups), &g);
	if (err == SV_OK) {
		*groupsp = g;
	}
	return err;
}

size_t
sv_groups_count(const sv_groups *g)
{
	if (g == NULL) {
		return 0;
	}
	return g->env->body_case == SUPERVISE__V1__ENVELOPE__BODY_GROUP_LIST
	    ? g->env->group_list->n_groups
	    : 1;
}

/* cl_group_item returns entry i of g, or NULL. */
static const Supervise__V1__GroupInfo *
cl_group_item(const sv_groups *g, size_t i)
{
	if (i >= sv_groups_count(g)) {
		return NULL;
	}
	return g->env->body_case == SUPERVISE__V1__ENVELOPE__BODY_GROUP_LIST
	    ? g->env->group_list->groups[i]
	    : g->env->group_info;
}

/* CL_GROUP_FIELD defines sv_groups_NAME(g, i) like CL_WORKER_FIELD. */
#define CL_GROUP_FIELD(type, name, field, dflt)                          \
	type sv_groups_##name(const sv_groups *g, size_t i)              \
	{                                                                \
		const Supervise__V1__GroupInfo *x = cl_group_item(g, i); \
		return x != NULL ? (type) x->field : (dflt);             \
	}

CL_GROUP_FIELD(const char *, name, name, "")
CL_GROUP_FIELD(uint32_t, count_wanted, count, 0)
CL_GROUP_FIELD(uint32_t, max_count, max_count, 0)
CL_GROUP_FIELD(int, failed, failed, 0)
CL_GROUP_FIELD(const char *, failure_reason, failure_reason, "")
CL_GROUP_FIELD(const char *, restart, restart, "")
CL_GROUP_FIELD(const char *, strategy, strategy, "")
CL_GROUP_FIELD(uint32_t, running, running, 0)
CL_GROUP_FIELD(uint32_t, ready, ready, 0)
CL_GROUP_FIELD(uint32_t, starting, starting, 0)
CL_GROUP_FIELD(uint32_t, stopping, stopping, 0)
CL_GROUP_FIELD(uint32_t, backoff, backoff, 0)
CL_GROUP_FIELD(const char *, purpose, purpose, "")

void
sv_groups_free(sv_groups *g)
{
	if (g != NULL) {
		svw_free(g->env);
		free(g);
	}
}

sv_err
sv_client_start_worker(
    sv_client *client, const char *group, int timeout_ms, uint32_t *ordinalp)
{
	svw_env                    req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__StartWorker st  = SUPERVISE__V1__START_WORKER__INIT;
	svw_env                   *rep = NULL;
	sv_err                     err;

	if ((err = svc_check_group(client, group, 0)) != SV_OK) {
		return err;
	}
	st.group         = (char *) group;
	req.body_case    = SUPERVISE__V1__ENVELOPE__BODY_START_WORKER;
	req.start_worker = &st;
	/* Not resent (requests.def): a copy would start a second worker. */
	err = svc_call(client, &req, timeout_ms, &rep);
	if (err != SV_OK) {
		return err;
	}
	if (ordinalp != NULL) {
		*ordinalp = rep->worker_status->ordinal;
	}
	svw_free(rep);
	return SV_OK;
}

sv_err
sv_client_terminate_worker(
    sv_client *client, const char *group, uint32_t ordinal, int timeout_ms)
{
	svw_env                        req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__TerminateWorker t
	    = SUPERVISE__V1__TERMINATE_WORKER__INIT;
	sv_err err;

	if ((err = svc_check_group(client, group, 0)) != SV_OK) {
		return err;
	}
	t.group              = (char *) group;
	t.ordinal            = ordinal;
	req.body_case        = SUPERVISE__V1__ENVELOPE__BODY_TERMINATE_WORKER;
	req.terminate_worker = &t;
	/* Not resent (requests.def): a copy could stop a worker started
	 * since. */
	return svc_send(client, &req, timeout_ms);
}

sv_err
sv_client_delete_group(sv_client *client, const char *group, int timeout_ms)
{
	svw_env                    req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__DeleteGroup d   = SUPERVISE__V1__DELETE_GROUP__INIT;
	sv_err                     err;

	if ((err = svc_check_group(client, group, 0)) != SV_OK) {
		return err;
	}
	d.group          = (char *) group;
	req.body_case    = SUPERVISE__V1__ENVELOPE__BODY_DELETE_GROUP;
	req.delete_group = &d;
	return svc_send(client, &req, timeout_ms);
}
