/*
 * bench_wire.h — the datagrams that sv-bench's helpers send back to it.
 *
 * Design: every process the benchmark measures (stamp workers, the
 * round-trip client running as a supervised worker) reports to sv-bench over
 * one AF_UNIX SOCK_DGRAM socket whose path is in the environment variable
 * SV_BENCH_SOCK. A report is one datagram holding one of the fixed-size
 * structs below, told apart by its first word. Sender and receiver are built
 * from the same tree for the same machine, so the structs travel in host
 * layout; nothing here is a stable format.
 *
 * Timestamps are CLOCK_MONOTONIC in nanoseconds, comparable across
 * processes on one machine.
 */
#ifndef SV_BENCH_WIRE_H
#define SV_BENCH_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/un.h>

/* Environment variable naming the report socket's path. */
#define SV_BENCH_ENV_SOCK "SV_BENCH_SOCK"

#define SV_BENCH_MAGIC_STAMP 0x53564253u /* "SVBS" */
#define SV_BENCH_MAGIC_RTT   0x53564252u /* "SVBR" */
#define SV_BENCH_MAGIC_WHO   0x53564257u /* "SVBW" */
#define SV_BENCH_MAGIC_WCMD  0x53564243u /* "SVBC" */

/* Maximum number of interleaved blocks in the round-trip measurement. */
#define SV_BENCH_MAX_BLOCKS 64

/* Sent once by a stamp worker, as the first thing it does after exec. */
struct sv_bench_stamp {
	uint32_t magic; /* SV_BENCH_MAGIC_STAMP */
	int32_t  pid; /* getpid() of the worker */
	int32_t  ordinal; /* $SUPERVISE_ORDINAL, -1 if absent */
	uint32_t pad;
	int64_t  generation; /* $SUPERVISE_GENERATION, -1 if absent */
	int64_t  t_ns; /* CLOCK_MONOTONIC read first thing in main */
};

/* Sent once by the round-trip client when it has finished (or failed). */
struct sv_bench_rtt {
	uint32_t magic; /* SV_BENCH_MAGIC_RTT */
	int32_t  status; /* 0 = measured; otherwise see msg */
	int32_t  pid;
	int32_t  ordinal; /* ordinal reported by whoami */
	uint32_t n; /* round trips of each kind, all blocks */
	uint32_t blocks;
	int64_t  echo_med_ns, echo_p99_ns, echo_mean_ns;
	int64_t  who_med_ns, who_p99_ns, who_mean_ns;
	int64_t  echo_block_med_ns[SV_BENCH_MAX_BLOCKS];
	int64_t  who_block_med_ns[SV_BENCH_MAX_BLOCKS];
	char     msg[160]; /* failure description, "" on success */
};

/*
 * A command from sv-bench to the whoami-timing worker (bench_whoami_n.c),
 * sent to the socket that worker binds: time n whoami calls and answer
 * with a struct sv_bench_who carrying the same seq.
 */
struct sv_bench_who_cmd {
	uint32_t magic; /* SV_BENCH_MAGIC_WCMD */
	uint32_t seq; /* 1, 2, ...: echoed in the answer */
	uint32_t n; /* whoami calls to time */
	uint32_t pad;
};

/*
 * Sent by the whoami-timing worker: seq 0 once it is ready (connected and
 * warmed up), then one answer per command.
 */
struct sv_bench_who {
	uint32_t magic; /* SV_BENCH_MAGIC_WHO */
	int32_t  status; /* 0 = measured; otherwise see msg */
	int32_t  pid;
	uint32_t seq; /* the command's seq, 0 for the ready report */
	uint32_t n; /* whoami calls timed */
	uint32_t group_size; /* group size whoami reported (last call) */
	int64_t  med_ns, p99_ns, mean_ns, min_ns;
	char     msg[160]; /* failure description, "" on success */
};

/*
 * sv_bench_addr fills *sa with the AF_UNIX address of the socket at path.
 * Returns 0, or -1 when path is NULL or does not fit in sun_path.
 */
int sv_bench_addr(struct sockaddr_un *sa, const char *path);

/*
 * sv_bench_send sends buf[0..len) as one datagram to the socket named by
 * $SV_BENCH_SOCK, from a fresh socket that it closes again. It blocks while
 * the receiver's queue is full (the receiver drains it continuously).
 * Returns 0, or -1 when the variable is unset or too long, or the datagram
 * could not be sent whole. Defined in bench_wire.c, which links nothing
 * but libc, so that the stamp worker stays a minimal program.
 */
int sv_bench_send(const void *buf, size_t len);

/*
 * sv_bench_send_to is sv_bench_send to the socket at path; it does not
 * block (a full queue fails with -1, errno EAGAIN).
 */
int sv_bench_send_to(const char *path, const void *buf, size_t len);

#endif /* SV_BENCH_WIRE_H */
