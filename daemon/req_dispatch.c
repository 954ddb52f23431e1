/*
 * req_dispatch.c — the request table of supervised: decoding a request,
 * finding its row (libsupervise/src/requests.def), checking the caller the
 * row allows, running the row's handler and encoding the answer (or the
 * error).
 *
 * Design: the rows of requests.def expanded into one static table indexed
 * by the Envelope body number, {handler, who}. A body with no row is a
 * reply sent as a request (or no request at all): BAD_REQUEST "not a
 * request". The caller check runs before the handler, so no handler of an
 * ADMIN or WORKER row can be reached by a caller the row does not allow
 * (req_check_caller, req_common.c). A handler fills c->rep with messages
 * stored in c->out (part of the request's context) or in c->arena (freed
 * here after encoding).
 */
#include "sup_internal.h"

/* A handler of a row of requests.def. */
typedef sv_err (*req_fn)(req_ctx *c);

/* One row of the dispatch table. */
typedef struct req_entry {
	req_fn     fn; /* NULL: this body is no request */
	sv_req_who who;
} req_entry;

/* The dispatch table, indexed by body number. */
static const req_entry req_table[] = {
#define SV_REQUEST(body, reply, feature, since, who, retry, handler) \
	[SUPERVISE__V1__ENVELOPE__BODY_##body] = {handler, SV_REQ_##who},
#define SV_FEATURE(name, since, body, field)
#include "requests.def"
#undef SV_REQUEST
#undef SV_FEATURE
};
#define REQ_TABLE_LEN (sizeof(req_table) / sizeof(req_table[0]))

/* req_entry_of returns the dispatch row of body, or NULL. */
static const req_entry *
req_entry_of(svw_body body)
{
	if ((size_t) body >= REQ_TABLE_LEN || req_table[body].fn == NULL) {
		return NULL;
	}
	return &req_table[body];
}

/* req_leases hands a lease, session or pool request to the lease shell
 * with the caller as the kernel tells it (the handler of every lease row:
 * the lease shell serves each kind in svd_leases_handle). */
sv_err
req_leases(req_ctx *c)
{
	svd_lease_caller lc
	    = {false, {0, 0, 0}, c->uid, false, c->emsg, c->emsglen};
	sv_err err = SV_OK;

	lc.is_worker = req_find_worker(c, &lc.key);
	lc.admin     = req_admin(c) == SV_OK;
	c->emsg[0]   = '\0';
	if (!svd_leases_handle(c->s->leases, c->req, &lc, c->defer, &c->rep,
	        c->arena, &err)) {
		return req_err(c, SV_EINTERNAL,
		    "the lease shell does not serve message kind %d",
		    (int) c->req->body_case);
	}
	sup_run_effects(c->s);
	return err;
}

/* req_reply_init sets every message of the reply storage to its default. */
static void
req_reply_init(req_reply *o)
{
	supervise__v1__hello_reply__init(&o->hello);
	supervise__v1__identity__init(&o->id);
	supervise__v1__frame__init(&o->fr);
	o->frames[0] = NULL;
	supervise__v1__worker_list__init(&o->wl);
	supervise__v1__worker_status__init(&o->ws);
	supervise__v1__group_change__init(&o->gc);
	supervise__v1__group_list__init(&o->gl);
	supervise__v1__group_info__init(&o->gi);
	supervise__v1__ack__init(&o->ack);
	supervise__v1__drain_report__init(&o->dr);
	supervise__v1__register_sub_worker_reply__init(&o->reg);
	supervise__v1__release_sub_worker_reply__init(&o->rel);
}

/* req_done forgets the reply (its body pointed into this call's storage)
 * and frees the arena. */
static void
req_done(req_ctx *c)
{
	supervise__v1__envelope__init(&c->rep);
	free(c->arena[0]);
	free(c->arena[1]);
	free(c->arena[2]);
}

/* req_handle routes a decoded request to its handler through the table,
 * after the row's caller check, and encodes the answer into *replyp (NULL
 * when the lease shell took the request to answer later). */
sv_err
req_handle(req_ctx *c, nng_msg **replyp)
{
	const req_entry *e = req_entry_of(c->req->body_case);
	sv_err           err;

	req_reply_init(&c->out);
	supervise__v1__envelope__init(&c->rep);
	c->rep.version    = SV_PROTOCOL_VERSION;
	c->rep.request_id = c->req->request_id;
	if (e == NULL) {
		err = req_err(c, SV_EBADREQ,
		    "message kind %d is not a request",
		    (int) c->req->body_case);
	} else if ((err = req_check_caller(c, e->who)) == SV_OK) {
		err = e->fn(c);
	}
	if (c->defer != NULL && c->defer->taken) {
		/* Answered later by the lease shell. */
		req_done(c);
		*replyp = NULL;
		return SV_OK;
	}
	if (err == SV_OK) {
		err = svw_encode(&c->rep, SVW_MAX_REPLY, replyp);
		if (err == SV_ETOOLARGE) {
			req_err(c, err,
			    "reply exceeds %u bytes; ask for pages "
			    "(ListWorkers.page_size) or one group",
			    SVW_MAX_REPLY);
		} else if (err != SV_OK) {
			req_err(c, err, "cannot encode reply");
		}
	}
	req_done(c);
	return err;
}

/* svd_sup_dispatch: see supervisor.h. */
sv_err
svd_sup_dispatch(svd_sup *s, const void *buf, size_t len, uint64_t peer_pid,
    uint64_t peer_uid, nng_msg **replyp)
{
	return sup_dispatch(
	    s, buf, len, peer_pid, peer_uid, -1, NULL, NULL, replyp);
}

/* sup_dispatch is svd_sup_dispatch with the connecting process's pidfd
 * (or -1: not known, trust peer_pid): a process that has exited is no
 * longer the caller, whatever now runs under its pid. */
sv_err
sup_dispatch(svd_sup *s, const void *buf, size_t len, uint64_t peer_pid,
    uint64_t peer_uid, int peer_pidfd, svd_peer_memo *memo,
    svd_lease_defer *defer, nng_msg **replyp)
{
	svw_env *req = NULL;
	uint64_t rid;
	char     emsg[SVW_MAX_TEXT];
	sv_err   err;
	req_ctx  c
	    = {s, NULL, peer_pid, peer_uid, SUPERVISE__V1__ENVELOPE__INIT,
	        emsg, sizeof(emsg), {NULL, NULL, NULL}, "", false};

	emsg[0]      = '\0';
	c.defer      = defer;
	c.peer_pidfd = peer_pidfd;
	c.memo       = memo;
	/* Asked right before the answer, on the thread that answers: a
	 * pidfd that is readable means the process has exited. */
	if (peer_pidfd >= 0) {
		struct pollfd pfd = {peer_pidfd, POLLIN, 0};
		c.peer_gone       = poll(&pfd, 1, 0) > 0;
	}
	err = svw_decode(buf, len, SVW_MAX_REQUEST, &req, &rid);
	switch (err) {
	case SV_OK:
		break;
	case SV_ETOOLARGE:
		snprintf(emsg, sizeof(emsg), "request of %zu bytes exceeds %u",
		    len, SVW_MAX_REQUEST);
		break;
	case SV_EVERSION:
		snprintf(emsg, sizeof(emsg), "this server speaks version %d",
		    SV_PROTOCOL_VERSION);
		break;
	case SV_EUNKNOWNMSG:
		snprintf(emsg, sizeof(emsg),
		    "message kind not known to this server (features: see "
		    "Hello)");
		break;
	default:
		snprintf(emsg, sizeof(emsg),
		    "not a supervise.v1 Envelope (or version missing)");
		break;
	}
	if (err == SV_OK) {
		c.req = req;
		err   = req_handle(&c, replyp);
		svw_free(req);
	}
	if (err == SV_OK) {
		return SV_OK;
	}
	return svw_encode_error(rid, err, emsg, replyp);
}
