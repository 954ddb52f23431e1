/*
 * dir_trust.h — which directories the daemon may create files in, and a
 * way to reach them that no symbolic link can redirect.
 *
 * A directory is trusted when nobody but root and the daemon's own user
 * can change what its names point to:
 *   - it is a directory, reached without following a symbolic link;
 *   - it and every ancestor from / belong to root or to the daemon's uid;
 *   - none of them is writable by its group or by others, except an
 *     ancestor with the sticky bit (like /tmp): there another user may add
 *     names but not rename or remove ours, and the next directory down is
 *     checked in turn. The directory itself gets no such exception: a
 *     stranger could create the very name the daemon is about to use.
 *
 * svd_dir_judge is the rule over one stat (pure, unit-tested); the walks
 * apply it to every component of a path. svd_dir_open walks from "/" one
 * component at a time, each opened relative to the directory before it
 * with openat2(RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH), or, where the kernel
 * lacks openat2 (ENOSYS), with openat(O_NOFOLLOW | O_DIRECTORY); each
 * directory is judged on the descriptor itself (fstat), so nothing can be
 * swapped between the check and the use. Used for the lease pools' paths
 * (daemon/leases_resources.c, config_pools.c, leases_pools.c) and for the
 * messages about socket_dir and state_dir (main.c, state.c).
 */
#ifndef SVD_DIR_TRUST_H
#define SVD_DIR_TRUST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "supervise/supervise.h"

/* What svd_dir_judge found wrong with a directory (SVD_DT_OK: nothing). */
typedef enum svd_dt_verdict {
	SVD_DT_OK = 0,
	SVD_DT_SYMLINK, /* a symbolic link (lstat) */
	SVD_DT_NOTDIR, /* not a directory */
	SVD_DT_OWNER, /* owned by neither root nor the daemon's uid */
	SVD_DT_GROUP_WRITABLE, /* writable by its group */
	SVD_DT_OTHER_WRITABLE, /* writable by everyone */
} svd_dt_verdict;

/*
 * svd_dir_judge applies the rule above to st (from lstat or fstat) of a
 * directory: self is the daemon's uid, ancestor tells whether the
 * directory is above the one files are made in (the sticky exception).
 * Pure.
 */
svd_dt_verdict svd_dir_judge(const struct stat *st, uid_t self, bool ancestor);

/*
 * svd_dir_explain writes "PATH is a symbolic link" (or what else verdict
 * v says, with the owner or mode from st) into buf, prefixed by what
 * ("socket_dir", or "" for none). Returns buf.
 */
const char *svd_dir_explain(char *buf, size_t len, const char *what,
    const char *path, const struct stat *st, svd_dt_verdict v);

/*
 * svd_dir_open opens absolute directory path (O_PATH, close-on-exec) by
 * the walk described above, judging every directory on the way (path
 * itself strictly, its ancestors with the sticky exception). With mkmode
 * non-zero a missing component is created (mode mkmode, owned by the
 * daemon, so trusted); else a missing one fails with SV_ENOTFOUND.
 * Returns the descriptor (the caller closes it) or -1 with *errp set and
 * why filled ("PATH is a symbolic link", ...): SV_EPERM (a symbolic link,
 * an untrusted directory), SV_EBADREQ (not a directory, not absolute, a
 * ".." component), SV_ENOTFOUND, SV_ESYSTEM (a system call failed).
 */
int svd_dir_open(
    const char *path, mode_t mkmode, sv_err *errp, char *why, size_t whylen);

/*
 * svd_dir_check judges the existing part of absolute directory path as
 * svd_dir_open would (a missing component and all below it are fine: the
 * daemon will create them). SV_OK, or the errors of svd_dir_open with why
 * filled. Used at config load and CreatePool.
 */
sv_err svd_dir_check(const char *path, char *why, size_t whylen);

/*
 * svd_dir_force_walk makes the walks use the openat(O_NOFOLLOW) fallback
 * even where openat2 exists (tests of the fallback); false restores it.
 */
void svd_dir_force_walk(bool on);

#endif /* SVD_DIR_TRUST_H */
