/*
 * wire_msg.h — envelopes into nng messages, for the daemon (the server side
 * of the control socket) and the tests. The client library does not use
 * it: it frames messages itself (client/transport.c) and links no nng.
 */
#ifndef SV_WIRE_WIRE_MSG_H
#define SV_WIRE_WIRE_MSG_H

#include <nng/nng.h>

#include "wire/wire.h"

/*
 * svw_encode packs env into a new nng message of at most max bytes. On SV_OK
 * *msgp belongs to the caller (send it, or nng_msg_free it).
 * Errors: SV_ETOOLARGE (packed size > max), SV_ENOMEM.
 */
sv_err svw_encode(const svw_env *env, size_t max, nng_msg **msgp);

/*
 * svw_encode_error packs an Error reply for request_id with code err and the
 * text msg (truncated to SVW_MAX_TEXT). On SV_OK *msgp belongs to the caller.
 * Errors: SV_ENOMEM.
 */
sv_err svw_encode_error(
    uint64_t request_id, sv_err err, const char *msg, nng_msg **msgp);

#endif /* SV_WIRE_WIRE_MSG_H */
