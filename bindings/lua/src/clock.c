/*
 * clock.c — time for the Lua module: the monotonic clock the requests take
 * their one deadline from, supervise._now_ms (for the Lua parts) and
 * supervise.sleep.
 *
 * Design: CLOCK_MONOTONIC in milliseconds, never the wall clock, so a
 * deadline survives a clock step. sleep blocks the whole process (a Lua
 * state has no scheduler of its own) and resumes after EINTR.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <time.h>

#include "lsv.h"

/* lsv_now_ms returns a monotonic clock in milliseconds. */
int64_t
lsv_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * supervise.sleep(ms) blocks the whole process (every coroutine) for ms
 * milliseconds, 0..INT_MAX; signals with a default action (SIGTERM) end it
 * as they end the process. For workers that have nothing else to wait on.
 */
static int
lsv_sleep(lua_State *L)
{
	lua_Integer     ms = luaL_checkinteger(L, 1);
	struct timespec ts, rem;

	luaL_argcheck(L, ms >= 0 && ms <= INT_MAX, 1, "must be 0..2147483647");
	ts.tv_sec  = (time_t) (ms / 1000);
	ts.tv_nsec = (long) (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &rem) != 0 && errno == EINTR)
		ts = rem;
	return 0;
}

/* supervise._now_ms() -> a monotonic clock in ms (for the Lua parts). */
static int
lsv_now_ms_fn(lua_State *L)
{
	lua_pushinteger(L, (lua_Integer) lsv_now_ms());
	return 1;
}

static const luaL_Reg lsv_clock_functions[] = {
    {"sleep", lsv_sleep},
    {"_now_ms", lsv_now_ms_fn},
    {NULL, NULL},
};

/* The clock family: supervise.sleep and supervise._now_ms. */
const lsv_family lsv_clock_family
    = {"clock", NULL, lsv_clock_functions, NULL, NULL};
