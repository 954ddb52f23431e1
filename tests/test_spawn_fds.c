/*
 * test_spawn_fds.c — the descriptor table a worker starts with
 * (libsupervise/src/shell/spawn.c, the clone path).
 *
 * The clone child starts on the daemon's own table (CLONE_FILES) and makes
 * one of its own holding only the descriptors below the highest one it
 * needs, before it moves any (close_range with CLOSE_RANGE_UNSHARE), so a
 * spawn does not copy and then close one descriptor per running worker.
 * The cases, each on the clone path (die_with_parent forces it, so no
 * cgroup is needed), with the program /bin/sleep under LC_ALL=C (it opens
 * nothing of its own), its table read from /proc/PID/fd once sv_spawn has
 * returned (the child has exec'd by then):
 *   - a passed descriptor at a high number arrives at 3, stdin is
 *     /dev/null, and a descriptor the parent holds above the passed one
 *     without close-on-exec is not inherited (with a copy of the whole
 *     table, as before, it was);
 *   - the parent's table is what it was: the child's dup2 onto 0 and 3
 *     and its open of /dev/null happened in its own table, not in the
 *     shared one;
 *   - many spawns in a row, with 2,000 descriptors open in the parent,
 *     each give the same small table.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <linux/close_range.h>

#include "shell/spawn.h"

/* Where the test puts the descriptor it passes, and the one it leaks. */
#define PASS_FD 700
#define LEAK_FD 900
/* Descriptors held open by the parent in the many-spawns case. */
#define MANY_FDS 2000
/* Spawns in the many-spawns case. */
#define MANY_SPAWNS 20

/* child_fds returns a bit mask of the descriptors 0..63 open in pid and
 * sets *above to how many higher ones it has. */
static uint64_t
child_fds(pid_t pid, int *above)
{
	char           path[64];
	DIR           *d;
	struct dirent *e;
	uint64_t       mask = 0;

	*above = 0;
	snprintf(path, sizeof(path), "/proc/%d/fd", (int) pid);
	d = opendir(path);
	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		char *end;
		long  fd = strtol(e->d_name, &end, 10);
		if (e->d_name[0] == '.' || *end != '\0') {
			continue;
		}
		if (fd < 64) {
			mask |= 1ull << fd;
		} else {
			(*above)++;
		}
	}
	closedir(d);
	return mask;
}

/* child_fds_settled returns child_fds of pid once it equals want with
 * nothing above 63, or its last reading after a 5 s deadline: the child
 * may still be in the dynamic loader, which holds a library open for a
 * moment, when sv_spawn returns (the parent resumes at the exec). */
static uint64_t
child_fds_settled(pid_t pid, uint64_t want, int *above)
{
	struct timespec ts = {0, 1000000};
	uint64_t        m  = child_fds(pid, above);

	for (int i = 0; i < 5000 && (m != want || *above != 0); i++) {
		nanosleep(&ts, NULL);
		m = child_fds(pid, above);
	}
	return m;
}

/* child_fd_is tells whether descriptor fd of pid is the file st names. */
static bool
child_fd_is(pid_t pid, int fd, const struct stat *st)
{
	char        path[64];
	struct stat cs;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int) pid, fd);
	return stat(path, &cs) == 0 && cs.st_dev == st->st_dev
	    && cs.st_ino == st->st_ino;
}

/* spawn_sleep starts /bin/sleep on the clone path, passing pass (or
 * none when pass < 0). Returns the pid; *pidfdp gets its pidfd. */
static pid_t
spawn_sleep(int pass, int *pidfdp)
{
	static char *const argv[] = {"/bin/sleep", "30", NULL};
	static char *const envp[] = {"LC_ALL=C", NULL};
	int                fds[1] = {pass};
	sv_spawn_req       req;
	pid_t              pid = -1;
	int                eno = 0;

	memset(&req, 0, sizeof(req));
	req.path            = "/bin/sleep";
	req.argv            = argv;
	req.envp            = envp;
	req.cgroup_fd       = -1;
	req.die_with_parent = true;
	req.pass_fds        = pass >= 0 ? fds : NULL;
	req.npass_fds       = pass >= 0 ? 1 : 0;
	assert_int_equal(sv_spawn(&req, &pid, pidfdp, &eno), SV_OK);
	return pid;
}

/* end_child kills and reaps the child behind pidfd. */
static void
end_child(int pidfd)
{
	sv_exit_info xi;
	sv_err       rc;

	assert_int_equal(sv_signal(pidfd, SIGKILL), SV_OK);
	/* SIGKILL cannot be caught: the wait is short; bounded anyway. */
	for (int i = 0; i < 5000; i++) {
		struct timespec ts = {0, 1000000};
		if ((rc = sv_reap(pidfd, &xi)) != SV_EBUSY) {
			break;
		}
		nanosleep(&ts, NULL);
	}
	assert_int_equal(rc, SV_OK);
	close(pidfd);
}

/* fd_stat fstats fd, failing the test if it is not open. */
static struct stat
fd_stat(int fd)
{
	struct stat st;

	assert_int_equal(fstat(fd, &st), 0);
	return st;
}

/* The child's table: 0 (/dev/null), 1, 2 and the passed descriptor at 3;
 * not the parent's descriptor above it without close-on-exec. The
 * parent's 0 and 3 are untouched. */
static void
test_child_table(void **state)
{
	struct stat null_st, pass_st, p0_before, p3_before, p0, p3;
	int         pipefd[2], pidfd, above;
	uint64_t    mask;
	pid_t       pid;

	(void) state;
	/* As the daemon does at start: what the runner left open is not
	 * for the child. */
	assert_int_equal(
	    syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC), 0);
	assert_int_equal(stat("/dev/null", &null_st), 0);
	assert_int_equal(pipe2(pipefd, O_CLOEXEC), 0);
	assert_int_equal(dup3(pipefd[0], PASS_FD, O_CLOEXEC), PASS_FD);
	/* Not close-on-exec, above the passed one. */
	assert_int_equal(dup2(pipefd[1], LEAK_FD), LEAK_FD);
	pass_st = fd_stat(PASS_FD);
	/* The parent's own 0 and 3 (3 is the pipe's read end here, or
	 * whatever the runner left there: made sure to exist). */
	if (fcntl(3, F_GETFD) < 0) {
		assert_int_equal(dup3(pipefd[1], 3, O_CLOEXEC), 3);
	}
	p0_before = fd_stat(0);
	p3_before = fd_stat(3);

	pid  = spawn_sleep(PASS_FD, &pidfd);
	mask = child_fds_settled(pid, 0xfull, &above);
	assert_int_equal(above, 0);
	assert_true(mask == 0xfull); /* 0, 1, 2, 3 */
	assert_true(child_fd_is(pid, 0, &null_st));
	assert_true(child_fd_is(pid, 3, &pass_st));
	end_child(pidfd);

	p0 = fd_stat(0);
	p3 = fd_stat(3);
	assert_true(
	    p0.st_ino == p0_before.st_ino && p0.st_dev == p0_before.st_dev);
	assert_true(
	    p3.st_ino == p3_before.st_ino && p3.st_dev == p3_before.st_dev);
	assert_true(fcntl(PASS_FD, F_GETFD) >= 0);
	assert_true(fcntl(LEAK_FD, F_GETFD) >= 0);
	close(LEAK_FD);
	close(PASS_FD);
	close(pipefd[0]);
	close(pipefd[1]);
}

/* MANY_SPAWNS children with MANY_FDS descriptors open in the parent: each
 * has 0, 1, 2 only, and the parent keeps every descriptor. */
static void
test_many_open(void **state)
{
	struct rlimit rl;
	int           fds[MANY_FDS], pidfds[MANY_SPAWNS], above;
	pid_t         pids[MANY_SPAWNS];

	(void) state;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur < MANY_FDS + 200) {
		rl.rlim_cur = rl.rlim_max < MANY_FDS + 200 ? rl.rlim_max
		                                           : MANY_FDS + 200;
		(void) setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur < MANY_FDS + 200) {
		skip();
	}
	for (int i = 0; i < MANY_FDS; i++) {
		fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		assert_true(fds[i] >= 0);
	}
	for (int i = 0; i < MANY_SPAWNS; i++) {
		pids[i]    = spawn_sleep(-1, &pidfds[i]);
		uint64_t m = child_fds_settled(pids[i], 0x7ull, &above);
		if (m != 0x7ull) {
			print_error("child %d fds 0x%llx\n", i,
			    (unsigned long long) m);
		}
		assert_true(m == 0x7ull);
		assert_int_equal(above, 0);
	}
	for (int i = 0; i < MANY_SPAWNS; i++) {
		end_child(pidfds[i]);
	}
	for (int i = 0; i < MANY_FDS; i++) {
		assert_true(fcntl(fds[i], F_GETFD) >= 0);
		close(fds[i]);
	}
}

/* main runs the cases. */
int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_child_table),
	    cmocka_unit_test(test_many_open),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
