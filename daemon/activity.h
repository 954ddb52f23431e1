/*
 * activity.h — supervised's side of worker activity (docs/activity.md):
 * one region file per spawned worker, handed to it as SUPERVISE_ACTIVITY,
 * read back into WorkerStatus, removed after the reap.
 *
 * Design. The files live in SOCKET_DIR/activity (mode 0711, the daemon's:
 * a worker of another user can open its own file by name but cannot list,
 * create, rename or remove anything there). A file is created empty, mode
 * 0600, owned by the worker's user when the group sets `user`; the worker's
 * sv_activity_region_open sizes and initialises it. The daemon keeps a
 * read-only descriptor and reads the region with pread into its own
 * aligned buffer, never through a mapping, so a worker that shrinks its
 * file cannot raise SIGBUS in the daemon (a short read is an INVALID view).
 *
 * No timer: a region is read when a status request needs it, at most once
 * per SVD_ACTIVITY_MAX_AGE_MS per worker (a newer request reuses the view
 * and only advances its age). So the view a client sees is never more than
 * 100 ms stale, and a daemon nobody asks never wakes up for activity at
 * all, busy workers or not (the idle target of issue 6).
 *
 * Names: ORDINAL.GENERATION.GROUP (group names are [A-Za-z0-9_.-], the two
 * numbers come first, so a name is unambiguous and a successor finds an
 * adopted worker's file again).
 *
 * Cost per worker: the directory is opened once and kept (files are made
 * and removed relative to it); a file is created with O_EXCL and a
 * leftover of the same name is removed only when that fails. So a spawn
 * costs one openat and a reap one close and one unlinkat.
 *
 * Loop thread only; nothing here blocks but a pread of a regular file.
 */
#ifndef SVD_ACTIVITY_H
#define SVD_ACTIVITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shell/privileges.h"
#include "supervise/supervise.h"

/* The longest a view is reused before the region is read again. */
#define SVD_ACTIVITY_MAX_AGE_MS 100u
/* Room for "SUPERVISE_ACTIVITY=" and a region path. */
#define SVD_ACTIVITY_ENV_MAX 1200u

typedef struct svd_activity svd_activity; /* the directory */
typedef struct svd_act      svd_act; /* one worker's region */

/*
 * svd_activity_create prepares the activity shell for the directory
 * SOCKET_DIR/activity (created on first use, not here). On SV_OK *ap
 * belongs to the caller: free it with svd_activity_destroy.
 * Errors: SV_EINVAL (socket_dir NULL or too long), SV_ENOMEM.
 */
sv_err svd_activity_create(const char *socket_dir, svd_activity **ap);

/*
 * svd_activity_destroy frees a (NULL is ignored) and removes its directory
 * if it is empty. Regions still open are the caller's to end first
 * (svd_activity_end).
 */
void svd_activity_destroy(svd_activity *a);

/*
 * svd_activity_begin gives the region file of a worker about to be
 * spawned (group, ordinal, generation; owned by creds' user when set) and
 * writes "SUPERVISE_ACTIVITY=PATH" into env (envlen bytes). spare (may be
 * NULL; always consumed) is a region made ahead by svd_activity_prepare:
 * when it was made for this very name and owner it becomes the worker's
 * region and no file is created on the spawn path; otherwise its file is
 * removed and a new one created. On SV_OK *actp is the region: end it with
 * svd_activity_end. Errors: SV_EINVAL, SV_ENOMEM, SV_ESYSTEM (the directory
 * or file could not be made; the worker is then spawned without a region).
 */
sv_err svd_activity_begin(svd_activity *a, const char *group, uint32_t ordinal,
    uint64_t generation, const sv_creds *creds, svd_act *spare, svd_act **actp,
    char *env, size_t envlen);

/*
 * svd_activity_prepare makes, ahead of time, the empty region file the
 * worker of (group, ordinal, generation) will get, so that the restart
 * which spawns it creates no file (a create on ext4 was measured at
 * 0.3-0.4 ms after a second of idleness, the dearest step between a
 * worker's exit and its replacement's exec). The caller holds the spare
 * until it hands it to svd_activity_begin or removes it with
 * svd_activity_end. Returns NULL (nothing made) on any failure.
 */
svd_act *svd_activity_prepare(svd_activity *a, const char *group,
    uint32_t ordinal, uint64_t generation, const sv_creds *creds);

/*
 * svd_activity_adopt finds the region file a predecessor made for an
 * adopted worker. Returns the region, or NULL when there is none (the
 * worker then shows no activity).
 */
svd_act *svd_activity_adopt(
    svd_activity *a, const char *group, uint32_t ordinal, uint64_t generation);

/*
 * svd_activity_end removes a worker's region file and frees act (NULL is
 * ignored). Called after the reap, or when the spawn failed.
 */
void svd_activity_end(svd_activity *a, svd_act *act);

/*
 * svd_activity_drop closes and frees act without removing its file (NULL
 * is ignored): the daemon is going away while the worker lives on, and a
 * successor adopts the file (svd_activity_adopt).
 */
void svd_activity_drop(svd_act *act);

/*
 * svd_activity_get gives what WorkerStatus shows of act at now_ms
 * (sv_loop_now_ms clock): the number of in-flight activities, the oldest
 * one's composed name (points into act, valid until the next call on it)
 * and its age. All zero / "" when act is NULL or the worker is idle,
 * disabled or its region is invalid.
 */
void svd_activity_get(svd_activity *a, svd_act *act, uint64_t now_ms,
    uint32_t *countp, const char **namep, uint64_t *agep);

#endif /* SVD_ACTIVITY_H */
