/*
 * cgroup.c — per-worker cgroup v2 leaves (see cgroup.h).
 *
 * Every file operation is relative to the tree's directory fd (openat,
 * mkdirat, unlinkat), so the tree's path is resolved once. Leaves are kept
 * on one list; a released leaf stays on it, marked, until it is removed,
 * and is also queued, in release order, on the spare queue: the next leaf
 * asked for with the same label (the seat's next worker) may take it
 * over (only where children join by a write to cgroup.procs: cgroup.h),
 * and sv_cgtree_sweep removes those nobody took within CG_SPARE_MS. So
 * reaping many workers at once does not wait for their rmdirs, and there
 * a crash loop costs no mkdir + rmdir per restart. The kill after an exit
 * opens the leaf's cgroup.kill each time: a descriptor kept per leaf would
 * make every spawn slower, since exec copies and closes each descriptor the
 * daemon holds (a scale-up to 1,000 took 12-16 % longer with one more
 * descriptor per worker, sv-bench with TMPDIR on tmpfs).
 *
 * A sweep removes at most CG_SWEEP_BATCH leaves, and the daemon sweeps
 * only when its loop has nothing else to do (sv_cgtree_sweep_in says
 * when): a cgroup rmdir is among the dearest calls the daemon makes, and
 * when the reaps of one mass exit swept the spares of an earlier one, a
 * deadline kill of 1,000 workers waited for 1,000 rmdirs before its reaps
 * could go on (bench/README.md, scenario 9).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shell/cgroup.h"
#include "shell/cgroup_internal.h"
#include "shell/loop.h"
#include "errf.h"

/* Longest line read from /proc/self/mountinfo or /proc/self/cgroup. */
#define CG_LINE_MAX 8192
/* Longest leaf name: label part plus ".<seq>". */
#define CG_LEAF_MAX 120
/* Longest label part of a leaf name. */
#define CG_LABEL_MAX 96
/* A leaf's name: the label part, a dot, a 64-bit number and the NUL. */
_Static_assert(CG_LABEL_MAX + 22 <= CG_LEAF_MAX, "CG_LEAF_MAX too small");

struct sv_cgleaf {
	sv_cgleaf *next;
	sv_cgleaf *snext; /* next on the spare queue (released leaves) */
	bool       released;
	size_t     labellen; /* length of the label part of name */
	int64_t    released_ms; /* when released (sv_loop_now_ms) */
	char       name[]; /* label part, ".<seq>"; allocated to fit (at
	                    * most CG_LEAF_MAX bytes with its NUL) */
};

/* How long a released leaf is kept for the next worker of its seat before
 * sv_cgtree_sweep removes it. */
#define CG_SPARE_MS 1000
/* Leaves removed by one sv_cgtree_sweep at most. */
#define CG_SWEEP_BATCH 16

/* cg_unescape decodes mountinfo's octal escapes (\040) in place. */
static void
cg_unescape(char *s)
{
	char *w = s;

	for (char *r = s; *r != '\0'; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0'
		    && r[2] <= '7' && r[3] >= '0' && r[3] <= '7') {
			*w++ = (char) ((r[1] - '0') * 64 + (r[2] - '0') * 8
			    + (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

/* cg_scan_lines calls match on each whole line of the file at path (an
 * overlong line is passed over) until match returns true. Returns true
 * when it did; false when none matched or the file could not be read. */
static bool
cg_scan_lines(
    const char *path, bool (*match)(char *line, void *arg), void *arg)
{
	FILE *f = fopen(path, "re");
	char *line;
	bool  found = false;

	if (f == NULL || (line = malloc(CG_LINE_MAX)) == NULL) {
		if (f != NULL) {
			fclose(f);
		}
		return false;
	}
	while (!found && fgets(line, CG_LINE_MAX, f) != NULL) {
		if (strchr(line, '\n') != NULL) {
			found = match(line, arg);
		}
	}
	free(line);
	fclose(f);
	return found;
}

/* Where cg_find_mount puts what it finds. */
typedef struct {
	char  *mnt, *root;
	size_t mntlen, rootlen;
} cg_mount_out;

/* cg_mount_line matches a mountinfo line of a cgroup2 mount whose mount
 * point and root fit in out (cg_mount_out), and copies them there. */
static bool
cg_mount_line(char *line, void *arg)
{
	cg_mount_out *out = arg;
	char         *sep, *fld[5], *save = NULL;

	if ((sep = strstr(line, " - ")) == NULL
	    || strncmp(sep + 3, "cgroup2 ", 8) != 0) {
		return false;
	}
	*sep   = '\0';
	fld[0] = strtok_r(line, " ", &save);
	for (int i = 1; i < 5; i++) {
		fld[i]
		    = fld[i - 1] != NULL ? strtok_r(NULL, " ", &save) : NULL;
	}
	if (fld[4] == NULL) {
		return false;
	}
	cg_unescape(fld[3]);
	cg_unescape(fld[4]);
	if (strlen(fld[4]) >= out->mntlen || strlen(fld[3]) >= out->rootlen) {
		return false;
	}
	snprintf(out->mnt, out->mntlen, "%s", fld[4]);
	snprintf(out->root, out->rootlen, "%s", fld[3]);
	return true;
}

/* cg_find_mount finds the first cgroup2 mount: its mount point and the
 * cgroup path it shows (its root). Returns true when found. */
static bool
cg_find_mount(char *mnt, size_t mntlen, char *root, size_t rootlen)
{
	cg_mount_out out = {mnt, root, mntlen, rootlen};

	return cg_scan_lines("/proc/self/mountinfo", cg_mount_line, &out);
}

/* Where cg_own_path puts what it finds. */
typedef struct {
	char  *path;
	size_t len;
} cg_path_out;

/* cg_own_line matches the cgroup v2 line ("0::PATH") of /proc/self/cgroup
 * when PATH is absolute and fits in out (cg_path_out), and copies it. */
static bool
cg_own_line(char *line, void *arg)
{
	cg_path_out *out = arg;

	if (strncmp(line, "0::", 3) != 0) {
		return false;
	}
	line[strcspn(line, "\n")] = '\0';
	if (strlen(line + 3) >= out->len || line[3] != '/') {
		return false;
	}
	snprintf(out->path, out->len, "%s", line + 3);
	return true;
}

/* cg_own_path reads the daemon's cgroup v2 path ("0::PATH"). */
static bool
cg_own_path(char *path, size_t len)
{
	cg_path_out out = {path, len};

	return cg_scan_lines("/proc/self/cgroup", cg_own_line, &out);
}

/* svcg_write writes text to the file name in dirfd. Returns 0 or -1. */
int
svcg_write(int dirfd, const char *name, const char *text)
{
	int     fd = openat(dirfd, name, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	int     e;

	if (fd < 0) {
		return -1;
	}
	n = write(fd, text, strlen(text));
	e = errno;
	close(fd);
	errno = e;
	return n == (ssize_t) strlen(text) ? 0 : -1;
}

sv_err
sv_cgtree_open(sv_cgtree **treep, char *msg, size_t msglen)
{
	char        mnt[PATH_MAX], root[PATH_MAX], own[PATH_MAX];
	char        dir[PATH_MAX];
	const char *rel;
	sv_cgtree  *t;
	int         pfd, n;
	sv_err      err;

	*treep = NULL;
	if (!cg_find_mount(mnt, sizeof(mnt), root, sizeof(root))) {
		return sv_errf(msg, msglen, SV_ENOTFOUND,
		    "no cgroup2 file system is mounted");
	}
	if (!cg_own_path(own, sizeof(own))) {
		return sv_errf(msg, msglen, SV_ENOTFOUND,
		    "no cgroup v2 entry in /proc/self/cgroup");
	}
	/* The mount shows the hierarchy from root down. */
	rel = own;
	if (strcmp(root, "/") != 0) {
		size_t rl = strlen(root);
		if (strncmp(own, root, rl) != 0
		    || (own[rl] != '/' && own[rl] != '\0')) {
			return sv_errf(msg, msglen, SV_ENOTFOUND,
			    "our cgroup %s is outside the cgroup2 mount %s "
			    "(root %s)",
			    own, mnt, root);
		}
		rel = own + rl;
	}
	n = snprintf(
	    dir, sizeof(dir), "%s%s", mnt, strcmp(rel, "/") == 0 ? "" : rel);
	if (n < 0 || (size_t) n >= sizeof(dir) - 80) {
		return sv_errf(
		    msg, msglen, SV_ENOTFOUND, "cgroup path too long");
	}
	if ((pfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		return sv_errf(msg, msglen, SV_ENOTFOUND, "cannot open %s: %s",
		    dir, strerror(errno));
	}
	/* Delegated to us: we may create cgroups here and move processes
	 * out of this one (the common ancestor of a move). */
	if (faccessat(pfd, ".", W_OK, AT_EACCESS) != 0
	    || faccessat(pfd, "cgroup.procs", W_OK, AT_EACCESS) != 0) {
		err = sv_errf(msg, msglen, SV_EPERM,
		    "%s is not delegated to us (not writable)", dir);
		close(pfd);
		return err;
	}
	if ((t = calloc(1, sizeof(*t))) == NULL) {
		close(pfd);
		return sv_errf(msg, msglen, SV_ENOMEM, "out of memory");
	}
	t->parentfd = pfd;
	t->fd       = -1;
	/* A stale tree of a dead daemon with our pid: reuse it if empty. */
	for (int i = 0; i < 10 && t->fd < 0; i++) {
		if (i == 0) {
			snprintf(t->name, sizeof(t->name), "supervised.%ld",
			    (long) getpid());
		} else {
			snprintf(t->name, sizeof(t->name), "supervised.%ld.%d",
			    (long) getpid(), i);
		}
		if (mkdirat(pfd, t->name, 0755) != 0
		    && (errno != EEXIST
		        || unlinkat(pfd, t->name, AT_REMOVEDIR) != 0
		        || mkdirat(pfd, t->name, 0755) != 0)) {
			if (errno == EEXIST || errno == EBUSY
			    || errno == ENOTEMPTY) {
				continue; /* not ours to take: next name */
			}
			break;
		}
		t->fd
		    = openat(pfd, t->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (t->fd >= 0
		    && faccessat(t->fd, "cgroup.procs", W_OK, 0) != 0) {
			close(t->fd);
			t->fd = -1;
			break;
		}
	}
	if (snprintf(t->path, sizeof(t->path), "%s/%s", dir, t->name)
	    >= (int) sizeof(t->path)) {
		t->path[0] = '\0'; /* not reached: dir is checked above */
	}
	if (t->fd < 0) {
		err = sv_errf(msg, msglen, SV_EPERM, "cannot create %s: %s",
		    t->path, strerror(errno));
		close(pfd);
		free(t);
		return err;
	}
	if (faccessat(t->fd, "cgroup.kill", W_OK, 0) != 0) {
		err = sv_errf(msg, msglen, SV_EINVAL,
		    "%s has no cgroup.kill (Linux >= 5.14 needed)", t->path);
		close(t->fd);
		(void) unlinkat(pfd, t->name, AT_REMOVEDIR);
		close(pfd);
		free(t);
		return err;
	}
	*treep = t;
	return sv_errf(msg, msglen, SV_OK,
	    "cgroup v2: one cgroup per worker under %s, killed with "
	    "cgroup.kill when the worker exits",
	    t->path);
}

const char *
sv_cgtree_path(const sv_cgtree *t)
{
	return t->path;
}

const char *
sv_cgtree_name(const sv_cgtree *t)
{
	return t->name;
}

/* cg_spare_unlink takes l, which follows prev on the spare queue (prev
 * NULL: l is its head), off the queue. */
static void
cg_spare_unlink(sv_cgtree *t, sv_cgleaf *prev, sv_cgleaf *l)
{
	if (prev == NULL) {
		t->spare = l->snext;
	} else {
		prev->snext = l->snext;
	}
	if (t->spare_tail == l) {
		t->spare_tail = prev;
	}
	l->snext = NULL;
}

/* cg_spare_push puts l at the tail of the spare queue (the newest). */
static void
cg_spare_push(sv_cgtree *t, sv_cgleaf *l)
{
	l->snext = NULL;
	if (t->spare_tail != NULL) {
		t->spare_tail->snext = l;
	} else {
		t->spare = l;
	}
	t->spare_tail = l;
}

/* cg_spare_take takes the oldest spare leaf whose label part is name[0..len)
 * off the spare queue; NULL when there is none. */
static sv_cgleaf *
cg_spare_take(sv_cgtree *t, const char *name, size_t len)
{
	sv_cgleaf *prev = NULL;

	for (sv_cgleaf *l = t->spare; l != NULL; prev = l, l = l->snext) {
		if (l->labellen != len || memcmp(l->name, name, len) != 0) {
			continue;
		}
		cg_spare_unlink(t, prev, l);
		l->released = false;
		return l;
	}
	return NULL;
}

sv_err
sv_cgtree_leaf(sv_cgtree *t, const char *label, bool reuse, sv_cgleaf **leafp)
{
	char       want[CG_LABEL_MAX];
	sv_cgleaf *l;
	size_t     i;

	for (i = 0; i < CG_LABEL_MAX && label[i] != '\0'; i++) {
		char c  = label[i];
		want[i] = ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		              || (c >= '0' && c <= '9') || c == '_' || c == '-'
		              || (c == '.' && i > 0))
		    ? c
		    : '_';
	}
	/* The seat's previous leaf, killed when its worker ended: taken over
	 * as it is (no rmdir + mkdir on a restart), if the caller may. */
	if (reuse && (l = cg_spare_take(t, want, i)) != NULL) {
		*leafp = l;
		return SV_OK;
	}
	/* The name is sized to what it holds: ".<seq>" is at most 21 bytes
	 * (a 64-bit number and the dot), plus the NUL. */
	if ((l = calloc(1, sizeof(*l) + i + 22)) == NULL) {
		return SV_ENOMEM;
	}
	memcpy(l->name, want, i);
	l->labellen = i;
	snprintf(l->name + i, 22, ".%" PRIu64, ++t->seq);
	if (mkdirat(t->fd, l->name, 0755) != 0) {
		int e = errno;
		free(l);
		errno = e;
		return SV_ESYSTEM;
	}
	l->next   = t->leaves;
	t->leaves = l;
	*leafp    = l;
	return SV_OK;
}

int
sv_cgleaf_open(const sv_cgtree *t, const sv_cgleaf *l)
{
	return openat(t->fd, l->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* cg_unlink takes l off the list (and off the spare queue) and frees
 * it. */
static void
cg_unlink(sv_cgtree *t, sv_cgleaf *l)
{
	sv_cgleaf *prev = NULL;

	for (sv_cgleaf *q = t->spare; q != NULL; prev = q, q = q->snext) {
		if (q == l) {
			cg_spare_unlink(t, prev, l);
			break;
		}
	}
	for (sv_cgleaf **pp = &t->leaves; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == l) {
			*pp = l->next;
			break;
		}
	}
	free(l);
}

/* cg_kill writes cgroup.kill of a leaf (SIGKILL to all its processes). */
static void
cg_kill(sv_cgtree *t, sv_cgleaf *l)
{
	char path[CG_LEAF_MAX + 16];

	snprintf(path, sizeof(path), "%s/cgroup.kill", l->name);
	(void) svcg_write(t->fd, path, "1");
}

/* cg_remove tries to remove a leaf; true when it is gone. */
static bool
cg_remove(sv_cgtree *t, sv_cgleaf *l)
{
	if (unlinkat(t->fd, l->name, AT_REMOVEDIR) == 0 || errno == ENOENT) {
		cg_unlink(t, l);
		return true;
	}
	return false;
}

void
sv_cgtree_release(sv_cgtree *t, sv_cgleaf *l)
{
	if (l == NULL) {
		return;
	}
	/* Killed now; removed later (sv_cgtree_sweep), unless the seat's
	 * next worker takes it over first. */
	cg_kill(t, l);
	l->released    = true;
	l->released_ms = (int64_t) sv_loop_now_ms();
	cg_spare_push(t, l);
}

/* cg_sweep tries to remove spare leaves released at least min_age ms ago,
 * oldest first (the queue is in release order), each at most once and at
 * most max of them. A busy one goes to the back of the queue as if
 * released now, so it is tried again after CG_SPARE_MS and never keeps
 * the head due. Stops at the first leaf too young (all after it are
 * younger). Returns how many released leaves are still waiting. */
static size_t
cg_sweep(sv_cgtree *t, int64_t min_age, size_t max)
{
	int64_t    now = (int64_t) sv_loop_now_ms();
	size_t     n = 0, left = 0;
	sv_cgleaf *l;

	for (l = t->spare; l != NULL; l = l->snext) {
		n++;
	}
	for (size_t tried = 0; tried < n && tried < max; tried++) {
		l = t->spare;
		if (now - l->released_ms < min_age) {
			break;
		}
		if (cg_remove(t, l)) {
			continue;
		}
		/* Busy: requeue at the tail. */
		cg_spare_unlink(t, NULL, l);
		l->released_ms = now;
		cg_spare_push(t, l);
	}
	for (l = t->spare; l != NULL; l = l->snext) {
		left++;
	}
	return left;
}

size_t
sv_cgtree_sweep(sv_cgtree *t)
{
	if (t == NULL) {
		return 0;
	}
	/* Cheap when nothing is old enough: the queue is in release order,
	 * so its head is the oldest. */
	if (t->spare == NULL) {
		return 0;
	}
	if ((int64_t) sv_loop_now_ms() - t->spare->released_ms < CG_SPARE_MS) {
		return 1; /* at least the head is waiting */
	}
	return cg_sweep(t, CG_SPARE_MS, CG_SWEEP_BATCH);
}

int
sv_cgtree_sweep_in(const sv_cgtree *t)
{
	int64_t age;

	if (t == NULL || t->spare == NULL) {
		return -1;
	}
	age = (int64_t) sv_loop_now_ms() - t->spare->released_ms;
	return age >= CG_SPARE_MS ? 0 : (int) (CG_SPARE_MS - age);
}

/* cg_wait_empty waits at most ms for the leaf's cgroup.events to change
 * (it does when the leaf empties). */
static void
cg_wait_empty(sv_cgtree *t, sv_cgleaf *l, int ms)
{
	char          path[CG_LEAF_MAX + 16], buf[256];
	struct pollfd p;
	ssize_t       n;

	snprintf(path, sizeof(path), "%s/cgroup.events", l->name);
	if ((p.fd = openat(t->fd, path, O_RDONLY | O_CLOEXEC)) < 0) {
		return;
	}
	p.events = POLLPRI;
	n        = read(p.fd, buf, sizeof(buf) - 1);
	if (n > 0) {
		buf[n] = '\0';
		if (strstr(buf, "populated 0") == NULL) {
			(void) poll(&p, 1, ms);
		}
	}
	close(p.fd);
}

size_t
sv_cgtree_close(sv_cgtree *t, int timeout_ms)
{
	int64_t    deadline;
	size_t     left = 0;
	sv_cgleaf *l;

	if (t == NULL) {
		return 0;
	}
	deadline = (int64_t) sv_loop_now_ms() + timeout_ms;
	for (l = t->leaves; l != NULL; l = l->next) {
		if (!l->released) {
			sv_cgtree_release(t, l);
		}
	}
	while ((left = cg_sweep(t, 0, SIZE_MAX)) > 0) {
		int64_t rest = deadline - (int64_t) sv_loop_now_ms();
		if (rest <= 0) {
			break;
		}
		cg_wait_empty(t, t->leaves, rest > 100 ? 100 : (int) rest);
	}
	while (t->leaves != NULL) {
		cg_unlink(t, t->leaves); /* left in the file system */
	}
	close(t->fd);
	if (left == 0) {
		(void) unlinkat(t->parentfd, t->name, AT_REMOVEDIR);
	}
	close(t->parentfd);
	free(t);
	return left;
}
