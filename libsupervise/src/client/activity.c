/*
 * activity.c — the writer of activity regions (API in
 * supervise/activity.h, layout in core/activity_format.h, model and format
 * in docs/activity.md).
 *
 * Design. A region is mapped MAP_SHARED from the file the caller names.
 * Each thread that uses it gets one slot, claimed on its first enter under
 * act_lock; occupancy is kept in process-private memory (the region's
 * `used` bit set), never read back from the shared file, so a scribbled
 * file cannot make the writer write out of bounds. The hot path (enter,
 * leave of a thread that has its slot) uses only thread-local state: the
 * thread's entry in act_tls (region, slot, depth, sequence number) and a
 * few relaxed atomic stores framed by the slot's sequence counter:
 *
 *   seq = q + 1 (odd) ; release fence ; entry and depth stores ;
 *   seq = q + 2 (release)
 *
 * The reader (core/activity_view.c) loads seq, the fields, an acquire
 * fence and seq again, and keeps the copy only when both are equal and
 * even. No lock, no system call: the clock is read through the vDSO.
 *
 * Lifetimes. A thread's slot is given back by a pthread key destructor
 * when the thread exits, and all slots are emptied when the region is
 * closed; both run under act_lock, which also guards the list of open
 * regions, so a destructor never touches a region that was closed. A
 * thread-local entry names its region by pointer and serial number, so a
 * new region allocated at a closed one's address is not mistaken for it.
 *
 * fork(). pthread_atfork handlers hold act_lock across fork() (so the child
 * never inherits it locked by a thread that does not exist there) and bump
 * act_forkgen in the child. A region records act_forkgen at open; every
 * call compares it first and returns SV_EPERM on a mismatch, before any
 * thread-local or shared state is used.
 *
 * Divisions: process-wide state and fork handling; thread slots (attach,
 * release); open and close; enter, leave, depth, disable.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/activity_format.h"
#include "supervise/activity.h"

struct sv_activity_region {
	sv_act_region_map  *map;
	uint64_t            serial; /* never 0, never reused in a process */
	uint32_t            forkgen; /* act_forkgen at open */
	uint64_t            used; /* bit i: slot i has a thread (act_lock) */
	uint32_t            seq[SV_ACT_SLOTS]; /* slot seq between owners */
	dev_t               dev;
	ino_t               ino;
	sv_activity_region *next; /* act_open list */
};

_Static_assert(SV_ACT_SLOTS <= 64, "slot occupancy is one 64-bit word");

/* One region as seen by one thread. */
typedef struct act_tls {
	sv_activity_region *region; /* NULL: entry unused */
	uint64_t            serial;
	sv_act_slot        *slot;
	uint32_t            index;
	uint32_t            depth; /* scopes open, recorded or not */
	uint32_t            seq; /* this thread's copy of slot->seq */
	bool                recording; /* decided at the outermost enter */
} act_tls;

/* ---- process-wide state and fork handling ------------------------------
 */

static pthread_mutex_t     act_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint32_t    act_forkgen;
static pthread_once_t      act_once = PTHREAD_ONCE_INIT;
static pthread_key_t       act_key;
static bool                act_key_ok;
static sv_activity_region *act_open; /* act_lock */
static uint64_t            act_serial; /* act_lock */

static _Thread_local act_tls act_t[SV_ACTIVITY_MAX_REGIONS];

static void act_thread_exit(void *arg);

static void
act_atfork_prepare(void)
{
	(void) pthread_mutex_lock(&act_lock);
}

static void
act_atfork_parent(void)
{
	(void) pthread_mutex_unlock(&act_lock);
}

/* In the child only the forking thread exists, and it holds act_lock. */
static void
act_atfork_child(void)
{
	atomic_fetch_add_explicit(&act_forkgen, 1, memory_order_relaxed);
	(void) pthread_mutex_unlock(&act_lock);
}

static void
act_init(void)
{
	act_key_ok = pthread_key_create(&act_key, act_thread_exit) == 0;
	(void) pthread_atfork(
	    act_atfork_prepare, act_atfork_parent, act_atfork_child);
}

static uint32_t
act_gen(void)
{
	return atomic_load_explicit(&act_forkgen, memory_order_relaxed);
}

/* act_live returns the open region with this address and serial, or NULL
 * (closed). Called under act_lock. */
static sv_activity_region *
act_live(const sv_activity_region *r, uint64_t serial)
{
	for (sv_activity_region *o = act_open; o != NULL; o = o->next) {
		if (o == r && o->serial == serial) {
			return o;
		}
	}
	return NULL;
}

/* act_slot_empty publishes an empty stack in slot s (from sequence number
 * q, which must be even) and returns the new sequence number. */
static uint32_t
act_slot_empty(sv_act_slot *s, uint32_t q)
{
	atomic_store_explicit(&s->seq, q + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&s->depth, 0, memory_order_relaxed);
	atomic_store_explicit(&s->tid, 0, memory_order_relaxed);
	atomic_store_explicit(&s->seq, q + 2, memory_order_release);
	return q + 2;
}

/* ---- thread slots ------------------------------------------------------
 */

/* act_release gives back the slot of thread entry t. Under act_lock. */
static void
act_release(act_tls *t)
{
	sv_activity_region *r = act_live(t->region, t->serial);

	if (r != NULL && r->forkgen == act_gen()) {
		r->seq[t->index] = act_slot_empty(t->slot, t->seq);
		r->used &= ~(UINT64_C(1) << t->index);
	}
	memset(t, 0, sizeof(*t));
}

/* act_thread_exit: the pthread key destructor, run in the exiting thread.
 */
static void
act_thread_exit(void *arg)
{
	(void) arg;
	(void) pthread_mutex_lock(&act_lock);
	for (unsigned i = 0; i < SV_ACTIVITY_MAX_REGIONS; i++) {
		if (act_t[i].region != NULL) {
			act_release(&act_t[i]);
		}
	}
	(void) pthread_mutex_unlock(&act_lock);
}

/* act_find returns the calling thread's entry for r, or NULL. */
static inline act_tls *
act_find(const sv_activity_region *r)
{
	for (unsigned i = 0; i < SV_ACTIVITY_MAX_REGIONS; i++) {
		if (act_t[i].region == r && act_t[i].serial == r->serial) {
			return &act_t[i];
		}
	}
	return NULL;
}

/* act_attach claims a slot of r for the calling thread (the cold path). */
static sv_err
act_attach(sv_activity_region *r, act_tls **tp)
{
	act_tls *t = NULL;
	unsigned idx;
	sv_err   rv = SV_OK;

	(void) pthread_mutex_lock(&act_lock);
	if (r->forkgen != act_gen()) {
		rv = SV_EPERM;
		goto out;
	}
	/* An entry is free when unused or when its region was closed. */
	for (unsigned i = 0; i < SV_ACTIVITY_MAX_REGIONS && t == NULL; i++) {
		if (act_t[i].region == NULL
		    || act_live(act_t[i].region, act_t[i].serial) == NULL) {
			memset(&act_t[i], 0, sizeof(act_t[i]));
			t = &act_t[i];
		}
	}
	if (t == NULL || r->used == UINT64_MAX) {
		rv = SV_EEXHAUSTED;
		goto out;
	}
	for (idx = 0; idx < SV_ACT_SLOTS; idx++) {
		if ((r->used & (UINT64_C(1) << idx)) == 0) {
			break;
		}
	}
	if (idx >= SV_ACT_SLOTS) {
		rv = SV_EEXHAUSTED;
		goto out;
	}
	if (act_key_ok) {
		/* Any non-NULL value: it only makes the destructor run. */
		(void) pthread_setspecific(act_key, act_t);
	}
	r->used |= UINT64_C(1) << idx;
	t->region = r;
	t->serial = r->serial;
	t->slot   = &r->map->slot[idx];
	t->index  = idx;
	t->depth  = 0;
	t->seq    = r->seq[idx];
	atomic_store_explicit(
	    &t->slot->tid, (uint32_t) gettid(), memory_order_relaxed);
	*tp = t;
out:
	(void) pthread_mutex_unlock(&act_lock);
	return rv;
}

/* ---- open and close ----------------------------------------------------
 */

/* act_init_map writes a fresh header and empty slots. */
static void
act_init_map(sv_act_region_map *m, const struct timespec *ts)
{
	sv_act_header *h = &m->hdr;

	/* Readers take the region for garbage until the magic is back. */
	atomic_store_explicit(&h->magic, 0, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	for (unsigned i = 0; i < SV_ACT_SLOTS; i++) {
		sv_act_slot *s = &m->slot[i];
		atomic_store_explicit(&s->seq, 0, memory_order_relaxed);
		atomic_store_explicit(&s->depth, 0, memory_order_relaxed);
		atomic_store_explicit(&s->tid, 0, memory_order_relaxed);
		atomic_store_explicit(&s->reserved, 0, memory_order_relaxed);
		for (unsigned e = 0; e < SV_ACT_LEVELS; e++) {
			atomic_store_explicit(
			    &s->entry[e].start_ns, 0, memory_order_relaxed);
			for (unsigned w = 0; w < SV_ACT_NAME_WORDS; w++) {
				atomic_store_explicit(&s->entry[e].name[w], 0,
				    memory_order_relaxed);
			}
		}
		for (unsigned w = 0; w < 6; w++) {
			atomic_store_explicit(
			    &s->pad[w], 0, memory_order_relaxed);
		}
	}
	atomic_store_explicit(
	    &h->version, SV_ACT_VERSION, memory_order_relaxed);
	atomic_store_explicit(
	    &h->header_size, SV_ACT_HEADER_SIZE, memory_order_relaxed);
	atomic_store_explicit(&h->slots, SV_ACT_SLOTS, memory_order_relaxed);
	atomic_store_explicit(&h->levels, SV_ACT_LEVELS, memory_order_relaxed);
	atomic_store_explicit(
	    &h->name_size, SV_ACT_NAME_SIZE, memory_order_relaxed);
	atomic_store_explicit(&h->reserved0, 0, memory_order_relaxed);
	atomic_store_explicit(
	    &h->slot_size, SV_ACT_SLOT_SIZE, memory_order_relaxed);
	atomic_store_explicit(&h->flags, 0, memory_order_relaxed);
	atomic_store_explicit(
	    &h->pid, (uint32_t) getpid(), memory_order_relaxed);
	atomic_store_explicit(&h->reserved1, 0, memory_order_relaxed);
	atomic_store_explicit(&h->open_ns,
	    (uint64_t) ts->tv_sec * 1000000000u + (uint64_t) ts->tv_nsec,
	    memory_order_relaxed);
	for (unsigned w = 0; w < 3; w++) {
		atomic_store_explicit(
		    &h->reserved2[w], 0, memory_order_relaxed);
	}
	atomic_store_explicit(&h->magic, SV_ACT_MAGIC, memory_order_release);
}

/* act_errno maps an errno of open/ftruncate/mmap to an sv_err. */
static sv_err
act_errno(int e)
{
	switch (e) {
	case ENOENT:
		return SV_ENOTFOUND;
	case EACCES:
	case EPERM:
	case EROFS:
		return SV_EPERM;
	case ENOMEM:
		return SV_ENOMEM;
	case EISDIR:
	case EINVAL:
		return SV_EINVAL;
	default:
		return SV_ESYSTEM;
	}
}

/*
 * sv_activity_region_open_fd: see activity.h. The mapping survives the
 * descriptor, which stays the caller's.
 */
sv_err
sv_activity_region_open_fd(sv_activity_region **regionp, int fd)
{
	struct stat         st;
	struct timespec     ts;
	sv_activity_region *r;
	void               *p;
	sv_err              rv = SV_OK;

	if (regionp == NULL || fd < 0) {
		return SV_EINVAL;
	}
	(void) pthread_once(&act_once, act_init);
	if (fstat(fd, &st) != 0) {
		return act_errno(errno);
	}
	if (!S_ISREG(st.st_mode)) {
		return SV_EINVAL;
	}
	if (st.st_size < (off_t) SV_ACT_REGION_SIZE) {
		int n;
		while ((n = ftruncate(fd, (off_t) SV_ACT_REGION_SIZE)) != 0
		    && errno == EINTR) {
		}
		if (n != 0) {
			return act_errno(errno);
		}
	}
	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) {
		return SV_ESYSTEM;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		return SV_ENOMEM;
	}
	p = mmap(NULL, SV_ACT_REGION_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
	    fd, 0);
	if (p == MAP_FAILED) {
		rv = act_errno(errno);
		free(r);
		return rv;
	}
	r->map = p;
	r->dev = st.st_dev;
	r->ino = st.st_ino;

	(void) pthread_mutex_lock(&act_lock);
	for (const sv_activity_region *o = act_open; o != NULL; o = o->next) {
		if (o->forkgen == act_gen() && o->dev == r->dev
		    && o->ino == r->ino) {
			rv = SV_EBUSY; /* this process has it open already */
			break;
		}
	}
	if (rv == SV_OK) {
		r->forkgen = act_gen();
		r->serial  = ++act_serial;
		act_init_map(r->map, &ts);
		r->next  = act_open;
		act_open = r;
	}
	(void) pthread_mutex_unlock(&act_lock);
	if (rv != SV_OK) {
		(void) munmap(p, SV_ACT_REGION_SIZE);
		free(r);
		return rv;
	}
	*regionp = r;
	return SV_OK;
}

/*
 * sv_activity_region_open: see activity.h. The file is opened only for the
 * duration of the call.
 */
sv_err
sv_activity_region_open(sv_activity_region **regionp, const char *path)
{
	int    fd;
	sv_err rv;

	if (regionp == NULL || path == NULL || path[0] == '\0') {
		return SV_EINVAL;
	}
	while ((fd = open(path, O_RDWR | O_CLOEXEC)) < 0 && errno == EINTR) {
	}
	if (fd < 0) {
		return act_errno(errno);
	}
	rv = sv_activity_region_open_fd(regionp, fd);
	(void) close(fd);
	return rv;
}

/*
 * sv_activity_region_close: see activity.h. Thread entries that still name
 * the region become stale: act_live no longer finds it.
 */
void
sv_activity_region_close(sv_activity_region *region)
{
	sv_activity_region **pp;

	if (region == NULL) {
		return;
	}
	(void) pthread_mutex_lock(&act_lock);
	for (pp = &act_open; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == region) {
			*pp = region->next;
			break;
		}
	}
	if (region->forkgen == act_gen()) {
		for (unsigned i = 0; i < SV_ACT_SLOTS; i++) {
			sv_act_slot *s = &region->map->slot[i];
			uint32_t     q = atomic_load_explicit(
			        &s->seq, memory_order_relaxed);
			(void) act_slot_empty(s, (q + 1u) & ~1u);
		}
	}
	(void) pthread_mutex_unlock(&act_lock);
	(void) munmap(region->map, SV_ACT_REGION_SIZE);
	free(region);
}

/* ---- enter, leave, depth, disable ------------------------------------
 */

/* act_name_words copies name, cut to SV_ACTIVITY_NAME_MAX bytes at a
 * UTF-8 character boundary, into zero-padded words. */
static inline void
act_name_words(const char *name, uint64_t w[SV_ACT_NAME_WORDS])
{
	union {
		char     c[SV_ACT_NAME_SIZE];
		uint64_t w[SV_ACT_NAME_WORDS];
	} u;
	size_t n = strnlen(name, SV_ACTIVITY_NAME_MAX + 1);

	memset(&u, 0, sizeof(u));
	if (n > SV_ACTIVITY_NAME_MAX) {
		n = SV_ACTIVITY_NAME_MAX;
		/* name[n] is the first byte dropped. When it continues a
		 * character, drop that character's other bytes too. */
		if (((unsigned char) name[n] & 0xc0) == 0x80) {
			size_t k = n;
			for (int i = 0; i < 3 && k > 0
			     && ((unsigned char) name[k - 1] & 0xc0) == 0x80;
			     i++) {
				k--;
			}
			if (k > 0
			    && ((unsigned char) name[k - 1] & 0xc0) == 0xc0) {
				n = k - 1;
			}
		}
	}
	memcpy(u.c, name, n);
	memcpy(w, u.w, sizeof(u.w));
}

/*
 * sv_activity_enter: see activity.h. The seqlock write is described at the
 * top of this file; entries past SV_ACT_LEVELS are counted in depth only.
 */
sv_err
sv_activity_enter(sv_activity_region *region, const char *name)
{
	act_tls *t;
	uint32_t d;

	if (region == NULL || name == NULL || name[0] == '\0') {
		return SV_EINVAL;
	}
	if (region->forkgen != act_gen()) {
		return SV_EPERM;
	}
	if ((t = act_find(region)) == NULL) {
		sv_err rv = act_attach(region, &t);
		if (rv != SV_OK) {
			return rv;
		}
	}
	d = t->depth;
	if (d >= SV_ACTIVITY_MAX_DEPTH) {
		return SV_ETOOLARGE;
	}
	if (d == 0) {
		t->recording = (atomic_load_explicit(&region->map->hdr.flags,
		                    memory_order_relaxed)
		                   & SV_ACT_FLAG_DISABLED)
		    == 0;
	}
	if (t->recording) {
		struct timespec ts;
		uint64_t        w[SV_ACT_NAME_WORDS];
		sv_act_slot    *s = t->slot;
		uint32_t        q = t->seq;

		if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) {
			return SV_ESYSTEM;
		}
		act_name_words(name, w);
		atomic_store_explicit(&s->seq, q + 1, memory_order_relaxed);
		atomic_thread_fence(memory_order_release);
		if (d < SV_ACT_LEVELS) {
			sv_act_entry *e = &s->entry[d];
			atomic_store_explicit(&e->start_ns,
			    (uint64_t) ts.tv_sec * 1000000000u
			        + (uint64_t) ts.tv_nsec,
			    memory_order_relaxed);
			for (unsigned i = 0; i < SV_ACT_NAME_WORDS; i++) {
				atomic_store_explicit(
				    &e->name[i], w[i], memory_order_relaxed);
			}
		}
		atomic_store_explicit(&s->depth, d + 1, memory_order_relaxed);
		atomic_store_explicit(&s->seq, q + 2, memory_order_release);
		t->seq = q + 2;
	}
	t->depth = d + 1;
	return SV_OK;
}

/* sv_activity_leave: see activity.h. */
sv_err
sv_activity_leave(sv_activity_region *region)
{
	act_tls *t;
	uint32_t d;

	if (region == NULL) {
		return SV_EINVAL;
	}
	if (region->forkgen != act_gen()) {
		return SV_EPERM;
	}
	if ((t = act_find(region)) == NULL || t->depth == 0) {
		return SV_EINVAL;
	}
	d        = t->depth - 1;
	t->depth = d;
	if (t->recording) {
		sv_act_slot *s = t->slot;
		uint32_t     q = t->seq;

		atomic_store_explicit(&s->seq, q + 1, memory_order_relaxed);
		atomic_thread_fence(memory_order_release);
		atomic_store_explicit(&s->depth, d, memory_order_relaxed);
		atomic_store_explicit(&s->seq, q + 2, memory_order_release);
		t->seq = q + 2;
	}
	return SV_OK;
}

/* sv_activity_depth: see activity.h. */
sv_err
sv_activity_depth(sv_activity_region *region, uint32_t *depthp)
{
	const act_tls *t;

	if (region == NULL || depthp == NULL) {
		return SV_EINVAL;
	}
	if (region->forkgen != act_gen()) {
		return SV_EPERM;
	}
	t       = act_find(region);
	*depthp = t == NULL ? 0 : t->depth;
	return SV_OK;
}

/* sv_activity_disable: see activity.h. */
sv_err
sv_activity_disable(sv_activity_region *region, int disabled)
{
	if (region == NULL) {
		return SV_EINVAL;
	}
	if (region->forkgen != act_gen()) {
		return SV_EPERM;
	}
	if (disabled) {
		atomic_fetch_or_explicit(&region->map->hdr.flags,
		    SV_ACT_FLAG_DISABLED, memory_order_relaxed);
	} else {
		atomic_fetch_and_explicit(&region->map->hdr.flags,
		    ~SV_ACT_FLAG_DISABLED, memory_order_relaxed);
	}
	return SV_OK;
}
