/*
 * job_worker.c — the Unix Workers pattern under supervised.
 *
 * N workers of one group pull jobs from a datagram socket that the group
 * owns (config key `sockets`: the supervisor creates it once and hands it
 * to every generation as descriptor 3, named in SUPERVISE_FDS), so jobs
 * nobody has taken yet wait in the kernel for the next worker, whatever
 * happens to the current ones. A job is one datagram: its text is the job
 * id, optionally followed by a space and a number of milliseconds of
 * "work".
 *
 * Each job served is appended to JOURNAL (argv[1]) as one line
 *   served JOB ORDINAL GENERATION PID
 * with one write(2) under an exclusive flock, so lines of concurrent
 * workers never interleave and the journal outlives every process. SIGTERM
 * (what a drain or a restart sends) means "finish what you hold, then
 * exit": the job in hand is completed and journaled, no new one is taken,
 * and the worker ends with a line
 *   exit ORDINAL GENERATION PID SERVED
 * and exit status 0. Every wait is a poll(2) with a deadline; nothing
 * sleeps except the simulated work itself.
 *
 * The SIGTERM handler is installed before anything else, and the worker
 * says READY (an sd_notify datagram to $NOTIFY_SOCKET; the group sets
 * `ready = true`) only once it is in place: until then the supervisor
 * counts the worker as STARTING, so a rolling restart or an operator
 * waiting for "running" never drains a process that would still die of
 * the signal's default action.
 *
 * Usage: sv-job-worker JOURNAL
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* Longest job datagram. */
#define JOB_MAX 256

static volatile sig_atomic_t stopping;

/* on_term asks the loop to finish the job in hand and stop. */
static void
on_term(int sig)
{
	(void) sig;
	stopping = 1;
}

/* jobs_fd finds the descriptor named "jobs" in SUPERVISE_FDS, or -1. */
static int
jobs_fd(void)
{
	const char *v = getenv("SUPERVISE_FDS");
	const char *p;

	if (v == NULL || (p = strstr(v, "jobs=")) == NULL
	    || (p != v && p[-1] != ',')) {
		return -1;
	}
	return atoi(p + 5);
}

/* journal appends one line under an exclusive lock. */
static int
journal(int fd, const char *line)
{
	size_t  len = strlen(line);
	ssize_t n;

	if (flock(fd, LOCK_EX) != 0) {
		return -1;
	}
	n = write(fd, line, len);
	(void) flock(fd, LOCK_UN);
	return n == (ssize_t) len ? 0 : -1;
}

/* work sleeps ms milliseconds: the simulated job. */
static void
work(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (ms > 0 && nanosleep(&ts, &ts) != 0 && errno == EINTR) {
	}
}

/* notify_ready sends READY=1 to $NOTIFY_SOCKET, if there is one. */
static void
notify_ready(void)
{
	const char        *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa   = {.sun_family = AF_UNIX};
	int                fd;

	if (path == NULL || path[0] != '/'
	    || strlen(path) >= sizeof(sa.sun_path)) {
		return;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0) {
		return;
	}
	(void) sendto(
	    fd, "READY=1", 7, 0, (struct sockaddr *) &sa, sizeof(sa));
	close(fd);
}

int
main(int argc, char **argv)
{
	struct sigaction sa;
	const char      *ord = getenv("SUPERVISE_ORDINAL");
	const char      *gen = getenv("SUPERVISE_GENERATION");
	char             job[JOB_MAX + 1], line[JOB_MAX + 128];
	unsigned long    served = 0;
	int              jfd, qfd;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term; /* no SA_RESTART: poll returns EINTR */
	sigaction(SIGTERM, &sa, NULL);
	if (argc != 2) {
		fprintf(stderr, "usage: sv-job-worker JOURNAL\n");
		return 2;
	}
	if ((qfd = jobs_fd()) < 0) {
		fprintf(stderr,
		    "sv-job-worker: no \"jobs\" socket in "
		    "SUPERVISE_FDS (see the group's `sockets`)\n");
		return 2;
	}
	jfd = open(argv[1], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (jfd < 0) {
		fprintf(stderr, "sv-job-worker: %s: %s\n", argv[1],
		    strerror(errno));
		return 2;
	}
	notify_ready();
	while (!stopping) {
		struct pollfd p = {.fd = qfd, .events = POLLIN};
		ssize_t       n;
		char         *sp;
		if (poll(&p, 1, 1000) <= 0) {
			continue; /* timeout, or SIGTERM: the loop checks */
		}
		if (stopping) {
			break; /* take nothing new once told to stop */
		}
		n = recv(qfd, job, JOB_MAX, MSG_DONTWAIT);
		if (n <= 0) {
			continue; /* another worker took it */
		}
		job[n] = '\0';
		if ((sp = strchr(job, ' ')) != NULL) {
			*sp = '\0';
			work(strtol(sp + 1, NULL, 10));
		}
		snprintf(line, sizeof(line), "served %s %s %s %ld\n", job,
		    ord != NULL ? ord : "?", gen != NULL ? gen : "?",
		    (long) getpid());
		if (journal(jfd, line) != 0) {
			fprintf(stderr, "sv-job-worker: journal: %s\n",
			    strerror(errno));
			return 1;
		}
		served++;
	}
	snprintf(line, sizeof(line), "exit %s %s %ld %lu\n",
	    ord != NULL ? ord : "?", gen != NULL ? gen : "?", (long) getpid(),
	    served);
	return journal(jfd, line) == 0 ? 0 : 1;
}
