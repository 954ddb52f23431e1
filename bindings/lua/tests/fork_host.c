/*
 * fork_host.c — a minimal C program embedding Lua 5.4 that gives its script
 * fork(), for the fork test of the Lua binding (spec/fork_spec.lua).
 *
 * Debian 12's lua-posix is built for Lua 5.1-5.3 only, so a Lua 5.4 script
 * has no fork() of its own. The realistic way a Lua program forks is this
 * one anyway: a C host that embeds Lua, loads the application, then forks
 * workers (prefork servers in the manner of nginx). The host runs SCRIPT
 * with a global table `host`:
 *
 *   host.fork()                 -> pid in the parent, 0 in the child
 *   host.wait(pid, timeout_ms)  -> exit status, or nil, "timeout" (the
 *                                  child is then killed by its pid), or
 *                                  nil, "signal N"
 *
 * Usage: sv-lua-fork-host SCRIPT [ARGS...]; exit status 0 when the script
 * ran without error, 1 otherwise. Only the children the script forked are
 * ever waited for or signalled.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

/* fh_now_ms returns a monotonic clock in milliseconds. */
static long long
fh_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* host.fork(): fork(2); raises on failure. */
static int
fh_fork(lua_State *L)
{
	pid_t pid;

	fflush(NULL); /* no buffered output written twice */
	if ((pid = fork()) < 0)
		return luaL_error(L, "fork: %s", strerror(errno));
	lua_pushinteger(L, pid);
	return 1;
}

/*
 * host.wait(pid, timeout_ms): waits for the child pid with a deadline: a
 * pidfd of the child becomes readable when it exits, so poll() on it ends
 * at the exit or at the deadline. On timeout the child gets SIGKILL and is
 * reaped.
 */
static int
fh_wait(lua_State *L)
{
	lua_Integer   pid      = luaL_checkinteger(L, 1);
	lua_Integer   timeout  = luaL_checkinteger(L, 2);
	long long     deadline = fh_now_ms() + timeout;
	struct pollfd pfd      = {-1, POLLIN, 0};
	int           st;
	pid_t         rc;

	luaL_argcheck(L, pid > 0 && pid <= INT_MAX, 1, "not a child pid");
	luaL_argcheck(L, timeout >= 0 && timeout <= INT_MAX, 2, "bad timeout");
	if ((pfd.fd = (int) syscall(SYS_pidfd_open, (pid_t) pid, 0)) < 0)
		return luaL_error(L, "pidfd_open: %s", strerror(errno));
	for (;;) {
		long long left = deadline - fh_now_ms();
		int       n    = poll(&pfd, 1, left > 0 ? (int) left : 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n > 0)
			break; /* exited */
		if (n < 0 || left <= 0) {
			close(pfd.fd);
			kill((pid_t) pid, SIGKILL);
			waitpid((pid_t) pid, &st, 0);
			lua_pushnil(L);
			lua_pushliteral(L, "timeout");
			return 2;
		}
	}
	close(pfd.fd);
	while ((rc = waitpid((pid_t) pid, &st, 0)) < 0 && errno == EINTR)
		;
	if (rc < 0)
		return luaL_error(L, "waitpid: %s", strerror(errno));
	if (WIFEXITED(st)) {
		lua_pushinteger(L, WEXITSTATUS(st));
		return 1;
	}
	lua_pushnil(L);
	lua_pushfstring(L, "signal %d", WIFSIGNALED(st) ? WTERMSIG(st) : -1);
	return 2;
}

int
main(int argc, char **argv)
{
	static const luaL_Reg host[] = {
	    {"fork", fh_fork},
	    {"wait", fh_wait},
	    {NULL, NULL},
	};
	lua_State *L;
	int        rc;

	if (argc < 2) {
		fprintf(stderr, "usage: %s SCRIPT [ARGS...]\n", argv[0]);
		return 100;
	}
	if ((L = luaL_newstate()) == NULL) {
		fprintf(stderr, "%s: cannot create a Lua state\n", argv[0]);
		return 111;
	}
	luaL_openlibs(L);
	luaL_newlib(L, host);
	lua_setglobal(L, "host");
	lua_createtable(L, argc, 0);
	for (int i = 1; i < argc; i++) {
		lua_pushstring(L, argv[i]);
		lua_rawseti(L, -2, i - 1);
	}
	lua_setglobal(L, "arg");
	rc = luaL_dofile(L, argv[1]);
	if (rc != LUA_OK)
		fprintf(
		    stderr, "%s: %s\n", argv[0], luaL_tolstring(L, -1, NULL));
	lua_close(L);
	return rc == LUA_OK ? 0 : 1;
}
