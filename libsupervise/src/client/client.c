/*
 * client.c — the C client API (supervise/client.h) over nng REQ/REP.
 *
 * One REQ socket per handle, one request in flight at a time (a mutex
 * serialises calls). Resends are disabled: a request is sent once, and a
 * lost connection surfaces as SV_ECLOSED instead of being replayed (platform
 * notes 1.6). The caller's timeout is turned into one absolute deadline that
 * bounds send and receive together.
 *
 * Result handles (sv_hello, sv_identity, sv_workers) keep the decoded reply
 * envelope and read from it, so accessors never copy and strings live as
 * long as the handle.
 *
 * Divisions: errors and deadlines; open/close; the call; one section per
 * request kind with its accessors.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>
#include <nng/supplemental/util/platform.h>

#include "supervise/client.h"
#include "wire/wire.h"

#define CL_MAX_URL 512

struct sv_client {
	nng_socket      sock;
	pthread_mutex_t mtx;
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
	svw_env                      *env;
	Supervise__V1__WorkerStatus **items;
	size_t                        n;
};

/* ---- errors and deadlines ------------------------------------------------
 */

/* cl_nng_err maps an nng error to sv_err. */
static sv_err
cl_nng_err(int rv)
{
	switch (rv) {
	case 0:
		return SV_OK;
	case NNG_ETIMEDOUT:
		return SV_ETIMEDOUT;
	case NNG_ENOMEM:
		return SV_ENOMEM;
	case NNG_ECLOSED:
	case NNG_ECONNRESET:
	case NNG_ECONNSHUT:
	case NNG_ECONNABORTED:
		return SV_ECLOSED;
	case NNG_ECONNREFUSED:
	case NNG_ENOENT:
	case NNG_EADDRINVAL:
		return SV_ECONNECT;
	case NNG_EMSGSIZE:
		return SV_ETOOLARGE;
	default:
		return SV_ESYSTEM;
	}
}

/* cl_lost tells whether rv means the connection went away under a request
 * (the dialer reconnects by itself), as opposed to our socket closing. */
static bool
cl_lost(int rv)
{
	return rv == NNG_ECONNRESET || rv == NNG_ECONNSHUT
	    || rv == NNG_ECONNABORTED;
}

/* cl_fail records a detail message and returns err. */
static sv_err
cl_fail(sv_client *c, sv_err err, const char *detail)
{
	snprintf(
	    c->errmsg, sizeof(c->errmsg), "%s", detail != NULL ? detail : "");
	return err;
}

/* cl_now_ms reads the monotonic clock in milliseconds. */
static int64_t
cl_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* cl_remaining turns an absolute deadline (-1: none) into an nng duration. */
static nng_duration
cl_remaining(int64_t deadline)
{
	int64_t left;

	if (deadline < 0) {
		return NNG_DURATION_INFINITE;
	}
	left = deadline - cl_now_ms();
	if (left <= 0) {
		return 0;
	}
	return left > INT32_MAX ? INT32_MAX : (nng_duration) left;
}

/* cl_deadline turns a relative timeout into an absolute deadline. */
static int64_t
cl_deadline(int timeout_ms)
{
	return timeout_ms < 0 ? -1 : cl_now_ms() + timeout_ms;
}

/* ---- open / close
 * ----------------------------------------------------------- */

sv_err
sv_client_open(sv_client **clientp, const char *url, int timeout_ms)
{
	sv_client *c;
	nng_dialer d;
	int        rv;
	int64_t    deadline = cl_deadline(timeout_ms);

	if (clientp == NULL) {
		return SV_EINVAL;
	}
	if (url == NULL || url[0] == '\0') {
		url = getenv(SV_ENV_URL);
	}
	if (url == NULL || url[0] == '\0' || strlen(url) >= CL_MAX_URL) {
		return SV_EINVAL;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		return SV_ENOMEM;
	}
	if (pthread_mutex_init(&c->mtx, NULL) != 0) {
		free(c);
		return SV_ESYSTEM;
	}
	if ((rv = nng_req0_open(&c->sock)) != 0) {
		pthread_mutex_destroy(&c->mtx);
		free(c);
		return cl_nng_err(rv);
	}
	nng_socket_set_ms(
	    c->sock, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE);
	nng_socket_set_ms(c->sock, NNG_OPT_RECONNMINT, 10);
	nng_socket_set_ms(c->sock, NNG_OPT_RECONNMAXT, 1000);
	for (;;) {
		if ((rv = nng_dialer_create(&d, c->sock, url)) != 0) {
			break;
		}
		nng_dialer_set_size(d, NNG_OPT_RECVMAXSZ, SVW_MAX_REPLY);
		if ((rv = nng_dialer_start(d, 0)) == 0) {
			break;
		}
		nng_dialer_close(d);
		if (rv != NNG_ECONNREFUSED && rv != NNG_ENOENT
		    && !cl_lost(rv)) {
			break;
		}
		if (deadline >= 0 && cl_now_ms() >= deadline) {
			break;
		}
		/* Nobody listening yet: retry until the deadline. */
		nng_msleep(10);
	}
	if (rv != 0) {
		nng_close(c->sock);
		pthread_mutex_destroy(&c->mtx);
		free(c);
		return rv == NNG_EADDRINVAL || rv == NNG_ENOTSUP ? SV_EINVAL
		                                                 : SV_ECONNECT;
	}
	*clientp = c;
	return SV_OK;
}

void
sv_client_close(sv_client *client)
{
	if (client == NULL) {
		return;
	}
	nng_close(client->sock);
	pthread_mutex_destroy(&client->mtx);
	free(client);
}

const char *
sv_client_error_message(const sv_client *client)
{
	return client != NULL ? client->errmsg : "";
}

/* ---- the call -------------------------------------------------------------
 */

/*
 * cl_call sends req and waits for a reply whose body is expect. On SV_OK
 * *replyp is the decoded reply (free with svw_free). A typed Error reply is
 * returned as its sv_err with the server's message kept in the client.
 * A request whose connection is lost before the reply is sent again, under
 * a new request id and within the same deadline, when it is idempotent
 * (asking twice has the effect of asking once); otherwise the loss is
 * SV_ECLOSED. Called with the client's mutex held.
 */
static sv_err
cl_call_locked(sv_client *c, svw_env *req, svw_body expect, bool idempotent,
    int timeout_ms, svw_env **replyp)
{
	nng_msg *msg = NULL;
	svw_env *rep = NULL;
	uint64_t rid;
	int64_t  deadline = cl_deadline(timeout_ms);
	sv_err   err;
	int      rv;

	req->version = SV_PROTOCOL_VERSION;
	for (;;) {
		req->request_id = ++c->next_id;
		if ((err = svw_encode(req, SVW_MAX_REQUEST, &msg)) != SV_OK) {
			return cl_fail(
			    c, err, "request exceeds the protocol's bound");
		}
		nng_socket_set_ms(
		    c->sock, NNG_OPT_SENDTIMEO, cl_remaining(deadline));
		if ((rv = nng_sendmsg(c->sock, msg, 0)) != 0) {
			nng_msg_free(msg);
		} else {
			nng_socket_set_ms(c->sock, NNG_OPT_RECVTIMEO,
			    cl_remaining(deadline));
			rv = nng_recvmsg(c->sock, &msg, 0);
		}
		if (rv == 0) {
			break;
		}
		if (!idempotent || !cl_lost(rv)
		    || (deadline >= 0 && cl_now_ms() >= deadline)) {
			return cl_fail(c, cl_nng_err(rv), nng_strerror(rv));
		}
	}
	err = svw_decode(
	    nng_msg_body(msg), nng_msg_len(msg), SVW_MAX_REPLY, &rep, &rid);
	nng_msg_free(msg);
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

/* cl_call locks the client around cl_call_locked, for idempotent
 * requests; cl_call_once for the others. */
static sv_err
cl_call_mode(sv_client *c, svw_env *req, svw_body expect, bool idempotent,
    int timeout_ms, svw_env **replyp)
{
	sv_err err;

	pthread_mutex_lock(&c->mtx);
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

/* cl_workers wraps a reply holding workers into a new sv_workers. */
static sv_err
cl_workers(svw_env *rep, Supervise__V1__WorkerStatus **items, size_t n,
    sv_workers **workersp)
{
	sv_workers *w = malloc(sizeof(*w));

	if (w == NULL) {
		svw_free(rep);
		return SV_ENOMEM;
	}
	w->env    = rep;
	w->items  = items;
	w->n      = n;
	*workersp = w;
	return SV_OK;
}

sv_err
sv_client_list(sv_client *client, const char *group, int timeout_ms,
    sv_workers **workersp)
{
	svw_env                    req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__ListWorkers l   = SUPERVISE__V1__LIST_WORKERS__INIT;
	svw_env                   *rep = NULL;
	sv_err                     err;

	if (client == NULL || workersp == NULL) {
		return SV_EINVAL;
	}
	if ((err = cl_group(client, group, 1)) != SV_OK) {
		return err;
	}
	l.group          = group != NULL ? (char *) group : "";
	req.body_case    = SUPERVISE__V1__ENVELOPE__BODY_LIST_WORKERS;
	req.list_workers = &l;
	err = cl_call(client, &req, SUPERVISE__V1__ENVELOPE__BODY_WORKER_LIST,
	    timeout_ms, &rep);
	if (err != SV_OK) {
		return err;
	}
	return cl_workers(rep, rep->worker_list->workers,
	    rep->worker_list->n_workers, workersp);
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
	return cl_workers(rep, &rep->worker_status, 1, workersp);
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

void
sv_workers_free(sv_workers *w)
{
	if (w != NULL) {
		svw_free(w->env);
		free(w);
	}
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

sv_err
sv_client_restart(
    sv_client *client, const char *group, uint32_t ordinal, int timeout_ms)
{
	svw_env                      req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__RestartWorker r   = SUPERVISE__V1__RESTART_WORKER__INIT;
	svw_env                     *rep = NULL;
	sv_err                       err;

	if (client == NULL) {
		return SV_EINVAL;
	}
	if ((err = cl_group(client, group, 0)) != SV_OK) {
		return err;
	}
	r.group            = (char *) group;
	r.ordinal          = ordinal;
	req.body_case      = SUPERVISE__V1__ENVELOPE__BODY_RESTART_WORKER;
	req.restart_worker = &r;
	/* Not idempotent: a lost connection is reported, never resent. */
	err = cl_call_mode(client, &req,
	    SUPERVISE__V1__ENVELOPE__BODY_WORKER_STATUS, false, timeout_ms,
	    &rep);
	if (err == SV_OK) {
		svw_free(rep);
	}
	return err;
}
