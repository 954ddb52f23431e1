/*
 * client.c — the client object ("supervise.Client") and the one path every
 * request takes to the supervisor: supervise.open, the default client,
 * hello, and the dispatch of a request as a method or a module function.
 *
 * Design:
 *   - A client is a full userdata with __gc and __close over an sv_client;
 *     close is idempotent, and a call on a closed client returns ECLOSED.
 *     Every request goes through libsupervise, which owns the protocol,
 *     deadlines and fork safety.
 *   - The module-level functions (supervise.whoami, supervise.list, ...)
 *     use a default client, opened lazily on first use from $SUPERVISE_URL
 *     (else the default socket) and kept in the registry; one deadline
 *     covers the open and the request (lsv_ready).
 *   - Each request of a family (lsv_request) is one lsv_op: module.c makes
 *     it both a Client method (lsv_method) and a module function
 *     (lsv_module_call), with its row as the closure's upvalue.
 *   - Every call that talks to the supervisor takes a timeout in ms
 *     (default LSV_DEFAULT_TIMEOUT_MS, -1 waits forever).
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "lsv.h"

static int lsv_push_default(lua_State *L, int timeout_ms);

/* lsv_to_client checks arg 1 is a client; NULL handle when closed. */
lsv_client *
lsv_to_client(lua_State *L)
{
	return (lsv_client *) luaL_checkudata(L, 1, LSV_CLIENT_MT);
}

/* lsv_closed returns the ECLOSED error of a call on a closed client. */
int
lsv_closed(lua_State *L, const char *op)
{
	return lsv_fail(L, SV_ECLOSED, op, "the client is closed");
}

/*
 * lsv_open_into opens a client on url (NULL: $SUPERVISE_URL) and pushes
 * the userdata, or pushes nil, err. Returns the number of values pushed.
 */
int
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
int
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
int
lsv_call_fail(lua_State *L, lsv_client *u, sv_err err, const char *op)
{
	return lsv_fail(L, err, op, sv_client_error_message(u->c));
}

/* lsv_done ends a request whose answer is true: pushes true on SV_OK,
 * otherwise nil, err (lsv_call_fail). Returns the number pushed. */
int
lsv_done(lua_State *L, lsv_ctx *x, sv_err err, const char *op)
{
	if (err != SV_OK)
		return lsv_call_fail(L, x->u, err, op);
	lua_pushboolean(L, 1);
	return 1;
}

/* lsv_u64_request runs op(v [, timeout]) -> true: v the integer argument
 * at x->a, checked by rule, then call(client, v, timeout). */
int
lsv_u64_request(lua_State *L, lsv_ctx *x, const char *op,
    sv_err (*call)(sv_client *, uint64_t, int), const lsv_u64_rule *rule)
{
	uint64_t v       = lsv_opt_u64(L, x->a);
	int      timeout = lsv_opt_timeout(L, x->a + 1);

	luaL_argcheck(L, v >= rule->lo && v <= rule->hi, x->a, rule->msg);
	if (rule->worker && lsv_not_worker(L, x, op))
		return 2;
	if (!lsv_ready(L, x, op, &timeout))
		return 2;
	return lsv_done(L, x, call(x->u->c, v, timeout), op);
}

/*
 * lsv_ready makes x->u an open client: for a module-level call it opens the
 * default client if needed, with *timeout_ms, and takes the time that took
 * off *timeout_ms (one deadline for both). Returns 1, or 0 with nil, err
 * pushed (the open's error, or ECLOSED for a closed client).
 */
int
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

/*
 * lsv_not_worker: module-level worker calls without $SUPERVISE_URL give
 * ENOTWORKER at once (pushes nil, err and returns 1), as whoami does.
 */
int
lsv_not_worker(lua_State *L, lsv_ctx *x, const char *op)
{
	const char *env = getenv(SV_ENV_URL);

	if (x->u != NULL || (env != NULL && env[0] != '\0'))
		return 0;
	lsv_fail(L, SV_ENOTWORKER, op,
	    "$" SV_ENV_URL " is not set: not a supervised worker");
	return 1;
}

/* lsv_method_client is the stack index of a method's client, 0 for a
 * module-level call. */
int
lsv_method_client(const lsv_ctx *x)
{
	return x->u != NULL && x->a == 2 ? 1 : 0;
}

/*
 * lsv_push_durability pushes the durability of Hello h as a table {known,
 * ok (booleans), reason, since_ms (integer, wall-clock ms since the Unix
 * epoch), message}; a server before v1.5 gives known = false, ok = false,
 * "", 0, "" (docs/durability.md).
 */
static void
lsv_push_durability(lua_State *L, const sv_hello *h)
{
	lua_createtable(L, 0, 5);
	lua_pushboolean(L, sv_hello_durability_known(h));
	lua_setfield(L, -2, "known");
	lua_pushboolean(L, sv_hello_durability_ok(h));
	lua_setfield(L, -2, "ok");
	lua_pushstring(L, sv_hello_durability_reason(h));
	lua_setfield(L, -2, "reason");
	lua_pushinteger(L, (lua_Integer) sv_hello_durability_since_ms(h));
	lua_setfield(L, -2, "since_ms");
	lua_pushstring(L, sv_hello_durability_message(h));
	lua_setfield(L, -2, "message");
}

/* hello([timeout]) -> {version, minor_version, server_name, supervisor_id,
 * features = {...}, events_url, durability = {...}} */
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
	lua_createtable(L, 0, 7);
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
	lsv_push_durability(L, h);
	lua_setfield(L, -2, "durability");
	sv_hello_free(h);
	return 1;
}

/*
 * lsv_method is Client:<name>(...) for the request whose lsv_request row
 * is upvalue 1 (a light userdata; see the lsv_op_* comments): its result,
 * or nil, err (ECLOSED once closed).
 */
int
lsv_method(lua_State *L)
{
	const lsv_request *r
	    = (const lsv_request *) lua_touserdata(L, lua_upvalueindex(1));
	lsv_ctx x = {lsv_to_client(L), 2, 0};

	return r->op(L, &x);
}

/*
 * lsv_module_call is supervise.<name>(...) for the request in upvalue 1:
 * the same request on the default client, opened on first use; one
 * deadline covers opening it and the request.
 */
int
lsv_module_call(lua_State *L)
{
	const lsv_request *r
	    = (const lsv_request *) lua_touserdata(L, lua_upvalueindex(1));
	lsv_ctx x = {NULL, 1, lsv_now_ms()};

	return r->op(L, &x);
}

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

/* lsv_client_init creates the metatable "supervise.Client"; the requests'
 * methods are added to its __index by module.c, Client:events by
 * events.c. */
static void
lsv_client_init(lua_State *L)
{
	static const luaL_Reg client_methods[] = {
	    {"close", lsv_client_close},
	    {"closed", lsv_client_isclosed},
	    {NULL, NULL},
	};

	luaL_newmetatable(L, LSV_CLIENT_MT);
	luaL_newlib(L, client_methods);
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
}

static const luaL_Reg lsv_client_functions[] = {
    {"open", lsv_open},
    {"default_client", lsv_default_client},
    {NULL, NULL},
};

static const lsv_request lsv_client_requests[] = {
    {"hello", lsv_op_hello},
    {NULL, NULL},
};

/* The client family: supervise.Client, open, default_client, hello. */
const lsv_family lsv_client_family = {"client", lsv_client_init,
    lsv_client_functions, lsv_client_requests, NULL};
