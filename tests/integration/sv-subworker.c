/*
 * sv-subworker.c — a worker for integration_subworkers: it registers
 * sub-workers (docs/subworkers.md) as a kernel-verified worker and reports
 * what the supervisor answered.
 *
 * Script: three threads named t0, t1, t2 register themselves (each with its
 * kernel tid) on the process's one client; t1 is released and registered
 * again; t0 registers again without a release (a re-claim); then a forked
 * child registers itself (kind PROCESS) on the same client handle (the
 * library reconnects after fork) and asks WhoAmI. The child never touches
 * nng itself: it writes its lines to a pipe and the worker forwards them.
 * Then the worker waits for SIGTERM; the child sleeps until it is killed
 * with its worker's process group.
 *
 * Report: one nng PUSH message to $SV_TEST_REPORT_URL per event, a line of
 * key=value words: pid (the worker's, also in the child's lines), ev (thread,
 * release, rethread, again, child, childwho, done), label, rc (sv_err), ord,
 * gen, kind, nctx, pid2 (the identity's pid), pkind, pord, pgen (the parent
 * frame; -1 when absent), again.
 */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/pipeline0/push.h>

#include <supervise/client.h>

#define SW_THREADS 3
#define SW_CALL_MS 5000

static sv_client   *sw_client;
static sv_identity *sw_ids[SW_THREADS];
static nng_socket   sw_push;

/* sw_line formats what identity id (or the error rc) says into buf. */
static void
sw_line(char *buf, size_t len, long pid, const char *ev, const char *label,
    sv_err rc, const sv_identity *id, int again)
{
	sv_kind  pk = SV_KIND_UNSPECIFIED;
	uint32_t po = 0;
	uint64_t pg = 0;
	bool     hp = false;

	if (id != NULL && sv_identity_parent(id, &pk, &po, NULL) == SV_OK) {
		hp = sv_identity_frame_generation(id, 0, &pg) == SV_OK;
	}
	snprintf(buf, len,
	    "pid=%ld ev=%s label=%s rc=%d ord=%ld gen=%lld kind=%d nctx=%zu "
	    "pid2=%lld pkind=%d pord=%ld pgen=%lld again=%d",
	    pid, ev, label, (int) rc,
	    id != NULL ? (long) sv_identity_ordinal(id) : -1L,
	    id != NULL ? (long long) sv_identity_generation(id) : -1LL,
	    id != NULL ? (int) sv_identity_kind(id) : -1,
	    id != NULL ? sv_identity_frame_count(id) : (size_t) 0,
	    id != NULL ? (long long) sv_identity_pid(id) : -1LL,
	    hp ? (int) pk : -1, hp ? (long) po : -1L,
	    hp ? (long long) pg : -1LL, again);
}

/* sw_report sends one line of the worker itself. */
static void
sw_report(const char *ev, const char *label, sv_err rc, const sv_identity *id,
    int again)
{
	char line[512];

	sw_line(line, sizeof(line), (long) getpid(), ev, label, rc, id, again);
	(void) nng_send(sw_push, line, strlen(line) + 1, 0);
}

/* sw_thread registers the calling thread under its own name. */
static void *
sw_thread(void *arg)
{
	int    i = (int) (intptr_t) arg;
	char   label[16];
	int    again = 0;
	sv_err rc;

	snprintf(label, sizeof(label), "t%d", i);
	(void) pthread_setname_np(pthread_self(), label);
	rc = sv_client_subworker_register(sw_client, SV_KIND_THREAD, label, -1,
	    (int64_t) gettid(), SW_CALL_MS, &sw_ids[i], &again);
	sw_report("thread", label, rc, rc == SV_OK ? sw_ids[i] : NULL, again);
	return NULL;
}

/* sw_child is the forked child: it registers itself and asks WhoAmI,
 * writing both lines to fd, then sleeps until it is killed. */
static void
sw_child(int fd)
{
	sv_identity *id = NULL, *who = NULL;
	int          again = 0;
	char         line[512];
	sv_err       rc;

	rc = sv_client_subworker_register(
	    sw_client, SV_KIND_PROCESS, "kid", -1, 0, SW_CALL_MS, &id, &again);
	sw_line(line, sizeof(line), (long) getppid(), "child", "kid", rc, id,
	    again);
	(void) write(fd, line, strlen(line) + 1);
	rc = sv_client_whoami(sw_client, SW_CALL_MS, &who);
	sw_line(line, sizeof(line), (long) getppid(), "childwho", "kid", rc,
	    who, 0);
	(void) write(fd, line, strlen(line) + 1);
	close(fd);
	for (;;) {
		pause();
	}
}

/* sw_forward reads the child's NUL-terminated lines from fd and sends
 * them on. */
static void
sw_forward(int fd)
{
	char    buf[1100];
	size_t  have = 0;
	ssize_t n;

	while (have < sizeof(buf) - 1
	    && (n = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
		have += (size_t) n;
	}
	for (size_t at = 0; at < have;) {
		size_t l = strnlen(buf + at, have - at);
		if (l == have - at) {
			break; /* cut short */
		}
		(void) nng_send(sw_push, buf + at, l + 1, 0);
		at += l + 1;
	}
}

int
main(void)
{
	const char  *url = getenv("SV_TEST_REPORT_URL");
	pthread_t    th[SW_THREADS];
	sv_identity *again_id = NULL;
	int          again    = 0, fds[2];
	sv_err       rc;
	pid_t        kid;

	if (url == NULL || nng_push0_open(&sw_push) != 0
	    || nng_dial(sw_push, url, NULL, 0) != 0
	    || sv_client_open(&sw_client, NULL, SW_CALL_MS) != SV_OK) {
		return 1;
	}
	for (int i = 0; i < SW_THREADS; i++) {
		(void) pthread_create(
		    &th[i], NULL, sw_thread, (void *) (intptr_t) i);
	}
	for (int i = 0; i < SW_THREADS; i++) {
		(void) pthread_join(th[i], NULL);
	}
	rc = sw_ids[1] != NULL
	    ? sv_client_subworker_release(sw_client, sw_ids[1], SW_CALL_MS)
	    : SV_EINVAL;
	sw_report("release", "t1", rc, NULL, 0);
	sv_identity_free(sw_ids[1]);
	sw_ids[1] = NULL;
	rc = sv_client_subworker_register(sw_client, SV_KIND_THREAD, "t1", -1,
	    0, SW_CALL_MS, &sw_ids[1], &again);
	sw_report("rethread", "t1", rc, rc == SV_OK ? sw_ids[1] : NULL, again);
	rc = sv_client_subworker_register(sw_client, SV_KIND_THREAD, "t0", -1,
	    0, SW_CALL_MS, &again_id, &again);
	sw_report("again", "t0", rc, rc == SV_OK ? again_id : NULL, again);
	sv_identity_free(again_id);
	if (pipe(fds) != 0 || (kid = fork()) < 0) {
		return 1;
	}
	if (kid == 0) {
		close(fds[0]);
		sw_child(fds[1]);
	}
	close(fds[1]);
	sw_forward(fds[0]);
	close(fds[0]);
	sw_report("done", "-", SV_OK, NULL, 0);
	for (;;) {
		pause(); /* SIGTERM's default action ends the worker */
	}
}
