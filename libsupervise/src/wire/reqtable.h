/*
 * reqtable.h — the request table of supervise.v1 (internal): one row per
 * request, expanded from libsupervise/src/requests.def, and the questions
 * client, daemon and tests ask it (which reply, which features, who may
 * call, may it be sent again).
 */
#ifndef SV_WIRE_REQTABLE_H
#define SV_WIRE_REQTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/wire.h"

/* Who may send a request (requests.def, column who). */
typedef enum sv_req_who {
	SV_REQ_ANYONE = 0,
	SV_REQ_WORKER = 1,
	SV_REQ_ADMIN  = 2,
} sv_req_who;

/* Whether a client sends a request again after a lost connection. */
typedef enum sv_req_retry {
	SV_REQ_RETRY_NO  = 0,
	SV_REQ_RETRY_YES = 1,
	SV_REQ_RETRY_CAS = 2, /* only with its check_generation set */
} sv_req_retry;

/* One request (one SV_REQUEST row). */
typedef struct sv_req_row {
	svw_body     body;
	svw_body     reply;
	const char  *feature; /* NULL: Hello */
	uint32_t     since; /* minor version of v1 */
	sv_req_who   who;
	sv_req_retry retry;
} sv_req_row;

/* One feature that names a field (one SV_FEATURE row). */
typedef struct sv_req_field_feature {
	const char *name;
	uint32_t    since;
	svw_body    body; /* whose message carries the field */
	const char *field;
} sv_req_field_feature;

/* Capacity enough for Hello's feature list (every row's feature once). */
#define SV_REQ_MAX_FEATURES 64

/* sv_req_count returns the number of requests; sv_req_at row i of them (in
 * requests.def's order), or NULL past the end. */
size_t            sv_req_count(void);
const sv_req_row *sv_req_at(size_t i);

/* sv_req_find returns the row of request body, or NULL when body is no
 * request (a reply, or not known). */
const sv_req_row *sv_req_find(svw_body body);

/* sv_req_field_feature_count / _at: the SV_FEATURE rows. */
size_t                      sv_req_field_feature_count(void);
const sv_req_field_feature *sv_req_field_feature_at(size_t i);

/*
 * sv_req_features writes the feature strings HelloReply lists into out
 * (cap entries at most): every row's feature (request or field) once, at
 * its first row. Returns how many there are (may exceed cap). The strings
 * are static.
 */
size_t sv_req_features(const char **out, size_t cap);

/*
 * sv_req_resend is the client's retry rule: true when req (an envelope
 * holding a request) may be sent again after its connection was lost
 * before the reply. A body with no row is never sent again.
 */
bool sv_req_resend(const svw_env *req);

/* sv_req_who_name and sv_req_retry_name: the words docs/protocol.md uses
 * ("anyone", "worker", "admin"; "yes", "no", "with check_generation"). */
const char *sv_req_who_name(sv_req_who who);
const char *sv_req_retry_name(sv_req_retry retry);

#endif /* SV_WIRE_REQTABLE_H */
