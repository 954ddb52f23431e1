/*
 * journal.h — the supervisor's durable state: record format and replay
 * (pure decision core; no I/O).
 *
 * A supervisor appends one line per change of what must outlive it: a new
 * epoch, a group's desired size (and, for a group created at runtime, its
 * spec), a process started (pid and kernel start time), ready, being
 * stopped, reaped. A new supervisor replays the lines into an sv_jstate:
 * which processes of the previous one may still be alive, which generation
 * each seat reached, how large each group was meant to be.
 *
 * Format (version 1), one record per line, fields separated by one space,
 * the last field the CRC-32 (8 lowercase hex digits) of everything before
 * the space that precedes it:
 *
 *   H 1 BOOT_ID                        header, always the first line
 *   E EPOCH SUPERVISOR_ID [CGTREE]     a supervisor took over the state;
 *                                      CGTREE: the name of its cgroup
 *                                      tree (shell/cgroup.h), in which
 *                                      each of its workers is born in a
 *                                      leaf of its own, so a successor
 *                                      can kill what it could not have
 *                                      recorded. Without it (older
 *                                      journals, or no per-worker
 *                                      cgroups) none is known
 *   G NAME COUNT CONFIG_COUNT SPEC     a group's desired size; SPEC "-" or
 *                                      the runtime group's config text
 *   D NAME                             the group was deleted
 *   N NAME ORDINAL NEXT_GENERATION     generation floor of a seat
 *   S NAME ORDINAL GEN                 about to spawn it (written before
 *                                      the spawn: a crash between the
 *                                      spawn and its P record leaves a
 *                                      process the successor must find,
 *                                      by its environment, or, if it has
 *                                      not exec'd yet, kill, by its
 *                                      leaf in CGTREE)
 *   P NAME ORDINAL GEN PID START       a process started
 *   R NAME ORDINAL GEN                 it reported ready
 *   T NAME ORDINAL GEN [DEADLINE]      the supervisor is stopping it;
 *                                      DEADLINE (absolute ms of
 *                                      CLOCK_MONOTONIC, this boot's) is
 *                                      when it will SIGKILL it: a
 *                                      successor keeps to it. Without
 *                                      DEADLINE (older journals, or
 *                                      SIGKILL already sent) it is
 *                                      unknown
 *   X NAME ORDINAL GEN                 it was reaped
 *   L POOL SLOT ID TOKEN GROUP ORDINAL GEN SESSION UID TTL [DEV INO]
 *                                      a lease granted or re-claimed
 *                                      (core/lease.h): its holder is the
 *                                      worker GROUP/ORDINAL@GEN, or, with
 *                                      GROUP "-", session SESSION of uid
 *                                      UID with TTL ms; a later L of the
 *                                      same pool and slot replaces it.
 *                                      DEV INO: the device and inode of
 *                                      the slot's file or directory the
 *                                      supervisor made (written only when
 *                                      INO is not 0; a record without
 *                                      them, as older journals have,
 *                                      means none is known)
 *   U POOL SLOT ID                     that lease ended
 *   O POOL SLOTS TTL GRACE POLICY DIR PATH
 *                                      a pool created at runtime
 *                                      (CreatePool): POLICY 0 keep, 1
 *                                      truncate, 2 remove; DIR 1 for
 *                                      directories; PATH "-" for none
 *
 * Strings are percent-encoded (every byte <= 0x20, '%' and >= 0x7f as %XX)
 * so a field never holds a space or a newline.
 *
 * Crash safety. Lines are appended with one write(2) each; a supervisor
 * killed at any instant leaves a prefix of whole lines, possibly followed
 * by one torn line. A last line without its newline or with a bad CRC is
 * therefore dropped (sv_jstate.torn says so); a bad line followed by a
 * good one is corruption, not a crash, and the whole journal is refused.
 * A file cut inside its header is refused too. Replaying never trusts a
 * number beyond its bound (groups, ordinals, lengths).
 *
 * In memory. The daemon keeps an sv_jstate of what it journaled (its
 * mirror, for compaction), so a live lease costs it memory twice, in the
 * lease core and here. Here a lease is a 64-byte record in a dense array
 * with a hash index by (pool, slot) (4-byte buckets, at most three quarters
 * full); pool and holder group names are stored once each, counted by the
 * leases naming them. The identity of a slot's resource (DEV INO) sits in
 * a side table, 16 bytes an entry, only for the leases that have one: a
 * lease on a pool without a path pays nothing for it. Applying an L or U
 * record costs O(1), not a scan.
 */
#ifndef SV_CORE_JOURNAL_H
#define SV_CORE_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "idmap.h"
#include "supervise/supervise.h"

/* Format version written in the header. */
#define SV_JOURNAL_VERSION 1
/* Longest line, newline included (a runtime group's spec is the bulk). */
#define SV_JOURNAL_LINE_MAX (200u * 1024u)
/* Most groups a journal may name (deleted ones are forgotten). */
#define SV_JOURNAL_MAX_GROUPS 256
/* Longest group name, terminator excluded. */
#define SV_JOURNAL_NAME_MAX 255
/* Longest runtime group spec, terminator excluded. */
#define SV_JOURNAL_SPEC_MAX (64u * 1024u)
/* Boot id and supervisor id: terminator excluded. */
#define SV_JOURNAL_ID_MAX 63
/* Longest cgroup tree name of an E record, terminator excluded. */
#define SV_JOURNAL_CGTREE_MAX 63
/* Live process records a seat may hold (current and old). */
#define SV_JOURNAL_SEAT_PROCS 2
/* Most live leases a journal may hold (256 pools of 4096 slots). */
#define SV_JOURNAL_MAX_LEASES (256u * 4096u)
/* Longest pool name and lease holder group name, terminator excluded. */
#define SV_JOURNAL_LEASE_NAME_MAX 64

/* A process the previous supervisor started and had not reaped. */
typedef struct sv_jproc {
	uint64_t generation;
	int64_t  pid;
	uint64_t start_time; /* /proc/PID/stat field 22, clock ticks */
	bool     ready;
	bool     stopping;
	uint64_t stop_deadline_ms; /* of the last T record; 0: unknown */
} sv_jproc;

/* A seat: the next generation it may use and its unreaped processes. */
typedef struct sv_jseat {
	uint64_t next_generation; /* 0: never used */
	uint64_t spawning_generation;
	uint32_t nprocs;
	bool     spawning; /* an S record without its P (or X) */
	bool     released; /* an F record since the seat's last S: its
	                    * ordinal is not wanted (drained, terminated,
	                    * completed) */
	sv_jproc  first; /* unreaped process 0 (sv_jseat_proc) */
	sv_jproc *second; /* unreaped process 1, allocated while the seat
	                   * has two (a roll's overlap, a stop outliving its
	                   * restart), else NULL; owned (fields in this
	                   * order: no padding; one per seat) */
} sv_jseat;

typedef struct sv_jgroup {
	char     *name; /* owned */
	char     *spec; /* owned; NULL: a group of the config file */
	uint32_t  count; /* desired size */
	uint32_t  config_count; /* the config's count when count was set */
	sv_jseat *seats; /* [nseats], indexed by ordinal; owned */
	uint32_t  nseats;
} sv_jgroup;

/* Most runtime pools a journal may hold (the lease core's bound). */
#define SV_JOURNAL_MAX_POOLS 256u
/* Longest pool path template, terminator excluded. */
#define SV_JOURNAL_PATH_MAX 1024u

/* A pool created at runtime (CreatePool), to be declared again. */
typedef struct sv_jpool {
	char     name[SV_JOURNAL_LEASE_NAME_MAX + 1];
	uint32_t slots;
	uint64_t ttl_ms, grace_ms;
	uint32_t policy; /* 0 keep, 1 truncate, 2 remove */
	bool     directory;
	char    *path; /* owned; NULL: none */
} sv_jpool;

/*
 * A lease the previous supervisor had granted and not seen end. Its pool
 * and its holder's group are names shared by many leases, so a lease holds
 * their ids in the state's name table (sv_jlease_pool and sv_jlease_group
 * give the strings back): 64 bytes a lease rather than two names inline.
 * The identity of the slot's resource, which only leases on pools with a
 * path have, is an id into the state's resource table (sv_jlease_res).
 */
typedef struct sv_jlease {
	uint64_t id;
	uint64_t token;
	uint64_t generation;
	uint64_t session; /* 0: a worker holder */
	uint64_t session_ttl_ms;
	uint32_t pool; /* name id, never 0 */
	uint32_t group; /* name id; 0: a session */
	uint32_t slot;
	uint32_t ordinal;
	uint32_t session_uid;
	uint32_t res; /* the slot's resource the supervisor made: entry
	               * res - 1 of sv_jstate.res; 0: none known */
} sv_jlease;

/* The identity of a slot's resource (its file or directory): device and
 * inode. An unused entry has ino 0 and dev the id of the next unused one
 * (0: the last). */
typedef struct sv_jres {
	uint64_t dev, ino;
} sv_jres;

/* A name of the lease table (pool or holder group): the string and the
 * number of live leases naming it; a name no lease names is freed. */
typedef struct sv_jname {
	char    *s; /* owned; NULL: a free entry */
	uint32_t refs;
	uint32_t hash;
} sv_jname;

/* The state a journal describes. Everything in it is owned by it. */
typedef struct sv_jstate {
	char     boot_id[SV_JOURNAL_ID_MAX + 1];
	uint64_t epoch; /* of the last E record; 0: none */
	char     supervisor_id[SV_JOURNAL_ID_MAX + 1];
	/* Of the last E record: its supervisor's cgroup tree name; "":
	 * none recorded. */
	char       cgroup_tree[SV_JOURNAL_CGTREE_MAX + 1];
	sv_jgroup *groups; /* [ngroups] */
	size_t     ngroups;
	size_t     nrecords; /* records replayed */
	size_t     nlive; /* unreaped processes over all seats */
	sv_jpool  *pools; /* [npools], runtime pools in creation order */
	size_t     npools;
	sv_jlease *leases; /* [nleases], live leases in no order */
	size_t     nleases;
	size_t     capleases;
	sv_idref   lease_index; /* (pool, slot) -> leases[] (idmap.h) */
	sv_jname  *lnames; /* [nlnames]: name id k is lnames[k - 1] */
	uint32_t   nlnames, caplnames;
	uint32_t   lnames_free; /* free entries among them */
	sv_idref   lname_index; /* string -> name id (idmap.h) */
	sv_jres   *res; /* [nres]: resource id k is res[k - 1] */
	uint32_t   nres, capres;
	uint32_t   res_free; /* id of the first unused entry; 0: none */
	bool       torn; /* a torn last line was dropped */
} sv_jstate;

/*
 * sv_jstate_init makes st an empty state for boot_id (may be ""). Free it
 * with sv_jstate_free. Errors: SV_EINVAL (boot_id too long).
 */
sv_err sv_jstate_init(sv_jstate *st, const char *boot_id);

/* sv_jstate_free frees what st owns and leaves it empty. */
void sv_jstate_free(sv_jstate *st);

/*
 * sv_journal_replay parses a whole journal (buf, len bytes; need not be
 * terminated) into *st, which it initialises; on SV_OK free it with
 * sv_jstate_free. On failure *st is empty and err (errlen bytes, always
 * terminated) says where and why, for example "line 7: bad checksum".
 * Errors: SV_EINVAL (not a journal, unsupported version, a corrupt record
 * before the last line, a bound exceeded), SV_ENOMEM.
 */
sv_err sv_journal_replay(
    const char *buf, size_t len, sv_jstate *st, char *err, size_t errlen);

/*
 * sv_jseat_proc returns unreaped process k (k < s->nprocs) of seat s; the
 * seat owns it.
 */
const sv_jproc *sv_jseat_proc(const sv_jseat *s, uint32_t k);

/*
 * sv_journal_apply parses one line (without its newline) and applies it to
 * st, as replay does; the daemon uses it to keep its own copy current.
 * Errors: SV_EINVAL (err says why), SV_ENOMEM.
 */
sv_err sv_journal_apply(
    sv_jstate *st, const char *line, size_t len, char *err, size_t errlen);

/* Kinds of records, named after their first letter. */
typedef enum sv_jkind {
	SV_J_HEADER   = 'H',
	SV_J_EPOCH    = 'E',
	SV_J_GROUP    = 'G',
	SV_J_DELETED  = 'D',
	SV_J_FLOOR    = 'N',
	SV_J_SPAWNING = 'S',
	SV_J_STARTED  = 'P',
	SV_J_READY    = 'R',
	SV_J_STOPPING = 'T',
	SV_J_REAPED   = 'X',
	SV_J_LEASE    = 'L',
	SV_J_UNLEASE  = 'U',
	SV_J_POOL     = 'O',
	SV_J_FREED    = 'F',
} sv_jkind;

/* One record, as a plain struct (unused fields are ignored). */
typedef struct sv_jrec {
	sv_jkind    kind;
	const char *name; /* group (G, D, N, P, R, T, X); boot id (H);
	                   * supervisor id (E); pool (L, U) */
	const char *spec; /* G: NULL for "-" */
	/* E: the supervisor's cgroup tree name (sv_journal_cgtree_ok); NULL
	 * or "": none, the field is not written. */
	const char *cgroup_tree;
	uint32_t    ordinal; /* slot (L, U) */
	uint32_t    count, config_count; /* G */
	uint64_t    generation; /* S P R T X; next generation (N); epoch (E);
	                         * the holder's generation (L) */
	int64_t     pid; /* P */
	uint64_t    start_time; /* P */
	uint64_t    deadline_ms; /* T: SIGKILL deadline; 0: none written */
	uint64_t    lease_id, token; /* L U (token: L only) */
	const char *holder_group; /* L: NULL or "" for a session holder */
	uint32_t    holder_ordinal; /* L */
	uint64_t    session; /* L: the session holder */
	uint32_t    session_uid; /* L */
	uint64_t    session_ttl; /* L */
	uint64_t    res_dev, res_ino; /* L: the resource made (ino 0: none) */
	/* O: count is the slots, spec the path (NULL: none) */
	uint64_t ttl_ms, grace_ms; /* O */
	uint32_t policy; /* O */
	bool     directory; /* O */
} sv_jrec;

/*
 * sv_journal_format writes record r as one line, newline included, into a
 * new buffer: on SV_OK *linep (free it) holds *lenp bytes, terminated.
 * Errors: SV_EINVAL (a string or number out of bounds), SV_ENOMEM.
 */
sv_err sv_journal_format(const sv_jrec *r, char **linep, size_t *lenp);

/*
 * sv_journal_snapshot writes st as a fresh journal (header, epoch, every
 * group, seat floors and unreaped processes, live leases), the form a
 * compaction writes. On SV_OK *bufp (free it) holds *lenp bytes. Errors:
 * SV_ENOMEM, SV_EINVAL (st holds something unformattable).
 */
sv_err sv_journal_snapshot(const sv_jstate *st, char **bufp, size_t *lenp);

/*
 * sv_journal_cgtree_ok tells whether s may be an E record's CGTREE: 1 to
 * SV_JOURNAL_CGTREE_MAX bytes of [A-Za-z0-9._-], not starting with '.'
 * (one directory name, never "." or ".."; the shell checks the exact form
 * of its trees again before it touches one).
 */
bool sv_journal_cgtree_ok(const char *s);

/* sv_jstate_group finds a group by name, or NULL. */
sv_jgroup *sv_jstate_group(const sv_jstate *st, const char *name);

/*
 * sv_jlease_pool returns the pool name of lease l of st, and
 * sv_jlease_group the name of its holder's group ("" for a session
 * holder). The strings belong to st and stay valid until st changes.
 */
const char *sv_jlease_pool(const sv_jstate *st, const sv_jlease *l);
const char *sv_jlease_group(const sv_jstate *st, const sv_jlease *l);

/* sv_jlease_res tells whether the identity of the resource of lease l's
 * slot is known and, if so, sets *devp and *inop to it (else to 0). */
bool sv_jlease_res(
    const sv_jstate *st, const sv_jlease *l, uint64_t *devp, uint64_t *inop);

/* sv_jstate_lease finds the live lease on slot `slot` of pool `pool`, or
 * NULL; valid until st changes. */
const sv_jlease *sv_jstate_lease(
    const sv_jstate *st, const char *pool, uint32_t slot);

#endif
