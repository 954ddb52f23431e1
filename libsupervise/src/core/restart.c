/*
 * restart.c — the restart decision (rules in restart.h).
 */
#include "core/restart.h"

/* restart_backoff computes initial * 2^(k-1), capped, without overflow. */
static uint64_t
restart_backoff(const sv_restart_policy *p, uint32_t k)
{
	uint64_t d = p->backoff_initial_ms;

	/* Doubling saturates within 64 steps; 0 never grows. */
	for (uint32_t i = 1; i < k && d != 0 && d < p->backoff_max_ms; i++) {
		d = d > UINT64_MAX / 2 ? UINT64_MAX : d * 2;
	}
	return d < p->backoff_max_ms ? d : p->backoff_max_ms;
}

sv_exit_decision
sv_restart_decide(const sv_restart_policy *policy, sv_restart_state *state,
    const sv_exit_facts *facts)
{
	sv_exit_decision d = {SV_EXIT_RELEASE, 0};

	if (!facts->wanted) {
		state->fast_failures = 0;
		return d;
	}
	d.action = SV_EXIT_RESTART;
	if (facts->requested || facts->uptime_ms >= policy->min_uptime_ms) {
		state->fast_failures = 0;
		return d;
	}
	if (state->fast_failures < UINT32_MAX) {
		state->fast_failures++;
	}
	d.delay_ms = restart_backoff(policy, state->fast_failures);
	return d;
}
