/*
 * drain.c — draining workers from Lua (protocol section 12): the
 * administrator's drain and drain_report, and a worker's own
 * drain_extend, drain_ack and draining.
 *
 * Design: a drain report is a plain table {id, done, workers = {...}}
 * copied out of the C report, which is freed before returning. The calls
 * a worker makes about itself give ENOTWORKER at once outside a worker
 * (lsv_not_worker). The watcher written in Lua (supervise.drain_watch:
 * poll, draining, on_drain, check, extend, ack, close) is this family's
 * Lua part, lua/supervise/drain.lua.
 */
#include <limits.h>

#include "lsv.h"

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
 * lsv_report_answer ends a request whose answer is the drain report r: on
 * SV_OK pushes it (lsv_push_report) and frees r, otherwise pushes nil, err
 * (lsv_call_fail; r was not set). Returns the number pushed.
 */
static int
lsv_report_answer(
    lua_State *L, lsv_ctx *x, sv_err err, const char *op, sv_drain_report *r)
{
	if (err != SV_OK)
		return lsv_call_fail(L, x->u, err, op);
	lsv_push_report(L, r);
	sv_drain_report_free(r);
	return 1;
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
	sv_drain_report *r       = NULL;
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
	return lsv_report_answer(L, x, err, "drain", r);
}

/* drain_report(id [, timeout]) -> the drain's current report. */
static int
lsv_op_drain_report(lua_State *L, lsv_ctx *x)
{
	uint64_t         id      = lsv_opt_u64(L, x->a);
	int              timeout = lsv_opt_timeout(L, x->a + 1);
	sv_drain_report *r       = NULL;
	sv_err           err;

	luaL_argcheck(L, id > 0, x->a, "a drain id is required");
	if (!lsv_ready(L, x, "drain_report", &timeout))
		return 2;
	err = sv_client_drain_report(x->u->c, id, timeout, &r);
	return lsv_report_answer(L, x, err, "drain_report", r);
}

/* drain_extend(more_ms [, timeout]) -> true: this draining worker asks for
 * its deadline to be now + more_ms. ENOTFOUND when it is not draining. */
static int
lsv_op_drain_extend(lua_State *L, lsv_ctx *x)
{
	static const lsv_u64_rule more_ms
	    = {1, 86400000, "more_ms must be 1..86400000", 1};

	return lsv_u64_request(
	    L, x, "drain_extend", sv_client_drain_extend, &more_ms);
}

/* drain_ack([served [, timeout]]) -> true: this worker has drained (it
 * exits next) after serving served work items. */
static int
lsv_op_drain_ack(lua_State *L, lsv_ctx *x)
{
	static const lsv_u64_rule served = {0, UINT64_MAX, "", 1};

	return lsv_u64_request(
	    L, x, "drain_ack", sv_client_drain_ack, &served);
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

static const lsv_request lsv_drain_requests[] = {
    {"drain", lsv_op_drain},
    {"drain_report", lsv_op_drain_report},
    {"drain_extend", lsv_op_drain_extend},
    {"drain_ack", lsv_op_drain_ack},
    {"draining", lsv_op_draining},
    {NULL, NULL},
};

/* The drain family: the drain requests and the Lua part supervise.drain
 * (drain_watch). */
const lsv_family lsv_drain_family
    = {"drain", NULL, NULL, lsv_drain_requests, "supervise.drain"};
