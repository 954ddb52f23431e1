/*
 * sd_notify_plan.c — the pure decision of what supervised tells its own
 * service manager (see sd_notify_plan.h for the rules and their bounds).
 * No I/O, no clock, no allocation.
 */
#include "sd_notify_plan.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* wake_min lowers *w to t. */
static void
wake_min(uint64_t *w, uint64_t t)
{
	if (t < *w) {
		*w = t;
	}
}

void
sdn_plan_init(
    sdn_plan *p, uint64_t watchdog_usec, long mainpid, uint64_t now_ms)
{
	memset(p, 0, sizeof(*p));
	p->watchdog_every_ms = watchdog_usec / 2000u;
	if (watchdog_usec > 0 && p->watchdog_every_ms == 0) {
		p->watchdog_every_ms = 1;
	}
	p->watchdog_due_ms = now_ms;
	p->mainpid         = mainpid > 0 ? mainpid : 0;
}

void
sdn_plan_reload(sdn_plan *p, bool begin)
{
	if (begin) {
		p->reload_begin = true;
		p->reload_end   = false;
	} else {
		p->reload_end = true;
	}
}

void
sdn_status_text(const sdn_input *in, char *buf, size_t len)
{
	const sdn_counts *c = &in->counts;
	uint32_t up = c->live >= c->starting ? c->live - c->starting : 0;

	if (len == 0) {
		return;
	}
	if (in->stopping) {
		snprintf(buf, len, "stopping: %" PRIu32 " worker%s left",
		    c->live, c->live == 1 ? "" : "s");
		return;
	}
	snprintf(buf, len,
	    "%" PRIu32 "/%" PRIu32 " workers up, %" PRIu32
	    " starting, %" PRIu32 " failed group%s",
	    up, c->wanted, c->starting, c->failed_groups,
	    c->failed_groups == 1 ? "" : "s");
}

/* plan_watchdog: a ping when one is due. */
static void
plan_watchdog(sdn_plan *p, uint64_t now, sdn_msg *m, uint64_t *wake)
{
	if (p->watchdog_every_ms == 0) {
		return;
	}
	if (now >= p->watchdog_due_ms) {
		m->watchdog        = true;
		p->watchdog_due_ms = now + p->watchdog_every_ms;
	}
	wake_min(wake, p->watchdog_due_ms);
}

/* plan_stop: STOPPING=1 once, then extensions while workers are left and
 * the shutdown's own bound is not past. */
static void
plan_stop(sdn_plan *p, const sdn_input *in, sdn_msg *m, uint64_t *wake)
{
	uint64_t now = in->now_ms;

	if (!in->stopping) {
		return;
	}
	if (!p->stopping_sent) {
		p->stopping_sent = true;
		m->stopping      = true;
		p->stop_end_ms   = now + in->stop_bound_ms;
		p->extend_due_ms = now;
	}
	if (in->counts.live == 0 || now >= p->stop_end_ms) {
		return;
	}
	if (now >= p->extend_due_ms) {
		m->extend        = true;
		m->extend_usec   = (uint64_t) SDN_EXTEND_MS * 1000u;
		p->extend_due_ms = now + SDN_EXTEND_EVERY_MS;
	}
	if (p->extend_due_ms < p->stop_end_ms) {
		wake_min(wake, p->extend_due_ms);
	}
}

/* plan_status: the text when it changed and the rate allows (or it goes
 * with READY=1 or STOPPING=1). */
static void
plan_status(sdn_plan *p, const sdn_input *in, sdn_msg *m, uint64_t *wake)
{
	char     text[SDN_STATUS_MAX];
	uint64_t now = in->now_ms;

	sdn_status_text(in, text, sizeof(text));
	if (p->status_any && strcmp(text, p->status) == 0) {
		return;
	}
	if (!p->status_any || m->ready || m->stopping
	    || now >= p->status_at_ms + SDN_STATUS_MIN_MS) {
		m->status = true;
		memcpy(m->text, text, sizeof(text));
		memcpy(p->status, text, sizeof(text));
		p->status_any   = true;
		p->status_at_ms = now;
		return;
	}
	wake_min(wake, p->status_at_ms + SDN_STATUS_MIN_MS);
}

bool
sdn_plan_next(sdn_plan *p, const sdn_input *in, sdn_msg *m, uint64_t *wake_ms)
{
	uint64_t wake = SDN_NEVER;

	memset(m, 0, sizeof(*m));
	plan_watchdog(p, in->now_ms, m, &wake);
	if (!p->ready_sent && in->settled && !in->stopping) {
		p->ready_sent = true;
		m->ready      = true;
		m->mainpid    = p->mainpid;
	}
	if (p->reload_begin && !in->stopping) {
		p->reload_begin = false;
		m->reloading    = true;
		m->mono_usec    = in->mono_usec;
	} else if (p->reload_end) {
		p->reload_end = false;
		/* READY=1 again only where it was said once. */
		m->ready = m->ready || (p->ready_sent && !in->stopping);
	}
	plan_stop(p, in, m, &wake);
	plan_status(p, in, m, &wake);
	*wake_ms = wake;
	return m->ready || m->reloading || m->stopping || m->extend
	    || m->watchdog || m->status;
}

size_t
sdn_msg_format(const sdn_msg *m, char *buf, size_t len)
{
	size_t n = 0;
	int    k;

#define SDN_PUT(...)                                         \
	do {                                                 \
		k = snprintf(buf + n, len - n, __VA_ARGS__); \
		if (k < 0 || (size_t) k >= len - n) {        \
			if (len > 0) {                       \
				buf[0] = '\0';               \
			}                                    \
			return 0;                            \
		}                                            \
		n += (size_t) k;                             \
	} while (0)

	if (len == 0) {
		return 0;
	}
	buf[0] = '\0';
	if (m->reloading) {
		SDN_PUT(
		    "RELOADING=1\nMONOTONIC_USEC=%" PRIu64 "\n", m->mono_usec);
	}
	if (m->ready) {
		SDN_PUT("READY=1\n");
		if (m->mainpid > 0) {
			SDN_PUT("MAINPID=%ld\n", m->mainpid);
		}
	}
	if (m->stopping) {
		SDN_PUT("STOPPING=1\n");
	}
	if (m->extend) {
		SDN_PUT("EXTEND_TIMEOUT_USEC=%" PRIu64 "\n", m->extend_usec);
	}
	if (m->status) {
		/* The text is ours and has no newline (sdn_status_text). */
		SDN_PUT("STATUS=%s\n", m->text);
	}
	if (m->watchdog) {
		SDN_PUT("WATCHDOG=1\n");
	}
#undef SDN_PUT
	return n;
}
