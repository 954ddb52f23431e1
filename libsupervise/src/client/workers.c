/*
 * workers.c — worker slots as the supervisor shows them (supervise/
 * client.h, "list and status"): ListWorkers, page after page within one
 * deadline, and GetStatus, both read through one sv_workers handle that
 * keeps every reply (page) it was built from; the entries point into them,
 * so accessors never copy and strings live as long as the handle. Also
 * the names of the worker states.
 *
 * Every accessor is NULL-safe: a NULL handle, like an index out of range,
 * reads as 0, "" (last_exit_code -1, state SV_STATE_UNSPECIFIED).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client_call.h"
#include "client/transport.h"
#include "supervise/client.h"
#include "wire/wire.h"

struct sv_workers {
	svw_env                     **envs; /* the replies (pages) */
	size_t                        nenvs;
	Supervise__V1__WorkerStatus **items; /* [n], point into envs */
	size_t                        n;
};

/* cl_workers_free frees an sv_workers and the replies it holds. */
static void
cl_workers_free(sv_workers *w)
{
	if (w != NULL) {
		for (size_t i = 0; i < w->nenvs; i++) {
			svw_free(w->envs[i]);
		}
		free(w->envs);
		free(w->items);
		free(w);
	}
}

/* cl_workers_add appends the n entries of reply rep (which it takes) to
 * w. Errors: SV_ENOMEM (rep is freed). */
static sv_err
cl_workers_add(
    sv_workers *w, svw_env *rep, Supervise__V1__WorkerStatus **items, size_t n)
{
	svw_env                     **envs;
	Supervise__V1__WorkerStatus **all;

	envs = realloc(w->envs, (w->nenvs + 1) * sizeof(svw_env *));
	if (envs == NULL) {
		svw_free(rep);
		return SV_ENOMEM;
	}
	w->envs             = envs;
	w->envs[w->nenvs++] = rep;
	all                 = realloc(
	                    w->items, (w->n + n + 1) * sizeof(Supervise__V1__WorkerStatus *));
	if (all == NULL) {
		return SV_ENOMEM;
	}
	if (n > 0) { /* an empty list may come with items NULL */
		memcpy(all + w->n, items,
		    n * sizeof(Supervise__V1__WorkerStatus *));
	}
	w->items = all;
	w->n += n;
	return SV_OK;
}

/* cl_one_worker wraps a WorkerStatus reply into a new sv_workers. */
static sv_err
cl_one_worker(svw_env *rep, sv_workers **workersp)
{
	sv_workers *w = calloc(1, sizeof(*w));
	sv_err      err;

	if (w == NULL) {
		svw_free(rep);
		return SV_ENOMEM;
	}
	if ((err = cl_workers_add(w, rep, &rep->worker_status, 1)) != SV_OK) {
		cl_workers_free(w);
		return err;
	}
	*workersp = w;
	return SV_OK;
}

/* Workers asked for per ListWorkers page. */
#define CL_PAGE_SIZE 512

sv_err
sv_client_list(sv_client *client, const char *group, int timeout_ms,
    sv_workers **workersp)
{
	svw_env                    req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__ListWorkers l   = SUPERVISE__V1__LIST_WORKERS__INIT;
	svw_env                   *rep = NULL;
	sv_workers                *w;
	char                       token[128] = "";
	int64_t                    deadline   = svt_deadline(timeout_ms);
	sv_err                     err;

	if (client == NULL || workersp == NULL) {
		return SV_EINVAL;
	}
	if ((err = svc_check_group(client, group, 1)) != SV_OK) {
		return err;
	}
	if ((w = calloc(1, sizeof(*w))) == NULL) {
		return SV_ENOMEM;
	}
	l.group          = group != NULL ? (char *) group : "";
	l.page_size      = CL_PAGE_SIZE;
	req.body_case    = SUPERVISE__V1__ENVELOPE__BODY_LIST_WORKERS;
	req.list_workers = &l;
	/* Page after page, all within the one deadline. A server that does
	 * not page (v1.0) answers everything at once with no token. */
	do {
		int left     = deadline < 0       ? -1
		        : deadline > svt_now_ms() ? (int) (deadline - svt_now_ms())
		                                  : 0;
		l.page_token = token;
		err          = svc_call(client, &req, left, &rep);
		if (err == SV_OK) {
			const char *next = rep->worker_list->next_page_token;
			if (strlen(next) >= sizeof(token)) {
				svw_free(rep);
				err = svc_fail(
				    client, SV_EPROTO, "page token too long");
				break;
			}
			snprintf(token, sizeof(token), "%s", next);
			err = cl_workers_add(w, rep, rep->worker_list->workers,
			    rep->worker_list->n_workers);
		}
	} while (err == SV_OK && token[0] != '\0');
	if (err != SV_OK) {
		cl_workers_free(w);
		return err;
	}
	*workersp = w;
	return SV_OK;
}

sv_err
sv_client_status(sv_client *client, const char *group, uint32_t ordinal,
    int timeout_ms, sv_workers **workersp)
{
	svw_env                  req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__GetStatus g   = SUPERVISE__V1__GET_STATUS__INIT;
	svw_env                 *rep = NULL;
	sv_err                   err;

	if (client == NULL || workersp == NULL) {
		return SV_EINVAL;
	}
	if ((err = svc_check_group(client, group, 0)) != SV_OK) {
		return err;
	}
	g.group        = (char *) group;
	g.ordinal      = ordinal;
	req.body_case  = SUPERVISE__V1__ENVELOPE__BODY_GET_STATUS;
	req.get_status = &g;
	err            = svc_call(client, &req, timeout_ms, &rep);
	if (err != SV_OK) {
		return err;
	}
	return cl_one_worker(rep, workersp);
}

size_t
sv_workers_count(const sv_workers *w)
{
	return w != NULL ? w->n : 0;
}

/* cl_item returns entry i or NULL. */
static const Supervise__V1__WorkerStatus *
cl_item(const sv_workers *w, size_t i)
{
	return (w != NULL && i < w->n) ? w->items[i] : NULL;
}

/*
 * CL_WORKER_FIELD defines sv_workers_NAME(w, i): field FIELD of entry i,
 * or DFLT when i is out of range.
 */
#define CL_WORKER_FIELD(type, name, field, dflt)                      \
	type sv_workers_##name(const sv_workers *w, size_t i)         \
	{                                                             \
		const Supervise__V1__WorkerStatus *s = cl_item(w, i); \
		return s != NULL ? (type) s->field : (dflt);          \
	}

CL_WORKER_FIELD(const char *, group, group, "")
CL_WORKER_FIELD(uint32_t, ordinal, ordinal, 0)
CL_WORKER_FIELD(uint64_t, generation, generation, 0)
CL_WORKER_FIELD(int64_t, pid, pid, 0)
CL_WORKER_FIELD(sv_state, state, state, SV_STATE_UNSPECIFIED)
CL_WORKER_FIELD(uint64_t, uptime_ms, uptime_ms, 0)
CL_WORKER_FIELD(const char *, purpose, purpose, "")
CL_WORKER_FIELD(uint64_t, restarts, restarts, 0)
CL_WORKER_FIELD(int32_t, last_exit_code, last_exit_code, -1)
CL_WORKER_FIELD(int32_t, last_signal, last_signal, 0)
CL_WORKER_FIELD(int, ready, ready, 0)
CL_WORKER_FIELD(uint32_t, fast_failures, fast_failures, 0)
CL_WORKER_FIELD(uint64_t, restart_in_ms, restart_in_ms, 0)
CL_WORKER_FIELD(const char *, status_text, status_text, "")
CL_WORKER_FIELD(int, draining, draining, 0)
CL_WORKER_FIELD(uint64_t, drain_deadline_in_ms, drain_deadline_in_ms, 0)
CL_WORKER_FIELD(uint32_t, activities, activities, 0)
CL_WORKER_FIELD(const char *, activity, activity, "")
CL_WORKER_FIELD(uint64_t, activity_age_ms, activity_age_ms, 0)

void
sv_workers_free(sv_workers *w)
{
	cl_workers_free(w);
}

const char *
sv_state_name(sv_state state)
{
	switch (state) {
	case SV_STATE_RUNNING:
		return "running";
	case SV_STATE_STOPPING:
		return "stopping";
	case SV_STATE_BACKOFF:
		return "backoff";
	case SV_STATE_STARTING:
		return "starting";
	case SV_STATE_FAILED:
		return "failed";
	case SV_STATE_WAITING:
		return "waiting";
	case SV_STATE_IDLE:
		return "idle";
	case SV_STATE_DRAINING:
		return "draining";
	default:
		return "unknown";
	}
}
