/*
 * evsub.h — sv-bench's view of supervised's event stream (nng PUB at
 * ipc://SOCKET_DIR/events.sock; each message is a topic, one NUL byte,
 * then a serialized supervise.v1.Event; see daemon/events.h).
 *
 * Design: a subscriber is one nng SUB socket subscribed to everything,
 * read by the calling thread with a deadline. Each message is decoded into
 * the flat struct bench_event below, stamped with CLOCK_MONOTONIC on
 * receipt, so that the scenarios never touch protobuf-c themselves. Only
 * the fields the scenarios use are kept. evsub_decode is exposed for
 * bench_events.c, which reads the stream over a raw connection, and
 * evsub_raw_attach makes such a connection (bench_events.c's slow
 * subscriber, bench_evsubs.c's thousand subscribers and its churn).
 *
 * Close a subscriber only once no traffic flows to it (after the daemon
 * stopped or went quiet): nng 1.5.2's nng_close can hang for good when it
 * races with messages arriving on the pipe (seen here with a SUB socket
 * closed during a flood; upstream reports of the same kind are
 * nanomsg/nng#1219 and #1813).
 *
 * Error convention: 0 or 1 as documented, -1 with a reason in why.
 */
#ifndef SV_BENCH_EVSUB_H
#define SV_BENCH_EVSUB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nng/nng.h>

/* The event kinds the scenarios tell apart. */
enum bench_ev_kind {
	BEV_OTHER,
	BEV_STARTED,
	BEV_EXITED,
	BEV_RESTART_SCHEDULED,
};

/* One decoded event. */
struct bench_event {
	enum bench_ev_kind kind;
	uint64_t           seq;
	uint64_t           time_unix_ms; /* the daemon's timestamp */
	int64_t            rx_ns; /* CLOCK_MONOTONIC when sv-bench got it */
	char               group[65];
	uint32_t           ordinal;
	uint64_t           generation;
	int64_t            pid;
	uint64_t           delay_ms; /* RESTART_SCHEDULED */
	uint32_t           attempt; /* RESTART_SCHEDULED */
};

/* A subscriber. */
struct evsub {
	nng_socket sock;
	bool       open;
	uint64_t   undecodable; /* messages that were not topic + Event */
};

/*
 * evsub_open subscribes to every topic at url, retrying the dial until
 * deadline (the daemon creates the event socket just after the control
 * socket). The dial is synchronous, so the connection exists on return.
 * Returns 0, or -1 with why set (s needs no evsub_close then).
 */
int evsub_open(struct evsub *s, const char *url, int64_t deadline, char *why,
    size_t whylen);

/*
 * evsub_recv waits until deadline for one event into *ev. Returns 1, 0 at
 * the deadline, -1 on error or interruption. Messages that do not decode
 * are counted in s->undecodable and skipped.
 */
int evsub_recv(struct evsub *s, struct bench_event *ev, int64_t deadline);

/* nng's SP protocol numbers (16 * major + minor) of PUB0 and SUB0. */
#define EVSUB_SP_PUB 0x20
#define EVSUB_SP_SUB 0x21

/*
 * evsub_raw_attach connects a raw AF_UNIX stream to the event socket at
 * path, sends the 8-byte SP header of a SUB peer and waits until deadline
 * for the PUB's header: the handshake done, the daemon publishes every
 * event to the connection. Returns the connected fd (close-on-exec; the
 * caller closes it, and reads it or not as it likes), or -1 with why.
 */
int evsub_raw_attach(
    const char *path, int64_t deadline, char *why, size_t whylen);

/* evsub_close closes the subscriber; a closed one is ignored. */
void evsub_close(struct evsub *s);

/*
 * evsub_decode fills *ev (all but rx_ns) from one message body: topic,
 * NUL, serialized Event. Returns 0, or -1 when the body is not one.
 */
int evsub_decode(const uint8_t *body, size_t len, struct bench_event *ev);

#endif /* SV_BENCH_EVSUB_H */
