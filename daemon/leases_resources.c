/*
 * leases_resources.c — the resource of a pool's slot: the file or
 * directory named by the pool's path template ("{slot}" replaced), created
 * for a new holder owned by its user (0640 file, 0750 directory, never
 * following links), and at the lease's end kept, truncated (emptied) or
 * removed per the pool's policy.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "leases_internal.h"
#include "log.h"

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

/* ls_mkparents creates the missing directories above path (mode 0755,
 * so that a worker of another user can reach its own file). */
static void
ls_mkparents(const char *path)
{
	char buf[LS_PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p != '\0'; p++) {
		if (*p == '/') {
			*p = '\0';
			(void) mkdir(buf, 0755);
			*p = '/';
		}
	}
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

/* ls_prepare creates (or takes over) the slot's resource for its new
 * holder: a file 0640 or a directory 0750, owned by the holder's user.
 * Errors: SV_ESYSTEM (logged). */
sv_err
ls_prepare(svd_leases *l, const ls_pool *p, const sv_lease_info *li)
{
	char        path[LS_PATH_MAX];
	uid_t       uid;
	gid_t       gid;
	int         fd;
	struct stat st;

	if (p->path == NULL) {
		return SV_OK;
	}
	if (!ls_render(p, li->slot, path, sizeof(path))) {
		svd_log("pool %s: the path of slot %" PRIu32 " is too long",
		    p->name, li->slot);
		return SV_ESYSTEM;
	}
	ls_owner(l, &li->holder, &uid, &gid);
	ls_mkparents(path);
	if (p->directory) {
		if (mkdir(path, 0750) != 0 && errno != EEXIST) {
			goto fail;
		}
		fd = open(
		    path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	} else {
		fd = open(path,
		    O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK,
		    0640);
	}
	if (fd < 0) {
		goto fail;
	}
	if (fstat(fd, &st) != 0
	    || (p->directory ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))) {
		close(fd);
		errno = EEXIST;
		goto fail;
	}
	if ((st.st_uid != uid || st.st_gid != gid)
	    && fchown(fd, uid, gid) != 0) {
		close(fd);
		goto fail;
	}
	if (fchmod(fd, p->directory ? 0750 : 0640) != 0) {
		close(fd);
		goto fail;
	}
	close(fd);
	return SV_OK;
fail:
	svd_log(
	    "pool %s: cannot prepare %s: %s", p->name, path, strerror(errno));
	return SV_ESYSTEM;
}

/* ls_rm_cb removes one entry of a tree walked depth first. */
static int
ls_rm_cb(const char *path, const struct stat *st, int flag, struct FTW *fw)
{
	(void) st;
	(void) flag;
	(void) fw;
	if (remove(path) != 0 && errno != ENOENT) {
		svd_log("cannot remove %s: %s", path, strerror(errno));
	}
	return 0;
}

/* ls_empty_dir removes everything inside directory path. */
static void
ls_empty_dir(const char *path)
{
	/* Walk the tree (not following links) and remove all but its root. */
	char root[LS_PATH_MAX];

	snprintf(root, sizeof(root), "%s", path);
	(void) nftw(root, ls_rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	(void) mkdir(root, 0750);
}

/* ls_reclaim applies the pool's policy to the slot's resource. */
void
ls_reclaim(svd_leases *l, const ls_pool *p, uint32_t slot)
{
	char path[LS_PATH_MAX];
	int  fd;

	(void) l;
	if (p->path == NULL || p->policy == SV_LEASE_KEEP
	    || !ls_render(p, slot, path, sizeof(path))) {
		return;
	}
	if (p->policy == SV_LEASE_REMOVE) {
		if (p->directory) {
			(void) nftw(path, ls_rm_cb, 16, FTW_DEPTH | FTW_PHYS);
		} else if (unlink(path) != 0 && errno != ENOENT) {
			svd_log("pool %s: cannot remove %s: %s", p->name, path,
			    strerror(errno));
		}
		return;
	}
	/* truncate */
	if (p->directory) {
		ls_empty_dir(path);
		return;
	}
	fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0) {
		if (ftruncate(fd, 0) != 0) {
			svd_log("pool %s: cannot truncate %s: %s", p->name,
			    path, strerror(errno));
		}
		close(fd);
	}
}
