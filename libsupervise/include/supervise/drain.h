/*
 * drain.h — the client's calls that end work in order: drain and
 * rolling restart (docs/protocol.md, section 12), and a worker's
 * sub-workers, its threads and forked children (docs/subworkers.md).
 *
 * Part of the C client: included by supervise/client.h (which a program
 * includes), and it includes client.h itself, so either may come first.
 * The conventions of client.h hold here: opaque handles, a deadline on
 * every call, NULL-safe accessors, the caller frees what it is given.
 */
#ifndef SUPERVISE_DRAIN_H
#define SUPERVISE_DRAIN_H

#include "supervise/client.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Drain and rolling restart (docs/protocol.md, section 12) ------------
 *
 * A drain asks workers to finish what they hold and exit; they are not
 * restarted and their ordinals are released. The supervisor keeps a report
 * per drain (and per rolling restart): one row per drained process, filled
 * as it acknowledges, is killed at its deadline, and is reaped.
 */
typedef struct sv_drain_report sv_drain_report;

/*
 * sv_client_drain (admin) drains: every worker of every group when group
 * is NULL (ordinal must then be -1), every worker of group when ordinal is
 * -1, else the worker at ordinal. deadline_ms: SIGKILL that long after the
 * notice (0: each group's drain_timeout_ms). Not sent again after a lost
 * connection (SV_ECLOSED). On SV_OK *reportp is the drain's first report,
 * the caller's (sv_drain_report_free); follow it with
 * sv_client_drain_report(sv_drain_report_id(...)).
 * Errors: SV_EINVAL, SV_EPERM, SV_ENOTFOUND (no such group, or no live
 * worker at ordinal), SV_EBUSY, SV_EEXHAUSTED (too many unfinished drains),
 * SV_ETOOLARGE, and the transport's.
 */
SV_API sv_err sv_client_drain(sv_client *client, const char *group,
    int64_t ordinal, uint64_t deadline_ms, int timeout_ms,
    sv_drain_report **reportp);

/* sv_client_drain_report (admin) fetches the current report of drain id
 * (GetDrain). On SV_OK *reportp is the caller's. Errors: SV_EINVAL,
 * SV_EPERM, SV_ENOTFOUND (unknown or no longer kept), transport errors. */
SV_API sv_err sv_client_drain_report(
    sv_client *client, uint64_t id, int timeout_ms, sv_drain_report **reportp);

/*
 * sv_client_rolling_restart (admin) starts a rolling restart of group: for
 * each ordinal, the next generation starts beside the old one, and the old
 * one is drained once the new one is ready; a new generation not ready
 * within ready_timeout_ms (0: the group's start_timeout_ms, else 30 s)
 * stops the roll and the old one keeps serving. Returns at once; on SV_OK
 * *reportp (the caller's) is the roll's report, to follow with
 * sv_client_drain_report: done when the roll has ended and every old
 * generation is reaped; roll_failed when it stopped early.
 * Errors: SV_EINVAL, SV_EPERM, SV_ENOTFOUND, SV_EBUSY (a roll in progress,
 * the group failed), transport errors.
 */
SV_API sv_err sv_client_rolling_restart(sv_client *client, const char *group,
    uint64_t ready_timeout_ms, int timeout_ms, sv_drain_report **reportp);

/*
 * sv_client_rolling_restart_budgets is sv_client_rolling_restart with the
 * roll's budgets (Kubernetes' maxSurge and maxUnavailable; the plain call
 * means 1 and 0): the group's live processes, draining ones included, stay
 * within N + max_surge (N: its held ordinals), and, when no surge is left,
 * an old process is drained before its successor starts only while the
 * held ordinals without a ready process stay within max_unavailable. It
 * first asks the supervisor (Hello) whether it lists the feature
 * "admin.rolling_restart.budgets" and sends nothing if not; timeout_ms
 * bounds both exchanges together. The report carries the budgets
 * (sv_drain_report_max_surge, sv_drain_report_max_unavailable).
 * Errors: those of sv_client_rolling_restart; SV_EINVAL (also both budgets
 * 0); SV_EUNKNOWNMSG (the supervisor does not offer budgets: nothing was
 * sent).
 */
SV_API sv_err sv_client_rolling_restart_budgets(sv_client *client,
    const char *group, uint64_t ready_timeout_ms, uint32_t max_surge,
    uint32_t max_unavailable, int timeout_ms, sv_drain_report **reportp);

/* sv_client_drain_extend: the calling worker (the process itself), being
 * drained, asks for its deadline to be now + more_ms, capped by its group's
 * drain_extend_max_ms past the first deadline. WhoAmI shows the deadline
 * in effect. Errors: SV_ENOTWORKER, SV_EPERM, SV_ENOTFOUND (not draining),
 * transport errors. */
SV_API sv_err sv_client_drain_extend(
    sv_client *client, uint64_t more_ms, int timeout_ms);

/* sv_client_drain_ack: the calling worker has drained (it exits next),
 * having served `served` work items (shown in the report). Errors: those
 * of sv_client_drain_extend. */
SV_API sv_err sv_client_drain_ack(
    sv_client *client, uint64_t served, int timeout_ms);

/* Report accessors: strings live as long as the report; an index out of
 * range, or a NULL r, gives 0 or "". */
SV_API uint64_t    sv_drain_report_id(const sv_drain_report *r);
SV_API int         sv_drain_report_done(const sv_drain_report *r);
SV_API int         sv_drain_report_rolling(const sv_drain_report *r);
SV_API int         sv_drain_report_roll_failed(const sv_drain_report *r);
SV_API const char *sv_drain_report_roll_reason(const sv_drain_report *r);
/* a roll's budgets (0 and 0 for a drain, or from a supervisor without the
 * feature "admin.rolling_restart.budgets") */
SV_API uint32_t sv_drain_report_max_surge(const sv_drain_report *r);
SV_API uint32_t sv_drain_report_max_unavailable(const sv_drain_report *r);
/* rows (drained processes), and how many of them are reaped */
SV_API size_t      sv_drain_report_count(const sv_drain_report *r);
SV_API size_t      sv_drain_report_reaped(const sv_drain_report *r);
SV_API const char *sv_drain_report_group(const sv_drain_report *r, size_t i);
SV_API uint32_t    sv_drain_report_ordinal(const sv_drain_report *r, size_t i);
SV_API uint64_t sv_drain_report_generation(const sv_drain_report *r, size_t i);
SV_API int64_t  sv_drain_report_pid(const sv_drain_report *r, size_t i);
SV_API int      sv_drain_report_is_reaped(const sv_drain_report *r, size_t i);
/* reaped: exited (with code) or killed by signal */
SV_API int     sv_drain_report_exited(const sv_drain_report *r, size_t i);
SV_API int32_t sv_drain_report_code(const sv_drain_report *r, size_t i);
SV_API int32_t sv_drain_report_signal(const sv_drain_report *r, size_t i);
SV_API int sv_drain_report_acknowledged(const sv_drain_report *r, size_t i);
/* SIGKILLed at its deadline */
SV_API int      sv_drain_report_killed(const sv_drain_report *r, size_t i);
SV_API uint64_t sv_drain_report_time_to_exit_ms(
    const sv_drain_report *r, size_t i);
SV_API uint64_t sv_drain_report_served(const sv_drain_report *r, size_t i);
/* sv_drain_report_free frees a report. NULL is ignored. */
SV_API void sv_drain_report_free(sv_drain_report *r);

/* ---- Sub-workers: threads and forked children (docs/subworkers.md) -------
 * Feature "subworkers" (v1.4). */

/*
 * sv_client_subworker_register makes a sub-worker of the caller and stores
 * its identity in *identityp (free it with sv_identity_free): kind
 * SV_KIND_THREAD registers a thread of the calling worker process under
 * label (1..64 bytes, the thread's name or role; tid its kernel tid or 0);
 * SV_KIND_PROCESS registers the calling process, a forked child of a
 * worker (label optional, may be NULL; tid ignored). number is a wanted
 * sub-ordinal, or -1 for any. The identity's ordinal and generation are the
 * sub-ordinal and sub-generation, its context [process p, thread or process
 * n] and its parent the process frame. *againp (may be NULL) is set to 1
 * when it was registered already (the same number comes back).
 * Errors: SV_EINVAL, SV_ENOTWORKER, SV_ETOOLARGE (a third level),
 * SV_EPERM, SV_ECONFLICT, SV_EEXHAUSTED, SV_EUNKNOWNMSG (server before
 * v1.4), SV_ETIMEDOUT, SV_ECLOSED, SV_EPROTO, SV_ENOMEM.
 */
SV_API sv_err sv_client_subworker_register(sv_client *client, sv_kind kind,
    const char *label, int64_t number, int64_t tid, int timeout_ms,
    sv_identity **identityp, int *againp);

/*
 * sv_client_subworker_release ends the sub-worker that identity (from
 * sv_client_subworker_register) names: a thread by its process, a child by
 * itself. Releasing a grant that is no longer current is a successful
 * no-op. identity stays the caller's.
 * Errors: SV_EINVAL, SV_EPERM, SV_ENOTFOUND, SV_ETIMEDOUT, SV_ECLOSED,
 * SV_EPROTO.
 */
SV_API sv_err sv_client_subworker_release(
    sv_client *client, const sv_identity *identity, int timeout_ms);

#ifdef __cplusplus
}
#endif

#endif /* SUPERVISE_DRAIN_H */
