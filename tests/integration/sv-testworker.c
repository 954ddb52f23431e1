/*
 * sv-testworker.c — the worker program of the integration tests.
 *
 * Started by supervised as a group member. It asks the supervisor who it is
 * through the public client API (sv_client_open(NULL) = $SUPERVISE_URL,
 * then sv_client_whoami) and reports the answer, with what its environment
 * says, to the test: one nng PUSH message to $SV_TEST_REPORT_URL holding a
 * single text line of key=value pairs,
 *
 *   pid=123 ordinal=1 generation=3 id_pid=123 group=g env_ordinal=1
 *   env_generation=3 env_group=g rc=0 err=OK
 *
 * (one line; ordinal, generation, id_pid and group are -1 or "-" when whoami
 * failed, env_* are -1 or "-" when the variable is unset, rc is the sv_err
 * of the first failing call or 0). Then it waits for SIGTERM or SIGINT and
 * exits 0. With SV_TEST_IGNORE_TERM=1 it ignores SIGTERM, so only SIGKILL
 * (the supervisor's escalation) ends it.
 *
 * Signals are blocked before the first nng call, so nng's threads inherit
 * the mask and the main thread alone takes them with sigwait(). The report
 * socket stays open until the end, so a queued report is never dropped by
 * an early close.
 *
 * Scripted behaviour (issue 5's "scripted test worker"): each knob below is
 * an environment variable, unset by default, so a worker without any of them
 * behaves as described above. Times count from the worker's start (main);
 * every action is scheduled on one sigtimedwait() loop, so a stop signal is
 * always taken at once. Numbers are decimal and bounded (0..86400000 ms,
 * counts 0..1000000); a malformed value is refused with exit status 2.
 *
 *   SV_TEST_EXIT_AFTER_MS=T       exit after T ms ...
 *   SV_TEST_EXIT_CODE=N           ... with status N (0..255, default 0)
 *   SV_TEST_EXIT_BELOW_GEN=G      ... but only while $SUPERVISE_GENERATION
 *                                 is below G (a crash, then replacements
 *                                 that live)
 *   SV_TEST_READY_AFTER_MS=T      send Ready (sv_client_ready) after T ms
 *   SV_TEST_READY_ON_USR1=1       send Ready when SIGUSR1 arrives
 *   SV_TEST_READY_STATUS=text     the status line sent with Ready
 *   SV_TEST_HEARTBEAT_MS=P        send a Heartbeat every P ms (the first
 *                                 P ms after start) ...
 *   SV_TEST_HEARTBEATS=N          ... N times, then stop (default: forever)
 *   SV_TEST_NOTIFY=text           send text as one datagram to
 *                                 $NOTIFY_SOCKET (plain AF_UNIX SOCK_DGRAM
 *                                 sendto; a two-character "\n" in text
 *                                 becomes a newline, as does a real one) ...
 *   SV_TEST_NOTIFY_AFTER_MS=T     ... first after T ms (default 0) ...
 *   SV_TEST_NOTIFY_EVERY_MS=P     ... then again every P ms ...
 *   SV_TEST_NOTIFY_COUNT=N        ... N times in all (default 1; with
 *                                 EVERY unset, only once)
 *   SV_TEST_NOTIFY_ON_USR1=text   send this datagram when SIGUSR1 arrives
 *   SV_TEST_NOTIFY_EXTEND_USEC=U  send "EXTEND_TIMEOUT_USEC=U" before the
 *                                 report (so before any timed action)
 *
 * SIGUSR1 does the ON_USR1 actions (Ready first, then the datagram) each
 * time it arrives; without those knobs it is ignored. Failures of these
 * actions are printed on stderr and end the worker with a status the
 * test sees in the Exited event: 4 (Ready or Heartbeat refused), 5 (the
 * datagram could not be sent).
 *
 * Exit status: 0 after SIGTERM/SIGINT, 2 without $SV_TEST_REPORT_URL or
 * with a malformed knob, 3 when the report could not be delivered, 4 and 5
 * as above, SV_TEST_EXIT_CODE after SV_TEST_EXIT_AFTER_MS.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <dirent.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/pipeline0/push.h>

#include "supervise/client.h"

#define WORKER_CALL_MS 5000
#define KNOB_MAX_MS    86400000LL /* a day */
#define KNOB_MAX_COUNT 1000000LL
#define NOTIFY_MAX     4096 /* the daemon's datagram bound */

/* Returns the environment variable name, or "-" when unset or empty. */
static const char *
env_or_dash(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && v[0] != '\0' ? v : "-";
}

/* Highest descriptor open when main started (the supervisor must pass
 * only 0, 1 and 2). */
static int inherited_fd_max = -1;

/* highest_open_fd scans /proc/self/fd, not counting the scan's own fd. */
static int
highest_open_fd(void)
{
	DIR           *d = opendir("/proc/self/fd");
	struct dirent *e;
	int            max = -1;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		int fd = atoi(e->d_name);
		if (e->d_name[0] != '.' && fd != dirfd(d) && fd > max)
			max = fd;
	}
	closedir(d);
	return max;
}

/* Asks whoami and formats the report line into buf. */
static void
build_report(char *buf, size_t size)
{
	sv_client   *c       = NULL;
	sv_identity *id      = NULL;
	long         ordinal = -1, id_pid = -1;
	long long    generation = -1;
	const char  *group      = "-";
	sv_err       e;

	e = sv_client_open(&c, NULL, WORKER_CALL_MS);
	if (e == SV_OK)
		e = sv_client_whoami(c, WORKER_CALL_MS, &id);
	if (e == SV_OK) {
		/* The one-call form the bindings use must agree with the
		 * accessors, and refuse a caller's struct that is too small.
		 */
		sv_identity_fields f     = {.size = sizeof(f)};
		sv_identity_fields small = {.size = sizeof(small) - 1};
		if (sv_identity_get_fields(id, &f) != SV_OK
		    || sv_identity_get_fields(id, &small) != SV_EINVAL
		    || strcmp(f.group, sv_identity_group(id)) != 0
		    || strcmp(f.purpose, sv_identity_purpose(id)) != 0
		    || strcmp(f.supervisor_id, sv_identity_supervisor_id(id))
		        != 0
		    || f.ordinal != sv_identity_ordinal(id)
		    || f.generation != sv_identity_generation(id)
		    || f.pid != sv_identity_pid(id)
		    || f.kind != (int32_t) sv_identity_kind(id)
		    || f.group_size != sv_identity_group_size(id)
		    || f.frame_count != sv_identity_frame_count(id)
		    || f.draining != (sv_identity_draining(id) != 0)
		    || f.drain_deadline_in_ms
		        != sv_identity_drain_deadline_in_ms(id)) {
			fprintf(stderr,
			    "sv-testworker %ld: sv_identity_get_fields "
			    "disagrees with the accessors\n",
			    (long) getpid());
			e = SV_EPROTO;
		}
	}
	if (e == SV_OK) {
		ordinal    = (long) sv_identity_ordinal(id);
		generation = (long long) sv_identity_generation(id);
		id_pid     = (long) sv_identity_pid(id);
		group      = sv_identity_group(id);
	} else {
		fprintf(stderr, "sv-testworker %ld: %s: %s\n", (long) getpid(),
		    sv_err_name(e),
		    c != NULL ? sv_client_error_message(c) : "open failed");
	}
	snprintf(buf, size,
	    "pid=%ld ordinal=%ld generation=%lld id_pid=%ld group=%s "
	    "env_ordinal=%s env_generation=%s env_group=%s rc=%d err=%s "
	    "fd_max=%d",
	    (long) getpid(), ordinal, generation, id_pid,
	    group[0] != '\0' ? group : "-", env_or_dash("SUPERVISE_ORDINAL"),
	    env_or_dash("SUPERVISE_GENERATION"),
	    env_or_dash("SUPERVISE_GROUP"), (int) e, sv_err_name(e),
	    inherited_fd_max);
	sv_identity_free(id);
	sv_client_close(c);
}

/* One scripted, possibly repeated action: due at next (monotonic ms, -1
 * when not scheduled), again every `every` ms while left != 0 (left < 0:
 * forever). */
struct action {
	long long next;
	long long every;
	long long left;
};

/* now_ms returns CLOCK_MONOTONIC in milliseconds. */
static long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* knob reads the decimal variable name into *out when it is set: returns 1,
 * 0 when unset (or empty), and exits 2 when it is malformed or not within
 * lo..hi. */
static int
knob(const char *name, long long lo, long long hi, long long *out)
{
	const char *v = getenv(name);
	char       *end;
	long long   n;

	if (v == NULL || v[0] == '\0')
		return 0;
	errno = 0;
	n     = strtoll(v, &end, 10);
	if (errno != 0 || *end != '\0' || n < lo || n > hi) {
		fprintf(stderr, "sv-testworker: %s=%s: not in %lld..%lld\n",
		    name, v, lo, hi);
		exit(2);
	}
	*out = n;
	return 1;
}

/* worker_client returns the worker's own client, opened on first use from
 * $SUPERVISE_URL (NULL after printing why, when it cannot be opened). */
static sv_client *
worker_client(sv_client **cp)
{
	sv_err e;

	if (*cp != NULL)
		return *cp;
	e = sv_client_open(cp, NULL, WORKER_CALL_MS);
	if (e != SV_OK) {
		fprintf(stderr, "sv-testworker %ld: open: %s: %s\n",
		    (long) getpid(), sv_err_name(e),
		    sv_client_error_message(NULL));
		*cp = NULL;
	}
	return *cp;
}

/* send_ready sends Ready with $SV_TEST_READY_STATUS; returns 0 or 4. */
static int
send_ready(sv_client **cp)
{
	const char *status = getenv("SV_TEST_READY_STATUS");
	sv_client  *c      = worker_client(cp);
	sv_err      e;

	if (c == NULL)
		return 4;
	e = sv_client_ready(c, status, WORKER_CALL_MS);
	if (e != SV_OK) {
		fprintf(stderr, "sv-testworker %ld: ready: %s: %s\n",
		    (long) getpid(), sv_err_name(e),
		    sv_client_error_message(c));
		return 4;
	}
	return 0;
}

/* send_heartbeat sends one Heartbeat; returns 0 or 4. */
static int
send_heartbeat(sv_client **cp)
{
	sv_client *c = worker_client(cp);
	sv_err     e;

	if (c == NULL)
		return 4;
	e = sv_client_heartbeat(c, WORKER_CALL_MS);
	if (e != SV_OK) {
		fprintf(stderr, "sv-testworker %ld: heartbeat: %s: %s\n",
		    (long) getpid(), sv_err_name(e),
		    sv_client_error_message(c));
		return 4;
	}
	return 0;
}

/* send_notify sends text (with "\n" pairs made newlines) as one datagram
 * to $NOTIFY_SOCKET; returns 0 or 5. A leading '@' names an abstract
 * socket, as in sd_notify(3). */
static int
send_notify(const char *text)
{
	const char        *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa;
	char               buf[NOTIFY_MAX];
	size_t             n = 0, plen;
	socklen_t          salen;
	int                fd;
	ssize_t            rv;

	if (path == NULL || (plen = strlen(path)) == 0
	    || plen >= sizeof(sa.sun_path)) {
		fprintf(stderr, "sv-testworker %ld: NOTIFY_SOCKET %s\n",
		    (long) getpid(), path == NULL ? "unset" : "unusable");
		return 5;
	}
	for (const char *q = text; *q != '\0' && n < sizeof(buf); q++) {
		if (q[0] == '\\' && q[1] == 'n') {
			buf[n++] = '\n';
			q++;
		} else {
			buf[n++] = *q;
		}
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, plen);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	salen = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + plen
	    + (path[0] == '@' ? 0 : 1));
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0) {
		perror("sv-testworker: socket");
		return 5;
	}
	rv = sendto(fd, buf, n, MSG_NOSIGNAL, (struct sockaddr *) &sa, salen);
	if (rv < 0 || (size_t) rv != n) {
		fprintf(stderr, "sv-testworker %ld: sendto %s: %s\n",
		    (long) getpid(), path, strerror(errno));
		close(fd);
		return 5;
	}
	close(fd);
	return 0;
}

/* action_due says whether a is due at now, and schedules its next turn. */
static int
action_due(struct action *a, long long now)
{
	if (a->next < 0 || now < a->next)
		return 0;
	if (a->left > 0)
		a->left--;
	if (a->left == 0 || a->every <= 0)
		a->next = -1;
	else
		a->next += a->every;
	return 1;
}

/* earliest lowers *t to a's due time when a is scheduled earlier. */
static void
earliest(const struct action *a, long long *t)
{
	if (a->next >= 0 && (*t < 0 || a->next < *t))
		*t = a->next;
}

/* Entry point: report, then run the script until a stop signal. */
int
main(void)
{
	/* Before anything opens a descriptor: what did the supervisor pass? */
	inherited_fd_max          = highest_open_fd();
	long long     start       = now_ms();
	const char   *url         = getenv("SV_TEST_REPORT_URL");
	int           ignore_term = getenv("SV_TEST_IGNORE_TERM") != NULL;
	const char   *notify      = getenv("SV_TEST_NOTIFY");
	const char   *notify_usr1 = getenv("SV_TEST_NOTIFY_ON_USR1");
	int           ready_usr1  = getenv("SV_TEST_READY_ON_USR1") != NULL;
	struct action exit_a = {-1, 0, 1}, ready_a = {-1, 0, 1};
	struct action hb_a = {-1, 0, -1}, notify_a = {-1, 0, 1};
	sv_client    *c         = NULL;
	long long     exit_code = 0, v;
	nng_socket    push;
	sigset_t      set;
	char          line[512];
	int           rv, sig, status = 0;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	if (url == NULL || url[0] == '\0') {
		fprintf(stderr, "sv-testworker: SV_TEST_REPORT_URL unset\n");
		return 2;
	}
	/* The script, checked before anything is sent. */
	if (knob("SV_TEST_EXIT_AFTER_MS", 0, KNOB_MAX_MS, &v))
		exit_a.next = start + v;
	if (knob("SV_TEST_EXIT_BELOW_GEN", 0, KNOB_MAX_COUNT, &v)) {
		long long gen = -1;

		if (!knob("SUPERVISE_GENERATION", 0, INT64_MAX, &gen)
		    || gen >= v)
			exit_a.next = -1;
	}
	(void) knob("SV_TEST_EXIT_CODE", 0, 255, &exit_code);
	if (knob("SV_TEST_READY_AFTER_MS", 0, KNOB_MAX_MS, &v))
		ready_a.next = start + v;
	if (knob("SV_TEST_HEARTBEAT_MS", 1, KNOB_MAX_MS, &v)) {
		hb_a.next  = start + v;
		hb_a.every = v;
		if (knob("SV_TEST_HEARTBEATS", 0, KNOB_MAX_COUNT, &v)) {
			hb_a.left = v;
			if (v == 0)
				hb_a.next = -1;
		}
	}
	if (notify != NULL) {
		notify_a.next = start;
		if (knob("SV_TEST_NOTIFY_AFTER_MS", 0, KNOB_MAX_MS, &v))
			notify_a.next = start + v;
		(void) knob("SV_TEST_NOTIFY_EVERY_MS", 1, KNOB_MAX_MS,
		    &notify_a.every);
		if (knob("SV_TEST_NOTIFY_COUNT", 0, KNOB_MAX_COUNT, &v)) {
			notify_a.left = v;
			if (v == 0)
				notify_a.next = -1;
		}
	}
	if (knob("SV_TEST_NOTIFY_EXTEND_USEC", 0, INT64_MAX, &v)) {
		char ext[64];

		snprintf(ext, sizeof(ext), "EXTEND_TIMEOUT_USEC=%lld", v);
		if (send_notify(ext) != 0)
			return 5;
	}

	build_report(line, sizeof(line));
	if ((rv = nng_push0_open(&push)) != 0
	    || (rv = nng_socket_set_ms(
	            push, NNG_OPT_SENDTIMEO, WORKER_CALL_MS))
	        != 0
	    || (rv = nng_dial(push, url, NULL, 0)) != 0
	    || (rv = nng_send(push, line, strlen(line) + 1, 0)) != 0) {
		fprintf(stderr, "sv-testworker %ld: report to %s: %s\n",
		    (long) getpid(), url, nng_strerror(rv));
		return 3;
	}

	for (;;) {
		long long now = now_ms(), due = -1;

		if (action_due(&exit_a, now)) {
			status = (int) exit_code;
			break;
		}
		if (action_due(&ready_a, now)
		    && (status = send_ready(&c)) != 0)
			break;
		if (action_due(&hb_a, now)
		    && (status = send_heartbeat(&c)) != 0)
			break;
		if (action_due(&notify_a, now)
		    && (status = send_notify(notify)) != 0)
			break;
		earliest(&exit_a, &due);
		earliest(&ready_a, &due);
		earliest(&hb_a, &due);
		earliest(&notify_a, &due);
		if (due >= 0) {
			long long       left = due - now_ms();
			struct timespec ts   = {0, 0};

			if (left > 0) {
				ts.tv_sec  = (time_t) (left / 1000);
				ts.tv_nsec = (long) (left % 1000) * 1000000L;
			}
			sig = sigtimedwait(&set, NULL, &ts);
			if (sig < 0)
				continue; /* EAGAIN (due) or EINTR */
		} else if (sigwait(&set, &sig) != 0) {
			continue;
		}
		if (sig == SIGUSR1) {
			if (ready_usr1 && (status = send_ready(&c)) != 0)
				break;
			if (notify_usr1 != NULL
			    && (status = send_notify(notify_usr1)) != 0)
				break;
			continue;
		}
		if (sig == SIGTERM && ignore_term)
			continue;
		break;
	}
	sv_client_close(c);
	nng_close(push);
	nng_fini(); /* a clean exit for LeakSanitizer builds */
	return status;
}
