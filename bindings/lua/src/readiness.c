/*
 * readiness.c — what a worker tells the supervisor about itself from Lua:
 * ready (with an optional status line), set_status and heartbeat.
 *
 * Design: these are requests a worker makes about itself; the supervisor
 * checks the kernel's credentials of the connection. Module-level calls
 * without $SUPERVISE_URL give ENOTWORKER at once, with no round trip
 * (lsv_not_worker). set_status is Ready with a status line: in protocol
 * v1.1 the line travels with Ready.
 */
#include "lsv.h"

/*
 * lsv_send_ready sends Ready with status (may be NULL) for op; pushes true
 * or nil, err.
 */
static int
lsv_send_ready(
    lua_State *L, lsv_ctx *x, const char *op, const char *status, int timeout)
{
	sv_err err;

	if (lsv_not_worker(L, x, op))
		return 2;
	if (!lsv_ready(L, x, op, &timeout))
		return 2;
	err = sv_client_ready(x->u->c, status, timeout);
	return lsv_done(L, x, err, op);
}

/*
 * ready([status [, timeout]]) -> true: this worker is ready, with an
 * optional status line (at most 1024 bytes; the supervisor keeps 255).
 * Only the worker process itself may call it: ENOTWORKER for others,
 * EPERM for a descendant of a worker.
 */
static int
lsv_op_ready(lua_State *L, lsv_ctx *x)
{
	const char *status  = lsv_check_text(L, x->a, LSV_MAX_TEXT, 1);
	int         timeout = lsv_opt_timeout(L, x->a + 1);

	return lsv_send_ready(L, x, "ready", status, timeout);
}

/*
 * set_status(text [, timeout]) -> true: this worker's status line. In
 * protocol v1.1 the line travels with Ready, so this also marks the worker
 * ready. Errors as ready.
 */
static int
lsv_op_set_status(lua_State *L, lsv_ctx *x)
{
	const char *text    = lsv_check_text(L, x->a, LSV_MAX_TEXT, 0);
	int         timeout = lsv_opt_timeout(L, x->a + 1);

	return lsv_send_ready(L, x, "set_status", text, timeout);
}

/* heartbeat([timeout]) -> true: re-arms this worker's watchdog. */
static int
lsv_op_heartbeat(lua_State *L, lsv_ctx *x)
{
	int    timeout = lsv_opt_timeout(L, x->a);
	sv_err err;

	if (lsv_not_worker(L, x, "heartbeat"))
		return 2;
	if (!lsv_ready(L, x, "heartbeat", &timeout))
		return 2;
	err = sv_client_heartbeat(x->u->c, timeout);
	return lsv_done(L, x, err, "heartbeat");
}

static const lsv_request lsv_readiness_requests[] = {
    {"ready", lsv_op_ready},
    {"set_status", lsv_op_set_status},
    {"heartbeat", lsv_op_heartbeat},
    {NULL, NULL},
};

/* The readiness family: ready, set_status, heartbeat. */
const lsv_family lsv_readiness_family
    = {"readiness", NULL, NULL, lsv_readiness_requests, NULL};
