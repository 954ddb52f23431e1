/*
 * wire.c — envelope codec with bounds and typed errors (see wire.h).
 *
 * protobuf-c has no size or depth limit of its own: the length check here is
 * the bound (the schema has no recursive message, so depth is bounded by it).
 * An empty buffer is a valid protobuf encoding of an Envelope with version 0
 * and no body; version 0 means "no version", so it is SV_EBADREQ.
 */
#include <stdio.h>
#include <string.h>

#include "wire/wire.h"

sv_err
svw_decode(const void *buf, size_t len, size_t max, svw_env **envp,
    uint64_t *request_idp)
{
	svw_env *env;

	*request_idp = 0;
	if (len > max) {
		return SV_ETOOLARGE;
	}
	env = supervise__v1__envelope__unpack(NULL, len, buf);
	if (env == NULL) {
		return SV_EBADREQ;
	}
	*request_idp = env->request_id;
	if (env->version == 0) {
		/* No version at all (an empty buffer decodes this way). */
		svw_free(env);
		return SV_EBADREQ;
	}
	if (env->version != SV_PROTOCOL_VERSION) {
		svw_free(env);
		return SV_EVERSION;
	}
	if (env->body_case == SUPERVISE__V1__ENVELOPE__BODY__NOT_SET) {
		svw_free(env);
		return SV_EUNKNOWNMSG;
	}
	*envp = env;
	return SV_OK;
}

void
svw_free(svw_env *env)
{
	if (env != NULL) {
		supervise__v1__envelope__free_unpacked(env, NULL);
	}
}

sv_err
svw_check_name(const char *name)
{
	size_t n = 0;

	if (name == NULL || name[0] == '\0') {
		return SV_EBADREQ;
	}
	for (const char *p = name; *p != '\0'; p++, n++) {
		char c = *p;
		if (n >= SVW_MAX_NAME) {
			return SV_ETOOLARGE;
		}
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		        || (c >= '0' && c <= '9') || c == '_' || c == '.'
		        || c == '-')) {
			return SV_EBADREQ;
		}
	}
	return SV_OK;
}

Supervise__V1__ErrorCode
svw_err_to_code(sv_err err)
{
	/* Codes 1..99 are shared by construction (supervise.h). */
	if (err >= SV_EBADREQ && err <= SV_SERVER_ERR_MAX) {
		return (Supervise__V1__ErrorCode) err;
	}
	if (err == SV_EINVAL) {
		return SUPERVISE__V1__ERROR_CODE__ERROR_CODE_BAD_REQUEST;
	}
	return SUPERVISE__V1__ERROR_CODE__ERROR_CODE_INTERNAL;
}

sv_err
svw_code_to_err(Supervise__V1__ErrorCode code)
{
	/* A code from a newer server that this library does not know keeps
	 * its number: it is still a typed refusal by the supervisor
	 * (sv_err_is_refusal), shown as "unknown error" with its number. */
	if ((int) code >= SV_EBADREQ && (int) code <= SV_SERVER_ERR_MAX) {
		return (sv_err) code;
	}
	return SV_EPROTO;
}
