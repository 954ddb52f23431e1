/*
 * client.h — the libsupervise C client: talk to a supervisor over its
 * control socket.
 *
 * A worker uses it to ask "which worker am I"; supervisectl uses it for
 * administration; the Ruby, Python and Lua bindings wrap exactly this header.
 *
 * Transport: the supervisor listens with an nng REP socket on ipc://PATH.
 * The client speaks that wire protocol (SP REQ v0 over the ipc transport)
 * itself, on one AF_UNIX stream socket per handle: it starts no thread and
 * does not call nng, so nothing in it breaks in a child after fork().
 * Descriptors are close-on-exec and no write raises SIGPIPE.
 *
 * fork(): a handle may be used in a child at once, as prefork servers
 * (Unicorn, Puma, gunicorn) do after loading the application. The handle
 * records getpid() when it is opened. The first call made in another
 * process drops the inherited descriptor without writing to it (the
 * parent's connection goes on untouched), re-initialises the handle's lock
 * and connects anew within that call's deadline; the supervisor then sees
 * the child's own credentials (sv_client_whoami answers for the child).
 * Re-initialising the lock is sound because in the child only the thread
 * that called fork() exists: any other holder of the lock is gone, and the
 * state the lock protects (the connection) is discarded rather than
 * trusted. The check itself runs under a library lock that
 * pthread_atfork() handlers keep free across fork(), so threads the child
 * starts later cannot race it. sv_client_close in a child likewise closes
 * only the child's copy. Each process keeps using its own connection; the
 * handle is never shared live between processes.
 *
 * Design:
 *   - Every object is an opaque handle read through accessor functions, so a
 *     foreign-function interface never needs a struct layout.
 *   - Every call that talks to the supervisor takes timeout_ms, a relative
 *     deadline for the whole call (connect, send and receive):
 *     SV_TIMEOUT_INFINITE (-1) waits forever. For sv_client_open, 0 tries
 *     to connect once without waiting; for a request, 0 leaves no time for
 *     the reply and is only useful to test for SV_ETIMEDOUT.
 *   - A request reconnects first when it has no connection (after fork, or
 *     after the supervisor closed it); waiting for a supervisor that does
 *     not listen ends in SV_ETIMEDOUT, a socket that cannot be reached at
 *     all in SV_ECONNECT. When the connection is lost after the request was
 *     sent, a request that is safe to repeat (all but sv_client_restart) is
 *     sent again within the same deadline; sv_client_restart reports
 *     SV_ECLOSED instead, since the worker may have been restarted.
 *   - Errors are sv_err values (supervise.h). A typed error sent by the
 *     supervisor comes back as the same code (SV_ENOTFOUND, SV_ENOTWORKER...),
 *     and the supervisor's one-line message is kept in the client until its
 *     next call: sv_client_error_message().
 *   - Ownership: a function that returns a handle through an out-parameter
 *     gives it to the caller, who frees it with the free function named in the
 *     comment. Strings returned by accessors belong to the handle and live
 *     until that handle is freed. On error, out-parameters are left untouched.
 *   - A client handle serialises its calls with an internal lock, so it may be
 *     shared by threads, but calls on one handle do not overlap.
 */
#ifndef SUPERVISE_CLIENT_H
#define SUPERVISE_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "supervise/supervise.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SV_TIMEOUT_INFINITE (-1)

/* Name of the environment variable holding the control socket URL. */
#define SV_ENV_URL "SUPERVISE_URL"

typedef struct sv_client   sv_client;
typedef struct sv_hello    sv_hello;
typedef struct sv_identity sv_identity;
typedef struct sv_workers  sv_workers;

/* Kind of a worker or of a context frame; values match the protocol. */
typedef enum sv_kind {
	SV_KIND_UNSPECIFIED = 0,
	SV_KIND_PROCESS     = 1,
	SV_KIND_THREAD      = 2,
} sv_kind;

/* State of a worker slot; values match the protocol. */
typedef enum sv_state {
	SV_STATE_UNSPECIFIED = 0,
	SV_STATE_RUNNING     = 1,
	SV_STATE_STOPPING    = 2,
	SV_STATE_BACKOFF     = 3,
} sv_state;

/*
 * sv_client_open connects to the supervisor at url ("ipc:///path"). A NULL
 * or empty url means the value of $SUPERVISE_URL. The call retries the
 * connection until timeout_ms has passed (0: one attempt). It also waits
 * until then for the supervisor to answer the connection; a supervisor that
 * accepted it but has not answered by the deadline (stopped, or still
 * starting) still gives a handle, whose first call waits for the answer
 * under its own deadline (hanging up half-way would trip nng bug #1518 in
 * the supervisor). On SV_OK *clientp is a new handle that the caller closes
 * with sv_client_close().
 * Errors: SV_EINVAL (no url, url too long, or not an ipc:// URL: the
 * supervisor listens only on ipc://), SV_ECONNECT (nobody listening before
 * the deadline, or the socket is not a supervisor's), SV_ENOMEM,
 * SV_ESYSTEM. As there is no handle then, the reason is read with
 * sv_client_error_message(NULL).
 */
SV_API sv_err sv_client_open(
    sv_client **clientp, const char *url, int timeout_ms);

/*
 * sv_default_url writes the default control socket URL into buf (size
 * bytes): "ipc://DIR/control.sock" where DIR is $XDG_RUNTIME_DIR/supervise
 * when XDG_RUNTIME_DIR is an absolute path, /run/supervise for root, otherwise
 * /tmp/supervise-UID. supervised uses the same rule when its config names no
 * socket_dir. Errors: SV_EINVAL (NULL buf), SV_ETOOLARGE (buf too small).
 */
SV_API sv_err sv_default_url(char *buf, size_t size);

/* sv_client_close disconnects and frees client. NULL is ignored. */
SV_API void sv_client_close(sv_client *client);

/*
 * sv_client_error_message returns the detail of the last failed call on
 * client: the supervisor's message for a typed error, or a local
 * description. The string belongs to client and is valid until its next
 * call; it is "" after a successful call. With client NULL it returns why
 * the calling thread's last sv_client_open failed ("" if it succeeded),
 * valid until that thread's next sv_client_open.
 */
SV_API const char *sv_client_error_message(const sv_client *client);

/*
 * sv_client_hello exchanges Hello with the supervisor: the protocol version
 * it chose, its name, instance id and features. On SV_OK *hellop belongs to
 * the caller: free it with sv_hello_free().
 * Errors: SV_EVERSION, SV_ETIMEDOUT, SV_ECLOSED, SV_EPROTO, SV_ENOMEM.
 */
SV_API sv_err sv_client_hello(
    sv_client *client, int timeout_ms, sv_hello **hellop);

SV_API uint32_t    sv_hello_version(const sv_hello *h);
SV_API uint32_t    sv_hello_minor_version(const sv_hello *h);
SV_API const char *sv_hello_server_name(const sv_hello *h);
SV_API const char *sv_hello_supervisor_id(const sv_hello *h);
SV_API size_t      sv_hello_feature_count(const sv_hello *h);
/* sv_hello_feature returns feature i, or NULL when i is out of range. */
SV_API const char *sv_hello_feature(const sv_hello *h, size_t i);
/* sv_hello_free frees h. NULL is ignored. */
SV_API void sv_hello_free(sv_hello *h);

/*
 * sv_client_whoami asks the supervisor who the calling process is. The
 * supervisor identifies the caller by the kernel's peer credentials of the
 * connection (the caller or its nearest supervised ancestor), never by what
 * the caller claims. On SV_OK *identityp belongs to the caller: free it with
 * sv_identity_free().
 * Errors: SV_ENOTWORKER (the caller is not a supervised worker), SV_ETIMEDOUT,
 * SV_ECLOSED, SV_EPROTO, SV_ENOMEM.
 */
SV_API sv_err sv_client_whoami(
    sv_client *client, int timeout_ms, sv_identity **identityp);

SV_API const char *sv_identity_group(const sv_identity *id);
SV_API uint32_t    sv_identity_ordinal(const sv_identity *id);
SV_API uint64_t    sv_identity_generation(const sv_identity *id);
SV_API sv_kind     sv_identity_kind(const sv_identity *id);
SV_API int64_t     sv_identity_pid(const sv_identity *id);
SV_API const char *sv_identity_purpose(const sv_identity *id);
SV_API const char *sv_identity_supervisor_id(const sv_identity *id);
SV_API uint32_t    sv_identity_group_size(const sv_identity *id);
/* Number of context frames, outermost first. */
SV_API size_t sv_identity_frame_count(const sv_identity *id);
/*
 * sv_identity_frame reads frame i into the non-NULL out-parameters; *namep
 * belongs to id. Errors: SV_EINVAL when i is out of range.
 */
SV_API sv_err sv_identity_frame(const sv_identity *id, size_t i,
    sv_kind *kindp, uint32_t *ordinalp, const char **namep);
/*
 * sv_identity_parent reads the frame above the worker. Errors: SV_ENOTFOUND
 * for a top-level process, which has no parent.
 */
SV_API sv_err sv_identity_parent(const sv_identity *id, sv_kind *kindp,
    uint32_t *ordinalp, const char **namep);
/* sv_identity_free frees id. NULL is ignored. */
SV_API void sv_identity_free(sv_identity *id);

/*
 * sv_client_list lists the workers of group, or of every group when group
 * is NULL or "". On SV_OK *workersp belongs to the caller: free it with
 * sv_workers_free(). Errors: SV_ENOTFOUND (no such group), SV_EINVAL,
 * SV_ETIMEDOUT, SV_ECLOSED, SV_EPROTO, SV_ENOMEM.
 */
SV_API sv_err sv_client_list(sv_client *client, const char *group,
    int timeout_ms, sv_workers **workersp);

/*
 * sv_client_status reads one worker slot; the result is a list of one entry.
 * On SV_OK *workersp belongs to the caller: free it with sv_workers_free().
 * Errors: SV_ENOTFOUND (no such group, or no worker at that ordinal), plus
 * those of sv_client_list.
 */
SV_API sv_err sv_client_status(sv_client *client, const char *group,
    uint32_t ordinal, int timeout_ms, sv_workers **workersp);

SV_API size_t sv_workers_count(const sv_workers *w);
/* Accessors for entry i (0 <= i < count); out of range gives 0 / "". */
SV_API const char *sv_workers_group(const sv_workers *w, size_t i);
SV_API uint32_t    sv_workers_ordinal(const sv_workers *w, size_t i);
SV_API uint64_t    sv_workers_generation(const sv_workers *w, size_t i);
SV_API int64_t     sv_workers_pid(const sv_workers *w, size_t i);
SV_API sv_state    sv_workers_state(const sv_workers *w, size_t i);
SV_API uint64_t    sv_workers_uptime_ms(const sv_workers *w, size_t i);
SV_API const char *sv_workers_purpose(const sv_workers *w, size_t i);
SV_API uint64_t    sv_workers_restarts(const sv_workers *w, size_t i);
/* Last exit code of the slot's previous process, -1 if none or signalled. */
SV_API int32_t sv_workers_last_exit_code(const sv_workers *w, size_t i);
/* Signal that ended the slot's previous process, 0 if none. */
SV_API int32_t sv_workers_last_signal(const sv_workers *w, size_t i);
/* sv_workers_free frees w. NULL is ignored. */
SV_API void sv_workers_free(sv_workers *w);

/* sv_state_name returns "running", "stopping", "backoff" or "unknown". */
SV_API const char *sv_state_name(sv_state state);

/*
 * sv_client_scale sets the target size of group to count. Workers with
 * ordinals >= count are stopped and their ordinals released; missing
 * ordinals below count are started. The previous target is stored in
 * *previousp when previousp is not NULL.
 * Errors: SV_ENOTFOUND, SV_EEXHAUSTED (count above the group's maximum),
 * SV_EBUSY (supervisor shutting down), plus transport errors.
 */
SV_API sv_err sv_client_scale(sv_client *client, const char *group,
    uint32_t count, int timeout_ms, uint32_t *previousp);

/*
 * sv_client_stop stops every worker of group and releases its ordinals; the
 * group stays known and can be started again with sv_client_scale.
 * Errors: as sv_client_scale.
 */
SV_API sv_err sv_client_stop(
    sv_client *client, const char *group, int timeout_ms, uint32_t *previousp);

/*
 * sv_client_restart stops the worker at ordinal of group; the supervisor
 * starts its replacement with the same ordinal and the next generation.
 * Errors: SV_ENOTFOUND (no such group, or no worker at ordinal), SV_EBUSY,
 * plus transport errors.
 */
SV_API sv_err sv_client_restart(
    sv_client *client, const char *group, uint32_t ordinal, int timeout_ms);

#ifdef __cplusplus
}
#endif

#endif /* SUPERVISE_CLIENT_H */
