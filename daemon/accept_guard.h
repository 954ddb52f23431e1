/*
 * accept_guard.h — keeps nng's listeners (the event socket's) accepting.
 *
 * nng 1.5.2 (Debian bookworm's) has a bug (nanomsg/nng#1518, fixed in nng
 * 1.6.0): a peer that disconnects during the SP handshake, before the
 * server has written its header, makes the server's write fail with EPIPE,
 * which nng maps to NNG_ECLOSED and hands to the socket's pending accept;
 * the socket takes that for "listener closed" and never accepts again, and
 * the listener cannot be freed or replaced without leaking.
 *
 * Prevention: while this module is linked into the daemon, sendmsg()
 * failing with EPIPE inside libnng reports ECONNRESET instead (see
 * accept_guard.c). nng maps that to NNG_ECONNRESET, which its listener
 * treats as a remote condition and keeps accepting: the bug cannot
 * trigger. The control socket is served without nng (server.c) and does
 * not need this.
 */
#ifndef SVD_ACCEPT_GUARD_H
#define SVD_ACCEPT_GUARD_H

/*
 * svd_guard_check logs one line if the sendmsg interposition is not in
 * effect (the workaround would then be inactive). Calling it also links
 * this module, and with it the interposition, into the daemon. No errors.
 */
void svd_guard_check(void);

#endif /* SVD_ACCEPT_GUARD_H */
