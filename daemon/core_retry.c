/*
 * core_retry.c — waiting for a pure core that ran out of memory
 * (core_retry.h says when and why the shells call a core again).
 */
#include "core_retry.h"

#include <time.h>

#include "log.h"

/* The longest wait between two attempts, in milliseconds. */
#define SVD_RETRY_MAX_MS 100

/* svd_core_wait: see core_retry.h. */
void
svd_core_wait(const char *core, const char *what, unsigned attempt)
{
	unsigned        ms = attempt < 7 ? 1u << attempt : SVD_RETRY_MAX_MS;
	struct timespec ts;

	if (ms > SVD_RETRY_MAX_MS) {
		ms = SVD_RETRY_MAX_MS;
	}
	if (attempt % 600 == 0) {
		svd_log("out of memory: the %s core cannot take %s yet; "
		        "trying again (attempt %u)",
		    core, what, attempt + 1);
	}
	ts.tv_sec  = 0;
	ts.tv_nsec = (long) ms * 1000000L;
	(void) nanosleep(&ts, NULL);
}
