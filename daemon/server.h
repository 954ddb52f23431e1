/*
 * server.h — supervised's control socket: nng REP over ipc://, served by a
 * fixed set of contexts (the nng_ctx + nng_aio pattern), each answering one
 * request at a time through svd_sup_dispatch.
 *
 * The socket file is created with mode 0600 inside the 0700 socket
 * directory; requests larger than SVW_MAX_REQUEST close the sender's pipe
 * (nng's NNG_OPT_RECVMAXSZ); the caller of every request is identified by
 * the kernel credentials of its connection (NNG_OPT_IPC_PEER_PID/UID).
 * One connection cannot stall the others: at most 2 requests in flight per
 * connection (more are dropped), and a connection that does not take its
 * reply within 20 ms loses the reply and is refused until it hangs up
 * (see server.c).
 */
#ifndef SVD_SERVER_H
#define SVD_SERVER_H

#include <stddef.h>

#include "supervisor.h"

typedef struct svd_server svd_server;

/*
 * svd_server_start listens on url and starts serving sup. On SV_OK *srvp
 * belongs to the caller: stop and free it with svd_server_stop. On error
 * errbuf holds one line. Errors: SV_EBUSY (another server listens on url),
 * SV_ENOMEM, SV_ESYSTEM.
 */
sv_err svd_server_start(svd_sup *sup, const char *url, svd_server **srvp,
    char *errbuf, size_t errlen);

/*
 * svd_server_stop closes the socket (removing the socket file), waits for
 * every in-flight callback to finish, and frees srv. NULL is ignored.
 */
void svd_server_stop(svd_server *srv);

/*
 * svd_server_set_mode sets the mode of the socket file for every later
 * listen (a listener the accept guard recreates): 0600 by default, 0666 when
 * workers run as other users (main.c changes the current file itself).
 */
void svd_server_set_mode(svd_server *srv, int mode);

#endif /* SVD_SERVER_H */
