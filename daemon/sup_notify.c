/*
 * sup_notify.c — the notify socket's side in the supervisor: READY=1,
 * STATUS= and heartbeat datagrams from workers turned into core calls.
 */
#include "sup_internal.h"

/* proc_status returns the status text of a shell record ("" when none);
 * it stays valid until the record's next status text. */
const char *
proc_status(const svd_proc *p)
{
	return p->status != NULL ? p->status : "";
}

/* proc_status_set replaces a record's status text with text (cut to
 * SVD_NOTIFY_STATUS_MAX bytes), NULL for "". The buffer is the record's:
 * seat_free or seat_maybe_free frees it. Returns false, leaving the old
 * text, when memory is short. */
static bool
proc_status_set(svd_proc *p, const char *text)
{
	size_t n = strnlen(text, SVD_NOTIFY_STATUS_MAX);
	char  *b;

	if (n == 0) {
		free(p->status);
		p->status = NULL;
		return true;
	}
	if ((b = realloc(p->status, n + 1)) == NULL) {
		return false;
	}
	memcpy(b, text, n);
	b[n]      = '\0';
	p->status = b;
	return true;
}

/* sup_status_text records a worker's status line and, when it changed,
 * logs and publishes it. The record's text is not reset at a spawn: the
 * next process of the same record shows it until it sets its own (as
 * when the text was an array of the record; tests pin it). */
void
sup_status_text(svd_sup *s, sv_wkey key, const char *text)
{
	svd_proc                       *p = proc_find(s, key);
	svd_gsh                        *g = gsh_find(s, key.group_id);
	Supervise__V1__Event            e = SUPERVISE__V1__EVENT__INIT;
	Supervise__V1__WorkerStatusText st
	    = SUPERVISE__V1__WORKER_STATUS_TEXT__INIT;
	char            nm[96];
	struct timespec ts;

	if (p == NULL || g == NULL || strcmp(proc_status(p), text) == 0) {
		return;
	}
	if (!proc_status_set(p, text)) {
		svd_log("%s: status: no memory to keep it",
		    key_name(s, key, nm, sizeof(nm)));
		return;
	}
	svd_log("%s: status: %s", key_name(s, key, nm, sizeof(nm)),
	    proc_status(p));
	s->seq++;
	if (s->events == NULL) {
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	e.seq           = s->seq;
	e.supervisor_id = s->id;
	e.time_unix_ms
	    = (uint64_t) ts.tv_sec * 1000u + (uint64_t) ts.tv_nsec / 1000000u;
	e.group       = (char *) g->cfg->name;
	e.ordinal     = key.ordinal;
	e.generation  = key.generation;
	e.pid         = p->pid;
	st.text       = (char *) proc_status(p);
	e.kind_case   = SUPERVISE__V1__EVENT__KIND_STATUS_TEXT;
	e.status_text = &st;
	svd_events_publish(s->events, &e, 1);
}

/* sup_notify_one applies one datagram from the notify socket. Only the
 * worker process itself is heard (the kernel's credentials name it; its
 * pid cannot be reused while we have not reaped it). */
static void
sup_notify_one(svd_sup *s, const svd_notify_msg *m)
{
	sv_wkey  key;
	uint64_t now = sv_loop_now_ms();

	if (!sv_pidmap_get(&s->pids, m->pid, &key)) {
		/* A descendant is heard only where its group allows it. */
		svd_gsh *g = NULL;
		if (!sup_find_worker(s, m->pid, &key)
		    || (g = gsh_find(s, key.group_id)) == NULL
		    || !g->cfg->notify_all) {
			if (s->notify_drops++ % 100 == 0) {
				svd_log(
				    "notify datagram from pid %d, which is "
				    "not a worker (or a descendant of one "
				    "with notify_access = \"all\"): dropped "
				    "(%lu so far)",
				    (int) m->pid, s->notify_drops);
			}
			return;
		}
	}
	if (m->has_status) {
		sup_status_text(s, key, m->status);
	}
	/* (SV_ENOTFOUND, a process no longer live, is ignored; out of
	 * memory, the report is given again: core_retry.h.) */
	if (m->has_extend) {
		SUP_CORE_RETRY("an extension",
		    sv_core_extend(s->core, key, m->extend_usec / 1000, now));
	}
	if (m->ready) {
		SUP_CORE_RETRY(
		    "a readiness", sv_core_ready(s->core, key, now));
	}
	if (m->watchdog) {
		SUP_CORE_RETRY(
		    "a heartbeat", sv_core_heartbeat(s->core, key, now));
	}
}

/* sup_notify_drain reads every queued notify datagram (at most a batch). */
void
sup_notify_drain(svd_sup *s)
{
	svd_notify_msg m;

	for (int i = 0; s->notify != NULL && i < 256; i++) {
		sv_err err = svd_notify_recv(s->notify, &m);
		if (err == SV_OK) {
			sup_notify_one(s, &m);
		} else if (err == SV_EBADREQ) {
			if (s->notify_drops++ % 100 == 0) {
				svd_log(
				    "notify datagram from pid %d refused: %s "
				    "(%lu so far)",
				    (int) m.pid, m.why != NULL ? m.why : "?",
				    s->notify_drops);
			}
		} else {
			break;
		}
	}
}

/* sup_notify_cb: the notify socket is readable. */
static void
sup_notify_cb(sv_loop *loop, sv_io *io, uint32_t events)
{
	svd_sup *s = io->arg;

	(void) loop;
	(void) events;
	sup_notify_drain(s);
	sup_run_effects(s);
}

void
svd_sup_set_notify(svd_sup *s, svd_notify *n)
{
	s->notify    = n;
	s->notify_io = (sv_io) {svd_notify_fd(n), sup_notify_cb, s};
	if (sv_loop_add_io(s->loop, &s->notify_io, EPOLLIN) != SV_OK) {
		svd_log("cannot watch the notify socket; NOTIFY_SOCKET is not "
		        "given to workers");
		s->notify = NULL;
	}
}
