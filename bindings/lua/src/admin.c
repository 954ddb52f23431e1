/*
 * admin.c — administering groups and workers from Lua: scale, stop,
 * restart (plain or compare-and-swap on the generation), reset, and the
 * group list (supervise.groups).
 *
 * Design: each request is one lsv_op over the matching C call (the C
 * client's admin.c); its answer is a plain value (the previous size, true)
 * or plain tables copied out of the C list, which is freed before
 * returning. Whether a request may be resent after a lost connection is
 * the C library's rule, not this file's.
 */
#include <limits.h>

#include "lsv.h"

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
	return lsv_done(L, x, err, "restart");
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
	err = sv_client_reset(x->u->c, group, timeout);
	return lsv_done(L, x, err, "reset");
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

static const lsv_request lsv_admin_requests[] = {
    {"scale", lsv_op_scale},
    {"stop", lsv_op_stop},
    {"restart", lsv_op_restart},
    {"reset", lsv_op_reset},
    {"groups", lsv_op_groups},
    {NULL, NULL},
};

/* The admin family: scale, stop, restart, reset, groups. */
const lsv_family lsv_admin_family
    = {"admin", NULL, NULL, lsv_admin_requests, NULL};
