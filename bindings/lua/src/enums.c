/*
 * enums.c — the C library's enumerations and constants as the Lua module
 * shows them: the names of sv_kind, the names and descriptions of sv_err
 * codes, and the constants supervise.ENOTFOUND, ..., TIMEOUT_INFINITE,
 * PROTOCOL_VERSION and DEFAULT_TIMEOUT_MS.
 *
 * Design: every enumeration and constant the binding shows is in this one
 * file, read from the C headers (the SV_ERR_MAP X-macro, sv_err_name,
 * sv_strerror; sv_state_name is called where a state is shown), so that a
 * table generated from the headers can replace it whole. Nothing here keeps
 * a copy of a number: a code the library does not know is "UNKNOWN".
 */
#include <limits.h>

#include "lsv.h"

/* lsv_kind_name names a kind the way Lua code compares it. */
const char *
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

/* lsv_code_name is sv_err_name(code), "UNKNOWN" for any unknown value. */
const char *
lsv_code_name(lua_Integer code)
{
	return code >= 0 && code <= INT_MAX ? sv_err_name((sv_err) code)
	                                    : "UNKNOWN";
}

/* lsv_code_text is sv_strerror(code), "unknown error" for unknown values. */
const char *
lsv_code_text(lua_Integer code)
{
	return code >= 0 && code <= INT_MAX ? sv_strerror((sv_err) code)
	                                    : "unknown error";
}

/*
 * lsv_enums_init sets the constants in the module table on top of the
 * stack: every error code by name (supervise.ENOTFOUND == 4, ...),
 * TIMEOUT_INFINITE, DEFAULT_TIMEOUT_MS and PROTOCOL_VERSION.
 */
static void
lsv_enums_init(lua_State *L)
{
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
}

/* The enums family: the constants of the module table. */
const lsv_family lsv_enums_family
    = {"enums", lsv_enums_init, NULL, NULL, NULL};
