/*
 * sv-testworker.c — the worker program of the integration tests.
 *
 * Started by supervised as a group member. It asks the supervisor who it is
 * through the public client API (sv_client_open(NULL) = $SUPERVISE_URL,
 * then sv_client_whoami) and reports the answer, with what its environment
 * says, to the test: one nng PUSH message to $SV_TEST_REPORT_URL holding a
 * single text line of key=value pairs,
 *
 *   pid=123 ordinal=1 generation=3 id_pid=123 group=g env_ordinal=1
 *   env_generation=3 env_group=g rc=0 err=OK
 *
 * (one line; ordinal, generation, id_pid and group are -1 or "-" when whoami
 * failed, env_* are -1 or "-" when the variable is unset, rc is the sv_err
 * of the first failing call or 0). Then it waits for SIGTERM or SIGINT and
 * exits 0. With SV_TEST_IGNORE_TERM=1 it ignores SIGTERM, so only SIGKILL
 * (the supervisor's escalation) ends it.
 *
 * Signals are blocked before the first nng call, so nng's threads inherit
 * the mask and the main thread alone takes them with sigwait(). The report
 * socket stays open until the end, so a queued report is never dropped by
 * an early close.
 *
 * Exit status: 0 after SIGTERM/SIGINT, 2 without $SV_TEST_REPORT_URL,
 * 3 when the report could not be delivered.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/pipeline0/push.h>

#include "supervise/client.h"

#define WORKER_CALL_MS 5000

/* Returns the environment variable name, or "-" when unset or empty. */
static const char *
env_or_dash(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && v[0] != '\0' ? v : "-";
}

/* Highest descriptor open when main started (the supervisor must pass
 * only 0, 1 and 2). */
static int inherited_fd_max = -1;

/* highest_open_fd scans /proc/self/fd, not counting the scan's own fd. */
static int
highest_open_fd(void)
{
	DIR           *d = opendir("/proc/self/fd");
	struct dirent *e;
	int            max = -1;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		int fd = atoi(e->d_name);
		if (e->d_name[0] != '.' && fd != dirfd(d) && fd > max)
			max = fd;
	}
	closedir(d);
	return max;
}

/* Asks whoami and formats the report line into buf. */
static void
build_report(char *buf, size_t size)
{
	sv_client   *c       = NULL;
	sv_identity *id      = NULL;
	long         ordinal = -1, id_pid = -1;
	long long    generation = -1;
	const char  *group      = "-";
	sv_err       e;

	e = sv_client_open(&c, NULL, WORKER_CALL_MS);
	if (e == SV_OK)
		e = sv_client_whoami(c, WORKER_CALL_MS, &id);
	if (e == SV_OK) {
		ordinal    = (long) sv_identity_ordinal(id);
		generation = (long long) sv_identity_generation(id);
		id_pid     = (long) sv_identity_pid(id);
		group      = sv_identity_group(id);
	} else {
		fprintf(stderr, "sv-testworker %ld: %s: %s\n", (long) getpid(),
		    sv_err_name(e),
		    c != NULL ? sv_client_error_message(c) : "open failed");
	}
	snprintf(buf, size,
	    "pid=%ld ordinal=%ld generation=%lld id_pid=%ld group=%s "
	    "env_ordinal=%s env_generation=%s env_group=%s rc=%d err=%s "
	    "fd_max=%d",
	    (long) getpid(), ordinal, generation, id_pid,
	    group[0] != '\0' ? group : "-", env_or_dash("SUPERVISE_ORDINAL"),
	    env_or_dash("SUPERVISE_GENERATION"),
	    env_or_dash("SUPERVISE_GROUP"), (int) e, sv_err_name(e),
	    inherited_fd_max);
	sv_identity_free(id);
	sv_client_close(c);
}

/* Entry point: report, then wait for the stop signal. */
int
main(void)
{
	/* Before anything opens a descriptor: what did the supervisor pass? */
	inherited_fd_max        = highest_open_fd();
	const char *url         = getenv("SV_TEST_REPORT_URL");
	int         ignore_term = getenv("SV_TEST_IGNORE_TERM") != NULL;
	nng_socket  push;
	sigset_t    set;
	char        line[512];
	int         rv, sig;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	if (url == NULL || url[0] == '\0') {
		fprintf(stderr, "sv-testworker: SV_TEST_REPORT_URL unset\n");
		return 2;
	}
	build_report(line, sizeof(line));

	if ((rv = nng_push0_open(&push)) != 0
	    || (rv = nng_socket_set_ms(
	            push, NNG_OPT_SENDTIMEO, WORKER_CALL_MS))
	        != 0
	    || (rv = nng_dial(push, url, NULL, 0)) != 0
	    || (rv = nng_send(push, line, strlen(line) + 1, 0)) != 0) {
		fprintf(stderr, "sv-testworker %ld: report to %s: %s\n",
		    (long) getpid(), url, nng_strerror(rv));
		return 3;
	}

	for (;;) {
		if (sigwait(&set, &sig) != 0)
			continue;
		if (sig == SIGTERM && ignore_term)
			continue;
		break;
	}
	nng_close(push);
	nng_fini(); /* a clean exit for LeakSanitizer builds */
	return 0;
}
