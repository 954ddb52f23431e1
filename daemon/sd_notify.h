/*
 * sd_notify.h — supervised speaking the sd_notify protocol to its OWN
 * service manager (systemd, or anything that sets NOTIFY_SOCKET): the
 * shell around sd_notify_plan.h.
 *
 * Not to be confused with notify.h, the notify socket the daemon serves
 * for its WORKERS (the NOTIFY_SOCKET a worker sees is always that one).
 * The manager's variables are read once, at start, and removed from the
 * daemon's environment at once (as sd_notify(3)'s unset_environment
 * does), before any worker's environment is built from it, so no worker
 * ever sees them: NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID.
 *
 * Design: one AF_UNIX SOCK_DGRAM socket, non-blocking and close-on-exec,
 * unconnected (each datagram is a sendto to the manager's address: a
 * manager that re-creates its socket is still reached). A send never
 * blocks and never fails the daemon: the first failure is logged, later
 * ones are counted and the count is logged at the end. What to send and
 * when is decided by sdn_plan_next (pure); this file reads the
 * environment, keeps the plan and does the sendto.
 */
#ifndef SVD_SD_NOTIFY_H
#define SVD_SD_NOTIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "sd_notify_plan.h"

typedef struct svd_sdn svd_sdn;

/*
 * svd_sdn_addr parses a NOTIFY_SOCKET value: an absolute path ("/run/...")
 * or an abstract name ("@name", the '@' standing for the leading NUL), of
 * 1..sizeof(sun_path)-1 bytes, into *sa and *salen. Returns NULL, or why
 * the value cannot be used (a static string). Pure.
 */
const char *svd_sdn_addr(
    const char *value, struct sockaddr_un *sa, socklen_t *salen);

/*
 * svd_sdn_usec parses WATCHDOG_USEC (decimal digits only, no sign, at most
 * 20 of them, no overflow) into *usec. Returns false for anything else.
 * Pure.
 */
bool svd_sdn_usec(const char *value, uint64_t *usec);

/*
 * svd_sdn_from_env reads NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID,
 * removes all three from the environment whatever their values, and
 * returns a notifier in *np when NOTIFY_SOCKET names a usable address
 * (else *np is NULL). The watchdog is on when WATCHDOG_USEC is a positive
 * number and WATCHDOG_PID is unset or our pid (sd_watchdog_enabled(3)'s
 * rule, read before any fork). msg (msglen bytes) gets one line worth
 * logging ("" when there is none): why a value was not used, or what the
 * notifier will do. On success *np belongs to the caller: svd_sdn_free.
 * Errors: none that stop the daemon (a socket that cannot be made leaves
 * *np NULL and says so in msg).
 */
void svd_sdn_from_env(svd_sdn **np, char *msg, size_t msglen);

/*
 * svd_sdn_begin starts the plan at now_ms; mainpid > 0 is sent with
 * READY=1 (the daemon forked into the background after its manager
 * started it). Call once, in the process that will serve.
 */
void svd_sdn_begin(svd_sdn *n, long mainpid, uint64_t now_ms);

/*
 * svd_sdn_tick sends what is due for in (at most one datagram) and
 * returns when it wants to be asked again at the latest (SDN_NEVER: only
 * when the input changes). Never blocks.
 */
uint64_t svd_sdn_tick(svd_sdn *n, const sdn_input *in);

/*
 * svd_sdn_reload — HOOK FOR THE RELOAD: call with true when a reload
 * starts and false when it is done; the next ticks send RELOADING=1 with
 * MONOTONIC_USEC=, then READY=1 (for a unit with Type=notify-reload).
 * Nothing calls it yet: SIGHUP is logged and ignored
 * (daemon/supervisor.c, sup_sig_cb).
 */
void svd_sdn_reload(svd_sdn *n, bool begin);

/* svd_sdn_free closes the socket and frees n (NULL is ignored), logging
 * how many datagrams could not be sent, if any. */
void svd_sdn_free(svd_sdn *n);

#endif /* SVD_SD_NOTIFY_H */
