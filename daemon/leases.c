/*
 * leases.c — the lease shell (see leases.h; the decisions are the core's,
 * core/lease.h; the state machine is docs/leases.md).
 *
 * Nothing here decides who gets a slot. This file turns requests into core
 * calls and carries out what the core answers, effect by effect:
 *   REPLY_WAITER     answer a deferred AcquireLease (Lease, DEADLINE, or
 *                    nothing when its holder went away)
 *   NOTICE_REVOKED   nothing of its own: the REVOKED event that follows is
 *                    published on the holder's topic and is the notice
 *   EVENT            an Event of kind `lease` on the event socket, topic
 *                    w/GROUP/ORDINAL/ for a worker holder, s/SESSION/ for
 *                    a session (docs/protocol.md, section 11)
 *   TIMER_ARM/CANCEL one loop timer per (kind, key), in a small hash
 *   RESOURCE_PREPARE create the slot's file or directory from the pool's
 *                    path template, owned by the holder's user
 *   RESOURCE_RECLAIM keep, truncate or remove it
 * and keeps the journal's lease records (L on a grant or claim, U at the
 * end) so that a successor can restore them.
 *
 * Divisions: tables (pools, timers, deferred replies, sessions, pipes);
 * resources; events; effects; conversion to messages; requests; hooks.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "leases.h"
#include "log.h"
#include "shell/loop.h"
#include "wire/wire_msg.h"

/* Buckets of the timer hash. */
#define LS_TIMER_BUCKETS 1024u
/* Lease ids whose grant was aborted, remembered until answered. */
#define LS_ABORTED_MAX 8u
/* Longest rendered resource path. */
#define LS_PATH_MAX 1100u

/* What the shell keeps of a pool: only what the core does not hold, the
 * description of its per-slot resource. */
typedef struct ls_res {
	char *path; /* template, or NULL: no resource */
	bool  directory;
} ls_res;

/* A pool as the shell sees it, composed on demand (ls_pool_view) from the
 * core's record and the shell's ls_res: a view, never stored. */
typedef struct ls_pool {
	uint32_t        id;
	const char     *name; /* the core's */
	uint32_t        slots;
	uint64_t        ttl_ms, grace_ms;
	sv_lease_policy policy;
	bool            directory;
	const char     *path; /* template, or NULL: no resource */
} ls_pool;

typedef struct ls_timer {
	sv_timer            t;
	struct svd_leases  *l;
	sv_lease_timer_kind kind;
	uint64_t            key, guard;
	struct ls_timer    *next;
} ls_timer;

typedef struct ls_deferred {
	bool        used;
	uint64_t    waiter;
	uint64_t    request_id;
	svd_done_cb done;
	void       *arg;
	uint32_t    pipe;
	uint32_t    pool_id;
	uint64_t    wait_ms;
} ls_deferred;

typedef struct ls_pipe {
	uint32_t pipe; /* 0: unused */
	sv_wkey  key; /* the worker that opened it */
} ls_pipe;

struct svd_leases {
	sv_lease_core *core;
	sv_loop       *loop;
	svd_lease_host h;
	ls_res         res[SV_LEASE_MAX_POOLS]; /* of pool id at id - 1 */
	ls_timer      *timers[LS_TIMER_BUCKETS];
	ls_deferred    deferred[SVD_LEASE_MAX_DEFERRED];
	ls_pipe       *pipes; /* [SVD_LEASE_MAX_PIPES] */
	uint64_t       aborted[LS_ABORTED_MAX];
	unsigned       naborted;
	bool           lost_logged;
};

static void ls_effects(svd_leases *l);

/* ---- tables ---------------------------------------------------------------
 */

/* ls_pool_view composes pool id into *buf from the core's record and the
 * shell's resource, and returns buf; NULL if the core has no such pool. */
static ls_pool *
ls_pool_view(svd_leases *l, uint32_t id, ls_pool *buf)
{
	sv_lease_pool_info pi;

	if (id == 0 || id > SV_LEASE_MAX_POOLS
	    || !sv_lease_pool_get(l->core, id, &pi)) {
		return NULL;
	}
	*buf = (ls_pool) {pi.id, pi.name, pi.slots, pi.ttl_ms, pi.grace_ms,
	    pi.policy, l->res[id - 1].directory, l->res[id - 1].path};
	return buf;
}

/* ls_timer_bucket hashes (kind, key). */
static size_t
ls_timer_bucket(sv_lease_timer_kind kind, uint64_t key)
{
	uint64_t x = key * 0x9e3779b97f4a7c15ull + (uint64_t) kind;
	return (size_t) (x >> 40) % LS_TIMER_BUCKETS;
}

/* ls_timer_find returns the timer (kind, key), or NULL. */
static ls_timer *
ls_timer_find(svd_leases *l, sv_lease_timer_kind kind, uint64_t key)
{
	for (ls_timer *t = l->timers[ls_timer_bucket(kind, key)]; t != NULL;
	     t           = t->next) {
		if (t->kind == kind && t->key == key) {
			return t;
		}
	}
	return NULL;
}

/* ls_timer_cb hands a fired timer to the core. */
static void
ls_timer_cb(sv_loop *loop, sv_timer *st)
{
	ls_timer   *t = st->arg;
	svd_leases *l = t->l;

	(void) loop;
	sv_lease_timer(l->core, t->kind, t->key, t->guard, sv_loop_now_ms());
	ls_effects(l);
}

/* ls_timer_cancel removes timer (kind, key) if there is one. */
static void
ls_timer_cancel(svd_leases *l, sv_lease_timer_kind kind, uint64_t key)
{
	ls_timer **pp = &l->timers[ls_timer_bucket(kind, key)];

	for (; *pp != NULL; pp = &(*pp)->next) {
		ls_timer *t = *pp;
		if (t->kind == kind && t->key == key) {
			sv_loop_timer_stop(l->loop, &t->t);
			*pp = t->next;
			free(t);
			return;
		}
	}
}

/* ls_timer_arm arms (or re-arms) timer (kind, key) at due_ms. */
static void
ls_timer_arm(svd_leases *l, const sv_lease_fx *fx)
{
	ls_timer *t   = ls_timer_find(l, fx->timer, fx->key);
	uint64_t  now = sv_loop_now_ms();

	if (t == NULL) {
		size_t b = ls_timer_bucket(fx->timer, fx->key);
		if ((t = calloc(1, sizeof(*t))) == NULL) {
			svd_log("leases: cannot arm a timer: out of memory; "
			        "firing it now");
			sv_lease_timer(
			    l->core, fx->timer, fx->key, fx->guard, now);
			return;
		}
		sv_timer_init(&t->t, ls_timer_cb, t);
		t->l         = l;
		t->kind      = fx->timer;
		t->key       = fx->key;
		t->next      = l->timers[b];
		l->timers[b] = t;
	}
	sv_loop_timer_stop(l->loop, &t->t);
	t->guard = fx->guard;
	if (sv_loop_timer_start(
	        l->loop, &t->t, fx->due_ms > now ? fx->due_ms - now : 0)
	    != SV_OK) {
		svd_log("leases: cannot arm a timer; firing it now");
		sv_lease_timer(l->core, fx->timer, fx->key, fx->guard, now);
	}
}

/* ---- resources ------------------------------------------------------------
 */

/* ls_render writes pool p's path for slot into buf ("" if no resource):
 * every "{slot}" becomes the slot number. False if it does not fit. */
static bool
ls_render(const ls_pool *p, uint32_t slot, char *buf, size_t len)
{
	size_t      n = 0;
	const char *s = p->path;

	buf[0] = '\0';
	if (s == NULL) {
		return true;
	}
	while (*s != '\0') {
		int k;
		if (strncmp(s, "{slot}", 6) == 0) {
			k = snprintf(buf + n, len - n, "%" PRIu32, slot);
			s += 6;
		} else {
			k = snprintf(buf + n, len - n, "%c", *s);
			s++;
		}
		if (k < 0 || (size_t) k >= len - n) {
			return false;
		}
		n += (size_t) k;
	}
	return true;
}

/* ls_mkparents creates the missing directories above path (mode 0755,
 * so that a worker of another user can reach its own file). */
static void
ls_mkparents(const char *path)
{
	char buf[LS_PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p != '\0'; p++) {
		if (*p == '/') {
			*p = '\0';
			(void) mkdir(buf, 0755);
			*p = '/';
		}
	}
}

/* ls_owner finds the uid/gid a holder's resource belongs to: the group's
 * user for a worker of a group with `user`, else the daemon's. */
static void
ls_owner(svd_leases *l, const sv_lease_holder *h, uid_t *uid, gid_t *gid)
{
	*uid = geteuid();
	*gid = getegid();
	if (h->kind == SV_HOLDER_WORKER && l->h.group_user != NULL) {
		(void) l->h.group_user(l->h.arg, h->worker.group_id, uid, gid);
	}
}

/* ls_prepare creates (or takes over) the slot's resource for its new
 * holder: a file 0640 or a directory 0750, owned by the holder's user.
 * Errors: SV_ESYSTEM (logged). */
static sv_err
ls_prepare(svd_leases *l, const ls_pool *p, const sv_lease_info *li)
{
	char        path[LS_PATH_MAX];
	uid_t       uid;
	gid_t       gid;
	int         fd;
	struct stat st;

	if (p->path == NULL) {
		return SV_OK;
	}
	if (!ls_render(p, li->slot, path, sizeof(path))) {
		svd_log("pool %s: the path of slot %" PRIu32 " is too long",
		    p->name, li->slot);
		return SV_ESYSTEM;
	}
	ls_owner(l, &li->holder, &uid, &gid);
	ls_mkparents(path);
	if (p->directory) {
		if (mkdir(path, 0750) != 0 && errno != EEXIST) {
			goto fail;
		}
		fd = open(
		    path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	} else {
		fd = open(path,
		    O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK,
		    0640);
	}
	if (fd < 0) {
		goto fail;
	}
	if (fstat(fd, &st) != 0
	    || (p->directory ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))) {
		close(fd);
		errno = EEXIST;
		goto fail;
	}
	if ((st.st_uid != uid || st.st_gid != gid)
	    && fchown(fd, uid, gid) != 0) {
		close(fd);
		goto fail;
	}
	if (fchmod(fd, p->directory ? 0750 : 0640) != 0) {
		close(fd);
		goto fail;
	}
	close(fd);
	return SV_OK;
fail:
	svd_log(
	    "pool %s: cannot prepare %s: %s", p->name, path, strerror(errno));
	return SV_ESYSTEM;
}

/* ls_rm_cb removes one entry of a tree walked depth first. */
static int
ls_rm_cb(const char *path, const struct stat *st, int flag, struct FTW *fw)
{
	(void) st;
	(void) flag;
	(void) fw;
	if (remove(path) != 0 && errno != ENOENT) {
		svd_log("cannot remove %s: %s", path, strerror(errno));
	}
	return 0;
}

/* ls_empty_dir removes everything inside directory path. */
static void
ls_empty_dir(const char *path)
{
	/* Walk the tree (not following links) and remove all but its root. */
	char root[LS_PATH_MAX];

	snprintf(root, sizeof(root), "%s", path);
	(void) nftw(root, ls_rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	(void) mkdir(root, 0750);
}

/* ls_reclaim applies the pool's policy to the slot's resource. */
static void
ls_reclaim(svd_leases *l, const ls_pool *p, uint32_t slot)
{
	char path[LS_PATH_MAX];
	int  fd;

	(void) l;
	if (p->path == NULL || p->policy == SV_LEASE_KEEP
	    || !ls_render(p, slot, path, sizeof(path))) {
		return;
	}
	if (p->policy == SV_LEASE_REMOVE) {
		if (p->directory) {
			(void) nftw(path, ls_rm_cb, 16, FTW_DEPTH | FTW_PHYS);
		} else if (unlink(path) != 0 && errno != ENOENT) {
			svd_log("pool %s: cannot remove %s: %s", p->name, path,
			    strerror(errno));
		}
		return;
	}
	/* truncate */
	if (p->directory) {
		ls_empty_dir(path);
		return;
	}
	fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0) {
		if (ftruncate(fd, 0) != 0) {
			svd_log("pool %s: cannot truncate %s: %s", p->name,
			    path, strerror(errno));
		}
		close(fd);
	}
}

/* ---- conversion to messages -----------------------------------------------
 */

/* ls_holder_name writes "GROUP/ORDINAL@GENERATION" or "session:ID". */
static void
ls_holder_name(svd_leases *l, const sv_lease_holder *h, char *buf, size_t len)
{
	if (h->kind == SV_HOLDER_SESSION) {
		snprintf(buf, len, "session:%" PRIu64, h->session);
		return;
	}
	{
		const char *g = l->h.group_name(l->h.arg, h->worker.group_id);
		snprintf(buf, len, "%s/%" PRIu32 "@%" PRIu64,
		    g != NULL ? g : "?", h->worker.ordinal,
		    h->worker.generation);
	}
}

/* Strings of one Lease message, kept beside it. */
typedef struct ls_lease_msg {
	Supervise__V1__Lease m;
	char                 holder[SVW_MAX_NAME + 48];
	char                 resource[LS_PATH_MAX];
} ls_lease_msg;

/* ls_lease_fill converts li into lm (strings inside lm). */
static void
ls_lease_fill(svd_leases *l, const sv_lease_info *li, ls_lease_msg *lm)
{
	ls_pool        pv;
	const ls_pool *p   = ls_pool_view(l, li->pool_id, &pv);
	uint64_t       now = sv_loop_now_ms();

	supervise__v1__lease__init(&lm->m);
	ls_holder_name(l, &li->holder, lm->holder, sizeof(lm->holder));
	lm->resource[0] = '\0';
	if (p != NULL) {
		(void) ls_render(
		    p, li->slot, lm->resource, sizeof(lm->resource));
	}
	lm->m.id            = li->id;
	lm->m.pool          = p != NULL ? (char *) p->name : (char *) "";
	lm->m.slot          = li->slot;
	lm->m.token         = li->token;
	lm->m.expires_in_ms = li->expiry_ms == 0 ? 0
	    : li->expiry_ms > now                ? li->expiry_ms - now
	                                         : 1;
	lm->m.resource      = lm->resource;
	lm->m.holder        = lm->holder;
	lm->m.unclaimed     = li->state == SV_LEASE_UNCLAIMED;
	lm->m.epoch         = li->token >> 32;
}

/* ---- events ---------------------------------------------------------------
 */

/* ls_reason writes the reason's name with '_' for '-' (wire form). */
static void
ls_wire_name(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s", name);
	for (char *p = buf; *p != '\0'; p++) {
		if (*p == '-') {
			*p = '_';
		}
	}
}

/* ls_publish publishes a lease event about li on its holder's topic. */
static void
ls_publish(svd_leases *l, sv_lease_event_kind kind, sv_lease_reason why,
    const sv_lease_info *li)
{
	Supervise__V1__Event      e  = SUPERVISE__V1__EVENT__INIT;
	Supervise__V1__LeaseEvent le = SUPERVISE__V1__LEASE_EVENT__INIT;
	ls_lease_msg              lm;
	char                      what[32], reason[32], topic[160];
	const char               *g = NULL;

	if (l->h.publish == NULL) {
		return;
	}
	ls_lease_fill(l, li, &lm);
	ls_wire_name(sv_lease_event_name(kind), what, sizeof(what));
	ls_wire_name(why != SV_LREASON_NONE ? sv_lease_reason_name(why) : "",
	    reason, sizeof(reason));
	le.what     = what;
	le.reason   = reason;
	le.lease    = &lm.m;
	e.kind_case = SUPERVISE__V1__EVENT__KIND_LEASE;
	e.lease     = &le;
	if (li->holder.kind == SV_HOLDER_WORKER) {
		g = l->h.group_name(l->h.arg, li->holder.worker.group_id);
	}
	if (g != NULL) {
		e.group      = (char *) g;
		e.ordinal    = li->holder.worker.ordinal;
		e.generation = li->holder.worker.generation;
		e.pid        = l->h.worker_pid != NULL
		           ? l->h.worker_pid(l->h.arg, li->holder.worker)
		           : 0;
		snprintf(topic, sizeof(topic), "w/%s/%" PRIu32 "/", g,
		    li->holder.worker.ordinal);
	} else {
		e.group = "";
		snprintf(topic, sizeof(topic), "s/%" PRIu64 "/",
		    li->holder.kind == SV_HOLDER_SESSION ? li->holder.session
		                                         : 0);
	}
	l->h.publish(l->h.arg, &e, topic);
}

/* ls_journal_lease records a grant or claim (L) or an end (U). */
static void
ls_journal_lease(svd_leases *l, const sv_lease_info *li, bool live)
{
	ls_pool        pv;
	const ls_pool *p = ls_pool_view(l, li->pool_id, &pv);
	sv_jrec        r = {.kind = live ? SV_J_LEASE : SV_J_UNLEASE};
	const char    *g = NULL;

	if (l->h.journal == NULL || p == NULL) {
		return;
	}
	r.name     = p->name;
	r.ordinal  = li->slot;
	r.lease_id = li->id;
	r.token    = li->token;
	if (live) {
		if (li->holder.kind == SV_HOLDER_WORKER) {
			g = l->h.group_name(
			    l->h.arg, li->holder.worker.group_id);
			if (g == NULL) {
				return;
			}
			r.holder_group   = g;
			r.holder_ordinal = li->holder.worker.ordinal;
			r.generation     = li->holder.worker.generation;
		} else {
			sv_lease_session_info s = {0};
			(void) sv_lease_session_get(
			    l->core, li->holder.session, &s);
			r.session     = li->holder.session;
			r.session_uid = s.uid;
			r.session_ttl = s.ttl_ms;
		}
	}
	l->h.journal(l->h.arg, &r);
}

/* ---- effects --------------------------------------------------------------
 */

/* ls_deferred_find returns the deferred request of waiter id, or NULL. */
static ls_deferred *
ls_deferred_find(svd_leases *l, uint64_t waiter)
{
	for (size_t i = 0; i < SVD_LEASE_MAX_DEFERRED; i++) {
		if (l->deferred[i].used && l->deferred[i].waiter == waiter) {
			return &l->deferred[i];
		}
	}
	return NULL;
}

/* ls_was_aborted tells (and forgets) whether lease id's grant failed. */
static bool
ls_was_aborted(svd_leases *l, uint64_t id)
{
	for (unsigned i = 0; i < LS_ABORTED_MAX; i++) {
		if (l->aborted[i] == id && id != 0) {
			l->aborted[i] = 0;
			return true;
		}
	}
	return false;
}

/* ls_answer sends a deferred request its reply: the lease (err SV_OK) or
 * an Error; SV_ECLOSED drops it (nobody to answer). */
static void
ls_answer(svd_leases *l, ls_deferred *d, sv_err err, const sv_lease_info *li)
{
	nng_msg    *rep  = NULL;
	svd_done_cb done = d->done;
	void       *arg  = d->arg;
	char        msg[200];

	d->used = false;
	if (err == SV_OK && ls_was_aborted(l, li->id)) {
		err = SV_EINTERNAL;
	}
	if (err == SV_OK) {
		svw_env      env = SUPERVISE__V1__ENVELOPE__INIT;
		ls_lease_msg lm;
		ls_lease_fill(l, li, &lm);
		env.version    = SV_PROTOCOL_VERSION;
		env.request_id = d->request_id;
		env.body_case  = SUPERVISE__V1__ENVELOPE__BODY_LEASE;
		env.lease      = &lm.m;
		if (svw_encode(&env, SVW_MAX_REPLY, &rep) != SV_OK) {
			rep = NULL;
		}
	} else if (err != SV_ECLOSED) {
		ls_pool        pv;
		const ls_pool *p = ls_pool_view(l, d->pool_id, &pv);
		if (err == SV_ETIMEDOUT) {
			err = SV_EDEADLINE;
			snprintf(msg, sizeof(msg),
			    "pool %s: no slot freed within %" PRIu64 " ms",
			    p != NULL ? p->name : "?", d->wait_ms);
		} else {
			snprintf(msg, sizeof(msg),
			    "pool %s: the slot's resource could not be "
			    "prepared",
			    p != NULL ? p->name : "?");
		}
		if (svw_encode_error(d->request_id, err, msg, &rep) != SV_OK) {
			rep = NULL;
		}
	}
	done(arg, rep);
}

/* ls_effects carries out every effect the core has queued. */
static void
ls_effects(svd_leases *l)
{
	sv_lease_fx fx;

	while (sv_lease_pop_effect(l->core, &fx)) {
		ls_pool  pv;
		ls_pool *p = ls_pool_view(l, fx.lease.pool_id, &pv);
		switch (fx.kind) {
		case SV_LFX_REPLY_WAITER: {
			ls_deferred *d = ls_deferred_find(l, fx.waiter);
			if (d != NULL) {
				ls_answer(l, d, fx.err, &fx.lease);
			}
			break;
		}
		case SV_LFX_NOTICE_REVOKED:
			/* The REVOKED event that follows, on the holder's
			 * topic, is the notice. */
			break;
		case SV_LFX_EVENT:
			if (fx.event == SV_LEV_SESSION_OPENED
			    || fx.event == SV_LEV_SESSION_ENDED
			    || fx.event == SV_LEV_WAIT_TIMEOUT) {
				break;
			}
			if (fx.event == SV_LEV_GRANTED
			    || fx.event == SV_LEV_CLAIMED) {
				ls_journal_lease(l, &fx.lease, true);
			} else if (fx.event == SV_LEV_RELEASED
			    || fx.event == SV_LEV_REVOKED
			    || fx.event == SV_LEV_ABORTED) {
				ls_journal_lease(l, &fx.lease, false);
			}
			if (fx.event == SV_LEV_REVOKED) {
				char who[SVW_MAX_NAME + 48];
				ls_holder_name(
				    l, &fx.lease.holder, who, sizeof(who));
				svd_log("pool %s: lease %" PRIu64
				        " on slot %" PRIu32
				        " of %s revoked (%s)",
				    p != NULL ? p->name : "?", fx.lease.id,
				    fx.lease.slot, who,
				    sv_lease_reason_name(fx.reason));
			}
			ls_publish(l, fx.event, fx.reason, &fx.lease);
			break;
		case SV_LFX_TIMER_ARM:
			ls_timer_arm(l, &fx);
			break;
		case SV_LFX_TIMER_CANCEL:
			ls_timer_cancel(l, fx.timer, fx.key);
			break;
		case SV_LFX_RESOURCE_PREPARE:
			if (p != NULL
			    && ls_prepare(l, p, &fx.lease) != SV_OK) {
				l->aborted[l->naborted++ % LS_ABORTED_MAX]
				    = fx.lease.id;
				sv_lease_abort(
				    l->core, fx.lease.id, sv_loop_now_ms());
			}
			break;
		case SV_LFX_RESOURCE_RECLAIM:
			if (p != NULL) {
				ls_reclaim(l, p, fx.lease.slot);
			}
			break;
		}
	}
	if (sv_lease_effects_lost(l->core) && !l->lost_logged) {
		l->lost_logged = true;
		svd_log("leases: effects lost for lack of memory");
	}
}

/* ---- creation -------------------------------------------------------------
 */

/* ls_pool_add declares a pool in the core and records its resource in
 * the shell. */
static sv_err
ls_pool_add(svd_leases *l, const char *name, uint32_t slots, uint64_t ttl_ms,
    uint64_t grace_ms, const char *path, sv_lease_policy policy,
    bool directory, uint32_t *idp)
{
	uint32_t id;
	sv_err   err;
	ls_res  *r;

	err = sv_lease_pool_add(l->core, name, slots, ttl_ms, grace_ms, policy,
	    path != NULL && path[0] != '\0', &id);
	if (err != SV_OK) {
		return err;
	}
	r  = &l->res[id - 1];
	*r = (ls_res) {NULL, directory};
	if (path != NULL && path[0] != '\0'
	    && (r->path = strdup(path)) == NULL) {
		return SV_ENOMEM;
	}
	if (idp != NULL) {
		*idp = id;
	}
	return SV_OK;
}

sv_err
svd_leases_create(const svd_config *cfg, sv_loop *loop, uint64_t epoch,
    const svd_lease_host *host, svd_leases **lp, char *err, size_t errlen)
{
	svd_leases *l;
	sv_err      rv;

	if (epoch == 0 || epoch > SV_LEASE_MAX_EPOCH) {
		snprintf(err, errlen,
		    "epoch %" PRIu64 " is beyond the lease core's range "
		    "(1..%u): leases need a fresh state directory",
		    epoch, SV_LEASE_MAX_EPOCH);
		return SV_EINVAL;
	}
	if ((l = calloc(1, sizeof(*l))) == NULL
	    || (l->pipes = calloc(SVD_LEASE_MAX_PIPES, sizeof(ls_pipe)))
	        == NULL) {
		free(l);
		snprintf(err, errlen, "out of memory");
		return SV_ENOMEM;
	}
	l->loop = loop;
	l->h    = *host;
	if ((rv = sv_lease_core_create((uint32_t) epoch, &l->core)) != SV_OK) {
		snprintf(err, errlen, "cannot create the lease core: %s",
		    sv_strerror(rv));
		svd_leases_destroy(l);
		return rv;
	}
	for (size_t i = 0; i < cfg->npools; i++) {
		const svd_pool_config *pc = &cfg->pools[i];
		rv = ls_pool_add(l, pc->name, pc->slots, pc->ttl_ms,
		    pc->grace_ms, pc->path, pc->policy, pc->directory, NULL);
		if (rv == SV_ENOMEM) {
			snprintf(err, errlen, "out of memory");
			svd_leases_destroy(l);
			return rv;
		}
		if (rv != SV_OK) {
			svd_log("pool %s: not declared: %s", pc->name,
			    sv_strerror(rv));
		}
	}
	*lp = l;
	return SV_OK;
}

void
svd_leases_stop(svd_leases *l)
{
	if (l == NULL) {
		return;
	}
	for (size_t i = 0; i < SVD_LEASE_MAX_DEFERRED; i++) {
		ls_deferred *d = &l->deferred[i];
		if (d->used) {
			d->used = false;
			d->done(d->arg, NULL);
		}
	}
}

void
svd_leases_destroy(svd_leases *l)
{
	if (l == NULL) {
		return;
	}
	for (size_t b = 0; b < LS_TIMER_BUCKETS; b++) {
		while (l->timers[b] != NULL) {
			ls_timer *t  = l->timers[b];
			l->timers[b] = t->next;
			if (l->loop != NULL) {
				sv_loop_timer_stop(l->loop, &t->t);
			}
			free(t);
		}
	}
	for (size_t i = 0; i < SV_LEASE_MAX_POOLS; i++) {
		free(l->res[i].path);
	}
	sv_lease_core_destroy(l->core);
	free(l->pipes);
	free(l);
}

size_t
svd_leases_count(const svd_leases *l)
{
	return l != NULL ? sv_lease_count(l->core) : 0;
}

/* ---- restart --------------------------------------------------------------
 */

/* ls_journal_pool records runtime pool p (an O record). */
static void
ls_journal_pool(svd_leases *l, const ls_pool *p)
{
	if (l->h.journal == NULL) {
		return;
	}
	l->h.journal(l->h.arg,
	    &(sv_jrec) {.kind = SV_J_POOL,
	        .name         = p->name,
	        .count        = p->slots,
	        .ttl_ms       = p->ttl_ms,
	        .grace_ms     = p->grace_ms,
	        .policy       = (uint32_t) p->policy,
	        .directory    = p->directory,
	        .spec         = p->path});
}

/* ls_restore_pools declares again the pools a predecessor created at
 * runtime (a pool of the config of the same name wins) and records them
 * in the new journal. */
static void
ls_restore_pools(svd_leases *l, const sv_jstate *prev)
{
	for (size_t i = 0; i < prev->npools; i++) {
		const sv_jpool *jp = &prev->pools[i];
		uint32_t        id = 0;
		ls_pool         pv;
		sv_err          err;
		if (sv_lease_pool_find(l->core, jp->name) != 0) {
			svd_log("pool %s: the config declares it; the runtime "
			        "pool of that name is dropped",
			    jp->name);
			continue;
		}
		err = svd_pool_path_check(jp->path);
		if (err == SV_OK) {
			err = ls_pool_add(l, jp->name, jp->slots, jp->ttl_ms,
			    jp->grace_ms, jp->path,
			    (sv_lease_policy) jp->policy, jp->directory, &id);
		}
		if (err != SV_OK) {
			svd_log("pool %s: cannot declare it again: %s",
			    jp->name, sv_strerror(err));
			continue;
		}
		ls_journal_pool(l, ls_pool_view(l, id, &pv));
	}
}

void
svd_leases_restore(svd_leases *l, const sv_jstate *prev)
{
	sv_lease_record *recs;
	size_t           n = 0, skipped = 0;
	sv_lease_iter    it = SV_LEASE_ITER_INIT;
	sv_lease_info    li;

	ls_restore_pools(l, prev);
	if (prev->nleases == 0) {
		return;
	}
	if ((recs = calloc(prev->nleases, sizeof(*recs))) == NULL) {
		svd_log("leases: out of memory: %zu journaled leases lost",
		    prev->nleases);
		return;
	}
	for (size_t i = 0; i < prev->nleases; i++) {
		const sv_jlease *jl = &prev->leases[i];
		sv_lease_record *r  = &recs[n];
		snprintf(
		    r->pool, sizeof(r->pool), "%s", sv_jlease_pool(prev, jl));
		r->slot  = jl->slot;
		r->id    = jl->id;
		r->token = jl->token;
		if (jl->session != 0) {
			r->holder.kind    = SV_HOLDER_SESSION;
			r->holder.session = jl->session;
			r->session_uid    = jl->session_uid;
			r->session_ttl_ms = jl->session_ttl_ms;
		} else {
			uint32_t gid = l->h.group_id(
			    l->h.arg, sv_jlease_group(prev, jl));
			if (gid == 0) {
				skipped++;
				continue;
			}
			r->holder.kind = SV_HOLDER_WORKER;
			r->holder.worker
			    = (sv_wkey) {gid, jl->ordinal, jl->generation};
		}
		n++;
	}
	{
		size_t core_skipped = 0;
		(void) sv_lease_restore(l->core, recs, n,
		    SVD_LEASE_CLAIM_GRACE_MS, sv_loop_now_ms(), &core_skipped);
		skipped += core_skipped;
	}
	free(recs);
	/* The survivors go into the new journal (its mirror started empty
	 * of leases). */
	while (sv_lease_next(l->core, &it, NULL, &li, NULL)) {
		ls_journal_lease(l, &li, true);
	}
	svd_log("leases: %zu restored from the journal, waiting %u ms for "
	        "their holders to claim them; %zu skipped",
	    sv_lease_count(l->core), SVD_LEASE_CLAIM_GRACE_MS, skipped);
	/* RESTORED events are not worth publishing: nobody listens yet. */
	{
		sv_lease_fx fx;
		while (sv_lease_pop_effect(l->core, &fx)) {
			if (fx.kind == SV_LFX_TIMER_ARM) {
				ls_timer_arm(l, &fx);
			} else if (fx.kind == SV_LFX_TIMER_CANCEL) {
				ls_timer_cancel(l, fx.timer, fx.key);
			}
		}
	}
}

/* ---- requests -------------------------------------------------------------
 */

/* ls_fail records a message and returns err. */
static sv_err ls_fail(const svd_lease_caller *c, sv_err err, const char *fmt,
    ...) __attribute__((format(printf, 3, 4)));

static sv_err
ls_fail(const svd_lease_caller *c, sv_err err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->emsg, c->emsglen, fmt, ap);
	va_end(ap);
	return err;
}

/* ls_holder resolves who asks: the session named (owned by the caller's
 * uid) or the calling worker. Never from message content alone. */
static sv_err
ls_holder(svd_leases *l, const svd_lease_caller *c, uint64_t session,
    sv_lease_holder *h)
{
	if (session != 0) {
		sv_lease_session_info si;
		if (!sv_lease_session_get(l->core, session, &si)) {
			return ls_fail(c, SV_ENOTFOUND,
			    "no lease session %" PRIu64 " (it expired or was "
			    "closed)",
			    session);
		}
		if ((uint64_t) si.uid != c->uid) {
			return ls_fail(c, SV_EPERM,
			    "lease session %" PRIu64
			    " belongs to uid %" PRIu32,
			    session, si.uid);
		}
		*h = (sv_lease_holder) {SV_HOLDER_SESSION, {0, 0, 0}, session};
		return SV_OK;
	}
	if (!c->is_worker) {
		return ls_fail(c, SV_ENOTWORKER,
		    "only a worker holds leases itself; other callers open a "
		    "session (OpenSession) and name it");
	}
	*h = (sv_lease_holder) {SV_HOLDER_WORKER, c->key, 0};
	return SV_OK;
}

/* ls_pool_named finds a pool by name (its view in *buf, *pp = buf) or
 * fails with NOT_FOUND. */
static sv_err
ls_pool_named(svd_leases *l, const svd_lease_caller *c, const char *name,
    ls_pool *buf, ls_pool **pp)
{
	uint32_t id;

	*pp = NULL;
	if (name == NULL || name[0] == '\0') {
		(void) ls_fail(c, SV_EBADREQ, "a pool name is required");
		return SV_EBADREQ;
	}
	if (strlen(name) > SV_LEASE_NAME_MAX) {
		(void) ls_fail(c, SV_ETOOLARGE,
		    "pool name longer than %u bytes", SV_LEASE_NAME_MAX);
		return SV_ETOOLARGE;
	}
	if ((id = sv_lease_pool_find(l->core, name)) == 0
	    || (*pp = ls_pool_view(l, id, buf)) == NULL) {
		(void) ls_fail(c, SV_ENOTFOUND, "no pool named \"%s\"", name);
		return SV_ENOTFOUND;
	}
	return SV_OK;
}

/* ls_core_err turns a core error into a reply message. */
static sv_err
ls_core_err(
    const svd_lease_caller *c, sv_err err, const ls_pool *p, const char *what)
{
	const char *pn = p != NULL ? p->name : "?";

	switch (err) {
	case SV_OK:
		return SV_OK;
	case SV_EEXHAUSTED:
		return ls_fail(c, err, "pool %s: no free slot (%s)", pn, what);
	case SV_EBUSY:
		return ls_fail(
		    c, err, "pool %s: the slot is taken (%s)", pn, what);
	case SV_ECONFLICT:
		return ls_fail(c, err,
		    "pool %s: conflict (%s): the holder holds another slot, "
		    "or a restored lease to claim, or another holder or token "
		    "owns the slot",
		    pn, what);
	case SV_EPERM:
		return ls_fail(c, err,
		    "pool %s: only the lease's holder may %s", pn, what);
	case SV_ENOTFOUND:
		return ls_fail(
		    c, err, "pool %s: no such lease (%s)", pn, what);
	case SV_EINVAL:
		return ls_fail(
		    c, SV_EBADREQ, "pool %s: invalid request (%s)", pn, what);
	default:
		return ls_fail(
		    c, err, "pool %s: %s: %s", pn, what, sv_strerror(err));
	}
}

/* ls_reply_lease puts li as the Lease reply in rep (memory in arena). */
static sv_err
ls_reply_lease(svd_leases *l, const svd_lease_caller *c,
    const sv_lease_info *li, svw_env *rep, void **arena)
{
	ls_lease_msg *lm = malloc(sizeof(*lm));

	if (lm == NULL) {
		return ls_fail(c, SV_ENOMEM, "out of memory");
	}
	arena[0] = lm;
	ls_lease_fill(l, li, lm);
	rep->body_case = SUPERVISE__V1__ENVELOPE__BODY_LEASE;
	rep->lease     = &lm->m;
	return SV_OK;
}

/* ls_prepared checks that the grant of li was not aborted (its resource
 * could not be made). */
static sv_err
ls_prepared(svd_leases *l, const svd_lease_caller *c, const ls_pool *p,
    const sv_lease_info *li)
{
	if (ls_was_aborted(l, li->id)) {
		return ls_fail(c, SV_EINTERNAL,
		    "pool %s: the resource of slot %" PRIu32
		    " could not be prepared (see the daemon's log)",
		    p->name, li->slot);
	}
	return SV_OK;
}

static sv_err
ls_acquire(svd_leases *l, const svw_env *req, const svd_lease_caller *c,
    svd_lease_defer *d, svw_env *rep, void **arena)
{
	const Supervise__V1__AcquireLease *a = req->acquire_lease;
	ls_pool                            pv, *p = NULL;
	sv_lease_holder                    h;
	sv_lease_req                       lr;
	sv_lease_info                      li;
	uint64_t                           waiter = 0, now = sv_loop_now_ms();
	ls_deferred                       *slot = NULL;
	sv_err                             err;

	if ((err = ls_pool_named(l, c, a->pool, &pv, &p)) != SV_OK
	    || (err = ls_holder(l, c, a->session, &h)) != SV_OK) {
		return err;
	}
	if (a->has_slot && a->slot >= p->slots) {
		return ls_fail(c, SV_EBADREQ,
		    "pool %s has slots 0..%" PRIu32 ", not %" PRIu32, p->name,
		    p->slots - 1, a->slot);
	}
	if (a->wait_ms > SV_LEASE_MAX_MS) {
		return ls_fail(c, SV_ETOOLARGE, "wait_ms over one day");
	}
	lr = (sv_lease_req) {p->id, a->has_slot, a->slot,
	    a->wait_ms > 0 && d != NULL, now + a->wait_ms};
	if (lr.wait) {
		for (size_t i = 0; i < SVD_LEASE_MAX_DEFERRED; i++) {
			if (!l->deferred[i].used) {
				slot = &l->deferred[i];
				break;
			}
		}
		if (slot == NULL) {
			/* No context to park it in: answer at once. */
			lr.wait = false;
		}
	}
	err = sv_lease_acquire(l->core, &h, &lr, now, &li, &waiter);
	if (err == SV_OK && waiter != 0 && (slot == NULL || d == NULL)) {
		/* Cannot happen (a wait needs both); never leave it queued. */
		sv_lease_cancel_wait(l->core, waiter, now);
		ls_effects(l);
		return ls_fail(
		    c, SV_EINTERNAL, "cannot park a waiting acquire");
	}
	if (err == SV_OK && waiter != 0) {
		ls_deferred *dup = ls_deferred_find(l, waiter);
		if (dup != NULL) {
			/* Asked again while waiting (a resend): the old
			 * request is answered by nothing; this one waits. */
			dup->done(dup->arg, NULL);
			dup->used = false;
		}
		*slot = (ls_deferred) {true, waiter, req->request_id, d->done,
		    d->arg, d->pipe, p->id, a->wait_ms};
		d->taken = true;
		ls_effects(l);
		return SV_OK;
	}
	ls_effects(l);
	if ((err == SV_EBUSY || err == SV_EEXHAUSTED) && a->wait_ms > 0
	    && d != NULL && slot == NULL) {
		return ls_fail(c, SV_EBUSY,
		    "%u acquires already wait; try again",
		    SVD_LEASE_MAX_DEFERRED);
	}
	if (err != SV_OK) {
		return ls_core_err(c, err, p, "acquire");
	}
	if ((err = ls_prepared(l, c, p, &li)) != SV_OK) {
		return err;
	}
	return ls_reply_lease(l, c, &li, rep, arena);
}

/* ls_lease_pool finds the pool of lease id by walking the leases (for
 * error messages): its view in *buf and buf, or NULL. */
static const ls_pool *
ls_lease_pool(svd_leases *l, uint64_t id, ls_pool *buf)
{
	sv_lease_iter it = SV_LEASE_ITER_INIT;
	sv_lease_info li;

	while (sv_lease_next(l->core, &it, NULL, &li, NULL)) {
		if (li.id == id) {
			return ls_pool_view(l, li.pool_id, buf);
		}
	}
	return NULL;
}

static sv_err
ls_renew(svd_leases *l, const svw_env *req, const svd_lease_caller *c,
    svw_env *rep, void **arena)
{
	const Supervise__V1__RenewLease *r = req->renew_lease;
	sv_lease_holder                  h;
	sv_lease_info                    li;
	ls_pool                          pv;
	sv_err                           err;

	if ((err = ls_holder(l, c, r->session, &h)) != SV_OK) {
		return err;
	}
	err = sv_lease_renew(l->core, &h, r->id, sv_loop_now_ms(), &li);
	ls_effects(l);
	if (err != SV_OK) {
		return ls_core_err(
		    c, err, ls_lease_pool(l, r->id, &pv), "renew");
	}
	return ls_reply_lease(l, c, &li, rep, arena);
}

static sv_err
ls_release(svd_leases *l, const svw_env *req, const svd_lease_caller *c,
    svw_env *rep, void **arena)
{
	const Supervise__V1__ReleaseLease *r = req->release_lease;
	sv_lease_holder                    h;
	ls_pool                            pv;
	const ls_pool                     *p = ls_lease_pool(l, r->id, &pv);
	Supervise__V1__Ack                *ack;
	sv_err                             err;

	if ((err = ls_holder(l, c, r->session, &h)) != SV_OK) {
		return err;
	}
	err = sv_lease_release(l->core, &h, r->id, sv_loop_now_ms());
	ls_effects(l);
	if (err != SV_OK) {
		return ls_core_err(c, err, p, "release");
	}
	if ((ack = malloc(sizeof(*ack))) == NULL) {
		return ls_fail(c, SV_ENOMEM, "out of memory");
	}
	supervise__v1__ack__init(ack);
	arena[0]       = ack;
	rep->body_case = SUPERVISE__V1__ENVELOPE__BODY_ACK;
	rep->ack       = ack;
	return SV_OK;
}

/* A LeaseList reply and its storage. */
typedef struct ls_list_msg {
	Supervise__V1__LeaseList list;
	Supervise__V1__Lease   **ptrs;
	ls_lease_msg            *items;
} ls_list_msg;

static sv_err
ls_list(svd_leases *l, const svw_env *req, const svd_lease_caller *c,
    svw_env *rep, void **arena)
{
	const Supervise__V1__ListLeases *r = req->list_leases;
	sv_lease_holder                  h;
	const sv_lease_holder           *filter = NULL;
	uint32_t                         pool   = 0;
	sv_lease_iter                    it     = SV_LEASE_ITER_INIT;
	sv_lease_info                    li;
	size_t                           n = 0, cap;
	ls_list_msg                     *m;
	sv_err                           err;

	if (r->pool[0] != '\0') {
		ls_pool pv, *p = NULL;
		if ((err = ls_pool_named(l, c, r->pool, &pv, &p)) != SV_OK) {
			return err;
		}
		pool = p->id;
	}
	if (!c->admin || r->session != 0) {
		if ((err = ls_holder(l, c, r->session, &h)) != SV_OK) {
			return err;
		}
		filter = &h;
	}
	cap = sv_lease_count(l->core);
	if ((m = calloc(1, sizeof(*m))) == NULL) {
		return ls_fail(c, SV_ENOMEM, "out of memory");
	}
	arena[0] = m;
	m->ptrs  = calloc(cap > 0 ? cap : 1, sizeof(Supervise__V1__Lease *));
	m->items = calloc(cap > 0 ? cap : 1, sizeof(*m->items));
	arena[1] = m->ptrs;
	arena[2] = m->items;
	if (m->ptrs == NULL || m->items == NULL) {
		return ls_fail(c, SV_ENOMEM, "out of memory");
	}
	supervise__v1__lease_list__init(&m->list);
	while (n < cap && sv_lease_next(l->core, &it, filter, &li, NULL)) {
		if (pool != 0 && li.pool_id != pool) {
			continue;
		}
		ls_lease_fill(l, &li, &m->items[n]);
		m->ptrs[n] = &m->items[n].m;
		n++;
	}
	m->list.n_leases = n;
	m->list.leases   = m->ptrs;
	rep->body_case   = SUPERVISE__V1__ENVELOPE__BODY_LEASE_LIST;
	rep->lease_list  = &m->list;
	return SV_OK;
}

static sv_err
ls_claim(svd_leases *l, const svw_env *req, const svd_lease_caller *c,
    svw_env *rep, void **arena)
{
	const Supervise__V1__ClaimLease *r = req->claim_lease;
	ls_pool                          pv, *p = NULL;
	sv_lease_holder                  h;
	sv_lease_info                    li;
	sv_err                           err;

	if ((err = ls_pool_named(l, c, r->pool, &pv, &p)) != SV_OK
	    || (err = ls_holder(l, c, r->session, &h)) != SV_OK) {
		return err;
	}
	err = sv_lease_claim(
	    l->core, &h, p->id, r->slot, r->token, sv_loop_now_ms(), &li);
	ls_effects(l);
	if (err == SV_ENOTFOUND) {
		return ls_fail(c, err,
		    "pool %s: slot %" PRIu32
		    " holds no lease to claim (it ended; acquire a new one)",
		    p->name, r->slot);
	}
	if (err != SV_OK) {
		return ls_core_err(c, err, p, "claim");
	}
	return ls_reply_lease(l, c, &li, rep, arena);
}

/* A Session reply. */
static sv_err
ls_reply_session(const svd_lease_caller *c, uint64_t id, uint64_t ttl_ms,
    svw_env *rep, void **arena)
{
	Supervise__V1__Session *s = malloc(sizeof(*s));

	if (s == NULL) {
		return ls_fail(c, SV_ENOMEM, "out of memory");
	}
	supervise__v1__session__init(s);
	arena[0]       = s;
	s->id          = id;
	s->ttl_ms      = ttl_ms;
	rep->body_case = SUPERVISE__V1__ENVELOPE__BODY_SESSION;
	rep->session   = s;
	return SV_OK;
}

static sv_err
ls_session_req(svd_leases *l, const svw_env *req, const svd_lease_caller *c,
    svw_env *rep, void **arena)
{
	uint64_t              now = sv_loop_now_ms(), id = 0;
	sv_lease_session_info si = {0};
	sv_err                err;

	if (c->uid > UINT32_MAX) {
		return ls_fail(c, SV_EPERM, "the caller's uid is not known");
	}
	switch (req->body_case) {
	case SUPERVISE__V1__ENVELOPE__BODY_OPEN_SESSION:
		err = sv_lease_session_open(l->core, (uint32_t) c->uid,
		    req->open_session->ttl_ms, now, &id);
		ls_effects(l);
		if (err == SV_EINVAL) {
			return ls_fail(c, SV_EBADREQ, "ttl_ms must be > 0");
		}
		if (err == SV_ETOOLARGE) {
			return ls_fail(c, err, "ttl_ms over one day");
		}
		if (err != SV_OK) {
			return ls_fail(c, err, "cannot open a session: %s",
			    sv_strerror(err));
		}
		return ls_reply_session(
		    c, id, req->open_session->ttl_ms, rep, arena);
	case SUPERVISE__V1__ENVELOPE__BODY_RENEW_SESSION:
		id  = req->renew_session->id;
		err = sv_lease_session_renew(
		    l->core, id, (uint32_t) c->uid, now);
		ls_effects(l);
		if (err == SV_ENOTFOUND) {
			return ls_fail(
			    c, err, "no lease session %" PRIu64, id);
		}
		if (err == SV_EPERM) {
			return ls_fail(c, err,
			    "lease session %" PRIu64 " is another uid's", id);
		}
		(void) sv_lease_session_get(l->core, id, &si);
		return ls_reply_session(c, id, si.ttl_ms, rep, arena);
	default: /* CLOSE_SESSION */
		id  = req->close_session->id;
		err = sv_lease_session_close(
		    l->core, id, (uint32_t) c->uid, now);
		ls_effects(l);
		if (err == SV_EPERM) {
			return ls_fail(c, err,
			    "lease session %" PRIu64 " is another uid's", id);
		}
		return ls_reply_session(c, id, 0, rep, arena);
	}
}

/* ls_pool_info fills pi for p (strings are p's or static). */
static void
ls_pool_info(svd_leases *l, const ls_pool *p, Supervise__V1__PoolInfo *pi)
{
	supervise__v1__pool_info__init(pi);
	pi->name       = (char *) p->name;
	pi->slots      = p->slots;
	pi->held       = sv_lease_pool_held(l->core, p->id);
	pi->waiting    = sv_lease_pool_waiting(l->core, p->id);
	pi->ttl_ms     = p->ttl_ms;
	pi->grace_ms   = p->grace_ms;
	pi->path       = p->path != NULL ? (char *) p->path : (char *) "";
	pi->on_release = (char *) sv_lease_policy_name(p->policy);
	pi->kind       = p->directory ? (char *) "directory" : (char *) "file";
}

/* svd_lease_policy_parse maps "keep", "truncate", "remove". */
static bool
ls_policy_parse(const char *s, sv_lease_policy *p)
{
	if (s == NULL || s[0] == '\0' || strcmp(s, "keep") == 0) {
		*p = SV_LEASE_KEEP;
	} else if (strcmp(s, "truncate") == 0) {
		*p = SV_LEASE_TRUNCATE;
	} else if (strcmp(s, "remove") == 0) {
		*p = SV_LEASE_REMOVE;
	} else {
		return false;
	}
	return true;
}

static sv_err
ls_create_pool(svd_leases *l, const svw_env *req, const svd_lease_caller *c,
    svw_env *rep, void **arena)
{
	const Supervise__V1__CreatePool *r = req->create_pool;
	sv_lease_policy                  pol;
	Supervise__V1__PoolInfo         *pi;
	uint32_t                         id;
	ls_pool                          pv;
	bool                             dir;
	sv_err                           err;

	if (!c->admin) {
		return ls_fail(
		    c, SV_EPERM, "creating a pool is administration");
	}
	if (!ls_policy_parse(r->on_release, &pol)) {
		return ls_fail(c, SV_EBADREQ,
		    "on_release must be \"keep\", \"truncate\" or \"remove\"");
	}
	if (r->kind[0] != '\0' && strcmp(r->kind, "file") != 0
	    && strcmp(r->kind, "directory") != 0) {
		return ls_fail(
		    c, SV_EBADREQ, "kind must be \"file\" or \"directory\"");
	}
	dir = strcmp(r->kind, "directory") == 0;
	if ((err = svd_pool_path_check(r->path)) != SV_OK) {
		return ls_fail(c, err,
		    "path must be empty or an absolute path of at most %u "
		    "bytes with {slot} in its last component and no \"..\"",
		    SVD_POOL_PATH_MAX);
	}
	err = ls_pool_add(l, r->name, r->slots, r->ttl_ms, r->grace_ms,
	    r->path, pol, dir, &id);
	switch (err) {
	case SV_OK:
		break;
	case SV_ECONFLICT:
		return ls_fail(c, err, "a pool named \"%s\" exists", r->name);
	case SV_EBADREQ:
		return ls_fail(c, err,
		    "pool name must be 1..64 characters of [A-Za-z0-9_.-]");
	case SV_ETOOLARGE:
		return ls_fail(c, err,
		    "name over 64 bytes, slots over %u, or ttl_ms/grace_ms "
		    "over one day",
		    SV_LEASE_MAX_SLOTS);
	case SV_EINVAL:
		return ls_fail(c, SV_EBADREQ, "slots must be > 0");
	default:
		return ls_fail(
		    c, err, "cannot create pool: %s", sv_strerror(err));
	}
	svd_log("pool %s: created (%" PRIu32 " slots)", r->name, r->slots);
	ls_journal_pool(l, ls_pool_view(l, id, &pv));
	if ((pi = malloc(sizeof(*pi))) == NULL) {
		return ls_fail(c, SV_ENOMEM, "out of memory");
	}
	arena[0] = pi;
	ls_pool_info(l, ls_pool_view(l, id, &pv), pi);
	rep->body_case = SUPERVISE__V1__ENVELOPE__BODY_POOL_INFO;
	rep->pool_info = pi;
	return SV_OK;
}

static sv_err
ls_list_pools(
    svd_leases *l, const svd_lease_caller *c, svw_env *rep, void **arena)
{
	Supervise__V1__PoolList  *pl;
	Supervise__V1__PoolInfo  *items;
	Supervise__V1__PoolInfo **ptrs;
	size_t                    n = 0;

	pl    = malloc(sizeof(*pl));
	items = calloc(SV_LEASE_MAX_POOLS, sizeof(*items));
	ptrs  = calloc(SV_LEASE_MAX_POOLS, sizeof(Supervise__V1__PoolInfo *));
	arena[0] = pl;
	arena[1] = items;
	arena[2] = ptrs;
	if (pl == NULL || items == NULL || ptrs == NULL) {
		return ls_fail(c, SV_ENOMEM, "out of memory");
	}
	supervise__v1__pool_list__init(pl);
	for (uint32_t id = 1; id <= sv_lease_pool_count(l->core); id++) {
		ls_pool pv;
		if (ls_pool_view(l, id, &pv) != NULL) {
			ls_pool_info(l, &pv, &items[n]);
			ptrs[n] = &items[n];
			n++;
		}
	}
	pl->n_pools    = n;
	pl->pools      = ptrs;
	rep->body_case = SUPERVISE__V1__ENVELOPE__BODY_POOL_LIST;
	rep->pool_list = pl;
	return SV_OK;
}

bool
svd_leases_handle(svd_leases *l, const svw_env *req, const svd_lease_caller *c,
    svd_lease_defer *d, svw_env *rep, void **arena, sv_err *errp)
{
	switch (req->body_case) {
	case SUPERVISE__V1__ENVELOPE__BODY_ACQUIRE_LEASE:
		*errp = ls_acquire(l, req, c, d, rep, arena);
		return true;
	case SUPERVISE__V1__ENVELOPE__BODY_RENEW_LEASE:
		*errp = ls_renew(l, req, c, rep, arena);
		return true;
	case SUPERVISE__V1__ENVELOPE__BODY_RELEASE_LEASE:
		*errp = ls_release(l, req, c, rep, arena);
		return true;
	case SUPERVISE__V1__ENVELOPE__BODY_LIST_LEASES:
		*errp = ls_list(l, req, c, rep, arena);
		return true;
	case SUPERVISE__V1__ENVELOPE__BODY_CLAIM_LEASE:
		*errp = ls_claim(l, req, c, rep, arena);
		return true;
	case SUPERVISE__V1__ENVELOPE__BODY_CREATE_POOL:
		*errp = ls_create_pool(l, req, c, rep, arena);
		return true;
	case SUPERVISE__V1__ENVELOPE__BODY_LIST_POOLS:
		*errp = ls_list_pools(l, c, rep, arena);
		return true;
	case SUPERVISE__V1__ENVELOPE__BODY_OPEN_SESSION:
	case SUPERVISE__V1__ENVELOPE__BODY_RENEW_SESSION:
	case SUPERVISE__V1__ENVELOPE__BODY_CLOSE_SESSION:
		*errp = ls_session_req(l, req, c, rep, arena);
		return true;
	default:
		return false;
	}
}

/* ---- hooks ----------------------------------------------------------------
 */

void
svd_leases_worker_gone(svd_leases *l, sv_wkey key)
{
	if (l == NULL) {
		return;
	}
	sv_lease_holder_gone(l->core, key, sv_loop_now_ms());
	ls_effects(l);
}

/* ls_pipe_count counts the tracked connections of worker key. */
static size_t
ls_pipe_count(svd_leases *l, sv_wkey key)
{
	size_t n = 0;

	for (size_t i = 0; i < SVD_LEASE_MAX_PIPES; i++) {
		const ls_pipe *p = &l->pipes[i];
		n += p->pipe != 0 && p->key.group_id == key.group_id
		    && p->key.ordinal == key.ordinal
		    && p->key.generation == key.generation;
	}
	return n;
}

void
svd_leases_pipe(svd_leases *l, uint32_t pipe, int64_t pid, bool added)
{
	uint64_t now = sv_loop_now_ms();

	if (l == NULL || pipe == 0) {
		return;
	}
	if (added) {
		sv_wkey key;
		if (pid <= 0 || !l->h.find_worker(l->h.arg, pid, &key)) {
			return;
		}
		for (size_t i = 0; i < SVD_LEASE_MAX_PIPES; i++) {
			if (l->pipes[i].pipe == 0) {
				l->pipes[i] = (ls_pipe) {pipe, key};
				if (ls_pipe_count(l, key) == 1) {
					sv_lease_holder h
					    = {SV_HOLDER_WORKER, key, 0};
					sv_lease_holder_reconnected(
					    l->core, &h, now);
					ls_effects(l);
				}
				return;
			}
		}
		return;
	}
	/* Waiting acquires of this connection: nobody to answer. */
	for (size_t i = 0; i < SVD_LEASE_MAX_DEFERRED; i++) {
		ls_deferred *d = &l->deferred[i];
		if (d->used && d->pipe == pipe) {
			d->used = false;
			sv_lease_cancel_wait(l->core, d->waiter, now);
			d->done(d->arg, NULL);
		}
	}
	for (size_t i = 0; i < SVD_LEASE_MAX_PIPES; i++) {
		if (l->pipes[i].pipe == pipe) {
			sv_wkey key      = l->pipes[i].key;
			l->pipes[i].pipe = 0;
			/* A worker that died closed its connections on its
			 * way out: its reap (holder gone) follows at once. */
			if (ls_pipe_count(l, key) == 0
			    && (l->h.worker_exited == NULL
			        || !l->h.worker_exited(l->h.arg, key))) {
				sv_lease_holder h = {SV_HOLDER_WORKER, key, 0};
				sv_lease_holder_disconnected(l->core, &h, now);
			}
			break;
		}
	}
	ls_effects(l);
}
