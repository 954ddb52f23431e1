/*
 * drain_wire.h — the report datagram of sv-bench-drain (drain_worker.c),
 * the worker of sv-bench's drain scenario (bench_drain.c).
 *
 * Design: the listening drain worker tells sv-bench twice about itself, on
 * the same AF_UNIX datagram socket as every other helper ($SV_BENCH_SOCK,
 * sent with bench_wire.c): once when it is subscribed to its own event
 * topic and ready for a drain (kind DRAIN_NOTE_READY), and once when the
 * drain notice reached it (kind DRAIN_NOTE_NOTICE, with the CLOCK_MONOTONIC
 * time read right after the event arrived). The magic differs from every
 * datagram of bench_wire.h, so sv-bench tells the kinds apart by magic and
 * size alone. Both processes run on the same machine, so the monotonic
 * times are comparable.
 */
#ifndef SV_BENCH_DRAIN_WIRE_H
#define SV_BENCH_DRAIN_WIRE_H

#include <stdint.h>

#define SV_BENCH_MAGIC_DRAIN 0x5356424eu /* "SVBN" */

/* What a drain datagram reports. */
enum { DRAIN_NOTE_READY = 1, DRAIN_NOTE_NOTICE = 2 };

/* Flags of a ready report. */
enum {
	/* the worker saw its own "ready" event: its subscription is live */
	DRAIN_FLAG_CONFIRMED = 1u << 0
};

struct sv_bench_drain_note {
	uint32_t magic; /* SV_BENCH_MAGIC_DRAIN */
	uint32_t kind; /* DRAIN_NOTE_READY or DRAIN_NOTE_NOTICE */
	int32_t  pid; /* getpid() of the worker */
	int32_t  ordinal; /* $SUPERVISE_ORDINAL */
	int64_t  generation; /* $SUPERVISE_GENERATION */
	int64_t  t_ns; /* CLOCK_MONOTONIC: ready, or the notice's receipt */
	uint32_t flags; /* DRAIN_FLAG_* */
	uint32_t pad;
};

#endif /* SV_BENCH_DRAIN_WIRE_H */
