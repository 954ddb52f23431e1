/*
 * accept_guard.c — detect and repair a listener that stopped accepting
 * (see accept_guard.h for why).
 *
 * One thread, one condition variable on CLOCK_MONOTONIC (for a prompt
 * stop). A probe that fails leaves its connection in the old listener's
 * backlog; recreating the listener closes that backlog, which also frees
 * the clients stuck in it (their connection is reset and the client
 * library reconnects).
 */
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "accept_guard.h"
#include "supervisor.h"

struct svd_guard {
	pthread_mutex_t mtx;
	pthread_cond_t  cv;
	pthread_t       thr;
	bool            stop;
	unsigned long   accepted; /* pipes the socket accepted so far */
	char            path[600]; /* the socket file behind the ipc:// URL */
	svd_relisten_fn relisten;
	void           *arg;
};

/* guard_deadline returns now + ms on CLOCK_MONOTONIC. */
static struct timespec
guard_deadline(long ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

/* guard_read reads exactly n bytes from fd before the deadline dl_ms
 * (monotonic ms); false on EOF, error or timeout. */
static bool
guard_read(int fd, uint8_t *buf, size_t n, int64_t dl_ms)
{
	size_t got = 0;

	while (got < n) {
		struct pollfd   pfd = {.fd = fd, .events = POLLIN};
		struct timespec now;
		int64_t         left;
		ssize_t         r;

		clock_gettime(CLOCK_MONOTONIC, &now);
		left = dl_ms
		    - ((int64_t) now.tv_sec * 1000 + now.tv_nsec / 1000000);
		if (left <= 0 || poll(&pfd, 1, (int) left) <= 0) {
			return false;
		}
		if ((r = read(fd, buf + got, n - got)) <= 0) {
			return false;
		}
		got += (size_t) r;
	}
	return true;
}

/*
 * guard_probe tells whether the listener accepts: it connects to the socket
 * file as a plain AF_UNIX client, sends the SP header of a REQ peer, waits
 * for the server's header, then for the server socket to report the new
 * pipe (svd_guard_accepted). A stuck listener still shakes hands but never
 * hands the pipe to the socket. The probe uses no nng object (closing an nng
 * dialer mid-handshake leaks in 1.5.2) and hangs up only after the
 * handshake, so it cannot trip the bug itself.
 */
static bool
guard_probe(svd_guard *g)
{
	const char          *path = g->path;
	unsigned long        before;
	static const uint8_t req_hdr[8] = {0, 'S', 'P', 0, 0, 0x30, 0, 0};
	static const uint8_t rep_hdr[8] = {0, 'S', 'P', 0, 0, 0x31, 0, 0};
	struct sockaddr_un   sa         = {.sun_family = AF_UNIX};
	struct timespec      now;
	uint8_t              hdr[8];
	int64_t              dl;
	bool                 ok;
	int                  fd;

	pthread_mutex_lock(&g->mtx);
	before = g->accepted;
	pthread_mutex_unlock(&g->mtx);
	if (strlen(path) >= sizeof(sa.sun_path)
	    || (fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0) {
		return true; /* cannot probe: do not blame the listener */
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	clock_gettime(CLOCK_MONOTONIC, &now);
	dl = (int64_t) now.tv_sec * 1000 + now.tv_nsec / 1000000
	    + SVD_GUARD_TIMEOUT_MS;
	/* A refused connection means no listener at all: replace it too. */
	ok = connect(fd, (struct sockaddr *) &sa, sizeof(sa)) == 0
	    && write(fd, req_hdr, sizeof(req_hdr)) == (ssize_t) sizeof(req_hdr)
	    && guard_read(fd, hdr, sizeof(hdr), dl)
	    && memcmp(hdr, rep_hdr, sizeof(hdr)) == 0;
	if (ok) {
		/* The transport shook hands; now the socket must take the pipe
		 * (a stuck listener shakes hands but never hands it over). */
		struct timespec ts = {dl / 1000, (dl % 1000) * 1000000};
		pthread_mutex_lock(&g->mtx);
		while (!g->stop && g->accepted == before
		    && pthread_cond_timedwait(&g->cv, &g->mtx, &ts) == 0) {
		}
		ok = g->stop || g->accepted != before;
		pthread_mutex_unlock(&g->mtx);
	}
	close(fd);
	return ok;
}

/* guard_main probes every interval until stopped. */
static void *
guard_main(void *arg)
{
	svd_guard      *g = arg;
	struct timespec dl;
	bool            ok;

	pthread_mutex_lock(&g->mtx);
	while (!g->stop) {
		dl = guard_deadline(SVD_GUARD_INTERVAL_MS);
		while (!g->stop
		    && pthread_cond_timedwait(&g->cv, &g->mtx, &dl) == 0) {
		}
		if (g->stop) {
			break;
		}
		pthread_mutex_unlock(&g->mtx);
		ok = guard_probe(g);
		if (!ok) {
			svd_log(
			    "control socket stopped accepting connections "
			    "(nng 1.5.2 bug #1518); recreating its listener");
			if (!g->relisten(g->arg)) {
				svd_log("cannot recreate the listener; will "
				        "retry");
			}
		}
		pthread_mutex_lock(&g->mtx);
	}
	pthread_mutex_unlock(&g->mtx);
	return NULL;
}

sv_err
svd_guard_start(
    const char *url, svd_relisten_fn relisten, void *arg, svd_guard **guardp)
{
	svd_guard         *g = calloc(1, sizeof(*g));
	pthread_condattr_t ca;

	if (g == NULL) {
		return SV_ENOMEM;
	}
	if (strncmp(url, "ipc://", 6) != 0) {
		free(g);
		return SV_EINVAL;
	}
	snprintf(g->path, sizeof(g->path), "%s", url + 6);
	g->relisten = relisten;
	g->arg      = arg;
	pthread_mutex_init(&g->mtx, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&g->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&g->thr, NULL, guard_main, g) != 0) {
		pthread_cond_destroy(&g->cv);
		pthread_mutex_destroy(&g->mtx);
		free(g);
		return SV_ESYSTEM;
	}
	*guardp = g;
	return SV_OK;
}

void
svd_guard_accepted(svd_guard *guard)
{
	pthread_mutex_lock(&guard->mtx);
	guard->accepted++;
	pthread_cond_broadcast(&guard->cv);
	pthread_mutex_unlock(&guard->mtx);
}

void
svd_guard_stop(svd_guard *guard)
{
	if (guard == NULL) {
		return;
	}
	pthread_mutex_lock(&guard->mtx);
	guard->stop = true;
	pthread_cond_broadcast(&guard->cv);
	pthread_mutex_unlock(&guard->mtx);
	pthread_join(guard->thr, NULL);
	pthread_cond_destroy(&guard->cv);
	pthread_mutex_destroy(&guard->mtx);
	free(guard);
}
