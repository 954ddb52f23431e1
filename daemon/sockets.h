/*
 * sockets.h — sockets a group owns and hands to every generation of its
 * workers (the Unix Workers pattern, seed 003; docs/config.md "sockets").
 *
 * The supervisor creates and binds each socket of a group when the group is
 * set up and keeps it open for the group's life, so work queued in it (a
 * datagram, a pending connection) outlives any one worker: a drained or
 * crashed worker's unserved jobs stay for the next one. Every worker gets
 * the sockets as descriptors 3, 4, ... in config order, and their names in
 * SUPERVISE_FDS ("jobs=3,ctl=4"). The descriptors are kept at 64 and above
 * in the daemon, so placing them at 3.. in a child never overwrites one
 * another.
 */
#ifndef SVD_SOCKETS_H
#define SVD_SOCKETS_H

#include <stddef.h>

#include "config.h"
#include "supervise/supervise.h"

typedef struct svd_sockets svd_sockets;

/*
 * svd_sockets_open creates, binds (and for stream and seqpacket sockets,
 * listens on) every socket of group g. A socket file left at a path by an
 * earlier daemon is replaced; any other file there is refused. On SV_OK
 * *sp (NULL when the group has no sockets) belongs to the caller: close it
 * with svd_sockets_close. Errors: SV_ESYSTEM (err says which socket and
 * why), SV_ENOMEM.
 */
sv_err svd_sockets_open(
    const svd_group_config *g, svd_sockets **sp, char *err, size_t errlen);

/* svd_sockets_fds returns the descriptors (count in *np) to place at 3..;
 * NULL and 0 for NULL. Valid until svd_sockets_close. */
const int *svd_sockets_fds(const svd_sockets *s, size_t *np);

/* svd_sockets_env returns "SUPERVISE_FDS=name=3,..." for a worker's
 * environment, or NULL for NULL. Valid until svd_sockets_close. */
const char *svd_sockets_env(const svd_sockets *s);

/* svd_sockets_close closes the sockets and removes their files. NULL is
 * ignored. */
void svd_sockets_close(svd_sockets *s);

#endif
