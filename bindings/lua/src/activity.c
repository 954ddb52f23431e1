/*
 * activity.c — scoped activities for Lua: what this worker is doing, for
 * `supervisectl status` and `top` (docs/activity.md).
 *
 *   sv.activity("indexing", fn, ...)  -- runs fn(...) in the scope
 *
 * Design: the supervisor hands each worker a region file in
 * $SUPERVISE_ACTIVITY; it is opened once per process (sv_activity_region_
 * open) and each scope is one sv_activity_enter, fn run under pcall, and
 * one sv_activity_leave: no round trip, no system call on the hot path. The
 * C library keeps one stack per OS thread (a Lua state and its coroutines
 * run on one), so nesting composes. On an error the scope is left first,
 * then the error is raised again unchanged: a failure never leaves a stale
 * name. On success fn's results are returned.
 *
 * A scope is a no-op (fn still runs) when there is no region: outside a
 * supervised worker, with `activity = false` in the group, in a child made
 * by fork() from a process that had the region open (a pthread_atfork
 * handler marks the child, with no system call per scope), in a descendant
 * that inherited the variable while a live process other than itself
 * writes the region (its header names the writer: opening it again would
 * wipe that writer's stacks). A scope that cannot be recorded (more than
 * 64 threads, deeper than 1024) runs unrecorded.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>

#include "lsv.h"
#include "supervise/activity.h"

/* The header's magic and the offset of the writer's pid (docs/activity.md,
 * "Region format"). */
#define LSV_ACT_MAGIC   0x52415653u
#define LSV_ACT_PID_OFF 24

static pthread_mutex_t     lsv_act_mtx = PTHREAD_MUTEX_INITIALIZER;
static sv_activity_region *lsv_act_region; /* this process's, or NULL */
static int                 lsv_act_looked; /* the lookup has been made */
static int                 lsv_act_forked; /* a fork child: not ours */

/* lsv_act_child marks a fork child: the region is the parent's. */
static void
lsv_act_child(void)
{
	if (lsv_act_looked)
		lsv_act_forked = 1;
}

/* lsv_act_owned_elsewhere tells whether the header of the region at path
 * names a live writer that is not this process. */
static int
lsv_act_owned_elsewhere(const char *path)
{
	unsigned char head[LSV_ACT_PID_OFF + 4];
	uint32_t      magic, pid;
	int           fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t       got;

	if (fd < 0)
		return 0;
	got = pread(fd, head, sizeof head, 0);
	close(fd);
	if (got != (ssize_t) sizeof head)
		return 0;
	memcpy(&magic, head, 4);
	memcpy(&pid, head + LSV_ACT_PID_OFF, 4);
	if (magic != LSV_ACT_MAGIC || pid == 0 || pid == (uint32_t) getpid()
	    || pid > INT32_MAX)
		return 0;
	return kill((pid_t) pid, 0) == 0 || errno == EPERM;
}

/* lsv_act_get returns this process's region (opened on first use), or
 * NULL. */
static sv_activity_region *
lsv_act_get(void)
{
	static int registered;

	if (lsv_act_forked)
		return NULL;
	if (lsv_act_looked)
		return lsv_act_region;
	pthread_mutex_lock(&lsv_act_mtx);
	if (!lsv_act_looked) {
		const char *path = getenv("SUPERVISE_ACTIVITY");
		if (!registered) {
			(void) pthread_atfork(NULL, NULL, lsv_act_child);
			registered = 1;
		}
		if (path != NULL && path[0] != '\0'
		    && !lsv_act_owned_elsewhere(path)
		    && sv_activity_region_open(&lsv_act_region, path) != SV_OK)
			lsv_act_region = NULL;
		lsv_act_looked = 1;
	}
	pthread_mutex_unlock(&lsv_act_mtx);
	return lsv_act_forked ? NULL : lsv_act_region;
}

/* supervise.activity(name, fn, ...): fn(...) inside the scope name; its
 * results, or its error raised again after the scope is left. */
static int
lsv_activity(lua_State *L)
{
	size_t              len;
	const char         *name = luaL_checklstring(L, 1, &len);
	sv_activity_region *r;
	int                 entered, rc, base;

	luaL_argcheck(L, len > 0 && strlen(name) == len, 1,
	    "an activity name is a non-empty string without NUL");
	luaL_checktype(L, 2, LUA_TFUNCTION);
	r       = lsv_act_get();
	entered = r != NULL && sv_activity_enter(r, name) == SV_OK;
	base    = 1; /* results start above the name */
	rc      = lua_pcall(L, lua_gettop(L) - 2, LUA_MULTRET, 0);
	if (entered)
		(void) sv_activity_leave(r);
	if (rc != LUA_OK)
		return lua_error(L);
	return lua_gettop(L) - base;
}

/* supervise.activity_depth(): the calling thread's open recorded scopes. */
static int
lsv_activity_depth(lua_State *L)
{
	sv_activity_region *r = lsv_act_get();
	uint32_t            d = 0;

	if (r != NULL && sv_activity_depth(r, &d) != SV_OK)
		d = 0;
	lua_pushinteger(L, (lua_Integer) d);
	return 1;
}

static const luaL_Reg lsv_activity_functions[] = {
    {"activity", lsv_activity},
    {"activity_depth", lsv_activity_depth},
    {NULL, NULL},
};

/* The activity family: supervise.activity and supervise.activity_depth. */
const lsv_family lsv_activity_family
    = {"activity", NULL, lsv_activity_functions, NULL, NULL};
