/*
 * wire_msg.c — encoding an envelope into an nng message (see wire_msg.h).
 *
 * Kept apart from wire.c so that the client library, which speaks the wire
 * protocol itself (client/transport.c), needs no nng at all: only the
 * daemon and the tests link this file.
 */
#include <stdio.h>
#include <string.h>

#include "wire/wire_msg.h"

sv_err
svw_encode(const svw_env *env, size_t max, nng_msg **msgp)
{
	nng_msg *msg;
	size_t   len = supervise__v1__envelope__get_packed_size(env);

	if (len > max) {
		return SV_ETOOLARGE;
	}
	if (nng_msg_alloc(&msg, len) != 0) {
		return SV_ENOMEM;
	}
	supervise__v1__envelope__pack(env, nng_msg_body(msg));
	*msgp = msg;
	return SV_OK;
}

sv_err
svw_encode_error(
    uint64_t request_id, sv_err err, const char *msg, nng_msg **msgp)
{
	svw_env              env = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__Error e   = SUPERVISE__V1__ERROR__INIT;
	char                 text[SVW_MAX_TEXT + 1];

	snprintf(
	    text, sizeof(text), "%s", msg != NULL ? msg : sv_strerror(err));
	e.code         = svw_err_to_code(err);
	e.message      = text;
	env.version    = SV_PROTOCOL_VERSION;
	env.request_id = request_id;
	env.body_case  = SUPERVISE__V1__ENVELOPE__BODY_ERROR;
	env.error      = &e;
	return svw_encode(&env, SVW_MAX_REPLY, msgp);
}
