/*
 * events.c — reading the supervisor's event stream (client.h, "Events").
 *
 * The supervisor publishes on an nng PUB socket at ipc://DIR/events.sock;
 * each message is a topic, one NUL byte and a serialized Event
 * (docs/protocol.md, "Events"). This reader speaks SP SUB over the same
 * thread-free transport as the request client (transport.c), so it works in
 * a child after fork(). SUB filtering happens at the subscriber in SP, so
 * the topic prefix is checked here. A handle used in another process than
 * the one that opened it drops the inherited socket and reconnects.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/transport.h"
#include "supervise/client.h"
#include "supervise/v1/supervise.pb-c.h"

/* Largest event message accepted (an Event is small). */
#define EV_MAX_MSG (64u * 1024u)
/* Longest topic prefix a reader may filter on. */
#define EV_MAX_PREFIX 200

struct sv_events {
	svt_conn conn;
	pid_t    pid; /* process that opened conn */
	char     prefix[EV_MAX_PREFIX + 1];
	size_t   prefix_len;
	char     detail[SVT_DETAIL_MAX];
};

struct sv_event {
	Supervise__V1__Event *e;
	char                  text[512];
};

/* ev_default_url derives DIR/events.sock from $SUPERVISE_URL or the
 * default control URL. */
static sv_err
ev_default_url(char *buf, size_t len)
{
	const char *u = getenv(SV_ENV_URL);
	char        ctl[512];
	char       *slash;

	if (u != NULL && u[0] != '\0') {
		snprintf(ctl, sizeof(ctl), "%s", u);
	} else if (sv_default_url(ctl, sizeof(ctl)) != SV_OK) {
		return SV_EINVAL;
	}
	if ((slash = strrchr(ctl, '/')) == NULL) {
		return SV_EINVAL;
	}
	*slash = '\0';
	if ((size_t) snprintf(buf, len, "%s/events.sock", ctl) >= len) {
		return SV_ETOOLARGE;
	}
	return SV_OK;
}

sv_err
sv_events_open(
    sv_events **evp, const char *url, const char *prefix, int timeout_ms)
{
	sv_events *ev;
	char       dflt[600];
	sv_err     err;

	if (evp == NULL
	    || (prefix != NULL && strlen(prefix) > EV_MAX_PREFIX)) {
		return SV_EINVAL;
	}
	if (url == NULL || url[0] == '\0') {
		if ((err = ev_default_url(dflt, sizeof(dflt))) != SV_OK) {
			return err;
		}
		url = dflt;
	}
	if ((ev = calloc(1, sizeof(*ev))) == NULL) {
		return SV_ENOMEM;
	}
	if ((err = svt_init(&ev->conn, url)) != SV_OK) {
		free(ev);
		return err;
	}
	ev->conn.self_proto = SVT_SUB0;
	ev->conn.peer_proto = SVT_PUB0;
	ev->pid             = getpid();
	if (prefix != NULL) {
		snprintf(ev->prefix, sizeof(ev->prefix), "%s", prefix);
		ev->prefix_len = strlen(ev->prefix);
	}
	if ((err = svt_connect(&ev->conn, svt_deadline(timeout_ms)))
	    != SV_OK) {
		free(ev);
		return err;
	}
	*evp = ev;
	return SV_OK;
}

/* ev_kind_name names an Event's kind as in docs/protocol.md. */
static const char *
ev_kind_name(const Supervise__V1__Event *e)
{
	switch (e->kind_case) {
	case SUPERVISE__V1__EVENT__KIND_STARTED:
		return "started";
	case SUPERVISE__V1__EVENT__KIND_READY:
		return "ready";
	case SUPERVISE__V1__EVENT__KIND_EXITED:
		return "exited";
	case SUPERVISE__V1__EVENT__KIND_RESTART_SCHEDULED:
		return "restart_scheduled";
	case SUPERVISE__V1__EVENT__KIND_UNRESPONSIVE:
		return "unresponsive";
	case SUPERVISE__V1__EVENT__KIND_ESCALATED:
		return "escalated";
	case SUPERVISE__V1__EVENT__KIND_STOPPED:
		return "stopped";
	case SUPERVISE__V1__EVENT__KIND_SPAWN_FAILED:
		return "spawn_failed";
	case SUPERVISE__V1__EVENT__KIND_GROUP_FAILED:
		return "group_failed";
	case SUPERVISE__V1__EVENT__KIND_GROUP_RESET:
		return "group_reset";
	case SUPERVISE__V1__EVENT__KIND_GROUP_SCALED:
		return "group_scaled";
	case SUPERVISE__V1__EVENT__KIND_GROUP_CREATED:
		return "group_created";
	case SUPERVISE__V1__EVENT__KIND_GROUP_DELETED:
		return "group_deleted";
	case SUPERVISE__V1__EVENT__KIND_STOPPING:
		return "stopping";
	case SUPERVISE__V1__EVENT__KIND_STATUS_TEXT:
		return "status_text";
	case SUPERVISE__V1__EVENT__KIND_ADOPTED:
		return "adopted";
	case SUPERVISE__V1__EVENT__KIND_LEASE:
		return "lease";
	case SUPERVISE__V1__EVENT__KIND_DRAIN:
		return "drain";
	case SUPERVISE__V1__EVENT__KIND_DURABILITY:
		return "durability";
	default:
		return "unknown";
	}
}

/* ev_describe writes the kind-specific details of e as "key=value" words
 * into buf. */
static void
ev_describe(const Supervise__V1__Event *e, char *buf, size_t len)
{
	buf[0] = '\0';
	switch (e->kind_case) {
	case SUPERVISE__V1__EVENT__KIND_EXITED:
		if (e->exited->exited) {
			snprintf(buf, len, "code=%d", e->exited->code);
		} else {
			snprintf(buf, len, "signal=%d%s", e->exited->signal,
			    e->exited->core_dumped ? " core=1" : "");
		}
		snprintf(buf + strlen(buf), len - strlen(buf),
		    " uptime_ms=%llu%s%s",
		    (unsigned long long) e->exited->uptime_ms,
		    e->exited->stopped_by[0] != '\0' ? " stopped_by=" : "",
		    e->exited->stopped_by);
		break;
	case SUPERVISE__V1__EVENT__KIND_RESTART_SCHEDULED:
		snprintf(buf, len, "delay_ms=%llu attempt=%u",
		    (unsigned long long) e->restart_scheduled->delay_ms,
		    e->restart_scheduled->attempt);
		break;
	case SUPERVISE__V1__EVENT__KIND_UNRESPONSIVE:
		snprintf(buf, len, "phase=%s action=%s",
		    e->unresponsive->phase, e->unresponsive->action);
		break;
	case SUPERVISE__V1__EVENT__KIND_STOPPED:
		snprintf(buf, len, "reason=%s", e->stopped->reason);
		break;
	case SUPERVISE__V1__EVENT__KIND_STOPPING:
		snprintf(buf, len, "reason=%s", e->stopping->reason);
		break;
	case SUPERVISE__V1__EVENT__KIND_SPAWN_FAILED:
		snprintf(buf, len, "error=%s", e->spawn_failed->error);
		break;
	case SUPERVISE__V1__EVENT__KIND_GROUP_FAILED:
		snprintf(buf, len, "reason=%s", e->group_failed->reason);
		break;
	case SUPERVISE__V1__EVENT__KIND_GROUP_SCALED:
		snprintf(buf, len, "previous=%u count=%u",
		    e->group_scaled->previous_count, e->group_scaled->count);
		break;
	case SUPERVISE__V1__EVENT__KIND_STATUS_TEXT:
		snprintf(buf, len, "text=%s", e->status_text->text);
		break;
	case SUPERVISE__V1__EVENT__KIND_ADOPTED:
		snprintf(buf, len, "previous_epoch=%llu",
		    (unsigned long long) e->adopted->previous_epoch);
		break;
	case SUPERVISE__V1__EVENT__KIND_LEASE:
		if (e->lease->lease != NULL) {
			const Supervise__V1__Lease *l = e->lease->lease;
			snprintf(buf, len,
			    "what=%s%s%s id=%llu pool=%s slot=%u token=%llu "
			    "holder=%s",
			    e->lease->what,
			    e->lease->reason[0] != '\0' ? " reason=" : "",
			    e->lease->reason, (unsigned long long) l->id,
			    l->pool, l->slot, (unsigned long long) l->token,
			    l->holder);
		}
		break;
	case SUPERVISE__V1__EVENT__KIND_DRAIN:
		snprintf(buf, len, "drain_id=%llu deadline_in_ms=%llu",
		    (unsigned long long) e->drain->drain_id,
		    (unsigned long long) e->drain->deadline_in_ms);
		break;
	case SUPERVISE__V1__EVENT__KIND_DURABILITY:
		/* The message, free text, comes last. */
		snprintf(buf, len, "ok=%d reason=%s since_ms=%llu%s%s",
		    e->durability->ok ? 1 : 0, e->durability->reason,
		    (unsigned long long) e->durability->since_ms,
		    e->durability->message[0] != '\0' ? " message=" : "",
		    e->durability->message);
		break;
	default:
		break;
	}
}

sv_err
sv_events_next(sv_events *ev, int timeout_ms, sv_event **eventp)
{
	int64_t deadline = svt_deadline(timeout_ms);
	sv_err  err;

	if (ev == NULL || eventp == NULL) {
		return SV_EINVAL;
	}
	if (ev->pid != getpid()) {
		/* Inherited through fork(): leave the parent's socket alone.
		 */
		svt_forget(&ev->conn);
		ev->pid = getpid();
	}
	for (;;) {
		void                 *msg = NULL;
		size_t                len = 0, tl;
		Supervise__V1__Event *e;
		sv_event             *out;

		err = svt_recv_raw(
		    &ev->conn, EV_MAX_MSG, deadline, &msg, &len);
		if (err != SV_OK) {
			snprintf(ev->detail, sizeof(ev->detail), "%s",
			    ev->conn.detail);
			if (err == SV_ECLOSED || err == SV_ECONNECT) {
				/* The supervisor went away: the next call
				 * reconnects; missed events show as a gap. */
				svt_close(&ev->conn);
			}
			return err;
		}
		tl = strnlen(msg, len);
		if (tl == len
		    || (ev->prefix_len > 0
		        && strncmp(msg, ev->prefix, ev->prefix_len) != 0)) {
			free(msg); /* no topic, or not ours */
			continue;
		}
		e = supervise__v1__event__unpack(
		    NULL, len - tl - 1, (uint8_t *) msg + tl + 1);
		free(msg);
		if (e == NULL) {
			snprintf(ev->detail, sizeof(ev->detail),
			    "undecodable event");
			return SV_EPROTO;
		}
		if ((out = malloc(sizeof(*out))) == NULL) {
			supervise__v1__event__free_unpacked(e, NULL);
			return SV_ENOMEM;
		}
		out->e = e;
		ev_describe(e, out->text, sizeof(out->text));
		*eventp = out;
		return SV_OK;
	}
}

const char *
sv_events_error_message(const sv_events *ev)
{
	return ev != NULL ? ev->detail : "";
}

void
sv_events_close(sv_events *ev)
{
	if (ev == NULL) {
		return;
	}
	if (ev->pid == getpid()) {
		svt_close(&ev->conn);
	} else {
		svt_forget(&ev->conn);
	}
	free(ev);
}

/*
 * EV_FIELD defines sv_event_NAME(e): field FIELD of the decoded Event kept
 * in e, or DFLT when e is NULL.
 */
#define EV_FIELD(type, name, field, dflt)                       \
	type sv_event_##name(const sv_event *e)                 \
	{                                                       \
		return e != NULL ? (type) e->e->field : (dflt); \
	}

EV_FIELD(uint64_t, seq, seq, 0)
EV_FIELD(const char *, group, group, "")
EV_FIELD(uint32_t, ordinal, ordinal, 0)
EV_FIELD(uint64_t, generation, generation, 0)
EV_FIELD(int64_t, pid, pid, 0)
EV_FIELD(uint64_t, time_unix_ms, time_unix_ms, 0)
EV_FIELD(const char *, supervisor_id, supervisor_id, "")

/* sv_event_kind names e's kind (ev_kind_name); "" for a NULL e. */
const char *
sv_event_kind(const sv_event *e)
{
	return e != NULL ? ev_kind_name(e->e) : "";
}

/* sv_event_is_worker: 1 unless e is a group or durability event (or NULL:
 * 0). */
int
sv_event_is_worker(const sv_event *e)
{
	if (e == NULL) {
		return 0;
	}
	switch (e->e->kind_case) {
	case SUPERVISE__V1__EVENT__KIND_GROUP_FAILED:
	case SUPERVISE__V1__EVENT__KIND_GROUP_RESET:
	case SUPERVISE__V1__EVENT__KIND_GROUP_SCALED:
	case SUPERVISE__V1__EVENT__KIND_GROUP_CREATED:
	case SUPERVISE__V1__EVENT__KIND_GROUP_DELETED:
	case SUPERVISE__V1__EVENT__KIND_DURABILITY:
		return 0;
	default:
		return 1;
	}
}

/* sv_event_details: the text ev_describe wrote; "" for a NULL e. */
const char *
sv_event_details(const sv_event *e)
{
	return e != NULL ? e->text : "";
}

void
sv_event_free(sv_event *e)
{
	if (e != NULL) {
		supervise__v1__event__free_unpacked(e->e, NULL);
		free(e);
	}
}
