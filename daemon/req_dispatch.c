/*
 * req_dispatch.c — decoding a request, routing it to its handler and
 * encoding the answer (or the error).
 */
#include "sup_internal.h"

bool
req_leases(req_ctx *c, sv_err *errp)
{
	svd_lease_caller lc
	    = {false, {0, 0, 0}, c->uid, false, c->emsg, c->emsglen};
	bool handled;

	lc.is_worker = req_find_worker(c, &lc.key);
	lc.admin     = req_admin(c) == SV_OK;
	c->emsg[0]   = '\0';
	handled      = svd_leases_handle(
	         c->s->leases, c->req, &lc, c->defer, &c->rep, c->arena, errp);
	if (handled) {
		sup_run_effects(c->s);
	}
	return handled;
}

sv_err
req_handle(req_ctx *c, nng_msg **replyp)
{
	Supervise__V1__HelloReply   hr = SUPERVISE__V1__HELLO_REPLY__INIT;
	Supervise__V1__Identity     id = SUPERVISE__V1__IDENTITY__INIT;
	Supervise__V1__Frame        fr = SUPERVISE__V1__FRAME__INIT;
	Supervise__V1__Frame       *frames[1];
	Supervise__V1__WorkerList   wl  = SUPERVISE__V1__WORKER_LIST__INIT;
	Supervise__V1__WorkerStatus ws  = SUPERVISE__V1__WORKER_STATUS__INIT;
	Supervise__V1__GroupChange  gc  = SUPERVISE__V1__GROUP_CHANGE__INIT;
	Supervise__V1__GroupList    gl  = SUPERVISE__V1__GROUP_LIST__INIT;
	Supervise__V1__GroupInfo    gi  = SUPERVISE__V1__GROUP_INFO__INIT;
	Supervise__V1__Ack          ack = SUPERVISE__V1__ACK__INIT;
	sv_err                      err;

	supervise__v1__envelope__init(&c->rep);
	c->rep.version    = SV_PROTOCOL_VERSION;
	c->rep.request_id = c->req->request_id;
	switch (c->req->body_case) {
	case SUPERVISE__V1__ENVELOPE__BODY_HELLO:
		err = req_hello(c, &hr);
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_WHOAMI:
		err = req_whoami(c, &id, &fr, frames);
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_LIST_WORKERS:
		err = req_list(c, &wl);
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_GET_STATUS:
		err = req_status(c, &ws);
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_SCALE_GROUP:
		err = req_resize(c, c->req->scale_group->group,
		    c->req->scale_group->count, &gc);
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_STOP_GROUP:
		err = req_resize(c, c->req->stop_group->group, 0, &gc);
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_RESTART_WORKER:
		err = req_restart(c, &ws);
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_RESET_GROUP:
		err = req_reset(c, &gi);
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_LIST_GROUPS:
		err = req_groups(c, &gl);
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_START_WORKER:
		err = req_start_worker(c, &ws);
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_TERMINATE_WORKER:
		err = req_terminate_worker(c, &ws);
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_READY:
		err = req_ready_heartbeat(c, true, &ack);
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_CREATE_GROUP:
		err = req_create_group(c, &gi);
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_DELETE_GROUP:
		err = req_delete_group(c, &gi);
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_HEARTBEAT:
		err = req_ready_heartbeat(c, false, &ack);
		break;
	default:
		if (req_drain(c, &err) || req_subworkers(c, &err)) {
			break;
		}
		if (req_leases(c, &err)) {
			if (c->defer != NULL && c->defer->taken) {
				/* Answered later by the lease shell. */
				supervise__v1__envelope__init(&c->rep);
				free(c->arena[0]);
				free(c->arena[1]);
				free(c->arena[2]);
				*replyp = NULL;
				return SV_OK;
			}
			break;
		}
		err = req_err(c, SV_EBADREQ,
		    "message kind %d is not a request",
		    (int) c->req->body_case);
		break;
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
	/* The body pointed into this frame: forget it. */
	supervise__v1__envelope__init(&c->rep);
	free(c->arena[0]);
	free(c->arena[1]);
	free(c->arena[2]);
	return err;
}

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
