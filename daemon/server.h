/*
 * server.h — supervised's control socket: SP REQ/REP over ipc:// (the wire
 * nng's ipc transport speaks, so nng REQ sockets and the libsupervise
 * client are served alike), served on the supervisor's loop thread with
 * no other thread involved (see server.c).
 *
 * The socket file is created with mode 0600 inside the 0700 socket
 * directory (main.c opens it to 0666 when workers run as other users); a
 * request larger than SVW_MAX_REQUEST closes its connection; the caller of
 * every request is identified by the kernel credentials of its connection
 * (SO_PEERCRED, and a pidfd of the connecting process). One connection cannot
 * stall the others: one request per connection per turn, at most 2 waiting for
 * a deferred answer (more are dropped), and a connection that does not take
 * its reply within 20 ms is closed. One peer cannot take every connection
 * (conn_admit.h: per-process and per-uid bounds, a reserve for root, the
 * daemon's uid and live workers); a refused connection gets
 * Error{EXHAUSTED} to its first request and is closed; a non-worker's
 * idle connection is closed after connection_idle_timeout_ms.
 */
#ifndef SVD_SERVER_H
#define SVD_SERVER_H

#include <stddef.h>

#include "supervisor.h"

typedef struct svd_server svd_server;

/*
 * svd_server_start listens on url (ipc://PATH; a socket file nobody
 * accepts on is replaced) and serves sup from sup's loop (svd_sup_loop)
 * while svd_sup_run runs it, with the connection bounds of cfg
 * (connection_idle_timeout_ms, connections_per_process,
 * connections_per_uid; borrowed, read at once; NULL: the defaults). On SV_OK
 * *srvp belongs to the caller: stop and free it with svd_server_stop, before
 * svd_sup_destroy. On error errbuf holds one line. Errors: SV_EINVAL (not an
 * ipc:// URL, or a path too long), SV_EBUSY (another server listens on url),
 * SV_ENOMEM, SV_ESYSTEM.
 */
sv_err svd_server_start(svd_sup *sup, const svd_config *cfg, const char *url,
    svd_server **srvp, char *errbuf, size_t errlen);

/*
 * svd_server_stop closes the socket (removing the socket file) and every
 * connection, and frees srv. Call after svd_sup_run has returned. NULL is
 * ignored.
 */
void svd_server_stop(svd_server *srv);

#endif /* SVD_SERVER_H */
