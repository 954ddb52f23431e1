/*
 * paths.h — where the control socket lives by default (internal).
 *
 * One rule shared by supervised, supervisectl and the client library, so a
 * daemon started without socket_dir and a client started without --socket or
 * $SUPERVISE_URL meet at the same place.
 */
#ifndef SV_PATHS_H
#define SV_PATHS_H

#include <stddef.h>

#include "supervise/supervise.h"

/* File name of the control socket inside the socket directory. */
#define SV_SOCKET_NAME "control.sock"

/*
 * svi_default_dir writes the default socket directory into buf:
 * $XDG_RUNTIME_DIR/supervise, /run/supervise for root, else
 * /tmp/supervise-UID. Errors: SV_ETOOLARGE if buf is too small.
 */
sv_err svi_default_dir(char *buf, size_t size);

/*
 * svi_url_for_dir writes "ipc://DIR/control.sock" into buf.
 * Errors: SV_ETOOLARGE if buf is too small.
 */
sv_err svi_url_for_dir(const char *dir, char *buf, size_t size);

#endif /* SV_PATHS_H */
