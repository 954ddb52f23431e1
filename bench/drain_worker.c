/*
 * drain_worker.c — sv-bench-drain, the worker of sv-bench's drain scenario
 * (bench_drain.c).
 *
 *   sv-bench-drain ignore
 *       an idle worker that ignores its drain: SIGTERM and SIGINT stay
 *       blocked, so only the SIGKILL at the drain deadline ends it. It
 *       links neither nng nor libsupervise; it sends one struct
 *       sv_bench_stamp (bench_wire.h) when started, as sv-bench-stamp does.
 *   sv-bench-drain listen
 *       the notice-latency worker: opens a client and subscribes to its own
 *       topic (w/GROUP/ORDINAL/) on the event socket, proves the
 *       subscription live by setting its status text (Ready with a status
 *       publishes a status_text event on that topic) and waiting for that
 *       event, then reports DRAIN_NOTE_READY (drain_wire.h). When the drain
 *       notice (an event of kind "drain") arrives it reads CLOCK_MONOTONIC
 *       at once, reports DRAIN_NOTE_NOTICE with that time, acknowledges
 *       with DrainAck (served 1) and exits 0.
 *
 * Design: signals are blocked before any library call and looked at
 * between waits for events of at most 50 ms, so the event wait is never
 * cut short and the notice is timed as it arrives. The drain signal (the
 * group's stop signal, SIGTERM) follows the notice; a SIGTERM with no
 * notice within 200 ms after it is the ordinary stop of the daemon's
 * shutdown, and the worker then exits 0. Reports go to $SV_BENCH_SOCK.
 *
 * Exit status: 0 after a drain or an ordinary stop; 2 bad arguments; 3 no
 * client or event socket; 4 the DrainAck was refused.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <supervise/client.h>

#include "bench_wire.h"
#include "bench_worker.h"
#include "drain_wire.h"

#define DW_CALL_MS       5000 /* deadline of each client call */
#define DW_SLICE_MS      50 /* longest event wait between signal checks */
#define DW_CONFIRM_MS    2000 /* wait for the own status_text event */
#define DW_AFTER_TERM_MS 200 /* a notice may trail its drain signal */

/* dw_ignore stamps and waits for the SIGKILL of the drain deadline. */
_Noreturn static void
dw_ignore(void)
{
	struct sv_bench_stamp st;

	memset(&st, 0, sizeof(st));
	st.magic      = SV_BENCH_MAGIC_STAMP;
	st.pid        = (int32_t) getpid();
	st.ordinal    = bw_env_ordinal();
	st.generation = bw_env_ll("SUPERVISE_GENERATION", -1);
	st.t_ns       = bw_now_ns();
	(void) sv_bench_send(&st, sizeof(st));
	for (;;)
		pause(); /* SIGTERM and SIGINT stay blocked */
}

/* dw_report sends one drain datagram of kind with time t and flags. */
static void
dw_report(uint32_t kind, int64_t t, uint32_t flags)
{
	struct sv_bench_drain_note n;

	memset(&n, 0, sizeof(n));
	n.magic      = SV_BENCH_MAGIC_DRAIN;
	n.kind       = kind;
	n.pid        = (int32_t) getpid();
	n.ordinal    = bw_env_ordinal();
	n.generation = bw_env_ll("SUPERVISE_GENERATION", -1);
	n.t_ns       = t;
	n.flags      = flags;
	(void) sv_bench_send(&n, sizeof(n));
}

/*
 * dw_confirm sets the worker's status text to a string of its own and
 * waits up to DW_CONFIRM_MS for the status_text event that follows on its
 * topic. Returns DRAIN_FLAG_CONFIRMED when it came, else 0.
 */
static uint32_t
dw_confirm(sv_client *c, sv_events *ev)
{
	char    status[64];
	int64_t deadline = bw_now_ns() + (int64_t) DW_CONFIRM_MS * 1000000;

	snprintf(status, sizeof(status), "drain bench %ld subscribed",
	    (long) getpid());
	if (sv_client_ready(c, status, DW_CALL_MS) != SV_OK)
		return 0;
	while (bw_now_ns() < deadline) {
		sv_event *e = NULL;
		bool      seen;

		if (sv_events_next(ev, DW_SLICE_MS, &e) != SV_OK)
			continue;
		seen = strcmp(sv_event_kind(e), "status_text") == 0;
		sv_event_free(e);
		if (seen)
			return DRAIN_FLAG_CONFIRMED;
	}
	return 0;
}

/* dw_listen waits for the drain notice on its own topic (see the top). */
static int
dw_listen(const sigset_t *set)
{
	char            prefix[160];
	sv_client      *c       = NULL;
	sv_events      *ev      = NULL;
	const char     *g       = getenv("SUPERVISE_GROUP");
	struct timespec zero    = {0, 0};
	int64_t         term_at = 0;
	uint32_t        flags;

	if (g == NULL || bw_env_ordinal() < 0 || strlen(g) > 64)
		return 3;
	snprintf(
	    prefix, sizeof(prefix), "w/%s/%d/", g, (int) bw_env_ordinal());
	if (sv_client_open(&c, NULL, DW_CALL_MS) != SV_OK)
		return 3;
	if (sv_events_open(&ev, NULL, prefix, DW_CALL_MS) != SV_OK) {
		sv_client_close(c);
		return 3;
	}
	flags = dw_confirm(c, ev);
	dw_report(DRAIN_NOTE_READY, bw_now_ns(), flags);
	for (;;) {
		sv_event *e = NULL;
		int64_t   t;
		bool      drain;

		if (term_at == 0 && sigtimedwait(set, NULL, &zero) > 0)
			term_at = bw_now_ns();
		if (term_at != 0
		    && bw_now_ns() - term_at
		        > (int64_t) DW_AFTER_TERM_MS * 1000000)
			break; /* an ordinary stop */
		if (sv_events_next(ev, DW_SLICE_MS, &e) != SV_OK)
			continue;
		t     = bw_now_ns();
		drain = strcmp(sv_event_kind(e), "drain") == 0;
		sv_event_free(e);
		if (!drain)
			continue;
		dw_report(DRAIN_NOTE_NOTICE, t, 0);
		sv_events_close(ev);
		if (sv_client_drain_ack(c, 1, DW_CALL_MS) != SV_OK) {
			sv_client_close(c);
			return 4;
		}
		sv_client_close(c);
		return 0;
	}
	sv_events_close(ev);
	sv_client_close(c);
	return 0;
}

/* main blocks the stop signals and runs the mode of argv[1]. */
int
main(int argc, char **argv)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (argc == 2 && strcmp(argv[1], "ignore") == 0)
		dw_ignore();
	if (argc == 2 && strcmp(argv[1], "listen") == 0)
		return dw_listen(&set);
	fprintf(stderr, "usage: sv-bench-drain ignore|listen\n");
	return 2;
}
