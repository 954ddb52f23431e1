/*
 * test_core_faults.c — lossless effects under allocation failure: the
 * supervision core (core/supervision.h) driven by the model test's random
 * sequences (tests/test_supervision.c, included here with its fake shell
 * and generator) while the core's allocation seam (core/alloc.h) fails one
 * allocation, the Nth, for N = 1, 2, 3, ... until a run makes fewer than N
 * allocations (sqlite's approach).
 *
 * Every core entry point the model calls goes through a wrapper that
 * snapshots the core first. An entry point that returns SV_ENOMEM must have
 * changed nothing (the snapshot compares equal, no effect queued); the
 * wrapper then calls it again, the injection being lifted, as the daemon
 * does. An allocation failure must never be swallowed (an entry point that
 * hit one returns SV_ENOMEM), and no effect may be pushed beyond what the
 * entry point reserved (fxring overruns stay 0).
 *
 * After every step the core and the effects it emitted must agree: every
 * armed seat, process and plan timer of the core is armed in the fake
 * shell with the same guard, every stopping process was signalled, and once
 * shutting down every live process was signalled or has a deadline. Each
 * run ends with a shutdown that must complete although processes exit only
 * when signalled. Because a failed call is retried with the same inputs,
 * a run with an injected failure must produce exactly the events, signals
 * and spawns of the run without one; a dropped effect shows as a
 * difference.
 *
 * Also: a shutdown of 100 workers while every allocation fails sends 100
 * stop signals (with effects dropped when the ring could not grow, it sent
 * 21).
 */
#include "core/alloc.h"
#include "core/supervision_internal.h"
#include "sv_alloc_fault.h" /* FI, fi_hook, fi_arm: the injection */

/* The wrappers the included model calls instead of the core: fi_create
 * (below) and, for each entry point X(name, parameters, arguments) of
 * FI_ENTRY_POINTS, fi_name, which calls sv_core_name under FI_CALL. */
static sv_err fi_create(sv_strategy st, sv_core **cp);
/* clang-format off */
#define FI_ENTRY_POINTS(X)                                                   \
	X(add_group,                                                         \
	    (sv_core *c, const char *name, const sv_group_policy *pol,       \
	        uint32_t count, uint32_t max, uint32_t *idp),                \
	    (c, name, pol, count, max, idp))                                 \
	X(spawned,                                                           \
	    (sv_core *c, sv_spawn_ticket t, int64_t pid, uint64_t now),      \
	    (c, t, pid, now))                                                \
	X(spawn_failed,                                                      \
	    (sv_core *c, sv_spawn_ticket t, int error, uint64_t now),        \
	    (c, t, error, now))                                              \
	X(exited, (sv_core *c, sv_wkey key, sv_exit x, uint64_t now),        \
	    (c, key, x, now))                                                \
	X(timer,                                                             \
	    (sv_core *c, sv_timer_kind kind, sv_wkey key, uint64_t guard,    \
	        uint64_t now),                                               \
	    (c, kind, key, guard, now))                                      \
	X(ready, (sv_core *c, sv_wkey key, uint64_t now), (c, key, now))     \
	X(heartbeat, (sv_core *c, sv_wkey key, uint64_t now), (c, key, now)) \
	X(scale,                                                             \
	    (sv_core *c, uint32_t id, uint32_t count, uint32_t *prev,        \
	        uint64_t now),                                               \
	    (c, id, count, prev, now))                                       \
	X(restart,                                                           \
	    (sv_core *c, uint32_t id, uint32_t ordinal, bool has,            \
	        uint64_t exp, uint64_t now),                                 \
	    (c, id, ordinal, has, exp, now))                                 \
	X(reset, (sv_core *c, uint32_t id, uint64_t now), (c, id, now))      \
	X(start_one, (sv_core *c, uint32_t id, uint32_t *op, uint64_t now),  \
	    (c, id, op, now))                                                \
	X(terminate_one,                                                     \
	    (sv_core *c, uint32_t id, uint32_t ordinal, uint64_t now),       \
	    (c, id, ordinal, now))                                           \
	X(delete_group, (sv_core *c, uint32_t id, uint64_t now),             \
	    (c, id, now))                                                    \
	X(shutdown, (sv_core *c, uint64_t now), (c, now))                    \
	X(drain,                                                             \
	    (sv_core *c, sv_drain_scope scope, uint32_t id,                  \
	        uint32_t ordinal, uint64_t deadline, uint64_t now,           \
	        uint64_t *didp),                                             \
	    (c, scope, id, ordinal, deadline, now, didp))                    \
	X(roll,                                                              \
	    (sv_core *c, uint32_t id, uint64_t rt, uint64_t now,             \
	        uint64_t *didp),                                             \
	    (c, id, rt, now, didp))                                          \
	X(drain_extend,                                                      \
	    (sv_core *c, sv_wkey key, uint64_t more, uint64_t now,           \
	        uint64_t *dlp),                                              \
	    (c, key, more, now, dlp))                                        \
	X(drain_ack, (sv_core *c, sv_wkey key, uint64_t served),             \
	    (c, key, served))
/* clang-format on */

/* FI_DECLARE declares the wrapper of one entry point. */
#define FI_DECLARE(name, params, args) static sv_err fi_##name params;
FI_ENTRY_POINTS(FI_DECLARE)

#define sv_core_create        fi_create
#define sv_core_add_group     fi_add_group
#define sv_core_spawned       fi_spawned
#define sv_core_spawn_failed  fi_spawn_failed
#define sv_core_exited        fi_exited
#define sv_core_timer         fi_timer
#define sv_core_ready         fi_ready
#define sv_core_heartbeat     fi_heartbeat
#define sv_core_scale         fi_scale
#define sv_core_restart       fi_restart
#define sv_core_reset         fi_reset
#define sv_core_start_one     fi_start_one
#define sv_core_terminate_one fi_terminate_one
#define sv_core_delete_group  fi_delete_group
#define sv_core_shutdown      fi_shutdown
#define sv_core_drain         fi_drain
#define sv_core_roll          fi_roll
#define sv_core_drain_extend  fi_drain_extend
#define sv_core_drain_ack     fi_drain_ack
#define main                  supervision_main
int supervision_main(void);
#include "test_supervision.c"
#undef main
#undef sv_core_create
#undef sv_core_add_group
#undef sv_core_spawned
#undef sv_core_spawn_failed
#undef sv_core_exited
#undef sv_core_timer
#undef sv_core_ready
#undef sv_core_heartbeat
#undef sv_core_scale
#undef sv_core_restart
#undef sv_core_reset
#undef sv_core_start_one
#undef sv_core_terminate_one
#undef sv_core_delete_group
#undef sv_core_shutdown
#undef sv_core_drain
#undef sv_core_roll
#undef sv_core_drain_extend
#undef sv_core_drain_ack

/* ---- snapshots of the core -----------------------------------------------
 */

typedef struct fi_snap {
	unsigned char *b;
	size_t         n, cap;
} fi_snap;

static fi_snap fi_before, fi_after;

/* snap_put appends n bytes. */
static void
snap_put(fi_snap *s, const void *p, size_t n)
{
	while (s->n + n > s->cap) {
		s->cap = s->cap == 0 ? 4096 : s->cap * 2;
		s->b   = realloc(s->b, s->cap);
		assert_non_null(s->b);
	}
	if (n > 0) {
		memcpy(s->b + s->n, p, n);
	}
	s->n += n;
}

/* seat_blank tells whether a seat is as svs_seats_reserve makes it. */
static bool
seat_blank(const sv_seat *st)
{
	sv_seat b;

	memset(&b, 0, sizeof(b));
	b.ordinal = st->ordinal;
	return memcmp(&b, st, sizeof(b)) == 0;
}

/* snap_take records every byte of the core's state: the record (the
 * effect ring only by its count of queued records, since a reservation
 * may have grown it; the pool of second process records by what is in
 * use, since a reservation may have grown or moved it), each group with
 * its seats, their second process records, ordinals and intensity
 * window, and each drain report with its rows. */
static void
snap_take(const sv_core *c, fi_snap *s)
{
	struct sv_core rec = *c;

	s->n = 0;
	memset(&rec.fx, 0, sizeof(rec.fx));
	rec.fx.n       = c->fx.n;
	rec.olds.rec   = NULL; /* may be moved: its records compared below */
	rec.olds.cap   = 0;
	rec.olds.limit = 0;
	rec.groups     = NULL; /* may be reallocated larger: compared below */
	snap_put(s, &rec, sizeof(rec));
	for (size_t i = 0; i < c->ngroups; i++) {
		const sv_cgroup *g  = c->groups[i];
		sv_cgroup        gr = *g;
		uint32_t         n  = g->nseats;
		/* The seat array may be reallocated larger, its new seats
		 * blank: compared up to its last seat that is not blank. */
		while (n > 0 && seat_blank(&g->seats[n - 1])) {
			n--;
		}
		gr.seats  = NULL;
		gr.nseats = 0;
		snap_put(s, &g, sizeof(g));
		snap_put(s, &gr, sizeof(gr));
		snap_put(s, g->name, strlen(g->name) + 1);
		snap_put(s, g->seats, n * sizeof(*g->seats));
		for (uint32_t o = 0; o < n; o++) {
			snap_put(s, sv_core_seat_old(c, &g->seats[o]),
			    sizeof(sv_proc));
		}
		snap_put(s, g->ords.is_held, g->ords.max);
		snap_put(s, g->ords.cur_gen, g->ords.max * sizeof(uint64_t));
		snap_put(s, g->ords.next_gen, g->ords.max * sizeof(uint64_t));
		snap_put(
		    s, g->intensity.at, g->intensity.max * sizeof(uint64_t));
	}
	for (size_t i = 0; i < c->drains.n; i++) {
		sv_drain d = *c->drains.d[i];
		d.rows     = NULL; /* may be reallocated larger */
		d.cap      = 0;
		snap_put(s, &d, sizeof(d));
		snap_put(s, c->drains.d[i]->rows, d.n * sizeof(sv_drained));
	}
}

/* fi_enter snapshots the core before an entry point. */
static void
fi_enter(const sv_core *c)
{
	FI.pending = false;
	snap_take(c, &fi_before);
}

/* fi_failed checks an entry point that returned err: SV_ENOMEM only for
 * an injected failure and with nothing changed; an injected failure never
 * swallowed. Returns true when the call is to be made again. */
static bool
fi_failed(const sv_core *c, sv_err err)
{
	if (err != SV_ENOMEM) {
		if (FI.pending) {
			fail_msg("an allocation failed and the entry point "
			         "returned %d, not SV_ENOMEM",
			    (int) err);
		}
		assert_int_equal(c->fx.overruns, 0);
		assert_int_equal(c->olds.overruns, 0);
		return false;
	}
	assert_true(FI.pending);
	FI.pending = false;
	FI.enomem++;
	snap_take(c, &fi_after);
	if (fi_after.n != fi_before.n
	    || memcmp(fi_after.b, fi_before.b, fi_before.n) != 0) {
		fail_msg("SV_ENOMEM, but the core changed");
	}
	FI.all = false; /* lifted: the caller tries again */
	return true;
}

/* FI_CALL runs an entry point (an expression over c) under the checks of
 * fi_failed, again once after an SV_ENOMEM; the retry must not fail. */
#define FI_CALL(c, expr)                                      \
	do {                                                  \
		fi_enter(c);                                  \
		err = (expr);                                 \
		if (fi_failed((c), err)) {                    \
			fi_enter(c);                          \
			err = (expr);                         \
			assert_int_not_equal(err, SV_ENOMEM); \
			(void) fi_failed((c), err);           \
		}                                             \
	} while (0)

/* ---- the wrappers ---------------------------------------------------------
 */

static sv_err
fi_create(sv_strategy st, sv_core **cp)
{
	sv_err err = sv_core_create(st, cp);

	if (err == SV_ENOMEM) {
		assert_true(FI.pending);
		FI.pending = false;
		FI.enomem++;
		err = sv_core_create(st, cp);
	}
	assert_false(FI.pending);
	return err;
}

/* FI_DEFINE defines the wrapper of one entry point: the call under
 * FI_CALL (sv_core_name is the core's again here, the macros undone). */
#define FI_DEFINE(name, params, args)            \
	static sv_err fi_##name params           \
	{                                        \
		sv_err err;                      \
		FI_CALL(c, sv_core_##name args); \
		return err;                      \
	}
FI_ENTRY_POINTS(FI_DEFINE)

/* ---- the core and the shell agree ----------------------------------------
 */

/* fi_has_timer tells whether the shell has timer (kind, key) with guard. */
static bool
fi_has_timer(const shell *sh, sv_timer_kind kind, sv_wkey key, uint64_t guard)
{
	const ftimer *t = sh_timer(sh, kind, key);
	return t != NULL && t->guard == guard;
}

/* fi_agree checks that whatever the core waits for was carried out by the
 * shell: armed timers, signals sent to stopping processes. */
static void
fi_agree(shell *sh)
{
	const sv_core *c = sh->c;

	if (c->plan.phase == PLAN_DELAY) {
		assert_true(fi_has_timer(
		    sh, SV_TIMER_PLAN, (sv_wkey) {0, 0, 0}, c->plan.guard));
	}
	for (size_t gi = 0; gi < c->ngroups; gi++) {
		const sv_cgroup *g = c->groups[gi];
		for (uint32_t o = 0; o < g->nseats; o++) {
			const sv_seat *s = &g->seats[o];
			const sv_proc *ps[2]
			    = {&s->cur, sv_core_seat_old(c, s)};
			if (s->state == SV_SP_BACKOFF) {
				assert_true(fi_has_timer(sh, SV_TIMER_SEAT,
				    (sv_wkey) {g->id, o, 0}, s->guard));
			}
			for (int k = 0; k < 2; k++) {
				const sv_proc *p   = ps[k];
				sv_wkey        key = {g->id, o, p->generation};
				fproc         *f;
				if (p->state == SV_PROC_NONE
				    || p->state == SV_PROC_SPAWNING) {
					continue;
				}
				f = sh_proc(sh, p->pid);
				if (p->guard != 0) {
					assert_true(fi_has_timer(
					    sh, SV_TIMER_PROC, key, p->guard));
				}
				if (p->killed) {
					assert_int_equal(f->lastsig, SIGKILL);
				}
				if (p->state == SV_PROC_STOPPING
				    && !p->draining) {
					/* signalled, and either killed or
					 * timed */
					assert_true(f->lastsig != 0);
					assert_true(
					    p->killed || p->guard != 0);
				}
				if (p->draining) {
					assert_true(
					    p->killed || p->guard != 0);
				}
				if (sv_core_shutting_down(c)) {
					assert_true(f->lastsig != 0
					    || (p->draining && p->guard != 0));
				}
			}
		}
	}
}

/* ---- runs ------------------------------------------------------------------
 */

/* What a run emitted, to compare runs with and without an injection. */
typedef struct fi_digest {
	size_t   nevs, nsigs, nspawns;
	uint64_t hash;
} fi_digest;

/* fi_mix folds n bytes into a FNV-1a hash. */
static uint64_t
fi_mix(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++) {
		h = (h ^ b[i]) * 1099511628211ull;
	}
	return h;
}

/* fi_digest_of digests the shell's record of a run. */
static fi_digest
fi_digest_of(const shell *sh)
{
	fi_digest d
	    = {sh->nevs, sh->nsigs, sh->nspawns, 14695981039346656037ull};

	for (size_t i = 0; i < sh->nevs; i++) {
		const sv_event *e = &sh->evs[i].ev;
		d.hash            = fi_mix(d.hash, &e->kind, sizeof(e->kind));
		d.hash = fi_mix(d.hash, &e->group_id, sizeof(e->group_id));
		d.hash = fi_mix(d.hash, &e->ordinal, sizeof(e->ordinal));
		d.hash = fi_mix(d.hash, &e->generation, sizeof(e->generation));
		d.hash = fi_mix(d.hash, &sh->evs[i].at, sizeof(uint64_t));
	}
	for (size_t i = 0; i < sh->nsigs; i++) {
		d.hash = fi_mix(d.hash, &sh->sigs[i].pid, sizeof(int64_t));
		d.hash = fi_mix(d.hash, &sh->sigs[i].signo, sizeof(int));
	}
	for (size_t i = 0; i < sh->nspawns; i++) {
		d.hash = fi_mix(d.hash, &sh->spawns[i], sizeof(sv_wkey));
	}
	return d;
}

/* fi_signalled picks a live process that has been signalled (0: none). */
static int64_t
fi_signalled(model *m)
{
	int64_t cand[64];
	size_t  n = 0;

	for (size_t i = m->sh.nprocs; i-- > 0 && n < 64;) {
		if (m->sh.procs[i].alive && m->sh.procs[i].lastsig != 0) {
			cand[n++] = PID_BASE + (int64_t) i;
		}
	}
	return n == 0 ? 0 : cand[rnd(m, (uint32_t) n)];
}

/* fi_finish shuts down; processes exit only when signalled, timers fire
 * in order. The shutdown must complete: a lost signal or timer leaves a
 * process that nothing will end. */
static void
fi_finish(model *m)
{
	shell *sh = &m->sh;
	int    round;

	(void) fi_shutdown(sh->c, sh->now);
	sh_drain(sh);
	check_core(sh);
	fi_agree(sh);
	for (round = 0; round < 5000 && !sv_core_done(sh->c); round++) {
		int64_t pid = fi_signalled(m);
		long    i   = sh_next_due(sh, UINT64_MAX);
		if (sh->ticket_out) {
			(void) sh_answer(sh, rnd(m, 4) != 0);
		} else if (pid != 0 && (i < 0 || rnd(m, 3) != 0)) {
			sh_exit_pid(sh, pid, model_exit_status(m));
		} else if (i >= 0) {
			sh_fire(sh, (size_t) i);
		} else {
			fail_msg("shutdown stuck: %zu processes live, none "
			         "signalled, no timer armed",
			    sv_core_live(sh->c));
		}
		assert_false(sh_pull(sh));
		model_events(m);
		check_core(sh);
		fi_agree(sh);
	}
	assert_true(sv_core_done(sh->c));
}

/* fi_run runs sequence seed with the fail_at-th allocation failing (0:
 * none); returns what it emitted, and in *hitp whether it failed one. */
static fi_digest
fi_run(unsigned seed, int nsteps, uint64_t fail_at, bool *hitp)
{
	model     m;
	fi_digest d;

	fi_arm(fail_at);
	model_begin(&m, seed);
	model_steps(&m, nsteps, fi_agree);
	fi_finish(&m);
	d = fi_digest_of(&m.sh);
	model_end(&m);
	*hitp = FI.hit;
	return d;
}

/* Sequences and steps: a subset of the model test's 2,000 x 300, since each
 * sequence runs once per allocation it makes. */
#define FI_SEQS  400
#define FI_STEPS 200

/* Every allocation of every sequence fails once, in turn. */
static void
test_every_allocation(void **state)
{
	uint64_t runs = 0, maxn = 0;

	(void) state;
	memset(&FI, 0, sizeof(FI)); /* whatever an earlier test left */
	sv_mem_set_hook(fi_hook, NULL);
	for (unsigned seed = 1; seed <= FI_SEQS; seed++) {
		bool      hit  = false;
		fi_digest base = fi_run(seed, FI_STEPS, 0, &hit);
		uint64_t  n;
		assert_false(hit);
		for (n = 1;; n++) {
			fi_digest d = fi_run(seed, FI_STEPS, n, &hit);
			runs++;
			if (!hit) {
				break;
			}
			if (d.nevs != base.nevs || d.nsigs != base.nsigs
			    || d.nspawns != base.nspawns
			    || d.hash != base.hash) {
				fail_msg(
				    "seed %u, allocation %llu failed: %zu "
				    "events, %zu signals, %zu spawns; "
				    "without the failure %zu, %zu, %zu",
				    seed, (unsigned long long) n, d.nevs,
				    d.nsigs, d.nspawns, base.nevs, base.nsigs,
				    base.nspawns);
			}
		}
		maxn = n > maxn ? n : maxn;
	}
	sv_mem_set_hook(NULL, NULL);
	print_message("faults: %u sequences, %llu runs with one allocation "
	              "failing, %llu SV_ENOMEM answered and retried, up to "
	              "%llu allocations per sequence\n",
	    FI_SEQS, (unsigned long long) runs, (unsigned long long) FI.enomem,
	    (unsigned long long) maxn - 1);
	/* the injection reached entry points, not only sv_core_create */
	assert_true(FI.enomem > runs / 2);
}

/* A shutdown of 100 workers while no allocation succeeds: 100 stop
 * signals (or SV_ENOMEM with nothing changed, then 100 once retried). */
static void
test_shutdown_100(void **state)
{
	shell           sh;
	sv_group_policy p = pol_plain();
	size_t          sigs;
	sv_err          err;

	(void) state;
	sh_init(&sh, SV_STRATEGY_ONE_FOR_ONE);
	for (int i = 0; i < 10; i++) { /* the fake shell: 16 seats a group */
		char name[8];
		snprintf(name, sizeof(name), "g%d", i);
		(void) sh_group(&sh, name, &p, 10, 10);
	}
	assert_int_equal(sh_spawn_all(&sh), 100);
	sigs = sh.nsigs;
	memset(&FI, 0, sizeof(FI));
	/* The spawns reserved room for a shutdown already: it needs no
	 * allocation. Were it to need one, it would fail whole. */
	sv_mem_set_hook(fi_hook, NULL);
	FI.all = true;
	fi_enter(sh.c);
	err = sv_core_shutdown(sh.c, sh.now);
	if (err == SV_ENOMEM) {
		assert_true(fi_failed(sh.c, err)); /* nothing changed */
		sh_drain(&sh);
		assert_int_equal(sh.nsigs, sigs);
		assert_false(sv_core_shutting_down(sh.c));
		fi_enter(sh.c);
		err = sv_core_shutdown(sh.c, sh.now);
	}
	assert_int_equal(err, SV_OK);
	sh_drain(&sh);
	if (sh.nsigs - sigs != 100) {
		fail_msg("a shutdown of 100 workers sent %zu stop signals",
		    sh.nsigs - sigs);
	}
	(void) fi_failed(sh.c, err); /* no failure swallowed */
	FI.all = false;
	sv_mem_set_hook(NULL, NULL);
	for (size_t i = sigs; i < sh.nsigs; i++) {
		assert_int_equal(sh.sigs[i].signo, SIGTERM);
	}
	assert_int_equal(sh.c->fx.overruns, 0);
	sh_fini(&sh);
}

/* Second process records under failure: 16 stuck stops abandoned one by
 * one (each moves a process to its seat's `old`, a record the stop
 * timer's entry point reserves) while every allocation fails. Each timer
 * either needs no allocation or answers SV_ENOMEM with nothing changed
 * and succeeds once retried; the pool grows as the records in use grow,
 * so at least one refusal is seen, and all 16 end abandoned. */
static void
test_old_records(void **state)
{
	shell           sh;
	sv_group_policy p = pol_plain();
	uint32_t        a;
	uint64_t        enomem;
	long            i;

	(void) state;
	p.stop_timeout_ms = 1000;
	p.on_unresponsive = SV_UNRESPONSIVE_ABANDON;
	sh_init(&sh, SV_STRATEGY_ONE_FOR_ONE);
	a = sh_group(&sh, "g", &p, 16, 16);
	assert_int_equal(sh_spawn_all(&sh), 16);
	for (uint32_t o = 0; o < 16; o++) {
		assert_int_equal(
		    sv_core_restart(sh.c, a, o, false, 0, sh.now), SV_OK);
		sh_drain(&sh);
	}
	memset(&FI, 0, sizeof(FI));
	sv_mem_set_hook(fi_hook, NULL);
	enomem = FI.enomem;
	while ((i = sh_next_due(&sh, UINT64_MAX)) >= 0) {
		FI.all = true; /* lifted by fi_timer after one SV_ENOMEM */
		sh_fire(&sh, (size_t) i);
		assert_false(FI.pending);
		FI.all = false;
		check_core(&sh);
		fi_agree(&sh);
	}
	sv_mem_set_hook(NULL, NULL);
	for (uint32_t o = 0; o < 16; o++) {
		assert_int_equal(OLD(&sh, a, o)->state, SV_PROC_ABANDONED);
	}
	assert_true(FI.enomem > enomem);
	assert_int_equal(sh.c->olds.used, 16);
	assert_int_equal(sh.c->olds.overruns, 0);
	assert_int_equal(sh.c->fx.overruns, 0);
	sh_fini(&sh);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_shutdown_100),
	    cmocka_unit_test(test_old_records),
	    cmocka_unit_test(test_every_allocation),
	};
	(void) supervision_main; /* the included model's own main, unused */
	return cmocka_run_group_tests_name("core_faults", tests, NULL, NULL);
}
