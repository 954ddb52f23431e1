/*
 * events.h — supervised's event stream: an nng PUB socket beside the
 * control socket (ipc://DIR/events.sock).
 *
 * Each published message is a topic, one NUL byte, then one serialized
 * supervise.v1.Event. Topics: "w/GROUP/ORDINAL/" for worker events,
 * "g/GROUP/" for group events, so that a subscriber filters by group
 * ("w/web/" and "g/web/") or by worker ("w/web/1/"). PUB never blocks: a
 * subscriber that does not keep up loses messages, which it sees as a gap
 * in Event.seq. Only the loop thread publishes.
 */
#ifndef SVD_EVENTS_H
#define SVD_EVENTS_H

#include <stddef.h>

#include "supervise/supervise.h"
#include "supervise/v1/supervise.pb-c.h"

typedef struct svd_events svd_events;

/*
 * svd_events_open listens on url (mode 0600). On SV_OK *evp belongs to the
 * caller: close it with svd_events_close. On failure errbuf has one line.
 * Errors: SV_ENOMEM, SV_ESYSTEM.
 */
sv_err svd_events_open(
    const char *url, svd_events **evp, char *errbuf, size_t errlen);

/* svd_events_url returns the URL the socket listens on. */
const char *svd_events_url(const svd_events *ev);

/*
 * svd_events_publish sends e under its topic (built from e->group and, for
 * worker events, e->ordinal). Never blocks; a failure is counted and
 * dropped (see svd_events_dropped).
 */
void svd_events_publish(
    svd_events *ev, const Supervise__V1__Event *e, int worker);

/*
 * svd_events_publish_topic sends e under the given topic (lease events:
 * "w/GROUP/ORDINAL/" for a worker holder, "s/SESSION/" for a session).
 * Never blocks; a failure is counted and dropped.
 */
void svd_events_publish_topic(
    svd_events *ev, const Supervise__V1__Event *e, const char *topic);

/* svd_events_dropped returns how many events could not be sent. */
unsigned long svd_events_dropped(const svd_events *ev);

/* svd_events_close closes the socket and frees ev. NULL is ignored. */
void svd_events_close(svd_events *ev);

#endif /* SVD_EVENTS_H */
