/*
 * sup_manager.c — the supervisor's side of sd_notify to its own service
 * manager (sd_notify.h): what the core says, summed into an sdn_input
 * after every loop turn, and a loop timer for the times the plan wants to
 * be asked again (watchdog pings, a rate-limited STATUS=, shutdown
 * extensions).
 *
 * Cost: O(groups) per turn (each group's counters, never its seats), and
 * nothing at all when the daemon has no NOTIFY_SOCKET.
 *
 * When the first start has settled (READY=1): every group is failed, being
 * deleted, or has no seat waiting to be spawned and no process whose
 * readiness is still awaited. So a group without `ready` settles once each
 * held seat has been spawned once (its worker runs, or its spawn failed and
 * it waits in backoff); a group with `ready = true` once each worker
 * reported ready, or its start timeout handled it (killed and in backoff,
 * or abandoned); with `sequential_start` the whole chain. A worker with
 * `ready = true` and no `start_timeout_ms` that never reports keeps the
 * daemon from READY=1, as it keeps its own group from starting in order:
 * the manager's start timeout (TimeoutStartSec=) then applies. The control
 * socket already listens: the loop runs only after main.c started the
 * server.
 */
#include "sup_internal.h"

/* What a shutdown may take beyond the longest stop timeout: the reaps and
 * the kill of what workers left (main.c waits up to 2 x 5 s for those,
 * after the loop, where no extension is sent). */
#define SUP_MANAGER_STOP_MARGIN_MS 5000u

/* manager_timer_cb: the plan asked to be asked again now. */
static void
manager_timer_cb(sv_loop *loop, sv_timer *t)
{
	(void) loop;
	sup_manager_tick(t->arg);
}

/* manager_input sums the core's groups into *in. */
static void
manager_input(svd_sup *s, sdn_input *in)
{
	struct timespec ts;
	uint64_t        stop_max = 0;

	memset(in, 0, sizeof(*in));
	clock_gettime(CLOCK_MONOTONIC, &ts);
	in->mono_usec
	    = (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
	in->now_ms   = in->mono_usec / 1000u;
	in->stopping = sv_core_shutting_down(s->core);
	in->settled  = true;
	for (size_t i = 0; i < sv_core_ngroups(s->core); i++) {
		const sv_cgroup *g = sv_core_group_at(s->core, i);
		in->counts.live += g->live;
		in->counts.starting += g->unready;
		in->counts.wanted += sv_core_group_count(g);
		in->counts.failed_groups += g->failed ? 1u : 0u;
		if (!g->failed && !g->deleting
		    && (g->npending > 0 || g->unready > 0)) {
			in->settled = false;
		}
		if (g->pol.stop_timeout_ms > stop_max) {
			stop_max = g->pol.stop_timeout_ms;
		}
	}
	in->stop_bound_ms = stop_max + SUP_MANAGER_STOP_MARGIN_MS;
}

void
sup_manager_tick(svd_sup *s)
{
	sdn_input in;
	uint64_t  wake;

	if (s->sdn == NULL) {
		return;
	}
	manager_input(s, &in);
	wake = svd_sdn_tick(s->sdn, &in);
	if (wake == SDN_NEVER) {
		sv_loop_timer_stop(s->loop, &s->sdn_timer);
	} else if (!sv_timer_armed(&s->sdn_timer)
	    || s->sdn_timer.deadline_ms != wake) {
		/* Out of memory for the timer heap: the next turn arms it. */
		(void) sv_loop_timer_start(s->loop, &s->sdn_timer,
		    wake > in.now_ms ? wake - in.now_ms : 0);
	}
}

void
svd_sup_set_manager(svd_sup *s, svd_sdn *n)
{
	s->sdn = n;
	sv_timer_init(&s->sdn_timer, manager_timer_cb, s);
}
