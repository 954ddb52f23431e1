/*
 * activity.h — report what a worker is doing, cheaply enough for hot paths.
 *
 * Model (docs/activity.md). An activity is a named scope: a thread enters
 * it with sv_activity_enter() and leaves it with sv_activity_leave(). Each
 * thread has its own stack of scopes. What a busy thread is doing is its
 * innermost scope, named after the nearest enclosing one: inside "request"
 * the scope "db query" reads "request: db query". Only the nearest
 * enclosing name is kept (the innermost name wins, there is no unbounded
 * chain), and scopes entered one after the other under one outer scope
 * (fan-out) all share its name. A scoped form in a binding must leave on
 * every exit, exceptions included, so that a failure never leaves a stale
 * name (the bindings have no such form yet).
 *
 * Mechanism. The scopes are written into an activity region: a small file
 * that the supervisor owns and hands to the worker as the resource of a
 * lease (docs/leases.md). The worker maps it and writes; the supervisor
 * reads it. Each thread writes only its own slot of the region, under a
 * per-slot sequence counter, so a reader never takes a torn entry and a
 * writer never waits. enter and leave make no system call and take no lock
 * once the thread has its slot: they read the monotonic clock through the
 * vDSO and do a few atomic stores. The first call of a thread on a region
 * claims a slot (a lock and one gettid()); the slot is given back when the
 * thread exits.
 *
 * Bounds. At most SV_ACTIVITY_MAX_THREADS threads of one process hold a
 * slot of one region at a time; a further thread gets SV_EEXHAUSTED.
 * Scopes nest up to SV_ACTIVITY_MAX_DEPTH levels per thread; the first
 * SV_ACTIVITY_MAX_NAMED levels are recorded with their names, deeper ones
 * only counted. A name is 1 to SV_ACTIVITY_NAME_MAX bytes; a longer one is
 * cut at that length (at a UTF-8 character boundary). A thread uses at most
 * SV_ACTIVITY_MAX_REGIONS regions at a time.
 *
 * fork(). A region belongs to the process that opened it, because it is
 * that process's lease. In a child created by fork() every enter, leave and
 * disable on a region opened before the fork returns SV_EPERM and writes
 * nothing: the parent's slots are never touched. The child takes its own
 * lease and opens its own region; sv_activity_region_close() on the
 * inherited handle only unmaps the child's copy. Detection costs no system
 * call: a pthread_atfork() child handler bumps a counter that every call
 * compares with the one the region recorded at open.
 *
 * Threads. A region handle may be shared by every thread of its process;
 * enter and leave act on the calling thread's own stack. Closing a region
 * while another thread is inside enter or leave on it is undefined, as for
 * any handle.
 *
 * Where the region comes from: with `activity = true` (a group's default)
 * supervised creates one region file per worker generation and passes its
 * path in SUPERVISE_ACTIVITY; it reads the region into WorkerStatus
 * (supervisectl status, docs/activity.md). With `activity = false` the
 * variable is unset and a worker may still open a file it was given.
 */
#ifndef SUPERVISE_ACTIVITY_H
#define SUPERVISE_ACTIVITY_H

#include <stdint.h>

#include "supervise/supervise.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Threads of one process with a slot in one region at a time. */
#define SV_ACTIVITY_MAX_THREADS 64u
/* Nesting levels recorded with their name, per thread. */
#define SV_ACTIVITY_MAX_NAMED 16u
/* Nesting levels counted per thread; a deeper enter is SV_ETOOLARGE. */
#define SV_ACTIVITY_MAX_DEPTH 1024u
/* Longest name in bytes, terminator excluded; longer names are cut. */
#define SV_ACTIVITY_NAME_MAX 47u
/* Regions one thread may use at a time. */
#define SV_ACTIVITY_MAX_REGIONS 4u
/* Size in bytes of a version 1 region file (docs/activity.md). */
#define SV_ACTIVITY_REGION_SIZE 61504u

typedef struct sv_activity_region sv_activity_region;

/*
 * sv_activity_region_open maps the activity region file at path, which
 * must exist and be a regular file (the resource path of a lease). A file
 * shorter than SV_ACTIVITY_REGION_SIZE is extended to that size. The
 * region is then initialised: header written, every slot emptied, the
 * disabled flag cleared. So one process opens a region once; opening it
 * again resets it. On SV_OK *regionp is a new handle, freed with
 * sv_activity_region_close(); the file descriptor is not kept.
 * Errors: SV_EINVAL (NULL argument, not a regular file), SV_ENOTFOUND (no
 * such file), SV_EPERM (not writable by the caller), SV_EBUSY (this
 * process has the file open as a region already), SV_ENOMEM, SV_ESYSTEM
 * (open, fstat, ftruncate or mmap failed otherwise).
 */
SV_API sv_err sv_activity_region_open(
    sv_activity_region **regionp, const char *path);

/*
 * sv_activity_region_open_fd is sv_activity_region_open on an open file
 * descriptor (a file or a memfd, opened for reading and writing). The
 * descriptor stays the caller's: it is used during the call only and may be
 * closed afterwards. Errors as sv_activity_region_open, SV_EINVAL for a
 * negative fd.
 */
SV_API sv_err sv_activity_region_open_fd(sv_activity_region **regionp, int fd);

/*
 * sv_activity_region_close empties the slots of the region (every thread's
 * stack: the process is done with it), unmaps it and frees the handle. In
 * a child after fork() it only unmaps and frees (nothing is written). NULL
 * is ignored. No thread may be inside a call on the region meanwhile.
 */
SV_API void sv_activity_region_close(sv_activity_region *region);

/*
 * sv_activity_enter pushes the scope name onto the calling thread's stack
 * in region and records it with the current CLOCK_MONOTONIC time. name is
 * copied (cut to SV_ACTIVITY_NAME_MAX bytes); the caller keeps it. Every
 * successful enter is matched by one sv_activity_leave() on the same
 * thread; after an error nothing was entered and no leave is due.
 * While the region is disabled (sv_activity_disable) a new outermost scope,
 * and everything nested in it, is counted but not recorded.
 * Errors: SV_EINVAL (NULL region or name, empty name), SV_EPERM (the region
 * was opened by the parent of this forked process), SV_EEXHAUSTED (no free
 * slot, or the thread already uses SV_ACTIVITY_MAX_REGIONS regions),
 * SV_ETOOLARGE (SV_ACTIVITY_MAX_DEPTH scopes already open), SV_ESYSTEM (the
 * clock could not be read).
 */
SV_API sv_err sv_activity_enter(sv_activity_region *region, const char *name);

/*
 * sv_activity_leave pops the calling thread's innermost scope in region.
 * Errors: SV_EINVAL (NULL region, or no scope open on this thread),
 * SV_EPERM (a region of the parent process, after fork()).
 */
SV_API sv_err sv_activity_leave(sv_activity_region *region);

/*
 * sv_activity_depth sets *depthp to the number of scopes the calling
 * thread has open in region (recorded or not). Errors: SV_EINVAL (NULL
 * argument), SV_EPERM (a region of the parent process, after fork()).
 */
SV_API sv_err sv_activity_depth(sv_activity_region *region, uint32_t *depthp);

/*
 * sv_activity_disable turns recording off (disabled != 0) or on again
 * (disabled == 0). The flag lives in the region's header, so a reader
 * shows nothing while it is set. It takes effect at each thread's next
 * outermost enter: a stack already open keeps being recorded until it is
 * empty, and a stack opened while disabled is only counted, even if
 * recording is turned on before it closes. A disabled enter + leave touches
 * only thread-local memory. Errors: SV_EINVAL (NULL region), SV_EPERM (a
 * region of the parent process, after fork()).
 */
SV_API sv_err sv_activity_disable(sv_activity_region *region, int disabled);

#ifdef __cplusplus
}
#endif

#endif /* SUPERVISE_ACTIVITY_H */
