/*
 * subworkers.c — sub-workers from Lua (docs/subworkers.md; protocol
 * v1.4): register_thread, release_thread, register_child, release_child
 * and the grant ("supervise.SubWorker") that a registration leaves.
 *
 * A Lua state has no threads of its own: its coroutines run one at a time
 * on the OS thread that runs the state, and are not sub-workers. What is
 * registered:
 *   - register_thread(label): the OS thread running this Lua state, under
 *     label (its role): for a C host that runs one lua_State per thread,
 *     and for the main thread of a plain worker. One registration per state;
 *     released by release_thread, or when the state is closed (__gc of the
 *     grant), or when the process dies.
 *   - register_child(): this process, forked by a worker (a C host's fork,
 *     luaposix), as [process p, process c]. Once per process; released by
 *     release_child or when it exits (the supervisor watches it).
 * Each grant is a "supervise.SubWorker" userdata kept in the registry table
 * LSV_SUBW_KEY (fields thread, child) with two user values: the client it
 * was registered on (kept alive for the release) and its identity table.
 * A grant remembers the pid that made it: in a forked child the parent's
 * grants are ignored, never released.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* gettid */
#endif
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lsv.h"

/* A sub-worker's label (docs/subworkers.md), the deadline of a release
 * run by __gc, and the retry step of register_child on ECONFLICT. */
#define LSV_MAX_LABEL               64
#define LSV_SUBW_RELEASE_TIMEOUT_MS 1000
#define LSV_SUBW_RETRY_MS           20

/* lsv_frame_name is the name of frame i of id, "" when there is none. */
static const char *
lsv_frame_name(const sv_identity *id, size_t i)
{
	sv_kind     kind;
	uint32_t    ord;
	const char *name;

	return sv_identity_frame(id, i, &kind, &ord, &name) == SV_OK
	        && name != NULL
	    ? name
	    : "";
}

/* A grant. id is NULL once released. */
typedef struct lsv_subw {
	sv_identity *id;
	pid_t        pid;
} lsv_subw;

/*
 * lsv_subw_release releases g on client c (NULL or closed: only forgets
 * it) and frees its identity; in another process than the one that made it
 * only forgets it. Returns the release's error (SV_OK when nothing to do).
 */
static sv_err
lsv_subw_release(lsv_subw *g, sv_client *c, int timeout_ms)
{
	sv_err err = SV_OK;

	if (g->id == NULL)
		return SV_OK;
	if (g->pid == getpid() && c != NULL)
		err = sv_client_subworker_release(c, g->id, timeout_ms);
	sv_identity_free(g->id);
	g->id = NULL;
	return err;
}

/* SubWorker:__gc releases a grant still held by this process (1 s). */
static int
lsv_subw_gc(lua_State *L)
{
	lsv_subw   *g = (lsv_subw *) luaL_checkudata(L, 1, LSV_SUBW_MT);
	lsv_client *u;

	lua_getiuservalue(L, 1, 1);
	u = (lsv_client *) luaL_testudata(L, -1, LSV_CLIENT_MT);
	(void) lsv_subw_release(
	    g, u != NULL ? u->c : NULL, LSV_SUBW_RELEASE_TIMEOUT_MS);
	return 0;
}

/*
 * lsv_subw_get pushes the live grant of this process in slot ("thread" or
 * "child") of the registry table, or nothing; returns it or NULL.
 */
static lsv_subw *
lsv_subw_get(lua_State *L, const char *slot)
{
	lsv_subw *g;

	if (lua_getfield(L, LUA_REGISTRYINDEX, LSV_SUBW_KEY) != LUA_TTABLE) {
		lua_pop(L, 1);
		return NULL;
	}
	lua_getfield(L, -1, slot);
	lua_remove(L, -2);
	g = (lsv_subw *) luaL_testudata(L, -1, LSV_SUBW_MT);
	if (g == NULL || g->id == NULL || g->pid != getpid()) {
		lua_pop(L, 1);
		return NULL;
	}
	return g;
}

/* lsv_subw_set stores the value at the top (popped) in slot. */
static void
lsv_subw_set(lua_State *L, const char *slot)
{
	if (lua_getfield(L, LUA_REGISTRYINDEX, LSV_SUBW_KEY) != LUA_TTABLE) {
		lua_pop(L, 1);
		lua_newtable(L);
		lua_pushvalue(L, -1);
		lua_setfield(L, LUA_REGISTRYINDEX, LSV_SUBW_KEY);
	}
	lua_insert(L, -2);
	lua_setfield(L, -2, slot);
	lua_pop(L, 1);
}

/*
 * lsv_subw_opts reads argument idx: nil, or a table {number =, timeout =,
 * label = (when want_label)}. Raises on bad values. *label stays NULL
 * unless given; the string stays referenced by the table on the stack.
 */
static void
lsv_subw_opts(lua_State *L, int idx, int want_label, int64_t *number,
    int *timeout, const char **label)
{
	*number  = -1;
	*timeout = LSV_DEFAULT_TIMEOUT_MS;
	if (lua_isnoneornil(L, idx))
		return;
	luaL_argexpected(
	    L, lua_type(L, idx) == LUA_TTABLE, idx, "table or nil");
	lua_getfield(L, idx, "number");
	if (!lua_isnil(L, -1)) {
		int         ok;
		lua_Integer v = lua_tointegerx(L, -1, &ok);

		luaL_argcheck(L, ok && v >= 0 && v <= (lua_Integer) UINT32_MAX,
		    idx, "number must be an integer in 0..4294967295");
		*number = (int64_t) v;
	}
	lua_getfield(L, idx, "timeout");
	*timeout = lsv_opt_timeout(L, lua_gettop(L));
	lua_pop(L, 2);
	if (want_label) {
		lua_getfield(L, idx, "label");
		*label = lsv_check_text(L, lua_gettop(L), LSV_MAX_LABEL, 1);
		luaL_argcheck(L, *label == NULL || (*label)[0] != '\0', idx,
		    "label must be 1..64 bytes");
		lua_pop(L, 1); /* the table keeps the string alive */
	}
}

/*
 * lsv_subw_push_new pushes a new grant for id made on the client at stack
 * index cidx, its identity table as user value 2; leaves the identity
 * table on top (under it, the grant, for lsv_subw_set). Takes id.
 */
static void
lsv_subw_push_new(lua_State *L, int cidx, sv_identity *id)
{
	lsv_subw *g = (lsv_subw *) lua_newuserdatauv(L, sizeof(*g), 2);

	g->id  = id;
	g->pid = getpid();
	luaL_setmetatable(L, LSV_SUBW_MT);
	lua_pushvalue(L, cidx);
	lua_setiuservalue(L, -2, 1);
	lsv_push_identity(L, id);
	lua_pushvalue(L, -1);
	lua_setiuservalue(L, -3, 2);
}

/*
 * register_thread(label [, {number =, timeout =}]) -> identity, again:
 * registers the OS thread running this Lua state as a sub-worker of its
 * process under label (1..64 bytes: the thread's role), context [process
 * p, thread t]. number: a wanted number (default: the one label held last,
 * else the lowest free). Again in the same state with the same label: the
 * same identity table, again true; with another label: EBUSY (release it
 * first). Errors: ENOTWORKER, ETOOLARGE (in a registered child),
 * EEXHAUSTED (max_subworkers), ECONFLICT, EUNKNOWNMSG (server before v1.4).
 */
static int
lsv_op_register_thread(lua_State *L, lsv_ctx *x)
{
	const char  *label = lsv_check_text(L, x->a, LSV_MAX_LABEL, 0);
	int64_t      number;
	int          timeout, again = 0, cidx;
	sv_identity *id;
	sv_err       err;
	lsv_subw    *held;

	luaL_argcheck(L, label[0] != '\0', x->a, "label must be 1..64 bytes");
	lsv_subw_opts(L, x->a + 1, 0, &number, &timeout, NULL);
	if (lsv_not_worker(L, x, "register_thread"))
		return 2;
	if ((held = lsv_subw_get(L, "thread")) != NULL) {
		if (strcmp(sv_identity_frame_count(held->id) > 1
		            ? lsv_frame_name(held->id, 1)
		            : "",
		        label)
		    != 0)
			return lsv_fail(L, SV_EBUSY, "register_thread",
			    "this Lua state is registered under another "
			    "label: "
			    "release_thread first");
		lua_getiuservalue(L, -1, 2);
		lua_pushboolean(L, 1);
		return 2;
	}
	if (!lsv_ready(L, x, "register_thread", &timeout))
		return 2;
	cidx = x->a == 1 ? lua_gettop(L) : 1;
	err  = sv_client_subworker_register(x->u->c, SV_KIND_THREAD, label,
	     number, (int64_t) gettid(), timeout, &id, &again);
	if (err != SV_OK)
		return lsv_call_fail(L, x->u, err, "register_thread");
	lsv_subw_push_new(L, cidx, id);
	lua_pushvalue(L, -2);
	lsv_subw_set(L, "thread");
	lua_pushboolean(L, again);
	return 2;
}

/* lsv_subw_drop releases and forgets the grant in slot for op; pushes
 * true, or nil, err. */
static int
lsv_subw_drop(lua_State *L, lsv_ctx *x, const char *slot, const char *op)
{
	int       timeout = lsv_opt_timeout(L, x->a);
	lsv_subw *g;
	sv_err    err;

	if (lsv_not_worker(L, x, op))
		return 2;
	if ((g = lsv_subw_get(L, slot)) == NULL) {
		lua_pushboolean(L, 1);
		return 1;
	}
	if (!lsv_ready(L, x, op, &timeout))
		return 2;
	lua_pushnil(L);
	lsv_subw_set(L, slot);
	err = lsv_subw_release(g, x->u->c, timeout);
	return lsv_done(L, x, err, op);
}

/* release_thread([timeout]) -> true: gives this state's thread number back
 * (true too when it has none). */
static int
lsv_op_release_thread(lua_State *L, lsv_ctx *x)
{
	return lsv_subw_drop(L, x, "thread", "release_thread");
}

/*
 * register_child([{label =, number =, timeout =}]) -> identity, again:
 * registers this process, forked by a worker, as its sub-worker, context
 * [process p, process c]; once per process (later calls return the same
 * table). With number, an ECONFLICT (its previous holder's exit not seen
 * yet) is retried every 20 ms until the timeout. Errors: ENOTWORKER (the
 * parent is no worker), EPERM (called in the worker itself), ETOOLARGE,
 * EEXHAUSTED, ECONFLICT, EUNKNOWNMSG.
 */
static int
lsv_op_register_child(lua_State *L, lsv_ctx *x)
{
	const char     *label = NULL;
	int64_t         number;
	int             timeout, again = 0, cidx, left;
	sv_identity    *id;
	sv_err          err;
	int64_t         deadline;
	struct timespec step = {0, LSV_SUBW_RETRY_MS * 1000000L};

	lsv_subw_opts(L, x->a, 1, &number, &timeout, &label);
	if (lsv_not_worker(L, x, "register_child"))
		return 2;
	if (lsv_subw_get(L, "child") != NULL) {
		lua_getiuservalue(L, -1, 2);
		lua_pushboolean(L, 1);
		return 2;
	}
	if (!lsv_ready(L, x, "register_child", &timeout))
		return 2;
	cidx     = x->a == 1 ? lua_gettop(L) : 1;
	deadline = lsv_now_ms() + timeout;
	left     = timeout;
	for (;;) {
		err = sv_client_subworker_register(x->u->c, SV_KIND_PROCESS,
		    label, number, 0, left, &id, &again);
		if (err != SV_ECONFLICT || number < 0 || timeout < 0)
			break;
		if (deadline - lsv_now_ms() <= LSV_SUBW_RETRY_MS)
			break;
		nanosleep(&step, NULL);
		left = (int) (deadline - lsv_now_ms());
	}
	if (err != SV_OK)
		return lsv_call_fail(L, x->u, err, "register_child");
	lsv_subw_push_new(L, cidx, id);
	lua_pushvalue(L, -2);
	lsv_subw_set(L, "child");
	lua_pushboolean(L, again);
	return 2;
}

/* release_child([timeout]) -> true: gives this child's number back before
 * it exits (true too when it has none). */
static int
lsv_op_release_child(lua_State *L, lsv_ctx *x)
{
	return lsv_subw_drop(L, x, "child", "release_child");
}

/* lsv_subworkers_init creates the metatable "supervise.SubWorker": a
 * grant, released by __gc. */
static void
lsv_subworkers_init(lua_State *L)
{
	luaL_newmetatable(L, LSV_SUBW_MT);
	lua_pushcfunction(L, lsv_subw_gc);
	lua_setfield(L, -2, "__gc");
	lua_pushliteral(L, "supervise.SubWorker");
	lua_setfield(L, -2, "__name");
	lua_pop(L, 1);
}

static const lsv_request lsv_subworkers_requests[] = {
    {"register_thread", lsv_op_register_thread},
    {"release_thread", lsv_op_release_thread},
    {"register_child", lsv_op_register_child},
    {"release_child", lsv_op_release_child},
    {NULL, NULL},
};

/* The subworkers family: supervise.SubWorker and its four requests. */
const lsv_family lsv_subworkers_family
    = {"subworkers", lsv_subworkers_init, NULL, lsv_subworkers_requests, NULL};
