/*
 * privileges.h — who a worker runs as (internal, effect shell).
 *
 * A group may name a `user` (and a `group`) its workers run as. The names
 * are resolved once, when the configuration is loaded, through the C
 * library's user database (NSS): uid, primary gid and the supplementary
 * groups getgrouplist reports. Nothing here switches credentials: the
 * resolved numbers are handed to sv_spawn (spawn.h), whose child applies
 * them with raw system calls between fork and exec, where no NSS lookup
 * (not async-signal-safe) may run.
 *
 * A daemon that is not root cannot switch: asking for another uid or gid
 * is refused at load time ("needs root"); asking for its own uid and gid
 * is accepted and means "no switch".
 */
#ifndef SV_SHELL_PRIVILEGES_H
#define SV_SHELL_PRIVILEGES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "supervise/supervise.h"

/* Most supplementary groups a worker's user may have. */
#define SV_CREDS_MAX_GROUPS 256
/* Longest user or group name accepted. */
#define SV_CREDS_MAX_NAME 64

/* The credentials a worker runs with. */
typedef struct sv_creds {
	bool   set; /* false: run as the daemon runs (fields unused) */
	uid_t  uid;
	gid_t  gid;
	size_t ngroups; /* supplementary groups in groups[] */
	gid_t  groups[SV_CREDS_MAX_GROUPS];
} sv_creds;

/*
 * sv_creds_resolve fills *out for user (a name or a decimal uid) and group
 * (a name, a decimal gid, or NULL for the user's primary group). The
 * supplementary groups are the user's memberships (getgrouplist); a numeric
 * uid without a passwd entry gets none, and then needs group. When the
 * daemon (geteuid) is not root, a uid or gid other than its own is refused;
 * its own means out->set = false. On failure errbuf holds one line (no file
 * or key: the caller adds them). Errors: SV_ENOTFOUND (unknown user or
 * group), SV_EPERM (needs root), SV_EINVAL (malformed or too many groups),
 * SV_ESYSTEM (the user database failed).
 */
sv_err sv_creds_resolve(const char *user, const char *group, sv_creds *out,
    char *errbuf, size_t errlen);

#endif /* SV_SHELL_PRIVILEGES_H */
