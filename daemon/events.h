/*
 * events.h — supervised's event stream: an SP PUB socket beside the control
 * socket (ipc://DIR/events.sock), served on the supervisor's loop thread
 * with no other thread involved (see events.c). Any nng SUB socket, and
 * the thread-free libsupervise reader, subscribe to it.
 *
 * Each published message is a topic, one NUL byte, then one serialized
 * supervise.v1.Event. Topics: "w/GROUP/ORDINAL/" for worker events,
 * "g/GROUP/" for group events, so that a subscriber filters by group
 * ("w/web/" and "g/web/") or by worker ("w/web/1/"). PUB never blocks: a
 * subscriber that does not keep up loses messages (counted, logged, see
 * svd_events_dropped), which it sees as a gap in Event.seq. Only the loop
 * thread publishes. Publishing writes nothing: the loop writes what was
 * published once the current turn's callbacks have run (see events.c).
 */
#ifndef SVD_EVENTS_H
#define SVD_EVENTS_H

#include <stddef.h>

#include "shell/loop.h"
#include "supervise/supervise.h"
#include "supervise/v1/supervise.pb-c.h"

/* Messages queued for one subscriber beyond what its socket buffer holds
 * (nng's PUB default); when full, its oldest unsent message is dropped. */
#define SVD_EVENTS_QUEUE 16

/* Messages published and not yet handed to the subscribers (the fan-out
 * after the loop's turn); the publish that fills this many hands them
 * over at once. Half a queue: one turn's deferral never makes a
 * subscriber that kept up drop anything. */
#define SVD_EVENTS_PENDING (SVD_EVENTS_QUEUE / 2)

typedef struct svd_events svd_events;

/*
 * svd_events_open listens on url (ipc://PATH, mode 0600; a socket file
 * nobody accepts on is replaced) and serves subscribers from loop. On SV_OK
 * *evp belongs to the caller: close it with svd_events_close, before the
 * loop is destroyed. On failure errbuf has one line. Errors: SV_EINVAL
 * (not an ipc:// URL, or a path too long), SV_EBUSY (another server
 * listens on url), SV_ENOMEM, SV_ESYSTEM.
 */
sv_err svd_events_open(sv_loop *loop, const char *url, svd_events **evp,
    char *errbuf, size_t errlen);

/* svd_events_url returns the URL the socket listens on. */
const char *svd_events_url(const svd_events *ev);

/*
 * svd_events_publish sends e under its topic (built from e->group and, for
 * worker events, e->ordinal) to every subscriber connected now: e is
 * encoded at once (the caller may free it on return) and written after
 * the loop's current turn (an after-dispatch callback, shell/loop.h), or
 * at once when SVD_EVENTS_PENDING messages wait. Never blocks; what is
 * lost is counted (see svd_events_dropped).
 */
void svd_events_publish(
    svd_events *ev, const Supervise__V1__Event *e, int worker);

/*
 * svd_events_publish_topic sends e under the given topic (lease events:
 * "w/GROUP/ORDINAL/" for a worker holder, "s/SESSION/" for a session),
 * deferred as svd_events_publish. Never blocks; what is lost is counted.
 */
void svd_events_publish_topic(
    svd_events *ev, const Supervise__V1__Event *e, const char *topic);

/*
 * svd_events_subscribers returns how many subscribers are connected and
 * past their connection header (those that receive what is published).
 */
size_t svd_events_subscribers(const svd_events *ev);

/*
 * svd_events_dropped returns how many messages were lost since open: one
 * per subscriber whose queue was full (or whose connection closed with
 * messages still queued), plus one per event that could not be built (out
 * of memory, a topic over 127 bytes). Drops are also logged, at most one
 * line a second, and the total when the socket closes.
 */
unsigned long svd_events_dropped(const svd_events *ev);

/*
 * svd_events_writes returns how many write system calls (sendmsg) the
 * socket made to subscribers since open: one per subscriber per fan-out
 * that found its queue empty, however many frames it carried (tests, and
 * diagnosis; not the connection headers).
 */
unsigned long svd_events_writes(const svd_events *ev);

/*
 * svd_events_close hands what is pending to the subscribers, writes what
 * each subscriber's socket takes at once (no waiting), closes every
 * connection and the socket (removing the socket file), logs the drop
 * total if any (what could not be written counts), and frees ev. NULL is
 * ignored.
 */
void svd_events_close(svd_events *ev);

#endif /* SVD_EVENTS_H */
