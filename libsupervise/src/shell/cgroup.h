/*
 * cgroup.h — one cgroup v2 per worker, killed whole when the worker ends
 * (internal, effect shell).
 *
 * A process group is escaped with one setsid(); a cgroup is not (a
 * process cannot leave it without write access to another cgroup's
 * cgroup.procs). Where the daemon may create cgroups below its own, it
 * makes a tree "supervised.<pid>" there and, for each worker, a leaf the
 * child is born in (clone3 with CLONE_INTO_CGROUP; where the kernel lacks
 * it, joins before exec; spawn.h: sv_spawn_req.cgroup_fd), so the worker
 * and everything it starts are in the leaf from the first instruction.
 * When the worker has exited, sv_cgtree_release writes cgroup.kill
 * (SIGKILL to every process in the leaf, Linux >= 5.14) at once. The
 * killed leaf is then kept for a while before it is removed. Where
 * children join their leaf by a write to cgroup.procs, it is a spare: the
 * next leaf asked for with the same label (the seat's replacement) may
 * reuse it instead of a rmdir + mkdir per restart (everything left in it
 * was killed before the replacement joins: a process with SIGKILL pending
 * never runs user code again, so it cannot fork; and the leaf is killed
 * again when the replacement ends). A child born in a killed cgroup is
 * killed, so where children are born in their leaf every worker gets a
 * new one.
 *
 * Detection, never assumption: the cgroup2 mount is found in
 * /proc/self/mountinfo, the daemon's own cgroup in /proc/self/cgroup
 * ("0::PATH"); the tree is used only if it can be created there, its
 * cgroup.procs is writable and it offers cgroup.kill. Otherwise
 * sv_cgtree_open says why and the daemon goes on without cgroups (process
 * group kill only).
 *
 * Removal is off the reap path: sv_cgtree_sweep, which the daemon calls
 * after each reap and when SIGCHLD says an orphan died, removes spares
 * nobody took within 1 s (cheap when none is that old). A removal also
 * waits for the leaf to be empty: a killed process leaves its cgroup when
 * it exits (a zombie does not count), a moment after cgroup.kill returns;
 * a busy spare stays queued for a later sweep (the last process of a leaf
 * whose worker is gone is always an orphan reparented to the daemon, a
 * child subreaper, so SIGCHLD comes). Spares left when the daemon stops
 * are removed by sv_cgtree_close.
 *
 * A supervisor killed with SIGKILL leaves its tree. Its successor
 * (cgroup_stale.c) kills, before it spawns anything, the leaves of that
 * one tree that hold no worker it adopted (sv_cgtree_kill_stale_leaves:
 * a spawn begun but not recorded, leftovers of workers that died with
 * it), and removes dead supervisors' trees once they are empty
 * (sv_cgtree_sweep_stale).
 *
 * Not thread-safe: one thread (the daemon's loop) uses a tree.
 */
#ifndef SV_SHELL_CGROUP_H
#define SV_SHELL_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

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
 * sv_cgtree_leaf gives a leaf for label (any text; bytes other than
 * [A-Za-z0-9_.-] become '_'): with reuse, a released spare of the same
 * label if there is one (killed, possibly still holding dying processes),
 * else a new empty one (a sequence number makes its name unique). Without
 * reuse always a new one: a child born into a killed cgroup with clone3's
 * CLONE_INTO_CGROUP is killed at once (spawn.h). *leafp stays owned
 * by the tree until released. Errors: SV_ENOMEM, SV_ESYSTEM (errno set).
 */
sv_err sv_cgtree_leaf(
    sv_cgtree *t, const char *label, bool reuse, sv_cgleaf **leafp);

/*
 * sv_cgleaf_open opens the leaf's directory (close-on-exec), for a child
 * to be born in it (spawn.h: sv_spawn_req.cgroup_fd). The caller closes
 * the fd. Returns -1 with errno set on failure.
 */
int sv_cgleaf_open(const sv_cgtree *t, const sv_cgleaf *l);

/*
 * sv_cgtree_release kills every process left in the leaf (cgroup.kill) now
 * and keeps it as a spare: a later sv_cgtree_leaf of the same label takes
 * it over, or a later sv_cgtree_sweep removes it. The caller must not use
 * l afterwards. NULL leaf is ignored.
 */
void sv_cgtree_release(sv_cgtree *t, sv_cgleaf *l);

/*
 * sv_cgtree_sweep removes the spares released at least 1 s ago that are
 * empty, oldest first, at most 16 of them (a cgroup rmdir is dear: the
 * daemon sweeps a few at a time when it has nothing else to do). Returns
 * 0 when no released leaf is waiting any more, nonzero otherwise. NULL
 * tree: 0.
 */
size_t sv_cgtree_sweep(sv_cgtree *t);

/*
 * sv_cgtree_sweep_in returns in how many ms the oldest spare may be swept:
 * 0 now, -1 when there is none (or t is NULL). A spare found busy
 * (something in it outlived cgroup.kill) goes to the back of the queue as
 * if released then: it is tried again a second later, so the daemon wakes
 * at most once a second for it, never spins.
 */
int sv_cgtree_sweep_in(const sv_cgtree *t);

/* sv_cgtree_name is the tree's name in its parent cgroup
 * ("supervised.PID" or "supervised.PID.N"; valid until sv_cgtree_close):
 * what the journal records so that a successor finds it. */
const char *sv_cgtree_name(const sv_cgtree *t);

/*
 * sv_cgtree_name_parse tells whether name has the form of a tree the
 * daemon makes, "supervised.<digits>" or "supervised.<digits>.<digits>"
 * (no sign, no leading zero in the pid, a pid of 1 to INT32_MAX, shorter
 * than 64 bytes), and then sets *pidp (may be NULL) to its pid.
 */
bool sv_cgtree_name_parse(const char *name, long *pidp);

/*
 * sv_cgtree_sweep_stale removes the trees that supervisors which did not
 * stop cleanly (kill -9, a crash) left beside ours: directories named
 * supervised.PID or supervised.PID.N in the same parent cgroup whose PID
 * is not a live process named "supervised", together with their leaves,
 * once they hold no process. A tree still populated (a worker the next
 * supervisor adopted lives in its predecessor's leaf) stays for a later
 * call: the daemon calls this when it opens its tree and after each
 * adopted worker is reaped. Returns how many stale trees were removed;
 * *busyp (may be NULL) gets how many are still populated. NULL tree: 0.
 */
size_t sv_cgtree_sweep_stale(sv_cgtree *t, size_t *busyp);

/* sv_cgtree_keep_cb tells whether process pid, found in a stale leaf, is
 * one the caller adopted (its leaf is then kept). */
typedef bool (*sv_cgtree_keep_cb)(void *arg, pid_t pid);

/* What sv_cgtree_kill_stale_leaves did. */
typedef struct sv_cgkill {
	size_t leaves; /* leaves of the tree looked at */
	size_t killed; /* leaves killed (cgroup.kill written) */
	size_t procs; /* processes in them when they were read */
	size_t kept; /* leaves kept: one of their processes was adopted, or
	              * they could not be read whole */
	size_t failed; /* leaves whose cgroup.kill could not be written */
} sv_cgkill;

/*
 * sv_cgtree_kill_stale_leaves kills, with cgroup.kill, every leaf of the
 * dead supervisor's tree tree_name (beside ours, in the same parent) that
 * holds processes none of which keep(arg, pid) claims: the workers the
 * caller adopted keep their leaves (and whatever else is in them); what
 * is left in the others is a spawn the dead supervisor began but did not
 * record (possibly before its execve, when nothing but its cgroup tells
 * whose it is) or the leftovers of a worker that died with it. A leaf's
 * cgroups below it count as the leaf (down to 8 levels; deeper, or a
 * cgroup.procs that cannot be read whole, keeps the leaf: what cannot be
 * checked is not killed). Empty leaves are left for sv_cgtree_sweep_stale,
 * which removes the tree once it is empty. Only this one tree is touched:
 * the other dead supervisors' trees may belong to other state directories.
 * *out says what was done. Errors (nothing killed): SV_EINVAL (no tree,
 * no keep, tree_name not of the form sv_cgtree_name_parse accepts),
 * SV_ENOTFOUND (no such tree: nothing is left of it; or it is our own,
 * made with the dead one's name after its empty tree was removed), SV_EBUSY
 * (a live process named supervised has its pid: not a dead one's),
 * SV_ESYSTEM (it cannot be opened or is not a directory; symlinks are
 * not followed).
 */
sv_err sv_cgtree_kill_stale_leaves(sv_cgtree *t, const char *tree_name,
    sv_cgtree_keep_cb keep, void *arg, sv_cgkill *out);

/*
 * sv_cgtree_close kills every leaf (released or not), waits at most
 * timeout_ms for them to empty, removes them and the tree, and frees t.
 * Returns the number of leaves it could not remove (logged by the caller;
 * they stay in the filesystem). NULL is ignored.
 */
size_t sv_cgtree_close(sv_cgtree *t, int timeout_ms);

#endif /* SV_SHELL_CGROUP_H */
