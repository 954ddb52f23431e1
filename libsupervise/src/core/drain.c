/*
 * drain.c — reports of drains and rolling restarts (see drain.h).
 *
 * A fixed table of report pointers, oldest first; each report a growing
 * array of rows. Lookups are linear: a report has one row per drained
 * process and is looked up once per exit, acknowledgement or extension.
 *
 * No state machine here, on purpose. A row's acked, killed and reaped are
 * facts recorded for the report, not states: no decision reads them (but
 * sv_drain_done, which only says whether a report may be dropped, counts
 * the reaped rows), and they are neither exclusive nor ordered (an ack may
 * be recorded after the SIGKILL went out and before the reap; a process
 * may be killed without an ack, or ack and exit before its deadline). What a
 * draining process does is decided elsewhere and is already table-driven
 * or a flag: the seat table's `drain` cells (core/seat_table.c) start it,
 * and the process is then STOPPING with `draining` set (core/roll.c): an
 * extension only moves its deadline, an ack only fills the row, the
 * deadline sends SIGKILL once (the process's `killed`), and the reap is
 * the seat's `exit`. As a table that would be one state with self-loops,
 * so the facts stay fields of the row.
 */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/drain.h"

/* sv_drains_init: see drain.h. */
void
sv_drains_init(sv_drains *ds)
{
	memset(ds, 0, sizeof(*ds));
}

/* drain_free frees one report. NULL is ignored. */
static void
drain_free(sv_drain *d)
{
	if (d != NULL) {
		free(d->rows);
		free(d);
	}
}

/* sv_drains_fini: see drain.h. */
void
sv_drains_fini(sv_drains *ds)
{
	for (size_t i = 0; i < ds->n; i++) {
		drain_free(ds->d[i]);
	}
	ds->n = 0;
}

/* sv_drains_open: see drain.h. */
sv_err
sv_drains_open(sv_drains *ds, bool rolling, size_t rows, sv_drain **dp)
{
	sv_drain *d;
	size_t    drop = ds->n;

	if (ds->n == SV_DRAINS_KEEP) {
		drop = 0;
		while (drop < ds->n && !sv_drain_done(ds->d[drop])) {
			drop++;
		}
		if (drop == ds->n) {
			return SV_EEXHAUSTED;
		}
	}
	/* Allocate first; sv_drains_fini frees the report and its rows. */
	if ((d = sv_mem_calloc(1, sizeof(*d))) == NULL) {
		return SV_ENOMEM;
	}
	if (sv_drain_reserve(d, rows) != SV_OK) {
		drain_free(d);
		return SV_ENOMEM;
	}
	if (drop < ds->n) {
		drain_free(ds->d[drop]);
		memmove(&ds->d[drop], &ds->d[drop + 1],
		    (ds->n - drop - 1) * sizeof(sv_drain *));
		ds->n--;
	}
	d->id          = ++ds->last_id;
	d->rolling     = rolling;
	d->roll_active = rolling;
	ds->d[ds->n++] = d;
	*dp            = d;
	return SV_OK;
}

/* sv_drain_reserve: see drain.h. */
sv_err
sv_drain_reserve(sv_drain *d, size_t more)
{
	size_t      need = more > SV_DRAIN_MAX_ROWS - d->n ? SV_DRAIN_MAX_ROWS
	                                                   : d->n + more;
	size_t      cap  = d->cap == 0 ? 8 : d->cap;
	sv_drained *n;

	if (need <= d->cap) {
		return SV_OK;
	}
	while (cap < need) {
		cap *= 2;
	}
	if (cap > SV_DRAIN_MAX_ROWS) {
		cap = SV_DRAIN_MAX_ROWS;
	}
	if ((n = sv_mem_realloc(d->rows, cap * sizeof(*n))) == NULL) {
		return SV_ENOMEM;
	}
	d->rows = n;
	d->cap  = cap;
	return SV_OK;
}

/* sv_drains_find: see drain.h. */
sv_drain *
sv_drains_find(const sv_drains *ds, uint64_t id)
{
	for (size_t i = 0; i < ds->n; i++) {
		if (ds->d[i]->id == id) {
			return ds->d[i];
		}
	}
	return NULL;
}

/* sv_drain_add: see drain.h. */
sv_err
sv_drain_add(sv_drain *d, const sv_drained *w)
{
	if (d->n >= SV_DRAIN_MAX_ROWS) {
		d->truncated = true;
		return SV_EEXHAUSTED;
	}
	if (d->n == d->cap && sv_drain_reserve(d, 1) != SV_OK) {
		return SV_ENOMEM;
	}
	d->rows[d->n++] = *w;
	return SV_OK;
}

/* sv_drain_row: see drain.h. */
sv_drained *
sv_drain_row(
    sv_drain *d, uint32_t group_id, uint32_t ordinal, uint64_t generation)
{
	for (size_t i = 0; i < d->n; i++) {
		sv_drained *w = &d->rows[i];
		if (w->group_id == group_id && w->ordinal == ordinal
		    && w->generation == generation) {
			return w;
		}
	}
	return NULL;
}

/* sv_drain_reaped: see drain.h. */
size_t
sv_drain_reaped(const sv_drain *d)
{
	size_t n = 0;

	for (size_t i = 0; i < d->n; i++) {
		n += d->rows[i].reaped ? 1 : 0;
	}
	return n;
}

/* sv_drain_done: see drain.h. */
bool
sv_drain_done(const sv_drain *d)
{
	return !d->roll_active && sv_drain_reaped(d) == d->n;
}
