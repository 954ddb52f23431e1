/*
 * subworker.h — sub-ordinals of threads and forked children of a worker
 * process (pure decision core).
 *
 * A worker process (named by its kernel-verified key: group id, ordinal,
 * generation) may register sub-workers under it:
 *
 *   - a THREAD sub-worker: a thread of the process, registered by the
 *     process itself (its own connection) under a label the binding gives
 *     (the thread's name or role). The label is the key: claiming a label
 *     that is already held returns the same sub-ordinal (idempotent).
 *   - a CHILD sub-worker: a process forked by the worker (a Puma or Unicorn
 *     cluster worker under a supervised master). The child registers itself
 *     on its own connection; its kernel pid is the key and its kernel parent
 *     pid must be the worker's pid.
 *
 * Each kind has its own numbering 0..max-1 per process (so [p, thread 0]
 * and [p, process 0] may coexist); max is the group's bound (default
 * SV_SUBW_DEFAULT_MAX) and limits the live sub-workers of both kinds
 * together. Numbers are bounded and durable the way worker ordinals are
 * (core/ordinal.h):
 *
 *   - a claim takes the requested number if one is given (SV_ECONFLICT when
 *     another live sub-worker holds it), otherwise the number that the same
 *     label held last if it is free ("a sub-worker that comes back takes its
 *     number again", even when lower numbers are free), otherwise the lowest
 *     free number; never a number >= max (SV_EEXHAUSTED).
 *   - a number is released when its thread ends (the binding says so), when
 *     its child exits (the shell learns it from a pidfd), and all at once
 *     when the process dies (sv_subw_process_exited).
 *   - every claim of a number carries a sub-generation that strictly
 *     increases per (group, ordinal, kind, number) for the core's lifetime,
 *     across process generations; releases are fenced by it, so a stale or
 *     repeated release changes nothing.
 *   - the memory of which label held which number survives the process:
 *     the next generation of the same (group, ordinal) inherits it, so a
 *     restarted worker's threads get their numbers back by label.
 *
 * Nesting is two levels at most: [process p, thread t] or [process p,
 * process c]. A registered child that asks to register a thread or a child
 * of its own is refused with SV_ETOOLARGE (nesting over its bound); an
 * unregistered descendant is not a sub-worker at all (it keeps the worker's
 * v1 identity, docs/protocol.md section 6).
 *
 * The core never trusts message content for who is asking: every entry
 * takes the pids the shell read from the kernel (the connection's peer pid,
 * and for a child its parent pid), and the shell attaches each worker
 * process (key, pid) it knows from its own spawn records. It performs no
 * I/O, reads no clock and allocates only its own tables; the caller
 * serialises access. docs/subworkers.md has the model and the wire
 * proposal.
 */
#ifndef SV_CORE_SUBWORKER_H
#define SV_CORE_SUBWORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/pidmap.h"
#include "supervise/supervise.h"

/* Levels of a context: the process and one sub-worker under it. */
#define SV_SUBW_DEPTH 2u
/* Sub-workers of one process when its group sets no bound. */
#define SV_SUBW_DEFAULT_MAX 256u
/* Hard upper bound of a group's per-process bound. */
#define SV_SUBW_MAX 4096u
/* Longest label in bytes (no terminator, no NUL inside). */
#define SV_SUBW_LABEL_MAX 64u
/* Hard upper bound of the processes one core tracks (live and memory). */
#define SV_SUBW_MAX_PROCS 65536u

/* The two kinds of sub-worker. Values equal the protocol's WorkerKind. */
typedef enum sv_subw_kind {
	SV_SUBW_PROCESS = 1, /* a forked child (also: a process frame) */
	SV_SUBW_THREAD  = 2, /* a thread of the process */
} sv_subw_kind;

/* What a claim asks for. */
typedef struct sv_subw_request {
	const char *label; /* THREAD: required key; PROCESS: optional */
	size_t      label_len; /* bytes, <= SV_SUBW_LABEL_MAX */
	bool        has_number; /* a specific number is requested */
	uint32_t    number; /* the requested number, < the bound */
	int64_t     tid; /* THREAD: kernel tid if known, else 0 */
} sv_subw_request;

/*
 * A held sub-worker, as a claim returns it and as a release names it. The
 * pair (sub_ordinal, generation) fences releases like an ordinal token.
 */
typedef struct sv_subw_grant {
	sv_wkey      proc; /* the worker process it is under */
	int64_t      proc_pid; /* that process's pid */
	sv_subw_kind kind;
	uint32_t     sub_ordinal;
	uint64_t     generation; /* sub-generation of the number */
	int64_t      pid; /* PROCESS: the child's pid; THREAD: proc_pid */
	int64_t      tid; /* THREAD: the tid given at claim, or 0 */
	bool         again; /* the claim found it already held (re-claim) */
} sv_subw_grant;

/* One level of a context (the protocol's Frame, with a generation). */
typedef struct sv_subw_frame {
	sv_subw_kind kind;
	uint32_t     ordinal;
	uint64_t     generation;
	char         name[SV_SUBW_LABEL_MAX + 1]; /* NUL-terminated */
} sv_subw_frame;

struct sv_subw_proc; /* private to subworker.c */

/* Core state. Plain struct; fields are private to subworker.c. */
typedef struct sv_subworkers {
	struct sv_subw_proc *procs; /* [nprocs]; an index never moves */
	uint32_t             nprocs; /* entries in use (live or memory) */
	uint32_t             cap; /* allocated entries */
	uint32_t             hw; /* entries [0, hw) have held a process;
	                          * those past it are still zero */
	uint32_t  max_procs; /* bound of nprocs */
	uint64_t  deaths; /* orders memory entries for eviction */
	sv_pidmap by_pid; /* live worker pid -> {index, 0, 0} */
	sv_pidmap children; /* child pid -> {index, number, 0} */
} sv_subworkers;

/*
 * sv_subw_init prepares an empty core that tracks at most max_procs worker
 * processes (live ones and the label memory of dead ones). Free it with
 * sv_subw_fini. Errors: SV_EINVAL (max_procs 0 or above SV_SUBW_MAX_PROCS).
 */
sv_err sv_subw_init(sv_subworkers *s, uint32_t max_procs);

/* sv_subw_fini frees everything sv_subw_* allocated. Idempotent. */
void sv_subw_fini(sv_subworkers *s);

/*
 * sv_subw_attach declares a live worker process: key and pid as the shell
 * knows them from its spawn records, max its group's per-process bound
 * (0: SV_SUBW_DEFAULT_MAX). The shell calls it before a claim concerning
 * that process; attaching the same (key, pid) again is a no-op (the bound
 * of the first attach stays). A new generation of a (group, ordinal) whose
 * earlier process died inherits that process's label memory and
 * sub-generations. When the table is full, the oldest memory entry is
 * forgotten to make room.
 * Errors: SV_EINVAL (pid <= 0, max above SV_SUBW_MAX), SV_ECONFLICT (pid
 * attached under another key, key attached with another pid, or key already
 * dead: generations are never reused), SV_EEXHAUSTED (max_procs live
 * processes), SV_ENOMEM (the process is not attached; an evicted memory
 * entry stays forgotten).
 */
sv_err sv_subw_attach(
    sv_subworkers *s, sv_wkey key, int64_t pid, uint32_t max);

/*
 * sv_subw_claim_thread registers a thread of the process whose pid is
 * caller_pid (the peer pid of the connection the request came on) and
 * stores the grant in *g. Re-claiming a held label returns its grant with
 * g->again set, unchanged.
 * Errors: SV_EINVAL (label empty, too long or with a NUL; number >= the
 * bound), SV_ENOTWORKER (caller_pid is not an attached live worker),
 * SV_ETOOLARGE (caller_pid is a registered child: a third level),
 * SV_ECONFLICT (the requested number is held by another label; the label is
 * held under another number than the one requested; or the label is held by
 * another tid, both non-zero), SV_EEXHAUSTED (the process has max live
 * sub-workers or every thread number is held), SV_ENOMEM. *g is untouched
 * on error.
 */
sv_err sv_subw_claim_thread(sv_subworkers *s, int64_t caller_pid,
    const sv_subw_request *req, sv_subw_grant *g);

/*
 * sv_subw_claim_child registers the caller, a forked child of a worker,
 * under its parent: caller_pid and caller_ppid are the kernel's pid and
 * parent pid of the connection's peer. req->label is optional (memory
 * only); req->tid is ignored. A child that is already registered gets its
 * grant again (g->again).
 * Errors: SV_EINVAL (caller_pid <= 0, bad label, number >= the bound),
 * SV_ENOTWORKER (caller_ppid is not an attached live worker), SV_ETOOLARGE
 * (caller_ppid is itself a registered child), SV_EPERM (caller_pid is a
 * worker, or is registered under another process), SV_ECONFLICT (the
 * requested number is held by another child, or the child holds another
 * number), SV_EEXHAUSTED, SV_ENOMEM. *g is untouched on error.
 */
sv_err sv_subw_claim_child(sv_subworkers *s, int64_t caller_pid,
    int64_t caller_ppid, const sv_subw_request *req, sv_subw_grant *g);

/*
 * sv_subw_release ends the sub-worker g names (proc, kind, sub_ordinal,
 * generation), on behalf of caller_pid: a thread is released only by its
 * process (caller_pid == the process's pid), a child only by itself. A
 * stale grant (already released, or the number since claimed again) is a
 * successful no-op.
 * Errors: SV_EINVAL (bad kind), SV_ENOTFOUND (g->proc is not a live
 * attached process), SV_EPERM (the caller may not release it: another
 * process, a child releasing a thread, a process releasing its child).
 */
sv_err sv_subw_release(
    sv_subworkers *s, int64_t caller_pid, const sv_subw_grant *g);

/*
 * sv_subw_child_exited releases the number of the registered child pid,
 * which the shell saw exit (its pidfd became readable, or it was reaped).
 * Returns whether pid was a registered child.
 */
bool sv_subw_child_exited(sv_subworkers *s, int64_t pid);

/*
 * sv_subw_process_exited reclaims every sub-ordinal of the worker process
 * key in one call, when the shell has reaped it. The pids of its children
 * that were still registered (now orphans, which the shell stops watching)
 * are written to out (capacity cap) and *nchildren gets their total count
 * (which may exceed cap); out may be NULL when cap is 0. Its label memory
 * is kept for its next generation. Reclaiming a process that is already
 * dead is a no-op (*nchildren = 0).
 * Errors: SV_ENOTFOUND (key was never attached, or its memory was evicted).
 */
sv_err sv_subw_process_exited(sv_subworkers *s, sv_wkey key, int64_t *out,
    size_t cap, size_t *nchildren);

/*
 * sv_subw_find_child finds the registered child pid and stores its grant in
 * *g: what WhoAmI answers a registered child. Returns false (and leaves *g)
 * when pid is not a registered child.
 */
bool sv_subw_find_child(const sv_subworkers *s, int64_t pid, sv_subw_grant *g);

/*
 * sv_subw_held tells whether number of the given kind is held under the
 * live process key (false for unknown processes and out-of-range values).
 */
bool sv_subw_held(
    const sv_subworkers *s, sv_wkey key, sv_subw_kind kind, uint32_t number);

/*
 * sv_subw_count stores how many threads and children are registered under
 * the live process key. Errors: SV_ENOTFOUND (not a live attached process).
 */
sv_err sv_subw_count(const sv_subworkers *s, sv_wkey key, uint32_t *threads,
    uint32_t *children);

/*
 * sv_subw_context computes the context frames of the live sub-worker g,
 * outermost first: out[0] = {PROCESS, process ordinal, its generation,
 * group}, out[1] = {THREAD or PROCESS, sub_ordinal, sub-generation, label}
 * (for a child without a label, the group). *n gets SV_SUBW_DEPTH. The
 * shell copies them into Identity.context; Identity.parent is out[0].
 * group is copied up to SV_SUBW_LABEL_MAX bytes.
 * Errors: SV_ENOTFOUND (g is not a current grant of a live process),
 * SV_EINVAL (group NULL).
 */
sv_err sv_subw_context(const sv_subworkers *s, const sv_subw_grant *g,
    const char *group, sv_subw_frame out[SV_SUBW_DEPTH], size_t *n);

#endif /* SV_CORE_SUBWORKER_H */
