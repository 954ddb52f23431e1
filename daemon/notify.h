/*
 * notify.h — the systemd notify socket: supervised accepts sd_notify(3)
 * datagrams from unmodified programs on NOTIFY_SOCKET.
 *
 * The format is systemd's: one AF_UNIX SOCK_DGRAM datagram holds
 * newline-separated KEY=VALUE assignments. supervised understands READY=1,
 * STOPPING=1, WATCHDOG=1, STATUS=text and EXTEND_TIMEOUT_USEC=n; any other
 * key (MAINPID, FDSTORE, ...), any other value of a known key and any line
 * without '=' is ignored, as systemd ignores what it does not know. Later
 * assignments of the same key win.
 *
 * Attribution: the sender is the pid and uid the kernel attaches to the
 * datagram (SO_PASSCRED, SCM_CREDENTIALS), never anything the datagram says;
 * MAINPID is ignored. The kernel only lets a sender claim another pid with
 * CAP_SYS_ADMIN, so an unprivileged worker cannot speak for another one.
 * A worker's pid stays its own until supervised reaps it, so a caller that
 * drains this socket (svd_notify_recv until SV_EBUSY) before it reaps exited
 * children never credits a dead worker's datagram to the process that gets
 * its pid next.
 *
 * Bounds: a datagram over SVD_NOTIFY_MAX_DGRAM bytes, with more than
 * SVD_NOTIFY_MAX_LINES lines, with a NUL byte, without credentials or with
 * file descriptors attached (SCM_RIGHTS; they are closed) is dropped whole.
 * STATUS keeps at most SVD_NOTIFY_STATUS_MAX bytes of valid UTF-8 with
 * control characters replaced; EXTEND_TIMEOUT_USEC is capped. The socket's
 * receive buffer is fixed (SVD_NOTIFY_RCVBUF), so a flood makes senders wait
 * or fail, never the daemon grow.
 *
 * The socket is a filesystem path (mode 0600, in the daemon's socket_dir):
 * abstract names ('@...') are refused because nothing restricts who can
 * send to them. Not thread-safe: one thread (the daemon's loop) owns it.
 */
#ifndef SVD_NOTIFY_H
#define SVD_NOTIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "supervise/supervise.h"

/* Largest datagram accepted, in bytes (systemd's own limit). */
#define SVD_NOTIFY_MAX_DGRAM 4096
/* Most lines (non-empty assignments) in one datagram. */
#define SVD_NOTIFY_MAX_LINES 128
/* Most bytes of STATUS text kept (status[] holds this plus a NUL). */
#define SVD_NOTIFY_STATUS_MAX 255
/* EXTEND_TIMEOUT_USEC values above this (24 h) are capped to it. */
#define SVD_NOTIFY_EXTEND_MAX_USEC (24ull * 3600ull * 1000000ull)
/* Receive buffer of the socket, in bytes. */
#define SVD_NOTIFY_RCVBUF (256 * 1024)

typedef struct svd_notify svd_notify;

/* One datagram, parsed. Fields not sent are false or zero. */
typedef struct svd_notify_msg {
	pid_t       pid; /* sender, from SCM_CREDENTIALS; 0 if unknown */
	uid_t       uid; /* sender's uid, from SCM_CREDENTIALS */
	bool        ready; /* READY=1 */
	bool        stopping; /* STOPPING=1 */
	bool        watchdog; /* WATCHDOG=1 */
	bool        has_status; /* STATUS= was sent (possibly empty) */
	bool        has_extend; /* a valid EXTEND_TIMEOUT_USEC= was sent */
	uint64_t    extend_usec; /* capped at SVD_NOTIFY_EXTEND_MAX_USEC */
	char        status[SVD_NOTIFY_STATUS_MAX + 1]; /* NUL-terminated */
	const char *why; /* SV_EBADREQ: static reason for the drop */
} svd_notify_msg;

/*
 * svd_notify_parse parses the len bytes at buf (not NUL-terminated) as one
 * notify datagram into *m, which it clears first (pid and uid included).
 * Returns SV_OK (an empty datagram is valid and sets nothing) or SV_EBADREQ
 * with m->why set: over SVD_NOTIFY_MAX_DGRAM bytes, a NUL byte, or over
 * SVD_NOTIFY_MAX_LINES lines. Pure: no I/O, no allocation.
 */
sv_err svd_notify_parse(const char *buf, size_t len, svd_notify_msg *m);

/*
 * svd_notify_open creates the notify socket bound at path (an absolute
 * filesystem path shorter than sun_path), mode 0600, close-on-exec and
 * non-blocking, with SO_PASSCRED on. A stale socket file at path is
 * replaced; a socket that still has a reader, or a file that is not a
 * socket, is left alone. On SV_OK *np belongs to the caller (free with
 * svd_notify_close); on error *np is NULL and err holds one line. Errors:
 * SV_EINVAL (bad path, or a non-socket file there), SV_EBUSY (another
 * process serves that socket), SV_ENOMEM, SV_ESYSTEM. Never blocks.
 */
sv_err svd_notify_open(
    const char *path, svd_notify **np, char *err, size_t errlen);

/* svd_notify_fd returns the socket's descriptor, for epoll (EPOLLIN). It
 * stays owned by n. */
int svd_notify_fd(const svd_notify *n);

/* svd_notify_path returns the bound path (the NOTIFY_SOCKET value to give
 * workers), valid until svd_notify_close. */
const char *svd_notify_path(const svd_notify *n);

/*
 * svd_notify_recv reads one queued datagram without blocking and parses it
 * into *m. Returns SV_OK (m filled, m->pid > 0), SV_EBUSY (nothing queued),
 * SV_EBADREQ (the datagram was consumed and must be dropped; m->why says
 * why, m->pid and m->uid are set when the kernel gave them; any descriptors
 * it carried are closed) or SV_ESYSTEM (recvmsg failed; errno is kept).
 * Call it until SV_EBUSY after each EPOLLIN, bounded by the caller's own
 * per-turn budget.
 */
sv_err svd_notify_recv(svd_notify *n, svd_notify_msg *m);

/* svd_notify_close closes the socket and removes its file if the file is
 * still the one it bound. NULL is ignored. */
void svd_notify_close(svd_notify *n);

#endif /* SVD_NOTIFY_H */
