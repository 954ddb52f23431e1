/*
 * client_call.h — what client.c shares with the request files of the C
 * client (identity.c, workers.c, admin.c, groupspec.c, readiness.c,
 * lease.c, drain.c, subworker.c): one request/reply call on a client
 * handle, the handle's error detail, and the checks and handles more than
 * one of them uses. Internal; not installed.
 */
#ifndef SV_CLIENT_CALL_H
#define SV_CLIENT_CALL_H

#include <stdbool.h>

#include "supervise/client.h"
#include "wire/wire.h"

/*
 * svc_call sends req (a request: its body has a row in
 * libsupervise/src/requests.def) on c and waits within timeout_ms (the
 * whole call) for the reply the row names, sending it again after a lost
 * connection when the row's retry rule allows (sv_req_resend). On SV_OK
 * *replyp is the decoded reply (free it with svw_free). A typed Error reply
 * is returned as its sv_err with the server's message kept in c
 * (sv_client_error_message).
 */
sv_err svc_call(sv_client *c, svw_env *req, int timeout_ms, svw_env **replyp);

/*
 * svc_send is svc_call for a request whose reply carries nothing the
 * caller needs: the reply is checked and freed.
 */
sv_err svc_send(sv_client *c, svw_env *req, int timeout_ms);

/*
 * svc_call_kept is svc_call for a request whose reply the caller keeps in
 * a handle: a struct of size bytes whose first member is the reply (a
 * svw_env *), such as struct sv_hello. On SV_OK *handlep is a new handle
 * (zeroed but for that member) holding the reply; the caller owns it and
 * frees it with svw_free of its first member, then free(). Errors: those
 * of svc_call, and SV_ENOMEM (the reply is freed; nothing is kept).
 */
sv_err svc_call_kept(
    sv_client *c, svw_env *req, int timeout_ms, size_t size, void **handlep);

/*
 * svc_fail keeps detail as c's error message and returns err. It takes c's
 * lock (so sv_client_error_detail never sees a torn message): call it
 * outside svc_call, never from within.
 */
sv_err svc_fail(sv_client *c, sv_err err, const char *detail);

/*
 * svc_check_group checks the client and a group name argument (1..64
 * characters of [A-Za-z0-9_.-]); with optional set, NULL and "" pass too
 * (every group). Errors: SV_EINVAL for a NULL c; SV_EINVAL for a bad name,
 * with the rule kept as c's error message.
 */
sv_err svc_check_group(sv_client *c, const char *group, int optional);

/*
 * svc_identity wraps env, whose body must be an Identity, into a new
 * sv_identity handle that owns it (subworker.c). Errors: SV_ENOMEM (env is
 * then still the caller's).
 */
sv_err svc_identity(svw_env *env, sv_identity **identityp);

#endif /* SV_CLIENT_CALL_H */
