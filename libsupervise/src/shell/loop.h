/*
 * loop.h — the effect shell's event loop: epoll for file descriptors, a
 * binary min-heap for timers (internal).
 *
 * Handles are caller-owned structs (sv_io, sv_timer) embedded in the
 * caller's objects, so registering allocates nothing besides heap growth.
 * The loop is single-threaded: only the thread running it touches it (the
 * daemon guards it with its state mutex). Timers have millisecond
 * resolution on CLOCK_MONOTONIC.
 *
 * After-dispatch callbacks (sv_defer): work a callback wants done once the
 * current turn's other callbacks have all run (the event socket's fan-out
 * runs after the reaps and spawns of the same turn). Armed, one runs once
 * at the end of the next sv_loop_dispatch, after its fd callbacks and its
 * timers, in arming order; while one is armed the loop does not sleep
 * (sv_loop_next_timeout returns 0), so one armed outside a dispatch runs
 * at the end of the next turn, without waiting for an fd or a timer.
 */
#ifndef SV_SHELL_LOOP_H
#define SV_SHELL_LOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "supervise/supervise.h"

typedef struct sv_loop  sv_loop;
typedef struct sv_io    sv_io;
typedef struct sv_timer sv_timer;
typedef struct sv_defer sv_defer;

typedef void (*sv_io_cb)(sv_loop *loop, sv_io *io, uint32_t events);
typedef void (*sv_timer_cb)(sv_loop *loop, sv_timer *timer);
typedef void (*sv_defer_cb)(sv_loop *loop, sv_defer *defer);

/* A watched file descriptor; arg is free for the owner. */
struct sv_io {
	int      fd;
	sv_io_cb cb;
	void    *arg;
};

/* A one-shot timer; arg is free for the owner. */
struct sv_timer {
	uint64_t    deadline_ms; /* absolute, sv_loop_now_ms() clock */
	size_t      slot; /* index in the heap + 1; 0 = not armed */
	sv_timer_cb cb;
	void       *arg;
};

/* A one-shot after-dispatch callback; arg is free for the owner. */
struct sv_defer {
	sv_defer   *next; /* in the loop's list while armed */
	uint64_t    turn; /* the dispatch it was armed before */
	bool        armed;
	sv_defer_cb cb;
	void       *arg;
};

/*
 * sv_loop_create makes a loop. On SV_OK *loopp belongs to the caller; free it
 * with sv_loop_destroy. Errors: SV_ENOMEM, SV_ESYSTEM.
 */
sv_err sv_loop_create(sv_loop **loopp);

/* sv_loop_destroy frees loop; registered fds are not closed. */
void sv_loop_destroy(sv_loop *loop);

/* sv_loop_now_ms reads CLOCK_MONOTONIC in milliseconds. */
uint64_t sv_loop_now_ms(void);

/*
 * sv_loop_add_io watches io->fd for events (EPOLLIN...) and calls io->cb.
 * io must stay valid until sv_loop_del_io. Errors: SV_ESYSTEM.
 */
sv_err sv_loop_add_io(sv_loop *loop, sv_io *io, uint32_t events);

/*
 * sv_loop_mod_io changes the events io (already added) is watched for.
 * Errors: SV_ESYSTEM.
 */
sv_err sv_loop_mod_io(sv_loop *loop, sv_io *io, uint32_t events);

/* sv_loop_del_io stops watching io->fd. Call before closing the fd. */
void sv_loop_del_io(sv_loop *loop, sv_io *io);

/* sv_timer_init prepares an unarmed timer. */
void sv_timer_init(sv_timer *t, sv_timer_cb cb, void *arg);

/*
 * sv_loop_timer_start arms t to fire once after delay_ms (re-arming an armed
 * timer moves it). Errors: SV_ENOMEM (heap growth).
 */
sv_err sv_loop_timer_start(sv_loop *loop, sv_timer *t, uint64_t delay_ms);

/* sv_loop_timer_stop disarms t; a no-op if it is not armed. */
void sv_loop_timer_stop(sv_loop *loop, sv_timer *t);

/* sv_timer_armed tells whether t is armed. */
bool sv_timer_armed(const sv_timer *t);

/* sv_defer_init prepares an unarmed after-dispatch callback. */
void sv_defer_init(sv_defer *d, sv_defer_cb cb, void *arg);

/*
 * sv_loop_defer arms d: d->cb runs once, at the end of the next
 * sv_loop_dispatch (after its fd callbacks and timers; armed by one of the
 * after-dispatch callbacks themselves, at the end of the one after). A
 * no-op when d is armed already. d must stay valid until it has run or is
 * cancelled. Never fails (nothing is allocated).
 */
void sv_loop_defer(sv_loop *loop, sv_defer *d);

/* sv_loop_defer_cancel disarms d; a no-op if it is not armed. O(armed). */
void sv_loop_defer_cancel(sv_loop *loop, sv_defer *d);

/* sv_defer_armed tells whether d is armed. */
bool sv_defer_armed(const sv_defer *d);

/*
 * sv_loop_next_timeout returns how many ms until the earliest timer, capped
 * at cap_ms; cap_ms (which may be -1 = no cap, then -1 means no timer) when
 * no timer is armed; 0 while an after-dispatch callback is armed.
 */
int sv_loop_next_timeout(const sv_loop *loop, int cap_ms);

/*
 * sv_loop_run_timers fires every timer whose deadline is <= now_ms, earliest
 * first, and returns how many fired. A callback may arm or stop timers.
 */
size_t sv_loop_run_timers(sv_loop *loop, uint64_t now_ms);

/*
 * sv_loop_wait only waits (no callbacks): up to timeout_ms (-1: forever),
 * returning how many fd events are pending in *nready. Paired with
 * sv_loop_dispatch so a caller can take a lock between waiting and
 * handling. Returns SV_OK (also on EINTR, with *nready 0) or SV_ESYSTEM.
 */
sv_err sv_loop_wait(sv_loop *loop, int timeout_ms, int *nready);

/*
 * sv_loop_dispatch calls the callbacks of the events sv_loop_wait found,
 * then fires due timers, at most 64 of them (the rest stay due, so
 * sv_loop_next_timeout returns 0 and the next wait only polls), then the
 * after-dispatch callbacks armed before this phase began (sv_loop_defer).
 */
void sv_loop_dispatch(sv_loop *loop, int nready);

#endif /* SV_SHELL_LOOP_H */
