/*
 * integration_pid1.c — supervised as pid 1 of a container: a private pid
 * namespace with its own /proc (unshare --pid --fork --mount-proc, through
 * sv-pid1.sh), as a container runtime starts its entry point.
 *
 * What must hold there: every orphan is reaped (a worker's children that
 * outlive their parent come to pid 1, whatever it is, and a zombie left
 * there stays forever), SIGTERM stops everything (the kernel drops a
 * signal whose action is the default one at a namespace's init: the daemon
 * blocks and reads them) and the exit status is 0, and a worker that
 * ignores SIGTERM is killed at its stop timeout.
 *
 * Design: the harness starts sv-pid1.sh where it expects the daemon, so
 * ctx->daemon is the unshare process, whose only child is the daemon: its
 * pid in our namespace is found in /proc (and checked to be 1 in its own,
 * NSpid). The test signals that pid, as a runtime's `stop` does. Orphans
 * come from a shell worker that starts 20 `sleep 5` in subshells that exit
 * at once; they are seen as the daemon's children, then gone, with no
 * zombie left (/proc polled with deadlines: nothing notifies a reparent).
 * Needs root (a pid namespace): otherwise, or where none can be made, the
 * test exits 77, skipped, saying why.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define STUBBORN_MS 1500 /* stop timeout of the worker ignoring TERM */
#define ORPHANS     20
#define ORPHAN_WAIT 20000 /* orphans seen, then reaped */

/* The shell worker: ORPHANS subshells that leave a `sleep 5` each. */
static const char *const orphan_args[] = {"-c",
    "i=0; while [ $i -lt 20 ]; do (sleep 5 &); i=$((i+1)); done; "
    "exec sleep 100000",
    NULL};

/* cmocka setup: "orph" (the shell above) and "stubborn" (ignores TERM). */
static int
setup_pid1(void **state)
{
	static const struct it_group g[] = {
	    {.name       = "orph",
	        .count   = 1,
	        .program = "/bin/sh",
	        .args    = orphan_args},
	    {.name               = "stubborn",
	        .count           = 1,
	        .ignore_term     = true,
	        .stop_timeout_ms = STUBBORN_MS},
	};

	return it_setup_groups(state, g, 2);
}

/* daemon_pid finds the daemon: the unshare process's only child. */
static pid_t
daemon_pid(it_ctx *ctx)
{
	struct it_proc kids[IT_MAX_PROCS];
	int64_t        end = it_now_ms() + IT_CONVERGE_MS;

	for (;;) {
		size_t n = it_children(ctx->daemon, kids, IT_MAX_PROCS);
		if (n == 1)
			return kids[0].pid;
		if (it_now_ms() >= end)
			fail_msg("unshare %ld has %zu children, not 1",
			    (long) ctx->daemon, n);
		it_pause_ms(20);
	}
}

/* ns_pid reads the last NSpid of pid (its pid in its own namespace). */
static long
ns_pid(pid_t pid)
{
	char  path[64], line[256];
	FILE *f;
	long  last = -1;

	snprintf(path, sizeof(path), "/proc/%ld/status", (long) pid);
	assert_non_null(f = fopen(path, "r"));
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "NSpid:", 6) == 0) {
			char *p = line + 6, *e;
			for (;;) {
				long v = strtol(p, &e, 10);
				if (e == p)
					break;
				last = v;
				p    = e;
			}
		}
	}
	fclose(f);
	return last;
}

/* Orphans reaped, SIGTERM, the stubborn worker killed at its stop
 * timeout, exit 0, nothing left. */
static void
test_pid1(void **state)
{
	it_ctx            *ctx = *state;
	struct it_report   r[1];
	struct it_proc     kids[IT_MAX_PROCS];
	pid_t              d, wpid[2];
	unsigned long long wstart[2];
	size_t             n, most = 0;
	int64_t            end, t_term, took;

	d = daemon_pid(ctx);
	assert_int_equal(ns_pid(d), 1);
	it_expect_reports(ctx, 1, r); /* the stubborn worker is up */
	/* The orphans come to pid 1... */
	end = it_now_ms() + ORPHAN_WAIT;
	do {
		n    = it_children(d, kids, IT_MAX_PROCS);
		most = n > most ? n : most;
		if (most >= 2 + ORPHANS / 4)
			break;
		it_pause_ms(20);
	} while (it_now_ms() < end);
	printf("pid 1 had %zu children at most (2 workers, %d orphans)\n",
	    most, ORPHANS);
	assert_true(most >= 2 + ORPHANS / 4);
	/* ... and once they die, they are reaped: the two workers alone are
	 * left, no zombie. */
	end = it_now_ms() + ORPHAN_WAIT;
	for (;;) {
		size_t zombies = 0;
		n              = it_children(d, kids, IT_MAX_PROCS);
		for (size_t i = 0; i < n; i++)
			zombies += kids[i].state == 'Z';
		if (n == 2 && zombies == 0)
			break;
		if (it_now_ms() >= end)
			fail_msg("pid 1 still has %zu children (%zu zombies) "
			         "%d ms after its orphans were due to die",
			    n, zombies, ORPHAN_WAIT);
		it_pause_ms(50);
	}
	for (size_t i = 0; i < 2; i++) {
		wpid[i] = kids[i].pid;
		assert_int_equal(
		    it_proc_stat(wpid[i], NULL, NULL, &wstart[i]), 0);
	}
	/* The container's stop: SIGTERM to pid 1. */
	t_term = it_now_ms();
	assert_int_equal(kill(d, SIGTERM), 0);
	if (it_reap_daemon(ctx, STUBBORN_MS + IT_STOP_MARGIN_MS) != 0)
		fail_msg("pid 1 did not exit within %d ms of SIGTERM",
		    STUBBORN_MS + IT_STOP_MARGIN_MS);
	took = it_now_ms() - t_term;
	printf("pid 1 exited %lld ms after SIGTERM, status 0x%x\n",
	    (long long) took, ctx->status);
	/* unshare exits with pid 1's status, or dies of its signal. */
	assert_true(WIFEXITED(ctx->status));
	assert_int_equal(WEXITSTATUS(ctx->status), 0);
	/* The stubborn worker held it until its stop timeout. */
	assert_true(took >= STUBBORN_MS);
	for (size_t i = 0; i < 2; i++) {
		unsigned long long st = 0;
		if (it_proc_stat(wpid[i], NULL, NULL, &st) == 0
		    && st == wstart[i])
			fail_msg("worker %ld outlived pid 1", (long) wpid[i]);
	}
}

/* probe tells whether a private pid namespace with its own /proc can be
 * made here (root, unshare, a / that can take a new /proc mount). */
static bool
probe(void)
{
	if (geteuid() != 0) {
		printf("SKIP: needs root (a private pid namespace)\n");
		return false;
	}
	if (system("unshare --pid --fork --mount-proc true >/dev/null 2>&1")
	    != 0) {
		printf("SKIP: no private pid namespace with its own /proc "
		       "here (unshare --pid --fork --mount-proc fails)\n");
		return false;
	}
	return true;
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
	        test_pid1, setup_pid1, it_teardown),
	};
	char *args[3];

	if (argc < 4) {
		fprintf(stderr,
		    "usage: %s SUPERVISED SV-TESTWORKER SV-PID1.SH\n",
		    argc > 0 ? argv[0] : "integration_pid1");
		return 2;
	}
	if (!probe())
		return 77;
	/* The wrapper stands where the harness expects the daemon. */
	setenv("SV_PID1_EXEC", argv[1], 1);
	args[0] = argv[0];
	args[1] = argv[3];
	args[2] = argv[2];
	it_args(3, args);
	return it_finish(cmocka_run_group_tests_name(
	    "integration_pid1", tests, NULL, NULL));
}
