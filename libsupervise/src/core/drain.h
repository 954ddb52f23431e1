/*
 * drain.h — the bookkeeping of drains and rolling restarts (pure).
 *
 * A drain asks workers to finish what they hold and exit; the supervisor
 * does not restart them. Each drain request (and each rolling restart,
 * whose old generations are drained one by one) gets an id and a report:
 * one row per drained process (group, ordinal, generation, pid), filled in
 * as things happen: the notice (when, deadline), the worker's
 * acknowledgement and its count of served work items, SIGKILL at the
 * deadline, and the reap (exit status or signal, time from notice to
 * reap). The supervision core (core/supervision.c) decides and calls this
 * module; the shell only reads the reports (GetDrain, DrainReport).
 *
 * Memory: at most SV_DRAINS_KEEP reports are kept; opening one more drops
 * the oldest finished one. A report has at most SV_DRAIN_MAX_ROWS rows.
 * Nothing here reads a clock: times are given by the caller.
 */
#ifndef SV_CORE_DRAIN_H
#define SV_CORE_DRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "supervise/supervise.h"

/* Reports kept (finished ones are dropped oldest first beyond this). */
#define SV_DRAINS_KEEP 64
/* Rows of one report (workers of every group of one supervisor). */
#define SV_DRAIN_MAX_ROWS 1048576u
/* Group name length in a row, terminator included. */
#define SV_DRAIN_NAME_LEN 65
/* Reason text of a roll that stopped, terminator included. */
#define SV_DRAIN_REASON_LEN 160

/* One drained process. */
typedef struct sv_drained {
	uint32_t group_id;
	char     group[SV_DRAIN_NAME_LEN];
	uint32_t ordinal;
	uint64_t generation;
	int64_t  pid;
	uint64_t noticed_ms; /* when the notice went out */
	uint64_t deadline_ms; /* SIGKILL then (absolute) */
	uint64_t cap_ms; /* DrainExtend never moves the deadline past this */
	bool     reaped;
	bool     exited; /* reaped: true with code, false killed by signo */
	int      code;
	int      signo;
	bool     acked; /* the worker sent DrainAck */
	bool     killed; /* SIGKILLed at the deadline */
	uint64_t time_to_exit_ms; /* notice to reap */
	uint64_t served; /* as reported by DrainAck */
} sv_drained;

/* One drain, or one rolling restart. */
typedef struct sv_drain {
	uint64_t    id;
	bool        rolling; /* a rolling restart */
	bool        roll_active; /* the roll still has ordinals to do */
	bool        roll_failed; /* it stopped early; reason says why */
	char        reason[SV_DRAIN_REASON_LEN];
	uint32_t    max_surge; /* a roll's budgets (sv_core_roll_budget) */
	uint32_t    max_unavailable;
	sv_drained *rows;
	size_t      n, cap;
	bool truncated; /* rows past SV_DRAIN_MAX_ROWS went unrecorded */
} sv_drain;

/* Every report of one supervisor. */
typedef struct sv_drains {
	sv_drain *d[SV_DRAINS_KEEP]; /* oldest first */
	size_t    n;
	uint64_t  last_id;
} sv_drains;

/* sv_drains_init makes an empty table (no allocation). */
void sv_drains_init(sv_drains *ds);

/* sv_drains_fini frees every report of the table. */
void sv_drains_fini(sv_drains *ds);

/*
 * sv_drains_open starts a report with the next id, with room for `rows`
 * rows; rolling marks a rolling restart (roll_active set). When
 * SV_DRAINS_KEEP reports exist, the oldest finished one is dropped. Every
 * allocation comes first: on an error the table is unchanged. On SV_OK
 * *dp points into the table (valid until the report is dropped).
 * Errors: SV_EEXHAUSTED (SV_DRAINS_KEEP reports are all unfinished),
 * SV_ENOMEM.
 */
sv_err sv_drains_open(sv_drains *ds, bool rolling, size_t rows, sv_drain **dp);

/*
 * sv_drain_reserve makes room for `more` rows in report d (never past
 * SV_DRAIN_MAX_ROWS), so that as many sv_drain_add calls cannot fail for
 * lack of memory. Allocates through core/alloc.h; sv_drains_fini frees.
 * Errors: SV_ENOMEM (d unchanged).
 */
sv_err sv_drain_reserve(sv_drain *d, size_t more);

/* sv_drains_find returns the report with id, or NULL. */
sv_drain *sv_drains_find(const sv_drains *ds, uint64_t id);

/*
 * sv_drain_add appends a copy of row w to report d. Within a reservation
 * (sv_drain_reserve) it fails only at the row limit.
 * Errors: SV_EEXHAUSTED (SV_DRAIN_MAX_ROWS rows: d->truncated is set),
 * SV_ENOMEM.
 */
sv_err sv_drain_add(sv_drain *d, const sv_drained *w);

/* sv_drain_row finds the row of process (group_id, ordinal, generation),
 * or NULL. */
sv_drained *sv_drain_row(
    sv_drain *d, uint32_t group_id, uint32_t ordinal, uint64_t generation);

/* sv_drain_reaped returns how many rows of d are reaped. */
size_t sv_drain_reaped(const sv_drain *d);

/* sv_drain_done tells whether d is finished: every row reaped and, for a
 * roll, no ordinal left to do. */
bool sv_drain_done(const sv_drain *d);

#endif /* SV_CORE_DRAIN_H */
