/*
 * journal.c — formatting and replaying the supervisor's journal (see
 * journal.h for the format and its crash-safety argument).
 *
 * Parsing is strict and bounded: a field is a run of non-space bytes, a
 * number has at most 20 digits and must fit its type, a name or spec is
 * percent-decoded into a buffer of known size. Anything else is a typed
 * refusal with the line number, never a partial state.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/journal.h"
#include "core/ordinal.h"

/* Most fields in a record (P: kind, name, ordinal, gen, pid, start, crc). */
#define J_MAX_FIELDS 13

/* j_crc32 is the IEEE CRC-32 of buf (bitwise; lines are short). */
static uint32_t
j_crc32(const char *buf, size_t len)
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

static sv_err j_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* j_fail writes a message into err and returns SV_EINVAL. */
static sv_err
j_fail(char *err, size_t errlen, const char *fmt, ...)
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

/* j_encode appends s percent-encoded at out; returns the end. */
static char *
j_encode(char *out, const char *s)
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

/* j_hexval is the value of hex digit c, or -1. */
static int
j_hexval(char c)
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

/* j_decode decodes field f (n bytes) into out (cap bytes, terminated).
 * Fails on a bad escape, a NUL, or a result longer than cap - 1. */
static bool
j_decode(const char *f, size_t n, char *out, size_t cap)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		char c = f[i];
		if (c == '%') {
			int hi, lo;
			if (i + 2 >= n) {
				return false;
			}
			hi = j_hexval(f[i + 1]);
			lo = j_hexval(f[i + 2]);
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

/* j_u64 parses field f (n bytes) as a decimal number no larger than max. */
static bool
j_u64(const char *f, size_t n, uint64_t max, uint64_t *vp)
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

/* ---- state --------------------------------------------------------------
 */

sv_err
sv_jstate_init(sv_jstate *st, const char *boot_id)
{
	memset(st, 0, sizeof(*st));
	if (boot_id == NULL || strlen(boot_id) > SV_JOURNAL_ID_MAX) {
		return SV_EINVAL;
	}
	snprintf(st->boot_id, sizeof(st->boot_id), "%s", boot_id);
	return SV_OK;
}

/* j_group_free frees what g owns. */
static void
j_group_free(sv_jgroup *g)
{
	free(g->name);
	free(g->spec);
	free(g->seats);
}

void
sv_jstate_free(sv_jstate *st)
{
	for (size_t i = 0; i < st->ngroups; i++) {
		j_group_free(&st->groups[i]);
	}
	free(st->groups);
	for (size_t i = 0; i < st->npools; i++) {
		free(st->pools[i].path);
	}
	free(st->pools);
	free(st->leases);
	for (uint32_t i = 0; i < st->nlnames; i++) {
		free(st->lnames[i].s);
	}
	free(st->lnames);
	free(st->lease_index.b);
	free(st->lname_index.b);
	memset(st, 0, sizeof(*st));
}

sv_jgroup *
sv_jstate_group(const sv_jstate *st, const char *name)
{
	for (size_t i = 0; i < st->ngroups; i++) {
		if (strcmp(st->groups[i].name, name) == 0) {
			return &st->groups[i];
		}
	}
	return NULL;
}

/* j_lname is the string of name id id, "" for 0 or a free entry. */
static const char *
j_lname(const sv_jstate *st, uint32_t id)
{
	if (id == 0 || id > st->nlnames || st->lnames[id - 1].s == NULL) {
		return "";
	}
	return st->lnames[id - 1].s;
}

const char *
sv_jlease_pool(const sv_jstate *st, const sv_jlease *l)
{
	return j_lname(st, l->pool);
}

const char *
sv_jlease_group(const sv_jstate *st, const sv_jlease *l)
{
	return j_lname(st, l->group);
}

/* j_group_add appends a group named name (not present yet). */
static sv_err
j_group_add(sv_jstate *st, const char *name, sv_jgroup **gp)
{
	sv_jgroup *gs;
	char      *nm;

	if (st->ngroups >= SV_JOURNAL_MAX_GROUPS) {
		return SV_EEXHAUSTED;
	}
	if ((nm = strdup(name)) == NULL) {
		return SV_ENOMEM;
	}
	gs = realloc(st->groups, (st->ngroups + 1) * sizeof(*gs));
	if (gs == NULL) {
		free(nm);
		return SV_ENOMEM;
	}
	st->groups = gs;
	*gp        = &gs[st->ngroups++];
	memset(*gp, 0, sizeof(**gp));
	(*gp)->name = nm;
	return SV_OK;
}

/* j_seat returns the seat of ordinal o in g, growing the table. */
static sv_err
j_seat(sv_jgroup *g, uint32_t o, sv_jseat **sp)
{
	if (o >= g->nseats) {
		uint32_t  n = o + 1 > 2 * g->nseats ? o + 1 : 2 * g->nseats;
		sv_jseat *s;
		if (n > SV_ORDINALS_MAX) {
			n = SV_ORDINALS_MAX;
		}
		s = realloc(g->seats, (size_t) n * sizeof(*s));
		if (s == NULL) {
			return SV_ENOMEM;
		}
		memset(
		    s + g->nseats, 0, (size_t) (n - g->nseats) * sizeof(*s));
		g->seats  = s;
		g->nseats = n;
	}
	*sp = &g->seats[o];
	return SV_OK;
}

/* j_proc finds the unreaped process of generation gen on seat s. */
static sv_jproc *
j_proc(sv_jseat *s, uint64_t gen)
{
	for (uint32_t i = 0; i < s->nprocs; i++) {
		if (s->procs[i].generation == gen) {
			return &s->procs[i];
		}
	}
	return NULL;
}

/* j_group_forget removes group g from st. */
static void
j_group_forget(sv_jstate *st, sv_jgroup *g)
{
	size_t i = (size_t) (g - st->groups);

	for (uint32_t o = 0; o < g->nseats; o++) {
		st->nlive -= g->seats[o].nprocs;
	}
	j_group_free(g);
	memmove(&st->groups[i], &st->groups[i + 1],
	    (st->ngroups - i - 1) * sizeof(*g));
	st->ngroups--;
}

/* ---- parsing ------------------------------------------------------------
 */

typedef struct j_fields {
	const char *f[J_MAX_FIELDS];
	size_t      n[J_MAX_FIELDS];
	size_t      count;
} j_fields;

/* j_split splits line into fields at single spaces. False if there are
 * too many, or an empty one. */
static bool
j_split(const char *line, size_t len, j_fields *fs)
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

/* j_apply_proc handles S, P, R, T, X and F, whose fields start NAME
 * ORDINAL GEN. */
static sv_err
j_apply_proc(sv_jstate *st, sv_jkind kind, const j_fields *fs,
    const char *name, char *err, size_t errlen)
{
	uint64_t   ord, gen, pid = 0, start = 0;
	sv_jgroup *g;
	sv_jseat  *s;
	sv_jproc  *p;
	sv_err     rv;

	if (fs->count != (kind == SV_J_STARTED ? 6u : 4u)) {
		return j_fail(err, errlen, "wrong number of fields");
	}
	if (!j_u64(fs->f[2], fs->n[2], SV_ORDINALS_MAX - 1, &ord)
	    || !j_u64(fs->f[3], fs->n[3], UINT64_MAX - 1, &gen)) {
		return j_fail(err, errlen, "bad ordinal or generation");
	}
	if (kind == SV_J_STARTED
	    && (!j_u64(fs->f[4], fs->n[4], INT32_MAX, &pid) || pid < 1
	        || !j_u64(fs->f[5], fs->n[5], UINT64_MAX, &start))) {
		return j_fail(err, errlen, "bad pid or start time");
	}
	if ((g = sv_jstate_group(st, name)) == NULL) {
		return j_fail(err, errlen, "unknown group \"%s\"", name);
	}
	if ((rv = j_seat(g, (uint32_t) ord, &s)) != SV_OK) {
		return rv;
	}
	p = j_proc(s, gen);
	if (kind != SV_J_READY && kind != SV_J_STOPPING && kind != SV_J_FREED
	    && s->spawning && s->spawning_generation == gen) {
		s->spawning = false; /* its P (or X) came */
	}
	switch (kind) {
	case SV_J_FREED:
		s->released = true;
		break;
	case SV_J_SPAWNING:
		s->released            = false; /* wanted again */
		s->spawning            = true;
		s->spawning_generation = gen;
		if (gen + 1 > s->next_generation) {
			s->next_generation = gen + 1;
		}
		break;
	case SV_J_STARTED:
		if (p != NULL) {
			return j_fail(err, errlen,
			    "generation %" PRIu64 " started twice", gen);
		}
		if (s->nprocs == SV_JOURNAL_SEAT_PROCS) {
			return j_fail(err, errlen,
			    "more than %d unreaped processes on one seat",
			    SV_JOURNAL_SEAT_PROCS);
		}
		s->procs[s->nprocs++]
		    = (sv_jproc) {gen, (int64_t) pid, start, false, false};
		st->nlive++;
		if (gen + 1 > s->next_generation) {
			s->next_generation = gen + 1;
		}
		break;
	case SV_J_READY:
	case SV_J_STOPPING:
		/* A record about a process already reaped is harmless. */
		if (p != NULL) {
			if (kind == SV_J_READY) {
				p->ready = true;
			} else {
				p->stopping = true;
			}
		}
		break;
	default: /* SV_J_REAPED */
		if (p != NULL) {
			*p = s->procs[--s->nprocs];
			st->nlive--;
		}
		break;
	}
	return SV_OK;
}

/* j_apply_group handles G, D and N. */
static sv_err
j_apply_group(sv_jstate *st, sv_jkind kind, const j_fields *fs,
    const char *name, char *err, size_t errlen)
{
	sv_jgroup *g = sv_jstate_group(st, name);
	uint64_t   a, b;
	sv_jseat  *s;
	sv_err     rv;

	if (kind == SV_J_DELETED) {
		if (fs->count != 2) {
			return j_fail(err, errlen, "wrong number of fields");
		}
		if (g != NULL) {
			j_group_forget(st, g);
		}
		return SV_OK;
	}
	if (kind == SV_J_FLOOR) {
		if (fs->count != 4
		    || !j_u64(fs->f[2], fs->n[2], SV_ORDINALS_MAX - 1, &a)
		    || !j_u64(fs->f[3], fs->n[3], UINT64_MAX, &b)) {
			return j_fail(err, errlen, "bad generation floor");
		}
		if (g == NULL) {
			return j_fail(
			    err, errlen, "unknown group \"%s\"", name);
		}
		if ((rv = j_seat(g, (uint32_t) a, &s)) != SV_OK) {
			return rv;
		}
		if (b > s->next_generation) {
			s->next_generation = b;
		}
		return SV_OK;
	}
	/* G NAME COUNT CONFIG_COUNT SPEC */
	if (fs->count != 5 || !j_u64(fs->f[2], fs->n[2], SV_ORDINALS_MAX, &a)
	    || !j_u64(fs->f[3], fs->n[3], SV_ORDINALS_MAX, &b)) {
		return j_fail(err, errlen, "bad group record");
	}
	if (g == NULL) {
		if ((rv = j_group_add(st, name, &g)) != SV_OK) {
			return rv == SV_EEXHAUSTED
			    ? j_fail(err, errlen, "more than %d groups",
			        SV_JOURNAL_MAX_GROUPS)
			    : rv;
		}
	}
	g->count        = (uint32_t) a;
	g->config_count = (uint32_t) b;
	if (fs->n[4] == 1 && fs->f[4][0] == '-') {
		free(g->spec);
		g->spec = NULL;
	} else {
		char *spec = malloc(SV_JOURNAL_SPEC_MAX + 1);
		if (spec == NULL) {
			return SV_ENOMEM;
		}
		if (!j_decode(
		        fs->f[4], fs->n[4], spec, SV_JOURNAL_SPEC_MAX + 1)) {
			free(spec);
			return j_fail(err, errlen, "bad group spec");
		}
		free(g->spec);
		g->spec = spec;
	}
	return SV_OK;
}

/* ---- the lease table ------------------------------------------------------
 *
 * Live leases sit in a dense array (a lease that ends is replaced by the
 * last one, so a snapshot lists them in the order this leaves). An index
 * finds a lease from its (pool, slot) without a scan. Pool and holder
 * group names are interned: a lease holds ids into lnames, each name
 * counted by the leases that name it and freed with the last of them.
 */

/* What the lease table saves rests on this (x86-64: 64 bytes). */
_Static_assert(sizeof(sv_jlease) <= 64, "a journaled lease stays compact");

/* Smallest index table; an index grows at three quarters full. */
#define J_INDEX_MIN 16u

/* j_mix is a 64-bit finaliser (splitmix64's), so close keys spread. */
static uint64_t
j_mix(uint64_t x)
{
	x ^= x >> 30;
	x *= UINT64_C(0xbf58476d1ce4e5b9);
	x ^= x >> 27;
	x *= UINT64_C(0x94d049bb133111eb);
	x ^= x >> 31;
	return x;
}

/* j_strhash is the FNV-1a hash of s. */
static uint32_t
j_strhash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s != '\0'; s++) {
		h = (h ^ (uint8_t) *s) * 16777619u;
	}
	return h;
}

/* What an index is of: its entries' key hashes and key comparisons. */
typedef uint64_t (*j_keyhash)(const sv_jstate *st, uint32_t v);
typedef bool (*j_keyeq)(const sv_jstate *st, uint32_t v, const void *key);

/* j_home is the first bucket of hash h in a table of cap buckets. */
static size_t
j_home(uint64_t h, size_t cap)
{
	return (size_t) j_mix(h) & (cap - 1);
}

/* j_index_find returns the bucket holding the entry whose key is key
 * (hash h), or the empty bucket where it would go. ix->cap must be > 0. */
static size_t
j_index_find(const sv_jstate *st, const sv_jindex *ix, uint64_t h, j_keyeq eq,
    const void *key)
{
	size_t i = j_home(h, ix->cap);

	while (ix->b[i] != 0 && !eq(st, ix->b[i], key)) {
		i = (i + 1) & (ix->cap - 1);
	}
	return i;
}

/* j_index_add adds entry v (key hash h, not present yet), growing the
 * table first when it would pass three quarters full. */
static sv_err
j_index_add(
    const sv_jstate *st, sv_jindex *ix, uint64_t h, uint32_t v, j_keyhash kh)
{
	size_t i;

	if ((ix->n + 1) * 4 > ix->cap * 3) {
		size_t    cap = ix->cap == 0 ? J_INDEX_MIN : ix->cap * 2;
		uint32_t *b   = calloc(cap, sizeof(*b));
		if (b == NULL) {
			return SV_ENOMEM;
		}
		for (size_t k = 0; k < ix->cap; k++) {
			if (ix->b[k] != 0) {
				i = j_home(kh(st, ix->b[k]), cap);
				while (b[i] != 0) {
					i = (i + 1) & (cap - 1);
				}
				b[i] = ix->b[k];
			}
		}
		free(ix->b);
		ix->b   = b;
		ix->cap = cap;
	}
	i = j_home(h, ix->cap);
	while (ix->b[i] != 0) {
		i = (i + 1) & (ix->cap - 1);
	}
	ix->b[i] = v;
	ix->n++;
	return SV_OK;
}

/* j_index_del empties bucket i and moves the later entries of its probe
 * run back into the hole unless their home lies cyclically in (i, j]. */
static void
j_index_del(const sv_jstate *st, sv_jindex *ix, size_t i, j_keyhash kh)
{
	size_t j = i;

	for (;;) {
		size_t home;
		j = (j + 1) & (ix->cap - 1);
		if (ix->b[j] == 0) {
			break;
		}
		home = j_home(kh(st, ix->b[j]), ix->cap);
		if (i <= j ? (i < home && home <= j)
		           : (i < home || home <= j)) {
			continue;
		}
		ix->b[i] = ix->b[j];
		i        = j;
	}
	ix->b[i] = 0;
	ix->n--;
}

/* Names: entry v is name id v; the key is the string. */
static uint64_t
j_name_hash(const sv_jstate *st, uint32_t v)
{
	return st->lnames[v - 1].hash;
}

static bool
j_name_eq(const sv_jstate *st, uint32_t v, const void *key)
{
	return strcmp(st->lnames[v - 1].s, key) == 0;
}

/* j_name_id returns the id of name s, or 0 if no lease names it. */
static uint32_t
j_name_id(const sv_jstate *st, const char *s)
{
	if (st->lname_index.cap == 0) {
		return 0;
	}
	return st->lname_index
	    .b[j_index_find(st, &st->lname_index, j_strhash(s), j_name_eq, s)];
}

/* j_name_ref counts one more lease naming s and sets *idp to its id,
 * entering s if it is new. */
static sv_err
j_name_ref(sv_jstate *st, const char *s, uint32_t *idp)
{
	uint32_t  id = j_name_id(st, s);
	uint32_t  k  = st->nlnames;
	sv_jname *n;
	char     *copy;
	sv_err    rv;

	if (id != 0) {
		st->lnames[id - 1].refs++;
		*idp = id;
		return SV_OK;
	}
	if (st->lnames_free > 0) {
		/* Reuse a freed entry (there are few names: a scan). */
		k = 0;
		while (st->lnames[k].s != NULL) {
			k++;
		}
	} else if (st->nlnames == st->caplnames) {
		uint32_t cap = st->caplnames == 0 ? 8 : st->caplnames * 2;
		/* At most two names a lease, and leases are bounded. */
		if (cap > 2 * SV_JOURNAL_MAX_LEASES) {
			return SV_ENOMEM;
		}
		if ((n = realloc(st->lnames, cap * sizeof(*n))) == NULL) {
			return SV_ENOMEM;
		}
		st->lnames    = n;
		st->caplnames = cap;
	}
	if ((copy = strdup(s)) == NULL) {
		return SV_ENOMEM;
	}
	n       = &st->lnames[k];
	n->s    = copy;
	n->refs = 1;
	n->hash = j_strhash(s);
	if ((rv = j_index_add(
	         st, &st->lname_index, n->hash, k + 1, j_name_hash))
	    != SV_OK) {
		free(copy);
		n->s = NULL; /* the entry stays free (or unused) */
		return rv;
	}
	if (k == st->nlnames) {
		st->nlnames++;
	} else {
		st->lnames_free--;
	}
	*idp = k + 1;
	return SV_OK;
}

/* j_name_unref counts one lease fewer naming name id (0 is ignored); the
 * last one frees the name. */
static void
j_name_unref(sv_jstate *st, uint32_t id)
{
	sv_jname *n;

	if (id == 0) {
		return;
	}
	n = &st->lnames[id - 1];
	if (--n->refs > 0) {
		return;
	}
	j_index_del(st, &st->lname_index,
	    j_index_find(st, &st->lname_index, n->hash, j_name_eq, n->s),
	    j_name_hash);
	free(n->s);
	n->s = NULL;
	st->lnames_free++;
}

/* Leases: entry v is leases[v - 1]; the key is (pool id, slot). */
typedef struct j_lkey {
	uint32_t pool, slot;
} j_lkey;

static uint64_t
j_lkey_hash(uint32_t pool, uint32_t slot)
{
	return ((uint64_t) pool << 32) | slot;
}

static uint64_t
j_lease_hash(const sv_jstate *st, uint32_t v)
{
	return j_lkey_hash(st->leases[v - 1].pool, st->leases[v - 1].slot);
}

static bool
j_lease_eq(const sv_jstate *st, uint32_t v, const void *key)
{
	const j_lkey *k = key;

	return st->leases[v - 1].pool == k->pool
	    && st->leases[v - 1].slot == k->slot;
}

/* j_lease_bucket returns the index bucket of the lease on (pool, slot),
 * whose content is 0 when there is none. The index must not be empty. */
static size_t
j_lease_bucket(const sv_jstate *st, uint32_t pool, uint32_t slot)
{
	j_lkey k = {pool, slot};

	return j_index_find(
	    st, &st->lease_index, j_lkey_hash(pool, slot), j_lease_eq, &k);
}

/* j_lease_find returns the live lease on (pool, slot), or NULL. */
static sv_jlease *
j_lease_find(const sv_jstate *st, const char *pool, uint32_t slot)
{
	uint32_t pid = j_name_id(st, pool);
	uint32_t v;

	if (pid == 0 || st->lease_index.cap == 0) {
		return NULL;
	}
	v = st->lease_index.b[j_lease_bucket(st, pid, slot)];
	return v != 0 ? &st->leases[v - 1] : NULL;
}

/* j_lease_remove removes lease l of st; the last lease takes its place. */
static void
j_lease_remove(sv_jstate *st, sv_jlease *l)
{
	size_t    i    = (size_t) (l - st->leases);
	size_t    last = st->nleases - 1;
	sv_jlease gone = *l;

	j_index_del(st, &st->lease_index,
	    j_lease_bucket(st, gone.pool, gone.slot), j_lease_hash);
	if (i != last) {
		size_t b = j_lease_bucket(
		    st, st->leases[last].pool, st->leases[last].slot);
		st->leases[i]        = st->leases[last];
		st->lease_index.b[b] = (uint32_t) i + 1;
	}
	st->nleases--;
	j_name_unref(st, gone.pool);
	j_name_unref(st, gone.group);
}

/* j_lease_put enters lease nl (its names already counted for it): it
 * replaces the live lease on its slot, or is added. On failure the
 * names are uncounted again. */
static sv_err
j_lease_put(sv_jstate *st, const sv_jlease *nl, char *err, size_t errlen)
{
	size_t b = 0;
	sv_err rv;

	if (st->lease_index.cap > 0) {
		b = j_lease_bucket(st, nl->pool, nl->slot);
		if (st->lease_index.b[b] != 0) {
			sv_jlease *l = &st->leases[st->lease_index.b[b] - 1];
			/* The same pool: its count moves to the new lease. */
			j_name_unref(st, l->pool);
			j_name_unref(st, l->group);
			*l = *nl;
			return SV_OK;
		}
	}
	if (st->nleases == SV_JOURNAL_MAX_LEASES) {
		rv = j_fail(
		    err, errlen, "more than %u leases", SV_JOURNAL_MAX_LEASES);
		goto fail;
	}
	if (st->nleases == st->capleases) {
		size_t     cap = st->capleases > 0 ? st->capleases * 2 : 16;
		sv_jlease *p   = realloc(st->leases, cap * sizeof(*p));
		if (p == NULL) {
			rv = SV_ENOMEM;
			goto fail;
		}
		st->leases    = p;
		st->capleases = cap;
	}
	st->leases[st->nleases] = *nl;
	if ((rv = j_index_add(st, &st->lease_index,
	         j_lkey_hash(nl->pool, nl->slot), (uint32_t) st->nleases + 1,
	         j_lease_hash))
	    != SV_OK) {
		goto fail;
	}
	st->nleases++;
	return SV_OK;
fail:
	j_name_unref(st, nl->pool);
	j_name_unref(st, nl->group);
	return rv;
}

/* j_apply_lease handles L and U (name is the pool). */
static sv_err
j_apply_lease(sv_jstate *st, sv_jkind kind, const j_fields *fs,
    const char *name, char *err, size_t errlen)
{
	uint64_t slot, id, token, ord = 0, gen = 0, ses = 0, uid = 0, ttl = 0;
	char     group[SV_JOURNAL_LEASE_NAME_MAX + 1];
	sv_jlease *l;
	sv_jlease  nl;
	sv_err     rv;

	if (strlen(name) > SV_JOURNAL_LEASE_NAME_MAX) {
		return j_fail(err, errlen, "pool name too long");
	}
	if (fs->count != (kind == SV_J_LEASE ? 11u : 4u)
	    || !j_u64(fs->f[2], fs->n[2], UINT32_MAX, &slot)
	    || !j_u64(fs->f[3], fs->n[3], UINT64_MAX, &id) || id == 0) {
		return j_fail(err, errlen, "bad lease record");
	}
	if (kind == SV_J_UNLEASE) {
		l = j_lease_find(st, name, (uint32_t) slot);
		if (l != NULL && l->id == id) {
			j_lease_remove(st, l);
		}
		return SV_OK;
	}
	memset(&nl, 0, sizeof(nl));
	if (!j_u64(fs->f[4], fs->n[4], UINT64_MAX, &token)
	    || !j_u64(fs->f[6], fs->n[6], UINT32_MAX, &ord)
	    || !j_u64(fs->f[7], fs->n[7], UINT64_MAX, &gen)
	    || !j_u64(fs->f[8], fs->n[8], UINT64_MAX, &ses)
	    || !j_u64(fs->f[9], fs->n[9], UINT32_MAX, &uid)
	    || !j_u64(fs->f[10], fs->n[10], UINT64_MAX, &ttl)) {
		return j_fail(err, errlen, "bad lease record");
	}
	group[0] = '\0';
	if (fs->n[5] == 1 && fs->f[5][0] == '-') {
		if (ses == 0) {
			return j_fail(err, errlen, "lease without a holder");
		}
	} else if (ses != 0
	    || !j_decode(fs->f[5], fs->n[5], group, sizeof(group))) {
		return j_fail(err, errlen, "bad lease holder");
	}
	nl.slot           = (uint32_t) slot;
	nl.id             = id;
	nl.token          = token;
	nl.ordinal        = (uint32_t) ord;
	nl.generation     = gen;
	nl.session        = ses;
	nl.session_uid    = (uint32_t) uid;
	nl.session_ttl_ms = ttl;
	if ((rv = j_name_ref(st, name, &nl.pool)) != SV_OK) {
		return rv;
	}
	if (group[0] != '\0'
	    && (rv = j_name_ref(st, group, &nl.group)) != SV_OK) {
		j_name_unref(st, nl.pool);
		return rv;
	}
	return j_lease_put(st, &nl, err, errlen);
}

const sv_jlease *
sv_jstate_lease(const sv_jstate *st, const char *pool, uint32_t slot)
{
	if (pool == NULL || strlen(pool) > SV_JOURNAL_LEASE_NAME_MAX) {
		return NULL;
	}
	return j_lease_find(st, pool, slot);
}

/* j_apply_pool handles O (name is the pool): a runtime pool, replacing
 * an earlier record of the same name. */
static sv_err
j_apply_pool(sv_jstate *st, const j_fields *fs, const char *name, char *err,
    size_t errlen)
{
	uint64_t  slots, ttl, grace, pol, dir;
	sv_jpool *p    = NULL;
	char     *path = NULL;

	if (strlen(name) > SV_JOURNAL_LEASE_NAME_MAX || fs->count != 8
	    || !j_u64(fs->f[2], fs->n[2], UINT32_MAX, &slots)
	    || !j_u64(fs->f[3], fs->n[3], UINT64_MAX, &ttl)
	    || !j_u64(fs->f[4], fs->n[4], UINT64_MAX, &grace)
	    || !j_u64(fs->f[5], fs->n[5], 2, &pol)
	    || !j_u64(fs->f[6], fs->n[6], 1, &dir)) {
		return j_fail(err, errlen, "bad pool record");
	}
	if (!(fs->n[7] == 1 && fs->f[7][0] == '-')) {
		if ((path = malloc(SV_JOURNAL_PATH_MAX + 1)) == NULL) {
			return SV_ENOMEM;
		}
		if (!j_decode(
		        fs->f[7], fs->n[7], path, SV_JOURNAL_PATH_MAX + 1)) {
			free(path);
			return j_fail(err, errlen, "bad pool path");
		}
	}
	for (size_t i = 0; i < st->npools; i++) {
		if (strcmp(st->pools[i].name, name) == 0) {
			p = &st->pools[i];
		}
	}
	if (p == NULL) {
		sv_jpool *np;
		if (st->npools == SV_JOURNAL_MAX_POOLS) {
			free(path);
			return j_fail(err, errlen, "more than %u pools",
			    SV_JOURNAL_MAX_POOLS);
		}
		np = realloc(st->pools, (st->npools + 1) * sizeof(*np));
		if (np == NULL) {
			free(path);
			return SV_ENOMEM;
		}
		st->pools = np;
		p         = &st->pools[st->npools++];
		memset(p, 0, sizeof(*p));
		snprintf(p->name, sizeof(p->name), "%s", name);
	}
	free(p->path);
	p->path      = path;
	p->slots     = (uint32_t) slots;
	p->ttl_ms    = ttl;
	p->grace_ms  = grace;
	p->policy    = (uint32_t) pol;
	p->directory = dir == 1;
	return SV_OK;
}

sv_err
sv_journal_apply(
    sv_jstate *st, const char *line, size_t len, char *err, size_t errlen)
{
	j_fields fs;
	uint64_t crc, v;
	sv_jkind kind;
	char     name[SV_JOURNAL_NAME_MAX + 1];

	if (len == 0 || len >= SV_JOURNAL_LINE_MAX) {
		return j_fail(err, errlen, "empty or overlong line");
	}
	if (!j_split(line, len, &fs) || fs.count < 2) {
		return j_fail(err, errlen, "malformed line");
	}
	if (fs.n[fs.count - 1] != 8) {
		return j_fail(err, errlen, "bad checksum");
	}
	crc = 0;
	for (size_t i = 0; i < 8; i++) {
		int d = j_hexval(fs.f[fs.count - 1][i]);
		if (d < 0) {
			return j_fail(err, errlen, "bad checksum");
		}
		crc = crc * 16 + (uint64_t) d;
	}
	if (crc != j_crc32(line, (size_t) (fs.f[fs.count - 1] - line) - 1)) {
		return j_fail(err, errlen, "bad checksum");
	}
	fs.count--; /* the checksum is done with */
	if (fs.n[0] != 1) {
		return j_fail(err, errlen, "unknown record kind");
	}
	kind = (sv_jkind) fs.f[0][0];
	if (kind != SV_J_EPOCH && kind != SV_J_HEADER
	    && (fs.count < 2
	        || !j_decode(fs.f[1], fs.n[1], name, sizeof(name)))) {
		return j_fail(err, errlen, "bad group name");
	}
	st->nrecords++;
	switch (kind) {
	case SV_J_HEADER:
		if (fs.count != 3
		    || !j_u64(fs.f[1], fs.n[1], UINT32_MAX, &v)) {
			return j_fail(err, errlen, "bad header");
		}
		if (v != SV_JOURNAL_VERSION) {
			return j_fail(err, errlen,
			    "journal format %" PRIu64 " (this is %d)", v,
			    SV_JOURNAL_VERSION);
		}
		if (!j_decode(
		        fs.f[2], fs.n[2], st->boot_id, sizeof(st->boot_id))) {
			return j_fail(err, errlen, "bad boot id");
		}
		return SV_OK;
	case SV_J_EPOCH:
		if (fs.count != 3 || !j_u64(fs.f[1], fs.n[1], UINT64_MAX, &v)
		    || v <= st->epoch
		    || !j_decode(fs.f[2], fs.n[2], st->supervisor_id,
		        sizeof(st->supervisor_id))) {
			return j_fail(err, errlen,
			    "bad epoch record (epochs must grow)");
		}
		st->epoch = v;
		return SV_OK;
	case SV_J_GROUP:
	case SV_J_DELETED:
	case SV_J_FLOOR:
		return j_apply_group(st, kind, &fs, name, err, errlen);
	case SV_J_SPAWNING:
	case SV_J_STARTED:
	case SV_J_READY:
	case SV_J_STOPPING:
	case SV_J_REAPED:
	case SV_J_FREED:
		return j_apply_proc(st, kind, &fs, name, err, errlen);
	case SV_J_LEASE:
	case SV_J_UNLEASE:
		return j_apply_lease(st, kind, &fs, name, err, errlen);
	case SV_J_POOL:
		return j_apply_pool(st, &fs, name, err, errlen);
	default:
		return j_fail(
		    err, errlen, "unknown record kind '%c'", (char) kind);
	}
}

sv_err
sv_journal_replay(
    const char *buf, size_t len, sv_jstate *st, char *err, size_t errlen)
{
	size_t pos = 0, lineno = 0;
	char   why[160];
	sv_err rv;

	(void) sv_jstate_init(st, "");
	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t      n
		    = nl != NULL ? (size_t) (nl - (buf + pos)) : len - pos;
		bool last = nl == NULL || (size_t) (nl - buf) + 1 == len;
		lineno++;
		if (nl == NULL) {
			/* Cut in the middle of its last record: a crash. */
			if (lineno == 1) {
				sv_jstate_free(st);
				return j_fail(err, errlen,
				    "line 1: the header is incomplete");
			}
			st->torn = true;
			break;
		}
		if (lineno == 1 && (n < 1 || buf[pos] != SV_J_HEADER)) {
			sv_jstate_free(st);
			return j_fail(
			    err, errlen, "line 1: not a supervised journal");
		}
		if (lineno > 1 && n > 0 && buf[pos] == SV_J_HEADER) {
			sv_jstate_free(st);
			return j_fail(
			    err, errlen, "line %zu: a second header", lineno);
		}
		rv = sv_journal_apply(st, buf + pos, n, why, sizeof(why));
		if (rv == SV_ENOMEM) {
			sv_jstate_free(st);
			return rv;
		}
		if (rv != SV_OK) {
			if (last && lineno > 1) {
				/* A whole but damaged last line: dropped, as a
				 * torn one would be. */
				st->torn = true;
				break;
			}
			sv_jstate_free(st);
			return j_fail(
			    err, errlen, "line %zu: %s", lineno, why);
		}
		pos += n + 1;
	}
	if (lineno == 0) {
		sv_jstate_free(st);
		return j_fail(err, errlen, "empty file");
	}
	return SV_OK;
}

/* ---- formatting ---------------------------------------------------------
 */

sv_err
sv_journal_format(const sv_jrec *r, char **linep, size_t *lenp)
{
	const char *name = r->name != NULL ? r->name : "";
	size_t      cap, n = 0;
	char       *line, *p;
	char        num[160], tail[160];
	const char *hg = "";
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
	        && r->kind != SV_J_UNLEASE)) {
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
	case SV_J_FLOOR:
	case SV_J_SPAWNING:
	case SV_J_READY:
	case SV_J_STOPPING:
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
		break;
	default:
		return SV_EINVAL;
	}
	cap = 2 + 3 * strlen(name) + (size_t) k + 2
	    + (r->spec != NULL ? 3 * strlen(r->spec) : 1) + 11 + 3 * strlen(hg)
	    + 2 + (size_t) k2;
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
			p = j_encode(p, name);
		}
	} else {
		*p++ = ' ';
		p    = j_encode(p, name);
		memcpy(p, num, (size_t) k);
		p += k;
		if (r->kind == SV_J_GROUP || r->kind == SV_J_POOL) {
			*p++ = ' ';
			if (r->spec == NULL) {
				*p++ = '-';
			} else {
				p = j_encode(p, r->spec);
			}
		}
		if (r->kind == SV_J_LEASE) {
			*p++ = ' ';
			if (hg[0] == '\0') {
				*p++ = '-';
			} else {
				p = j_encode(p, hg);
			}
			memcpy(p, tail, (size_t) k2);
			p += k2;
		}
	}
	n = (size_t) (p - line);
	k = snprintf(p, cap - n, " %08" PRIx32 "\n", j_crc32(line, n));
	n += (size_t) k;
	if (n >= SV_JOURNAL_LINE_MAX) {
		free(line);
		return SV_EINVAL;
	}
	*linep = line;
	*lenp  = n;
	return SV_OK;
}

/* j_buf is a growing output buffer for snapshots. */
typedef struct j_buf {
	char  *p;
	size_t len, cap;
	sv_err err;
} j_buf;

/* j_put formats r and appends it to b (errors stick in b->err). */
static void
j_put(j_buf *b, const sv_jrec *r)
{
	char  *line;
	size_t n;

	if (b->err != SV_OK) {
		return;
	}
	if ((b->err = sv_journal_format(r, &line, &n)) != SV_OK) {
		return;
	}
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->len + n + 1) * 2;
		char  *p   = realloc(b->p, cap);
		if (p == NULL) {
			free(line);
			b->err = SV_ENOMEM;
			return;
		}
		b->p   = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, line, n + 1);
	b->len += n;
	free(line);
}

sv_err
sv_journal_snapshot(const sv_jstate *st, char **bufp, size_t *lenp)
{
	j_buf b = {NULL, 0, 0, SV_OK};

	*bufp = NULL;
	j_put(&b, &(sv_jrec) {.kind = SV_J_HEADER, .name = st->boot_id});
	if (st->epoch > 0) {
		j_put(&b,
		    &(sv_jrec) {.kind = SV_J_EPOCH,
		        .name         = st->supervisor_id,
		        .generation   = st->epoch});
	}
	for (size_t i = 0; i < st->ngroups; i++) {
		const sv_jgroup *g = &st->groups[i];
		j_put(&b,
		    &(sv_jrec) {.kind = SV_J_GROUP,
		        .name         = g->name,
		        .spec         = g->spec,
		        .count        = g->count,
		        .config_count = g->config_count});
		for (uint32_t o = 0; o < g->nseats; o++) {
			const sv_jseat *s = &g->seats[o];
			if (s->next_generation > 0) {
				j_put(&b,
				    &(sv_jrec) {.kind = SV_J_FLOOR,
				        .name         = g->name,
				        .ordinal      = o,
				        .generation   = s->next_generation});
			}
			if (s->spawning) {
				j_put(&b,
				    &(sv_jrec) {.kind = SV_J_SPAWNING,
				        .name         = g->name,
				        .ordinal      = o,
				        .generation = s->spawning_generation});
			}
			for (uint32_t k = 0; k < s->nprocs; k++) {
				const sv_jproc *p  = &s->procs[k];
				sv_jrec         pr = {.kind = SV_J_STARTED,
				            .name           = g->name,
				            .ordinal        = o,
				            .generation     = p->generation,
				            .pid            = p->pid,
				            .start_time     = p->start_time};
				j_put(&b, &pr);
				if (p->ready) {
					pr.kind = SV_J_READY;
					j_put(&b, &pr);
				}
				if (p->stopping) {
					pr.kind = SV_J_STOPPING;
					j_put(&b, &pr);
				}
			}
			if (s->released) { /* after S, which would clear it */
				j_put(&b,
				    &(sv_jrec) {.kind = SV_J_FREED,
				        .name         = g->name,
				        .ordinal      = o,
				        .generation   = s->next_generation});
			}
		}
	}
	for (size_t i = 0; i < st->npools; i++) {
		const sv_jpool *p = &st->pools[i];
		j_put(&b,
		    &(sv_jrec) {.kind = SV_J_POOL,
		        .name         = p->name,
		        .count        = p->slots,
		        .ttl_ms       = p->ttl_ms,
		        .grace_ms     = p->grace_ms,
		        .policy       = p->policy,
		        .directory    = p->directory,
		        .spec         = p->path});
	}
	for (size_t i = 0; i < st->nleases; i++) {
		const sv_jlease *l = &st->leases[i];
		j_put(&b,
		    &(sv_jrec) {.kind   = SV_J_LEASE,
		        .name           = sv_jlease_pool(st, l),
		        .ordinal        = l->slot,
		        .lease_id       = l->id,
		        .token          = l->token,
		        .holder_group   = sv_jlease_group(st, l),
		        .holder_ordinal = l->ordinal,
		        .generation     = l->generation,
		        .session        = l->session,
		        .session_uid    = l->session_uid,
		        .session_ttl    = l->session_ttl_ms});
	}
	if (b.err != SV_OK) {
		free(b.p);
		return b.err;
	}
	*bufp = b.p;
	*lenp = b.len;
	return SV_OK;
}
