/*
 * sv-drainworker.c — a worker for the drain tests (integration_drain.c).
 *
 *   sv-drainworker ack SERVED
 *       on SIGTERM (the drain signal): DrainAck(SERVED), then exit 0
 *   sv-drainworker extend MORE_MS HOLD_MS SERVED
 *       on SIGTERM: DrainExtend(MORE_MS), hold HOLD_MS more, then
 *       DrainAck(SERVED) and exit 0
 *   sv-drainworker ignore
 *       ignore SIGTERM: only SIGKILL (the drain deadline) ends it
 *   sv-drainworker listen SERVED
 *       subscribe to its own topic (w/GROUP/ORDINAL/) on the event socket;
 *       on the drain notice: DrainAck(SERVED), exit 0 (for a group with
 *       drain_signal = "none": the notice is all it gets)
 *
 * Environment: SV_DRAIN_READY=1 sends Ready once started (in listen mode,
 * once subscribed); SV_DRAIN_NOT_READY_GEN=G skips that Ready when
 * $SUPERVISE_GENERATION >= G (a new generation that never gets ready),
 * for ordinal O only with SV_DRAIN_NOT_READY_ORDINAL=O;
 * SV_DRAIN_READY_AFTER_MS=T delays that Ready by T ms (a drain signal
 * arriving meanwhile waits until then);
 * SV_DRAIN_NOTE_DIR=DIR makes it write DIR/notice-PID holding the
 * CLOCK_MONOTONIC time (ns) at which the notice (or SIGTERM) arrived.
 *
 * Signals are blocked before any library call and taken with sigtimedwait,
 * so a drain signal is never lost. Exit status: 0 after a drain, 2 bad
 * arguments, 3 no client or event socket, 4 a drain request refused.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "supervise/client.h"

#define DW_CALL_MS 5000

/* dw_num parses a decimal argument (exit 2 when it is not one). */
static uint64_t
dw_num(const char *s)
{
	char              *end;
	unsigned long long v;

	errno = 0;
	v     = strtoull(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0') {
		fprintf(stderr, "sv-drainworker: bad number \"%s\"\n", s);
		exit(2);
	}
	return (uint64_t) v;
}

/* dw_note records when the drain reached this worker. */
static void
dw_note(void)
{
	const char     *dir = getenv("SV_DRAIN_NOTE_DIR");
	char            path[512];
	struct timespec ts;
	FILE           *f;

	if (dir == NULL) {
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(path, sizeof(path), "%s/notice-%ld", dir, (long) getpid());
	if ((f = fopen(path, "w")) != NULL) {
		fprintf(f, "%lld\n",
		    (long long) ts.tv_sec * 1000000000LL + ts.tv_nsec);
		fclose(f);
	}
}

/* dw_ready sends Ready unless told not to for this generation. */
static void
dw_ready(sv_client *c)
{
	const char *want = getenv("SV_DRAIN_READY");
	const char *ng   = getenv("SV_DRAIN_NOT_READY_GEN");
	const char *no   = getenv("SV_DRAIN_NOT_READY_ORDINAL");
	const char *gen  = getenv("SUPERVISE_GENERATION");
	const char *ord  = getenv("SUPERVISE_ORDINAL");

	if (want == NULL || strcmp(want, "1") != 0) {
		return;
	}
	const char *after = getenv("SV_DRAIN_READY_AFTER_MS");

	if (ng != NULL && gen != NULL && dw_num(gen) >= dw_num(ng)
	    && (no == NULL || (ord != NULL && dw_num(ord) == dw_num(no)))) {
		return;
	}
	if (after != NULL) {
		uint64_t        ms = dw_num(after);
		struct timespec ts
		    = {(time_t) (ms / 1000), (long) (ms % 1000) * 1000000L};
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
		}
	}
	if (sv_client_ready(c, NULL, DW_CALL_MS) != SV_OK) {
		exit(4);
	}
}

/* dw_ack acknowledges the drain and exits. */
static void
dw_ack(sv_client *c, uint64_t served)
{
	sv_err err = sv_client_drain_ack(c, served, DW_CALL_MS);

	if (err == SV_ENOTFOUND) {
		exit(0); /* an ordinary stop (shutdown), not a drain */
	}
	if (err != SV_OK) {
		fprintf(stderr, "sv-drainworker: drain-ack: %s (%s)\n",
		    sv_err_name(err), sv_client_error_message(c));
		exit(4);
	}
	sv_client_close(c);
	exit(0);
}

/* dw_listen waits for the drain notice on the worker's own topic. */
static void
dw_listen(sv_client *c, uint64_t served, const sigset_t *set)
{
	char        prefix[160];
	sv_events  *ev = NULL;
	const char *g  = getenv("SUPERVISE_GROUP"),
	           *o  = getenv("SUPERVISE_ORDINAL");

	if (g == NULL || o == NULL) {
		exit(3);
	}
	snprintf(prefix, sizeof(prefix), "w/%s/%s/", g, o);
	if (sv_events_open(&ev, NULL, prefix, DW_CALL_MS) != SV_OK) {
		exit(3);
	}
	dw_ready(c);
	for (;;) {
		sv_event       *e = NULL;
		struct timespec z = {0, 0};
		if (sigtimedwait(set, NULL, &z) > 0) {
			exit(0); /* stopped the ordinary way */
		}
		if (sv_events_next(ev, 50, &e) != SV_OK) {
			continue;
		}
		if (strcmp(sv_event_kind(e), "drain") == 0) {
			dw_note();
			sv_event_free(e);
			sv_events_close(ev);
			dw_ack(c, served);
		}
		sv_event_free(e);
	}
}

int
main(int argc, char **argv)
{
	sigset_t        set;
	sv_client      *c = NULL;
	const char     *mode;
	struct timespec hold;
	uint64_t        ms;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (argc < 2) {
		fprintf(stderr, "usage: sv-drainworker MODE [ARGS]\n");
		return 2;
	}
	mode = argv[1];
	if (sv_client_open(&c, NULL, DW_CALL_MS) != SV_OK) {
		return 3;
	}
	if (strcmp(mode, "listen") == 0 && argc == 3) {
		dw_listen(c, dw_num(argv[2]), &set);
	}
	dw_ready(c);
	if (strcmp(mode, "ignore") == 0) {
		for (;;) {
			pause(); /* SIGTERM stays blocked: only SIGKILL */
		}
	}
	if (!((strcmp(mode, "ack") == 0 && argc == 3)
	        || (strcmp(mode, "extend") == 0 && argc == 5))) {
		fprintf(stderr, "sv-drainworker: bad mode or arguments\n");
		return 2;
	}
	while (sigwaitinfo(&set, NULL) < 0) {
	}
	dw_note();
	if (strcmp(mode, "ack") == 0) {
		dw_ack(c, dw_num(argv[2]));
	}
	if (sv_client_drain_extend(c, dw_num(argv[2]), DW_CALL_MS) != SV_OK) {
		return 4;
	}
	ms   = dw_num(argv[3]);
	hold = (struct timespec) {
	    (time_t) (ms / 1000), (long) (ms % 1000) * 1000000L};
	while (nanosleep(&hold, &hold) != 0 && errno == EINTR) {
	}
	dw_ack(c, dw_num(argv[4]));
	return 0;
}
