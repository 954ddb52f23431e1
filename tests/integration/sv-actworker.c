/*
 * sv-actworker.c — a worker for the activity tests (integration_activity.c).
 * It opens the region the supervisor hands it in $SUPERVISE_ACTIVITY.
 *
 *   sv-actworker nest
 *       enter "request", then "db query" (composed "request: db query"),
 *       then start a thread that enters "indexing": two activities, the
 *       oldest "request: db query". Each SIGUSR1 toggles: leave every
 *       scope (idle), or enter them all again.
 *   sv-actworker idle
 *       open the region and enter nothing.
 *   sv-actworker truncate
 *       enter "request", then shrink the region file to 100 bytes (a
 *       hostile or buggy worker): the daemon must not crash reading it.
 *       It touches the region no more.
 *
 * Without $SUPERVISE_ACTIVITY (activity = false) every mode holds without
 * a region, as a binding's scopes are then no-ops. Signals are blocked and
 * taken with sigwaitinfo; SIGTERM ends it (exit 0). Exit status: 2 bad
 * arguments, 3 the region could not be opened or used.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "supervise/activity.h"

static sv_activity_region *aw_region;
static pthread_mutex_t     aw_mtx  = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t      aw_cond = PTHREAD_COND_INITIALIZER;
static int                 aw_busy; /* the thread should be in "indexing" */
static int                 aw_in; /* the thread is in "indexing" */

/* aw_check exits 3 when a region call failed. */
static void
aw_check(sv_err err, const char *what)
{
	if (err != SV_OK) {
		fprintf(
		    stderr, "sv-actworker: %s: %s\n", what, sv_strerror(err));
		exit(3);
	}
}

/* aw_thread follows aw_busy: in "indexing" while it is set. */
static void *
aw_thread(void *arg)
{
	(void) arg;
	pthread_mutex_lock(&aw_mtx);
	for (;;) {
		while (aw_busy == aw_in) {
			pthread_cond_wait(&aw_cond, &aw_mtx);
		}
		if (aw_busy) {
			aw_check(
			    sv_activity_enter(aw_region, "indexing"), "enter");
		} else {
			aw_check(sv_activity_leave(aw_region), "leave");
		}
		aw_in = aw_busy;
		pthread_cond_broadcast(&aw_cond);
	}
	return NULL;
}

/* aw_set_thread makes the thread enter or leave and waits until it has. */
static void
aw_set_thread(int busy)
{
	pthread_mutex_lock(&aw_mtx);
	aw_busy = busy;
	pthread_cond_broadcast(&aw_cond);
	while (aw_in != busy) {
		pthread_cond_wait(&aw_cond, &aw_mtx);
	}
	pthread_mutex_unlock(&aw_mtx);
}

/* aw_nest_enter enters the main thread's two scopes, then the thread's. */
static void
aw_nest_enter(void)
{
	aw_check(sv_activity_enter(aw_region, "request"), "enter");
	aw_check(sv_activity_enter(aw_region, "db query"), "enter");
	aw_set_thread(1);
}

/* aw_nest_leave leaves every scope. */
static void
aw_nest_leave(void)
{
	aw_set_thread(0);
	aw_check(sv_activity_leave(aw_region), "leave");
	aw_check(sv_activity_leave(aw_region), "leave");
}

int
main(int argc, char **argv)
{
	const char *path = getenv("SUPERVISE_ACTIVITY");
	sigset_t    set;
	siginfo_t   si;
	pthread_t   th;
	int         busy = 0;

	if (argc != 2
	    || (strcmp(argv[1], "nest") != 0 && strcmp(argv[1], "idle") != 0
	        && strcmp(argv[1], "truncate") != 0)) {
		fprintf(stderr, "usage: sv-actworker nest|idle|truncate\n");
		return 2;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (path != NULL && path[0] != '\0') {
		aw_check(sv_activity_region_open(&aw_region, path), "open");
		if (strcmp(argv[1], "nest") == 0) {
			if (pthread_create(&th, NULL, aw_thread, NULL) != 0) {
				return 3;
			}
			aw_nest_enter();
			busy = 1;
		} else if (strcmp(argv[1], "truncate") == 0) {
			int fd = open(path, O_RDWR | O_CLOEXEC);
			aw_check(
			    sv_activity_enter(aw_region, "request"), "enter");
			if (fd < 0 || ftruncate(fd, 100) != 0) {
				return 3;
			}
			close(fd);
		}
	}
	for (;;) {
		if (sigwaitinfo(&set, &si) < 0) {
			continue;
		}
		if (si.si_signo == SIGTERM) {
			return 0;
		}
		if (aw_region != NULL && strcmp(argv[1], "nest") == 0) {
			if (busy) {
				aw_nest_leave();
			} else {
				aw_nest_enter();
			}
			busy = !busy;
		}
	}
}
