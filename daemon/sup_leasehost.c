/*
 * sup_leasehost.c — the host callbacks the lease shell (leases.h) calls to
 * learn about groups and workers, publish and journal.
 */
#include "sup_internal.h"

/* ---- the lease shell's host callbacks (leases.h) -------------------------
 */

static const char *
lh_group_name(void *arg, uint32_t group_id)
{
	svd_gsh *g = gsh_find(arg, group_id);
	return g != NULL ? g->cfg->name : NULL;
}

static uint32_t
lh_group_id(void *arg, const char *name)
{
	svd_sup         *s = arg;
	const sv_cgroup *g = sv_core_group_named(s->core, name);
	return g != NULL ? g->id : 0;
}

static bool
lh_group_user(void *arg, uint32_t group_id, uid_t *uid, gid_t *gid)
{
	svd_gsh *g = gsh_find(arg, group_id);

	if (g == NULL || !g->cfg->creds.set) {
		return false;
	}
	*uid = g->cfg->creds.uid;
	*gid = g->cfg->creds.gid;
	return true;
}

static int64_t
lh_worker_pid(void *arg, sv_wkey key)
{
	svd_proc *p = proc_find(arg, key);
	return p != NULL && p->io.fd >= 0 ? (int64_t) p->pid : 0;
}

static void
lh_publish(void *arg, Supervise__V1__Event *e, const char *topic)
{
	svd_sup        *s = arg;
	struct timespec ts;

	s->seq++;
	if (s->events == NULL) {
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	e->seq           = s->seq;
	e->supervisor_id = s->id;
	e->time_unix_ms
	    = (uint64_t) ts.tv_sec * 1000u + (uint64_t) ts.tv_nsec / 1000000u;
	svd_events_publish_topic(s->events, e, topic);
}

static void
lh_journal(void *arg, const sv_jrec *r)
{
	svd_sup *s = arg;
	if (s->state != NULL) {
		svd_state_record(s->state, r);
	}
}

static bool
lh_find_worker(void *arg, int64_t pid, sv_wkey *keyp)
{
	return sup_find_worker(arg, (long) pid, keyp);
}

static bool
lh_worker_exited(void *arg, sv_wkey key)
{
	svd_proc     *p = proc_find(arg, key);
	struct pollfd pfd;

	if (p == NULL || p->io.fd < 0) {
		return false;
	}
	pfd = (struct pollfd) {p->io.fd, POLLIN, 0};
	return poll(&pfd, 1, 0) > 0;
}

/* sup_leases_create (re)makes the lease shell for the current epoch. */
sv_err
sup_leases_create(svd_sup *s, char *err, size_t errlen)
{
	svd_lease_host h
	    = {s, lh_group_name, lh_group_id, lh_group_user, lh_worker_pid,
	        lh_publish, lh_journal, lh_find_worker, lh_worker_exited};

	svd_leases_destroy(s->leases);
	s->leases = NULL;
	return svd_leases_create(s->cfg, s->loop, s->epoch > 0 ? s->epoch : 1,
	    &h, &s->leases, err, errlen);
}
