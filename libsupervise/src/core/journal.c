/*
 * journal.c — the supervisor's journal: the state it describes (groups,
 * their seats and the processes on them, see journal.h for the format and
 * its crash-safety argument), applying one record to that state, and
 * replaying a whole journal.
 *
 * A record is checked whole (checksum, kind, fields, bounds) before it
 * changes anything; a refusal names the line and the reason. The lease
 * mirror (L, U and O records) is journal_leases.c; a line's codec is
 * journal_codec.c; compaction is journal_snapshot.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/journal_internal.h"
#include "core/ordinal.h"

/* ---- state --------------------------------------------------------------
 */

/* sv_jstate_init: see journal.h. */
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
	for (uint32_t o = 0; o < g->nseats; o++) {
		free(g->seats[o].second);
	}
	free(g->seats);
}

/* sv_jstate_free: see journal.h. */
void
sv_jstate_free(sv_jstate *st)
{
	for (size_t i = 0; i < st->ngroups; i++) {
		j_group_free(&st->groups[i]);
	}
	free(st->groups);
	svj_leases_free(st);
	memset(st, 0, sizeof(*st));
}

/* sv_jstate_group: see journal.h. */
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

/* sv_jseat_proc: see journal.h. */
const sv_jproc *
sv_jseat_proc(const sv_jseat *s, uint32_t k)
{
	return k == 0 ? &s->first : s->second;
}

/* j_proc finds the unreaped process of generation gen on seat s. */
static sv_jproc *
j_proc(sv_jseat *s, uint64_t gen)
{
	for (uint32_t i = 0; i < s->nprocs; i++) {
		sv_jproc *p = i == 0 ? &s->first : s->second;
		if (p->generation == gen) {
			return p;
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

/* ---- applying a record -------------------------------------------------
 */

/* j_apply_proc handles S, P, R, T, X and F, whose fields start NAME
 * ORDINAL GEN. */
static sv_err
j_apply_proc(sv_jstate *st, sv_jkind kind, const j_fields *fs,
    const char *name, char *err, size_t errlen)
{
	uint64_t   ord, gen, pid = 0, start = 0, deadline = 0;
	sv_jgroup *g;
	sv_jseat  *s;
	sv_jproc  *p;
	sv_err     rv;

	if (fs->count != (kind == SV_J_STARTED ? 6u : 4u)
	    && !(kind == SV_J_STOPPING && fs->count == 5)) {
		return svj_fail(err, errlen, "wrong number of fields");
	}
	if (fs->count == 5 && kind == SV_J_STOPPING
	    && (!svj_u64(fs->f[4], fs->n[4], UINT64_MAX, &deadline)
	        || deadline == 0)) {
		return svj_fail(err, errlen, "bad stop deadline");
	}
	if (!svj_u64(fs->f[2], fs->n[2], SV_ORDINALS_MAX - 1, &ord)
	    || !svj_u64(fs->f[3], fs->n[3], UINT64_MAX - 1, &gen)) {
		return svj_fail(err, errlen, "bad ordinal or generation");
	}
	if (kind == SV_J_STARTED
	    && (!svj_u64(fs->f[4], fs->n[4], INT32_MAX, &pid) || pid < 1
	        || !svj_u64(fs->f[5], fs->n[5], UINT64_MAX, &start))) {
		return svj_fail(err, errlen, "bad pid or start time");
	}
	if ((g = sv_jstate_group(st, name)) == NULL) {
		return svj_fail(err, errlen, "unknown group \"%s\"", name);
	}
	if ((rv = j_seat(g, (uint32_t) ord, &s)) != SV_OK) {
		return rv;
	}
	p = j_proc(s, gen);
	/* Room first: a seat's second process is allocated before any
	 * field changes, so an SV_ENOMEM leaves the mirror as it was. */
	if (kind == SV_J_STARTED && p == NULL && s->nprocs == 1
	    && s->second == NULL
	    && (s->second = malloc(sizeof(*s->second))) == NULL) {
		return SV_ENOMEM;
	}
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
			return svj_fail(err, errlen,
			    "generation %" PRIu64 " started twice", gen);
		}
		if (s->nprocs == SV_JOURNAL_SEAT_PROCS) {
			return svj_fail(err, errlen,
			    "more than %d unreaped processes on one seat",
			    SV_JOURNAL_SEAT_PROCS);
		}
		*(s->nprocs == 0 ? &s->first : s->second)
		    = (sv_jproc) {gen, (int64_t) pid, start, false, false};
		s->nprocs++;
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
				p->stopping         = true;
				p->stop_deadline_ms = deadline; /* 0: none */
			}
		}
		break;
	default: /* SV_J_REAPED */
		if (p != NULL) {
			*p = *sv_jseat_proc(s, --s->nprocs);
			st->nlive--;
			if (s->nprocs < SV_JOURNAL_SEAT_PROCS) {
				free(s->second); /* made again when needed */
				s->second = NULL;
			}
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
			return svj_fail(err, errlen, "wrong number of fields");
		}
		if (g != NULL) {
			j_group_forget(st, g);
		}
		return SV_OK;
	}
	if (kind == SV_J_FLOOR) {
		if (fs->count != 4
		    || !svj_u64(fs->f[2], fs->n[2], SV_ORDINALS_MAX - 1, &a)
		    || !svj_u64(fs->f[3], fs->n[3], UINT64_MAX, &b)) {
			return svj_fail(err, errlen, "bad generation floor");
		}
		if (g == NULL) {
			return svj_fail(
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
	if (fs->count != 5 || !svj_u64(fs->f[2], fs->n[2], SV_ORDINALS_MAX, &a)
	    || !svj_u64(fs->f[3], fs->n[3], SV_ORDINALS_MAX, &b)) {
		return svj_fail(err, errlen, "bad group record");
	}
	if (g == NULL) {
		if ((rv = j_group_add(st, name, &g)) != SV_OK) {
			return rv == SV_EEXHAUSTED
			    ? svj_fail(err, errlen, "more than %d groups",
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
		if (!svj_decode(
		        fs->f[4], fs->n[4], spec, SV_JOURNAL_SPEC_MAX + 1)) {
			free(spec);
			return svj_fail(err, errlen, "bad group spec");
		}
		free(g->spec);
		g->spec = spec;
	}
	return SV_OK;
}

/* sv_journal_cgtree_ok: see journal.h. */
bool
sv_journal_cgtree_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > SV_JOURNAL_CGTREE_MAX || s[0] == '.') {
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		        || (c >= '0' && c <= '9') || c == '.' || c == '_'
		        || c == '-')) {
			return false;
		}
	}
	return true;
}

/* j_apply_epoch applies an E record (fields fs, checksum removed): the
 * epoch, which must grow, the supervisor id and the optional cgroup tree
 * name (absent: none, so an older supervisor's E record clears it).
 * Checked whole before st changes. */
static sv_err
j_apply_epoch(sv_jstate *st, const j_fields *fs, char *err, size_t errlen)
{
	char     id[SV_JOURNAL_ID_MAX + 1];
	char     tree[SV_JOURNAL_CGTREE_MAX + 1] = "";
	uint64_t v;

	if ((fs->count != 3 && fs->count != 4)
	    || !svj_u64(fs->f[1], fs->n[1], UINT64_MAX, &v) || v <= st->epoch
	    || !svj_decode(fs->f[2], fs->n[2], id, sizeof(id))) {
		return svj_fail(
		    err, errlen, "bad epoch record (epochs must grow)");
	}
	if (fs->count == 4
	    && (!svj_decode(fs->f[3], fs->n[3], tree, sizeof(tree))
	        || !sv_journal_cgtree_ok(tree))) {
		return svj_fail(err, errlen, "bad cgroup tree name");
	}
	st->epoch = v;
	memcpy(st->supervisor_id, id, sizeof(id));
	memcpy(st->cgroup_tree, tree, sizeof(tree));
	return SV_OK;
}

/* sv_journal_apply: see journal.h. */
sv_err
sv_journal_apply(
    sv_jstate *st, const char *line, size_t len, char *err, size_t errlen)
{
	j_fields fs;
	uint64_t crc, v;
	sv_jkind kind;
	char     name[SV_JOURNAL_NAME_MAX + 1];

	if (len == 0 || len >= SV_JOURNAL_LINE_MAX) {
		return svj_fail(err, errlen, "empty or overlong line");
	}
	if (!svj_split(line, len, &fs) || fs.count < 2) {
		return svj_fail(err, errlen, "malformed line");
	}
	if (fs.n[fs.count - 1] != 8) {
		return svj_fail(err, errlen, "bad checksum");
	}
	crc = 0;
	for (size_t i = 0; i < 8; i++) {
		int d = svj_hexval(fs.f[fs.count - 1][i]);
		if (d < 0) {
			return svj_fail(err, errlen, "bad checksum");
		}
		crc = crc * 16 + (uint64_t) d;
	}
	if (crc != svj_crc32(line, (size_t) (fs.f[fs.count - 1] - line) - 1)) {
		return svj_fail(err, errlen, "bad checksum");
	}
	fs.count--; /* the checksum is done with */
	if (fs.n[0] != 1) {
		return svj_fail(err, errlen, "unknown record kind");
	}
	kind = (sv_jkind) fs.f[0][0];
	if (kind != SV_J_EPOCH && kind != SV_J_HEADER
	    && (fs.count < 2
	        || !svj_decode(fs.f[1], fs.n[1], name, sizeof(name)))) {
		return svj_fail(err, errlen, "bad group name");
	}
	st->nrecords++;
	switch (kind) {
	case SV_J_HEADER:
		if (fs.count != 3
		    || !svj_u64(fs.f[1], fs.n[1], UINT32_MAX, &v)) {
			return svj_fail(err, errlen, "bad header");
		}
		if (v != SV_JOURNAL_VERSION) {
			return svj_fail(err, errlen,
			    "journal format %" PRIu64 " (this is %d)", v,
			    SV_JOURNAL_VERSION);
		}
		if (!svj_decode(
		        fs.f[2], fs.n[2], st->boot_id, sizeof(st->boot_id))) {
			return svj_fail(err, errlen, "bad boot id");
		}
		return SV_OK;
	case SV_J_EPOCH:
		return j_apply_epoch(st, &fs, err, errlen);
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
		return svj_apply_lease(st, kind, &fs, name, err, errlen);
	case SV_J_POOL:
		return svj_apply_pool(st, &fs, name, err, errlen);
	default:
		return svj_fail(
		    err, errlen, "unknown record kind '%c'", (char) kind);
	}
}

/* sv_journal_replay: see journal.h. */
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
				return svj_fail(err, errlen,
				    "line 1: the header is incomplete");
			}
			st->torn = true;
			break;
		}
		if (lineno == 1 && (n < 1 || buf[pos] != SV_J_HEADER)) {
			sv_jstate_free(st);
			return svj_fail(
			    err, errlen, "line 1: not a supervised journal");
		}
		if (lineno > 1 && n > 0 && buf[pos] == SV_J_HEADER) {
			sv_jstate_free(st);
			return svj_fail(
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
			return svj_fail(
			    err, errlen, "line %zu: %s", lineno, why);
		}
		pos += n + 1;
	}
	if (lineno == 0) {
		sv_jstate_free(st);
		return svj_fail(err, errlen, "empty file");
	}
	return SV_OK;
}
