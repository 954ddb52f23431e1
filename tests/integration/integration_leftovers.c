/*
 * integration_leftovers.c — nothing a worker started outlives it, and a
 * worker may run as another user (issue 6, items 3 and 6).
 *
 * Design: the workers are this test program itself, started by the daemon
 * in a helper mode (argv[1] = "--leaver" or "--as-user") that sets the
 * scene and then execs sv-testworker, so the pid in the worker's report is
 * the pid that set the scene:
 *
 *   --leaver children W   forks a child that stays in the worker's process
 *                         group and one that calls setsid(); both ignore
 *                         SIGTERM and wait forever.
 *   --leaver orphans W    forks a child that forks ORPHANS grandchildren
 *                         (each lives until the test ends it with
 *                         SIGTERM, ORPHAN_MS at most) and exits at once:
 *                         the grandchildren are orphans while the worker
 *                         still runs.
 *   --as-user FILE W      asks whoami and tries an admin request (scale)
 *                         over the control socket, writes both results to
 *                         FILE, then execs W.
 *
 * Cases: a crash (kill -9) of a worker whose children remain; a stop of a
 * worker whose setsid() child would escape a process-group kill (needs
 * per-worker cgroups: skipped with a message where the daemon has none,
 * which the test sees in /proc/PID/cgroup); orphans reparented to the
 * daemon (a child subreaper) and reaped, no zombie left; a group with
 * user = "nobody" (uid, gids, groups in /proc/PID/status, whoami works,
 * admin refused; needs root: skipped otherwise); an unknown user is a
 * config error with file:line:key.
 *
 * Every wait polls /proc or the report socket against a deadline.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "../sv_skip.h"
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nng/protocol/pipeline0/pull.h>
#include "../sv_tmpdir.h"

extern char **environ;

#define ORPHANS   8
#define ORPHAN_MS 60000 /* an orphan's life if the test never ends it */
#define GONE_MS   2000 /* a killed leftover has disappeared */

static char self_exe[PATH_MAX];
static char daemon_exe[PATH_MAX];

/* ---- helper modes (run as the daemon's worker) ---------------------------
 */

/* helper_wait_forever ignores SIGTERM and sleeps until killed. */
static void
helper_wait_forever(void)
{
	signal(SIGTERM, SIG_IGN);
	for (;;) {
		pause();
	}
}

/* helper_exec becomes sv-testworker. */
static void
helper_exec(const char *worker)
{
	char *argv[] = {(char *) worker, NULL};

	execv(worker, argv);
	perror("execv sv-testworker");
	_exit(126);
}

/* helper_leaver: "children" or "orphans" (see the design comment). */
static void
helper_leaver(const char *kind, const char *worker)
{
	pid_t pid;

	if (strcmp(kind, "children") == 0) {
		if (fork() == 0) {
			helper_wait_forever();
		}
		if (fork() == 0) {
			if (setsid() < 0) {
				_exit(1);
			}
			helper_wait_forever();
		}
	} else {
		if ((pid = fork()) == 0) {
			for (int i = 0; i < ORPHANS; i++) {
				if (fork() == 0) {
					it_pause_ms(ORPHAN_MS);
					_exit(0);
				}
			}
			_exit(0);
		}
		(void) waitpid(pid, NULL, 0);
	}
	helper_exec(worker);
}

/* helper_as_user records whoami's and an admin request's results. */
static void
helper_as_user(const char *file, const char *worker)
{
	sv_client   *c  = NULL;
	sv_identity *id = NULL;
	sv_err       e1, e2 = SV_ECONNECT;
	FILE        *f;

	e1 = sv_client_open(&c, NULL, 5000);
	if (e1 == SV_OK) {
		e1 = sv_client_whoami(c, 5000, &id);
		sv_identity_free(id);
		e2 = sv_client_scale(c, "w", 3, 5000, NULL);
	}
	if ((f = fopen(file, "w")) != NULL) {
		fprintf(f, "whoami=%s scale=%s msg=%s\n", sv_err_name(e1),
		    sv_err_name(e2),
		    c != NULL ? sv_client_error_message(c)
		              : sv_client_error_message(NULL));
		fclose(f);
	}
	sv_client_close(c);
	helper_exec(worker);
}

/* ---- /proc ---------------------------------------------------------------
 */

/* A process found at some time: pid plus start time, so a reused pid is
 * not mistaken for it. */
struct leftover {
	pid_t              pid;
	unsigned long long start;
	pid_t              sid;
};

/* proc_sid reads the session id (field 6) of pid, or -1. */
static pid_t
proc_sid(pid_t pid)
{
	char    path[64], buf[1024], *p;
	int     fd;
	long    sid = -1;
	char    st;
	long    ppid, pgrp;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long) pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL
	    || sscanf(p + 1, " %c %ld %ld %ld", &st, &ppid, &pgrp, &sid) != 4)
		return -1;
	return (pid_t) sid;
}

/* alive tells whether the process l still runs (a zombie does not). */
static bool
alive(const struct leftover *l)
{
	unsigned long long start = 0;
	char               st    = 0;

	return it_proc_stat(l->pid, NULL, &st, &start) == 0
	    && start == l->start && st != 'Z';
}

/* gone_within polls until none of l[0..n-1] runs or ms pass; returns the
 * number still running. */
static int
gone_within(const struct leftover *l, size_t n, int ms)
{
	int64_t deadline = it_now_ms() + ms;
	int     left;

	for (;;) {
		left = 0;
		for (size_t i = 0; i < n; i++)
			left += alive(&l[i]) ? 1 : 0;
		if (left == 0 || it_now_ms() >= deadline)
			return left;
		poll(NULL, 0, 5); /* /proc has no notification */
	}
}

/* children_of waits (up to IT_REPORT_MS) for want live children of pid and
 * records them. */
static void
children_of(pid_t pid, struct leftover *out, size_t want)
{
	int64_t        deadline = it_now_ms() + IT_REPORT_MS;
	struct it_proc kids[IT_MAX_PROCS];
	size_t         n = 0;

	for (;;) {
		n = it_children(pid, kids, IT_MAX_PROCS);
		if (n >= want || it_now_ms() >= deadline)
			break;
		poll(NULL, 0, 5);
	}
	assert_int_equal(n, want);
	for (size_t i = 0; i < want; i++) {
		out[i].pid = kids[i].pid;
		assert_int_equal(
		    it_proc_stat(kids[i].pid, NULL, NULL, &out[i].start), 0);
		out[i].sid = proc_sid(kids[i].pid);
	}
}

/* in_worker_cgroup tells whether pid sits in a per-worker cgroup of the
 * daemon (".../supervised.DAEMONPID/LEAF"). */
static bool
in_worker_cgroup(pid_t pid, pid_t daemon)
{
	char  path[64], line[512], want[64];
	FILE *f;
	bool  yes = false;

	snprintf(path, sizeof(path), "/proc/%ld/cgroup", (long) pid);
	snprintf(want, sizeof(want), "/supervised.%ld/", (long) daemon);
	if ((f = fopen(path, "re")) == NULL)
		return false;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "0::", 3) == 0 && strstr(line, want) != NULL)
			yes = true;
	fclose(f);
	return yes;
}

/* ---- cases with the standard fixture -------------------------------------
 */

static const char *const leaver_children[]
    = {"--leaver", "children", NULL, NULL};
static const char *const leaver_orphans[]
    = {"--leaver", "orphans", NULL, NULL};

/* cmocka setup: group "c" of one worker leaving two children. */
static int
setup_children(void **state)
{
	static const char *args[4];
	struct it_group    g = {.name = "c", .count = 1};

	memcpy(args, leaver_children, sizeof(args));
	args[2]   = it_worker_program();
	g.program = self_exe;
	g.args    = args;
	return it_setup_groups(state, &g, 1);
}

/* cmocka setup: group "o" of one worker leaving orphans. */
static int
setup_orphans(void **state)
{
	static const char *args[4];
	struct it_group    g = {.name = "o", .count = 1};

	memcpy(args, leaver_orphans, sizeof(args));
	args[2]   = it_worker_program();
	g.program = self_exe;
	g.args    = args;
	return it_setup_groups(state, &g, 1);
}

/* sid_split checks that l[0..1] are one child in the worker's session and
 * one in its own (setsid), and returns the index of the setsid one. */
static size_t
sid_split(const struct leftover *l, pid_t worker)
{
	pid_t wsid = proc_sid(worker);
	int   own  = l[0].sid == l[0].pid ? 0 : 1;

	assert_int_equal(l[own].sid, l[own].pid);
	assert_int_equal(l[1 - own].sid, wsid);
	return (size_t) own;
}

/* A crash (kill -9) of the worker: both of its children are gone once the
 * replacement runs; the setsid() one needs cgroups. */
static void
test_crash_kills_children(void **state)
{
	it_ctx          *ctx = *state;
	struct it_report r;
	struct leftover  kids[2];
	size_t           own;
	bool             cg;

	it_expect_reports(ctx, 1, &r);
	children_of((pid_t) r.pid, kids, 2);
	own = sid_split(kids, (pid_t) r.pid);
	cg  = in_worker_cgroup((pid_t) r.pid, ctx->daemon);
	assert_int_equal(kill((pid_t) r.pid, SIGKILL), 0);
	it_expect_reports(ctx, 1, &r);
	assert_int_equal(r.generation, 1);
	/* Killed before the replacement was spawned: gone by now, or a
	 * moment later (SIGKILL takes effect asynchronously). */
	assert_int_equal(gone_within(&kids[1 - own], 1, GONE_MS), 0);
	if (cg) {
		assert_int_equal(gone_within(&kids[own], 1, GONE_MS), 0);
	} else {
		fprintf(stderr,
		    "[it] no per-worker cgroup: the setsid() child %ld "
		    "escapes a crash (documented); not checked\n",
		    (long) kids[own].pid);
	}
	/* The killed children were reparented to the daemon and reaped. */
	assert_int_equal(it_wait_no_zombie(ctx->daemon, IT_REAP_MS), 0);
}

/* A stop: the setsid() child, which a process-group kill misses, goes
 * with its worker's cgroup. */
static void
test_stop_kills_setsid_child(void **state)
{
	it_ctx          *ctx = *state;
	struct it_report r;
	struct leftover  kids[2], w;
	size_t           own;

	it_expect_reports(ctx, 1, &r);
	children_of((pid_t) r.pid, kids, 2);
	own = sid_split(kids, (pid_t) r.pid);
	if (!in_worker_cgroup((pid_t) r.pid, ctx->daemon)) {
		SV_SKIP("no per-worker cgroup v2 here (see the daemon's "
		        "log): a setsid() child escapes a stop without one");
	}
	w.pid = (pid_t) r.pid;
	assert_int_equal(it_proc_stat(w.pid, NULL, NULL, &w.start), 0);
	IT_PASS(ctx, sv_client_stop(ctx->client, "c", IT_CALL_MS, NULL));
	assert_int_equal(
	    gone_within(&w, 1, ctx->stop_timeout_ms + IT_REAP_MS), 0);
	assert_int_equal(gone_within(kids, 2, GONE_MS), 0);
	(void) own;
	assert_int_equal(it_wait_no_zombie(ctx->daemon, IT_REAP_MS), 0);
	/* And scaling up again starts a fresh worker with fresh children. */
	IT_PASS(ctx, sv_client_scale(ctx->client, "c", 1, IT_CALL_MS, NULL));
	it_expect_reports(ctx, 1, &r);
	children_of((pid_t) r.pid, kids, 2);
}

/* Orphans come back to the daemon (a child subreaper) and are reaped. */
static void
test_orphans_reaped(void **state)
{
	it_ctx          *ctx = *state;
	struct it_report r;
	struct it_proc   kids[IT_MAX_PROCS];
	int64_t          deadline;
	size_t           n = 0, seen = 0;

	it_expect_reports(ctx, 1, &r);
	/* The grandchildren of the worker, orphaned, are the daemon's. They
	 * live until ended below (a fixed lifetime could run out while a
	 * loaded machine starts the worker and delivers its report). */
	deadline = it_now_ms() + IT_CONVERGE_MS;
	while (seen < ORPHANS && it_now_ms() < deadline) {
		n    = it_children(ctx->daemon, kids, IT_MAX_PROCS);
		seen = 0;
		for (size_t i = 0; i < n; i++)
			seen += kids[i].pid != (pid_t) r.pid ? 1 : 0;
		if (seen < ORPHANS)
			poll(NULL, 0, 5);
	}
	assert_int_equal(seen, ORPHANS);
	/* They end: no zombie may stay, and the worker (reaped by its pidfd,
	 * not by the orphan reaper) is untouched. */
	for (size_t i = 0; i < n; i++)
		if (kids[i].pid != (pid_t) r.pid)
			assert_int_equal(kill(kids[i].pid, SIGTERM), 0);
	deadline = it_now_ms() + IT_CONVERGE_MS;
	for (;;) {
		n = it_children(ctx->daemon, kids, IT_MAX_PROCS);
		if ((n == 1 && kids[0].pid == (pid_t) r.pid
		        && kids[0].state != 'Z')
		    || it_now_ms() >= deadline)
			break;
		poll(NULL, 0, 5);
	}
	for (size_t i = 0; i < n; i++)
		if (kids[i].pid != (pid_t) r.pid)
			fprintf(stderr,
			    "[it] child %ld of the daemon, state %c\n",
			    (long) kids[i].pid, kids[i].state);
	assert_int_equal(n, 1);
	assert_int_equal(kids[0].pid, (pid_t) r.pid);
	assert_int_equal(it_wait_children_match(ctx, IT_CONVERGE_MS), 0);
	/* The worker's own exit is still seen with its status. */
	assert_int_equal(kill((pid_t) r.pid, SIGKILL), 0);
	it_expect_reports(ctx, 1, &r);
	assert_int_equal(r.generation, 1);
}

/* ---- running as another user ---------------------------------------------
 */

/* run_capture runs argv, waits up to ms, returns its wait status (-1 on
 * timeout) and its stderr in err. */
static int
run_capture(char *const argv[], char *err, size_t errlen, int ms)
{
	posix_spawn_file_actions_t fa;
	int                        p[2], st = -1, pfd;
	pid_t                      pid;
	ssize_t                    n;
	size_t                     len      = 0;
	int64_t                    deadline = it_now_ms() + ms;

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 2);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	assert_int_equal(
	    posix_spawn(&pid, argv[0], &fa, NULL, argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	pfd = (int) syscall(SYS_pidfd_open, pid, 0);
	assert_true(pfd >= 0);
	for (;;) {
		struct pollfd q    = {.fd = p[0], .events = POLLIN};
		int64_t       left = deadline - it_now_ms();
		if (left <= 0 || poll(&q, 1, (int) left) <= 0)
			break;
		n = read(p[0], err + len, errlen - 1 - len);
		if (n <= 0)
			break;
		len += (size_t) n;
	}
	err[len] = '\0';
	close(p[0]);
	{
		struct pollfd q    = {.fd = pfd, .events = POLLIN};
		int64_t       left = deadline - it_now_ms();
		if (poll(&q, 1, left > 0 ? (int) left : 0) == 1)
			(void) waitpid(pid, &st, 0);
		else {
			kill(pid, SIGKILL);
			(void) waitpid(pid, NULL, 0);
			st = -1;
		}
	}
	close(pfd);
	return st;
}

/* An unknown user is a config error naming file, line and key. */
static void
test_unknown_user(void **state)
{
	char  dir[64], conf[96], err[2048], want[128];
	char *argv[] = {daemon_exe, "--check", "--config", conf, NULL};
	FILE *f;
	int   st;

	(void) state;
	assert_int_equal(sv_tmpdir(dir, sizeof(dir), "sv-lo"), 0);
	snprintf(conf, sizeof(conf), "%s/supervised.conf", dir);
	assert_non_null(f = fopen(conf, "w"));
	fprintf(f,
	    "socket_dir = \"%s/s\";\n"
	    "groups = (\n"
	    "  { name = \"w\"; argv = [\"/bin/true\"]; count = 1;\n"
	    "    purpose = \"p\";\n"
	    "    user = \"sv-no-such-user\"; }\n"
	    ");\n",
	    dir);
	fclose(f);
	st = run_capture(argv, err, sizeof(err), IT_CALL_MS);
	unlink(conf);
	rmdir(dir);
	snprintf(
	    want, sizeof(want), "%s:5: groups[0].user: unknown user", conf);
	if (strstr(err, want) == NULL)
		fail_msg("stderr \"%s\" lacks \"%s\"", err, want);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 2);
}

/* status_field returns the value of "Name:" in /proc/PID/status, tabs and
 * spaces collapsed to single spaces. */
static void
status_field(pid_t pid, const char *name, char *out, size_t len)
{
	char  path[64], line[512];
	FILE *f;

	out[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%ld/status", (long) pid);
	assert_non_null(f = fopen(path, "re"));
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, name, strlen(name)) == 0
		    && line[strlen(name)] == ':') {
			size_t o = 0;
			for (char *p = line + strlen(name) + 1;
			     *p != '\0' && *p != '\n' && o + 1 < len; p++) {
				if (*p == '\t' || *p == ' ') {
					if (o > 0 && out[o - 1] != ' ')
						out[o++] = ' ';
				} else {
					out[o++] = *p;
				}
			}
			while (o > 0 && out[o - 1] == ' ')
				o--;
			out[o] = '\0';
		}
	}
	fclose(f);
}

/* read_file reads up to len - 1 bytes of path; "" when missing. */
static void
read_file(const char *path, char *buf, size_t len)
{
	int     fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n  = fd >= 0 ? read(fd, buf, len - 1) : -1;

	buf[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
}

/* mode_of returns the permission bits of path, or -1. */
static int
mode_of(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 ? (int) (st.st_mode & 07777) : -1;
}

/* The fixture of the user = "nobody" case: the standard one's directory
 * is private (0700, not the daemon's to change), so this one builds its
 * own: a searchable base directory, a socket_dir the daemon creates
 * (0711), a report socket anyone may dial, a directory nobody may write
 * its findings to. */
struct nobody_fx {
	it_ctx        ctx; /* first: it_teardown frees this block */
	struct passwd pw;
	char          pwbuf[1024];
	char          sdir[72], outdir[80], out[128];
};

/* setup_nobody starts a daemon with group "w" (user = "nobody") of one
 * worker running this program in --as-user mode. */
static int
setup_nobody(void **state)
{
	struct nobody_fx *fx;
	it_ctx           *ctx;
	struct passwd    *pw = NULL;
	nng_listener      l;
	char              groups[3 * PATH_MAX];
	int64_t           deadline;

	if (geteuid() != 0) {
		fprintf(stderr, "[it] SKIP: needs root\n");
		*state = NULL;
		return 0;
	}
	assert_non_null(fx = calloc(1, sizeof(*fx)));
	*state = fx;
	ctx    = &fx->ctx;
	if (getpwnam_r("nobody", &fx->pw, fx->pwbuf, sizeof(fx->pwbuf), &pw)
	        != 0
	    || pw == NULL) {
		fprintf(stderr, "[it] SKIP: no user nobody\n");
		free(fx);
		*state = NULL;
		return 0;
	}
	if (!it_runnable_by_others(self_exe)
	    || !it_runnable_by_others(it_worker_program())) {
		fprintf(stderr,
		    "[it] SKIP: %s or %s cannot be run by other users (a "
		    "directory on the way is closed to them, such as a home "
		    "directory of mode 0700): build in a place nobody can "
		    "reach to run this case\n",
		    self_exe, it_worker_program());
		free(fx);
		*state = NULL;
		return 0;
	}
	ctx->stop_timeout_ms = 2000;
	if (it_asuser_dirs(ctx, "sv-lo", fx->pw.pw_uid, fx->pw.pw_gid,
	        fx->sdir, sizeof(fx->sdir), fx->outdir, sizeof(fx->outdir))
	    != 0)
		return -1;
	snprintf(fx->out, sizeof(fx->out), "%s/admin.txt", fx->outdir);
	snprintf(ctx->report_url, sizeof(ctx->report_url),
	    "ipc://%s/report.sock", ctx->dir);
	if (nng_pull0_open(&ctx->pull) != 0)
		return -1;
	ctx->pull_open = true;
	if (nng_listener_create(&l, ctx->pull, ctx->report_url) != 0
	    || nng_listener_set_int(l, NNG_OPT_IPC_PERMISSIONS, 0666) != 0
	    || nng_listener_start(l, 0) != 0)
		return -1;
	snprintf(groups, sizeof(groups),
	    "  { name = \"w\"; count = 1; purpose = \"as nobody\";\n"
	    "    argv = [\"%s\", \"--as-user\", \"%s\", \"%s\"];\n"
	    "    env = [\"SV_TEST_REPORT_URL=%s\"];\n"
	    "    user = \"nobody\"; min_uptime_ms = 0; }\n",
	    self_exe, fx->out, it_worker_program(), ctx->report_url);
	if (it_asuser_spawn(ctx, daemon_exe, fx->sdir, groups) != 0)
		return -1;
	deadline = it_now_ms() + IT_START_MS;
	while (sv_client_open(&ctx->client, ctx->url, 200) != SV_OK) {
		if (!it_daemon_alive(ctx) || it_now_ms() >= deadline) {
			fprintf(stderr, "[it] the daemon did not come up\n");
			return -1;
		}
	}
	return 0;
}

/* teardown_nobody removes what the standard teardown does not know. */
static int
teardown_nobody(void **state)
{
	struct nobody_fx *fx = *state;

	if (fx == NULL)
		return 0;
	unlink(fx->out);
	rmdir(fx->outdir);
	return it_teardown(state);
}

/* A group with user = "nobody": its worker runs as nobody with nobody's
 * groups, reaches the supervisor (whoami), and may not administer it. */
static void
test_user_nobody(void **state)
{
	struct nobody_fx *fx = *state;
	it_ctx           *ctx;
	struct it_report  r;
	char              buf[512], want[512], path[160];
	gid_t             groups[64];
	int               ng = 64;
	uint32_t          ords[4];

	if (fx == NULL)
		SV_SKIP("the worker-as-nobody fixture did not start");
	ctx = &fx->ctx;
	assert_int_equal(it_recv_report(ctx, IT_REPORT_MS, &r), 0);
	if (r.rc != SV_OK)
		fail_msg("worker as nobody: whoami failed: %s", r.raw);
	assert_int_equal(r.ordinal, 0);
	assert_string_equal(r.group, "w");

	/* Its credentials, as the kernel has them. */
	status_field((pid_t) r.pid, "Uid", buf, sizeof(buf));
	snprintf(want, sizeof(want), "%u %u %u %u", (unsigned) fx->pw.pw_uid,
	    (unsigned) fx->pw.pw_uid, (unsigned) fx->pw.pw_uid,
	    (unsigned) fx->pw.pw_uid);
	assert_string_equal(buf, want);
	status_field((pid_t) r.pid, "Gid", buf, sizeof(buf));
	snprintf(want, sizeof(want), "%u %u %u %u", (unsigned) fx->pw.pw_gid,
	    (unsigned) fx->pw.pw_gid, (unsigned) fx->pw.pw_gid,
	    (unsigned) fx->pw.pw_gid);
	assert_string_equal(buf, want);
	assert_true(
	    getgrouplist(fx->pw.pw_name, fx->pw.pw_gid, groups, &ng) >= 0);
	want[0] = '\0';
	for (int i = 0; i < ng; i++) {
		size_t o = strlen(want);
		snprintf(want + o, sizeof(want) - o, "%s%u", i > 0 ? " " : "",
		    (unsigned) groups[i]);
	}
	status_field((pid_t) r.pid, "Groups", buf, sizeof(buf));
	assert_string_equal(buf, want);

	/* Whoami worked (before exec, and sv-testworker's own report); the
	 * admin request was refused because of the caller's uid. */
	read_file(fx->out, buf, sizeof(buf));
	if (strncmp(buf, "whoami=OK scale=EPERM ", 22) != 0
	    || strstr(buf, "uid ") == NULL
	    || strstr(buf, "may not administer") == NULL)
		fail_msg("as nobody: %s", buf);
	assert_int_equal(it_list(ctx, "w", ords, NULL, 4), 1);

	/* The sockets: control and notify open to all, events private,
	 * the directory searchable only. */
	assert_int_equal(mode_of(fx->sdir), 0711);
	assert_int_equal(mode_of(ctx->sock_path), 0666);
	snprintf(path, sizeof(path), "%s/notify.sock", fx->sdir);
	assert_int_equal(mode_of(path), 0666);
	snprintf(path, sizeof(path), "%s/events.sock", fx->sdir);
	assert_int_equal(mode_of(path), 0600);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
	        test_crash_kills_children, setup_children, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_stop_kills_setsid_child, setup_children, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_orphans_reaped, setup_orphans, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_user_nobody, setup_nobody, teardown_nobody),
	    cmocka_unit_test(test_unknown_user),
	};
	ssize_t n;

	if (argc == 4 && strcmp(argv[1], "--leaver") == 0)
		helper_leaver(argv[2], argv[3]);
	if (argc == 4 && strcmp(argv[1], "--as-user") == 0)
		helper_as_user(argv[2], argv[3]);
	it_args(argc, argv);
	n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	assert_true(n > 0);
	self_exe[n] = '\0';
	if (realpath(argv[1], daemon_exe) == NULL) {
		perror(argv[1]);
		return 2;
	}
	return SV_EXIT(it_finish(
	    cmocka_run_group_tests_name("leftovers", tests, NULL, NULL)));
}
