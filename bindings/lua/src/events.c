/*
 * events.c — the supervisor's event stream from Lua: the event reader
 * ("supervise.Events"), supervise.open_events, supervise.events (a generic
 * for) and Client:events.
 *
 * Design: the reader is a full userdata over sv_events with __gc and
 * __close, thread-free and fork-safe like the client (the C reader
 * reconnects in a child). An event is a plain table copied out of the C
 * event, which is freed before returning. supervise.events() returns what
 * a generic for needs, with the reader as its to-be-closed value, so the
 * reader is closed when the loop ends, by break or by an error. A reader
 * is read only when Lua asks: nothing runs in the background.
 */
#include <limits.h>
#include <stdio.h>

#include "lsv.h"

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

/* lsv_events_init creates the metatable "supervise.Events" and adds
 * Client:events to the client's methods (client.c registers first). */
static void
lsv_events_init(lua_State *L)
{
	static const luaL_Reg events_methods[] = {
	    {"next", lsv_events_next},
	    {"iter", lsv_events_iter},
	    {"close", lsv_events_close},
	    {"closed", lsv_events_isclosed},
	    {NULL, NULL},
	};

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

	luaL_getmetatable(L, LSV_CLIENT_MT);
	lua_getfield(L, -1, "__index");
	lua_pushcfunction(L, lsv_client_events);
	lua_setfield(L, -2, "events");
	lua_pop(L, 2);
}

static const luaL_Reg lsv_events_functions[] = {
    {"open_events", lsv_open_events},
    {"events", lsv_events_for},
    {NULL, NULL},
};

/* The events family: supervise.Events, open_events, events, and
 * Client:events. */
const lsv_family lsv_events_family
    = {"events", lsv_events_init, lsv_events_functions, NULL, NULL};
