/*
 * supervise.h — what every libsupervise component shares: the library's
 * version and its single error type.
 *
 * Design: one error enum, sv_err, for the whole library. Codes 1..99 are the
 * protocol's ErrorCode values (1..12 are named today;
 * proto/supervise/v1/supervise.proto) so a typed error received on the wire
 * is returned unchanged to the caller; codes from 100 up are local
 * conditions (timeouts, connection failures, memory). The numbering is
 * stable: bindings and the protocol mirror it, so values are only ever
 * appended. The names and messages are generated from one table,
 * SV_ERR_MAP, in the manner of libuv's UV_ERRNO_MAP.
 */
#ifndef SUPERVISE_SUPERVISE_H
#define SUPERVISE_SUPERVISE_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define SV_API __attribute__((visibility("default")))
#else
#define SV_API
#endif

#define SV_VERSION_MAJOR  0
#define SV_VERSION_MINOR  1
#define SV_VERSION_PATCH  0
#define SV_VERSION_STRING "0.1.0"

/* The protocol major version this library speaks. */
#define SV_PROTOCOL_VERSION 1
/* The protocol minor version (additions only). */
#define SV_PROTOCOL_MINOR 5

/* X-macro: XX(name, value, message). Append only; never renumber. */
#define SV_ERR_MAP(XX)                                                   \
	XX(OK, 0, "success")                                             \
	XX(EBADREQ, 1, "bad request")                                    \
	XX(EVERSION, 2, "unsupported protocol version")                  \
	XX(EUNKNOWNMSG, 3, "unknown message")                            \
	XX(ENOTFOUND, 4, "not found")                                    \
	XX(EPERM, 5, "permission denied")                                \
	XX(EEXHAUSTED, 6, "resource exhausted")                          \
	XX(EBUSY, 7, "busy")                                             \
	XX(ETOOLARGE, 8, "too large")                                    \
	XX(EINTERNAL, 9, "internal error")                               \
	XX(ENOTWORKER, 10, "caller is not a supervised worker")          \
	XX(ECONFLICT, 11, "state changed (expected generation differs)") \
	XX(EDEADLINE, 12, "deadline passed before it could be served")   \
	XX(EINVAL, 100, "invalid argument")                              \
	XX(ENOMEM, 101, "out of memory")                                 \
	XX(ETIMEDOUT, 102, "timed out")                                  \
	XX(ECONNECT, 103, "cannot connect to supervisor")                \
	XX(ECLOSED, 104, "connection closed")                            \
	XX(EPROTO, 105, "protocol error in reply")                       \
	XX(ESYSTEM, 106, "system call failed")

/*
 * Values 1..SV_SERVER_ERR_MAX are the protocol's ErrorCode values: refusals
 * sent by the supervisor. A newer supervisor may send a code that this
 * library does not name; it arrives as that number (sv_err_name gives
 * "UNKNOWN") and is still a refusal. Values from 100 are local failures.
 */
#define SV_SERVER_ERR_MAX 99

/* sv_err is the only error type of the library. SV_OK is 0. */
typedef enum sv_err {
#define SV_ERR_ENUM_(name, value, msg) SV_##name = value,
	SV_ERR_MAP(SV_ERR_ENUM_)
#undef SV_ERR_ENUM_
} sv_err;

/*
 * sv_strerror returns a static, human-readable message for err. Unknown
 * values give "unknown error". The string is never freed.
 */
SV_API const char *sv_strerror(sv_err err);

/*
 * sv_err_name returns the static symbolic name of err without the SV_ prefix
 * ("ENOTFOUND"), or "UNKNOWN" for values outside the table. Bindings use it
 * to name their exception classes.
 */
SV_API const char *sv_err_name(sv_err err);

/* sv_version returns SV_VERSION_STRING of the library actually linked. */
SV_API const char *sv_version(void);

#ifdef __cplusplus
}
#endif

#endif /* SUPERVISE_SUPERVISE_H */
