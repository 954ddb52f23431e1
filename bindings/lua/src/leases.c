/*
 * leases.c — leases and lease sessions from Lua (docs/leases.md; protocol
 * section 11): lease_acquire, lease_renew, lease_release, leases,
 * session_open, session_renew, session_close, and the lease table.
 *
 * Design: a lease is a plain table {id, pool, slot, token, resource,
 * expires_in_ms, holder, unclaimed, epoch, session} with the metatable
 * "supervise.Lease", copied out of the C handle, which is freed before
 * returning. The table remembers the client it came from (field _client)
 * so that its methods speak for the same holder. The compositions written
 * in Lua (lease:release, lease:renew, supervise.with_lease) are this
 * family's Lua part, lua/supervise/leases.lua.
 */
#include <limits.h>

#include "lsv.h"

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

/*
 * lsv_lease_answer ends a request whose answer is the lease l: on SV_OK
 * pushes it (lsv_push_lease with session and client_idx) and frees l,
 * otherwise pushes nil, err (lsv_call_fail; l was not set). Returns the
 * number pushed.
 */
static int
lsv_lease_answer(lua_State *L, lsv_ctx *x, sv_err err, const char *op,
    sv_lease *l, uint64_t session, int client_idx)
{
	if (err != SV_OK)
		return lsv_call_fail(L, x->u, err, op);
	lsv_push_lease(L, l, session, client_idx);
	sv_lease_free(l);
	return 1;
}

/*
 * lsv_lease_id_args reads the arguments (id [, session [, timeout]]) of
 * op, a request about one lease, into *id, *session and *timeout (raising
 * on a bad one or a missing id), then readies the client (lsv_ready).
 * Returns 1, or 0 with nil, err pushed.
 */
static int
lsv_lease_id_args(lua_State *L, lsv_ctx *x, const char *op, uint64_t *id,
    uint64_t *session, int *timeout)
{
	*id      = lsv_opt_u64(L, x->a);
	*session = lsv_opt_u64(L, x->a + 1);
	*timeout = lsv_opt_timeout(L, x->a + 2);
	luaL_argcheck(L, *id > 0, x->a, "a lease id is required");
	return lsv_ready(L, x, op, timeout);
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
	sv_lease   *l       = NULL;
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
	return lsv_lease_answer(
	    L, x, err, "lease_acquire", l, session, client);
}

/* lease_renew(id [, session [, timeout]]) -> the renewed lease. Errors:
 * ENOTFOUND (gone), EPERM (not its holder), ECONFLICT. */
static int
lsv_op_lease_renew(lua_State *L, lsv_ctx *x)
{
	int       client = lsv_method_client(x);
	uint64_t  id, session;
	int       timeout;
	sv_lease *l = NULL;
	sv_err    err;

	if (!lsv_lease_id_args(L, x, "lease_renew", &id, &session, &timeout))
		return 2;
	err = sv_client_lease_renew(x->u->c, id, session, timeout, &l);
	return lsv_lease_answer(L, x, err, "lease_renew", l, session, client);
}

/* lease_release(id [, session [, timeout]]) -> true (also for a lease that
 * is gone). Errors: EPERM (the caller is not its holder). */
static int
lsv_op_lease_release(lua_State *L, lsv_ctx *x)
{
	uint64_t id, session;
	int      timeout;
	sv_err   err;

	if (!lsv_lease_id_args(L, x, "lease_release", &id, &session, &timeout))
		return 2;
	err = sv_client_lease_release(x->u->c, id, session, timeout);
	return lsv_done(L, x, err, "lease_release");
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

/* A session id argument: any but 0; a session needs no worker. */
static const lsv_u64_rule lsv_session_id
    = {1, UINT64_MAX, "a session id is required", 0};

/* session_renew(id [, timeout]) -> true; ENOTFOUND once expired. */
static int
lsv_op_session_renew(lua_State *L, lsv_ctx *x)
{
	return lsv_u64_request(
	    L, x, "session_renew", sv_client_session_renew, &lsv_session_id);
}

/* session_close(id [, timeout]) -> true, ending its leases. */
static int
lsv_op_session_close(lua_State *L, lsv_ctx *x)
{
	return lsv_u64_request(
	    L, x, "session_close", sv_client_session_close, &lsv_session_id);
}

/* lsv_leases_init creates the metatable "supervise.Lease" (its methods
 * come from the Lua part, supervise/leases.lua). */
static void
lsv_leases_init(lua_State *L)
{
	luaL_newmetatable(L, LSV_LEASE_MT);
	lua_pop(L, 1);
}

static const lsv_request lsv_leases_requests[] = {
    {"lease_acquire", lsv_op_lease_acquire},
    {"lease_renew", lsv_op_lease_renew},
    {"lease_release", lsv_op_lease_release},
    {"leases", lsv_op_leases},
    {"session_open", lsv_op_session_open},
    {"session_renew", lsv_op_session_renew},
    {"session_close", lsv_op_session_close},
    {NULL, NULL},
};

/* The leases family: supervise.Lease, the lease and session requests, and
 * the Lua part supervise.leases (lease methods, with_lease). */
const lsv_family lsv_leases_family = {
    "leases", lsv_leases_init, NULL, lsv_leases_requests, "supervise.leases"};
