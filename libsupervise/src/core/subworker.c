/*
 * subworker.c — sub-ordinals of threads and children (see subworker.h for
 * the rules).
 *
 * Representation: an array of process entries whose indices never move
 * (the array grows by doubling, entries are reused in place). An entry is
 * live (its process runs) or memory (its process died; it keeps the labels
 * and sub-generations for the next generation of its (group, ordinal)).
 * Each entry has two spaces of numbered slots, children and threads, grown
 * by doubling up to the process's bound; a free slot keeps the label of its
 * last holder, which is the label memory. Two pid maps make the frequent
 * lookups O(1): a live worker's pid to its entry, and a registered child's
 * pid to (entry, number). Scans over the entries happen only on attach,
 * process exit and refusals; scans over a space are bounded by SV_SUBW_MAX.
 */
#include <stdlib.h>
#include <string.h>

#include "core/subworker.h"

/* The smallest space allocated for a kind. */
#define SUBW_MIN_SLOTS 8u

typedef struct sv_subw_slot {
	uint64_t cur_gen; /* generation of the current (or last) holder */
	uint64_t next_gen; /* generation the next holder gets */
	int64_t  pid; /* PROCESS: the child's pid */
	int64_t  tid; /* THREAD: the tid given at claim, or 0 */
	uint8_t  held;
	uint8_t  label_len; /* held: the holder's label; free: the last one */
	char     label[SV_SUBW_LABEL_MAX];
} sv_subw_slot;

typedef struct sv_subw_space {
	sv_subw_slot *slots; /* [cap] */
	uint32_t      cap;
	uint32_t      held;
} sv_subw_space;

struct sv_subw_proc {
	sv_wkey       key;
	int64_t       pid; /* live: the process's pid; memory: 0 */
	uint32_t      max; /* live sub-workers (both kinds) and numbers */
	bool          used; /* the entry holds a process (live or memory) */
	bool          live;
	uint64_t      died; /* memory: order of death, for eviction */
	sv_subw_space sp[2]; /* [0] children, [1] threads */
};

typedef struct sv_subw_proc sv_subw_proc;

/* subw_space returns the space of kind in p (kind already validated). */
static sv_subw_space *
subw_space(sv_subw_proc *p, sv_subw_kind kind)
{
	return &p->sp[kind == SV_SUBW_THREAD ? 1 : 0];
}

static bool
subw_kind_ok(sv_subw_kind kind)
{
	return kind == SV_SUBW_PROCESS || kind == SV_SUBW_THREAD;
}

static bool
subw_key_eq(sv_wkey a, sv_wkey b)
{
	return a.group_id == b.group_id && a.ordinal == b.ordinal
	    && a.generation == b.generation;
}

/* subw_entry_clear frees the spaces of an entry and marks it unused. */
static void
subw_entry_clear(sv_subw_proc *p)
{
	free(p->sp[0].slots);
	free(p->sp[1].slots);
	memset(p, 0, sizeof(*p));
}

sv_err
sv_subw_init(sv_subworkers *s, uint32_t max_procs)
{
	memset(s, 0, sizeof(*s));
	if (max_procs == 0 || max_procs > SV_SUBW_MAX_PROCS) {
		return SV_EINVAL;
	}
	s->max_procs = max_procs;
	sv_pidmap_init(&s->by_pid);
	sv_pidmap_init(&s->children);
	return SV_OK;
}

void
sv_subw_fini(sv_subworkers *s)
{
	for (uint32_t i = 0; i < s->hw; i++) {
		subw_entry_clear(&s->procs[i]);
	}
	free(s->procs);
	sv_pidmap_fini(&s->by_pid);
	sv_pidmap_fini(&s->children);
	memset(s, 0, sizeof(*s));
}

/* subw_find_key returns the entry of key (live or memory), or NULL. */
static sv_subw_proc *
subw_find_key(const sv_subworkers *s, sv_wkey key)
{
	for (uint32_t i = 0; i < s->hw; i++) {
		sv_subw_proc *p = &s->procs[i];
		if (p->used && subw_key_eq(p->key, key)) {
			return p;
		}
	}
	return NULL;
}

/*
 * subw_find_live returns the live entry of key, trying the entry of
 * hint_pid (a worker's or a child's pid) first and scanning otherwise.
 */
static sv_subw_proc *
subw_find_live(const sv_subworkers *s, sv_wkey key, int64_t hint_pid)
{
	sv_wkey at;
	if (hint_pid > 0
	    && (sv_pidmap_get(&s->by_pid, hint_pid, &at)
	        || sv_pidmap_get(&s->children, hint_pid, &at))
	    && at.group_id < s->cap) {
		sv_subw_proc *p = &s->procs[at.group_id];
		if (p->used && p->live && subw_key_eq(p->key, key)) {
			return p;
		}
	}
	sv_subw_proc *p = subw_find_key(s, key);
	return p != NULL && p->live ? p : NULL;
}

/* subw_live_by_pid returns the live worker entry whose pid is pid. */
static sv_subw_proc *
subw_live_by_pid(const sv_subworkers *s, int64_t pid)
{
	sv_wkey at;
	if (pid <= 0 || !sv_pidmap_get(&s->by_pid, pid, &at)
	    || at.group_id >= s->cap) {
		return NULL;
	}
	return &s->procs[at.group_id];
}

/*
 * subw_free_entry picks an entry for a new process: an unused one, a new
 * one (growing the array), or the oldest memory entry, which is forgotten.
 * Returns its index in *idx. Errors: SV_EEXHAUSTED, SV_ENOMEM.
 */
static sv_err
subw_free_entry(sv_subworkers *s, uint32_t *idx)
{
	for (uint32_t i = 0; s->procs != NULL && i < s->hw; i++) {
		if (!s->procs[i].used) {
			*idx = i;
			return SV_OK;
		}
	}
	/* Past hw every entry is unused (zero): the first of them. */
	if (s->hw < s->cap) {
		*idx = s->hw++;
		return SV_OK;
	}
	if (s->cap < s->max_procs) {
		uint32_t ncap = s->cap == 0 ? 16u : s->cap * 2u;
		if (ncap > s->max_procs) {
			ncap = s->max_procs;
		}
		/* calloc and a copy rather than realloc and memset, and no
		 * scan past hw: the unused tail of a large array is then
		 * never touched (fresh zero pages), so it takes no memory
		 * until used. */
		sv_subw_proc *np = calloc(ncap, sizeof(*np));
		if (np == NULL) {
			return SV_ENOMEM;
		}
		if (s->procs != NULL) {
			memcpy(np, s->procs, s->cap * sizeof(*np));
		}
		free(s->procs);
		s->procs = np;
		*idx     = s->cap;
		s->hw    = s->cap + 1;
		s->cap   = ncap;
		return SV_OK;
	}
	uint32_t best = UINT32_MAX;
	for (uint32_t i = 0; s->procs != NULL && i < s->hw; i++) {
		const sv_subw_proc *p = &s->procs[i];
		if (p->used && !p->live
		    && (best == UINT32_MAX || p->died < s->procs[best].died)) {
			best = i;
		}
	}
	if (best == UINT32_MAX) {
		return SV_EEXHAUSTED;
	}
	subw_entry_clear(&s->procs[best]);
	s->nprocs--;
	*idx = best;
	return SV_OK;
}

sv_err
sv_subw_attach(sv_subworkers *s, sv_wkey key, int64_t pid, uint32_t max)
{
	if (pid <= 0 || max > SV_SUBW_MAX) {
		return SV_EINVAL;
	}
	if (max == 0) {
		max = SV_SUBW_DEFAULT_MAX;
	}
	sv_subw_proc *p = subw_find_key(s, key);
	if (p != NULL) {
		return p->live && p->pid == pid ? SV_OK : SV_ECONFLICT;
	}
	if (subw_live_by_pid(s, pid) != NULL
	    || sv_pidmap_get(&s->children, pid, &(sv_wkey) {0})) {
		return SV_ECONFLICT;
	}
	/* The memory of an earlier generation of the same seat, if any. */
	uint32_t idx   = UINT32_MAX;
	uint64_t older = 0;
	for (uint32_t i = 0; s->procs != NULL && i < s->hw; i++) {
		const sv_subw_proc *q = &s->procs[i];
		if (q->used && !q->live && q->key.group_id == key.group_id
		    && q->key.ordinal == key.ordinal
		    && q->key.generation < key.generation
		    && (idx == UINT32_MAX || q->key.generation > older)) {
			idx   = i;
			older = q->key.generation;
		}
	}
	bool inherit = idx != UINT32_MAX;
	if (!inherit) {
		sv_err err = subw_free_entry(s, &idx);
		if (err != SV_OK) {
			return err;
		}
	}
	sv_err err = sv_pidmap_put(&s->by_pid, pid, (sv_wkey) {idx, 0, 0});
	if (err != SV_OK) {
		return err;
	}
	p = &s->procs[idx];
	if (!inherit) {
		memset(p, 0, sizeof(*p));
		s->nprocs++;
	}
	p->key  = key;
	p->pid  = pid;
	p->max  = max;
	p->used = true;
	p->live = true;
	p->died = 0;
	return SV_OK;
}

/* subw_label_ok checks a label's length and that it has no NUL. */
static bool
subw_label_ok(const sv_subw_request *req, bool required)
{
	if (req->label_len > SV_SUBW_LABEL_MAX
	    || (req->label_len > 0 && req->label == NULL)) {
		return false;
	}
	if (req->label_len == 0) {
		return !required;
	}
	return memchr(req->label, '\0', req->label_len) == NULL;
}

static bool
subw_label_eq(const sv_subw_slot *sl, const sv_subw_request *req)
{
	return req->label_len > 0 && sl->label_len == req->label_len
	    && memcmp(sl->label, req->label, req->label_len) == 0;
}

/* subw_fill writes the grant of slot number n of kind in p. */
static void
subw_fill(const sv_subw_proc *p, sv_subw_kind kind, uint32_t n,
    const sv_subw_slot *sl, bool again, sv_subw_grant *g)
{
	g->proc        = p->key;
	g->proc_pid    = p->pid;
	g->kind        = kind;
	g->sub_ordinal = n;
	g->generation  = sl->cur_gen;
	g->pid         = kind == SV_SUBW_PROCESS ? sl->pid : p->pid;
	g->tid         = kind == SV_SUBW_THREAD ? sl->tid : 0;
	g->again       = again;
}

/* subw_grow makes sp hold at least need slots (need <= SV_SUBW_MAX). */
static sv_err
subw_grow(sv_subw_space *sp, uint32_t need)
{
	if (need <= sp->cap) {
		return SV_OK;
	}
	uint32_t ncap = sp->cap < SUBW_MIN_SLOTS ? SUBW_MIN_SLOTS : sp->cap;
	while (ncap < need) {
		ncap *= 2u;
	}
	sv_subw_slot *ns = realloc(sp->slots, ncap * sizeof(*ns));
	if (ns == NULL) {
		return SV_ENOMEM;
	}
	memset(ns + sp->cap, 0, (ncap - sp->cap) * sizeof(*ns));
	sp->slots = ns;
	sp->cap   = ncap;
	return SV_OK;
}

/*
 * subw_pick chooses the number for a new sub-worker of kind in p: the
 * requested one, the one its label held last, or the lowest free one.
 */
static sv_err
subw_pick(sv_subw_proc *p, sv_subw_space *sp, const sv_subw_request *req,
    uint32_t *n)
{
	if (req->has_number) {
		if (req->number < sp->cap && sp->slots[req->number].held) {
			return SV_ECONFLICT;
		}
		*n = req->number;
		return SV_OK;
	}
	uint32_t lim = sp->cap < p->max ? sp->cap : p->max;
	for (uint32_t i = 0; i < lim; i++) {
		if (!sp->slots[i].held && subw_label_eq(&sp->slots[i], req)) {
			*n = i;
			return SV_OK;
		}
	}
	for (uint32_t i = 0; i < lim; i++) {
		if (!sp->slots[i].held) {
			*n = i;
			return SV_OK;
		}
	}
	if (sp->cap < p->max) {
		*n = sp->cap;
		return SV_OK;
	}
	return SV_EEXHAUSTED;
}

/*
 * subw_take claims a new number of kind in p for req (child_pid for a
 * child) and fills *g. The caller has checked that req is not a re-claim.
 */
static sv_err
subw_take(sv_subworkers *s, uint32_t idx, sv_subw_kind kind,
    const sv_subw_request *req, int64_t child_pid, sv_subw_grant *g)
{
	sv_subw_proc  *p  = &s->procs[idx];
	sv_subw_space *sp = subw_space(p, kind);
	if (p->sp[0].held + p->sp[1].held >= p->max) {
		return SV_EEXHAUSTED;
	}
	uint32_t n;
	sv_err   err = subw_pick(p, sp, req, &n);
	if (err != SV_OK) {
		return err;
	}
	err = subw_grow(sp, n + 1u);
	if (err != SV_OK) {
		return err;
	}
	if (kind == SV_SUBW_PROCESS) {
		err = sv_pidmap_put(
		    &s->children, child_pid, (sv_wkey) {idx, n, 0});
		if (err != SV_OK) {
			return err;
		}
	}
	sv_subw_slot *sl = &sp->slots[n];
	sl->held         = 1;
	sl->cur_gen      = sl->next_gen++;
	sl->pid          = kind == SV_SUBW_PROCESS ? child_pid : 0;
	sl->tid          = kind == SV_SUBW_THREAD ? req->tid : 0;
	sl->label_len    = (uint8_t) req->label_len;
	if (req->label_len > 0) {
		memcpy(sl->label, req->label, req->label_len);
	}
	sp->held++;
	subw_fill(p, kind, n, sl, false, g);
	return SV_OK;
}

/* subw_is_child tells whether pid is a registered child. */
static bool
subw_is_child(const sv_subworkers *s, int64_t pid)
{
	sv_wkey at;
	return pid > 0 && sv_pidmap_get(&s->children, pid, &at);
}

sv_err
sv_subw_claim_thread(sv_subworkers *s, int64_t caller_pid,
    const sv_subw_request *req, sv_subw_grant *g)
{
	if (!subw_label_ok(req, true) || req->tid < 0) {
		return SV_EINVAL;
	}
	sv_subw_proc *p = subw_live_by_pid(s, caller_pid);
	if (p == NULL) {
		return subw_is_child(s, caller_pid) ? SV_ETOOLARGE
		                                    : SV_ENOTWORKER;
	}
	if (req->has_number && req->number >= p->max) {
		return SV_EINVAL;
	}
	sv_subw_space *sp = subw_space(p, SV_SUBW_THREAD);
	for (uint32_t i = 0; i < sp->cap; i++) {
		sv_subw_slot *sl = &sp->slots[i];
		if (!sl->held || !subw_label_eq(sl, req)) {
			continue;
		}
		if ((req->has_number && req->number != i)
		    || (req->tid != 0 && sl->tid != 0
		        && req->tid != sl->tid)) {
			return SV_ECONFLICT;
		}
		if (sl->tid == 0) {
			sl->tid = req->tid;
		}
		subw_fill(p, SV_SUBW_THREAD, i, sl, true, g);
		return SV_OK;
	}
	return subw_take(
	    s, (uint32_t) (p - s->procs), SV_SUBW_THREAD, req, 0, g);
}

sv_err
sv_subw_claim_child(sv_subworkers *s, int64_t caller_pid, int64_t caller_ppid,
    const sv_subw_request *req, sv_subw_grant *g)
{
	if (caller_pid <= 0 || !subw_label_ok(req, false)) {
		return SV_EINVAL;
	}
	if (subw_live_by_pid(s, caller_pid) != NULL) {
		return SV_EPERM; /* a worker is not its own sub-worker */
	}
	sv_subw_proc *p = subw_live_by_pid(s, caller_ppid);
	if (p == NULL) {
		return subw_is_child(s, caller_ppid) ? SV_ETOOLARGE
		                                     : SV_ENOTWORKER;
	}
	if (req->has_number && req->number >= p->max) {
		return SV_EINVAL;
	}
	uint32_t idx = (uint32_t) (p - s->procs);
	sv_wkey  at;
	if (sv_pidmap_get(&s->children, caller_pid, &at)) {
		if (at.group_id != idx) {
			return SV_EPERM; /* registered under another process */
		}
		if (req->has_number && req->number != at.ordinal) {
			return SV_ECONFLICT;
		}
		const sv_subw_slot *sl = &p->sp[0].slots[at.ordinal];
		subw_fill(p, SV_SUBW_PROCESS, at.ordinal, sl, true, g);
		return SV_OK;
	}
	return subw_take(s, idx, SV_SUBW_PROCESS, req, caller_pid, g);
}

/* subw_current returns the held slot g names in p, or NULL if stale. */
static sv_subw_slot *
subw_current(sv_subw_proc *p, const sv_subw_grant *g)
{
	sv_subw_space *sp = subw_space(p, g->kind);
	if (g->sub_ordinal >= sp->cap) {
		return NULL;
	}
	sv_subw_slot *sl = &sp->slots[g->sub_ordinal];
	return sl->held && sl->cur_gen == g->generation ? sl : NULL;
}

/* subw_drop frees a held slot of kind in p (the label stays as memory). */
static void
subw_drop(
    sv_subworkers *s, sv_subw_proc *p, sv_subw_kind kind, sv_subw_slot *sl)
{
	if (kind == SV_SUBW_PROCESS) {
		sv_pidmap_del(&s->children, sl->pid);
	}
	sl->held = 0;
	sl->pid  = 0;
	sl->tid  = 0;
	subw_space(p, kind)->held--;
}

sv_err
sv_subw_release(sv_subworkers *s, int64_t caller_pid, const sv_subw_grant *g)
{
	if (!subw_kind_ok(g->kind)) {
		return SV_EINVAL;
	}
	sv_subw_proc *p = subw_find_live(s, g->proc, caller_pid);
	if (p == NULL) {
		return SV_ENOTFOUND;
	}
	sv_subw_slot *sl = subw_current(p, g);
	if (g->kind == SV_SUBW_THREAD) {
		if (caller_pid != p->pid) {
			return SV_EPERM;
		}
	} else if (caller_pid == p->pid
	    || (sl != NULL && sl->pid != caller_pid)) {
		return SV_EPERM;
	}
	if (sl != NULL) {
		subw_drop(s, p, g->kind, sl);
	}
	return SV_OK;
}

bool
sv_subw_child_exited(sv_subworkers *s, int64_t pid)
{
	sv_wkey at;
	if (pid <= 0 || !sv_pidmap_get(&s->children, pid, &at)
	    || at.group_id >= s->cap) {
		return false;
	}
	sv_subw_proc  *p  = &s->procs[at.group_id];
	sv_subw_space *sp = &p->sp[0];
	if (at.ordinal >= sp->cap || !sp->slots[at.ordinal].held
	    || sp->slots[at.ordinal].pid != pid) {
		sv_pidmap_del(&s->children, pid); /* cannot happen; heal */
		return false;
	}
	subw_drop(s, p, SV_SUBW_PROCESS, &sp->slots[at.ordinal]);
	return true;
}

sv_err
sv_subw_process_exited(
    sv_subworkers *s, sv_wkey key, int64_t *out, size_t cap, size_t *nchildren)
{
	*nchildren      = 0;
	sv_subw_proc *p = subw_find_key(s, key);
	if (p == NULL) {
		return SV_ENOTFOUND;
	}
	if (!p->live) {
		return SV_OK;
	}
	size_t n = 0;
	for (int k = 0; k < 2; k++) {
		sv_subw_kind kind = k == 0 ? SV_SUBW_PROCESS : SV_SUBW_THREAD;
		sv_subw_space *sp = &p->sp[k];
		for (uint32_t i = 0; i < sp->cap; i++) {
			sv_subw_slot *sl = &sp->slots[i];
			if (!sl->held) {
				continue;
			}
			if (kind == SV_SUBW_PROCESS) {
				if (n < cap) {
					out[n] = sl->pid;
				}
				n++;
			}
			subw_drop(s, p, kind, sl);
		}
	}
	sv_pidmap_del(&s->by_pid, p->pid);
	p->pid     = 0;
	p->live    = false;
	p->died    = ++s->deaths;
	*nchildren = n;
	return SV_OK;
}

bool
sv_subw_find_child(const sv_subworkers *s, int64_t pid, sv_subw_grant *g)
{
	sv_wkey at;
	if (pid <= 0 || !sv_pidmap_get(&s->children, pid, &at)
	    || at.group_id >= s->cap) {
		return false;
	}
	const sv_subw_proc  *p  = &s->procs[at.group_id];
	const sv_subw_space *sp = &p->sp[0];
	if (at.ordinal >= sp->cap || !sp->slots[at.ordinal].held) {
		return false;
	}
	subw_fill(
	    p, SV_SUBW_PROCESS, at.ordinal, &sp->slots[at.ordinal], false, g);
	return true;
}

bool
sv_subw_held(
    const sv_subworkers *s, sv_wkey key, sv_subw_kind kind, uint32_t number)
{
	if (!subw_kind_ok(kind)) {
		return false;
	}
	sv_subw_proc *p = subw_find_live(s, key, 0);
	if (p == NULL) {
		return false;
	}
	const sv_subw_space *sp = subw_space(p, kind);
	return number < sp->cap && sp->slots[number].held;
}

sv_err
sv_subw_count(
    const sv_subworkers *s, sv_wkey key, uint32_t *threads, uint32_t *children)
{
	const sv_subw_proc *p = subw_find_live(s, key, 0);
	if (p == NULL) {
		return SV_ENOTFOUND;
	}
	*threads  = p->sp[1].held;
	*children = p->sp[0].held;
	return SV_OK;
}

/* subw_name copies up to SV_SUBW_LABEL_MAX bytes of src into a frame. */
static void
subw_name(sv_subw_frame *f, const char *src, size_t len)
{
	if (len > SV_SUBW_LABEL_MAX) {
		len = SV_SUBW_LABEL_MAX;
	}
	memcpy(f->name, src, len);
	f->name[len] = '\0';
}

sv_err
sv_subw_context(const sv_subworkers *s, const sv_subw_grant *g,
    const char *group, sv_subw_frame out[SV_SUBW_DEPTH], size_t *n)
{
	if (group == NULL || !subw_kind_ok(g->kind)) {
		return SV_EINVAL;
	}
	sv_subw_proc *p = subw_find_live(s, g->proc, g->pid);
	if (p == NULL) {
		return SV_ENOTFOUND;
	}
	const sv_subw_slot *sl = subw_current(p, g);
	if (sl == NULL || (g->kind == SV_SUBW_PROCESS && sl->pid != g->pid)) {
		return SV_ENOTFOUND;
	}
	size_t glen       = strnlen(group, SV_SUBW_LABEL_MAX);
	out[0].kind       = SV_SUBW_PROCESS;
	out[0].ordinal    = p->key.ordinal;
	out[0].generation = p->key.generation;
	subw_name(&out[0], group, glen);
	out[1].kind       = g->kind;
	out[1].ordinal    = g->sub_ordinal;
	out[1].generation = sl->cur_gen;
	if (sl->label_len > 0) {
		subw_name(&out[1], sl->label, sl->label_len);
	} else {
		subw_name(&out[1], group, glen);
	}
	*n = SV_SUBW_DEPTH;
	return SV_OK;
}
