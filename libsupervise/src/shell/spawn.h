/*
 * spawn.h — starting, signalling and reaping worker processes (internal,
 * effect shell).
 *
 * Spawning never forks a copy of the daemon: it has a second thread (the
 * log writer), which makes fork unsafe, and copying its page tables costs. The
 * common case uses posix_spawn (glibc: clone(CLONE_VM|CLONE_VFORK)). A worker
 * that has a cgroup of its own, runs as another user or dies with the
 * daemon needs steps posix_spawn cannot take; for it sv_spawn does what
 * glibc does, itself, with every signal blocked around it:
 *   - into a cgroup: clone3(CLONE_INTO_CGROUP | CLONE_PIDFD |
 *     CLONE_CLEAR_SIGHAND), the child born in its cgroup (nothing
 *     migrates: a migration can wait an RCU grace period, milliseconds),
 *     sharing the daemon's memory (CLONE_VM | CLONE_VFORK, on a private
 *     stack, clone3.h) where the architecture allows, else fork-style
 *     (also on x86-64 when built with -DSV_SPAWN_CLONE3_FORK, to test or
 *     measure that form: the integration tests pass with it).
 *     Where the kernel lacks clone3 or CLONE_INTO_CGROUP (ENOSYS, EINVAL,
 *     E2BIG), the first spawn says so once (sv_spawn_cgroup_note) and
 *     every spawn after it takes the next path and joins by writing "0"
 *     to the cgroup's cgroup.procs before exec;
 *   - otherwise clone(CLONE_VM|CLONE_VFORK|CLONE_PIDFD) onto a private
 *     stack.
 * That child shares the daemon's memory until it execs, so it makes only
 * async-signal-safe calls, and credentials are set with raw system calls
 * (glibc's setuid() would try to apply the change to every thread of the
 * daemon). The PATH search is done beforehand, in the parent; a failure in
 * the child is reported through memory the two share.
 *
 * Either way the child gets an empty signal mask, default dispositions for
 * the signals the daemon blocks or ignores, a session of its own (setsid:
 * also its own process group, whose id is its pid, so sv_signal_group
 * reaches it and what it starts; and no orphaned process group when the
 * daemon dies, whose SIGHUP would kill a stopped worker), and stdin from
 * /dev/null. Every fd of the daemon is close-on-exec, so the
 * child inherits only stdin/stdout/stderr, plus the descriptors of
 * pass_fds placed at 3, 4, .... The clone child starts on the daemon's
 * descriptor table (CLONE_FILES) and first makes a table of its own with
 * only the descriptors below the highest one it needs (close_range with
 * CLOSE_RANGE_UNSHARE; unshare(CLONE_FILES) before Linux 5.9): a spawn
 * does not copy, and exec does not close, one descriptor per running
 * worker (that made a scale-up of n workers O(n^2)). Each child is tracked by
 * a pidfd: exits are noticed by polling it and reaped with waitid(P_PIDFD),
 * which reaps exactly that child and is immune to pid reuse.
 */
#ifndef SV_SHELL_SPAWN_H
#define SV_SHELL_SPAWN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "shell/privileges.h"
#include "supervise/supervise.h"

typedef struct sv_spawn_req {
	const char  *path; /* program; searched in PATH when it has no '/' */
	char *const *argv; /* NULL-terminated */
	char *const *envp; /* NULL-terminated, complete environment */
	const char  *cwd; /* NULL: inherit; else entered as the worker's
	                   * user, after the credentials are set */
	const sv_creds *creds; /* NULL or !set: the daemon's own */
	int cgroup_fd; /* -1, or the directory of the worker's cgroup
	                * (cgroup.h: sv_cgleaf_open), which the child is
	                * born in (or joins, see above) */
	bool die_with_parent; /* SIGKILL when the spawning thread dies
	                       * (PR_SET_PDEATHSIG; uses the clone path) */
	const int *pass_fds; /* descriptors the child gets as 3, 4, ...; each
	                      * must be >= 3 + npass_fds (no overlap) */
	size_t npass_fds;
} sv_spawn_req;

/* How a child ended. */
typedef struct sv_exit_info {
	bool exited; /* true: exit code; false: killed by signal */
	int  code; /* exit code when exited */
	int  signo; /* signal when !exited */
	bool core; /* dumped core */
} sv_exit_info;

/*
 * sv_spawn starts a child. On SV_OK *pidp is its pid and *pidfdp a pidfd
 * (close-on-exec) that the caller closes after sv_reap. Errors: SV_ENOTFOUND
 * (program not found or not executable; *errnop says why), SV_ESYSTEM
 * (*errnop says why: EPERM from a credential step, the errno of a failed
 * cgroup join or chdir, ...). On failure no child is left.
 */
sv_err sv_spawn(
    const sv_spawn_req *req, pid_t *pidp, int *pidfdp, int *errnop);

/*
 * sv_spawn_cgroup_note returns true exactly once, after a spawn found that
 * the kernel cannot start a child in a cgroup (clone3 with
 * CLONE_INTO_CGROUP), with the reason in why (for the log).
 */
bool sv_spawn_cgroup_note(char *why, size_t len);

/*
 * sv_spawn_born_in_cgroup tells whether children are born in their cgroup
 * (or it is not known yet). Such a cgroup must be new: one that had
 * cgroup.kill written kills a child born in it at once (seen on Linux
 * 6.18), so a killed cgroup is reused only when this is false.
 */
bool sv_spawn_born_in_cgroup(void);

/*
 * sv_reap collects the exit status of the child behind pidfd without
 * blocking. Errors: SV_EBUSY (still running), SV_ESYSTEM.
 */
sv_err sv_reap(int pidfd, sv_exit_info *info);

/*
 * sv_signal sends signo to the child behind pidfd (pidfd_send_signal, no
 * pid-reuse race). A child that already exited is not an error.
 */
sv_err sv_signal(int pidfd, int signo);

/*
 * sv_signal_group sends signo to the process group pgid (the worker and
 * anything it started). Call only while the group leader is unreaped, so the
 * pgid cannot have been reused.
 */
sv_err sv_signal_group(pid_t pgid, int signo);

#endif /* SV_SHELL_SPAWN_H */
