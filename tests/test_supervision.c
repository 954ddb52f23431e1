/*
 * test_supervision.c — the supervision state machine (core/supervision.c)
 * driven by synthetic events and a fake clock, with no process, no timer
 * and no I/O.
 *
 * A small fake shell stands in for the daemon: it drains the core's
 * effects into arrays (timers armed by kind + key with their guard, signals
 * sent, events published), pulls spawn tickets and answers them with
 * made-up pids, keeps a fake process table (a process lives until the test
 * makes it exit), and fires timers in due order when the fake clock moves.
 *
 * Tests:
 *   - a table over every restart type x strategy x exit kind (exit 0, exit
 *     non-zero, signal, operator stop, scale-down, shutdown) with the
 *     expected outcome: restarted or not, which siblings stop (reverse start
 *     order, one at a time) and start again (start order), ordinal released
 *     or not, the events;
 *   - restart intensity, backoff, guarded timers, readiness and ordered
 *     start, watchdog, stop timeout (escalate, abandon), operator requests,
 *     group deletion and shutdown, each as a scenario;
 *   - drain (a worker that acknowledges and exits, one that asks for more
 *     time, one that ignores the notice and is SIGKILLed at its deadline;
 *     the report; no restart) and rolling restart (ready never below N; a
 *     new generation that is not ready stops the roll), as scenarios;
 *   - a randomized model test: thousands of random event sequences with
 *     fixed seeds, checking the core's invariants after every step (with
 *     drains and rolls: at most one overlap per seat, a drained process is
 *     never restarted, a roll drains an old generation only once its
 *     successor is ready).
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/supervision.h"
#include "core/supervision_internal.h" /* sv_core.misfires */

/* ---- the fake shell ------------------------------------------------------
 */

#define PID_BASE  1000
#define MAX_GIDS  64 /* group ids a test may create */
#define MAX_ORDS  16 /* ordinals a test group may have */
#define NSTALE    64 /* remembered guards of dead timers */
#define MAXTIMERS 512

typedef struct ftimer {
	sv_timer_kind kind;
	sv_wkey       key;
	uint64_t      due;
	uint64_t      guard;
	uint64_t      seq; /* arming order, breaks ties of due */
} ftimer;

typedef struct fsig {
	int64_t  pid;
	int      signo;
	bool     pgroup;
	sv_wkey  key;
	uint64_t at;
} fsig;

typedef struct fev {
	sv_event ev;
	uint64_t at;
	char     reason[SV_CORE_REASON_LEN];
} fev;

/* A fake OS process: pid = PID_BASE + its index. */
typedef struct fproc {
	sv_wkey key;
	bool    alive;
	int     lastsig; /* last signal sent to it, 0 if none */
} fproc;

typedef struct shell {
	sv_core        *c;
	uint64_t        now;
	ftimer          timers[MAXTIMERS];
	size_t          ntimers;
	uint64_t        seq;
	ftimer          stale[NSTALE]; /* ring of disarmed timers */
	size_t          nstale;
	fsig           *sigs;
	size_t          nsigs, capsigs;
	fev            *evs;
	size_t          nevs, capevs;
	fproc          *procs;
	size_t          nprocs, capprocs;
	size_t          alive_lo; /* procs below this index are all dead */
	sv_wkey        *spawns; /* every ticket, in order */
	size_t          nspawns, capspawns;
	bool            ticket_out;
	sv_spawn_ticket ticket;
	int64_t         lastgen[MAX_GIDS][MAX_ORDS];
	uint64_t        notbefore[MAX_GIDS][MAX_ORDS]; /* model test */
	bool            drained[MAX_GIDS][MAX_ORDS]; /* no spawn may follow */
} shell;

/* grow makes room for one more element in a dynamic array. */
static void *
grow(void *p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap) {
		return p;
	}
	*cap = *cap == 0 ? 64 : *cap * 2;
	p    = realloc(p, *cap * size);
	assert_non_null(p);
	return p;
}

static bool
key_eq(sv_wkey a, sv_wkey b)
{
	return a.group_id == b.group_id && a.ordinal == b.ordinal
	    && a.generation == b.generation;
}

static void
sh_init(shell *sh, sv_strategy st)
{
	memset(sh, 0, sizeof(*sh));
	assert_int_equal(sv_core_create(st, &sh->c), SV_OK);
	for (size_t i = 0; i < MAX_GIDS; i++) {
		for (size_t j = 0; j < MAX_ORDS; j++) {
			sh->lastgen[i][j] = -1;
		}
	}
}

static void
sh_fini(shell *sh)
{
	sv_core_destroy(sh->c);
	free(sh->sigs);
	free(sh->evs);
	free(sh->procs);
	free(sh->spawns);
}

/* sh_forget_timer removes timer i, remembering its guard as stale. */
static void
sh_forget_timer(shell *sh, size_t i)
{
	sh->stale[sh->nstale++ % NSTALE] = sh->timers[i];
	sh->timers[i]                    = sh->timers[--sh->ntimers];
}

/* sh_timer_index finds the armed timer of kind and key, or -1. */
static long
sh_timer_index(const shell *sh, sv_timer_kind kind, sv_wkey key)
{
	for (size_t i = 0; i < sh->ntimers; i++) {
		if (sh->timers[i].kind == kind
		    && key_eq(sh->timers[i].key, key)) {
			return (long) i;
		}
	}
	return -1;
}

/* sh_timer returns the armed timer of kind and key, or NULL. */
static const ftimer *
sh_timer(const shell *sh, sv_timer_kind kind, sv_wkey key)
{
	long i = sh_timer_index(sh, kind, key);
	return i < 0 ? NULL : &sh->timers[i];
}

/* seat_timer returns a copy of the armed backoff timer of a seat (fails
 * when there is none). */
static ftimer
seat_timer(const shell *sh, uint32_t id, uint32_t ordinal)
{
	const ftimer *t
	    = sh_timer(sh, SV_TIMER_SEAT, (sv_wkey) {id, ordinal, 0});
	assert_non_null(t);
	return *t;
}

/* sh_proc returns the fake process of pid. */
static fproc *
sh_proc(shell *sh, int64_t pid)
{
	assert_true(pid >= PID_BASE && pid < PID_BASE + (int64_t) sh->nprocs);
	return &sh->procs[pid - PID_BASE];
}

/* sh_drain carries out every pending effect. */
static void
sh_drain(shell *sh)
{
	sv_fx fx;

	while (sv_core_pop_effect(sh->c, &fx)) {
		long i;
		switch (fx.kind) {
		case SV_FX_TIMER:
			assert_true(fx.guard != 0);
			if ((i = sh_timer_index(sh, fx.timer, fx.key)) >= 0) {
				sh_forget_timer(sh, (size_t) i);
			}
			assert_true(sh->ntimers < MAXTIMERS);
			sh->timers[sh->ntimers++] = (ftimer) {.kind = fx.timer,
			    .key                                    = fx.key,
			    .due   = fx.due_ms,
			    .guard = fx.guard,
			    .seq   = ++sh->seq};
			break;
		case SV_FX_CANCEL:
			if ((i = sh_timer_index(sh, fx.timer, fx.key)) >= 0) {
				sh_forget_timer(sh, (size_t) i);
			}
			break;
		case SV_FX_SIGNAL: {
			fproc *p = sh_proc(sh, fx.pid);
			assert_true(key_eq(p->key, fx.key));
			assert_true(fx.pgroup);
			p->lastsig = fx.signo;
			sh->sigs   = grow(sh->sigs, &sh->capsigs, sh->nsigs,
			      sizeof(*sh->sigs));
			sh->sigs[sh->nsigs++] = (fsig) {
			    fx.pid, fx.signo, fx.pgroup, fx.key, sh->now};
			break;
		}
		case SV_FX_EVENT: {
			fev *e;
			sh->evs = grow(
			    sh->evs, &sh->capevs, sh->nevs, sizeof(*sh->evs));
			e            = &sh->evs[sh->nevs++];
			e->ev        = fx.ev;
			e->at        = sh->now;
			e->reason[0] = '\0';
			if (fx.ev.reason != NULL) {
				snprintf(e->reason, sizeof(e->reason), "%s",
				    fx.ev.reason);
			}
			e->ev.reason = NULL;
			break;
		}
		default:
			fail_msg("unknown effect kind %d", (int) fx.kind);
		}
	}
}

/* sh_group adds a group and returns its id. */
static uint32_t
sh_group(shell *sh, const char *name, const sv_group_policy *p, uint32_t count,
    uint32_t max)
{
	uint32_t id = 0;

	assert_int_equal(
	    sv_core_add_group(sh->c, name, p, count, max, &id), SV_OK);
	sh_drain(sh);
	return id;
}

/* sh_pull asks the core for a spawn ticket; checks that the generation of
 * the seat grows. */
static bool
sh_pull(shell *sh)
{
	sv_spawn_ticket t;

	assert_false(sh->ticket_out);
	if (!sv_core_next_spawn(sh->c, sh->now, &t)) {
		sh_drain(sh);
		return false;
	}
	assert_false(sv_core_shutting_down(sh->c));
	assert_true(t.group_id < MAX_GIDS && t.ordinal < MAX_ORDS);
	assert_true(
	    (int64_t) t.generation > sh->lastgen[t.group_id][t.ordinal]);
	/* never before the delay a RESTART_SCHEDULED announced */
	assert_true(sh->now >= sh->notbefore[t.group_id][t.ordinal]);
	/* a drained seat starts nothing until an operator holds it again */
	assert_false(sh->drained[t.group_id][t.ordinal]);
	sh->lastgen[t.group_id][t.ordinal] = (int64_t) t.generation;
	sh->spawns                         = grow(
	                            sh->spawns, &sh->capspawns, sh->nspawns, sizeof(*sh->spawns));
	sh->spawns[sh->nspawns++] = t;
	sh->ticket_out            = true;
	sh->ticket                = t;
	sh_drain(sh);
	return true;
}

/* sh_answer answers the outstanding ticket: spawned (returns the pid) or
 * failed (returns 0). */
static int64_t
sh_answer(shell *sh, bool ok)
{
	int64_t pid = 0;

	assert_true(sh->ticket_out);
	sh->ticket_out = false;
	if (ok) {
		sh->procs = grow(
		    sh->procs, &sh->capprocs, sh->nprocs, sizeof(*sh->procs));
		pid                     = PID_BASE + (int64_t) sh->nprocs;
		sh->procs[sh->nprocs++] = (fproc) {sh->ticket, true, 0};
		sv_core_spawned(sh->c, sh->ticket, pid, sh->now);
	} else {
		sv_core_spawn_failed(
		    sh->c, sh->ticket, 2 /* ENOENT */, sh->now);
	}
	sh_drain(sh);
	return pid;
}

/* sh_spawn_all spawns every process the core wants now. */
static size_t
sh_spawn_all(shell *sh)
{
	size_t n = 0;

	while (sh_pull(sh)) {
		(void) sh_answer(sh, true);
		n++;
	}
	return n;
}

static const sv_cgroup *
G(const shell *sh, uint32_t id)
{
	const sv_cgroup *g = sv_core_group(sh->c, id);
	assert_non_null(g);
	return g;
}

static const sv_seat *
S(const shell *sh, uint32_t id, uint32_t ordinal)
{
	static sv_seat   blank;
	const sv_cgroup *g = G(sh, id);
	assert_true(ordinal < g->max_count);
	if (ordinal >= g->nseats) {
		/* never live: no seat made yet */
		memset(&blank, 0, sizeof(blank));
		blank.ordinal = ordinal;
		return &blank;
	}
	return &g->seats[ordinal];
}

/* OLD is the second process record of seat (id, ordinal): a blank one
 * (state NONE) when it has none. */
static const sv_proc *
OLD(const shell *sh, uint32_t id, uint32_t ordinal)
{
	return sv_core_seat_old(sh->c, S(sh, id, ordinal));
}

/* sh_pid returns the pid of the current process of a seat. */
static int64_t
sh_pid(const shell *sh, uint32_t id, uint32_t ordinal)
{
	const sv_seat *s = S(sh, id, ordinal);
	assert_true(s->cur.state >= SV_PROC_STARTING);
	return s->cur.pid;
}

/* sh_key returns the key of the current process of a seat. */
static sv_wkey
sh_key(const shell *sh, uint32_t id, uint32_t ordinal)
{
	const sv_seat *s = S(sh, id, ordinal);
	sv_wkey        k = {id, ordinal, s->cur.generation};
	return k;
}

static sv_exit
x_code(int code)
{
	sv_exit x = {.exited = true, .code = code};
	return x;
}

static sv_exit
x_sig(int signo)
{
	sv_exit x = {.exited = false, .signo = signo};
	return x;
}

/* sh_exit_pid: the fake process pid ends with x and is reaped. */
static void
sh_exit_pid(shell *sh, int64_t pid, sv_exit x)
{
	fproc *p = sh_proc(sh, pid);

	assert_true(p->alive);
	p->alive = false;
	sv_core_exited(sh->c, p->key, x, sh->now);
	sh_drain(sh);
}

/* sh_exit: the current process of a seat ends with x. */
static void
sh_exit(shell *sh, uint32_t id, uint32_t ordinal, sv_exit x)
{
	sh_exit_pid(sh, sh_pid(sh, id, ordinal), x);
}

/* sh_fire fires armed timer i now. */
static void
sh_fire(shell *sh, size_t i)
{
	ftimer t = sh->timers[i];

	sh_forget_timer(sh, i);
	if (t.due > sh->now) {
		sh->now = t.due;
	}
	sv_core_timer(sh->c, t.kind, t.key, t.guard, sh->now);
	sh_drain(sh);
}

/* sh_next_due returns the index of the earliest timer due by to, or -1. */
static long
sh_next_due(const shell *sh, uint64_t to)
{
	long best = -1;

	for (size_t i = 0; i < sh->ntimers; i++) {
		const ftimer *t = &sh->timers[i];
		if (t->due > to) {
			continue;
		}
		if (best < 0 || t->due < sh->timers[best].due
		    || (t->due == sh->timers[best].due
		        && t->seq < sh->timers[best].seq)) {
			best = (long) i;
		}
	}
	return best;
}

/* sh_advance moves the clock to `to`, firing due timers in order. */
static void
sh_advance(shell *sh, uint64_t to)
{
	long i;

	while ((i = sh_next_due(sh, to)) >= 0) {
		sh_fire(sh, (size_t) i);
	}
	if (to > sh->now) {
		sh->now = to;
	}
}

/* sh_nev counts events of kind from index `from` on, for group id (0: any)
 * and ordinal (UINT32_MAX: any). */
static size_t
sh_nev(const shell *sh, size_t from, sv_event_kind kind, uint32_t id,
    uint32_t ordinal)
{
	size_t n = 0;

	for (size_t i = from; i < sh->nevs; i++) {
		const sv_event *e = &sh->evs[i].ev;
		if (e->kind == kind && (id == 0 || e->group_id == id)
		    && (ordinal == UINT32_MAX || e->ordinal == ordinal)) {
			n++;
		}
	}
	return n;
}

/* sh_ev returns the first such event from index `from` on (fails if
 * none). */
static const sv_event *
sh_ev(const shell *sh, size_t from, sv_event_kind kind, uint32_t id,
    uint32_t ordinal)
{
	for (size_t i = from; i < sh->nevs; i++) {
		const sv_event *e = &sh->evs[i].ev;
		if (e->kind == kind && (id == 0 || e->group_id == id)
		    && (ordinal == UINT32_MAX || e->ordinal == ordinal)) {
			return e;
		}
	}
	fail_msg("no event of kind %d for group %u ordinal %u", (int) kind, id,
	    ordinal);
	return NULL;
}

/* sh_alive_signalled returns the pid of the first process (in signal
 * order, from signal index `from`) still alive, or 0; *n receives how many
 * signalled processes are alive. */
static int64_t
sh_alive_signalled(shell *sh, size_t from, size_t *n)
{
	int64_t first = 0;
	size_t  count = 0;

	for (size_t i = from; i < sh->nsigs; i++) {
		fproc *p   = sh_proc(sh, sh->sigs[i].pid);
		bool   dup = false;
		for (size_t j = from; j < i; j++) {
			dup = dup || sh->sigs[j].pid == sh->sigs[i].pid;
		}
		if (p->alive && !dup) {
			count++;
			if (first == 0) {
				first = sh->sigs[i].pid;
			}
		}
	}
	if (n != NULL) {
		*n = count;
	}
	return first;
}

/* ---- invariants ----------------------------------------------------------
 */

/* check_core recomputes what the core counts from its seats and compares
 * it with the core and with the fake process table. */
static void
check_core(shell *sh)
{
	size_t live = 0;

	for (size_t gi = 0; gi < sv_core_ngroups(sh->c); gi++) {
		const sv_cgroup *g     = sv_core_group_at(sh->c, gi);
		uint32_t         glive = 0, npend = 0, unready = 0, held = 0;

		assert_true(g->max_count <= MAX_ORDS);
		/* seats exist for every held ordinal, never past max_count */
		assert_true(g->nseats <= g->max_count);
		for (uint32_t o = g->nseats; o < g->max_count; o++) {
			assert_false(sv_ordinals_is_held(&g->ords, o));
		}
		for (uint32_t o = 0; o < g->nseats; o++) {
			const sv_seat *s     = &g->seats[o];
			const sv_proc *old   = sv_core_seat_old(sh->c, s);
			const sv_proc *ps[2] = {&s->cur, old};
			assert_int_equal(s->ordinal, o);
			/* at most one current process and one old one (the
			 * only overlap): abandoned, draining, or the serving
			 * old generation of a roll */
			assert_true(s->cur.state <= SV_PROC_STOPPING);
			assert_true(old->state != SV_PROC_SPAWNING);
			if (old->state == SV_PROC_STARTING
			    || old->state == SV_PROC_RUNNING) {
				assert_true(s->rolling);
			}
			if (s->rolling) {
				assert_true(old->state != SV_PROC_NONE
				    || s->cur.state != SV_PROC_NONE
				    || s->state == SV_SP_PENDING
				    || s->state == SV_SP_BACKOFF);
				assert_true(s->cur.state == SV_PROC_NONE
				    || s->cur.state == SV_PROC_SPAWNING
				    || s->cur.state == SV_PROC_STARTING
				    || s->cur.state == SV_PROC_STOPPING
				    || (s->cur.state == SV_PROC_RUNNING
				        && !s->cur.ready));
			}
			if (s->cur.draining) {
				assert_int_equal(
				    s->cur.state, SV_PROC_STOPPING);
			}
			/* the stored seat state agrees with its process */
			assert_int_equal(s->state == SV_SP_LIVE,
			    s->cur.state != SV_PROC_NONE);
			if (s->state == SV_SP_PENDING) {
				npend++;
				assert_true(o >= g->cursor);
				assert_true(s->wanted);
				assert_int_equal(s->cur.state, SV_PROC_NONE);
				assert_false(g->failed);
				assert_false(sv_core_shutting_down(sh->c));
			}
			if (s->state == SV_SP_BACKOFF) {
				assert_true(s->wanted);
				assert_int_equal(s->cur.state, SV_PROC_NONE);
				assert_false(sv_core_shutting_down(sh->c));
			}
			assert_int_equal(
			    s->wanted, sv_ordinals_is_held(&g->ords, o));
			held += s->wanted ? 1 : 0;
			for (int k = 0; k < 2; k++) {
				const sv_proc *p = ps[k];
				if (p->state == SV_PROC_NONE) {
					continue;
				}
				glive++;
				if (p->awaited) {
					unready++;
					assert_int_equal(
					    p->state, SV_PROC_STARTING);
				}
				if (p->state == SV_PROC_SPAWNING) {
					sv_wkey want
					    = {g->id, o, p->generation};
					assert_true(sh->ticket_out);
					assert_true(key_eq(sh->ticket, want));
					continue;
				}
				/* the process the core knows is alive and
				 * is the one the shell spawned there */
				fproc  *f    = sh_proc(sh, p->pid);
				sv_wkey want = {g->id, o, p->generation};
				assert_true(f->alive);
				assert_true(key_eq(f->key, want));
			}
		}
		assert_int_equal(glive, g->live);
		assert_int_equal(npend, g->npending);
		assert_int_equal(unready, g->unready);
		assert_int_equal(held, g->ords.held);
		live += glive;
	}
	assert_int_equal(live, sv_core_live(sh->c));
	/* every seat event found its cell in the seat table */
	assert_int_equal(sh->c->misfires, 0);
	/* every process alive in the fake OS is known to the core */
	while (sh->alive_lo < sh->nprocs && !sh->procs[sh->alive_lo].alive) {
		sh->alive_lo++;
	}
	for (size_t i = sh->alive_lo; i < sh->nprocs; i++) {
		const fproc     *f = &sh->procs[i];
		const sv_cgroup *g;
		const sv_seat   *s;
		if (!f->alive) {
			continue;
		}
		g = sv_core_group(sh->c, f->key.group_id);
		assert_non_null(g);
		assert_true(f->key.ordinal < g->nseats);
		s = &g->seats[f->key.ordinal];
		assert_true((s->cur.state >= SV_PROC_STARTING
		                && s->cur.pid == PID_BASE + (int64_t) i)
		    || (sv_core_seat_old(sh->c, s)->state != SV_PROC_NONE
		        && sv_core_seat_old(sh->c, s)->pid
		            == PID_BASE + (int64_t) i));
	}
	if (sh->ticket_out) {
		const sv_cgroup *g = sv_core_group(sh->c, sh->ticket.group_id);
		assert_non_null(g);
		assert_int_equal(
		    g->seats[sh->ticket.ordinal].cur.state, SV_PROC_SPAWNING);
	}
	assert_int_equal(sv_core_done(sh->c),
	    sv_core_shutting_down(sh->c) && sv_core_live(sh->c) == 0);
}

/* ---- policies ------------------------------------------------------------
 */

/* pol_plain: permanent, no backoff, no intensity limit, SIGTERM with a
 * 5 s stop timeout that escalates, no readiness, no watchdog. */
static sv_group_policy
pol_plain(void)
{
	sv_group_policy p = {0};

	p.restart          = SV_RESTART_PERMANENT;
	p.backoff          = (sv_backoff_policy) {0, 100, 30000, 2.0};
	p.max_restarts     = 0;
	p.max_window_ms    = 0;
	p.stop_signal      = SIGTERM;
	p.stop_timeout_ms  = 5000;
	p.on_unresponsive  = SV_UNRESPONSIVE_ESCALATE;
	p.need_ready       = false;
	p.sequential       = false;
	p.start_timeout_ms = 0;
	p.on_start_timeout = SV_START_TIMEOUT_KILL;
	p.watchdog_ms      = 0;
	return p;
}

/* ---- restart type x strategy x exit kind ---------------------------------
 */

typedef enum exit_kind {
	K_EXIT0,
	K_EXIT1,
	K_SIGNAL,
	K_STOP, /* terminate_one */
	K_SCALE, /* scale-down */
	K_SHUTDOWN,
} exit_kind;

static const char *const kind_names[]
    = {"exit 0", "exit 1", "signal", "stop", "scale-down", "shutdown"};

/* A seat of the table's two groups: a0 a1 b0 b1 in start order. */
enum { A0, A1, B0, B1 };

/* run_case: groups a (restart type rt) and b (permanent), two workers
 * each; worker a/1 ends by kind k; check the outcome. */
static void
run_case(sv_restart_type rt, sv_strategy st, exit_kind k)
{
	shell           sh;
	sv_group_policy pa = pol_plain(), pb = pol_plain();
	uint32_t        a, b, ids[4];
	int64_t         pid[4];
	uint64_t        gen[4];
	size_t          ev0, sig0, sp0, nalive;
	bool            natural  = k <= K_SIGNAL;
	bool            abnormal = k == K_EXIT1 || k == K_SIGNAL;
	bool            restart, released;
	int             stops[4], nstops = 0, starts[4], nstarts = 0;
	sv_why          stopped_why = SV_WHY_NONE;

	print_message("case %s x %s x %s\n", sv_restart_type_name(rt),
	    sv_strategy_name(st), kind_names[k]);
	restart = natural
	    && (rt == SV_RESTART_PERMANENT
	        || (rt == SV_RESTART_TRANSIENT && abnormal));
	released   = (natural && !restart) || k == K_STOP || k == K_SCALE;
	pa.restart = rt;
	sh_init(&sh, st);
	a = sh_group(&sh, "a", &pa, 2, 4);
	b = sh_group(&sh, "b", &pb, 2, 4);
	assert_int_equal(sh_spawn_all(&sh), 4);
	ids[A0] = a;
	ids[A1] = a;
	ids[B0] = b;
	ids[B1] = b;
	for (int i = 0; i < 4; i++) {
		/* start order: config order, then ordinal */
		assert_int_equal(sh.spawns[i].group_id, ids[i]);
		assert_int_equal(sh.spawns[i].ordinal, (uint32_t) (i % 2));
		pid[i] = sh_pid(&sh, ids[i], (uint32_t) (i % 2));
		gen[i] = S(&sh, ids[i], (uint32_t) (i % 2))->cur.generation;
		assert_int_equal(sv_core_seat_state(G(&sh, ids[i]),
		                     S(&sh, ids[i], (uint32_t) (i % 2))),
		    SV_SEAT_RUNNING);
	}
	check_core(&sh);
	ev0    = sh.nevs;
	sig0   = sh.nsigs;
	sp0    = sh.nspawns;
	sh.now = 10000;

	switch (k) {
	case K_EXIT0:
		sh_exit_pid(&sh, pid[A1], x_code(0));
		break;
	case K_EXIT1:
		sh_exit_pid(&sh, pid[A1], x_code(1));
		break;
	case K_SIGNAL:
		sh_exit_pid(&sh, pid[A1], x_sig(SIGSEGV));
		break;
	case K_STOP:
		assert_int_equal(
		    sv_core_terminate_one(sh.c, a, 1, sh.now), SV_OK);
		sh_drain(&sh);
		stopped_why = SV_WHY_UNWANTED;
		break;
	case K_SCALE:
		assert_int_equal(
		    sv_core_scale(sh.c, a, 1, NULL, sh.now), SV_OK);
		sh_drain(&sh);
		stopped_why = SV_WHY_UNWANTED;
		break;
	case K_SHUTDOWN:
		sv_core_shutdown(sh.c, sh.now);
		sh_drain(&sh);
		stopped_why = SV_WHY_SHUTDOWN;
		/* every worker is signalled at once, reverse start order */
		assert_int_equal(sh.nsigs - sig0, 4);
		break;
	}
	if (natural) {
		stopped_why = restart ? SV_WHY_NONE : SV_WHY_COMPLETED;
	}
	check_core(&sh);

	/* Let the shell run: spawn what is wanted, reap what was signalled
	 * in signal order. A strategy restart stops one sibling at a time. */
	for (int guard = 0; guard < 100; guard++) {
		int64_t p;
		if (sh_spawn_all(&sh) > 0) {
			check_core(&sh);
			continue;
		}
		p = sh_alive_signalled(&sh, sig0, &nalive);
		if (p == 0) {
			break;
		}
		if (k != K_SHUTDOWN) {
			assert_int_equal(nalive, 1);
		}
		sh.now += 10;
		sh_exit_pid(&sh, p, x_sig(SIGTERM));
		check_core(&sh);
	}
	assert_int_equal(sh_alive_signalled(&sh, sig0, NULL), 0);

	/* Which processes were signalled, in order, and with what. */
	if (k == K_SHUTDOWN) {
		stops[nstops++] = B1;
		stops[nstops++] = B0;
		stops[nstops++] = A1;
		stops[nstops++] = A0;
	} else if (k == K_STOP || k == K_SCALE) {
		stops[nstops++] = A1;
	} else if (restart && st == SV_STRATEGY_ONE_FOR_ALL) {
		stops[nstops++] = B1;
		stops[nstops++] = B0;
		stops[nstops++] = A0;
	} else if (restart && st == SV_STRATEGY_REST_FOR_ONE) {
		stops[nstops++] = B1;
		stops[nstops++] = B0;
	}
	assert_int_equal(sh.nsigs - sig0, (size_t) nstops);
	for (int i = 0; i < nstops; i++) {
		assert_int_equal(
		    sh.sigs[sig0 + (size_t) i].pid, pid[stops[i]]);
		assert_int_equal(sh.sigs[sig0 + (size_t) i].signo, SIGTERM);
	}
	/* Which seats started again, in order, each with a new generation. */
	if (restart && st == SV_STRATEGY_ONE_FOR_ALL) {
		starts[nstarts++] = A0;
		starts[nstarts++] = A1;
		starts[nstarts++] = B0;
		starts[nstarts++] = B1;
	} else if (restart && st == SV_STRATEGY_REST_FOR_ONE) {
		starts[nstarts++] = A1;
		starts[nstarts++] = B0;
		starts[nstarts++] = B1;
	} else if (restart) {
		starts[nstarts++] = A1;
	}
	assert_int_equal(sh.nspawns - sp0, (size_t) nstarts);
	for (int i = 0; i < nstarts; i++) {
		const sv_wkey *t = &sh.spawns[sp0 + (size_t) i];
		assert_int_equal(t->group_id, ids[starts[i]]);
		assert_int_equal(t->ordinal, (uint32_t) (starts[i] % 2));
		assert_int_equal(t->generation, gen[starts[i]] + 1);
	}

	/* Events about a/1. */
	assert_int_equal(sh_nev(&sh, ev0, SV_EV_EXITED, a, 1), 1);
	assert_int_equal(sh_ev(&sh, ev0, SV_EV_EXITED, a, 1)->why,
	    natural ? SV_WHY_NONE : stopped_why);
	assert_int_equal(sh_ev(&sh, ev0, SV_EV_EXITED, a, 1)->pid, pid[A1]);
	assert_int_equal(
	    sh_nev(&sh, ev0, SV_EV_RESTART_SCHEDULED, a, 1), restart ? 1 : 0);
	if (restart) {
		assert_int_equal(
		    sh_ev(&sh, ev0, SV_EV_RESTART_SCHEDULED, a, 1)->delay_ms,
		    0);
		assert_int_equal(
		    sh_nev(&sh, ev0, SV_EV_STOPPED, 0, UINT32_MAX), 0);
		assert_int_equal(sv_core_seat_state(G(&sh, a), S(&sh, a, 1)),
		    SV_SEAT_RUNNING);
	} else {
		assert_int_equal(sh_nev(&sh, ev0, SV_EV_STOPPED, a, 1), 1);
		assert_int_equal(
		    sh_ev(&sh, ev0, SV_EV_STOPPED, a, 1)->why, stopped_why);
	}
	if (k == K_STOP || k == K_SCALE) {
		assert_int_equal(sh_ev(&sh, ev0, SV_EV_STOPPING, a, 1)->why,
		    SV_WHY_UNWANTED);
	}
	/* Siblings stopped by the strategy say so. */
	if (restart && st != SV_STRATEGY_ONE_FOR_ONE) {
		assert_int_equal(
		    sh_ev(&sh, ev0, SV_EV_EXITED, b, 1)->why, SV_WHY_STRATEGY);
		assert_int_equal(sh_ev(&sh, ev0, SV_EV_STOPPING, b, 0)->why,
		    SV_WHY_STRATEGY);
	}
	/* The ordinal. */
	assert_int_equal(sv_ordinals_is_held(&G(&sh, a)->ords, 1), !released);
	assert_int_equal(sv_core_group_count(G(&sh, a)), released ? 1 : 2);
	assert_int_equal(sv_core_group_count(G(&sh, b)), 2);
	if (released) {
		assert_int_equal(sv_core_seat_state(G(&sh, a), S(&sh, a, 1)),
		    SV_SEAT_EMPTY);
	}
	if (k == K_SHUTDOWN) {
		assert_int_equal(
		    sh_nev(&sh, ev0, SV_EV_STOPPED, 0, UINT32_MAX), 4);
		assert_true(sv_core_done(sh.c));
		assert_false(sh_pull(&sh));
		assert_int_equal(
		    sv_core_seat_state(G(&sh, a), S(&sh, a, 0)), SV_SEAT_IDLE);
	} else {
		assert_false(sv_core_done(sh.c));
		assert_int_equal(sv_core_live(sh.c), restart ? 4 : 3);
	}
	/* No timer is left but those of the running processes' stops. */
	for (size_t i = 0; i < sh.ntimers; i++) {
		assert_int_not_equal(sh.timers[i].kind, SV_TIMER_SEAT);
		assert_int_not_equal(sh.timers[i].kind, SV_TIMER_PLAN);
	}
	assert_int_equal(sh.ntimers, 0);
	check_core(&sh);
	sh_fini(&sh);
}

/* Every restart type x strategy x exit kind. */
static void
test_table(void **state)
{
	(void) state;
	for (int rt = SV_RESTART_PERMANENT; rt <= SV_RESTART_TEMPORARY; rt++) {
		for (int st = SV_STRATEGY_ONE_FOR_ONE;
		     st <= SV_STRATEGY_REST_FOR_ONE; st++) {
			for (int k = K_EXIT0; k <= K_SHUTDOWN; k++) {
				run_case((sv_restart_type) rt,
				    (sv_strategy) st, (exit_kind) k);
			}
		}
	}
}

/* one_for_all: temporary siblings stopped by the strategy are not started
 * again and give their ordinals back; transient ones are. */
static void
test_strategy_sibling_types(void **state)
{
	shell           sh;
	sv_group_policy pa = pol_plain(), pt = pol_plain(), pr = pol_plain();
	uint32_t        a, t, r;
	size_t          ev0, sp0;

	(void) state;
	pt.restart = SV_RESTART_TEMPORARY;
	pr.restart = SV_RESTART_TRANSIENT;
	sh_init(&sh, SV_STRATEGY_ONE_FOR_ALL);
	a = sh_group(&sh, "a", &pa, 1, 1);
	t = sh_group(&sh, "t", &pt, 2, 2);
	r = sh_group(&sh, "r", &pr, 1, 1);
	assert_int_equal(sh_spawn_all(&sh), 4);
	ev0 = sh.nevs;
	sp0 = sh.nspawns;
	sh_exit(&sh, a, 0, x_code(3));
	for (int i = 0; i < 10; i++) {
		int64_t p = sh_alive_signalled(&sh, 0, NULL);
		if (p == 0) {
			break;
		}
		sh_exit_pid(&sh, p, x_sig(SIGTERM));
		check_core(&sh);
	}
	assert_int_equal(sh_spawn_all(&sh), 2);
	assert_int_equal(sh.spawns[sp0].group_id, a);
	assert_int_equal(sh.spawns[sp0 + 1].group_id, r);
	assert_int_equal(sv_core_group_count(G(&sh, t)), 0);
	assert_int_equal(sh_nev(&sh, ev0, SV_EV_STOPPED, t, UINT32_MAX), 2);
	assert_int_equal(
	    sh_ev(&sh, ev0, SV_EV_STOPPED, t, 1)->why, SV_WHY_COMPLETED);
	assert_int_equal(sh_nev(&sh, ev0, SV_EV_STOPPED, r, UINT32_MAX), 0);
	/* A temporary or a transient worker that completes does not restart
	 * its siblings. */
	ev0 = sh.nevs;
	sh_exit(&sh, r, 0, x_code(0));
	assert_int_equal(sh_nev(&sh, ev0, SV_EV_STOPPING, 0, UINT32_MAX), 0);
	assert_int_equal(sh_nev(&sh, ev0, SV_EV_STOPPED, r, 0), 1);
	check_core(&sh);
	sh_fini(&sh);
}

/* A strategy restart waits for the failed worker's backoff delay after
 * the siblings stopped (the plan timer), then starts all in start
 * order; a stale plan timer does nothing. */
static void
test_strategy_delay(void **state)
{
	shell           sh;
	sv_group_policy p = pol_plain();
	uint32_t        a;
	const ftimer   *pt;
	ftimer          saved;
	size_t          sp0;

	(void) state;
	p.backoff = (sv_backoff_policy) {1000, 100, 1000, 2.0};
	sh_init(&sh, SV_STRATEGY_REST_FOR_ONE);
	a = sh_group(&sh, "a", &p, 3, 3);
	assert_int_equal(sh_spawn_all(&sh), 3);
	sh.now = 50; /* uptime 50 < 1000: a fast failure */
	sh_exit(&sh, a, 1, x_code(1));
	assert_int_equal(
	    sh_ev(&sh, 0, SV_EV_RESTART_SCHEDULED, a, 1)->delay_ms, 100);
	assert_int_equal(
	    sv_core_seat_state(G(&sh, a), S(&sh, a, 1)), SV_SEAT_WAITING);
	assert_null(sh_timer(&sh, SV_TIMER_PLAN, (sv_wkey) {0, 0, 0}));
	sh.now = 60;
	sh_exit_pid(&sh, sh_alive_signalled(&sh, 0, NULL), x_sig(SIGTERM));
	pt = sh_timer(&sh, SV_TIMER_PLAN, (sv_wkey) {0, 0, 0});
	assert_non_null(pt);
	assert_int_equal(pt->due, 160);
	saved = *pt;
	assert_false(sh_pull(&sh));
	/* seat 0 never stopped: not in the range */
	assert_int_equal(
	    sv_core_seat_state(G(&sh, a), S(&sh, a, 0)), SV_SEAT_RUNNING);
	sh_advance(&sh, 159);
	assert_false(sh_pull(&sh));
	sp0 = sh.nspawns;
	sh_advance(&sh, 160);
	assert_int_equal(sh_spawn_all(&sh), 2);
	assert_int_equal(sh.spawns[sp0].ordinal, 1);
	assert_int_equal(sh.spawns[sp0 + 1].ordinal, 2);
	/* The same plan timer firing again (stale) starts nothing. */
	sv_core_timer(sh.c, SV_TIMER_PLAN, saved.key, saved.guard, 170);
	sh_drain(&sh);
	assert_false(sh_pull(&sh));
	check_core(&sh);
	sh_fini(&sh);
}

/* ---- restart intensity ---------------------------------------------------
 */

/* fail_at makes worker 0 of group a fail at time t and restarts it. */
static void
fail_at(shell *sh, uint32_t a, uint64_t t)
{
	sh->now = t;
	sh_exit(sh, a, 0, x_code(1));
	(void) sh_spawn_all(sh);
}

/* Exactly max restarts within the window are fine; max + 1 fails the
 * group: GROUP_FAILED with the reason, the other workers stopped, nothing
 * restarts; reset clears it and starts the group again. */
static void
test_intensity_edges(void **state)
{
	shell           sh;
	sv_group_policy p = pol_plain();
	uint32_t        a, other;
	size_t          ev0;
	const sv_event *e;

	(void) state;
	p.max_restarts  = 3;
	p.max_window_ms = 10000;
	sh_init(&sh, SV_STRATEGY_ONE_FOR_ONE);
	a     = sh_group(&sh, "a", &p, 2, 2);
	other = sh_group(&sh, "other", &p, 1, 1);
	assert_int_equal(sh_spawn_all(&sh), 3);
	fail_at(&sh, a, 1000);
	fail_at(&sh, a, 2000);
	fail_at(&sh, a, 3000);
	assert_int_equal(sh_nev(&sh, 0, SV_EV_RESTART_SCHEDULED, a, 0), 3);
	assert_false(G(&sh, a)->failed);
	assert_int_equal(sh_nev(&sh, 0, SV_EV_GROUP_FAILED, 0, UINT32_MAX), 0);
	ev0    = sh.nevs;
	sh.now = 4000;
	sh_exit(&sh, a, 0, x_code(1));
	assert_true(G(&sh, a)->failed);
	assert_int_equal(sh_nev(&sh, ev0, SV_EV_RESTART_SCHEDULED, a, 0), 0);
	/* the failing worker comes to rest, once, because the group failed */
	assert_int_equal(sh_nev(&sh, ev0, SV_EV_STOPPED, a, 0), 1);
	assert_int_equal(
	    sh_ev(&sh, ev0, SV_EV_STOPPED, a, 0)->why, SV_WHY_FAILED);
	e = sh_ev(&sh, ev0, SV_EV_GROUP_FAILED, a, UINT32_MAX);
	assert_int_equal(e->group_id, a);
	for (size_t i = ev0; i < sh.nevs; i++) {
		if (sh.evs[i].ev.kind == SV_EV_GROUP_FAILED) {
			assert_non_null(
			    strstr(sh.evs[i].reason, "3 restarts"));
		}
	}
	assert_string_equal(
	    G(&sh, a)->reason, "more than 3 restarts within 10000 ms");
	/* the sibling in the group is stopped, the other group is not */
	assert_int_equal(
	    sh_ev(&sh, ev0, SV_EV_STOPPING, a, 1)->why, SV_WHY_FAILED);
	assert_int_equal(
	    sh_nev(&sh, ev0, SV_EV_STOPPING, other, UINT32_MAX), 0);
	assert_int_equal(sh.sigs[sh.nsigs - 1].pid, sh_pid(&sh, a, 1));
	sh_exit(&sh, a, 1, x_sig(SIGTERM));
	assert_int_equal(
	    sh_ev(&sh, ev0, SV_EV_STOPPED, a, 1)->why, SV_WHY_FAILED);
	assert_int_equal(sh_nev(&sh, ev0, SV_EV_STOPPED, a, UINT32_MAX), 2);
	assert_false(sh_pull(&sh));
	assert_int_equal(
	    sv_core_seat_state(G(&sh, a), S(&sh, a, 0)), SV_SEAT_FAILED);
	assert_int_equal(
	    sv_core_seat_state(G(&sh, a), S(&sh, a, 1)), SV_SEAT_FAILED);
	/* The ordinals stay held; restart is refused while failed. */
	assert_int_equal(sv_core_group_count(G(&sh, a)), 2);
	assert_int_equal(
	    sv_core_restart(sh.c, a, 0, false, 0, 5000), SV_EBUSY);
	check_core(&sh);
	/* reset: event, both start again, and the history is gone (three
	 * more failures are fine at once). */
	ev0 = sh.nevs;
	assert_int_equal(sv_core_reset(sh.c, a, 5000), SV_OK);
	sh_drain(&sh);
	assert_int_equal(
	    sh_nev(&sh, ev0, SV_EV_GROUP_RESET, a, UINT32_MAX), 1);
	assert_false(G(&sh, a)->failed);
	assert_string_equal(G(&sh, a)->reason, "");
	assert_int_equal(sh_spawn_all(&sh), 2);
	fail_at(&sh, a, 5001);
	fail_at(&sh, a, 5002);
	fail_at(&sh, a, 5003);
	assert_false(G(&sh, a)->failed);
	fail_at(&sh, a, 5004);
	assert_true(G(&sh, a)->failed);
	check_core(&sh);
	sh_fini(&sh);
}

/* one_spawned starts sh (one for one) with group "a" of one seat under p
 * and spawns its worker; returns the group's id. */
static uint32_t
one_spawned(shell *sh, const sv_group_policy *p)
{
	uint32_t a;

	sh_init(sh, SV_STRATEGY_ONE_FOR_ONE);
	a = sh_group(sh, "a", p, 1, 1);
	assert_int_equal(sh_spawn_all(sh), 1);
	return a;
}

/* The window slides: failures at 0, 4000, 8000 (three, max 3, window
 * 10 s); at 10000 the one at 0 has left the window; at 13999 the one at
 * 4000 is still in it (fails), at 14000 it is not (passes). */
static void
test_intensity_sliding(void **state)
{
	for (int variant = 0; variant < 2; variant++) {
		shell           sh;
		sv_group_policy p = pol_plain();
		uint32_t        a;

		(void) state;
		p.max_restarts  = 3;
		p.max_window_ms = 10000;
		a               = one_spawned(&sh, &p);
		fail_at(&sh, a, 0);
		fail_at(&sh, a, 4000);
		fail_at(&sh, a, 8000);
		fail_at(&sh, a, 10000);
		assert_false(G(&sh, a)->failed);
		if (variant == 0) {
			fail_at(&sh, a, 13999);
			assert_true(G(&sh, a)->failed);
		} else {
			fail_at(&sh, a, 14000);
			assert_false(G(&sh, a)->failed);
			assert_int_equal(
			    sh_nev(&sh, 0, SV_EV_RESTART_SCHEDULED, a, 0), 5);
		}
		check_core(&sh);
		sh_fini(&sh);
	}
}

/* A failure during a strategy restart counts; when it exceeds the
 * intensity the group fails and every seat comes to rest exactly once
 * with why "failed". A temporary worker that ends during a strategy
 * restart is done: it is not restarted and does not count. */
static void
test_intensity_in_plan(void **state)
{
	shell           sh;
	sv_group_policy p = pol_plain(), pt = pol_plain();
	uint32_t        a, t;
	size_t          ev0;

	(void) state;
	p.max_restarts  = 1;
	p.max_window_ms = 100000;
	sh_init(&sh, SV_STRATEGY_ONE_FOR_ALL);
	a = sh_group(&sh, "a", &p, 3, 3);
	assert_int_equal(sh_spawn_all(&sh), 3);
	ev0    = sh.nevs;
	sh.now = 10;
	sh_exit(&sh, a, 0, x_code(1)); /* restart 1 of 1: a plan */
	assert_int_equal(sh_nev(&sh, ev0, SV_EV_STOPPING, a, 2), 1);
	sh_exit(&sh, a, 1, x_code(1)); /* in the plan: the 2nd, too many */
	assert_true(G(&sh, a)->failed);
	assert_int_equal(
	    sh_nev(&sh, ev0, SV_EV_GROUP_FAILED, a, UINT32_MAX), 1);
	sh_exit(&sh, a, 2, x_sig(SIGTERM));
	for (uint32_t o = 0; o < 3; o++) {
		assert_int_equal(sh_nev(&sh, ev0, SV_EV_STOPPED, a, o), 1);
		assert_int_equal(
		    sh_ev(&sh, ev0, SV_EV_STOPPED, a, o)->why, SV_WHY_FAILED);
	}
	assert_false(sh_pull(&sh));
	check_core(&sh);
	sh_fini(&sh);

	pt.restart       = SV_RESTART_TEMPORARY;
	pt.max_restarts  = 1;
	pt.max_window_ms = 100000;
	sh_init(&sh, SV_STRATEGY_ONE_FOR_ALL);
	a = sh_group(&sh, "a", &p, 1, 1);
	t = sh_group(&sh, "t", &pt, 3, 3);
	assert_int_equal(sh_spawn_all(&sh), 4);
	ev0    = sh.nevs;
	sh.now = 10;
	sh_exit(&sh, a, 0, x_code(1)); /* plan: stops t/2 first */
	assert_int_equal(sh_nev(&sh, ev0, SV_EV_STOPPING, t, 2), 1);
	sh_exit(&sh, t, 0, x_code(0));
	sh_exit(&sh, t, 1, x_code(7));
	assert_false(G(&sh, t)->failed);
	assert_int_equal(
	    sh_ev(&sh, ev0, SV_EV_STOPPED, t, 0)->why, SV_WHY_COMPLETED);
	assert_int_equal(
	    sh_ev(&sh, ev0, SV_EV_STOPPED, t, 1)->why, SV_WHY_COMPLETED);
	sh_exit(&sh, t, 2, x_sig(SIGTERM));
	assert_int_equal(sv_core_group_count(G(&sh, t)), 0);
	assert_int_equal(sh_spawn_all(&sh), 1); /* a/0 only */
	check_core(&sh);
	sh_fini(&sh);
}

/* ---- backoff -------------------------------------------------------------
 */

/* fast_fail: worker 0 of a runs for `run` ms and fails; returns the
 * RESTART_SCHEDULED delay and waits it out (spawning the next one). */
static uint64_t
fast_fail(shell *sh, uint32_t a, uint64_t run, uint32_t *attempt)
{
	size_t          ev0 = sh->nevs;
	const sv_event *e;
	uint64_t        d;

	sh->now += run;
	sh_exit(sh, a, 0, x_code(1));
	e = sh_ev(sh, ev0, SV_EV_RESTART_SCHEDULED, a, 0);
	d = e->delay_ms;
	if (attempt != NULL) {
		*attempt = e->attempt;
	}
	if (d > 0) {
		const ftimer *t
		    = sh_timer(sh, SV_TIMER_SEAT, (sv_wkey) {a, 0, 0});
		assert_non_null(t);
		assert_int_equal(t->due, sh->now + d);
		assert_int_equal(sv_core_seat_state(G(sh, a), S(sh, a, 0)),
		    SV_SEAT_BACKOFF);
		assert_false(sh_pull(sh));
		sh_advance(sh, sh->now + d - 1);
		assert_false(sh_pull(sh));
		sh_advance(sh, sh->now + 1);
	}
	assert_int_equal(sh_spawn_all(sh), 1);
	return d;
}

/* Delays of consecutive fast failures: 100, 200, 400, 800, then the cap
 * 1000; a healthy run restarts at once and starts the sequence again. */
static void
test_backoff_sequence(void **state)
{
	shell           sh;
	sv_group_policy p = pol_plain();
	uint32_t        a, attempt;

	(void) state;
	p.backoff = (sv_backoff_policy) {1000, 100, 1000, 2.0};
	a         = one_spawned(&sh, &p);
	assert_int_equal(fast_fail(&sh, a, 10, &attempt), 100);
	assert_int_equal(attempt, 1);
	assert_int_equal(fast_fail(&sh, a, 10, &attempt), 200);
	assert_int_equal(attempt, 2);
	assert_int_equal(fast_fail(&sh, a, 999, NULL), 400);
	assert_int_equal(fast_fail(&sh, a, 10, NULL), 800);
	assert_int_equal(fast_fail(&sh, a, 10, NULL), 1000);
	assert_int_equal(fast_fail(&sh, a, 10, &attempt), 1000);
	assert_int_equal(attempt, 6);
	/* a healthy run: immediate, attempt 0 */
	assert_int_equal(fast_fail(&sh, a, 1000, &attempt), 0);
	assert_int_equal(attempt, 0);
	assert_int_equal(fast_fail(&sh, a, 10, NULL), 100);
	assert_int_equal(S(&sh, a, 0)->restarts, 8);
	check_core(&sh);
	sh_fini(&sh);
}

/* An operator restart clears the history: of a worker waiting in backoff
 * (it starts now) and of a live one (stopped, started at once); the next
 * failure waits the initial delay again. */
static void
test_backoff_operator_restart(void **state)
{
	shell           sh;
	sv_group_policy p = pol_plain();
	uint32_t        a;
	size_t          ev0, sig0;
	uint64_t        g0;

	(void) state;
	p.backoff = (sv_backoff_policy) {1000, 100, 30000, 2.0};
	a         = one_spawned(&sh, &p);
	for (int i = 0; i < 6; i++) {
		(void) fast_fail(&sh, a, 10, NULL);
	}
	/* the 7th fast failure would wait 6400 ms */
	sh.now += 10;
	sh_exit(&sh, a, 0, x_code(1));
	assert_int_equal(
	    sv_core_seat_state(G(&sh, a), S(&sh, a, 0)), SV_SEAT_BACKOFF);
	assert_int_equal(
	    sh_timer(&sh, SV_TIMER_SEAT, (sv_wkey) {a, 0, 0})->due,
	    sh.now + 6400);
	g0 = S(&sh, a, 0)->tok.generation;
	assert_int_equal(sv_core_restart(sh.c, a, 0, true, g0, sh.now), SV_OK);
	sh_drain(&sh);
	assert_null(sh_timer(&sh, SV_TIMER_SEAT, (sv_wkey) {a, 0, 0}));
	assert_int_equal(
	    sv_core_seat_state(G(&sh, a), S(&sh, a, 0)), SV_SEAT_STARTING);
	assert_int_equal(sh_spawn_all(&sh), 1);
	assert_int_equal(fast_fail(&sh, a, 10, NULL), 100);
	assert_int_equal(fast_fail(&sh, a, 10, NULL), 200);
	/* a live worker: stopped, restarted at once when reaped, and the
	 * next failure waits 100 again */
	ev0  = sh.nevs;
	sig0 = sh.nsigs;
	assert_int_equal(sv_core_restart(sh.c, a, 0, false, 0, sh.now), SV_OK);
	sh_drain(&sh);
	assert_int_equal(sh.nsigs - sig0, 1);
	assert_int_equal(sh.sigs[sig0].signo, SIGTERM);
	assert_int_equal(
	    sh_ev(&sh, ev0, SV_EV_STOPPING, a, 0)->why, SV_WHY_RESTART);
	sh.now += 5;
	sh_exit(&sh, a, 0, x_sig(SIGTERM));
	assert_int_equal(sh_nev(&sh, ev0, SV_EV_RESTART_SCHEDULED, a, 0), 0);
	assert_int_equal(sh_spawn_all(&sh), 1);
	assert_int_equal(fast_fail(&sh, a, 10, NULL), 100);
	check_core(&sh);
	sh_fini(&sh);
}

/* A scheduled restart is cancelled by a stop, a scale-down or a shutdown:
 * the cancel effect is issued and a late timer with the old guard does
 * nothing, even after the seat was wanted again. */
static void
test_backoff_cancelled(void **state)
{
	shell           sh;
	sv_group_policy p = pol_plain();
	uint32_t        a;
	ftimer          old;
	size_t          ev0;

	(void) state;
	p.backoff = (sv_backoff_policy) {1000, 500, 30000, 2.0};
	sh_init(&sh, SV_STRATEGY_ONE_FOR_ONE);
	a = sh_group(&sh, "a", &p, 2, 2);
	assert_int_equal(sh_spawn_all(&sh), 2);

	/* terminate_one during backoff */
	sh.now = 10;
	sh_exit(&sh, a, 1, x_code(1));
	old = seat_timer(&sh, a, 1);
	ev0 = sh.nevs;
	assert_int_equal(sv_core_terminate_one(sh.c, a, 1, sh.now), SV_OK);
	sh_drain(&sh);
	assert_null(sh_timer(&sh, SV_TIMER_SEAT, (sv_wkey) {a, 1, 0}));
	assert_int_equal(
	    sh_ev(&sh, ev0, SV_EV_STOPPED, a, 1)->why, SV_WHY_UNWANTED);
	sv_core_timer(sh.c, old.kind, old.key, old.guard, 1000);
	sh_drain(&sh);
	assert_false(sh_pull(&sh));
	assert_int_equal(sv_core_group_count(G(&sh, a)), 1);

	/* scale-down during backoff, scale up again: one start only, and the
	 * old timer is ignored */
	sh.now = 20; /* uptime 20: fast */
	sh_exit(&sh, a, 0, x_code(1));
	old = seat_timer(&sh, a, 0);
	assert_int_equal(sv_core_scale(sh.c, a, 0, NULL, sh.now), SV_OK);
	sh_drain(&sh);
	assert_null(sh_timer(&sh, SV_TIMER_SEAT, (sv_wkey) {a, 0, 0}));
	assert_int_equal(sv_core_scale(sh.c, a, 1, NULL, sh.now), SV_OK);
	sh_drain(&sh);
	assert_int_equal(sh_spawn_all(&sh), 1);
	sv_core_timer(sh.c, old.kind, old.key, old.guard, old.due);
	sh_drain(&sh);
	assert_false(sh_pull(&sh));
	check_core(&sh);

	/* shutdown during backoff */
	sh.now = 30;
	sh_exit(&sh, a, 0, x_code(1));
	old = seat_timer(&sh, a, 0);
	sv_core_shutdown(sh.c, sh.now);
	sh_drain(&sh);
	assert_null(sh_timer(&sh, SV_TIMER_SEAT, (sv_wkey) {a, 0, 0}));
	sv_core_timer(sh.c, old.kind, old.key, old.guard, old.due);
	sh_drain(&sh);
	assert_false(sh_pull(&sh));
	assert_true(sv_core_done(sh.c));
	check_core(&sh);
	sh_fini(&sh);
}

/* ---- readiness -----------------------------------------------------------
 */

/* need_ready: STARTING until sv_core_ready; with `sequential`, ordinal
 * k+1 is spawned only once k is ready. */
static void
test_ready_sequential(void **state)
{
	shell           sh;
	sv_group_policy p = pol_plain();
	uint32_t        a;
	size_t          ev0;

	(void) state;
	p.need_ready = true;
	p.sequential = true;
	sh_init(&sh, SV_STRATEGY_ONE_FOR_ONE);
	a = sh_group(&sh, "a", &p, 3, 3);
	for (uint32_t o = 0; o < 3; o++) {
		assert_int_equal(sh_spawn_all(&sh), 1);
		assert_int_equal(sh.spawns[sh.nspawns - 1].ordinal, o);
		assert_int_equal(S(&sh, a, o)->cur.state, SV_PROC_STARTING);
		assert_false(S(&sh, a, o)->cur.ready);
		assert_int_equal(sv_core_seat_state(G(&sh, a), S(&sh, a, o)),
		    SV_SEAT_STARTING);
		assert_false(sh_pull(&sh));
		sh.now += 100;
		ev0 = sh.nevs;
		assert_int_equal(
		    sv_core_ready(sh.c, sh_key(&sh, a, o), sh.now), SV_OK);
		sh_drain(&sh);
		assert_int_equal(sh_nev(&sh, ev0, SV_EV_READY, a, o), 1);
		assert_int_equal(S(&sh, a, o)->cur.state, SV_PROC_RUNNING);
		assert_true(S(&sh, a, o)->cur.ready);
		/* a second ready changes nothing */
		assert_int_equal(
		    sv_core_ready(sh.c, sh_key(&sh, a, o), sh.now), SV_OK);
		sh_drain(&sh);
		assert_int_equal(sh_nev(&sh, ev0, SV_EV_READY, a, o), 1);
		check_core(&sh);
	}
	assert_false(sh_pull(&sh));
	/* unknown process */
	assert_int_equal(
	    sv_core_ready(sh.c, (sv_wkey) {a, 0, 99}, sh.now), SV_ENOTFOUND);
	assert_int_equal(
	    sv_core_ready(sh.c, (sv_wkey) {999, 0, 0}, sh.now), SV_ENOTFOUND);
	assert_int_equal(sv_core_heartbeat(sh.c, (sv_wkey) {a, 7, 0}, sh.now),
	    SV_ENOTFOUND);
	sh_fini(&sh);
}

/* start_timed_out starts sh with group "a" (id in *ap) of two seats that
 * need readiness and start in order, with a 500 ms start timeout and p's
 * other fields as the caller set them; spawns ordinal 0 and lets its
 * timeout pass (nothing at 499 ms). Returns its UNRESPONSIVE(start) event;
 * *ev0 and *sig0 are the counts of events and signals before it. */
static const sv_event *
start_timed_out(
    shell *sh, sv_group_policy *p, uint32_t *ap, size_t *ev0, size_t *sig0)
{
	const sv_event *e;

	p->need_ready       = true;
	p->sequential       = true;
	p->start_timeout_ms = 500;
	sh_init(sh, SV_STRATEGY_ONE_FOR_ONE);
	*ap = sh_group(sh, "a", p, 2, 2);
	assert_int_equal(sh_spawn_all(sh), 1);
	*ev0  = sh->nevs;
	*sig0 = sh->nsigs;
	sh_advance(sh, 499);
	assert_int_equal(sh->nevs, *ev0);
	sh_advance(sh, 500);
	e = sh_ev(sh, *ev0, SV_EV_UNRESPONSIVE, *ap, 0);
	assert_int_equal(e->phase, SV_PHASE_START);
	return e;
}

/* Start timeout with the kill action: UNRESPONSIVE(start), stopped with
 * why start_timeout, and it counts as a failure (intensity). */
static void
test_start_timeout_kill(void **state)
{
	shell           sh;
	sv_group_policy p = pol_plain();
	uint32_t        a;
	size_t          ev0, sig0;
	const sv_event *e;

	(void) state;
	p.max_restarts  = 1;
	p.max_window_ms = 60000;
	e               = start_timed_out(&sh, &p, &a, &ev0, &sig0);
	assert_false(e->abandon);
	assert_int_equal(
	    sh_ev(&sh, ev0, SV_EV_STOPPING, a, 0)->why, SV_WHY_START_TIMEOUT);
	assert_int_equal(sh.nsigs - sig0, 1);
	assert_int_equal(sh.sigs[sig0].signo, SIGTERM);
	sh.now = 600;
	sh_exit(&sh, a, 0, x_sig(SIGTERM));
	assert_int_equal(sh_nev(&sh, ev0, SV_EV_RESTART_SCHEDULED, a, 0), 1);
	/* ordinal 0 again (lowest first); ordinal 1 waits for it */
	assert_int_equal(sh_spawn_all(&sh), 1);
	assert_int_equal(sh.spawns[sh.nspawns - 1].ordinal, 0);
	/* a second timeout is the second failure: max_restarts 1 exceeded */
	ev0 = sh.nevs;
	sh_advance(&sh, 1100);
	assert_int_equal(sh_nev(&sh, ev0, SV_EV_UNRESPONSIVE, a, 0), 1);
	sh_exit(&sh, a, 0, x_sig(SIGTERM));
	assert_int_equal(
	    sh_nev(&sh, ev0, SV_EV_GROUP_FAILED, a, UINT32_MAX), 1);
	assert_false(sh_pull(&sh));
	check_core(&sh);
	sh_fini(&sh);
}

/* Start timeout with the abandon action: UNRESPONSIVE(start, abandon), no
 * signal; the ordered start moves on; a late ready still counts. */
static void
test_start_timeout_abandon(void **state)
{
	shell           sh;
	sv_group_policy p = pol_plain();
	uint32_t        a;
	size_t          ev0, sig0;
	const sv_event *e;

	(void) state;
	p.on_start_timeout = SV_START_TIMEOUT_ABANDON;
	e                  = start_timed_out(&sh, &p, &a, &ev0, &sig0);
	assert_true(e->abandon);
	assert_int_equal(sh.nsigs, sig0);
	assert_int_equal(sh_nev(&sh, ev0, SV_EV_STOPPING, a, 0), 0);
	assert_int_equal(S(&sh, a, 0)->cur.state, SV_PROC_STARTING);
	assert_int_equal(sh_spawn_all(&sh), 1); /* ordinal 1 now */
	assert_int_equal(sh.spawns[1].ordinal, 1);
	sh.now = 700;
	assert_int_equal(
	    sv_core_ready(sh.c, sh_key(&sh, a, 0), sh.now), SV_OK);
	sh_drain(&sh);
	assert_int_equal(sh_nev(&sh, ev0, SV_EV_READY, a, 0), 1);
	assert_int_equal(S(&sh, a, 0)->cur.state, SV_PROC_RUNNING);
	check_core(&sh);
	sh_fini(&sh);
}

/* Watchdog: heartbeats re-arm the timer (a stale guard does nothing); a
 * missed one stops the worker (SIGTERM) and restarts it, counting as a
 * failure. With readiness, the watchdog starts at ready. */
static void
test_watchdog(void **state)
{
	shell           sh;
	sv_group_policy p = pol_plain();
	uint32_t        a, r;
	size_t          ev0, sig0;
	ftimer          first;
	const ftimer   *t;
	sv_wkey         k;

	(void) state;
	p.watchdog_ms   = 1000;
	p.max_restarts  = 1;
	p.max_window_ms = 100000;
	a               = one_spawned(&sh, &p);
	k               = sh_key(&sh, a, 0);
	t               = sh_timer(&sh, SV_TIMER_PROC, k);
	first           = *t;
	assert_int_equal(first.due, 1000);
	sh.now = 900;
	assert_int_equal(sv_core_heartbeat(sh.c, k, sh.now), SV_OK);
	sh_drain(&sh);
	assert_int_equal(sh_timer(&sh, SV_TIMER_PROC, k)->due, 1900);
	sv_core_timer(sh.c, first.kind, first.key, first.guard, 1000);
	sh_drain(&sh);
	assert_int_equal(sh_nev(&sh, 0, SV_EV_UNRESPONSIVE, 0, UINT32_MAX), 0);
	sh.now = 1800;
	assert_int_equal(sv_core_heartbeat(sh.c, k, sh.now), SV_OK);
	sh_drain(&sh);
	ev0  = sh.nevs;
	sig0 = sh.nsigs;
	sh_advance(&sh, 2799);
	assert_int_equal(sh.nevs, ev0);
	sh_advance(&sh, 2800);
	assert_int_equal(sh_ev(&sh, ev0, SV_EV_UNRESPONSIVE, a, 0)->phase,
	    SV_PHASE_WATCHDOG);
	assert_int_equal(
	    sh_ev(&sh, ev0, SV_EV_STOPPING, a, 0)->why, SV_WHY_WATCHDOG);
	assert_int_equal(sh.nsigs - sig0, 1);
	assert_int_equal(sh.sigs[sig0].signo, SIGTERM);
	/* heartbeats of a stopping worker do not re-arm anything */
	assert_int_equal(sv_core_heartbeat(sh.c, k, sh.now), SV_OK);
	sh_drain(&sh);
	assert_int_equal(sh_timer(&sh, SV_TIMER_PROC, k)->due, 2800 + 5000);
	sh_exit(&sh, a, 0, x_sig(SIGTERM));
	assert_null(sh_timer(&sh, SV_TIMER_PROC, k));
	assert_int_equal(sh_nev(&sh, ev0, SV_EV_RESTART_SCHEDULED, a, 0), 1);
	assert_int_equal(sh_spawn_all(&sh), 1);
	k = sh_key(&sh, a, 0);
	assert_int_equal(k.generation, 1);
	assert_int_equal(sh_timer(&sh, SV_TIMER_PROC, k)->due, sh.now + 1000);
	/* the second miss is the second failure: the group fails */
	sh_advance(&sh, sh.now + 1000);
	sh_exit(&sh, a, 0, x_sig(SIGTERM));
	assert_true(G(&sh, a)->failed);

	/* with readiness: no watchdog before ready */
	p.need_ready = true;
	r            = sh_group(&sh, "r", &p, 1, 1);
	assert_int_equal(sh_spawn_all(&sh), 1);
	k = sh_key(&sh, r, 0);
	assert_null(sh_timer(&sh, SV_TIMER_PROC, k));
	sh.now += 300;
	assert_int_equal(sv_core_heartbeat(sh.c, k, sh.now), SV_OK);
	sh_drain(&sh);
	assert_null(sh_timer(&sh, SV_TIMER_PROC, k));
	assert_int_equal(sv_core_ready(sh.c, k, sh.now), SV_OK);
	sh_drain(&sh);
	assert_int_equal(sh_timer(&sh, SV_TIMER_PROC, k)->due, sh.now + 1000);
	check_core(&sh);
	sh_fini(&sh);
}

/* Stop timeout with escalate: SIGTERM (or the group's stop signal), then
 * at the timeout UNRESPONSIVE(stop), a SIGKILL signal effect and
 * ESCALATED; a zero stop timeout sends SIGKILL at once. */
static void
test_stop_escalate(void **state)
{
	shell           sh;
	sv_group_policy p = pol_plain();
	uint32_t        a, z;
	size_t          ev0, sig0;
	int64_t         pid;
	const sv_event *e;

	(void) state;
	p.stop_signal     = SIGINT;
	p.stop_timeout_ms = 1000;
	a                 = one_spawned(&sh, &p);
	pid               = sh_pid(&sh, a, 0);
	ev0               = sh.nevs;
	sig0              = sh.nsigs;
	assert_int_equal(sv_core_terminate_one(sh.c, a, 0, 0), SV_OK);
	sh_drain(&sh);
	assert_int_equal(sh.nsigs - sig0, 1);
	assert_int_equal(sh.sigs[sig0].signo, SIGINT);
	assert_int_equal(
	    sv_core_seat_state(G(&sh, a), S(&sh, a, 0)), SV_SEAT_STOPPING);
	sh_advance(&sh, 999);
	assert_int_equal(sh.nsigs - sig0, 1);
	sh_advance(&sh, 1000);
	e = sh_ev(&sh, ev0, SV_EV_UNRESPONSIVE, a, 0);
	assert_int_equal(e->phase, SV_PHASE_STOP);
	assert_false(e->abandon);
	assert_int_equal(sh_nev(&sh, ev0, SV_EV_ESCALATED, a, 0), 1);
	assert_int_equal(sh.nsigs - sig0, 2);
	assert_int_equal(sh.sigs[sig0 + 1].signo, SIGKILL);
	assert_int_equal(sh.sigs[sig0 + 1].pid, pid);
	assert_true(sh.sigs[sig0 + 1].pgroup);
	assert_int_equal(sh.ntimers, 0); /* no further timer */
	sh_exit_pid(&sh, pid, x_sig(SIGKILL));
	assert_int_equal(
	    sh_ev(&sh, ev0, SV_EV_STOPPED, a, 0)->why, SV_WHY_UNWANTED);
	check_core(&sh);

	p.stop_timeout_ms = 0;
	z                 = sh_group(&sh, "z", &p, 1, 1);
	assert_int_equal(sh_spawn_all(&sh), 1);
	sig0 = sh.nsigs;
	assert_int_equal(sv_core_scale(sh.c, z, 0, NULL, sh.now), SV_OK);
	sh_drain(&sh);
	assert_int_equal(sh.nsigs - sig0, 1);
	assert_int_equal(sh.sigs[sig0].signo, SIGKILL);
	assert_int_equal(sh.ntimers, 0);
	check_core(&sh);
	sh_fini(&sh);
}

/* Stop timeout with abandon: the process moves to the seat's old record,
 * the seat carries on (an operator restart starts a new process at once)
 * and the old one's later exit is handled; a second abandon while the old
 * record is taken sends SIGKILL instead; shutdown kills the abandoned. */
static void
test_stop_abandon(void **state)
{
	shell           sh;
	sv_group_policy p = pol_plain();
	uint32_t        a;
	size_t          ev0, sig0;
	int64_t         oldpid, newpid;
	uint64_t        oldgen;
	const sv_event *e;

	(void) state;
	p.stop_timeout_ms = 1000;
	p.on_unresponsive = SV_UNRESPONSIVE_ABANDON;
	a                 = one_spawned(&sh, &p);
	oldpid            = sh_pid(&sh, a, 0);
	oldgen            = S(&sh, a, 0)->cur.generation;
	ev0               = sh.nevs;
	sig0              = sh.nsigs;
	assert_int_equal(sv_core_restart(sh.c, a, 0, false, 0, 0), SV_OK);
	sh_drain(&sh);
	sh_advance(&sh, 1000);
	e = sh_ev(&sh, ev0, SV_EV_UNRESPONSIVE, a, 0);
	assert_int_equal(e->phase, SV_PHASE_STOP);
	assert_true(e->abandon);
	assert_int_equal(sh_nev(&sh, ev0, SV_EV_ESCALATED, a, 0), 0);
	assert_int_equal(sh.nsigs - sig0, 1); /* the SIGTERM only */
	assert_int_equal(OLD(&sh, a, 0)->state, SV_PROC_ABANDONED);
	assert_int_equal(OLD(&sh, a, 0)->pid, oldpid);
	assert_int_equal(S(&sh, a, 0)->cur.state, SV_PROC_NONE);
	assert_int_equal(sh_spawn_all(&sh), 1);
	newpid = sh_pid(&sh, a, 0);
	assert_true(S(&sh, a, 0)->cur.generation > oldgen);
	assert_int_equal(G(&sh, a)->live, 2);
	check_core(&sh);
	/* the old one exits later: reaped, the new one is untouched */
	ev0    = sh.nevs;
	sh.now = 1500;
	sh_exit_pid(&sh, oldpid, x_sig(SIGTERM));
	e = sh_ev(&sh, ev0, SV_EV_EXITED, a, 0);
	assert_int_equal(e->pid, oldpid);
	assert_int_equal(e->generation, oldgen);
	assert_int_equal(OLD(&sh, a, 0)->state, SV_PROC_NONE);
	assert_int_equal(S(&sh, a, 0)->cur.pid, newpid);
	assert_int_equal(G(&sh, a)->live, 1);
	assert_int_equal(sh_nev(&sh, ev0, SV_EV_RESTART_SCHEDULED, a, 0), 0);
	assert_false(sh_pull(&sh));
	check_core(&sh);

	/* abandon again, leave the old one alive; a third stuck stop finds
	 * the old record taken and escalates */
	assert_int_equal(sv_core_restart(sh.c, a, 0, false, 0, 2000), SV_OK);
	sh_drain(&sh);
	sh_advance(&sh, 3000);
	assert_int_equal(OLD(&sh, a, 0)->pid, newpid);
	assert_int_equal(sh_spawn_all(&sh), 1);
	oldpid = newpid;
	newpid = sh_pid(&sh, a, 0);
	sig0   = sh.nsigs;
	assert_int_equal(sv_core_restart(sh.c, a, 0, false, 0, 3000), SV_OK);
	sh_drain(&sh);
	sh_advance(&sh, 4000);
	assert_int_equal(sh.nsigs - sig0, 2);
	assert_int_equal(sh.sigs[sig0 + 1].pid, newpid);
	assert_int_equal(sh.sigs[sig0 + 1].signo, SIGKILL);
	assert_int_equal(S(&sh, a, 0)->cur.state, SV_PROC_STOPPING);
	sh_exit_pid(&sh, newpid, x_sig(SIGKILL));
	assert_int_equal(sh_spawn_all(&sh), 1);
	/* shutdown: SIGTERM to the current one, SIGKILL to the abandoned */
	sig0 = sh.nsigs;
	sv_core_shutdown(sh.c, 5000);
	sh_drain(&sh);
	assert_int_equal(sh.nsigs - sig0, 2);
	assert_int_equal(sh.sigs[sig0 + 1].pid, oldpid);
	assert_int_equal(sh.sigs[sig0 + 1].signo, SIGKILL);
	/* at shutdown a stuck stop escalates instead of abandoning */
	sh_advance(&sh, 6000);
	assert_int_equal(sh.sigs[sh.nsigs - 1].signo, SIGKILL);
	assert_int_equal(sh.sigs[sh.nsigs - 1].pid, sh_pid(&sh, a, 0));
	sh_exit(&sh, a, 0, x_sig(SIGKILL));
	assert_false(sv_core_done(sh.c));
	sh_exit_pid(&sh, oldpid, x_sig(SIGKILL));
	assert_true(sv_core_done(sh.c));
	check_core(&sh);
	sh_fini(&sh);
}

/* sv_core_restart with an expected generation is a compare-and-swap. */
static void
test_restart_expected_generation(void **state)
{
	shell           sh;
	sv_group_policy p = pol_plain();
	uint32_t        a;
	uint64_t        g0;

	(void) state;
	sh_init(&sh, SV_STRATEGY_ONE_FOR_ONE);
	a = sh_group(&sh, "a", &p, 1, 2);
	assert_int_equal(sh_spawn_all(&sh), 1);
	g0 = S(&sh, a, 0)->cur.generation;
	assert_int_equal(
	    sv_core_restart(sh.c, a, 0, true, g0 + 5, 0), SV_ECONFLICT);
	sh_drain(&sh);
	assert_int_equal(sh.nsigs, 0);
	assert_int_equal(
	    sv_core_restart(sh.c, a, 1, false, 0, 0), SV_ENOTFOUND);
	assert_int_equal(
	    sv_core_restart(sh.c, a, 9, false, 0, 0), SV_ENOTFOUND);
	assert_int_equal(
	    sv_core_restart(sh.c, a + 100, 0, false, 0, 0), SV_ENOTFOUND);
	assert_int_equal(sv_core_restart(sh.c, a, 0, true, g0, 0), SV_OK);
	sh_drain(&sh);
	assert_int_equal(sh.nsigs, 1);
	sh_exit(&sh, a, 0, x_sig(SIGTERM));
	assert_int_equal(sh_spawn_all(&sh), 1);
	assert_int_equal(S(&sh, a, 0)->cur.generation, g0 + 1);
	/* the same request retried: refused, no second restart */
	assert_int_equal(
	    sv_core_restart(sh.c, a, 0, true, g0, 0), SV_ECONFLICT);
	sh_drain(&sh);
	assert_int_equal(sh.nsigs, 1);
	check_core(&sh);
	sh_fini(&sh);
}

/* start_one holds the lowest free ordinal up to max_count (then
 * EEXHAUSTED); terminate_one stops a worker and releases its ordinal. */
static void
test_start_terminate_one(void **state)
{
	shell           sh;
	sv_group_policy p = pol_plain();
	uint32_t        a, o = 99, prev = 0;
	uint64_t        g1;
	size_t          ev0;

	(void) state;
	sh_init(&sh, SV_STRATEGY_ONE_FOR_ONE);
	a = sh_group(&sh, "a", &p, 1, 3);
	assert_int_equal(sh_spawn_all(&sh), 1);
	assert_int_equal(sv_core_start_one(sh.c, a, &o, 0), SV_OK);
	assert_int_equal(o, 1);
	assert_int_equal(sv_core_start_one(sh.c, a, &o, 0), SV_OK);
	assert_int_equal(o, 2);
	o = 99;
	assert_int_equal(sv_core_start_one(sh.c, a, &o, 0), SV_EEXHAUSTED);
	assert_int_equal(o, 99);
	sh_drain(&sh);
	assert_int_equal(sh_spawn_all(&sh), 2);
	assert_int_equal(sv_core_group_count(G(&sh, a)), 3);
	g1  = S(&sh, a, 1)->cur.generation;
	ev0 = sh.nevs;
	assert_int_equal(sv_core_terminate_one(sh.c, a, 1, 0), SV_OK);
	sh_drain(&sh);
	assert_int_equal(
	    sh_ev(&sh, ev0, SV_EV_STOPPING, a, 1)->why, SV_WHY_UNWANTED);
	assert_int_equal(sv_core_group_count(G(&sh, a)), 2);
	assert_int_equal(sv_core_terminate_one(sh.c, a, 1, 0), SV_ENOTFOUND);
	assert_int_equal(sv_core_terminate_one(sh.c, a, 7, 0), SV_ENOTFOUND);
	assert_int_equal(sv_core_terminate_one(sh.c, 77, 0, 0), SV_ENOTFOUND);
	sh_exit(&sh, a, 1, x_sig(SIGTERM));
	assert_int_equal(sh_nev(&sh, ev0, SV_EV_STOPPED, a, 1), 1);
	assert_false(sh_pull(&sh));
	assert_int_equal(sv_core_start_one(sh.c, a, &o, 0), SV_OK);
	assert_int_equal(o, 1);
	sh_drain(&sh);
	assert_int_equal(sh_spawn_all(&sh), 1);
	assert_true(S(&sh, a, 1)->cur.generation > g1);
	assert_int_equal(sv_core_scale(sh.c, a, 4, &prev, 0), SV_EEXHAUSTED);
	assert_int_equal(sv_core_scale(sh.c, a, 3, &prev, 0), SV_OK);
	assert_int_equal(prev, 3);
	assert_int_equal(sv_core_start_one(sh.c, 77, &o, 0), SV_ENOTFOUND);
	check_core(&sh);
	sh_fini(&sh);
}

/* Deleting a group stops its workers (reverse order) and removes it with
 * GROUP_DELETED after the last exit; at once if nothing is alive. */
static void
test_delete_group(void **state)
{
	shell           sh;
	sv_group_policy p = pol_plain();
	uint32_t        a, b, e, o;
	size_t          ev0, sig0;
	int64_t         p0, p1;

	(void) state;
	sh_init(&sh, SV_STRATEGY_ONE_FOR_ALL);
	a = sh_group(&sh, "a", &p, 2, 2);
	b = sh_group(&sh, "b", &p, 1, 1);
	e = sh_group(&sh, "e", &p, 0, 1);
	assert_int_equal(
	    sh_nev(&sh, 0, SV_EV_GROUP_CREATED, 0, UINT32_MAX), 3);
	assert_int_equal(sh_spawn_all(&sh), 3);
	p0   = sh_pid(&sh, a, 0);
	p1   = sh_pid(&sh, a, 1);
	ev0  = sh.nevs;
	sig0 = sh.nsigs;
	assert_int_equal(sv_core_delete_group(sh.c, a, 10), SV_OK);
	sh_drain(&sh);
	assert_int_equal(sh.nsigs - sig0, 2);
	assert_int_equal(sh.sigs[sig0].pid, p1);
	assert_int_equal(sh.sigs[sig0 + 1].pid, p0);
	assert_non_null(sv_core_group(sh.c, a));
	assert_int_equal(sv_core_delete_group(sh.c, a, 10), SV_OK);
	assert_int_equal(sv_core_scale(sh.c, a, 1, NULL, 10), SV_EBUSY);
	assert_int_equal(sv_core_restart(sh.c, a, 0, false, 0, 10), SV_EBUSY);
	assert_int_equal(sv_core_start_one(sh.c, a, &o, 10), SV_EBUSY);
	assert_int_equal(sv_core_reset(sh.c, a, 10), SV_EBUSY);
	sh_exit_pid(&sh, p1, x_sig(SIGTERM));
	assert_int_equal(
	    sh_nev(&sh, ev0, SV_EV_GROUP_DELETED, 0, UINT32_MAX), 0);
	assert_int_equal(
	    sh_ev(&sh, ev0, SV_EV_STOPPED, a, 1)->why, SV_WHY_DELETED);
	sh_exit_pid(&sh, p0, x_sig(SIGTERM));
	assert_int_equal(
	    sh_nev(&sh, ev0, SV_EV_GROUP_DELETED, a, UINT32_MAX), 1);
	assert_null(sv_core_group(sh.c, a));
	assert_null(sv_core_group_named(sh.c, "a"));
	assert_int_equal(sv_core_ngroups(sh.c), 2);
	/* no strategy restart of b came of it */
	assert_int_equal(sh_nev(&sh, ev0, SV_EV_STOPPING, b, UINT32_MAX), 0);
	assert_false(sh_pull(&sh));
	/* nothing alive: deleted at once */
	ev0 = sh.nevs;
	assert_int_equal(sv_core_delete_group(sh.c, e, 20), SV_OK);
	sh_drain(&sh);
	assert_int_equal(
	    sh_nev(&sh, ev0, SV_EV_GROUP_DELETED, e, UINT32_MAX), 1);
	assert_null(sv_core_group(sh.c, e));
	assert_int_equal(sv_core_delete_group(sh.c, e, 20), SV_ENOTFOUND);
	/* a spawn on its way when the group is deleted is stopped when it
	 * arrives, and the group goes after its exit */
	assert_int_equal(sv_core_restart(sh.c, b, 0, false, 0, 30), SV_OK);
	sh_drain(&sh);
	sh_exit(&sh, b, 0, x_sig(SIGTERM));
	assert_true(sh_pull(&sh));
	assert_int_equal(sv_core_delete_group(sh.c, b, 30), SV_OK);
	sh_drain(&sh);
	assert_non_null(sv_core_group(sh.c, b));
	sig0 = sh.nsigs;
	ev0  = sh.nevs;
	(void) sh_answer(&sh, true);
	assert_int_equal(sh.nsigs - sig0, 1);
	assert_int_equal(
	    sh_ev(&sh, ev0, SV_EV_STOPPING, b, 0)->why, SV_WHY_UNWANTED);
	sh_exit(&sh, b, 0, x_sig(SIGTERM));
	assert_null(sv_core_group(sh.c, b));
	assert_int_equal(sv_core_ngroups(sh.c), 0);
	check_core(&sh);
	sh_fini(&sh);
}

/* Shutdown stops everything in reverse start order, cancels scheduled
 * starts, spawns nothing after, is done after the last exit; a second
 * shutdown sends SIGKILL to what is still alive. */
static void
test_shutdown(void **state)
{
	shell           sh;
	sv_group_policy p = pol_plain(), pb = pol_plain();
	uint32_t        a, b, c, o;
	size_t          ev0, sig0;
	int64_t         pa0, pa1, pb0, pc0;

	(void) state;
	pb.backoff = (sv_backoff_policy) {1000, 100, 1000, 2.0};
	sh_init(&sh, SV_STRATEGY_ONE_FOR_ONE);
	a = sh_group(&sh, "a", &p, 2, 2);
	b = sh_group(&sh, "b", &pb, 2, 2);
	assert_int_equal(sh_spawn_all(&sh), 4);
	sh.now = 10;
	sh_exit(&sh, b, 1, x_code(1)); /* b/1 in backoff */
	assert_non_null(sh_timer(&sh, SV_TIMER_SEAT, (sv_wkey) {b, 1, 0}));
	c = sh_group(&sh, "c", &p, 1, 1);
	assert_true(sh_pull(&sh)); /* c/0 on its way */
	pa0  = sh_pid(&sh, a, 0);
	pa1  = sh_pid(&sh, a, 1);
	pb0  = sh_pid(&sh, b, 0);
	ev0  = sh.nevs;
	sig0 = sh.nsigs;
	sv_core_shutdown(sh.c, 20);
	sh_drain(&sh);
	assert_true(sv_core_shutting_down(sh.c));
	assert_int_equal(sh.nsigs - sig0, 3);
	assert_int_equal(sh.sigs[sig0].pid, pb0);
	assert_int_equal(sh.sigs[sig0 + 1].pid, pa1);
	assert_int_equal(sh.sigs[sig0 + 2].pid, pa0);
	assert_null(sh_timer(&sh, SV_TIMER_SEAT, (sv_wkey) {b, 1, 0}));
	assert_int_equal(
	    sh_ev(&sh, ev0, SV_EV_STOPPED, b, 1)->why, SV_WHY_SHUTDOWN);
	/* requests are refused */
	assert_int_equal(sv_core_add_group(sh.c, "d", &p, 1, 1, &o), SV_EBUSY);
	assert_int_equal(sv_core_scale(sh.c, a, 1, NULL, 20), SV_EBUSY);
	assert_int_equal(sv_core_restart(sh.c, a, 0, false, 0, 20), SV_EBUSY);
	assert_int_equal(sv_core_reset(sh.c, a, 20), SV_EBUSY);
	assert_int_equal(sv_core_start_one(sh.c, a, &o, 20), SV_EBUSY);
	assert_int_equal(sv_core_terminate_one(sh.c, a, 0, 20), SV_EBUSY);
	/* the spawn on its way arrives: stopped at once */
	sig0 = sh.nsigs;
	pc0  = sh_answer(&sh, true);
	assert_int_equal(sh.nsigs - sig0, 1);
	assert_int_equal(sh.sigs[sig0].pid, pc0);
	assert_int_equal(
	    sh_ev(&sh, ev0, SV_EV_STOPPING, c, 0)->why, SV_WHY_SHUTDOWN);
	assert_false(sh_pull(&sh));
	sh_exit_pid(&sh, pa0, x_sig(SIGTERM));
	sh_exit_pid(&sh, pc0, x_sig(SIGTERM));
	assert_false(sh_pull(&sh));
	assert_false(sv_core_done(sh.c));
	/* second shutdown: SIGKILL to the two still alive */
	sig0 = sh.nsigs;
	sv_core_shutdown(sh.c, 30);
	sh_drain(&sh);
	assert_int_equal(sh.nsigs - sig0, 2);
	assert_int_equal(sh.sigs[sig0].pid, pb0);
	assert_int_equal(sh.sigs[sig0].signo, SIGKILL);
	assert_int_equal(sh.sigs[sig0 + 1].pid, pa1);
	assert_int_equal(sh.sigs[sig0 + 1].signo, SIGKILL);
	sh_exit_pid(&sh, pb0, x_sig(SIGKILL));
	assert_false(sv_core_done(sh.c));
	sh_exit_pid(&sh, pa1, x_sig(SIGKILL));
	assert_true(sv_core_done(sh.c));
	assert_int_equal(sh_nev(&sh, ev0, SV_EV_STOPPED, 0, UINT32_MAX), 5);
	assert_int_equal(
	    sh_nev(&sh, ev0, SV_EV_RESTART_SCHEDULED, 0, UINT32_MAX), 0);
	/* the stop timers went with the exits */
	assert_int_equal(sh.ntimers, 0);
	assert_false(sh_pull(&sh));
	check_core(&sh);
	sh_fini(&sh);
}

/* A restart asked while the seat's spawn is on its way must not start a
 * second process on the seat: the process being spawned is the fresh
 * one. */
static void
test_restart_while_spawning(void **state)
{
	shell           sh;
	sv_group_policy p = pol_plain();
	uint32_t        a;

	(void) state;
	sh_init(&sh, SV_STRATEGY_ONE_FOR_ONE);
	a = sh_group(&sh, "a", &p, 1, 1);
	assert_true(sh_pull(&sh));
	assert_int_equal(sv_core_restart(sh.c, a, 0, false, 0, 0), SV_OK);
	sh_drain(&sh);
	check_core(&sh);
	(void) sh_answer(&sh, true);
	check_core(&sh);
	assert_false(sh_pull(&sh));
	assert_int_equal(sv_core_live(sh.c), 1);
	sv_core_shutdown(sh.c, 1);
	sh_drain(&sh);
	sh_exit(&sh, a, 0, x_sig(SIGTERM));
	assert_true(sv_core_done(sh.c));
	sh_fini(&sh);
}

/* A strategy restart that begins while a sibling's spawn is on its way
 * stops that sibling too once it has started, and starts every seat of
 * the range once, in start order. */
static void
test_plan_while_spawning(void **state)
{
	shell           sh;
	sv_group_policy p = pol_plain();
	uint32_t        a;
	size_t          sp0;
	int64_t         p1;

	(void) state;
	sh_init(&sh, SV_STRATEGY_ONE_FOR_ALL);
	a = sh_group(&sh, "a", &p, 2, 2);
	assert_true(sh_pull(&sh));
	(void) sh_answer(&sh, true);
	assert_true(sh_pull(&sh)); /* a/1 on its way */
	sh.now = 10;
	sh_exit(&sh, a, 0, x_code(1));
	check_core(&sh);
	p1 = sh_answer(&sh, true);
	check_core(&sh);
	sp0 = sh.nspawns;
	for (int i = 0; i < 10; i++) {
		int64_t pid = sh_alive_signalled(&sh, 0, NULL);
		if (sh_spawn_all(&sh) > 0) {
			check_core(&sh);
			continue;
		}
		if (pid == 0) {
			break;
		}
		sh_exit_pid(&sh, pid, x_sig(SIGTERM));
		check_core(&sh);
	}
	assert_false(sh_proc(&sh, p1)->alive);
	assert_int_equal(sh.nspawns - sp0, 2);
	assert_int_equal(sh.spawns[sp0].ordinal, 0);
	assert_int_equal(sh.spawns[sp0 + 1].ordinal, 1);
	assert_int_equal(sv_core_live(sh.c), 2);
	sh_fini(&sh);
}

/* A worker started by start_one on a seat whose previous spawn was still
 * on its way (scaled down meanwhile) is an ordinary worker: its own
 * failure is a failure (RESTART_SCHEDULED, intensity), not an operator
 * restart. */
static void
test_start_one_while_spawning(void **state)
{
	shell           sh;
	sv_group_policy p = pol_plain();
	uint32_t        a, o;
	size_t          ev0;

	(void) state;
	p.max_restarts  = 1;
	p.max_window_ms = 100000;
	sh_init(&sh, SV_STRATEGY_ONE_FOR_ONE);
	a = sh_group(&sh, "a", &p, 1, 1);
	assert_true(sh_pull(&sh));
	assert_int_equal(sv_core_scale(sh.c, a, 0, NULL, 0), SV_OK);
	assert_int_equal(sv_core_start_one(sh.c, a, &o, 0), SV_OK);
	sh_drain(&sh);
	(void) sh_answer(&sh, true);
	check_core(&sh);
	assert_int_equal(S(&sh, a, 0)->cur.state, SV_PROC_RUNNING);
	ev0    = sh.nevs;
	sh.now = 10;
	sh_exit(&sh, a, 0, x_code(1));
	assert_int_equal(sh_nev(&sh, ev0, SV_EV_RESTART_SCHEDULED, a, 0), 1);
	assert_int_equal(sh_spawn_all(&sh), 1);
	sh_exit(&sh, a, 0, x_code(1));
	assert_true(G(&sh, a)->failed);
	check_core(&sh);
	sh_fini(&sh);
}

/* ---- randomized model test -----------------------------------------------
 *
 * Random sequences of events with fixed seeds. After every step: the
 * invariants of check_core (counts recomputed from the seats, at most one
 * current process per seat and `old` only abandoned, pending seats really
 * startable, the core knows every live process and nothing more), the
 * generation of every spawn ticket above the seat's previous one (in
 * sh_pull), nothing spawned once shutting down (sh_pull), held ordinals
 * == [0, N) right after scale(N), and never more than max_restarts
 * RESTART_SCHEDULED events of a group within any window (since its last
 * reset). Each sequence ends with a shutdown and must reach
 * sv_core_done once every process has been reaped.
 */

#define MODEL_GROUPS 8 /* groups a sequence may create */

typedef struct model {
	shell           sh;
	unsigned        seed;
	uint32_t        ids[MODEL_GROUPS];
	size_t          nids;
	sv_group_policy pol[MAX_GIDS];
	uint64_t       *rs[MAX_GIDS]; /* RESTART_SCHEDULED times since reset */
	size_t          nrs[MAX_GIDS], caprs[MAX_GIDS];
	size_t          evmark;
	unsigned long   stats[8]; /* spawns, exits, restarts, failed, ... */
} model;

static uint32_t
rnd(model *m, uint32_t n)
{
	return n == 0 ? 0 : (uint32_t) rand_r(&m->seed) % n;
}

/* pol_random draws a group policy. */
static sv_group_policy
pol_random(model *m)
{
	sv_group_policy p = pol_plain();

	p.restart = (sv_restart_type) rnd(m, 3);
	if (rnd(m, 2) == 0) {
		p.backoff = (sv_backoff_policy) {300, 50, 400, 2.0};
	}
	p.max_restarts        = rnd(m, 5); /* 0: unlimited */
	p.max_window_ms       = 200 + rnd(m, 2000);
	p.stop_timeout_ms     = rnd(m, 3) == 0 ? 0 : 100 + rnd(m, 400);
	p.on_unresponsive     = (sv_on_unresponsive) rnd(m, 2);
	p.need_ready          = rnd(m, 2) == 0;
	p.sequential          = p.need_ready && rnd(m, 2) == 0;
	p.start_timeout_ms    = rnd(m, 2) == 0 ? 0 : 100 + rnd(m, 300);
	p.on_start_timeout    = (sv_on_start_timeout) rnd(m, 2);
	p.watchdog_ms         = rnd(m, 3) == 0 ? 150 + rnd(m, 300) : 0;
	p.drain_timeout_ms    = rnd(m, 2) == 0 ? 0 : 50 + rnd(m, 500);
	p.drain_extend_max_ms = rnd(m, 300);
	p.drain_signal        = rnd(m, 3) == 0 ? 0 : SIGTERM;
	return p;
}

/* model_add adds a random group. */
static void
model_add(model *m)
{
	sv_group_policy p   = pol_random(m);
	uint32_t        max = 1 + rnd(m, 6), id = 0;
	char            name[16];

	if (m->nids == MODEL_GROUPS) {
		return;
	}
	snprintf(name, sizeof(name), "g%zu", m->nids);
	assert_int_equal(
	    sv_core_add_group(m->sh.c, name, &p, rnd(m, max + 1), max, &id),
	    SV_OK);
	assert_true(id < MAX_GIDS);
	m->pol[id]        = p;
	m->ids[m->nids++] = id;
	m->nrs[id]        = 0;
	sh_drain(&m->sh);
}

/* model_events checks the new events: restart intensity is never
 * exceeded, as seen on the event stream. */
static void
model_events(model *m)
{
	for (; m->evmark < m->sh.nevs; m->evmark++) {
		const fev      *e   = &m->sh.evs[m->evmark];
		uint32_t        gid = e->ev.group_id;
		sv_group_policy p;
		size_t          n = 0;

		if (e->ev.kind == SV_EV_EXITED) {
			m->stats[1]++;
		}
		if (e->ev.kind == SV_EV_GROUP_FAILED) {
			m->stats[3]++;
		}
		if (e->ev.kind == SV_EV_DRAINING) {
			m->stats[4]++;
		}
		if (e->ev.kind == SV_EV_DRAINING && e->ev.why == SV_WHY_ROLL) {
			/* a roll drains an old generation only when its
			 * successor is ready: ready never drops */
			const sv_cgroup *g = sv_core_group(m->sh.c, gid);
			const sv_seat   *st;
			assert_non_null(g);
			st = &g->seats[e->ev.ordinal];
			/* (a strategy plan may be stopping it already in
			 * the same step) */
			assert_true(st->cur.state == SV_PROC_RUNNING
			    || st->cur.state == SV_PROC_STOPPING);
			assert_true(st->cur.ready);
			assert_true(st->cur.generation > e->ev.generation);
			m->stats[5]++;
		}
		if (e->ev.kind != SV_EV_RESTART_SCHEDULED) {
			continue;
		}
		m->stats[2]++;
		assert_true(gid < MAX_GIDS && e->ev.ordinal < MAX_ORDS);
		m->sh.notbefore[gid][e->ev.ordinal] = e->at + e->ev.delay_ms;
		p                                   = m->pol[gid];
		if (p.max_restarts == 0) {
			continue;
		}
		m->rs[gid] = grow(
		    m->rs[gid], &m->caprs[gid], m->nrs[gid], sizeof(uint64_t));
		m->rs[gid][m->nrs[gid]++] = e->at;
		for (size_t i = 0; i < m->nrs[gid]; i++) {
			if (e->at - m->rs[gid][i] < p.max_window_ms) {
				n++;
			}
		}
		assert_true(n <= p.max_restarts);
	}
}

/* model_clear forgets the announced delays of a seat (UINT32_MAX: of the
 * whole group) after an operator request that may start it at once. */
static void
model_clear(model *m, uint32_t gid, uint32_t ordinal)
{
	for (uint32_t o = 0; gid < MAX_GIDS && o < MAX_ORDS; o++) {
		if (ordinal == UINT32_MAX || o == ordinal) {
			m->sh.notbefore[gid][o] = 0;
			m->sh.drained[gid][o]   = false;
		}
	}
}

/* model_gid picks one of the sequence's groups (maybe deleted). */
static uint32_t
model_gid(model *m)
{
	return m->nids == 0 ? 999 : m->ids[rnd(m, (uint32_t) m->nids)];
}

/* model_alive picks a live fake process (0 if none); signalled ones are
 * preferred half of the time. */
static int64_t
model_alive(model *m, bool prefer_signalled)
{
	int64_t cand[64];
	size_t  n = 0, ns = 0;
	int64_t sig[64];

	for (size_t i = m->sh.nprocs; i-- > 0 && n < 64;) {
		if (m->sh.procs[i].alive) {
			cand[n++] = PID_BASE + (int64_t) i;
			if (m->sh.procs[i].lastsig != 0 && ns < 64) {
				sig[ns++] = PID_BASE + (int64_t) i;
			}
		}
	}
	if (prefer_signalled && ns > 0 && rnd(m, 2) == 0) {
		return sig[rnd(m, (uint32_t) ns)];
	}
	return n == 0 ? 0 : cand[rnd(m, (uint32_t) n)];
}

/* model_exit_status draws how a process ends. */
static sv_exit
model_exit_status(model *m)
{
	switch (rnd(m, 4)) {
	case 0:
		return x_code(0);
	case 1:
		return x_code(1 + (int) rnd(m, 100));
	case 2:
		return x_sig(SIGKILL);
	default:
		return x_sig(SIGTERM);
	}
}

/* model_drain drains a random worker, group or everything, and marks the
 * drained seats: nothing may be spawned there until an operator request. */
static void
model_drain(model *m)
{
	shell           *sh    = &m->sh;
	sv_drain_scope   scope = (sv_drain_scope) rnd(m, 3);
	uint32_t         gid = model_gid(m), o = rnd(m, 6);
	uint64_t         did = 0;
	const sv_drain  *d;
	const sv_cgroup *g;
	sv_err           err;

	err = sv_core_drain(sh->c, scope, gid, o,
	    rnd(m, 2) == 0 ? 0 : rnd(m, 400), sh->now, &did);
	sh_drain(sh);
	if (err != SV_OK) {
		assert_true(err == SV_ENOTFOUND || err == SV_EBUSY);
		return;
	}
	assert_non_null(d = sv_core_drain_report(sh->c, did));
	for (size_t gi = 0; gi < sv_core_ngroups(sh->c); gi++) {
		g = sv_core_group_at(sh->c, gi);
		if ((scope != SV_DRAIN_ALL && g->id != gid) || g->deleting) {
			continue;
		}
		for (uint32_t k = 0; k < g->nseats; k++) {
			if (scope == SV_DRAIN_WORKER && k != o) {
				continue;
			}
			/* the drained seat no longer holds its ordinal */
			assert_false(g->seats[k].wanted);
			assert_true(g->seats[k].state == SV_SP_REST
			    || g->seats[k].state == SV_SP_LIVE);
			if (g->id < MAX_GIDS && k < MAX_ORDS) {
				sh->drained[g->id][k] = true;
			}
		}
	}
	for (size_t i = 0; i < d->n; i++) {
		assert_false(d->rows[i].reaped);
	}
}

/* model_step performs one random event. */
static void
model_step(model *m, int step, int nsteps)
{
	shell   *sh = &m->sh;
	uint32_t r  = rnd(m, 1150), gid, o, cnt;
	int64_t  pid;
	sv_err   err;

	if (step >= nsteps - 30 && !sv_core_shutting_down(sh->c)
	    && rnd(m, 10) == 0) {
		sv_core_shutdown(sh->c, sh->now);
		sh_drain(sh);
		return;
	}
	if (r < 150) {
		if (!sh->ticket_out && sh_pull(sh)) {
			m->stats[0]++;
		}
	} else if (r < 300) {
		if (sh->ticket_out) {
			(void) sh_answer(sh, rnd(m, 8) != 0);
		}
	} else if (r < 450) {
		if ((pid = model_alive(m, true)) != 0) {
			sh_exit_pid(sh, pid, model_exit_status(m));
		}
	} else if (r < 570) {
		long i = sh_next_due(sh, UINT64_MAX);
		if (i >= 0) {
			sh_fire(sh, (size_t) i);
		}
	} else if (r < 610) {
		if (sh->nstale > 0) {
			size_t n = sh->nstale < NSTALE ? sh->nstale : NSTALE;
			ftimer t = sh->stale[rnd(m, (uint32_t) n)];
			sv_core_timer(sh->c, t.kind, t.key, t.guard, sh->now);
			sh_drain(sh);
		}
	} else if (r < 690) {
		sh->now += rnd(m, 300);
	} else if (r < 750) {
		if ((pid = model_alive(m, false)) != 0) {
			err = sv_core_ready(
			    sh->c, sh_proc(sh, pid)->key, sh->now);
			assert_int_equal(err, SV_OK);
			sh_drain(sh);
		}
	} else if (r < 790) {
		if ((pid = model_alive(m, false)) != 0) {
			err = sv_core_heartbeat(
			    sh->c, sh_proc(sh, pid)->key, sh->now);
			assert_int_equal(err, SV_OK);
			sh_drain(sh);
		}
	} else if (r < 830) {
		const sv_cgroup *g;
		gid = model_gid(m);
		g   = sv_core_group(sh->c, gid);
		cnt = rnd(m, g != NULL ? g->max_count + 2 : 3);
		err = sv_core_scale(sh->c, gid, cnt, NULL, sh->now);
		sh_drain(sh);
		if (err == SV_OK) {
			model_clear(m, gid, UINT32_MAX);
			g = sv_core_group(sh->c, gid);
			/* held ordinals are exactly [0, N) */
			for (uint32_t i = 0; i < g->max_count; i++) {
				assert_int_equal(
				    sv_ordinals_is_held(&g->ords, i), i < cnt);
			}
			assert_int_equal(sv_core_group_count(g), cnt);
		} else {
			assert_true(err == SV_EEXHAUSTED || err == SV_ENOTFOUND
			    || err == SV_EBUSY);
		}
	} else if (r < 870) {
		const sv_cgroup *g;
		bool             has = rnd(m, 2) == 0;
		uint64_t         exp = 0;
		gid                  = model_gid(m);
		g                    = sv_core_group(sh->c, gid);
		o = rnd(m, g != NULL ? g->max_count + 1 : 2);
		if (g != NULL && o < g->max_count) {
			/* a seat not made yet is at generation 0 */
			exp = (o < g->nseats ? g->seats[o].tok.generation : 0)
			    + (rnd(m, 3) == 0);
		}
		err = sv_core_restart(sh->c, gid, o, has, exp, sh->now);
		sh_drain(sh);
		if (err == SV_OK) {
			model_clear(m, gid, o);
		}
		assert_true(err == SV_OK || err == SV_ENOTFOUND
		    || err == SV_ECONFLICT || err == SV_EBUSY);
	} else if (r < 900) {
		gid = model_gid(m);
		err = sv_core_reset(sh->c, gid, sh->now);
		if (err == SV_OK) {
			m->nrs[gid] = 0;
			model_clear(m, gid, UINT32_MAX);
		}
		sh_drain(sh);
	} else if (r < 930) {
		gid = model_gid(m);
		err = sv_core_start_one(sh->c, gid, &o, sh->now);
		sh_drain(sh);
		if (err == SV_OK) {
			model_clear(m, gid, o);
		}
		assert_true(err == SV_OK || err == SV_ENOTFOUND
		    || err == SV_EEXHAUSTED || err == SV_EBUSY);
	} else if (r < 960) {
		const sv_cgroup *g;
		gid = model_gid(m);
		g   = sv_core_group(sh->c, gid);
		o   = rnd(m, g != NULL ? g->max_count : 2);
		err = sv_core_terminate_one(sh->c, gid, o, sh->now);
		sh_drain(sh);
		if (err == SV_OK) {
			model_clear(m, gid, o);
		}
		assert_true(
		    err == SV_OK || err == SV_ENOTFOUND || err == SV_EBUSY);
	} else if (r < 975) {
		if (!sv_core_shutting_down(sh->c)) {
			model_add(m);
		}
	} else if (r < 985) {
		(void) sv_core_delete_group(sh->c, model_gid(m), sh->now);
		sh_drain(sh);
	} else if (r < 990 && sv_core_shutting_down(sh->c)) {
		sv_core_shutdown(sh->c, sh->now); /* again: SIGKILL */
		sh_drain(sh);
	} else if (r >= 1000 && r < 1030) {
		model_drain(m);
	} else if (r >= 1030 && r < 1100) {
		uint64_t did = 0;
		gid          = model_gid(m);
		err = sv_core_roll(sh->c, gid, rnd(m, 400), sh->now, &did);
		sh_drain(sh);
		assert_true(
		    err == SV_OK || err == SV_ENOTFOUND || err == SV_EBUSY);
		if (err == SV_OK) {
			assert_non_null(sv_core_drain_report(sh->c, did));
		}
	} else if (r >= 1100 && r < 1125) {
		if ((pid = model_alive(m, true)) != 0) {
			uint64_t dl = 0;
			err         = sv_core_drain_extend(sh->c,
			            sh_proc(sh, pid)->key, rnd(m, 500), sh->now, &dl);
			assert_true(err == SV_OK || err == SV_ENOTFOUND);
			sh_drain(sh);
		}
	} else if (r >= 1125) {
		if ((pid = model_alive(m, true)) != 0) {
			err = sv_core_drain_ack(
			    sh->c, sh_proc(sh, pid)->key, rnd(m, 10));
			assert_true(err == SV_OK || err == SV_ENOTFOUND);
		}
	}
}

/* model_finish shuts down and lets every process end; the core must be
 * done, with nothing spawned on the way. */
static void
model_finish(model *m)
{
	shell *sh = &m->sh;

	sv_core_shutdown(sh->c, sh->now);
	sh_drain(sh);
	check_core(sh);
	for (int round = 0; round < 1000 && !sv_core_done(sh->c); round++) {
		int64_t pid;
		long    i;
		if (sh->ticket_out) {
			(void) sh_answer(sh, rnd(m, 4) != 0);
		} else if ((pid = model_alive(m, false)) != 0
		    && rnd(m, 3) != 0) {
			sh_exit_pid(sh, pid, model_exit_status(m));
		} else if ((i = sh_next_due(sh, UINT64_MAX)) >= 0) {
			sh_fire(sh, (size_t) i);
		}
		assert_false(sh_pull(sh));
		model_events(m);
		check_core(sh);
	}
	assert_true(sv_core_done(sh->c));
	assert_int_equal(sv_core_live(sh->c), 0);
	for (size_t i = 0; i < sh->nprocs; i++) {
		assert_false(sh->procs[i].alive);
	}
	/* nothing but stale timers could remain; none may start anything */
	while (sh->ntimers > 0) {
		sh_fire(sh, 0);
		assert_false(sh_pull(sh));
	}
	assert_true(sv_core_done(sh->c));
}

/* model_begin starts m as sequence seed: a random strategy and one to
 * three random groups (model_end frees what it holds). */
static void
model_begin(model *m, unsigned seed)
{
	memset(m, 0, sizeof(*m));
	m->seed = seed;
	sh_init(&m->sh, (sv_strategy) rnd(m, 3));
	for (uint32_t n = 1 + rnd(m, 3); n > 0; n--) {
		model_add(m);
	}
}

/* model_steps runs nsteps random steps of m, checking the core after each
 * and then, when also is not NULL, calling also on the shell. */
static void
model_steps(model *m, int nsteps, void (*also)(shell *sh))
{
	for (int step = 0; step < nsteps; step++) {
		model_step(m, step, nsteps);
		model_events(m);
		check_core(&m->sh);
		if (also != NULL) {
			also(&m->sh);
		}
	}
}

/* model_end frees the runs m kept and its shell. */
static void
model_end(model *m)
{
	for (size_t i = 0; i < MAX_GIDS; i++) {
		free(m->rs[i]);
	}
	sh_fini(&m->sh);
}

/* model_run runs sequence seed for nsteps steps and a shutdown, adding
 * what it counted to stats. */
static void
model_run(unsigned seed, int nsteps, unsigned long *stats)
{
	model m;

	model_begin(&m, seed);
	model_steps(&m, nsteps, NULL);
	model_finish(&m);
	for (size_t i = 0; i < 8; i++) {
		stats[i] += m.stats[i];
	}
	model_end(&m);
}

/* 2,000 sequences of 300 random steps each. */
static void
test_model(void **state)
{
	unsigned long stats[8] = {0};

	(void) state;
	for (unsigned seed = 1; seed <= 2000; seed++) {
		model_run(seed, 300, stats);
	}
	print_message("model: %lu spawns, %lu exits, %lu restarts scheduled, "
	              "%lu groups failed, %lu drained (%lu by rolls)\n",
	    stats[0], stats[1], stats[2], stats[3], stats[4], stats[5]);
	/* the sequences exercise what they claim to */
	assert_true(stats[0] > 10000);
	assert_true(stats[2] > 1000);
	assert_true(stats[3] > 10);
	assert_true(stats[4] > 1000);
	assert_true(stats[5] > 50);
}

/* ---- taking over a predecessor's state (sv_core_restore) -----------------
 */

/* sh_adopt hands the core a process a predecessor left on a seat; returns
 * its (fake) pid. */
static int64_t sh_adopt_by(shell *sh, uint32_t id, uint32_t ordinal,
    uint64_t gen, bool ready, bool stopping, uint64_t floor,
    uint64_t deadline);

static int64_t
sh_adopt(shell *sh, uint32_t id, uint32_t ordinal, uint64_t gen, bool ready,
    bool stopping, uint64_t floor)
{
	return sh_adopt_by(sh, id, ordinal, gen, ready, stopping, floor, 0);
}

/* sh_adopt_by is sh_adopt with the predecessor's SIGKILL deadline of a
 * process it was stopping (0: unknown). */
static int64_t
sh_adopt_by(shell *sh, uint32_t id, uint32_t ordinal, uint64_t gen, bool ready,
    bool stopping, uint64_t floor, uint64_t deadline)
{
	sv_adoptee a;
	int64_t    pid;

	sh->procs
	    = grow(sh->procs, &sh->capprocs, sh->nprocs, sizeof(*sh->procs));
	pid                     = PID_BASE + (int64_t) sh->nprocs;
	sh->procs[sh->nprocs++] = (fproc) {{id, ordinal, gen}, true, 0};
	a                       = (sv_adoptee) {gen, pid, ready, stopping};
	a.stop_deadline_ms      = deadline;
	assert_int_equal(
	    sv_core_restore(sh->c, id, ordinal, floor, &a, sh->now), SV_OK);
	sh->lastgen[id][ordinal] = (int64_t) gen;
	sh_drain(sh);
	return pid;
}

/* Three workers of a crashed predecessor: two alive (adopted, not spawned
 * again), one dead (spawned with its generation continued). An adopted one
 * that exits is replaced with generation + 1. */
static void
test_restore_adopt(void **state)
{
	shell           sh;
	sv_group_policy p = pol_plain();
	uint32_t        id;
	size_t          ev0;
	int64_t         pid0;

	(void) state;
	sh_init(&sh, SV_STRATEGY_ONE_FOR_ONE);
	id   = sh_group(&sh, "web", &p, 3, 4);
	ev0  = sh.nevs;
	pid0 = sh_adopt(&sh, id, 0, 4, true, false, 5);
	(void) sh_adopt(&sh, id, 2, 7, true, false, 9);
	assert_int_equal(sv_core_restore(sh.c, id, 1, 3, NULL, sh.now), SV_OK);
	sh_drain(&sh);
	assert_int_equal(sh_nev(&sh, ev0, SV_EV_ADOPTED, id, UINT32_MAX), 2);
	assert_int_equal(sh_spawn_all(&sh), 1);
	assert_int_equal(sh.spawns[sh.nspawns - 1].ordinal, 1);
	assert_int_equal(sh.spawns[sh.nspawns - 1].generation, 3);
	assert_int_equal(S(&sh, id, 0)->cur.state, SV_PROC_RUNNING);
	assert_int_equal(S(&sh, id, 0)->cur.pid, pid0);
	assert_int_equal(sv_core_live(sh.c), 3);
	/* The adopted worker 0 dies: replaced with generation 5 (the floor),
	 * ordinal 2's floor 9 is kept for its next restart. */
	sh_exit(&sh, id, 0, x_sig(SIGKILL));
	assert_int_equal(sh_spawn_all(&sh), 1);
	assert_int_equal(sh.spawns[sh.nspawns - 1].ordinal, 0);
	assert_int_equal(sh.spawns[sh.nspawns - 1].generation, 5);
	sh_exit(&sh, id, 2, x_code(1));
	assert_int_equal(sh_spawn_all(&sh), 1);
	assert_int_equal(sh.spawns[sh.nspawns - 1].generation, 9);
	/* A seat taken twice, or one beyond max_count, is refused. */
	assert_int_equal(
	    sv_core_restore(sh.c, id, 0, 0, NULL, sh.now), SV_EBUSY);
	assert_int_equal(
	    sv_core_restore(sh.c, id, 4, 0, NULL, sh.now), SV_EINVAL);
	assert_int_equal(
	    sv_core_restore(sh.c, id + 1, 0, 0, NULL, sh.now), SV_ENOTFOUND);
	sh_fini(&sh);
}

/* A worker the predecessor was stopping is stopped again and replaced when
 * it exits; one beyond the count is stopped and not replaced; one that had
 * not reported ready is awaited again under the start timeout. */
static void
test_restore_stopping_and_excess(void **state)
{
	shell           sh;
	sv_group_policy p = pol_plain();
	uint32_t        id;
	int64_t         a, b;
	sv_wkey         kb;

	(void) state;
	p.need_ready       = true;
	p.start_timeout_ms = 1000;
	sh_init(&sh, SV_STRATEGY_ONE_FOR_ONE);
	id = sh_group(&sh, "web", &p, 2, 4);
	a  = sh_adopt(&sh, id, 0, 2, true, true, 0);
	b  = sh_adopt(&sh, id, 3, 1, true, false, 0);
	(void) sh_adopt(&sh, id, 1, 0, false, false, 0);
	assert_int_equal(sh_proc(&sh, a)->lastsig, SIGTERM);
	assert_int_equal(sh_proc(&sh, b)->lastsig, SIGTERM);
	assert_int_equal(S(&sh, id, 0)->cur.state, SV_PROC_STOPPING);
	assert_int_equal(S(&sh, id, 1)->cur.state, SV_PROC_STARTING);
	assert_int_equal(sh_spawn_all(&sh), 0);
	/* a exits: its seat restarts at once with generation 3. */
	sh_exit_pid(&sh, a, x_sig(SIGTERM));
	assert_int_equal(sh_spawn_all(&sh), 1);
	assert_int_equal(sh.spawns[sh.nspawns - 1].ordinal, 0);
	assert_int_equal(sh.spawns[sh.nspawns - 1].generation, 3);
	/* b exits: ordinal 3 is beyond the count, nothing replaces it. */
	kb = (sv_wkey) {id, 3, 1};
	assert_true(key_eq(sh_proc(&sh, b)->key, kb));
	sh_exit_pid(&sh, b, x_sig(SIGTERM));
	assert_int_equal(sh_spawn_all(&sh), 0);
	assert_int_equal(S(&sh, id, 3)->cur.state, SV_PROC_NONE);
	/* ordinal 1 never reports: the start timeout stops it. */
	sh_advance(&sh, sh.now + 1000);
	assert_int_equal(S(&sh, id, 1)->cur.state, SV_PROC_STOPPING);
	sh_fini(&sh);
}

/* stop_deadline_of returns the deadline of the last STOPPING event of
 * (id, ordinal) since event from. */
static uint64_t
stop_deadline_of(const shell *sh, size_t from, uint32_t id, uint32_t ordinal)
{
	uint64_t d = UINT64_MAX;

	for (size_t i = from; i < sh->nevs; i++) {
		const sv_event *e = &sh->evs[i].ev;
		if (e->kind == SV_EV_STOPPING && e->group_id == id
		    && e->ordinal == ordinal) {
			d = e->deadline_ms;
		}
	}
	assert_true(d != UINT64_MAX);
	return d;
}

/* A worker the predecessor was stopping keeps its SIGKILL deadline: an
 * earlier one stands, a passed one kills at once, a later one or none
 * gives way to a fresh stop timeout; STOPPING says which deadline holds.
 * (Restarting the supervisor must not put the SIGKILL off.) */
static void
test_restore_stop_deadline(void **state)
{
	shell           sh;
	sv_group_policy p = pol_plain(); /* stop timeout 5000 */
	uint32_t        id;
	int64_t         early, late, past, none, kept;
	size_t          ev0;

	(void) state;
	sh_init(&sh, SV_STRATEGY_ONE_FOR_ONE);
	sh.now = 10000;
	id     = sh_group(&sh, "web", &p, 5, 5);
	ev0    = sh.nevs;
	early  = sh_adopt_by(&sh, id, 0, 1, true, true, 0, 10300);
	late   = sh_adopt_by(&sh, id, 1, 1, true, true, 0, 99999);
	past   = sh_adopt_by(&sh, id, 2, 1, true, true, 0, 9000);
	none   = sh_adopt_by(&sh, id, 3, 1, true, true, 0, 0);
	kept   = sh_adopt_by(&sh, id, 4, 1, true, false, 0, 10300);
	assert_int_equal(stop_deadline_of(&sh, ev0, id, 0), 10300);
	assert_int_equal(stop_deadline_of(&sh, ev0, id, 1), 15000);
	assert_int_equal(stop_deadline_of(&sh, ev0, id, 2), 10000);
	assert_int_equal(stop_deadline_of(&sh, ev0, id, 3), 15000);
	assert_int_equal(sh_proc(&sh, early)->lastsig, SIGTERM);
	sh_advance(&sh, 10000);
	assert_int_equal(sh_proc(&sh, past)->lastsig, SIGKILL);
	assert_int_equal(sh_proc(&sh, early)->lastsig, SIGTERM);
	sh_advance(&sh, 10299);
	assert_int_equal(sh_proc(&sh, early)->lastsig, SIGTERM);
	sh_advance(&sh, 10300);
	assert_int_equal(sh_proc(&sh, early)->lastsig, SIGKILL);
	sh_advance(&sh, 14999);
	assert_int_equal(sh_proc(&sh, late)->lastsig, SIGTERM);
	assert_int_equal(sh_proc(&sh, none)->lastsig, SIGTERM);
	sh_advance(&sh, 15000);
	assert_int_equal(sh_proc(&sh, late)->lastsig, SIGKILL);
	assert_int_equal(sh_proc(&sh, none)->lastsig, SIGKILL);
	/* A deadline means nothing for a process that was not stopping. */
	assert_int_equal(sh_proc(&sh, kept)->lastsig, 0);
	assert_int_equal(S(&sh, id, 4)->cur.state, SV_PROC_RUNNING);
	sh_fini(&sh);
}

/* Seats the predecessor had released (drained, terminated): one with a
 * process still alive, which is stopped and not replaced, one empty, which
 * is not started; the group holds one ordinal per kept seat, and a scale-up
 * takes the released ones again. */
static void
test_restore_released(void **state)
{
	shell           sh;
	sv_group_policy p = pol_plain();
	uint32_t        id, previous = 0;
	int64_t         a, c;

	(void) state;
	sh_init(&sh, SV_STRATEGY_ONE_FOR_ONE);
	id = sh_group(&sh, "web", &p, 3, 4);
	assert_int_equal(sv_core_restore_release(sh.c, id, 0), SV_OK);
	assert_int_equal(sv_core_restore_release(sh.c, id, 1), SV_OK);
	a = sh_adopt(&sh, id, 0, 2, true, false, 0);
	assert_int_equal(sv_core_restore(sh.c, id, 1, 5, NULL, sh.now), SV_OK);
	c = sh_adopt(&sh, id, 2, 0, true, false, 0);
	sh_drain(&sh);
	assert_false(S(&sh, id, 0)->wanted);
	assert_false(S(&sh, id, 1)->wanted);
	assert_true(S(&sh, id, 2)->wanted);
	assert_int_equal(G(&sh, id)->ords.held, 1);
	assert_int_equal(sh_proc(&sh, a)->lastsig, SIGTERM); /* stopped */
	assert_int_equal(sh_proc(&sh, c)->lastsig, 0); /* kept */
	assert_int_equal(sh_spawn_all(&sh), 0); /* ordinal 1 not started */
	sh_exit_pid(&sh, a, x_sig(SIGTERM));
	assert_int_equal(sh_spawn_all(&sh), 0); /* and 0 not replaced */
	assert_int_equal(S(&sh, id, 0)->cur.state, SV_PROC_NONE);
	/* A seat with a process, an ordinal out of range, a group that does
	 * not exist: refused. */
	assert_int_equal(sv_core_restore_release(sh.c, id, 2), SV_EBUSY);
	assert_int_equal(sv_core_restore_release(sh.c, id, 4), SV_EINVAL);
	assert_int_equal(
	    sv_core_restore_release(sh.c, id + 1, 0), SV_ENOTFOUND);
	/* Released, not lost: a scale-up takes 0 and 1 again, generations
	 * continued (0 after its adopted 2, 1 from its floor 5). */
	assert_int_equal(sv_core_scale(sh.c, id, 3, &previous, sh.now), SV_OK);
	sh_drain(&sh);
	assert_int_equal(sh_spawn_all(&sh), 2);
	assert_true(S(&sh, id, 0)->wanted && S(&sh, id, 1)->wanted);
	assert_int_equal(S(&sh, id, 0)->cur.generation, 3);
	assert_int_equal(S(&sh, id, 1)->cur.generation, 5);
	sh_fini(&sh);
}

/* ---- drain and rolling restart -------------------------------------------
 */

/* Three workers drained with a 1 s deadline (cap +2 s): 0 acknowledges and
 * exits 0 early, 1 asks for more time and exits within it, 2 ignores the
 * notice and is SIGKILLed at its deadline. The report says so; nothing is
 * restarted; the ordinals are released. */
static void
test_drain_group(void **state)
{
	shell           sh;
	sv_group_policy p = pol_plain();
	uint32_t        id;
	uint64_t        did = 0, dl = 0;
	int64_t         pid[3];
	size_t          ev0, sig0;
	const sv_drain *d;

	(void) state;
	p.drain_signal        = SIGTERM;
	p.drain_timeout_ms    = 1000;
	p.drain_extend_max_ms = 2000;
	sh_init(&sh, SV_STRATEGY_ONE_FOR_ONE);
	id = sh_group(&sh, "web", &p, 3, 3);
	assert_int_equal(sh_spawn_all(&sh), 3);
	for (uint32_t o = 0; o < 3; o++) {
		pid[o] = sh_pid(&sh, id, o);
	}
	ev0  = sh.nevs;
	sig0 = sh.nsigs;
	assert_int_equal(
	    sv_core_drain(sh.c, SV_DRAIN_GROUP, id, 0, 0, sh.now, &did),
	    SV_OK);
	sh_drain(&sh);
	/* a notice then the drain signal for each, in that order */
	assert_int_equal(sh_nev(&sh, ev0, SV_EV_DRAINING, id, UINT32_MAX), 3);
	assert_int_equal(
	    sh_ev(&sh, ev0, SV_EV_DRAINING, id, 1)->delay_ms, 1000);
	assert_int_equal(
	    sh_ev(&sh, ev0, SV_EV_DRAINING, id, 1)->drain_id, did);
	assert_int_equal(sh.nsigs - sig0, 3);
	assert_int_equal(sh_proc(&sh, pid[2])->lastsig, SIGTERM);
	assert_int_equal(sv_core_group_count(G(&sh, id)), 0);
	assert_int_equal(
	    sv_core_seat_state(G(&sh, id), S(&sh, id, 0)), SV_SEAT_DRAINING);
	assert_int_equal(
	    sv_core_restart(sh.c, id, 0, false, 0, sh.now), SV_ENOTFOUND);
	/* 0: acknowledges 7 served, exits 0 after 100 ms */
	sh.now += 100;
	assert_int_equal(
	    sv_core_drain_ack(sh.c, sh_proc(&sh, pid[0])->key, 7), SV_OK);
	sh_exit_pid(&sh, pid[0], x_code(0));
	/* 1: asks for 1.5 s more at 500 ms (deadline 2000), then for 10 s
	 * (capped at 3000) */
	sh.now = 500;
	assert_int_equal(sv_core_drain_extend(sh.c, sh_proc(&sh, pid[1])->key,
	                     1500, sh.now, &dl),
	    SV_OK);
	sh_drain(&sh);
	assert_int_equal(dl, 2000);
	assert_int_equal(sv_core_drain_extend(sh.c, sh_proc(&sh, pid[1])->key,
	                     10000, sh.now, &dl),
	    SV_OK);
	sh_drain(&sh);
	assert_int_equal(dl, 3000);
	/* at 1000 ms: 2 (no extension) is killed, 1 is not */
	sh_advance(&sh, 1000);
	assert_int_equal(sh_proc(&sh, pid[2])->lastsig, SIGKILL);
	assert_int_equal(sh_proc(&sh, pid[1])->lastsig, SIGTERM);
	sh_exit_pid(&sh, pid[2], x_sig(SIGKILL));
	sh_advance(&sh, 2500);
	assert_int_equal(sh_proc(&sh, pid[1])->lastsig, SIGTERM);
	sh_exit_pid(&sh, pid[1], x_code(3));
	/* nothing restarts; the report accounts for everyone */
	assert_int_equal(sh_spawn_all(&sh), 0);
	sh_advance(&sh, 60000);
	assert_int_equal(sh_spawn_all(&sh), 0);
	assert_non_null(d = sv_core_drain_report(sh.c, did));
	assert_int_equal(d->n, 3);
	assert_true(sv_drain_done(d));
	assert_true(d->rows[0].acked && d->rows[0].exited);
	assert_int_equal(d->rows[0].served, 7);
	assert_int_equal(d->rows[0].code, 0);
	assert_int_equal(d->rows[0].time_to_exit_ms, 100);
	assert_int_equal(d->rows[0].pid, pid[0]);
	assert_false(d->rows[0].killed);
	assert_false(d->rows[1].acked);
	assert_int_equal(d->rows[1].code, 3);
	assert_int_equal(d->rows[1].time_to_exit_ms, 2500);
	assert_false(d->rows[1].killed);
	assert_true(d->rows[2].killed);
	assert_false(d->rows[2].exited);
	assert_int_equal(d->rows[2].signo, SIGKILL);
	assert_int_equal(sh_nev(&sh, ev0, SV_EV_STOPPED, id, UINT32_MAX), 3);
	assert_int_equal(
	    sh_ev(&sh, ev0, SV_EV_STOPPED, id, 0)->why, SV_WHY_DRAINED);
	/* not draining any more: refused */
	assert_int_equal(
	    sv_core_drain_ack(sh.c, (sv_wkey) {id, 0, 0}, 1), SV_ENOTFOUND);
	sh_fini(&sh);
}

/* drain_signal 0: a notice only, no signal; the deadline still kills. */
static void
test_drain_notice_only(void **state)
{
	shell           sh;
	sv_group_policy p = pol_plain();
	uint32_t        id;
	uint64_t        did = 0;
	int64_t         pid;

	(void) state;
	p.drain_signal     = 0;
	p.drain_timeout_ms = 300;
	sh_init(&sh, SV_STRATEGY_ONE_FOR_ONE);
	id = sh_group(&sh, "w", &p, 2, 2);
	assert_int_equal(sh_spawn_all(&sh), 2);
	pid = sh_pid(&sh, id, 1);
	assert_int_equal(
	    sv_core_drain(sh.c, SV_DRAIN_WORKER, id, 1, 0, sh.now, &did),
	    SV_OK);
	sh_drain(&sh);
	assert_int_equal(sh_proc(&sh, pid)->lastsig, 0);
	assert_int_equal(sv_core_group_count(G(&sh, id)), 1);
	assert_int_equal(S(&sh, id, 0)->cur.state, SV_PROC_RUNNING);
	sh_advance(&sh, 299);
	assert_int_equal(sh_proc(&sh, pid)->lastsig, 0);
	sh_advance(&sh, 300);
	assert_int_equal(sh_proc(&sh, pid)->lastsig, SIGKILL);
	sh_exit_pid(&sh, pid, x_sig(SIGKILL));
	assert_int_equal(sh_spawn_all(&sh), 0);
	assert_true(sv_drain_done(sv_core_drain_report(sh.c, did)));
	assert_int_equal(
	    sv_core_drain(sh.c, SV_DRAIN_WORKER, id, 1, 0, sh.now, &did),
	    SV_ENOTFOUND);
	sh_fini(&sh);
}

/* ready_count counts the ready processes of group id, both generations of
 * every seat. */
static uint32_t
ready_count(const shell *sh, uint32_t id)
{
	const sv_cgroup *g = G(sh, id);
	uint32_t         n = 0;

	for (uint32_t o = 0; o < g->nseats; o++) {
		const sv_proc *ps[2] = {
		    &g->seats[o].cur, sv_core_seat_old(sh->c, &g->seats[o])};
		for (int k = 0; k < 2; k++) {
			n += ps[k]->state == SV_PROC_RUNNING && ps[k]->ready;
		}
	}
	return n;
}

/* all_ready starts sh with group "web" of n seats that need readiness
 * (p's other fields as the caller set them), spawns all n and makes each
 * ready, keeping its generation in gen0[o] when gen0 is not NULL; returns
 * the group's id. */
static uint32_t
all_ready(shell *sh, sv_group_policy *p, uint32_t n, uint64_t *gen0)
{
	uint32_t id;

	p->need_ready = true;
	sh_init(sh, SV_STRATEGY_ONE_FOR_ONE);
	id = sh_group(sh, "web", p, n, n);
	assert_int_equal(sh_spawn_all(sh), n);
	for (uint32_t o = 0; o < n; o++) {
		if (gen0 != NULL) {
			gen0[o] = S(sh, id, o)->cur.generation;
		}
		assert_int_equal(
		    sv_core_ready(sh->c, sh_key(sh, id, o), sh->now), SV_OK);
		sh_drain(sh);
	}
	return id;
}

/* A rolling restart of 3 workers with readiness: each new generation
 * starts beside the old one, the old one is drained once the new one is
 * ready; ready never drops below 3; generations grow by one. */
static void
test_roll(void **state)
{
	shell           sh;
	sv_group_policy p = pol_plain();
	uint32_t        id;
	uint64_t        did = 0, gen0[3];
	const sv_drain *d;

	(void) state;
	p.drain_signal     = SIGTERM;
	p.drain_timeout_ms = 1000;
	id                 = all_ready(&sh, &p, 3, gen0);
	assert_int_equal(ready_count(&sh, id), 3);
	assert_int_equal(sv_core_roll(sh.c, id, 500, sh.now, &did), SV_OK);
	sh_drain(&sh);
	assert_int_equal(sv_core_roll(sh.c, id, 500, sh.now, &did), SV_EBUSY);
	for (uint32_t o = 0; o < 3; o++) {
		int64_t oldpid = OLD(&sh, id, o)->pid;
		assert_true(S(&sh, id, o)->rolling);
		/* only this ordinal overlaps */
		for (uint32_t k = 0; k < 3; k++) {
			assert_int_equal(S(&sh, id, k)->rolling, k == o);
		}
		assert_int_equal(sh_spawn_all(&sh), 1);
		assert_int_equal(ready_count(&sh, id), 3);
		assert_int_equal(sh_proc(&sh, oldpid)->lastsig, 0);
		sh.now += 10;
		assert_int_equal(
		    sv_core_ready(sh.c, sh_key(&sh, id, o), sh.now), SV_OK);
		sh_drain(&sh);
		/* the old one is told to drain only now */
		assert_int_equal(sh_proc(&sh, oldpid)->lastsig, SIGTERM);
		assert_true(OLD(&sh, id, o)->draining);
		assert_int_equal(S(&sh, id, o)->cur.generation, gen0[o] + 1);
		assert_true(ready_count(&sh, id) >= 3);
		sh_exit_pid(&sh, oldpid, x_code(0));
		assert_int_equal(ready_count(&sh, id), 3);
	}
	assert_non_null(d = sv_core_drain_report(sh.c, did));
	assert_int_equal(d->n, 3);
	assert_true(sv_drain_done(d));
	assert_false(d->roll_failed);
	assert_int_equal(sv_core_group_count(G(&sh, id)), 3);
	sh_fini(&sh);
}

/* A roll whose second new generation never gets ready: it is stopped at
 * the ready timeout, the roll stops, the old process keeps serving and is
 * the seat's process again; ordinal 2 is not touched. */
static void
test_roll_not_ready(void **state)
{
	shell           sh;
	sv_group_policy p = pol_plain();
	uint32_t        id;
	uint64_t        did = 0;
	int64_t         old0, old1, old2, new1;
	const sv_drain *d;

	(void) state;
	id   = all_ready(&sh, &p, 3, NULL);
	old1 = sh_pid(&sh, id, 1);
	old2 = sh_pid(&sh, id, 2);
	assert_int_equal(sv_core_roll(sh.c, id, 400, sh.now, &did), SV_OK);
	sh_drain(&sh);
	assert_int_equal(sh_spawn_all(&sh), 1);
	old0 = OLD(&sh, id, 0)->pid;
	assert_int_equal(
	    sv_core_ready(sh.c, sh_key(&sh, id, 0), sh.now), SV_OK);
	sh_drain(&sh);
	/* old 0 drains: with max_surge 1 ordinal 1 waits for its exit */
	assert_int_equal(sh_spawn_all(&sh), 0);
	sh_exit_pid(&sh, old0, x_code(0));
	assert_int_equal(sh_spawn_all(&sh), 1); /* ordinal 1, never ready */
	new1 = sh_pid(&sh, id, 1);
	sh_advance(&sh, sh.now + 399);
	assert_int_equal(sh_proc(&sh, new1)->lastsig, 0);
	sh_advance(&sh, sh.now + 1);
	assert_int_equal(sh_proc(&sh, new1)->lastsig, SIGTERM);
	assert_int_equal(sh_proc(&sh, old1)->lastsig, 0);
	assert_non_null(d = sv_core_drain_report(sh.c, did));
	assert_true(d->roll_failed);
	sh_exit_pid(&sh, new1, x_sig(SIGTERM));
	/* the old one is the seat's process again, still ready */
	assert_int_equal(S(&sh, id, 1)->cur.pid, old1);
	assert_int_equal(OLD(&sh, id, 1)->state, SV_PROC_NONE);
	assert_true(S(&sh, id, 1)->cur.ready);
	assert_int_equal(sh_spawn_all(&sh), 0);
	assert_int_equal(S(&sh, id, 2)->cur.pid, old2);
	assert_int_equal(sh_proc(&sh, old2)->lastsig, 0);
	/* new 0, old 1 and old 2 */
	assert_int_equal(ready_count(&sh, id), 3);
	assert_true(sv_drain_done(d));
	assert_int_equal(d->n, 1);
	sh_fini(&sh);
}

/* roll_budget_run rolls a group of 4 workers with readiness whose processes
 * drain slowly (each exits 1500 ms after its drain signal), on a fake clock
 * in 50 ms steps, and checks at every step that the processes alive stay
 * within 4 + max_surge and the ready ones at or above 4 - max_unavailable.
 * Budgets ~0u: sv_core_roll (the defaults). Returns the most processes
 * seen alive at once; *min_readyp the fewest ready. */
static uint32_t
roll_budget_run(uint32_t surge, uint32_t unavail, uint32_t *min_readyp)
{
	enum { N = 4, DRAIN_MS = 1500, STEP_MS = 50 };
	shell           sh;
	sv_group_policy p = pol_plain();
	uint32_t        id, peak = 0, min_ready = N;
	uint64_t        did = 0, gen0[N], sigat[64] = {0};
	const sv_drain *d;
	bool            dflt = surge == ~0u;

	p.drain_signal     = SIGTERM;
	p.drain_timeout_ms = 60000;
	id                 = all_ready(&sh, &p, N, gen0);
	assert_int_equal(dflt ? sv_core_roll(sh.c, id, 5000, sh.now, &did)
	                      : sv_core_roll_budget(sh.c, id, 5000, surge,
	                          unavail, sh.now, &did),
	    SV_OK);
	sh_drain(&sh);
	if (dflt) {
		surge   = 1;
		unavail = 0;
	}
	assert_non_null(d = sv_core_drain_report(sh.c, did));
	for (int step = 0; step < 2000 && !sv_drain_done(d); step++) {
		uint32_t alive = 0, ready;

		(void) sh_spawn_all(&sh);
		for (size_t i = 0; i < sh.nprocs; i++) {
			fproc *fp = &sh.procs[i];
			alive += fp->alive;
		}
		ready = ready_count(&sh, id);
		if (alive > N + surge) {
			print_message("surge %u unavail %u step %d alive %u\n",
			    surge, unavail, step, alive);
		}
		assert_true(alive <= N + surge);
		assert_true(ready + unavail >= N);
		peak      = alive > peak ? alive : peak;
		min_ready = ready < min_ready ? ready : min_ready;
		sh.now += STEP_MS;
		/* Slow drains: a process exits DRAIN_MS after its signal. */
		for (size_t i = 0; i < sh.nprocs; i++) {
			fproc  *fp  = &sh.procs[i];
			int64_t pid = PID_BASE + (int64_t) i;
			assert_true(i < 64);
			if (!fp->alive || fp->lastsig == 0) {
				continue;
			}
			if (sigat[i] == 0) {
				sigat[i] = sh.now;
			} else if (sh.now >= sigat[i] + DRAIN_MS) {
				sh_exit_pid(&sh, pid, x_code(0));
			}
		}
		/* A new generation is ready one step after its spawn. */
		for (uint32_t o = 0; o < N; o++) {
			if (S(&sh, id, o)->cur.state == SV_PROC_STARTING) {
				assert_int_equal(
				    sv_core_ready(
				        sh.c, sh_key(&sh, id, o), sh.now),
				    SV_OK);
				sh_drain(&sh);
			}
		}
	}
	assert_true(sv_drain_done(d));
	assert_false(d->roll_failed);
	assert_int_equal(d->n, N);
	assert_int_equal(d->max_surge, surge);
	assert_int_equal(d->max_unavailable, unavail);
	for (uint32_t o = 0; o < N; o++) {
		if (S(&sh, id, o)->cur.generation <= gen0[o]) {
			print_message(
			    "surge %u unavail %u ordinal %u not rolled\n",
			    surge, unavail, o);
		}
		assert_true(S(&sh, id, o)->cur.generation > gen0[o]);
		assert_true(S(&sh, id, o)->cur.ready);
	}
	assert_int_equal(ready_count(&sh, id), N);
	sh_fini(&sh);
	*min_readyp = min_ready;
	return peak;
}

/* A roll's budgets under slow drains: at most N + max_surge processes live
 * and at most max_unavailable seats lack a ready process at any time, and
 * the roll uses what it is allowed (so it is not slower than it must be);
 * defaults 1 and 0; both 0 is refused. */
static void
test_roll_budgets(void **state)
{
	uint32_t        min_ready = 0;
	shell           sh;
	sv_group_policy p = pol_plain();
	uint32_t        id;
	uint64_t        did = 0;

	(void) state;
	assert_int_equal(roll_budget_run(~0u, ~0u, &min_ready), 5);
	assert_int_equal(min_ready, 4);
	assert_int_equal(roll_budget_run(1, 0, &min_ready), 5);
	assert_int_equal(min_ready, 4);
	assert_int_equal(roll_budget_run(2, 0, &min_ready), 6);
	assert_int_equal(min_ready, 4);
	/* no surge: each old process is drained before its successor */
	assert_int_equal(roll_budget_run(0, 1, &min_ready), 4);
	assert_int_equal(min_ready, 3);
	assert_int_equal(roll_budget_run(0, 2, &min_ready), 4);
	assert_int_equal(min_ready, 2);
	assert_int_equal(roll_budget_run(1, 1, &min_ready), 5);
	assert_true(min_ready >= 3);
	sh_init(&sh, SV_STRATEGY_ONE_FOR_ONE);
	id = sh_group(&sh, "web", &p, 2, 2);
	assert_int_equal(
	    sv_core_roll_budget(sh.c, id, 0, 0, 0, sh.now, &did), SV_EINVAL);
	assert_false(G(&sh, id)->roll.active);
	sh_fini(&sh);
}

/* ---- the seat view (core/seat_view.c) -----------------------------------
 */

/* view returns the view of seat (id, ordinal) through the public entry. */
static sv_seat_view
view(const shell *sh, uint32_t id, uint32_t ordinal)
{
	sv_seat_view v;

	memset(&v, 0xa5, sizeof(v)); /* every field must be written */
	assert_int_equal(sv_core_seat_view(sh->c, id, ordinal, &v), SV_OK);
	return v;
}

/* A seat through its cycle with the fake clock: pending, started but not
 * ready, running and ready, in backoff after a fast failure (exit code
 * shown, restart due), restarted (restarts counted), killed by a signal
 * (signal shown, no code), failed by intensity; unknown seats are
 * refused. */
static void
test_seat_view_cycle(void **state)
{
	shell           sh;
	sv_group_policy p = pol_plain();
	uint32_t        id;
	sv_seat_view    v;
	sv_wkey         k;

	(void) state;
	p.need_ready    = true;
	p.backoff       = (sv_backoff_policy) {10000, 100, 30000, 2.0};
	p.max_restarts  = 2;
	p.max_window_ms = 100000;
	sh_init(&sh, SV_STRATEGY_ONE_FOR_ONE);
	sh.now = 1000;
	id     = sh_group(&sh, "web", &p, 1, 2);
	assert_int_equal(sv_core_seat_view(sh.c, id, 2, &v), SV_ENOTFOUND);
	assert_int_equal(
	    sv_core_seat_view(sh.c, id + 100, 0, &v), SV_ENOTFOUND);
	/* ordinal 1 is not held: empty, not listed */
	v = view(&sh, id, 1);
	assert_int_equal(v.state, SV_SEAT_EMPTY);
	assert_false(v.wanted);
	assert_false(v.current.listed);
	assert_false(v.previous.listed);
	/* pending: starting, no process yet, the next generation shown */
	v = view(&sh, id, 0);
	assert_int_equal(v.ordinal, 0);
	assert_int_equal(v.state, SV_SEAT_STARTING);
	assert_true(v.wanted);
	assert_true(v.current.listed);
	assert_false(v.current.live);
	assert_int_equal(v.current.pid, 0);
	assert_int_equal(v.generation, S(&sh, id, 0)->tok.generation);
	assert_false(v.has_exit);
	assert_int_equal(v.last_exit_code, -1);
	assert_int_equal(v.last_signal, 0);
	assert_int_equal(v.restarts, 0);
	/* spawned, readiness awaited */
	assert_int_equal(sh_spawn_all(&sh), 1);
	k = sh_key(&sh, id, 0);
	v = view(&sh, id, 0);
	assert_int_equal(v.state, SV_SEAT_STARTING);
	assert_true(v.current.live);
	assert_int_equal(v.current.pid, sh_pid(&sh, id, 0));
	assert_int_equal(v.current.started_ms, 1000);
	assert_int_equal(v.generation, k.generation);
	assert_int_equal(v.current.generation, k.generation);
	assert_false(v.current.ready);
	assert_false(v.current.draining);
	assert_false(v.previous.listed);
	assert_ptr_equal(sv_seat_view_proc(&v, k.generation), &v.current);
	/* ready */
	sh.now = 1500;
	assert_int_equal(sv_core_ready(sh.c, k, sh.now), SV_OK);
	sh_drain(&sh);
	v = view(&sh, id, 0);
	assert_int_equal(v.state, SV_SEAT_RUNNING);
	assert_true(v.current.ready);
	assert_int_equal(v.restart_due_ms, 0);
	/* a fast failure: backoff, the exit code, the restart due */
	sh.now = 2000;
	sh_exit(&sh, id, 0, x_code(3));
	v = view(&sh, id, 0);
	assert_int_equal(v.state, SV_SEAT_BACKOFF);
	assert_false(v.current.live);
	assert_int_equal(v.current.pid, 0);
	assert_false(v.current.ready);
	assert_true(v.has_exit);
	assert_int_equal(v.last_exit_code, 3);
	assert_int_equal(v.last_signal, 0);
	assert_int_equal(v.fast_failures, 1);
	assert_true(v.restart_due_ms > 2000);
	assert_int_equal(v.restart_due_ms, S(&sh, id, 0)->due_ms);
	assert_true(v.generation > k.generation);
	/* the backoff ends: restarted, counted */
	sh_advance(&sh, v.restart_due_ms);
	assert_int_equal(sh_spawn_all(&sh), 1);
	v = view(&sh, id, 0);
	assert_int_equal(v.state, SV_SEAT_STARTING);
	assert_int_equal(v.restarts, 1);
	assert_int_equal(v.current.started_ms, sh.now);
	assert_int_equal(v.generation, sh_key(&sh, id, 0).generation);
	/* killed by a signal: the signal, no exit code */
	sh_exit(&sh, id, 0, x_sig(SIGKILL));
	v = view(&sh, id, 0);
	assert_int_equal(v.last_exit_code, -1);
	assert_int_equal(v.last_signal, SIGKILL);
	assert_int_equal(v.fast_failures, 2);
	/* one more failure within the window fails the group */
	sh_advance(&sh, v.restart_due_ms);
	assert_int_equal(sh_spawn_all(&sh), 1);
	sh_exit(&sh, id, 0, x_code(1));
	assert_true(G(&sh, id)->failed);
	v = view(&sh, id, 0);
	assert_int_equal(v.state, SV_SEAT_FAILED);
	assert_true(v.wanted);
	assert_true(v.current.listed);
	assert_false(v.current.live);
	assert_int_equal(v.last_exit_code, 1);
	assert_int_equal(v.restart_due_ms, 0);
	check_core(&sh);
	sh_fini(&sh);
}

/* A drained worker: shown draining with its deadline, its ordinal no
 * longer wanted; once it exits the seat is empty and not listed. */
static void
test_seat_view_drain(void **state)
{
	shell           sh;
	sv_group_policy p = pol_plain();
	uint32_t        id;
	uint64_t        did = 0;
	sv_seat_view    v;
	int64_t         pid;

	(void) state;
	p.drain_signal        = SIGTERM;
	p.drain_timeout_ms    = 1000;
	p.drain_extend_max_ms = 2000;
	sh_init(&sh, SV_STRATEGY_ONE_FOR_ONE);
	sh.now = 500;
	id     = sh_group(&sh, "web", &p, 2, 2);
	assert_int_equal(sh_spawn_all(&sh), 2);
	pid    = sh_pid(&sh, id, 1);
	sh.now = 700;
	assert_int_equal(
	    sv_core_drain(sh.c, SV_DRAIN_WORKER, id, 1, 0, sh.now, &did),
	    SV_OK);
	sh_drain(&sh);
	v = view(&sh, id, 1);
	assert_int_equal(v.state, SV_SEAT_DRAINING);
	assert_false(v.wanted);
	assert_true(v.current.listed);
	assert_true(v.current.live);
	assert_true(v.current.draining);
	assert_int_equal(v.current.pid, pid);
	assert_int_equal(v.current.drain_due_ms, 1700);
	assert_int_equal(v.current.started_ms, 500);
	/* the other seat is untouched */
	v = view(&sh, id, 0);
	assert_int_equal(v.state, SV_SEAT_RUNNING);
	assert_false(v.current.draining);
	assert_int_equal(v.current.drain_due_ms, 0);
	sh.now = 800;
	sh_exit_pid(&sh, pid, x_code(0));
	v = view(&sh, id, 1);
	assert_int_equal(v.state, SV_SEAT_EMPTY);
	assert_false(v.current.listed);
	assert_false(v.current.live);
	assert_false(v.current.draining);
	check_core(&sh);
	sh_fini(&sh);
}

/* A rolling restart: the old generation is listed beside the new one,
 * shown running while its successor starts, then draining with its
 * deadline once the successor is ready; sv_seat_view_proc picks each by
 * generation. */
static void
test_seat_view_roll(void **state)
{
	shell           sh;
	sv_group_policy p = pol_plain();
	uint32_t        id;
	uint64_t        did = 0;
	sv_seat_view    v;
	sv_wkey         k0, k1;
	int64_t         oldpid;

	(void) state;
	p.need_ready       = true;
	p.drain_signal     = SIGTERM;
	p.drain_timeout_ms = 1000;
	sh_init(&sh, SV_STRATEGY_ONE_FOR_ONE);
	sh.now = 100;
	id     = sh_group(&sh, "web", &p, 1, 1);
	assert_int_equal(sh_spawn_all(&sh), 1);
	k0     = sh_key(&sh, id, 0);
	oldpid = sh_pid(&sh, id, 0);
	assert_int_equal(sv_core_ready(sh.c, k0, sh.now), SV_OK);
	sh_drain(&sh);
	sh.now = 200;
	assert_int_equal(sv_core_roll(sh.c, id, 500, sh.now, &did), SV_OK);
	sh_drain(&sh);
	assert_int_equal(sh_spawn_all(&sh), 1);
	k1 = sh_key(&sh, id, 0);
	assert_true(k1.generation > k0.generation);
	v = view(&sh, id, 0);
	assert_int_equal(v.state, SV_SEAT_STARTING);
	assert_int_equal(v.generation, k1.generation);
	assert_true(v.current.listed);
	assert_true(v.previous.listed);
	assert_true(v.previous.live);
	assert_int_equal(v.previous.state, SV_SEAT_RUNNING);
	assert_int_equal(v.previous.generation, k0.generation);
	assert_int_equal(v.previous.pid, oldpid);
	assert_int_equal(v.previous.started_ms, 100);
	assert_true(v.previous.ready);
	assert_false(v.previous.draining);
	assert_ptr_equal(sv_seat_view_proc(&v, k0.generation), &v.previous);
	assert_ptr_equal(sv_seat_view_proc(&v, k1.generation), &v.current);
	/* the successor is ready: the old one drains */
	sh.now = 300;
	assert_int_equal(sv_core_ready(sh.c, k1, sh.now), SV_OK);
	sh_drain(&sh);
	v = view(&sh, id, 0);
	assert_int_equal(v.state, SV_SEAT_RUNNING);
	assert_true(v.current.ready);
	assert_true(v.previous.listed);
	assert_int_equal(v.previous.state, SV_SEAT_DRAINING);
	assert_true(v.previous.draining);
	assert_int_equal(v.previous.drain_due_ms, 1300);
	/* the old one exits: no longer listed */
	sh_exit_pid(&sh, oldpid, x_code(0));
	v = view(&sh, id, 0);
	assert_false(v.previous.listed);
	assert_false(v.previous.live);
	assert_true(v.current.listed);
	check_core(&sh);
	sh_fini(&sh);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table),
	    cmocka_unit_test(test_restore_adopt),
	    cmocka_unit_test(test_restore_stopping_and_excess),
	    cmocka_unit_test(test_restore_stop_deadline),
	    cmocka_unit_test(test_restore_released),
	    cmocka_unit_test(test_strategy_sibling_types),
	    cmocka_unit_test(test_strategy_delay),
	    cmocka_unit_test(test_intensity_edges),
	    cmocka_unit_test(test_intensity_sliding),
	    cmocka_unit_test(test_intensity_in_plan),
	    cmocka_unit_test(test_backoff_sequence),
	    cmocka_unit_test(test_backoff_operator_restart),
	    cmocka_unit_test(test_backoff_cancelled),
	    cmocka_unit_test(test_ready_sequential),
	    cmocka_unit_test(test_start_timeout_kill),
	    cmocka_unit_test(test_start_timeout_abandon),
	    cmocka_unit_test(test_watchdog),
	    cmocka_unit_test(test_stop_escalate),
	    cmocka_unit_test(test_stop_abandon),
	    cmocka_unit_test(test_restart_expected_generation),
	    cmocka_unit_test(test_start_terminate_one),
	    cmocka_unit_test(test_delete_group),
	    cmocka_unit_test(test_shutdown),
	    cmocka_unit_test(test_restart_while_spawning),
	    cmocka_unit_test(test_plan_while_spawning),
	    cmocka_unit_test(test_start_one_while_spawning),
	    cmocka_unit_test(test_drain_group),
	    cmocka_unit_test(test_drain_notice_only),
	    cmocka_unit_test(test_roll),
	    cmocka_unit_test(test_roll_not_ready),
	    cmocka_unit_test(test_roll_budgets),
	    cmocka_unit_test(test_seat_view_cycle),
	    cmocka_unit_test(test_seat_view_drain),
	    cmocka_unit_test(test_seat_view_roll),
	    cmocka_unit_test(test_model),
	};
	return cmocka_run_group_tests_name("supervision", tests, NULL, NULL);
}
