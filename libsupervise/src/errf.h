/*
 * errf.h — the one way internal code fills a caller's message buffer and
 * returns a typed error: `return sv_errf(msg, len, SV_EINVAL, "...", ...)`.
 * Internal to the library and the daemon (not exported).
 */
#ifndef SV_ERRF_H
#define SV_ERRF_H

#include <stddef.h>

#include "supervise/supervise.h"

/* sv_errf formats fmt into buf (at most len bytes, always terminated;
 * nothing is written when buf is NULL or len is 0) and returns err. */
sv_err sv_errf(char *buf, size_t len, sv_err err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
