/*
 * reaper.h — the daemon as child subreaper: orphans of workers come back
 * to it and are reaped (internal, effect shell).
 *
 * With PR_SET_CHILD_SUBREAPER, a process whose parent dies is reparented
 * to the daemon (its nearest subreaper ancestor) instead of init, so the
 * daemon sees every descendant of its workers die. Workers themselves are
 * reaped through their pidfds (spawn.h); sv_reaper_collect must not take
 * their statuses, so it looks at a zombie with waitid(P_ALL, WNOWAIT)
 * first and reaps it only when the caller says it is not a worker. A
 * worker's zombie blocks the scan (waitid shows the same child again)
 * until its pidfd handler reaps it; the caller runs the scan again after
 * each worker reap.
 *
 * A live orphan cannot be attributed to the worker it came from (a
 * setsid() child has its own session and process group), so nothing here
 * kills one while the daemon runs; per-worker cgroups (cgroup.h) do that
 * where available. When the daemon stops, every child left is a leftover
 * and sv_reaper_finish kills and reaps them all.
 */
#ifndef SV_SHELL_REAPER_H
#define SV_SHELL_REAPER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "supervise/supervise.h"

/* sv_reaper_is_worker tells whether pid is a worker (reaped elsewhere). */
typedef bool (*sv_reaper_is_worker)(void *arg, pid_t pid);

/*
 * sv_reaper_enable makes the calling process a child subreaper. Errors:
 * SV_ESYSTEM (errno set).
 */
sv_err sv_reaper_enable(void);

/*
 * sv_reaper_collect reaps, without blocking, every exited child that
 * is_worker(arg, pid) says is not a worker, and stops at the first worker
 * zombie or when no exited child is left. Returns the number reaped.
 */
size_t sv_reaper_collect(sv_reaper_is_worker is_worker, void *arg);

/*
 * sv_reaper_finish is for the end of the daemon, when no worker is left:
 * it sends SIGKILL to every live child (found in /proc by parent pid) and
 * reaps every child, for at most timeout_ms. Returns the number of
 * children killed (left running by the workers they came from).
 */
size_t sv_reaper_finish(int timeout_ms);

#endif /* SV_SHELL_REAPER_H */
