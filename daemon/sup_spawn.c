/*
 * sup_spawn.c — spawning and reaping: a worker's environment, posix_spawn of
 * a spawn ticket, pidfd exit watches, orphan reaping and the timers that
 * fire back into the core.
 */
#include "sup_internal.h"

/* ---- environment ----------------------------------------------------------
 */

/* env_name_len returns the length of NAME in "NAME=value". */
static size_t
env_name_len(const char *e)
{
	const char *eq = strchr(e, '=');
	return eq != NULL ? (size_t) (eq - e) : strlen(e);
}

/* env_overridden tells whether the group's env sets the same NAME as e. */
static bool
env_overridden(const svd_group_config *cfg, const char *e)
{
	size_t n = env_name_len(e);

	if (svd_env_reserved(e)) {
		return true;
	}
	for (size_t i = 0; i < cfg->nenv; i++) {
		if (env_name_len(cfg->env[i]) == n
		    && strncmp(cfg->env[i], e, n) == 0) {
			return true;
		}
	}
	return false;
}

/* env_build_base collects the daemon's environment, minus what the group
 * overrides, plus the group's env. Strings are borrowed. */
sv_err
env_build_base(svd_gsh *g)
{
	size_t n = 0, k = 0;

	for (char **e = environ; e != NULL && *e != NULL; e++) {
		n++;
	}
	g->envbase = calloc(n + g->cfg->nenv + 1, sizeof(*g->envbase));
	if (g->envbase == NULL) {
		return SV_ENOMEM;
	}
	for (char **e = environ; e != NULL && *e != NULL; e++) {
		if (!env_overridden(g->cfg, *e)) {
			g->envbase[k++] = *e;
		}
	}
	for (size_t i = 0; i < g->cfg->nenv; i++) {
		g->envbase[k++] = g->cfg->env[i];
	}
	g->nenvbase = k;
	return SV_OK;
}

/* ---- spawning and reaping -------------------------------------------------
 */

/* proc_slot returns a free shell record of the ticket's seat, making the
 * seat's record when it has none and its second process record when the
 * first is in use (NULL: no free record, or no memory). The first free
 * record is taken, as when both were made with the seat. */
svd_proc *
proc_slot(svd_gsh *g, uint32_t ordinal)
{
	svd_seat *st = seat_make(g, ordinal);
	svd_proc *p;

	if (st == NULL) {
		return NULL;
	}
	if (st->proc.io.fd < 0) {
		return &st->proc;
	}
	p = seat_extra(st);
	return p != NULL && p->io.fd < 0 ? p : NULL;
}

/* sup_spawn starts the process of one ticket and tells the core. */
void
sup_spawn(svd_sup *s, sv_spawn_ticket t)
{
	svd_gsh     *g = gsh_find(s, t.group_id);
	char         v_url[700], v_group[96], v_ord[48], v_gen[64], v_id[64];
	char         v_purpose[SVD_MAX_PURPOSE + 32], nm[96], v_notify[160];
	const char **envp;
	size_t       k;
	sv_spawn_req req;
	svd_proc    *p;
	pid_t        pid;
	int          pidfd, eno = ENOMEM, cgfd = -1;
	uint64_t     now;
	sv_cgleaf   *leaf = NULL;
	svd_act     *act  = NULL, *spare;
	char         v_act[SVD_ACTIVITY_ENV_MAX], why[192];
	sv_err       rc;

	if (g == NULL || (p = proc_slot(g, t.ordinal)) == NULL) {
		SUP_CORE_RETRY("a failed spawn",
		    sv_core_spawn_failed(
		        s->core, t, EAGAIN, sv_loop_now_ms()));
		return;
	}
	k    = g->nenvbase;
	envp = malloc((k + 10) * sizeof(*envp));
	if (envp == NULL) {
		SUP_CORE_RETRY("a failed spawn",
		    sv_core_spawn_failed(
		        s->core, t, ENOMEM, sv_loop_now_ms()));
		return;
	}
	memcpy(envp, g->envbase, k * sizeof(*envp));
	snprintf(v_url, sizeof(v_url), "SUPERVISE_URL=%s", s->url);
	snprintf(v_group, sizeof(v_group), "SUPERVISE_GROUP=%s", g->cfg->name);
	snprintf(
	    v_ord, sizeof(v_ord), "SUPERVISE_ORDINAL=%" PRIu32, t.ordinal);
	snprintf(v_gen, sizeof(v_gen), "SUPERVISE_GENERATION=%" PRIu64,
	    t.generation);
	snprintf(v_purpose, sizeof(v_purpose), "SUPERVISE_PURPOSE=%s",
	    g->cfg->purpose);
	snprintf(v_id, sizeof(v_id), "SUPERVISE_SUPERVISOR_ID=%s", s->id);
	envp[k++] = v_url;
	envp[k++] = v_group;
	envp[k++] = v_ord;
	envp[k++] = v_gen;
	envp[k++] = v_purpose;
	envp[k++] = v_id;
	if (g->sockets != NULL) {
		envp[k++] = svd_sockets_env(g->sockets);
	}
	if (s->notify != NULL) {
		snprintf(v_notify, sizeof(v_notify), "NOTIFY_SOCKET=%s",
		    svd_notify_path(s->notify));
		envp[k++] = v_notify;
	}
	/* The spare region made after the previous restart, if any: taken
	 * when it is this generation's, removed otherwise. */
	spare              = p->seat->act_spare;
	p->seat->act_spare = NULL;
	if (!g->cfg->activity) {
		svd_activity_end(s->act, spare);
	} else if (svd_activity_begin(s->act, g->cfg->name, t.ordinal,
	               t.generation, &g->cfg->creds, spare, &act, v_act,
	               sizeof(v_act))
	    == SV_OK) {
		envp[k++] = v_act;
	}
	envp[k] = NULL;

	/* Its own cgroup, if we have them; without one it still runs (its
	 * process group is killed after it exits). */
	if (s->cg != NULL) {
		char label[96];
		snprintf(label, sizeof(label), "%s.%" PRIu32, g->cfg->name,
		    t.ordinal);
		if (sv_cgtree_leaf(
		        s->cg, label, !sv_spawn_born_in_cgroup(), &leaf)
		        != SV_OK
		    || (cgfd = sv_cgleaf_open(s->cg, leaf)) < 0) {
			svd_log("%s: no cgroup of its own: %s",
			    key_name(s, t, nm, sizeof(nm)), strerror(errno));
			sv_cgtree_release(s->cg, leaf);
			leaf = NULL;
		}
	}
	/* Before the spawn: a crash between it and the P record leaves a
	 * process the successor must look for (docs/durability.md). */
	svd_state_record(s->state,
	    &(sv_jrec) {.kind = SV_J_SPAWNING,
	        .name         = g->cfg->name,
	        .ordinal      = t.ordinal,
	        .generation   = t.generation});
	req.path            = g->cfg->argv[0];
	req.argv            = g->cfg->argv;
	req.envp            = (char *const *) envp;
	req.cwd             = g->cfg->cwd;
	req.creds           = &g->cfg->creds;
	req.cgroup_fd       = cgfd;
	req.die_with_parent = g->cfg->die_with_supervisor;
	req.pass_fds        = svd_sockets_fds(g->sockets, &req.npass_fds);
	rc                  = sv_spawn(&req, &pid, &pidfd, &eno);
	if (sv_spawn_cgroup_note(why, sizeof(why))) {
		svd_log("%s", why);
	}
	if (rc != SV_OK) {
		free(envp);
		svd_activity_end(s->act, act);
		if (cgfd >= 0) {
			close(cgfd);
		}
		sv_cgtree_release(s->cg, leaf);
		svd_log("%s: cannot spawn %s: %s",
		    key_name(s, t, nm, sizeof(nm)), g->cfg->argv[0],
		    strerror(eno));
		SUP_CORE_RETRY("a failed spawn",
		    sv_core_spawn_failed(s->core, t, eno, sv_loop_now_ms()));
		return;
	}
	free(envp);
	if (cgfd >= 0) {
		close(cgfd);
	}
	p->cg    = leaf;
	p->key   = t;
	p->pid   = pid;
	p->io.fd = pidfd;
	svd_tmr_drop(s->loop, &p->tm);
	p->adopted = false;
	p->act     = act;
	/* What tells this process from a later one with its pid, for the
	 * journal (a zombie still has it, so this cannot fail for a child). */
	if (s->state != NULL
	    && sv_proc_start_time(pid, &p->start_time) != SV_OK) {
		p->start_time = 0;
	}
	p->io = (sv_io) {pidfd, proc_exit_cb, p};
	now   = sv_loop_now_ms();
	if (sv_loop_add_io(s->loop, &p->io, EPOLLIN) != SV_OK
	    || sv_pidmap_put_ref(&s->pids, pid, &p->key) != SV_OK) {
		sv_exit_info xi;
		svd_log("%s: cannot watch pid %d; killing it",
		    key_name(s, t, nm, sizeof(nm)), (int) pid);
		sv_loop_del_io(s->loop, &p->io);
		sv_signal(pidfd, SIGKILL);
		while (sv_reap(pidfd, &xi) == SV_EBUSY) {
			/* SIGKILL cannot be caught: this ends promptly. */
			struct timespec ts = {0, 1000000};
			nanosleep(&ts, NULL);
		}
		close(pidfd);
		p->io.fd = -1;
		sv_cgtree_release(s->cg, p->cg);
		p->cg = NULL;
		svd_activity_end(s->act, p->act);
		p->act = NULL;
		SUP_CORE_RETRY("a failed spawn",
		    sv_core_spawn_failed(s->core, t, ENOMEM, now));
		return;
	}
	SUP_CORE_RETRY("a spawn", sv_core_spawned(s->core, t, pid, now));
	/* The sub-worker shell learns of it at its first sub-worker request
	 * (req_subworkers.c). */
}

/* sup_is_worker tells sv_reaper_collect whether pid is a worker. */
static bool
sup_is_worker(void *arg, pid_t pid)
{
	svd_sup *s = arg;
	sv_wkey  key;

	return sv_pidmap_get(&s->pids, pid, &key);
}

/* sup_reap_orphans reaps exited orphans (descendants of workers
 * reparented to the daemon, a child subreaper), but no worker. Called on
 * SIGCHLD and once after each loop turn in which a worker was reaped (not
 * per worker: waitid(P_ALL) scans every child of the daemon, so a mass
 * exit of n workers would cost n scans of n). The released cgroups are
 * removed elsewhere, when the loop has time (svd_sup_run). */
void
sup_reap_orphans(svd_sup *s)
{
	(void) sv_reaper_collect(sup_is_worker, s);
}

void
svd_sup_set_cgroups(svd_sup *s, sv_cgtree *cg)
{
	s->cg = cg;
}

/* seat_prepare_next makes, after a restart, the region file of the
 * seat's next generation (svd_activity_prepare), so that the next restart
 * of a worker that keeps failing or being killed creates no file before
 * its spawn. Only a seat whose replacement (a generation after old) runs
 * with a region gets one; it is made here, after that spawn, off the
 * restart path. */
static void
seat_prepare_next(svd_gsh *g, sv_wkey old)
{
	svd_seat *st  = seat_get(g, old.ordinal);
	uint64_t  gen = 0;

	if (st == NULL || st->act_spare != NULL || !g->cfg->activity) {
		return;
	}
	for (int i = 0; i < SEAT_PROCS; i++) {
		const svd_proc *q = seat_proc(st, i);
		if (q != NULL && q->io.fd >= 0 && q->act != NULL && !q->adopted
		    && q->key.generation > old.generation
		    && q->key.generation > gen) {
			gen = q->key.generation;
		}
	}
	if (gen != 0 && gen < UINT64_MAX) {
		st->act_spare = svd_activity_prepare(g->s->act, g->cfg->name,
		    old.ordinal, gen + 1, &g->cfg->creds);
	}
}

/* proc_exit_cb reaps a process whose pidfd became readable. */
void
proc_exit_cb(sv_loop *loop, sv_io *io, uint32_t events)
{
	svd_proc    *p = io->arg;
	svd_sup     *s = p->seat->g->s;
	sv_exit_info xi;
	sv_exit      x;
	sv_wkey      key;
	svd_gsh     *g;
	char         nm[96];
	svd_act     *act;

	(void) events;
	/* Datagrams the worker sent before it died are still credited to
	 * its pid, which cannot be reused before the reap below. Once per
	 * turn is enough: every death reported in this turn happened before
	 * the loop's epoll_wait returned, so its datagrams were queued. */
	if (s->notify_turn != s->turn) {
		s->notify_turn = s->turn;
		sup_notify_drain(s);
	}
	/* An adopted process is not our child: init reaps it and its exit
	 * status is lost to us (docs/durability.md). */
	switch (p->adopted ? SV_EINVAL : sv_reap(p->io.fd, &xi)) {
	case SV_OK:
		break;
	case SV_EBUSY:
		return; /* not exited yet (spurious wake-up) */
	default:
		/* Someone else reaped our child: do not spin on a readable
		 * pidfd; account for it as an exit of unknown status. */
		if (p->adopted) {
			svd_log("%s: adopted pid %d exited (status unknown)",
			    key_name(s, p->key, nm, sizeof(nm)), (int) p->pid);
		} else {
			svd_log("%s: cannot collect the status of pid %d: %s",
			    key_name(s, p->key, nm, sizeof(nm)), (int) p->pid,
			    strerror(errno));
		}
		xi = (sv_exit_info) {false, -1, 0, false};
		break;
	}
	sv_loop_del_io(loop, io);
	svd_tmr_drop(loop, &p->tm);
	close(p->io.fd);
	p->io.fd = -1;
	(void) sv_pidmap_del(&s->pids, p->pid);
	/* Nothing a worker started may outlive it: whatever is left in its
	 * process group gets SIGKILL. (The group id cannot have been reused
	 * yet: we are in the callback that reaped its leader.) Not twice: a
	 * group that already got SIGKILL (a stop timeout, a drain deadline)
	 * has nothing left that could run; 1,000 such kills were 1,000 calls
	 * failing with ESRCH in a drain's reaps. */
	if (!p->group_killed) {
		(void) sv_signal_group(p->pid, SIGKILL);
	}
	p->group_killed = false;
	/* And whatever left the process group but not its cgroup. */
	if (p->cg != NULL) {
		sv_cgtree_release(s->cg, p->cg);
		p->cg = NULL;
	}
	/* Orphans that exited while this worker's zombie was in the way:
	 * reaped after this turn (svd_sup_run). */
	s->orphans_due = true;
	/* An adopted worker lived in its dead supervisor's cgroup tree:
	 * that tree may be empty now (looked at after this turn). */
	s->stale_due = s->stale_due || p->adopted;
	x            = (sv_exit) {.exited = xi.exited,
	               .code              = xi.code,
	               .signo             = xi.signo,
	               .core              = xi.core};
	SUP_CORE_RETRY(
	    "an exit", sv_core_exited(s->core, p->key, x, sv_loop_now_ms()));
	/* Its leases go now, in this iteration: a waiter gets the slot. */
	svd_leases_worker_gone(s->leases, p->key);
	svd_subw_worker_gone(s->subw, p->key); /* its sub-workers too */
	/* Its activity region goes too, but after the replacement is
	 * spawned (its close + unlink are not on the restart path): the
	 * record p may be reused by that spawn, so the region is taken off
	 * it first. Nothing reads the regions in between (same callback),
	 * so no stale stack is ever shown. */
	act    = p->act;
	p->act = NULL;
	key    = p->key;
	sup_run_effects(s);
	svd_activity_end(s->act, act);
	/* A seat the core no longer wants gives its record back (p may be
	 * gone after this). */
	if ((g = gsh_find(s, key.group_id)) != NULL) {
		seat_maybe_free(g, key.ordinal);
		seat_prepare_next(g, key);
	}
}

/* proc_timer_cb and seat_timer_cb hand a fired timer to the core. */
void
proc_timer_cb(sv_loop *loop, sv_timer *t)
{
	svd_proc *p = t->arg;
	svd_sup  *s = p->seat->g->s;
	uint64_t  g = p->tm->guard;

	svd_tmr_drop(loop, &p->tm); /* fired: no longer armed */
	SUP_CORE_RETRY("a timer",
	    sv_core_timer(
	        s->core, SV_TIMER_PROC, p->key, g, sv_loop_now_ms()));
	sup_run_effects(s);
}

void
seat_timer_cb(sv_loop *loop, sv_timer *t)
{
	svd_seat *st    = t->arg;
	svd_sup  *s     = st->g->s;
	sv_wkey   key   = {st->g->id, st->ordinal, 0};
	uint64_t  guard = st->tm->guard;

	svd_tmr_drop(loop, &st->tm); /* fired: no longer armed */
	SUP_CORE_RETRY("a timer",
	    sv_core_timer(
	        s->core, SV_TIMER_SEAT, key, guard, sv_loop_now_ms()));
	sup_run_effects(s);
}

void
plan_timer_cb(sv_loop *loop, sv_timer *t)
{
	svd_sup *s     = t->arg;
	sv_wkey  key   = {0, 0, 0};
	uint64_t guard = s->plan_guard;

	(void) loop;
	s->plan_guard = 0;
	SUP_CORE_RETRY("a timer",
	    sv_core_timer(
	        s->core, SV_TIMER_PLAN, key, guard, sv_loop_now_ms()));
	sup_run_effects(s);
}

/* sup_run_effects carries out queued effects, then up to one batch of
 * spawns (each of which may queue more effects). Returns with spawns
 * possibly left for the next loop iteration (sup_spawns_left). */
void
sup_run_effects(svd_sup *s)
{
	sv_spawn_ticket t;

	sup_drain_effects(s);
	for (int i = 0; i < SUP_SPAWN_BATCH
	     && sv_core_next_spawn(s->core, sv_loop_now_ms(), &t);
	     i++) {
		sup_spawn(s, t);
		sup_drain_effects(s);
	}
}
