/*
 * leases_effects.c — the lease shell's effect interpreter: every effect the
 * core queues, carried out in order:
 *   REPLY_WAITER     answer a deferred AcquireLease (Lease, DEADLINE, or
 *                    nothing when its holder went away)
 *   NOTICE_REVOKED   nothing of its own: the REVOKED event that follows is
 *                    published on the holder's topic and is the notice
 *   EVENT            an Event of kind `lease` on the event socket (topic
 *                    w/GROUP/ORDINAL/ or s/SESSION/) and the journal's L
 *                    (grant, claim) or U (end) record
 *   TIMER_ARM/CANCEL a loop timer per (kind, key) (leases_timers.c)
 *   RESOURCE_PREPARE create the slot's file or directory; on failure the
 *                    grant is aborted and its answer is the refusal
 *                    ls_prepare gave (PERMISSION_DENIED for a symbolic
 *                    link or a file the daemon did not make, ...)
 *   RESOURCE_RECLAIM keep, truncate or remove it (leases_resources.c)
 * and, when the core answers SV_ENOMEM about something that has already
 * happened, the wait before it is asked again (core_retry.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <time.h>

#include "leases_internal.h"
#include "log.h"
#include "shell/loop.h"
#include "wire/wire_msg.h"

/* ls_deferred_find returns the deferred request of waiter id, or NULL. */
ls_deferred *
ls_deferred_find(svd_leases *l, uint64_t waiter)
{
	for (size_t i = 0; i < SVD_LEASE_MAX_DEFERRED; i++) {
		if (l->deferred[i].used && l->deferred[i].waiter == waiter) {
			return &l->deferred[i];
		}
	}
	return NULL;
}

/* ls_was_aborted tells (and forgets) whether lease id's grant failed; if
 * so *err and msg say why (as ls_prepare said). */
bool
ls_was_aborted(svd_leases *l, uint64_t id, sv_err *err, char *msg, size_t len)
{
	for (unsigned i = 0; i < LS_ABORTED_MAX; i++) {
		if (l->aborted[i].id == id && id != 0) {
			l->aborted[i].id = 0;
			*err             = l->aborted[i].err;
			snprintf(msg, len, "%s", l->aborted[i].msg);
			return true;
		}
	}
	return false;
}

/* ls_answer sends a deferred request its reply: the lease (err SV_OK) or
 * an Error; SV_ECLOSED drops it (nobody to answer). */
static void
ls_answer(svd_leases *l, ls_deferred *d, sv_err err, const sv_lease_info *li)
{
	nng_msg    *rep  = NULL;
	svd_done_cb done = d->done;
	void       *arg  = d->arg;
	char        msg[400];
	bool        aborted = false;

	d->used = false;
	if (err == SV_OK) {
		aborted = ls_was_aborted(l, li->id, &err, msg, sizeof(msg));
	}
	if (err == SV_OK) {
		svw_env      env = SUPERVISE__V1__ENVELOPE__INIT;
		ls_lease_msg lm;
		ls_lease_fill(l, li, &lm);
		env.version    = SV_PROTOCOL_VERSION;
		env.request_id = d->request_id;
		env.body_case  = SUPERVISE__V1__ENVELOPE__BODY_LEASE;
		env.lease      = &lm.m;
		if (svw_encode(&env, SVW_MAX_REPLY, &rep) != SV_OK) {
			rep = NULL;
		}
	} else if (err != SV_ECLOSED) {
		ls_pool        pv;
		const ls_pool *p = ls_pool_view(l, d->pool_id, &pv);
		if (err == SV_ETIMEDOUT) {
			err = SV_EDEADLINE;
			snprintf(msg, sizeof(msg),
			    "pool %s: no slot freed within %" PRIu64 " ms",
			    p != NULL ? p->name : "?", d->wait_ms);
		} else if (!aborted) {
			snprintf(msg, sizeof(msg),
			    "pool %s: the slot's resource could not be "
			    "prepared",
			    p != NULL ? p->name : "?");
		}
		if (svw_encode_error(d->request_id, err, msg, &rep) != SV_OK) {
			rep = NULL;
		}
	}
	done(arg, rep);
}

/* ls_effects carries out every effect the core has queued. */
void
ls_effects(svd_leases *l)
{
	sv_lease_fx fx;

	while (sv_lease_pop_effect(l->core, &fx)) {
		ls_pool  pv;
		ls_pool *p = ls_pool_view(l, fx.lease.pool_id, &pv);
		switch (fx.kind) {
		case SV_LFX_REPLY_WAITER: {
			ls_deferred *d = ls_deferred_find(l, fx.waiter);
			if (d != NULL) {
				ls_answer(l, d, fx.err, &fx.lease);
			}
			break;
		}
		case SV_LFX_NOTICE_REVOKED:
			/* The REVOKED event that follows, on the holder's
			 * topic, is the notice. */
			break;
		case SV_LFX_EVENT:
			if (fx.event == SV_LEV_SESSION_OPENED
			    || fx.event == SV_LEV_SESSION_ENDED
			    || fx.event == SV_LEV_WAIT_TIMEOUT) {
				break;
			}
			if (fx.event == SV_LEV_GRANTED
			    || fx.event == SV_LEV_CLAIMED) {
				ls_journal_lease(l, &fx.lease, true);
			} else if (fx.event == SV_LEV_RELEASED
			    || fx.event == SV_LEV_REVOKED
			    || fx.event == SV_LEV_ABORTED) {
				ls_journal_lease(l, &fx.lease, false);
			}
			if (fx.event == SV_LEV_REVOKED) {
				char who[SVW_MAX_NAME + 48];
				ls_holder_name(
				    l, &fx.lease.holder, who, sizeof(who));
				svd_log("pool %s: lease %" PRIu64
				        " on slot %" PRIu32
				        " of %s revoked (%s)",
				    p != NULL ? p->name : "?", fx.lease.id,
				    fx.lease.slot, who,
				    sv_lease_reason_name(fx.reason));
			}
			ls_publish(l, fx.event, fx.reason, &fx.lease);
			break;
		case SV_LFX_TIMER_ARM:
			ls_timer_arm(l, &fx);
			break;
		case SV_LFX_TIMER_CANCEL:
			ls_timer_cancel(l, fx.timer, fx.key);
			break;
		case SV_LFX_RESOURCE_PREPARE: {
			ls_abort *a
			    = &l->aborted[l->naborted % LS_ABORTED_MAX];
			if (p != NULL
			    && (a->err = ls_prepare(
			            l, p, &fx.lease, a->msg, sizeof(a->msg)))
			        != SV_OK) {
				a->id = fx.lease.id;
				l->naborted++;
				LS_CORE_RETRY("a lease abort",
				    sv_lease_abort(l->core, fx.lease.id,
				        sv_loop_now_ms()));
			}
			break;
		}
		case SV_LFX_RESOURCE_RECLAIM:
			if (p != NULL) {
				ls_reclaim(l, p, fx.lease.slot);
			}
			break;
		}
	}
}
