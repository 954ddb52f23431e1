/*
 * sup_events.c — event publishing: the log line, the journal record and the
 * protobuf Event (handed to events.c) of each core event, and what the
 * shell does after one (freeing records, telling the lease shell).
 */
#include "sup_internal.h"

#include "core/durable.h"

/* ---- events
 * -----------------------------------------------------------------
 */

/* sup_log_event writes the human line of an event. */
static void
sup_log_event(svd_sup *s, const sv_event *ev, const char *group)
{
	char     nm[96];
	sv_wkey  key = {ev->group_id, ev->ordinal, ev->generation};
	uint64_t sec = sv_loop_now_ms() / 1000;

	/* A crash loop without backoff must not fill the disk: at most
	 * SUP_LOG_PER_SEC event lines a second; the rest are counted and the
	 * count is logged once the second is over. Events are still
	 * published in full. */
	if (sec != s->log_sec) {
		if (s->log_suppressed > 0) {
			svd_log(
			    "%lu event lines suppressed in the last second "
			    "(more than %d a second; see the event stream "
			    "for all of them)",
			    s->log_suppressed, SUP_LOG_PER_SEC);
		}
		s->log_sec        = sec;
		s->log_lines      = 0;
		s->log_suppressed = 0;
	}
	if (++s->log_lines > SUP_LOG_PER_SEC) {
		s->log_suppressed++;
		return;
	}
	key_name(s, key, nm, sizeof(nm));
	switch (ev->kind) {
	case SV_EV_STARTED:
		svd_log("%s: started pid %" PRId64 " generation %" PRIu64, nm,
		    ev->pid, ev->generation);
		break;
	case SV_EV_READY:
		svd_log("%s: pid %" PRId64 " is ready", nm, ev->pid);
		break;
	case SV_EV_EXITED:
		if (!ev->exit.exited && ev->exit.signo == 0) {
			svd_log("%s: pid %" PRId64 " ended after %" PRIu64
			        " ms (status unknown)%s%s",
			    nm, ev->pid, ev->uptime_ms,
			    ev->why != SV_WHY_NONE ? "; stopped for " : "",
			    ev->why != SV_WHY_NONE ? sv_why_name(ev->why)
			                           : "");
		} else if (ev->exit.exited) {
			svd_log("%s: pid %" PRId64
			        " exited with status %d after "
			        "%" PRIu64 " ms%s%s",
			    nm, ev->pid, ev->exit.code, ev->uptime_ms,
			    ev->why != SV_WHY_NONE ? "; stopped for " : "",
			    ev->why != SV_WHY_NONE ? sv_why_name(ev->why)
			                           : "");
		} else {
			svd_log("%s: pid %" PRId64
			        " killed by signal %d (%s)%s "
			        "after %" PRIu64 " ms%s%s",
			    nm, ev->pid, ev->exit.signo,
			    strsignal(ev->exit.signo),
			    ev->exit.core ? ", core dumped" : "",
			    ev->uptime_ms,
			    ev->why != SV_WHY_NONE ? "; stopped for " : "",
			    ev->why != SV_WHY_NONE ? sv_why_name(ev->why)
			                           : "");
		}
		break;
	case SV_EV_RESTART_SCHEDULED:
		svd_log("%s: restarting in %" PRIu64
		        " ms as generation %" PRIu64
		        " (consecutive fast failures: %" PRIu32 ")",
		    nm, ev->delay_ms, ev->generation, ev->attempt);
		break;
	case SV_EV_UNRESPONSIVE:
		svd_log("%s: pid %" PRId64 " unresponsive (%s); %s", nm,
		    ev->pid,
		    ev->phase == SV_PHASE_START ? "not ready in time"
		        : ev->phase == SV_PHASE_WATCHDOG
		        ? "missed its heartbeat"
		        : "did not stop in time",
		    ev->abandon ? "abandoning it" : "stopping it");
		break;
	case SV_EV_ESCALATED:
		svd_log("%s: sending SIGKILL to pid %" PRId64, nm, ev->pid);
		break;
	case SV_EV_STOPPING:
		svd_log("%s: stopping pid %" PRId64 " (%s)", nm, ev->pid,
		    sv_why_name(ev->why));
		break;
	case SV_EV_STOPPED:
		svd_log("%s: stopped (%s)", nm, sv_why_name(ev->why));
		break;
	case SV_EV_SPAWN_FAILED:
		/* Logged by sup_spawn, with the program's name. */
		break;
	case SV_EV_GROUP_FAILED:
		svd_log("%s: group failed: %s; `supervisectl reset %s` starts "
		        "it again",
		    group, ev->reason, group);
		break;
	case SV_EV_GROUP_RESET:
		svd_log("%s: group reset", group);
		break;
	case SV_EV_GROUP_SCALED:
		if (ev->previous != ev->count) {
			svd_log("%s: target %" PRIu32 " -> %" PRIu32, group,
			    ev->previous, ev->count);
		}
		break;
	case SV_EV_ADOPTED:
		svd_log("%s: adopted pid %" PRId64 " generation %" PRIu64
		        " from the previous supervisor",
		    nm, ev->pid, ev->generation);
		break;
	case SV_EV_DRAINING:
		svd_log("%s: draining pid %" PRId64 " (drain %" PRIu64
		        "%s; SIGKILL in %" PRIu64 " ms)",
		    nm, ev->pid, ev->drain_id,
		    ev->why == SV_WHY_ROLL ? ", rolling restart" : "",
		    ev->delay_ms);
		break;
	case SV_EV_ROLL_DONE:
		svd_log("%s: rolling restart %" PRIu64 " %s%s", group,
		    ev->drain_id,
		    ev->reason != NULL ? "stopped: " : "complete",
		    ev->reason != NULL ? ev->reason : "");
		break;
	case SV_EV_GROUP_CREATED:
	case SV_EV_GROUP_DELETED:
		break;
	}
}

/* sup_durable_facts gathers what core/durable.h needs to know of event
 * ev's group g and seat. */
static sv_durable_facts
sup_durable_facts(svd_sup *s, const sv_event *ev, const svd_gsh *g)
{
	sv_durable_facts f   = {.group_known = g != NULL};
	sv_wkey          key = {ev->group_id, ev->ordinal, ev->generation};
	const sv_cgroup *cg  = sv_core_group(s->core, ev->group_id);
	const sv_jgroup *jg;
	sv_seat_view     v;

	if (g == NULL) {
		return f;
	}
	f.proc_known    = proc_find(s, key) != NULL;
	f.deleting      = cg == NULL || cg->deleting;
	f.shutting_down = sv_core_shutting_down(s->core);
	if (cg != NULL
	    && sv_core_seat_view(s->core, ev->group_id, ev->ordinal, &v)
	        == SV_OK) {
		f.seat_known  = true;
		f.seat_wanted = v.wanted;
		f.ready       = v.current.ready;
	}
	jg         = sv_jstate_group(svd_state_mirror(s->state), g->cfg->name);
	f.released = jg != NULL && ev->ordinal < jg->nseats
	    && jg->seats[ev->ordinal].released;
	return f;
}

/* sup_journal_event records what an event changes of the durable state
 * (state.h): the records core/durable.h names for it, each filled in from
 * the event, the process and the group. */
static void
sup_journal_event(svd_sup *s, const sv_event *ev, svd_gsh *g)
{
	sv_wkey          key = {ev->group_id, ev->ordinal, ev->generation};
	sv_durable_facts f;
	sv_durable_plan  plan;

	if (s->state == NULL || g == NULL) {
		return;
	}
	f = sup_durable_facts(s, ev, g);
	sv_durable_records(ev, &f, &plan);
	for (uint32_t i = 0; i < plan.n; i++) {
		sv_jrec         r = {.kind = plan.kinds[i],
		            .name          = g->cfg->name,
		            .ordinal       = ev->ordinal,
		            .generation    = ev->generation};
		const svd_proc *p;
		switch (r.kind) {
		case SV_J_STARTED:
			if ((p = proc_find(s, key)) == NULL) {
				return;
			}
			r.pid        = p->pid;
			r.start_time = p->start_time;
			break;
		case SV_J_STOPPING:
			r.deadline_ms = ev->deadline_ms;
			break;
		case SV_J_GROUP:
			r.ordinal      = 0;
			r.count        = ev->kind == SV_EV_GROUP_SCALED
			           ? ev->count
			           : sv_core_group(s->core, g->id)->ords.limit;
			r.config_count = g->cfg->count;
			r.spec         = g->spec;
			break;
		case SV_J_DELETED:
			r.ordinal = 0;
			break;
		default:
			break;
		}
		svd_state_record(s->state, &r);
	}
}

/* sup_event logs an event and publishes it on the event socket. */
void
sup_event(svd_sup *s, const sv_event *ev)
{
	svd_gsh                    *g     = gsh_find(s, ev->group_id);
	const char                 *group = g != NULL ? g->cfg->name : "?";
	Supervise__V1__Event        e     = SUPERVISE__V1__EVENT__INIT;
	Supervise__V1__WorkerExited ex    = SUPERVISE__V1__WORKER_EXITED__INIT;
	Supervise__V1__RestartScheduled rs
	    = SUPERVISE__V1__RESTART_SCHEDULED__INIT;
	Supervise__V1__WorkerUnresponsive un
	    = SUPERVISE__V1__WORKER_UNRESPONSIVE__INIT;
	Supervise__V1__WorkerStopped  st = SUPERVISE__V1__WORKER_STOPPED__INIT;
	Supervise__V1__WorkerStopping sg
	    = SUPERVISE__V1__WORKER_STOPPING__INIT;
	Supervise__V1__SpawnFailed   sf = SUPERVISE__V1__SPAWN_FAILED__INIT;
	Supervise__V1__GroupFailed   gf = SUPERVISE__V1__GROUP_FAILED__INIT;
	Supervise__V1__GroupScaled   gs = SUPERVISE__V1__GROUP_SCALED__INIT;
	Supervise__V1__WorkerStarted ws = SUPERVISE__V1__WORKER_STARTED__INIT;
	Supervise__V1__WorkerReady   wr = SUPERVISE__V1__WORKER_READY__INIT;
	Supervise__V1__WorkerEscalated we
	    = SUPERVISE__V1__WORKER_ESCALATED__INIT;
	Supervise__V1__GroupReset    gr = SUPERVISE__V1__GROUP_RESET__INIT;
	Supervise__V1__GroupCreated  gc = SUPERVISE__V1__GROUP_CREATED__INIT;
	Supervise__V1__GroupDeleted  gd = SUPERVISE__V1__GROUP_DELETED__INIT;
	Supervise__V1__WorkerAdopted wa = SUPERVISE__V1__WORKER_ADOPTED__INIT;
	Supervise__V1__DrainNotice   dn = SUPERVISE__V1__DRAIN_NOTICE__INIT;
	struct timespec              ts;
	int                          worker = 1;

	/* The event's time is when it happened: read before the journal
	 * write, which can take a while on a busy disk (a STARTED stamped
	 * after it made a start timeout look early). */
	clock_gettime(CLOCK_REALTIME, &ts);
	sup_log_event(s, ev, group);
	sup_journal_event(s, ev, g);
	if (ev->kind == SV_EV_ROLL_DONE) {
		return; /* logged only; the report (GetDrain) tells the rest */
	}
	s->seq++;
	if (s->events == NULL) {
		return;
	}
	e.seq           = s->seq;
	e.supervisor_id = s->id;
	e.time_unix_ms
	    = (uint64_t) ts.tv_sec * 1000u + (uint64_t) ts.tv_nsec / 1000000u;
	e.group      = (char *) group;
	e.ordinal    = ev->ordinal;
	e.generation = ev->generation;
	e.pid        = ev->pid;
	switch (ev->kind) {
	case SV_EV_STARTED:
		e.kind_case = SUPERVISE__V1__EVENT__KIND_STARTED;
		e.started   = &ws;
		break;
	case SV_EV_READY:
		e.kind_case = SUPERVISE__V1__EVENT__KIND_READY;
		e.ready     = &wr;
		break;
	case SV_EV_EXITED:
		ex.exited      = ev->exit.exited;
		ex.code        = ev->exit.code;
		ex.signal      = ev->exit.signo;
		ex.core_dumped = ev->exit.core;
		ex.uptime_ms   = ev->uptime_ms;
		ex.stopped_by  = ev->why != SV_WHY_NONE
		     ? (char *) sv_why_name(ev->why)
		     : (char *) "";
		e.kind_case    = SUPERVISE__V1__EVENT__KIND_EXITED;
		e.exited       = &ex;
		break;
	case SV_EV_RESTART_SCHEDULED:
		rs.delay_ms = ev->delay_ms;
		rs.attempt  = ev->attempt;
		e.kind_case = SUPERVISE__V1__EVENT__KIND_RESTART_SCHEDULED;
		e.restart_scheduled = &rs;
		break;
	case SV_EV_UNRESPONSIVE:
		un.phase       = ev->phase == SV_PHASE_START ? "start"
		          : ev->phase == SV_PHASE_WATCHDOG   ? "watchdog"
		                                             : "stop";
		un.action      = ev->abandon          ? "abandon"
		         : ev->phase == SV_PHASE_STOP ? "escalate"
		                                      : "kill";
		e.kind_case    = SUPERVISE__V1__EVENT__KIND_UNRESPONSIVE;
		e.unresponsive = &un;
		break;
	case SV_EV_ESCALATED:
		e.kind_case = SUPERVISE__V1__EVENT__KIND_ESCALATED;
		e.escalated = &we;
		break;
	case SV_EV_STOPPING:
		sg.reason   = (char *) sv_why_name(ev->why);
		e.kind_case = SUPERVISE__V1__EVENT__KIND_STOPPING;
		e.stopping  = &sg;
		break;
	case SV_EV_STOPPED:
		st.reason   = (char *) sv_why_name(ev->why);
		e.kind_case = SUPERVISE__V1__EVENT__KIND_STOPPED;
		e.stopped   = &st;
		break;
	case SV_EV_SPAWN_FAILED:
		sf.error       = strerror(ev->error);
		e.kind_case    = SUPERVISE__V1__EVENT__KIND_SPAWN_FAILED;
		e.spawn_failed = &sf;
		break;
	case SV_EV_GROUP_FAILED:
		gf.reason   = (char *) (ev->reason != NULL ? ev->reason : "");
		e.kind_case = SUPERVISE__V1__EVENT__KIND_GROUP_FAILED;
		e.group_failed = &gf;
		worker         = 0;
		break;
	case SV_EV_GROUP_RESET:
		e.kind_case   = SUPERVISE__V1__EVENT__KIND_GROUP_RESET;
		e.group_reset = &gr;
		worker        = 0;
		break;
	case SV_EV_GROUP_SCALED:
		gs.previous_count = ev->previous;
		gs.count          = ev->count;
		e.kind_case       = SUPERVISE__V1__EVENT__KIND_GROUP_SCALED;
		e.group_scaled    = &gs;
		worker            = 0;
		break;
	case SV_EV_ADOPTED:
		wa.previous_epoch = s->epoch > 0 ? s->epoch - 1 : 0;
		e.kind_case       = SUPERVISE__V1__EVENT__KIND_ADOPTED;
		e.adopted         = &wa;
		break;
	case SV_EV_GROUP_CREATED:
		e.kind_case     = SUPERVISE__V1__EVENT__KIND_GROUP_CREATED;
		e.group_created = &gc;
		worker          = 0;
		break;
	case SV_EV_GROUP_DELETED:
		e.kind_case     = SUPERVISE__V1__EVENT__KIND_GROUP_DELETED;
		e.group_deleted = &gd;
		worker          = 0;
		break;
	case SV_EV_DRAINING:
		/* On the worker's own topic: a worker subscribed to
		 * w/GROUP/ORDINAL/ hears it at once. */
		svd_drain_notice(&e, &dn, ev->drain_id, ev->delay_ms);
		break;
	case SV_EV_ROLL_DONE:
		break;
	}
	if (!worker) {
		e.ordinal    = 0;
		e.generation = 0;
		e.pid        = 0;
	}
	svd_events_publish(s->events, &e, worker);
}

/* sup_event_after does what must follow an event once it is out: a
 * deleted group's shell side goes. */
void
sup_event_after(svd_sup *s, const sv_event *ev)
{
	if (ev->kind == SV_EV_GROUP_DELETED) {
		svd_log("%s: deleted",
		    gsh_find(s, ev->group_id) != NULL
		        ? gsh_find(s, ev->group_id)->cfg->name
		        : "?");
		gsh_remove(s, ev->group_id);
	}
}

/* sup_find_worker finds the worker that is process pid or its nearest
 * ancestor (at most SUP_MAX_ANCESTRY levels up): the pid hash answers in
 * constant time per step; /proc is read only for processes that are not
 * workers themselves. */
bool
sup_find_worker(svd_sup *s, long pid, sv_wkey *keyp)
{
	for (int depth = 0; depth < SUP_MAX_ANCESTRY && pid > 1; depth++) {
		if (sv_pidmap_get(&s->pids, pid, keyp)) {
			return true;
		}
		if (pid == s->self_pid) {
			break;
		}
		pid = proc_ppid(pid);
	}
	return false;
}
