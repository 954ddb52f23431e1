/*
 * stamp_worker.c — sv-bench-stamp, the trivial worker the spawn and crash
 * benchmarks start.
 *
 * Design: the first act of main is to read CLOCK_MONOTONIC, so the
 * timestamp marks "the replacement has been exec'd and reached main" (after
 * the dynamic loader, before anything of ours). The worker then sends one
 * datagram (struct sv_bench_stamp: pid, $SUPERVISE_ORDINAL,
 * $SUPERVISE_GENERATION, timestamp) to the AF_UNIX SOCK_DGRAM socket named
 * by $SV_BENCH_SOCK and waits in pause() until a signal ends it (SIGTERM,
 * SIGKILL: default dispositions).
 *
 * It links neither nng nor libsupervise (only bench_wire.c, for the send),
 * so a raw posix_spawn loop and the supervisor start exactly the same cheap
 * program. It never exits on its own, even when the report cannot be sent:
 * a worker that exited at once would make a supervisor with min_uptime_ms =
 * 0 restart it in a tight loop. The send blocks while the receiver's queue
 * is full (net.unix.max_dgram_qlen is small), which delays only the report,
 * not the timestamp.
 *
 * With the one argument "--exit" it exits with status 1 at once, sending
 * nothing: the crash-loop worker of the crash-loop, backoff and event
 * scenarios (the same program for the daemon and for the raw loop).
 */
#include <string.h>
#include <unistd.h>

#include "bench_wire.h"
#include "bench_worker.h"

/*
 * main stamps the time, reports it and waits to be killed; with "--exit"
 * it exits with status 1 at once.
 */
int
main(int argc, char **argv)
{
	struct sv_bench_stamp st;
	int64_t               t;

	if (argc == 2 && strcmp(argv[1], "--exit") == 0)
		return 1;
	t = bw_now_ns();
	memset(&st, 0, sizeof(st));
	st.magic      = SV_BENCH_MAGIC_STAMP;
	st.pid        = (int32_t) getpid();
	st.ordinal    = bw_env_ordinal();
	st.generation = bw_env_ll("SUPERVISE_GENERATION", -1);
	st.t_ns       = t;
	(void) sv_bench_send(&st, sizeof(st));
	for (;;)
		pause();
}
