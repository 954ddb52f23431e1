/*
 * decimal.h — the one parser of an unsigned decimal field given by pointer
 * and length (no terminator, no sign, no spaces, no leading '+'), as the
 * journal's records and /proc/PID/stat hold them. Pure: no locale, no
 * errno, no allocation; shared by the core (journal_codec.c) and the shell
 * (procstat.c), so it is a static inline function in this header.
 */
#ifndef SV_DECIMAL_H
#define SV_DECIMAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* sv_decimal_u64 parses field f (n bytes, 1 to 20 digits) as a decimal
 * number no larger than max. Returns true and sets *vp on success; false,
 * leaving *vp alone, on an empty field, a non-digit, an overflow of 64
 * bits or a value above max. */
static inline bool
sv_decimal_u64(const char *f, size_t n, uint64_t max, uint64_t *vp)
{
	uint64_t v = 0;

	if (n == 0 || n > 20) {
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned d;
		if (f[i] < '0' || f[i] > '9') {
			return false;
		}
		d = (unsigned) (f[i] - '0');
		if (v > (UINT64_MAX - d) / 10) {
			return false;
		}
		v = v * 10 + d;
	}
	if (v > max) {
		return false;
	}
	*vp = v;
	return true;
}

#endif
