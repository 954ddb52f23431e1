/*
 * privileges.c — resolving a worker's user and group (see privileges.h).
 *
 * The reentrant lookups (getpwnam_r, getgrnam_r) get a heap buffer that
 * grows on ERANGE up to a bound, so an oversized database entry is an
 * error, not an unbounded allocation.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shell/privileges.h"
#include "errf.h"

/* Largest buffer handed to a getpw / getgr lookup. */
#define CREDS_MAX_BUF (1u << 20)

/* creds_number parses a decimal id below (id_t) -1; false if s is not
 * all digits or out of range. */
static bool
creds_number(const char *s, unsigned long *out)
{
	unsigned long v = 0;

	if (*s == '\0' || strlen(s) > 10) {
		return false;
	}
	for (const char *p = s; *p != '\0'; p++) {
		if (*p < '0' || *p > '9') {
			return false;
		}
		v = v * 10 + (unsigned long) (*p - '0');
	}
	if (v >= UINT32_MAX) {
		return false; /* (uid_t) -1 means "no change" to the kernel */
	}
	*out = v;
	return true;
}

/* One lookup in the user or group database: calls the reentrant getter
 * with buf of len bytes, copies what it found into the caller's fields
 * (buf dies after the call), sets *found, returns the getter's error. */
typedef int (*creds_get_fn)(void *arg, char *buf, size_t len, bool *found);

/* creds_lookup runs get with a buffer that grows (to CREDS_MAX_BUF) while
 * the database says ERANGE; the buffer is its own and freed here. Returns 0
 * when an entry was found, 1 when there is no such entry, -1 when the
 * database failed (errno set). */
static int
creds_lookup(creds_get_fn get, void *arg)
{
	size_t len   = 4096;
	char  *buf   = NULL;
	bool   found = false;
	int    rv;

	for (;;) {
		char *nb = realloc(buf, len);
		if (nb == NULL) {
			free(buf);
			errno = ENOMEM;
			return -1;
		}
		buf = nb;
		rv  = get(arg, buf, len, &found);
		if (rv != ERANGE || len >= CREDS_MAX_BUF) {
			break;
		}
		len *= 2;
	}
	free(buf);
	if (rv != 0 && rv != ENOENT && rv != ESRCH) {
		errno = rv;
		return -1;
	}
	return found ? 0 : 1;
}

/* What creds_passwd asks and gets back. */
struct creds_pw_q {
	const char *user; /* by name when byname */
	bool        byname;
	uid_t       id; /* by uid otherwise */
	uid_t      *uid;
	gid_t      *gid;
	char       *name;
	size_t      namelen;
};

/* creds_pw_get is creds_passwd's creds_get_fn. */
static int
creds_pw_get(void *arg, char *buf, size_t len, bool *found)
{
	struct creds_pw_q *q = arg;
	struct passwd      pw, *res = NULL;
	int                rv;

	rv     = q->byname ? getpwnam_r(q->user, &pw, buf, len, &res)
	                   : getpwuid_r(q->id, &pw, buf, len, &res);
	*found = res != NULL;
	if (rv == 0 && res != NULL) {
		*q->uid = pw.pw_uid;
		*q->gid = pw.pw_gid;
		snprintf(q->name, q->namelen, "%s", pw.pw_name);
	}
	return rv;
}

/* creds_passwd looks user up by name (byname) or by uid. Returns 0 and
 * fills *uid, *gid and name (of size namelen), 1 when there is no such
 * entry, -1 when the database failed (errno set). */
static int
creds_passwd(const char *user, bool byname, uid_t id, uid_t *uid, gid_t *gid,
    char *name, size_t namelen)
{
	struct creds_pw_q q = {user, byname, id, uid, gid, name, namelen};

	return creds_lookup(creds_pw_get, &q);
}

/* What creds_group asks and gets back. */
struct creds_gr_q {
	const char *group;
	gid_t      *gid;
};

/* creds_gr_get is creds_group's creds_get_fn. */
static int
creds_gr_get(void *arg, char *buf, size_t len, bool *found)
{
	struct creds_gr_q *q = arg;
	struct group       gr, *res = NULL;
	int                rv;

	rv     = getgrnam_r(q->group, &gr, buf, len, &res);
	*found = res != NULL;
	if (rv == 0 && res != NULL) {
		*q->gid = gr.gr_gid;
	}
	return rv;
}

/* creds_group looks a group name up. Returns as creds_passwd. */
static int
creds_group(const char *group, gid_t *gid)
{
	struct creds_gr_q q = {group, gid};

	return creds_lookup(creds_gr_get, &q);
}

sv_err
sv_creds_resolve(const char *user, const char *group, sv_creds *out,
    char *errbuf, size_t errlen)
{
	char          name[SV_CREDS_MAX_NAME + 1] = "";
	unsigned long n;
	uid_t         uid  = 0;
	gid_t         gid  = 0;
	bool          have = false; /* a passwd entry was found */
	int           rv, ng;

	memset(out, 0, sizeof(*out));
	if (strlen(user) > SV_CREDS_MAX_NAME
	    || (group != NULL && strlen(group) > SV_CREDS_MAX_NAME)) {
		return sv_errf(errbuf, errlen, SV_EINVAL,
		    "names are at most %d bytes", SV_CREDS_MAX_NAME);
	}
	if (creds_number(user, &n)) {
		rv = creds_passwd(
		    NULL, false, (uid_t) n, &uid, &gid, name, sizeof(name));
		uid  = (uid_t) n;
		have = rv == 0;
	} else {
		rv = creds_passwd(
		    user, true, 0, &uid, &gid, name, sizeof(name));
		have = rv == 0;
		if (rv == 1) {
			return sv_errf(errbuf, errlen, SV_ENOTFOUND,
			    "unknown user \"%s\"", user);
		}
	}
	if (rv < 0) {
		return sv_errf(errbuf, errlen, SV_ESYSTEM,
		    "cannot look up user \"%s\": %s", user, strerror(errno));
	}
	if (group != NULL) {
		if (creds_number(group, &n)) {
			gid = (gid_t) n;
		} else if ((rv = creds_group(group, &gid)) != 0) {
			return rv > 0 ? sv_errf(errbuf, errlen, SV_ENOTFOUND,
			           "unknown group \"%s\"", group)
			              : sv_errf(errbuf, errlen, SV_ESYSTEM,
			                  "cannot look up group \"%s\": %s",
			                  group, strerror(errno));
		}
	} else if (!have) {
		return sv_errf(errbuf, errlen, SV_ENOTFOUND,
		    "uid %s has no passwd entry, so no primary group: set "
		    "group as well",
		    user);
	}
	out->uid = uid;
	out->gid = gid;
	if (have) {
		ng = SV_CREDS_MAX_GROUPS;
		if (getgrouplist(name, gid, out->groups, &ng) < 0) {
			return sv_errf(errbuf, errlen, SV_EINVAL,
			    "user \"%s\" is in more than %d groups", name,
			    SV_CREDS_MAX_GROUPS);
		}
		out->ngroups = (size_t) ng;
	} else {
		out->groups[0] = gid;
		out->ngroups   = 1;
	}
	if (geteuid() != 0) {
		if (uid != geteuid() || gid != getegid()) {
			return sv_errf(errbuf, errlen, SV_EPERM,
			    "running workers as uid %u gid %u needs root "
			    "(the daemon runs as uid %u gid %u)",
			    (unsigned) uid, (unsigned) gid,
			    (unsigned) geteuid(), (unsigned) getegid());
		}
		return SV_OK; /* ourselves: nothing to switch */
	}
	out->set = true;
	return SV_OK;
}
