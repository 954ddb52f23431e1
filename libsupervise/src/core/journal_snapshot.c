/*
 * journal_snapshot.c — compaction: a journal state written back as a fresh
 * journal (header, epoch, each group with its seat floors and unreaped
 * processes, runtime pools, live leases), which replays to the same state.
 */
#include <stdlib.h>
#include <string.h>

#include "core/journal.h"

/* j_buf is a growing output buffer for snapshots. */
typedef struct j_buf {
	char  *p;
	size_t len, cap;
	sv_err err;
} j_buf;

/* j_put formats r and appends it to b (errors stick in b->err). */
static void
j_put(j_buf *b, const sv_jrec *r)
{
	char  *line;
	size_t n;

	if (b->err != SV_OK) {
		return;
	}
	if ((b->err = sv_journal_format(r, &line, &n)) != SV_OK) {
		return;
	}
	if (b->p == NULL || b->len + n + 1 > b->cap) {
		size_t cap = (b->len + n + 1) * 2;
		char  *p   = realloc(b->p, cap);
		if (p == NULL) {
			free(line);
			b->err = SV_ENOMEM;
			return;
		}
		b->p   = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, line, n + 1);
	b->len += n;
	free(line);
}

/* sv_journal_snapshot: see journal.h. */
sv_err
sv_journal_snapshot(const sv_jstate *st, char **bufp, size_t *lenp)
{
	j_buf b = {NULL, 0, 0, SV_OK};

	*bufp = NULL;
	j_put(&b, &(sv_jrec) {.kind = SV_J_HEADER, .name = st->boot_id});
	if (st->epoch > 0) {
		j_put(&b,
		    &(sv_jrec) {.kind = SV_J_EPOCH,
		        .name         = st->supervisor_id,
		        .cgroup_tree  = st->cgroup_tree,
		        .generation   = st->epoch});
	}
	for (size_t i = 0; i < st->ngroups; i++) {
		const sv_jgroup *g = &st->groups[i];
		j_put(&b,
		    &(sv_jrec) {.kind = SV_J_GROUP,
		        .name         = g->name,
		        .spec         = g->spec,
		        .count        = g->count,
		        .config_count = g->config_count});
		for (uint32_t o = 0; o < g->nseats; o++) {
			const sv_jseat *s = &g->seats[o];
			if (s->next_generation > 0) {
				j_put(&b,
				    &(sv_jrec) {.kind = SV_J_FLOOR,
				        .name         = g->name,
				        .ordinal      = o,
				        .generation   = s->next_generation});
			}
			if (s->spawning) {
				j_put(&b,
				    &(sv_jrec) {.kind = SV_J_SPAWNING,
				        .name         = g->name,
				        .ordinal      = o,
				        .generation = s->spawning_generation});
			}
			for (uint32_t k = 0; k < s->nprocs; k++) {
				const sv_jproc *p  = sv_jseat_proc(s, k);
				sv_jrec         pr = {.kind = SV_J_STARTED,
				            .name           = g->name,
				            .ordinal        = o,
				            .generation     = p->generation,
				            .pid            = p->pid,
				            .start_time     = p->start_time};
				j_put(&b, &pr);
				if (p->ready) {
					pr.kind = SV_J_READY;
					j_put(&b, &pr);
				}
				if (p->stopping) {
					pr.kind        = SV_J_STOPPING;
					pr.deadline_ms = p->stop_deadline_ms;
					j_put(&b, &pr);
				}
			}
			if (s->released) { /* after S, which would clear it */
				j_put(&b,
				    &(sv_jrec) {.kind = SV_J_FREED,
				        .name         = g->name,
				        .ordinal      = o,
				        .generation   = s->next_generation});
			}
		}
	}
	for (size_t i = 0; i < st->npools; i++) {
		const sv_jpool *p = &st->pools[i];
		j_put(&b,
		    &(sv_jrec) {.kind = SV_J_POOL,
		        .name         = p->name,
		        .count        = p->slots,
		        .ttl_ms       = p->ttl_ms,
		        .grace_ms     = p->grace_ms,
		        .policy       = p->policy,
		        .directory    = p->directory,
		        .spec         = p->path});
	}
	for (size_t i = 0; i < st->nleases; i++) {
		const sv_jlease *l = &st->leases[i];
		uint64_t         dev, ino;
		(void) sv_jlease_res(st, l, &dev, &ino);
		j_put(&b,
		    &(sv_jrec) {.kind   = SV_J_LEASE,
		        .name           = sv_jlease_pool(st, l),
		        .ordinal        = l->slot,
		        .lease_id       = l->id,
		        .token          = l->token,
		        .holder_group   = sv_jlease_group(st, l),
		        .holder_ordinal = l->ordinal,
		        .generation     = l->generation,
		        .session        = l->session,
		        .session_uid    = l->session_uid,
		        .session_ttl    = l->session_ttl_ms,
		        .res_dev        = dev,
		        .res_ino        = ino});
	}
	if (b.err != SV_OK) {
		free(b.p);
		return b.err;
	}
	*bufp = b.p;
	*lenp = b.len;
	return SV_OK;
}
