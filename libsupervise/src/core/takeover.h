/*
 * takeover.h — what a new supervisor does with its predecessor's workers
 * (pure decision core; no syscalls).
 *
 * A supervisor restarted on the same state directory finds, per seat of
 * the journal (core/journal.h), the processes its predecessor had started
 * and not reaped. The shell looks at each (is it still that very process:
 * same pid and kernel start time, and does it hold a pidfd of it) and
 * describes what it saw in plain structs; the functions here decide, for
 * every process and seat, one action with its reason:
 *
 *   ADOPT    the newest claimed generation of a seat the new config keeps:
 *            it becomes the seat's process (sv_core_restore with it);
 *   KILL     a claimed process nothing will adopt (its group is gone, its
 *            ordinal is beyond max_count, the group has
 *            die_with_supervisor, or a newer generation holds the seat);
 *   FORGET   a process that is no longer there (or, on a journal from
 *            another boot, cannot be), or one the shell could not claim
 *            (it may run, but without a pidfd it can be neither watched
 *            nor killed safely): left alone;
 *   RESPAWN  a kept seat with nothing to adopt: its next process is
 *            spawned with its generation continued.
 *
 * The shell carries the plan out in order (kills first, then the seat's
 * adoption or respawn) and, if an adoption fails on its side (no room to
 * track the process, no way to watch it), kills that process and treats
 * the seat as RESPAWN. docs/durability.md describes the takeover.
 */
#ifndef SV_CORE_TAKEOVER_H
#define SV_CORE_TAKEOVER_H

#include <stdbool.h>
#include <stdint.h>

#include "core/journal.h"
#include "supervise/supervise.h"

/* Most processes of one seat a plan considers: the journaled ones and the
 * one found by its environment (a spawn without its P record). */
#define SV_TAKEOVER_PROCS (SV_JOURNAL_SEAT_PROCS + 1)

/* One process of the predecessor: what the journal says of it, and what
 * the shell saw. */
typedef struct sv_to_proc {
	uint64_t generation;
	int64_t  pid;
	uint64_t start_time; /* kernel start time (shell/procinfo.h) */
	bool     ready; /* it had reported ready (R) */
	bool     stopping; /* the predecessor was stopping it (T) */
	uint64_t stop_deadline_ms; /* T's SIGKILL deadline; 0: unknown */
	bool     unrecorded; /* found by its environment (S without P) */
	/* What the shell saw (shell/procinfo.h, sv_proc_claim): */
	bool pidfd; /* it holds a pidfd of this very process (same pid and
	             * start time, alive): the process is claimed */
	bool gone; /* it knows the process is not there (exited, or its pid
	            * names another process); neither this nor pidfd: it
	            * could not tell (no pidfd to be had, /proc unreadable) */
} sv_to_proc;

/* One seat of the journal, and what the new config says of it. */
typedef struct sv_to_seat {
	bool     same_boot; /* the journal is from this boot */
	bool     configured; /* the new config has the seat's group */
	bool     in_range; /* configured, and ordinal < its max_count */
	bool     die_with_supervisor; /* the group's option */
	bool     released; /* an F record: the ordinal is not wanted */
	bool     spawning; /* an S record without its P */
	uint64_t next_generation; /* the seat's floor; 0: never used */
	const sv_to_proc *procs; /* [nprocs] */
	uint32_t          nprocs; /* at most SV_TAKEOVER_PROCS */
} sv_to_seat;

/* What the shell should look at before the plan is made. */
typedef struct sv_to_probe {
	bool claim; /* try to claim each journaled process */
	bool search; /* look for the unrecorded spawn by its environment */
} sv_to_probe;

typedef enum sv_to_action {
	SV_TO_ADOPT   = 1,
	SV_TO_KILL    = 2,
	SV_TO_FORGET  = 3,
	SV_TO_RESPAWN = 4,
} sv_to_action;

typedef enum sv_to_reason {
	SV_TOR_NEWEST = 1, /* ADOPT: the newest claimed generation */
	SV_TOR_GROUP_GONE, /* KILL: the group is no longer configured */
	SV_TOR_BEYOND_MAX, /* KILL: the ordinal is beyond max_count */
	SV_TOR_DIE_WITH_SUPERVISOR, /* KILL: the group has the option */
	SV_TOR_NEWER_HOLDS, /* KILL: a newer generation holds the seat */
	SV_TOR_GONE, /* FORGET: the claim failed (exited, pid reused) */
	SV_TOR_UNCLAIMABLE, /* FORGET: the shell could not tell (no pidfd) */
	SV_TOR_OTHER_BOOT, /* FORGET: the journal is from another boot */
	SV_TOR_NOTHING_ALIVE, /* RESPAWN: no process of the seat to adopt */
} sv_to_reason;

/* The last reason (for tables and tests). */
#define SV_TOR_LAST SV_TOR_NOTHING_ALIVE

/* Index of a step that concerns the seat, not one of its processes. */
#define SV_TO_SEAT UINT32_MAX

typedef struct sv_to_step {
	sv_to_action action;
	sv_to_reason reason;
	uint32_t     proc; /* index into sv_to_seat.procs, or SV_TO_SEAT */
} sv_to_step;

/* The plan for one seat. Steps are in the order to carry them out. */
typedef struct sv_to_plan {
	bool record_floor; /* journal the seat's floor (N) */
	bool release; /* restore the release before the seat (then
	               * journal F if the core took it) */
	bool apply_floor; /* RESPAWN: restore the floor in the core
	                   * (there is one to restore) */
	uint64_t   floor; /* the seat's next generation */
	sv_to_step steps[SV_TAKEOVER_PROCS + 1];
	uint32_t   nsteps;
} sv_to_plan;

/*
 * sv_takeover_probe says what the shell must observe of seat in before
 * sv_takeover_plan: whether claiming is worth trying (only on the same
 * boot) and whether to search for a spawn the predecessor began but did
 * not record. in->procs and in->nprocs are not read.
 */
void sv_takeover_probe(const sv_to_seat *in, sv_to_probe *out);

/*
 * sv_takeover_plan decides every process and the seat of in into *out.
 * Errors: SV_EINVAL (in->nprocs above SV_TAKEOVER_PROCS; *out is empty).
 */
sv_err sv_takeover_plan(const sv_to_seat *in, sv_to_plan *out);

/*
 * sv_takeover_size says whether a group's journaled size jcount is
 * restored: only if the config's count is still the one it was recorded
 * under (jconfig_count; an edited count wins), it differs from the
 * config's count, and it fits max_count.
 */
bool sv_takeover_size(uint32_t jcount, uint32_t jconfig_count,
    uint32_t config_count, uint32_t max_count);

/* sv_takeover_reason_text gives a reason as the log says it (static). */
const char *sv_takeover_reason_text(sv_to_reason r);

#endif
