/*
 * fuzz_notify.c — libFuzzer harness for the notify datagram parser,
 * svd_notify_parse (daemon/notify.c).
 *
 * The input is one datagram. Properties checked (daemon/notify.h):
 *   - SV_OK or SV_EBADREQ, nothing else; SV_EBADREQ carries a reason and
 *     leaves every field clear; a datagram over SVD_NOTIFY_MAX_DGRAM bytes
 *     or with a NUL byte is always refused;
 *   - pid and uid stay 0 (only the kernel's credentials set them);
 *   - a flag is set only if its exact assignment occurs in the datagram
 *     (READY=1, STOPPING=1, WATCHDOG=1), STATUS and EXTEND_TIMEOUT_USEC
 *     only if their key occurs; EXTEND_TIMEOUT_USEC is capped;
 *   - STATUS text is NUL-terminated within SVD_NOTIFY_STATUS_MAX bytes and
 *     is valid UTF-8 without C0, DEL or C1 control characters.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_util.h"
#include "notify.h"

/* seq_len returns the length of the UTF-8 sequence at s (n bytes left) if
 * it is a valid, shortest-form encoding of a scalar value, else 0. */
static size_t
seq_len(const unsigned char *s, size_t n)
{
	uint32_t cp;
	size_t   len;

	if (s[0] < 0x80) {
		return 1;
	} else if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp  = s[0] & 0x1fu;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		cp  = s[0] & 0x0fu;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp  = s[0] & 0x07u;
	} else {
		return 0;
	}
	if (n < len) {
		return 0;
	}
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80) {
			return 0;
		}
		cp = (cp << 6) | (s[i] & 0x3fu);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000)
	    || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
		return 0;
	}
	return len;
}

/* clean_text tells whether s is valid UTF-8 without control characters. */
static bool
clean_text(const char *str)
{
	const unsigned char *s = (const unsigned char *) str;
	size_t               n = strlen(str), i = 0;

	while (i < n) {
		size_t len = seq_len(s + i, n - i);
		if (len == 0) {
			return false;
		}
		if (len == 1 && (s[i] < 0x20 || s[i] == 0x7f)) {
			return false;
		}
		if (len == 2 && s[i] == 0xc2 && s[i + 1] < 0xa0) {
			return false; /* C1 control */
		}
		i += len;
	}
	return true;
}

/* has tells whether the datagram contains the text lit. */
static bool
has(const uint8_t *data, size_t size, const char *lit)
{
	return memmem(data, size, lit, strlen(lit)) != NULL;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	svd_notify_msg m;
	sv_err         err;

	memset(&m, 0xa5, sizeof(m)); /* the parser must clear it */
	err = svd_notify_parse((const char *) data, size, &m);
	FUZZ_CHECK(err == SV_OK || err == SV_EBADREQ, "documented result");
	FUZZ_CHECK(m.pid == 0 && m.uid == 0, "pid and uid never parsed");
	if (size > SVD_NOTIFY_MAX_DGRAM
	    || (size > 0 && memchr(data, '\0', size) != NULL)) {
		FUZZ_CHECK(err == SV_EBADREQ, "oversize or NUL: refused");
	}
	if (err == SV_EBADREQ) {
		FUZZ_CHECK(m.why != NULL && m.why[0] != '\0', "a reason");
		FUZZ_CHECK(!m.ready && !m.stopping && !m.watchdog
		        && !m.has_status && !m.has_extend && m.extend_usec == 0
		        && m.status[0] == '\0',
		    "a refused datagram sets nothing");
		return 0;
	}
	FUZZ_CHECK(m.why == NULL, "no reason on success");
	FUZZ_CHECK(!m.ready || has(data, size, "READY=1"), "READY=1 sent");
	FUZZ_CHECK(
	    !m.stopping || has(data, size, "STOPPING=1"), "STOPPING=1 sent");
	FUZZ_CHECK(
	    !m.watchdog || has(data, size, "WATCHDOG=1"), "WATCHDOG=1 sent");
	FUZZ_CHECK(!m.has_status || has(data, size, "STATUS="), "STATUS sent");
	FUZZ_CHECK(!m.has_extend || has(data, size, "EXTEND_TIMEOUT_USEC="),
	    "EXTEND_TIMEOUT_USEC sent");
	FUZZ_CHECK(m.has_extend || m.extend_usec == 0, "no stray extension");
	FUZZ_CHECK(
	    m.extend_usec <= SVD_NOTIFY_EXTEND_MAX_USEC, "extension capped");
	FUZZ_CHECK(memchr(m.status, '\0', sizeof(m.status)) != NULL,
	    "status NUL-terminated in its buffer");
	FUZZ_CHECK(m.has_status || m.status[0] == '\0', "no stray status");
	FUZZ_CHECK(clean_text(m.status), "status is clean UTF-8");
	return 0;
}
