/*
 * module.c — the entry of the Lua 5.4 binding of libsupervise:
 * `require "supervise"` runs luaopen_supervise, which builds the module
 * table from the families (lsv.h) and runs their Lua parts.
 *
 * Design: Debian ships no FFI for PUC Lua 5.4, so the binding is a C
 * module over the public C client (supervise/client.h) and nothing else.
 * It is one C file per family (errors.c, enums.c, clock.c, client.c,
 * identity.c, workers.c, admin.c, readiness.c, leases.c, drain.c,
 * subworkers.c, events.c, scope.c, activity.c); this file only lists them
 * and registers, in order: each family's metatables (init), its
 * module-level functions, and each of its requests as both a Client method
 * and a module-level function on the default client. Then it runs the
 * Lua parts (lua/supervise/leases.lua, lua/supervise/drain.lua), plain
 * Lua files each called with the module table: compositions of requests
 * with Lua control flow (pcall, closures) that read better in Lua. A Lua
 * part is looked up as a Lua module ("supervise.leases") first beside
 * this C module's own file (DIR/supervise/leases.lua, where the build
 * tree puts it) and then on package.path (where the rock installs it,
 * share/lua/5.4/supervise/); a missing part fails the require with the
 * places searched. No connection is opened here: the default client is
 * opened on first use.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr, RTLD_NODELETE */
#endif
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#include "lsv.h"

/* The families, in registration order: client before the families that
 * add requests or methods to supervise.Client. */
static const lsv_family *const lsv_families[] = {
    &lsv_errors_family,
    &lsv_enums_family,
    &lsv_clock_family,
    &lsv_client_family,
    &lsv_identity_family,
    &lsv_workers_family,
    &lsv_admin_family,
    &lsv_readiness_family,
    &lsv_leases_family,
    &lsv_drain_family,
    &lsv_subworkers_family,
    &lsv_events_family,
    &lsv_scope_family,
    &lsv_activity_family,
};

#define LSV_NFAMILIES (sizeof(lsv_families) / sizeof(lsv_families[0]))

/* supervise.version() is the version of the libsupervise actually linked. */
static int
lsv_version(lua_State *L)
{
	lua_pushstring(L, sv_version());
	return 1;
}

/* supervise.default_url() is the socket URL used without $SUPERVISE_URL. */
static int
lsv_default_url(lua_State *L)
{
	char   url[LSV_MAX_URL + 1];
	sv_err err = sv_default_url(url, sizeof(url));

	if (err != SV_OK)
		return lsv_fail(L, err, "default_url", NULL);
	lua_pushstring(L, url);
	return 1;
}

static const char lsv_anchor = 0; /* an address inside this module */

/*
 * lsv_module_file is the path of this module's shared object, as the
 * dynamic loader knows it (dladdr), or NULL. The string is the loader's.
 */
static const char *
lsv_module_file(void)
{
	Dl_info info;

	if (dladdr(&lsv_anchor, &info) == 0 || info.dli_fname == NULL)
		return NULL;
	return info.dli_fname;
}

/*
 * lsv_pin_module keeps this module, and with it libsupervise, loaded until
 * the process exits. lua_close() unloads C modules, but a thread a library
 * started (nng's, with the nng-based libsupervise 0.1.0) can outlive every
 * handle, and unloading its code under it crashes the exit. Failure leaves
 * the module unpinned.
 */
static void
lsv_pin_module(void)
{
	const char *file = lsv_module_file();
	void       *self;

	if (file == NULL)
		return;
	/* RTLD_NOLOAD: take a reference on the copy already loaded. */
	self = dlopen(file, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
	(void) self; /* never closed, on purpose */
}

/*
 * lsv_push_lua_path pushes the search path of the Lua parts: "DIR/?.lua"
 * for the directory DIR of this module's file (when dladdr knows it),
 * then package.path of the package table at index pkg.
 */
static void
lsv_push_lua_path(lua_State *L, int pkg)
{
	const char *file  = lsv_module_file();
	const char *slash = file != NULL ? strrchr(file, '/') : NULL;
	luaL_Buffer b;

	luaL_buffinit(L, &b);
	if (slash != NULL) {
		luaL_addlstring(&b, file, (size_t) (slash - file));
		luaL_addstring(&b, "/?.lua;");
	} else if (file != NULL) {
		luaL_addstring(
		    &b, "./?.lua;"); /* loaded by a bare file name */
	}
	if (lua_getfield(L, pkg, "path") == LUA_TSTRING)
		luaL_addvalue(&b);
	else
		lua_pop(L, 1);
	luaL_pushresult(&b);
}

/*
 * lsv_run_lua_part finds the Lua part name ("supervise.leases") with
 * package.searchpath on lsv_push_lua_path's path, compiles it and calls it
 * with the module table (at index module) as its one argument. A part that
 * is missing or fails raises: the require fails, naming the files searched
 * or the error.
 */
static void
lsv_run_lua_part(lua_State *L, int module, const char *name)
{
	int top = lua_gettop(L);
	int pkg;

	lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
	if (lua_getfield(L, -1, "package") != LUA_TTABLE)
		luaL_error(L,
		    "supervise: loading %s needs the package library", name);
	pkg = lua_gettop(L);
	lua_getfield(L, pkg, "searchpath");
	lua_pushstring(L, name);
	lsv_push_lua_path(L, pkg);
	lua_call(L, 2, 2);
	if (lua_isnil(L, -2))
		luaL_error(L, "supervise: cannot find its Lua part %s:\n\t%s",
		    name, lua_tostring(L, -1));
	if (luaL_loadfilex(L, lua_tostring(L, -2), "t") != LUA_OK)
		lua_error(L);
	lua_pushvalue(L, module);
	lua_call(L, 1, 0);
	lua_settop(L, top);
}

/*
 * lsv_set_once pops the value on top of the stack into field name of the
 * table at index t; a name already set there raises (two rows of the
 * families naming the same field are a bug, never an overwrite).
 */
static void
lsv_set_once(lua_State *L, int t, const char *name, const char *family)
{
	if (lua_getfield(L, t, name) != LUA_TNIL)
		luaL_error(L, "supervise: %s (family %s) is defined twice",
		    name, family);
	lua_pop(L, 1);
	lua_setfield(L, t, name);
}

/*
 * lsv_register adds family f to the module table at index module: its
 * init, its functions, and each request as a Client method and a module
 * function (closures over the request's row, client.c).
 */
static void
lsv_register(lua_State *L, int module, const lsv_family *f)
{
	int methods;

	if (f->init != NULL)
		f->init(L);
	for (const luaL_Reg *fn = f->functions; fn != NULL && fn->name != NULL;
	     fn++) {
		lua_pushcfunction(L, fn->func);
		lsv_set_once(L, module, fn->name, f->name);
	}
	if (f->requests == NULL)
		return;
	luaL_getmetatable(L, LSV_CLIENT_MT);
	lua_getfield(L, -1, "__index");
	methods = lua_gettop(L);
	for (const lsv_request *r = f->requests; r->name != NULL; r++) {
		/* The row is read only: lsv_method casts it back to const. */
		lua_pushlightuserdata(L, (void *) (uintptr_t) r);
		lua_pushcclosure(L, lsv_method, 1);
		lsv_set_once(L, methods, r->name, f->name);
		lua_pushlightuserdata(L, (void *) (uintptr_t) r);
		lua_pushcclosure(L, lsv_module_call, 1);
		lsv_set_once(L, module, r->name, f->name);
	}
	lua_pop(L, 2);
}

/*
 * luaopen_supervise is the module's entry point (`require "supervise"`):
 * it registers every family, the module's own functions (version,
 * default_url, _VERSION), then runs the Lua parts. It opens no
 * connection: the default client is opened on first use.
 */
SV_API int luaopen_supervise(lua_State *L);

int
luaopen_supervise(lua_State *L)
{
	static const luaL_Reg module_functions[] = {
	    {"version", lsv_version},
	    {"default_url", lsv_default_url},
	    {NULL, NULL},
	};
	static const lsv_family module_family
	    = {"module", NULL, module_functions, NULL, NULL};
	int module;

	luaL_checkversion(L);
	lsv_pin_module();
	lua_createtable(L, 0, 96);
	module = lua_gettop(L);
	for (size_t i = 0; i < LSV_NFAMILIES; i++)
		lsv_register(L, module, lsv_families[i]);
	lsv_register(L, module, &module_family);
	lua_pushliteral(L, "supervise-lua " LSV_VERSION);
	lua_setfield(L, module, "_VERSION");
	for (size_t i = 0; i < LSV_NFAMILIES; i++) {
		if (lsv_families[i]->lua_part != NULL)
			lsv_run_lua_part(L, module, lsv_families[i]->lua_part);
	}
	return 1;
}
