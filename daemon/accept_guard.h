/*
 * accept_guard.h — keeps the control socket accepting connections.
 *
 * nng 1.5.2 (Debian bookworm's) has a bug (nanomsg/nng#1518, fixed in nng
 * 1.6.0): a peer that disconnects during the SP handshake, before the
 * server has written its header, makes the server's write fail with EPIPE,
 * which nng maps to NNG_ECLOSED and hands to the socket's pending accept;
 * the socket takes that for "listener closed" and never accepts again.
 * Every later connection completes the handshake and then waits, unserved,
 * holding a descriptor; closing such a listener cannot free it (nng only
 * frees a listener once its handshaken connections are gone, and nothing
 * frees those), so each repair by "close and listen again" leaks the old
 * listening socket and every connection stuck in it.
 *
 * The guard therefore does two things:
 *  1. Prevention. While the guard module is linked into the daemon,
 *     sendmsg() failing with EPIPE inside libnng reports ECONNRESET instead
 *     (see accept_guard.c). nng maps that to NNG_ECONNRESET, which its
 *     listener treats as a remote condition and keeps accepting: the bug
 *     cannot trigger, and nothing is left to repair or to leak.
 *  2. Detection, cheaply. The guard watches the listening socket for new
 *     connections (a duplicate of its descriptor, read-only) and the socket
 *     directory for the socket file's removal (inotify). When a connection
 *     arrived but no pipe was accepted within SVD_GUARD_TIMEOUT_MS, or the
 *     file went away, it probes: it connects as an SP REQ peer, expects the
 *     server's header and the server reporting the pipe as accepted
 *     (svd_guard_accepted). An idle daemon is never woken by the guard.
 *     - no listener (file gone, connection refused) or a handshake that is
 *       never accepted: the relisten callback recreates the listener;
 *     - connected but no handshake, or no descriptor for the probe: the
 *       daemon is out of file descriptors (EMFILE) or overloaded;
 *       recreating the listener cannot help, so the guard logs it once,
 *       probes again after a back-off doubling from SVD_GUARD_BACKOFF_MIN_MS
 *       to SVD_GUARD_BACKOFF_MAX_MS, and logs the recovery.
 */
#ifndef SVD_ACCEPT_GUARD_H
#define SVD_ACCEPT_GUARD_H

#include <stdbool.h>

#include "supervise/supervise.h"

/* A new connection must become a pipe within this; also a probe's limit. */
#define SVD_GUARD_TIMEOUT_MS 500
/* Back-off between probes while the socket cannot accept (EMFILE). */
#define SVD_GUARD_BACKOFF_MIN_MS 1000
#define SVD_GUARD_BACKOFF_MAX_MS 60000

typedef struct svd_guard svd_guard;

/* Recreates the listener; returns false if it could not (retried later). */
typedef bool (*svd_relisten_fn)(void *arg);

/*
 * svd_guard_start starts the guard thread for url (ipc:// only), whose
 * listener must already be listening. On SV_OK *guardp belongs to the
 * caller: stop it with svd_guard_stop. Errors: SV_EINVAL (not ipc://),
 * SV_ENOMEM, SV_ESYSTEM (no thread, no eventfd).
 */
sv_err svd_guard_start(
    const char *url, svd_relisten_fn relisten, void *arg, svd_guard **guardp);

/* svd_guard_accepted records that the server socket accepted a pipe. Safe
 * from any thread, including nng's pipe callbacks (never blocks for long). */
void svd_guard_accepted(svd_guard *guard);

/* svd_guard_stop stops the thread (at most one probe timeout) and frees the
 * guard. NULL is ignored. */
void svd_guard_stop(svd_guard *guard);

#endif /* SVD_ACCEPT_GUARD_H */
