/*
 * sup_groups.c — the shell's side of groups: per-seat records, timers and
 * sockets of each core group. The group's side is created and freed with
 * the core group; a seat's record only while the seat is in use (made on
 * its first spawn, adoption or backoff timer, freed once it holds nothing
 * and the core no longer wants it), so memory follows what runs, not
 * max_count.
 */
#include "sup_internal.h"

static sv_err gsh_init(svd_sup *s, svd_gsh *g, const svd_group_config *cfg);

/* ---- groups
 * -----------------------------------------------------------------
 */

/* seat_free closes what a seat record still holds (the daemon is
 * exiting, or the group is gone) and frees it. NULL is ignored. */
static void
seat_free(svd_seat *st)
{
	if (st == NULL) {
		return;
	}
	for (int i = 0; i < SEAT_PROCS; i++) {
		svd_proc *p = seat_proc(st, i);
		if (p == NULL) {
			continue;
		}
		if (p->io.fd >= 0) {
			close(p->io.fd);
		}
		svd_activity_drop(p->act);
		free(p->status);
		free(p->tm); /* the loop is gone or no longer holds it */
	}
	free(st->tm);
	/* Not a worker's region: nobody adopts it. */
	svd_activity_end(st->g->s->act, st->act_spare);
	free(st->extra);
	free(st);
}

/* proc_init makes p an unused process record of seat st. */
static void
proc_init(svd_seat *st, svd_proc *p)
{
	p->io.fd = -1;
	p->seat  = st;
}

/* seat_proc returns process record i (0 or 1) of seat st, or NULL when
 * the seat has no such record (the second one is made on demand). */
svd_proc *
seat_proc(const svd_seat *st, int i)
{
	return i == 0 ? (svd_proc *) &st->proc : st->extra;
}

/* seat_extra returns the seat's second process record, making it (unused)
 * when the seat has none yet; NULL when memory is short. It belongs to
 * the seat: seat_maybe_free or seat_free frees it. */
svd_proc *
seat_extra(svd_seat *st)
{
	if (st->extra == NULL) {
		if ((st->extra = calloc(1, sizeof(*st->extra))) == NULL) {
			return NULL;
		}
		proc_init(st, st->extra);
	}
	return st->extra;
}

/* seat_get returns the record of seat `ordinal`, or NULL when it has
 * none. */
svd_seat *
seat_get(const svd_gsh *g, uint32_t ordinal)
{
	return ordinal < g->nseats ? g->seats[ordinal] : NULL;
}

/* seat_make returns the record of seat `ordinal`, making it (and growing
 * the group's table of records geometrically) when it has none. The
 * record belongs to the group: seat_maybe_free or gsh_free frees it.
 * Returns NULL when ordinal is not below max_count or memory is short
 * (nothing changed then). */
svd_seat *
seat_make(svd_gsh *g, uint32_t ordinal)
{
	svd_seat *st;

	if (ordinal >= g->cfg->max_count) {
		return NULL;
	}
	if (ordinal >= g->nseats) {
		uint32_t   n = g->nseats < 8 ? 8 : 2 * g->nseats;
		svd_seat **ns;
		if (n <= ordinal) {
			n = ordinal + 1;
		}
		if (n > g->cfg->max_count) {
			n = g->cfg->max_count;
		}
		if ((ns = realloc(g->seats, n * sizeof(svd_seat *))) == NULL) {
			return NULL;
		}
		memset(
		    ns + g->nseats, 0, (n - g->nseats) * sizeof(svd_seat *));
		g->seats  = ns;
		g->nseats = n;
	}
	if ((st = g->seats[ordinal]) != NULL) {
		return st;
	}
	if ((st = calloc(1, sizeof(*st))) == NULL) {
		return NULL;
	}
	st->g       = g;
	st->ordinal = ordinal;
	proc_init(st, &st->proc);
	g->seats[ordinal] = st;
	return st;
}

/* seat_maybe_free frees the record of seat `ordinal` once it holds
 * nothing (no process, no armed backoff timer) and the core no longer
 * wants the seat (scale-down, a terminated or completed worker), so the
 * records follow the seats in use. A wanted seat keeps its record for the
 * restart to come. */
void
seat_maybe_free(svd_gsh *g, uint32_t ordinal)
{
	svd_seat    *st = seat_get(g, ordinal);
	sv_seat_view v;

	if (st == NULL || st->proc.io.fd >= 0
	    || (st->extra != NULL && st->extra->io.fd >= 0) || st->tm != NULL
	    || (sv_core_seat_view(g->s->core, g->id, ordinal, &v) == SV_OK
	        && v.wanted)) {
		return;
	}
	svd_tmr_drop(g->s->loop, &st->tm);
	svd_tmr_drop(g->s->loop, &st->proc.tm);
	free(st->proc.status);
	if (st->extra != NULL) {
		svd_tmr_drop(g->s->loop, &st->extra->tm);
		free(st->extra->status);
		free(st->extra);
	}
	g->seats[ordinal] = NULL;
	svd_activity_end(g->s->act, st->act_spare);
	free(st);
}

/* svd_tmr_drop stops the timer *tp and frees it (NULL: none); *tp becomes
 * NULL. */
void
svd_tmr_drop(sv_loop *loop, svd_tmr **tp)
{
	if (*tp != NULL) {
		sv_loop_timer_stop(loop, &(*tp)->t);
		free(*tp);
		*tp = NULL;
	}
}

/* gsh_seat_timers_drop stops and frees the timers of seat record st (NULL
 * is ignored): its backoff timer and its process records'. */
static void
gsh_seat_timers_drop(sv_loop *loop, svd_seat *st)
{
	if (st == NULL) {
		return;
	}
	svd_tmr_drop(loop, &st->tm);
	for (int i = 0; i < SEAT_PROCS; i++) {
		svd_proc *p = seat_proc(st, i);
		if (p != NULL) {
			svd_tmr_drop(loop, &p->tm);
		}
	}
}

/* gsh_free frees the shell side of a group (its processes are gone, or
 * the daemon is exiting). NULL is ignored. */
void
gsh_free(svd_gsh *g)
{
	if (g == NULL) {
		return;
	}
	for (uint32_t o = 0; o < g->nseats; o++) {
		seat_free(g->seats[o]);
	}
	free(g->seats);
	free(g->envbase);
	svd_config_free(g->owned);
	free(g->spec);
	svd_sockets_close(g->sockets);
	free(g);
}

/* gsh_remove takes a deleted group's shell side out and frees it. */
void
gsh_remove(svd_sup *s, uint32_t id)
{
	for (size_t i = 0; i < s->ngsh; i++) {
		if (s->gsh[i]->id == id) {
			svd_gsh *g = s->gsh[i];
			memmove(&s->gsh[i], &s->gsh[i + 1],
			    (s->ngsh - i - 1) * sizeof(svd_gsh *));
			s->ngsh--;
			for (uint32_t o = 0; o < g->nseats; o++) {
				gsh_seat_timers_drop(s->loop, g->seats[o]);
			}
			gsh_free(g);
			return;
		}
	}
}

/* gsh_add creates the shell side of a group and adds the group to the
 * core. owned (may be NULL) is the config cfg belongs to, and spec (may be
 * NULL) the text it was made from; the group then owns both. On failure
 * nothing is left behind (owned and spec are not freed). */
sv_err
gsh_add(svd_sup *s, const svd_group_config *cfg, svd_config *owned, char *spec)
{
	svd_gsh *g;
	sv_err   err;

	if (s->ngsh >= SV_CORE_MAX_GROUPS) {
		return SV_EEXHAUSTED;
	}
	if ((g = calloc(1, sizeof(*g))) == NULL) {
		return SV_ENOMEM;
	}
	if ((err = gsh_init(s, g, cfg)) != SV_OK) {
		gsh_free(g);
		return err;
	}
	g->owned          = owned;
	g->spec           = spec;
	s->gsh[s->ngsh++] = g;
	return SV_OK;
}

/* gsh_init prepares the shell side of one group and adds it to the core. */
static sv_err
gsh_init(svd_sup *s, svd_gsh *g, const svd_group_config *cfg)
{
	/* No seat record yet: seat_make makes them as seats are used. */
	g->s   = s;
	g->cfg = cfg;
	{
		char msg[600];
		if (svd_sockets_open(cfg, &g->sockets, msg, sizeof(msg))
		    != SV_OK) {
			svd_log("%s", msg);
			return SV_ESYSTEM;
		}
	}
	if (env_build_base(g) != SV_OK) {
		return SV_ENOMEM;
	}
	return sv_core_add_group(
	    s->core, cfg->name, &cfg->pol, cfg->count, cfg->max_count, &g->id);
}
