/*
 * leases_requests.c — the lease requests (AcquireLease with its deferred
 * wait, RenewLease, ReleaseLease, ListLeases, ClaimLease; docs/protocol.md
 * section 11), the helpers every lease-family request shares (who asks,
 * which pool, the error messages), and svd_leases_handle, the dispatch of
 * every lease, session and pool request.
 *
 * The holder of a request is never read from the message alone: it is the
 * calling worker as the kernel tells it, or a session owned by the
 * caller's uid.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leases_internal.h"
#include "shell/loop.h"

/* ls_holder resolves who asks: the session named (owned by the caller's
 * uid) or the calling worker. Never from message content alone. */
sv_err
ls_holder(svd_leases *l, const svd_lease_caller *c, uint64_t session,
    sv_lease_holder *h)
{
	if (session != 0) {
		sv_lease_session_info si;
		if (!sv_lease_session_get(l->core, session, &si)) {
			return ls_fail(c, SV_ENOTFOUND,
			    "no lease session %" PRIu64 " (it expired or was "
			    "closed)",
			    session);
		}
		if ((uint64_t) si.uid != c->uid) {
			return ls_fail(c, SV_EPERM,
			    "lease session %" PRIu64
			    " belongs to uid %" PRIu32,
			    session, si.uid);
		}
		*h = (sv_lease_holder) {SV_HOLDER_SESSION, {0, 0, 0}, session};
		return SV_OK;
	}
	if (!c->is_worker) {
		return ls_fail(c, SV_ENOTWORKER,
		    "only a worker holds leases itself; other callers open a "
		    "session (OpenSession) and name it");
	}
	*h = (sv_lease_holder) {SV_HOLDER_WORKER, c->key, 0};
	return SV_OK;
}

/* ls_pool_named finds a pool by name (its view in *buf, *pp = buf) or
 * fails with NOT_FOUND. */
sv_err
ls_pool_named(svd_leases *l, const svd_lease_caller *c, const char *name,
    ls_pool *buf, ls_pool **pp)
{
	uint32_t id;

	*pp = NULL;
	if (name == NULL || name[0] == '\0') {
		(void) ls_fail(c, SV_EBADREQ, "a pool name is required");
		return SV_EBADREQ;
	}
	if (strlen(name) > SV_LEASE_NAME_MAX) {
		(void) ls_fail(c, SV_ETOOLARGE,
		    "pool name longer than %u bytes", SV_LEASE_NAME_MAX);
		return SV_ETOOLARGE;
	}
	if ((id = sv_lease_pool_find(l->core, name)) == 0
	    || (*pp = ls_pool_view(l, id, buf)) == NULL) {
		(void) ls_fail(c, SV_ENOTFOUND, "no pool named \"%s\"", name);
		return SV_ENOTFOUND;
	}
	return SV_OK;
}

/* ls_core_err turns a core error into a reply message. */
sv_err
ls_core_err(
    const svd_lease_caller *c, sv_err err, const ls_pool *p, const char *what)
{
	const char *pn = p != NULL ? p->name : "?";

	switch (err) {
	case SV_OK:
		return SV_OK;
	case SV_EEXHAUSTED:
		return ls_fail(c, err, "pool %s: no free slot (%s)", pn, what);
	case SV_EBUSY:
		return ls_fail(
		    c, err, "pool %s: the slot is taken (%s)", pn, what);
	case SV_ECONFLICT:
		return ls_fail(c, err,
		    "pool %s: conflict (%s): the holder holds another slot, "
		    "or a restored lease to claim, or another holder or token "
		    "owns the slot",
		    pn, what);
	case SV_EPERM:
		return ls_fail(c, err,
		    "pool %s: only the lease's holder may %s", pn, what);
	case SV_ENOTFOUND:
		return ls_fail(
		    c, err, "pool %s: no such lease (%s)", pn, what);
	case SV_EINVAL:
		return ls_fail(
		    c, SV_EBADREQ, "pool %s: invalid request (%s)", pn, what);
	case SV_ENOMEM:
		return ls_fail(c, err,
		    "pool %s: the supervisor is out of memory (%s); nothing "
		    "was changed, try again later",
		    pn, what);
	default:
		return ls_fail(
		    c, err, "pool %s: %s: %s", pn, what, sv_strerror(err));
	}
}

/* ls_reply_lease puts li as the Lease reply in rep (memory in arena). */
static sv_err
ls_reply_lease(svd_leases *l, const svd_lease_caller *c,
    const sv_lease_info *li, svw_env *rep, void **arena)
{
	ls_lease_msg *lm = malloc(sizeof(*lm));

	if (lm == NULL) {
		return ls_fail(c, SV_ENOMEM, "out of memory");
	}
	arena[0] = lm;
	ls_lease_fill(l, li, lm);
	rep->body_case = SUPERVISE__V1__ENVELOPE__BODY_LEASE;
	rep->lease     = &lm->m;
	return SV_OK;
}

/* ls_prepared checks that the grant of li was not aborted (its resource
 * could not be made): if it was, the refusal ls_prepare gave. */
static sv_err
ls_prepared(svd_leases *l, const svd_lease_caller *c, const sv_lease_info *li)
{
	char   msg[400];
	sv_err err;

	if (ls_was_aborted(l, li->id, &err, msg, sizeof(msg))) {
		return ls_fail(c, err, "%s", msg);
	}
	return SV_OK;
}

static sv_err
ls_acquire(svd_leases *l, const svw_env *req, const svd_lease_caller *c,
    svd_lease_defer *d, svw_env *rep, void **arena)
{
	const Supervise__V1__AcquireLease *a = req->acquire_lease;
	ls_pool                            pv, *p = NULL;
	sv_lease_holder                    h;
	sv_lease_req                       lr;
	sv_lease_info                      li;
	uint64_t                           waiter = 0, now = sv_loop_now_ms();
	ls_deferred                       *slot = NULL;
	sv_err                             err;

	if ((err = ls_pool_named(l, c, a->pool, &pv, &p)) != SV_OK
	    || (err = ls_holder(l, c, a->session, &h)) != SV_OK) {
		return err;
	}
	if (a->has_slot && a->slot >= p->slots) {
		return ls_fail(c, SV_EBADREQ,
		    "pool %s has slots 0..%" PRIu32 ", not %" PRIu32, p->name,
		    p->slots - 1, a->slot);
	}
	if (a->wait_ms > SV_LEASE_MAX_MS) {
		return ls_fail(c, SV_ETOOLARGE, "wait_ms over one day");
	}
	lr = (sv_lease_req) {p->id, a->has_slot, a->slot,
	    a->wait_ms > 0 && d != NULL, now + a->wait_ms};
	if (lr.wait) {
		for (size_t i = 0; i < SVD_LEASE_MAX_DEFERRED; i++) {
			if (!l->deferred[i].used) {
				slot = &l->deferred[i];
				break;
			}
		}
		if (slot == NULL) {
			/* No context to park it in: answer at once. */
			lr.wait = false;
		}
	}
	err = sv_lease_acquire(l->core, &h, &lr, now, &li, &waiter);
	if (err == SV_OK && waiter != 0 && (slot == NULL || d == NULL)) {
		/* Cannot happen (a wait needs both); never leave it queued. */
		LS_CORE_RETRY("a withdrawn wait",
		    sv_lease_cancel_wait(l->core, waiter, now));
		ls_effects(l);
		return ls_fail(
		    c, SV_EINTERNAL, "cannot park a waiting acquire");
	}
	if (err == SV_OK && waiter != 0) {
		ls_deferred *dup = ls_deferred_find(l, waiter);
		if (dup != NULL) {
			/* Asked again while waiting (a resend): the old
			 * request is answered by nothing; this one waits. */
			dup->done(dup->arg, NULL);
			dup->used = false;
		}
		*slot = (ls_deferred) {true, waiter, req->request_id, d->done,
		    d->arg, d->pipe, p->id, a->wait_ms};
		d->taken = true;
		ls_effects(l);
		return SV_OK;
	}
	ls_effects(l);
	if ((err == SV_EBUSY || err == SV_EEXHAUSTED) && a->wait_ms > 0
	    && d != NULL && slot == NULL) {
		return ls_fail(c, SV_EBUSY,
		    "%u acquires already wait; try again",
		    SVD_LEASE_MAX_DEFERRED);
	}
	if (err != SV_OK) {
		return ls_core_err(c, err, p, "acquire");
	}
	if ((err = ls_prepared(l, c, &li)) != SV_OK) {
		return err;
	}
	return ls_reply_lease(l, c, &li, rep, arena);
}

/* ls_lease_pool finds the pool of lease id by walking the leases (for
 * error messages): its view in *buf and buf, or NULL. */
static const ls_pool *
ls_lease_pool(svd_leases *l, uint64_t id, ls_pool *buf)
{
	sv_lease_iter it = SV_LEASE_ITER_INIT;
	sv_lease_info li;

	while (sv_lease_next(l->core, &it, NULL, &li, NULL)) {
		if (li.id == id) {
			return ls_pool_view(l, li.pool_id, buf);
		}
	}
	return NULL;
}

static sv_err
ls_renew(svd_leases *l, const svw_env *req, const svd_lease_caller *c,
    svw_env *rep, void **arena)
{
	const Supervise__V1__RenewLease *r = req->renew_lease;
	sv_lease_holder                  h;
	sv_lease_info                    li;
	ls_pool                          pv;
	sv_err                           err;

	if ((err = ls_holder(l, c, r->session, &h)) != SV_OK) {
		return err;
	}
	err = sv_lease_renew(l->core, &h, r->id, sv_loop_now_ms(), &li);
	ls_effects(l);
	if (err != SV_OK) {
		return ls_core_err(
		    c, err, ls_lease_pool(l, r->id, &pv), "renew");
	}
	return ls_reply_lease(l, c, &li, rep, arena);
}

static sv_err
ls_release(svd_leases *l, const svw_env *req, const svd_lease_caller *c,
    svw_env *rep, void **arena)
{
	const Supervise__V1__ReleaseLease *r = req->release_lease;
	sv_lease_holder                    h;
	ls_pool                            pv;
	const ls_pool                     *p = ls_lease_pool(l, r->id, &pv);
	Supervise__V1__Ack                *ack;
	sv_err                             err;

	if ((err = ls_holder(l, c, r->session, &h)) != SV_OK) {
		return err;
	}
	err = sv_lease_release(l->core, &h, r->id, sv_loop_now_ms());
	ls_effects(l);
	if (err != SV_OK) {
		return ls_core_err(c, err, p, "release");
	}
	if ((ack = malloc(sizeof(*ack))) == NULL) {
		return ls_fail(c, SV_ENOMEM, "out of memory");
	}
	supervise__v1__ack__init(ack);
	arena[0]       = ack;
	rep->body_case = SUPERVISE__V1__ENVELOPE__BODY_ACK;
	rep->ack       = ack;
	return SV_OK;
}

/* A LeaseList reply and its storage. */
typedef struct ls_list_msg {
	Supervise__V1__LeaseList list;
	Supervise__V1__Lease   **ptrs;
	ls_lease_msg            *items;
} ls_list_msg;

static sv_err
ls_list(svd_leases *l, const svw_env *req, const svd_lease_caller *c,
    svw_env *rep, void **arena)
{
	const Supervise__V1__ListLeases *r = req->list_leases;
	sv_lease_holder                  h;
	const sv_lease_holder           *filter = NULL;
	uint32_t                         pool   = 0;
	sv_lease_iter                    it     = SV_LEASE_ITER_INIT;
	sv_lease_info                    li;
	size_t                           n = 0, cap;
	ls_list_msg                     *m;
	sv_err                           err;

	if (r->pool[0] != '\0') {
		ls_pool pv, *p = NULL;
		if ((err = ls_pool_named(l, c, r->pool, &pv, &p)) != SV_OK) {
			return err;
		}
		pool = p->id;
	}
	if (!c->admin || r->session != 0) {
		if ((err = ls_holder(l, c, r->session, &h)) != SV_OK) {
			return err;
		}
		filter = &h;
	}
	cap = sv_lease_count(l->core);
	if ((m = calloc(1, sizeof(*m))) == NULL) {
		return ls_fail(c, SV_ENOMEM, "out of memory");
	}
	arena[0] = m;
	m->ptrs  = calloc(cap > 0 ? cap : 1, sizeof(Supervise__V1__Lease *));
	m->items = calloc(cap > 0 ? cap : 1, sizeof(*m->items));
	arena[1] = m->ptrs;
	arena[2] = m->items;
	if (m->ptrs == NULL || m->items == NULL) {
		return ls_fail(c, SV_ENOMEM, "out of memory");
	}
	supervise__v1__lease_list__init(&m->list);
	while (n < cap && sv_lease_next(l->core, &it, filter, &li, NULL)) {
		if (pool != 0 && li.pool_id != pool) {
			continue;
		}
		ls_lease_fill(l, &li, &m->items[n]);
		m->ptrs[n] = &m->items[n].m;
		n++;
	}
	m->list.n_leases = n;
	m->list.leases   = m->ptrs;
	rep->body_case   = SUPERVISE__V1__ENVELOPE__BODY_LEASE_LIST;
	rep->lease_list  = &m->list;
	return SV_OK;
}

static sv_err
ls_claim(svd_leases *l, const svw_env *req, const svd_lease_caller *c,
    svw_env *rep, void **arena)
{
	const Supervise__V1__ClaimLease *r = req->claim_lease;
	ls_pool                          pv, *p = NULL;
	sv_lease_holder                  h;
	sv_lease_info                    li;
	sv_err                           err;

	if ((err = ls_pool_named(l, c, r->pool, &pv, &p)) != SV_OK
	    || (err = ls_holder(l, c, r->session, &h)) != SV_OK) {
		return err;
	}
	err = sv_lease_claim(
	    l->core, &h, p->id, r->slot, r->token, sv_loop_now_ms(), &li);
	ls_effects(l);
	if (err == SV_ENOTFOUND) {
		return ls_fail(c, err,
		    "pool %s: slot %" PRIu32
		    " holds no lease to claim (it ended; acquire a new one)",
		    p->name, r->slot);
	}
	if (err != SV_OK) {
		return ls_core_err(c, err, p, "claim");
	}
	return ls_reply_lease(l, c, &li, rep, arena);
}

/* svd_leases_handle: see leases.h. */
bool
svd_leases_handle(svd_leases *l, const svw_env *req, const svd_lease_caller *c,
    svd_lease_defer *d, svw_env *rep, void **arena, sv_err *errp)
{
	switch (req->body_case) {
	case SUPERVISE__V1__ENVELOPE__BODY_ACQUIRE_LEASE:
		*errp = ls_acquire(l, req, c, d, rep, arena);
		return true;
	case SUPERVISE__V1__ENVELOPE__BODY_RENEW_LEASE:
		*errp = ls_renew(l, req, c, rep, arena);
		return true;
	case SUPERVISE__V1__ENVELOPE__BODY_RELEASE_LEASE:
		*errp = ls_release(l, req, c, rep, arena);
		return true;
	case SUPERVISE__V1__ENVELOPE__BODY_LIST_LEASES:
		*errp = ls_list(l, req, c, rep, arena);
		return true;
	case SUPERVISE__V1__ENVELOPE__BODY_CLAIM_LEASE:
		*errp = ls_claim(l, req, c, rep, arena);
		return true;
	case SUPERVISE__V1__ENVELOPE__BODY_CREATE_POOL:
		*errp = ls_create_pool(l, req, c, rep, arena);
		return true;
	case SUPERVISE__V1__ENVELOPE__BODY_LIST_POOLS:
		*errp = ls_list_pools(l, c, rep, arena);
		return true;
	case SUPERVISE__V1__ENVELOPE__BODY_OPEN_SESSION:
	case SUPERVISE__V1__ENVELOPE__BODY_RENEW_SESSION:
	case SUPERVISE__V1__ENVELOPE__BODY_CLOSE_SESSION:
		*errp = ls_session_req(l, req, c, rep, arena);
		return true;
	default:
		return false;
	}
}
