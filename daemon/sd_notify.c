/*
 * sd_notify.c — the shell that tells supervised's own service manager how
 * it is (see sd_notify.h; the decisions are sd_notify_plan.c's).
 */
#include "sd_notify.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

/* Longest value of WATCHDOG_PID read (decimal digits). */
#define SDN_PID_DIGITS 19

struct svd_sdn {
	int                fd;
	struct sockaddr_un sa;
	socklen_t          salen;
	char               name[sizeof(((struct sockaddr_un *) 0)->sun_path)
            + 1]; /* for logs: the value as given */
	uint64_t           watchdog_usec; /* 0: no pings */
	sdn_plan           plan;
	bool               begun;
	unsigned long      failures; /* datagrams not sent */
};

const char *
svd_sdn_addr(const char *value, struct sockaddr_un *sa, socklen_t *salen)
{
	size_t n = strnlen(value, sizeof(sa->sun_path) + 1);

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (n == 0) {
		return "it is empty";
	}
	if (n >= sizeof(sa->sun_path)) {
		return "it is too long for a unix socket address";
	}
	if (value[0] == '@') {
		if (n < 2) {
			return "an abstract name needs at least one byte "
			       "after "
			       "'@'";
		}
		/* Abstract: a leading NUL, then exactly the bytes given. */
		memcpy(sa->sun_path + 1, value + 1, n - 1);
		*salen
		    = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + n);
		return NULL;
	}
	if (value[0] != '/') {
		return "it is neither an absolute path nor an abstract name "
		       "('@...')";
	}
	memcpy(sa->sun_path, value, n);
	*salen = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + n + 1);
	return NULL;
}

bool
svd_sdn_usec(const char *value, uint64_t *usec)
{
	uint64_t v = 0;
	size_t   i;

	for (i = 0; value[i] != '\0'; i++) {
		unsigned d = (unsigned) (value[i] - '0');
		if (i >= 20 || value[i] < '0' || value[i] > '9'
		    || v > (UINT64_MAX - d) / 10u) {
			return false;
		}
		v = v * 10u + d;
	}
	if (i == 0) {
		return false;
	}
	*usec = v;
	return true;
}

/* sdn_take copies the variable name's value (at most len - 1 bytes; a
 * longer one is cut, and refused by the parsers that bound it) into buf and
 * removes it from the environment. Returns false when it was not set. */
static bool
sdn_take(const char *name, char *buf, size_t len)
{
	const char *v = getenv(name);

	if (v == NULL) {
		return false;
	}
	snprintf(buf, len, "%s", v);
	(void) unsetenv(name);
	return true;
}

/* sdn_watchdog reads the watchdog's interval from the values taken
 * (wusec, wpid: NULL when unset); 0 when off, with why in msg. */
static uint64_t
sdn_watchdog(const char *wusec, const char *wpid, char *msg, size_t msglen)
{
	uint64_t usec = 0, pid = 0;

	if (wusec == NULL) {
		return 0;
	}
	if (!svd_sdn_usec(wusec, &usec) || usec == 0) {
		snprintf(msg, msglen,
		    "WATCHDOG_USEC=%s is not a positive number of "
		    "microseconds: no watchdog pings",
		    wusec);
		return 0;
	}
	if (wpid != NULL
	    && (!svd_sdn_usec(wpid, &pid) || pid != (uint64_t) getpid())) {
		snprintf(msg, msglen,
		    "WATCHDOG_PID=%s is not our pid (%ld): the watchdog is "
		    "another process's; no pings",
		    wpid, (long) getpid());
		return 0;
	}
	return usec;
}

void
svd_sdn_from_env(svd_sdn **np, char *msg, size_t msglen)
{
	char        sock[sizeof(((struct sockaddr_un *) 0)->sun_path) + 1];
	char        wusec[32], wpid[SDN_PID_DIGITS + 2];
	bool        has_sock, has_usec, has_pid;
	const char *why;
	svd_sdn    *n;
	char        wmsg[200] = "";

	*np      = NULL;
	msg[0]   = '\0';
	has_sock = sdn_take("NOTIFY_SOCKET", sock, sizeof(sock));
	has_usec = sdn_take("WATCHDOG_USEC", wusec, sizeof(wusec));
	has_pid  = sdn_take("WATCHDOG_PID", wpid, sizeof(wpid));
	if (!has_sock) {
		return;
	}
	if ((n = calloc(1, sizeof(*n))) == NULL) {
		snprintf(msg, msglen,
		    "NOTIFY_SOCKET: out of memory: the service manager is not "
		    "told when we are ready");
		return;
	}
	if ((why = svd_sdn_addr(sock, &n->sa, &n->salen)) != NULL) {
		snprintf(msg, msglen,
		    "NOTIFY_SOCKET=%.120s not used: %s; the service manager "
		    "is not told when we are ready",
		    sock, why);
		free(n);
		return;
	}
	n->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (n->fd < 0) {
		snprintf(msg, msglen,
		    "NOTIFY_SOCKET: socket: %s; the service manager is not "
		    "told when we are ready",
		    strerror(errno));
		free(n);
		return;
	}
	snprintf(n->name, sizeof(n->name), "%s", sock);
	n->watchdog_usec = sdn_watchdog(has_usec ? wusec : NULL,
	    has_pid ? wpid : NULL, wmsg, sizeof(wmsg));
	if (wmsg[0] != '\0') {
		snprintf(
		    msg, msglen, "sd_notify to %.110s; %s", n->name, wmsg);
	} else if (n->watchdog_usec > 0) {
		snprintf(msg, msglen,
		    "sd_notify to %.110s, watchdog pings every %llu ms",
		    n->name,
		    (unsigned long long) (n->watchdog_usec / 2000u > 0
		            ? n->watchdog_usec / 2000u
		            : 1));
	} else {
		snprintf(msg, msglen, "sd_notify to %.110s", n->name);
	}
	*np = n;
}

void
svd_sdn_begin(svd_sdn *n, long mainpid, uint64_t now_ms)
{
	sdn_plan_init(&n->plan, n->watchdog_usec, mainpid, now_ms);
	n->begun = true;
}

/* sdn_send sends one datagram, never blocking; the first failure is
 * logged, the others counted. */
static void
sdn_send(svd_sdn *n, const char *buf, size_t len)
{
	if (sendto(n->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT,
	        (const struct sockaddr *) &n->sa, n->salen)
	    == (ssize_t) len) {
		return;
	}
	if (n->failures++ == 0) {
		svd_log("sd_notify: cannot send to NOTIFY_SOCKET=%s: %s; "
		        "further failures are counted, not logged",
		    n->name, strerror(errno));
	}
}

uint64_t
svd_sdn_tick(svd_sdn *n, const sdn_input *in)
{
	sdn_msg  m;
	uint64_t wake = SDN_NEVER;
	char     buf[SDN_DGRAM_MAX];
	size_t   len;

	if (n == NULL || !n->begun) {
		return SDN_NEVER;
	}
	if (sdn_plan_next(&n->plan, in, &m, &wake)
	    && (len = sdn_msg_format(&m, buf, sizeof(buf))) > 0) {
		sdn_send(n, buf, len);
	}
	return wake;
}

void
svd_sdn_reload(svd_sdn *n, bool begin)
{
	if (n != NULL) {
		sdn_plan_reload(&n->plan, begin);
	}
}

void
svd_sdn_free(svd_sdn *n)
{
	if (n == NULL) {
		return;
	}
	if (n->failures > 1) {
		svd_log("sd_notify: %lu datagrams to NOTIFY_SOCKET=%s could "
		        "not be sent",
		    n->failures, n->name);
	}
	close(n->fd);
	free(n);
}
