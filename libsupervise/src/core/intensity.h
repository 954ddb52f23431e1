/*
 * intensity.h — restart intensity: at most max restarts within a sliding
 * window of window_ms (pure decision core, OTP's MaxR/MaxT).
 *
 * The record of one restart keeps the timestamps of the restarts still in
 * the window in a ring of max entries. A restart that would make max + 1
 * within the window is refused (exceeded) and not recorded: the caller then
 * gives up on the group. max = 0 means unlimited.
 */
#ifndef SV_CORE_INTENSITY_H
#define SV_CORE_INTENSITY_H

#include <stdbool.h>
#include <stdint.h>

#include "supervise/supervise.h"

/* Bound of max, so that the ring stays small. */
#define SV_INTENSITY_MAX 10000u

typedef struct sv_intensity {
	uint32_t  max;
	uint64_t  window_ms;
	uint64_t *at; /* [max] ring of restart times */
	uint32_t  head; /* oldest entry */
	uint32_t  n; /* entries in the window */
} sv_intensity;

/*
 * sv_intensity_init prepares i for max restarts per window_ms. The ring is
 * allocated here; free it with sv_intensity_fini.
 * Errors: SV_EINVAL (max above SV_INTENSITY_MAX, or max > 0 with a zero
 * window), SV_ENOMEM.
 */
sv_err sv_intensity_init(sv_intensity *i, uint32_t max, uint64_t window_ms);

/* sv_intensity_fini frees the ring. Idempotent. */
void sv_intensity_fini(sv_intensity *i);

/*
 * sv_intensity_record records a restart at now_ms and returns false, or
 * returns true (exceeded, nothing recorded) when max restarts already lie
 * within (now_ms - window_ms, now_ms]. Times must not go backwards.
 */
bool sv_intensity_record(sv_intensity *i, uint64_t now_ms);

/* sv_intensity_count returns the restarts within the window at now_ms. */
uint32_t sv_intensity_count(sv_intensity *i, uint64_t now_ms);

/* sv_intensity_reset forgets every recorded restart. */
void sv_intensity_reset(sv_intensity *i);

#endif /* SV_CORE_INTENSITY_H */
