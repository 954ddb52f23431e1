/*
 * identity.c — the caller's identity (supervise/client.h, "whoami"): the
 * WhoAmI request and its answer, read either through an sv_identity handle
 * that keeps the decoded reply (accessors never copy; strings live as long
 * as the handle) or copied whole into a caller-owned sv_whoami_result (one
 * foreign call, nothing to free: what the bindings use).
 *
 * The handle is also what sub-worker registration returns (subworker.c,
 * through svc_identity). Every accessor is NULL-safe: a NULL handle reads
 * as 0, "" or SV_KIND_UNSPECIFIED, and the calls that return sv_err give
 * SV_EINVAL.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "client/client_call.h"
#include "supervise/client.h"
#include "wire/wire.h"

struct sv_identity {
	svw_env *env; /* the reply; its body is an Identity */
};

/* sv_client_whoami: see client.h. The reply is kept in the new handle. */
sv_err
sv_client_whoami(sv_client *client, int timeout_ms, sv_identity **identityp)
{
	svw_env               req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__WhoAmI w   = SUPERVISE__V1__WHO_AM_I__INIT;
	void                 *out = NULL;
	sv_err                err;

	if (client == NULL || identityp == NULL) {
		return SV_EINVAL;
	}
	req.body_case = SUPERVISE__V1__ENVELOPE__BODY_WHOAMI;
	req.whoami    = &w;
	err           = svc_call_kept(
	              client, &req, timeout_ms, sizeof(sv_identity), &out);
	if (err == SV_OK) {
		*identityp = out;
	}
	return err;
}

/*
 * ID_FIELD defines sv_identity_NAME(id): field FIELD of the Identity reply
 * kept in id, or DFLT when id is NULL.
 */
#define ID_FIELD(type, name, field, dflt)                                     \
	type sv_identity_##name(const sv_identity *id)                        \
	{                                                                     \
		return id != NULL ? (type) id->env->identity->field : (dflt); \
	}

ID_FIELD(const char *, group, group, "")
ID_FIELD(uint32_t, ordinal, ordinal, 0)
ID_FIELD(uint64_t, generation, generation, 0)
ID_FIELD(sv_kind, kind, kind, SV_KIND_UNSPECIFIED)
ID_FIELD(int64_t, pid, pid, 0)
ID_FIELD(const char *, purpose, purpose, "")
ID_FIELD(const char *, supervisor_id, supervisor_id, "")
ID_FIELD(uint32_t, group_size, group_size, 0)
ID_FIELD(int, draining, draining, 0)
ID_FIELD(uint64_t, drain_deadline_in_ms, drain_deadline_in_ms, 0)
ID_FIELD(size_t, frame_count, n_context, 0)

/* cl_frame copies a frame into the caller's non-NULL out-parameters. */
static void
cl_frame(const Supervise__V1__Frame *f, sv_kind *kindp, uint32_t *ordinalp,
    const char **namep)
{
	if (kindp != NULL) {
		*kindp = (sv_kind) f->kind;
	}
	if (ordinalp != NULL) {
		*ordinalp = f->ordinal;
	}
	if (namep != NULL) {
		*namep = f->name;
	}
}

sv_err
sv_identity_frame(const sv_identity *id, size_t i, sv_kind *kindp,
    uint32_t *ordinalp, const char **namep)
{
	if (id == NULL || i >= id->env->identity->n_context) {
		return SV_EINVAL;
	}
	cl_frame(id->env->identity->context[i], kindp, ordinalp, namep);
	return SV_OK;
}

sv_err
sv_identity_parent(const sv_identity *id, sv_kind *kindp, uint32_t *ordinalp,
    const char **namep)
{
	if (id == NULL) {
		return SV_EINVAL;
	}
	if (id->env->identity->parent == NULL) {
		return SV_ENOTFOUND;
	}
	cl_frame(id->env->identity->parent, kindp, ordinalp, namep);
	return SV_OK;
}

sv_err
sv_identity_frame_generation(const sv_identity *id, size_t i, uint64_t *genp)
{
	if (id == NULL || genp == NULL || i >= id->env->identity->n_context) {
		return SV_EINVAL;
	}
	*genp = id->env->identity->context[i]->generation;
	return SV_OK;
}

sv_err
svc_identity(svw_env *env, sv_identity **identityp)
{
	sv_identity *out = malloc(sizeof(*out));

	if (out == NULL) {
		return SV_ENOMEM;
	}
	out->env   = env;
	*identityp = out;
	return SV_OK;
}

sv_err
sv_identity_get_fields(const sv_identity *id, sv_identity_fields *out)
{
	if (id == NULL || out == NULL || out->size < sizeof(*out)) {
		return SV_EINVAL;
	}
	*out = (sv_identity_fields) {
	    .size                 = sizeof(*out),
	    .group                = sv_identity_group(id),
	    .purpose              = sv_identity_purpose(id),
	    .supervisor_id        = sv_identity_supervisor_id(id),
	    .pid                  = sv_identity_pid(id),
	    .generation           = sv_identity_generation(id),
	    .drain_deadline_in_ms = sv_identity_drain_deadline_in_ms(id),
	    .frame_count          = sv_identity_frame_count(id),
	    .ordinal              = sv_identity_ordinal(id),
	    .group_size           = sv_identity_group_size(id),
	    .kind                 = (int32_t) sv_identity_kind(id),
	    .draining             = sv_identity_draining(id) != 0,
	};
	return SV_OK;
}

/* cl_text_size is the bytes a copy of s takes in a text area. */
static size_t
cl_text_size(const char *s)
{
	return (s != NULL ? strlen(s) : 0) + 1;
}

/*
 * cl_text is where sv_client_whoami_copy lays out strings: it writes into
 * `at` (a scratch copy of the text area) while the pointers it hands out
 * point at the same offset of `final` (the caller's text area).
 */
struct cl_text {
	char       *at;
	const char *final;
	size_t      used;
};

/* cl_text_put copies s into t (which has room) and returns where the copy
 * will live in the caller's struct. */
static const char *
cl_text_put(struct cl_text *t, const char *s)
{
	size_t n = cl_text_size(s);

	if (n > 1) {
		memcpy(t->at + t->used, s, n);
	} else {
		t->at[t->used] = '\0';
	}
	t->used += n;
	return t->final + t->used - n;
}

/* cl_frame_put fills *to from f, its name copied into t. */
static void
cl_frame_put(
    sv_frame_fields *to, const Supervise__V1__Frame *f, struct cl_text *t)
{
	*to = (sv_frame_fields) {
	    .name       = cl_text_put(t, f->name),
	    .generation = f->generation,
	    .ordinal    = f->ordinal,
	    .kind       = (int32_t) f->kind,
	};
}

/* The comparison of two results is byte-wise: neither struct has padding. */
_Static_assert(sizeof(sv_frame_fields) == 24, "sv_frame_fields has padding");
_Static_assert(
    sizeof(sv_identity_fields) == 80, "sv_identity_fields has padding");
_Static_assert(offsetof(sv_whoami_result, parent)
        == offsetof(sv_whoami_result, unchanged) + sizeof(int32_t),
    "sv_whoami_result has padding");

/*
 * cl_whoami_fill lays the answer w (whose text fits: checked by the caller)
 * out in *tmp as it must appear in *out, then copies it into *out unless
 * *out holds the same bytes already, and sets out->unchanged.
 */
static void
cl_whoami_fill(const Supervise__V1__Identity *w, size_t nf,
    sv_whoami_result *tmp, sv_whoami_result *out)
{
	struct cl_text t = {.at = tmp->text, .final = out->text, .used = 0};
	size_t         head;

	tmp->fields = (sv_identity_fields) {
	    .size                 = sizeof(tmp->fields),
	    .group                = cl_text_put(&t, w->group),
	    .purpose              = cl_text_put(&t, w->purpose),
	    .supervisor_id        = cl_text_put(&t, w->supervisor_id),
	    .pid                  = w->pid,
	    .generation           = w->generation,
	    .drain_deadline_in_ms = w->drain_deadline_in_ms,
	    .frame_count          = w->n_context,
	    .ordinal              = w->ordinal,
	    .group_size           = w->group_size,
	    .kind                 = (int32_t) w->kind,
	    .draining             = w->draining != 0,
	};
	tmp->parent = (sv_frame_fields) {.name = NULL};
	if (w->parent != NULL) {
		cl_frame_put(&tmp->parent, w->parent, &t);
	}
	for (size_t i = 0; i < nf; i++) {
		cl_frame_put(&tmp->frames[i], w->context[i], &t);
	}
	tmp->size       = out->size;
	tmp->n_frames   = (uint32_t) nf;
	tmp->has_parent = w->parent != NULL;
	tmp->text_used  = (uint32_t) t.used;
	tmp->unchanged  = 0;
	/* Everything up to `unchanged`, then parent and the frames in use. */
	head = offsetof(sv_whoami_result, unchanged);
	if (out->text_used == tmp->text_used && out->n_frames == nf
	    && memcmp(out, tmp, head) == 0
	    && memcmp(&out->parent, &tmp->parent,
	           sizeof(tmp->parent) + nf * sizeof(tmp->frames[0]))
	        == 0
	    && memcmp(out->text, tmp->text, t.used) == 0) {
		out->unchanged = 1;
		return;
	}
	memcpy(out, tmp, head);
	memcpy(&out->parent, &tmp->parent,
	    sizeof(tmp->parent) + nf * sizeof(tmp->frames[0]));
	memcpy(out->text, tmp->text, t.used);
	out->unchanged = 0;
}

sv_err
sv_client_whoami_copy(sv_client *client, int timeout_ms, sv_whoami_result *out)
{
	const Supervise__V1__Identity *w;
	sv_identity                   *id = NULL;
	sv_whoami_result              *tmp;
	size_t                         nf, need;
	sv_err                         err;

	if (client == NULL || out == NULL || out->size < sizeof(*out)) {
		return SV_EINVAL;
	}
	if ((err = sv_client_whoami(client, timeout_ms, &id)) != SV_OK) {
		return err;
	}
	w    = id->env->identity;
	nf   = w->n_context < SV_WHOAMI_MAX_FRAMES ? w->n_context
	                                           : SV_WHOAMI_MAX_FRAMES;
	need = cl_text_size(w->group) + cl_text_size(w->purpose)
	    + cl_text_size(w->supervisor_id)
	    + (w->parent != NULL ? cl_text_size(w->parent->name) : 0);
	for (size_t i = 0; i < nf; i++) {
		need += cl_text_size(w->context[i]->name);
	}
	if (need > sizeof(out->text)) {
		sv_identity_free(id);
		return svc_fail(client, SV_ETOOLARGE,
		    "the identity's text exceeds SV_WHOAMI_TEXT_BYTES");
	}
	if ((tmp = malloc(sizeof(*tmp))) == NULL) {
		sv_identity_free(id);
		return svc_fail(client, SV_ENOMEM, "out of memory");
	}
	cl_whoami_fill(w, nf, tmp, out);
	free(tmp);
	sv_identity_free(id);
	return SV_OK;
}

void
sv_identity_free(sv_identity *id)
{
	if (id != NULL) {
		svw_free(id->env);
		free(id);
	}
}
