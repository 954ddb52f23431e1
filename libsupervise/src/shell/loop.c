/*
 * loop.c — epoll plus a timer heap (see loop.h).
 *
 * Timer heap: an array of sv_timer pointers ordered as a binary min-heap on
 * deadline_ms; each timer remembers its index (slot = index + 1) so stop and
 * re-arm are O(log n). Ties fire in arming order is not promised.
 *
 * Removing an fd while a batch of events is being dispatched is safe as long
 * as the sv_io that was removed stays allocated until the batch ends; the
 * daemon only removes an fd from its own callback.
 *
 * One turn (sv_loop_dispatch) fires at most LOOP_MAX_TIMERS due timers, as
 * it handles at most LOOP_MAX_EVENTS fd events: when a thousand timers
 * fall due together (the deadline of a drain of 1,000 workers), the fds
 * that became ready meanwhile (the pidfds of the processes those timers
 * killed) are served between batches instead of after all of them; the
 * rest are still due, so the next wait does not block.
 *
 * After-dispatch callbacks: a FIFO (head, tail) of armed sv_defer. Each
 * remembers the loop's turn counter when armed; the end of a dispatch
 * bumps the counter and runs, from the head, those armed before the bump,
 * so one armed by an after-dispatch callback waits for the next dispatch
 * (no turn can spin forever in its own after phase).
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "shell/loop.h"

#define LOOP_MAX_EVENTS 64
#define LOOP_MAX_TIMERS 64

struct sv_loop {
	int                epfd;
	sv_timer         **heap;
	size_t             n;
	size_t             cap;
	struct epoll_event events[LOOP_MAX_EVENTS];
	sv_defer          *dhead, *dtail; /* armed after-dispatch callbacks */
	uint64_t           turn; /* after phases begun */
};

sv_err
sv_loop_create(sv_loop **loopp)
{
	sv_loop *l = calloc(1, sizeof(*l));

	if (l == NULL) {
		return SV_ENOMEM;
	}
	if ((l->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0) {
		free(l);
		return SV_ESYSTEM;
	}
	*loopp = l;
	return SV_OK;
}

void
sv_loop_destroy(sv_loop *loop)
{
	if (loop == NULL) {
		return;
	}
	for (size_t i = 0; i < loop->n; i++) {
		loop->heap[i]->slot = 0;
	}
	while (loop->dhead != NULL) {
		sv_loop_defer_cancel(loop, loop->dhead);
	}
	close(loop->epfd);
	free(loop->heap);
	free(loop);
}

uint64_t
sv_loop_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000u + (uint64_t) ts.tv_nsec / 1000000u;
}

sv_err
sv_loop_add_io(sv_loop *loop, sv_io *io, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = io};

	if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, io->fd, &ev) != 0) {
		return SV_ESYSTEM;
	}
	return SV_OK;
}

sv_err
sv_loop_mod_io(sv_loop *loop, sv_io *io, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = io};

	if (epoll_ctl(loop->epfd, EPOLL_CTL_MOD, io->fd, &ev) != 0) {
		return SV_ESYSTEM;
	}
	return SV_OK;
}

void
sv_loop_del_io(sv_loop *loop, sv_io *io)
{
	(void) epoll_ctl(loop->epfd, EPOLL_CTL_DEL, io->fd, NULL);
}

/* ---- timer heap -----------------------------------------------------------
 */

void
sv_timer_init(sv_timer *t, sv_timer_cb cb, void *arg)
{
	t->deadline_ms = 0;
	t->slot        = 0;
	t->cb          = cb;
	t->arg         = arg;
}

bool
sv_timer_armed(const sv_timer *t)
{
	return t->slot != 0;
}

/* heap_set places t at index i. */
static void
heap_set(sv_loop *l, size_t i, sv_timer *t)
{
	l->heap[i] = t;
	t->slot    = i + 1;
}

/* heap_up moves the timer at i towards the root. */
static void
heap_up(sv_loop *l, size_t i)
{
	sv_timer *t = l->heap[i];

	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (l->heap[p]->deadline_ms <= t->deadline_ms) {
			break;
		}
		heap_set(l, i, l->heap[p]);
		i = p;
	}
	heap_set(l, i, t);
}

/* heap_down moves the timer at i towards the leaves. */
static void
heap_down(sv_loop *l, size_t i)
{
	sv_timer *t = l->heap[i];

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= l->n) {
			break;
		}
		if (c + 1 < l->n
		    && l->heap[c + 1]->deadline_ms < l->heap[c]->deadline_ms) {
			c++;
		}
		if (t->deadline_ms <= l->heap[c]->deadline_ms) {
			break;
		}
		heap_set(l, i, l->heap[c]);
		i = c;
	}
	heap_set(l, i, t);
}

void
sv_loop_timer_stop(sv_loop *loop, sv_timer *t)
{
	size_t i;

	if (t->slot == 0) {
		return;
	}
	i       = t->slot - 1;
	t->slot = 0;
	loop->n--;
	if (i == loop->n) {
		return;
	}
	/* Move the last timer into the hole, then restore the heap order. */
	sv_timer *m = loop->heap[loop->n];
	heap_set(loop, i, m);
	heap_up(loop, i);
	heap_down(loop, m->slot - 1);
}

sv_err
sv_loop_timer_start(sv_loop *loop, sv_timer *t, uint64_t delay_ms)
{
	sv_loop_timer_stop(loop, t);
	if (loop->n == loop->cap) {
		size_t     cap = loop->cap == 0 ? 16 : loop->cap * 2;
		sv_timer **h   = realloc(loop->heap, cap * sizeof(sv_timer *));
		if (h == NULL) {
			return SV_ENOMEM;
		}
		loop->heap = h;
		loop->cap  = cap;
	}
	t->deadline_ms = sv_loop_now_ms() + delay_ms;
	heap_set(loop, loop->n++, t);
	heap_up(loop, loop->n - 1);
	return SV_OK;
}

int
sv_loop_next_timeout(const sv_loop *loop, int cap_ms)
{
	uint64_t now, d;

	if (loop->dhead != NULL) {
		return 0; /* after-dispatch work waits for a turn */
	}
	if (loop->n == 0) {
		return cap_ms;
	}
	now = sv_loop_now_ms();
	d   = loop->heap[0]->deadline_ms <= now
	      ? 0
	      : loop->heap[0]->deadline_ms - now;
	if (cap_ms >= 0 && d > (uint64_t) cap_ms) {
		return cap_ms;
	}
	return d > INT32_MAX ? INT32_MAX : (int) d;
}

/* run_timers fires up to max timers due at now_ms, earliest first. */
static size_t
run_timers(sv_loop *loop, uint64_t now_ms, size_t max)
{
	size_t fired = 0;

	while (fired < max && loop->n > 0
	    && loop->heap[0]->deadline_ms <= now_ms) {
		sv_timer *t = loop->heap[0];
		sv_loop_timer_stop(loop, t);
		fired++;
		t->cb(loop, t);
	}
	return fired;
}

size_t
sv_loop_run_timers(sv_loop *loop, uint64_t now_ms)
{
	return run_timers(loop, now_ms, SIZE_MAX);
}

/* ---- after-dispatch callbacks --------------------------------------------
 */

void
sv_defer_init(sv_defer *d, sv_defer_cb cb, void *arg)
{
	d->next  = NULL;
	d->turn  = 0;
	d->armed = false;
	d->cb    = cb;
	d->arg   = arg;
}

bool
sv_defer_armed(const sv_defer *d)
{
	return d->armed;
}

void
sv_loop_defer(sv_loop *loop, sv_defer *d)
{
	if (d->armed) {
		return;
	}
	d->armed = true;
	d->turn  = loop->turn;
	d->next  = NULL;
	if (loop->dtail != NULL) {
		loop->dtail->next = d;
	} else {
		loop->dhead = d;
	}
	loop->dtail = d;
}

void
sv_loop_defer_cancel(sv_loop *loop, sv_defer *d)
{
	sv_defer *prev = NULL;

	if (!d->armed) {
		return;
	}
	for (sv_defer *x = loop->dhead; x != NULL; prev = x, x = x->next) {
		if (x != d) {
			continue;
		}
		if (prev != NULL) {
			prev->next = d->next;
		} else {
			loop->dhead = d->next;
		}
		if (loop->dtail == d) {
			loop->dtail = prev;
		}
		break;
	}
	d->next  = NULL;
	d->armed = false;
}

/* run_deferred runs the after-dispatch callbacks armed before this call,
 * in arming order; those they arm wait for the next call. */
static void
run_deferred(sv_loop *loop)
{
	uint64_t  turn = loop->turn++;
	sv_defer *d;

	while ((d = loop->dhead) != NULL && d->turn <= turn) {
		loop->dhead = d->next;
		if (loop->dhead == NULL) {
			loop->dtail = NULL;
		}
		d->next  = NULL;
		d->armed = false;
		d->cb(loop, d);
	}
}

/* ---- polling --------------------------------------------------------------
 */

sv_err
sv_loop_wait(sv_loop *loop, int timeout_ms, int *nready)
{
	int n = epoll_wait(
	    loop->epfd, loop->events, LOOP_MAX_EVENTS, timeout_ms);

	if (n < 0) {
		*nready = 0;
		return errno == EINTR ? SV_OK : SV_ESYSTEM;
	}
	*nready = n;
	return SV_OK;
}

void
sv_loop_dispatch(sv_loop *loop, int nready)
{
	for (int i = 0; i < nready; i++) {
		sv_io *io = loop->events[i].data.ptr;
		io->cb(loop, io, loop->events[i].events);
	}
	(void) run_timers(loop, sv_loop_now_ms(), LOOP_MAX_TIMERS);
	run_deferred(loop);
}
