/*
 * lease_sessions.c — sessions: the holders the core opens for non-worker
 * clients (tools), each owned by a kernel-verified uid and living a TTL
 * unless renewed; at its end (expiry or close) its leases end and its
 * waiters are answered. sv_lease_session_get is what the shell reads a
 * session from (it keeps no copy).
 */
#include "core/lease_internal.h"

/* svl_session_get returns open session id, or NULL. */
lsession *
svl_session_get(const sv_lease_core *c, uint64_t id)
{
	for (uint32_t i = 0; i < c->nsessions; i++) {
		if (c->sessions[i].id == id) {
			return &c->sessions[i];
		}
	}
	return NULL;
}

/* svl_session_add records a session (the caller checked the bounds and
 * reserved 2 effects and the table's room: svl_sessions_reserve). */
sv_err
svl_session_add(sv_lease_core *c, uint64_t id, uint32_t uid, uint64_t ttl_ms,
    uint64_t now_ms)
{
	lsession *s;

	if (c->nsessions == c->capsessions) {
		return SV_ENOMEM; /* not reserved: a bug of the caller */
	}
	s            = &c->sessions[c->nsessions++];
	s->id        = id;
	s->uid       = uid;
	s->ttl_ms    = ttl_ms;
	s->expiry_ms = now_ms + ttl_ms;
	s->guard     = svl_timer_arm(c, SV_LTIMER_SESSION, id, s->expiry_ms);
	{
		sv_lease_info info  = {0};
		info.holder.kind    = SV_HOLDER_SESSION;
		info.holder.session = id;
		svl_emit(c, SV_LEV_SESSION_OPENED, SV_LREASON_NONE, &info);
	}
	return SV_OK;
}

/* session_end_reserve reserves what session_end(id) can need. */
static sv_err
session_end_reserve(sv_lease_core *c, uint64_t id)
{
	sv_lease_holder h   = {.kind = SV_HOLDER_SESSION, .session = id};
	size_t          nfx = 2, nidx = 0;

	svl_holder_end_bound(c, &h, &nfx, &nidx);
	return svl_reserve(c, nfx, nidx);
}

/* session_end ends session id and its leases (reserved by
 * session_end_reserve). */
static void
session_end(
    sv_lease_core *c, uint64_t id, sv_lease_reason why, uint64_t now_ms)
{
	sv_lease_holder h    = {.kind = SV_HOLDER_SESSION, .session = id};
	sv_lease_info   info = {0};

	svl_holder_end(c, &h, why, now_ms);
	for (uint32_t i = 0; i < c->nsessions; i++) {
		if (c->sessions[i].id == id) {
			c->sessions[i] = c->sessions[--c->nsessions];
			break;
		}
	}
	svl_timer_cancel(c, SV_LTIMER_SESSION, id);
	info.holder = h;
	svl_emit(c, SV_LEV_SESSION_ENDED, why, &info);
}

/* sv_lease_session_open: see core/lease.h. */
sv_err
sv_lease_session_open(sv_lease_core *c, uint32_t uid, uint64_t ttl_ms,
    uint64_t now_ms, uint64_t *idp)
{
	uint64_t id;
	sv_err   rv;

	if (ttl_ms == 0) {
		return SV_EINVAL;
	}
	if (ttl_ms > SV_LEASE_MAX_MS) {
		return SV_ETOOLARGE;
	}
	if (c->nsessions >= SV_LEASE_MAX_SESSIONS
	    || c->next_session == UINT32_MAX) {
		return SV_EEXHAUSTED;
	}
	id = ((uint64_t) c->epoch << 32) | (c->next_session + 1u);
	if ((rv = svl_reserve(c, 2, 0)) != SV_OK
	    || (rv = svl_sessions_reserve(c, 1)) != SV_OK
	    || (rv = svl_session_add(c, id, uid, ttl_ms, now_ms)) != SV_OK) {
		return rv;
	}
	c->next_session++;
	*idp = id;
	return SV_OK;
}

/* sv_lease_session_get: see core/lease.h. */
bool
sv_lease_session_get(
    const sv_lease_core *c, uint64_t id, sv_lease_session_info *out)
{
	const lsession *s = svl_session_get(c, id);

	if (s == NULL || id == 0) {
		return false;
	}
	*out
	    = (sv_lease_session_info) {s->id, s->uid, s->ttl_ms, s->expiry_ms};
	return true;
}

/* sv_lease_session_renew: see core/lease.h. */
sv_err
sv_lease_session_renew(
    sv_lease_core *c, uint64_t id, uint32_t uid, uint64_t now_ms)
{
	lsession *s = svl_session_get(c, id);
	sv_err    rv;

	if (s == NULL) {
		return SV_ENOTFOUND;
	}
	if (s->uid != uid) {
		return SV_EPERM;
	}
	if ((rv = svl_reserve(c, 1, 0)) != SV_OK) {
		return rv;
	}
	s->expiry_ms = now_ms + s->ttl_ms;
	s->guard     = svl_timer_arm(c, SV_LTIMER_SESSION, id, s->expiry_ms);
	return SV_OK;
}

/* sv_lease_session_close: see core/lease.h. */
sv_err
sv_lease_session_close(
    sv_lease_core *c, uint64_t id, uint32_t uid, uint64_t now_ms)
{
	lsession *s = svl_session_get(c, id);
	sv_err    rv;

	if (s == NULL) {
		return SV_OK;
	}
	if (s->uid != uid) {
		return SV_EPERM;
	}
	if ((rv = session_end_reserve(c, id)) != SV_OK) {
		return rv;
	}
	session_end(c, id, SV_LREASON_SESSION_CLOSED, now_ms);
	return SV_OK;
}

/* svl_session_timer: the timer of session id fired (guard as armed); the
 * session ends if its TTL has passed, else the timer is armed again.
 * Errors: SV_ENOMEM (nothing changed). */
sv_err
svl_session_timer(
    sv_lease_core *c, uint64_t id, uint64_t guard, uint64_t now_ms)
{
	lsession *s = svl_session_get(c, id);
	sv_err    rv;

	if (s == NULL || s->guard != guard) {
		return SV_OK;
	}
	if (now_ms >= s->expiry_ms) {
		if ((rv = session_end_reserve(c, id)) != SV_OK) {
			return rv;
		}
		session_end(c, id, SV_LREASON_SESSION_EXPIRED, now_ms);
	} else {
		if ((rv = svl_reserve(c, 1, 0)) != SV_OK) {
			return rv;
		}
		s->guard
		    = svl_timer_arm(c, SV_LTIMER_SESSION, id, s->expiry_ms);
	}
	return SV_OK;
}
