/*
 * req_subworkers.c — the sub-worker requests: RegisterSubWorker and
 * ReleaseSubWorker through the sub-worker shell (subworkers.h,
 * docs/subworkers.md).
 */
#include "sup_internal.h"

/* ---- sub-workers (subworkers.h, docs/subworkers.md) -----------------------
 */

/* req_subw_attach tells whether pid is a live worker process (its key in
 * *key) and, when it is, declares it to the sub-worker shell with its
 * group's bound. Workers are declared here, when one of them or a child
 * of one first sends a sub-worker request, not at their spawn or
 * adoption: most workers never have sub-workers, and a declared one costs
 * a sub-worker entry and a pid-map slot. Declaring it again is a no-op. */
static bool
req_subw_attach(svd_sup *s, int64_t pid, sv_wkey *key)
{
	const svd_gsh *g;

	if (pid <= 0 || !sv_pidmap_get(&s->pids, (long) pid, key)) {
		return false;
	}
	if ((g = gsh_find(s, key->group_id)) != NULL) {
		svd_subw_attach(s->subw, *key, pid, g->cfg->max_subworkers);
	}
	return true;
}

/* req_subworkers answers RegisterSubWorker and ReleaseSubWorker through
 * the sub-worker shell, with the caller as the kernel tells it. A
 * registration's identity is the caller's process's (WhoAmI) made the
 * sub-worker's. */
sv_err
req_subworkers(req_ctx *c)
{
	svd_subw_caller sc  = {0};
	sv_subw_grant   g   = {0};
	req_reply      *r   = &c->out;
	sv_err          err = SV_OK;

	if (!svd_subw_is_request(c->req)) {
		return req_err(c, SV_EINTERNAL, "not a sub-worker request");
	}
	sc.pid       = c->peer_gone ? 0 : (int64_t) c->pid;
	sc.ppid      = sc.pid > 0 ? (int64_t) proc_ppid((long) sc.pid) : -1;
	sc.pidfd     = c->peer_pidfd;
	sc.is_worker = req_subw_attach(c->s, sc.pid, &sc.key);
	sc.parent_is_worker = req_subw_attach(c->s, sc.ppid, &(sv_wkey) {0});
	sc.emsg             = c->emsg;
	sc.emsglen          = c->emsglen;
	if ((err = svd_subw_handle(c->s->subw, c->req, &sc, &g)) != SV_OK) {
		return err;
	}
	if (c->req->body_case
	    == SUPERVISE__V1__ENVELOPE__BODY_RELEASE_SUB_WORKER) {
		supervise__v1__release_sub_worker_reply__init(&r->rel);
		c->rep.body_case
		    = SUPERVISE__V1__ENVELOPE__BODY_RELEASE_SUB_WORKER_REPLY;
		c->rep.release_sub_worker_reply = &r->rel;
		return SV_OK;
	}
	supervise__v1__register_sub_worker_reply__init(&r->reg);
	if ((err = req_whoami(c)) != SV_OK) {
		return err;
	}
	if (c->arena[0] == NULL
	    && svd_subw_fill(c->s->subw, &g, r->id.group, &r->id, &c->arena[0])
	        != SV_OK) {
		return req_err(c, SV_EINTERNAL, "cannot make the identity");
	}
	r->reg.identity = &r->id;
	r->reg.again    = g.again;
	c->rep.body_case
	    = SUPERVISE__V1__ENVELOPE__BODY_REGISTER_SUB_WORKER_REPLY;
	c->rep.register_sub_worker_reply = &r->reg;
	return SV_OK;
}
