/*
 * req_identity.c — the identity requests: Hello, WhoAmI, Ready and
 * Heartbeat, and finding the worker a caller is (or descends from).
 */
#include "procstat.h"
#include "sup_internal.h"

/* req_hello answers Hello with the version and the features of the
 * request table (libsupervise/src/requests.def), in its order. */
sv_err
req_hello(req_ctx *c)
{
	const Supervise__V1__Hello *h  = c->req->hello;
	Supervise__V1__HelloReply  *hr = &c->out.hello;
	size_t                      n;

	if (strlen(h->client_name) > SVW_MAX_TEXT) {
		return req_err(c, SV_ETOOLARGE, "client_name too long");
	}
	if ((h->min_version != 0 && h->min_version > SV_PROTOCOL_VERSION)
	    || (h->max_version != 0 && h->max_version < SV_PROTOCOL_VERSION)) {
		return req_err(c, SV_EVERSION,
		    "client speaks versions %u..%u; this server speaks %d",
		    h->min_version, h->max_version, SV_PROTOCOL_VERSION);
	}
	hr->version       = SV_PROTOCOL_VERSION;
	hr->minor_version = SV_PROTOCOL_MINOR;
	hr->server_name   = "supervised/" SV_VERSION_STRING;
	hr->supervisor_id = c->s->id;
	n = sv_req_features(c->out.features, SV_REQ_MAX_FEATURES);
	if (n > SV_REQ_MAX_FEATURES) {
		return req_err(c, SV_EINTERNAL, "too many features");
	}
	hr->n_features = n;
	hr->features   = (char **) c->out.features;
	hr->events_url = c->s->events != NULL
	    ? (char *) svd_events_url(c->s->events)
	    : (char *) "";
	hr->epoch      = c->s->epoch;
	supervise__v1__durability__init(&c->out.dur);
	sup_durability_fill(c->s, &c->out.dur);
	hr->durability     = &c->out.dur;
	c->rep.body_case   = SUPERVISE__V1__ENVELOPE__BODY_HELLO_REPLY;
	c->rep.hello_reply = hr;
	return SV_OK;
}

/* proc_ppid reads the parent pid of pid from /proc, or -1 (one open, one
 * read, one close: it runs for every request of a non-worker). */
long
proc_ppid(long pid)
{
	sv_procstat ps;

	if (pid <= 0 || sv_procstat_read((pid_t) pid, &ps) != SV_OK) {
		return -1;
	}
	return (long) ps.ppid;
}

/* req_find_worker finds the worker that is the caller or its nearest
 * ancestor (sup_find_worker). */
bool
req_find_worker(req_ctx *c, sv_wkey *keyp)
{
	/* Asked once per request, and remembered for the connection while
	 * the pid table is unchanged (svd_peer_memo): the walk may read
	 * /proc at each level. */
	if (c->found == 0) {
		uint64_t       v = sv_pidmap_version(&c->s->pids);
		svd_peer_memo *m = c->memo;

		if (c->peer_gone || c->pid == 0) {
			c->found = -1;
		} else if (m != NULL && m->version == v) {
			c->found     = m->found ? 1 : -1;
			c->found_key = m->key;
		} else {
			c->found = sup_find_worker(
			               c->s, (long) c->pid, &c->found_key)
			    ? 1
			    : -1;
			if (m != NULL) {
				m->version = v;
				m->found   = c->found > 0;
				m->key     = c->found_key;
			}
		}
	}
	if (c->found > 0) {
		*keyp = c->found_key;
	}
	return c->found > 0;
}

/* req_caller finds the worker that is the caller or its nearest ancestor
 * (req_find_worker), or answers NOT_A_WORKER. */
sv_err
req_caller(req_ctx *c, const sv_cgroup **gp, sv_seat_view *vp,
    const sv_proc_view **pp)
{
	sv_wkey          key;
	const sv_cgroup *g;

	if (c->peer_gone) {
		return req_err(c, SV_ENOTWORKER,
		    "the process that opened this connection (pid %" PRIu64
		    ") has exited; its pid may belong to another process now",
		    c->pid);
	}
	if (c->pid == 0) {
		return req_err(c, SV_ENOTWORKER,
		    "the caller's process cannot be identified");
	}
	if (req_find_worker(c, &key)
	    && (g = sv_core_group(c->s->core, key.group_id)) != NULL
	    && sv_core_seat_view(c->s->core, key.group_id, key.ordinal, vp)
	        == SV_OK) {
		*gp = g;
		*pp = sv_seat_view_proc(vp, key.generation);
		return SV_OK;
	}
	return req_err(c, SV_ENOTWORKER,
	    "pid %" PRIu64 " is neither a worker of supervisor %s "
	    "nor a descendant of one",
	    c->pid, c->s->id);
}

/* req_caller_proc is req_caller for a request about the caller's own
 * process: it also fails, with SV_EINTERNAL and no message, when the
 * caller's seat shows no process of the caller's generation. */
sv_err
req_caller_proc(req_ctx *c, const sv_cgroup **gp, sv_seat_view *vp,
    const sv_proc_view **pp)
{
	sv_err err = req_caller(c, gp, vp, pp);

	if (err != SV_OK) {
		return err;
	}
	return *gp == NULL || *pp == NULL ? SV_EINTERNAL : SV_OK;
}

/* req_whoami answers for the caller, identified by the kernel (the peer
 * pid of the connection) or by its nearest supervised ancestor. */
sv_err
req_whoami(req_ctx *c)
{
	Supervise__V1__Identity *id     = &c->out.id;
	Supervise__V1__Frame    *fr     = &c->out.fr;
	Supervise__V1__Frame   **frames = c->out.frames;
	const sv_cgroup         *g      = NULL;
	sv_seat_view             sv;
	const sv_seat_view      *s = &sv;
	const sv_proc_view      *p = NULL;
	sv_err                   err;
	svd_gsh                 *gsh;
	uint64_t                 dl = 0;

	if ((err = req_caller_proc(c, &g, &sv, &p)) != SV_OK) {
		return err;
	}
	gsh               = gsh_find(c->s, g->id);
	fr->kind          = SUPERVISE__V1__WORKER_KIND__WORKER_KIND_PROCESS;
	fr->ordinal       = s->ordinal;
	fr->generation    = p->generation;
	fr->name          = g->name;
	frames[0]         = fr;
	id->group         = g->name;
	id->ordinal       = s->ordinal;
	id->generation    = p->generation;
	id->kind          = SUPERVISE__V1__WORKER_KIND__WORKER_KIND_PROCESS;
	id->pid           = p->pid;
	id->purpose       = gsh != NULL ? gsh->cfg->purpose : "";
	id->supervisor_id = c->s->id;
	id->n_context     = 1;
	id->context       = frames;
	id->parent        = NULL; /* a top-level process has no parent frame */
	id->group_size    = sv_core_group_count(g);
	if (sv_core_proc_deadline(c->s->core,
	        (sv_wkey) {g->id, s->ordinal, p->generation}, &dl)) {
		uint64_t now             = sv_loop_now_ms();
		id->draining             = true;
		id->drain_deadline_in_ms = dl > now ? dl - now : 0;
	}
	/* A registered child is answered as its sub-worker (v1.4). */
	if (c->arena[2] == NULL) {
		(void) svd_subw_whoami(
		    c->s->subw, (int64_t) c->pid, g->name, id, &c->arena[2]);
	}
	c->rep.body_case = SUPERVISE__V1__ENVELOPE__BODY_IDENTITY;
	c->rep.identity  = id;
	return SV_OK;
}

/* req_ready_heartbeat handles Ready and Heartbeat from a worker. */
static sv_err
req_ready_heartbeat(req_ctx *c, bool ready)
{
	const sv_cgroup    *g = NULL;
	sv_seat_view        sv;
	const sv_seat_view *s = &sv;
	const sv_proc_view *p = NULL;
	sv_wkey             key;
	sv_err              err;

	if ((err = req_caller_proc(c, &g, &sv, &p)) != SV_OK) {
		return err;
	}
	if (p->pid != (int64_t) c->pid) {
		svd_gsh *gs = gsh_find(c->s, g->id);
		if (gs == NULL || !gs->cfg->notify_all) {
			return req_err(c, SV_EPERM,
			    "only the worker process itself (pid %" PRId64
			    ") may report for %s[%" PRIu32
			    "] (notify_access = \"all\" lets its descendants)",
			    p->pid, g->name, s->ordinal);
		}
	}
	key = (sv_wkey) {g->id, s->ordinal, p->generation};
	if (ready && c->req->ready->status[0] != '\0') {
		char text[SVD_NOTIFY_STATUS_MAX + 1];
		snprintf(text, sizeof(text), "%s", c->req->ready->status);
		for (char *q = text; *q != '\0'; q++) {
			if ((unsigned char) *q < 0x20) {
				*q = '?';
			}
		}
		sup_status_text(c->s, key, text);
	}
	err = ready ? sv_core_ready(c->s->core, key, sv_loop_now_ms())
	            : sv_core_heartbeat(c->s->core, key, sv_loop_now_ms());
	if (err == SV_ENOMEM) {
		return req_err(c, err,
		    "the supervisor is out of memory; nothing was changed, "
		    "try "
		    "again later");
	}
	if (err != SV_OK) {
		return req_err(c, err, "worker is not running");
	}
	return req_ack(c);
}

/* req_ready answers Ready: the calling worker is ready. */
sv_err
req_ready(req_ctx *c)
{
	return req_ready_heartbeat(c, true);
}

/* req_heartbeat answers Heartbeat: the calling worker is alive. */
sv_err
req_heartbeat(req_ctx *c)
{
	return req_ready_heartbeat(c, false);
}
