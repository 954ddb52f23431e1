/*
 * client.c — the client handle (supervise/client.h): open, close, the
 * error detail, Hello, and the one call every request goes through, over
 * the SP REQ transport of transport.c. The requests themselves live in one
 * file per family (identity.c, workers.c, admin.c, groupspec.c,
 * readiness.c, lease.c, drain.c, subworker.c) and reach the call through
 * client_call.h.
 *
 * One connection per handle, one request in flight at a time (a mutex
 * serialises calls). The transport sends a request once; when the
 * connection is lost before the reply, a request the request table allows
 * to (libsupervise/src/requests.def, sv_req_resend) is sent again under a
 * new request id, and any other request fails with SV_ECLOSED. The reply
 * kind expected is the table's too. The
 * caller's timeout is turned into one absolute deadline that bounds
 * reconnecting, sending and receiving together.
 *
 * The error detail (errmsg) is written only with the handle's mutex held:
 * by the call, and by svc_fail for the checks the request files make
 * before or after it. sv_client_error_detail copies it under the same
 * mutex, so a thread sharing the handle never reads a half-written
 * message; sv_client_error_message returns the buffer itself.
 *
 * fork(): the handle remembers the pid that opened it. The first call in
 * another process (a child after fork) re-initialises the mutex, drops the
 * inherited descriptor without writing to it (the parent's connection is
 * untouched) and connects anew, so the supervisor sees the child's own peer
 * credentials. That check runs under cl_fork_mtx, which pthread_atfork
 * handlers keep unlocked across fork(); see client.h for why re-initialising
 * the handle's mutex there is sound.
 *
 * Divisions: errors and fork; open/close; the call; hello.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/client_call.h"
#include "wire/reqtable.h"
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
	/* The supervisor's header is the first call's to wait for, under its
	 * deadline: waiting here too made open + call on a supervisor that
	 * does not answer take twice the timeout. */
	if ((err = svt_connect_nowait(&c->conn, deadline)) != SV_OK) {
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

/* sv_client_error_message: see client.h (the buffer itself, unlocked). */
const char *
sv_client_error_message(const sv_client *client)
{
	return client != NULL ? client->errmsg : cl_open_errmsg;
}

/* Either message fits a buffer of SV_ERROR_DETAIL_SIZE bytes. */
_Static_assert(sizeof(((sv_client *) 0)->errmsg) <= SV_ERROR_DETAIL_SIZE,
    "errmsg larger than SV_ERROR_DETAIL_SIZE");
_Static_assert(sizeof(cl_open_errmsg) <= SV_ERROR_DETAIL_SIZE,
    "cl_open_errmsg larger than SV_ERROR_DETAIL_SIZE");

/*
 * sv_client_error_detail copies the detail into buf under the handle's
 * lock (cl_lock: in a forked child the handle is adopted first, as by any
 * call), so the copy is never torn by another thread's call.
 */
sv_err
sv_client_error_detail(sv_client *client, char *buf, size_t size)
{
	size_t n;

	if (buf == NULL || size == 0) {
		return SV_EINVAL;
	}
	if (client == NULL) {
		n = strlen(cl_open_errmsg);
		snprintf(buf, size, "%s", cl_open_errmsg);
	} else {
		cl_lock(client);
		n = strlen(client->errmsg);
		snprintf(buf, size, "%s", client->errmsg);
		pthread_mutex_unlock(&client->mtx);
	}
	return n < size ? SV_OK : SV_ETOOLARGE;
}

/* ---- the call -------------------------------------------------------------
 */

/*
 * cl_call_locked sends req and waits for a reply whose body is the one its
 * row of the request table names. On SV_OK *replyp is the decoded reply
 * (free with svw_free). A typed Error reply is returned as its sv_err with
 * the server's message kept in the client. A request whose connection is
 * lost before the reply is sent again, under a new request id and within
 * the same deadline, when the table's retry rule allows (sv_req_resend:
 * asking twice has the effect of asking once); otherwise the loss is
 * SV_ECLOSED. Called with the client's mutex held.
 */
static sv_err
cl_call_locked(sv_client *c, svw_env *req, int timeout_ms, svw_env **replyp)
{
	const sv_req_row *row = sv_req_find(req->body_case);
	svw_env          *rep = NULL;
	uint64_t          rid;
	int64_t           deadline = svt_deadline(timeout_ms);
	void             *rbuf     = NULL;
	size_t            rlen     = 0;
	bool              idempotent;
	sv_err            err;

	if (row == NULL) {
		return cl_fail(c, SV_EINVAL, "not a request of supervise.v1");
	}
	idempotent   = sv_req_resend(req);
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
	if (rep->body_case != row->reply) {
		svw_free(rep);
		return cl_fail(c, SV_EPROTO, "unexpected reply kind");
	}
	*replyp = rep;
	return cl_fail(c, SV_OK, NULL);
}

/* cl_call locks the client (adopting it after fork) around
 * cl_call_locked. */
static sv_err
cl_call(sv_client *c, svw_env *req, int timeout_ms, svw_env **replyp)
{
	sv_err err;

	cl_lock(c);
	err = cl_call_locked(c, req, timeout_ms, replyp);
	pthread_mutex_unlock(&c->mtx);
	return err;
}

/* svc_call gives the other files of the client cl_call (client_call.h). */
sv_err
svc_call(sv_client *c, svw_env *req, int timeout_ms, svw_env **replyp)
{
	return cl_call(c, req, timeout_ms, replyp);
}

/* svc_fail gives the other files of the client cl_fail, under the lock
 * (client_call.h). */
sv_err
svc_fail(sv_client *c, sv_err err, const char *detail)
{
	/* Outside a call: take the lock, so that sv_client_error_detail
	 * never reads the message while it is being written. */
	cl_lock(c);
	cl_fail(c, err, detail);
	pthread_mutex_unlock(&c->mtx);
	return err;
}

/* svc_send sends a request whose reply carries nothing the caller needs
 * (client_call.h). */
sv_err
svc_send(sv_client *c, svw_env *req, int timeout_ms)
{
	svw_env *rep = NULL;
	sv_err   err = cl_call(c, req, timeout_ms, &rep);

	if (err == SV_OK) {
		svw_free(rep);
	}
	return err;
}

/* svc_call_kept sends req and moves the reply into a new handle
 * (client_call.h). */
sv_err
svc_call_kept(
    sv_client *c, svw_env *req, int timeout_ms, size_t size, void **handlep)
{
	svw_env  *rep = NULL;
	svw_env **h;
	sv_err    err = cl_call(c, req, timeout_ms, &rep);

	if (err != SV_OK) {
		return err;
	}
	/* The handle's first member is the reply: a pointer to the struct,
	 * converted, points to that member (C11 6.7.2.1). */
	if ((h = calloc(1, size)) == NULL) {
		svw_free(rep);
		return svc_fail(c, SV_ENOMEM, "out of memory");
	}
	*h       = rep;
	*handlep = h;
	return SV_OK;
}

/* svc_check_group validates the client and a group name argument
 * (client_call.h). */
sv_err
svc_check_group(sv_client *c, const char *group, int optional)
{
	if (c == NULL) {
		return SV_EINVAL;
	}
	if (optional && (group == NULL || group[0] == '\0')) {
		return SV_OK;
	}
	if (svw_check_name(group) != SV_OK) {
		return svc_fail(c, SV_EINVAL,
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
	void                *out = NULL;
	sv_err               err;

	if (client == NULL || hellop == NULL) {
		return SV_EINVAL;
	}
	h.client_name = "libsupervise/" SV_VERSION_STRING;
	h.min_version = SV_PROTOCOL_VERSION;
	h.max_version = SV_PROTOCOL_VERSION;
	req.body_case = SUPERVISE__V1__ENVELOPE__BODY_HELLO;
	req.hello     = &h;
	err = svc_call_kept(client, &req, timeout_ms, sizeof(sv_hello), &out);
	if (err == SV_OK) {
		*hellop = out;
	}
	return err;
}

/*
 * HELLO_FIELD defines sv_hello_NAME(h): field FIELD of the HelloReply kept
 * in h, or DFLT when h is NULL.
 */
#define HELLO_FIELD(type, name, field, dflt)                         \
	type sv_hello_##name(const sv_hello *h)                      \
	{                                                            \
		return h != NULL ? (type) h->env->hello_reply->field \
		                 : (dflt);                           \
	}

HELLO_FIELD(uint32_t, version, version, 0)
HELLO_FIELD(uint32_t, minor_version, minor_version, 0)
HELLO_FIELD(const char *, server_name, server_name, "")
HELLO_FIELD(const char *, supervisor_id, supervisor_id, "")
HELLO_FIELD(size_t, feature_count, n_features, 0)
HELLO_FIELD(const char *, events_url, events_url, "")

/* hello_dur returns the Durability of h's reply, or NULL (a NULL h, or a
 * server older than v1.5). */
static const Supervise__V1__Durability *
hello_dur(const sv_hello *h)
{
	return h != NULL ? h->env->hello_reply->durability : NULL;
}

/* sv_hello_durability_known: see client.h. */
int
sv_hello_durability_known(const sv_hello *h)
{
	return hello_dur(h) != NULL;
}

/* sv_hello_durability_ok: see client.h; 0 when unknown. */
int
sv_hello_durability_ok(const sv_hello *h)
{
	return hello_dur(h) != NULL && hello_dur(h)->ok;
}

/* sv_hello_durability_reason: see client.h; "" when unknown. */
const char *
sv_hello_durability_reason(const sv_hello *h)
{
	return hello_dur(h) != NULL ? hello_dur(h)->reason : "";
}

/* sv_hello_durability_since_ms: see client.h; 0 when unknown. */
uint64_t
sv_hello_durability_since_ms(const sv_hello *h)
{
	return hello_dur(h) != NULL ? hello_dur(h)->since_ms : 0;
}

/* sv_hello_durability_message: see client.h; "" when unknown. */
const char *
sv_hello_durability_message(const sv_hello *h)
{
	return hello_dur(h) != NULL ? hello_dur(h)->message : "";
}

/* sv_hello_feature: see client.h; NULL for a NULL h or i out of range. */
const char *
sv_hello_feature(const sv_hello *h, size_t i)
{
	if (h == NULL || i >= h->env->hello_reply->n_features) {
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
