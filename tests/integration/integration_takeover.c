/*
 * integration_takeover.c — a supervisor crash never doubles the workers
 * (issue 6, item 1; docs/durability.md).
 *
 * Design: each case starts a real supervised, brings it to a given moment,
 * kills it with SIGKILL, starts a new one on the same directory (the
 * journal lives in socket_dir) and checks what the new one does:
 *   - 3 workers running: the same 3 pids are adopted on the same ordinals
 *     and generations, nothing is spawned; an adopted worker killed later
 *     is replaced with generation + 1;
 *   - a worker in backoff: it starts at once with its generation continued,
 *     the other is adopted;
 *   - during a scale-up to 24: exactly 24 workers afterwards, one per
 *     ordinal, and no process of ours beyond them;
 *   - during shutdown, with workers that ignore SIGTERM: they are stopped
 *     again (SIGKILL after the stop timeout) and replaced; never more than
 *     one process per ordinal;
 *   - a group with die_with_supervisor: its workers die with the daemon and
 *     the next one starts new ones;
 *   - a journal that is not one: the daemon refuses to start (exit 111)
 *     and touches nothing;
 *   - a worker ignoring SIGTERM while being restarted, with the daemon
 *     killed and started again every 0.4 x its stop timeout: it is still
 *     SIGKILLed by the first deadline (journaled with its T record).
 *   - a process the journal does not know in a new cgroup of the killed
 *     daemon's tree (as a spawn it could not record, still before its
 *     exec, is): the next daemon kills it before it spawns anything; one
 *     in an adopted worker's cgroup is left alone (root and per-worker
 *     cgroups only, else skipped);
 *   - a worker stopped (SIGSTOP) when the daemon, started in a session of
 *     its own as a service manager would, is killed: it stays alive and
 *     stopped (no SIGHUP for an orphaned process group: the worker has a
 *     session of its own), and the next daemon adopts it.
 *
 * The test is a child subreaper (harness.c), so the workers of a killed
 * daemon become its children: it reaps them once they end (it_reap_strays),
 * which is what init would do for a daemon run in production.
 * "Our processes" are found by their SUPERVISE_URL in /proc/PID/environ.
 * Every wait polls with a deadline.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "../sv_skip.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nng/supplemental/util/platform.h>

#define GROUP "web"

/* count_ours counts live (non-zombie) processes whose environment holds
 * SUPERVISE_URL=<ctx->url>: the daemon's workers, adopted or not. */
static int
count_ours(it_ctx *ctx)
{
	char           want[200], path[64], buf[8192];
	DIR           *d = opendir("/proc");
	struct dirent *de;
	int            n = 0;

	snprintf(want, sizeof(want), "SUPERVISE_URL=%s", ctx->url);
	assert_non_null(d);
	while ((de = readdir(d)) != NULL) {
		char    st  = 0;
		long    pid = strtol(de->d_name, NULL, 10);
		ssize_t len;
		int     fd;
		if (pid <= 0 || (pid_t) pid == getpid()) {
			continue;
		}
		snprintf(path, sizeof(path), "/proc/%ld/environ", pid);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
			continue;
		}
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		for (ssize_t off = 0; len > 0 && off < len;) {
			const char *e = buf + off;
			if (strncmp(e, want, strlen(want) + 1) == 0
			    && it_proc_stat((pid_t) pid, NULL, &st, NULL) == 0
			    && st != 'Z') {
				n++;
				break;
			}
			off += (ssize_t) strnlen(e, (size_t) (len - off)) + 1;
		}
	}
	closedir(d);
	return n;
}

/* wait_ours polls until count_ours is n; fails the test at the deadline. */
static void
wait_ours(it_ctx *ctx, int n, int deadline_ms)
{
	int64_t end = it_now_ms() + deadline_ms;
	int     got;

	while ((got = count_ours(ctx)) != n && it_now_ms() < end) {
		nng_msleep(10);
	}
	if (got != n) {
		fail_msg("%d processes of this supervisor, want %d", got, n);
	}
}

/* alive tells whether pid runs (a zombie does not). */
static bool
alive(pid_t pid)
{
	char st = 0;

	return it_proc_stat(pid, NULL, &st, NULL) == 0 && st != 'Z';
}

/* cg_leaf_of writes to out the directory of process pid's per-worker
 * cgroup (a leaf of a "supervised.N" tree, under the cgroup2 mount).
 * false when pid is not in such a leaf: the daemon runs without cgroups
 * here. */
static bool
cg_leaf_of(pid_t pid, char *out, size_t outlen)
{
	char  path[64], line[1024], mnt[512] = "", *slash;
	FILE *f;
	bool  found = false;

	/* The cgroup2 mount (mountinfo: root is field 4, the mount point
	 * field 5, the type follows " - "). Only a mount of the root. */
	if ((f = fopen("/proc/self/mountinfo", "re")) == NULL) {
		return false;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		char root[512], point[512];
		if (strstr(line, " - cgroup2 ") != NULL
		    && sscanf(line, "%*s %*s %*s %511s %511s", root, point)
		        == 2
		    && strcmp(root, "/") == 0) {
			snprintf(mnt, sizeof(mnt), "%s", point);
			break;
		}
	}
	fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int) pid);
	if (mnt[0] == '\0' || (f = fopen(path, "re")) == NULL) {
		return false;
	}
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "0::/", 4) == 0
		    && (slash = strrchr(line, '/')) != NULL) {
			*slash = '\0'; /* the leaf's parent, for the test */
			found  = strstr(line, "/supervised.") != NULL;
			*slash = '/';
			found  = found
			    && (size_t) snprintf(
			           out, outlen, "%s%s", mnt, line + 3)
			        < outlen;
		}
	}
	fclose(f);
	return found;
}

/* cg_tree_of writes to out the directory of the cgroup tree that holds
 * process pid's per-worker cgroup (the leaf's parent, a "supervised.N"
 * directory under the cgroup2 mount). false when pid is not in such a
 * leaf: the daemon runs without cgroups here. */
static bool
cg_tree_of(pid_t pid, char *out, size_t outlen)
{
	char *slash;

	if (!cg_leaf_of(pid, out, outlen)
	    || (slash = strrchr(out, '/')) == NULL) {
		return false;
	}
	*slash = '\0';
	return true;
}

/* dir_exists tells whether path is a directory. */
static bool
dir_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* status_of reads (pid, generation, state) of one worker of GROUP. */
static void
status_of(it_ctx *ctx, uint32_t ordinal, pid_t *pidp, uint64_t *genp,
    sv_state *statep)
{
	sv_workers *w = NULL;

	IT_PASS(ctx,
	    sv_client_status(ctx->client, GROUP, ordinal, IT_CALL_MS, &w));
	assert_int_equal(sv_workers_count(w), 1);
	*pidp = (pid_t) sv_workers_pid(w, 0);
	*genp = sv_workers_generation(w, 0);
	if (statep != NULL) {
		*statep = sv_workers_state(w, 0);
	}
	sv_workers_free(w);
}

/* wait_state polls until ordinal of GROUP is in state st. */
static void
wait_state(it_ctx *ctx, uint32_t ordinal, sv_state st)
{
	int64_t  end = it_now_ms() + IT_CONVERGE_MS;
	pid_t    pid;
	uint64_t gen;
	sv_state now = SV_STATE_UNSPECIFIED;

	while (it_now_ms() < end) {
		status_of(ctx, ordinal, &pid, &gen, &now);
		if (now == st) {
			return;
		}
		nng_msleep(10);
	}
	fail_msg("%s[%u] in state %d, want %d", GROUP, ordinal, (int) now,
	    (int) st);
}

static int
setup_three(void **state)
{
	static const struct it_group g[]
	    = {{.name = GROUP, .count = 3, .max_count = 4}};
	return it_setup_groups(state, g, 1);
}

/* kill -9 with 3 workers, then a new daemon: same pids, same ordinals and
 * generations, nothing spawned; an adopted worker that dies is replaced
 * with generation + 1. */
static void
test_adopt_after_kill9(void **state)
{
	it_ctx          *ctx = *state;
	struct it_report r[3];
	pid_t            pids[3], pid;
	uint64_t         gen;
	char             tree[1024];
	bool             cg;

	it_expect_reports(ctx, 3, r);
	for (uint32_t o = 0; o < 3; o++) {
		status_of(ctx, o, &pids[o], &gen, NULL);
		assert_int_equal(gen, 0);
	}
	cg = cg_tree_of(pids[0], tree, sizeof(tree));
	assert_int_equal(it_kill9_daemon(ctx), 0);
	for (int i = 0; i < 3; i++) {
		assert_true(alive(pids[i]));
	}
	assert_int_equal(it_restart(ctx), 0);
	/* The dead daemon's cgroup tree holds the adopted workers: kept. */
	if (cg) {
		assert_true(dir_exists(tree));
	} else {
		print_message("[takeover] no per-worker cgroups here: the "
		              "stale-tree checks are skipped\n");
	}
	for (uint32_t o = 0; o < 3; o++) {
		status_of(ctx, o, &pid, &gen, NULL);
		assert_int_equal(pid, pids[o]);
		assert_int_equal(gen, 0);
	}
	it_expect_no_report(ctx, 300);
	assert_int_equal(count_ours(ctx), 3);
	/* An adopted worker dies: the new daemon notices, replaces it. */
	kill(pids[1], SIGKILL);
	it_reap_strays(0);
	assert_int_equal(it_recv_report(ctx, IT_REPORT_MS, &r[0]), 0);
	assert_int_equal(r[0].ordinal, 1);
	assert_int_equal(r[0].generation, 1);
	wait_ours(ctx, 3, IT_CONVERGE_MS);
	assert_int_equal(it_term_daemon(ctx), 0);
	/* Its last adopted worker gone, the dead daemon's tree went too. */
	if (cg && dir_exists(tree)) {
		fail_msg("the cgroup tree %s of the killed daemon is still "
		         "there after its adopted workers ended",
		    tree);
	}
}

static int
setup_backoff(void **state)
{
	static const struct it_group g[] = {
	    {.name = GROUP, .count = 2, .max_count = 4, .backoff_ms = 4000}};
	return it_setup_groups(state, g, 1);
}

/* kill -9 while a worker waits in backoff: the new daemon starts it at
 * once with its generation continued and adopts the other. */
static void
test_kill9_in_backoff(void **state)
{
	it_ctx          *ctx = *state;
	struct it_report r[2];
	pid_t            p0, p1, pid;
	uint64_t         gen;

	it_expect_reports(ctx, 2, r);
	status_of(ctx, 0, &p0, &gen, NULL);
	status_of(ctx, 1, &p1, &gen, NULL);
	kill(p0, SIGKILL);
	wait_state(ctx, 0, SV_STATE_BACKOFF);
	assert_int_equal(it_kill9_daemon(ctx), 0);
	assert_int_equal(it_restart(ctx), 0);
	/* Well before the 4 s backoff would have ended. */
	assert_int_equal(it_recv_report(ctx, 2000, &r[0]), 0);
	assert_int_equal(r[0].ordinal, 0);
	assert_int_equal(r[0].generation, 1);
	status_of(ctx, 1, &pid, &gen, NULL);
	assert_int_equal(pid, p1);
	wait_ours(ctx, 2, IT_CONVERGE_MS);
	assert_int_equal(it_term_daemon(ctx), 0);
}

static int
setup_scale(void **state)
{
	static const struct it_group g[]
	    = {{.name = GROUP, .count = 1, .max_count = 32}};
	return it_setup_groups(state, g, 1);
}

/* kill -9 in the middle of a scale-up to 24: the new daemon keeps the size
 * (the config did not change), adopts what was spawned, spawns the rest:
 * exactly 24 workers, one per ordinal. */
static void
test_kill9_during_scale_up(void **state)
{
	it_ctx          *ctx = *state;
	struct it_report r;
	uint32_t         ords[32];
	pid_t            pids[32];
	int              n;

	it_expect_reports(ctx, 1, &r);
	IT_PASS(
	    ctx, sv_client_scale(ctx->client, GROUP, 24, IT_CALL_MS, NULL));
	assert_int_equal(it_kill9_daemon(ctx), 0);
	assert_int_equal(it_restart(ctx), 0);
	wait_ours(ctx, 24, IT_CONVERGE_MS);
	n = it_list(ctx, GROUP, ords, pids, 32);
	assert_int_equal(n, 24);
	for (int i = 0; i < n; i++) {
		assert_int_equal(ords[i], (uint32_t) i);
		assert_true(pids[i] > 0 && alive(pids[i]));
	}
	assert_int_equal(it_term_daemon(ctx), 0);
}

static int
setup_two(void **state)
{
	static const struct it_group g[]
	    = {{.name = GROUP, .count = 2, .max_count = 4}};
	return it_setup_groups(state, g, 1);
}

/* plant forks a child that waits for a signal and moves it into the
 * cgroup cgdir (a write of its pid to cgdir/cgroup.procs): a process the
 * daemon's journal does not know. An empty cgdir that a daemon of another
 * run swept meanwhile is made again once. Returns its pid; the test is its
 * parent and reaps it. */
static pid_t
plant(const char *cgdir)
{
	char  path[1200], num[24];
	pid_t pid = fork();
	int   fd, n;

	assert_true(pid >= 0);
	if (pid == 0) {
		/* Ends with the test if the test dies first. */
		(void) prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;) {
			pause();
		}
	}
	snprintf(path, sizeof(path), "%s/cgroup.procs", cgdir);
	n  = snprintf(num, sizeof(num), "%d", (int) pid);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && mkdir(cgdir, 0755) == 0) {
		fd = open(path, O_WRONLY | O_CLOEXEC); /* removed: again */
	}
	if (fd < 0 || write(fd, num, (size_t) n) != n) {
		int e = errno;
		kill(pid, SIGKILL);
		(void) waitpid(pid, NULL, 0);
		fail_msg("cannot move %d into %s: %s", (int) pid, path,
		    strerror(e));
	}
	close(fd);
	return pid;
}

/* wait_killed waits (with a deadline) for the planted child pid to end
 * and reaps it; true when it was killed by SIGKILL. */
static bool
wait_killed(pid_t pid, int deadline_ms)
{
	int64_t end = it_now_ms() + deadline_ms;
	int     st  = 0;
	pid_t   got;

	while ((got = waitpid(pid, &st, WNOHANG)) == 0 && it_now_ms() < end) {
		nng_msleep(10);
	}
	return got == pid && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
}

/* kill -9, then processes the journal does not know in the dead daemon's
 * cgroup tree: one in a new leaf (as a spawn the daemon began but could
 * not record, still before its exec, would be: its environment names no
 * worker), one in an adopted worker's leaf. The next daemon kills the
 * first before it spawns anything and leaves the second (it belongs to an
 * adopted worker); the workers are adopted with their generations, one
 * process per ordinal. */
static void
test_kill9_stray_in_dead_tree(void **state)
{
	it_ctx          *ctx = *state;
	struct it_report r[2];
	pid_t            pids[2], pid, stray, guest;
	uint64_t         gen;
	uint32_t         ords[4];
	pid_t            lpids[4];
	char             tree[1024], leaf1[1024], mine[1100];
	bool             killed;

	it_expect_reports(ctx, 2, r);
	for (uint32_t o = 0; o < 2; o++) {
		status_of(ctx, o, &pids[o], &gen, NULL);
		assert_int_equal(gen, 0);
	}
	if (geteuid() != 0) {
		SV_SKIP("not root: cannot plant a process in a cgroup");
	}
	if (!cg_tree_of(pids[0], tree, sizeof(tree))
	    || !cg_leaf_of(pids[1], leaf1, sizeof(leaf1))) {
		SV_SKIP("the daemon has no per-worker cgroups here");
	}
	assert_int_equal(it_kill9_daemon(ctx), 0);
	/* Made just before the move: a daemon of another test run that
	 * starts meanwhile removes the empty cgroups of dead trees. */
	snprintf(mine, sizeof(mine), "%s/planted.0", tree);
	assert_int_equal(mkdir(mine, 0755), 0);
	stray = plant(mine);
	guest = plant(leaf1);
	assert_int_equal(it_restart(ctx), 0);
	killed = wait_killed(stray, IT_CONVERGE_MS);
	if (!killed) {
		kill(stray, SIGKILL);
		(void) waitpid(stray, NULL, 0);
		kill(guest, SIGKILL);
		(void) waitpid(guest, NULL, 0);
		(void) rmdir(mine);
		fail_msg("pid %d, in a new cgroup of the dead daemon's tree "
		         "%s, was not killed by the next daemon",
		    (int) stray, tree);
	}
	/* The adopted worker's leaf was left alone, guest and all. */
	assert_int_equal(waitpid(guest, NULL, WNOHANG), 0);
	assert_true(alive(guest));
	for (uint32_t o = 0; o < 2; o++) {
		status_of(ctx, o, &pid, &gen, NULL);
		assert_int_equal(pid, pids[o]);
		assert_int_equal(gen, 0);
		assert_true(alive(pids[o]));
	}
	it_expect_no_report(ctx, 300);
	assert_int_equal(it_list(ctx, GROUP, ords, lpids, 4), 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(ords[i], (uint32_t) i);
		assert_int_equal(lpids[i], pids[i]);
	}
	assert_int_equal(count_ours(ctx), 2);
	assert_int_equal(kill(guest, SIGKILL), 0);
	assert_true(wait_killed(guest, IT_REAP_MS));
	assert_int_equal(it_term_daemon(ctx), 0);
	(void) rmdir(mine); /* normally gone with the tree */
}

static int
setup_stubborn(void **state)
{
	static const struct it_group g[] = {{.name = GROUP,
	    .count                                 = 2,
	    .max_count                             = 4,
	    .stop_timeout_ms                       = 1500,
	    .ignore_term                           = true}};
	return it_setup_groups(state, g, 1);
}

/* kill -9 during a shutdown whose workers ignore SIGTERM: the new daemon
 * stops them again, SIGKILLs them at the stop timeout and starts their
 * replacements; at no point two processes on one ordinal. */
static void
test_kill9_during_shutdown(void **state)
{
	it_ctx          *ctx = *state;
	struct it_report r[2];
	pid_t            old[2], pid;
	uint64_t         gen;
	int64_t          end;

	it_expect_reports(ctx, 2, r);
	status_of(ctx, 0, &old[0], &gen, NULL);
	status_of(ctx, 1, &old[1], &gen, NULL);
	kill(ctx->daemon, SIGTERM);
	wait_state(ctx, 0, SV_STATE_STOPPING);
	wait_state(ctx, 1, SV_STATE_STOPPING);
	assert_int_equal(it_kill9_daemon(ctx), 0);
	assert_true(alive(old[0]) && alive(old[1]));
	assert_int_equal(it_restart(ctx), 0);
	/* Until the old ones are gone, nothing new may run beside them. */
	end = it_now_ms() + 1500 + IT_REAP_MS;
	while ((alive(old[0]) || alive(old[1])) && it_now_ms() < end) {
		assert_true(count_ours(ctx) <= 2);
		nng_msleep(20);
	}
	assert_false(alive(old[0]) || alive(old[1]));
	it_reap_strays(0);
	it_expect_reports(ctx, 2, r);
	for (uint32_t o = 0; o < 2; o++) {
		status_of(ctx, o, &pid, &gen, NULL);
		assert_true(pid != old[0] && pid != old[1]);
		assert_int_equal(gen, 1);
	}
	wait_ours(ctx, 2, IT_CONVERGE_MS);
	assert_int_equal(it_term_daemon(ctx), 0);
}

static int
setup_die(void **state)
{
	static const struct it_group g[] = {{.name = GROUP,
	    .count                                 = 2,
	    .max_count                             = 4,
	    .extra = "die_with_supervisor = true;"}};
	return it_setup_groups(state, g, 1);
}

/* die_with_supervisor: the workers die with the daemon; the next daemon
 * starts new ones, generations continued. */
static void
test_die_with_supervisor(void **state)
{
	it_ctx          *ctx = *state;
	struct it_report r[2];
	pid_t            old[2];
	uint64_t         gen;
	int64_t          end;
	char             tree[1024];
	bool             cg;

	it_expect_reports(ctx, 2, r);
	status_of(ctx, 0, &old[0], &gen, NULL);
	status_of(ctx, 1, &old[1], &gen, NULL);
	cg = cg_tree_of(old[0], tree, sizeof(tree));
	assert_int_equal(it_kill9_daemon(ctx), 0);
	end = it_now_ms() + IT_REAP_MS;
	while ((alive(old[0]) || alive(old[1])) && it_now_ms() < end) {
		nng_msleep(5);
	}
	assert_false(alive(old[0]) || alive(old[1]));
	it_reap_strays(0);
	/* The killed daemon left its tree, now empty. Any daemon that starts
	 * beside it (another test's, under ctest -j) may remove it first: a
	 * dead daemon's empty tree holds nothing to adopt. Only a tree still
	 * there is a check on ours. */
	if (cg && !dir_exists(tree)) {
		fprintf(stderr,
		    "[it] %s was removed before our restart (another daemon "
		    "swept it); the removal check has nothing to see\n",
		    tree);
		cg = false;
	}
	assert_int_equal(it_restart(ctx), 0);
	/* The new daemon removed the empty tree of the killed one. */
	if (cg && dir_exists(tree)) {
		fail_msg("the killed daemon's empty cgroup tree %s is still "
		         "there after a new daemon started",
		    tree);
	}
	it_expect_reports(ctx, 2, r);
	assert_int_equal(r[0].generation, 1);
	assert_int_equal(r[1].generation, 1);
	wait_ours(ctx, 2, IT_CONVERGE_MS);
	assert_int_equal(it_term_daemon(ctx), 0);
}

static int
setup_three_stubborn(void **state)
{
	static const struct it_group g[] = {{.name = GROUP,
	    .count                                 = 3,
	    .max_count                             = 4,
	    .stop_timeout_ms                       = 1000,
	    .ignore_term                           = true}};
	return it_setup_groups(state, g, 1);
}

/* Ordinals released one at a time stay released across a kill -9: with
 * web[0] terminated and web[1] draining (both ignore SIGTERM, so both are
 * still alive), the new daemon keeps web[2], stops the other two and
 * starts nothing in their place; a scale-up takes the two ordinals again. */
static void
test_released_stay_released(void **state)
{
	it_ctx          *ctx = *state;
	struct it_report r[3];
	pid_t            pids[3], pid;
	uint64_t         gen;
	sv_drain_report *rep = NULL;
	sv_state         st;

	it_expect_reports(ctx, 3, r);
	for (uint32_t o = 0; o < 3; o++) {
		status_of(ctx, o, &pids[o], &gen, NULL);
	}
	IT_PASS(ctx,
	    sv_client_terminate_worker(ctx->client, GROUP, 0, IT_CALL_MS));
	IT_PASS(ctx,
	    sv_client_drain(ctx->client, GROUP, 1, 60000, IT_CALL_MS, &rep));
	sv_drain_report_free(rep);
	status_of(ctx, 1, &pid, &gen, &st);
	assert_int_equal(st, SV_STATE_DRAINING);
	assert_int_equal(it_kill9_daemon(ctx), 0);
	assert_true(alive(pids[0]) && alive(pids[1]) && alive(pids[2]));
	assert_int_equal(it_restart(ctx), 0);
	status_of(ctx, 2, &pid, &gen, &st);
	assert_int_equal(pid, pids[2]); /* adopted, kept */
	assert_int_equal(st, SV_STATE_RUNNING);
	/* The other two are stopped (SIGKILL at the 1 s stop timeout) and
	 * nothing takes their place. */
	it_reap_strays(3000);
	assert_false(alive(pids[0]) || alive(pids[1]));
	it_expect_no_report(ctx, 500);
	assert_int_equal(count_ours(ctx), 1);
	/* Released, not lost: a scale-up takes ordinals 0 and 1 again. */
	IT_PASS(ctx, sv_client_scale(ctx->client, GROUP, 3, IT_CALL_MS, NULL));
	it_expect_reports(ctx, 2, r);
	assert_true((r[0].ordinal == 0 && r[1].ordinal == 1)
	    || (r[0].ordinal == 1 && r[1].ordinal == 0));
	assert_int_equal(r[0].generation, 1);
	assert_int_equal(r[1].generation, 1);
	wait_ours(ctx, 3, IT_CONVERGE_MS);
	assert_int_equal(it_term_daemon(ctx), 0);
}

static int
setup_one(void **state)
{
	static const struct it_group g[]
	    = {{.name = GROUP, .count = 1, .max_count = 2}};
	return it_setup_groups(state, g, 1);
}

/* A state file that is not a journal: refused (exit 111), left in place;
 * moved away, the daemon starts. */
static void
test_bad_journal_refused(void **state)
{
	it_ctx          *ctx = *state;
	struct it_report r;
	char             path[200], moved[220];
	FILE            *f;

	it_expect_reports(ctx, 1, &r);
	assert_int_equal(it_term_daemon(ctx), 0);
	snprintf(path, sizeof(path), "%s/state", ctx->dir);
	snprintf(moved, sizeof(moved), "%s/state.bad", ctx->dir);
	assert_non_null(f = fopen(path, "w"));
	fputs("not a journal\n", f);
	fclose(f);
	assert_int_equal(it_restart(ctx), -1);
	assert_true(WIFEXITED(ctx->status));
	assert_int_equal(WEXITSTATUS(ctx->status), 111);
	assert_non_null(f = fopen(path, "r"));
	fclose(f);
	assert_int_equal(rename(path, moved), 0);
	assert_int_equal(unlink(moved), 0);
	assert_int_equal(it_restart(ctx), 0);
	it_expect_reports(ctx, 1, &r);
	assert_int_equal(r.generation, 0); /* a fresh start: no journal */
}

/* The stop timeout of the deadline case, and how often its daemon is
 * restarted meanwhile (0.4 of it). */
#define DL_TIMEOUT_MS 2500
#define DL_EVERY_MS   (DL_TIMEOUT_MS * 2 / 5)
/* What may pass after the deadline before the worker must be gone: a
 * daemon start under load and the reaping. */
#define DL_MARGIN_MS 2000

static int
setup_deadline(void **state)
{
	static const struct it_group g[] = {{.name = GROUP,
	    .count                                 = 1,
	    .max_count                             = 2,
	    .stop_timeout_ms                       = DL_TIMEOUT_MS,
	    .ignore_term                           = true}};
	return it_setup_groups(state, g, 1);
}

/* A worker that ignores SIGTERM is being restarted; the daemon is killed
 * and started again every 0.4 x the stop timeout. Each successor keeps to
 * the journaled SIGKILL deadline, so the worker is killed within the stop
 * timeout (plus a margin) of the restart request, not never. The seat
 * then gets its next generation. */
static void
test_stop_deadline_survives(void **state)
{
	it_ctx          *ctx = *state;
	struct it_report r;
	pid_t            old, pid;
	uint64_t         gen;
	int64_t          t0, end, next;
	int              restarts = 0;

	it_expect_reports(ctx, 1, &r);
	status_of(ctx, 0, &old, &gen, NULL);
	t0 = it_now_ms(); /* before the request: the deadline is later */
	IT_PASS(ctx, sv_client_restart(ctx->client, GROUP, 0, IT_CALL_MS));
	wait_state(ctx, 0, SV_STATE_STOPPING);
	end  = t0 + DL_TIMEOUT_MS + DL_MARGIN_MS;
	next = t0 + DL_EVERY_MS;
	while (alive(old) && it_now_ms() < end) {
		/* Restarts begun before the deadline: each of them would
		 * have put the SIGKILL off. None after it: a restart then
		 * (only when load delayed the kill) would kill a successor
		 * that is about to send it, again and again if a start
		 * under load takes DL_EVERY_MS, and fail the case with
		 * every successor right. */
		if (it_now_ms() >= next && it_now_ms() < t0 + DL_TIMEOUT_MS) {
			assert_int_equal(it_kill9_daemon(ctx), 0);
			assert_int_equal(it_restart(ctx), 0);
			restarts++;
			next += DL_EVERY_MS;
		}
		nng_msleep(10);
	}
	print_message("[takeover] %d daemon restarts while the worker was "
	              "stopping; gone after %lld ms (stop timeout %d ms)\n",
	    restarts, (long long) (it_now_ms() - t0), DL_TIMEOUT_MS);
	if (alive(old)) {
		fail_msg("pid %d ignoring SIGTERM still runs %d ms after its "
		         "restart was asked (stop timeout %d ms, %d "
		         "supervisor restarts)",
		    (int) old, DL_TIMEOUT_MS + DL_MARGIN_MS, DL_TIMEOUT_MS,
		    restarts);
	}
	/* At least one successor took over the stopping worker before its
	 * deadline (under load the second restart may not come before it). */
	assert_true(restarts >= 1);
	it_reap_strays(0);
	it_expect_reports(ctx, 1, &r);
	status_of(ctx, 0, &pid, &gen, NULL);
	assert_true(pid != old);
	assert_int_equal(gen, 1);
	assert_int_equal(it_term_daemon(ctx), 0);
}

static int
setup_one_session(void **state)
{
	static const struct it_group g[]
	    = {{.name = GROUP, .count = 1, .max_count = 1}};

	/* The daemon in a session of its own: the test (the workers' next
	 * parent, a subreaper) is then in another session than they are,
	 * as init is for a service, so a process group the daemon's death
	 * leaves without a parent in its session counts as orphaned. */
	it_daemon_own_session = true;
	return it_setup_groups(state, g, 1);
}

static int
teardown_session(void **state)
{
	it_daemon_own_session = false;
	return it_teardown(state);
}

/* proc_state returns the state letter of pid ('T' stopped, 'Z' zombie),
 * or 0 when it is gone. */
static char
proc_state(pid_t pid)
{
	char st = 0;

	return it_proc_stat(pid, NULL, &st, NULL) == 0 ? st : 0;
}

/* kill -9 of the daemon while its worker is stopped: the worker is not
 * sent SIGHUP + SIGCONT (orphaned process group) and stays stopped; the
 * next daemon adopts it. The kernel sends those signals while the daemon
 * exits, before it can be reaped, so the state read after the reap
 * decides: still 'T', or already woken to die. */
static void
test_stopped_worker_survives_kill9(void **state)
{
	it_ctx          *ctx = *state;
	struct it_report r;
	pid_t            pid, now;
	uint64_t         gen;
	int64_t          end;
	char             st;

	it_expect_reports(ctx, 1, &r);
	status_of(ctx, 0, &pid, &gen, NULL);
	assert_int_equal(pid, (pid_t) r.pid);
	assert_int_equal(kill(pid, SIGSTOP), 0);
	end = it_now_ms() + IT_CONVERGE_MS;
	while (proc_state(pid) != 'T' && it_now_ms() < end) {
		nng_msleep(5);
	}
	assert_int_equal(proc_state(pid), 'T');
	assert_int_equal(it_kill9_daemon(ctx), 0);
	if ((st = proc_state(pid)) != 'T') {
		/* Collect it (we are its subreaper) before failing. */
		it_reap_strays(IT_REAP_MS);
		fail_msg("stopped worker %d did not survive the daemon's "
		         "death (state '%c' after the daemon was reaped)",
		    (int) pid, st != 0 ? st : '-');
	}
	assert_int_equal(it_restart(ctx), 0);
	status_of(ctx, 0, &now, &gen, NULL);
	assert_int_equal(now, pid);
	assert_int_equal(gen, 0);
	assert_int_equal(proc_state(pid), 'T');
	assert_int_equal(kill(pid, SIGCONT), 0);
	it_expect_no_report(ctx, 200);
	assert_int_equal(it_term_daemon(ctx), 0);
	assert_false(alive(pid));
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
	        test_adopt_after_kill9, setup_three, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_kill9_in_backoff, setup_backoff, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_kill9_during_scale_up, setup_scale, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_kill9_stray_in_dead_tree, setup_two, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_kill9_during_shutdown, setup_stubborn, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_die_with_supervisor, setup_die, it_teardown),
	    cmocka_unit_test_setup_teardown(test_released_stay_released,
	        setup_three_stubborn, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_bad_journal_refused, setup_one, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_stop_deadline_survives, setup_deadline, it_teardown),
	    cmocka_unit_test_setup_teardown(test_stopped_worker_survives_kill9,
	        setup_one_session, teardown_session),
	};

	it_args(argc, argv);
	return SV_EXIT(it_finish(cmocka_run_group_tests_name(
	    "integration_takeover", tests, NULL, NULL)));
}
