/*
 * conn_admit.c — the control socket's admission decision (see
 * conn_admit.h for the rules and why). Pure: counts in, verdict out.
 */
#include "conn_admit.h"

/* svd_admit_limits_for: see conn_admit.h. */
svd_admit_limits
svd_admit_limits_for(uint64_t nofile, uint32_t per_process, uint32_t per_uid)
{
	svd_admit_limits l;
	uint64_t         cap = nofile == 0 ? SVD_ADMIT_CAP_MAX : nofile / 4;

	if (cap > SVD_ADMIT_CAP_MAX) {
		cap = SVD_ADMIT_CAP_MAX;
	}
	if (cap < 8) {
		cap = 8;
	}
	l.cap     = (uint32_t) cap;
	l.reserve = (l.cap + 7) / 8;
	if (l.reserve < 2) {
		l.reserve = 2;
	}
	l.per_process = per_process != 0 ? per_process : SVD_ADMIT_PER_PROCESS;
	l.per_uid     = per_uid != 0 ? per_uid : SVD_ADMIT_PER_UID;
	l.worker_floor = SVD_ADMIT_WORKER_FLOOR;
	return l;
}

/* svd_admit: see conn_admit.h (rules 1 to 5, in that order). */
svd_admit_verdict
svd_admit(const svd_admit_limits *l, const svd_admit_peer *p,
    const svd_admit_counts *n)
{
	if (n->total >= l->cap) {
		return SVD_ADMIT_FULL;
	}
	if (p->worker && n->process < l->worker_floor) {
		return SVD_ADMIT_OK;
	}
	if (n->process >= l->per_process) {
		return SVD_ADMIT_PROCESS;
	}
	if (p->privileged) {
		return n->total < l->cap - l->reserve / 2 ? SVD_ADMIT_OK
		                                          : SVD_ADMIT_FULL;
	}
	if (n->uid >= l->per_uid) {
		return SVD_ADMIT_UID;
	}
	return n->total < l->cap - l->reserve ? SVD_ADMIT_OK : SVD_ADMIT_FULL;
}
