/*
 * integration_poolpaths.c — a lease pool's path cannot be turned against
 * the supervisor (docs/leases.md, "Where a slot's file may be"; docs/
 * config.md, pools).
 *
 * Design: each case starts a real supervised (no config pools), creates
 * pools at runtime with CreatePool, as an administrator, under a fresh
 * mkdtemp directory, plants what a hostile local user would plant there
 * and takes leases as a session holder (the test itself). Every planted
 * object is checked afterwards with lstat: still there, same inode, same
 * mode, owner and content. Cases:
 *   - a symbolic link as a directory above the slots: CreatePool refuses
 *     it (PERMISSION_DENIED, the message names the link); a link planted
 *     after CreatePool in place of a missing directory makes the acquire
 *     fail with PERMISSION_DENIED and nothing is made where it points;
 *   - a directory above the slots writable by everyone (and, as root, one
 *     owned by another user): CreatePool refuses it;
 *   - a symbolic link as the slot file, and as the slot directory: the
 *     acquire is refused with PERMISSION_DENIED naming the path, twice
 *     (the first refusal must not remove it), and the link and its target
 *     are left as they were;
 *   - a file that was there before (0600, the observed attack: as root it
 *     is a root-only file in a root-only directory): refused, not chmoded,
 *     chowned, truncated or removed; as root also with a worker of a
 *     group running as nobody for holder (whom the file would be chowned
 *     to);
 *   - what the supervisor made itself is still handed over, truncated and
 *     removed, also by a successor after kill -9 (the file's identity is
 *     journaled with the lease).
 * Every call has a deadline; the daemon is ended by pid (it_teardown).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../sv_skip.h"

#define CALL IT_CALL_MS

/* A planted object as it was: to be found unchanged. */
typedef struct planted {
	char        path[300];
	struct stat st;
	char        content[64]; /* a regular file's; "" otherwise */
} planted;

/* at writes it_scratch_dir/rel into buf. */
static const char *
at(char *buf, size_t len, const char *rel)
{
	snprintf(buf, len, "%s/%s", it_scratch_dir, rel);
	return buf;
}

/* put_file writes content into new file path with mode. */
static void
put_file(const char *path, const char *content, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);

	assert_true(fd >= 0);
	assert_int_equal(
	    write(fd, content, strlen(content)), (ssize_t) strlen(content));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

/* read_small reads up to len - 1 bytes of path into buf ("" if none). */
static void
read_small(const char *path, char *buf, size_t len)
{
	int     fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n  = fd >= 0 ? read(fd, buf, len - 1) : -1;

	buf[n > 0 ? n : 0] = '\0';
	if (fd >= 0) {
		close(fd);
	}
}

/* remember records what path is now. */
static void
remember(planted *p, const char *path)
{
	snprintf(p->path, sizeof(p->path), "%s", path);
	assert_int_equal(lstat(path, &p->st), 0);
	p->content[0] = '\0';
	if (S_ISREG(p->st.st_mode)) {
		read_small(path, p->content, sizeof(p->content));
	}
}

/* unchanged fails unless p's path is still what remember saw. */
static void
unchanged(const planted *p)
{
	struct stat st;
	char        content[64] = "";

	if (lstat(p->path, &st) != 0) {
		fail_msg("%s was removed", p->path);
	}
	if (st.st_ino != p->st.st_ino || st.st_mode != p->st.st_mode
	    || st.st_uid != p->st.st_uid || st.st_gid != p->st.st_gid
	    || st.st_size != p->st.st_size) {
		fail_msg("%s was changed (mode %o->%o, uid %u->%u, size "
		         "%lld->%lld)",
		    p->path, (unsigned) p->st.st_mode, (unsigned) st.st_mode,
		    (unsigned) p->st.st_uid, (unsigned) st.st_uid,
		    (long long) p->st.st_size, (long long) st.st_size);
	}
	if (S_ISREG(st.st_mode)) {
		read_small(p->path, content, sizeof(content));
		assert_string_equal(content, p->content);
	}
}

/* refused_naming fails unless the last error message names what. */
static void
refused_naming(it_ctx *ctx, const char *what)
{
	const char *m = sv_client_error_message(ctx->client);

	if (strstr(m, what) == NULL) {
		fail_msg("the refusal \"%s\" does not name %s", m, what);
	}
}

/* pool makes runtime pool name (2 slots) with path, policy and kind. */
static sv_err
pool(it_ctx *ctx, const char *name, const char *path, const char *policy,
    const char *kind)
{
	return sv_client_pool_create(
	    ctx->client, name, 2, 0, 0, path, policy, kind, CALL);
}

static int
setup(void **state)
{
	/* No worker: the test itself holds the leases (a session). */
	static const struct it_group g[] = {{.name = "idle", .count = 0}};

	return it_setup_groups(state, g, 1);
}

/* ---- directories above the slots ---------------------------------------- */

static void
test_parent_link(void **state)
{
	it_ctx   *ctx = *state;
	char      a[300], b[300], tmpl[300];
	uint64_t  s = 0;
	sv_lease *l = NULL;
	planted   link, target;

	/* A link to a directory the daemon would accept. */
	assert_int_equal(mkdir(at(a, sizeof(a), "target"), 0700), 0);
	assert_int_equal(symlink(a, at(b, sizeof(b), "link")), 0);
	remember(&link, b);
	remember(&target, a);
	IT_FAIL(ctx,
	    pool(ctx, "viaLink", at(tmpl, sizeof(tmpl), "link/{slot}.dat"),
	        "remove", "file"),
	    SV_EPERM);
	refused_naming(ctx, b);
	refused_naming(ctx, "symbolic link");
	/* Deeper: the link is a grandparent. */
	IT_FAIL(ctx,
	    pool(ctx, "viaLink2",
	        at(tmpl, sizeof(tmpl), "link/sub/{slot}.dat"), "remove",
	        "file"),
	    SV_EPERM);
	refused_naming(ctx, b);

	/* A link planted after CreatePool where a directory was missing. */
	IT_PASS(ctx,
	    pool(ctx, "late", at(tmpl, sizeof(tmpl), "late/x/{slot}.dat"),
	        "remove", "file"));
	assert_int_equal(symlink(a, at(b, sizeof(b), "late")), 0);
	IT_PASS(ctx, sv_client_session_open(ctx->client, 10000, CALL, &s));
	IT_FAIL(ctx,
	    sv_client_lease_acquire(ctx->client, "late", 0, 0, s, CALL, &l),
	    SV_EPERM);
	refused_naming(ctx, b);
	unchanged(&link);
	unchanged(&target);
	assert_int_equal(lstat(at(b, sizeof(b), "target/x"), &link.st), -1);
	assert_int_equal(
	    lstat(at(b, sizeof(b), "target/0.dat"), &link.st), -1);
}

static void
test_parent_untrusted(void **state)
{
	it_ctx *ctx = *state;
	char    a[300], tmpl[300];

	/* Everyone may write it: anyone could plant the slot's name. */
	assert_int_equal(mkdir(at(a, sizeof(a), "open"), 0700), 0);
	assert_int_equal(chmod(a, 0777), 0);
	IT_FAIL(ctx,
	    pool(ctx, "open", at(tmpl, sizeof(tmpl), "open/{slot}.dat"),
	        "keep", "file"),
	    SV_EPERM);
	refused_naming(ctx, a);
	refused_naming(ctx, "writable by everyone");
	/* The sticky bit is no excuse for the slots' own directory... */
	assert_int_equal(chmod(a, 01777), 0);
	IT_FAIL(ctx,
	    pool(ctx, "sticky", at(tmpl, sizeof(tmpl), "open/{slot}.dat"),
	        "keep", "file"),
	    SV_EPERM);
	/* ...but is for one above it (as /tmp is), when what is below is
	 * ours. */
	assert_int_equal(mkdir(at(a, sizeof(a), "open/mine"), 0755), 0);
	IT_PASS(ctx,
	    pool(ctx, "below", at(tmpl, sizeof(tmpl), "open/mine/{slot}.dat"),
	        "keep", "file"));
	if (geteuid() == 0) {
		/* Another user's directory, closed to everyone else. */
		assert_int_equal(mkdir(at(a, sizeof(a), "theirs"), 0755), 0);
		assert_int_equal(chown(a, 65534, 65534), 0);
		IT_FAIL(ctx,
		    pool(ctx, "theirs",
		        at(tmpl, sizeof(tmpl), "theirs/{slot}.dat"), "keep",
		        "file"),
		    SV_EPERM);
		refused_naming(ctx, "belongs to uid 65534");
	}
	/* What a refused CreatePool left: no pool. */
	{
		sv_lease *l = NULL;
		IT_FAIL(ctx,
		    sv_client_lease_acquire(
		        ctx->client, "open", 0, 0, 0, CALL, &l),
		    SV_ENOTFOUND);
	}
}

/* ---- the slot's own name ------------------------------------------------ */

static void
test_slot_file_link(void **state)
{
	it_ctx   *ctx = *state;
	char      a[300], b[300], tmpl[300];
	uint64_t  s = 0;
	sv_lease *l = NULL;
	planted   link, victim;

	assert_int_equal(mkdir(at(a, sizeof(a), "f"), 0755), 0);
	put_file(at(a, sizeof(a), "victim"), "secret", 0600);
	assert_int_equal(symlink(a, at(b, sizeof(b), "f/0.dat")), 0);
	remember(&victim, a);
	remember(&link, b);
	IT_PASS(ctx,
	    pool(ctx, "files", at(tmpl, sizeof(tmpl), "f/{slot}.dat"),
	        "remove", "file"));
	IT_PASS(ctx, sv_client_session_open(ctx->client, 10000, CALL, &s));
	for (int i = 0; i < 2; i++) {
		IT_FAIL(ctx,
		    sv_client_lease_acquire(
		        ctx->client, "files", 0, 0, s, CALL, &l),
		    SV_EPERM);
		refused_naming(ctx, b);
		refused_naming(ctx, "symbolic link");
		unchanged(&link);
		unchanged(&victim);
	}
	/* The other slot is fine. */
	IT_PASS(ctx,
	    sv_client_lease_acquire(ctx->client, "files", 1, 0, s, CALL, &l));
	sv_lease_free(l);
}

static void
test_slot_dir_link(void **state)
{
	it_ctx   *ctx = *state;
	char      a[300], b[300], tmpl[300];
	uint64_t  s = 0;
	sv_lease *l = NULL;
	planted   link, vdir, vfile;

	assert_int_equal(mkdir(at(a, sizeof(a), "d"), 0755), 0);
	assert_int_equal(mkdir(at(a, sizeof(a), "vdir"), 0700), 0);
	remember(&vdir, a);
	put_file(at(a, sizeof(a), "vdir/keep"), "precious", 0600);
	remember(&vfile, a);
	assert_int_equal(
	    symlink(at(a, sizeof(a), "vdir"), at(b, sizeof(b), "d/slot-0")),
	    0);
	remember(&link, b);
	remember(&vdir, at(a, sizeof(a), "vdir"));
	IT_PASS(ctx,
	    pool(ctx, "dirs", at(tmpl, sizeof(tmpl), "d/slot-{slot}"),
	        "truncate", "directory"));
	IT_PASS(ctx, sv_client_session_open(ctx->client, 10000, CALL, &s));
	for (int i = 0; i < 2; i++) {
		IT_FAIL(ctx,
		    sv_client_lease_acquire(
		        ctx->client, "dirs", 0, 0, s, CALL, &l),
		    SV_EPERM);
		refused_naming(ctx, b);
		refused_naming(ctx, "symbolic link");
		unchanged(&link);
		unchanged(&vdir);
		unchanged(&vfile);
	}
}

static void
test_preexisting_file(void **state)
{
	it_ctx   *ctx = *state;
	char      a[300], tmpl[300];
	uint64_t  s = 0;
	sv_lease *l = NULL;
	planted   old;

	/* As root: a root-only file in a root-only directory. */
	assert_int_equal(mkdir(at(a, sizeof(a), "r"), 0700), 0);
	put_file(at(a, sizeof(a), "r/0.dat"), "root-only", 0600);
	remember(&old, a);
	IT_PASS(ctx,
	    pool(ctx, "pre", at(tmpl, sizeof(tmpl), "r/{slot}.dat"), "remove",
	        "file"));
	IT_PASS(ctx, sv_client_session_open(ctx->client, 10000, CALL, &s));
	IT_FAIL(ctx,
	    sv_client_lease_acquire(ctx->client, "pre", 0, 0, s, CALL, &l),
	    SV_EPERM);
	refused_naming(ctx, a);
	refused_naming(ctx, "not made by this supervisor");
	unchanged(&old);
	/* A wait for it is refused the same way, and leaves it too. */
	IT_FAIL(ctx,
	    sv_client_lease_acquire(ctx->client, "pre", 0, 200, s, CALL, &l),
	    SV_EPERM);
	unchanged(&old);
}

/* As root, the observed attack itself: the holder is a worker of a group
 * running as nobody, the pool's slot 0 is a root-only file in a root-only
 * directory. The daemon is restarted on the harness's directory opened to
 * others (0711: workers of another user must reach the control socket),
 * with a config of its own; the worker (sv-leaseworker) reports its
 * acquire over the report socket, also opened to others. */
static void
test_root_file_worker_holder(void **state)
{
	it_ctx          *ctx = *state;
	char             a[300], tmpl[300], lw[512], sock[200];
	planted          old;
	struct it_report r;
	FILE            *f;

	if (geteuid() != 0) {
		SV_SKIP("the worker-held case needs root");
		return;
	}
	it_sibling_program(lw, sizeof(lw), "sv-leaseworker");
	if (!it_runnable_by_others(lw)) {
		SV_SKIP(
		    "sv-leaseworker cannot be run by nobody (a directory on "
		    "the way is closed to others, such as a home directory "
		    "of mode 0700): build where nobody can reach to run "
		    "this case");
		return;
	}
	assert_int_equal(mkdir(at(a, sizeof(a), "rootonly"), 0700), 0);
	put_file(at(a, sizeof(a), "rootonly/0.dat"), "root-only", 0600);
	remember(&old, a);
	/* Stop the standard daemon, reopen its directory, start ours. */
	sv_client_close(ctx->client);
	ctx->client = NULL;
	assert_int_equal(kill(ctx->daemon, SIGTERM), 0);
	assert_int_equal(
	    it_reap_daemon(ctx, ctx->stop_timeout_ms + IT_STOP_MARGIN_MS), 0);
	assert_int_equal(chmod(ctx->dir, 0711), 0);
	snprintf(sock, sizeof(sock), "%s/report.sock", ctx->dir);
	assert_int_equal(chmod(sock, 0666), 0);
	assert_non_null(f = fopen(ctx->conf_path, "w"));
	fprintf(f,
	    "socket_dir = \"%s\";\n"
	    "stop_timeout_ms = %d;\n"
	    "pools = ( { name = \"pre\"; slots = 1; on_release = "
	    "\"remove\";\n"
	    "            path = \"%s\"; } );\n"
	    "groups = ( { name = \"lw\"; count = 1; purpose = \"holder\";\n"
	    "    argv = [\"%s\"]; user = \"nobody\"; min_uptime_ms = 0;\n"
	    "    env = [\"SV_TEST_REPORT_URL=%s\", \"SV_LEASE_POOL=pre\",\n"
	    "           \"SV_LEASE_OWN_SLOT=1\"]; } );\n",
	    ctx->dir, ctx->stop_timeout_ms,
	    at(tmpl, sizeof(tmpl), "rootonly/{slot}.dat"), lw,
	    ctx->report_url);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(it_restart(ctx), 0);
	assert_int_equal(it_recv_report(ctx, IT_REPORT_MS, &r), 0);
	if (r.rc != SV_EPERM) {
		fail_msg(
		    "the worker's acquire: %s, want PERMISSION_DENIED (%s)",
		    sv_err_name((sv_err) r.rc), r.raw);
	}
	unchanged(&old);
	/* Its release (the worker stopping) leaves it too. */
	sv_client_close(ctx->client);
	ctx->client = NULL;
	assert_int_equal(kill(ctx->daemon, SIGTERM), 0);
	assert_int_equal(
	    it_reap_daemon(ctx, ctx->stop_timeout_ms + IT_STOP_MARGIN_MS), 0);
	unchanged(&old);
}

/* ---- what the supervisor made is still its to handle -------------------- */

static void
test_own_files(void **state)
{
	it_ctx     *ctx = *state;
	char        a[300], tmpl[300];
	uint64_t    s = 0;
	sv_lease   *l = NULL, *c = NULL;
	struct stat st, st2;
	int         fd;

	IT_PASS(ctx,
	    pool(ctx, "trunc", at(tmpl, sizeof(tmpl), "own/t/{slot}.dat"),
	        "truncate", "file"));
	IT_PASS(ctx,
	    pool(ctx, "rm", at(tmpl, sizeof(tmpl), "own/r/{slot}"), "remove",
	        "directory"));
	IT_PASS(ctx, sv_client_session_open(ctx->client, 20000, CALL, &s));
	/* Made, written by the holder, truncated, handed over again. */
	IT_PASS(ctx,
	    sv_client_lease_acquire(ctx->client, "trunc", 0, 0, s, CALL, &l));
	at(a, sizeof(a), "own/t/0.dat");
	assert_int_equal(lstat(a, &st), 0);
	fd = open(a, O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "data", 4), 4);
	close(fd);
	IT_PASS(ctx,
	    sv_client_lease_release(ctx->client, sv_lease_id(l), s, CALL));
	sv_lease_free(l);
	assert_int_equal(lstat(a, &st2), 0);
	assert_int_equal(st2.st_size, 0);
	assert_true(st2.st_ino == st.st_ino);
	IT_PASS(ctx,
	    sv_client_lease_acquire(ctx->client, "trunc", 0, 0, s, CALL, &l));
	sv_lease_free(l);
	/* A directory with a tree inside, and a link out of it that the
	 * removal must not follow. */
	IT_PASS(ctx,
	    sv_client_lease_acquire(ctx->client, "rm", 0, 0, s, CALL, &l));
	assert_int_equal(mkdir(at(a, sizeof(a), "own/r/0/sub"), 0700), 0);
	put_file(at(a, sizeof(a), "own/r/0/sub/f"), "x", 0600);
	put_file(at(a, sizeof(a), "outside"), "stays", 0600);
	assert_int_equal(symlink(at(tmpl, sizeof(tmpl), "outside"),
	                     at(a, sizeof(a), "own/r/0/sub/ln")),
	    0);
	/* kill -9 the supervisor: its successor must know the directory is
	 * its own (journaled) to remove it at the release. */
	assert_int_equal(it_kill9_daemon(ctx), 0);
	assert_int_equal(it_restart(ctx), 0);
	IT_PASS(ctx, sv_client_session_renew(ctx->client, s, CALL));
	IT_PASS(ctx,
	    sv_client_lease_claim(
	        ctx->client, "rm", 0, sv_lease_token(l), s, CALL, &c));
	IT_PASS(ctx,
	    sv_client_lease_release(ctx->client, sv_lease_id(c), s, CALL));
	assert_int_equal(lstat(at(a, sizeof(a), "own/r/0"), &st), -1);
	assert_int_equal(errno, ENOENT);
	read_small(at(a, sizeof(a), "outside"), tmpl, sizeof(tmpl));
	assert_string_equal(tmpl, "stays");
	sv_lease_free(l);
	sv_lease_free(c);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
	        test_parent_link, setup, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_parent_untrusted, setup, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_slot_file_link, setup, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_slot_dir_link, setup, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_preexisting_file, setup, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_root_file_worker_holder, setup, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_own_files, setup, it_teardown),
	};

	it_args(argc, argv);
	return SV_EXIT(
	    it_finish(cmocka_run_group_tests_name("integration_poolpaths",
	        tests, it_scratch_setup, it_scratch_teardown)));
}
