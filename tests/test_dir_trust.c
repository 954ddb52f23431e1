/*
 * test_dir_trust.c — the trusted-directory rule and the symlink-proof walk
 * (daemon/dir_trust.h).
 *
 * Design: svd_dir_judge is checked over synthetic stat records (every
 * verdict, the sticky exception for ancestors only); the walks are run in
 * a fresh mkdtemp directory, once with openat2 and once with the
 * O_NOFOLLOW fallback forced, against a symbolic link above the target, a
 * link as the target, a regular file on the way, group- and
 * world-writable directories (with and without the sticky bit), a ".."
 * component, a missing tail (fine for the check, made by the open) and, as
 * root, a directory of another user.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "dir_trust.h"
#include "sv_tmpdir.h"

static char dir[64]; /* mkdtemp, per walk test */

/* st_of makes a stat record of mode and uid. */
static struct stat
st_of(mode_t mode, uid_t uid)
{
	struct stat st;

	memset(&st, 0, sizeof(st));
	st.st_mode = mode;
	st.st_uid  = uid;
	return st;
}

static void
test_judge(void **state)
{
	struct stat st;

	(void) state;
	st = st_of(S_IFDIR | 0755, 0);
	assert_int_equal(svd_dir_judge(&st, 1000, false), SVD_DT_OK);
	st = st_of(S_IFDIR | 0700, 1000);
	assert_int_equal(svd_dir_judge(&st, 1000, false), SVD_DT_OK);
	st = st_of(S_IFDIR | 0700, 1001);
	assert_int_equal(svd_dir_judge(&st, 1000, true), SVD_DT_OWNER);
	st = st_of(S_IFLNK | 0777, 0);
	assert_int_equal(svd_dir_judge(&st, 0, true), SVD_DT_SYMLINK);
	st = st_of(S_IFREG | 0600, 0);
	assert_int_equal(svd_dir_judge(&st, 0, true), SVD_DT_NOTDIR);
	st = st_of(S_IFDIR | 0775, 0);
	assert_int_equal(svd_dir_judge(&st, 0, true), SVD_DT_GROUP_WRITABLE);
	st = st_of(S_IFDIR | 0757, 0);
	assert_int_equal(svd_dir_judge(&st, 0, true), SVD_DT_OTHER_WRITABLE);
	/* /tmp: fine above, not as the directory itself. */
	st = st_of(S_IFDIR | 01777, 0);
	assert_int_equal(svd_dir_judge(&st, 1000, true), SVD_DT_OK);
	assert_int_equal(
	    svd_dir_judge(&st, 1000, false), SVD_DT_OTHER_WRITABLE);
}

static void
test_explain(void **state)
{
	struct stat st = st_of(S_IFLNK | 0777, 0);
	char        buf[200];

	(void) state;
	assert_string_equal(svd_dir_explain(buf, sizeof(buf), "socket_dir",
	                        "/run/x", &st, SVD_DT_SYMLINK),
	    "socket_dir /run/x is a symbolic link");
	st = st_of(S_IFDIR | 0777, 0);
	assert_string_equal(svd_dir_explain(buf, sizeof(buf), "", "/srv/p",
	                        &st, SVD_DT_OTHER_WRITABLE),
	    "/srv/p is writable by everyone (mode 0777)");
}

/* p writes dir/rel into a static buffer (one of two, alternating). */
static const char *
p(const char *rel)
{
	static char buf[2][300];
	static int  k;

	k ^= 1;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, rel);
	return buf[k];
}

/* expect checks svd_dir_check(rel) against want and, for a refusal, that
 * why names needle. */
static void
expect(const char *rel, sv_err want, const char *needle)
{
	char   why[600] = "";
	sv_err got      = svd_dir_check(p(rel), why, sizeof(why));

	if (got != want || (needle != NULL && strstr(why, needle) == NULL)) {
		fail_msg("check %s: got %s (%s), want %s naming \"%s\"", rel,
		    sv_err_name(got), why, sv_err_name(want),
		    needle != NULL ? needle : "");
	}
}

/* walks runs the walk cases, with openat2 or with the fallback. */
static void
walks(bool fallback)
{
	char        why[600];
	char        want[400];
	sv_err      err;
	int         fd;
	struct stat st;

	svd_dir_force_walk(fallback);
	assert_int_equal(sv_tmpdir(dir, sizeof(dir), "test_dir_trust"), 0);
	/* Made on the way, and trusted. */
	fd = svd_dir_open(p("a/b"), 0755, &err, why, sizeof(why));
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	close(fd);
	assert_int_equal(stat(p("a/b"), &st), 0);
	expect("a/b", SV_OK, NULL);
	expect("a/b/c/d", SV_OK, NULL); /* missing: will be made */
	assert_int_equal(
	    svd_dir_open(p("a/zz"), 0, &err, why, sizeof(why)), -1);
	assert_int_equal(err, SV_ENOTFOUND);
	/* A link above, and as the directory. */
	assert_int_equal(symlink(p("a"), p("ln")), 0);
	snprintf(want, sizeof(want), "%s is a symbolic link", p("ln"));
	expect("ln/b", SV_EPERM, want);
	expect("ln", SV_EPERM, want);
	expect("ln/missing/x", SV_EPERM, want);
	assert_int_equal(
	    svd_dir_open(p("ln/b"), 0755, &err, why, sizeof(why)), -1);
	assert_int_equal(err, SV_EPERM);
	assert_non_null(strstr(why, "symbolic link"));
	assert_int_equal(lstat(p("ln/b/new"), &st), -1); /* nothing made */
	/* A file on the way. */
	assert_int_equal(close(open(p("f"), O_CREAT | O_WRONLY, 0600)), 0);
	expect("f/x", SV_EBADREQ, "is not a directory");
	/* Writable by others: refused as the directory and above it... */
	assert_int_equal(chmod(p("a"), 0777), 0);
	expect("a", SV_EPERM, "writable by everyone");
	expect("a/b", SV_EPERM, "writable by everyone");
	assert_int_equal(chmod(p("a"), 0770), 0);
	expect("a/b", SV_EPERM, "writable by its group");
	/* ...except with the sticky bit, above it only. */
	assert_int_equal(chmod(p("a"), 01777), 0);
	expect("a/b", SV_OK, NULL);
	expect("a", SV_EPERM, "writable by everyone");
	assert_int_equal(chmod(p("a"), 0755), 0);
	/* Not a path to walk. */
	expect("a/../a", SV_EBADREQ, "..");
	assert_int_equal(svd_dir_check("rel/x", why, sizeof(why)), SV_EBADREQ);
	if (geteuid() == 0) {
		assert_int_equal(chown(p("a"), 65534, 65534), 0);
		expect("a/b", SV_EPERM, "belongs to uid 65534");
	}
	assert_int_equal(sv_rmtree(dir), 0);
	svd_dir_force_walk(false);
}

static void
test_walk_openat2(void **state)
{
	(void) state;
	walks(false);
}

static void
test_walk_fallback(void **state)
{
	(void) state;
	walks(true);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_judge),
	    cmocka_unit_test(test_explain),
	    cmocka_unit_test(test_walk_openat2),
	    cmocka_unit_test(test_walk_fallback),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
