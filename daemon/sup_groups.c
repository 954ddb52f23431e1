/*
 * sup_groups.c — the shell's side of groups: per-seat records, timers and
 * sockets of each core group, created and freed with it.
 */
#include "sup_internal.h"

static sv_err gsh_init(svd_sup *s, svd_gsh *g, const svd_group_config *cfg);

/* ---- groups
 * -----------------------------------------------------------------
 */

/* gsh_free frees the shell side of a group (its processes are gone, or
 * the daemon is exiting). NULL is ignored. */
void
gsh_free(svd_gsh *g)
{
	if (g == NULL) {
		return;
	}
	if (g->procs != NULL) {
		for (uint32_t o = 0; o < 2 * g->cfg->max_count; o++) {
			if (g->procs[o].pidfd >= 0) {
				close(g->procs[o].pidfd);
			}
			svd_activity_drop(g->procs[o].act);
		}
	}
	free(g->procs);
	free(g->seat_timers);
	free(g->seat_guards);
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
			for (uint32_t t = 0; t < g->cfg->max_count; t++) {
				sv_loop_timer_stop(
				    s->loop, &g->seat_timers[t]);
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
	uint32_t n = cfg->max_count;

	g->s   = s;
	g->cfg = cfg;
	if ((g->procs = calloc(2 * (size_t) n, sizeof(*g->procs))) == NULL
	    || (g->seat_timers = calloc(n, sizeof(*g->seat_timers))) == NULL
	    || (g->seat_guards = calloc(n, sizeof(*g->seat_guards))) == NULL) {
		return SV_ENOMEM;
	}
	for (uint32_t i = 0; i < 2 * n; i++) {
		g->procs[i].s     = s;
		g->procs[i].pidfd = -1;
		sv_timer_init(&g->procs[i].timer, proc_timer_cb, &g->procs[i]);
	}
	for (uint32_t i = 0; i < n; i++) {
		sv_timer_init(&g->seat_timers[i], seat_timer_cb, g);
	}
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
