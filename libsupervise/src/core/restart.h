/*
 * restart.h — what to do when a worker exits (pure decision core).
 *
 * Input: the group's restart policy, the slot's restart history, and facts
 * about the exit. Output: release the ordinal, or restart it now or after a
 * delay. No clock is read here; the caller passes the uptime.
 *
 * Policy (capped exponential backoff with a reset-after-healthy rule; never
 * a permanent give-up):
 *   - A worker that is no longer wanted (scale-down, group stop, shutdown)
 *     is not restarted: its ordinal is released.
 *   - An exit the operator asked for (restart command) restarts at once and
 *     clears the failure history.
 *   - An exit after at least min_uptime_ms is healthy: restart at once and
 *     clear the history.
 *   - An exit sooner is a fast failure: the k-th consecutive one waits
 *     min(backoff_initial_ms * 2^(k-1), backoff_max_ms). min_uptime_ms = 0
 *     disables backoff.
 * Later issues add restart types (transient, temporary), intensity limits
 * and strategies here, as further pure functions over these structs.
 */
#ifndef SV_CORE_RESTART_H
#define SV_CORE_RESTART_H

#include <stdbool.h>
#include <stdint.h>

typedef struct sv_restart_policy {
	uint64_t min_uptime_ms;
	uint64_t backoff_initial_ms;
	uint64_t backoff_max_ms;
} sv_restart_policy;

/* Per-slot history, zero-initialised. */
typedef struct sv_restart_state {
	uint32_t fast_failures; /* consecutive exits before min_uptime_ms */
} sv_restart_state;

typedef struct sv_exit_facts {
	uint64_t uptime_ms; /* how long the process ran */
	bool     wanted; /* the ordinal is still part of the running group */
	bool     requested; /* the operator asked for this restart */
} sv_exit_facts;

typedef enum sv_exit_action {
	SV_EXIT_RELEASE = 0, /* release the ordinal, spawn nothing */
	SV_EXIT_RESTART = 1, /* renew the token and spawn after delay_ms */
} sv_exit_action;

typedef struct sv_exit_decision {
	sv_exit_action action;
	uint64_t       delay_ms;
} sv_exit_decision;

/*
 * sv_restart_decide returns the decision for one exit and updates *state.
 * It never fails and allocates nothing.
 */
sv_exit_decision sv_restart_decide(const sv_restart_policy *policy,
    sv_restart_state *state, const sv_exit_facts *facts);

#endif /* SV_CORE_RESTART_H */
