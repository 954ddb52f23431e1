/*
 * leases_sessions.c — the session requests (OpenSession, RenewSession,
 * CloseSession): sessions are the core's; this answers them, with the
 * caller's kernel-verified uid as the owner.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>

#include "leases_internal.h"
#include "shell/loop.h"

/* A Session reply. */
static sv_err
ls_reply_session(const svd_lease_caller *c, uint64_t id, uint64_t ttl_ms,
    svw_env *rep, void **arena)
{
	Supervise__V1__Session *s = malloc(sizeof(*s));

	if (s == NULL) {
		return ls_fail(c, SV_ENOMEM, "out of memory");
	}
	supervise__v1__session__init(s);
	arena[0]       = s;
	s->id          = id;
	s->ttl_ms      = ttl_ms;
	rep->body_case = SUPERVISE__V1__ENVELOPE__BODY_SESSION;
	rep->session   = s;
	return SV_OK;
}

/* ls_session_err answers another error of the core about a session; on
 * SV_ENOMEM nothing was changed and the client may try again. */
static sv_err
ls_session_err(const svd_lease_caller *c, sv_err err, const char *what)
{
	if (err == SV_ENOMEM) {
		return ls_fail(c, err,
		    "the supervisor is out of memory; nothing was changed, "
		    "try again later");
	}
	return ls_fail(
	    c, err, "cannot %s a session: %s", what, sv_strerror(err));
}

sv_err
ls_session_req(svd_leases *l, const svw_env *req, const svd_lease_caller *c,
    svw_env *rep, void **arena)
{
	uint64_t              now = sv_loop_now_ms(), id = 0;
	sv_lease_session_info si = {0};
	sv_err                err;

	if (c->uid > UINT32_MAX) {
		return ls_fail(c, SV_EPERM, "the caller's uid is not known");
	}
	switch (req->body_case) {
	case SUPERVISE__V1__ENVELOPE__BODY_OPEN_SESSION:
		err = sv_lease_session_open(l->core, (uint32_t) c->uid,
		    req->open_session->ttl_ms, now, &id);
		ls_effects(l);
		if (err == SV_EINVAL) {
			return ls_fail(c, SV_EBADREQ, "ttl_ms must be > 0");
		}
		if (err == SV_ETOOLARGE) {
			return ls_fail(c, err, "ttl_ms over one day");
		}
		if (err != SV_OK) {
			return ls_session_err(c, err, "open");
		}
		return ls_reply_session(
		    c, id, req->open_session->ttl_ms, rep, arena);
	case SUPERVISE__V1__ENVELOPE__BODY_RENEW_SESSION:
		id  = req->renew_session->id;
		err = sv_lease_session_renew(
		    l->core, id, (uint32_t) c->uid, now);
		ls_effects(l);
		if (err == SV_ENOTFOUND) {
			return ls_fail(
			    c, err, "no lease session %" PRIu64, id);
		}
		if (err == SV_EPERM) {
			return ls_fail(c, err,
			    "lease session %" PRIu64 " is another uid's", id);
		}
		if (err != SV_OK) {
			return ls_session_err(c, err, "renew");
		}
		(void) sv_lease_session_get(l->core, id, &si);
		return ls_reply_session(c, id, si.ttl_ms, rep, arena);
	default: /* CLOSE_SESSION */
		id  = req->close_session->id;
		err = sv_lease_session_close(
		    l->core, id, (uint32_t) c->uid, now);
		ls_effects(l);
		if (err == SV_EPERM) {
			return ls_fail(c, err,
			    "lease session %" PRIu64 " is another uid's", id);
		}
		if (err != SV_OK) {
			return ls_session_err(c, err, "close");
		}
		return ls_reply_session(c, id, 0, rep, arena);
	}
}
