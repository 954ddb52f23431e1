/*
 * sd_notify_plan.h — what supervised tells its own service manager, and
 * when: the pure half of the sd_notify protocol (sd_notify.h is the shell
 * that reads the environment and sends the datagrams).
 *
 * Design: the decision "what to send now" is one function of a small
 * state (sdn_plan: what was sent and when) and of what the supervisor is
 * (sdn_input: phase, counts, the time), with no I/O and no clock of its
 * own, so a unit test drives it through a whole life without a socket
 * (tests/test_sd_notify.c). It returns at most one message (sdn_msg,
 * formatted into one datagram by sdn_msg_format) and the time it wants to
 * be asked again; the shell asks after every loop turn and when that time
 * comes. A message is recorded as sent when it is decided: a datagram the
 * manager does not take is not sent again (as sd_notify(3) itself: a
 * notification is fire-and-forget).
 *
 * What is sent (systemd's names, sd_notify(3)):
 *   READY=1      once, when the supervisor settled its first start
 *                (sdn_input.settled: see daemon/sup_manager.c), with
 *                MAINPID= when the daemon forked into the background;
 *                never after STOPPING=1.
 *   STATUS=...   the counts, whenever the text changes, at most once per
 *                SDN_STATUS_MIN_MS (a change inside that interval is sent
 *                when it ends, with the counts of then), plus the text
 *                that goes with READY=1 and with STOPPING=1: at most
 *                1 + 2 per second, however fast workers come and go.
 *   STOPPING=1   once, when a shutdown begins.
 *   EXTEND_TIMEOUT_USEC=SDN_EXTEND_MS*1000
 *                with STOPPING=1 and then every SDN_EXTEND_EVERY_MS while
 *                workers are left, but never past the shutdown's own
 *                bound (sdn_input.stop_bound_ms from its start): a
 *                shutdown that overruns what the config allows is left to
 *                the manager's TimeoutStopSec.
 *   WATCHDOG=1   every half WATCHDOG_USEC (the first at once), for as long
 *                as the shell asks: the shell asks from the daemon's loop,
 *                so a stuck loop stops the pings and the manager restarts
 *                the daemon.
 *   RELOADING=1 with MONOTONIC_USEC=, then READY=1: around a reload, when
 *                the reload code calls sdn_plan_reload (nothing does
 *                yet: SIGHUP is logged and ignored).
 */
#ifndef SVD_SD_NOTIFY_PLAN_H
#define SVD_SD_NOTIFY_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* STATUS= changes are sent at most this often (see the design comment). */
#define SDN_STATUS_MIN_MS 1000u
/* During a shutdown: how often EXTEND_TIMEOUT_USEC is sent, and how much
 * time each one asks for (three periods: two lost datagrams or a slow
 * turn do not let the manager's timeout run out). */
#define SDN_EXTEND_EVERY_MS 2000u
#define SDN_EXTEND_MS       (3u * SDN_EXTEND_EVERY_MS)
/* Longest STATUS= text, terminator included. */
#define SDN_STATUS_MAX 128
/* Longest datagram sdn_msg_format writes, terminator included. */
#define SDN_DGRAM_MAX 320
/* No wake-up wanted. */
#define SDN_NEVER UINT64_MAX

/* What the supervisor counts (summed over its groups, O(groups) to get:
 * daemon/sup_manager.c). */
typedef struct sdn_counts {
	uint32_t live; /* processes not reaped yet */
	uint32_t starting; /* of those, readiness still awaited */
	uint32_t wanted; /* held seats: workers that should run */
	uint32_t failed_groups; /* groups waiting for a reset */
} sdn_counts;

/* What the supervisor is, at now_ms. */
typedef struct sdn_input {
	uint64_t now_ms; /* CLOCK_MONOTONIC, milliseconds */
	uint64_t mono_usec; /* the same clock in microseconds, for
	                     * MONOTONIC_USEC= (a reload) */
	bool settled; /* the control socket serves and the first
	               * start has settled (READY=1 may go) */
	bool     stopping; /* a shutdown has begun */
	uint64_t stop_bound_ms; /* with stopping: how long the shutdown may
	                         * take, from its start, at most */
	sdn_counts counts;
} sdn_input;

/* What was sent and when: the decision's memory. Plain data, owned by
 * whoever embeds it; sdn_plan_init fills it. */
typedef struct sdn_plan {
	uint64_t watchdog_every_ms; /* 0: no pings */
	uint64_t watchdog_due_ms;
	long     mainpid; /* > 0: sent with READY=1 */
	bool     ready_sent;
	bool     stopping_sent;
	bool     reload_begin; /* RELOADING=1 to send */
	bool     reload_end; /* READY=1 to send after a reload */
	bool     status_any; /* some STATUS= was sent */
	uint64_t status_at_ms; /* when the last one was */
	char     status[SDN_STATUS_MAX]; /* its text */
	uint64_t extend_due_ms; /* next EXTEND_TIMEOUT_USEC= */
	uint64_t stop_end_ms; /* the shutdown's bound, absolute */
} sdn_plan;

/* One datagram's worth of fields; sdn_msg_format writes it. */
typedef struct sdn_msg {
	bool     ready;
	long     mainpid; /* > 0: MAINPID= */
	bool     reloading;
	uint64_t mono_usec; /* with reloading */
	bool     stopping;
	bool     extend;
	uint64_t extend_usec;
	bool     watchdog;
	bool     status;
	char     text[SDN_STATUS_MAX]; /* with status */
} sdn_msg;

/*
 * sdn_plan_init starts a plan: pings every watchdog_usec / 2 (0: none;
 * at least every millisecond), the first one due at now_ms; mainpid > 0 is
 * sent with READY=1 (the daemon forked after its manager started it).
 */
void sdn_plan_init(
    sdn_plan *p, uint64_t watchdog_usec, long mainpid, uint64_t now_ms);

/*
 * sdn_plan_next decides what to send at in->now_ms: fills *m and returns
 * true when something is due (false: *m is empty), records it as sent, and
 * writes in *wake_ms when it wants to be asked again at the latest
 * (SDN_NEVER: only when the input changes).
 */
bool sdn_plan_next(
    sdn_plan *p, const sdn_input *in, sdn_msg *m, uint64_t *wake_ms);

/*
 * sdn_plan_reload is the reload's hook: begin true when a reload starts
 * (RELOADING=1 with MONOTONIC_USEC= goes at the next sdn_plan_next), false
 * when it is done (READY=1 again, if READY=1 was ever sent). Nothing calls
 * it until reload exists (docs/production.md).
 */
void sdn_plan_reload(sdn_plan *p, bool begin);

/* sdn_status_text writes the STATUS= text for in into buf (len bytes,
 * terminated, cut to fit). */
void sdn_status_text(const sdn_input *in, char *buf, size_t len);

/*
 * sdn_msg_format writes m as one datagram ("KEY=value\n" lines, in the
 * order RELOADING, MONOTONIC_USEC, READY, MAINPID, STOPPING,
 * EXTEND_TIMEOUT_USEC, STATUS, WATCHDOG) into buf (len bytes; at least
 * SDN_DGRAM_MAX is always enough). Returns its length without the
 * terminator, or 0 when it does not fit (nothing usable written).
 */
size_t sdn_msg_format(const sdn_msg *m, char *buf, size_t len);

#endif /* SVD_SD_NOTIFY_PLAN_H */
