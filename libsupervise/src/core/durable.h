/*
 * durable.h — which journal records a supervision event makes durable
 * (pure decision core; no I/O).
 *
 * A successor can only take over what was journaled (core/journal.h,
 * docs/durability.md). The shell hands every event the core emits, with a
 * few plain facts it knows about the event's seat, to sv_durable_records
 * and appends the records named, in order, before it handles anything
 * else: effects are drained before a request is answered, so whatever a
 * request changed of the durable state is in the journal (page cache)
 * before its reply leaves. This file decides:
 *
 *   - which record kinds an event makes (P, R, T, X, G, D), and
 *   - whether a stop or drain released the seat's ordinal for good (an F
 *     record: a drain, a terminate, a scale-down), so a successor does not
 *     start it again; a worker of a temporary group that completed, a
 *     shutdown and a group being deleted leave what is wanted as it was.
 */
#ifndef SV_CORE_DURABLE_H
#define SV_CORE_DURABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/journal.h"
#include "core/supervision.h"

/* What the shell knows of the event's group and seat, as plain facts. */
typedef struct sv_durable_facts {
	bool group_known; /* the shell has the event's group */
	bool proc_known; /* STARTED, ADOPTED: the shell has the process (pid,
	                  * start time) */
	bool ready; /* ADOPTED: the core holds the adopted process ready */
	bool deleting; /* the group is being deleted */
	bool shutting_down; /* the supervisor is shutting down */
	bool seat_known; /* the core has the event's seat (below are valid) */
	bool seat_wanted; /* the core still wants the seat */
	bool released; /* the journal already has the seat released (F since
	                * its last S) */
} sv_durable_facts;

/* Most records one event makes. */
#define SV_DURABLE_MAX 2

/* The records to append, in order; the shell fills in names and numbers
 * from the event (T carries ev->deadline_ms). */
typedef struct sv_durable_plan {
	sv_jkind kinds[SV_DURABLE_MAX];
	uint32_t n;
} sv_durable_plan;

/*
 * sv_durable_records decides the records event ev makes, given facts f,
 * into *out (n 0: none).
 */
void sv_durable_records(
    const sv_event *ev, const sv_durable_facts *f, sv_durable_plan *out);

/*
 * sv_durable_release says whether event ev released its seat's ordinal
 * for good (an F record is due), given facts f. Part of
 * sv_durable_records, exposed for tests and the docs.
 */
bool sv_durable_release(const sv_event *ev, const sv_durable_facts *f);

#endif
