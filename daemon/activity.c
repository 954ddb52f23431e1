/*
 * activity.c — region files of workers and the daemon's reading of them
 * (design in activity.h, format and model in docs/activity.md). The only
 * reader of a region's bytes is core/activity_view.c, given a copy made
 * with pread: never a mapping of a file the worker can shrink.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "activity.h"
#include "core/activity_view.h"
#include "log.h"
#include "supervise/activity.h"

/* Longest directory path (SOCKET_DIR/activity). */
#define ACT_DIR_MAX 900u
/* Longest file name: two numbers, dots and a group name of 64 bytes. */
#define ACT_NAME_MAX 128u

struct svd_activity {
	char      dir[ACT_DIR_MAX];
	bool      made; /* the directory exists and is ours */
	int       dfd; /* the directory, opened once it is made; or -1 */
	uint64_t *buf; /* SV_ACTIVITY_REGION_SIZE bytes, 8-aligned */
};

/* One worker's region: its file name and the last reading, reduced to
 * what svd_activity_get shows (a worker's record costs tens of bytes, not
 * a whole sv_activity_view; the oldest activity's name is allocated only
 * while the worker is busy). Allocated by act_new to fit its name; freed
 * by svd_activity_end or svd_activity_drop. */
struct svd_act {
	int      fd; /* -1: the file is opened per read */
	bool     owned; /* made with creds: chowned to uid:gid */
	uid_t    uid;
	gid_t    gid;
	bool     have; /* the fields below hold a read */
	bool     busy; /* it was BUSY */
	uint32_t activities; /* BUSY: threads with a scope open */
	uint64_t read_ms; /* when it was read */
	uint64_t oldest_age_ns; /* BUSY: the oldest activity's age */
	char    *oldest; /* BUSY: its composed name, or NULL ("") */
	char     name[]; /* the file name, NUL-terminated */
};

sv_err
svd_activity_create(const char *socket_dir, svd_activity **ap)
{
	svd_activity *a;
	int           n;

	if (socket_dir == NULL || ap == NULL) {
		return SV_EINVAL;
	}
	if ((a = calloc(1, sizeof(*a))) == NULL) {
		return SV_ENOMEM;
	}
	a->dfd = -1;
	n      = snprintf(a->dir, sizeof(a->dir), "%s/activity", socket_dir);
	if (n < 0 || (size_t) n >= sizeof(a->dir)) {
		free(a);
		return SV_EINVAL;
	}
	*ap = a;
	return SV_OK;
}

void
svd_activity_destroy(svd_activity *a)
{
	if (a == NULL) {
		return;
	}
	/* Every region has been ended by now (a clean stop reaped every
	 * worker): the directory goes too. It stays, and this fails
	 * harmlessly, while files of adopted workers remain. */
	if (a->dfd >= 0) {
		close(a->dfd);
	}
	(void) rmdir(a->dir);
	free(a->buf);
	free(a);
}

/* act_dir makes the directory on first use: ours, mode 0711, not a
 * symlink. Returns false (and logs) when it cannot be used. */
static bool
act_dir(svd_activity *a)
{
	struct stat st;

	if (a->made) {
		return true;
	}
	if (mkdir(a->dir, 0711) != 0 && errno != EEXIST) {
		svd_log(
		    "activity: cannot create %s: %s", a->dir, strerror(errno));
		return false;
	}
	if (lstat(a->dir, &st) != 0 || !S_ISDIR(st.st_mode)
	    || st.st_uid != geteuid()) {
		svd_log("activity: %s is not a directory of ours", a->dir);
		return false;
	}
	if ((st.st_mode & 07777) != 0711 && chmod(a->dir, 0711) != 0) {
		svd_log(
		    "activity: cannot chmod %s: %s", a->dir, strerror(errno));
		return false;
	}
	/* Opened once: every file operation is relative to it (no path
	 * lookup, open and close of the directory per worker). */
	a->dfd = open(a->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (a->dfd < 0) {
		svd_log(
		    "activity: cannot open %s: %s", a->dir, strerror(errno));
		return false;
	}
	a->made = true;
	return true;
}

/* act_new allocates a record for the region file called name (fd -1, no
 * reading yet), sized to fit the name; NULL when memory is short. Freed by
 * svd_activity_end or svd_activity_drop. */
static svd_act *
act_new(const char *name)
{
	size_t   len = strlen(name) + 1;
	svd_act *act = calloc(1, sizeof(*act) + len);

	if (act != NULL) {
		act->fd = -1;
		memcpy(act->name, name, len);
	}
	return act;
}

/* act_free frees a record and the name of its last busy reading. */
static void
act_free(svd_act *act)
{
	free(act->oldest);
	free(act);
}

/* act_name writes the file name of a worker's region. */
static bool
act_name(char *buf, size_t len, const char *group, uint32_t ordinal,
    uint64_t generation)
{
	int n = snprintf(buf, len, "%" PRIu32 ".%" PRIu64 ".%s", ordinal,
	    generation, group);

	return n > 0 && (size_t) n < len && strchr(group, '/') == NULL;
}

/* act_make creates the empty region file act->name (owned by creds' user
 * when set) and records that owner in act. Returns false, with the file
 * gone and errno set, when it cannot. */
static bool
act_make(svd_activity *a, svd_act *act, const sv_creds *creds)
{
	int dfd = a->dfd, e;

	act->fd = openat(dfd, act->name,
	    O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (act->fd < 0 && errno == EEXIST) {
		/* A file of the same name is a leftover of a dead worker or
		 * a spare a predecessor made (a rare case: removed only
		 * then, not before every create). */
		(void) unlinkat(dfd, act->name, 0);
		act->fd = openat(dfd, act->name,
		    O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	}
	if (act->fd < 0
	    || (creds != NULL && creds->set
	        && fchown(act->fd, creds->uid, creds->gid) != 0)) {
		e = errno;
		if (act->fd >= 0) {
			close(act->fd);
			(void) unlinkat(dfd, act->name, 0);
		}
		act->fd = -1;
		errno   = e;
		return false;
	}
	/* Not held: the region is opened per read (one descriptor per
	 * worker at most is the daemon's budget: its pidfd). */
	close(act->fd);
	act->fd    = -1;
	act->owned = creds != NULL && creds->set;
	act->uid   = act->owned ? creds->uid : 0;
	act->gid   = act->owned ? creds->gid : 0;
	return true;
}

/* act_fits tells whether the spare act was made for this name and owner. */
static bool
act_fits(const svd_act *act, const char *name, const sv_creds *creds)
{
	bool owned = creds != NULL && creds->set;

	return strcmp(act->name, name) == 0 && act->owned == owned
	    && (!owned || (act->uid == creds->uid && act->gid == creds->gid));
}

sv_err
svd_activity_begin(svd_activity *a, const char *group, uint32_t ordinal,
    uint64_t generation, const sv_creds *creds, svd_act *spare, svd_act **actp,
    char *env, size_t envlen)
{
	svd_act *act;
	char     name[ACT_NAME_MAX];
	int      n;

	if (a == NULL || group == NULL || actp == NULL || env == NULL) {
		svd_activity_end(a, spare);
		return SV_EINVAL;
	}
	n = snprintf(env, envlen, "SUPERVISE_ACTIVITY=%s/", a->dir);
	if (!act_name(name, sizeof(name), group, ordinal, generation) || n < 0
	    || (size_t) n + strlen(name) >= envlen) {
		svd_activity_end(a, spare);
		return SV_EINVAL;
	}
	memcpy(env + n, name, strlen(name) + 1);
	/* The spare made after the previous restart: its file exists,
	 * empty, and nobody was given its name yet. No file system call
	 * on the restart path then. */
	if (spare != NULL && act_fits(spare, name, creds)) {
		*actp = spare;
		return SV_OK;
	}
	svd_activity_end(a, spare); /* made for another generation */
	if (!act_dir(a)) {
		return SV_ESYSTEM;
	}
	if ((act = act_new(name)) == NULL) {
		return SV_ENOMEM;
	}
	if (!act_make(a, act, creds)) {
		svd_log("activity: cannot create %s/%s: %s", a->dir, act->name,
		    strerror(errno));
		act_free(act);
		return SV_ESYSTEM;
	}
	*actp = act;
	return SV_OK;
}

/* act_for allocates the record of worker group[ordinal] of generation
 * (see act_new) once the directory can be used; NULL otherwise. */
static svd_act *
act_for(
    svd_activity *a, const char *group, uint32_t ordinal, uint64_t generation)
{
	char name[ACT_NAME_MAX];

	if (a == NULL || group == NULL || !act_dir(a)
	    || !act_name(name, sizeof(name), group, ordinal, generation)) {
		return NULL;
	}
	return act_new(name);
}

svd_act *
svd_activity_prepare(svd_activity *a, const char *group, uint32_t ordinal,
    uint64_t generation, const sv_creds *creds)
{
	svd_act *act = act_for(a, group, ordinal, generation);

	if (act == NULL) {
		return NULL;
	}
	if (!act_make(a, act, creds)) {
		act_free(act);
		return NULL;
	}
	return act;
}

svd_act *
svd_activity_adopt(
    svd_activity *a, const char *group, uint32_t ordinal, uint64_t generation)
{
	svd_act *act = act_for(a, group, ordinal, generation);

	if (act == NULL) {
		return NULL;
	}
	act->fd = openat(a->dfd, act->name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (act->fd < 0) {
		act_free(act);
		return NULL;
	}
	close(act->fd); /* opened per read, as for a spawned worker */
	act->fd = -1;
	return act;
}

void
svd_activity_end(svd_activity *a, svd_act *act)
{
	if (act == NULL) {
		return;
	}
	if (a != NULL && a->dfd >= 0) {
		(void) unlinkat(a->dfd, act->name, 0);
	}
	act_free(act);
}

void
svd_activity_drop(svd_act *act)
{
	if (act == NULL) {
		return;
	}
	act_free(act);
}

/* act_now_ns reads CLOCK_MONOTONIC, the clock the writers stamp with. */
static uint64_t
act_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* act_read takes a fresh copy of the region with pread, reads it and
 * keeps what svd_activity_get shows. */
static void
act_read(svd_activity *a, svd_act *act, uint64_t now_ms)
{
	sv_activity_view view;
	ssize_t          got;
	int              fd;

	if (a->buf == NULL
	    && (a->buf = malloc(SV_ACTIVITY_REGION_SIZE)) == NULL) {
		return;
	}
	/* Opened for this read only (no descriptor held per worker). */
	fd  = a->dfd >= 0 ? openat(a->dfd, act->name,
	          O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
	                  : -1;
	got = fd >= 0 ? pread(fd, a->buf, SV_ACTIVITY_REGION_SIZE, 0) : -1;
	if (fd >= 0) {
		close(fd);
	}
	/* Short, empty or failed: an INVALID view, shown as nothing. */
	(void) sv_activity_view_read(
	    a->buf, got > 0 ? (size_t) got : 0, act_now_ns(), &view);
	act->have          = true;
	act->read_ms       = now_ms;
	act->busy          = view.state == SV_ACTIVITY_BUSY;
	act->activities    = act->busy ? view.activities : 0;
	act->oldest_age_ns = act->busy ? view.oldest_age_ns : 0;
	/* The name is copied only when it changed; without memory for the
	 * copy it shows as "" (the count and age still do). */
	if (!act->busy || view.oldest_name[0] == '\0') {
		free(act->oldest);
		act->oldest = NULL;
	} else if (act->oldest == NULL
	    || strcmp(act->oldest, view.oldest_name) != 0) {
		free(act->oldest);
		act->oldest = strdup(view.oldest_name);
	}
}

void
svd_activity_get(svd_activity *a, svd_act *act, uint64_t now_ms,
    uint32_t *countp, const char **namep, uint64_t *agep)
{
	uint64_t age;

	*countp = 0;
	*namep  = "";
	*agep   = 0;
	if (a == NULL || act == NULL) {
		return;
	}
	if (!act->have || now_ms < act->read_ms
	    || now_ms - act->read_ms >= SVD_ACTIVITY_MAX_AGE_MS) {
		act_read(a, act, now_ms);
	}
	if (!act->have || !act->busy) {
		return;
	}
	/* A reused view ages with the clock. */
	age     = act->oldest_age_ns / 1000000u + (now_ms - act->read_ms);
	*countp = act->activities;
	*namep  = act->oldest != NULL ? act->oldest : "";
	*agep   = age;
}
