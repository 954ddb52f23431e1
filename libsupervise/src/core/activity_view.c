/*
 * activity_view.c — the pure reader of activity regions (see
 * activity_view.h for what it computes, core/activity_format.h for the
 * layout, docs/activity.md for the model).
 *
 * Design. The header is checked field by field against the version 1
 * constants; any difference makes the region INVALID (a reader never
 * adapts its indexing to numbers found in the bytes). Each slot is copied
 * under its sequence counter — seq (acquire), the needed fields (relaxed),
 * an acquire fence, seq again — and the copy is used only when both seq
 * loads are equal and even; a slot whose copy fails SV_ACT_VIEW_TRIES
 * times is skipped. Only the fields the view needs are copied (depth and
 * two entries), which keeps a copy short enough to succeed beside a writer
 * that changes its slot continuously.
 *
 * Divisions: names (cut, sanitise, compose); slot copy; the view; format.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/activity_format.h"
#include "core/activity_view.h"

/* ---- names ---------------------------------------------------------------
 */

/* av_utf8_len returns the length of the valid UTF-8 sequence at b (n bytes
 * left), or 0 when it is not one. Overlong forms, surrogates and code
 * points past U+10FFFF are invalid. */
static size_t
av_utf8_len(const unsigned char *b, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t        len;

	if (b[0] >= 0xc2 && b[0] <= 0xdf) {
		len = 2;
	} else if (b[0] >= 0xe0 && b[0] <= 0xef) {
		len = 3;
		lo  = b[0] == 0xe0 ? 0xa0 : 0x80;
		hi  = b[0] == 0xed ? 0x9f : 0xbf;
	} else if (b[0] >= 0xf0 && b[0] <= 0xf4) {
		len = 4;
		lo  = b[0] == 0xf0 ? 0x90 : 0x80;
		hi  = b[0] == 0xf4 ? 0x8f : 0xbf;
	} else {
		return 0;
	}
	if (len > n || b[1] < lo || b[1] > hi) {
		return 0;
	}
	for (size_t i = 2; i < len; i++) {
		if (b[i] < 0x80 || b[i] > 0xbf) {
			return 0;
		}
	}
	return len;
}

/* av_name appends the printable form of the name held in words w to dst
 * (room for SV_ACTIVITY_NAME_MAX more bytes and a terminator). Text stops
 * at the first NUL or after SV_ACTIVITY_NAME_MAX bytes. ASCII controls,
 * C1 controls and bytes of invalid UTF-8 become '?'; an empty name is "?".
 * Returns the bytes appended. */
static size_t
av_name(const uint64_t w[SV_ACT_NAME_WORDS], char *dst)
{
	union {
		uint64_t      w[SV_ACT_NAME_WORDS];
		unsigned char c[SV_ACT_NAME_SIZE];
	} u;
	size_t n = 0, o = 0;

	memcpy(u.w, w, sizeof(u.w));
	while (n < SV_ACTIVITY_NAME_MAX && u.c[n] != 0) {
		n++;
	}
	for (size_t i = 0; i < n;) {
		unsigned char b = u.c[i];
		size_t        l;

		if (b >= 0x20 && b < 0x7f) {
			dst[o++] = (char) b;
			i++;
		} else if (b >= 0x80 && (l = av_utf8_len(&u.c[i], n - i)) > 0
		    && !(b == 0xc2 && u.c[i + 1] < 0xa0)) {
			memcpy(&dst[o], &u.c[i], l);
			o += l;
			i += l;
		} else {
			dst[o++] = '?';
			i++;
		}
	}
	if (o == 0) {
		dst[o++] = '?';
	}
	dst[o] = '\0';
	return o;
}

/* ---- slot copy -----------------------------------------------------------
 */

/* What the view needs of one slot. */
typedef struct av_slot {
	uint32_t depth;
	uint32_t tid;
	uint64_t start_ns; /* of the innermost recorded scope */
	uint64_t inner[SV_ACT_NAME_WORDS];
	uint64_t outer[SV_ACT_NAME_WORDS]; /* valid when depth >= 2 */
} av_slot;

static void
av_words(const sv_act_entry *e, uint64_t *w)
{
	for (unsigned i = 0; i < SV_ACT_NAME_WORDS; i++) {
		w[i] = atomic_load_explicit(&e->name[i], memory_order_relaxed);
	}
}

/* av_copy takes a consistent copy of slot s into *c. Returns false when
 * every attempt overlapped a write or the depth is impossible. */
static bool
av_copy(const sv_act_slot *s, av_slot *c)
{
	for (unsigned tries = 0; tries < SV_ACT_VIEW_TRIES; tries++) {
		uint32_t q1, q2;

		q1 = atomic_load_explicit(&s->seq, memory_order_acquire);
		if ((q1 & 1u) != 0) {
			continue;
		}
		c->depth
		    = atomic_load_explicit(&s->depth, memory_order_relaxed);
		c->tid = atomic_load_explicit(&s->tid, memory_order_relaxed);
		if (c->depth > SV_ACTIVITY_MAX_DEPTH) {
			return false;
		}
		if (c->depth > 0) {
			uint32_t k  = c->depth < SV_ACT_LEVELS
			     ? c->depth - 1
			     : SV_ACT_LEVELS - 1;
			c->start_ns = atomic_load_explicit(
			    &s->entry[k].start_ns, memory_order_relaxed);
			av_words(&s->entry[k], c->inner);
			if (k > 0) {
				av_words(&s->entry[k - 1], c->outer);
			}
		}
		atomic_thread_fence(memory_order_acquire);
		q2 = atomic_load_explicit(&s->seq, memory_order_relaxed);
		if (q1 == q2) {
			return true;
		}
	}
	return false;
}

/* ---- the view ------------------------------------------------------------
 */

/* av_header_ok checks the header against the version 1 constants. */
static bool
av_header_ok(const sv_act_header *h)
{
	return atomic_load_explicit(&h->magic, memory_order_acquire)
	    == SV_ACT_MAGIC
	    && atomic_load_explicit(&h->version, memory_order_relaxed)
	    == SV_ACT_VERSION
	    && atomic_load_explicit(&h->header_size, memory_order_relaxed)
	    == SV_ACT_HEADER_SIZE
	    && atomic_load_explicit(&h->slots, memory_order_relaxed)
	    == SV_ACT_SLOTS
	    && atomic_load_explicit(&h->levels, memory_order_relaxed)
	    == SV_ACT_LEVELS
	    && atomic_load_explicit(&h->name_size, memory_order_relaxed)
	    == SV_ACT_NAME_SIZE
	    && atomic_load_explicit(&h->slot_size, memory_order_relaxed)
	    == SV_ACT_SLOT_SIZE;
}

/* sv_activity_view_read: see activity_view.h. */
sv_err
sv_activity_view_read(
    const void *bytes, size_t len, uint64_t now_ns, sv_activity_view *out)
{
	const sv_act_region_map *m = bytes;
	av_slot                  oldest;
	bool                     have = false;

	if (out == NULL || (bytes == NULL && len > 0)) {
		return SV_EINVAL;
	}
	memset(out, 0, sizeof(*out));
	out->state = SV_ACTIVITY_INVALID;
	if (bytes == NULL || len < SV_ACT_REGION_SIZE
	    || ((uintptr_t) bytes % _Alignof(sv_act_region_map)) != 0
	    || !av_header_ok(&m->hdr)) {
		return SV_OK;
	}
	out->pid = atomic_load_explicit(&m->hdr.pid, memory_order_relaxed);
	if ((atomic_load_explicit(&m->hdr.flags, memory_order_relaxed)
	        & SV_ACT_FLAG_DISABLED)
	    != 0) {
		out->state = SV_ACTIVITY_DISABLED;
		return SV_OK;
	}
	memset(&oldest, 0, sizeof(oldest));
	for (unsigned i = 0; i < SV_ACT_SLOTS; i++) {
		av_slot c;

		memset(&c, 0, sizeof(c));
		if (!av_copy(&m->slot[i], &c)) {
			out->unreadable++;
			continue;
		}
		if (c.tid != 0) {
			out->threads++;
		}
		if (c.depth == 0) {
			continue;
		}
		out->activities++;
		out->scopes += c.depth; /* <= 64 * SV_ACTIVITY_MAX_DEPTH */
		/* Oldest first; the lowest slot on a tie. */
		if (!have || c.start_ns < oldest.start_ns) {
			oldest = c;
			have   = true;
		}
	}
	if (!have) {
		out->state = SV_ACTIVITY_IDLE;
		return SV_OK;
	}
	out->state        = SV_ACTIVITY_BUSY;
	out->oldest_depth = oldest.depth;
	out->oldest_age_ns
	    = now_ns > oldest.start_ns ? now_ns - oldest.start_ns : 0;
	{
		size_t o = 0;
		if (oldest.depth >= 2) {
			o += av_name(oldest.outer, out->oldest_name);
			out->oldest_name[o++] = ':';
			out->oldest_name[o++] = ' ';
		}
		(void) av_name(oldest.inner, out->oldest_name + o);
	}
	return SV_OK;
}

/* ---- format --------------------------------------------------------------
 */

/* sv_activity_view_format: see activity_view.h. */
size_t
sv_activity_view_format(const sv_activity_view *view, char *buf, size_t size)
{
	uint64_t ms;
	int      n;

	if (buf == NULL || size == 0) {
		return 0;
	}
	buf[0] = '\0';
	if (view == NULL || view->state != SV_ACTIVITY_BUSY) {
		return 0;
	}
	ms = view->oldest_age_ns / 1000000u;
	if (ms < 1000) {
		n = snprintf(buf, size, "%u %s %ums",
		    (unsigned) view->activities, view->oldest_name,
		    (unsigned) ms);
	} else if (ms < 100000) {
		n = snprintf(buf, size, "%u %s %u.%us",
		    (unsigned) view->activities, view->oldest_name,
		    (unsigned) (ms / 1000), (unsigned) (ms % 1000 / 100));
	} else {
		n = snprintf(buf, size, "%u %s %llus",
		    (unsigned) view->activities, view->oldest_name,
		    (unsigned long long) (ms / 1000));
	}
	if (n < 0) {
		buf[0] = '\0';
		return 0;
	}
	return (size_t) n < size ? (size_t) n : size - 1;
}
