/*
 * harness_sibling.c — where the other test programs are: beside
 * sv-testworker.
 *
 * Design: ctest passes only the paths of supervised and sv-testworker
 * (it_args); the scripted workers of single tests (sv-drainworker,
 * sv-leaseworker, sv-subworker, sv-actworker, ...) are built into the same
 * directory, so their paths are made from sv-testworker's directory.
 */
#include "harness.h"

#include <libgen.h>
#include <limits.h>
#include <stdio.h>

/* Writes the directory of sv-testworker, a slash and name into buf. */
void
it_sibling_program(char *buf, size_t len, const char *name)
{
	char tw[PATH_MAX];

	snprintf(tw, sizeof(tw), "%s", it_worker_program());
	snprintf(buf, len, "%s/%s", dirname(tw), name);
}
