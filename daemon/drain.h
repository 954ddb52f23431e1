/*
 * drain.h — supervised's side of drains and rolling restarts: the reports
 * of the core (core/drain.h) turned into DrainReport replies, and the drain
 * notice turned into an Event. Decisions stay in the core; request
 * handlers live in supervisor.c and call these.
 */
#ifndef SVD_DRAIN_H
#define SVD_DRAIN_H

#include <stdint.h>

#include "core/drain.h"
#include "supervise/supervise.h"
#include "supervise/v1/supervise.pb-c.h"

/*
 * svd_drain_report fills rep from report d. The rows and the array of
 * pointers to them are allocated here and returned in *rowsp and *ptrsp
 * (the caller frees both after the reply is encoded; NULL when there are
 * no rows); strings point into d.
 * Errors: SV_ENOMEM.
 */
sv_err svd_drain_report(const sv_drain *d, Supervise__V1__DrainReport *rep,
    void **rowsp, void **ptrsp);

/*
 * svd_drain_notice makes e (its header already filled) the drain notice of
 * drain drain_id with deadline_in_ms left; notice is storage owned by the
 * caller that e points to.
 */
void svd_drain_notice(Supervise__V1__Event *e, Supervise__V1__DrainNotice *n,
    uint64_t drain_id, uint64_t deadline_in_ms);

#endif /* SVD_DRAIN_H */
