/*
 * readiness.c — what a worker tells the supervisor about itself
 * (supervise/client.h): Ready, with an optional status line, and
 * Heartbeat, the group watchdog's sign of life. Both are answered by an
 * Ack and are safe to send again after a lost connection.
 */
#include <stdbool.h>
#include <string.h>

#include "client/client_call.h"
#include "supervise/client.h"
#include "wire/wire.h"

sv_err
sv_client_ready(sv_client *client, const char *status, int timeout_ms)
{
	svw_env              req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__Ready r   = SUPERVISE__V1__READY__INIT;

	if (client == NULL) {
		return SV_EINVAL;
	}
	if (status != NULL && strlen(status) > SVW_MAX_TEXT) {
		return svc_fail(client, SV_ETOOLARGE, "status text too long");
	}
	r.status      = status != NULL ? (char *) status : "";
	req.body_case = SUPERVISE__V1__ENVELOPE__BODY_READY;
	req.ready     = &r;
	return svc_send(client, &req, timeout_ms);
}

sv_err
sv_client_heartbeat(sv_client *client, int timeout_ms)
{
	svw_env                  req = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__Heartbeat h   = SUPERVISE__V1__HEARTBEAT__INIT;

	if (client == NULL) {
		return SV_EINVAL;
	}
	req.body_case = SUPERVISE__V1__ENVELOPE__BODY_HEARTBEAT;
	req.heartbeat = &h;
	return svc_send(client, &req, timeout_ms);
}
