/*
 * state.h — supervised's durable state: the journal file in the state
 * directory, its lock, and its compaction (effect shell around
 * core/journal.h; docs/durability.md says what it is for).
 *
 * STATE_DIR/supervised.lock is held (flock, exclusive) for the daemon's
 * whole life: a second daemon on the same state is refused, and a crashed
 * one's lock is gone with it, which is how a successor knows that the pid
 * file and sockets it finds are stale. STATE_DIR/state is the journal:
 * replaced whole (write a new file, rename it over) when the daemon takes
 * over and whenever it compacts; appended one record per write(2) between.
 *
 * The journal is written to survive the daemon's crash, not the machine's:
 * a record is in the page cache once write() returns, which a kill -9 does
 * not undo, and no worker survives a reboot anyway (the boot id tells). So
 * nothing is fsync'ed and the journal costs one small write per change.
 *
 * Durability can be lost while the daemon runs (a full or read-only
 * filesystem, an I/O error): appends stop at the last whole record, the
 * daemon goes on supervising, and a fresh snapshot, retried by the caller
 * (svd_state_retry), restores it. svd_state_durability says where it
 * stands; svd_state_watch is told of every change.
 */
#ifndef SVD_STATE_H
#define SVD_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/journal.h"
#include "supervise/supervise.h"

typedef struct svd_state svd_state;

/* Whether the journal on disk follows the daemon's state. */
typedef struct svd_durability {
	bool     ok; /* every change so far is in the journal */
	int      err; /* when !ok: the errno (ENOSPC, EROFS, EIO, ...) */
	uint64_t since_ms; /* wall clock (Unix ms) the condition began */
	char     detail[320]; /* when !ok: what failed, one line */
} svd_durability;

/* Told of every change of durability (lost, restored, or lost for another
 * reason); d belongs to the state and lives as long as it. */
typedef void (*svd_durability_cb)(void *arg, const svd_durability *d);

/*
 * svd_state_open takes the state directory dir (created 0700 if missing;
 * refused if it is not ours or others may write to it), locks it, and reads
 * the journal a predecessor left into *prev (empty, epoch 0, if there is
 * none; free it with sv_jstate_free). On SV_OK *sp belongs to the caller:
 * close it with svd_state_close. Errors, each with a one-line message in
 * err: SV_EBUSY (another daemon holds the lock), SV_EINVAL (the journal is
 * unreadable: it is left in place, untouched), SV_ESYSTEM.
 */
sv_err svd_state_open(const char *dir, svd_state **sp, sv_jstate *prev,
    char *err, size_t errlen);

/* svd_state_boot_id returns this boot's id ("" if unknown). */
const char *svd_state_boot_id(const svd_state *s);

/* svd_state_mirror is the state as the daemon has recorded it so far: the
 * caller builds the initial state into it before svd_state_begin. */
sv_jstate *svd_state_mirror(svd_state *s);

/*
 * svd_state_begin replaces the journal with a snapshot of the mirror (new
 * file, renamed over the old one) and opens it for appending. Errors:
 * SV_ESYSTEM (err says why; the old journal is left in place).
 */
sv_err svd_state_begin(svd_state *s, char *err, size_t errlen);

/*
 * svd_state_record applies r to the mirror and, once begun, appends it to
 * the journal, compacting it when it has grown well beyond the mirror. A
 * failed append cuts its partial record off, stops appending and loses
 * durability (svd_state_watch's callback is told; it logs): the daemon
 * goes on, supervision never stops for the journal's sake.
 */
void svd_state_record(svd_state *s, const sv_jrec *r);

/* svd_state_watch makes cb(arg, ...) be called at every change of the
 * durability (from svd_state_record or svd_state_retry). */
void svd_state_watch(svd_state *s, svd_durability_cb cb, void *arg);

/* svd_state_durability says whether the journal follows the state (owned by
 * s). Before svd_state_begin it reads as not ok with err 0. */
const svd_durability *svd_state_durability(const svd_state *s);

/*
 * svd_state_retry, while durability is lost, writes the mirror whole as a
 * fresh snapshot (renamed over the journal, after re-taking the lock if the
 * state directory's lock file is no longer the one held) and returns true
 * once durability is back; true at once when it was not lost. One attempt
 * per call: the caller spaces them (daemon/sup_durability.c).
 */
bool svd_state_retry(svd_state *s);

/* svd_state_close closes the journal and releases the lock. NULL is
 * ignored. */
void svd_state_close(svd_state *s);

#endif
