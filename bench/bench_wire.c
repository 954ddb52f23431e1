/*
 * bench_wire.c — the sending side of sv-bench's report datagrams, shared by
 * the stamp worker (stamp_worker.c), the worker roles of sv-bench itself
 * (bench_whoami.c, bench_whoami_n.c) and sv-bench's commands to the
 * whoami-timing worker.
 *
 * Design: a report is rare (once per process), so each send opens a fresh
 * unbound AF_UNIX SOCK_DGRAM socket, sends, and closes it: no state, no
 * dependency beyond libc. The receiver (harness_report.c) binds the socket
 * named by $SV_BENCH_SOCK and drains it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "bench_wire.h"

/* sv_bench_addr builds the address of a report socket; see bench_wire.h. */
int
sv_bench_addr(struct sockaddr_un *sa, const char *path)
{
	if (path == NULL || strlen(path) >= sizeof(sa->sun_path))
		return -1;
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	strcpy(sa->sun_path, path);
	return 0;
}

/* send_dgram sends one datagram to path, blocking or not. */
static int
send_dgram(const char *path, const void *buf, size_t len, int flags)
{
	struct sockaddr_un sa;
	ssize_t            n;
	int                fd;

	if (sv_bench_addr(&sa, path) != 0)
		return -1;
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | flags, 0)) < 0)
		return -1;
	do
		n = sendto(
		    fd, buf, len, 0, (struct sockaddr *) &sa, sizeof(sa));
	while (n < 0 && errno == EINTR);
	close(fd);
	return n == (ssize_t) len ? 0 : -1;
}

/* sv_bench_send sends one report datagram; see bench_wire.h. */
int
sv_bench_send(const void *buf, size_t len)
{
	return send_dgram(getenv(SV_BENCH_ENV_SOCK), buf, len, 0);
}

/* sv_bench_send_to sends one datagram to path without blocking. */
int
sv_bench_send_to(const char *path, const void *buf, size_t len)
{
	return send_dgram(path, buf, len, SOCK_NONBLOCK);
}
