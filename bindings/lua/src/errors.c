/*
 * errors.c — error objects: how a failed call reports its failure to Lua.
 *
 * Design: errors follow Lua's idiom. A call that can fail at run time
 * returns nil, err where err is an error object: a table with the
 * metatable "supervise.Error" and the fields code, name, message and op
 * (err:is(code or name) compares, tostring(err) reads "supervise.OP: NAME
 * (CODE): message"). Bugs in the caller raise instead (values.c).
 * supervise.check() turns nil, err into a raised error object for code
 * that prefers pcall; supervise.error() makes one in the same shape. Code
 * names and descriptions come from enums.c.
 */
#include "lsv.h"

/*
 * lsv_new_error pushes an error object {code, name, message, op}. message
 * is detail when non-empty, else the code's description; op may be NULL.
 * An unknown code keeps its number, with the name "UNKNOWN".
 */
void
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
int
lsv_fail(lua_State *L, sv_err err, const char *op, const char *detail)
{
	lua_pushnil(L);
	lsv_new_error(L, err, op, detail);
	return 2;
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

/* lsv_errors_init creates the metatable "supervise.Error". */
static void
lsv_errors_init(lua_State *L)
{
	static const luaL_Reg error_methods[] = {
	    {"is", lsv_error_is},
	    {NULL, NULL},
	};

	luaL_newmetatable(L, LSV_ERROR_MT);
	luaL_newlib(L, error_methods);
	lua_setfield(L, -2, "__index");
	lua_pushcfunction(L, lsv_error_tostring);
	lua_setfield(L, -2, "__tostring");
	lua_pop(L, 1);
}

static const luaL_Reg lsv_errors_functions[] = {
    {"check", lsv_check},
    {"error", lsv_error_new},
    {"is_error", lsv_is_error},
    {"err_name", lsv_err_name},
    {"strerror", lsv_strerror},
    {NULL, NULL},
};

/* The errors family: supervise.Error and its module functions. */
const lsv_family lsv_errors_family
    = {"errors", lsv_errors_init, lsv_errors_functions, NULL, NULL};
