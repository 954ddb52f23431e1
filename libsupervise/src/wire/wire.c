/*
 * wire.c — envelope codec with bounds and typed errors (see wire.h).
 *
 * protobuf-c has no size or depth limit of its own: the length check here is
 * the bound (the schema has no recursive message, so depth is bounded by it).
 * An empty buffer is a valid protobuf encoding of an Envelope with version 0
 * and no body; version 0 means "no version", so it is SV_EBADREQ. A string
 * field holding a NUL byte is SV_EBADREQ too (wire_strings).
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "wire/wire.h"

/* Deepest nesting of messages wire_strings follows (the schema has 3). */
#define WIRE_MAX_DEPTH 8

/* wire_varint reads a varint at *p (below end); false if malformed. */
static bool
wire_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 64 && *p < end; shift += 7) {
		uint8_t b = *(*p)++;
		*v |= (uint64_t) (b & 0x7f) << shift;
		if ((b & 0x80) == 0) {
			return true;
		}
	}
	return false;
}

/*
 * wire_strings walks the encoding of a message of type d and tells whether
 * any string field, at any depth, holds a NUL byte. protobuf-c hands
 * strings over as C strings, so "web\0x" would silently become "web":
 * such a request is refused instead. Malformed encodings are left to the
 * decoder (false here).
 */
static bool
wire_strings(const ProtobufCMessageDescriptor *d, const uint8_t *p,
    const uint8_t *end, int depth)
{
	while (p < end) {
		uint64_t                        key, n;
		const ProtobufCFieldDescriptor *f = NULL;

		if (!wire_varint(&p, end, &key)) {
			return false;
		}
		switch (key & 7) {
		case 0:
			if (!wire_varint(&p, end, &n)) {
				return false;
			}
			continue;
		case 1:
			p += 8;
			continue;
		case 5:
			p += 4;
			continue;
		case 2:
			break;
		default:
			return false;
		}
		if (!wire_varint(&p, end, &n) || n > (uint64_t) (end - p)) {
			return false;
		}
		for (unsigned i = 0; i < d->n_fields; i++) {
			if (d->fields[i].id == (key >> 3)) {
				f = &d->fields[i];
				break;
			}
		}
		if (f != NULL && f->type == PROTOBUF_C_TYPE_STRING
		    && memchr(p, 0, (size_t) n) != NULL) {
			return true;
		}
		if (f != NULL && f->type == PROTOBUF_C_TYPE_MESSAGE
		    && depth < WIRE_MAX_DEPTH
		    && wire_strings(f->descriptor, p, p + n, depth + 1)) {
			return true;
		}
		p += n;
	}
	return false;
}

bool
svw_has_nul_string(const void *buf, size_t len)
{
	return wire_strings(&supervise__v1__envelope__descriptor, buf,
	    (const uint8_t *) buf + len, 0);
}

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
	if (svw_has_nul_string(buf, len)) {
		svw_free(env);
		return SV_EBADREQ;
	}
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
