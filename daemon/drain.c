/*
 * drain.c — DrainReport and drain notices from the core's drain reports
 * (see drain.h). Each reply's rows and pointer array are allocated here and
 * freed by the request handler after encoding.
 */
#include <stdlib.h>

#include "drain.h"

sv_err
svd_drain_report(const sv_drain *d, Supervise__V1__DrainReport *rep,
    void **rowsp, void **ptrsp)
{
	Supervise__V1__DrainedWorker  *rows;
	Supervise__V1__DrainedWorker **ptrs;

	supervise__v1__drain_report__init(rep);
	rep->id              = d->id;
	rep->done            = sv_drain_done(d);
	rep->rolling         = d->rolling;
	rep->roll_failed     = d->roll_failed;
	rep->roll_reason     = (char *) d->reason;
	rep->max_surge       = d->max_surge;
	rep->max_unavailable = d->max_unavailable;
	*rowsp               = NULL;
	*ptrsp               = NULL;
	if (d->n == 0) {
		return SV_OK;
	}
	rows   = calloc(d->n, sizeof(Supervise__V1__DrainedWorker));
	ptrs   = calloc(d->n, sizeof(Supervise__V1__DrainedWorker *));
	*rowsp = rows;
	*ptrsp = ptrs;
	if (rows == NULL || ptrs == NULL) {
		return SV_ENOMEM;
	}
	for (size_t i = 0; i < d->n; i++) {
		const sv_drained             *w = &d->rows[i];
		Supervise__V1__DrainedWorker *r = &rows[i];
		supervise__v1__drained_worker__init(r);
		r->group           = (char *) w->group;
		r->ordinal         = w->ordinal;
		r->generation      = w->generation;
		r->pid             = w->pid;
		r->reaped          = w->reaped;
		r->exited          = w->exited;
		r->code            = w->code;
		r->signal          = w->signo;
		r->acknowledged    = w->acked;
		r->killed          = w->killed;
		r->time_to_exit_ms = w->time_to_exit_ms;
		r->served          = w->served;
		ptrs[i]            = r;
	}
	rep->n_workers = d->n;
	rep->workers   = ptrs;
	return SV_OK;
}

void
svd_drain_notice(Supervise__V1__Event *e, Supervise__V1__DrainNotice *n,
    uint64_t drain_id, uint64_t deadline_in_ms)
{
	supervise__v1__drain_notice__init(n);
	n->drain_id       = drain_id;
	n->deadline_in_ms = deadline_in_ms;
	e->kind_case      = SUPERVISE__V1__EVENT__KIND_DRAIN;
	e->drain          = n;
}
