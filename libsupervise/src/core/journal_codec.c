/*
 * journal_codec.c — the journal's record codec: one line of the journal
 * (see journal.h for the format), its fields, percent-encoded strings,
 * bounded decimal numbers, the CRC-32 that ends it, and formatting a record
 * (sv_journal_format) into such a line.
 *
 * Parsing is strict and bounded: a field is a run of non-space bytes, a
 * number has at most 20 digits and must fit its type, a name or spec is
 * percent-decoded into a buffer of known size. Anything else is a typed
 * refusal, never a partial state.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decimal.h"
#include "core/journal_internal.h"
#include "core/ordinal.h"

/* svj_crc32 is the IEEE CRC-32 of buf (bitwise; lines are short). */
uint32_t
svj_crc32(const char *buf, size_t len)
{
	uint32_t crc = 0xffffffffu;

	for (size_t i = 0; i < len; i++) {
		crc ^= (uint8_t) buf[i];
		for (int k = 0; k < 8; k++) {
			crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
		}
	}
	return ~crc;
}

/* svj_fail writes a message into err and returns SV_EINVAL. */
sv_err
svj_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return SV_EINVAL;
}

/* ---- strings ------------------------------------------------------------
 */

/* j_plain tells whether byte c is written as itself. */
static bool
j_plain(unsigned char c)
{
	return c > 0x20 && c < 0x7f && c != '%';
}

/* svj_encode appends s percent-encoded at out; returns the end. */
char *
svj_encode(char *out, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char) *s;
		if (j_plain(c)) {
			*out++ = (char) c;
		} else {
			*out++ = '%';
			*out++ = hex[c >> 4];
			*out++ = hex[c & 15];
		}
	}
	return out;
}

/* svj_hexval is the value of hex digit c, or -1. */
int
svj_hexval(char c)
{
	if (c >= '0' && c <= '9') {
		return c - '0';
	}
	if (c >= 'a' && c <= 'f') {
		return c - 'a' + 10;
	}
	if (c >= 'A' && c <= 'F') {
		return c - 'A' + 10;
	}
	return -1;
}

/* svj_decode decodes field f (n bytes) into out (cap bytes, terminated).
 * Fails on a bad escape, a NUL, or a result longer than cap - 1. */
bool
svj_decode(const char *f, size_t n, char *out, size_t cap)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		char c = f[i];
		if (c == '%') {
			int hi, lo;
			if (i + 2 >= n) {
				return false;
			}
			hi = svj_hexval(f[i + 1]);
			lo = svj_hexval(f[i + 2]);
			if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
				return false;
			}
			c = (char) (hi * 16 + lo);
			i += 2;
		}
		if (o + 1 >= cap) {
			return false;
		}
		out[o++] = c;
	}
	out[o] = '\0';
	return true;
}

/* svj_u64 parses field f (n bytes) as a decimal number no larger than max
 * (decimal.h). */
bool
svj_u64(const char *f, size_t n, uint64_t max, uint64_t *vp)
{
	return sv_decimal_u64(f, n, max, vp);
}

/* svj_split splits line into fields at single spaces. False if there are
 * too many, or an empty one. */
bool
svj_split(const char *line, size_t len, j_fields *fs)
{
	size_t start = 0;

	fs->count = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && line[i] != ' ') {
			continue;
		}
		if (i == start || fs->count == J_MAX_FIELDS) {
			return false;
		}
		fs->f[fs->count] = line + start;
		fs->n[fs->count] = i - start;
		fs->count++;
		start = i + 1;
	}
	return true;
}

/* ---- formatting ---------------------------------------------------------
 */

/* sv_journal_format: see journal.h. */
sv_err
sv_journal_format(const sv_jrec *r, char **linep, size_t *lenp)
{
	const char *name = r->name != NULL ? r->name : "";
	size_t      cap, n = 0;
	char       *line, *p;
	char        num[160], tail[160];
	const char *hg   = "";
	const char *tree = r->kind == SV_J_EPOCH && r->cgroup_tree != NULL
	    ? r->cgroup_tree
	    : "";
	int         k, k2 = 0;

	*linep  = NULL;
	tail[0] = '\0';
	if (strlen(name) > SV_JOURNAL_NAME_MAX
	    || (r->kind != SV_J_EPOCH && r->kind != SV_J_HEADER
	        && name[0] == '\0')
	    || (r->spec != NULL && strlen(r->spec) > SV_JOURNAL_SPEC_MAX)
	    || ((r->kind == SV_J_HEADER || r->kind == SV_J_EPOCH)
	        && strlen(name) > SV_JOURNAL_ID_MAX)
	    || (r->ordinal >= SV_ORDINALS_MAX && r->kind != SV_J_LEASE
	        && r->kind != SV_J_UNLEASE)
	    || (tree[0] != '\0' && !sv_journal_cgtree_ok(tree))) {
		return SV_EINVAL;
	}
	switch (r->kind) {
	case SV_J_HEADER:
		k = snprintf(num, sizeof(num), " %d", SV_JOURNAL_VERSION);
		break;
	case SV_J_EPOCH:
		k = snprintf(num, sizeof(num), " %" PRIu64, r->generation);
		break;
	case SV_J_GROUP:
		k = snprintf(num, sizeof(num), " %" PRIu32 " %" PRIu32,
		    r->count, r->config_count);
		break;
	case SV_J_DELETED:
		k      = 0;
		num[0] = '\0';
		break;
	case SV_J_STARTED:
		if (r->pid < 1 || r->pid > INT32_MAX) {
			return SV_EINVAL;
		}
		k = snprintf(num, sizeof(num),
		    " %" PRIu32 " %" PRIu64 " %" PRId64 " %" PRIu64,
		    r->ordinal, r->generation, r->pid, r->start_time);
		break;
	case SV_J_STOPPING:
		k = r->deadline_ms == 0
		    ? snprintf(num, sizeof(num), " %" PRIu32 " %" PRIu64,
		        r->ordinal, r->generation)
		    : snprintf(num, sizeof(num),
		        " %" PRIu32 " %" PRIu64 " %" PRIu64, r->ordinal,
		        r->generation, r->deadline_ms);
		break;
	case SV_J_FLOOR:
	case SV_J_SPAWNING:
	case SV_J_READY:
	case SV_J_REAPED:
	case SV_J_FREED:
		k = snprintf(num, sizeof(num), " %" PRIu32 " %" PRIu64,
		    r->ordinal, r->generation);
		break;
	case SV_J_UNLEASE:
		if (r->lease_id == 0) {
			return SV_EINVAL;
		}
		k = snprintf(num, sizeof(num), " %" PRIu32 " %" PRIu64,
		    r->ordinal, r->lease_id);
		break;
	case SV_J_POOL:
		if (strlen(name) > SV_JOURNAL_LEASE_NAME_MAX || r->policy > 2
		    || (r->spec != NULL
		        && strlen(r->spec) > SV_JOURNAL_PATH_MAX)) {
			return SV_EINVAL;
		}
		k = snprintf(num, sizeof(num),
		    " %" PRIu32 " %" PRIu64 " %" PRIu64 " %" PRIu32 " %d",
		    r->count, r->ttl_ms, r->grace_ms, r->policy,
		    r->directory ? 1 : 0);
		break;
	case SV_J_LEASE:
		hg = r->holder_group != NULL ? r->holder_group : "";
		if (r->lease_id == 0
		    || strlen(name) > SV_JOURNAL_LEASE_NAME_MAX
		    || strlen(hg) > SV_JOURNAL_LEASE_NAME_MAX
		    || (hg[0] == '\0') == (r->session == 0)) {
			return SV_EINVAL;
		}
		k  = snprintf(num, sizeof(num),
		     " %" PRIu32 " %" PRIu64 " %" PRIu64, r->ordinal,
		     r->lease_id, r->token);
		k2 = snprintf(tail, sizeof(tail),
		    " %" PRIu32 " %" PRIu64 " %" PRIu64 " %" PRIu32
		    " %" PRIu64,
		    r->holder_ordinal, r->generation, r->session,
		    r->session_uid, r->session_ttl);
		if (r->res_ino != 0) {
			/* Only then: a record without a resource stays
			 * readable by a supervisor that knows no DEV INO. */
			k2 += snprintf(tail + k2, sizeof(tail) - (size_t) k2,
			    " %" PRIu64 " %" PRIu64, r->res_dev, r->res_ino);
		}
		break;
	default:
		return SV_EINVAL;
	}
	cap = 2 + 3 * strlen(name) + (size_t) k + 2
	    + (r->spec != NULL ? 3 * strlen(r->spec) : 1) + 11 + 3 * strlen(hg)
	    + 2 + (size_t) k2 + 1 + strlen(tree);
	if ((line = malloc(cap)) == NULL) {
		return SV_ENOMEM;
	}
	p    = line;
	*p++ = (char) r->kind;
	if (r->kind == SV_J_HEADER || r->kind == SV_J_EPOCH) {
		/* H VERSION BOOT_ID, E EPOCH SUPERVISOR_ID */
		memcpy(p, num, (size_t) k);
		p += k;
		*p++ = ' ';
		if (name[0] == '\0') {
			*p++ = '-';
		} else {
			p = svj_encode(p, name);
		}
		if (tree[0] != '\0') { /* only then: older readers */
			*p++ = ' ';
			p    = svj_encode(p, tree);
		}
	} else {
		*p++ = ' ';
		p    = svj_encode(p, name);
		memcpy(p, num, (size_t) k);
		p += k;
		if (r->kind == SV_J_GROUP || r->kind == SV_J_POOL) {
			*p++ = ' ';
			if (r->spec == NULL) {
				*p++ = '-';
			} else {
				p = svj_encode(p, r->spec);
			}
		}
		if (r->kind == SV_J_LEASE) {
			*p++ = ' ';
			if (hg[0] == '\0') {
				*p++ = '-';
			} else {
				p = svj_encode(p, hg);
			}
			memcpy(p, tail, (size_t) k2);
			p += k2;
		}
	}
	n = (size_t) (p - line);
	k = snprintf(p, cap - n, " %08" PRIx32 "\n", svj_crc32(line, n));
	n += (size_t) k;
	if (n >= SV_JOURNAL_LINE_MAX) {
		free(line);
		return SV_EINVAL;
	}
	*linep = line;
	*lenp  = n;
	return SV_OK;
}
