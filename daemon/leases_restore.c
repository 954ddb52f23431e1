/*
 * leases_restore.c — the leases of a crashed predecessor, at takeover: its
 * runtime pools declared again (a config pool of the same name wins), its
 * journaled leases loaded into the core as unclaimed for their holders to
 * re-claim within SVD_LEASE_CLAIM_GRACE_MS, with the identity of each
 * slot's file or directory the predecessor made (leases_resources.c), and
 * the survivors recorded in the new journal.
 */
#include <stdio.h>
#include <stdlib.h>

#include "leases_internal.h"
#include "log.h"
#include "shell/loop.h"

/* ls_restore_pools declares again the pools a predecessor created at
 * runtime (a pool of the config of the same name wins) and records them
 * in the new journal. */
static void
ls_restore_pools(svd_leases *l, const sv_jstate *prev)
{
	for (size_t i = 0; i < prev->npools; i++) {
		const sv_jpool *jp = &prev->pools[i];
		uint32_t        id = 0;
		ls_pool         pv;
		sv_err          err;
		if (sv_lease_pool_find(l->core, jp->name) != 0) {
			svd_log("pool %s: the config declares it; the runtime "
			        "pool of that name is dropped",
			    jp->name);
			continue;
		}
		err = svd_pool_path_check(jp->path);
		if (err == SV_OK) {
			err = ls_pool_add(l, jp->name, jp->slots, jp->ttl_ms,
			    jp->grace_ms, jp->path,
			    (sv_lease_policy) jp->policy, jp->directory, &id);
		}
		if (err != SV_OK) {
			svd_log("pool %s: cannot declare it again: %s",
			    jp->name, sv_strerror(err));
			continue;
		}
		ls_journal_pool(l, ls_pool_view(l, id, &pv));
		{
			char why[600];
			if (svd_pool_dir_check(jp->path, why, sizeof(why))
			    != SV_OK) {
				svd_log("pool %s: %s: its slots are refused "
				        "until that is mended",
				    jp->name, why);
			}
		}
	}
}

/* svd_leases_restore: see leases.h. */
void
svd_leases_restore(svd_leases *l, const sv_jstate *prev)
{
	sv_lease_record *recs;
	size_t           n = 0, skipped = 0;
	sv_lease_iter    it = SV_LEASE_ITER_INIT;
	sv_lease_info    li;

	ls_restore_pools(l, prev);
	if (prev->nleases == 0) {
		return;
	}
	if ((recs = calloc(prev->nleases, sizeof(*recs))) == NULL) {
		svd_log("leases: out of memory: %zu journaled leases lost",
		    prev->nleases);
		return;
	}
	for (size_t i = 0; i < prev->nleases; i++) {
		const sv_jlease *jl = &prev->leases[i];
		sv_lease_record *r  = &recs[n];
		uint64_t         dev, ino;
		snprintf(
		    r->pool, sizeof(r->pool), "%s", sv_jlease_pool(prev, jl));
		r->slot  = jl->slot;
		r->id    = jl->id;
		r->token = jl->token;
		if (sv_jlease_res(prev, jl, &dev, &ino)) {
			/* What the predecessor made for this slot: its own,
			 * so ours to hand over, truncate or remove. */
			ls_ident *m = ls_made_of(
			    l, sv_lease_pool_find(l->core, r->pool), jl->slot);
			if (m != NULL) {
				*m = (ls_ident) {dev, ino};
			}
		}
		if (jl->session != 0) {
			r->holder.kind    = SV_HOLDER_SESSION;
			r->holder.session = jl->session;
			r->session_uid    = jl->session_uid;
			r->session_ttl_ms = jl->session_ttl_ms;
		} else {
			uint32_t gid = l->h.group_id(
			    l->h.arg, sv_jlease_group(prev, jl));
			if (gid == 0) {
				skipped++;
				continue;
			}
			r->holder.kind = SV_HOLDER_WORKER;
			r->holder.worker
			    = (sv_wkey) {gid, jl->ordinal, jl->generation};
		}
		n++;
	}
	{
		size_t core_skipped = 0;
		/* All or nothing: on SV_ENOMEM none was loaded; the
		 * predecessor's leases are a fact, so ask again. */
		LS_CORE_RETRY("the restored leases",
		    sv_lease_restore(l->core, recs, n,
		        SVD_LEASE_CLAIM_GRACE_MS, sv_loop_now_ms(),
		        &core_skipped));
		skipped += core_skipped;
	}
	free(recs);
	/* The survivors go into the new journal (its mirror started empty
	 * of leases). */
	while (sv_lease_next(l->core, &it, NULL, &li, NULL)) {
		ls_journal_lease(l, &li, true);
	}
	svd_log("leases: %zu restored from the journal, waiting %u ms for "
	        "their holders to claim them; %zu skipped",
	    sv_lease_count(l->core), SVD_LEASE_CLAIM_GRACE_MS, skipped);
	/* RESTORED events are not worth publishing: nobody listens yet. */
	{
		sv_lease_fx fx;
		while (sv_lease_pop_effect(l->core, &fx)) {
			if (fx.kind == SV_LFX_TIMER_ARM) {
				ls_timer_arm(l, &fx);
			} else if (fx.kind == SV_LFX_TIMER_CANCEL) {
				ls_timer_cancel(l, fx.timer, fx.key);
			}
		}
	}
}
