/*
 * lease.c — the C client's lease, session and pool calls (supervise/
 * client.h, "Leases"; docs/protocol.md, section 11), over client.c's call
 * (client_call.h).
 *
 * A lease handle is a copy of one Lease message (its strings copied into
 * the handle), so it outlives the reply it came in; a list keeps its reply
 * envelope and hands out leases that point into it. Which requests are
 * sent again after a lost connection (the retry column of
 * libsupervise/src/requests.def): acquire, renew, release, claim,
 * list, session renew and close are idempotent on the server's side (an
 * acquire by a holder that already holds the pool's lease, or already
 * waits, gets that lease or that wait); opening a session and creating a
 * pool are not, and report SV_ECLOSED instead.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "client/client_call.h"
#include "supervise/client.h"
#include "wire/wire.h"

/* Deadline margin left for the supervisor's DEADLINE answer of a wait. */
#define LC_WAIT_MARGIN_MS 100

struct sv_lease {
	uint64_t id, token, expires_in_ms, epoch;
	uint32_t slot;
	int      unclaimed;
	char    *pool, *resource, *holder; /* owned (or into a list) */
	bool     owned;
};

struct sv_leases {
	svw_env  *env;
	sv_lease *items; /* [n], strings point into env */
	size_t    n;
};

struct sv_pools {
	svw_env *env;
};

/* lc_view fills l from m, its strings pointing into m. */
static void
lc_view(sv_lease *l, const Supervise__V1__Lease *m)
{
	l->id            = m->id;
	l->token         = m->token;
	l->expires_in_ms = m->expires_in_ms;
	l->epoch         = m->epoch;
	l->slot          = m->slot;
	l->unclaimed     = m->unclaimed ? 1 : 0;
	l->pool          = m->pool;
	l->resource      = m->resource;
	l->holder        = m->holder;
	l->owned         = false;
}

/* lc_copy makes an owned lease handle of m. */
static sv_err
lc_copy(const Supervise__V1__Lease *m, sv_lease **leasep)
{
	sv_lease *l = calloc(1, sizeof(*l));

	if (l == NULL) {
		return SV_ENOMEM;
	}
	lc_view(l, m);
	l->owned    = true;
	l->pool     = strdup(m->pool);
	l->resource = strdup(m->resource);
	l->holder   = strdup(m->holder);
	if (l->pool == NULL || l->resource == NULL || l->holder == NULL) {
		sv_lease_free(l);
		return SV_ENOMEM;
	}
	*leasep = l;
	return SV_OK;
}

/* lc_lease_call sends req, expects a Lease, and copies it to *leasep
 * (NULL: dropped). */
static sv_err
lc_lease_call(
    sv_client *client, svw_env *req, int timeout_ms, sv_lease **leasep)
{
	svw_env *rep = NULL;
	sv_err   err;

	err = svc_call(client, req, timeout_ms, &rep);
	if (err != SV_OK) {
		return err;
	}
	if (leasep != NULL) {
		err = lc_copy(rep->lease, leasep);
	}
	svw_free(rep);
	return err == SV_OK ? SV_OK : svc_fail(client, err, "out of memory");
}

/* lc_pool_ok validates a pool name argument. */
static sv_err
lc_pool_ok(sv_client *client, const char *pool)
{
	if (pool == NULL || svw_check_name(pool) != SV_OK) {
		return svc_fail(client, SV_EINVAL,
		    "pool name must be 1..64 characters of [A-Za-z0-9_.-]");
	}
	return SV_OK;
}

sv_err
sv_client_lease_acquire(sv_client *client, const char *pool, int64_t slot,
    uint32_t wait_ms, uint64_t session, int timeout_ms, sv_lease **leasep)
{
	svw_env                     req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__AcquireLease a   = SUPERVISE__V1__ACQUIRE_LEASE__INIT;
	sv_err                      err;

	if (client == NULL || leasep == NULL) {
		return SV_EINVAL;
	}
	if ((err = lc_pool_ok(client, pool)) != SV_OK) {
		return err;
	}
	if (slot < SV_LEASE_ANY_SLOT || slot > (int64_t) UINT32_MAX) {
		return svc_fail(client, SV_EINVAL, "slot out of range");
	}
	if (timeout_ms >= 0 && wait_ms > 0) {
		/* The wait must end before the call's deadline does. */
		int64_t fit = (int64_t) timeout_ms - LC_WAIT_MARGIN_MS;
		if ((int64_t) wait_ms > fit) {
			wait_ms = fit > 0 ? (uint32_t) fit : 0;
		}
	}
	a.pool            = (char *) pool;
	a.has_slot        = slot >= 0;
	a.slot            = slot >= 0 ? (uint32_t) slot : 0;
	a.wait_ms         = wait_ms;
	a.session         = session;
	req.body_case     = SUPERVISE__V1__ENVELOPE__BODY_ACQUIRE_LEASE;
	req.acquire_lease = &a;
	return lc_lease_call(client, &req, timeout_ms, leasep);
}

sv_err
sv_client_lease_renew(sv_client *client, uint64_t id, uint64_t session,
    int timeout_ms, sv_lease **leasep)
{
	svw_env                   req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__RenewLease r   = SUPERVISE__V1__RENEW_LEASE__INIT;

	if (client == NULL || id == 0) {
		return SV_EINVAL;
	}
	r.id            = id;
	r.session       = session;
	req.body_case   = SUPERVISE__V1__ENVELOPE__BODY_RENEW_LEASE;
	req.renew_lease = &r;
	return lc_lease_call(client, &req, timeout_ms, leasep);
}

sv_err
sv_client_lease_release(
    sv_client *client, uint64_t id, uint64_t session, int timeout_ms)
{
	svw_env                     req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__ReleaseLease r   = SUPERVISE__V1__RELEASE_LEASE__INIT;

	if (client == NULL || id == 0) {
		return SV_EINVAL;
	}
	r.id              = id;
	r.session         = session;
	req.body_case     = SUPERVISE__V1__ENVELOPE__BODY_RELEASE_LEASE;
	req.release_lease = &r;
	return svc_send(client, &req, timeout_ms);
}

sv_err
sv_client_lease_claim(sv_client *client, const char *pool, uint32_t slot,
    uint64_t token, uint64_t session, int timeout_ms, sv_lease **leasep)
{
	svw_env                   req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__ClaimLease c   = SUPERVISE__V1__CLAIM_LEASE__INIT;
	sv_err                    err;

	if (client == NULL) {
		return SV_EINVAL;
	}
	if ((err = lc_pool_ok(client, pool)) != SV_OK) {
		return err;
	}
	c.pool          = (char *) pool;
	c.slot          = slot;
	c.token         = token;
	c.session       = session;
	req.body_case   = SUPERVISE__V1__ENVELOPE__BODY_CLAIM_LEASE;
	req.claim_lease = &c;
	return lc_lease_call(client, &req, timeout_ms, leasep);
}

sv_err
sv_client_lease_list(sv_client *client, const char *pool, uint64_t session,
    int timeout_ms, sv_leases **listp)
{
	svw_env                   req  = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__ListLeases r    = SUPERVISE__V1__LIST_LEASES__INIT;
	void                     *kept = NULL;
	sv_leases                *out;
	sv_err                    err;

	if (client == NULL || listp == NULL) {
		return SV_EINVAL;
	}
	if (pool != NULL && pool[0] != '\0'
	    && (err = lc_pool_ok(client, pool)) != SV_OK) {
		return err;
	}
	r.pool          = pool != NULL ? (char *) pool : (char *) "";
	r.session       = session;
	req.body_case   = SUPERVISE__V1__ENVELOPE__BODY_LIST_LEASES;
	req.list_leases = &r;
	err             = svc_call_kept(
	                client, &req, timeout_ms, sizeof(sv_leases), &kept);
	if (err != SV_OK) {
		return err;
	}
	out    = kept;
	out->n = out->env->lease_list->n_leases;
	if ((out->items = calloc(out->n + 1, sizeof(*out->items))) == NULL) {
		sv_leases_free(out);
		return svc_fail(client, SV_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < out->n; i++) {
		lc_view(&out->items[i], out->env->lease_list->leases[i]);
	}
	*listp = out;
	return SV_OK;
}

size_t
sv_leases_count(const sv_leases *list)
{
	return list != NULL ? list->n : 0;
}

const sv_lease *
sv_leases_at(const sv_leases *list, size_t i)
{
	return list != NULL && i < list->n ? &list->items[i] : NULL;
}

void
sv_leases_free(sv_leases *list)
{
	if (list != NULL) {
		svw_free(list->env);
		free(list->items);
		free(list);
	}
}

/*
 * LC_FIELD defines sv_lease_NAME(l): field FIELD of the lease, or DFLT
 * when l is NULL.
 */
#define LC_FIELD(type, name, field, dflt)                    \
	type sv_lease_##name(const sv_lease *l)              \
	{                                                    \
		return l != NULL ? (type) l->field : (dflt); \
	}

LC_FIELD(uint64_t, id, id, 0)
LC_FIELD(const char *, pool, pool, "")
LC_FIELD(uint32_t, slot, slot, 0)
LC_FIELD(uint64_t, token, token, 0)
LC_FIELD(uint64_t, expires_in_ms, expires_in_ms, 0)
LC_FIELD(const char *, resource, resource, "")
LC_FIELD(const char *, holder_name, holder, "")
LC_FIELD(int, unclaimed, unclaimed, 0)
LC_FIELD(uint64_t, epoch, epoch, 0)

void
sv_lease_free(sv_lease *l)
{
	if (l == NULL) {
		return;
	}
	if (l->owned) {
		free(l->pool);
		free(l->resource);
		free(l->holder);
	}
	free(l);
}

/* ---- sessions
 * ---------------------------------------------------------------
 */

/* lc_session_call sends a session request; *idp (may be NULL) gets the
 * session id of the reply. */
static sv_err
lc_session_call(sv_client *client, svw_env *req, int timeout_ms, uint64_t *idp)
{
	svw_env *rep = NULL;
	sv_err   err;

	err = svc_call(client, req, timeout_ms, &rep);
	if (err != SV_OK) {
		return err;
	}
	if (idp != NULL) {
		*idp = rep->session->id;
	}
	svw_free(rep);
	return SV_OK;
}

sv_err
sv_client_session_open(
    sv_client *client, uint64_t ttl_ms, int timeout_ms, uint64_t *idp)
{
	svw_env                    req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__OpenSession o   = SUPERVISE__V1__OPEN_SESSION__INIT;

	if (client == NULL || idp == NULL || ttl_ms == 0) {
		return SV_EINVAL;
	}
	o.ttl_ms         = ttl_ms;
	req.body_case    = SUPERVISE__V1__ENVELOPE__BODY_OPEN_SESSION;
	req.open_session = &o;
	return lc_session_call(client, &req, timeout_ms, idp);
}

sv_err
sv_client_session_renew(sv_client *client, uint64_t id, int timeout_ms)
{
	svw_env                     req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__RenewSession r   = SUPERVISE__V1__RENEW_SESSION__INIT;

	if (client == NULL || id == 0) {
		return SV_EINVAL;
	}
	r.id              = id;
	req.body_case     = SUPERVISE__V1__ENVELOPE__BODY_RENEW_SESSION;
	req.renew_session = &r;
	return lc_session_call(client, &req, timeout_ms, NULL);
}

sv_err
sv_client_session_close(sv_client *client, uint64_t id, int timeout_ms)
{
	svw_env                     req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__CloseSession c   = SUPERVISE__V1__CLOSE_SESSION__INIT;

	if (client == NULL || id == 0) {
		return SV_EINVAL;
	}
	c.id              = id;
	req.body_case     = SUPERVISE__V1__ENVELOPE__BODY_CLOSE_SESSION;
	req.close_session = &c;
	return lc_session_call(client, &req, timeout_ms, NULL);
}

/* ---- pools
 * ------------------------------------------------------------------
 */

sv_err
sv_client_pool_create(sv_client *client, const char *name, uint32_t slots,
    uint64_t ttl_ms, uint64_t grace_ms, const char *path,
    const char *on_release, const char *kind, int timeout_ms)
{
	svw_env                   req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__CreatePool c   = SUPERVISE__V1__CREATE_POOL__INIT;
	sv_err                    err;

	if (client == NULL || slots == 0) {
		return SV_EINVAL;
	}
	if ((err = lc_pool_ok(client, name)) != SV_OK) {
		return err;
	}
	c.name          = (char *) name;
	c.slots         = slots;
	c.ttl_ms        = ttl_ms;
	c.grace_ms      = grace_ms;
	c.path          = path != NULL ? (char *) path : (char *) "";
	c.on_release    = on_release != NULL ? (char *) on_release : "keep";
	c.kind          = kind != NULL ? (char *) kind : "file";
	req.body_case   = SUPERVISE__V1__ENVELOPE__BODY_CREATE_POOL;
	req.create_pool = &c;
	return svc_send(client, &req, timeout_ms);
}

sv_err
sv_client_pools(sv_client *client, int timeout_ms, sv_pools **poolsp)
{
	svw_env                  req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__ListPools l   = SUPERVISE__V1__LIST_POOLS__INIT;
	void                    *out = NULL;
	sv_err                   err;

	if (client == NULL || poolsp == NULL) {
		return SV_EINVAL;
	}
	req.body_case  = SUPERVISE__V1__ENVELOPE__BODY_LIST_POOLS;
	req.list_pools = &l;
	err = svc_call_kept(client, &req, timeout_ms, sizeof(sv_pools), &out);
	if (err == SV_OK) {
		*poolsp = out;
	}
	return err;
}

size_t
sv_pools_count(const sv_pools *p)
{
	return p != NULL ? p->env->pool_list->n_pools : 0;
}

/* LC_POOL defines sv_pools_NAME(p, i): field FIELD of the i-th pool, or
 * dflt when i is out of range. */
#define LC_POOL(type, name, field, dflt)                            \
	type sv_pools_##name(const sv_pools *p, size_t i)           \
	{                                                           \
		if (p == NULL || i >= p->env->pool_list->n_pools) { \
			return dflt;                                \
		}                                                   \
		return p->env->pool_list->pools[i]->field;          \
	}

LC_POOL(const char *, name, name, "")
LC_POOL(uint32_t, slots, slots, 0)
LC_POOL(uint32_t, held, held, 0)
LC_POOL(uint64_t, ttl_ms, ttl_ms, 0)
LC_POOL(uint64_t, grace_ms, grace_ms, 0)
LC_POOL(const char *, path, path, "")
LC_POOL(const char *, on_release, on_release, "")
LC_POOL(const char *, kind, kind, "")

void
sv_pools_free(sv_pools *p)
{
	if (p != NULL) {
		svw_free(p->env);
		free(p);
	}
}
