/*
 * activity_view.h — what the supervisor shows of one worker's activity
 * region (pure reader; layout in core/activity_format.h, model in
 * docs/activity.md).
 *
 * Given the bytes of a region (normally the supervisor's read-only mapping
 * of the file it handed out as a lease resource) and the current
 * CLOCK_MONOTONIC time, sv_activity_view_read computes:
 *
 *   activities   in-flight activities: threads with at least one open
 *                scope. What a busy thread is doing is its innermost
 *                recorded scope, so each busy thread is one activity.
 *   scopes       open scopes over all threads (the sum of the depths).
 *   oldest       the in-flight activity entered first: its composed name
 *                ("outer: inner", where outer is the nearest enclosing
 *                scope, or just "inner" at the outermost level) and age.
 *   nothing      when no scope is open (IDLE), when the region is disabled
 *                (DISABLED), or when it is not a valid region (INVALID).
 *
 * The writer is another process and may be buggy or hostile, so the bytes
 * are never trusted: every field is bounds-checked, lengths are never used
 * to index anything beyond the fixed layout, names are cut at their
 * fixed size and made printable (control bytes and invalid UTF-8 become
 * '?'), and a slot that changes during every one of SV_ACT_VIEW_TRIES
 * attempts, or holds an impossible depth, is skipped and counted in
 * `unreadable` instead of being waited for. Reads of a live mapping use
 * the same atomics as the writer, so a concurrent writer is never a data
 * race. The module performs no I/O, reads no clock and allocates nothing.
 */
#ifndef SV_CORE_ACTIVITY_VIEW_H
#define SV_CORE_ACTIVITY_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "supervise/supervise.h"

/* Attempts to take a consistent copy of one slot. */
#define SV_ACT_VIEW_TRIES 64u
/* Room for "outer: inner" and the terminator. */
#define SV_ACT_VIEW_NAME_LEN (2u * 47u + 2u + 1u)

typedef enum sv_activity_state {
	SV_ACTIVITY_IDLE     = 0, /* valid region, no scope open */
	SV_ACTIVITY_BUSY     = 1, /* at least one scope open */
	SV_ACTIVITY_DISABLED = 2, /* the header's disabled flag is set */
	SV_ACTIVITY_INVALID  = 3, /* too short, misaligned, or not version 1 */
} sv_activity_state;

typedef struct sv_activity_view {
	sv_activity_state state;
	uint32_t          activities; /* threads with a scope open */
	uint32_t          scopes; /* open scopes, all threads */
	uint32_t          threads; /* slots owned by a thread */
	uint32_t          unreadable; /* slots skipped (torn or impossible) */
	uint32_t          pid; /* the writer's pid as it wrote it (a claim) */
	uint32_t          oldest_depth; /* depth of the oldest's thread */
	uint64_t          oldest_age_ns; /* 0 unless BUSY */
	char oldest_name[SV_ACT_VIEW_NAME_LEN]; /* "" unless BUSY */
} sv_activity_view;

/*
 * sv_activity_view_read fills *out from the len bytes at bytes (a region
 * as laid out in core/activity_format.h; bytes must be 8-byte aligned, as
 * a mapping is, or the region counts as INVALID) at time now_ns
 * (CLOCK_MONOTONIC, nanoseconds). Ages of entries stamped after now_ns are
 * 0. Every outcome about the region's content is a state in *out, not an
 * error. Errors: SV_EINVAL (out is NULL, or bytes is NULL while len > 0).
 */
sv_err sv_activity_view_read(
    const void *bytes, size_t len, uint64_t now_ns, sv_activity_view *out);

/*
 * sv_activity_view_format writes the one-line summary the supervisor shows
 * into buf (size bytes, always terminated when size > 0): "" unless the
 * view is BUSY, else "N NAME AGE" as in "2 request: db query 1.5s" (ages
 * under a second in ms, up to 99 s with one decimal, then whole seconds).
 * The text is cut to fit. Returns the length written.
 */
size_t sv_activity_view_format(
    const sv_activity_view *view, char *buf, size_t size);

#endif /* SV_CORE_ACTIVITY_VIEW_H */
