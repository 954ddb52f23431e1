/*
 * bench_bindings_clock.c — svbench_clock, a Lua 5.4 module with one
 * function, now_ns(), for the Lua worker of bench_bindings.py.
 *
 * PUC Lua's standard library has no monotonic wall clock (os.clock is the
 * process's CPU time, which stops while a call waits for the supervisor,
 * and os.time has a resolution of a second), and the supervise module
 * exposes none. The other workers of the benchmark read CLOCK_MONOTONIC
 * (C clock_gettime, Python time.perf_counter_ns, Ruby
 * Process.clock_gettime); this module gives the Lua worker the same clock,
 * so every language times its calls the same way.
 */
#define _POSIX_C_SOURCE 200809L

#include <lauxlib.h>
#include <lua.h>
#include <time.h>

/*
 * now_ns() returns CLOCK_MONOTONIC in nanoseconds as a Lua integer. Raises
 * a Lua error if the clock cannot be read.
 */
static int
svbench_now_ns(lua_State *L)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return luaL_error(L, "clock_gettime(CLOCK_MONOTONIC) failed");
	lua_pushinteger(L,
	    (lua_Integer) ts.tv_sec * 1000000000 + (lua_Integer) ts.tv_nsec);
	return 1;
}

/*
 * luaopen_svbench_clock is the module's entry point
 * (`require "svbench_clock"`): returns a table holding now_ns.
 */
__attribute__((visibility("default"))) int luaopen_svbench_clock(lua_State *L);

int
luaopen_svbench_clock(lua_State *L)
{
	static const luaL_Reg functions[] = {
	    {"now_ns", svbench_now_ns},
	    {NULL, NULL},
	};

	luaL_newlib(L, functions);
	return 1;
}
