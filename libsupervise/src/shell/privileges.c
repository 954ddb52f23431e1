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

/* creds_passwd looks user up by name (byname) or by uid. Returns 0 and
 * fills *uid, *gid and name (of size namelen), 1 when there is no such
 * entry, -1 when the database failed (errno set). */
static int
creds_passwd(const char *user, bool byname, uid_t id, uid_t *uid, gid_t *gid,
    char *name, size_t namelen)
{
	struct passwd pw, *res = NULL;
	size_t        len = 4096;
	char         *buf = NULL;
	int           rv;

	for (;;) {
		char *nb = realloc(buf, len);
		if (nb == NULL) {
			free(buf);
			errno = ENOMEM;
			return -1;
		}
		buf = nb;
		rv  = byname ? getpwnam_r(user, &pw, buf, len, &res)
		             : getpwuid_r(id, &pw, buf, len, &res);
		if (rv != ERANGE || len >= CREDS_MAX_BUF) {
			break;
		}
		len *= 2;
	}
	if (rv == 0 && res != NULL) {
		*uid = pw.pw_uid;
		*gid = pw.pw_gid;
		snprintf(name, namelen, "%s", pw.pw_name);
	}
	free(buf);
	if (rv != 0 && rv != ENOENT && rv != ESRCH) {
		errno = rv;
		return -1;
	}
	return res != NULL ? 0 : 1;
}

/* creds_group looks a group name up. Returns as creds_passwd. */
static int
creds_group(const char *group, gid_t *gid)
{
	struct group gr, *res = NULL;
	size_t       len = 4096;
	char        *buf = NULL;
	int          rv;

	for (;;) {
		char *nb = realloc(buf, len);
		if (nb == NULL) {
			free(buf);
			errno = ENOMEM;
			return -1;
		}
		buf = nb;
		rv  = getgrnam_r(group, &gr, buf, len, &res);
		if (rv != ERANGE || len >= CREDS_MAX_BUF) {
			break;
		}
		len *= 2;
	}
	if (rv == 0 && res != NULL) {
		*gid = gr.gr_gid;
	}
	free(buf);
	if (rv != 0 && rv != ENOENT && rv != ESRCH) {
		errno = rv;
		return -1;
	}
	return res != NULL ? 0 : 1;
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
