/*
 * reqtable.c — the request table of supervise.v1: the rows of
 * libsupervise/src/requests.def as data (every column but the daemon's
 * handler), with the lookups client, daemon and tests share: the reply of a
 * request, Hello's feature list and the client's retry rule.
 */
#include <string.h>

#include "wire/reqtable.h"

/* The rows, in requests.def's order. */
static const sv_req_row req_rows[] = {
#define SV_REQUEST(body, reply, feature, since, who, retry, handler) \
	{SUPERVISE__V1__ENVELOPE__BODY_##body,                       \
	    SUPERVISE__V1__ENVELOPE__BODY_##reply, feature, since,   \
	    SV_REQ_##who, SV_REQ_RETRY_##retry},
#define SV_FEATURE(name, since, body, field)
#include "requests.def"
#undef SV_REQUEST
#undef SV_FEATURE
};
#define REQ_NROWS (sizeof(req_rows) / sizeof(req_rows[0]))

/* The field features, in requests.def's order. */
static const sv_req_field_feature req_field_features[] = {
#define SV_REQUEST(body, reply, feature, since, who, retry, handler)
#define SV_FEATURE(name, since, body, field) \
	{name, since, SUPERVISE__V1__ENVELOPE__BODY_##body, field},
#include "requests.def"
#undef SV_REQUEST
#undef SV_FEATURE
};
#define REQ_NFIELD (sizeof(req_field_features) / sizeof(req_field_features[0]))

/* Every feature string, rows and field features interleaved as in
 * requests.def (duplicates included: sv_req_features drops them). */
static const char *const req_feature_order[] = {
#define SV_REQUEST(body, reply, feature, since, who, retry, handler) feature,
#define SV_FEATURE(name, since, body, field)                         name,
#include "requests.def"
#undef SV_REQUEST
#undef SV_FEATURE
};
#define REQ_NORDER (sizeof(req_feature_order) / sizeof(req_feature_order[0]))

/* sv_req_count: see reqtable.h. */
size_t
sv_req_count(void)
{
	return REQ_NROWS;
}

/* sv_req_at: see reqtable.h. */
const sv_req_row *
sv_req_at(size_t i)
{
	return i < REQ_NROWS ? &req_rows[i] : NULL;
}

/* sv_req_find: see reqtable.h. A scan: 35 rows, and the daemon keeps its
 * own table indexed by body. */
const sv_req_row *
sv_req_find(svw_body body)
{
	for (size_t i = 0; i < REQ_NROWS; i++) {
		if (req_rows[i].body == body) {
			return &req_rows[i];
		}
	}
	return NULL;
}

/* sv_req_field_feature_count: see reqtable.h. */
size_t
sv_req_field_feature_count(void)
{
	return REQ_NFIELD;
}

/* sv_req_field_feature_at: see reqtable.h. */
const sv_req_field_feature *
sv_req_field_feature_at(size_t i)
{
	return i < REQ_NFIELD ? &req_field_features[i] : NULL;
}

/* sv_req_features: see reqtable.h. */
size_t
sv_req_features(const char **out, size_t cap)
{
	size_t n = 0;

	for (size_t i = 0; i < REQ_NORDER; i++) {
		const char *f    = req_feature_order[i];
		bool        seen = false;

		if (f == NULL) {
			continue; /* Hello */
		}
		for (size_t j = 0; j < i && !seen; j++) {
			seen = req_feature_order[j] != NULL
			    && strcmp(req_feature_order[j], f) == 0;
		}
		if (!seen) {
			if (n < cap) {
				out[n] = f;
			}
			n++;
		}
	}
	return n;
}

/* req_flag reads the bool field name of req's body message: false when
 * the body has no such field. */
static bool
req_flag(const svw_env *req, const char *name)
{
	const ProtobufCFieldDescriptor *bf
	    = protobuf_c_message_descriptor_get_field(
	        &supervise__v1__envelope__descriptor,
	        (unsigned) req->body_case);
	const ProtobufCFieldDescriptor *f;
	const ProtobufCMessage         *m;

	if (bf == NULL || bf->type != PROTOBUF_C_TYPE_MESSAGE) {
		return false;
	}
	m = *(ProtobufCMessage *const *) ((const char *) req + bf->offset);
	f = protobuf_c_message_descriptor_get_field_by_name(
	    bf->descriptor, name);
	if (m == NULL || f == NULL || f->type != PROTOBUF_C_TYPE_BOOL
	    || f->label == PROTOBUF_C_LABEL_REPEATED) {
		return false;
	}
	return *(const protobuf_c_boolean *) ((const char *) m + f->offset)
	    != 0;
}

/* sv_req_resend: see reqtable.h. */
bool
sv_req_resend(const svw_env *req)
{
	const sv_req_row *r = req != NULL ? sv_req_find(req->body_case) : NULL;

	if (r == NULL) {
		return false;
	}
	switch (r->retry) {
	case SV_REQ_RETRY_YES:
		return true;
	case SV_REQ_RETRY_CAS:
		return req_flag(req, "check_generation");
	default:
		return false;
	}
}

/* sv_req_who_name: see reqtable.h. */
const char *
sv_req_who_name(sv_req_who who)
{
	switch (who) {
	case SV_REQ_ANYONE:
		return "anyone";
	case SV_REQ_WORKER:
		return "worker";
	case SV_REQ_ADMIN:
		return "admin";
	default:
		return "?";
	}
}

/* sv_req_retry_name: see reqtable.h. */
const char *
sv_req_retry_name(sv_req_retry retry)
{
	switch (retry) {
	case SV_REQ_RETRY_YES:
		return "yes";
	case SV_REQ_RETRY_NO:
		return "no";
	case SV_REQ_RETRY_CAS:
		return "with check_generation";
	default:
		return "?";
	}
}
