/*
 * client.h — the libsupervise C client: talk to a supervisor over its
 * control socket.
 *
 * A worker uses it to ask "which worker am I"; supervisectl uses it for
 * administration; the Ruby, Python and Lua bindings wrap this header (and
 * activity.h).
 *
 * Transport: the supervisor serves SP REQ/REP v0 over an AF_UNIX stream at
 * ipc://PATH (the wire format of nng's ipc transport, so a stock nng REQ
 * socket is served too). The client speaks that protocol itself, on one
 * AF_UNIX stream socket per handle: it starts no thread and does not call
 * nng, so nothing in it breaks in a child after fork(). Descriptors are
 * close-on-exec and no write raises SIGPIPE.
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
 *     sent, a request that is safe to repeat is sent again within the same
 *     deadline; one that is not reports SV_ECLOSED instead, since it may
 *     have taken effect. Not repeated: sv_client_restart (without its
 *     compare-and-swap), sv_client_start_worker,
 *     sv_client_terminate_worker, sv_client_create_group, sv_client_drain,
 *     sv_client_rolling_restart, sv_client_session_open and
 *     sv_client_pool_create; each function's comment says so too.
 *   - Errors are sv_err values (supervise.h). A typed error sent by the
 *     supervisor comes back as the same code (SV_ENOTFOUND, SV_ENOTWORKER...),
 *     and the supervisor's one-line message is kept in the client until its
 *     next call: sv_client_error_detail() copies it (safe on a shared
 *     handle), sv_client_error_message() points at it.
 *   - NULL handles: every accessor of a result handle (sv_hello_*,
 *     sv_identity_*, sv_workers_*, sv_groups_*, sv_event_*, sv_lease_*,
 *     sv_leases_*, sv_pools_*, sv_drain_report_*) given NULL returns what
 *     it returns for an index out of range: 0, "" (NULL for
 *     sv_hello_feature and sv_leases_at), -1 for sv_workers_last_exit_code,
 *     the UNSPECIFIED value of an enum; those that return sv_err return
 *     SV_EINVAL. Every call given a NULL client returns SV_EINVAL, and
 *     every free or close function ignores NULL. None of them crashes.
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

typedef struct sv_client    sv_client;
typedef struct sv_hello     sv_hello;
typedef struct sv_identity  sv_identity;
typedef struct sv_workers   sv_workers;
typedef struct sv_groups    sv_groups;
typedef struct sv_groupspec sv_groupspec;
typedef struct sv_events    sv_events;
typedef struct sv_event     sv_event;

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
	SV_STATE_STARTING    = 4, /* about to spawn, or readiness awaited */
	SV_STATE_FAILED   = 5, /* its group exceeded its restart intensity */
	SV_STATE_WAITING  = 6, /* stopped by a strategy restart */
	SV_STATE_IDLE     = 7, /* held, nothing will start it */
	SV_STATE_DRAINING = 8, /* told to drain; finishing what it holds */
} sv_state;

/*
 * sv_client_open connects to the supervisor at url ("ipc:///path"). A NULL
 * or empty url means the value of $SUPERVISE_URL. The call retries the
 * connection until timeout_ms has passed (0: one attempt) while nobody
 * listens. It does not wait for the supervisor to answer the connection:
 * the first call does, under its own deadline, so opening and then calling
 * with the same timeout is bounded by that timeout (not twice it) when the
 * supervisor accepts but does not answer (stopped, or overloaded). A
 * supervisor's answer already there is checked at once. The connection is
 * never hung up half-way (that would trip nng bug #1518 in a supervisor
 * built on nng's REP socket). On SV_OK *clientp is a new handle
 * that the caller closes with sv_client_close(). Errors: SV_EINVAL (no url,
 * url too long, or not an ipc:// URL: the supervisor listens only on ipc://),
 * SV_ECONNECT (nobody listening before the deadline, or the socket answered
 * at once and is not a supervisor's; one that answers later fails the first
 * call with SV_EPROTO), SV_ENOMEM, SV_ESYSTEM. As there is no handle then,
 * the reason is read with sv_client_error_message(NULL).
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
 * On a handle shared by threads, another thread's call may rewrite the
 * string while it is read: use sv_client_error_detail there.
 */
SV_API const char *sv_client_error_message(const sv_client *client);

/* A buffer of this many bytes always holds a whole error detail. */
#define SV_ERROR_DETAIL_SIZE 1280

/*
 * sv_client_error_detail copies what sv_client_error_message(client) reads
 * into buf (size bytes), always NUL-terminated, cut to fit. The copy is
 * made under the handle's lock, the one every call holds while it writes
 * the detail, so on a handle shared by threads it is never torn; it is the
 * detail of whichever call finished last. With client NULL it copies why
 * the calling thread's last sv_client_open failed (no lock needed: that
 * one is per thread). Like a call, in a forked child it first adopts the
 * handle (the detail inherited from the parent is still copied).
 * Returns SV_OK, SV_ETOOLARGE when the detail was cut (buf holds its
 * first size - 1 bytes; SV_ERROR_DETAIL_SIZE bytes never cut), SV_EINVAL
 * when buf is NULL or size 0 (buf untouched).
 */
SV_API sv_err sv_client_error_detail(
    sv_client *client, char *buf, size_t size);

/*
 * sv_client_hello exchanges Hello with the supervisor: the protocol version
 * it chose, its name, instance id and features. On SV_OK *hellop belongs to
 * the caller: free it with sv_hello_free().
 * Errors: SV_EVERSION, SV_ETIMEDOUT, SV_ECLOSED, SV_EPROTO, SV_ENOMEM.
 */
SV_API sv_err sv_client_hello(
    sv_client *client, int timeout_ms, sv_hello **hellop);

/* Accessors of a Hello answer; strings belong to h. */
SV_API uint32_t    sv_hello_version(const sv_hello *h);
SV_API uint32_t    sv_hello_minor_version(const sv_hello *h);
SV_API const char *sv_hello_server_name(const sv_hello *h);
SV_API const char *sv_hello_supervisor_id(const sv_hello *h);
SV_API size_t      sv_hello_feature_count(const sv_hello *h);
/* The URL of the supervisor's event socket ("" from a v1.0 server). */
SV_API const char *sv_hello_events_url(const sv_hello *h);
/* sv_hello_feature returns feature i, or NULL when i is out of range. */
SV_API const char *sv_hello_feature(const sv_hello *h, size_t i);
/*
 * Durability of the supervisor's journal (feature "durable.status", v1.5;
 * docs/durability.md). sv_hello_durability_known is 1 when the server said
 * (0 from an older one: the others then read as 0 / ""). ok is 1 while
 * every change is journaled, 0 while it is lost; reason is then the errno's
 * name ("ENOSPC", "EROFS", "EIO", ...) and message says what failed;
 * since_ms is when the current condition began (wall clock, ms since the
 * Unix epoch).
 */
SV_API int         sv_hello_durability_known(const sv_hello *h);
SV_API int         sv_hello_durability_ok(const sv_hello *h);
SV_API const char *sv_hello_durability_reason(const sv_hello *h);
SV_API uint64_t    sv_hello_durability_since_ms(const sv_hello *h);
SV_API const char *sv_hello_durability_message(const sv_hello *h);
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
/* v1.3: the calling worker is draining, and the time left before SIGKILL */
SV_API int      sv_identity_draining(const sv_identity *id);
SV_API uint64_t sv_identity_drain_deadline_in_ms(const sv_identity *id);
/* Number of context frames, outermost first. */
SV_API size_t sv_identity_frame_count(const sv_identity *id);
/*
 * sv_identity_frame reads frame i into the non-NULL out-parameters; *namep
 * belongs to id. Errors: SV_EINVAL (id NULL, or i out of range).
 */
SV_API sv_err sv_identity_frame(const sv_identity *id, size_t i,
    sv_kind *kindp, uint32_t *ordinalp, const char **namep);
/*
 * sv_identity_parent reads the frame above the worker. Errors: SV_EINVAL
 * (id NULL), SV_ENOTFOUND for a top-level process, which has no parent.
 */
SV_API sv_err sv_identity_parent(const sv_identity *id, sv_kind *kindp,
    uint32_t *ordinalp, const char **namep);
/* sv_identity_free frees id. NULL is ignored. */
SV_API void sv_identity_free(sv_identity *id);
/*
 * v1.4: sv_identity_frame_generation stores the generation of frame i in
 * *genp (0 from servers before v1.4). Errors: SV_EINVAL (NULL argument, or
 * i out of range).
 */
SV_API sv_err sv_identity_frame_generation(
    const sv_identity *id, size_t i, uint64_t *genp);

/*
 * v1.4: sv_identity_fields holds every scalar field of an identity, so that
 * a caller that wants them all (a language binding) makes one foreign call
 * instead of ten. Strings belong to the identity (valid until
 * sv_identity_free). Fields are only ever added at the end; the caller sets
 * `size` to the sizeof it was built with.
 */
typedef struct sv_identity_fields {
	size_t      size; /* set by the caller: sizeof(sv_identity_fields) */
	const char *group;
	const char *purpose;
	const char *supervisor_id;
	int64_t     pid;
	uint64_t    generation;
	uint64_t    drain_deadline_in_ms;
	uint64_t    frame_count;
	uint32_t    ordinal;
	uint32_t    group_size;
	int32_t     kind; /* an sv_kind */
	int32_t     draining; /* 0 or 1 */
} sv_identity_fields;

/*
 * sv_identity_get_fields fills *out (whose size the caller has set) with
 * id's scalar fields, as the sv_identity_* accessors would read them.
 * Errors: SV_EINVAL (NULL argument, or out->size smaller than this
 * library's sv_identity_fields: built against a newer header).
 */
SV_API sv_err sv_identity_get_fields(
    const sv_identity *id, sv_identity_fields *out);

/* sv_frame_fields is one context frame, flat (see sv_identity_frame). */
typedef struct sv_frame_fields {
	const char *name; /* the group of a process frame, or a label */
	uint64_t    generation; /* as sv_identity_frame_generation */
	uint32_t    ordinal;
	int32_t     kind; /* an sv_kind */
} sv_frame_fields;

/* Capacities of sv_whoami_result: frames kept, and bytes of text. */
#define SV_WHOAMI_MAX_FRAMES 64
#define SV_WHOAMI_TEXT_BYTES 8192

/*
 * sv_whoami_result is a whole whoami answer in caller memory, for a caller
 * that wants every field at once with one foreign call and no handle to
 * free (a language binding). Every string points into `text`, inside the
 * same struct, so it stays valid as long as the struct and until the next
 * sv_client_whoami_copy into it. The caller zeroes the struct before its
 * first use and sets `size` to the sizeof it was built with; fields are
 * only ever added at the end.
 *
 * `unchanged` lets a caller that keeps an object built from the previous
 * answer in the same struct reuse it: it is 1 when the new answer is equal,
 * field for field and byte for byte, to the one the struct held before the
 * call (every field then reads as before), else 0.
 */
typedef struct sv_whoami_result {
	size_t size; /* set by the caller: sizeof(sv_whoami_result) */
	/* The scalars, as sv_identity_get_fields reads them; fields.size is
	 * sizeof(sv_identity_fields) and fields.frame_count the reply's
	 * number of frames. */
	sv_identity_fields fields;
	uint32_t n_frames; /* frames[] filled: min(frame_count, MAX_FRAMES) */
	int32_t  has_parent; /* 1: parent holds sv_identity_parent's frame */
	uint32_t text_used; /* bytes of text in use */
	int32_t  unchanged; /* 1: the same answer as before this call */
	sv_frame_fields parent;
	sv_frame_fields frames[SV_WHOAMI_MAX_FRAMES]; /* outermost first */
	char            text[SV_WHOAMI_TEXT_BYTES];
} sv_whoami_result;

/*
 * sv_client_whoami_copy asks the supervisor who the calling process is,
 * like sv_client_whoami, and copies the answer into *out (whose size the
 * caller has set) instead of returning a handle: the same values the
 * sv_identity accessors would read, nothing for the caller to free. A
 * reply with more than SV_WHOAMI_MAX_FRAMES frames keeps the first ones
 * (fields.frame_count still says how many there were).
 * Errors: those of sv_client_whoami; SV_EINVAL (NULL argument, or
 * out->size smaller than this library's sv_whoami_result); SV_ETOOLARGE
 * when the answer's strings need more than SV_WHOAMI_TEXT_BYTES (only a
 * reply beyond the protocol's bounds can: use sv_client_whoami then). On
 * error *out is left untouched.
 */
SV_API sv_err sv_client_whoami_copy(
    sv_client *client, int timeout_ms, sv_whoami_result *out);

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
/* Accessors for entry i (0 <= i < count); out of range or a NULL w gives
 * 0 / "" (last_exit_code -1, state SV_STATE_UNSPECIFIED). */
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
/* 1 when the worker reported ready (or its group does not use readiness). */
SV_API int sv_workers_ready(const sv_workers *w, size_t i);
/* Consecutive fast failures (the backoff step). */
SV_API uint32_t sv_workers_fast_failures(const sv_workers *w, size_t i);
/* In SV_STATE_BACKOFF: milliseconds before the restart; 0 otherwise. */
SV_API uint64_t sv_workers_restart_in_ms(const sv_workers *w, size_t i);
/* The worker's last status line ("" when none). */
SV_API const char *sv_workers_status_text(const sv_workers *w, size_t i);
/* v1.3: told to drain, and the time left before SIGKILL */
SV_API int      sv_workers_draining(const sv_workers *w, size_t i);
SV_API uint64_t sv_workers_drain_deadline_in_ms(const sv_workers *w, size_t i);
/* v1.4: in-flight activities (0 when idle), the oldest one's composed name
 * ("" when idle) and its age (docs/activity.md) */
SV_API uint32_t    sv_workers_activities(const sv_workers *w, size_t i);
SV_API const char *sv_workers_activity(const sv_workers *w, size_t i);
SV_API uint64_t    sv_workers_activity_age_ms(const sv_workers *w, size_t i);
/* sv_workers_free frees w. NULL is ignored. */
SV_API void sv_workers_free(sv_workers *w);

/* sv_state_name returns "running", "stopping", "backoff", "starting",
 * "failed", "waiting", "idle", "draining" or "unknown" (a state from a
 * newer server, or SV_STATE_UNSPECIFIED). The string is static. */
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
 * Not resent after a lost connection (SV_ECLOSED: it may have restarted
 * the worker already; sv_client_restart_if can be resent). Errors:
 * SV_ENOTFOUND (no such group, or no worker at ordinal), SV_EBUSY, plus
 * transport errors.
 */
SV_API sv_err sv_client_restart(
    sv_client *client, const char *group, uint32_t ordinal, int timeout_ms);

/*
 * sv_client_restart_if is sv_client_restart with a compare-and-swap: the
 * worker restarts only if its generation is still expected_generation.
 * That makes the request safe to resend, and the library resends it after
 * a lost connection within the deadline (a copy that arrives twice gets
 * SV_ECONFLICT). Errors: those of sv_client_restart, SV_ECONFLICT.
 */
SV_API sv_err sv_client_restart_if(sv_client *client, const char *group,
    uint32_t ordinal, uint64_t expected_generation, int timeout_ms);

/*
 * sv_client_reset clears the FAILED state of group (restart intensity
 * exceeded), its restart history and its workers' backoff, and starts
 * them again. Errors: SV_ENOTFOUND, SV_EBUSY, plus transport errors.
 */
SV_API sv_err sv_client_reset(
    sv_client *client, const char *group, int timeout_ms);

/*
 * sv_client_start_worker holds one more ordinal of group (the lowest free
 * one) and starts a worker on it; *ordinalp (may be NULL) receives the
 * ordinal. Not resent after a lost connection. Errors: SV_ENOTFOUND,
 * SV_EEXHAUSTED (max_count reached), SV_EBUSY, plus transport errors.
 */
SV_API sv_err sv_client_start_worker(
    sv_client *client, const char *group, int timeout_ms, uint32_t *ordinalp);

/*
 * sv_client_terminate_worker stops the worker at ordinal of group and
 * releases the ordinal (the group holds one fewer). Not resent after a lost
 * connection. Errors: SV_ENOTFOUND, SV_EBUSY, plus transport errors.
 */
SV_API sv_err sv_client_terminate_worker(
    sv_client *client, const char *group, uint32_t ordinal, int timeout_ms);

/*
 * sv_client_groups reads the groups (group NULL or "" for every group):
 * counts, failed state and reason, restart type, strategy. On SV_OK
 * *groupsp belongs to the caller: free it with sv_groups_free().
 * Errors: SV_ENOTFOUND, SV_EINVAL (bad name), plus transport errors.
 */
SV_API sv_err sv_client_groups(
    sv_client *client, const char *group, int timeout_ms, sv_groups **groupsp);

SV_API size_t sv_groups_count(const sv_groups *g);
/* Accessors for entry i (0 <= i < count); out of range or a NULL g gives
 * 0 / "". */
SV_API const char *sv_groups_name(const sv_groups *g, size_t i);
SV_API uint32_t    sv_groups_count_wanted(const sv_groups *g, size_t i);
SV_API uint32_t    sv_groups_max_count(const sv_groups *g, size_t i);
SV_API int         sv_groups_failed(const sv_groups *g, size_t i);
SV_API const char *sv_groups_failure_reason(const sv_groups *g, size_t i);
SV_API const char *sv_groups_restart(const sv_groups *g, size_t i);
SV_API const char *sv_groups_strategy(const sv_groups *g, size_t i);
SV_API uint32_t    sv_groups_running(const sv_groups *g, size_t i);
SV_API uint32_t    sv_groups_ready(const sv_groups *g, size_t i);
SV_API uint32_t    sv_groups_starting(const sv_groups *g, size_t i);
SV_API uint32_t    sv_groups_stopping(const sv_groups *g, size_t i);
SV_API uint32_t    sv_groups_backoff(const sv_groups *g, size_t i);
SV_API const char *sv_groups_purpose(const sv_groups *g, size_t i);
/* sv_groups_free frees g. NULL is ignored. */
SV_API void sv_groups_free(sv_groups *g);

/*
 * A group created at runtime is described by an sv_groupspec, checked by
 * the supervisor exactly like a group of the config file (docs/config.md).
 * sv_groupspec_new makes one with the three required keys; on SV_OK *specp
 * belongs to the caller: free it with sv_groupspec_free(). The setters copy
 * their strings. sv_groupspec_set gives any other config key of a group
 * ("restart", "max_restarts", "stop_signal", ...) with its value as text.
 * Errors: SV_EINVAL (NULL argument), SV_ETOOLARGE (more than 256 args, env
 * entries or options), SV_ENOMEM.
 */
SV_API sv_err sv_groupspec_new(const char *name, const char *purpose,
    uint32_t count, sv_groupspec **specp);
SV_API sv_err sv_groupspec_add_arg(sv_groupspec *spec, const char *arg);
SV_API sv_err sv_groupspec_add_env(sv_groupspec *spec, const char *entry);
SV_API sv_err sv_groupspec_set_cwd(sv_groupspec *spec, const char *cwd);
SV_API sv_err sv_groupspec_set_max_count(
    sv_groupspec *spec, uint32_t max_count);
SV_API sv_err sv_groupspec_set(
    sv_groupspec *spec, const char *key, const char *value);
/* sv_groupspec_free frees spec. NULL is ignored. */
SV_API void sv_groupspec_free(sv_groupspec *spec);

/*
 * sv_client_create_group adds the group spec describes and starts its
 * workers. Not resent after a lost connection. Errors: SV_EBADREQ (the
 * spec breaks a config rule: sv_client_error_message() says which, as
 * "spec:LINE: groups[0].KEY: what"; or the name is taken), SV_EEXHAUSTED
 * (too many groups), SV_EPERM, SV_EBUSY, plus transport errors.
 */
SV_API sv_err sv_client_create_group(
    sv_client *client, const sv_groupspec *spec, int timeout_ms);

/*
 * sv_client_delete_group stops every worker of group and removes it once
 * they are reaped. Errors: SV_ENOTFOUND, SV_EPERM, SV_EBUSY, plus
 * transport errors.
 */
SV_API sv_err sv_client_delete_group(
    sv_client *client, const char *group, int timeout_ms);

/*
 * sv_client_ready tells the supervisor that the calling worker is ready,
 * with an optional status line (NULL or ""; at most 1024 bytes, the
 * supervisor keeps 255). Only the worker process itself may call it (the
 * supervisor checks the kernel's credentials).
 * Errors: SV_ENOTWORKER, SV_EPERM (a descendant of a worker), SV_ETOOLARGE,
 * plus transport errors.
 */
SV_API sv_err sv_client_ready(
    sv_client *client, const char *status, int timeout_ms);

/*
 * sv_client_heartbeat tells the supervisor that the calling worker is
 * alive (the group's watchdog). Errors: as sv_client_ready.
 */
SV_API sv_err sv_client_heartbeat(sv_client *client, int timeout_ms);

/*
 * Events. sv_events_open subscribes to the supervisor's event socket url
 * (NULL or "": "events.sock" beside $SUPERVISE_URL or the default control
 * socket; sv_hello_events_url() tells the real one) and keeps the events
 * whose topic starts with prefix (NULL or "": all). Topics are
 * "w/GROUP/ORDINAL/" for worker events, "g/GROUP/" for group events and
 * "d/" for the durability of the journal
 * (docs/protocol.md, "Events"). It connects within timeout_ms. On SV_OK
 * *evp belongs to the caller: close it with sv_events_close(). Like the
 * client, it speaks the wire protocol itself, with no thread, and a handle
 * used after fork() reconnects in the child.
 * Errors: SV_EINVAL (bad url or prefix over 200 bytes), SV_ECONNECT,
 * SV_ENOMEM, SV_ESYSTEM.
 */
SV_API sv_err sv_events_open(
    sv_events **evp, const char *url, const char *prefix, int timeout_ms);

/*
 * sv_events_next waits up to timeout_ms for the next event. On SV_OK
 * *eventp belongs to the caller: free it with sv_event_free(). Events are
 * numbered (sv_event_seq) by the supervisor; a jump in the numbers of an
 * unfiltered reader means events were lost (the supervisor never waits
 * for a slow reader). Errors: SV_ETIMEDOUT (none came), SV_ECLOSED or
 * SV_ECONNECT (the supervisor went away; the next call reconnects),
 * SV_EPROTO, SV_ENOMEM. sv_events_error_message() says more.
 */
SV_API sv_err sv_events_next(sv_events *ev, int timeout_ms, sv_event **eventp);
/* sv_events_error_message: why the last call on ev failed. */
SV_API const char *sv_events_error_message(const sv_events *ev);
/* sv_events_close closes ev. NULL is ignored. */
SV_API void sv_events_close(sv_events *ev);

/* Accessors of an event; strings belong to the event. A NULL e reads as
 * 0 / "". */
SV_API uint64_t sv_event_seq(const sv_event *e);
/* "started", "ready", "exited", "restart_scheduled", "unresponsive",
 * "escalated", "stopping", "stopped", "spawn_failed", "status_text",
 * "adopted" (taken over from a crashed supervisor), "lease" (details:
 * "what=revoked reason=holder_gone id=.. pool=.. slot=.. token=..
 * holder=.."; on the holder's topic, docs/protocol.md section 11),
 * "drain" (a drain or rolling restart progressed), "durability" (the
 * journal's durability was lost or restored; topic "d/", details "ok=0
 * reason=ENOSPC since_ms=.."; neither a worker nor a group event),
 * "group_failed",
 * "group_reset", "group_scaled", "group_created", "group_deleted", or
 * "unknown" (a kind from a newer server). */
SV_API const char *sv_event_kind(const sv_event *e);
SV_API const char *sv_event_group(const sv_event *e);
/* 1 for worker events (ordinal, generation and pid are set). */
SV_API int         sv_event_is_worker(const sv_event *e);
SV_API uint32_t    sv_event_ordinal(const sv_event *e);
SV_API uint64_t    sv_event_generation(const sv_event *e);
SV_API int64_t     sv_event_pid(const sv_event *e);
SV_API uint64_t    sv_event_time_unix_ms(const sv_event *e);
SV_API const char *sv_event_supervisor_id(const sv_event *e);
/* The kind's details as "key=value" words ("code=3 uptime_ms=12", ...). */
SV_API const char *sv_event_details(const sv_event *e);
/* sv_event_free frees e. NULL is ignored. */
SV_API void sv_event_free(sv_event *e);

/*
 * sv_identity_from_env reads the calling worker's identity from the
 * variables supervised sets in every worker it spawns, with no round trip:
 * SUPERVISE_GROUP (1..64 of [A-Za-z0-9_.-]), SUPERVISE_ORDINAL (decimal,
 * fits uint32), SUPERVISE_GENERATION (decimal, fits uint64),
 * SUPERVISE_SUPERVISOR_ID (1..1024 bytes) and SUPERVISE_PURPOSE (set,
 * 0..1024 bytes). SUPERVISE_URL is not part of the identity and not read.
 * envp is a NULL-terminated array of "NAME=value" strings to read, or NULL
 * for the process environment.
 *
 * The answer is written to *out, caller memory the caller has zeroed and
 * whose size it has set (as for sv_client_whoami_copy); nothing to free.
 * The strings point into out->text. The environment carries neither the
 * worker's pid nor the group's size: fields.pid and fields.group_size are
 * 0, meaning unknown, never a guess. kind is SV_KIND_PROCESS, there is one
 * frame (the worker) and no parent, draining is 0, unchanged is 0.
 *
 * Errors: SV_ENOTWORKER when a variable is absent (or empty, except
 * PURPOSE): not started by a supervisor; SV_EINVAL when one is malformed or
 * over its bound, or out is NULL or out->size is smaller than this
 * library's sv_whoami_result (then *out is untouched). On ENOTWORKER and
 * EINVAL with a usable out, every field is zero except size, and out->text
 * holds a one-line reason naming the variable.
 */
SV_API sv_err sv_identity_from_env(
    const char *const *envp, sv_whoami_result *out);

#ifdef __cplusplus
}
#endif

/* The client's other parts (each includes this header). */
#include "supervise/drain.h" /* IWYU pragma: export */
#include "supervise/leases.h" /* IWYU pragma: export */

#endif /* SUPERVISE_CLIENT_H */
