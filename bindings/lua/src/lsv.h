/*
 * lsv.h — what the files of the Lua module share: its bounds and names,
 * the client userdata, the request context and the family record through
 * which each file hands its functions to the module entry (module.c).
 *
 * Design: the module `supervise` is one C file per family (identity.c,
 * workers.c, admin.c, readiness.c, leases.c, drain.c, subworkers.c,
 * events.c, scope.c, errors.c, ...) plus Lua files for the parts that are
 * compositions of requests (lua/supervise/NAME.lua). A family describes
 * itself in one const lsv_family: the metatables it creates, its
 * module-level functions, its requests (each both a client method and a
 * module-level function on the default client) and its Lua part. module.c
 * lists the families and registers them in order; nothing else is global.
 * Every function declared here is defined in the file named beside it.
 */
#ifndef LSV_H
#define LSV_H

#include <stddef.h>
#include <stdint.h>

#include <lauxlib.h>
#include <lua.h>

#include <supervise/client.h>

#if LUA_VERSION_NUM < 504
#error "the Lua binding needs Lua 5.4 (to-be-closed variables)"
#endif

#define LSV_VERSION            "0.1.0"
#define LSV_CLIENT_MT          "supervise.Client"
#define LSV_ERROR_MT           "supervise.Error"
#define LSV_IDENTITY_MT        "supervise.Identity"
#define LSV_SCOPE_MT           "supervise.Scope"
#define LSV_EVENTS_MT          "supervise.Events"
#define LSV_LEASE_MT           "supervise.Lease"
#define LSV_SUBW_MT            "supervise.SubWorker"
#define LSV_SUBW_KEY           "supervise.subworkers"
#define LSV_DEFAULT_KEY        "supervise.default_client"
#define LSV_DEFAULT_TIMEOUT_MS 5000
/* Bounds of caller-supplied strings (the protocol's own bounds, section 4). */
#define LSV_MAX_URL  512
#define LSV_MAX_NAME 1024
/* A pool name (1..64 characters of [A-Za-z0-9_.-]). */
#define LSV_MAX_POOL 64
/* A status line (Ready.status) and an event topic prefix. */
#define LSV_MAX_TEXT   1024
#define LSV_MAX_PREFIX 200
/* Bound of a context chain copied into Lua (a sub-worker has two frames). */
#define LSV_MAX_FRAMES 64

/* A client userdata. c is NULL once closed. */
typedef struct lsv_client {
	sv_client *c;
	char       url[LSV_MAX_URL + 1];
} lsv_client;

/*
 * The context of a request. Each lsv_op checks its arguments from stack
 * index a on (after the client, when called as a method; raising on bad
 * ones), its timeout last, then gets its client from lsv_ready and pushes
 * its result, or nil, err. It returns the number of values pushed.
 */
typedef struct lsv_ctx {
	lsv_client *u; /* the method's client; NULL: the default client */
	int         a; /* stack index of the first argument */
	int64_t     start; /* when the call began (lsv_now_ms) */
} lsv_ctx;

typedef int (*lsv_op)(lua_State *L, lsv_ctx *x);

/*
 * The rule of a request whose one argument is an integer (lsv_u64_request):
 * the argument must lie in lo..hi (else the Lua argument error msg), and
 * worker set makes it a worker's own request (lsv_not_worker).
 */
typedef struct lsv_u64_rule {
	uint64_t    lo, hi;
	const char *msg;
	int         worker;
} lsv_u64_rule;

/* One request: its Lua name and its operation. */
typedef struct lsv_request {
	const char *name;
	lsv_op      op;
} lsv_request;

/*
 * A family of the module. init (may be NULL) runs first with the module
 * table on top of the stack, creates the family's metatables and leaves
 * the stack as it found it. functions (NULL-terminated, may be NULL) are
 * set in the module table; each request (terminated by a NULL name, may be
 * NULL) becomes a Client method and a module-level function. lua_part
 * (may be NULL) names the Lua file run last with the module table as its
 * argument ("supervise.leases": supervise/leases.lua, see module.c).
 */
typedef struct lsv_family {
	const char *name;
	void (*init)(lua_State *L);
	const luaL_Reg    *functions;
	const lsv_request *requests;
	const char        *lua_part;
} lsv_family;

/* The families, registered by module.c in this order. */
extern const lsv_family lsv_errors_family; /* errors.c */
extern const lsv_family lsv_enums_family; /* enums.c */
extern const lsv_family lsv_clock_family; /* clock.c */
extern const lsv_family lsv_client_family; /* client.c */
extern const lsv_family lsv_identity_family; /* identity.c */
extern const lsv_family lsv_workers_family; /* workers.c */
extern const lsv_family lsv_admin_family; /* admin.c */
extern const lsv_family lsv_readiness_family; /* readiness.c */
extern const lsv_family lsv_leases_family; /* leases.c */
extern const lsv_family lsv_drain_family; /* drain.c */
extern const lsv_family lsv_subworkers_family; /* subworkers.c */
extern const lsv_family lsv_events_family; /* events.c */
extern const lsv_family lsv_scope_family; /* scope.c */
extern const lsv_family lsv_activity_family; /* activity.c */

/* clock.c */
int64_t lsv_now_ms(void);

/* values.c: argument checks (violations raise) and integer conversion */
void        lsv_push_u64(lua_State *L, uint64_t v);
int         lsv_has_mt(lua_State *L, int idx, const char *name);
const char *lsv_check_text(lua_State *L, int idx, size_t max, int opt);
uint32_t    lsv_check_u32(lua_State *L, int idx);
int         lsv_opt_timeout(lua_State *L, int idx);
uint64_t    lsv_opt_u64(lua_State *L, int idx);

/* enums.c: the names of the C library's enumerations */
const char *lsv_kind_name(sv_kind kind);
const char *lsv_code_name(lua_Integer code);
const char *lsv_code_text(lua_Integer code);

/* errors.c */
void lsv_new_error(
    lua_State *L, lua_Integer code, const char *op, const char *detail);
int lsv_fail(lua_State *L, sv_err err, const char *op, const char *detail);

/* client.c */
lsv_client *lsv_to_client(lua_State *L);
int         lsv_closed(lua_State *L, const char *op);
int         lsv_open_into(lua_State *L, const char *url, int timeout_ms);
int         lsv_client_close(lua_State *L);
int lsv_call_fail(lua_State *L, lsv_client *u, sv_err err, const char *op);
int lsv_done(lua_State *L, lsv_ctx *x, sv_err err, const char *op);
int lsv_u64_request(lua_State *L, lsv_ctx *x, const char *op,
    sv_err (*call)(sv_client *, uint64_t, int), const lsv_u64_rule *rule);
int lsv_ready(lua_State *L, lsv_ctx *x, const char *op, int *timeout_ms);
int lsv_not_worker(lua_State *L, lsv_ctx *x, const char *op);
int lsv_method_client(const lsv_ctx *x);
int lsv_method(lua_State *L);
int lsv_module_call(lua_State *L);

/* identity.c */
void lsv_push_frame(lua_State *L, sv_kind kind, uint32_t ordinal,
    const char *name, uint64_t generation);
void lsv_push_identity(lua_State *L, const sv_identity *id);

#endif /* LSV_H */
