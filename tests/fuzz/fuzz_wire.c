/*
 * fuzz_wire.c — libFuzzer harness for the envelope decoder, svw_decode
 * (libsupervise/src/wire/wire.c).
 *
 * Every input is decoded as a request would be (bound SVW_MAX_REQUEST).
 * Besides "no crash, no leak, no undefined behaviour" the harness checks
 * what wire.h and docs/protocol.md section 2 promise, against protobuf-c's
 * own unpacking of the same bytes:
 *   - the result is one of the documented codes, and the code is the one
 *     the checking order gives (not an Envelope: BAD_REQUEST; version 0:
 *     BAD_REQUEST; another version: UNSUPPORTED_VERSION; no body:
 *     UNKNOWN_MESSAGE);
 *   - the request id handed back is the envelope's whenever the bytes are
 *     an Envelope, 0 otherwise (protocol.md: 0 only when it cannot be read);
 *   - a bound one byte short of the input is SV_ETOOLARGE with id 0;
 *   - an accepted envelope packs again, and that encoding is a fixed point
 *     (decode and pack once more: same bytes) that svw_decode accepts;
 *     see check_round_trip for the one exception, unknown fields.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "wire/wire.h"

/* has_unknown tells whether m or a message inside it kept unknown fields.
 */
static bool
has_unknown(const ProtobufCMessage *m)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;

	if (m->n_unknown_fields > 0) {
		return true;
	}
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		const char *p = (const char *) m + f->offset;

		if (f->type != PROTOBUF_C_TYPE_MESSAGE) {
			continue;
		}
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n = *(const size_t *) ((const char *) m
			    + f->quantifier_offset);
			ProtobufCMessage *const *v
			    = *(ProtobufCMessage *const *const *) p;
			for (size_t k = 0; k < n; k++) {
				if (has_unknown(v[k])) {
					return true;
				}
			}
		} else {
			const ProtobufCMessage *sub
			    = *(const ProtobufCMessage *const *) p;
			if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) != 0
			    && *(const uint32_t *) ((const char *) m
			           + f->quantifier_offset)
			        != f->id) {
				continue; /* another member of the oneof */
			}
			if (sub != NULL && has_unknown(sub)) {
				return true;
			}
		}
	}
	return false;
}

/*
 * check_round_trip packs env, decodes the result, packs again and compares.
 * protobuf-c keeps unknown fields and writes them back in canonical form,
 * which is not always decodable (a field number 0 read from an over-long
 * tag such as 82 00 comes back as the invalid tag 02), so an envelope with
 * unknown fields only has to pack; one without must round-trip exactly.
 */
static void
check_round_trip(const svw_env *env)
{
	size_t   n = supervise__v1__envelope__get_packed_size(env);
	uint8_t *a = malloc(n > 0 ? n : 1);
	uint8_t *b;
	svw_env *again = NULL;
	uint64_t rid   = 1;
	sv_err   err;

	FUZZ_CHECK(a != NULL, "out of memory");
	FUZZ_CHECK(supervise__v1__envelope__pack(env, a) == n,
	    "pack wrote its packed size");
	err = svw_decode(a, n, SVW_MAX_REPLY, &again, &rid);
	if (err != SV_OK) {
		FUZZ_CHECK(has_unknown(&env->base),
		    "a re-packed accepted envelope is accepted");
		free(a);
		return;
	}
	FUZZ_CHECK(rid == env->request_id, "re-packed request id kept");
	FUZZ_CHECK(again->version == env->version
	        && again->body_case == env->body_case,
	    "re-packed version and body kept");
	FUZZ_CHECK(supervise__v1__envelope__get_packed_size(again) == n,
	    "packing is a fixed point (size)");
	b = malloc(n > 0 ? n : 1);
	FUZZ_CHECK(b != NULL, "out of memory");
	FUZZ_CHECK(supervise__v1__envelope__pack(again, b) == n,
	    "pack wrote its packed size");
	FUZZ_CHECK(memcmp(a, b, n) == 0, "packing is a fixed point (bytes)");
	svw_free(again);
	free(a);
	free(b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	svw_env *env = NULL, *raw = NULL;
	uint64_t rid = 12345;
	sv_err   err;

	err = svw_decode(data, size, SVW_MAX_REQUEST, &env, &rid);
	if (size <= SVW_MAX_REQUEST) {
		raw = supervise__v1__envelope__unpack(NULL, size, data);
	}
	switch (err) {
	case SV_OK:
		FUZZ_CHECK(
		    env != NULL && raw != NULL, "accepted bytes decode");
		FUZZ_CHECK(env->version == SV_PROTOCOL_VERSION,
		    "accepted envelope has version 1");
		FUZZ_CHECK(
		    env->body_case != SUPERVISE__V1__ENVELOPE__BODY__NOT_SET,
		    "accepted envelope has a body");
		FUZZ_CHECK(env->body_case == raw->body_case,
		    "same body as protobuf-c's own decoding");
		FUZZ_CHECK(rid == raw->request_id, "request id handed back");
		check_round_trip(env);
		svw_free(env);
		break;
	case SV_ETOOLARGE:
		FUZZ_CHECK(
		    size > SVW_MAX_REQUEST, "too large only over bound");
		FUZZ_CHECK(rid == 0, "no id from an oversize request");
		break;
	case SV_EBADREQ:
		FUZZ_CHECK(raw == NULL || raw->version == 0
		        || svw_has_nul_string(data, size),
		    "BAD_REQUEST: not an Envelope, version 0, or a NUL in a "
		    "string");
		FUZZ_CHECK(rid == (raw != NULL ? raw->request_id : 0),
		    "id of a readable envelope kept, else 0");
		break;
	case SV_EVERSION:
		FUZZ_CHECK(raw != NULL && raw->version != 0
		        && raw->version != SV_PROTOCOL_VERSION,
		    "UNSUPPORTED_VERSION only for another version");
		FUZZ_CHECK(rid == raw->request_id, "id kept");
		break;
	case SV_EUNKNOWNMSG:
		FUZZ_CHECK(raw != NULL && raw->version == SV_PROTOCOL_VERSION
		        && raw->body_case
		            == SUPERVISE__V1__ENVELOPE__BODY__NOT_SET,
		    "UNKNOWN_MESSAGE only without a body");
		FUZZ_CHECK(rid == raw->request_id, "id kept");
		break;
	default:
		FUZZ_CHECK(false, "svw_decode returned an undocumented code");
	}
	if (raw != NULL) {
		supervise__v1__envelope__free_unpacked(raw, NULL);
	}
	if (size > 0) {
		env = NULL;
		rid = 12345;
		FUZZ_CHECK(svw_decode(data, size, size - 1, &env, &rid)
		        == SV_ETOOLARGE,
		    "a bound one byte short refuses the input");
		FUZZ_CHECK(env == NULL && rid == 0,
		    "nothing handed back from an oversize input");
	}
	return 0;
}
