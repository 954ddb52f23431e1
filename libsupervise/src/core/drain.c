/*
 * drain.c — reports of drains and rolling restarts (see drain.h).
 *
 * A fixed table of report pointers, oldest first; each report a growing
 * array of rows. Lookups are linear: a report has one row per drained
 * process and is looked up once per exit, acknowledgement or extension.
 */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/drain.h"

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

size_t
sv_drain_reaped(const sv_drain *d)
{
	size_t n = 0;

	for (size_t i = 0; i < d->n; i++) {
		n += d->rows[i].reaped ? 1 : 0;
	}
	return n;
}

bool
sv_drain_done(const sv_drain *d)
{
	return !d->roll_active && sv_drain_reaped(d) == d->n;
}
