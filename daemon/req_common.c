/*
 * req_common.c — what every request handler shares: error messages, the
 * caller checks of the request table (who may call: anyone, a worker, an
 * administrator), group lookup, core errors turned into replies, the Ack
 * that ends an accepted request, and the check that growth fits in what
 * the machine allows.
 */
#include "room.h"
#include "sup_internal.h"

/* ---- requests -------------------------------------------------------------
 */

/* req_admin checks that the caller may change the supervisor's state: its
 * uid is root's or the daemon's, and it is not a worker (or a descendant
 * of one) unless that worker's group is granted admin. */
sv_err
req_admin(req_ctx *c)
{
	sv_wkey key;

	if (c->uid != 0 && c->uid != (uint64_t) geteuid()) {
		return req_err(c, SV_EPERM,
		    "uid %" PRIu64 " may not administer this supervisor",
		    c->uid);
	}
	if (c->peer_gone) {
		/* It may have been a worker: what holds the connection now is
		 * not known. */
		return req_err(c, SV_EPERM,
		    "the process that opened this connection (pid %" PRIu64
		    ") has exited; administer over a connection of your own",
		    c->pid);
	}
	if (req_find_worker(c, &key)) {
		svd_gsh *g = gsh_find(c->s, key.group_id);
		if (g == NULL || !g->cfg->admin) {
			return req_err(c, SV_EPERM,
			    "pid %" PRIu64 " belongs to worker %s[%" PRIu32
			    "], whose group is not granted admin (admin = "
			    "true in its config)",
			    c->pid, g != NULL ? g->cfg->name : "?",
			    key.ordinal);
		}
	}
	if (sv_core_shutting_down(c->s->core)) {
		return req_err(c, SV_EBUSY, "supervisor is shutting down");
	}
	return SV_OK;
}

/* req_check_caller lets the caller through when it is who a request's row
 * of requests.def allows (the dispatch asks before any handler runs):
 * ANYONE always; WORKER when it is a worker or a descendant of one
 * (req_caller: NOT_A_WORKER otherwise); ADMIN when req_admin says so. */
sv_err
req_check_caller(req_ctx *c, sv_req_who who)
{
	const sv_cgroup    *g = NULL;
	sv_seat_view        v;
	const sv_proc_view *p = NULL;

	switch (who) {
	case SV_REQ_ANYONE:
		return SV_OK;
	case SV_REQ_WORKER:
		return req_caller(c, &g, &v, &p);
	case SV_REQ_ADMIN:
		return req_admin(c);
	default:
		/* A row with no valid who reaches no handler. */
		return req_err(c, SV_EINTERNAL, "request has no caller rule");
	}
}

/* req_group validates a group name and finds the group. */
sv_err
req_group(req_ctx *c, const char *name, const sv_cgroup **gp)
{
	sv_err err = svw_check_name(name);

	if (err != SV_OK) {
		return req_err(c, err,
		    "group name must be 1..64 characters of [A-Za-z0-9_.-]");
	}
	if ((*gp = sv_core_group_named(c->s->core, name)) == NULL) {
		return req_err(c, SV_ENOTFOUND, "no group named \"%s\"", name);
	}
	return SV_OK;
}

/* req_ack ends a request the core has accepted: it carries out the
 * effects the core queued and answers Ack. */
sv_err
req_ack(req_ctx *c)
{
	sup_drain_effects(c->s);
	c->rep.body_case = SUPERVISE__V1__ENVELOPE__BODY_ACK;
	c->rep.ack       = &c->out.ack;
	return SV_OK;
}

/* req_core_err turns an error of the core into a reply with a message. */
sv_err
req_core_err(req_ctx *c, sv_err err, const sv_cgroup *g, uint32_t ordinal)
{
	switch (err) {
	case SV_OK:
		return SV_OK;
	case SV_ENOTFOUND:
		return req_err(c, err, "%s has no worker at ordinal %" PRIu32,
		    g->name, ordinal);
	case SV_EEXHAUSTED:
		return req_err(c, err, "%s: max_count %" PRIu32 " reached",
		    g->name, g->max_count);
	case SV_ECONFLICT: {
		sv_seat_view v = {.generation = 0};
		if (ordinal < g->max_count) {
			sv_seat_view_of(c->s->core, g, ordinal, &v);
		}
		return req_err(c, err,
		    "%s[%" PRIu32 "] is at generation %" PRIu64
		    ", not the expected one",
		    g->name, ordinal, v.generation);
	}
	case SV_ENOMEM:
		return req_err(c, err,
		    "%s: the supervisor is out of memory; nothing was "
		    "changed, "
		    "try again later",
		    g->name);
	case SV_EBUSY:
		if (g->failed) {
			return req_err(c, err,
			    "group %s failed (%s); `supervisectl reset %s` "
			    "starts it again",
			    g->name, g->reason, g->name);
		}
		return req_err(c, err,
		    "group %s is shutting down or being "
		    "deleted",
		    g->name);
	default:
		return req_err(c, err, "%s: %s", g->name, sv_strerror(err));
	}
}

/* req_room checks that the workers of every group fit in what the machine
 * allows (room.c) once group g (NULL: a new group) holds count workers;
 * only growth is checked, so shrinking is always allowed. Returns SV_OK,
 * or SV_EEXHAUSTED with one line naming the group, the size and the limit,
 * before anything changed. */
sv_err
req_room(req_ctx *c, const char *name, const sv_cgroup *g, uint32_t count)
{
	uint64_t total = count;
	svd_room room;
	char     why[256];

	if (g != NULL && count <= sv_core_group_count(g)) {
		return SV_OK;
	}
	for (size_t i = 0; i < sv_core_ngroups(c->s->core); i++) {
		const sv_cgroup *o = sv_core_group_at(c->s->core, i);
		if (o != g) {
			total += sv_core_group_count(o);
		}
	}
	svd_room_read(&room);
	if (!svd_room_fits(&room, total, why, sizeof(why))) {
		return req_err(c, SV_EEXHAUSTED,
		    "%s: %" PRIu32 " workers do not fit with the others: %s",
		    name, count, why);
	}
	return SV_OK;
}
