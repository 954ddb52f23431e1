/*
 * client.c — the C client API (supervise/client.h) over the SP REQ
 * transport of transport.c.
 *
 * One connection per handle, one request in flight at a time (a mutex
 * serialises calls). The transport sends a request once; when the
 * connection is lost before the reply, an idempotent request is sent again
 * under a new request id, and any other request fails with SV_ECLOSED. The
 * caller's timeout is turned into one absolute deadline that bounds
 * reconnecting, sending and receiving together.
 *
 * fork(): the handle remembers the pid that opened it. The first call in
 * another process (a child after fork) re-initialises the mutex, drops the
 * inherited descriptor without writing to it (the parent's connection is
 * untouched) and connects anew, so the supervisor sees the child's own peer
 * credentials. That check runs under cl_fork_mtx, which pthread_atfork
 * handlers keep unlocked across fork(); see client.h for why re-initialising
 * the handle's mutex there is sound.
 *
 * Result handles (sv_hello, sv_identity, sv_workers) keep the decoded reply
 * envelope and read from it, so accessors never copy and strings live as
 * long as the handle.
 *
 * Divisions: errors and fork; open/close; the call; one section per request
 * kind with its accessors.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/client_call.h"
#include "client/transport.h"
#include "supervise/client.h"
#include "wire/wire.h"

#define CL_MAX_URL 512

struct sv_client {
	svt_conn        conn;
	pthread_mutex_t mtx;
	atomic_int      pid; /* process that owns conn and mtx */
	uint64_t        next_id;
	char            errmsg[SVW_MAX_TEXT + 1];
};

struct sv_hello {
	svw_env *env;
};

struct sv_identity {
	svw_env *env;
};

struct sv_workers {
	svw_env                     **envs; /* the replies (pages) */
	size_t                        nenvs;
	Supervise__V1__WorkerStatus **items; /* [n], point into envs */
	size_t                        n;
};

struct sv_groups {
	svw_env *env;
};

/* Why the calling thread's last sv_client_open failed ("" after success):
 * sv_client_error_message(NULL). */
static _Thread_local char cl_open_errmsg[SVT_DETAIL_MAX + 64];

/* Serialises the after-fork check of every handle; never held across
 * fork() (cl_atfork_*), so a child never inherits it locked. */
static pthread_mutex_t cl_fork_mtx  = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t  cl_fork_once = PTHREAD_ONCE_INIT;

/* ---- errors and fork -------------------------------------------------------
 */

/* cl_fail records a detail message and returns err. */
static sv_err
cl_fail(sv_client *c, sv_err err, const char *detail)
{
	snprintf(
	    c->errmsg, sizeof(c->errmsg), "%s", detail != NULL ? detail : "");
	return err;
}

/* cl_open_fail records why sv_client_open failed and returns err. */
static sv_err
cl_open_fail(sv_err err, const char *detail)
{
	snprintf(cl_open_errmsg, sizeof(cl_open_errmsg), "%s", detail);
	return err;
}

static void
cl_atfork_prepare(void)
{
	pthread_mutex_lock(&cl_fork_mtx);
}

static void
cl_atfork_parent(void)
{
	pthread_mutex_unlock(&cl_fork_mtx);
}

static void
cl_atfork_child(void)
{
	/* Only the forking thread exists here, and it holds the lock. */
	pthread_mutex_init(&cl_fork_mtx, NULL);
}

static void
cl_atfork_register(void)
{
	pthread_atfork(cl_atfork_prepare, cl_atfork_parent, cl_atfork_child);
}

/*
 * cl_lock locks c for one call. In a process other than the one that
 * opened or last adopted c (a child after fork), it first adopts c: fresh
 * mutex, inherited connection dropped (svt_forget), reconnect on demand.
 */
static void
cl_lock(sv_client *c)
{
	int self = (int) getpid();

	if (atomic_load_explicit(&c->pid, memory_order_acquire) != self) {
		pthread_mutex_lock(&cl_fork_mtx);
		if (atomic_load_explicit(&c->pid, memory_order_relaxed)
		    != self) {
			pthread_mutex_init(&c->mtx, NULL);
			svt_forget(&c->conn);
			atomic_store_explicit(
			    &c->pid, self, memory_order_release);
		}
		pthread_mutex_unlock(&cl_fork_mtx);
	}
	pthread_mutex_lock(&c->mtx);
}

/* ---- open / close
 * ----------------------------------------------------------- */

sv_err
sv_client_open(sv_client **clientp, const char *url, int timeout_ms)
{
	sv_client *c;
	sv_err     err;
	int64_t    deadline = svt_deadline(timeout_ms);

	if (clientp == NULL) {
		return cl_open_fail(SV_EINVAL, "clientp is NULL");
	}
	if (url == NULL || url[0] == '\0') {
		url = getenv(SV_ENV_URL);
	}
	if (url == NULL || url[0] == '\0') {
		return cl_open_fail(
		    SV_EINVAL, "no url given and $" SV_ENV_URL " is not set");
	}
	if (strlen(url) >= CL_MAX_URL) {
		return cl_open_fail(SV_EINVAL, "url too long");
	}
	pthread_once(&cl_fork_once, cl_atfork_register);
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		return cl_open_fail(SV_ENOMEM, "out of memory");
	}
	if ((err = svt_init(&c->conn, url)) != SV_OK) {
		err = cl_open_fail(err, c->conn.detail);
		free(c);
		return err;
	}
	if (pthread_mutex_init(&c->mtx, NULL) != 0) {
		free(c);
		return cl_open_fail(SV_ESYSTEM, "pthread_mutex_init failed");
	}
	atomic_init(&c->pid, (int) getpid());
	if ((err = svt_connect(&c->conn, deadline)) != SV_OK) {
		/* Something that is not an SP REP socket is no supervisor. */
		err = cl_open_fail(
		    err == SV_EPROTO ? SV_ECONNECT : err, c->conn.detail);
		pthread_mutex_destroy(&c->mtx);
		free(c);
		return err;
	}
	cl_open_errmsg[0] = '\0';
	*clientp          = c;
	return SV_OK;
}

void
sv_client_close(sv_client *client)
{
	if (client == NULL) {
		return;
	}
	if (atomic_load(&client->pid) == (int) getpid()) {
		svt_close(&client->conn);
		pthread_mutex_destroy(&client->mtx);
	} else {
		/* Inherited through fork() and never used here: leave the
		 * parent's connection alone; the mutex may be held by a
		 * thread that does not exist in this process. */
		svt_forget(&client->conn);
	}
	free(client);
}

const char *
sv_client_error_message(const sv_client *client)
{
	return client != NULL ? client->errmsg : cl_open_errmsg;
}

/* ---- the call -------------------------------------------------------------
 */

/*
 * cl_call_locked sends req and waits for a reply whose body is expect. On
 * SV_OK *replyp is the decoded reply (free with svw_free). A typed Error
 * reply is returned as its sv_err with the server's message kept in the
 * client. A request whose connection is lost before the reply is sent
 * again, under a new request id and within the same deadline, when it is
 * idempotent (asking twice has the effect of asking once); otherwise the
 * loss is SV_ECLOSED. Called with the client's mutex held.
 */
static sv_err
cl_call_locked(sv_client *c, svw_env *req, svw_body expect, bool idempotent,
    int timeout_ms, svw_env **replyp)
{
	svw_env *rep = NULL;
	uint64_t rid;
	int64_t  deadline = svt_deadline(timeout_ms);
	void    *rbuf     = NULL;
	size_t   rlen     = 0;
	sv_err   err;

	req->version = SV_PROTOCOL_VERSION;
	for (;;) {
		size_t   len;
		uint8_t *buf;

		req->request_id = ++c->next_id;
		/* The server's receive limit counts the SP request id too. */
		len = supervise__v1__envelope__get_packed_size(req);
		if (len > SVW_MAX_REQUEST - SVT_ID_LEN) {
			return cl_fail(c, SV_ETOOLARGE,
			    "request exceeds the protocol's bound");
		}
		if ((buf = malloc(len > 0 ? len : 1)) == NULL) {
			return cl_fail(c, SV_ENOMEM, "out of memory");
		}
		supervise__v1__envelope__pack(req, buf);
		err = svt_call(
		    &c->conn, buf, len, SVW_MAX_REPLY, deadline, &rbuf, &rlen);
		free(buf);
		if (err == SV_OK) {
			break;
		}
		if (!idempotent || err != SV_ECLOSED
		    || (deadline >= 0 && svt_now_ms() >= deadline)) {
			/* A reply over the bound is the peer's violation. */
			return cl_fail(c,
			    err == SV_ETOOLARGE ? SV_EPROTO : err,
			    c->conn.detail);
		}
	}
	err = svw_decode(rbuf, rlen, SVW_MAX_REPLY, &rep, &rid);
	free(rbuf);
	if (err == SV_EVERSION) {
		return cl_fail(c, SV_EVERSION,
		    "the supervisor answered in another protocol major "
		    "version");
	}
	if (err != SV_OK) {
		return cl_fail(c, SV_EPROTO, "undecodable reply");
	}
	if (rep->request_id != req->request_id) {
		svw_free(rep);
		return cl_fail(c, SV_EPROTO, "reply to another request");
	}
	if (rep->body_case == SUPERVISE__V1__ENVELOPE__BODY_ERROR) {
		err = svw_code_to_err(rep->error->code);
		cl_fail(c, err, rep->error->message);
		svw_free(rep);
		return err;
	}
	if (rep->body_case != expect) {
		svw_free(rep);
		return cl_fail(c, SV_EPROTO, "unexpected reply kind");
	}
	*replyp = rep;
	return cl_fail(c, SV_OK, NULL);
}

/* cl_call_mode locks the client (adopting it after fork) around
 * cl_call_locked. */
static sv_err
cl_call_mode(sv_client *c, svw_env *req, svw_body expect, bool idempotent,
    int timeout_ms, svw_env **replyp)
{
	sv_err err;

	cl_lock(c);
	err = cl_call_locked(c, req, expect, idempotent, timeout_ms, replyp);
	pthread_mutex_unlock(&c->mtx);
	return err;
}

/* cl_call sends an idempotent request (see cl_call_locked). */
static sv_err
cl_call(sv_client *c, svw_env *req, svw_body expect, int timeout_ms,
    svw_env **replyp)
{
	return cl_call_mode(c, req, expect, true, timeout_ms, replyp);
}

/* cl_send sends a request whose reply carries nothing the caller needs. */
static sv_err
cl_send(sv_client *c, svw_env *req, svw_body expect, bool idempotent,
    int timeout_ms)
{
	svw_env *rep = NULL;
	sv_err   err
	    = cl_call_mode(c, req, expect, idempotent, timeout_ms, &rep);

	if (err == SV_OK) {
		svw_free(rep);
	}
	return err;
}

/* svc_call and svc_fail give the other files of the client (lease.c)
 * cl_call_mode and cl_fail (client_call.h). */
sv_err
svc_call(sv_client *c, svw_env *req, svw_body expect, bool idempotent,
    int timeout_ms, svw_env **replyp)
{
	return cl_call_mode(c, req, expect, idempotent, timeout_ms, replyp);
}

sv_err
svc_fail(sv_client *c, sv_err err, const char *detail)
{
	return cl_fail(c, err, detail);
}

/* cl_group validates an optional group name argument. */
static sv_err
cl_group(sv_client *c, const char *group, int optional)
{
	if (optional && (group == NULL || group[0] == '\0')) {
		return SV_OK;
	}
	if (svw_check_name(group) != SV_OK) {
		return cl_fail(c, SV_EINVAL,
		    "group name must be 1..64 characters of [A-Za-z0-9_.-]");
	}
	return SV_OK;
}

/* ---- hello ----------------------------------------------------------------
 */

sv_err
sv_client_hello(sv_client *client, int timeout_ms, sv_hello **hellop)
{
	svw_env              req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__Hello h   = SUPERVISE__V1__HELLO__INIT;
	svw_env             *rep = NULL;
	sv_hello            *out;
	sv_err               err;

	if (client == NULL || hellop == NULL) {
		return SV_EINVAL;
	}
	h.client_name = "libsupervise/" SV_VERSION_STRING;
	h.min_version = SV_PROTOCOL_VERSION;
	h.max_version = SV_PROTOCOL_VERSION;
	req.body_case = SUPERVISE__V1__ENVELOPE__BODY_HELLO;
	req.hello     = &h;
	err = cl_call(client, &req, SUPERVISE__V1__ENVELOPE__BODY_HELLO_REPLY,
	    timeout_ms, &rep);
	if (err != SV_OK) {
		return err;
	}
	if ((out = malloc(sizeof(*out))) == NULL) {
		svw_free(rep);
		return SV_ENOMEM;
	}
	out->env = rep;
	*hellop  = out;
	return SV_OK;
}

/*
 * CL_FIELD defines PREFIX_NAME(h): field FIELD of the reply body BODY kept
 * in handle h (the accessors of sv_hello and sv_identity).
 */
#define CL_FIELD(type, handle, prefix, name, body, field) \
	type prefix##_##name(const handle *h)             \
	{                                                 \
		return (type) h->env->body->field;        \
	}

CL_FIELD(uint32_t, sv_hello, sv_hello, version, hello_reply, version)
CL_FIELD(
    uint32_t, sv_hello, sv_hello, minor_version, hello_reply, minor_version)
CL_FIELD(
    const char *, sv_hello, sv_hello, server_name, hello_reply, server_name)
CL_FIELD(const char *, sv_hello, sv_hello, supervisor_id, hello_reply,
    supervisor_id)
CL_FIELD(size_t, sv_hello, sv_hello, feature_count, hello_reply, n_features)
CL_FIELD(const char *, sv_hello, sv_hello, events_url, hello_reply, events_url)

const char *
sv_hello_feature(const sv_hello *h, size_t i)
{
	if (i >= h->env->hello_reply->n_features) {
		return NULL;
	}
	return h->env->hello_reply->features[i];
}

void
sv_hello_free(sv_hello *h)
{
	if (h != NULL) {
		svw_free(h->env);
		free(h);
	}
}

/* ---- whoami ---------------------------------------------------------------
 */

sv_err
sv_client_whoami(sv_client *client, int timeout_ms, sv_identity **identityp)
{
	svw_env               req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__WhoAmI w   = SUPERVISE__V1__WHO_AM_I__INIT;
	svw_env              *rep = NULL;
	sv_identity          *out;
	sv_err                err;

	if (client == NULL || identityp == NULL) {
		return SV_EINVAL;
	}
	req.body_case = SUPERVISE__V1__ENVELOPE__BODY_WHOAMI;
	req.whoami    = &w;
	err = cl_call(client, &req, SUPERVISE__V1__ENVELOPE__BODY_IDENTITY,
	    timeout_ms, &rep);
	if (err != SV_OK) {
		return err;
	}
	if ((out = malloc(sizeof(*out))) == NULL) {
		svw_free(rep);
		return SV_ENOMEM;
	}
	out->env   = rep;
	*identityp = out;
	return SV_OK;
}

CL_FIELD(const char *, sv_identity, sv_identity, group, identity, group)
CL_FIELD(uint32_t, sv_identity, sv_identity, ordinal, identity, ordinal)
CL_FIELD(uint64_t, sv_identity, sv_identity, generation, identity, generation)
CL_FIELD(sv_kind, sv_identity, sv_identity, kind, identity, kind)
CL_FIELD(int64_t, sv_identity, sv_identity, pid, identity, pid)
CL_FIELD(const char *, sv_identity, sv_identity, purpose, identity, purpose)
CL_FIELD(const char *, sv_identity, sv_identity, supervisor_id, identity,
    supervisor_id)
CL_FIELD(uint32_t, sv_identity, sv_identity, group_size, identity, group_size)
CL_FIELD(int, sv_identity, sv_identity, draining, identity, draining)
CL_FIELD(uint64_t, sv_identity, sv_identity, drain_deadline_in_ms, identity,
    drain_deadline_in_ms)
CL_FIELD(size_t, sv_identity, sv_identity, frame_count, identity, n_context)

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
		return cl_fail(client, SV_ETOOLARGE,
		    "the identity's text exceeds SV_WHOAMI_TEXT_BYTES");
	}
	if ((tmp = malloc(sizeof(*tmp))) == NULL) {
		sv_identity_free(id);
		return cl_fail(client, SV_ENOMEM, "out of memory");
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

/* ---- list and status ------------------------------------------------------
 */

/* cl_workers_free frees an sv_workers and the replies it holds. */
static void
cl_workers_free(sv_workers *w)
{
	if (w != NULL) {
		for (size_t i = 0; i < w->nenvs; i++) {
			svw_free(w->envs[i]);
		}
		free(w->envs);
		free(w->items);
		free(w);
	}
}

/* cl_workers_add appends the n entries of reply rep (which it takes) to
 * w. Errors: SV_ENOMEM (rep is freed). */
static sv_err
cl_workers_add(
    sv_workers *w, svw_env *rep, Supervise__V1__WorkerStatus **items, size_t n)
{
	svw_env                     **envs;
	Supervise__V1__WorkerStatus **all;

	envs = realloc(w->envs, (w->nenvs + 1) * sizeof(svw_env *));
	if (envs == NULL) {
		svw_free(rep);
		return SV_ENOMEM;
	}
	w->envs             = envs;
	w->envs[w->nenvs++] = rep;
	all                 = realloc(
	                    w->items, (w->n + n + 1) * sizeof(Supervise__V1__WorkerStatus *));
	if (all == NULL) {
		return SV_ENOMEM;
	}
	if (n > 0) { /* an empty list may come with items NULL */
		memcpy(all + w->n, items,
		    n * sizeof(Supervise__V1__WorkerStatus *));
	}
	w->items = all;
	w->n += n;
	return SV_OK;
}

/* cl_one_worker wraps a WorkerStatus reply into a new sv_workers. */
static sv_err
cl_one_worker(svw_env *rep, sv_workers **workersp)
{
	sv_workers *w = calloc(1, sizeof(*w));
	sv_err      err;

	if (w == NULL) {
		svw_free(rep);
		return SV_ENOMEM;
	}
	if ((err = cl_workers_add(w, rep, &rep->worker_status, 1)) != SV_OK) {
		cl_workers_free(w);
		return err;
	}
	*workersp = w;
	return SV_OK;
}

/* Workers asked for per ListWorkers page. */
#define CL_PAGE_SIZE 512

sv_err
sv_client_list(sv_client *client, const char *group, int timeout_ms,
    sv_workers **workersp)
{
	svw_env                    req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__ListWorkers l   = SUPERVISE__V1__LIST_WORKERS__INIT;
	svw_env                   *rep = NULL;
	sv_workers                *w;
	char                       token[128] = "";
	int64_t                    deadline   = svt_deadline(timeout_ms);
	sv_err                     err;

	if (client == NULL || workersp == NULL) {
		return SV_EINVAL;
	}
	if ((err = cl_group(client, group, 1)) != SV_OK) {
		return err;
	}
	if ((w = calloc(1, sizeof(*w))) == NULL) {
		return SV_ENOMEM;
	}
	l.group          = group != NULL ? (char *) group : "";
	l.page_size      = CL_PAGE_SIZE;
	req.body_case    = SUPERVISE__V1__ENVELOPE__BODY_LIST_WORKERS;
	req.list_workers = &l;
	/* Page after page, all within the one deadline. A server that does
	 * not page (v1.0) answers everything at once with no token. */
	do {
		int left     = deadline < 0       ? -1
		        : deadline > svt_now_ms() ? (int) (deadline - svt_now_ms())
		                                  : 0;
		l.page_token = token;
		err          = cl_call(client, &req,
		             SUPERVISE__V1__ENVELOPE__BODY_WORKER_LIST, left, &rep);
		if (err == SV_OK) {
			const char *next = rep->worker_list->next_page_token;
			if (strlen(next) >= sizeof(token)) {
				svw_free(rep);
				err = cl_fail(
				    client, SV_EPROTO, "page token too long");
				break;
			}
			snprintf(token, sizeof(token), "%s", next);
			err = cl_workers_add(w, rep, rep->worker_list->workers,
			    rep->worker_list->n_workers);
		}
	} while (err == SV_OK && token[0] != '\0');
	if (err != SV_OK) {
		cl_workers_free(w);
		return err;
	}
	*workersp = w;
	return SV_OK;
}

sv_err
sv_client_status(sv_client *client, const char *group, uint32_t ordinal,
    int timeout_ms, sv_workers **workersp)
{
	svw_env                  req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__GetStatus g   = SUPERVISE__V1__GET_STATUS__INIT;
	svw_env                 *rep = NULL;
	sv_err                   err;

	if (client == NULL || workersp == NULL) {
		return SV_EINVAL;
	}
	if ((err = cl_group(client, group, 0)) != SV_OK) {
		return err;
	}
	g.group        = (char *) group;
	g.ordinal      = ordinal;
	req.body_case  = SUPERVISE__V1__ENVELOPE__BODY_GET_STATUS;
	req.get_status = &g;
	err            = cl_call(client, &req,
	               SUPERVISE__V1__ENVELOPE__BODY_WORKER_STATUS, timeout_ms, &rep);
	if (err != SV_OK) {
		return err;
	}
	return cl_one_worker(rep, workersp);
}

size_t
sv_workers_count(const sv_workers *w)
{
	return w != NULL ? w->n : 0;
}

/* cl_item returns entry i or NULL. */
static const Supervise__V1__WorkerStatus *
cl_item(const sv_workers *w, size_t i)
{
	return (w != NULL && i < w->n) ? w->items[i] : NULL;
}

/*
 * CL_WORKER_FIELD defines sv_workers_NAME(w, i): field FIELD of entry i,
 * or DFLT when i is out of range.
 */
#define CL_WORKER_FIELD(type, name, field, dflt)                      \
	type sv_workers_##name(const sv_workers *w, size_t i)         \
	{                                                             \
		const Supervise__V1__WorkerStatus *s = cl_item(w, i); \
		return s != NULL ? (type) s->field : (dflt);          \
	}

CL_WORKER_FIELD(const char *, group, group, "")
CL_WORKER_FIELD(uint32_t, ordinal, ordinal, 0)
CL_WORKER_FIELD(uint64_t, generation, generation, 0)
CL_WORKER_FIELD(int64_t, pid, pid, 0)
CL_WORKER_FIELD(sv_state, state, state, SV_STATE_UNSPECIFIED)
CL_WORKER_FIELD(uint64_t, uptime_ms, uptime_ms, 0)
CL_WORKER_FIELD(const char *, purpose, purpose, "")
CL_WORKER_FIELD(uint64_t, restarts, restarts, 0)
CL_WORKER_FIELD(int32_t, last_exit_code, last_exit_code, -1)
CL_WORKER_FIELD(int32_t, last_signal, last_signal, 0)
CL_WORKER_FIELD(int, ready, ready, 0)
CL_WORKER_FIELD(uint32_t, fast_failures, fast_failures, 0)
CL_WORKER_FIELD(uint64_t, restart_in_ms, restart_in_ms, 0)
CL_WORKER_FIELD(const char *, status_text, status_text, "")
CL_WORKER_FIELD(int, draining, draining, 0)
CL_WORKER_FIELD(uint64_t, drain_deadline_in_ms, drain_deadline_in_ms, 0)
CL_WORKER_FIELD(uint32_t, activities, activities, 0)
CL_WORKER_FIELD(const char *, activity, activity, "")
CL_WORKER_FIELD(uint64_t, activity_age_ms, activity_age_ms, 0)

void
sv_workers_free(sv_workers *w)
{
	cl_workers_free(w);
}

const char *
sv_state_name(sv_state state)
{
	switch (state) {
	case SV_STATE_RUNNING:
		return "running";
	case SV_STATE_STOPPING:
		return "stopping";
	case SV_STATE_BACKOFF:
		return "backoff";
	case SV_STATE_STARTING:
		return "starting";
	case SV_STATE_FAILED:
		return "failed";
	case SV_STATE_WAITING:
		return "waiting";
	case SV_STATE_IDLE:
		return "idle";
	case SV_STATE_DRAINING:
		return "draining";
	default:
		return "unknown";
	}
}

/* ---- administration --------------------------------------------------------
 */

/* cl_group_change finishes scale/stop: store the previous count. */
static sv_err
cl_group_change(
    sv_client *c, svw_env *req, int timeout_ms, uint32_t *previousp)
{
	svw_env *rep = NULL;
	sv_err   err = cl_call(c, req,
	      SUPERVISE__V1__ENVELOPE__BODY_GROUP_CHANGE, timeout_ms, &rep);

	if (err != SV_OK) {
		return err;
	}
	if (previousp != NULL) {
		*previousp = rep->group_change->previous_count;
	}
	svw_free(rep);
	return SV_OK;
}

sv_err
sv_client_scale(sv_client *client, const char *group, uint32_t count,
    int timeout_ms, uint32_t *previousp)
{
	svw_env                   req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__ScaleGroup s   = SUPERVISE__V1__SCALE_GROUP__INIT;
	sv_err                    err;

	if (client == NULL) {
		return SV_EINVAL;
	}
	if ((err = cl_group(client, group, 0)) != SV_OK) {
		return err;
	}
	s.group         = (char *) group;
	s.count         = count;
	req.body_case   = SUPERVISE__V1__ENVELOPE__BODY_SCALE_GROUP;
	req.scale_group = &s;
	return cl_group_change(client, &req, timeout_ms, previousp);
}

sv_err
sv_client_stop(
    sv_client *client, const char *group, int timeout_ms, uint32_t *previousp)
{
	svw_env                  req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__StopGroup s   = SUPERVISE__V1__STOP_GROUP__INIT;
	sv_err                   err;

	if (client == NULL) {
		return SV_EINVAL;
	}
	if ((err = cl_group(client, group, 0)) != SV_OK) {
		return err;
	}
	s.group        = (char *) group;
	req.body_case  = SUPERVISE__V1__ENVELOPE__BODY_STOP_GROUP;
	req.stop_group = &s;
	return cl_group_change(client, &req, timeout_ms, previousp);
}

/* cl_restart sends RestartWorker, with the compare-and-swap when cas. */
static sv_err
cl_restart(sv_client *client, const char *group, uint32_t ordinal, bool cas,
    uint64_t expected_generation, int timeout_ms)
{
	svw_env                      req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__RestartWorker r   = SUPERVISE__V1__RESTART_WORKER__INIT;
	sv_err                       err;

	if (client == NULL) {
		return SV_EINVAL;
	}
	if ((err = cl_group(client, group, 0)) != SV_OK) {
		return err;
	}
	r.group               = (char *) group;
	r.ordinal             = ordinal;
	r.check_generation    = cas;
	r.expected_generation = expected_generation;
	req.body_case         = SUPERVISE__V1__ENVELOPE__BODY_RESTART_WORKER;
	req.restart_worker    = &r;
	/* Without the compare-and-swap a lost connection is reported, never
	 * resent; with it a resent copy gets CONFLICT at worst. */
	return cl_send(client, &req,
	    SUPERVISE__V1__ENVELOPE__BODY_WORKER_STATUS, cas, timeout_ms);
}

sv_err
sv_client_restart(
    sv_client *client, const char *group, uint32_t ordinal, int timeout_ms)
{
	return cl_restart(client, group, ordinal, false, 0, timeout_ms);
}

sv_err
sv_client_restart_if(sv_client *client, const char *group, uint32_t ordinal,
    uint64_t expected_generation, int timeout_ms)
{
	return cl_restart(
	    client, group, ordinal, true, expected_generation, timeout_ms);
}

/* cl_group_info sends a request answered by GroupInfo; the reply is kept
 * as a one-entry sv_groups when groupsp is not NULL. */
static sv_err
cl_group_info(sv_client *c, svw_env *req, bool idempotent, int timeout_ms,
    sv_groups **groupsp)
{
	svw_env   *rep = NULL;
	sv_groups *g;
	sv_err     err
	    = cl_call_mode(c, req, SUPERVISE__V1__ENVELOPE__BODY_GROUP_INFO,
	        idempotent, timeout_ms, &rep);

	if (err != SV_OK) {
		return err;
	}
	if (groupsp == NULL) {
		svw_free(rep);
		return SV_OK;
	}
	if ((g = malloc(sizeof(*g))) == NULL) {
		svw_free(rep);
		return SV_ENOMEM;
	}
	g->env   = rep;
	*groupsp = g;
	return SV_OK;
}

sv_err
sv_client_reset(sv_client *client, const char *group, int timeout_ms)
{
	svw_env                   req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__ResetGroup r   = SUPERVISE__V1__RESET_GROUP__INIT;
	sv_err                    err;

	if (client == NULL) {
		return SV_EINVAL;
	}
	if ((err = cl_group(client, group, 0)) != SV_OK) {
		return err;
	}
	r.group         = (char *) group;
	req.body_case   = SUPERVISE__V1__ENVELOPE__BODY_RESET_GROUP;
	req.reset_group = &r;
	return cl_group_info(client, &req, true, timeout_ms, NULL);
}

sv_err
sv_client_groups(
    sv_client *client, const char *group, int timeout_ms, sv_groups **groupsp)
{
	svw_env                   req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__ListGroups l   = SUPERVISE__V1__LIST_GROUPS__INIT;
	svw_env                  *rep = NULL;
	sv_groups                *g;
	sv_err                    err;

	if (client == NULL || groupsp == NULL) {
		return SV_EINVAL;
	}
	if ((err = cl_group(client, group, 1)) != SV_OK) {
		return err;
	}
	l.group         = group != NULL ? (char *) group : "";
	req.body_case   = SUPERVISE__V1__ENVELOPE__BODY_LIST_GROUPS;
	req.list_groups = &l;
	err = cl_call(client, &req, SUPERVISE__V1__ENVELOPE__BODY_GROUP_LIST,
	    timeout_ms, &rep);
	if (err != SV_OK) {
		return err;
	}
	if ((g = malloc(sizeof(*g))) == NULL) {
		svw_free(rep);
		return SV_ENOMEM;
	}
	g->env   = rep;
	*groupsp = g;
	return SV_OK;
}

size_t
sv_groups_count(const sv_groups *g)
{
	if (g == NULL) {
		return 0;
	}
	return g->env->body_case == SUPERVISE__V1__ENVELOPE__BODY_GROUP_LIST
	    ? g->env->group_list->n_groups
	    : 1;
}

/* cl_group_item returns entry i of g, or NULL. */
static const Supervise__V1__GroupInfo *
cl_group_item(const sv_groups *g, size_t i)
{
	if (i >= sv_groups_count(g)) {
		return NULL;
	}
	return g->env->body_case == SUPERVISE__V1__ENVELOPE__BODY_GROUP_LIST
	    ? g->env->group_list->groups[i]
	    : g->env->group_info;
}

/* CL_GROUP_FIELD defines sv_groups_NAME(g, i) like CL_WORKER_FIELD. */
#define CL_GROUP_FIELD(type, name, field, dflt)                          \
	type sv_groups_##name(const sv_groups *g, size_t i)              \
	{                                                                \
		const Supervise__V1__GroupInfo *x = cl_group_item(g, i); \
		return x != NULL ? (type) x->field : (dflt);             \
	}

CL_GROUP_FIELD(const char *, name, name, "")
CL_GROUP_FIELD(uint32_t, count_wanted, count, 0)
CL_GROUP_FIELD(uint32_t, max_count, max_count, 0)
CL_GROUP_FIELD(int, failed, failed, 0)
CL_GROUP_FIELD(const char *, failure_reason, failure_reason, "")
CL_GROUP_FIELD(const char *, restart, restart, "")
CL_GROUP_FIELD(const char *, strategy, strategy, "")
CL_GROUP_FIELD(uint32_t, running, running, 0)
CL_GROUP_FIELD(uint32_t, ready, ready, 0)
CL_GROUP_FIELD(uint32_t, starting, starting, 0)
CL_GROUP_FIELD(uint32_t, stopping, stopping, 0)
CL_GROUP_FIELD(uint32_t, backoff, backoff, 0)
CL_GROUP_FIELD(const char *, purpose, purpose, "")

void
sv_groups_free(sv_groups *g)
{
	if (g != NULL) {
		svw_free(g->env);
		free(g);
	}
}

sv_err
sv_client_start_worker(
    sv_client *client, const char *group, int timeout_ms, uint32_t *ordinalp)
{
	svw_env                    req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__StartWorker st  = SUPERVISE__V1__START_WORKER__INIT;
	svw_env                   *rep = NULL;
	sv_err                     err;

	if (client == NULL) {
		return SV_EINVAL;
	}
	if ((err = cl_group(client, group, 0)) != SV_OK) {
		return err;
	}
	st.group         = (char *) group;
	req.body_case    = SUPERVISE__V1__ENVELOPE__BODY_START_WORKER;
	req.start_worker = &st;
	/* Not idempotent: a resent copy would start a second worker. */
	err = cl_call_mode(client, &req,
	    SUPERVISE__V1__ENVELOPE__BODY_WORKER_STATUS, false, timeout_ms,
	    &rep);
	if (err != SV_OK) {
		return err;
	}
	if (ordinalp != NULL) {
		*ordinalp = rep->worker_status->ordinal;
	}
	svw_free(rep);
	return SV_OK;
}

sv_err
sv_client_terminate_worker(
    sv_client *client, const char *group, uint32_t ordinal, int timeout_ms)
{
	svw_env                        req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__TerminateWorker t
	    = SUPERVISE__V1__TERMINATE_WORKER__INIT;
	sv_err err;

	if (client == NULL) {
		return SV_EINVAL;
	}
	if ((err = cl_group(client, group, 0)) != SV_OK) {
		return err;
	}
	t.group              = (char *) group;
	t.ordinal            = ordinal;
	req.body_case        = SUPERVISE__V1__ENVELOPE__BODY_TERMINATE_WORKER;
	req.terminate_worker = &t;
	/* Not idempotent: a resent copy could stop a worker started since. */
	return cl_send(client, &req,
	    SUPERVISE__V1__ENVELOPE__BODY_WORKER_STATUS, false, timeout_ms);
}

sv_err
sv_client_delete_group(sv_client *client, const char *group, int timeout_ms)
{
	svw_env                    req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__DeleteGroup d   = SUPERVISE__V1__DELETE_GROUP__INIT;
	sv_err                     err;

	if (client == NULL) {
		return SV_EINVAL;
	}
	if ((err = cl_group(client, group, 0)) != SV_OK) {
		return err;
	}
	d.group          = (char *) group;
	req.body_case    = SUPERVISE__V1__ENVELOPE__BODY_DELETE_GROUP;
	req.delete_group = &d;
	return cl_group_info(client, &req, true, timeout_ms, NULL);
}

/* ---- groups created at runtime ------------------------------------------
 */

/* Bounds of a spec built here (the supervisor checks the rest). */
#define CL_SPEC_MAX_ITEMS 256

struct sv_groupspec {
	Supervise__V1__GroupSpec spec;
	Supervise__V1__Option    options[CL_SPEC_MAX_ITEMS];
	Supervise__V1__Option   *option_ptrs[CL_SPEC_MAX_ITEMS];
	char                    *argv[CL_SPEC_MAX_ITEMS];
	char                    *env[CL_SPEC_MAX_ITEMS];
	char                   **strings; /* every string allocated here */
	size_t                   nstrings;
};

/* spec_dup copies str into the spec's string list. */
static char *
spec_dup(sv_groupspec *s, const char *str)
{
	char **l = realloc(s->strings, (s->nstrings + 1) * sizeof(*l));
	char  *d;

	if (l == NULL) {
		return NULL;
	}
	s->strings = l;
	if ((d = strdup(str)) == NULL) {
		return NULL;
	}
	s->strings[s->nstrings++] = d;
	return d;
}

sv_err
sv_groupspec_new(const char *name, const char *purpose, uint32_t count,
    sv_groupspec **specp)
{
	sv_groupspec *s;

	if (name == NULL || purpose == NULL || specp == NULL) {
		return SV_EINVAL;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		return SV_ENOMEM;
	}
	supervise__v1__group_spec__init(&s->spec);
	s->spec.argv    = s->argv;
	s->spec.env     = s->env;
	s->spec.options = s->option_ptrs;
	s->spec.count   = count;
	s->spec.cwd     = "";
	if ((s->spec.name = spec_dup(s, name)) == NULL
	    || (s->spec.purpose = spec_dup(s, purpose)) == NULL) {
		sv_groupspec_free(s);
		return SV_ENOMEM;
	}
	*specp = s;
	return SV_OK;
}

/* spec_push appends str to a string vector of the spec. */
static sv_err
spec_push(sv_groupspec *s, char **vec, size_t *n, const char *str)
{
	if (s == NULL || str == NULL) {
		return SV_EINVAL;
	}
	if (*n >= CL_SPEC_MAX_ITEMS) {
		return SV_ETOOLARGE;
	}
	if ((vec[*n] = spec_dup(s, str)) == NULL) {
		return SV_ENOMEM;
	}
	(*n)++;
	return SV_OK;
}

sv_err
sv_groupspec_add_arg(sv_groupspec *spec, const char *arg)
{
	return spec == NULL
	    ? SV_EINVAL
	    : spec_push(spec, spec->argv, &spec->spec.n_argv, arg);
}

sv_err
sv_groupspec_add_env(sv_groupspec *spec, const char *entry)
{
	return spec == NULL
	    ? SV_EINVAL
	    : spec_push(spec, spec->env, &spec->spec.n_env, entry);
}

sv_err
sv_groupspec_set_cwd(sv_groupspec *spec, const char *cwd)
{
	if (spec == NULL || cwd == NULL) {
		return SV_EINVAL;
	}
	if ((spec->spec.cwd = spec_dup(spec, cwd)) == NULL) {
		spec->spec.cwd = "";
		return SV_ENOMEM;
	}
	return SV_OK;
}

sv_err
sv_groupspec_set_max_count(sv_groupspec *spec, uint32_t max_count)
{
	if (spec == NULL) {
		return SV_EINVAL;
	}
	spec->spec.max_count = max_count;
	return SV_OK;
}

sv_err
sv_groupspec_set(sv_groupspec *spec, const char *key, const char *value)
{
	Supervise__V1__Option *o;

	if (spec == NULL || key == NULL || value == NULL) {
		return SV_EINVAL;
	}
	if (spec->spec.n_options >= CL_SPEC_MAX_ITEMS) {
		return SV_ETOOLARGE;
	}
	o = &spec->options[spec->spec.n_options];
	supervise__v1__option__init(o);
	if ((o->key = spec_dup(spec, key)) == NULL
	    || (o->value = spec_dup(spec, value)) == NULL) {
		return SV_ENOMEM;
	}
	spec->option_ptrs[spec->spec.n_options++] = o;
	return SV_OK;
}

void
sv_groupspec_free(sv_groupspec *spec)
{
	if (spec != NULL) {
		for (size_t i = 0; i < spec->nstrings; i++) {
			free(spec->strings[i]);
		}
		free(spec->strings);
		free(spec);
	}
}

sv_err
sv_client_create_group(
    sv_client *client, const sv_groupspec *spec, int timeout_ms)
{
	svw_env                    req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__CreateGroup cg  = SUPERVISE__V1__CREATE_GROUP__INIT;

	if (client == NULL || spec == NULL) {
		return SV_EINVAL;
	}
	cg.spec          = (Supervise__V1__GroupSpec *) &spec->spec;
	req.body_case    = SUPERVISE__V1__ENVELOPE__BODY_CREATE_GROUP;
	req.create_group = &cg;
	/* A resent copy finds the group there and is refused: not resent. */
	return cl_group_info(client, &req, false, timeout_ms, NULL);
}

/* ---- readiness and watchdog ------------------------------------------------
 */

sv_err
sv_client_ready(sv_client *client, const char *status, int timeout_ms)
{
	svw_env              req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__Ready r   = SUPERVISE__V1__READY__INIT;

	if (client == NULL) {
		return SV_EINVAL;
	}
	if (status != NULL && strlen(status) > SVW_MAX_TEXT) {
		return cl_fail(client, SV_ETOOLARGE, "status text too long");
	}
	r.status      = status != NULL ? (char *) status : "";
	req.body_case = SUPERVISE__V1__ENVELOPE__BODY_READY;
	req.ready     = &r;
	return cl_send(
	    client, &req, SUPERVISE__V1__ENVELOPE__BODY_ACK, true, timeout_ms);
}

sv_err
sv_client_heartbeat(sv_client *client, int timeout_ms)
{
	svw_env                  req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__Heartbeat h   = SUPERVISE__V1__HEARTBEAT__INIT;

	if (client == NULL) {
		return SV_EINVAL;
	}
	req.body_case = SUPERVISE__V1__ENVELOPE__BODY_HEARTBEAT;
	req.heartbeat = &h;
	return cl_send(
	    client, &req, SUPERVISE__V1__ENVELOPE__BODY_ACK, true, timeout_ms);
}
