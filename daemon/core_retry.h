/*
 * core_retry.h — what the daemon's shells do when a pure core runs out of
 * memory while being told about something that has already happened.
 *
 * Every entry point of the supervision core (core/supervision.h) and of the
 * lease core (core/lease.h) either completes or returns SV_ENOMEM having
 * changed nothing and queued no effect, so the shell may always call it
 * again with the same arguments:
 *
 *   - a request gets a typed error (ERROR_CODE_INTERNAL, "out of memory;
 *     nothing was changed"), which its client may retry;
 *   - an event that has already happened (a process spawned, failed to
 *     spawn or exited, a timer fired, a worker reported, a holder went
 *     away, a signal asked for shutdown) cannot be refused: SVD_CORE_CALL
 *     calls the entry point again until the core takes it, waiting between
 *     attempts (1 ms, doubling up to 100 ms) and logging, so that nothing is
 *     dropped. The loop serves nothing else meanwhile: every other path
 *     needs memory too.
 */
#ifndef SUPERVISED_CORE_RETRY_H
#define SUPERVISED_CORE_RETRY_H

#include "supervise/supervise.h"

/* svd_core_wait waits before attempt + 1 of giving `what` to the core
 * named `core` ("supervision", "lease"), logging on the first attempt and
 * then about every minute. */
void svd_core_wait(const char *core, const char *what, unsigned attempt);

/* SVD_CORE_CALL sets err to the result of call, an entry point of the core
 * named `core` about something that has already happened, calling it again
 * for as long as it answers SV_ENOMEM (it then changed nothing). */
#define SVD_CORE_CALL(err, core, what, call)                               \
	do {                                                               \
		for (unsigned svd_try_ = 0; ((err) = (call)) == SV_ENOMEM; \
		     svd_try_++) {                                         \
			svd_core_wait((core), (what), svd_try_);           \
		}                                                          \
	} while (0)

/* SVD_CORE_RETRY is SVD_CORE_CALL for a call whose result is not used. */
#define SVD_CORE_RETRY(core, what, call)                         \
	do {                                                     \
		sv_err svd_err_;                                 \
		SVD_CORE_CALL(svd_err_, (core), (what), (call)); \
		(void) svd_err_;                                 \
	} while (0)

#endif
