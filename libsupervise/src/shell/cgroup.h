/*
 * cgroup.h — one cgroup v2 per worker, killed whole when the worker ends
 * (internal, effect shell).
 *
 * A process group is escaped with one setsid(); a cgroup is not (a
 * process cannot leave it without write access to another cgroup's
 * cgroup.procs). Where the daemon may create cgroups below its own, it
 * makes a tree "supervised.<pid>" there and, for each worker, a leaf the
 * child joins before exec (spawn.h: sv_spawn_req.cgroup_procs_fd), so
 * the worker and everything it starts are in the leaf from the first
 * instruction. When the worker has exited, sv_cgtree_release writes
 * cgroup.kill (SIGKILL to every process in the leaf, Linux >= 5.14) and
 * removes the leaf once it is empty.
 *
 * Detection, never assumption: the cgroup2 mount is found in
 * /proc/self/mountinfo, the daemon's own cgroup in /proc/self/cgroup
 * ("0::PATH"); the tree is used only if it can be created there, its
 * cgroup.procs is writable and it offers cgroup.kill. Otherwise
 * sv_cgtree_open says why and the daemon goes on without cgroups (process
 * group kill only).
 *
 * Removal waits for the leaf to be empty: a killed process leaves its
 * cgroup when it exits (a zombie does not count), which is a moment after
 * cgroup.kill returns. Released leaves that are still busy are kept and
 * removed by sv_cgtree_sweep, which the daemon calls when SIGCHLD says an
 * orphan died (the last process of a leaf whose worker is gone is always
 * an orphan reparented to the daemon, a child subreaper).
 *
 * Not thread-safe: one thread (the daemon's loop) uses a tree.
 */
#ifndef SV_SHELL_CGROUP_H
#define SV_SHELL_CGROUP_H

#include <stddef.h>

#include "supervise/supervise.h"

typedef struct sv_cgtree sv_cgtree;
typedef struct sv_cgleaf sv_cgleaf;

/*
 * sv_cgtree_open detects cgroup v2 and creates the daemon's tree. On SV_OK
 * *treep belongs to the caller (sv_cgtree_close) and msg describes it; on
 * failure *treep is NULL and msg says why cgroups are not used. Errors:
 * SV_ENOTFOUND (no cgroup2 mount, or the own cgroup is not visible),
 * SV_EPERM (not writable: not delegated to us), SV_EINVAL (no cgroup.kill),
 * SV_ENOMEM, SV_ESYSTEM.
 */
sv_err sv_cgtree_open(sv_cgtree **treep, char *msg, size_t msglen);

/* sv_cgtree_path is the tree's directory (valid until sv_cgtree_close). */
const char *sv_cgtree_path(const sv_cgtree *t);

/*
 * sv_cgtree_leaf creates an empty leaf named after label (any text; bytes
 * other than [A-Za-z0-9_.-] become '_', and a sequence number makes it
 * unique). *leafp stays owned by the tree until released. Errors:
 * SV_ENOMEM, SV_ESYSTEM (errno set).
 */
sv_err sv_cgtree_leaf(sv_cgtree *t, const char *label, sv_cgleaf **leafp);

/*
 * sv_cgleaf_open_procs opens the leaf's cgroup.procs for writing
 * (close-on-exec), for a child to join it with write("0"). The caller
 * closes the fd. Returns -1 with errno set on failure.
 */
int sv_cgleaf_open_procs(const sv_cgtree *t, const sv_cgleaf *l);

/*
 * sv_cgtree_release kills every process left in the leaf (cgroup.kill) and
 * removes it now or, if it is not empty yet, in a later sv_cgtree_sweep.
 * The leaf must not be used afterwards. NULL leaf is ignored.
 */
void sv_cgtree_release(sv_cgtree *t, sv_cgleaf *l);

/*
 * sv_cgtree_sweep removes released leaves that have become empty. Returns
 * how many released leaves are still waiting. NULL tree: 0.
 */
size_t sv_cgtree_sweep(sv_cgtree *t);

/*
 * sv_cgtree_close kills every leaf (released or not), waits at most
 * timeout_ms for them to empty, removes them and the tree, and frees t.
 * Returns the number of leaves it could not remove (logged by the caller;
 * they stay in the filesystem). NULL is ignored.
 */
size_t sv_cgtree_close(sv_cgtree *t, int timeout_ms);

#endif /* SV_SHELL_CGROUP_H */
