/*
 * accept_guard.c — detect and repair a listener that stopped accepting
 * (see accept_guard.h for why).
 *
 * One thread, one condition variable on CLOCK_MONOTONIC. The accepted
 * counter is bumped by the server for every pipe it accepts; a probe passes
 * when the counter moves while the probe is connecting. A probe that fails
 * leaves its connection in the old listener's backlog; recreating the
 * listener closes that backlog, which also frees the clients stuck in it
 * (their connection is reset and the client library reconnects).
 */
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>

#include "accept_guard.h"
#include "supervisor.h"

struct svd_guard {
	pthread_mutex_t mtx;
	pthread_cond_t  cv;
	pthread_t       thr;
	bool            stop;
	unsigned long   accepted;
	char            url[600];
	svd_relisten_fn relisten;
	void           *arg;
};

/* guard_deadline returns now + ms on CLOCK_MONOTONIC. */
static struct timespec
guard_deadline(long ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

/* guard_probe dials once and tells whether a pipe was accepted in time.
 * Called with the mutex held; drops it while dialing. */
static bool
guard_probe(svd_guard *g)
{
	unsigned long   before = g->accepted;
	struct timespec dl;
	nng_socket      s;
	bool            ok;

	pthread_mutex_unlock(&g->mtx);
	if (nng_req0_open(&s) != 0) {
		pthread_mutex_lock(&g->mtx);
		return true; /* cannot probe now; do not blame the listener */
	}
	(void) nng_dial(s, g->url, NULL, NNG_FLAG_NONBLOCK);
	pthread_mutex_lock(&g->mtx);
	dl = guard_deadline(SVD_GUARD_TIMEOUT_MS);
	while (!g->stop && g->accepted == before &&
	    pthread_cond_timedwait(&g->cv, &g->mtx, &dl) == 0) {
	}
	ok = g->stop || g->accepted != before;
	pthread_mutex_unlock(&g->mtx);
	nng_close(s);
	pthread_mutex_lock(&g->mtx);
	return ok;
}

/* guard_main probes every interval until stopped. */
static void *
guard_main(void *arg)
{
	svd_guard      *g = arg;
	struct timespec dl;

	pthread_mutex_lock(&g->mtx);
	while (!g->stop) {
		dl = guard_deadline(SVD_GUARD_INTERVAL_MS);
		while (!g->stop &&
		    pthread_cond_timedwait(&g->cv, &g->mtx, &dl) == 0) {
		}
		if (g->stop || guard_probe(g)) {
			continue;
		}
		pthread_mutex_unlock(&g->mtx);
		svd_log("control socket stopped accepting connections (nng "
		        "1.5.2 bug #1518); recreating its listener");
		if (!g->relisten(g->arg)) {
			svd_log("cannot recreate the listener; will retry");
		}
		pthread_mutex_lock(&g->mtx);
	}
	pthread_mutex_unlock(&g->mtx);
	return NULL;
}

sv_err
svd_guard_start(const char *url, svd_relisten_fn relisten, void *arg,
    svd_guard **guardp)
{
	svd_guard         *g = calloc(1, sizeof(*g));
	pthread_condattr_t ca;

	if (g == NULL) {
		return SV_ENOMEM;
	}
	snprintf(g->url, sizeof(g->url), "%s", url);
	g->relisten = relisten;
	g->arg      = arg;
	pthread_mutex_init(&g->mtx, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&g->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&g->thr, NULL, guard_main, g) != 0) {
		pthread_cond_destroy(&g->cv);
		pthread_mutex_destroy(&g->mtx);
		free(g);
		return SV_ESYSTEM;
	}
	*guardp = g;
	return SV_OK;
}

void
svd_guard_accepted(svd_guard *guard)
{
	pthread_mutex_lock(&guard->mtx);
	guard->accepted++;
	pthread_cond_broadcast(&guard->cv);
	pthread_mutex_unlock(&guard->mtx);
}

void
svd_guard_stop(svd_guard *guard)
{
	if (guard == NULL) {
		return;
	}
	pthread_mutex_lock(&guard->mtx);
	guard->stop = true;
	pthread_cond_broadcast(&guard->cv);
	pthread_mutex_unlock(&guard->mtx);
	pthread_join(guard->thr, NULL);
	pthread_cond_destroy(&guard->cv);
	pthread_mutex_destroy(&guard->mtx);
	free(guard);
}
