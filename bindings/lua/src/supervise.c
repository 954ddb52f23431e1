/*
 * supervise.c — the Lua 5.4 binding of libsupervise: `require "supervise"`.
 *
 * Debian ships no FFI for PUC Lua 5.4, so this is a C module over the public
 * C client (supervise/client.h) and nothing else: every request goes through
 * libsupervise, which owns the protocol, deadlines and (soon) fork safety.
 *
 * Design:
 *   - Errors follow Lua's idiom: a call that can fail at run time returns
 *     nil, err where err is an error object (a table with the metatable
 *     "supervise.Error": code, name, message, op). Bugs in the caller (wrong
 *     argument type, a number out of range, a string with a NUL byte or over
 *     its bound) raise a Lua error instead. supervise.check() turns nil, err
 *     into a raised error object for code that prefers pcall.
 *   - Results are plain tables (identity, hello, worker entries) copied out
 *     of the C handles, which are freed before returning: nothing Lua holds
 *     points into C memory except the client userdata.
 *   - A client is a full userdata ("supervise.Client") with __gc and __close;
 *     close is idempotent, and a call on a closed client returns ECLOSED.
 *   - The module-level functions (supervise.whoami, supervise.list, ...) use
 *     a default client, opened lazily on first use from $SUPERVISE_URL (else
 *     the default socket) and kept in the registry; one deadline covers the
 *     open and the request.
 *   - Every call that talks to the supervisor takes a timeout in ms
 *     (default LSV_DEFAULT_TIMEOUT_MS, -1 waits forever).
 *   - supervise.scope() runs a function under pcall with a scope object that
 *     collects cleanups (clients, leases: Scope:defer(lease.release, l))
 *     and always runs them.
 *   - Leases (lease_acquire, lease_renew, lease_release, leases, sessions),
 *     drain (drain, drain_report, drain_extend, drain_ack, draining) and
 *     sub-workers (register_thread, release_thread, register_child,
 *     release_child; see the division "sub-workers") are requests like the
 *     others. The compositions written in Lua (lease
 *     methods, supervise.with_lease, supervise.drain_watch) are in
 *     prelude.h, run by luaopen_supervise.
 *   - Each request is one lsv_op_* function and one line of lsv_requests,
 *     which makes it both a client method and a module-level function; the
 *     later ones (leases, drain, activity) slot in the same way. ready,
 *     heartbeat and set_status are requests a worker makes about itself
 *     (the supervisor checks the kernel's credentials of the connection).
 *   - The event reader is a second full userdata ("supervise.Events") over
 *     sv_events, thread-free and fork-safe like the client (the C reader
 *     reconnects in a child). supervise.events() returns what a generic
 *     for needs, with the reader as its to-be-closed value, so the reader
 *     is closed when the loop ends, by break or by an error.
 *
 * Divisions: constants and helpers; error objects; argument checks; result
 * tables; the client object; the requests (client methods and module-level
 * calls, sub-workers among them); the default client; events; from_env; scope;
 * miscellany; luaopen_supervise.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr, RTLD_NODELETE */
#endif
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>

#include <supervise/client.h>

#include "activity.h"
#include "prelude.h"

#if LUA_VERSION_NUM < 504
#error "supervise.c needs Lua 5.4 (to-be-closed variables)"
#endif

#define LSV_VERSION            "0.1.0"
#define LSV_CLIENT_MT          "supervise.Client"
#define LSV_ERROR_MT           "supervise.Error"
#define LSV_IDENTITY_MT        "supervise.Identity"
#define LSV_SCOPE_MT           "supervise.Scope"
#define LSV_EVENTS_MT          "supervise.Events"
#define LSV_LEASE_MT           "supervise.Lease"
#define LSV_SUBW_MT            "supervise.SubWorker"
#define LSV_SUBW_KEY           "supervise.subworkers"
#define LSV_DEFAULT_KEY        "supervise.default_client"
#define LSV_DEFAULT_TIMEOUT_MS 5000
/* Bounds of caller-supplied strings (the protocol's own bounds, section 4). */
#define LSV_MAX_URL  512
#define LSV_MAX_NAME 1024
/* A pool name (1..64 characters of [A-Za-z0-9_.-]). */
#define LSV_MAX_POOL 64
/* A status line (Ready.status) and an event topic prefix. */
#define LSV_MAX_TEXT   1024
#define LSV_MAX_PREFIX 200
/* A sub-worker's label (docs/subworkers.md), the deadline of a release
 * run by __gc, and the retry step of register_child on ECONFLICT. */
#define LSV_MAX_LABEL               64
#define LSV_SUBW_RELEASE_TIMEOUT_MS 1000
#define LSV_SUBW_RETRY_MS           20
/* Bound of a context chain copied into Lua (a sub-worker has two frames). */
#define LSV_MAX_FRAMES 64

/* A client userdata. c is NULL once closed. */
typedef struct lsv_client {
	sv_client *c;
	char       url[LSV_MAX_URL + 1];
} lsv_client;

/* ---- constants and helpers -----------------------------------------------
 */

/* lsv_now_ms returns a monotonic clock in milliseconds. */
static int64_t
lsv_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* lsv_push_u64 pushes v as an integer, or as a float above LUA_MAXINTEGER. */
static void
lsv_push_u64(lua_State *L, uint64_t v)
{
	if (v <= (uint64_t) LUA_MAXINTEGER)
		lua_pushinteger(L, (lua_Integer) v);
	else
		lua_pushnumber(L, (lua_Number) v);
}

/* lsv_kind_name names a kind the way Lua code compares it. */
static const char *
lsv_kind_name(sv_kind kind)
{
	switch (kind) {
	case SV_KIND_PROCESS:
		return "process";
	case SV_KIND_THREAD:
		return "thread";
	default:
		return "unspecified";
	}
}

/* ---- error objects -------------------------------------------------------
 */

/* lsv_code_name is sv_err_name(code), "UNKNOWN" for any unknown value. */
static const char *
lsv_code_name(lua_Integer code)
{
	return code >= 0 && code <= INT_MAX ? sv_err_name((sv_err) code)
	                                    : "UNKNOWN";
}

/* lsv_code_text is sv_strerror(code), "unknown error" for unknown values. */
static const char *
lsv_code_text(lua_Integer code)
{
	return code >= 0 && code <= INT_MAX ? sv_strerror((sv_err) code)
	                                    : "unknown error";
}

/*
 * lsv_new_error pushes an error object {code, name, message, op}. message
 * is detail when non-empty, else the code's description; op may be NULL.
 * An unknown code keeps its number, with the name "UNKNOWN".
 */
static void
lsv_new_error(
    lua_State *L, lua_Integer code, const char *op, const char *detail)
{
	lua_createtable(L, 0, 4);
	lua_pushinteger(L, code);
	lua_setfield(L, -2, "code");
	lua_pushstring(L, lsv_code_name(code));
	lua_setfield(L, -2, "name");
	lua_pushstring(L,
	    detail != NULL && detail[0] != '\0' ? detail
	                                        : lsv_code_text(code));
	lua_setfield(L, -2, "message");
	if (op != NULL) {
		lua_pushstring(L, op);
		lua_setfield(L, -2, "op");
	}
	luaL_setmetatable(L, LSV_ERROR_MT);
}

/* lsv_fail pushes nil and an error object; returns 2 (for `return`). */
static int
lsv_fail(lua_State *L, sv_err err, const char *op, const char *detail)
{
	lua_pushnil(L);
	lsv_new_error(L, err, op, detail);
	return 2;
}

/* lsv_has_mt tells whether the value at idx has the metatable name. */
static int
lsv_has_mt(lua_State *L, int idx, const char *name)
{
	int yes;

	if (!lua_getmetatable(L, idx))
		return 0;
	luaL_getmetatable(L, name);
	yes = lua_rawequal(L, -1, -2);
	lua_pop(L, 2);
	return yes;
}

/* Error:__tostring: "supervise.OP: NAME (CODE): message". */
static int
lsv_error_tostring(lua_State *L)
{
	const char *op, *name, *msg;
	lua_Integer code;

	lua_getfield(L, 1, "op");
	lua_getfield(L, 1, "name");
	lua_getfield(L, 1, "code");
	lua_getfield(L, 1, "message");
	op   = lua_tostring(L, 2);
	name = lua_tostring(L, 3);
	code = lua_tointeger(L, 4);
	msg  = lua_tostring(L, 5);
	lua_pushfstring(L, "%s%s%s%s (%I): %s", op != NULL ? "supervise." : "",
	    op != NULL ? op : "", op != NULL ? ": " : "",
	    name != NULL ? name : "UNKNOWN", code, msg != NULL ? msg : "");
	return 1;
}

/* Error:is(x) compares with a code (integer) or a name ("ENOTFOUND"). */
static int
lsv_error_is(lua_State *L)
{
	luaL_checktype(L, 1, LUA_TTABLE);
	if (lua_type(L, 2) == LUA_TNUMBER) {
		lua_getfield(L, 1, "code");
		lua_pushboolean(L, lua_rawequal(L, -1, 2));
	} else {
		luaL_checkstring(L, 2);
		lua_getfield(L, 1, "name");
		lua_pushboolean(L, lua_rawequal(L, -1, 2));
	}
	return 1;
}

/*
 * supervise.error(code [, message [, op]]) makes an error object, for code
 * that wants to return errors in the same shape. Raises on a non-integer code.
 */
static int
lsv_error_new(lua_State *L)
{
	lua_Integer code = luaL_checkinteger(L, 1);
	const char *msg  = luaL_optstring(L, 2, NULL);
	const char *op   = luaL_optstring(L, 3, NULL);

	lsv_new_error(L, code, op, msg);
	return 1;
}

/* supervise.is_error(v) is true when v is an error object of this module. */
static int
lsv_is_error(lua_State *L)
{
	lua_pushboolean(
	    L, lua_type(L, 1) == LUA_TTABLE && lsv_has_mt(L, 1, LSV_ERROR_MT));
	return 1;
}

/*
 * supervise.check(v, err, ...) returns all its arguments when v is not nil
 * or false, and otherwise raises err (the error object itself, so pcall
 * gives it back with its code and name). A missing err raises a string.
 */
static int
lsv_check(lua_State *L)
{
	if (lua_toboolean(L, 1))
		return lua_gettop(L);
	if (lua_isnoneornil(L, 2))
		return luaL_error(
		    L, "supervise.check: call failed without error");
	lua_settop(L, 2);
	return lua_error(L);
}

/* supervise.err_name(code): "ENOTFOUND", or "UNKNOWN" for unknown codes. */
static int
lsv_err_name(lua_State *L)
{
	lua_Integer code = luaL_checkinteger(L, 1);

	lua_pushstring(L, lsv_code_name(code));
	return 1;
}

/* supervise.strerror(code): the library's one-line description. */
static int
lsv_strerror(lua_State *L)
{
	lua_Integer code = luaL_checkinteger(L, 1);

	lua_pushstring(L, lsv_code_text(code));
	return 1;
}

/* ---- argument checks (violations raise: they are bugs in the caller) ------
 */

/*
 * lsv_check_text returns the string at idx, which must be a string (not a
 * number) without NUL bytes of at most max bytes. Optional when opt: nil or
 * none gives NULL.
 */
static const char *
lsv_check_text(lua_State *L, int idx, size_t max, int opt)
{
	const char *s;
	size_t      len;

	if (opt && lua_isnoneornil(L, idx))
		return NULL;
	if (lua_type(L, idx) != LUA_TSTRING)
		luaL_typeerror(L, idx, opt ? "string or nil" : "string");
	s = lua_tolstring(L, idx, &len);
	luaL_argcheck(L, strlen(s) == len, idx, "string contains a NUL byte");
	luaL_argcheck(L, len <= max, idx, "string too long");
	return s;
}

/* lsv_check_u32 returns the integer at idx, which must be in 0..UINT32_MAX. */
static uint32_t
lsv_check_u32(lua_State *L, int idx)
{
	lua_Integer v = luaL_checkinteger(L, idx);

	luaL_argcheck(L, v >= 0 && v <= (lua_Integer) UINT32_MAX, idx,
	    "must be in 0..4294967295");
	return (uint32_t) v;
}

/* lsv_opt_timeout reads an optional timeout in ms: -1..INT_MAX. */
static int
lsv_opt_timeout(lua_State *L, int idx)
{
	lua_Integer t = luaL_optinteger(L, idx, LSV_DEFAULT_TIMEOUT_MS);

	luaL_argcheck(L, t >= -1 && t <= INT_MAX, idx,
	    "timeout must be -1 (infinite) or 0..2147483647 ms");
	return (int) t;
}

/* ---- result tables -------------------------------------------------------
 */

/* lsv_push_frame pushes {kind, ordinal, name, generation}. */
static void
lsv_push_frame(lua_State *L, sv_kind kind, uint32_t ordinal, const char *name,
    uint64_t generation)
{
	lua_createtable(L, 0, 4);
	lsv_push_u64(L, generation);
	lua_setfield(L, -2, "generation");
	lua_pushstring(L, lsv_kind_name(kind));
	lua_setfield(L, -2, "kind");
	lua_pushinteger(L, ordinal);
	lua_setfield(L, -2, "ordinal");
	lua_pushstring(L, name != NULL ? name : "");
	lua_setfield(L, -2, "name");
}

/* lsv_push_identity copies id into a new identity table (source "live"). */
static void
lsv_push_identity(lua_State *L, const sv_identity *id)
{
	size_t      n = sv_identity_frame_count(id);
	sv_kind     kind;
	uint32_t    ord;
	const char *name;
	uint64_t    gen, gen0 = 0;

	if (n > LSV_MAX_FRAMES)
		n = LSV_MAX_FRAMES;
	lua_createtable(L, 0, 12);
	lua_pushstring(L, sv_identity_group(id));
	lua_setfield(L, -2, "group");
	lua_pushinteger(L, sv_identity_ordinal(id));
	lua_setfield(L, -2, "ordinal");
	lsv_push_u64(L, sv_identity_generation(id));
	lua_setfield(L, -2, "generation");
	lua_pushstring(L, lsv_kind_name(sv_identity_kind(id)));
	lua_setfield(L, -2, "kind");
	lua_pushinteger(L, (lua_Integer) sv_identity_pid(id));
	lua_setfield(L, -2, "pid");
	lua_pushstring(L, sv_identity_purpose(id));
	lua_setfield(L, -2, "purpose");
	lua_pushstring(L, sv_identity_supervisor_id(id));
	lua_setfield(L, -2, "supervisor_id");
	lua_pushinteger(L, sv_identity_group_size(id));
	lua_setfield(L, -2, "group_size");
	lua_createtable(L, (int) n, 0);
	for (size_t i = 0; i < n; i++) {
		if (sv_identity_frame(id, i, &kind, &ord, &name) != SV_OK)
			break;
		if (sv_identity_frame_generation(id, i, &gen) != SV_OK)
			gen = 0;
		if (i == 0)
			gen0 = gen;
		lsv_push_frame(L, kind, ord, name, gen);
		lua_rawseti(L, -2, (lua_Integer) i + 1);
	}
	lua_setfield(L, -2, "context");
	/* The parent is the first frame of a sub-worker's context: its
	 * generation is that frame's (the process's). */
	if (sv_identity_parent(id, &kind, &ord, &name) == SV_OK) {
		lsv_push_frame(L, kind, ord, name, n > 1 ? gen0 : 0);
		lua_setfield(L, -2, "parent");
	}
	lua_pushboolean(L, sv_identity_draining(id));
	lua_setfield(L, -2, "draining");
	lsv_push_u64(L, sv_identity_drain_deadline_in_ms(id));
	lua_setfield(L, -2, "drain_deadline_in_ms");
	lua_pushliteral(L, "live");
	lua_setfield(L, -2, "source");
	luaL_setmetatable(L, LSV_IDENTITY_MT);
}

/* Identity:__tostring: "group[ordinal] generation G". */
static int
lsv_identity_tostring(lua_State *L)
{
	lua_getfield(L, 1, "group");
	lua_getfield(L, 1, "ordinal");
	lua_getfield(L, 1, "generation");
	lua_pushfstring(L, "%s[%s] generation %s", luaL_tolstring(L, 2, NULL),
	    luaL_tolstring(L, 3, NULL), luaL_tolstring(L, 4, NULL));
	return 1;
}

/* lsv_push_worker pushes entry i of w as a table. */
static void
lsv_push_worker(lua_State *L, const sv_workers *w, size_t i)
{
	int32_t code = sv_workers_last_exit_code(w, i);
	int32_t sig  = sv_workers_last_signal(w, i);

	lua_createtable(L, 0, 18);
	lua_pushstring(L, sv_workers_group(w, i));
	lua_setfield(L, -2, "group");
	lua_pushinteger(L, sv_workers_ordinal(w, i));
	lua_setfield(L, -2, "ordinal");
	lsv_push_u64(L, sv_workers_generation(w, i));
	lua_setfield(L, -2, "generation");
	lua_pushinteger(L, (lua_Integer) sv_workers_pid(w, i));
	lua_setfield(L, -2, "pid");
	lua_pushstring(L, sv_state_name(sv_workers_state(w, i)));
	lua_setfield(L, -2, "state");
	/* The number too: a state a newer server added is named "unknown". */
	lua_pushinteger(L, (lua_Integer) sv_workers_state(w, i));
	lua_setfield(L, -2, "state_number");
	lsv_push_u64(L, sv_workers_uptime_ms(w, i));
	lua_setfield(L, -2, "uptime_ms");
	lua_pushstring(L, sv_workers_purpose(w, i));
	lua_setfield(L, -2, "purpose");
	lsv_push_u64(L, sv_workers_restarts(w, i));
	lua_setfield(L, -2, "restarts");
	/* "None" is nil in Lua: -1 exit code, 0 signal. */
	if (code >= 0) {
		lua_pushinteger(L, code);
		lua_setfield(L, -2, "last_exit_code");
	}
	if (sig > 0) {
		lua_pushinteger(L, sig);
		lua_setfield(L, -2, "last_signal");
	}
	lua_pushboolean(L, sv_workers_ready(w, i));
	lua_setfield(L, -2, "ready");
	lua_pushstring(L, sv_workers_status_text(w, i));
	lua_setfield(L, -2, "status_text");
	lua_pushinteger(L, sv_workers_fast_failures(w, i));
	lua_setfield(L, -2, "fast_failures");
	lsv_push_u64(L, sv_workers_restart_in_ms(w, i));
	lua_setfield(L, -2, "restart_in_ms");
	lua_pushboolean(L, sv_workers_draining(w, i));
	lua_setfield(L, -2, "draining");
	lsv_push_u64(L, sv_workers_drain_deadline_in_ms(w, i));
	lua_setfield(L, -2, "drain_deadline_in_ms");
	/* Activity (v1.4, docs/activity.md): 0, "" and 0 when idle. */
	lua_pushinteger(L, sv_workers_activities(w, i));
	lua_setfield(L, -2, "activities");
	lua_pushstring(L, sv_workers_activity(w, i));
	lua_setfield(L, -2, "activity");
	lsv_push_u64(L, sv_workers_activity_age_ms(w, i));
	lua_setfield(L, -2, "activity_age_ms");
}

/* lsv_push_groups pushes an array of group tables; frees nothing. */
static void
lsv_push_groups(lua_State *L, const sv_groups *g)
{
	size_t n = sv_groups_count(g);

	lua_createtable(L, n <= INT_MAX ? (int) n : 0, 0);
	for (size_t i = 0; i < n; i++) {
		lua_createtable(L, 0, 13);
		lua_pushstring(L, sv_groups_name(g, i));
		lua_setfield(L, -2, "name");
		lua_pushinteger(L, sv_groups_count_wanted(g, i));
		lua_setfield(L, -2, "count");
		lua_pushinteger(L, sv_groups_max_count(g, i));
		lua_setfield(L, -2, "max_count");
		lua_pushboolean(L, sv_groups_failed(g, i));
		lua_setfield(L, -2, "failed");
		lua_pushstring(L, sv_groups_failure_reason(g, i));
		lua_setfield(L, -2, "failure_reason");
		lua_pushstring(L, sv_groups_restart(g, i));
		lua_setfield(L, -2, "restart");
		lua_pushstring(L, sv_groups_strategy(g, i));
		lua_setfield(L, -2, "strategy");
		lua_pushinteger(L, sv_groups_running(g, i));
		lua_setfield(L, -2, "running");
		lua_pushinteger(L, sv_groups_ready(g, i));
		lua_setfield(L, -2, "ready");
		lua_pushinteger(L, sv_groups_starting(g, i));
		lua_setfield(L, -2, "starting");
		lua_pushinteger(L, sv_groups_stopping(g, i));
		lua_setfield(L, -2, "stopping");
		lua_pushinteger(L, sv_groups_backoff(g, i));
		lua_setfield(L, -2, "backoff");
		lua_pushstring(L, sv_groups_purpose(g, i));
		lua_setfield(L, -2, "purpose");
		lua_rawseti(L, -2, (lua_Integer) i + 1);
	}
}

/*
 * lsv_push_event copies e into a new event table: seq, kind, group,
 * ordinal, generation, pid, time (seconds since the epoch, a float, as
 * os.time), time_ms (integer milliseconds), details ("key=value" words),
 * is_worker, supervisor_id.
 */
static void
lsv_push_event(lua_State *L, const sv_event *e)
{
	uint64_t ms = sv_event_time_unix_ms(e);

	lua_createtable(L, 0, 11);
	lsv_push_u64(L, sv_event_seq(e));
	lua_setfield(L, -2, "seq");
	lua_pushstring(L, sv_event_kind(e));
	lua_setfield(L, -2, "kind");
	lua_pushstring(L, sv_event_group(e));
	lua_setfield(L, -2, "group");
	lua_pushinteger(L, sv_event_ordinal(e));
	lua_setfield(L, -2, "ordinal");
	lsv_push_u64(L, sv_event_generation(e));
	lua_setfield(L, -2, "generation");
	lua_pushinteger(L, (lua_Integer) sv_event_pid(e));
	lua_setfield(L, -2, "pid");
	lua_pushnumber(L, (lua_Number) ms / 1000.0);
	lua_setfield(L, -2, "time");
	lsv_push_u64(L, ms);
	lua_setfield(L, -2, "time_ms");
	lua_pushstring(L, sv_event_details(e));
	lua_setfield(L, -2, "details");
	lua_pushboolean(L, sv_event_is_worker(e));
	lua_setfield(L, -2, "is_worker");
	lua_pushstring(L, sv_event_supervisor_id(e));
	lua_setfield(L, -2, "supervisor_id");
}

/* lsv_push_workers pushes an array of worker tables; frees nothing. */
static void
lsv_push_workers(lua_State *L, const sv_workers *w)
{
	size_t n = sv_workers_count(w);

	lua_createtable(L, n <= INT_MAX ? (int) n : 0, 0);
	for (size_t i = 0; i < n; i++) {
		lsv_push_worker(L, w, i);
		lua_rawseti(L, -2, (lua_Integer) i + 1);
	}
}

/* ---- the client object ---------------------------------------------------
 */

/* lsv_to_client checks arg 1 is a client; NULL handle when closed. */
static lsv_client *
lsv_to_client(lua_State *L)
{
	return (lsv_client *) luaL_checkudata(L, 1, LSV_CLIENT_MT);
}

/* lsv_closed returns the ECLOSED error of a call on a closed client. */
static int
lsv_closed(lua_State *L, const char *op)
{
	return lsv_fail(L, SV_ECLOSED, op, "the client is closed");
}

/*
 * lsv_open_into opens a client on url (NULL: $SUPERVISE_URL) and pushes
 * the userdata, or pushes nil, err. Returns the number of values pushed.
 */
static int
lsv_open_into(lua_State *L, const char *url, int timeout_ms)
{
	lsv_client *u;
	sv_err      err;
	char        detail[LSV_MAX_URL + 64];
	const char *shown
	    = url != NULL && url[0] != '\0' ? url : getenv(SV_ENV_URL);

	/* Allocate first, so a failing allocation cannot leak a connection. */
	u    = (lsv_client *) lua_newuserdatauv(L, sizeof(*u), 0);
	u->c = NULL;
	snprintf(u->url, sizeof(u->url), "%s", shown != NULL ? shown : "");
	luaL_setmetatable(L, LSV_CLIENT_MT);
	if ((err = sv_client_open(&u->c, url, timeout_ms)) != SV_OK) {
		lua_pop(L, 1);
		snprintf(detail, sizeof(detail), "%s: %s", sv_strerror(err),
		    shown != NULL && shown[0] != '\0' ? shown
		                                      : "$" SV_ENV_URL
		                                        " is not set");
		return lsv_fail(L, err, "open", detail);
	}
	return 1;
}

/*
 * supervise.open([url [, timeout_ms]]) connects to the supervisor at url
 * ("ipc:///path"; nil means $SUPERVISE_URL) and returns a client, or nil,
 * err (EINVAL: no url; ECONNECT: nobody listening before the deadline).
 * The client is closed by :close(), by a <close> variable going out of
 * scope, or by the garbage collector.
 */
static int
lsv_open(lua_State *L)
{
	const char *url     = lsv_check_text(L, 1, LSV_MAX_URL, 1);
	int         timeout = lsv_opt_timeout(L, 2);

	return lsv_open_into(L, url, timeout);
}

/* Client:close() disconnects; idempotent. Also __gc and __close. */
static int
lsv_client_close(lua_State *L)
{
	lsv_client *u = lsv_to_client(L);

	if (u->c != NULL) {
		sv_client_close(u->c);
		u->c = NULL;
	}
	return 0;
}

/* Client:closed() is true once the client has been closed. */
static int
lsv_client_isclosed(lua_State *L)
{
	lua_pushboolean(L, lsv_to_client(L)->c == NULL);
	return 1;
}

/* Client:__tostring: "supervise.Client(URL)" or "(closed)". */
static int
lsv_client_tostring(lua_State *L)
{
	lsv_client *u = lsv_to_client(L);

	if (u->c == NULL)
		lua_pushliteral(L, "supervise.Client(closed)");
	else
		lua_pushfstring(L, "supervise.Client(%s)", u->url);
	return 1;
}

/* lsv_call_fail pushes nil, err with the supervisor's or library's detail. */
static int
lsv_call_fail(lua_State *L, lsv_client *u, sv_err err, const char *op)
{
	return lsv_fail(L, err, op, sv_client_error_message(u->c));
}

/* ---- the requests: client methods and module-level calls -----------------
 */

/*
 * The requests. Each lsv_op_* checks its arguments from stack index x->a on
 * (after the client, when called as a method; raising on bad ones), its
 * timeout last, then gets its client from lsv_ready and pushes its result,
 * or nil, err. Returns the number of values pushed.
 */
typedef struct lsv_ctx {
	lsv_client *u; /* the method's client; NULL: the default client */
	int         a; /* stack index of the first argument */
	int64_t     start; /* when the call began (lsv_now_ms) */
} lsv_ctx;

static int lsv_push_default(lua_State *L, int timeout_ms);

/*
 * lsv_ready makes x->u an open client: for a module-level call it opens the
 * default client if needed, with *timeout_ms, and takes the time that took
 * off *timeout_ms (one deadline for both). Returns 1, or 0 with nil, err
 * pushed (the open's error, or ECLOSED for a closed client).
 */
static int
lsv_ready(lua_State *L, lsv_ctx *x, const char *op, int *timeout_ms)
{
	if (x->u == NULL) {
		int64_t spent;

		if (lsv_push_default(L, *timeout_ms) != 1)
			return 0;
		x->u  = (lsv_client *) lua_touserdata(L, -1);
		spent = lsv_now_ms() - x->start;
		if (*timeout_ms > 0)
			*timeout_ms = spent >= *timeout_ms
			    ? 0
			    : (int) (*timeout_ms - spent);
	}
	if (x->u->c == NULL) {
		lsv_closed(L, op);
		return 0;
	}
	return 1;
}

/* hello([timeout]) -> {version, minor_version, server_name, supervisor_id,
 * features = {...}} */
static int
lsv_op_hello(lua_State *L, lsv_ctx *x)
{
	int       timeout = lsv_opt_timeout(L, x->a);
	sv_hello *h;
	sv_err    err;
	size_t    n;

	if (!lsv_ready(L, x, "hello", &timeout))
		return 2;
	if ((err = sv_client_hello(x->u->c, timeout, &h)) != SV_OK)
		return lsv_call_fail(L, x->u, err, "hello");
	n = sv_hello_feature_count(h);
	lua_createtable(L, 0, 5);
	lua_pushinteger(L, sv_hello_version(h));
	lua_setfield(L, -2, "version");
	lua_pushinteger(L, sv_hello_minor_version(h));
	lua_setfield(L, -2, "minor_version");
	lua_pushstring(L, sv_hello_server_name(h));
	lua_setfield(L, -2, "server_name");
	lua_pushstring(L, sv_hello_supervisor_id(h));
	lua_setfield(L, -2, "supervisor_id");
	lua_createtable(L, n <= INT_MAX ? (int) n : 0, 0);
	for (size_t i = 0; i < n; i++) {
		lua_pushstring(L, sv_hello_feature(h, i));
		lua_rawseti(L, -2, (lua_Integer) i + 1);
	}
	lua_setfield(L, -2, "features");
	lua_pushstring(L, sv_hello_events_url(h));
	lua_setfield(L, -2, "events_url");
	sv_hello_free(h);
	return 1;
}

/*
 * whoami([timeout]) -> identity; ENOTWORKER outside a supervised worker.
 * Module-level without $SUPERVISE_URL: ENOTWORKER with no round trip, as
 * supervised gives every worker that variable.
 */
static int
lsv_op_whoami(lua_State *L, lsv_ctx *x)
{
	int          timeout = lsv_opt_timeout(L, x->a);
	const char  *env     = getenv(SV_ENV_URL);
	sv_identity *id;
	sv_err       err;

	if (x->u == NULL && (env == NULL || env[0] == '\0'))
		return lsv_fail(L, SV_ENOTWORKER, "whoami",
		    "$" SV_ENV_URL " is not set: not a supervised worker");
	if (!lsv_ready(L, x, "whoami", &timeout))
		return 2;
	if ((err = sv_client_whoami(x->u->c, timeout, &id)) != SV_OK)
		return lsv_call_fail(L, x->u, err, "whoami");
	lsv_push_identity(L, id);
	sv_identity_free(id);
	return 1;
}

/* list([group [, timeout]]) -> array of workers; every group when nil. */
static int
lsv_op_list(lua_State *L, lsv_ctx *x)
{
	const char *group   = lsv_check_text(L, x->a, LSV_MAX_NAME, 1);
	int         timeout = lsv_opt_timeout(L, x->a + 1);
	sv_workers *w;
	sv_err      err;

	if (!lsv_ready(L, x, "list", &timeout))
		return 2;
	if ((err = sv_client_list(x->u->c, group, timeout, &w)) != SV_OK)
		return lsv_call_fail(L, x->u, err, "list");
	lsv_push_workers(L, w);
	sv_workers_free(w);
	return 1;
}

/* status(group, ordinal [, timeout]) -> one worker. */
static int
lsv_op_status(lua_State *L, lsv_ctx *x)
{
	const char *group   = lsv_check_text(L, x->a, LSV_MAX_NAME, 0);
	uint32_t    ordinal = lsv_check_u32(L, x->a + 1);
	int         timeout = lsv_opt_timeout(L, x->a + 2);
	sv_workers *w;
	sv_err      err;

	if (!lsv_ready(L, x, "status", &timeout))
		return 2;
	err = sv_client_status(x->u->c, group, ordinal, timeout, &w);
	if (err != SV_OK)
		return lsv_call_fail(L, x->u, err, "status");
	if (sv_workers_count(w) < 1) {
		sv_workers_free(w);
		return lsv_fail(L, SV_EPROTO, "status", "empty worker status");
	}
	lsv_push_worker(L, w, 0);
	sv_workers_free(w);
	return 1;
}

/* scale(group, count [, timeout]) -> previous size. */
static int
lsv_op_scale(lua_State *L, lsv_ctx *x)
{
	const char *group   = lsv_check_text(L, x->a, LSV_MAX_NAME, 0);
	uint32_t    count   = lsv_check_u32(L, x->a + 1);
	int         timeout = lsv_opt_timeout(L, x->a + 2);
	uint32_t    prev    = 0;
	sv_err      err;

	if (!lsv_ready(L, x, "scale", &timeout))
		return 2;
	err = sv_client_scale(x->u->c, group, count, timeout, &prev);
	if (err != SV_OK)
		return lsv_call_fail(L, x->u, err, "scale");
	lua_pushinteger(L, prev);
	return 1;
}

/* stop(group [, timeout]) -> previous size. */
static int
lsv_op_stop(lua_State *L, lsv_ctx *x)
{
	const char *group   = lsv_check_text(L, x->a, LSV_MAX_NAME, 0);
	int         timeout = lsv_opt_timeout(L, x->a + 1);
	uint32_t    prev    = 0;
	sv_err      err;

	if (!lsv_ready(L, x, "stop", &timeout))
		return 2;
	if ((err = sv_client_stop(x->u->c, group, timeout, &prev)) != SV_OK)
		return lsv_call_fail(L, x->u, err, "stop");
	lua_pushinteger(L, prev);
	return 1;
}

/*
 * restart(group, ordinal [, timeout | {expected_generation =, timeout =}])
 * -> true. Plain: never resent by the library. With expected_generation, a
 * compare-and-swap: the worker restarts only if its generation is still
 * that one, else ECONFLICT and nothing changes (safe to resend, and the
 * library does after a lost connection).
 */
static int
lsv_op_restart(lua_State *L, lsv_ctx *x)
{
	const char *group    = lsv_check_text(L, x->a, LSV_MAX_NAME, 0);
	uint32_t    ordinal  = lsv_check_u32(L, x->a + 1);
	int         opts     = x->a + 2;
	int         timeout  = LSV_DEFAULT_TIMEOUT_MS;
	int         cas      = 0;
	lua_Integer expected = 0;
	sv_err      err;

	if (lua_type(L, opts) == LUA_TTABLE) {
		lua_getfield(L, opts, "expected_generation");
		if (!lua_isnil(L, -1)) {
			int ok;

			expected = lua_tointegerx(L, -1, &ok);
			luaL_argcheck(L, ok && expected >= 0, opts,
			    "expected_generation must be an integer >= 0");
			cas = 1;
		}
		lua_getfield(L, opts, "timeout");
		timeout = lsv_opt_timeout(L, lua_gettop(L));
		lua_pop(L, 2);
	} else {
		timeout = lsv_opt_timeout(L, opts);
	}
	if (!lsv_ready(L, x, "restart", &timeout))
		return 2;
	if (cas)
		err = sv_client_restart_if(
		    x->u->c, group, ordinal, (uint64_t) expected, timeout);
	else
		err = sv_client_restart(x->u->c, group, ordinal, timeout);
	if (err != SV_OK)
		return lsv_call_fail(L, x->u, err, "restart");
	lua_pushboolean(L, 1);
	return 1;
}

/*
 * reset(group [, timeout]) -> true: clears the group's failed state, its
 * restart history and its workers' backoff, and starts them again.
 */
static int
lsv_op_reset(lua_State *L, lsv_ctx *x)
{
	const char *group   = lsv_check_text(L, x->a, LSV_MAX_NAME, 0);
	int         timeout = lsv_opt_timeout(L, x->a + 1);
	sv_err      err;

	if (!lsv_ready(L, x, "reset", &timeout))
		return 2;
	if ((err = sv_client_reset(x->u->c, group, timeout)) != SV_OK)
		return lsv_call_fail(L, x->u, err, "reset");
	lua_pushboolean(L, 1);
	return 1;
}

/* groups([group [, timeout]]) -> array of group tables; all when nil. */
static int
lsv_op_groups(lua_State *L, lsv_ctx *x)
{
	const char *group   = lsv_check_text(L, x->a, LSV_MAX_NAME, 1);
	int         timeout = lsv_opt_timeout(L, x->a + 1);
	sv_groups  *g;
	sv_err      err;

	if (!lsv_ready(L, x, "groups", &timeout))
		return 2;
	if ((err = sv_client_groups(x->u->c, group, timeout, &g)) != SV_OK)
		return lsv_call_fail(L, x->u, err, "groups");
	lsv_push_groups(L, g);
	sv_groups_free(g);
	return 1;
}

/*
 * lsv_not_worker: module-level worker calls without $SUPERVISE_URL give
 * ENOTWORKER at once (pushes nil, err and returns 1), as whoami does.
 */
static int
lsv_not_worker(lua_State *L, lsv_ctx *x, const char *op)
{
	const char *env = getenv(SV_ENV_URL);

	if (x->u != NULL || (env != NULL && env[0] != '\0'))
		return 0;
	lsv_fail(L, SV_ENOTWORKER, op,
	    "$" SV_ENV_URL " is not set: not a supervised worker");
	return 1;
}

/*
 * lsv_send_ready sends Ready with status (may be NULL) for op; pushes true
 * or nil, err.
 */
static int
lsv_send_ready(
    lua_State *L, lsv_ctx *x, const char *op, const char *status, int timeout)
{
	sv_err err;

	if (lsv_not_worker(L, x, op))
		return 2;
	if (!lsv_ready(L, x, op, &timeout))
		return 2;
	if ((err = sv_client_ready(x->u->c, status, timeout)) != SV_OK)
		return lsv_call_fail(L, x->u, err, op);
	lua_pushboolean(L, 1);
	return 1;
}

/*
 * ready([status [, timeout]]) -> true: this worker is ready, with an
 * optional status line (at most 1024 bytes; the supervisor keeps 255).
 * Only the worker process itself may call it: ENOTWORKER for others,
 * EPERM for a descendant of a worker.
 */
static int
lsv_op_ready(lua_State *L, lsv_ctx *x)
{
	const char *status  = lsv_check_text(L, x->a, LSV_MAX_TEXT, 1);
	int         timeout = lsv_opt_timeout(L, x->a + 1);

	return lsv_send_ready(L, x, "ready", status, timeout);
}

/*
 * set_status(text [, timeout]) -> true: this worker's status line. In
 * protocol v1.1 the line travels with Ready, so this also marks the worker
 * ready. Errors as ready.
 */
static int
lsv_op_set_status(lua_State *L, lsv_ctx *x)
{
	const char *text    = lsv_check_text(L, x->a, LSV_MAX_TEXT, 0);
	int         timeout = lsv_opt_timeout(L, x->a + 1);

	return lsv_send_ready(L, x, "set_status", text, timeout);
}

/* heartbeat([timeout]) -> true: re-arms this worker's watchdog. */
static int
lsv_op_heartbeat(lua_State *L, lsv_ctx *x)
{
	int    timeout = lsv_opt_timeout(L, x->a);
	sv_err err;

	if (lsv_not_worker(L, x, "heartbeat"))
		return 2;
	if (!lsv_ready(L, x, "heartbeat", &timeout))
		return 2;
	if ((err = sv_client_heartbeat(x->u->c, timeout)) != SV_OK)
		return lsv_call_fail(L, x->u, err, "heartbeat");
	lua_pushboolean(L, 1);
	return 1;
}

/* ---- leases (docs/leases.md; protocol section 11) ------------------------
 */

/*
 * lsv_opt_u64 reads an optional non-negative integer at idx (nil or none:
 * 0), such as a session or lease id.
 */
static uint64_t
lsv_opt_u64(lua_State *L, int idx)
{
	lua_Integer v;

	if (lua_isnoneornil(L, idx))
		return 0;
	v = luaL_checkinteger(L, idx);
	luaL_argcheck(L, v >= 0, idx, "must be >= 0");
	return (uint64_t) v;
}

/*
 * lsv_push_lease copies l into a new lease table {id, pool, slot, token,
 * resource, expires_in_ms, holder, unclaimed, epoch, session} with the
 * metatable "supervise.Lease" (methods release, renew: the prelude). The
 * client the lease came from (the value at client_idx, 0: the default
 * client) is kept in field _client so that the methods speak for the same
 * holder.
 */
static void
lsv_push_lease(
    lua_State *L, const sv_lease *l, uint64_t session, int client_idx)
{
	lua_createtable(L, 0, 12);
	lsv_push_u64(L, sv_lease_id(l));
	lua_setfield(L, -2, "id");
	lua_pushstring(L, sv_lease_pool(l));
	lua_setfield(L, -2, "pool");
	lua_pushinteger(L, sv_lease_slot(l));
	lua_setfield(L, -2, "slot");
	lsv_push_u64(L, sv_lease_token(l));
	lua_setfield(L, -2, "token");
	lua_pushstring(L, sv_lease_resource(l));
	lua_setfield(L, -2, "resource");
	lsv_push_u64(L, sv_lease_expires_in_ms(l));
	lua_setfield(L, -2, "expires_in_ms");
	lua_pushstring(L, sv_lease_holder_name(l));
	lua_setfield(L, -2, "holder");
	lua_pushboolean(L, sv_lease_unclaimed(l));
	lua_setfield(L, -2, "unclaimed");
	lsv_push_u64(L, sv_lease_epoch(l));
	lua_setfield(L, -2, "epoch");
	lsv_push_u64(L, session);
	lua_setfield(L, -2, "session");
	if (client_idx != 0) {
		lua_pushvalue(L, client_idx);
		lua_setfield(L, -2, "_client");
	}
	luaL_setmetatable(L, LSV_LEASE_MT);
}

/* lsv_method_client is the stack index of a method's client, 0 for a
 * module-level call. */
static int
lsv_method_client(const lsv_ctx *x)
{
	return x->u != NULL && x->a == 2 ? 1 : 0;
}

/*
 * lease_acquire(pool [, {slot =, wait =, session =} [, timeout]]) -> lease:
 * a lease on pool, on slot (nil: the lowest free one), waiting up to wait
 * ms (default 0) for one to be freed; session: a session id for a holder
 * that is not a worker (nil: this worker; module-level without
 * $SUPERVISE_URL that is ENOTWORKER at once). Errors: ENOTFOUND,
 * EEXHAUSTED, EBUSY, EDEADLINE (the wait ended), ECONFLICT, ENOTWORKER,
 * EPERM.
 */
static int
lsv_op_lease_acquire(lua_State *L, lsv_ctx *x)
{
	const char *pool    = lsv_check_text(L, x->a, LSV_MAX_POOL, 0);
	int64_t     slot    = SV_LEASE_ANY_SLOT;
	uint32_t    wait    = 0;
	uint64_t    session = 0;
	int         timeout = lsv_opt_timeout(L, x->a + 2);
	int         client  = lsv_method_client(x);
	sv_lease   *l;
	sv_err      err;

	if (!lua_isnoneornil(L, x->a + 1)) {
		luaL_checktype(L, x->a + 1, LUA_TTABLE);
		if (lua_getfield(L, x->a + 1, "slot") != LUA_TNIL)
			slot = lsv_check_u32(L, -1);
		if (lua_getfield(L, x->a + 1, "wait") != LUA_TNIL)
			wait = lsv_check_u32(L, -1);
		if (lua_getfield(L, x->a + 1, "session") != LUA_TNIL)
			session = lsv_opt_u64(L, -1);
		lua_pop(L, 3);
	}
	if (session == 0 && lsv_not_worker(L, x, "lease_acquire"))
		return 2;
	if (!lsv_ready(L, x, "lease_acquire", &timeout))
		return 2;
	err = sv_client_lease_acquire(
	    x->u->c, pool, slot, wait, session, timeout, &l);
	if (err != SV_OK)
		return lsv_call_fail(L, x->u, err, "lease_acquire");
	lsv_push_lease(L, l, session, client);
	sv_lease_free(l);
	return 1;
}

/* lease_renew(id [, session [, timeout]]) -> the renewed lease. Errors:
 * ENOTFOUND (gone), EPERM (not its holder), ECONFLICT. */
static int
lsv_op_lease_renew(lua_State *L, lsv_ctx *x)
{
	uint64_t  id      = lsv_opt_u64(L, x->a);
	uint64_t  session = lsv_opt_u64(L, x->a + 1);
	int       timeout = lsv_opt_timeout(L, x->a + 2);
	int       client  = lsv_method_client(x);
	sv_lease *l;
	sv_err    err;

	luaL_argcheck(L, id > 0, x->a, "a lease id is required");
	if (!lsv_ready(L, x, "lease_renew", &timeout))
		return 2;
	err = sv_client_lease_renew(x->u->c, id, session, timeout, &l);
	if (err != SV_OK)
		return lsv_call_fail(L, x->u, err, "lease_renew");
	lsv_push_lease(L, l, session, client);
	sv_lease_free(l);
	return 1;
}

/* lease_release(id [, session [, timeout]]) -> true (also for a lease that
 * is gone). Errors: EPERM (the caller is not its holder). */
static int
lsv_op_lease_release(lua_State *L, lsv_ctx *x)
{
	uint64_t id      = lsv_opt_u64(L, x->a);
	uint64_t session = lsv_opt_u64(L, x->a + 1);
	int      timeout = lsv_opt_timeout(L, x->a + 2);
	sv_err   err;

	luaL_argcheck(L, id > 0, x->a, "a lease id is required");
	if (!lsv_ready(L, x, "lease_release", &timeout))
		return 2;
	err = sv_client_lease_release(x->u->c, id, session, timeout);
	if (err != SV_OK)
		return lsv_call_fail(L, x->u, err, "lease_release");
	lua_pushboolean(L, 1);
	return 1;
}

/* leases([pool [, session [, timeout]]]) -> array of leases: an
 * administrator sees all, a worker its own, a session's owner that
 * session's. */
static int
lsv_op_leases(lua_State *L, lsv_ctx *x)
{
	const char *pool    = lsv_check_text(L, x->a, LSV_MAX_POOL, 1);
	uint64_t    session = lsv_opt_u64(L, x->a + 1);
	int         timeout = lsv_opt_timeout(L, x->a + 2);
	int         client  = lsv_method_client(x);
	sv_leases  *list;
	sv_err      err;
	size_t      n;

	if (!lsv_ready(L, x, "leases", &timeout))
		return 2;
	err = sv_client_lease_list(x->u->c, pool, session, timeout, &list);
	if (err != SV_OK)
		return lsv_call_fail(L, x->u, err, "leases");
	n = sv_leases_count(list);
	lua_createtable(L, n <= INT_MAX ? (int) n : 0, 0);
	for (size_t i = 0; i < n; i++) {
		lsv_push_lease(L, sv_leases_at(list, i), session, client);
		lua_rawseti(L, -2, (lua_Integer) i + 1);
	}
	sv_leases_free(list);
	return 1;
}

/* session_open(ttl_ms [, timeout]) -> id of a new lease session for a
 * caller that is not a worker; its leases end with it. */
static int
lsv_op_session_open(lua_State *L, lsv_ctx *x)
{
	lua_Integer ttl     = luaL_checkinteger(L, x->a);
	int         timeout = lsv_opt_timeout(L, x->a + 1);
	uint64_t    id;
	sv_err      err;

	luaL_argcheck(
	    L, ttl > 0 && ttl <= 86400000, x->a, "ttl must be 1..86400000 ms");
	if (!lsv_ready(L, x, "session_open", &timeout))
		return 2;
	err = sv_client_session_open(x->u->c, (uint64_t) ttl, timeout, &id);
	if (err != SV_OK)
		return lsv_call_fail(L, x->u, err, "session_open");
	lsv_push_u64(L, id);
	return 1;
}

/* lsv_session_call runs renew (which = 0) or close (1) of a session. */
static int
lsv_session_call(lua_State *L, lsv_ctx *x, int which)
{
	const char *op      = which ? "session_close" : "session_renew";
	uint64_t    id      = lsv_opt_u64(L, x->a);
	int         timeout = lsv_opt_timeout(L, x->a + 1);
	sv_err      err;

	luaL_argcheck(L, id > 0, x->a, "a session id is required");
	if (!lsv_ready(L, x, op, &timeout))
		return 2;
	err = which ? sv_client_session_close(x->u->c, id, timeout)
	            : sv_client_session_renew(x->u->c, id, timeout);
	if (err != SV_OK)
		return lsv_call_fail(L, x->u, err, op);
	lua_pushboolean(L, 1);
	return 1;
}

/* session_renew(id [, timeout]) -> true; ENOTFOUND once expired. */
static int
lsv_op_session_renew(lua_State *L, lsv_ctx *x)
{
	return lsv_session_call(L, x, 0);
}

/* session_close(id [, timeout]) -> true, ending its leases. */
static int
lsv_op_session_close(lua_State *L, lsv_ctx *x)
{
	return lsv_session_call(L, x, 1);
}

/* ---- drain (protocol section 12) -------------------------------------------
 */

/*
 * lsv_push_report copies r into {id, done, workers = {{group, ordinal,
 * generation, pid, reaped, exited, code, signal, acknowledged, killed,
 * time_to_exit_ms, served}, ...}}.
 */
static void
lsv_push_report(lua_State *L, const sv_drain_report *r)
{
	size_t n = sv_drain_report_count(r);

	lua_createtable(L, 0, 3);
	lsv_push_u64(L, sv_drain_report_id(r));
	lua_setfield(L, -2, "id");
	lua_pushboolean(L, sv_drain_report_done(r));
	lua_setfield(L, -2, "done");
	lua_createtable(L, n <= INT_MAX ? (int) n : 0, 0);
	for (size_t i = 0; i < n; i++) {
		lua_createtable(L, 0, 12);
		lua_pushstring(L, sv_drain_report_group(r, i));
		lua_setfield(L, -2, "group");
		lua_pushinteger(L, sv_drain_report_ordinal(r, i));
		lua_setfield(L, -2, "ordinal");
		lsv_push_u64(L, sv_drain_report_generation(r, i));
		lua_setfield(L, -2, "generation");
		lua_pushinteger(L, (lua_Integer) sv_drain_report_pid(r, i));
		lua_setfield(L, -2, "pid");
		lua_pushboolean(L, sv_drain_report_is_reaped(r, i));
		lua_setfield(L, -2, "reaped");
		lua_pushboolean(L, sv_drain_report_exited(r, i));
		lua_setfield(L, -2, "exited");
		lua_pushinteger(L, sv_drain_report_code(r, i));
		lua_setfield(L, -2, "code");
		lua_pushinteger(L, sv_drain_report_signal(r, i));
		lua_setfield(L, -2, "signal");
		lua_pushboolean(L, sv_drain_report_acknowledged(r, i));
		lua_setfield(L, -2, "acknowledged");
		lua_pushboolean(L, sv_drain_report_killed(r, i));
		lua_setfield(L, -2, "killed");
		lsv_push_u64(L, sv_drain_report_time_to_exit_ms(r, i));
		lua_setfield(L, -2, "time_to_exit_ms");
		lsv_push_u64(L, sv_drain_report_served(r, i));
		lua_setfield(L, -2, "served");
		lua_rawseti(L, -2, (lua_Integer) i + 1);
	}
	lua_setfield(L, -2, "workers");
}

/*
 * drain([group [, ordinal [, deadline_ms [, timeout]]]]) -> the drain's
 * first report (administration): every worker (group nil), every worker of
 * group (ordinal nil) or one; deadline_ms 0 or nil: the group's
 * drain_timeout_ms. Errors: ENOTFOUND, EPERM, EBUSY, EEXHAUSTED.
 */
static int
lsv_op_drain(lua_State *L, lsv_ctx *x)
{
	const char      *group   = lsv_check_text(L, x->a, LSV_MAX_NAME, 1);
	int64_t          ordinal = -1;
	uint64_t         dl      = lsv_opt_u64(L, x->a + 2);
	int              timeout = lsv_opt_timeout(L, x->a + 3);
	sv_drain_report *r;
	sv_err           err;

	if (!lua_isnoneornil(L, x->a + 1))
		ordinal = lsv_check_u32(L, x->a + 1);
	luaL_argcheck(L, group != NULL || ordinal < 0, x->a + 1,
	    "an ordinal needs a group");
	luaL_argcheck(
	    L, dl <= 86400000, x->a + 2, "deadline must be 0..86400000 ms");
	if (!lsv_ready(L, x, "drain", &timeout))
		return 2;
	err = sv_client_drain(x->u->c, group, ordinal, dl, timeout, &r);
	if (err != SV_OK)
		return lsv_call_fail(L, x->u, err, "drain");
	lsv_push_report(L, r);
	sv_drain_report_free(r);
	return 1;
}

/* drain_report(id [, timeout]) -> the drain's current report. */
static int
lsv_op_drain_report(lua_State *L, lsv_ctx *x)
{
	uint64_t         id      = lsv_opt_u64(L, x->a);
	int              timeout = lsv_opt_timeout(L, x->a + 1);
	sv_drain_report *r;
	sv_err           err;

	luaL_argcheck(L, id > 0, x->a, "a drain id is required");
	if (!lsv_ready(L, x, "drain_report", &timeout))
		return 2;
	err = sv_client_drain_report(x->u->c, id, timeout, &r);
	if (err != SV_OK)
		return lsv_call_fail(L, x->u, err, "drain_report");
	lsv_push_report(L, r);
	sv_drain_report_free(r);
	return 1;
}

/* lsv_drain_self sends DrainExtend (ack = 0) or DrainAck (1) for this
 * worker with the integer argument (more_ms or served). */
static int
lsv_drain_self(lua_State *L, lsv_ctx *x, int ack)
{
	const char *op      = ack ? "drain_ack" : "drain_extend";
	uint64_t    v       = lsv_opt_u64(L, x->a);
	int         timeout = lsv_opt_timeout(L, x->a + 1);
	sv_err      err;

	if (!ack)
		luaL_argcheck(L, v > 0 && v <= 86400000, x->a,
		    "more_ms must be 1..86400000");
	if (lsv_not_worker(L, x, op))
		return 2;
	if (!lsv_ready(L, x, op, &timeout))
		return 2;
	err = ack ? sv_client_drain_ack(x->u->c, v, timeout)
	          : sv_client_drain_extend(x->u->c, v, timeout);
	if (err != SV_OK)
		return lsv_call_fail(L, x->u, err, op);
	lua_pushboolean(L, 1);
	return 1;
}

/* drain_extend(more_ms [, timeout]) -> true: this draining worker asks for
 * its deadline to be now + more_ms. ENOTFOUND when it is not draining. */
static int
lsv_op_drain_extend(lua_State *L, lsv_ctx *x)
{
	return lsv_drain_self(L, x, 0);
}

/* drain_ack([served [, timeout]]) -> true: this worker has drained (it
 * exits next) after serving served work items. */
static int
lsv_op_drain_ack(lua_State *L, lsv_ctx *x)
{
	return lsv_drain_self(L, x, 1);
}

/* draining([timeout]) -> draining (boolean), deadline_in_ms: WhoAmI's
 * answer for this worker (one round trip). */
static int
lsv_op_draining(lua_State *L, lsv_ctx *x)
{
	int          timeout = lsv_opt_timeout(L, x->a);
	sv_identity *id;
	sv_err       err;

	if (lsv_not_worker(L, x, "draining"))
		return 2;
	if (!lsv_ready(L, x, "draining", &timeout))
		return 2;
	if ((err = sv_client_whoami(x->u->c, timeout, &id)) != SV_OK)
		return lsv_call_fail(L, x->u, err, "draining");
	lua_pushboolean(L, sv_identity_draining(id));
	lsv_push_u64(L, sv_identity_drain_deadline_in_ms(id));
	sv_identity_free(id);
	return 2;
}

/* ---- sub-workers (docs/subworkers.md; protocol v1.4) ----------------------
 *
 * A Lua state has no threads of its own: its coroutines run one at a time
 * on the OS thread that runs the state, and are not sub-workers. What is
 * registered:
 *   - register_thread(label): the OS thread running this Lua state, under
 *     label (its role): for a C host that runs one lua_State per thread,
 *     and for the main thread of a plain worker. One registration per state;
 *     released by release_thread, or when the state is closed (__gc of the
 *     grant), or when the process dies.
 *   - register_child(): this process, forked by a worker (a C host's fork,
 *     luaposix), as [process p, process c]. Once per process; released by
 *     release_child or when it exits (the supervisor watches it).
 * Each grant is a "supervise.SubWorker" userdata kept in the registry table
 * LSV_SUBW_KEY (fields thread, child) with two user values: the client it
 * was registered on (kept alive for the release) and its identity table.
 * A grant remembers the pid that made it: in a forked child the parent's
 * grants are ignored, never released.
 */

/* lsv_frame_name is the name of frame i of id, "" when there is none. */
static const char *
lsv_frame_name(const sv_identity *id, size_t i)
{
	sv_kind     kind;
	uint32_t    ord;
	const char *name;

	return sv_identity_frame(id, i, &kind, &ord, &name) == SV_OK
	        && name != NULL
	    ? name
	    : "";
}

/* A grant. id is NULL once released. */
typedef struct lsv_subw {
	sv_identity *id;
	pid_t        pid;
} lsv_subw;

/*
 * lsv_subw_release releases g on client c (NULL or closed: only forgets
 * it) and frees its identity; in another process than the one that made it
 * only forgets it. Returns the release's error (SV_OK when nothing to do).
 */
static sv_err
lsv_subw_release(lsv_subw *g, sv_client *c, int timeout_ms)
{
	sv_err err = SV_OK;

	if (g->id == NULL)
		return SV_OK;
	if (g->pid == getpid() && c != NULL)
		err = sv_client_subworker_release(c, g->id, timeout_ms);
	sv_identity_free(g->id);
	g->id = NULL;
	return err;
}

/* SubWorker:__gc releases a grant still held by this process (1 s). */
static int
lsv_subw_gc(lua_State *L)
{
	lsv_subw   *g = (lsv_subw *) luaL_checkudata(L, 1, LSV_SUBW_MT);
	lsv_client *u;

	lua_getiuservalue(L, 1, 1);
	u = (lsv_client *) luaL_testudata(L, -1, LSV_CLIENT_MT);
	(void) lsv_subw_release(
	    g, u != NULL ? u->c : NULL, LSV_SUBW_RELEASE_TIMEOUT_MS);
	return 0;
}

/*
 * lsv_subw_get pushes the live grant of this process in slot ("thread" or
 * "child") of the registry table, or nothing; returns it or NULL.
 */
static lsv_subw *
lsv_subw_get(lua_State *L, const char *slot)
{
	lsv_subw *g;

	if (lua_getfield(L, LUA_REGISTRYINDEX, LSV_SUBW_KEY) != LUA_TTABLE) {
		lua_pop(L, 1);
		return NULL;
	}
	lua_getfield(L, -1, slot);
	lua_remove(L, -2);
	g = (lsv_subw *) luaL_testudata(L, -1, LSV_SUBW_MT);
	if (g == NULL || g->id == NULL || g->pid != getpid()) {
		lua_pop(L, 1);
		return NULL;
	}
	return g;
}

/* lsv_subw_set stores the value at the top (popped) in slot. */
static void
lsv_subw_set(lua_State *L, const char *slot)
{
	if (lua_getfield(L, LUA_REGISTRYINDEX, LSV_SUBW_KEY) != LUA_TTABLE) {
		lua_pop(L, 1);
		lua_newtable(L);
		lua_pushvalue(L, -1);
		lua_setfield(L, LUA_REGISTRYINDEX, LSV_SUBW_KEY);
	}
	lua_insert(L, -2);
	lua_setfield(L, -2, slot);
	lua_pop(L, 1);
}

/*
 * lsv_subw_opts reads argument idx: nil, or a table {number =, timeout =,
 * label = (when want_label)}. Raises on bad values. *label stays NULL
 * unless given; the string stays referenced by the table on the stack.
 */
static void
lsv_subw_opts(lua_State *L, int idx, int want_label, int64_t *number,
    int *timeout, const char **label)
{
	*number  = -1;
	*timeout = LSV_DEFAULT_TIMEOUT_MS;
	if (lua_isnoneornil(L, idx))
		return;
	luaL_argexpected(
	    L, lua_type(L, idx) == LUA_TTABLE, idx, "table or nil");
	lua_getfield(L, idx, "number");
	if (!lua_isnil(L, -1)) {
		int         ok;
		lua_Integer v = lua_tointegerx(L, -1, &ok);

		luaL_argcheck(L, ok && v >= 0 && v <= (lua_Integer) UINT32_MAX,
		    idx, "number must be an integer in 0..4294967295");
		*number = (int64_t) v;
	}
	lua_getfield(L, idx, "timeout");
	*timeout = lsv_opt_timeout(L, lua_gettop(L));
	lua_pop(L, 2);
	if (want_label) {
		lua_getfield(L, idx, "label");
		*label = lsv_check_text(L, lua_gettop(L), LSV_MAX_LABEL, 1);
		luaL_argcheck(L, *label == NULL || (*label)[0] != '\0', idx,
		    "label must be 1..64 bytes");
		lua_pop(L, 1); /* the table keeps the string alive */
	}
}

/*
 * lsv_subw_push_new pushes a new grant for id made on the client at stack
 * index cidx, its identity table as user value 2; leaves the identity
 * table on top (under it, the grant, for lsv_subw_set). Takes id.
 */
static void
lsv_subw_push_new(lua_State *L, int cidx, sv_identity *id)
{
	lsv_subw *g = (lsv_subw *) lua_newuserdatauv(L, sizeof(*g), 2);

	g->id  = id;
	g->pid = getpid();
	luaL_setmetatable(L, LSV_SUBW_MT);
	lua_pushvalue(L, cidx);
	lua_setiuservalue(L, -2, 1);
	lsv_push_identity(L, id);
	lua_pushvalue(L, -1);
	lua_setiuservalue(L, -3, 2);
}

/*
 * register_thread(label [, {number =, timeout =}]) -> identity, again:
 * registers the OS thread running this Lua state as a sub-worker of its
 * process under label (1..64 bytes: the thread's role), context [process
 * p, thread t]. number: a wanted number (default: the one label held last,
 * else the lowest free). Again in the same state with the same label: the
 * same identity table, again true; with another label: EBUSY (release it
 * first). Errors: ENOTWORKER, ETOOLARGE (in a registered child),
 * EEXHAUSTED (max_subworkers), ECONFLICT, EUNKNOWNMSG (server before v1.4).
 */
static int
lsv_op_register_thread(lua_State *L, lsv_ctx *x)
{
	const char  *label = lsv_check_text(L, x->a, LSV_MAX_LABEL, 0);
	int64_t      number;
	int          timeout, again = 0, cidx;
	sv_identity *id;
	sv_err       err;
	lsv_subw    *held;

	luaL_argcheck(L, label[0] != '\0', x->a, "label must be 1..64 bytes");
	lsv_subw_opts(L, x->a + 1, 0, &number, &timeout, NULL);
	if (lsv_not_worker(L, x, "register_thread"))
		return 2;
	if ((held = lsv_subw_get(L, "thread")) != NULL) {
		if (strcmp(sv_identity_frame_count(held->id) > 1
		            ? lsv_frame_name(held->id, 1)
		            : "",
		        label)
		    != 0)
			return lsv_fail(L, SV_EBUSY, "register_thread",
			    "this Lua state is registered under another "
			    "label: "
			    "release_thread first");
		lua_getiuservalue(L, -1, 2);
		lua_pushboolean(L, 1);
		return 2;
	}
	if (!lsv_ready(L, x, "register_thread", &timeout))
		return 2;
	cidx = x->a == 1 ? lua_gettop(L) : 1;
	err  = sv_client_subworker_register(x->u->c, SV_KIND_THREAD, label,
	     number, (int64_t) gettid(), timeout, &id, &again);
	if (err != SV_OK)
		return lsv_call_fail(L, x->u, err, "register_thread");
	lsv_subw_push_new(L, cidx, id);
	lua_pushvalue(L, -2);
	lsv_subw_set(L, "thread");
	lua_pushboolean(L, again);
	return 2;
}

/* lsv_subw_drop releases and forgets the grant in slot for op; pushes
 * true, or nil, err. */
static int
lsv_subw_drop(lua_State *L, lsv_ctx *x, const char *slot, const char *op)
{
	int       timeout = lsv_opt_timeout(L, x->a);
	lsv_subw *g;
	sv_err    err;

	if (lsv_not_worker(L, x, op))
		return 2;
	if ((g = lsv_subw_get(L, slot)) == NULL) {
		lua_pushboolean(L, 1);
		return 1;
	}
	if (!lsv_ready(L, x, op, &timeout))
		return 2;
	lua_pushnil(L);
	lsv_subw_set(L, slot);
	if ((err = lsv_subw_release(g, x->u->c, timeout)) != SV_OK)
		return lsv_call_fail(L, x->u, err, op);
	lua_pushboolean(L, 1);
	return 1;
}

/* release_thread([timeout]) -> true: gives this state's thread number back
 * (true too when it has none). */
static int
lsv_op_release_thread(lua_State *L, lsv_ctx *x)
{
	return lsv_subw_drop(L, x, "thread", "release_thread");
}

/*
 * register_child([{label =, number =, timeout =}]) -> identity, again:
 * registers this process, forked by a worker, as its sub-worker, context
 * [process p, process c]; once per process (later calls return the same
 * table). With number, an ECONFLICT (its previous holder's exit not seen
 * yet) is retried every 20 ms until the timeout. Errors: ENOTWORKER (the
 * parent is no worker), EPERM (called in the worker itself), ETOOLARGE,
 * EEXHAUSTED, ECONFLICT, EUNKNOWNMSG.
 */
static int
lsv_op_register_child(lua_State *L, lsv_ctx *x)
{
	const char     *label = NULL;
	int64_t         number;
	int             timeout, again = 0, cidx, left;
	sv_identity    *id;
	sv_err          err;
	int64_t         deadline;
	struct timespec step = {0, LSV_SUBW_RETRY_MS * 1000000L};

	lsv_subw_opts(L, x->a, 1, &number, &timeout, &label);
	if (lsv_not_worker(L, x, "register_child"))
		return 2;
	if (lsv_subw_get(L, "child") != NULL) {
		lua_getiuservalue(L, -1, 2);
		lua_pushboolean(L, 1);
		return 2;
	}
	if (!lsv_ready(L, x, "register_child", &timeout))
		return 2;
	cidx     = x->a == 1 ? lua_gettop(L) : 1;
	deadline = lsv_now_ms() + timeout;
	left     = timeout;
	for (;;) {
		err = sv_client_subworker_register(x->u->c, SV_KIND_PROCESS,
		    label, number, 0, left, &id, &again);
		if (err != SV_ECONFLICT || number < 0 || timeout < 0)
			break;
		if (deadline - lsv_now_ms() <= LSV_SUBW_RETRY_MS)
			break;
		nanosleep(&step, NULL);
		left = (int) (deadline - lsv_now_ms());
	}
	if (err != SV_OK)
		return lsv_call_fail(L, x->u, err, "register_child");
	lsv_subw_push_new(L, cidx, id);
	lua_pushvalue(L, -2);
	lsv_subw_set(L, "child");
	lua_pushboolean(L, again);
	return 2;
}

/* release_child([timeout]) -> true: gives this child's number back before
 * it exits (true too when it has none). */
static int
lsv_op_release_child(lua_State *L, lsv_ctx *x)
{
	return lsv_subw_drop(L, x, "child", "release_child");
}

/*
 * The request table. A new request (leases, drain, activity) is one
 * lsv_op_* and one line here; it becomes both a client method and a
 * module-level function on the default client.
 */
struct lsv_request {
	const char *name;
	int (*op)(lua_State *L, lsv_ctx *x);
};

static const struct lsv_request lsv_requests[] = {
    {"hello", lsv_op_hello},
    {"whoami", lsv_op_whoami},
    {"list", lsv_op_list},
    {"status", lsv_op_status},
    {"scale", lsv_op_scale},
    {"stop", lsv_op_stop},
    {"restart", lsv_op_restart},
    {"reset", lsv_op_reset},
    {"groups", lsv_op_groups},
    {"ready", lsv_op_ready},
    {"set_status", lsv_op_set_status},
    {"heartbeat", lsv_op_heartbeat},
    {"lease_acquire", lsv_op_lease_acquire},
    {"lease_renew", lsv_op_lease_renew},
    {"lease_release", lsv_op_lease_release},
    {"leases", lsv_op_leases},
    {"session_open", lsv_op_session_open},
    {"session_renew", lsv_op_session_renew},
    {"session_close", lsv_op_session_close},
    {"drain", lsv_op_drain},
    {"drain_report", lsv_op_drain_report},
    {"drain_extend", lsv_op_drain_extend},
    {"drain_ack", lsv_op_drain_ack},
    {"draining", lsv_op_draining},
    {"register_thread", lsv_op_register_thread},
    {"release_thread", lsv_op_release_thread},
    {"register_child", lsv_op_register_child},
    {"release_child", lsv_op_release_child},
};

#define LSV_NREQUESTS (sizeof(lsv_requests) / sizeof(lsv_requests[0]))

/*
 * lsv_method is Client:<name>(...) for the request in upvalue 1 (see the
 * lsv_op_* comments): its result, or nil, err (ECLOSED once closed).
 */
static int
lsv_method(lua_State *L)
{
	const struct lsv_request *r
	    = &lsv_requests[lua_tointeger(L, lua_upvalueindex(1))];
	lsv_ctx x = {lsv_to_client(L), 2, 0};

	return r->op(L, &x);
}

/*
 * lsv_module_call is supervise.<name>(...) for the request in upvalue 1:
 * the same request on the default client, opened on first use; one
 * deadline covers opening it and the request.
 */
static int
lsv_module_call(lua_State *L)
{
	const struct lsv_request *r
	    = &lsv_requests[lua_tointeger(L, lua_upvalueindex(1))];
	lsv_ctx x = {NULL, 1, lsv_now_ms()};

	return r->op(L, &x);
}

/* ---- the default client ------------------------------------------------
 */

/*
 * lsv_push_default pushes the default client, opening it (with timeout_ms)
 * when there is none yet or it was closed, from $SUPERVISE_URL or else the
 * default socket, as supervisectl does. On failure it pushes nil, err.
 * Returns the number of values pushed.
 */
static int
lsv_push_default(lua_State *L, int timeout_ms)
{
	char        url[LSV_MAX_URL + 1];
	const char *env = getenv(SV_ENV_URL);
	const char *use = NULL;

	if (lua_getfield(L, LUA_REGISTRYINDEX, LSV_DEFAULT_KEY)
	        == LUA_TUSERDATA
	    && ((lsv_client *) lua_touserdata(L, -1))->c != NULL)
		return 1;
	lua_pop(L, 1);
	if ((env == NULL || env[0] == '\0')
	    && sv_default_url(url, sizeof(url)) == SV_OK)
		use = url;
	if (lsv_open_into(L, use, timeout_ms) != 1)
		return 2;
	lua_pushvalue(L, -1);
	lua_setfield(L, LUA_REGISTRYINDEX, LSV_DEFAULT_KEY);
	return 1;
}

/*
 * supervise.default_client([timeout_ms]) returns the module's default
 * client, opening it if needed, or nil, err. Closing it is allowed: the
 * next module-level call opens a new one.
 */
static int
lsv_default_client(lua_State *L)
{
	return lsv_push_default(L, lsv_opt_timeout(L, 1));
}

/* ---- events ----------------------------------------------------------------
 */

/* An event reader userdata. ev is NULL once closed. */
typedef struct lsv_events {
	sv_events *ev;
	char       prefix[LSV_MAX_PREFIX + 1];
} lsv_events;

/* Options of an event reader: from a prefix string or an options table. */
typedef struct lsv_evopts {
	const char *prefix; /* NULL: every event */
	const char *url; /* NULL: beside $SUPERVISE_URL */
	int         wait; /* ms an iteration waits for an event; -1 forever */
	int         timeout; /* ms to connect */
} lsv_evopts;

/*
 * lsv_check_evopts reads argument idx: nil (defaults), a string (the topic
 * prefix) or a table {prefix =, url =, wait =, timeout =}. Strings read
 * from the table stay referenced by it, which stays on the stack.
 */
static lsv_evopts
lsv_check_evopts(lua_State *L, int idx)
{
	lsv_evopts o
	    = {NULL, NULL, SV_TIMEOUT_INFINITE, LSV_DEFAULT_TIMEOUT_MS};
	int top;

	if (lua_isnoneornil(L, idx))
		return o;
	if (lua_type(L, idx) == LUA_TSTRING) {
		o.prefix = lsv_check_text(L, idx, LSV_MAX_PREFIX, 0);
		return o;
	}
	luaL_argexpected(L, lua_type(L, idx) == LUA_TTABLE, idx,
	    "prefix string or options table");
	top = lua_gettop(L);
	lua_getfield(L, idx, "prefix");
	o.prefix = lsv_check_text(L, top + 1, LSV_MAX_PREFIX, 1);
	lua_getfield(L, idx, "url");
	o.url = lsv_check_text(L, top + 2, LSV_MAX_URL, 1);
	lua_getfield(L, idx, "wait");
	if (!lua_isnil(L, top + 3)) {
		lua_Integer w = luaL_checkinteger(L, top + 3);

		luaL_argcheck(L, w >= -1 && w <= INT_MAX, idx,
		    "wait must be -1 (forever) or 0..2147483647 ms");
		o.wait = (int) w;
	}
	lua_getfield(L, idx, "timeout");
	o.timeout = lsv_opt_timeout(L, top + 4);
	lua_settop(L, top);
	return o;
}

/*
 * lsv_events_open_into subscribes per o and pushes the reader userdata,
 * or nil, err. Returns the number of values pushed. Its uservalue 1 holds
 * the iteration wait.
 */
static int
lsv_events_open_into(lua_State *L, const lsv_evopts *o)
{
	lsv_events *u;
	sv_err      err;
	char        detail[LSV_MAX_URL + 64];

	u     = (lsv_events *) lua_newuserdatauv(L, sizeof(*u), 1);
	u->ev = NULL;
	snprintf(u->prefix, sizeof(u->prefix), "%s",
	    o->prefix != NULL ? o->prefix : "");
	luaL_setmetatable(L, LSV_EVENTS_MT);
	lua_pushinteger(L, o->wait);
	lua_setiuservalue(L, -2, 1);
	err = sv_events_open(&u->ev, o->url, o->prefix, o->timeout);
	if (err != SV_OK) {
		lua_pop(L, 1);
		snprintf(detail, sizeof(detail), "%s: %s", sv_strerror(err),
		    o->url != NULL ? o->url : "the default event socket");
		return lsv_fail(L, err, "events", detail);
	}
	return 1;
}

/* lsv_to_events checks that argument idx is an event reader. */
static lsv_events *
lsv_to_events(lua_State *L, int idx)
{
	return (lsv_events *) luaL_checkudata(L, idx, LSV_EVENTS_MT);
}

/*
 * lsv_events_read waits up to wait ms for the next event of u and pushes
 * its table (returns 1) or nil, err (returns 2: ETIMEDOUT when none came,
 * ECLOSED on a closed reader, or the reader's error).
 */
static int
lsv_events_read(lua_State *L, lsv_events *u, int wait)
{
	sv_event *e;
	sv_err    err;

	if (u->ev == NULL)
		return lsv_fail(
		    L, SV_ECLOSED, "events", "the reader is closed");
	if ((err = sv_events_next(u->ev, wait, &e)) != SV_OK)
		return lsv_fail(
		    L, err, "events", sv_events_error_message(u->ev));
	lsv_push_event(L, e);
	sv_event_free(e);
	return 1;
}

/*
 * Events:next([wait]) waits up to wait ms (default -1: forever) for the
 * next event: an event table, or nil, err (ETIMEDOUT when none came;
 * ECLOSED or ECONNECT when the supervisor went away, and the next call
 * reconnects; ECLOSED on a closed reader).
 */
static int
lsv_events_next(lua_State *L)
{
	lsv_events *u    = lsv_to_events(L, 1);
	int         wait = (int) luaL_optinteger(L, 2, SV_TIMEOUT_INFINITE);

	luaL_argcheck(L, wait >= -1, 2, "wait must be -1 (forever) or >= 0");
	return lsv_events_read(L, u, wait);
}

/*
 * The iterator of a generic for (upvalue 1: the reader, 2: the wait): the
 * next event, or nil (ending the loop) when none came within the wait.
 * Any other failure raises its error object.
 */
static int
lsv_events_step(lua_State *L)
{
	lsv_events *u    = lsv_to_events(L, lua_upvalueindex(1));
	int         wait = (int) lua_tointeger(L, lua_upvalueindex(2));
	lua_Integer code;

	if (lsv_events_read(L, u, wait) == 1)
		return 1;
	lua_getfield(L, -1, "code");
	code = lua_tointeger(L, -1);
	lua_pop(L, 1);
	if (code == SV_ETIMEDOUT)
		return 0; /* nil: the loop ends */
	return lua_error(L);
}

/*
 * lsv_push_iter pushes the iterator of reader at idx with wait ms per
 * event (argument wait_idx), or the reader's own wait when wait_idx is 0,
 * none or nil.
 */
static void
lsv_push_iter(lua_State *L, int idx, int wait_idx)
{
	lua_Integer w;

	idx = lua_absindex(L, idx);
	if (wait_idx == 0 || lua_isnoneornil(L, wait_idx)) {
		lua_getiuservalue(L, idx, 1);
		w = lua_tointeger(L, -1);
		lua_pop(L, 1);
	} else {
		w = luaL_checkinteger(L, wait_idx);
		luaL_argcheck(L, w >= -1 && w <= INT_MAX, wait_idx,
		    "wait must be -1 (forever) or 0..2147483647 ms");
	}
	lua_pushvalue(L, idx);
	lua_pushinteger(L, w);
	lua_pushcclosure(L, lsv_events_step, 2);
}

/*
 * Events:iter([wait]) returns an iterator for a generic for: each step
 * waits up to wait ms (default: the reader's wait, -1 forever) and the
 * loop ends when none came in time; other failures raise. The reader stays
 * open: `for ev in r:iter(1000) do ... end`.
 */
static int
lsv_events_iter(lua_State *L)
{
	lsv_to_events(L, 1);
	lsv_push_iter(L, 1, 2);
	return 1;
}

/* Events:close() unsubscribes; idempotent. Also __gc and __close. */
static int
lsv_events_close(lua_State *L)
{
	lsv_events *u = lsv_to_events(L, 1);

	if (u->ev != NULL) {
		sv_events_close(u->ev);
		u->ev = NULL;
	}
	return 0;
}

/* Events:closed() is true once the reader has been closed. */
static int
lsv_events_isclosed(lua_State *L)
{
	lua_pushboolean(L, lsv_to_events(L, 1)->ev == NULL);
	return 1;
}

/* Events:__tostring: "supervise.Events(prefix)" or "(closed)". */
static int
lsv_events_tostring(lua_State *L)
{
	lsv_events *u = lsv_to_events(L, 1);

	if (u->ev == NULL)
		lua_pushliteral(L, "supervise.Events(closed)");
	else
		lua_pushfstring(L, "supervise.Events(%s)",
		    u->prefix[0] != '\0' ? u->prefix : "*");
	return 1;
}

/*
 * supervise.open_events([prefix | {prefix =, url =, wait =, timeout =}])
 * subscribes to the supervisor's events (url nil: events.sock beside
 * $SUPERVISE_URL, else beside the default socket) and returns the reader,
 * or nil, err (ECONNECT: nobody listening before timeout ms).
 */
static int
lsv_open_events(lua_State *L)
{
	lsv_evopts o = lsv_check_evopts(L, 1);

	return lsv_events_open_into(L, &o);
}

/*
 * supervise.events([prefix | options]) is open_events for a generic for:
 * `for ev in supervise.events{prefix = "w/web/", wait = 1000} do ... end`.
 * It returns the iterator, two nils and the reader as the loop's
 * to-be-closed value, so the reader is closed when the loop ends (when
 * none came within wait ms, by break, or by an error). A failure to
 * subscribe raises its error object.
 */
static int
lsv_events_for(lua_State *L)
{
	lsv_evopts o = lsv_check_evopts(L, 1);

	if (lsv_events_open_into(L, &o) != 1)
		return lua_error(L);
	lsv_push_iter(L, -1, 0);
	lua_pushnil(L);
	lua_pushnil(L);
	lua_pushvalue(L, -4);
	return 4;
}

/*
 * Client:events([prefix | options]) subscribes to the event socket this
 * client's supervisor announces in hello (options.url is ignored); one
 * timeout covers the hello and the connection. Returns the reader, or
 * nil, err.
 */
static int
lsv_client_events(lua_State *L)
{
	lsv_client *u     = lsv_to_client(L);
	lsv_evopts  o     = lsv_check_evopts(L, 2);
	int64_t     start = lsv_now_ms(), spent;
	sv_hello   *h;
	sv_err      err;
	int         n;

	if (u->c == NULL)
		return lsv_closed(L, "events");
	if ((err = sv_client_hello(u->c, o.timeout, &h)) != SV_OK)
		return lsv_call_fail(L, u, err, "events");
	if (sv_hello_events_url(h)[0] == '\0') {
		sv_hello_free(h);
		return lsv_fail(L, SV_EVERSION, "events",
		    "the supervisor announces no event socket (protocol "
		    "v1.0)");
	}
	spent = lsv_now_ms() - start;
	if (o.timeout > 0)
		o.timeout = spent >= o.timeout ? 0 : (int) (o.timeout - spent);
	lua_pushstring(L, sv_hello_events_url(h)); /* keeps the string */
	sv_hello_free(h);
	o.url = lua_tostring(L, -1);
	n     = lsv_events_open_into(L, &o);
	lua_remove(L, -1 - n); /* the url string */
	return n;
}

/* ---- from_env ------------------------------------------------------------
 */

/*
 * lsv_env_uint parses the decimal variable name into *v (at most max).
 * Returns 0, or -1 when missing and -2 when malformed.
 */
static int
lsv_env_uint(const char *name, uint64_t max, uint64_t *v)
{
	const char        *s = getenv(name);
	char              *end;
	unsigned long long x;

	if (s == NULL || s[0] == '\0')
		return -1;
	if (s[0] < '0' || s[0] > '9' || strlen(s) > 20)
		return -2;
	errno = 0;
	x     = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || x > max)
		return -2;
	*v = x;
	return 0;
}

/*
 * supervise.from_env() builds an identity from the SUPERVISE_* variables
 * supervised sets for its workers, with no round trip. It has the fields of
 * a live identity except pid and group_size (not in the environment), plus
 * url; source is "env". Errors: ENOTWORKER when the variables are missing,
 * EINVAL when one is malformed. The variables are a snapshot taken at spawn
 * and are inherited by every descendant: see README.md.
 */
static int
lsv_from_env(lua_State *L)
{
	static const char *const required[]
	    = {"SUPERVISE_GROUP", "SUPERVISE_ORDINAL", "SUPERVISE_GENERATION"};
	uint64_t    ordinal = 0, generation = 0;
	const char *group = NULL, *purpose, *sid, *url;
	char        detail[128];

	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		const char *v = getenv(required[i]);

		if (v == NULL || v[0] == '\0') {
			snprintf(detail, sizeof(detail),
			    "$%s is not set: not a supervised worker",
			    required[i]);
			return lsv_fail(L, SV_ENOTWORKER, "from_env", detail);
		}
		if (i == 0)
			group = v;
	}
	if (group == NULL || strlen(group) > LSV_MAX_NAME)
		return lsv_fail(
		    L, SV_EINVAL, "from_env", "$SUPERVISE_GROUP is too long");
	if (lsv_env_uint("SUPERVISE_ORDINAL", UINT32_MAX, &ordinal) != 0)
		return lsv_fail(L, SV_EINVAL, "from_env",
		    "$SUPERVISE_ORDINAL is not a number in 0..4294967295");
	if (lsv_env_uint(
	        "SUPERVISE_GENERATION", (uint64_t) LUA_MAXINTEGER, &generation)
	    != 0)
		return lsv_fail(L, SV_EINVAL, "from_env",
		    "$SUPERVISE_GENERATION is not a decimal number");
	purpose = getenv("SUPERVISE_PURPOSE");
	sid     = getenv("SUPERVISE_SUPERVISOR_ID");
	url     = getenv(SV_ENV_URL);

	lua_createtable(L, 0, 10);
	lua_pushstring(L, group);
	lua_setfield(L, -2, "group");
	lua_pushinteger(L, (lua_Integer) ordinal);
	lua_setfield(L, -2, "ordinal");
	lua_pushinteger(L, (lua_Integer) generation);
	lua_setfield(L, -2, "generation");
	lua_pushstring(L, lsv_kind_name(SV_KIND_PROCESS));
	lua_setfield(L, -2, "kind");
	lua_pushstring(L, purpose != NULL ? purpose : "");
	lua_setfield(L, -2, "purpose");
	lua_pushstring(L, sid != NULL ? sid : "");
	lua_setfield(L, -2, "supervisor_id");
	lua_pushstring(L, url != NULL ? url : "");
	lua_setfield(L, -2, "url");
	/* A v1 worker is a top-level process: one frame, no parent. */
	lua_createtable(L, 1, 0);
	lsv_push_frame(L, SV_KIND_PROCESS, (uint32_t) ordinal, group,
	    (uint64_t) generation);
	lua_rawseti(L, -2, 1);
	lua_setfield(L, -2, "context");
	lua_pushliteral(L, "env");
	lua_setfield(L, -2, "source");
	luaL_setmetatable(L, LSV_IDENTITY_MT);
	return 1;
}

/* ---- scope ---------------------------------------------------------------
 */

/*
 * A scope is a table with the metatable "supervise.Scope" whose field
 * "_cleanups" is an array of functions, run last-in first-out.
 */

/* lsv_new_scope pushes a new, empty scope. */
static void
lsv_new_scope(lua_State *L)
{
	lua_createtable(L, 0, 1);
	lua_newtable(L);
	lua_setfield(L, -2, "_cleanups");
	luaL_setmetatable(L, LSV_SCOPE_MT);
}

/* lsv_check_scope raises unless argument idx is a scope. */
static void
lsv_check_scope(lua_State *L, int idx)
{
	if (lua_type(L, idx) != LUA_TTABLE
	    || !lsv_has_mt(L, idx, LSV_SCOPE_MT))
		luaL_typeerror(L, idx, LSV_SCOPE_MT);
}

/*
 * Scope:defer(fn [, ...]) registers fn to run with the given arguments when
 * the scope ends, after the cleanups registered later. Returns fn.
 */
static int
lsv_scope_defer(lua_State *L)
{
	int nargs = lua_gettop(L) - 2;

	lsv_check_scope(L, 1);
	luaL_checktype(L, 2, LUA_TFUNCTION);
	lua_getfield(L, 1, "_cleanups");
	/* Each cleanup is stored as {fn, args...}. */
	lua_createtable(L, nargs + 1, 0);
	for (int i = 0; i <= nargs; i++) {
		lua_pushvalue(L, 2 + i);
		lua_rawseti(L, -2, i + 1);
	}
	lua_rawseti(L, -2, (lua_Integer) luaL_len(L, -2) + 1);
	lua_settop(L, 2);
	return 1;
}

/*
 * Scope:open([url [, timeout_ms]]) opens a client that the scope closes when
 * it ends; returns the client or nil, err.
 */
static int
lsv_scope_open(lua_State *L)
{
	const char *url;
	int         timeout;

	lsv_check_scope(L, 1);
	url     = lsv_check_text(L, 2, LSV_MAX_URL, 1);
	timeout = lsv_opt_timeout(L, 3);
	if (lsv_open_into(L, url, timeout) != 1)
		return 2;
	lua_getfield(L, 1, "_cleanups");
	lua_createtable(L, 2, 0);
	lua_pushcfunction(L, lsv_client_close);
	lua_rawseti(L, -2, 1);
	lua_pushvalue(L, -3);
	lua_rawseti(L, -2, 2);
	lua_rawseti(L, -2, (lua_Integer) luaL_len(L, -2) + 1);
	lua_pop(L, 1);
	return 1;
}

/*
 * lsv_scope_unwind runs every cleanup of the scope at idx, last first, each
 * under pcall, and empties the list. Returns 1 with the first cleanup error
 * pushed when one failed, 0 (nothing pushed) otherwise.
 */
static int
lsv_scope_unwind(lua_State *L, int idx)
{
	lua_Integer n;
	int         failed = 0;

	idx = lua_absindex(L, idx);
	lua_getfield(L, idx, "_cleanups");
	if (lua_type(L, -1) != LUA_TTABLE) {
		lua_pop(L, 1);
		return 0;
	}
	/* Detach the list first: a cleanup that re-enters sees an empty one.
	 */
	lua_newtable(L);
	lua_setfield(L, idx, "_cleanups");
	n = luaL_len(L, -1);
	for (lua_Integer i = n; i >= 1; i--) {
		lua_Integer argc;

		lua_rawgeti(L, -1, i);
		argc = luaL_len(L, -1);
		luaL_checkstack(L, (int) argc + 2, "scope cleanup");
		for (lua_Integer k = 1; k <= argc; k++)
			lua_rawgeti(L, -(int) k, k);
		if (lua_pcall(L, (int) argc - 1, 0, 0) != LUA_OK) {
			if (!failed) {
				/* Keep the first error below the list. */
				lua_insert(L, -3);
				failed = 1;
			} else {
				lua_pop(L, 1);
			}
		}
		lua_pop(L, 1); /* the {fn, args...} entry */
	}
	lua_pop(L, 1); /* the list */
	return failed;
}

/* Scope:close() runs the cleanups now; also __close of a scope. */
static int
lsv_scope_close(lua_State *L)
{
	lsv_check_scope(L, 1);
	if (lsv_scope_unwind(L, 1))
		return lua_error(L);
	return 0;
}

/*
 * supervise.scope(fn, ...) calls fn(scope, ...) under pcall, then runs the
 * scope's cleanups (Scope:defer, Scope:open) whatever happened, last
 * registered first. Returns true, fn's results; or false, err where err is
 * fn's error, else the first cleanup error. supervise.scope() with no
 * function returns a scope for a `local s <close> = supervise.scope()`.
 */
static int
lsv_scope(lua_State *L)
{
	int nargs, base, ok;

	if (lua_isnoneornil(L, 1)) {
		lsv_new_scope(L);
		return 1;
	}
	luaL_checktype(L, 1, LUA_TFUNCTION);
	nargs = lua_gettop(L) - 1;
	lsv_new_scope(L);
	lua_insert(L, 2); /* fn, scope, args... */
	lua_pushvalue(L, 2);
	lua_insert(L, 1); /* scope, fn, scope, args... */
	base = 1;
	ok   = lua_pcall(L, nargs + 1, LUA_MULTRET, 0) == LUA_OK;
	/* Stack: scope, results... (or scope, error). */
	if (lsv_scope_unwind(L, base)) {
		if (ok) {
			/* The body worked but a cleanup failed: report that.
			 */
			lua_pushboolean(L, 0);
			lua_insert(L, -2);
			return 2;
		}
		lua_pop(L, 1); /* the body's error wins */
	}
	if (!ok) {
		lua_pushboolean(L, 0);
		lua_insert(L, -2);
		return 2;
	}
	lua_pushboolean(L, 1);
	lua_replace(L, base); /* true, results... */
	return lua_gettop(L);
}

/* ---- miscellany ----------------------------------------------------------
 */

/*
 * supervise.sleep(ms) blocks the whole process (every coroutine) for ms
 * milliseconds, 0..INT_MAX; signals with a default action (SIGTERM) end it
 * as they end the process. For workers that have nothing else to wait on.
 */
static int
lsv_sleep(lua_State *L)
{
	lua_Integer     ms = luaL_checkinteger(L, 1);
	struct timespec ts, rem;

	luaL_argcheck(L, ms >= 0 && ms <= INT_MAX, 1, "must be 0..2147483647");
	ts.tv_sec  = (time_t) (ms / 1000);
	ts.tv_nsec = (long) (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &rem) != 0 && errno == EINTR)
		ts = rem;
	return 0;
}

/* supervise.version() is the version of the libsupervise actually linked. */
static int
lsv_version(lua_State *L)
{
	lua_pushstring(L, sv_version());
	return 1;
}

/* supervise.default_url() is the socket URL used without $SUPERVISE_URL. */
static int
lsv_default_url(lua_State *L)
{
	char   url[LSV_MAX_URL + 1];
	sv_err err = sv_default_url(url, sizeof(url));

	if (err != SV_OK)
		return lsv_fail(L, err, "default_url", NULL);
	lua_pushstring(L, url);
	return 1;
}

/* ---- luaopen_supervise ---------------------------------------------------
 */

/* supervise._now_ms() -> a monotonic clock in ms (for the prelude). */
static int
lsv_now_ms_fn(lua_State *L)
{
	lua_pushinteger(L, (lua_Integer) lsv_now_ms());
	return 1;
}

/*
 * lsv_load_prelude compiles the prelude (prelude.h) and calls it with the
 * module table at the top of the stack. A failure raises (a bug).
 */
static void
lsv_load_prelude(lua_State *L)
{
	luaL_Buffer b;

	luaL_buffinit(L, &b);
	for (size_t i = 0; i < sizeof(LSV_PRELUDE) / sizeof(LSV_PRELUDE[0]);
	     i++)
		luaL_addstring(&b, LSV_PRELUDE[i]);
	luaL_pushresult(&b);
	if (luaL_loadbufferx(L, lua_tostring(L, -1), luaL_len(L, -1),
	        "=supervise.prelude", "t")
	    != LUA_OK)
		lua_error(L);
	lua_remove(L, -2); /* the source */
	lua_pushvalue(L, -2);
	lua_call(L, 1, 0);
}

static const luaL_Reg lsv_functions[] = {
    {"open", lsv_open},
    {"default_client", lsv_default_client},
    {"from_env", lsv_from_env},
    {"scope", lsv_scope},
    {"check", lsv_check},
    {"error", lsv_error_new},
    {"is_error", lsv_is_error},
    {"err_name", lsv_err_name},
    {"strerror", lsv_strerror},
    {"sleep", lsv_sleep},
    {"version", lsv_version},
    {"default_url", lsv_default_url},
    {"open_events", lsv_open_events},
    {"events", lsv_events_for},
    {"_now_ms", lsv_now_ms_fn},
    {NULL, NULL},
};

/*
 * lsv_pin_module keeps this module, and with it libsupervise, loaded until
 * the process exits. lua_close() unloads C modules, but a thread a library
 * started (nng's, with the nng-based libsupervise 0.1.0) can outlive every
 * handle, and unloading its code under it crashes the exit. Failure leaves
 * the module unpinned.
 */
static const char lsv_anchor = 0; /* an address inside this module */

static void
lsv_pin_module(void)
{
	Dl_info info;
	void   *self;

	if (dladdr(&lsv_anchor, &info) == 0 || info.dli_fname == NULL)
		return;
	/* RTLD_NOLOAD: take a reference on the copy already loaded. */
	self = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
	(void) self; /* never closed, on purpose */
}

/*
 * luaopen_supervise is the module's entry point (`require "supervise"`).
 * It opens no connection: the default client is opened on first use.
 */
SV_API int luaopen_supervise(lua_State *L);

int
luaopen_supervise(lua_State *L)
{
	static const luaL_Reg client_methods[] = {
	    {"close", lsv_client_close},
	    {"closed", lsv_client_isclosed},
	    {"events", lsv_client_events},
	    {NULL, NULL},
	};
	static const luaL_Reg events_methods[] = {
	    {"next", lsv_events_next},
	    {"iter", lsv_events_iter},
	    {"close", lsv_events_close},
	    {"closed", lsv_events_isclosed},
	    {NULL, NULL},
	};
	static const luaL_Reg error_methods[] = {
	    {"is", lsv_error_is},
	    {NULL, NULL},
	};
	static const luaL_Reg scope_methods[] = {
	    {"defer", lsv_scope_defer},
	    {"open", lsv_scope_open},
	    {"close", lsv_scope_close},
	    {NULL, NULL},
	};

	luaL_checkversion(L);
	lsv_pin_module();

	/* supervise.Client */
	luaL_newmetatable(L, LSV_CLIENT_MT);
	luaL_newlib(L, client_methods);
	for (size_t i = 0; i < LSV_NREQUESTS; i++) {
		lua_pushinteger(L, (lua_Integer) i);
		lua_pushcclosure(L, lsv_method, 1);
		lua_setfield(L, -2, lsv_requests[i].name);
	}
	lua_setfield(L, -2, "__index");
	lua_pushcfunction(L, lsv_client_close);
	lua_setfield(L, -2, "__gc");
	lua_pushcfunction(L, lsv_client_close);
	lua_setfield(L, -2, "__close");
	lua_pushcfunction(L, lsv_client_tostring);
	lua_setfield(L, -2, "__tostring");
	lua_pushliteral(L, "supervise.Client");
	lua_setfield(L, -2, "__name");
	lua_pop(L, 1);

	/* supervise.Events */
	luaL_newmetatable(L, LSV_EVENTS_MT);
	luaL_newlib(L, events_methods);
	lua_setfield(L, -2, "__index");
	lua_pushcfunction(L, lsv_events_close);
	lua_setfield(L, -2, "__gc");
	lua_pushcfunction(L, lsv_events_close);
	lua_setfield(L, -2, "__close");
	lua_pushcfunction(L, lsv_events_tostring);
	lua_setfield(L, -2, "__tostring");
	lua_pushliteral(L, "supervise.Events");
	lua_setfield(L, -2, "__name");
	lua_pop(L, 1);

	/* supervise.Error */
	luaL_newmetatable(L, LSV_ERROR_MT);
	luaL_newlib(L, error_methods);
	lua_setfield(L, -2, "__index");
	lua_pushcfunction(L, lsv_error_tostring);
	lua_setfield(L, -2, "__tostring");
	lua_pop(L, 1);

	/* supervise.Identity */
	luaL_newmetatable(L, LSV_IDENTITY_MT);
	lua_pushcfunction(L, lsv_identity_tostring);
	lua_setfield(L, -2, "__tostring");
	lua_pop(L, 1);

	/* supervise.Scope */
	luaL_newmetatable(L, LSV_SCOPE_MT);
	luaL_newlib(L, scope_methods);
	lua_setfield(L, -2, "__index");
	lua_pushcfunction(L, lsv_scope_close);
	lua_setfield(L, -2, "__close");
	lua_pop(L, 1);

	luaL_newlib(L, lsv_functions);
	for (size_t i = 0; i < LSV_NREQUESTS; i++) {
		lua_pushinteger(L, (lua_Integer) i);
		lua_pushcclosure(L, lsv_module_call, 1);
		lua_setfield(L, -2, lsv_requests[i].name);
	}
	/* supervise.activity, supervise.activity_depth (activity.c) */
	lsv_activity_register(L);
	/* Error codes by name: supervise.ENOTFOUND == 4, ... */
#define LSV_ERR_CONST_(name, value, msg) \
	lua_pushinteger(L, value);       \
	lua_setfield(L, -2, #name);
	SV_ERR_MAP(LSV_ERR_CONST_)
#undef LSV_ERR_CONST_
	lua_pushinteger(L, SV_TIMEOUT_INFINITE);
	lua_setfield(L, -2, "TIMEOUT_INFINITE");
	lua_pushinteger(L, LSV_DEFAULT_TIMEOUT_MS);
	lua_setfield(L, -2, "DEFAULT_TIMEOUT_MS");
	lua_pushinteger(L, SV_PROTOCOL_VERSION);
	lua_setfield(L, -2, "PROTOCOL_VERSION");
	lua_pushliteral(L, "supervise-lua " LSV_VERSION);
	lua_setfield(L, -2, "_VERSION");

	/* supervise.SubWorker: a grant, released by __gc */
	luaL_newmetatable(L, LSV_SUBW_MT);
	lua_pushcfunction(L, lsv_subw_gc);
	lua_setfield(L, -2, "__gc");
	lua_pushliteral(L, "supervise.SubWorker");
	lua_setfield(L, -2, "__name");
	lua_pop(L, 1);

	/* supervise.Lease (its methods come from the prelude) */
	luaL_newmetatable(L, LSV_LEASE_MT);
	lua_pop(L, 1);
	/* The prelude (prelude.h): with_lease, lease methods, drain_watch. */
	lsv_load_prelude(L);
	return 1;
}
