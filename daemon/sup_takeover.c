/*
 * sup_takeover.c — taking over a predecessor's state (effect shell): the
 * journal read back, runtime groups recreated, and, seat by seat, the
 * predecessor's processes observed (claimed by pid and start time, or
 * found by their environment) and the plan core/takeover.h makes of them
 * carried out: adopted, killed, forgotten or respawned; then the leaves of
 * the predecessor's cgroup tree that hold no adopted worker are killed.
 */
#include "sup_internal.h"

#include "core/takeover.h"

/* ---- taking over a predecessor's state ------------------------------------
 *
 * A supervisor that finds a journal (state.h) replays it, then, before it
 * spawns anything: recreates the groups created at runtime, restores each
 * group's size unless the config changed it since, and goes seat by seat:
 * a process still alive with the same pid and kernel start time is
 * adopted (pidfd, no spawn), every other seat spawns with its generation
 * continued. The new journal (a snapshot of all that) replaces the old one
 * in one rename, so a crash during the takeover loses nothing either.
 */

/* to_kill ends a process left by the predecessor that nothing will adopt:
 * SIGKILL to it and its process group (its pidfd proves it is the same
 * process, so the group id is still its own). */
static void
to_kill(
    int pidfd, pid_t pid, const char *why, const char *group, uint32_t ordinal)
{
	svd_log("%s[%" PRIu32 "]: killing pid %d left by the previous "
	        "supervisor: %s",
	    group, ordinal, (int) pid, why);
	(void) sv_signal_group(pid, SIGKILL);
	(void) sv_signal(pidfd, SIGKILL);
	close(pidfd);
}

/* to_adopt makes a verified process of the predecessor the current one of
 * seat (g, ordinal). */
static void
to_adopt(svd_sup *s, svd_gsh *g, uint32_t ordinal, const sv_to_proc *tp,
    int pidfd, uint64_t floor)
{
	svd_proc  *p   = proc_slot(g, ordinal);
	sv_adoptee a   = {.generation = tp->generation,
	      .pid                    = tp->pid,
	      .ready                  = tp->ready,
	      .stopping               = tp->stopping,
	      .stop_deadline_ms       = tp->stop_deadline_ms};
	sv_wkey    key = {g->id, ordinal, tp->generation};
	sv_err     err;

	if (p == NULL
	    || sv_pidmap_put_ref(&s->pids, (pid_t) tp->pid, &p->key)
	        != SV_OK) {
		to_kill(pidfd, (pid_t) tp->pid, "no room to track it",
		    g->cfg->name, ordinal);
		SUP_CORE_RETRY("a restored seat",
		    sv_core_restore(s->core, g->id, ordinal, floor, NULL,
		        sv_loop_now_ms()));
		return;
	}
	p->key   = key;
	p->pid   = (pid_t) tp->pid;
	p->io.fd = pidfd;
	svd_tmr_drop(s->loop, &p->tm);
	p->cg         = NULL;
	p->adopted    = true;
	p->start_time = tp->start_time;
	p->io         = (sv_io) {pidfd, proc_exit_cb, p};
	/* The region the predecessor made for it, if any (activity.h). */
	p->act = svd_activity_adopt(
	    s->act, g->cfg->name, ordinal, tp->generation);
	err = sv_loop_add_io(s->loop, &p->io, EPOLLIN);
	if (err == SV_OK) {
		SUP_CORE_CALL(err, "an adopted worker",
		    sv_core_restore(
		        s->core, g->id, ordinal, floor, &a, sv_loop_now_ms()));
	}
	if (err != SV_OK) {
		sv_loop_del_io(s->loop, &p->io);
		(void) sv_pidmap_del(&s->pids, p->pid);
		p->io.fd = -1;
		svd_activity_end(s->act, p->act);
		p->act = NULL;
		to_kill(pidfd, (pid_t) tp->pid, "cannot watch it",
		    g->cfg->name, ordinal);
		SUP_CORE_RETRY("a restored seat",
		    sv_core_restore(s->core, g->id, ordinal, floor, NULL,
		        sv_loop_now_ms()));
		return;
	}
	/* The sub-worker shell learns of it at its first sub-worker request
	 * (req_subworkers.c). */
}

/* to_unrecorded looks for the process of a spawn the predecessor began
 * but did not record (S without P): by its environment, which names the
 * predecessor, the group, the ordinal and the generation. On success it
 * fills *tp as if the P record had been written. */
static bool
to_unrecorded(const char *prev_id, const char *name, uint32_t ordinal,
    uint64_t gen, sv_to_proc *tp)
{
	char        v_id[96], v_group[300], v_ord[48], v_gen[64];
	const char *want[4] = {v_id, v_group, v_ord, v_gen};
	pid_t       pid;
	uint64_t    start;

	snprintf(v_id, sizeof(v_id), "SUPERVISE_SUPERVISOR_ID=%s", prev_id);
	snprintf(v_group, sizeof(v_group), "SUPERVISE_GROUP=%s", name);
	snprintf(v_ord, sizeof(v_ord), "SUPERVISE_ORDINAL=%" PRIu32, ordinal);
	snprintf(v_gen, sizeof(v_gen), "SUPERVISE_GENERATION=%" PRIu64, gen);
	if (sv_proc_find_env(want, 4, &pid) != SV_OK
	    || sv_proc_start_time(pid, &start) != SV_OK) {
		return false;
	}
	*tp = (sv_to_proc) {.generation = gen,
	    .pid                        = pid,
	    .start_time                 = start,
	    .unrecorded                 = true};
	svd_log("%s[%" PRIu32 "]: found pid %d, spawned by the previous "
	        "supervisor just before it died",
	    name, ordinal, (int) pid);
	return true;
}

/* A seat being taken over: what the shell observed of its processes,
 * and the pidfds of those it claimed (-1 for the others). */
typedef struct to_obs {
	sv_to_seat in;
	sv_to_proc procs[SV_TAKEOVER_PROCS];
	int        fds[SV_TAKEOVER_PROCS];
} to_obs;

/* to_observe fills o for journaled seat js of group name (g NULL: not
 * configured): the journal's processes, the unrecorded spawn if the core
 * asks for a search, and a claim of each if it asks for claims. */
static void
to_observe(const svd_gsh *g, const char *name, uint32_t ordinal,
    const sv_jseat *js, bool same_boot, const char *prev_id, to_obs *o)
{
	sv_to_probe probe;
	uint32_t    n = 0;

	o->in = (sv_to_seat) {.same_boot = same_boot,
	    .configured                  = g != NULL,
	    .in_range            = g != NULL && ordinal < g->cfg->max_count,
	    .die_with_supervisor = g != NULL && g->cfg->die_with_supervisor,
	    .released            = js->released,
	    .spawning            = js->spawning,
	    .next_generation     = js->next_generation,
	    .procs               = o->procs};
	sv_takeover_probe(&o->in, &probe);
	for (uint32_t k = 0; k < js->nprocs && n < SV_JOURNAL_SEAT_PROCS;
	     k++) {
		const sv_jproc *jp = sv_jseat_proc(js, k);
		o->procs[n++] = (sv_to_proc) {.generation = jp->generation,
		    .pid                                  = jp->pid,
		    .start_time                           = jp->start_time,
		    .ready                                = jp->ready,
		    .stopping                             = jp->stopping,
		    .stop_deadline_ms = jp->stop_deadline_ms};
	}
	if (probe.search
	    && to_unrecorded(prev_id, name, ordinal, js->spawning_generation,
	        &o->procs[n])) {
		n++;
	}
	for (uint32_t k = 0; k < n; k++) {
		sv_err err = SV_ENOTFOUND;
		o->fds[k]  = -1;
		if (probe.claim) {
			err = sv_proc_claim((pid_t) o->procs[k].pid,
			    o->procs[k].start_time, &o->fds[k]);
		}
		if (err != SV_OK) {
			o->fds[k] = -1;
		}
		o->procs[k].pidfd = err == SV_OK;
		o->procs[k].gone  = err == SV_ENOTFOUND;
	}
	o->in.nprocs = n;
}

/* to_carry_out carries out plan for seat (g, ordinal) of group name,
 * observed as o: kills, forgets (logged), then the seat's adoption or
 * respawn. */
static void
to_carry_out(svd_sup *s, svd_gsh *g, const char *name, uint32_t ordinal,
    const to_obs *o, const sv_to_plan *plan)
{
	for (uint32_t i = 0; i < plan->nsteps; i++) {
		const sv_to_step *st = &plan->steps[i];
		const sv_to_proc *p
		    = st->proc < o->in.nprocs ? &o->procs[st->proc] : NULL;
		/* The plan names a process for every step but RESPAWN, and
		 * adopts or respawns only on a configured group's seat. */
		if ((p == NULL) != (st->action == SV_TO_RESPAWN)
		    || (g == NULL
		        && (st->action == SV_TO_ADOPT
		            || st->action == SV_TO_RESPAWN))) {
			continue;
		}
		switch (st->action) {
		case SV_TO_FORGET:
			if (st->reason != SV_TOR_OTHER_BOOT) {
				svd_log("%s[%" PRIu32 "]: pid %" PRId64
				        " generation %" PRIu64
				        " of the previous supervisor %s",
				    name, ordinal, p->pid, p->generation,
				    sv_takeover_reason_text(st->reason));
			}
			break;
		case SV_TO_KILL:
			to_kill(o->fds[st->proc], (pid_t) p->pid,
			    sv_takeover_reason_text(st->reason), name,
			    ordinal);
			break;
		case SV_TO_ADOPT:
			to_adopt(
			    s, g, ordinal, p, o->fds[st->proc], plan->floor);
			break;
		case SV_TO_RESPAWN:
			if (plan->apply_floor) {
				SUP_CORE_RETRY("a restored seat",
				    sv_core_restore(s->core, g->id, ordinal,
				        plan->floor, NULL, sv_loop_now_ms()));
			}
			break;
		}
	}
}

/* to_seat takes over seat `ordinal` of journaled group jg (g: its group
 * in the new config, or NULL): observed, planned by the core
 * (core/takeover.h), journaled (floor, release) and carried out. */
static void
to_seat(svd_sup *s, svd_state *st, svd_gsh *g, const sv_jgroup *jg,
    uint32_t ordinal, bool same_boot, const char *prev_id)
{
	const sv_jseat *js = &jg->seats[ordinal];
	to_obs          o;
	sv_to_plan      plan;
	sv_err          rel = SV_ENOTFOUND;

	to_observe(g, jg->name, ordinal, js, same_boot, prev_id, &o);
	if (sv_takeover_plan(&o.in, &plan) != SV_OK) {
		return; /* cannot happen: o holds at most SV_TAKEOVER_PROCS */
	}
	if (g == NULL) { /* nothing of the seat is kept */
		plan.record_floor = false;
		plan.release      = false;
	}
	if (plan.record_floor) {
		svd_state_record(st,
		    &(sv_jrec) {.kind = SV_J_FLOOR,
		        .name         = jg->name,
		        .ordinal      = ordinal,
		        .generation   = plan.floor});
	}
	/* A released ordinal stays released: a process adopted on it is
	 * stopped, not replaced. */
	if (plan.release && g != NULL) {
		SUP_CORE_CALL(rel, "a released seat",
		    sv_core_restore_release(s->core, g->id, ordinal));
	}
	to_carry_out(s, g, jg->name, ordinal, &o, &plan);
	if (rel == SV_OK) {
		svd_state_record(st,
		    &(sv_jrec) {.kind = SV_J_FREED,
		        .name         = jg->name,
		        .ordinal      = ordinal,
		        .generation   = plan.floor});
	}
}

/* to_runtime_groups recreates the groups the predecessor had created at
 * runtime (from their journaled text) unless the config now has one of
 * that name. */
static void
to_runtime_groups(svd_sup *s, const sv_jstate *prev)
{
	for (size_t i = 0; i < prev->ngroups; i++) {
		const sv_jgroup *jg = &prev->groups[i];
		svd_config      *cfg;
		char             msg[512], *spec;
		if (jg->spec == NULL
		    || sv_core_group_named(s->core, jg->name) != NULL) {
			continue;
		}
		if (svd_config_load_text(
		        "journal", jg->spec, &cfg, msg, sizeof(msg))
		    != SV_OK) {
			svd_log("%s: cannot recreate the runtime group: %s",
			    jg->name, msg);
			continue;
		}
		if ((spec = strdup(jg->spec)) == NULL
		    || gsh_add(s, &cfg->groups[0], cfg, spec) != SV_OK) {
			svd_log(
			    "%s: cannot recreate the runtime group", jg->name);
			free(spec);
			svd_config_free(cfg);
			continue;
		}
		svd_log(
		    "%s: runtime group recreated from the journal", jg->name);
	}
}

/* to_is_adopted tells whether pid is a worker this supervisor adopted
 * (the keep callback of sv_cgtree_kill_stale_leaves: during the takeover
 * every worker in the pid map is an adopted one, nothing is spawned yet). */
static bool
to_is_adopted(void *arg, pid_t pid)
{
	const svd_sup *s = arg;
	sv_wkey        key;

	return sv_pidmap_get(&s->pids, pid, &key);
}

/* to_kill_stale_leaves kills, once every seat was adopted or planned and
 * before anything is spawned, the leaves of the predecessor's cgroup tree
 * (named by its E record) that hold no adopted worker: a spawn it began
 * but could not record, which its environment could not show if it had
 * not exec'd yet, and the leftovers of workers that died with it. Without
 * cgroups, on a journal of another boot, or on one that names no tree
 * (an older supervisor, or one without cgroups) nothing is killed. */
static void
to_kill_stale_leaves(svd_sup *s, const sv_jstate *prev, bool same_boot)
{
	sv_cgkill k;
	sv_err    err;

	if (s->cg == NULL || prev->epoch == 0 || !same_boot) {
		return;
	}
	if (prev->cgroup_tree[0] == '\0') {
		svd_log("the journal names no cgroup tree of the previous "
		        "supervisor (older, or without cgroups): a spawn it "
		        "began but could not record is not looked for there");
		return;
	}
	err = sv_cgtree_kill_stale_leaves(
	    s->cg, prev->cgroup_tree, to_is_adopted, s, &k);
	if (err == SV_ENOTFOUND) {
		return; /* nothing left of it: removed when it was empty */
	}
	if (err != SV_OK) {
		svd_log("cgroup tree %s of the previous supervisor left as it "
		        "is: %s",
		    prev->cgroup_tree,
		    err == SV_EBUSY ? "a live supervisor has its pid"
		                    : sv_strerror(err));
		return;
	}
	if (k.killed > 0 || k.failed > 0) {
		svd_log("cgroup tree %s of the previous supervisor: killed "
		        "%zu cgroup%s (%zu process%s) holding no adopted "
		        "worker (spawns it had not recorded, leftovers of "
		        "workers that died with it)%s",
		    prev->cgroup_tree, k.killed, k.killed == 1 ? "" : "s",
		    k.procs, k.procs == 1 ? "" : "es",
		    k.failed > 0 ? "; some could not be killed" : "");
	}
}

sv_err
svd_sup_take_over(
    svd_sup *s, svd_state *st, const sv_jstate *prev, char *err, size_t errlen)
{
	bool     same_boot;
	size_t   adopted_before = sv_core_live(s->core);
	uint64_t now            = sv_loop_now_ms();

	s->state = st;
	s->epoch = prev->epoch + 1;
	sup_durability_start(s);
	same_boot = prev->boot_id[0] != '\0'
	    && strcmp(prev->boot_id, svd_state_boot_id(st)) == 0;
	if (prev->epoch > 0 && !same_boot) {
		svd_log("the journal is from another boot: none of its "
		        "processes can be alive");
	}
	/* With the name of our cgroup tree: our successor kills there what
	 * we could not record (to_kill_stale_leaves). */
	svd_state_record(st,
	    &(sv_jrec) {.kind = SV_J_EPOCH,
	        .name         = s->id,
	        .cgroup_tree  = s->cg != NULL ? sv_cgtree_name(s->cg) : NULL,
	        .generation   = s->epoch});
	to_runtime_groups(s, prev);
	/* Sizes first (a scale emits its own record), then every group's
	 * record, then the seats. */
	for (size_t i = 0; i < s->ngsh; i++) {
		svd_gsh         *g  = s->gsh[i];
		const sv_jgroup *jg = sv_jstate_group(prev, g->cfg->name);
		uint32_t         previous;
		if (jg != NULL
		    && sv_takeover_size(jg->count, jg->config_count,
		        g->cfg->count, g->cfg->max_count)) {
			SUP_CORE_RETRY("a restored size",
			    sv_core_scale(
			        s->core, g->id, jg->count, &previous, now));
			svd_log("%s: size %" PRIu32
			        " restored from the journal (the config says "
			        "%" PRIu32 ")",
			    g->cfg->name, jg->count, g->cfg->count);
		}
		svd_state_record(st,
		    &(sv_jrec) {.kind = SV_J_GROUP,
		        .name         = g->cfg->name,
		        .spec         = g->spec,
		        .count = sv_core_group(s->core, g->id)->ords.limit,
		        .config_count = g->cfg->count});
	}
	sup_drain_effects(s);
	for (size_t i = 0; i < prev->ngroups; i++) {
		const sv_jgroup *jg = &prev->groups[i];
		svd_gsh         *g  = NULL;
		const sv_cgroup *cg = sv_core_group_named(s->core, jg->name);
		if (cg != NULL) {
			g = gsh_find(s, cg->id);
		}
		for (uint32_t o = 0; o < jg->nseats; o++) {
			to_seat(
			    s, st, g, jg, o, same_boot, prev->supervisor_id);
		}
	}
	/* The adoptions' events record them in the journal's mirror. */
	sup_drain_effects(s);
	/* Every seat adopted or planned, nothing spawned yet (spawns run
	 * from the loop, svd_sup_run): what else the predecessor left in
	 * its cgroups goes now, before a replacement can run beside it. */
	to_kill_stale_leaves(s, prev, same_boot);
	if (prev->epoch > 0) {
		svd_log("took over from supervisor %s (epoch %" PRIu64
		        "): %zu worker%s adopted",
		    prev->supervisor_id[0] != '\0' ? prev->supervisor_id : "?",
		    prev->epoch, sv_core_live(s->core) - adopted_before,
		    sv_core_live(s->core) - adopted_before == 1 ? "" : "s");
	}
	/* Leases: a core of the new epoch, then the predecessor's leases,
	 * unclaimed until their holders claim them (docs/leases.md). */
	if (sup_leases_create(s, err, errlen) != SV_OK) {
		return SV_ESYSTEM;
	}
	svd_leases_restore(s->leases, prev);
	return svd_state_begin(st, err, errlen);
}
