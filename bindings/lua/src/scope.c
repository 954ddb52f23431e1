/*
 * scope.c — scoped cleanups in Lua: supervise.scope and the scope object
 * ("supervise.Scope": defer, open, close).
 *
 * Design: supervise.scope(fn, ...) runs fn under pcall with a scope object
 * that collects cleanups (clients opened through it, any function with
 * its arguments: scope:defer(lease.release, l)) and always runs them, last
 * registered first, each under pcall; the body's error wins over a
 * cleanup's. A scope is a table whose field "_cleanups" is an array of
 * {fn, args...} entries; it is also a to-be-closed value for a
 * `local s <close> = supervise.scope()`.
 */
#include "lsv.h"

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

/* lsv_scope_init creates the metatable "supervise.Scope". */
static void
lsv_scope_init(lua_State *L)
{
	static const luaL_Reg scope_methods[] = {
	    {"defer", lsv_scope_defer},
	    {"open", lsv_scope_open},
	    {"close", lsv_scope_close},
	    {NULL, NULL},
	};

	luaL_newmetatable(L, LSV_SCOPE_MT);
	luaL_newlib(L, scope_methods);
	lua_setfield(L, -2, "__index");
	lua_pushcfunction(L, lsv_scope_close);
	lua_setfield(L, -2, "__close");
	lua_pop(L, 1);
}

static const luaL_Reg lsv_scope_functions[] = {
    {"scope", lsv_scope},
    {NULL, NULL},
};

/* The scope family: supervise.Scope and supervise.scope. */
const lsv_family lsv_scope_family
    = {"scope", lsv_scope_init, lsv_scope_functions, NULL, NULL};
