/*
 * pidmap.c — pid -> worker hash table (see pidmap.h).
 */
#include <stdlib.h>

#include "core/pidmap.h"

#define PIDMAP_MIN_CAP 64

/* pidmap_hash mixes a pid (Fibonacci hashing of the 64-bit value). */
static size_t
pidmap_hash(int64_t pid, size_t cap)
{
	uint64_t h = (uint64_t) pid * UINT64_C(0x9E3779B97F4A7C15);

	return (size_t) (h >> 32) & (cap - 1);
}

void
sv_pidmap_init(sv_pidmap *m)
{
	m->slots   = NULL;
	m->cap     = 0;
	m->n       = 0;
	m->version = 1;
}

void
sv_pidmap_fini(sv_pidmap *m)
{
	free(m->slots);
	sv_pidmap_init(m);
}

/* pidmap_find returns the slot index of pid, or of the empty slot where it
 * would go. cap must be non-zero. */
static size_t
pidmap_find(const sv_pidmap_slot *slots, size_t cap, int64_t pid)
{
	size_t i = pidmap_hash(pid, cap);

	while (slots[i].pid != 0 && slots[i].pid != pid) {
		i = (i + 1) & (cap - 1);
	}
	return i;
}

/* pidmap_grow rehashes into a table of twice the size (or the minimum). */
static sv_err
pidmap_grow(sv_pidmap *m)
{
	size_t          cap = m->cap == 0 ? PIDMAP_MIN_CAP : m->cap * 2;
	sv_pidmap_slot *s   = calloc(cap, sizeof(*s));

	if (s == NULL) {
		return SV_ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (m->slots[i].pid != 0) {
			s[pidmap_find(s, cap, m->slots[i].pid)] = m->slots[i];
		}
	}
	free(m->slots);
	m->slots = s;
	m->cap   = cap;
	return SV_OK;
}

sv_err
sv_pidmap_put(sv_pidmap *m, int64_t pid, sv_wkey key)
{
	size_t i;
	sv_err err;

	if (pid <= 0) {
		return SV_EINVAL;
	}
	if ((m->n + 1) * 2 > m->cap && (err = pidmap_grow(m)) != SV_OK) {
		return err;
	}
	i = pidmap_find(m->slots, m->cap, pid);
	if (m->slots[i].pid == 0) {
		m->n++;
	}
	m->slots[i].pid = pid;
	m->slots[i].key = key;
	m->version++;
	return SV_OK;
}

bool
sv_pidmap_get(const sv_pidmap *m, int64_t pid, sv_wkey *keyp)
{
	size_t i;

	if (m->cap == 0 || pid <= 0) {
		return false;
	}
	i = pidmap_find(m->slots, m->cap, pid);
	if (m->slots[i].pid == 0) {
		return false;
	}
	*keyp = m->slots[i].key;
	return true;
}

bool
sv_pidmap_del(sv_pidmap *m, int64_t pid)
{
	size_t i, j, home;

	if (m->cap == 0 || pid <= 0) {
		return false;
	}
	i = pidmap_find(m->slots, m->cap, pid);
	if (m->slots[i].pid == 0) {
		return false;
	}
	m->version++;
	/* Backward shift: move later entries of the probe run into the hole
	 * unless their home lies cyclically in (i, j]. */
	j = i;
	for (;;) {
		m->slots[i].pid = 0;
		for (;;) {
			j = (j + 1) & (m->cap - 1);
			if (m->slots[j].pid == 0) {
				m->n--;
				return true;
			}
			home = pidmap_hash(m->slots[j].pid, m->cap);
			if (i <= j ? (home <= i || home > j)
			           : (home <= i && home > j)) {
				break;
			}
		}
		m->slots[i] = m->slots[j];
		i           = j;
	}
}

uint64_t
sv_pidmap_version(const sv_pidmap *m)
{
	return m->version;
}

size_t
sv_pidmap_count(const sv_pidmap *m)
{
	return m->n;
}
