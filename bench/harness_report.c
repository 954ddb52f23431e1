/*
 * harness_report.c — the report socket: the one AF_UNIX datagram socket
 * every helper process (stamp workers, role workers, the drain worker)
 * reports to, and the waits that read it (see harness.h).
 *
 * Design: the socket is bound non-blocking with a large receive buffer in
 * the temporary directory (g_sock; workers find it in $SV_BENCH_SOCK) and
 * drained whenever sv-bench waits. Every wait polls with a deadline in
 * slices of at most 100 ms, so that g_interrupted and a dying daemon are
 * noticed. A datagram's type is told by its length and magic; waits for a
 * stamp skip anything else.
 */
#include "harness_priv.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int g_rx = -1; /* the report socket's bound fd */

/*
 * rx_open binds the non-blocking report socket at path with a large
 * receive buffer. (For AF_UNIX datagrams the queue is also bounded by
 * net.unix.max_dgram_qlen, often 10-512: senders then block until we drain,
 * which delays their reports but not their timestamps.)
 */
int
rx_open(const char *path)
{
	struct sockaddr_un sa;
	int                fd, sz = 8 << 20;

	if (sv_bench_addr(&sa, path) != 0)
		return -1;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) != 0) {
		close(fd);
		return -1;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) != 0)
		(void) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	g_rx = fd;
	return fd;
}

/* rx_close closes the report socket, if open. */
void
rx_close(void)
{
	if (g_rx >= 0) {
		close(g_rx);
		g_rx = -1;
	}
}

/* rx_recv waits for one datagram; length, 0 or -1. */
ssize_t
rx_recv(void *buf, size_t size, int64_t deadline)
{
	for (;;) {
		struct pollfd p = {g_rx, POLLIN, 0};
		ssize_t       n = recv(g_rx, buf, size, MSG_DONTWAIT);
		int64_t       left;

		if (n > 0)
			return n;
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK
		    && errno != EINTR)
			return -1;
		if (g_interrupted)
			return -1;
		if ((left = deadline - now_ns()) <= 0)
			return 0;
		if (left > 100 * NS_PER_MS)
			left = 100 * NS_PER_MS;
		(void) poll(&p, 1, (int) ((left + NS_PER_MS - 1) / NS_PER_MS));
	}
}

/* rx_flush discards every queued datagram. */
void
rx_flush(void)
{
	char buf[sizeof(struct sv_bench_rtt)];

	while (recv(g_rx, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

/* rx_stamp waits for one stamp datagram, watching the daemon. */
int
rx_stamp(struct sv_bench_stamp *st, int64_t deadline)
{
	union {
		struct sv_bench_stamp s;
		struct sv_bench_rtt   r;
	} u;

	for (;;) {
		ssize_t n = rx_recv(&u, sizeof(u), slice_deadline(deadline));

		if (n < 0)
			return -1;
		if (n == (ssize_t) sizeof(u.s)
		    && u.s.magic == SV_BENCH_MAGIC_STAMP) {
			*st = u.s;
			return 1;
		}
		if (n > 0)
			continue;
		if (g_daemon_pid > 0 && !daemon_alive())
			return -2;
		if (now_ns() >= deadline)
			return 0;
	}
}

/* stamp_key is the key of st in s (struct stamp_set), -1 when out of range. */
static long
stamp_key(const struct stamp_set *s, const struct sv_bench_stamp *st)
{
	long key = s->by_pid ? (long) st->pid : (long) st->ordinal;

	if (key < 0 || key >= s->size || (s->by_pid && key == 0))
		return -1;
	return key;
}

/* rx_collect counts new stamps until n came; see harness.h. */
long
rx_collect(const struct stamp_set *s, long n, int64_t deadline, int64_t *tmaxp,
    atomic_bool *stop)
{
	struct sv_bench_stamp st;
	long                  got = 0, key;
	int                   rv;

	while (got < n) {
		rv = rx_stamp(&st, slice_deadline(deadline));
		if (rv == 1) {
			if ((key = stamp_key(s, &st)) >= 0 && !s->seen[key]) {
				s->seen[key] = 1;
				if (s->pids != NULL)
					s->pids[key] = st.pid;
				got++;
				if (st.t_ns > *tmaxp)
					*tmaxp = st.t_ns;
			}
			continue;
		}
		if (rv < 0 || now_ns() >= deadline
		    || (stop != NULL && atomic_load(stop)))
			break;
	}
	return got;
}
