/*
 * integration_durability.c — the state directory on a full filesystem and
 * on one gone read-only (docs/durability.md, "When the state directory
 * fails").
 *
 * Design: the journal's directory (state_dir) is a filesystem of its own,
 * mounted by the test (it runs as root; without mount permission it exits
 * 77, skipped): a 64 KiB tmpfs, or an ext4 image on a loop device. Each
 * case starts a real supervised with 3 workers, subscribes to topic "d/"
 * and then:
 *   1. breaks the filesystem: fills the tmpfs to the last byte, or makes
 *      the ext4 fail (sysfs trigger_fs_error with errors=remount-ro: the
 *      kernel turns it read-only under the daemon's open files, as after
 *      an I/O error; a plain `mount -o remount,ro` is refused while the
 *      daemon holds the journal open for writing);
 *   2. churns workers (kills one, waits for its replacement) until Hello
 *      says durability is lost, with the right reason; a `durability`
 *      event ok=0 must have come;
 *   3. churns more: every kill is still answered by a replacement with
 *      the next generation (supervision goes on);
 *   4. repairs the filesystem (removes the filler; or detaches the broken
 *      ext4 and mounts a fresh one in its place) and, touching nothing
 *      else, waits for a `durability` event ok=1 and Hello saying ok;
 *   5. churns once more, notes every worker's pid and generation, kills
 *      the daemon with SIGKILL and starts a new one: it must adopt the same
 *      pids at the same generations (the journal replayed right, nothing
 *      corrupt), and a worker killed then is replaced with generation + 1.
 * A third case kills the daemon while durability is lost, then repairs the
 * filesystem: the journal it left is whole, and the successor starts.
 * Every wait has a deadline; no sleep is used as synchronisation.
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
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nng/supplemental/util/platform.h>
#include "../sv_tmpdir.h"

#define GROUP "web"
#define NW    3
/* Kills tried before durability must be reported lost. */
#define MAX_CHURN 200
/* Durability back after the repair: the daemon retries every second. */
#define RESTORE_MS 10000

static char mnt[64]; /* the state_dir mount point */
static char img[80]; /* the ext4 image (read-only case) */
static char top[160]; /* it_config_top: state_dir = "..." */

/* sh runs a shell command line quietly; returns its exit status. */
static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int
sh(const char *fmt, ...)
{
	char    cmd[512], full[600];
	va_list ap;
	int     st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(full, sizeof(full), "(%s) >/dev/null 2>&1", cmd);
	st = system(full);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* mount_tmpfs mounts a fresh 64 KiB tmpfs (mode 0700) on mnt. */
static int
mount_tmpfs(void)
{
	return mount("tmpfs", mnt, "tmpfs", 0, "size=64k,mode=0700");
}

/* status_of reads (pid, generation) of one worker of GROUP. */
static void
status_of(it_ctx *ctx, uint32_t ordinal, pid_t *pidp, uint64_t *genp)
{
	sv_workers *w = NULL;

	IT_PASS(ctx,
	    sv_client_status(ctx->client, GROUP, ordinal, IT_CALL_MS, &w));
	assert_int_equal(sv_workers_count(w), 1);
	*pidp = (pid_t) sv_workers_pid(w, 0);
	*genp = sv_workers_generation(w, 0);
	sv_workers_free(w);
}

/* churn kills worker o and checks its replacement: a report from ordinal o
 * with a later generation. Returns the replacement's pid. */
static pid_t
churn(it_ctx *ctx, uint32_t o)
{
	struct it_report r;
	pid_t            pid;
	uint64_t         gen;

	status_of(ctx, o, &pid, &gen);
	assert_true(pid > 0);
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(it_recv_report(ctx, IT_REPORT_MS, &r), 0);
	assert_int_equal(r.ordinal, o);
	/* Usually gen + 1; more when a spawn failed and was retried (seen
	 * under load: "cannot spawn ...: No such device"). */
	assert_true(r.generation > (long long) gen);
	return (pid_t) r.pid;
}

/* durability asks Hello; returns 1 ok, 0 lost (reason copied), -1 unknown. */
static int
durability(it_ctx *ctx, char *reason, size_t len)
{
	sv_hello *h = NULL;
	int       rv;

	IT_PASS(ctx, sv_client_hello(ctx->client, IT_CALL_MS, &h));
	if (!sv_hello_durability_known(h)) {
		rv = -1;
	} else {
		rv = sv_hello_durability_ok(h);
		snprintf(reason, len, "%s", sv_hello_durability_reason(h));
		if (rv == 0) {
			assert_true(sv_hello_durability_since_ms(h) > 0);
			assert_true(sv_hello_durability_message(h)[0] != '\0');
		}
	}
	sv_hello_free(h);
	return rv;
}

/* wait_event waits for a `durability` event whose details start with
 * want ("ok=0 reason=ENOSPC", "ok=1"); fails at the deadline. */
static void
wait_event(sv_events *ev, const char *want, int deadline_ms)
{
	int64_t end = it_now_ms() + deadline_ms;

	while (it_now_ms() < end) {
		sv_event *e = NULL;
		sv_err    err
		    = sv_events_next(ev, (int) (end - it_now_ms()) + 1, &e);
		if (err == SV_ETIMEDOUT) {
			break;
		}
		assert_int_equal(err, SV_OK);
		if (strcmp(sv_event_kind(e), "durability") == 0
		    && strncmp(sv_event_details(e), want, strlen(want)) == 0) {
			assert_false(sv_event_is_worker(e));
			sv_event_free(e);
			return;
		}
		sv_event_free(e);
	}
	fail_msg(
	    "no durability event \"%s...\" within %d ms", want, deadline_ms);
}

/* reap_pid waits (polling, up to IT_REAP_MS) for our child pid to end and
 * reaps it; fails the test at the deadline. */
static void
reap_pid(pid_t pid)
{
	int64_t end = it_now_ms() + IT_REAP_MS;

	while (waitpid(pid, NULL, WNOHANG) != pid) {
		if (it_now_ms() >= end) {
			fail_msg(
			    "process %d did not end after SIGKILL", (int) pid);
		}
		nng_msleep(10);
	}
}

/* The steps 2..5 of the header, between break_fs and repair_fs. */
static void
run_case(it_ctx *ctx, void (*break_fs)(void), void (*repair_fs)(void),
    const char  *reason)
{
	struct it_report r[NW];
	sv_hello        *h       = NULL;
	sv_events       *ev      = NULL;
	char             got[32] = "", want[64];
	pid_t            pids[NW], pid;
	uint64_t         gens[NW], gen;
	int              n, d;

	it_expect_reports(ctx, NW, r);
	IT_PASS(ctx, sv_client_hello(ctx->client, IT_CALL_MS, &h));
	assert_int_equal(sv_hello_durability_known(h), 1);
	assert_int_equal(sv_hello_durability_ok(h), 1);
	assert_int_equal(
	    sv_events_open(&ev, sv_hello_events_url(h), "d/", IT_CALL_MS),
	    SV_OK);
	sv_hello_free(h);

	break_fs();
	for (n = 0; n < MAX_CHURN; n++) {
		churn(ctx, (uint32_t) n % NW);
		if ((d = durability(ctx, got, sizeof(got))) == 0) {
			break;
		}
		assert_int_equal(d, 1);
	}
	print_message(
	    "[durability] lost (%s) after %d restarts\n", got, n + 1);
	assert_true(n < MAX_CHURN);
	assert_string_equal(got, reason);
	snprintf(want, sizeof(want), "ok=0 reason=%s", reason);
	wait_event(ev, want, IT_CALL_MS);
	/* Supervision goes on; durability stays lost. */
	for (int i = 0; i < 2 * NW; i++) {
		churn(ctx, (uint32_t) i % NW);
	}
	assert_int_equal(durability(ctx, got, sizeof(got)), 0);

	repair_fs();
	wait_event(ev, "ok=1", RESTORE_MS);
	assert_int_equal(durability(ctx, got, sizeof(got)), 1);
	assert_string_equal(got, "");
	sv_events_close(ev);

	/* Changes after the repair are journaled again; then a crash. */
	churn(ctx, 1);
	for (uint32_t o = 0; o < NW; o++) {
		status_of(ctx, o, &pids[o], &gens[o]);
	}
	assert_int_equal(it_kill9_daemon(ctx), 0);
	assert_int_equal(it_restart(ctx), 0);
	for (uint32_t o = 0; o < NW; o++) {
		status_of(ctx, o, &pid, &gen);
		assert_int_equal(pid, pids[o]);
		assert_int_equal(gen, gens[o]);
	}
	it_expect_no_report(ctx, 300);
	assert_int_equal(durability(ctx, got, sizeof(got)), 1);
	/* The generation floor came through: the next one is above gen. */
	kill(pids[2], SIGKILL);
	it_reap_strays(0);
	assert_int_equal(it_recv_report(ctx, IT_REPORT_MS, &r[0]), 0);
	assert_int_equal(r[0].ordinal, 2);
	assert_true(r[0].generation > (long long) gens[2]);
	assert_int_equal(it_term_daemon(ctx), 0);
}

/* ---- the full filesystem ---------------------------------------------- */

/* fill_tmpfs writes mnt/filler until the filesystem refuses a byte. */
static void
fill_tmpfs(void)
{
	char    path[96], buf[4096];
	int     fd;
	ssize_t n;

	memset(buf, 'x', sizeof(buf));
	snprintf(path, sizeof(path), "%s/filler", mnt);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	while ((n = write(fd, buf, sizeof(buf))) > 0) {
	}
	while ((n = write(fd, buf, 1)) > 0) {
	}
	assert_int_equal(errno, ENOSPC);
	close(fd);
}

/* free_tmpfs removes the filler. */
static void
free_tmpfs(void)
{
	char path[96];

	snprintf(path, sizeof(path), "%s/filler", mnt);
	assert_int_equal(unlink(path), 0);
}

static int
setup_full(void **state)
{
	static const struct it_group g[]
	    = {{.name = GROUP, .count = NW, .max_count = NW + 1}};

	if (mount_tmpfs() != 0) {
		return -1;
	}
	return it_setup_groups(state, g, 1);
}

static int
teardown_mnt(void **state)
{
	int rc = it_teardown(state);

	(void) umount2(mnt, MNT_DETACH);
	return rc;
}

/* A full state directory: lost with ENOSPC, back once space returns. */
static void
test_full(void **state)
{
	run_case(*state, fill_tmpfs, free_tmpfs, "ENOSPC");
}

/* A crash while durability is lost, then the repair: the successor reads
 * a journal of whole records (it starts, no "bad checksum") and supervises
 * every seat again. The workers started after the loss are unknown to it:
 * they keep running beside its own (docs/durability.md says so); the test
 * ends them by pid. */
static void
test_crash_while_lost(void **state)
{
	it_ctx          *ctx = *state;
	struct it_report r[NW];
	char             got[32] = "";
	pid_t            last[NW], pid;
	uint64_t         gen;
	int              n;

	it_expect_reports(ctx, NW, r);
	fill_tmpfs();
	for (n = 0; n < MAX_CHURN; n++) {
		last[n % NW] = churn(ctx, (uint32_t) n % NW);
		if (durability(ctx, got, sizeof(got)) == 0) {
			break;
		}
	}
	assert_true(n < MAX_CHURN);
	for (uint32_t o = 0; o < NW; o++) {
		last[o] = churn(ctx, o); /* each seat: a process unknown */
	}
	assert_int_equal(it_kill9_daemon(ctx), 0);
	free_tmpfs();
	assert_int_equal(it_restart(ctx), 0);
	assert_int_equal(durability(ctx, got, sizeof(got)), 1);
	for (uint32_t o = 0; o < NW; o++) {
		int64_t end = it_now_ms() + IT_CONVERGE_MS;
		do {
			status_of(ctx, o, &pid, &gen);
		} while (pid <= 0 && it_now_ms() < end);
		assert_true(pid > 0);
		assert_true(pid != last[o]);
		assert_int_equal(kill(last[o], SIGKILL), 0);
		reap_pid(last[o]); /* reparented to us, the subreaper */
	}
	assert_int_equal(it_term_daemon(ctx), 0);
}

/* ---- the read-only filesystem ----------------------------------------- */

/* ext4_fail makes the ext4 on mnt fail: errors=remount-ro turns it
 * read-only at once, open files and all. */
static void
ext4_fail(void)
{
	assert_int_equal(sh("echo 1 > /sys/fs/ext4/$(basename $(findmnt -no "
	                    "SOURCE %s))/trigger_fs_error",
	                     mnt),
	    0);
	assert_int_equal(sh("findmnt -no OPTIONS %s | grep -q ro", mnt), 0);
}

/* ext4_replace detaches the broken ext4 (the daemon still holds files on
 * it) and mounts a fresh tmpfs in its place, as an operator would. */
static void
ext4_replace(void)
{
	assert_int_equal(umount2(mnt, MNT_DETACH), 0);
	assert_int_equal(mount_tmpfs(), 0);
}

static int
setup_ro(void **state)
{
	static const struct it_group g[]
	    = {{.name = GROUP, .count = NW, .max_count = NW + 1}};

	if (sh("truncate -s 8M %s && mkfs.ext4 -q -F %s && mount -o "
	       "loop,errors=remount-ro %s %s && chmod 0700 %s && rm -rf "
	       "%s/lost+found",
	        img, img, img, mnt, mnt, mnt)
	    != 0) {
		print_message("[durability] no ext4 on a loop device here\n");
		(void) umount2(mnt, MNT_DETACH);
		*state = NULL;
		return 0;
	}
	return it_setup_groups(state, g, 1);
}

/* A state directory gone read-only: lost with EROFS, back once a writable
 * filesystem is mounted there again. */
static void
test_read_only(void **state)
{
	if (*state == NULL) {
		skip();
	}
	run_case(*state, ext4_fail, ext4_replace, "EROFS");
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
	        test_full, setup_full, teardown_mnt),
	    cmocka_unit_test_setup_teardown(
	        test_crash_while_lost, setup_full, teardown_mnt),
	    cmocka_unit_test_setup_teardown(
	        test_read_only, setup_ro, teardown_mnt),
	};
	int rc;

	it_args(argc, argv);
	if (sv_tmpdir(mnt, sizeof(mnt), "sv-durability") != 0) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(img, sizeof(img), "%s.img", mnt);
	/* Mounting needs root (CAP_SYS_ADMIN): skipped without it. */
	if (mount_tmpfs() != 0) {
		fprintf(stderr, "cannot mount a tmpfs on %s (%s): skipped\n",
		    mnt, strerror(errno));
		rmdir(mnt);
		return 77;
	}
	(void) umount2(mnt, 0);
	snprintf(top, sizeof(top), "state_dir = \"%s\";", mnt);
	it_config_top = top;
	rc            = cmocka_run_group_tests_name(
	               "integration_durability", tests, NULL, NULL);
	(void) umount2(mnt, MNT_DETACH);
	(void) unlink(img);
	(void) rmdir(mnt);
	return it_finish(rc);
}
