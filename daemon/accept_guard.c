/*
 * accept_guard.c — keep the control socket accepting (see accept_guard.h
 * for the bug and the two defences).
 *
 * Prevention: sendmsg() below interposes the C library's for this
 * executable (libnng calls it through its PLT; an executable's definition
 * comes first in symbol lookup). It calls the next sendmsg (libc's, or a
 * sanitizer's interceptor) and, only when that failed with EPIPE and the
 * caller's return address lies in a shared object named libnng, reports
 * ECONNRESET instead. Both mean "the peer is gone"; nng 1.5.2 maps EPIPE to
 * NNG_ECLOSED, which its listener mistakes for its own closing (#1518), and
 * ECONNRESET to NNG_ECONNRESET, after which it accepts again. Compiled only
 * against nng < 1.6 (the fix shipped in 1.6.0). svd_guard_start logs when
 * the interposition is not in effect.
 *
 * Detection: one thread sleeping in poll() on an eventfd (stop), an inotify
 * descriptor on the socket directory (IN_DELETE | IN_MOVED_FROM: the socket
 * file went away) and, while no check is pending, a duplicate of the
 * listener's descriptor (POLLIN: a connection arrived). A duplicate keeps
 * the socket open, so it is dropped before every relisten and found again
 * after it (guard_find_listener scans /proc/self/fd for a listening AF_UNIX
 * socket bound to our path that is not shut down, and checks the duplicate
 * is the same inode). With no traffic the thread never wakes. An arrival
 * starts one check SVD_GUARD_TIMEOUT_MS later: a pipe accepted since (or
 * just before) the arrival proves the listener alive; otherwise a probe
 * decides (accept_guard.h). While the socket cannot accept, the listener is
 * not polled (its backlog stays readable) and probes back off.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>

#include "accept_guard.h"
#include "supervisor.h"

/* An accept this long before the arrival's wake-up still counts for it
 * (nng may take the pipe before the guard thread runs). */
#define GUARD_SLACK_MS 10

#if NNG_MAJOR_VERSION == 1 && NNG_MINOR_VERSION < 6 \
    && !defined(SVD_GUARD_NO_EPIPE_FIX)
#define GUARD_EPIPE_FIX 1
#endif

/* What a probe found. */
typedef enum {
	PROBE_OK, /* accepted (or could not judge) */
	PROBE_NO_LISTENER, /* no socket file, or the connection refused */
	PROBE_STUCK, /* handshake done, pipe never accepted (#1518) */
	PROBE_NO_ACCEPT, /* connected, but the server never shook hands */
	PROBE_NO_FD, /* no descriptor for the probe itself */
} guard_probe_result;

struct svd_guard {
	pthread_mutex_t mtx;
	pthread_cond_t  cv;
	pthread_t       thr;
	bool            stop;
	unsigned long   accepted; /* pipes the socket accepted so far */
	int64_t         accepted_ms; /* monotonic ms of the last one */
	int             wakefd; /* eventfd: stop */
	int             inofd; /* inotify on the directory, -1: none */
	int             lfd; /* duplicate of the listening socket, or -1 */
	char            path[600]; /* the socket file behind the ipc:// URL */
	const char     *name; /* its last component, inside path */
	svd_relisten_fn relisten;
	void           *arg;
};

/* guard_now_ms reads CLOCK_MONOTONIC in milliseconds. */
static int64_t
guard_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* guard_read reads exactly n bytes from the non-blocking fd before the
 * deadline dl_ms (monotonic ms); false on EOF, error or timeout. */
static bool
guard_read(int fd, uint8_t *buf, size_t n, int64_t dl_ms)
{
	size_t got = 0;

	while (got < n) {
		struct pollfd pfd  = {.fd = fd, .events = POLLIN};
		int64_t       left = dl_ms - guard_now_ms();
		ssize_t       r;

		if (left <= 0 || poll(&pfd, 1, (int) left) < 0) {
			if (left > 0 && errno == EINTR) {
				continue;
			}
			return false;
		}
		if ((r = read(fd, buf + got, n - got)) < 0
		    && (errno == EAGAIN || errno == EINTR)) {
			continue;
		}
		if (r <= 0) {
			return false;
		}
		got += (size_t) r;
	}
	return true;
}

/* guard_is_listener tells whether fd is a listening, not shut down,
 * AF_UNIX socket bound to path. */
static bool
guard_is_listener(int fd, const char *path)
{
	struct sockaddr_un sa  = {0};
	socklen_t          len = sizeof(sa);
	int                v   = 0;
	socklen_t          vl  = sizeof(v);
	struct pollfd      pfd = {.fd = fd, .events = 0};

	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &vl) != 0 || v != 1
	    || getsockname(fd, (struct sockaddr *) &sa, &len) != 0
	    || sa.sun_family != AF_UNIX
	    || len <= offsetof(struct sockaddr_un, sun_path)
	    || strncmp(sa.sun_path, path, sizeof(sa.sun_path)) != 0) {
		return false;
	}
	/* nng shuts a closed listener down before it closes it. */
	return poll(&pfd, 1, 0) == 0;
}

/* guard_find_listener sets g->lfd to a duplicate of the listening socket,
 * or -1 when there is none (or no descriptor to spare). */
static void
guard_find_listener(svd_guard *g)
{
	DIR           *d;
	struct dirent *e;

	g->lfd = -1;
	if ((d = opendir("/proc/self/fd")) == NULL) {
		return;
	}
	while (g->lfd < 0 && (e = readdir(d)) != NULL) {
		char       *end;
		long        n = strtol(e->d_name, &end, 10);
		struct stat st, dst;
		int         fd;

		if (*end != '\0' || end == e->d_name || n < 0 || n > INT_MAX
		    || (int) n == dirfd(d) || fstat((int) n, &st) != 0
		    || !S_ISSOCK(st.st_mode)
		    || !guard_is_listener((int) n, g->path)) {
			continue;
		}
		/* Duplicate, then make sure it is still that socket. */
		if ((fd = fcntl((int) n, F_DUPFD_CLOEXEC, 0)) < 0) {
			break;
		}
		if (fstat(fd, &dst) == 0 && dst.st_ino == st.st_ino
		    && dst.st_dev == st.st_dev
		    && guard_is_listener(fd, g->path)) {
			g->lfd = fd;
		} else {
			close(fd);
		}
	}
	closedir(d);
}

/*
 * guard_probe connects to the socket file as a plain, non-blocking AF_UNIX
 * client, sends the SP header of a REQ peer, waits for the server's header,
 * then for the server socket to report a new pipe (svd_guard_accepted). It
 * uses no nng object and hangs up only after the handshake, so it cannot
 * trip the bug itself. Every wait ends by SVD_GUARD_TIMEOUT_MS.
 */
static guard_probe_result
guard_probe(svd_guard *g)
{
	static const uint8_t req_hdr[8] = {0, 'S', 'P', 0, 0, 0x30, 0, 0};
	static const uint8_t rep_hdr[8] = {0, 'S', 'P', 0, 0, 0x31, 0, 0};
	struct sockaddr_un   sa         = {.sun_family = AF_UNIX};
	size_t               plen       = strlen(g->path);
	int64_t              dl = guard_now_ms() + SVD_GUARD_TIMEOUT_MS;
	guard_probe_result   res;
	unsigned long        before;
	uint8_t              hdr[8];
	int                  fd;

	if (plen >= sizeof(sa.sun_path)) {
		return PROBE_OK; /* cannot probe: do not blame the listener */
	}
	memcpy(sa.sun_path, g->path, plen + 1);
	pthread_mutex_lock(&g->mtx);
	before = g->accepted;
	pthread_mutex_unlock(&g->mtx);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		return errno == EMFILE || errno == ENFILE ? PROBE_NO_FD
		                                          : PROBE_OK;
	}
	if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) != 0) {
		/* EAGAIN: the backlog is full, nobody takes connections. */
		res = errno == ENOENT || errno == ECONNREFUSED
		    ? PROBE_NO_LISTENER
		    : errno == EAGAIN ? PROBE_NO_ACCEPT
		                      : PROBE_OK;
		close(fd);
		return res;
	}
	if (send(fd, req_hdr, sizeof(req_hdr), MSG_NOSIGNAL)
	        != (ssize_t) sizeof(req_hdr)
	    || !guard_read(fd, hdr, sizeof(hdr), dl)) {
		close(fd);
		return PROBE_NO_ACCEPT;
	}
	if (memcmp(hdr, rep_hdr, sizeof(hdr)) != 0) {
		close(fd);
		return PROBE_OK; /* not our server's answer: not ours to fix */
	}
	/* The transport shook hands; now the socket must take the pipe (a
	 * stuck listener shakes hands but never hands it over). */
	{
		struct timespec ts = {dl / 1000, (dl % 1000) * 1000000};
		pthread_mutex_lock(&g->mtx);
		while (!g->stop && g->accepted == before
		    && pthread_cond_timedwait(&g->cv, &g->mtx, &ts) == 0) {
		}
		res = g->stop || g->accepted != before ? PROBE_OK
		                                       : PROBE_STUCK;
		pthread_mutex_unlock(&g->mtx);
	}
	close(fd);
	return res;
}

/* guard_fd_usage formats "N descriptors open, limit M" into buf. */
static void
guard_fd_usage(char *buf, size_t len)
{
	struct rlimit  rl;
	DIR           *d;
	long           n = -1;
	struct dirent *e;

	if ((d = opendir("/proc/self/fd")) != NULL) {
		n = 0;
		while ((e = readdir(d)) != NULL) {
			n += e->d_name[0] != '.';
		}
		closedir(d);
		n--; /* the directory's own descriptor */
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
		rl.rlim_cur = RLIM_INFINITY;
	}
	if (n < 0) {
		snprintf(buf, len, "no descriptor left, limit %llu",
		    (unsigned long long) rl.rlim_cur);
	} else {
		snprintf(buf, len, "%ld descriptors open, limit %llu", n,
		    (unsigned long long) rl.rlim_cur);
	}
}

/* guard_inotify_hit drains the inotify descriptor; true if our socket file
 * was removed or renamed away. */
static bool
guard_inotify_hit(svd_guard *g)
{
	char buf[4096]
	    __attribute__((aligned(__alignof__(struct inotify_event))));
	bool    hit = false;
	ssize_t n;

	while ((n = read(g->inofd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const void *) p;
			if (ev->len > 0 && strcmp(ev->name, g->name) == 0) {
				hit = true;
			}
			if ((ev->mask & IN_IGNORED) != 0) {
				close(g->inofd); /* directory gone */
				g->inofd = -1;
				return true;
			}
			p += sizeof(*ev) + ev->len;
		}
	}
	return hit;
}

/* guard_backoff doubles the back-off within its bounds. */
static int
guard_backoff(int ms)
{
	if (ms < SVD_GUARD_BACKOFF_MIN_MS) {
		return SVD_GUARD_BACKOFF_MIN_MS;
	}
	return ms >= SVD_GUARD_BACKOFF_MAX_MS / 2 ? SVD_GUARD_BACKOFF_MAX_MS
	                                          : 2 * ms;
}

/* guard_main waits for evidence, probes and repairs, until stopped. */
static void *
guard_main(void *arg)
{
	svd_guard *g        = arg;
	int64_t    check_at = -1; /* when to check; -1: nothing to check */
	int64_t    arrival  = 0; /* wake-up time of the last arrival */
	int64_t    episode  = 0; /* start of a "cannot accept" episode */
	bool       force    = false; /* probe at check_at, accepts or not */
	int        backoff  = 0; /* ms; 0 unless the socket cannot accept */
	guard_probe_result res;

	for (;;) {
		struct pollfd pf[3];
		nfds_t        n = 0, li = 3, ii = 3;
		int           timeout = -1;
		int64_t       now     = guard_now_ms();
		bool          stop;

		pf[n++] = (struct pollfd) {.fd = g->wakefd, .events = POLLIN};
		if (g->inofd >= 0) {
			ii      = n;
			pf[n++] = (struct pollfd) {
			    .fd = g->inofd, .events = POLLIN};
		}
		if (g->lfd >= 0 && check_at < 0) {
			li = n;
			pf[n++]
			    = (struct pollfd) {.fd = g->lfd, .events = POLLIN};
		}
		if (check_at >= 0) {
			timeout = check_at > now ? (int) (check_at - now) : 0;
		}
		if (poll(pf, n, timeout) < 0 && errno != EINTR) {
			svd_log("accept guard: poll: %s", strerror(errno));
			break;
		}
		pthread_mutex_lock(&g->mtx);
		stop = g->stop;
		pthread_mutex_unlock(&g->mtx);
		if (stop) {
			break;
		}
		now = guard_now_ms();
		if (ii < n && (pf[ii].revents & POLLIN) != 0
		    && guard_inotify_hit(g)) {
			force    = true;
			check_at = now;
		}
		if (li < n && pf[li].revents != 0) {
			arrival  = now;
			check_at = now + SVD_GUARD_TIMEOUT_MS;
			if ((pf[li].revents & (POLLHUP | POLLERR)) != 0) {
				force = true; /* our listener was shut down */
			}
		}
		if (check_at < 0 || now < check_at) {
			continue;
		}
		if (!force) {
			bool alive;
			pthread_mutex_lock(&g->mtx);
			alive = g->accepted_ms >= arrival - GUARD_SLACK_MS;
			pthread_mutex_unlock(&g->mtx);
			if (alive) {
				check_at = -1;
				continue;
			}
		}
		res = guard_probe(g);
		switch (res) {
		case PROBE_OK:
			if (backoff > 0) {
				svd_log("control socket accepts connections "
				        "again (after %lld ms)",
				    (long long) (now - episode));
			}
			backoff  = 0;
			force    = false;
			check_at = -1;
			if (g->lfd < 0) {
				guard_find_listener(g);
			}
			break;
		case PROBE_NO_LISTENER:
		case PROBE_STUCK:
			svd_log("control socket %s; recreating its listener",
			    res == PROBE_STUCK
			        ? "stopped accepting connections (nng 1.5.2 "
			          "bug #1518; nng keeps the old listener's "
			          "descriptors)"
			        : "has no listener (socket file gone?)");
			if (g->lfd >= 0) {
				close(g->lfd);
				g->lfd = -1;
			}
			if (g->relisten(g->arg)) {
				guard_find_listener(g);
				backoff  = 0;
				force    = false;
				check_at = -1;
			} else {
				backoff = guard_backoff(backoff);
				svd_log(
				    "cannot recreate the listener; retrying "
				    "in %d ms",
				    backoff);
				force    = true;
				check_at = now + backoff;
			}
			break;
		case PROBE_NO_ACCEPT:
		case PROBE_NO_FD: {
			char usage[96];
			if (backoff == 0) {
				episode = now;
				guard_fd_usage(usage, sizeof(usage));
				svd_log(
				    "control socket is not accepting "
				    "connections (%s); checking again with "
				    "back-off, the listener is kept",
				    usage);
			}
			backoff  = guard_backoff(backoff);
			force    = true;
			check_at = now + backoff;
			break;
		}
		}
	}
	return NULL;
}

sv_err
svd_guard_start(
    const char *url, svd_relisten_fn relisten, void *arg, svd_guard **guardp)
{
	svd_guard         *g = calloc(1, sizeof(*g));
	pthread_condattr_t ca;
	char               dir[600];
	char              *slash;

	if (g == NULL) {
		return SV_ENOMEM;
	}
	if (strncmp(url, "ipc://", 6) != 0) {
		free(g);
		return SV_EINVAL;
	}
	snprintf(g->path, sizeof(g->path), "%s", url + 6);
	g->relisten    = relisten;
	g->arg         = arg;
	g->accepted_ms = INT64_MIN / 2;
	g->inofd       = -1;
	if ((g->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
		free(g);
		return SV_ESYSTEM;
	}
	snprintf(dir, sizeof(dir), "%s", g->path);
	slash   = strrchr(dir, '/');
	g->name = strrchr(g->path, '/') != NULL ? strrchr(g->path, '/') + 1
	                                        : g->path;
	if (slash != NULL) {
		*(slash == dir ? slash + 1 : slash) = '\0';
	} else {
		snprintf(dir, sizeof(dir), ".");
	}
	if ((g->inofd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK)) >= 0
	    && inotify_add_watch(g->inofd, dir, IN_DELETE | IN_MOVED_FROM)
	        < 0) {
		close(g->inofd);
		g->inofd = -1;
	}
	guard_find_listener(g);
	if (g->lfd < 0) {
		svd_log("accept guard: listening socket of %s not found; "
		        "only its removal is watched",
		    g->path);
	}
#ifdef GUARD_EPIPE_FIX
	{
		/* sendmsg as libnng resolves it: ours, if interposed. */
		void *seen = dlsym(RTLD_DEFAULT, "sendmsg");
		void *mine = (void *) (uintptr_t) &sendmsg;
		if (seen != mine) {
			svd_log("accept guard: sendmsg is not interposed; the "
			        "nng 1.5.2 bug #1518 workaround is inactive");
		}
	}
#endif
	pthread_mutex_init(&g->mtx, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&g->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&g->thr, NULL, guard_main, g) != 0) {
		pthread_cond_destroy(&g->cv);
		pthread_mutex_destroy(&g->mtx);
		if (g->lfd >= 0) {
			close(g->lfd);
		}
		if (g->inofd >= 0) {
			close(g->inofd);
		}
		close(g->wakefd);
		free(g);
		return SV_ESYSTEM;
	}
	*guardp = g;
	return SV_OK;
}

void
svd_guard_accepted(svd_guard *guard)
{
	int64_t now = guard_now_ms();

	pthread_mutex_lock(&guard->mtx);
	guard->accepted++;
	guard->accepted_ms = now;
	pthread_cond_broadcast(&guard->cv);
	pthread_mutex_unlock(&guard->mtx);
}

void
svd_guard_stop(svd_guard *guard)
{
	uint64_t one = 1;

	if (guard == NULL) {
		return;
	}
	pthread_mutex_lock(&guard->mtx);
	guard->stop = true;
	pthread_cond_broadcast(&guard->cv);
	pthread_mutex_unlock(&guard->mtx);
	(void) !write(guard->wakefd, &one, sizeof(one));
	pthread_join(guard->thr, NULL);
	pthread_cond_destroy(&guard->cv);
	pthread_mutex_destroy(&guard->mtx);
	if (guard->lfd >= 0) {
		close(guard->lfd);
	}
	if (guard->inofd >= 0) {
		close(guard->inofd);
	}
	close(guard->wakefd);
	free(guard);
}

#ifdef GUARD_EPIPE_FIX
/* The sendmsg this interposition forwards to (libc's, or a sanitizer's). */
typedef ssize_t (*guard_sendmsg_fn)(int, const struct msghdr *, int);

/* guard_next_sendmsg resolves the next sendmsg once (benign race: every
 * thread stores the same value). */
static guard_sendmsg_fn
guard_next_sendmsg(void)
{
	static guard_sendmsg_fn next;
	guard_sendmsg_fn        fn = __atomic_load_n(&next, __ATOMIC_ACQUIRE);

	if (fn == NULL) {
		void *sym = dlsym(RTLD_NEXT, "sendmsg");
		memcpy(&fn, &sym, sizeof(fn));
		__atomic_store_n(&next, fn, __ATOMIC_RELEASE);
	}
	return fn;
}

/*
 * sendmsg interposes the C library's (see the top of this file): same
 * contract, except that EPIPE seen by libnng becomes ECONNRESET. Callers
 * outside libnng get the next sendmsg's result unchanged.
 */
ssize_t
sendmsg(int fd, const struct msghdr *msg, int flags)
{
	guard_sendmsg_fn next = guard_next_sendmsg();
	ssize_t          n;

	if (next == NULL) {
		errno = ENOSYS;
		return -1;
	}
	n = next(fd, msg, flags);
	if (n < 0 && errno == EPIPE) {
		Dl_info info;
		void   *caller = __builtin_return_address(0);
		if (dladdr(caller, &info) != 0 && info.dli_fname != NULL
		    && strstr(info.dli_fname, "libnng") != NULL) {
			errno = ECONNRESET;
		} else {
			errno = EPIPE; /* dladdr may have changed it */
		}
	}
	return n;
}
#endif
