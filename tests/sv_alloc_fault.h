/*
 * sv_alloc_fault.h — allocation failure injection for the fault tests of
 * the cores (test_core_faults.c, test_lease_faults.c): fi_hook, installed
 * with sv_mem_set_hook (core/alloc.h), fails the Nth allocation of a run,
 * or every one, and records that it did so the test can require that the
 * entry point reports it. One translation unit per test: FI is its state.
 */
#ifndef SV_TESTS_ALLOC_FAULT_H
#define SV_TESTS_ALLOC_FAULT_H

#include <stdbool.h>
#include <stdint.h>

/* The injection's state for the running test. */
typedef struct fi_state {
	uint64_t count; /* allocations asked for in this run */
	uint64_t fail_at; /* fail this one (0: none) */
	bool     all; /* fail every allocation */
	bool     hit; /* an allocation failed in this run */
	bool     pending; /* ... and no entry point has reported it yet */
	uint64_t enomem; /* SV_ENOMEM returns seen (all runs) */
} fi_state;

static fi_state FI;

/* fi_arm starts a run that fails its fail_at-th allocation (0: none),
 * keeping FI.all and the count of SV_ENOMEM returns. */
static inline void
fi_arm(uint64_t fail_at)
{
	FI.count   = 0;
	FI.fail_at = fail_at;
	FI.hit     = false;
	FI.pending = false;
}

/* fi_hook fails the fail_at-th allocation (or all of them). */
static inline bool
fi_hook(void *arg)
{
	(void) arg;
	FI.count++;
	if (FI.all || (FI.fail_at != 0 && FI.count == FI.fail_at)) {
		FI.hit     = true;
		FI.pending = true;
		return true;
	}
	return false;
}

#endif
