/*
 * subworker.c — the C client's sub-worker calls (supervise/client.h,
 * "Sub-workers"; docs/subworkers.md, docs/protocol.md section 13), over
 * client.c's call (client_call.h).
 *
 * A registration's reply carries an Identity; it is moved out of the
 * RegisterSubWorkerReply into an envelope whose body is that Identity, so
 * that the result is an ordinary sv_identity handle with all of its
 * accessors. Both calls are idempotent on the server's side (a re-claim
 * answers the same grant; a stale release is a no-op), so the request
 * table (libsupervise/src/requests.def) has them sent again after a lost
 * connection.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "client/client_call.h"
#include "supervise/client.h"
#include "wire/wire.h"

/* Longest label in bytes (the server's bound, docs/subworkers.md). */
#define SC_LABEL_MAX 64u

/* sc_kind_ok tells whether kind names a sub-worker kind. */
static bool
sc_kind_ok(sv_kind kind)
{
	return kind == SV_KIND_THREAD || kind == SV_KIND_PROCESS;
}

sv_err
sv_client_subworker_register(sv_client *client, sv_kind kind,
    const char *label, int64_t number, int64_t tid, int timeout_ms,
    sv_identity **identityp, int *againp)
{
	svw_env                          req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__RegisterSubWorker r
	    = SUPERVISE__V1__REGISTER_SUB_WORKER__INIT;
	Supervise__V1__RegisterSubWorkerReply *rr;
	svw_env                               *rep = NULL;
	size_t                                 len;
	sv_err                                 err;

	if (client == NULL || identityp == NULL) {
		return SV_EINVAL;
	}
	if (!sc_kind_ok(kind)) {
		return svc_fail(
		    client, SV_EINVAL, "kind is not THREAD or PROCESS");
	}
	len = label != NULL ? strnlen(label, SC_LABEL_MAX + 1) : 0;
	if (len > SC_LABEL_MAX || (kind == SV_KIND_THREAD && len == 0)) {
		return svc_fail(client, SV_EINVAL,
		    "label must be 1..64 bytes (optional for a process)");
	}
	if (number < -1 || number > (int64_t) UINT32_MAX || tid < 0) {
		return svc_fail(
		    client, SV_EINVAL, "number or tid out of range");
	}
	r.kind        = (Supervise__V1__WorkerKind) kind;
	r.label       = label != NULL ? (char *) label : (char *) "";
	r.has_number  = number >= 0;
	r.number      = number >= 0 ? (uint32_t) number : 0;
	r.tid         = kind == SV_KIND_THREAD ? tid : 0;
	req.body_case = SUPERVISE__V1__ENVELOPE__BODY_REGISTER_SUB_WORKER;
	req.register_sub_worker = &r;
	err                     = svc_call(client, &req, timeout_ms, &rep);
	if (err != SV_OK) {
		return err;
	}
	rr = rep->register_sub_worker_reply;
	if (rr->identity == NULL) {
		svw_free(rep);
		return svc_fail(
		    client, SV_EPROTO, "reply without an identity");
	}
	if (againp != NULL) {
		*againp = rr->again ? 1 : 0;
	}
	/* Make the envelope's body the Identity, and free the wrapper. */
	rep->body_case = SUPERVISE__V1__ENVELOPE__BODY_IDENTITY;
	rep->identity  = rr->identity;
	rr->identity   = NULL;
	supervise__v1__register_sub_worker_reply__free_unpacked(rr, NULL);
	if ((err = svc_identity(rep, identityp)) != SV_OK) {
		svw_free(rep);
		return svc_fail(client, err, "out of memory");
	}
	return SV_OK;
}

sv_err
sv_client_subworker_release(
    sv_client *client, const sv_identity *identity, int timeout_ms)
{
	svw_env                         req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__ReleaseSubWorker r
	    = SUPERVISE__V1__RELEASE_SUB_WORKER__INIT;
	sv_kind kind;

	if (client == NULL || identity == NULL) {
		return SV_EINVAL;
	}
	kind = sv_identity_kind(identity);
	if (!sc_kind_ok(kind) || sv_identity_frame_count(identity) != 2) {
		return svc_fail(
		    client, SV_EINVAL, "not the identity of a sub-worker");
	}
	r.kind        = (Supervise__V1__WorkerKind) kind;
	r.number      = sv_identity_ordinal(identity);
	r.generation  = sv_identity_generation(identity);
	req.body_case = SUPERVISE__V1__ENVELOPE__BODY_RELEASE_SUB_WORKER;
	req.release_sub_worker = &r;
	return svc_send(client, &req, timeout_ms);
}
