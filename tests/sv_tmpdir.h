/*
 * sv_tmpdir.h — where a test makes its scratch files: one private
 * directory (or file) per test, under $TMPDIR when that is usable, else
 * under /tmp.
 *
 * TMPDIR is used only when it is an absolute path of at most
 * SV_TMPDIR_MAX bytes: the tests put AF_UNIX sockets in their directories,
 * and a socket's whole path must fit in sun_path (108 bytes). A longer or
 * relative TMPDIR falls back to /tmp, said once on stderr. sv_rmtree
 * removes such a directory with all it holds, never following a link.
 */
#ifndef SV_TESTS_TMPDIR_H
#define SV_TESTS_TMPDIR_H

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SV_TMPDIR_MAX 48

/* sv_tmp_base returns the directory scratch paths go under (static
 * storage, not to be freed). */
static inline const char *
sv_tmp_base(void)
{
	static int  warned;
	const char *t = getenv("TMPDIR");

	if (t == NULL || t[0] == '\0') {
		return "/tmp";
	}
	if (t[0] != '/' || strlen(t) > SV_TMPDIR_MAX) {
		if (!warned++) {
			fprintf(stderr,
			    "TMPDIR=%s is not an absolute path of at most %d "
			    "bytes (sockets must fit in sun_path): using "
			    "/tmp\n",
			    t, SV_TMPDIR_MAX);
		}
		return "/tmp";
	}
	return t;
}

/* sv_tmp_template writes BASE/NAME-XXXXXX into buf; -1 with errno
 * ENAMETOOLONG when it does not fit. */
static inline int
sv_tmp_template(char *buf, size_t cap, const char *name)
{
	int n = snprintf(buf, cap, "%s/%s-XXXXXX", sv_tmp_base(), name);

	if (n < 0 || (size_t) n >= cap) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* sv_tmpdir makes a new private (0700) directory BASE/NAME-XXXXXX and
 * writes its path into buf. Returns 0, or -1 with errno set. The caller
 * removes the directory. */
static inline int
sv_tmpdir(char *buf, size_t cap, const char *name)
{
	if (sv_tmp_template(buf, cap, name) != 0) {
		return -1;
	}
	return mkdtemp(buf) != NULL ? 0 : -1;
}

/* sv_tmpfile makes a new empty file BASE/NAME-XXXXXX (mode 0600) and
 * writes its path into buf. Returns 0, or -1 with errno set. The caller
 * unlinks the file. */
static inline int
sv_tmpfile(char *buf, size_t cap, const char *name)
{
	int fd;

	if (sv_tmp_template(buf, cap, name) != 0) {
		return -1;
	}
	if ((fd = mkstemp(buf)) < 0) {
		return -1;
	}
	close(fd);
	return 0;
}

/* sv_rmtree_one removes one entry of the walk (nftw's callback). */
static inline int
sv_rmtree_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void) st;
	(void) f;
	return (flag == FTW_DP ? rmdir(p) : unlink(p)) == 0 || errno == ENOENT
	    ? 0
	    : -1;
}

/* sv_rmtree removes path and everything below it, depth first, without
 * following symbolic links (a link is removed, not what it names). Returns
 * 0 (also when path does not exist), or -1 with errno set. */
static inline int
sv_rmtree(const char *path)
{
	if (nftw(path, sv_rmtree_one, 16, FTW_DEPTH | FTW_PHYS) != 0) {
		return errno == ENOENT ? 0 : -1;
	}
	return 0;
}

#endif
