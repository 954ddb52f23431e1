/*
 * workers.c — reading workers from Lua: supervise.list and
 * supervise.status, and the worker table both return.
 *
 * Design: a worker is a plain table copied out of the C list (sv_workers),
 * which is freed before returning: group, ordinal, generation, pid, state
 * (its name, from sv_state_name) and state_number, uptime, restarts, the
 * last exit (nil when there is none), readiness and status line, backoff,
 * drain and activity. Nothing Lua holds points into C memory.
 */
#include <limits.h>

#include "lsv.h"

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

static const lsv_request lsv_workers_requests[] = {
    {"list", lsv_op_list},
    {"status", lsv_op_status},
    {NULL, NULL},
};

/* The workers family: list and status. */
const lsv_family lsv_workers_family
    = {"workers", NULL, NULL, lsv_workers_requests, NULL};
