/*
 * sv-leaseworker.c — a worker for integration_leases: it acquires a lease
 * as a supervised worker (the kernel-verified holder), reports what it got
 * to the test, and then does what its environment says.
 *
 * Report: one nng PUSH message to $SV_TEST_REPORT_URL per event, a line of
 * key=value words: pid, ordinal, generation (whoami), rc (the sv_err of the
 * call), event (acquired, claimed, lost), lease, slot, token, resource,
 * t_ms (CLOCK_MONOTONIC milliseconds when the call returned).
 *
 * Environment:
 *   SV_LEASE_POOL        the pool (required)
 *   SV_LEASE_WAIT_MS     how long the acquire may wait (default 0)
 *   SV_LEASE_OWN_SLOT=1  ask for the slot equal to the worker's ordinal
 *   SV_LEASE_DISCONNECT=1 close the connection after the acquire
 *   SV_LEASE_KEEP=1      renew every 20 ms; when the lease turns out to be
 *                        restored after a supervisor restart (CONFLICT),
 *                        claim it with its token and report "claimed"; when
 *                        it is gone (NOT_FOUND), report "lost" and stop
 * Then it waits for SIGTERM and exits 0.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/pipeline0/push.h>

#include <supervise/client.h>

static volatile sig_atomic_t lw_stop;

/* A worker blocked in a waiting acquire must still stop at once. */
static void
lw_on_term(int sig)
{
	(void) sig;
	lw_stop = 1;
	_exit(0);
}

static long long
lw_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool
lw_env_on(const char *name)
{
	const char *v = getenv(name);
	return v != NULL && strcmp(v, "1") == 0;
}

/* lw_report sends one line to the test. */
static void
lw_report(nng_socket push, const char *event, int rc, const sv_lease *l,
    long ordinal, long long gen, long long t)
{
	char line[1400];

	snprintf(line, sizeof(line),
	    "pid=%ld ordinal=%ld generation=%lld rc=%d event=%s lease=%" PRIu64
	    " slot=%u token=%" PRIu64 " t_ms=%lld resource=%s",
	    (long) getpid(), ordinal, gen, rc, event,
	    l != NULL ? sv_lease_id(l) : 0, l != NULL ? sv_lease_slot(l) : 0,
	    l != NULL ? sv_lease_token(l) : 0, t,
	    l != NULL && sv_lease_resource(l)[0] != '\0' ? sv_lease_resource(l)
	                                                 : "-");
	(void) nng_send(push, line, strlen(line) + 1, 0);
}

int
main(void)
{
	const char  *url  = getenv("SV_TEST_REPORT_URL");
	const char  *pool = getenv("SV_LEASE_POOL");
	const char  *w    = getenv("SV_LEASE_WAIT_MS");
	uint32_t     wait = w != NULL ? (uint32_t) strtoul(w, NULL, 10) : 0;
	nng_socket   push;
	sv_client   *c   = NULL;
	sv_identity *id  = NULL;
	sv_lease    *l   = NULL;
	long         ord = -1;
	long long    gen = -1;
	sv_err       rc;
	bool         keep = lw_env_on("SV_LEASE_KEEP");

	signal(SIGTERM, lw_on_term);
	signal(SIGINT, lw_on_term);
	if (url == NULL || pool == NULL) {
		fprintf(stderr,
		    "sv-leaseworker: SV_TEST_REPORT_URL or "
		    "SV_LEASE_POOL unset\n");
		return 2;
	}
	if (nng_push0_open(&push) != 0 || nng_dial(push, url, NULL, 0) != 0) {
		return 2;
	}
	if (sv_client_open(&c, NULL, 5000) != SV_OK) {
		lw_report(
		    push, "open", SV_ECONNECT, NULL, -1, -1, lw_now_ms());
		goto wait;
	}
	if (sv_client_whoami(c, 5000, &id) == SV_OK) {
		ord = (long) sv_identity_ordinal(id);
		gen = (long long) sv_identity_generation(id);
		sv_identity_free(id);
	}
	rc = sv_client_lease_acquire(c, pool,
	    lw_env_on("SV_LEASE_OWN_SLOT") && ord >= 0 ? ord
	                                               : SV_LEASE_ANY_SLOT,
	    wait, 0, (int) wait + 2000, &l);
	lw_report(push, "acquired", rc, l, ord, gen, lw_now_ms());
	if (lw_env_on("SV_LEASE_DISCONNECT")) {
		sv_client_close(c);
		c = NULL;
	}
	while (!lw_stop && keep && l != NULL && c != NULL) {
		sv_lease *nl = NULL;
		usleep(20000);
		rc = sv_client_lease_renew(c, sv_lease_id(l), 0, 2000, &nl);
		if (rc == SV_ECONFLICT) {
			rc = sv_client_lease_claim(c, sv_lease_pool(l),
			    sv_lease_slot(l), sv_lease_token(l), 0, 2000, &nl);
			lw_report(
			    push, "claimed", rc, nl, ord, gen, lw_now_ms());
		} else if (rc == SV_ENOTFOUND) {
			lw_report(push, "lost", rc, l, ord, gen, lw_now_ms());
			keep = false;
		}
		sv_lease_free(nl);
	}
wait:
	while (!lw_stop) {
		usleep(20000);
	}
	sv_lease_free(l);
	sv_client_close(c);
	nng_close(push);
	return 0;
}
