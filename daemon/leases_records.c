/*
 * leases_records.c — what leaves the lease shell about a lease: the
 * Lease message (replies, lists, events), the `lease` Event published on
 * its holder's topic (w/GROUP/ORDINAL/ for a worker, s/SESSION/ for a
 * session; docs/protocol.md, section 11), and the journal's records (L on
 * a grant or claim, U at the end, O for a runtime pool) from which a
 * successor restores them.
 */
#include <inttypes.h>
#include <stdio.h>

#include "leases_internal.h"
#include "shell/loop.h"

/* ls_holder_name writes "GROUP/ORDINAL@GENERATION" or "session:ID". */
void
ls_holder_name(svd_leases *l, const sv_lease_holder *h, char *buf, size_t len)
{
	if (h->kind == SV_HOLDER_SESSION) {
		snprintf(buf, len, "session:%" PRIu64, h->session);
		return;
	}
	{
		const char *g = l->h.group_name(l->h.arg, h->worker.group_id);
		snprintf(buf, len, "%s/%" PRIu32 "@%" PRIu64,
		    g != NULL ? g : "?", h->worker.ordinal,
		    h->worker.generation);
	}
}

/* ls_lease_fill converts li into lm (strings inside lm). */
void
ls_lease_fill(svd_leases *l, const sv_lease_info *li, ls_lease_msg *lm)
{
	ls_pool        pv;
	const ls_pool *p   = ls_pool_view(l, li->pool_id, &pv);
	uint64_t       now = sv_loop_now_ms();

	supervise__v1__lease__init(&lm->m);
	ls_holder_name(l, &li->holder, lm->holder, sizeof(lm->holder));
	lm->resource[0] = '\0';
	if (p != NULL) {
		(void) ls_render(
		    p, li->slot, lm->resource, sizeof(lm->resource));
	}
	lm->m.id            = li->id;
	lm->m.pool          = p != NULL ? (char *) p->name : (char *) "";
	lm->m.slot          = li->slot;
	lm->m.token         = li->token;
	lm->m.expires_in_ms = li->expiry_ms == 0 ? 0
	    : li->expiry_ms > now                ? li->expiry_ms - now
	                                         : 1;
	lm->m.resource      = lm->resource;
	lm->m.holder        = lm->holder;
	lm->m.unclaimed     = li->state == SV_LEASE_UNCLAIMED;
	lm->m.epoch         = li->token >> 32;
}

/* ls_wire_name writes name with '_' for '-' (the wire form). */
static void
ls_wire_name(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s", name);
	for (char *p = buf; *p != '\0'; p++) {
		if (*p == '-') {
			*p = '_';
		}
	}
}

/* ls_publish publishes a lease event about li on its holder's topic. */
void
ls_publish(svd_leases *l, sv_lease_event_kind kind, sv_lease_reason why,
    const sv_lease_info *li)
{
	Supervise__V1__Event      e  = SUPERVISE__V1__EVENT__INIT;
	Supervise__V1__LeaseEvent le = SUPERVISE__V1__LEASE_EVENT__INIT;
	ls_lease_msg              lm;
	char                      what[32], reason[32], topic[160];
	const char               *g = NULL;

	if (l->h.publish == NULL) {
		return;
	}
	ls_lease_fill(l, li, &lm);
	ls_wire_name(sv_lease_event_name(kind), what, sizeof(what));
	ls_wire_name(why != SV_LREASON_NONE ? sv_lease_reason_name(why) : "",
	    reason, sizeof(reason));
	le.what     = what;
	le.reason   = reason;
	le.lease    = &lm.m;
	e.kind_case = SUPERVISE__V1__EVENT__KIND_LEASE;
	e.lease     = &le;
	if (li->holder.kind == SV_HOLDER_WORKER) {
		g = l->h.group_name(l->h.arg, li->holder.worker.group_id);
	}
	if (g != NULL) {
		e.group      = (char *) g;
		e.ordinal    = li->holder.worker.ordinal;
		e.generation = li->holder.worker.generation;
		e.pid        = l->h.worker_pid != NULL
		           ? l->h.worker_pid(l->h.arg, li->holder.worker)
		           : 0;
		snprintf(topic, sizeof(topic), "w/%s/%" PRIu32 "/", g,
		    li->holder.worker.ordinal);
	} else {
		e.group = "";
		snprintf(topic, sizeof(topic), "s/%" PRIu64 "/",
		    li->holder.kind == SV_HOLDER_SESSION ? li->holder.session
		                                         : 0);
	}
	l->h.publish(l->h.arg, &e, topic);
}

/* ls_journal_lease records a grant or claim (L) or an end (U). */
void
ls_journal_lease(svd_leases *l, const sv_lease_info *li, bool live)
{
	ls_pool        pv;
	const ls_pool *p = ls_pool_view(l, li->pool_id, &pv);
	sv_jrec        r = {.kind = live ? SV_J_LEASE : SV_J_UNLEASE};
	const char    *g = NULL;

	if (l->h.journal == NULL || p == NULL) {
		return;
	}
	r.name     = p->name;
	r.ordinal  = li->slot;
	r.lease_id = li->id;
	r.token    = li->token;
	if (live) {
		if (li->holder.kind == SV_HOLDER_WORKER) {
			g = l->h.group_name(
			    l->h.arg, li->holder.worker.group_id);
			if (g == NULL) {
				return;
			}
			r.holder_group   = g;
			r.holder_ordinal = li->holder.worker.ordinal;
			r.generation     = li->holder.worker.generation;
		} else {
			sv_lease_session_info s = {0};
			(void) sv_lease_session_get(
			    l->core, li->holder.session, &s);
			r.session     = li->holder.session;
			r.session_uid = s.uid;
			r.session_ttl = s.ttl_ms;
		}
		{
			const ls_ident *m
			    = ls_made_of(l, li->pool_id, li->slot);
			if (m != NULL) {
				r.res_dev = m->dev;
				r.res_ino = m->ino;
			}
		}
	}
	l->h.journal(l->h.arg, &r);
}

/* ls_journal_pool records runtime pool p (an O record). */
void
ls_journal_pool(svd_leases *l, const ls_pool *p)
{
	if (l->h.journal == NULL) {
		return;
	}
	l->h.journal(l->h.arg,
	    &(sv_jrec) {.kind = SV_J_POOL,
	        .name         = p->name,
	        .count        = p->slots,
	        .ttl_ms       = p->ttl_ms,
	        .grace_ms     = p->grace_ms,
	        .policy       = (uint32_t) p->policy,
	        .directory    = p->directory,
	        .spec         = p->path});
}
