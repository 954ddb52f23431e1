/*
 * wire.h — the supervise.v1 envelope codec (internal).
 *
 * Every message is one Envelope (proto/supervise/v1/supervise.proto). This
 * file bounds what may be decoded, maps decoding failures to typed errors, and
 * builds Error replies. It does no I/O besides allocating nng messages.
 *
 * Bounds (used by client and daemon alike):
 *   SVW_MAX_REQUEST  largest request a server accepts (64 KiB), also the
 *                    listener's NNG_OPT_RECVMAXSZ
 *   SVW_MAX_REPLY    largest reply a client accepts (4 MiB)
 *   SVW_MAX_NAME     longest group name (64 bytes)
 */
#ifndef SV_WIRE_WIRE_H
#define SV_WIRE_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "supervise/supervise.h"
#include "supervise/v1/supervise.pb-c.h"

#define SVW_MAX_REQUEST (64u * 1024u)
#define SVW_MAX_REPLY   (4u * 1024u * 1024u)
#define SVW_MAX_NAME    64u
#define SVW_MAX_TEXT    1024u /* free-text fields such as client_name */

typedef Supervise__V1__Envelope           svw_env;
typedef Supervise__V1__Envelope__BodyCase svw_body;

/*
 * svw_decode unpacks len bytes into a new envelope. max bounds len.
 * On SV_OK, *envp belongs to the caller: free it with svw_free(). The
 * envelope's version and body are checked:
 *   SV_ETOOLARGE   len > max
 *   SV_EBADREQ     not a valid Envelope encoding
 *   SV_EBADREQ     ... or a string field holds a NUL byte
 *   SV_EBADREQ     ... or version 0 (missing)
 *   SV_EVERSION    version != SV_PROTOCOL_VERSION
 *   SV_EUNKNOWNMSG no body this implementation knows
 * For SV_EVERSION and SV_EUNKNOWNMSG *request_idp still receives the
 * envelope's request id (so the error reply can carry it); otherwise it is
 * set to 0. *envp is set only on SV_OK.
 */
sv_err svw_decode(const void *buf, size_t len, size_t max, svw_env **envp,
    uint64_t *request_idp);

/*
 * svw_has_nul_string tells whether any string field of the Envelope
 * encoded in buf (len bytes), at any depth, holds a NUL byte (svw_decode
 * refuses those with SV_EBADREQ). Malformed encodings give false.
 */
bool svw_has_nul_string(const void *buf, size_t len);

/* svw_free frees an envelope from svw_decode. NULL is ignored. */
void svw_free(svw_env *env);

/*
 * svw_check_name validates a group name: 1..SVW_MAX_NAME bytes of
 * [A-Za-z0-9_.-]. Returns SV_OK, SV_EBADREQ (empty or bad character) or
 * SV_ETOOLARGE.
 */
sv_err svw_check_name(const char *name);

/* svw_err_to_code and svw_code_to_err map between sv_err and ErrorCode. */
Supervise__V1__ErrorCode svw_err_to_code(sv_err err);
sv_err                   svw_code_to_err(Supervise__V1__ErrorCode code);

#endif /* SV_WIRE_WIRE_H */
