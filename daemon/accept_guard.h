/*
 * accept_guard.h — keeps the control socket accepting connections.
 *
 * nng 1.5.2 (Debian bookworm's) has a bug (nanomsg/nng#1518, fixed after
 * 1.5.2): a peer that disconnects during the SP handshake makes the ipc
 * listener stop accepting for good. Any local process that connects and
 * hangs up early, including a worker killed at the wrong moment, would
 * silently cut every later client off the supervisor.
 *
 * The guard detects that state and has the server recreate its listener.
 * Every SVD_GUARD_INTERVAL_MS it connects to the socket file and waits up to
 * SVD_GUARD_TIMEOUT_MS for the SP handshake and for the server to report the
 * pipe as accepted (svd_guard_accepted); otherwise the listener is stuck
 * (or gone), and the relisten callback runs.
 */
#ifndef SVD_ACCEPT_GUARD_H
#define SVD_ACCEPT_GUARD_H

#include <stdbool.h>

#include "supervise/supervise.h"

#define SVD_GUARD_INTERVAL_MS 500
#define SVD_GUARD_TIMEOUT_MS  500

typedef struct svd_guard svd_guard;

/* Recreates the listener; returns false if it could not (retried later). */
typedef bool (*svd_relisten_fn)(void *arg);

/*
 * svd_guard_start starts the guard thread probing url (ipc:// only). On
 * SV_OK *guardp belongs to the caller: stop it with svd_guard_stop. Errors:
 * SV_EINVAL (not ipc://), SV_ENOMEM, SV_ESYSTEM.
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
