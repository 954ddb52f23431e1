/*
 * test_notify.c — the systemd notify socket (daemon/notify.c).
 *
 * Two halves. The parser is driven by tables: each known key, several keys
 * in one datagram, unknown keys and values, lines without '=', bad
 * EXTEND_TIMEOUT_USEC numbers, STATUS cleaning and truncation, NUL bytes,
 * empty datagrams, CRLF, and the size and line bounds. The socket tests
 * bind a real socket in a temporary directory and send to it: the sender is
 * the pid the kernel reports (this process, or a forked child) whatever
 * MAINPID says; descriptors sent with SCM_RIGHTS are refused and closed in
 * the receiver; an empty queue is SV_EBUSY; oversize datagrams are dropped;
 * the file is mode 0600 and stale, live and foreign files are handled.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "notify.h"
#include "sv_tmpdir.h"

/* ------------------------------------------------------------------ */
/* Parser tables                                                      */
/* ------------------------------------------------------------------ */

/* One parse case: the datagram (len 0 means strlen) and what it gives. */
typedef struct parse_case {
	const char *in;
	size_t      len;
	sv_err      rv;
	bool        ready, stopping, watchdog, has_status, has_extend;
	const char *status; /* expected when has_status */
	uint64_t    extend;
} parse_case;

#define MAXU SVD_NOTIFY_EXTEND_MAX_USEC

static const parse_case parse_cases[] = {
    /* Each key alone. */
    {"READY=1", 0, SV_OK, true, false, false, false, false, NULL, 0},
    {"STOPPING=1", 0, SV_OK, false, true, false, false, false, NULL, 0},
    {"WATCHDOG=1", 0, SV_OK, false, false, true, false, false, NULL, 0},
    {"STATUS=Serving 3 clients", 0, SV_OK, false, false, false, true, false,
        "Serving 3 clients", 0},
    {"STATUS=", 0, SV_OK, false, false, false, true, false, "", 0},
    {"STATUS=a=b", 0, SV_OK, false, false, false, true, false, "a=b", 0},
    {"EXTEND_TIMEOUT_USEC=5000000", 0, SV_OK, false, false, false, false, true,
        NULL, 5000000},
    /* Several keys in one datagram, with and without a final newline. */
    {"READY=1\nSTATUS=up\nWATCHDOG=1\n", 0, SV_OK, true, false, true, true,
        false, "up", 0},
    {"STOPPING=1\nEXTEND_TIMEOUT_USEC=7\nSTATUS=bye", 0, SV_OK, false, true,
        false, true, true, "bye", 7},
    /* Later assignments win; a bad one does not undo a good one. */
    {"STATUS=one\nSTATUS=two", 0, SV_OK, false, false, false, true, false,
        "two", 0},
    {"EXTEND_TIMEOUT_USEC=5\nEXTEND_TIMEOUT_USEC=x", 0, SV_OK, false, false,
        false, false, true, NULL, 5},
    {"EXTEND_TIMEOUT_USEC=5\nEXTEND_TIMEOUT_USEC=9", 0, SV_OK, false, false,
        false, false, true, NULL, 9},
    /* Unknown keys, MAINPID and other values of known keys: ignored. */
    {"FOO=bar\nMAINPID=1\nFDSTORE=1\nRELOADING=1\nERRNO=5", 0, SV_OK, false,
        false, false, false, false, NULL, 0},
    {"READY=0", 0, SV_OK, false, false, false, false, false, NULL, 0},
    {"READY=yes", 0, SV_OK, false, false, false, false, false, NULL, 0},
    {"READY=1 ", 0, SV_OK, false, false, false, false, false, NULL, 0},
    {" READY=1", 0, SV_OK, false, false, false, false, false, NULL, 0},
    {"ready=1", 0, SV_OK, false, false, false, false, false, NULL, 0},
    {"WATCHDOG=trigger", 0, SV_OK, false, false, false, false, false, NULL, 0},
    {"READY=1\nREADY=0", 0, SV_OK, true, false, false, false, false, NULL, 0},
    /* Lines without '=' are ignored, the rest still applies. */
    {"READY\nhello\nSTOPPING=1", 0, SV_OK, false, true, false, false, false,
        NULL, 0},
    {"=1\nREADY=1", 0, SV_OK, true, false, false, false, false, NULL, 0},
    /* EXTEND_TIMEOUT_USEC: bad numbers are ignored, big ones capped. */
    {"EXTEND_TIMEOUT_USEC=", 0, SV_OK, false, false, false, false, false, NULL,
        0},
    {"EXTEND_TIMEOUT_USEC=-5", 0, SV_OK, false, false, false, false, false,
        NULL, 0},
    {"EXTEND_TIMEOUT_USEC=+5", 0, SV_OK, false, false, false, false, false,
        NULL, 0},
    {"EXTEND_TIMEOUT_USEC= 5", 0, SV_OK, false, false, false, false, false,
        NULL, 0},
    {"EXTEND_TIMEOUT_USEC=5 ", 0, SV_OK, false, false, false, false, false,
        NULL, 0},
    {"EXTEND_TIMEOUT_USEC=0x10", 0, SV_OK, false, false, false, false, false,
        NULL, 0},
    {"EXTEND_TIMEOUT_USEC=1e6", 0, SV_OK, false, false, false, false, false,
        NULL, 0},
    {"EXTEND_TIMEOUT_USEC=12abc", 0, SV_OK, false, false, false, false, false,
        NULL, 0},
    {"EXTEND_TIMEOUT_USEC=0", 0, SV_OK, false, false, false, false, true, NULL,
        0},
    {"EXTEND_TIMEOUT_USEC=007", 0, SV_OK, false, false, false, false, true,
        NULL, 7},
    {"EXTEND_TIMEOUT_USEC=86400000000", 0, SV_OK, false, false, false, false,
        true, NULL, MAXU},
    {"EXTEND_TIMEOUT_USEC=86400000001", 0, SV_OK, false, false, false, false,
        true, NULL, MAXU},
    {"EXTEND_TIMEOUT_USEC=18446744073709551615", 0, SV_OK, false, false, false,
        false, true, NULL, MAXU},
    {"EXTEND_TIMEOUT_USEC=999999999999999999999999999999", 0, SV_OK, false,
        false, false, false, true, NULL, MAXU},
    /* STATUS cleaning: control characters, invalid UTF-8, C1 controls. */
    {"STATUS=a\tb\x1b[31mc\x7f", 0, SV_OK, false, false, false, true, false,
        "a?b?[31mc?", 0},
    {"STATUS=caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 0, SV_OK, false,
        false, false, true, false, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
        0},
    {"STATUS=\xff\xc3(", 0, SV_OK, false, false, false, true, false,
        "?"
        "?(",
        0},
    {"STATUS=\xc0\xaf|\xed\xa0\x80|\xf4\x90\x80\x80", 0, SV_OK, false, false,
        false, true, false, "??|???|????", 0},
    {"STATUS=x\xc2\x85y", 0, SV_OK, false, false, false, true, false, "x?y",
        0},
    {"STATUS=cut\xe2\x82", 0, SV_OK, false, false, false, true, false, "cut??",
        0},
    /* CRLF line endings; a lone CR inside a value is a control char. */
    {"READY=1\r\nSTATUS=ok\r\n", 0, SV_OK, true, false, false, true, false,
        "ok", 0},
    {"STATUS=a\rb", 0, SV_OK, false, false, false, true, false, "a?b", 0},
    /* Empty datagrams and blank lines set nothing. */
    {"", 0, SV_OK, false, false, false, false, false, NULL, 0},
    {"\n\n\r\n", 0, SV_OK, false, false, false, false, false, NULL, 0},
    /* An embedded NUL refuses the whole datagram. */
    {"READY=1\0STOPPING=1", 18, SV_EBADREQ, false, false, false, false, false,
        NULL, 0},
    {"READY=1\nSTATUS=a\0", 17, SV_EBADREQ, false, false, false, false, false,
        NULL, 0},
};

/* check_case parses one case and compares every field. */
static void
check_case(const parse_case *pc, size_t idx)
{
	svd_notify_msg m;
	size_t         len = pc->len != 0 ? pc->len : strlen(pc->in);
	sv_err         rv;

	memset(&m, 0x5a, sizeof(m)); /* parse must clear everything */
	rv = svd_notify_parse(pc->in, len, &m);
	if (rv != pc->rv || m.ready != pc->ready || m.stopping != pc->stopping
	    || m.watchdog != pc->watchdog || m.has_status != pc->has_status
	    || m.has_extend != pc->has_extend
	    || m.extend_usec != (pc->has_extend ? pc->extend : 0)
	    || (pc->has_status && strcmp(m.status, pc->status) != 0)
	    || (!pc->has_status && m.status[0] != '\0') || m.pid != 0
	    || (rv == SV_OK) != (m.why == NULL)) {
		fail_msg("case %zu (%.40s): rv %d ready %d stopping %d "
		         "watchdog %d status %d \"%s\" extend %d %llu",
		    idx, pc->in, (int) rv, m.ready, m.stopping, m.watchdog,
		    m.has_status, m.status, m.has_extend,
		    (unsigned long long) m.extend_usec);
	}
}

static void
test_parse_table(void **state)
{
	size_t i;

	(void) state;
	for (i = 0; i < sizeof(parse_cases) / sizeof(parse_cases[0]); i++) {
		check_case(&parse_cases[i], i);
	}
}

/* STATUS longer than the field is cut, on a character boundary. */
static void
test_parse_status_truncated(void **state)
{
	char           buf[600];
	svd_notify_msg m;
	int            n;

	(void) state;
	n = snprintf(buf, sizeof(buf), "READY=1\nSTATUS=");
	memset(buf + n, 'a', 300);
	memcpy(buf + n + 300, "\nSTOPPING=1", 11);
	assert_int_equal(svd_notify_parse(buf, (size_t) n + 311, &m), SV_OK);
	assert_true(m.has_status && m.ready && m.stopping);
	assert_int_equal(strlen(m.status), SVD_NOTIFY_STATUS_MAX);
	assert_int_equal(strspn(m.status, "a"), SVD_NOTIFY_STATUS_MAX);

	/* 254 ASCII bytes, then a 2-byte character that no longer fits. */
	n = snprintf(buf, sizeof(buf), "STATUS=");
	memset(buf + n, 'b', SVD_NOTIFY_STATUS_MAX - 1);
	memcpy(buf + n + SVD_NOTIFY_STATUS_MAX - 1, "\xc3\xa9zz", 4);
	assert_int_equal(
	    svd_notify_parse(buf, (size_t) n + SVD_NOTIFY_STATUS_MAX + 3, &m),
	    SV_OK);
	assert_int_equal(strlen(m.status), SVD_NOTIFY_STATUS_MAX - 1);

	/* 253 bytes, then a 2-byte character that fits exactly. */
	n = snprintf(buf, sizeof(buf), "STATUS=");
	memset(buf + n, 'b', SVD_NOTIFY_STATUS_MAX - 2);
	memcpy(buf + n + SVD_NOTIFY_STATUS_MAX - 2, "\xc3\xa9zz", 4);
	assert_int_equal(
	    svd_notify_parse(buf, (size_t) n + SVD_NOTIFY_STATUS_MAX + 2, &m),
	    SV_OK);
	assert_int_equal(strlen(m.status), SVD_NOTIFY_STATUS_MAX);
	assert_memory_equal(
	    m.status + SVD_NOTIFY_STATUS_MAX - 2, "\xc3\xa9", 2);
}

/* The size bound: 4096 bytes parse, 4097 do not. */
static void
test_parse_size_bound(void **state)
{
	static char    buf[SVD_NOTIFY_MAX_DGRAM + 1];
	svd_notify_msg m;

	(void) state;
	memset(buf, '\n', sizeof(buf));
	memcpy(buf, "READY=1", 7);
	assert_int_equal(
	    svd_notify_parse(buf, SVD_NOTIFY_MAX_DGRAM, &m), SV_OK);
	assert_true(m.ready);
	assert_int_equal(
	    svd_notify_parse(buf, SVD_NOTIFY_MAX_DGRAM + 1, &m), SV_EBADREQ);
	assert_false(m.ready);
	assert_non_null(m.why);
}

/* The line bound counts assignments, not blank lines. */
static void
test_parse_line_bound(void **state)
{
	char           buf[SVD_NOTIFY_MAX_DGRAM];
	size_t         len = 0;
	svd_notify_msg m;
	int            i;

	(void) state;
	for (i = 0; i < SVD_NOTIFY_MAX_LINES - 1; i++) {
		memcpy(buf + len, "X=1\n", 4);
		len += 4;
	}
	memcpy(buf + len, "READY=1\n", 8);
	len += 8;
	assert_int_equal(svd_notify_parse(buf, len, &m), SV_OK);
	assert_true(m.ready);
	memcpy(buf + len, "\n\n\n\r\n", 5); /* blank lines do not count */
	assert_int_equal(svd_notify_parse(buf, len + 5, &m), SV_OK);
	assert_true(m.ready);
	memcpy(buf + len, "Y=1", 3); /* one assignment too many */
	assert_int_equal(svd_notify_parse(buf, len + 3, &m), SV_EBADREQ);
	assert_false(m.ready);
	assert_non_null(m.why);
}

/* ------------------------------------------------------------------ */
/* Socket                                                             */
/* ------------------------------------------------------------------ */

typedef struct fixture {
	char        dir[64];
	char        path[128];
	svd_notify *n;
} fixture;

/* fx_path writes DIR/name into out. */
static void
fx_path(const fixture *fx, const char *name, char *out, size_t outlen)
{
	int w = snprintf(out, outlen, "%s/%s", fx->dir, name);

	assert_true(w > 0 && (size_t) w < outlen);
}

static int
setup(void **state)
{
	fixture *fx = calloc(1, sizeof(*fx));
	char     err[256];

	assert_non_null(fx);
	assert_int_equal(
	    sv_tmpdir(fx->dir, sizeof(fx->dir), "sv-test-notify"), 0);
	fx_path(fx, "notify.sock", fx->path, sizeof(fx->path));
	if (svd_notify_open(fx->path, &fx->n, err, sizeof(err)) != SV_OK) {
		fail_msg("open: %s", err);
	}
	*state = fx;
	return 0;
}

static int
teardown(void **state)
{
	fixture       *fx = *state;
	DIR           *d;
	struct dirent *e;
	char           p[512];

	svd_notify_close(fx->n);
	/* Remove whatever a test left behind in its own directory. */
	if ((d = opendir(fx->dir)) != NULL) {
		while ((e = readdir(d)) != NULL) {
			if (strcmp(e->d_name, ".") != 0
			    && strcmp(e->d_name, "..") != 0) {
				snprintf(
				    p, sizeof(p), "%s/%s", fx->dir, e->d_name);
				unlink(p);
			}
		}
		closedir(d);
	}
	rmdir(fx->dir);
	free(fx);
	return 0;
}

/*
 * send_dgram sends len bytes to the socket at path from a fresh socket,
 * with nfds descriptors attached (SCM_RIGHTS) when nfds > 0. Returns what
 * sendmsg returns.
 */
static ssize_t
send_dgram(
    const char *path, const void *buf, size_t len, const int *fds, size_t nfds)
{
	struct sockaddr_un sa  = {.sun_family = AF_UNIX};
	struct iovec       iov = {.iov_base = (void *) buf, .iov_len = len};
	struct msghdr      mh  = {.msg_name = &sa,
	          .msg_namelen              = sizeof(sa),
	          .msg_iov                  = &iov,
	          .msg_iovlen               = 1};
	char              *ctl = NULL;
	ssize_t            r;
	int                fd, e;

	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (nfds > 0) {
		struct cmsghdr *c;

		ctl = calloc(1, CMSG_SPACE(sizeof(int) * nfds));
		assert_non_null(ctl);
		mh.msg_control    = ctl;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c                 = CMSG_FIRSTHDR(&mh);
		c->cmsg_level     = SOL_SOCKET;
		c->cmsg_type      = SCM_RIGHTS;
		c->cmsg_len       = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	r = sendmsg(fd, &mh, MSG_NOSIGNAL);
	e = errno;
	close(fd);
	free(ctl);
	errno = e;
	return r;
}

/* send_str sends a NUL-free string as one datagram. */
static void
send_str(const char *path, const char *s)
{
	assert_int_equal(
	    send_dgram(path, s, strlen(s), NULL, 0), (ssize_t) strlen(s));
}

/* wait_readable polls the notify socket for up to 5 s. */
static void
wait_readable(svd_notify *n)
{
	struct pollfd pfd = {.fd = svd_notify_fd(n), .events = POLLIN};

	assert_int_equal(poll(&pfd, 1, 5000), 1);
	assert_true(pfd.revents & POLLIN);
}

/* count_fds counts this process's open descriptors. */
static int
count_fds(void)
{
	DIR           *d = opendir("/proc/self/fd");
	struct dirent *e;
	int            cnt = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		cnt += e->d_name[0] != '.';
	}
	closedir(d);
	return cnt;
}

/* Nothing queued: SV_EBUSY, and the socket is not readable. */
static void
test_recv_empty(void **state)
{
	fixture       *fx  = *state;
	struct pollfd  pfd = {.fd = svd_notify_fd(fx->n), .events = POLLIN};
	svd_notify_msg m;

	assert_int_equal(poll(&pfd, 1, 0), 0);
	assert_int_equal(svd_notify_recv(fx->n, &m), SV_EBUSY);
	assert_string_equal(svd_notify_path(fx->n), fx->path);
}

/* The sender is this process, whatever MAINPID claims. */
static void
test_recv_own_pid(void **state)
{
	fixture       *fx = *state;
	svd_notify_msg m;

	send_str(fx->path, "MAINPID=1\nREADY=1\nSTATUS=up\n");
	wait_readable(fx->n);
	assert_int_equal(svd_notify_recv(fx->n, &m), SV_OK);
	assert_int_equal(m.pid, getpid());
	assert_int_equal(m.uid, getuid());
	assert_true(m.ready);
	assert_string_equal(m.status, "up");
	assert_null(m.why);
	assert_int_equal(svd_notify_recv(fx->n, &m), SV_EBUSY);
}

/* A forked child's datagram carries the child's pid, not its claim. */
static void
test_recv_child_pid(void **state)
{
	fixture       *fx = *state;
	svd_notify_msg m;
	pid_t          child;
	int            st;

	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		char msg[64];
		int  w = snprintf(msg, sizeof(msg), "MAINPID=%d\nSTOPPING=1",
		     (int) getppid());

		_exit(send_dgram(fx->path, msg, (size_t) w, NULL, 0) == w ? 0
		                                                          : 1);
	}
	wait_readable(fx->n);
	assert_int_equal(svd_notify_recv(fx->n, &m), SV_OK);
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(m.pid, child);
	assert_int_not_equal(m.pid, getpid());
	assert_true(m.stopping);
}

/* One descriptor attached: refused, and closed in the receiver. */
static void
test_recv_fd_refused(void **state)
{
	fixture       *fx = *state;
	svd_notify_msg m;
	int            p[2], before;
	char           c;

	assert_int_equal(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
	before = count_fds();
	assert_int_equal(send_dgram(fx->path, "READY=1", 7, &p[1], 1), 7);
	wait_readable(fx->n);
	assert_int_equal(svd_notify_recv(fx->n, &m), SV_EBADREQ);
	assert_false(m.ready);
	assert_int_equal(m.pid, getpid()); /* still known, for the log */
	assert_non_null(strstr(m.why, "descriptor"));
	assert_int_equal(count_fds(), before);
	/* The received copy of the write end is gone: closing ours is EOF. */
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 0);
	close(p[0]);
	assert_int_equal(svd_notify_recv(fx->n, &m), SV_EBUSY);
}

/* More descriptors than the control buffer holds: none leak. */
static void
test_recv_many_fds_refused(void **state)
{
	fixture       *fx = *state;
	svd_notify_msg m;
	int            fds[40], before, i;

	for (i = 0; i < 40; i++) {
		fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		assert_true(fds[i] >= 0);
	}
	before = count_fds();
	assert_int_equal(send_dgram(fx->path, "READY=1", 7, fds, 40), 7);
	wait_readable(fx->n);
	assert_int_equal(svd_notify_recv(fx->n, &m), SV_EBADREQ);
	assert_false(m.ready);
	assert_int_equal(count_fds(), before);
	for (i = 0; i < 40; i++) {
		close(fds[i]);
	}
}

/* Over 4096 bytes: dropped whole; exactly 4096: accepted. */
static void
test_recv_oversize(void **state)
{
	fixture       *fx = *state;
	static char    big[SVD_NOTIFY_MAX_DGRAM + 1000];
	svd_notify_msg m;

	memset(big, '\n', sizeof(big));
	memcpy(big, "READY=1", 7);
	assert_int_equal(send_dgram(fx->path, big, sizeof(big), NULL, 0),
	    (ssize_t) sizeof(big));
	wait_readable(fx->n);
	assert_int_equal(svd_notify_recv(fx->n, &m), SV_EBADREQ);
	assert_false(m.ready);
	assert_int_equal(m.pid, getpid());
	assert_int_equal(svd_notify_recv(fx->n, &m), SV_EBUSY);

	assert_int_equal(
	    send_dgram(fx->path, big, SVD_NOTIFY_MAX_DGRAM + 1, NULL, 0),
	    SVD_NOTIFY_MAX_DGRAM + 1);
	assert_int_equal(svd_notify_recv(fx->n, &m), SV_EBADREQ);

	assert_int_equal(
	    send_dgram(fx->path, big, SVD_NOTIFY_MAX_DGRAM, NULL, 0),
	    SVD_NOTIFY_MAX_DGRAM);
	assert_int_equal(svd_notify_recv(fx->n, &m), SV_OK);
	assert_true(m.ready);
}

/* A NUL byte on the wire drops the datagram; the next one still counts. */
static void
test_recv_nul_and_next(void **state)
{
	fixture       *fx = *state;
	svd_notify_msg m;

	assert_int_equal(
	    send_dgram(fx->path, "READY=1\0X", 9, NULL, 0), (ssize_t) 9);
	send_str(fx->path, "WATCHDOG=1");
	send_str(fx->path, "");
	wait_readable(fx->n);
	assert_int_equal(svd_notify_recv(fx->n, &m), SV_EBADREQ);
	assert_false(m.ready);
	assert_int_equal(svd_notify_recv(fx->n, &m), SV_OK);
	assert_true(m.watchdog);
	assert_int_equal(svd_notify_recv(fx->n, &m), SV_OK); /* empty */
	assert_false(m.watchdog || m.ready || m.has_status);
	assert_int_equal(m.pid, getpid());
	assert_int_equal(svd_notify_recv(fx->n, &m), SV_EBUSY);
}

/* The file is a socket with mode 0600, even with umask 0. */
static void
test_open_mode(void **state)
{
	fixture    *fx = *state;
	svd_notify *n2;
	struct stat st;
	char        p[128], err[256];
	mode_t      old;

	assert_int_equal(lstat(fx->path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);

	fx_path(fx, "umask0.sock", p, sizeof(p));
	old = umask(0);
	assert_int_equal(svd_notify_open(p, &n2, err, sizeof(err)), SV_OK);
	umask(old);
	assert_int_equal(lstat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	svd_notify_close(n2);
	assert_int_equal(lstat(p, &st), -1);
	assert_int_equal(errno, ENOENT);
}

/* A stale socket file is replaced; a live one and a plain file are not. */
static void
test_open_existing(void **state)
{
	fixture           *fx = *state;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	svd_notify        *n2 = (svd_notify *) 1;
	svd_notify_msg     m;
	struct stat        st;
	char               p[128], err[256];
	int                fd;

	/* Live: our fixture's socket. */
	assert_int_equal(
	    svd_notify_open(fx->path, &n2, err, sizeof(err)), SV_EBUSY);
	assert_null(n2);
	assert_non_null(strstr(err, fx->path));
	send_str(fx->path, "READY=1");
	assert_int_equal(svd_notify_recv(fx->n, &m), SV_OK);
	assert_true(m.ready);

	/* Stale: a socket bound and closed. */
	fx_path(fx, "stale.sock", p, sizeof(p));
	memcpy(sa.sun_path, p, strlen(p) + 1);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
	close(fd);
	assert_int_equal(svd_notify_open(p, &n2, err, sizeof(err)), SV_OK);
	send_str(p, "STOPPING=1");
	assert_int_equal(svd_notify_recv(n2, &m), SV_OK);
	assert_true(m.stopping);
	svd_notify_close(n2);

	/* Not a socket: refused and left in place. */
	fx_path(fx, "plain", p, sizeof(p));
	fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(svd_notify_open(p, &n2, err, sizeof(err)), SV_EINVAL);
	assert_null(n2);
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISREG(st.st_mode));
}

/* Abstract, relative and overlong paths are refused. */
static void
test_open_bad_paths(void **state)
{
	svd_notify *n2;
	char        err[256], longp[200];

	(void) state;
	assert_int_equal(
	    svd_notify_open("@supervise-notify", &n2, err, sizeof(err)),
	    SV_EINVAL);
	assert_null(n2);
	assert_int_equal(
	    svd_notify_open("notify.sock", &n2, err, sizeof(err)), SV_EINVAL);
	memset(longp, 'x', sizeof(longp) - 1);
	longp[0]                 = '/';
	longp[sizeof(longp) - 1] = '\0';
	assert_int_equal(
	    svd_notify_open(longp, &n2, err, sizeof(err)), SV_EINVAL);
	assert_non_null(strstr(err, "longer"));
	assert_int_equal(svd_notify_open(NULL, &n2, NULL, 0), SV_EINVAL);
}

/* Close removes only the file it bound, not a successor's. */
static void
test_close_keeps_successor(void **state)
{
	fixture           *fx = *state;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat        st;
	int                fd;

	assert_int_equal(unlink(fx->path), 0);
	memcpy(sa.sun_path, fx->path, strlen(fx->path) + 1);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
	svd_notify_close(fx->n);
	fx->n = NULL;
	assert_int_equal(lstat(fx->path, &st), 0);
	close(fd);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_table),
	    cmocka_unit_test(test_parse_status_truncated),
	    cmocka_unit_test(test_parse_size_bound),
	    cmocka_unit_test(test_parse_line_bound),
	    cmocka_unit_test_setup_teardown(test_recv_empty, setup, teardown),
	    cmocka_unit_test_setup_teardown(
	        test_recv_own_pid, setup, teardown),
	    cmocka_unit_test_setup_teardown(
	        test_recv_child_pid, setup, teardown),
	    cmocka_unit_test_setup_teardown(
	        test_recv_fd_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(
	        test_recv_many_fds_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(
	        test_recv_oversize, setup, teardown),
	    cmocka_unit_test_setup_teardown(
	        test_recv_nul_and_next, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_open_mode, setup, teardown),
	    cmocka_unit_test_setup_teardown(
	        test_open_existing, setup, teardown),
	    cmocka_unit_test_setup_teardown(
	        test_open_bad_paths, setup, teardown),
	    cmocka_unit_test_setup_teardown(
	        test_close_keeps_successor, setup, teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
