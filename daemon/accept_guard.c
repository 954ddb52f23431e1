/*
 * accept_guard.c — keep nng's listeners accepting under nng 1.5.2 (see
 * accept_guard.h for the bug).
 *
 * sendmsg() below interposes the C library's for this executable (libnng
 * calls it through its PLT; an executable's definition comes first in
 * symbol lookup). It calls the next sendmsg (libc's, or a sanitizer's
 * interceptor) and, only when that failed with EPIPE and the caller's
 * return address lies in a shared object named libnng, reports ECONNRESET
 * instead. Both mean "the peer is gone"; nng 1.5.2 maps EPIPE to
 * NNG_ECLOSED, which its listener mistakes for its own closing (#1518), and
 * ECONNRESET to NNG_ECONNRESET, after which it accepts again. Compiled only
 * against nng < 1.6 (the fix shipped in 1.6.0).
 *
 * The control socket no longer uses nng (server.c speaks the same wire
 * itself); the event socket (events.c, nng PUB) still does, and a
 * subscriber that hangs up during its handshake must not stop the events
 * for everyone. A probing guard thread that used to repair the control
 * socket's listener is gone with it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include <nng/nng.h>

#include "accept_guard.h"
#include "log.h"

#if NNG_MAJOR_VERSION == 1 && NNG_MINOR_VERSION < 6 \
    && !defined(SVD_GUARD_NO_EPIPE_FIX)
#define GUARD_EPIPE_FIX 1
#endif

void
svd_guard_check(void)
{
#ifdef GUARD_EPIPE_FIX
	/* sendmsg as libnng resolves it: ours, if interposed. */
	void *seen = dlsym(RTLD_DEFAULT, "sendmsg");
	void *mine = (void *) (uintptr_t) &sendmsg;
	if (seen != mine) {
		svd_log("accept guard: sendmsg is not interposed; the nng "
		        "1.5.2 bug #1518 workaround is inactive");
	}
#endif
}

#ifdef GUARD_EPIPE_FIX
/* The sendmsg this interposition forwards to (libc's, or a sanitizer's). */
typedef ssize_t (*guard_sendmsg_fn)(int, const struct msghdr *, int);

/* guard_next_sendmsg resolves the next sendmsg once (benign race: every
 * thread stores the same value). */
static guard_sendmsg_fn
guard_next_sendmsg(void)
{
	static guard_sendmsg_fn next;
	guard_sendmsg_fn        fn = __atomic_load_n(&next, __ATOMIC_ACQUIRE);

	if (fn == NULL) {
		void *sym = dlsym(RTLD_NEXT, "sendmsg");
		memcpy(&fn, &sym, sizeof(fn));
		__atomic_store_n(&next, fn, __ATOMIC_RELEASE);
	}
	return fn;
}

/*
 * sendmsg interposes the C library's (see the top of this file): same
 * contract, except that EPIPE seen by libnng becomes ECONNRESET. Callers
 * outside libnng get the next sendmsg's result unchanged.
 */
ssize_t
sendmsg(int fd, const struct msghdr *msg, int flags)
{
	guard_sendmsg_fn next = guard_next_sendmsg();
	ssize_t          n;

	if (next == NULL) {
		errno = ENOSYS;
		return -1;
	}
	n = next(fd, msg, flags);
	if (n < 0 && errno == EPIPE) {
		Dl_info info;
		void   *caller = __builtin_return_address(0);
		if (dladdr(caller, &info) != 0 && info.dli_fname != NULL
		    && strstr(info.dli_fname, "libnng") != NULL) {
			errno = ECONNRESET;
		} else {
			errno = EPIPE; /* dladdr may have changed it */
		}
	}
	return n;
}
#endif
