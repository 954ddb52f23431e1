/*
 * subworkers.c — the sub-worker shell (see subworkers.h): the core
 * (core/subworker.h) plus one pidfd watch per registered child.
 *
 * Trust: a thread is registered and released only through its process's
 * own connection (c->is_worker: the peer pid is a worker the supervisor
 * spawned or adopted); a child registers itself, with the parent pid the
 * kernel reports. The child's pidfd is opened after the claim and checked
 * against the connection's pidfd: if the connecting process has exited by
 * then, the pid may name another process and the claim is undone.
 *
 * A watch is freed only by its own callback (its pidfd became readable)
 * or by svd_subw_destroy: the loop may hold its event in the batch being
 * dispatched, so a watch whose child stops being registered (released, or
 * orphaned with its worker) is only marked dead and ends when that process
 * exits.
 *
 * Bounds: the core bounds the processes it tracks (SUBW_MAX_PROCS) and the
 * sub-workers per process (the group's max_subworkers, at most
 * SV_SUBW_MAX); a watch is live for a registered child or dead for a
 * process that still runs, and a child that registers again revives its
 * own, so the watches are bounded by those and by the live processes.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "subworkers.h"

/* Worker processes the core tracks (live ones and label memory). */
#define SUBW_MAX_PROCS 16384u

/* One watched child. */
typedef struct subw_watch {
	struct subw_watch *next;
	svd_subw          *sw;
	sv_io              io;
	int64_t            pid;
	bool               live; /* pid is a registered child */
} subw_watch;

struct svd_subw {
	sv_loop      *loop;
	sv_subworkers core;
	subw_watch   *watches;
	size_t        nwatches;
};

/* The frames of one sub-worker identity (reply storage). */
typedef struct subw_frames {
	sv_subw_frame         raw[SV_SUBW_DEPTH];
	Supervise__V1__Frame  fr[SV_SUBW_DEPTH];
	Supervise__V1__Frame *ptrs[SV_SUBW_DEPTH];
} subw_frames;

sv_err
svd_subw_create(sv_loop *loop, svd_subw **swp)
{
	svd_subw *sw = calloc(1, sizeof(*sw));

	if (sw == NULL) {
		return SV_ENOMEM;
	}
	if (sv_subw_init(&sw->core, SUBW_MAX_PROCS) != SV_OK) {
		free(sw);
		return SV_ENOMEM;
	}
	sw->loop = loop;
	*swp     = sw;
	return SV_OK;
}

/* subw_unwatch stops and frees watch *wp (unlinking it). */
static void
subw_unwatch(svd_subw *sw, subw_watch **wp)
{
	subw_watch *w = *wp;

	*wp = w->next;
	sv_loop_del_io(sw->loop, &w->io);
	close(w->io.fd);
	free(w);
	sw->nwatches--;
}

/* subw_sweep marks dead the watch of every pid that is no longer a
 * registered child (released, or orphaned with its worker). */
static void
subw_sweep(svd_subw *sw)
{
	sv_subw_grant g;

	for (subw_watch *w = sw->watches; w != NULL; w = w->next) {
		if (w->live && !sv_subw_find_child(&sw->core, w->pid, &g)) {
			w->live = false;
		}
	}
}

void
svd_subw_destroy(svd_subw *sw)
{
	if (sw == NULL) {
		return;
	}
	while (sw->watches != NULL) {
		subw_unwatch(sw, &sw->watches);
	}
	sv_subw_fini(&sw->core);
	free(sw);
}

void
svd_subw_attach(svd_subw *sw, sv_wkey key, int64_t pid, uint32_t max)
{
	sv_err err = sv_subw_attach(&sw->core, key, pid, max);

	if (err != SV_OK) {
		svd_log("pid %lld cannot have sub-workers: %s",
		    (long long) pid, sv_strerror(err));
	}
}

void
svd_subw_worker_gone(svd_subw *sw, sv_wkey key)
{
	size_t n = 0;

	if (sv_subw_process_exited(&sw->core, key, NULL, 0, &n) == SV_OK
	    && n > 0) {
		subw_sweep(sw);
	}
}

bool
svd_subw_is_request(const svw_env *req)
{
	return req->body_case
	    == SUPERVISE__V1__ENVELOPE__BODY_REGISTER_SUB_WORKER
	    || req->body_case
	    == SUPERVISE__V1__ENVELOPE__BODY_RELEASE_SUB_WORKER;
}

/* subw_exit_cb: a watched child's pidfd became readable (it exited). */
static void
subw_exit_cb(sv_loop *loop, sv_io *io, uint32_t events)
{
	subw_watch  *w  = io->arg;
	svd_subw    *sw = w->sw;
	subw_watch **wp = &sw->watches;

	(void) loop;
	(void) events;
	if (w->live) {
		(void) sv_subw_child_exited(&sw->core, w->pid);
	}
	while (*wp != NULL && *wp != w) {
		wp = &(*wp)->next;
	}
	if (*wp == w) {
		subw_unwatch(sw, wp);
	}
}

/* subw_readable tells whether pidfd (>= 0) is readable: its process has
 * exited. */
static bool
subw_readable(int pidfd)
{
	struct pollfd pfd = {pidfd, POLLIN, 0};
	return poll(&pfd, 1, 0) > 0;
}

/* subw_watch_child starts watching the newly registered child pid; when it
 * cannot (it is gone, or the connection's process has exited), the claim
 * is undone and SV_ENOTFOUND / SV_ENOMEM returned. */
static sv_err
subw_watch_child(svd_subw *sw, const svd_subw_caller *c, int64_t pid)
{
	subw_watch *w;
	int         fd;

	/* A dead watch of the same, still running process comes back. */
	for (w = sw->watches; w != NULL; w = w->next) {
		if (w->pid == pid && !w->live && !subw_readable(w->io.fd)) {
			w->live = true;
			return SV_OK;
		}
		if (w->pid == pid) {
			w->live = false; /* an earlier process with that pid */
		}
	}
	fd = (int) syscall(SYS_pidfd_open, (pid_t) pid, 0);
	if (fd < 0 || (c->pidfd >= 0 && subw_readable(c->pidfd))) {
		if (fd >= 0) {
			close(fd);
		}
		(void) sv_subw_child_exited(&sw->core, pid);
		return SV_ENOTFOUND;
	}
	if ((w = calloc(1, sizeof(*w))) == NULL) {
		close(fd);
		(void) sv_subw_child_exited(&sw->core, pid);
		return SV_ENOMEM;
	}
	w->sw   = sw;
	w->pid  = pid;
	w->live = true;
	w->io   = (sv_io) {fd, subw_exit_cb, w};
	if (sv_loop_add_io(sw->loop, &w->io, EPOLLIN) != SV_OK) {
		close(fd);
		free(w);
		(void) sv_subw_child_exited(&sw->core, pid);
		return SV_ENOMEM;
	}
	w->next     = sw->watches;
	sw->watches = w;
	sw->nwatches++;
	return SV_OK;
}

/* subw_why writes the message of core error err to c->emsg and returns
 * the code to answer with. */
static sv_err
subw_why(const svd_subw_caller *c, sv_err err, bool thread)
{
	const char *why;

	switch (err) {
	case SV_EINVAL:
		why = "bad request: a thread's label must be 1..64 bytes "
		      "without NUL, number below max_subworkers, kind THREAD "
		      "or PROCESS";
		break;
	case SV_ENOTWORKER:
		why = thread ? "the caller is not a live worker process"
		             : "the caller's parent is not a live worker "
		               "process";
		break;
	case SV_ETOOLARGE:
		why = "sub-workers nest two levels at most";
		break;
	case SV_EPERM:
		why = "a sub-worker is registered and released only by its "
		      "owner (a worker cannot be its own child)";
		break;
	case SV_ECONFLICT:
		why = "the number or label is held by another live "
		      "sub-worker";
		break;
	case SV_EEXHAUSTED:
		why = "the process holds max_subworkers sub-workers";
		break;
	case SV_ENOTFOUND:
		why = "the process is not (or no longer) a live worker";
		break;
	default:
		why = sv_strerror(err);
		break;
	}
	snprintf(c->emsg, c->emsglen, "%s", why);
	/* Local codes are not ErrorCodes (docs/protocol.md, section 10). */
	if (err == SV_EINVAL) {
		return SV_EBADREQ;
	}
	return err == SV_ENOMEM ? SV_EINTERNAL : err;
}

/* subw_bad_kind answers a request whose kind is neither THREAD nor
 * PROCESS (BAD_REQUEST, saying so). */
static sv_err
subw_bad_kind(const svd_subw_caller *c)
{
	snprintf(c->emsg, c->emsglen,
	    "bad request: kind must be THREAD (%d) or PROCESS (%d)",
	    (int) SV_SUBW_THREAD, (int) SV_SUBW_PROCESS);
	return SV_EBADREQ;
}

/* subw_register serves RegisterSubWorker. */
static sv_err
subw_register(svd_subw *sw, const Supervise__V1__RegisterSubWorker *m,
    const svd_subw_caller *c, sv_subw_grant *g)
{
	sv_subw_request r;
	sv_subw_grant   got;
	sv_err          err;
	bool            thread = (int) m->kind == (int) SV_SUBW_THREAD;

	if (c->pid <= 0) {
		return subw_why(c, SV_ENOTWORKER, thread);
	}
	r.label      = m->label != NULL ? m->label : "";
	r.label_len  = strlen(r.label);
	r.has_number = m->has_number;
	r.number     = m->number;
	r.tid        = m->tid;
	if (thread) {
		err = sv_subw_claim_thread(&sw->core, c->pid, &r, &got);
	} else if ((int) m->kind == (int) SV_SUBW_PROCESS) {
		err = sv_subw_claim_child(
		    &sw->core, c->pid, c->ppid, &r, &got);
		if (err == SV_OK && !got.again) {
			err = subw_watch_child(sw, c, c->pid);
		}
	} else {
		return subw_bad_kind(c);
	}
	if (err != SV_OK) {
		return subw_why(c, err, thread);
	}
	*g = got;
	return SV_OK;
}

/* subw_release serves ReleaseSubWorker. */
static sv_err
subw_release(svd_subw *sw, const Supervise__V1__ReleaseSubWorker *m,
    const svd_subw_caller *c)
{
	sv_subw_grant g = {0};
	sv_err        err;

	if (c->pid <= 0) {
		return subw_why(c, SV_ENOTFOUND, true);
	}
	if ((int) m->kind == (int) SV_SUBW_THREAD) {
		if (!c->is_worker) {
			/* A registered child or a stranger: not its thread. */
			return subw_why(c,
			    sv_subw_find_child(&sw->core, c->pid, &g)
			        ? SV_EPERM
			        : SV_ENOTFOUND,
			    true);
		}
		g.proc = c->key;
	} else if ((int) m->kind == (int) SV_SUBW_PROCESS) {
		if (c->is_worker) {
			return subw_why(c, SV_EPERM, false);
		}
		if (!sv_subw_find_child(&sw->core, c->pid, &g)) {
			/* A child of a live worker holding nothing: a stale
			 * (repeated) release. Any other process is no
			 * worker's child: refused, as a stranger's thread
			 * release is. */
			return c->parent_is_worker
			    ? SV_OK
			    : subw_why(c, SV_ENOTWORKER, false);
		}
	} else {
		return subw_bad_kind(c);
	}
	g.kind        = (sv_subw_kind) m->kind;
	g.sub_ordinal = m->number;
	g.generation  = m->generation;
	if ((err = sv_subw_release(&sw->core, c->pid, &g)) != SV_OK) {
		return subw_why(c, err, (int) m->kind == (int) SV_SUBW_THREAD);
	}
	subw_sweep(sw);
	return SV_OK;
}

sv_err
svd_subw_handle(svd_subw *sw, const svw_env *req, const svd_subw_caller *c,
    sv_subw_grant *g)
{
	if (req->body_case
	    == SUPERVISE__V1__ENVELOPE__BODY_REGISTER_SUB_WORKER) {
		return subw_register(sw, req->register_sub_worker, c, g);
	}
	return subw_release(sw, req->release_sub_worker, c);
}

sv_err
svd_subw_fill(const svd_subw *sw, const sv_subw_grant *g, const char *group,
    Supervise__V1__Identity *id, void **arenap)
{
	subw_frames *f = calloc(1, sizeof(*f));
	size_t       n = 0;
	sv_err       err;

	if (f == NULL) {
		return SV_ENOMEM;
	}
	err = sv_subw_context(&sw->core, g, group, f->raw, &n);
	if (err != SV_OK || n != SV_SUBW_DEPTH) {
		free(f);
		return err != SV_OK ? err : SV_EINTERNAL;
	}
	for (size_t i = 0; i < n; i++) {
		supervise__v1__frame__init(&f->fr[i]);
		f->fr[i].kind    = (Supervise__V1__WorkerKind) f->raw[i].kind;
		f->fr[i].ordinal = f->raw[i].ordinal;
		f->fr[i].generation = f->raw[i].generation;
		f->fr[i].name       = f->raw[i].name;
		f->ptrs[i]          = &f->fr[i];
	}
	*arenap        = f;
	id->ordinal    = g->sub_ordinal;
	id->generation = g->generation;
	id->kind       = (Supervise__V1__WorkerKind) g->kind;
	id->pid        = g->pid;
	id->n_context  = n;
	id->context    = f->ptrs;
	id->parent     = &f->fr[0];
	return SV_OK;
}

bool
svd_subw_whoami(const svd_subw *sw, int64_t pid, const char *group,
    Supervise__V1__Identity *id, void **arenap)
{
	sv_subw_grant g;

	return pid > 0 && sv_subw_find_child(&sw->core, pid, &g)
	    && svd_subw_fill(sw, &g, group, id, arenap) == SV_OK;
}
