/*
 * supervisor.c — supervised's loop: creating and destroying the supervisor,
 * signals, the turn that carries out effects, and the entry points the
 * control socket calls (see supervisor.h for the threading model,
 * core/supervision.h and docs/supervision.md for the decisions).
 *
 * Nothing in the daemon decides. The core says what to spawn, signal, time
 * and announce; the sup_*.c files carry it out and the req_*.c files turn
 * requests into core calls and core state into replies (sup_internal.h
 * lists the pieces).
 */
#include "sup_internal.h"

/* ---- requests from the control socket and the loop ------------------------
 */

sv_loop *
svd_sup_loop(svd_sup *s)
{
	return s->loop;
}

void
svd_sup_conn_event(svd_sup *s, uint32_t conn, uint64_t peer_pid, bool added)
{
	svd_leases_pipe(s->leases, conn, (int64_t) peer_pid, added);
}

/* svd_sup_peer_worker: see supervisor.h (req_find_worker's memo, at
 * accept time). */
bool
svd_sup_peer_worker(
    svd_sup *s, uint64_t pid, svd_peer_memo *memo, sv_wkey *keyp)
{
	uint64_t v = sv_pidmap_version(&s->pids);
	bool     found;

	*keyp = (sv_wkey) {0, 0, 0};
	if (pid == 0) {
		return false;
	}
	if (memo != NULL && memo->version == v) {
		*keyp = memo->key;
		return memo->found;
	}
	found = sup_find_worker(s, (long) pid, keyp);
	if (memo != NULL) {
		memo->version = v;
		memo->found   = found;
		memo->key     = *keyp;
	}
	return found;
}

void
svd_sup_request(svd_sup *s, const void *buf, size_t len, uint64_t peer_pid,
    uint64_t peer_uid, int peer_pidfd, uint32_t conn, svd_peer_memo *memo,
    svd_done_cb done, void *arg)
{
	nng_msg        *rep = NULL;
	svd_lease_defer d   = {done, arg, conn, false};

	if (sup_dispatch(
	        s, buf, len, peer_pid, peer_uid, peer_pidfd, memo, &d, &rep)
	    != SV_OK) {
		rep = NULL;
	}
	if (!d.taken) { /* else the lease shell answers later */
		done(arg, rep);
	}
	/* What the request changed is carried out by svd_sup_run after this
	 * batch of events. */
}

/* sup_sig_cb handles SIGTERM/SIGINT (shutdown) and SIGHUP (ignored). */
static void
sup_sig_cb(sv_loop *loop, sv_io *io, uint32_t events)
{
	svd_sup                *s = io->arg;
	struct signalfd_siginfo si;

	(void) loop;
	(void) events;
	while (read(io->fd, &si, sizeof(si)) == (ssize_t) sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			sup_reap_orphans(s);
			continue;
		}
		if (si.ssi_signo == SIGHUP) {
			/* The reload, when it exists, calls svd_sdn_reload
			 * (s->sdn) before and after (sd_notify.h). */
			svd_log("SIGHUP ignored: configuration reload is not "
			        "supported yet");
			continue;
		}
		svd_log("received %s; %s %zu workers",
		    strsignal((int) si.ssi_signo),
		    sv_core_shutting_down(s->core) ? "killing" : "stopping",
		    sv_core_live(s->core));
		SUP_CORE_RETRY(
		    "a shutdown", sv_core_shutdown(s->core, sv_loop_now_ms()));
		sup_run_effects(s);
	}
}

sv_err
svd_sup_create(const svd_config *cfg, const char *url, svd_sup **supp)
{
	svd_sup      *s;
	unsigned char rnd[16];
	sv_err        err = SV_OK;

	if ((s = calloc(1, sizeof(*s))) == NULL) {
		return SV_ENOMEM;
	}
	s->cfg = cfg;
	sv_pidmap_init_borrowed(&s->pids); /* keys: svd_proc.key */
	sv_timer_init(&s->plan_timer, plan_timer_cb, s);
	sv_timer_init(&s->dur_timer, NULL, s); /* sup_durability_start */
	snprintf(s->url, sizeof(s->url), "%s", url);
	s->self_pid = (long) getpid();
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t) sizeof(rnd)) {
		/* Fall back on time and pid; the id only has to be unique. */
		uint64_t a = (uint64_t) time(NULL), b = (uint64_t) getpid();
		memcpy(rnd, &a, 8);
		memcpy(rnd + 8, &b, 8);
	}
	for (size_t i = 0; i < sizeof(rnd); i++) {
		snprintf(s->id + 2 * i, 3, "%02x", rnd[i]);
	}
	if ((err = sv_loop_create(&s->loop)) != SV_OK
	    || (err = sv_core_create(cfg->strategy, &s->core)) != SV_OK
	    || (err = svd_subw_create(s->loop, &s->subw)) != SV_OK) {
		goto fail;
	}
	if ((s->gsh = calloc(SV_CORE_MAX_GROUPS, sizeof(svd_gsh *))) == NULL) {
		err = SV_ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < cfg->ngroups; i++) {
		if ((err = gsh_add(s, &cfg->groups[i], NULL, NULL)) != SV_OK) {
			goto fail;
		}
	}
	/* Group creation events are not worth logging at start-up. */
	{
		sv_fx fx;
		while (sv_core_pop_effect(s->core, &fx)) {
		}
	}
	{
		char lerr[200];
		if ((err = sup_leases_create(s, lerr, sizeof(lerr)))
		    != SV_OK) {
			svd_log("%s", lerr);
			goto fail;
		}
	}
	/* Without a socket directory (a test) workers get no region. */
	if (cfg->socket_dir != NULL
	    && (err = svd_activity_create(cfg->socket_dir, &s->act))
	        != SV_OK) {
		goto fail;
	}
	*supp = s;
	return SV_OK;
fail:
	svd_sup_destroy(s);
	return err;
}

void
svd_sup_set_events(svd_sup *s, svd_events *ev)
{
	s->events = ev;
}

void
svd_sup_destroy(svd_sup *s)
{
	if (s == NULL) {
		return;
	}
	/* The leases' timers live in the loop: they go first. */
	svd_leases_destroy(s->leases);
	s->leases = NULL;
	svd_subw_destroy(s->subw); /* its child watches are in the loop */
	s->subw = NULL;
	/* The loop first: destroying it touches timers that may still be
	 * armed, and those live in the groups. */
	sv_loop_destroy(s->loop);
	s->loop = NULL;
	for (size_t i = 0; i < s->ngsh; i++) {
		gsh_free(s->gsh[i]);
	}
	free(s->gsh);
	svd_activity_destroy(s->act);
	sv_core_destroy(s->core);
	sv_pidmap_fini(&s->pids);
	free(s);
}

const char *
svd_sup_id(const svd_sup *s)
{
	return s->id;
}

sv_err
svd_sup_run(svd_sup *s, int sigfd)
{
	sv_err          err = SV_OK;
	int             n, timeout, sweep_in;
	bool            spawning;
	sv_spawn_ticket t;

	if (sigfd >= 0) {
		s->sig_io = (sv_io) {sigfd, sup_sig_cb, s};
		if (sv_loop_add_io(s->loop, &s->sig_io, EPOLLIN) != SV_OK) {
			return SV_ESYSTEM;
		}
	}
	for (;;) {
		sup_run_effects(s);
		sup_manager_tick(s); /* what our own manager is told */
		if (sv_core_done(s->core)) {
			break;
		}
		/* More spawns waiting: poll without blocking, so requests
		 * are served between batches. */
		spawning = sv_core_next_spawn(s->core, sv_loop_now_ms(), &t);
		timeout  = spawning ? (sup_spawn(s, t), 0)
		                    : sv_loop_next_timeout(s->loop, -1);
		/* Released cgroups are removed when nothing else is due: a
		 * wake-up when the oldest may go, then a few per turn. */
		sweep_in = sv_cgtree_sweep_in(s->cg);
		if (sweep_in >= 0 && (timeout < 0 || sweep_in < timeout)) {
			timeout = sweep_in;
		}
		err = sv_loop_wait(s->loop, timeout, &n);
		if (err != SV_OK) {
			svd_log("event loop failed: %s", strerror(errno));
			break;
		}
		s->turn++;
		sv_loop_dispatch(s->loop, n);
		if (s->orphans_due) {
			s->orphans_due = false;
			sup_reap_orphans(s);
		} else if (sweep_in == 0 && !spawning) {
			/* Not in a turn that reaped: a mass exit's reaps do
			 * not wait for rmdirs (shell/cgroup.h). */
			(void) sv_cgtree_sweep(s->cg);
		}
		if (s->stale_due) { /* one look, however many exited */
			s->stale_due = false;
			(void) sv_cgtree_sweep_stale(s->cg, NULL);
		}
	}
	svd_leases_stop(s->leases); /* drop the waiting acquires */
	if (sigfd >= 0) {
		sv_loop_del_io(s->loop, &s->sig_io);
	}
	if (err == SV_OK) {
		svd_log("all workers stopped");
	}
	return err;
}
