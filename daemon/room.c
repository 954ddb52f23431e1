/*
 * room.c — how many workers the machine lets one daemon run at once.
 *
 * Design: a worker costs the daemon SVD_FDS_PER_WORKER descriptors and
 * one process (pid, task) of the machine. svd_room_read gathers the limits
 * that bound those (syscalls and /proc reads, nothing else); svd_room_fits
 * is the pure decision: do `workers` workers fit, and if not, one line
 * saying which limit and what to raise. The config check (config.c:
 * an explicit max_count) and the requests that grow the number of workers
 * (ScaleGroup, CreateGroup) refuse what does not fit before anything
 * changes, so a group is never left half started by a size the machine
 * cannot hold.
 *
 * The descriptor limit is the hard RLIMIT_NOFILE: the daemon raises its
 * soft limit to it at start (main.c), so that is what it runs under.
 * pid_max and threads-max are system-wide and RLIMIT_NPROC counts all the
 * user's processes, so passing the check does not promise every spawn
 * succeeds (other processes share those): a worker that cannot be spawned
 * goes to backoff as before. The check only refuses what cannot fit at all.
 */
#include <limits.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include "room.h"
#include "supervisor.h"

/* room_proc_u64 reads one unsigned number from a /proc file; 0 when it
 * cannot (unknown: no bound). */
static uint64_t
room_proc_u64(const char *path)
{
	unsigned long long v = 0;
	FILE              *f = fopen(path, "re");

	if (f == NULL) {
		return 0;
	}
	if (fscanf(f, "%llu", &v) != 1) {
		v = 0;
	}
	fclose(f);
	return v;
}

/* room_rlim converts a limit to a count, RLIM_INFINITY to "no bound". */
static uint64_t
room_rlim(rlim_t v)
{
	return v == RLIM_INFINITY ? UINT64_MAX : (uint64_t) v;
}

void
svd_room_read(svd_room *r)
{
	struct rlimit rl;

	r->nofile = UINT64_MAX;
	r->nproc  = UINT64_MAX;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		r->nofile = room_rlim(rl.rlim_max);
	}
	/* root passes RLIMIT_NPROC (CAP_SYS_RESOURCE / CAP_SYS_ADMIN). */
	if (geteuid() != 0 && getrlimit(RLIMIT_NPROC, &rl) == 0) {
		r->nproc = room_rlim(rl.rlim_cur);
	}
	r->pid_max     = room_proc_u64("/proc/sys/kernel/pid_max");
	r->threads_max = room_proc_u64("/proc/sys/kernel/threads-max");
}

bool
svd_room_fits(const svd_room *r, uint64_t workers, char *why, size_t len)
{
	/* Each process bound: its value (0 or UINT64_MAX: none), what it
	 * is, and how to raise it. */
	const struct {
		uint64_t    limit;
		const char *what, *raise;
	} procs[] = {
	    {r->pid_max, "pids of kernel.pid_max", ""},
	    {r->threads_max, "tasks of kernel.threads-max", ""},
	    {r->nproc, "processes the user may run",
	        " (raise ulimit -u, LimitNPROC=)"},
	};
	uint64_t fds = SVD_FDS_BASE + workers * SVD_FDS_PER_WORKER;

	if (fds > r->nofile) {
		snprintf(why, len,
		    "%llu workers need about %llu descriptors, above the "
		    "limit of %llu (raise ulimit -n, LimitNOFILE=)",
		    (unsigned long long) workers, (unsigned long long) fds,
		    (unsigned long long) r->nofile);
		return false;
	}
	for (size_t i = 0; i < sizeof(procs) / sizeof(procs[0]); i++) {
		if (procs[i].limit > 0 && workers >= procs[i].limit) {
			snprintf(why, len,
			    "%llu workers are more than the %llu %s%s",
			    (unsigned long long) workers,
			    (unsigned long long) procs[i].limit, procs[i].what,
			    procs[i].raise);
			return false;
		}
	}
	return true;
}
