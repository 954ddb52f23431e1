/*
 * notify.c — the systemd notify socket (see notify.h for the contract).
 *
 * Layout: the parser (line splitting, the known keys, STATUS cleaning,
 * EXTEND_TIMEOUT_USEC numbers), then the socket (open with stale-file
 * handling, recv with the credential and descriptor checks, close).
 *
 * Decisions:
 * - A datagram is applied whole or not at all: every check that drops it
 *   (size, NUL, line count, credentials, descriptors, truncation) runs
 *   before the caller sees any field.
 * - Descriptors sent with SCM_RIGHTS are received close-on-exec (so a spawn
 *   racing with us cannot inherit them) and closed at once; those that did
 *   not fit the control buffer are discarded by the kernel (MSG_CTRUNC).
 * - The mode is set with fchmod before bind (a socket's file takes the
 *   socket inode's mode, minus the umask) and again with chmod after, so
 *   the process-wide umask is never touched.
 * - STATUS text ends up in logs, JSON events and protobuf strings: it is
 *   kept only as valid UTF-8 without control characters, cut on a
 *   character boundary.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "notify.h"
#include "errf.h"

/* Most descriptors one datagram may bring in before MSG_CTRUNC. */
#define NOTIFY_MAX_FDS 16
/* Control buffer: the sender's credentials plus NOTIFY_MAX_FDS fds. */
#define NOTIFY_CTL_SIZE                   \
	(CMSG_SPACE(sizeof(struct ucred)) \
	    + CMSG_SPACE(sizeof(int) * NOTIFY_MAX_FDS))

struct svd_notify {
	int   fd;
	dev_t dev; /* identity of the socket file we bound */
	ino_t ino;
	char  path[sizeof(((struct sockaddr_un *) 0)->sun_path)];
	char  buf[SVD_NOTIFY_MAX_DGRAM + 1]; /* one more: detects oversize */
};

/* ------------------------------------------------------------------ */
/* Parser                                                             */
/* ------------------------------------------------------------------ */

/*
 * notify_utf8_len returns the length (2..4) of the valid UTF-8 sequence
 * that starts at s (n bytes available, s[0] >= 0x80), or 0 if it is not
 * one: stray continuation bytes, overlong forms, surrogates and code
 * points above U+10FFFF are invalid.
 */
static size_t
notify_utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t        len, i;

	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		lo  = c == 0xe0 ? 0xa0 : 0x80;
		hi  = c == 0xed ? 0x9f : 0xbf;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		lo  = c == 0xf0 ? 0x90 : 0x80;
		hi  = c == 0xf4 ? 0x8f : 0xbf;
	} else {
		return 0;
	}
	if (n < len || s[1] < lo || s[1] > hi) {
		return 0;
	}
	for (i = 2; i < len; i++) {
		if (s[i] < 0x80 || s[i] > 0xbf) {
			return 0;
		}
	}
	return len;
}

/*
 * notify_status copies the n bytes of src into dst (SVD_NOTIFY_STATUS_MAX
 * bytes plus a NUL): control characters (C0, DEL, C1) and invalid UTF-8
 * bytes become '?', and the copy stops before a character that would not
 * fit whole.
 */
static void
notify_status(char *dst, const char *src, size_t n)
{
	const unsigned char *s = (const unsigned char *) src;
	size_t               i = 0, o = 0, len;

	while (i < n) {
		const unsigned char *from = s + i;
		unsigned char        c    = s[i];

		if (c < 0x80) {
			len = 1;
			if (c < 0x20 || c == 0x7f) {
				from = (const unsigned char *) "?";
			}
		} else if ((len = notify_utf8_len(s + i, n - i)) == 0) {
			len  = 1; /* skip one bad byte */
			from = (const unsigned char *) "?";
		} else if (c == 0xc2 && s[i + 1] < 0xa0) {
			from = (const unsigned char *) "?"; /* C1 control */
		}
		/* A replacement is one byte wide; a character keeps its own.
		 */
		{
			size_t w = from == s + i ? len : 1;

			if (o + w > SVD_NOTIFY_STATUS_MAX) {
				break;
			}
			memcpy(dst + o, from, w);
			o += w;
		}
		i += len;
	}
	dst[o] = '\0';
}

/*
 * notify_usec parses a decimal number of microseconds (digits only, no
 * sign or spaces), capped at SVD_NOTIFY_EXTEND_MAX_USEC. False if it is
 * not a number.
 */
static bool
notify_usec(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t   i;

	if (n == 0) {
		return false;
	}
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9') {
			return false;
		}
		if (v <= SVD_NOTIFY_EXTEND_MAX_USEC) {
			v = v * 10 + (uint64_t) (s[i] - '0');
		}
	}
	*out = v > SVD_NOTIFY_EXTEND_MAX_USEC ? SVD_NOTIFY_EXTEND_MAX_USEC : v;
	return true;
}

/* notify_is reports whether the n bytes at s are exactly the string lit. */
static bool
notify_is(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

/* notify_line applies one assignment (without its line ending) to m. */
static void
notify_line(const char *line, size_t n, svd_notify_msg *m)
{
	const char *eq = memchr(line, '=', n);
	const char *val;
	size_t      klen, vlen;
	uint64_t    usec;

	if (eq == NULL) {
		return; /* not an assignment */
	}
	klen = (size_t) (eq - line);
	val  = eq + 1;
	vlen = n - klen - 1;
	if (notify_is(line, klen, "READY")) {
		m->ready = m->ready || notify_is(val, vlen, "1");
	} else if (notify_is(line, klen, "STOPPING")) {
		m->stopping = m->stopping || notify_is(val, vlen, "1");
	} else if (notify_is(line, klen, "WATCHDOG")) {
		m->watchdog = m->watchdog || notify_is(val, vlen, "1");
	} else if (notify_is(line, klen, "STATUS")) {
		m->has_status = true;
		notify_status(m->status, val, vlen);
	} else if (notify_is(line, klen, "EXTEND_TIMEOUT_USEC")) {
		if (notify_usec(val, vlen, &usec)) {
			m->has_extend  = true;
			m->extend_usec = usec;
		}
	}
	/* MAINPID and every other key: ignored. */
}

/* notify_drop clears m and records why the datagram is refused. */
static sv_err
notify_drop(svd_notify_msg *m, const char *why)
{
	memset(m, 0, sizeof(*m));
	m->why = why;
	return SV_EBADREQ;
}

sv_err
svd_notify_parse(const char *buf, size_t len, svd_notify_msg *m)
{
	size_t pos = 0, lines = 0;

	memset(m, 0, sizeof(*m));
	if (len > SVD_NOTIFY_MAX_DGRAM) {
		return notify_drop(m, "datagram over 4096 bytes");
	}
	if (len > 0 && memchr(buf, '\0', len) != NULL) {
		return notify_drop(m, "datagram contains a NUL byte");
	}
	while (pos < len) {
		const char *nl  = memchr(buf + pos, '\n', len - pos);
		size_t      end = nl != NULL ? (size_t) (nl - buf) : len;
		size_t      n   = end - pos;

		if (n > 0 && buf[pos + n - 1] == '\r') {
			n--; /* CRLF line ending */
		}
		if (n > 0) {
			if (++lines > SVD_NOTIFY_MAX_LINES) {
				return notify_drop(
				    m, "datagram has too many lines");
			}
			notify_line(buf + pos, n, m);
		}
		pos = end + 1;
	}
	return SV_OK;
}

/* ------------------------------------------------------------------ */
/* Socket                                                             */
/* ------------------------------------------------------------------ */

/*
 * notify_clear_stale makes room at sa's path: nothing there, or a socket
 * file nobody reads any more (a datagram connect is refused), which it
 * removes. A live socket or a file of another type is left alone.
 */
static sv_err
notify_clear_stale(const struct sockaddr_un *sa, char *err, size_t errlen)
{
	const char *path = sa->sun_path;
	struct stat st;
	int         probe, rc, e;

	if (lstat(path, &st) != 0) {
		if (errno == ENOENT) {
			return SV_OK;
		}
		return sv_errf(err, errlen, SV_ESYSTEM, "notify socket %s: %s",
		    path, strerror(errno));
	}
	if (!S_ISSOCK(st.st_mode)) {
		return sv_errf(err, errlen, SV_EINVAL,
		    "notify socket %s: exists and is not a socket", path);
	}
	if ((probe = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0) {
		return sv_errf(err, errlen, SV_ESYSTEM,
		    "notify socket %s: socket: %s", path, strerror(errno));
	}
	rc = connect(probe, (const struct sockaddr *) sa, sizeof(*sa));
	e  = errno;
	close(probe);
	if (rc == 0 || e == EPROTOTYPE) {
		return sv_errf(err, errlen, SV_EBUSY,
		    "notify socket %s: in use by another process", path);
	}
	if (e != ECONNREFUSED) {
		return sv_errf(err, errlen, SV_ESYSTEM,
		    "notify socket %s: connect: %s", path, strerror(e));
	}
	if (unlink(path) != 0 && errno != ENOENT) {
		return sv_errf(err, errlen, SV_ESYSTEM,
		    "notify socket %s: cannot remove stale socket: %s", path,
		    strerror(errno));
	}
	return SV_OK;
}

sv_err
svd_notify_open(const char *path, svd_notify **np, char *err, size_t errlen)
{
	struct sockaddr_un sa  = {.sun_family = AF_UNIX};
	int                one = 1, rcvbuf = SVD_NOTIFY_RCVBUF;
	struct stat        st;
	svd_notify        *n;
	sv_err             rv;

	*np = NULL;
	if (path == NULL || path[0] != '/') {
		return sv_errf(err, errlen, SV_EINVAL,
		    "notify socket %s: not an absolute path",
		    path != NULL ? path : "(null)");
	}
	if (strlen(path) >= sizeof(sa.sun_path)) {
		return sv_errf(err, errlen, SV_EINVAL,
		    "notify socket %s: path longer than %zu bytes", path,
		    sizeof(sa.sun_path) - 1);
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if ((n = calloc(1, sizeof(*n))) == NULL) {
		return sv_errf(
		    err, errlen, SV_ENOMEM, "notify socket: out of memory");
	}
	memcpy(n->path, sa.sun_path, sizeof(n->path));
	n->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (n->fd < 0) {
		rv = sv_errf(err, errlen, SV_ESYSTEM,
		    "notify socket %s: socket: %s", path, strerror(errno));
		free(n);
		return rv;
	}
	/* Credentials on before bind: no datagram can arrive without. */
	if (setsockopt(n->fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) != 0
	    || setsockopt(
	           n->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf))
	        != 0
	    || fchmod(n->fd, 0600) != 0) {
		rv = sv_errf(err, errlen, SV_ESYSTEM,
		    "notify socket %s: setup: %s", path, strerror(errno));
		goto fail;
	}
	if ((rv = notify_clear_stale(&sa, err, errlen)) != SV_OK) {
		goto fail;
	}
	if (bind(n->fd, (struct sockaddr *) &sa, sizeof(sa)) != 0) {
		rv = sv_errf(err, errlen, SV_ESYSTEM,
		    "notify socket %s: bind: %s", path, strerror(errno));
		goto fail;
	}
	if (chmod(path, 0600) != 0 || lstat(path, &st) != 0) {
		rv = sv_errf(err, errlen, SV_ESYSTEM,
		    "notify socket %s: chmod: %s", path, strerror(errno));
		unlink(path);
		goto fail;
	}
	n->dev = st.st_dev;
	n->ino = st.st_ino;
	*np    = n;
	return SV_OK;

fail:
	close(n->fd);
	free(n);
	return rv;
}

int
svd_notify_fd(const svd_notify *n)
{
	return n->fd;
}

const char *
svd_notify_path(const svd_notify *n)
{
	return n->path;
}

sv_err
svd_notify_recv(svd_notify *n, svd_notify_msg *m)
{
	union {
		struct cmsghdr align;
		char           buf[NOTIFY_CTL_SIZE];
	} ctl;
	struct iovec    iov = {.iov_base = n->buf, .iov_len = sizeof(n->buf)};
	struct msghdr   mh  = {.msg_iov = &iov,
	       .msg_iovlen              = 1,
	       .msg_control             = ctl.buf,
	       .msg_controllen          = sizeof(ctl.buf)};
	struct cmsghdr *c;
	struct ucred    cred    = {0};
	bool            hascred = false;
	size_t          nfds    = 0;
	ssize_t         r;
	sv_err          rv;

	memset(m, 0, sizeof(*m));
	/* MSG_TRUNC as an input flag: r is the datagram's real length. */
	do {
		r = recvmsg(
		    n->fd, &mh, MSG_DONTWAIT | MSG_TRUNC | MSG_CMSG_CLOEXEC);
	} while (r < 0 && errno == EINTR);
	if (r < 0) {
		return errno == EAGAIN || errno == EWOULDBLOCK ? SV_EBUSY
		                                               : SV_ESYSTEM;
	}
	/* Close every descriptor first, whatever else is wrong. */
	for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET) {
			continue;
		}
		if (c->cmsg_type == SCM_RIGHTS && c->cmsg_len >= CMSG_LEN(0)) {
			size_t cnt = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			size_t k;

			for (k = 0; k < cnt; k++) {
				int fd;

				memcpy(&fd, CMSG_DATA(c) + k * sizeof(int),
				    sizeof(fd));
				close(fd);
			}
			nfds += cnt;
		} else if (c->cmsg_type == SCM_CREDENTIALS
		    && c->cmsg_len >= CMSG_LEN(sizeof(cred))) {
			memcpy(&cred, CMSG_DATA(c), sizeof(cred));
			hascred = true;
		}
	}
	if (!hascred || cred.pid <= 0) {
		rv = notify_drop(m, "no sender credentials");
	} else if (nfds > 0 || (mh.msg_flags & MSG_CTRUNC) != 0) {
		rv = notify_drop(m, "file descriptors attached");
	} else if (r > SVD_NOTIFY_MAX_DGRAM
	    || (mh.msg_flags & MSG_TRUNC) != 0) {
		rv = notify_drop(m, "datagram over 4096 bytes");
	} else {
		rv = svd_notify_parse(n->buf, (size_t) r, m);
	}
	if (hascred && cred.pid > 0) {
		m->pid = cred.pid;
		m->uid = cred.uid;
	}
	return rv;
}

void
svd_notify_close(svd_notify *n)
{
	struct stat st;

	if (n == NULL) {
		return;
	}
	/* Remove the file only if it is still ours (not a newer daemon's). */
	if (lstat(n->path, &st) == 0 && S_ISSOCK(st.st_mode)
	    && st.st_dev == n->dev && st.st_ino == n->ino) {
		unlink(n->path);
	}
	close(n->fd);
	free(n);
}
