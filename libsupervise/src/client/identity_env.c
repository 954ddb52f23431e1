/*
 * identity_env.c — the identity a worker reads from its environment.
 *
 * Design: one contract for "which worker am I" with no round trip, shared
 * by the C library and every binding (Python, Ruby and Lua call this
 * function instead of parsing the variables themselves). supervised sets
 * five variables in every worker it spawns (daemon/supervisor.c):
 * SUPERVISE_GROUP, SUPERVISE_ORDINAL, SUPERVISE_GENERATION,
 * SUPERVISE_PURPOSE and SUPERVISE_SUPERVISOR_ID (plus SUPERVISE_URL, which
 * names the socket, not the worker, and is not read here). The function is
 * pure over the variables it is given: it reads either a caller's envp
 * array or the process environment, and writes only caller memory (an
 * sv_whoami_result), so there is nothing to free and nothing is guessed:
 * an absent variable is SV_ENOTWORKER, a malformed one SV_EINVAL, with the
 * reason in the result's text.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervise/client.h"

/* Bounds of the protocol (docs/protocol.md): names and free text. */
#define IE_MAX_NAME 64
#define IE_MAX_TEXT 1024

/*
 * ie_get returns the value of variable name in envp ("NAME=value"
 * strings, NULL-terminated), or in the process environment when envp is
 * NULL; NULL when it is not set. The string is envp's (or the
 * environment's): nothing to free.
 */
static const char *
ie_get(const char *const *envp, const char *name)
{
	size_t n = strlen(name);

	if (envp == NULL)
		return getenv(name);
	for (size_t i = 0; envp[i] != NULL; i++) {
		if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=')
			return envp[i] + n + 1;
	}
	return NULL;
}

/*
 * ie_fail zeroes *out except its size, writes the printf-style reason into
 * out->text, and returns err.
 */
static sv_err
ie_fail(sv_whoami_result *out, sv_err err, const char *fmt, ...)
{
	size_t  size = out->size;
	va_list ap;

	memset(out, 0, sizeof(*out));
	out->size = size;
	va_start(ap, fmt);
	vsnprintf(out->text, sizeof(out->text), fmt, ap);
	va_end(ap);
	out->text_used = (uint32_t) strlen(out->text) + 1;
	return err;
}

/*
 * ie_uint parses s as plain decimal digits (no sign, no space, at most 20)
 * into *v, refusing values above max. Returns 0, or -1 when malformed.
 */
static int
ie_uint(const char *s, uint64_t max, uint64_t *v)
{
	uint64_t x = 0;
	size_t   n = strlen(s);

	if (n == 0 || n > 20)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned) (s[i] - '0');

		if (s[i] < '0' || s[i] > '9' || x > (UINT64_MAX - d) / 10)
			return -1;
		x = x * 10 + d;
	}
	if (x > max)
		return -1;
	*v = x;
	return 0;
}

/* ie_name_ok says whether s is 1..64 characters of [A-Za-z0-9_.-]. */
static int
ie_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > IE_MAX_NAME)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		        || (c >= '0' && c <= '9') || c == '_' || c == '.'
		        || c == '-'))
			return 0;
	}
	return 1;
}

/*
 * ie_copy appends s (NUL included) to out->text and returns where it
 * landed; the caller has checked that everything fits.
 */
static const char *
ie_copy(sv_whoami_result *out, const char *s)
{
	char  *at = out->text + out->text_used;
	size_t n  = strlen(s) + 1;

	memcpy(at, s, n);
	out->text_used += (uint32_t) n;
	return at;
}

/*
 * sv_identity_from_env: see client.h for the contract. Checks every
 * variable before it writes a field, so a failure leaves only the reason.
 */
sv_err
sv_identity_from_env(const char *const *envp, sv_whoami_result *out)
{
	static const char *const required[]
	    = {"SUPERVISE_GROUP", "SUPERVISE_ORDINAL", "SUPERVISE_GENERATION",
	        "SUPERVISE_SUPERVISOR_ID", "SUPERVISE_PURPOSE"};
	const char *v[5];
	uint64_t    ordinal, generation;
	size_t      size;

	if (out == NULL || out->size < sizeof(*out))
		return SV_EINVAL;
	for (size_t i = 0; i < 5; i++) {
		v[i] = ie_get(envp, required[i]);
		/* PURPOSE may be empty (a group without one); the others
		 * never are when supervised set them. */
		if (v[i] == NULL || (i < 4 && v[i][0] == '\0'))
			return ie_fail(out, SV_ENOTWORKER,
			    "$%s is not set: this process was not started by "
			    "a supervisor",
			    required[i]);
	}
	if (!ie_name_ok(v[0]))
		return ie_fail(out, SV_EINVAL,
		    "$SUPERVISE_GROUP must be 1..%d characters of "
		    "[A-Za-z0-9_.-]",
		    IE_MAX_NAME);
	if (ie_uint(v[1], UINT32_MAX, &ordinal) != 0)
		return ie_fail(out, SV_EINVAL,
		    "$SUPERVISE_ORDINAL is not a number in 0..4294967295");
	if (ie_uint(v[2], UINT64_MAX, &generation) != 0)
		return ie_fail(out, SV_EINVAL,
		    "$SUPERVISE_GENERATION is not a number in "
		    "0..18446744073709551615");
	for (size_t i = 3; i < 5; i++) {
		if (strlen(v[i]) > IE_MAX_TEXT)
			return ie_fail(out, SV_EINVAL,
			    "$%s is longer than %d bytes", required[i],
			    IE_MAX_TEXT);
	}
	size = out->size;
	memset(out, 0, sizeof(*out));
	out->size                 = size;
	out->fields.size          = sizeof(out->fields);
	out->fields.group         = ie_copy(out, v[0]);
	out->fields.supervisor_id = ie_copy(out, v[3]);
	out->fields.purpose       = ie_copy(out, v[4]);
	out->fields.pid           = 0; /* not in the environment */
	out->fields.group_size    = 0; /* not in the environment */
	out->fields.generation    = generation;
	out->fields.ordinal       = (uint32_t) ordinal;
	out->fields.kind          = SV_KIND_PROCESS;
	out->fields.frame_count   = 1;
	out->n_frames             = 1;
	out->frames[0].name       = out->fields.group;
	out->frames[0].generation = generation;
	out->frames[0].ordinal    = (uint32_t) ordinal;
	out->frames[0].kind       = SV_KIND_PROCESS;
	return SV_OK;
}
