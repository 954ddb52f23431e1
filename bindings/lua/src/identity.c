/*
 * identity.c — "which worker am I?" in Lua: the identity table
 * ("supervise.Identity"), the WhoAmI request (supervise.whoami, live) and
 * supervise.from_env (from the SUPERVISE_* variables, no round trip).
 *
 * Design: an identity is a plain table copied out of the C answer, which is
 * freed before returning: {group, ordinal, generation, kind, pid, purpose,
 * supervisor_id, group_size, context = {frames}, parent, draining,
 * drain_deadline_in_ms, source}. from_env is the C library's
 * sv_identity_from_env, the one contract Python, Ruby and Lua share: the
 * same environments are accepted and refused, with the same reasons. It
 * has the fields the environment carries (no pid, no group_size) plus url
 * ($SUPERVISE_URL), and source "env".
 */
#include <stdlib.h>
#include <string.h>

#include "lsv.h"

/* The registry key of from_env's result buffer (lsv_env_result). */
#define LSV_ENV_RESULT_KEY "supervise.env_result"

/* lsv_push_frame pushes {kind, ordinal, name, generation}. */
void
lsv_push_frame(lua_State *L, sv_kind kind, uint32_t ordinal, const char *name,
    uint64_t generation)
{
	lua_createtable(L, 0, 4);
	lsv_push_u64(L, generation);
	lua_setfield(L, -2, "generation");
	lua_pushstring(L, lsv_kind_name(kind));
	lua_setfield(L, -2, "kind");
	lua_pushinteger(L, ordinal);
	lua_setfield(L, -2, "ordinal");
	lua_pushstring(L, name != NULL ? name : "");
	lua_setfield(L, -2, "name");
}

/* lsv_push_identity copies id into a new identity table (source "live"). */
void
lsv_push_identity(lua_State *L, const sv_identity *id)
{
	size_t      n = sv_identity_frame_count(id);
	sv_kind     kind;
	uint32_t    ord;
	const char *name;
	uint64_t    gen, gen0 = 0;

	if (n > LSV_MAX_FRAMES)
		n = LSV_MAX_FRAMES;
	lua_createtable(L, 0, 12);
	lua_pushstring(L, sv_identity_group(id));
	lua_setfield(L, -2, "group");
	lua_pushinteger(L, sv_identity_ordinal(id));
	lua_setfield(L, -2, "ordinal");
	lsv_push_u64(L, sv_identity_generation(id));
	lua_setfield(L, -2, "generation");
	lua_pushstring(L, lsv_kind_name(sv_identity_kind(id)));
	lua_setfield(L, -2, "kind");
	lua_pushinteger(L, (lua_Integer) sv_identity_pid(id));
	lua_setfield(L, -2, "pid");
	lua_pushstring(L, sv_identity_purpose(id));
	lua_setfield(L, -2, "purpose");
	lua_pushstring(L, sv_identity_supervisor_id(id));
	lua_setfield(L, -2, "supervisor_id");
	lua_pushinteger(L, sv_identity_group_size(id));
	lua_setfield(L, -2, "group_size");
	lua_createtable(L, (int) n, 0);
	for (size_t i = 0; i < n; i++) {
		if (sv_identity_frame(id, i, &kind, &ord, &name) != SV_OK)
			break;
		if (sv_identity_frame_generation(id, i, &gen) != SV_OK)
			gen = 0;
		if (i == 0)
			gen0 = gen;
		lsv_push_frame(L, kind, ord, name, gen);
		lua_rawseti(L, -2, (lua_Integer) i + 1);
	}
	lua_setfield(L, -2, "context");
	/* The parent is the first frame of a sub-worker's context: its
	 * generation is that frame's (the process's). */
	if (sv_identity_parent(id, &kind, &ord, &name) == SV_OK) {
		lsv_push_frame(L, kind, ord, name, n > 1 ? gen0 : 0);
		lua_setfield(L, -2, "parent");
	}
	lua_pushboolean(L, sv_identity_draining(id));
	lua_setfield(L, -2, "draining");
	lsv_push_u64(L, sv_identity_drain_deadline_in_ms(id));
	lua_setfield(L, -2, "drain_deadline_in_ms");
	lua_pushliteral(L, "live");
	lua_setfield(L, -2, "source");
	luaL_setmetatable(L, LSV_IDENTITY_MT);
}

/* Identity:__tostring: "group[ordinal] generation G". */
static int
lsv_identity_tostring(lua_State *L)
{
	lua_getfield(L, 1, "group");
	lua_getfield(L, 1, "ordinal");
	lua_getfield(L, 1, "generation");
	lua_pushfstring(L, "%s[%s] generation %s", luaL_tolstring(L, 2, NULL),
	    luaL_tolstring(L, 3, NULL), luaL_tolstring(L, 4, NULL));
	return 1;
}

/*
 * whoami([timeout]) -> identity; ENOTWORKER outside a supervised worker.
 * Module-level without $SUPERVISE_URL: ENOTWORKER with no round trip, as
 * supervised gives every worker that variable.
 */
static int
lsv_op_whoami(lua_State *L, lsv_ctx *x)
{
	int          timeout = lsv_opt_timeout(L, x->a);
	const char  *env     = getenv(SV_ENV_URL);
	sv_identity *id;
	sv_err       err;

	if (x->u == NULL && (env == NULL || env[0] == '\0'))
		return lsv_fail(L, SV_ENOTWORKER, "whoami",
		    "$" SV_ENV_URL " is not set: not a supervised worker");
	if (!lsv_ready(L, x, "whoami", &timeout))
		return 2;
	if ((err = sv_client_whoami(x->u->c, timeout, &id)) != SV_OK)
		return lsv_call_fail(L, x->u, err, "whoami");
	lsv_push_identity(L, id);
	sv_identity_free(id);
	return 1;
}

/*
 * lsv_check_envp reads argument idx: nil (returns NULL: the process
 * environment) or a table of variables {SUPERVISE_GROUP = "web", ...},
 * returned as the NULL-terminated "NAME=value" array sv_identity_from_env
 * reads. Only string keys beginning "SUPERVISE_" are taken; their values
 * must be strings (or numbers) without NUL bytes, else it raises. The
 * array and its strings are a userdata and a table left on the stack:
 * they live until the calling function returns (the collector frees them).
 */
static const char *const *
lsv_check_envp(lua_State *L, int idx)
{
	lua_Integer  n = 0;
	int          strings;
	const char **envp;

	if (lua_isnoneornil(L, idx))
		return NULL;
	luaL_checktype(L, idx, LUA_TTABLE);
	lua_newtable(L);
	strings = lua_gettop(L);
	lua_pushnil(L);
	while (lua_next(L, idx) != 0) {
		size_t      len;
		const char *v;

		if (lua_type(L, -2) != LUA_TSTRING
		    || strncmp(lua_tostring(L, -2), "SUPERVISE_", 10) != 0) {
			lua_pop(L, 1);
			continue;
		}
		luaL_argexpected(L,
		    lua_type(L, -1) == LUA_TSTRING
		        || lua_type(L, -1) == LUA_TNUMBER,
		    idx, "table of strings");
		/* The value is a copy on the stack: converting it in place
		 * leaves the table (and lua_next) alone. */
		v = lua_tolstring(L, -1, &len);
		luaL_argcheck(L, strlen(v) == len, idx,
		    "a variable's value contains a NUL byte");
		lua_pushfstring(L, "%s=%s", lua_tostring(L, -2), v);
		lua_rawseti(L, strings, ++n);
		lua_pop(L, 1);
	}
	envp = (const char **) lua_newuserdatauv(
	    L, (size_t) (n + 1) * sizeof(*envp), 0);
	for (lua_Integer i = 1; i <= n; i++) {
		lua_rawgeti(L, strings, i);
		envp[i - 1] = lua_tostring(L, -1); /* kept by the table */
		lua_pop(L, 1);
	}
	envp[n] = NULL;
	return envp;
}

/*
 * lsv_env_result returns this Lua state's sv_whoami_result for from_env,
 * about 10 KB: made (zeroed, its size set) on first use and kept in the
 * registry under LSV_ENV_RESULT_KEY, so that a call allocates nothing for
 * the collector to free. A state runs one C function at a time, and
 * from_env copies everything out before it returns.
 */
static sv_whoami_result *
lsv_env_result(lua_State *L)
{
	sv_whoami_result *r;

	if (lua_getfield(L, LUA_REGISTRYINDEX, LSV_ENV_RESULT_KEY)
	    == LUA_TUSERDATA) {
		r = (sv_whoami_result *) lua_touserdata(L, -1);
		lua_pop(L, 1);
		return r;
	}
	lua_pop(L, 1);
	r = (sv_whoami_result *) lua_newuserdatauv(L, sizeof(*r), 0);
	memset(r, 0, sizeof(*r));
	r->size = sizeof(*r);
	lua_setfield(L, LUA_REGISTRYINDEX, LSV_ENV_RESULT_KEY);
	return r;
}

/*
 * supervise.from_env([vars]) builds an identity from the SUPERVISE_*
 * variables supervised sets for its workers, with no round trip: those of
 * the process environment, or of the table vars. The contract is
 * sv_identity_from_env (supervise/client.h): ENOTWORKER when a variable is
 * absent (or empty, except SUPERVISE_PURPOSE), EINVAL when one is
 * malformed or over its bound; the error's message names the variable.
 * The identity has the fields of a live one except pid and group_size
 * (not in the environment), plus url; source is "env". The variables are
 * a snapshot taken at spawn and are inherited by every descendant: see
 * README.md.
 */
static int
lsv_from_env(lua_State *L)
{
	const char *const *envp = lsv_check_envp(L, 1);
	sv_whoami_result  *r;
	const char        *url = NULL;
	sv_err             err;

	r = lsv_env_result(L);
	if ((err = sv_identity_from_env(envp, r)) != SV_OK)
		return lsv_fail(L, err, "from_env", r->text);
	if (envp == NULL)
		url = getenv(SV_ENV_URL);
	else if (lua_getfield(L, 1, SV_ENV_URL) == LUA_TSTRING)
		url = lua_tostring(L, -1); /* kept by the table */

	lua_createtable(L, 0, 10);
	lua_pushstring(L, r->fields.group);
	lua_setfield(L, -2, "group");
	lua_pushinteger(L, (lua_Integer) r->fields.ordinal);
	lua_setfield(L, -2, "ordinal");
	lsv_push_u64(L, r->fields.generation);
	lua_setfield(L, -2, "generation");
	lua_pushstring(L, lsv_kind_name((sv_kind) r->fields.kind));
	lua_setfield(L, -2, "kind");
	lua_pushstring(L, r->fields.purpose);
	lua_setfield(L, -2, "purpose");
	lua_pushstring(L, r->fields.supervisor_id);
	lua_setfield(L, -2, "supervisor_id");
	lua_pushstring(L, url != NULL ? url : "");
	lua_setfield(L, -2, "url");
	/* A worker from the environment is a top-level process: one frame,
	 * no parent. */
	lua_createtable(L, (int) r->n_frames, 0);
	for (uint32_t i = 0; i < r->n_frames; i++) {
		lsv_push_frame(L, (sv_kind) r->frames[i].kind,
		    r->frames[i].ordinal, r->frames[i].name,
		    r->frames[i].generation);
		lua_rawseti(L, -2, (lua_Integer) i + 1);
	}
	lua_setfield(L, -2, "context");
	lua_pushliteral(L, "env");
	lua_setfield(L, -2, "source");
	luaL_setmetatable(L, LSV_IDENTITY_MT);
	return 1;
}

/* lsv_identity_init creates the metatable "supervise.Identity". */
static void
lsv_identity_init(lua_State *L)
{
	luaL_newmetatable(L, LSV_IDENTITY_MT);
	lua_pushcfunction(L, lsv_identity_tostring);
	lua_setfield(L, -2, "__tostring");
	lua_pop(L, 1);
}

static const luaL_Reg lsv_identity_functions[] = {
    {"from_env", lsv_from_env},
    {NULL, NULL},
};

static const lsv_request lsv_identity_requests[] = {
    {"whoami", lsv_op_whoami},
    {NULL, NULL},
};

/* The identity family: supervise.Identity, whoami, from_env. */
const lsv_family lsv_identity_family = {"identity", lsv_identity_init,
    lsv_identity_functions, lsv_identity_requests, NULL};
