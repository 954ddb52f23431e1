/*
 * dir_trust.c — trusted directories and the symlink-proof walk to them
 * (see dir_trust.h for the rule and why it is safe).
 *
 * The walk keeps one descriptor, that of the last directory reached, and
 * opens the next component relative to it; the path prefix reached so far
 * is kept only to name a refusal. openat2 is tried first; the first ENOSYS
 * switches the process to the openat fallback for good.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "dir_trust.h"

/* Set when openat2 is missing (or by svd_dir_force_walk). */
static bool dt_walk_only;

/* svd_dir_force_walk: see dir_trust.h. */
void
svd_dir_force_walk(bool on)
{
	dt_walk_only = on;
}

/* svd_dir_judge: see dir_trust.h. */
svd_dt_verdict
svd_dir_judge(const struct stat *st, uid_t self, bool ancestor)
{
	if (S_ISLNK(st->st_mode)) {
		return SVD_DT_SYMLINK;
	}
	if (!S_ISDIR(st->st_mode)) {
		return SVD_DT_NOTDIR;
	}
	if (st->st_uid != 0 && st->st_uid != self) {
		return SVD_DT_OWNER;
	}
	if ((st->st_mode & 022) != 0
	    && !(ancestor && (st->st_mode & S_ISVTX) != 0)) {
		return (st->st_mode & 002) != 0 ? SVD_DT_OTHER_WRITABLE
		                                : SVD_DT_GROUP_WRITABLE;
	}
	return SVD_DT_OK;
}

/* svd_dir_explain: see dir_trust.h. */
const char *
svd_dir_explain(char *buf, size_t len, const char *what, const char *path,
    const struct stat *st, svd_dt_verdict v)
{
	const char *sp   = what[0] != '\0' ? " " : "";
	unsigned    mode = (unsigned) (st->st_mode & 07777);

	switch (v) {
	case SVD_DT_SYMLINK:
		snprintf(
		    buf, len, "%s%s%s is a symbolic link", what, sp, path);
		break;
	case SVD_DT_NOTDIR:
		snprintf(
		    buf, len, "%s%s%s is not a directory", what, sp, path);
		break;
	case SVD_DT_OWNER:
		snprintf(buf, len,
		    "%s%s%s belongs to uid %u, neither root nor the "
		    "supervisor's uid %u",
		    what, sp, path, (unsigned) st->st_uid,
		    (unsigned) geteuid());
		break;
	case SVD_DT_GROUP_WRITABLE:
	case SVD_DT_OTHER_WRITABLE:
		snprintf(buf, len, "%s%s%s is writable by %s (mode %04o)",
		    what, sp, path,
		    v == SVD_DT_OTHER_WRITABLE ? "everyone" : "its group",
		    mode);
		break;
	case SVD_DT_OK:
	default:
		snprintf(
		    buf, len, "%s%s%s is a trusted directory", what, sp, path);
		break;
	}
	return buf;
}

/* dt_step opens directory name under dirfd without following a symbolic
 * link (O_PATH): the descriptor, or -1 with errno. */
static int
dt_step(int dirfd, const char *name)
{
	const int flags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

	if (!dt_walk_only) {
		struct open_how how = {.flags = (uint64_t) flags,
		    .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH};
		long fd = syscall(SYS_openat2, dirfd, name, &how, sizeof(how));
		if (fd >= 0 || errno != ENOSYS) {
			return (int) fd;
		}
		dt_walk_only = true;
	}
	return openat(dirfd, name, flags);
}

/* dt_refuse fills why with what is wrong with prefix (whose stat is st)
 * and returns the sv_err for it. */
static sv_err
dt_refuse(char *why, size_t whylen, const char *prefix, const struct stat *st,
    svd_dt_verdict v)
{
	svd_dir_explain(why, whylen, "", prefix, st, v);
	return v == SVD_DT_NOTDIR ? SV_EBADREQ : SV_EPERM;
}

/* dt_fail fills why with "PREFIX: what: strerror(errno)" and returns
 * SV_ESYSTEM. */
static sv_err
dt_fail(char *why, size_t whylen, const char *prefix, const char *what)
{
	snprintf(why, whylen, "%s: %s: %s", prefix, what, strerror(errno));
	return SV_ESYSTEM;
}

/* dt_next opens component name under dirfd (prefix names it), creating
 * it with mkmode when missing and mkmode is not 0: the descriptor, or -1
 * with *errp and why set (SV_ENOTFOUND when missing and not created). */
static int
dt_next(int dirfd, const char *name, const char *prefix, mode_t mkmode,
    sv_err *errp, char *why, size_t whylen)
{
	struct stat st;
	int         fd = dt_step(dirfd, name);

	if (fd < 0 && errno == ENOENT && mkmode != 0) {
		if (mkdirat(dirfd, name, mkmode) != 0 && errno != EEXIST) {
			*errp = dt_fail(why, whylen, prefix, "mkdir");
			return -1;
		}
		fd = dt_step(dirfd, name);
	}
	if (fd >= 0) {
		return fd;
	}
	if (errno == ENOENT) {
		snprintf(why, whylen, "%s does not exist", prefix);
		*errp = SV_ENOTFOUND;
		return -1;
	}
	/* ELOOP, ENOTDIR, EXDEV...: say what is there. */
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0
	    && (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode))) {
		*errp = dt_refuse(why, whylen, prefix, &st,
		    S_ISLNK(st.st_mode) ? SVD_DT_SYMLINK : SVD_DT_NOTDIR);
		return -1;
	}
	*errp = dt_fail(why, whylen, prefix, "open");
	return -1;
}

/* dt_walk walks absolute path as dir_trust.h says: the descriptor of path
 * (O_PATH), or -1 with *errp and why set. With stop_missing a missing
 * component ends the walk with -1 and *errp SV_OK. */
static int
dt_walk(const char *path, mode_t mkmode, bool stop_missing, sv_err *errp,
    char *why, size_t whylen)
{
	char        prefix[4200];
	size_t      plen = 0;
	const char *s    = path;
	struct stat st;
	int         fd;

	*errp = SV_OK;
	if (path == NULL || path[0] != '/' || strlen(path) >= sizeof(prefix)) {
		snprintf(why, whylen,
		    "%s is not an absolute path (or too long)",
		    path != NULL ? path : "(null)");
		*errp = SV_EBADREQ;
		return -1;
	}
	if ((fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
		*errp = dt_fail(why, whylen, "/", "open");
		return -1;
	}
	prefix[0] = '/';
	prefix[1] = '\0';
	while (true) {
		const char    *e;
		char           name[256];
		size_t         n;
		int            nfd;
		svd_dt_verdict v;

		while (*s == '/') {
			s++;
		}
		e = strchrnul(s, '/');
		n = (size_t) (e - s);
		if (fstat(fd, &st) != 0) {
			*errp = dt_fail(why, whylen, prefix, "fstat");
			close(fd);
			return -1;
		}
		/* The directory reached is an ancestor if a name follows. */
		v = svd_dir_judge(&st, geteuid(), n > 0);
		if (v != SVD_DT_OK) {
			*errp = dt_refuse(why, whylen, prefix, &st, v);
			close(fd);
			return -1;
		}
		if (n == 0) {
			return fd;
		}
		if (n >= sizeof(name)
		    || (n == 2 && s[0] == '.' && s[1] == '.')) {
			snprintf(why, whylen,
			    "%s: a component is \"..\" or over 255 bytes",
			    path);
			*errp = SV_EBADREQ;
			close(fd);
			return -1;
		}
		memcpy(name, s, n);
		name[n] = '\0';
		snprintf(prefix + plen, sizeof(prefix) - plen, "/%s", name);
		plen += n + 1;
		if (n == 1 && s[0] == '.') {
			/* "." stays where it is. */
			s = e;
			continue;
		}
		nfd = dt_next(fd, name, prefix, mkmode, errp, why, whylen);
		close(fd);
		if (nfd < 0) {
			if (stop_missing && *errp == SV_ENOTFOUND) {
				*errp = SV_OK;
			}
			return -1;
		}
		fd = nfd;
		s  = e;
	}
}

/* svd_dir_open: see dir_trust.h. */
int
svd_dir_open(
    const char *path, mode_t mkmode, sv_err *errp, char *why, size_t whylen)
{
	return dt_walk(path, mkmode, false, errp, why, whylen);
}

/* svd_dir_check: see dir_trust.h. */
sv_err
svd_dir_check(const char *path, char *why, size_t whylen)
{
	sv_err err;
	int    fd = dt_walk(path, 0, true, &err, why, whylen);

	if (fd >= 0) {
		close(fd);
	}
	return err;
}
