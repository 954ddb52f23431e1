/*
 * conns_util.h — small helpers shared by integration_conns.c and
 * integration_conns_uid.c (header-only, static functions): waiting for a
 * file one line long that a helper process writes (with a deadline),
 * reading the counts of sv-connflood's flood lines, and running
 * supervisectl with its exit status, its stderr and how long it took.
 */
#ifndef SV_IT_CONNS_UTIL_H
#define SV_IT_CONNS_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#ifndef SV_IT_SUPERVISECTL
#error "SV_IT_SUPERVISECTL must name the supervisectl binary"
#endif
#ifndef SV_IT_CONNFLOOD
#error "SV_IT_CONNFLOOD must name the sv-connflood binary"
#endif

extern char **environ;

/* cn_wait_line waits up to ms for path to exist and reads its first line
 * into buf (polled every 10 ms: the writer is another process that says
 * nothing else; the file appears whole, by rename). 0, or -1 on timeout. */
static int
cn_wait_line(const char *path, int ms, char *buf, size_t size)
{
	int64_t deadline = it_now_ms() + ms;

	for (;;) {
		FILE *f = fopen(path, "r");

		if (f != NULL) {
			char *got = fgets(buf, (int) size, f);

			fclose(f);
			if (got != NULL)
				return 0;
		}
		if (it_now_ms() >= deadline)
			return -1;
		(void) poll(NULL, 0, 10);
	}
}

/* The counts of one flood process's line. */
struct cn_flood {
	long accepted, exhausted, other;
};

/* cn_read_flood waits for OUT.idx and parses it; fails the test if it
 * does not come within ms or does not parse. */
static void
cn_read_flood(const char *out, int idx, int ms, struct cn_flood *fl)
{
	char path[256], line[256];

	snprintf(path, sizeof(path), "%s.%d", out, idx);
	if (cn_wait_line(path, ms, line, sizeof(line)) != 0)
		fail_msg("no flood report %s within %d ms", path, ms);
	if (sscanf(line, "accepted=%ld exhausted=%ld other=%ld", &fl->accepted,
	        &fl->exhausted, &fl->other)
	    != 3)
		fail_msg("bad flood report %s: %s", path, line);
	fprintf(stderr, "[it] flood %d: %s", idx, line);
}

/*
 * cn_ctl_run runs supervisectl with argv (argv[0] is replaced by the
 * program's path), its stderr into errpath, and waits for it (bounded:
 * waitpid after timeout_ms plus 10 s, on a pidfd; then SIGKILL by pid,
 * which fails the test). Returns its exit status; *msp receives how long it
 * ran.
 */
static int
cn_ctl_run(char **argv, int timeout_ms, const char *errpath, int64_t *msp)
{
	posix_spawn_file_actions_t fa;
	pid_t                      pid;
	int                        st = 0;
	int64_t                    t0, deadline;
	struct pollfd              pfd;

	argv[0] = (char *) SV_IT_SUPERVISECTL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(
	    &fa, 2, errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	t0 = it_now_ms();
	if (posix_spawn(&pid, SV_IT_SUPERVISECTL, &fa, NULL, argv, environ)
	    != 0)
		fail_msg("cannot run %s", SV_IT_SUPERVISECTL);
	posix_spawn_file_actions_destroy(&fa);
	deadline   = t0 + timeout_ms + 10000;
	pfd.fd     = (int) syscall(SYS_pidfd_open, pid, 0);
	pfd.events = POLLIN;
	while (pfd.fd >= 0 && it_now_ms() < deadline) {
		if (poll(&pfd, 1, (int) (deadline - it_now_ms())) > 0)
			break; /* exited; 0 or EINTR: the deadline decides */
	}
	if (pfd.fd < 0) {
		(void) waitpid(pid, &st, 0); /* no pidfd: unbounded */
	} else if (waitpid(pid, &st, WNOHANG) != pid) {
		kill(pid, SIGKILL);
		(void) waitpid(pid, &st, 0);
		fail_msg("supervisectl %s still ran after %d ms", argv[1],
		    timeout_ms + 10000);
	}
	if (pfd.fd >= 0)
		close(pfd.fd);
	*msp = it_now_ms() - t0;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* cn_ctl_hello runs `supervisectl -s url -t timeout_ms hello` (see
 * cn_ctl_run). */
static int
cn_ctl_hello(
    const char *url, int timeout_ms, const char *errpath, int64_t *msp)
{
	char  t[16];
	char *argv[] = {NULL, (char *) "-s", (char *) url, (char *) "-t", t,
	    (char *) "hello", NULL};

	snprintf(t, sizeof(t), "%d", timeout_ms);
	return cn_ctl_run(argv, timeout_ms, errpath, msp);
}

/*
 * cn_ctl_startup_ms measures what a supervisectl run costs besides its call
 * on this machine right now: the longest of three `supervisectl --version`
 * runs (program load, sanitizer start-up, exit; no socket). A deadline
 * check adds it, so that a loaded machine or a sanitizer build does not
 * count its process start against -t, which bounds the call.
 */
static inline int64_t
cn_ctl_startup_ms(const char *errpath)
{
	char   *argv[] = {NULL, (char *) "--version", NULL};
	int64_t ms, worst = 0;

	for (int i = 0; i < 3; i++) {
		if (cn_ctl_run(argv, 0, errpath, &ms) != 0)
			fail_msg("supervisectl --version failed");
		if (ms > worst)
			worst = ms;
	}
	return worst;
}

#endif /* SV_IT_CONNS_UTIL_H */
