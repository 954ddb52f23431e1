/*
 * supervisor.c — supervised's groups, slots and request handlers (see
 * supervisor.h for the threading model).
 *
 * A group has one slot per possible ordinal (max_count). A slot is EMPTY
 * (ordinal free), RUNNING, STOPPING (signalled, not yet reaped) or BACKOFF
 * (exited, restart timer armed). Transitions:
 *
 *   EMPTY    --reconcile: acquire lowest free ordinal, spawn--> RUNNING
 *   RUNNING  --stop (scale-down, group stop, restart, shutdown)--> STOPPING
 *   RUNNING, STOPPING --pidfd readable: reap, sv_restart_decide-->
 *            EMPTY (released) | RUNNING (renewed, spawned) | BACKOFF
 *   STOPPING --stop timeout--> SIGKILL to the process group (still STOPPING)
 *   BACKOFF  --timer--> RUNNING; --stop--> EMPTY (released)
 *
 * Divisions: logging; environment; slots; groups; the loop; requests.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "core/ordinal.h"
#include "core/restart.h"
#include "shell/loop.h"
#include "shell/spawn.h"
#include "supervisor.h"
#include "wire/wire.h"

extern char **environ;

/* Spawns per loop iteration, so queries get the lock in between. */
#define SUP_SPAWN_BATCH 32
/* Minimum delay before retrying a spawn that failed (bad argv, ...). */
#define SUP_SPAWN_RETRY_MS 1000
/* How far up the process tree whoami looks for a worker. */
#define SUP_MAX_ANCESTRY 32

typedef enum slot_state {
	SLOT_EMPTY = 0,
	SLOT_RUNNING,
	SLOT_STOPPING,
	SLOT_BACKOFF,
} slot_state;

typedef struct svd_group svd_group;

typedef struct svd_slot {
	svd_group       *g;
	uint32_t         ordinal;
	slot_state       state;
	sv_ordtoken      tok;
	pid_t            pid;
	int              pidfd;
	sv_io            io;
	sv_timer         timer;
	uint64_t         started_ms;
	uint64_t         restarts;
	int32_t          last_exit_code;
	int32_t          last_signal;
	bool             restart_requested;
	sv_restart_state rs;
} svd_slot;

struct svd_group {
	svd_sup                *s;
	const svd_group_config *cfg;
	sv_ordinals             ords;
	svd_slot               *slots; /* [cfg->max_count] */
	uint32_t               *excess; /* [cfg->max_count], scratch */
	uint32_t                target;
	bool                    dirty; /* reconcile needed */
	const char            **envbase;
	size_t                  nenvbase;
};

struct svd_sup {
	pthread_mutex_t   mtx;
	const svd_config *cfg;
	sv_loop          *loop;
	svd_group        *groups;
	size_t            ngroups;
	char              id[33];
	char              url[600];
	int               wakefd;
	sv_io             wake_io;
	sv_io             sig_io;
	bool              shutting_down;
	size_t            live; /* spawned, not yet reaped */
};

/* ---- logging --------------------------------------------------------------
 */

void
svd_log(const char *fmt, ...)
{
	char            line[2048];
	struct timespec ts;
	struct tm       tm;
	va_list         ap;
	int             n;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = snprintf(line, sizeof(line),
	    "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ supervised[%d]: ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000, (int) getpid());
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - (size_t) n - 1, fmt, ap);
	va_end(ap);
	if (n > (int) sizeof(line) - 2) {
		n = (int) sizeof(line) - 2;
	}
	line[n++] = '\n';
	/* One write per line, so lines from workers do not interleave. */
	(void) !write(STDERR_FILENO, line, (size_t) n);
}

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

	if (strncmp(e, "SUPERVISE_", 10) == 0) {
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
static sv_err
env_build_base(svd_group *g)
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

/* ---- slots ----------------------------------------------------------------
 */

static void slot_exit_cb(sv_loop *loop, sv_io *io, uint32_t events);
static void slot_timer_cb(sv_loop *loop, sv_timer *t);

/* slot_name formats "group[ordinal]" for logs. */
static const char *
slot_name(const svd_slot *sl, char *buf, size_t len)
{
	snprintf(buf, len, "%s[%" PRIu32 "]", sl->g->cfg->name, sl->ordinal);
	return buf;
}

/* slot_wanted tells whether the slot's ordinal belongs to the running set. */
static bool
slot_wanted(const svd_slot *sl)
{
	return !sl->g->s->shutting_down && sl->ordinal < sl->g->target;
}

/* slot_release frees the ordinal and empties the slot. */
static void
slot_release(svd_slot *sl)
{
	sv_loop_timer_stop(sl->g->s->loop, &sl->timer);
	sv_ordinals_release(&sl->g->ords, sl->tok);
	sl->state = SLOT_EMPTY;
	sl->pid   = 0;
}

/* slot_backoff arms the restart timer; the token is already renewed. */
static void
slot_backoff(svd_slot *sl, uint64_t delay_ms)
{
	char nm[96];

	sl->state = SLOT_BACKOFF;
	sl->pid   = 0;
	if (sv_loop_timer_start(sl->g->s->loop, &sl->timer, delay_ms)
	    != SV_OK) {
		svd_log("%s: cannot arm restart timer: out of memory",
		    slot_name(sl, nm, sizeof(nm)));
		slot_release(sl);
		sl->g->dirty = true; /* reconcile will try again */
		return;
	}
	svd_log("%s: restarting in %" PRIu64 " ms as generation %" PRIu64,
	    slot_name(sl, nm, sizeof(nm)), delay_ms, sl->tok.generation);
}

/* slot_spawn_failed handles a spawn error like an immediate exit, but never
 * retries sooner than SUP_SPAWN_RETRY_MS. */
static void
slot_spawn_failed(svd_slot *sl)
{
	sv_exit_facts    f = {0, slot_wanted(sl), false};
	sv_exit_decision d
	    = sv_restart_decide(&sl->g->cfg->policy, &sl->rs, &f);

	if (d.action == SV_EXIT_RELEASE) {
		slot_release(sl);
		return;
	}
	sv_ordinals_renew(&sl->g->ords, &sl->tok);
	sl->restarts++;
	slot_backoff(sl,
	    d.delay_ms > SUP_SPAWN_RETRY_MS ? d.delay_ms : SUP_SPAWN_RETRY_MS);
}

/* slot_spawn starts the process for the slot's current token. */
static void
slot_spawn(svd_slot *sl)
{
	svd_group   *g = sl->g;
	svd_sup     *s = g->s;
	char         v_url[700], v_group[96], v_ord[48], v_gen[64], v_id[64];
	char         v_purpose[SVD_MAX_PURPOSE + 32], nm[96];
	const char **envp;
	size_t       k = g->nenvbase;
	sv_spawn_req req;
	pid_t        pid;
	int          pidfd, eno;
	sv_err       err;

	envp = malloc((k + 7) * sizeof(*envp));
	if (envp == NULL) {
		svd_log("%s: cannot spawn: out of memory",
		    slot_name(sl, nm, sizeof(nm)));
		slot_spawn_failed(sl);
		return;
	}
	memcpy(envp, g->envbase, k * sizeof(*envp));
	snprintf(v_url, sizeof(v_url), "SUPERVISE_URL=%s", s->url);
	snprintf(v_group, sizeof(v_group), "SUPERVISE_GROUP=%s", g->cfg->name);
	snprintf(
	    v_ord, sizeof(v_ord), "SUPERVISE_ORDINAL=%" PRIu32, sl->ordinal);
	snprintf(v_gen, sizeof(v_gen), "SUPERVISE_GENERATION=%" PRIu64,
	    sl->tok.generation);
	snprintf(v_purpose, sizeof(v_purpose), "SUPERVISE_PURPOSE=%s",
	    g->cfg->purpose);
	snprintf(v_id, sizeof(v_id), "SUPERVISE_SUPERVISOR_ID=%s", s->id);
	envp[k++] = v_url;
	envp[k++] = v_group;
	envp[k++] = v_ord;
	envp[k++] = v_gen;
	envp[k++] = v_purpose;
	envp[k++] = v_id;
	envp[k]   = NULL;

	req.path = g->cfg->argv[0];
	req.argv = g->cfg->argv;
	req.envp = (char *const *) envp;
	req.cwd  = g->cfg->cwd;
	err      = sv_spawn(&req, &pid, &pidfd, &eno);
	free(envp);
	if (err != SV_OK) {
		svd_log("%s: cannot spawn %s: %s",
		    slot_name(sl, nm, sizeof(nm)), g->cfg->argv[0],
		    strerror(eno));
		slot_spawn_failed(sl);
		return;
	}
	sl->pid    = pid;
	sl->pidfd  = pidfd;
	sl->io.fd  = pidfd;
	sl->io.cb  = slot_exit_cb;
	sl->io.arg = sl;
	if (sv_loop_add_io(s->loop, &sl->io, EPOLLIN) != SV_OK) {
		sv_exit_info xi;
		svd_log("%s: cannot watch pid %d; killing it",
		    slot_name(sl, nm, sizeof(nm)), (int) pid);
		sv_signal(pidfd, SIGKILL);
		while (sv_reap(pidfd, &xi) == SV_EBUSY) {
			/* SIGKILL cannot be caught: this ends promptly. */
			struct timespec ts = {0, 1000000};
			nanosleep(&ts, NULL);
		}
		close(pidfd);
		slot_spawn_failed(sl);
		return;
	}
	sl->state      = SLOT_RUNNING;
	sl->started_ms = sv_loop_now_ms();
	s->live++;
	svd_log("%s: started pid %d generation %" PRIu64,
	    slot_name(sl, nm, sizeof(nm)), (int) pid, sl->tok.generation);
}

/* slot_after_exit decides what follows the exit of the slot's process. */
static void
slot_after_exit(svd_slot *sl, uint64_t uptime_ms)
{
	/* An exit we caused (restart, or a scale-down undone before the
	 * worker was gone) is not the worker's failure. */
	bool ours = sl->restart_requested || sl->state == SLOT_STOPPING;
	sv_exit_facts    f = {uptime_ms, slot_wanted(sl), ours};
	sv_exit_decision d
	    = sv_restart_decide(&sl->g->cfg->policy, &sl->rs, &f);

	sl->restart_requested = false;
	if (d.action == SV_EXIT_RELEASE) {
		slot_release(sl);
		return;
	}
	sv_ordinals_renew(&sl->g->ords, &sl->tok);
	sl->restarts++;
	if (d.delay_ms == 0) {
		slot_spawn(sl);
	} else {
		slot_backoff(sl, d.delay_ms);
	}
}

/* slot_exit_cb reaps the slot's process when its pidfd becomes readable. */
static void
slot_exit_cb(sv_loop *loop, sv_io *io, uint32_t events)
{
	svd_slot    *sl = io->arg;
	svd_sup     *s  = sl->g->s;
	sv_exit_info xi;
	char         nm[96];
	uint64_t     uptime;

	(void) events;
	switch (sv_reap(sl->pidfd, &xi)) {
	case SV_OK:
		break;
	case SV_EBUSY:
		return; /* not exited yet (spurious wake-up) */
	default:
		/* Cannot happen unless someone else reaped our child; do not
		 * spin on a readable pidfd: account for it as an exit. */
		svd_log("%s: cannot collect the status of pid %d: %s",
		    slot_name(sl, nm, sizeof(nm)), (int) sl->pid,
		    strerror(errno));
		xi = (sv_exit_info) {false, -1, 0, false};
		break;
	}
	sv_loop_del_io(loop, io);
	close(sl->pidfd);
	sl->pidfd = -1;
	sv_loop_timer_stop(loop, &sl->timer);
	s->live--;
	uptime = sv_loop_now_ms() - sl->started_ms;
	if (xi.exited) {
		svd_log("%s: pid %d exited with status %d after %" PRIu64
		        " ms",
		    slot_name(sl, nm, sizeof(nm)), (int) sl->pid, xi.code,
		    uptime);
		sl->last_exit_code = xi.code;
		sl->last_signal    = 0;
	} else {
		svd_log("%s: pid %d killed by signal %d (%s)%s after %" PRIu64
		        " ms",
		    slot_name(sl, nm, sizeof(nm)), (int) sl->pid, xi.signo,
		    strsignal(xi.signo), xi.core ? ", core dumped" : "",
		    uptime);
		sl->last_exit_code = -1;
		sl->last_signal    = xi.signo;
	}
	if (sl->state == SLOT_STOPPING) {
		/* We asked the worker to stop: nothing it started may outlive
		 * it. Its process group got SIGTERM with it; whatever is still
		 * in the group now gets SIGKILL. (The group cannot have been
		 * reused yet: we are in the callback that reaped its leader.)
		 */
		(void) sv_signal_group(sl->pid, SIGKILL);
	}
	sl->pid = 0;
	slot_after_exit(sl, uptime);
}

/* slot_stop asks the slot's process to stop (SIGTERM to its process group,
 * SIGKILL after the stop timeout); a backoff slot is settled at once. */
static void
slot_stop(svd_slot *sl, const char *why)
{
	svd_sup *s = sl->g->s;
	uint64_t t = sl->g->cfg->stop_timeout_ms;
	char     nm[96];

	switch (sl->state) {
	case SLOT_RUNNING:
		svd_log("%s: stopping pid %d (%s)",
		    slot_name(sl, nm, sizeof(nm)), (int) sl->pid, why);
		if (sv_signal_group(sl->pid, t == 0 ? SIGKILL : SIGTERM)
		    != SV_OK) {
			sv_signal(sl->pidfd, t == 0 ? SIGKILL : SIGTERM);
		}
		sl->state = SLOT_STOPPING;
		if (t > 0
		    && sv_loop_timer_start(s->loop, &sl->timer, t) != SV_OK) {
			sv_signal_group(sl->pid, SIGKILL);
		}
		break;
	case SLOT_BACKOFF:
		if (slot_wanted(sl)) {
			/* An operator restart of a waiting slot: end the wait
			 * now; the loop thread spawns when the timer fires. */
			sl->restart_requested = false;
			if (sv_loop_timer_start(s->loop, &sl->timer, 0)
			    == SV_OK) {
				break;
			}
		}
		slot_release(sl);
		break;
	case SLOT_STOPPING:
	case SLOT_EMPTY:
		break;
	}
}

/* slot_timer_cb: stop timeout (escalate) or end of backoff (spawn). */
static void
slot_timer_cb(sv_loop *loop, sv_timer *t)
{
	svd_slot *sl = t->arg;
	char      nm[96];

	(void) loop;
	if (sl->state == SLOT_STOPPING) {
		svd_log("%s: pid %d did not stop within %" PRIu64
		        " ms; sending SIGKILL",
		    slot_name(sl, nm, sizeof(nm)), (int) sl->pid,
		    sl->g->cfg->stop_timeout_ms);
		if (sv_signal_group(sl->pid, SIGKILL) != SV_OK) {
			sv_signal(sl->pidfd, SIGKILL);
		}
	} else if (sl->state == SLOT_BACKOFF) {
		if (slot_wanted(sl)) {
			slot_spawn(sl);
		} else {
			slot_release(sl);
		}
	}
}

/* ---- groups ---------------------------------------------------------------
 */

/* group_init prepares a group from its config. */
static sv_err
group_init(svd_sup *s, svd_group *g, const svd_group_config *cfg)
{
	sv_err err;

	g->s      = s;
	g->cfg    = cfg;
	g->target = cfg->count;
	g->dirty  = true;
	if ((err = sv_ordinals_init(&g->ords, cfg->count, cfg->max_count))
	    != SV_OK) {
		return err;
	}
	if ((g->slots = calloc(cfg->max_count, sizeof(*g->slots))) == NULL
	    || (g->excess = calloc(cfg->max_count, sizeof(*g->excess)))
	        == NULL) {
		return SV_ENOMEM;
	}
	for (uint32_t i = 0; i < cfg->max_count; i++) {
		g->slots[i].g              = g;
		g->slots[i].ordinal        = i;
		g->slots[i].pidfd          = -1;
		g->slots[i].last_exit_code = -1;
		sv_timer_init(&g->slots[i].timer, slot_timer_cb, &g->slots[i]);
	}
	return env_build_base(g);
}

/* group_reconcile stops ordinals above the target and starts missing ones,
 * at most budget spawns. Returns the number of spawns. */
static size_t
group_reconcile(svd_group *g, size_t budget)
{
	sv_ordtoken tok;
	size_t      spawned = 0;
	size_t n = sv_ordinals_excess(&g->ords, g->excess, g->cfg->max_count);

	/* Scale-down: the core names the held ordinals above the target,
	 * highest first; stopping one that is already stopping is a no-op. */
	for (size_t i = 0; i < n; i++) {
		slot_stop(&g->slots[g->excess[i]], "scaled down");
	}
	while (
	    spawned < budget && sv_ordinals_acquire(&g->ords, &tok) == SV_OK) {
		svd_slot *sl = &g->slots[tok.ordinal];
		sl->tok      = tok;
		memset(&sl->rs, 0, sizeof(sl->rs));
		slot_spawn(sl);
		spawned++;
	}
	return spawned;
}

/* group_find returns the group named name, or NULL. */
static svd_group *
group_find(svd_sup *s, const char *name)
{
	for (size_t i = 0; i < s->ngroups; i++) {
		if (strcmp(s->groups[i].cfg->name, name) == 0) {
			return &s->groups[i];
		}
	}
	return NULL;
}

/* ---- the loop -------------------------------------------------------------
 */

/* sup_wake makes the loop thread run an iteration. */
static void
sup_wake(svd_sup *s)
{
	uint64_t one = 1;
	(void) !write(s->wakefd, &one, sizeof(one));
}

/* sup_reconcile runs reconciliation of dirty groups within a spawn budget.
 * Returns true when work is left for another iteration. */
static bool
sup_reconcile(svd_sup *s)
{
	size_t budget = SUP_SPAWN_BATCH;

	if (s->shutting_down) {
		return false;
	}
	for (size_t i = 0; i < s->ngroups; i++) {
		svd_group *g = &s->groups[i];
		if (!g->dirty) {
			continue;
		}
		size_t n = group_reconcile(g, budget);
		budget -= n;
		if (budget == 0) {
			return true; /* g stays dirty */
		}
		g->dirty = false;
	}
	return false;
}

/* sup_begin_shutdown stops every worker; a repeated request kills them. */
static void
sup_begin_shutdown(svd_sup *s)
{
	if (s->shutting_down) {
		svd_log(
		    "shutdown requested again: sending SIGKILL to %zu workers",
		    s->live);
		for (size_t i = 0; i < s->ngroups; i++) {
			svd_group *g = &s->groups[i];
			for (uint32_t o = 0; o < g->cfg->max_count; o++) {
				svd_slot *sl = &g->slots[o];
				if (sl->state == SLOT_RUNNING
				    || sl->state == SLOT_STOPPING) {
					sv_signal_group(sl->pid, SIGKILL);
				}
			}
		}
		return;
	}
	s->shutting_down = true;
	svd_log("shutting down: stopping %zu workers", s->live);
	for (size_t i = 0; i < s->ngroups; i++) {
		svd_group *g = &s->groups[i];
		for (uint32_t o = 0; o < g->cfg->max_count; o++) {
			slot_stop(&g->slots[o], "shutdown");
		}
	}
}

/* sup_wake_cb drains the wake-up counter; the loop then reconciles. */
static void
sup_wake_cb(sv_loop *loop, sv_io *io, uint32_t events)
{
	svd_sup *s = io->arg;
	uint64_t v;

	(void) loop;
	(void) events;
	(void) !read(s->wakefd, &v, sizeof(v));
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
		if (si.ssi_signo == SIGHUP) {
			svd_log("SIGHUP ignored: configuration reload is not "
			        "supported yet");
			continue;
		}
		svd_log("received %s", strsignal((int) si.ssi_signo));
		sup_begin_shutdown(s);
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
	s->cfg    = cfg;
	s->wakefd = -1;
	pthread_mutex_init(&s->mtx, NULL);
	snprintf(s->url, sizeof(s->url), "%s", url);
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t) sizeof(rnd)) {
		/* Fall back on time and pid; the id only has to be unique. */
		uint64_t a = (uint64_t) time(NULL), b = (uint64_t) getpid();
		memcpy(rnd, &a, 8);
		memcpy(rnd + 8, &b, 8);
	}
	for (size_t i = 0; i < sizeof(rnd); i++) {
		snprintf(s->id + 2 * i, 3, "%02x", rnd[i]);
	}
	if ((err = sv_loop_create(&s->loop)) != SV_OK) {
		goto fail;
	}
	if ((s->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
		err = SV_ESYSTEM;
		goto fail;
	}
	s->wake_io = (sv_io) {s->wakefd, sup_wake_cb, s};
	if ((err = sv_loop_add_io(s->loop, &s->wake_io, EPOLLIN)) != SV_OK) {
		goto fail;
	}
	if ((s->groups = calloc(cfg->ngroups, sizeof(*s->groups))) == NULL) {
		err = SV_ENOMEM;
		goto fail;
	}
	s->ngroups = cfg->ngroups;
	for (size_t i = 0; i < cfg->ngroups; i++) {
		if ((err = group_init(s, &s->groups[i], &cfg->groups[i]))
		    != SV_OK) {
			goto fail;
		}
	}
	*supp = s;
	return SV_OK;
fail:
	svd_sup_destroy(s);
	return err;
}

void
svd_sup_destroy(svd_sup *s)
{
	if (s == NULL) {
		return;
	}
	for (size_t i = 0; i < s->ngroups; i++) {
		svd_group *g = &s->groups[i];
		if (g->slots != NULL) {
			for (uint32_t o = 0; o < g->cfg->max_count; o++) {
				if (g->slots[o].pidfd >= 0) {
					close(g->slots[o].pidfd);
				}
			}
		}
		free(g->slots);
		free(g->excess);
		free(g->envbase);
		sv_ordinals_fini(&g->ords);
	}
	free(s->groups);
	if (s->wakefd >= 0) {
		close(s->wakefd);
	}
	sv_loop_destroy(s->loop);
	pthread_mutex_destroy(&s->mtx);
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
	sv_err err = SV_OK;
	int    n, timeout;
	bool   more;

	pthread_mutex_lock(&s->mtx);
	if (sigfd >= 0) {
		s->sig_io = (sv_io) {sigfd, sup_sig_cb, s};
		if (sv_loop_add_io(s->loop, &s->sig_io, EPOLLIN) != SV_OK) {
			pthread_mutex_unlock(&s->mtx);
			return SV_ESYSTEM;
		}
	}
	for (;;) {
		more = sup_reconcile(s);
		if (s->shutting_down && s->live == 0) {
			break;
		}
		timeout = more ? 0 : sv_loop_next_timeout(s->loop, -1);
		pthread_mutex_unlock(&s->mtx);
		err = sv_loop_wait(s->loop, timeout, &n);
		pthread_mutex_lock(&s->mtx);
		if (err != SV_OK) {
			svd_log("event loop failed: %s", strerror(errno));
			break;
		}
		sv_loop_dispatch(s->loop, n);
	}
	/* Settle slots still waiting in backoff (none are live). */
	for (size_t i = 0; i < s->ngroups; i++) {
		for (uint32_t o = 0; o < s->groups[i].cfg->max_count; o++) {
			svd_slot *sl = &s->groups[i].slots[o];
			if (sl->state == SLOT_BACKOFF) {
				slot_release(sl);
			}
		}
	}
	if (sigfd >= 0) {
		sv_loop_del_io(s->loop, &s->sig_io);
	}
	pthread_mutex_unlock(&s->mtx);
	if (err == SV_OK) {
		svd_log("all workers stopped");
	}
	return err;
}

/* ---- requests -------------------------------------------------------------
 */

/* A request handler fills rep (an envelope on the caller's stack) or
 * returns an error with a message in emsg. Handlers run with the mutex
 * held; heap memory they hang off rep goes into the arena freed after
 * encoding. */
typedef struct req_ctx {
	svd_sup       *s;
	const svw_env *req;
	uint64_t       pid;
	uint64_t       uid;
	svw_env        rep; /* the reply being built */
	char          *emsg;
	size_t         emsglen;
	void          *arena[2];
} req_ctx;

/* req_err records a message and returns err. */
static sv_err
req_err(req_ctx *c, sv_err err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->emsg, c->emsglen, fmt, ap);
	va_end(ap);
	return err;
}

/* req_admin checks that the caller may change the supervisor's state. */
static sv_err
req_admin(req_ctx *c)
{
	if (c->uid != 0 && c->uid != (uint64_t) geteuid()) {
		return req_err(c, SV_EPERM,
		    "uid %" PRIu64 " may not administer this supervisor",
		    c->uid);
	}
	if (c->s->shutting_down) {
		return req_err(c, SV_EBUSY, "supervisor is shutting down");
	}
	return SV_OK;
}

/* req_group validates a group name and finds the group. */
static sv_err
req_group(req_ctx *c, const char *name, svd_group **gp)
{
	sv_err err = svw_check_name(name);

	if (err != SV_OK) {
		return req_err(c, err,
		    "group name must be 1..64 characters of [A-Za-z0-9_.-]");
	}
	if ((*gp = group_find(c->s, name)) == NULL) {
		return req_err(c, SV_ENOTFOUND, "no group named \"%s\"", name);
	}
	return SV_OK;
}

static const char *const req_features[] = {"identity", "admin.list",
    "admin.status", "admin.scale", "admin.stop", "admin.restart"};

/* req_hello answers Hello with the version and features. */
static sv_err
req_hello(req_ctx *c, Supervise__V1__HelloReply *hr)
{
	const Supervise__V1__Hello *h = c->req->hello;

	if (strlen(h->client_name) > SVW_MAX_TEXT) {
		return req_err(c, SV_ETOOLARGE, "client_name too long");
	}
	if ((h->min_version != 0 && h->min_version > SV_PROTOCOL_VERSION)
	    || (h->max_version != 0 && h->max_version < SV_PROTOCOL_VERSION)) {
		return req_err(c, SV_EVERSION,
		    "client speaks versions %u..%u; this server speaks %d",
		    h->min_version, h->max_version, SV_PROTOCOL_VERSION);
	}
	hr->version        = SV_PROTOCOL_VERSION;
	hr->minor_version  = SV_PROTOCOL_MINOR;
	hr->server_name    = "supervised/" SV_VERSION_STRING;
	hr->supervisor_id  = c->s->id;
	hr->n_features     = sizeof(req_features) / sizeof(req_features[0]);
	hr->features       = (char **) req_features;
	c->rep.body_case   = SUPERVISE__V1__ENVELOPE__BODY_HELLO_REPLY;
	c->rep.hello_reply = hr;
	return SV_OK;
}

/* proc_ppid reads the parent pid of pid from /proc, or -1. */
static long
proc_ppid(long pid)
{
	char  path[64], buf[512];
	FILE *f;
	char *rp;
	long  ppid = -1;
	char  st;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if ((f = fopen(path, "re")) == NULL) {
		return -1;
	}
	if (fgets(buf, sizeof(buf), f) != NULL
	    && (rp = strrchr(buf, ')')) != NULL
	    && sscanf(rp + 1, " %c %ld", &st, &ppid) != 2) {
		ppid = -1;
	}
	fclose(f);
	return ppid;
}

/* sup_find_pid returns the live slot whose process is pid, or NULL. */
static svd_slot *
sup_find_pid(svd_sup *s, long pid)
{
	for (size_t i = 0; i < s->ngroups; i++) {
		svd_group *g = &s->groups[i];
		for (uint32_t o = 0; o < g->cfg->max_count; o++) {
			svd_slot *sl = &g->slots[o];
			if ((sl->state == SLOT_RUNNING
			        || sl->state == SLOT_STOPPING)
			    && (long) sl->pid == pid) {
				return sl;
			}
		}
	}
	return NULL;
}

/* req_whoami answers for the caller, identified by the kernel (the peer
 * pid of the connection) or by its nearest supervised ancestor. */
static sv_err
req_whoami(req_ctx *c, Supervise__V1__Identity *id, Supervise__V1__Frame *fr,
    Supervise__V1__Frame **frames)
{
	long      pid = (long) c->pid;
	svd_slot *sl  = NULL;

	if (c->pid == 0) {
		return req_err(c, SV_ENOTWORKER,
		    "the caller's process cannot be identified");
	}
	for (int depth = 0; depth < SUP_MAX_ANCESTRY && pid > 1; depth++) {
		if ((sl = sup_find_pid(c->s, pid)) != NULL
		    || pid == (long) getpid()) {
			break;
		}
		pid = proc_ppid(pid);
	}
	if (sl == NULL) {
		return req_err(c, SV_ENOTWORKER,
		    "pid %" PRIu64 " is neither a worker of supervisor %s "
		    "nor a descendant of one",
		    c->pid, c->s->id);
	}
	fr->kind          = SUPERVISE__V1__WORKER_KIND__WORKER_KIND_PROCESS;
	fr->ordinal       = sl->ordinal;
	fr->name          = (char *) sl->g->cfg->name;
	frames[0]         = fr;
	id->group         = (char *) sl->g->cfg->name;
	id->ordinal       = sl->ordinal;
	id->generation    = sl->tok.generation;
	id->kind          = SUPERVISE__V1__WORKER_KIND__WORKER_KIND_PROCESS;
	id->pid           = sl->pid;
	id->purpose       = sl->g->cfg->purpose;
	id->supervisor_id = c->s->id;
	id->n_context     = 1;
	id->context       = frames;
	id->parent        = NULL; /* a top-level process has no parent frame */
	id->group_size    = sl->g->target;
	c->rep.body_case  = SUPERVISE__V1__ENVELOPE__BODY_IDENTITY;
	c->rep.identity   = id;
	return SV_OK;
}

/* slot_status fills a WorkerStatus from a slot. */
static void
slot_status(const svd_slot *sl, Supervise__V1__WorkerStatus *w, uint64_t now)
{
	supervise__v1__worker_status__init(w);
	w->group          = (char *) sl->g->cfg->name;
	w->ordinal        = sl->ordinal;
	w->generation     = sl->tok.generation;
	w->pid            = sl->pid;
	w->purpose        = sl->g->cfg->purpose;
	w->restarts       = sl->restarts;
	w->last_exit_code = sl->last_exit_code;
	w->last_signal    = sl->last_signal;
	switch (sl->state) {
	case SLOT_RUNNING:
		w->state = SUPERVISE__V1__WORKER_STATE__WORKER_STATE_RUNNING;
		break;
	case SLOT_STOPPING:
		w->state = SUPERVISE__V1__WORKER_STATE__WORKER_STATE_STOPPING;
		break;
	default:
		w->state = SUPERVISE__V1__WORKER_STATE__WORKER_STATE_BACKOFF;
		break;
	}
	if (sl->state == SLOT_RUNNING || sl->state == SLOT_STOPPING) {
		w->uptime_ms = now - sl->started_ms;
	}
}

/* req_list answers ListWorkers: every non-empty slot of one or all groups. */
static sv_err
req_list(req_ctx *c, Supervise__V1__WorkerList *wl)
{
	const char                   *name = c->req->list_workers->group;
	svd_group                    *only = NULL;
	size_t                        n = 0, k = 0;
	Supervise__V1__WorkerStatus  *items;
	Supervise__V1__WorkerStatus **ptrs;
	uint64_t                      now = sv_loop_now_ms();
	sv_err                        err;

	if (name[0] != '\0' && (err = req_group(c, name, &only)) != SV_OK) {
		return err;
	}
	for (size_t i = 0; i < c->s->ngroups; i++) {
		svd_group *g = &c->s->groups[i];
		if (only == NULL || only == g) {
			for (uint32_t o = 0; o < g->cfg->max_count; o++) {
				n += g->slots[o].state != SLOT_EMPTY;
			}
		}
	}
	items       = calloc(n + 1, sizeof(*items));
	ptrs        = calloc(n + 1, sizeof(Supervise__V1__WorkerStatus *));
	c->arena[0] = items;
	c->arena[1] = ptrs;
	if (items == NULL || ptrs == NULL) {
		return req_err(c, SV_EINTERNAL, "out of memory");
	}
	for (size_t i = 0; i < c->s->ngroups; i++) {
		svd_group *g = &c->s->groups[i];
		if (only != NULL && only != g) {
			continue;
		}
		for (uint32_t o = 0; o < g->cfg->max_count; o++) {
			if (g->slots[o].state != SLOT_EMPTY) {
				slot_status(&g->slots[o], &items[k], now);
				ptrs[k] = &items[k];
				k++;
			}
		}
	}
	wl->n_workers      = k;
	wl->workers        = ptrs;
	c->rep.body_case   = SUPERVISE__V1__ENVELOPE__BODY_WORKER_LIST;
	c->rep.worker_list = wl;
	return SV_OK;
}

/* req_slot finds the non-empty slot (group, ordinal). */
static sv_err
req_slot(req_ctx *c, const char *name, uint32_t ordinal, svd_slot **slp)
{
	svd_group *g   = NULL;
	sv_err     err = req_group(c, name, &g);

	if (err != SV_OK) {
		return err;
	}
	if (ordinal >= g->cfg->max_count
	    || g->slots[ordinal].state == SLOT_EMPTY) {
		return req_err(c, SV_ENOTFOUND,
		    "%s has no worker at ordinal %u", name, ordinal);
	}
	*slp = &g->slots[ordinal];
	return SV_OK;
}

/* req_status answers GetStatus. */
static sv_err
req_status(req_ctx *c, Supervise__V1__WorkerStatus *w)
{
	svd_slot *sl  = NULL;
	sv_err    err = req_slot(
	       c, c->req->get_status->group, c->req->get_status->ordinal, &sl);

	if (err != SV_OK) {
		return err;
	}
	slot_status(sl, w, sv_loop_now_ms());
	c->rep.body_case     = SUPERVISE__V1__ENVELOPE__BODY_WORKER_STATUS;
	c->rep.worker_status = w;
	return SV_OK;
}

/* req_resize sets a group's target; the loop thread reconciles. */
static sv_err
req_resize(req_ctx *c, const char *name, uint32_t count,
    Supervise__V1__GroupChange *gc)
{
	svd_group *g = NULL;
	sv_err     err;

	if ((err = req_admin(c)) != SV_OK
	    || (err = req_group(c, name, &g)) != SV_OK) {
		return err;
	}
	if (count > g->cfg->max_count) {
		return req_err(c, SV_EEXHAUSTED,
		    "%s: %u is above max_count %u", name, count,
		    g->cfg->max_count);
	}
	gc->group          = (char *) g->cfg->name;
	gc->previous_count = g->target;
	gc->count          = count;
	if (count != g->target) {
		svd_log("%s: target %u -> %u", name, g->target, count);
	}
	g->target = count;
	sv_ordinals_set_limit(&g->ords, count);
	g->dirty = true;
	sup_wake(c->s);
	c->rep.body_case    = SUPERVISE__V1__ENVELOPE__BODY_GROUP_CHANGE;
	c->rep.group_change = gc;
	return SV_OK;
}

/* req_restart stops one worker; its exit restarts it with the same
 * ordinal and the next generation. */
static sv_err
req_restart(req_ctx *c, Supervise__V1__WorkerStatus *w)
{
	const Supervise__V1__RestartWorker *r  = c->req->restart_worker;
	svd_slot                           *sl = NULL;
	sv_err                              err;

	if ((err = req_admin(c)) != SV_OK
	    || (err = req_slot(c, r->group, r->ordinal, &sl)) != SV_OK) {
		return err;
	}
	if (sl->ordinal >= sl->g->target) {
		return req_err(c, SV_ENOTFOUND, "%s[%u] is being scaled away",
		    r->group, r->ordinal);
	}
	sl->restart_requested = true;
	slot_stop(sl, "restart requested");
	sup_wake(c->s);
	slot_status(sl, w, sv_loop_now_ms());
	c->rep.body_case     = SUPERVISE__V1__ENVELOPE__BODY_WORKER_STATUS;
	c->rep.worker_status = w;
	return SV_OK;
}

/* req_handle routes a decoded request to its handler and encodes the
 * answer. Runs with the mutex held. */
static sv_err
req_handle(req_ctx *c, nng_msg **replyp)
{
	Supervise__V1__HelloReply   hr = SUPERVISE__V1__HELLO_REPLY__INIT;
	Supervise__V1__Identity     id = SUPERVISE__V1__IDENTITY__INIT;
	Supervise__V1__Frame        fr = SUPERVISE__V1__FRAME__INIT;
	Supervise__V1__Frame       *frames[1];
	Supervise__V1__WorkerList   wl = SUPERVISE__V1__WORKER_LIST__INIT;
	Supervise__V1__WorkerStatus ws = SUPERVISE__V1__WORKER_STATUS__INIT;
	Supervise__V1__GroupChange  gc = SUPERVISE__V1__GROUP_CHANGE__INIT;
	sv_err                      err;

	supervise__v1__envelope__init(&c->rep);
	c->rep.version    = SV_PROTOCOL_VERSION;
	c->rep.request_id = c->req->request_id;
	switch (c->req->body_case) {
	case SUPERVISE__V1__ENVELOPE__BODY_HELLO:
		err = req_hello(c, &hr);
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_WHOAMI:
		err = req_whoami(c, &id, &fr, frames);
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_LIST_WORKERS:
		err = req_list(c, &wl);
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_GET_STATUS:
		err = req_status(c, &ws);
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_SCALE_GROUP:
		err = req_resize(c, c->req->scale_group->group,
		    c->req->scale_group->count, &gc);
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_STOP_GROUP:
		err = req_resize(c, c->req->stop_group->group, 0, &gc);
		break;
	case SUPERVISE__V1__ENVELOPE__BODY_RESTART_WORKER:
		err = req_restart(c, &ws);
		break;
	default:
		err = req_err(c, SV_EBADREQ,
		    "message kind %d is not a request",
		    (int) c->req->body_case);
		break;
	}
	if (err == SV_OK) {
		err = svw_encode(&c->rep, SVW_MAX_REPLY, replyp);
		if (err == SV_ETOOLARGE) {
			req_err(c, err,
			    "reply exceeds %u bytes; ask for one group",
			    SVW_MAX_REPLY);
		} else if (err != SV_OK) {
			req_err(c, err, "cannot encode reply");
		}
	}
	/* The body pointed into this frame: forget it. */
	supervise__v1__envelope__init(&c->rep);
	free(c->arena[0]);
	free(c->arena[1]);
	return err;
}

sv_err
svd_sup_dispatch(svd_sup *s, const void *buf, size_t len, uint64_t peer_pid,
    uint64_t peer_uid, nng_msg **replyp)
{
	svw_env *req = NULL;
	uint64_t rid;
	char     emsg[SVW_MAX_TEXT];
	sv_err   err;
	req_ctx  c = {s, NULL, peer_pid, peer_uid,
	     SUPERVISE__V1__ENVELOPE__INIT, emsg, sizeof(emsg), {NULL, NULL}};

	emsg[0] = '\0';
	err     = svw_decode(buf, len, SVW_MAX_REQUEST, &req, &rid);
	switch (err) {
	case SV_OK:
		break;
	case SV_ETOOLARGE:
		snprintf(emsg, sizeof(emsg), "request of %zu bytes exceeds %u",
		    len, SVW_MAX_REQUEST);
		break;
	case SV_EVERSION:
		snprintf(emsg, sizeof(emsg), "this server speaks version %d",
		    SV_PROTOCOL_VERSION);
		break;
	case SV_EUNKNOWNMSG:
		snprintf(emsg, sizeof(emsg),
		    "message kind not known to this server (features: see "
		    "Hello)");
		break;
	default:
		snprintf(emsg, sizeof(emsg),
		    "not a supervise.v1 Envelope (or version missing)");
		break;
	}
	if (err == SV_OK) {
		c.req = req;
		pthread_mutex_lock(&s->mtx);
		err = req_handle(&c, replyp);
		pthread_mutex_unlock(&s->mtx);
		svw_free(req);
	}
	if (err == SV_OK) {
		return SV_OK;
	}
	return svw_encode_error(rid, err, emsg, replyp);
}
