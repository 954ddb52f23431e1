/*
 * room.h — how many workers the machine lets one daemon run at once
 * (room.c has the design). Used by the config check of max_count and by
 * the requests that add workers.
 */
#ifndef SVD_ROOM_H
#define SVD_ROOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The limits that bound the number of workers; UINT64_MAX (nofile,
 * nproc) or 0 (pid_max, threads_max): no bound known. */
typedef struct svd_room {
	uint64_t nofile; /* hard RLIMIT_NOFILE: the daemon raises to it */
	uint64_t nproc; /* RLIMIT_NPROC; no bound for root */
	uint64_t pid_max; /* /proc/sys/kernel/pid_max */
	uint64_t threads_max; /* /proc/sys/kernel/threads-max */
} svd_room;

/* svd_room_read fills r with this process's limits and the kernel's. */
void svd_room_read(svd_room *r);

/*
 * svd_room_fits tells whether `workers` workers at once fit in r (each
 * SVD_FDS_PER_WORKER descriptors on top of SVD_FDS_BASE, and one process).
 * When not, why gets one line (no newline) naming the limit and the cure.
 * Pure: reads nothing but its arguments.
 */
bool svd_room_fits(const svd_room *r, uint64_t workers, char *why, size_t len);

#endif /* SVD_ROOM_H */
