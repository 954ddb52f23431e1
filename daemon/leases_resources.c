/*
 * leases_resources.c — the resource of a pool's slot: the file or
 * directory named by the pool's path template ("{slot}" replaced), created
 * for a new holder owned by its user (0640 file, 0750 directory), and at
 * the lease's end kept, truncated (emptied) or removed per the pool's
 * policy.
 *
 * No path is followed blindly. The slot's parent directory is reached by
 * the walk of dir_trust.h (every component opened relative to the one
 * before, no symbolic link, each directory owned by root or the daemon
 * and writable by no one else); the missing ones are created 0755 on the
 * way. The slot's own name is then handled relative to that descriptor:
 *   - a name that does not exist is created (O_CREAT | O_EXCL, mkdirat),
 *     and its identity (device and inode) recorded for the slot
 *     (ls_res.made, journaled in the lease's L record, restored at
 *     takeover);
 *   - a name that exists is used only if it is that same object: a
 *     symbolic link, another kind of file, or anything the daemon did not
 *     make is refused (PERMISSION_DENIED naming the path) and left as it
 *     is: never chowned, chmoded, truncated or removed.
 * Reclaiming checks the identity the same way before it truncates or
 * removes, and empties a directory through descriptors (openat, unlinkat,
 * O_NOFOLLOW at every level), so a holder who swaps a subdirectory for a
 * link cannot make the daemon remove anything outside the slot.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dir_trust.h"
#include "leases_internal.h"
#include "log.h"
#include "errf.h"

/* Deepest directory level emptied inside a slot directory. */
#define LS_RM_DEPTH 64

/* ls_render writes pool p's path for slot into buf ("" if no resource):
 * every "{slot}" becomes the slot number. False if it does not fit. */
bool
ls_render(const ls_pool *p, uint32_t slot, char *buf, size_t len)
{
	size_t      n = 0;
	const char *s = p->path;

	buf[0] = '\0';
	if (s == NULL) {
		return true;
	}
	while (*s != '\0') {
		int k;
		if (strncmp(s, "{slot}", 6) == 0) {
			k = snprintf(buf + n, len - n, "%" PRIu32, slot);
			s += 6;
		} else {
			k = snprintf(buf + n, len - n, "%c", *s);
			s++;
		}
		if (k < 0 || (size_t) k >= len - n) {
			return false;
		}
		n += (size_t) k;
	}
	return true;
}

/* ls_made_of returns the recorded identity of pool id's slot, or NULL. */
ls_ident *
ls_made_of(svd_leases *l, uint32_t pool_id, uint32_t slot)
{
	ls_res *r;

	if (pool_id == 0 || pool_id > SV_LEASE_MAX_POOLS) {
		return NULL;
	}
	r = &l->res[pool_id - 1];
	return r->made != NULL && slot < r->nmade ? &r->made[slot] : NULL;
}

/* ls_split renders slot's path into buf and opens its parent by the walk
 * of dir_trust.h, creating missing directories with mkmode (0755 when
 * preparing, so that a worker of another user can reach its own file; 0:
 * create nothing, a missing one is SV_ENOTFOUND): the parent's descriptor
 * (O_PATH, the caller closes it) with *namep the last component of buf;
 * or -1 with msg filled and *errp set. */
static int
ls_split(const ls_pool *p, uint32_t slot, mode_t mkmode, char *buf, size_t len,
    const char **namep, sv_err *errp, char *msg, size_t mlen)
{
	char *slash;
	char  why[400];
	int   fd;

	if (!ls_render(p, slot, buf, len)) {
		*errp = sv_errf(msg, mlen, SV_EINTERNAL,
		    "pool %s: the path of slot %" PRIu32 " is too long",
		    p->name, slot);
		return -1;
	}
	slash = strrchr(buf, '/');
	if (slash == NULL || slash[1] == '\0') {
		*errp = sv_errf(msg, mlen, SV_EBADREQ,
		    "pool %s: %s has no file name", p->name, buf);
		return -1;
	}
	*slash = '\0';
	fd     = svd_dir_open(
	        buf[0] != '\0' ? buf : "/", mkmode, errp, why, sizeof(why));
	*slash = '/';
	*namep = slash + 1;
	if (fd < 0) {
		if (*errp != SV_EPERM && *errp != SV_EBADREQ
		    && *errp != SV_ENOTFOUND) {
			*errp = SV_EINTERNAL;
		}
		(void) sv_errf(msg, mlen, SV_OK,
		    "pool %s: slot %" PRIu32 ": %s: refusing to make %s",
		    p->name, slot, why, buf);
	}
	return fd;
}

/* ls_owner finds the uid/gid a holder's resource belongs to: the group's
 * user for a worker of a group with `user`, else the daemon's. */
static void
ls_owner(svd_leases *l, const sv_lease_holder *h, uid_t *uid, gid_t *gid)
{
	*uid = geteuid();
	*gid = getegid();
	if (h->kind == SV_HOLDER_WORKER && l->h.group_user != NULL) {
		(void) l->h.group_user(l->h.arg, h->worker.group_id, uid, gid);
	}
}

/* ls_same tells whether st is the object recorded in m. */
static bool
ls_same(const ls_ident *m, const struct stat *st)
{
	return m != NULL && m->ino != 0 && m->dev == (uint64_t) st->st_dev
	    && m->ino == (uint64_t) st->st_ino;
}

/* ls_refuse_existing explains why existing name (stat st) under the slot's
 * parent is not used, into msg: SV_EPERM. */
static sv_err
ls_refuse_existing(const ls_pool *p, const char *path, const struct stat *st,
    char *msg, size_t mlen)
{
	const char *what = S_ISLNK(st->st_mode)     ? "is a symbolic link"
	    : p->directory && !S_ISDIR(st->st_mode) ? "is not a directory"
	    : !p->directory && !S_ISREG(st->st_mode)
	    ? "is not a regular file"
	    : "exists and was not made by this supervisor";
	return sv_errf(msg, mlen, SV_EPERM,
	    "pool %s: %s %s; it is left alone (remove it to let the pool "
	    "make the slot's %s)",
	    p->name, path, what, p->directory ? "directory" : "file");
}

/* ls_open_slot opens (creating it if missing) the slot's file or
 * directory name under parent pfd, for the holder: the descriptor, with
 * *created telling whether it was made now; or -1 with msg and *errp. */
static int
ls_open_slot(const ls_pool *p, const ls_ident *m, int pfd, const char *name,
    const char *path, bool *created, sv_err *errp, char *msg, size_t mlen)
{
	struct stat st;
	int         fd;

	*created = false;
	if (p->directory) {
		*created = mkdirat(pfd, name, 0750) == 0;
		fd       = openat(pfd, name,
		          O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	} else {
		fd       = openat(pfd, name,
		          O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		          0640);
		*created = fd >= 0;
		if (fd < 0 && errno == EEXIST) {
			fd = openat(pfd, name,
			    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		}
	}
	if (fd >= 0 && fstat(fd, &st) == 0
	    && (p->directory ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode))
	    && (*created || ls_same(m, &st))) {
		return fd;
	}
	if (fd >= 0) {
		close(fd);
	}
	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		*errp = ls_refuse_existing(p, path, &st, msg, mlen);
	} else {
		*errp = sv_errf(msg, mlen, SV_EINTERNAL,
		    "pool %s: cannot make %s: %s", p->name, path,
		    strerror(errno));
	}
	return -1;
}

/* ls_prepare creates (or takes over, if it made it) the slot's resource
 * for its new holder: a file 0640 or a directory 0750, owned by the
 * holder's user. Errors (msg filled and logged): SV_EPERM (a symbolic
 * link, an untrusted directory, a file the daemon did not make),
 * SV_EBADREQ, SV_EINTERNAL. */
sv_err
ls_prepare(svd_leases *l, const ls_pool *p, const sv_lease_info *li, char *msg,
    size_t mlen)
{
	char        path[LS_PATH_MAX];
	const char *name = NULL;
	ls_ident   *m    = ls_made_of(l, p->id, li->slot);
	uid_t       uid;
	gid_t       gid;
	int         pfd, fd;
	bool        created;
	struct stat st;
	sv_err      err = SV_OK;

	if (p->path == NULL) {
		return SV_OK;
	}
	ls_owner(l, &li->holder, &uid, &gid);
	pfd = ls_split(
	    p, li->slot, 0755, path, sizeof(path), &name, &err, msg, mlen);
	if (pfd < 0) {
		svd_log("%s", msg);
		return err;
	}
	fd = ls_open_slot(p, m, pfd, name, path, &created, &err, msg, mlen);
	close(pfd);
	if (fd < 0) {
		svd_log("%s", msg);
		return err;
	}
	if (fstat(fd, &st) != 0) {
		err = sv_errf(msg, mlen, SV_EINTERNAL, "pool %s: fstat %s: %s",
		    p->name, path, strerror(errno));
		svd_log("%s", msg);
		close(fd);
		return err;
	}
	if (m != NULL) {
		/* Ours from now on (or still), even if what follows fails:
		 * the release may then clean it up. */
		m->dev = (uint64_t) st.st_dev;
		m->ino = (uint64_t) st.st_ino;
	}
	if (((st.st_uid != uid || st.st_gid != gid)
	        && fchown(fd, uid, gid) != 0)
	    || fchmod(fd, p->directory ? 0750 : 0640) != 0) {
		err = sv_errf(msg, mlen, SV_EINTERNAL,
		    "pool %s: cannot prepare %s: %s", p->name, path,
		    strerror(errno));
		svd_log("%s", msg);
	}
	close(fd);
	return err;
}

/* ls_rm_inside removes everything inside directory dfd (depth levels
 * deep at most), through descriptors only; dfd stays open. */
static void
ls_rm_inside(int dfd, const char *path, int depth)
{
	int  fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d  = fd >= 0 ? fdopendir(fd) : NULL;
	bool again;

	if (d == NULL) {
		if (fd >= 0) {
			close(fd);
		}
		svd_log("cannot empty %s: %s", path, strerror(errno));
		return;
	}
	do {
		struct dirent *e;
		again = false;
		rewinddir(d);
		while ((e = readdir(d)) != NULL) {
			int sub;
			if (strcmp(e->d_name, ".") == 0
			    || strcmp(e->d_name, "..") == 0) {
				continue;
			}
			if (unlinkat(dfd, e->d_name, 0) == 0) {
				again = true;
				continue;
			}
			if (errno != EISDIR && errno != EPERM) {
				continue;
			}
			sub = openat(dfd, e->d_name,
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0) {
				continue;
			}
			if (depth > 0) {
				ls_rm_inside(sub, path, depth - 1);
			}
			close(sub);
			if (unlinkat(dfd, e->d_name, AT_REMOVEDIR) == 0) {
				again = true;
			}
		}
	} while (again);
	closedir(d);
}

/* ls_reclaim applies the pool's policy to the slot's resource, if it is
 * still the one the daemon made (else it is left alone, and logged). */
void
ls_reclaim(svd_leases *l, const ls_pool *p, uint32_t slot)
{
	char        path[LS_PATH_MAX], msg[600];
	const char *name = NULL;
	ls_ident   *m    = ls_made_of(l, p->id, slot);
	int         pfd, fd = -1;
	struct stat st;
	sv_err      err;

	if (p->path == NULL || p->policy == SV_LEASE_KEEP) {
		return;
	}
	pfd = ls_split(
	    p, slot, 0, path, sizeof(path), &name, &err, msg, sizeof(msg));
	if (pfd < 0) {
		if (err != SV_ENOTFOUND) {
			svd_log("%s", msg);
		}
		return;
	}
	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		close(pfd); /* already gone */
		return;
	}
	if (!ls_same(m, &st)) {
		/* Not ours. Said once already if the grant was refused for
		 * it (nothing made); worth a line if what we made was
		 * replaced. */
		if (m != NULL && m->ino != 0) {
			(void) ls_refuse_existing(
			    p, path, &st, msg, sizeof(msg));
			svd_log("%s", msg);
		}
		close(pfd);
		return;
	}
	if (p->directory) {
		fd = openat(pfd, name,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	} else if (p->policy == SV_LEASE_TRUNCATE) {
		fd = openat(
		    pfd, name, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	}
	if (fd >= 0 && (fstat(fd, &st) != 0 || !ls_same(m, &st))) {
		close(fd); /* swapped since the check: not ours */
		fd = -1;
	} else if (fd >= 0 && p->directory) {
		ls_rm_inside(fd, path, LS_RM_DEPTH);
	} else if (fd >= 0 && ftruncate(fd, 0) != 0) {
		svd_log("pool %s: cannot truncate %s: %s", p->name, path,
		    strerror(errno));
	}
	if (p->policy == SV_LEASE_REMOVE && (fd >= 0 || !p->directory)) {
		if (unlinkat(pfd, name, p->directory ? AT_REMOVEDIR : 0) != 0
		    && errno != ENOENT) {
			svd_log("pool %s: cannot remove %s: %s", p->name, path,
			    strerror(errno));
		} else {
			*m = (ls_ident) {0, 0};
		}
	}
	if (fd >= 0) {
		close(fd);
	}
	close(pfd);
}
