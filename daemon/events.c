/*
 * events.c — the PUB socket of events (see events.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nng/nng.h>
#include <nng/protocol/pubsub0/pub.h>

#include "accept_guard.h"
#include "events.h"

struct svd_events {
	nng_socket    sock;
	char          url[600];
	unsigned long dropped;
};

sv_err
svd_events_open(const char *url, svd_events **evp, char *errbuf, size_t errlen)
{
	svd_events  *ev;
	nng_listener l;
	int          rv;

	if ((ev = calloc(1, sizeof(*ev))) == NULL) {
		snprintf(errbuf, errlen, "out of memory");
		return SV_ENOMEM;
	}
	snprintf(ev->url, sizeof(ev->url), "%s", url);
	svd_guard_check(); /* nng 1.5.2's listener bug, accept_guard.h */
	if ((rv = nng_pub0_open(&ev->sock)) != 0) {
		snprintf(errbuf, errlen, "cannot open the event socket: %s",
		    nng_strerror(rv));
		free(ev);
		return SV_ESYSTEM;
	}
	/* Subscribers send nothing that matters; keep their input small. */
	if ((rv = nng_listener_create(&l, ev->sock, url)) != 0
	    || (rv = nng_listener_set_size(l, NNG_OPT_RECVMAXSZ, 1024)) != 0
	    || (rv = nng_listener_set_int(l, NNG_OPT_IPC_PERMISSIONS, 0600))
	        != 0
	    || (rv = nng_listener_start(l, 0)) != 0) {
		snprintf(errbuf, errlen, "cannot listen on %s: %s", url,
		    nng_strerror(rv));
		nng_close(ev->sock);
		free(ev);
		return SV_ESYSTEM;
	}
	*evp = ev;
	return SV_OK;
}

const char *
svd_events_url(const svd_events *ev)
{
	return ev->url;
}

void
svd_events_publish(svd_events *ev, const Supervise__V1__Event *e, int worker)
{
	char topic[128];
	int  n;

	if (worker) {
		n = snprintf(topic, sizeof(topic), "w/%s/%" PRIu32 "/",
		    e->group, e->ordinal);
	} else {
		n = snprintf(topic, sizeof(topic), "g/%s/", e->group);
	}
	if (n < 0 || (size_t) n >= sizeof(topic)) {
		ev->dropped++;
		return;
	}
	svd_events_publish_topic(ev, e, topic);
}

void
svd_events_publish_topic(
    svd_events *ev, const Supervise__V1__Event *e, const char *topic)
{
	size_t   tlen, blen;
	nng_msg *m;

	tlen = strlen(topic) + 1; /* the NUL ends the topic */
	blen = supervise__v1__event__get_packed_size(e);
	if (nng_msg_alloc(&m, tlen + blen) != 0) {
		ev->dropped++;
		return;
	}
	memcpy(nng_msg_body(m), topic, tlen);
	supervise__v1__event__pack(e, (uint8_t *) nng_msg_body(m) + tlen);
	/* PUB never blocks: a full subscriber queue drops the message. */
	if (nng_sendmsg(ev->sock, m, NNG_FLAG_NONBLOCK) != 0) {
		nng_msg_free(m);
		ev->dropped++;
	}
}

unsigned long
svd_events_dropped(const svd_events *ev)
{
	return ev->dropped;
}

void
svd_events_close(svd_events *ev)
{
	if (ev == NULL) {
		return;
	}
	nng_close(ev->sock);
	free(ev);
}
