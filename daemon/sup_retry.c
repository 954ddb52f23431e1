/*
 * sup_retry.c — the shell's answer when the supervision core runs out of
 * memory. Every core entry point either completes or returns SV_ENOMEM
 * having changed nothing and queued no effect (core/supervision.h), so the
 * shell may always call it again with the same arguments:
 *
 *   - a request gets a typed error (req_core_err: ERROR_CODE_INTERNAL,
 *     "out of memory; nothing was changed"), which its client may retry;
 *   - an event that has already happened (a process spawned, failed to
 *     spawn or exited, a timer fired, a worker reported, a signal asked for
 *     shutdown) cannot be refused: SUP_CORE_CALL calls the entry point again
 *     until the core takes it, waiting between attempts (1 ms, doubling up
 *     to 100 ms) and logging, so that nothing is dropped. The loop serves
 *     nothing else meanwhile: every other path needs memory too.
 */
#include "sup_internal.h"

/* The longest wait between two attempts, in milliseconds. */
#define SUP_RETRY_MAX_MS 100

/* sup_core_wait waits before attempt + 1 of giving `what` to the core,
 * logging on the first attempt and then about every minute. */
void
sup_core_wait(const char *what, unsigned attempt)
{
	unsigned        ms = attempt < 7 ? 1u << attempt : SUP_RETRY_MAX_MS;
	struct timespec ts;

	if (ms > SUP_RETRY_MAX_MS) {
		ms = SUP_RETRY_MAX_MS;
	}
	if (attempt % 600 == 0) {
		svd_log("out of memory: the supervision core cannot take %s "
		        "yet; trying again (attempt %u)",
		    what, attempt + 1);
	}
	ts.tv_sec  = 0;
	ts.tv_nsec = (long) ms * 1000000L;
	(void) nanosleep(&ts, NULL);
}
