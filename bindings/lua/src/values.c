/*
 * values.c — values crossing from Lua into C and back: the checks of
 * caller-supplied arguments and the pushing of 64-bit integers.
 *
 * Design: a wrong argument (a wrong type, a number out of range, a string
 * with a NUL byte or over its bound) is a bug in the caller and raises a
 * Lua error at once, before any request is sent; run-time failures are
 * returned as nil, err by the requests themselves (errors.c). Unsigned
 * 64-bit values above LUA_MAXINTEGER become floats rather than wrap.
 */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "lsv.h"

/* lsv_push_u64 pushes v as an integer, or as a float above LUA_MAXINTEGER. */
void
lsv_push_u64(lua_State *L, uint64_t v)
{
	if (v <= (uint64_t) LUA_MAXINTEGER)
		lua_pushinteger(L, (lua_Integer) v);
	else
		lua_pushnumber(L, (lua_Number) v);
}

/* lsv_has_mt tells whether the value at idx has the metatable name. */
int
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

/*
 * lsv_check_text returns the string at idx, which must be a string (not a
 * number) without NUL bytes of at most max bytes. Optional when opt: nil or
 * none gives NULL.
 */
const char *
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
uint32_t
lsv_check_u32(lua_State *L, int idx)
{
	lua_Integer v = luaL_checkinteger(L, idx);

	luaL_argcheck(L, v >= 0 && v <= (lua_Integer) UINT32_MAX, idx,
	    "must be in 0..4294967295");
	return (uint32_t) v;
}

/* lsv_opt_timeout reads an optional timeout in ms: -1..INT_MAX. */
int
lsv_opt_timeout(lua_State *L, int idx)
{
	lua_Integer t = luaL_optinteger(L, idx, LSV_DEFAULT_TIMEOUT_MS);

	luaL_argcheck(L, t >= -1 && t <= INT_MAX, idx,
	    "timeout must be -1 (infinite) or 0..2147483647 ms");
	return (int) t;
}

/*
 * lsv_opt_u64 reads an optional non-negative integer at idx (nil or none:
 * 0), such as a session or lease id.
 */
uint64_t
lsv_opt_u64(lua_State *L, int idx)
{
	lua_Integer v;

	if (lua_isnoneornil(L, idx))
		return 0;
	v = luaL_checkinteger(L, idx);
	luaL_argcheck(L, v >= 0, idx, "must be >= 0");
	return (uint64_t) v;
}
