/*
 * fuzz_util.h — what the libFuzzer harnesses of tests/fuzz share.
 *
 * A harness states the properties of the code under test with FUZZ_CHECK.
 * A broken property is a finding like a sanitizer report: the message goes
 * to stderr and to stdout (scripts/fuzz.sh runs the dispatcher with stderr
 * closed, -close_fd_mask=2, to keep the daemon's log out of the way), then
 * abort() makes libFuzzer save the input as a crash artifact.
 */
#ifndef SV_FUZZ_UTIL_H
#define SV_FUZZ_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* FUZZ_CHECK(cond, what): abort with "FILE:LINE: what (cond)" unless cond.
 */
#define FUZZ_CHECK(cond, what)                                      \
	do {                                                        \
		if (!(cond)) {                                      \
			fuzz_fail(__FILE__, __LINE__, #cond, what); \
		}                                                   \
	} while (0)

/* fuzz_fail reports a broken property and aborts. Never returns. */
static inline void __attribute__((noreturn))
fuzz_fail(const char *file, int line, const char *cond, const char *what)
{
	fprintf(stdout, "FUZZ CHECK FAILED %s:%d: %s (%s)\n", file, line, what,
	    cond);
	fflush(stdout);
	fprintf(stderr, "FUZZ CHECK FAILED %s:%d: %s (%s)\n", file, line, what,
	    cond);
	abort();
}

/* The entry point libFuzzer calls once per input. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif /* SV_FUZZ_UTIL_H */
