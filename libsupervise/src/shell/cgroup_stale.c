/*
 * cgroup_stale.c — the cgroup trees of supervisors that did not stop
 * cleanly (kill -9, a crash): their names, their removal once empty, and
 * the kill of the leaves a successor did not adopt (see cgroup.h).
 *
 * A dead supervisor's tree sits beside ours in the same parent cgroup.
 * Its leaves hold the workers the successor adopts (which run on), and
 * whatever else the dead one left: the leftovers of a worker that died
 * with it (its leaf would have been killed when the worker's exit was
 * reaped), and a spawn it began but could not record, possibly still
 * before its execve, where nothing but its cgroup says whose it is. A
 * successor that has adopted what it could kills the other leaves of the
 * one tree its journal names (sv_cgtree_kill_stale_leaves); the trees of
 * other dead supervisors may belong to other state directories whose
 * successors have yet to adopt from them, so they are only ever removed
 * once empty (sv_cgtree_sweep_stale), never killed.
 *
 * Trust: a tree is touched only if its name has the form the daemon makes
 * ("supervised.<digits>[.<digits>]"), it is not ours and no live process
 * named supervised has its pid; directories are opened relative to the
 * parent's descriptor with O_NOFOLLOW | O_DIRECTORY (a symlink is never
 * followed), and every read is bounded.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shell/cgroup.h"
#include "shell/cgroup_internal.h"

/* Bytes of one cgroup.procs read at most (pids are read in chunks). */
#define CG_PROCS_CHUNK 4096
/* Bytes of a cgroup's cgroup.procs considered at most: a leaf listing
 * more (over 100,000 processes) is not checked whole, so it is kept. */
#define CG_PROCS_MAX (1u << 20)
/* Depth of cgroups below a leaf that are checked (a worker may make
 * cgroups of its own inside its leaf); a leaf deeper than that is kept. */
#define CG_DEPTH_MAX 8

/* sv_cgtree_name_parse: see cgroup.h. */
bool
sv_cgtree_name_parse(const char *name, long *pidp)
{
	const char *p   = name;
	long        pid = 0;
	size_t      nd  = 0;

	if (strnlen(name, CG_TREE_NAME_MAX) >= CG_TREE_NAME_MAX
	    || strncmp(name, "supervised.", 11) != 0) {
		return false;
	}
	for (p = name + 11; *p >= '0' && *p <= '9'; p++, nd++) {
		if (nd >= 10 || (nd == 0 && *p == '0')) {
			return false; /* beyond any pid, or a leading zero */
		}
		pid = pid * 10 + (*p - '0');
	}
	if (nd == 0 || pid <= 0 || pid > INT32_MAX) {
		return false;
	}
	if (*p == '.') {
		nd = 0;
		for (p++; *p >= '0' && *p <= '9'; p++) {
			if (++nd > 10) {
				return false;
			}
		}
		if (nd == 0) {
			return false;
		}
	}
	if (*p != '\0') {
		return false;
	}
	if (pidp != NULL) {
		*pidp = pid;
	}
	return true;
}

/* cg_stale_owner_alive tells whether the tree name ("supervised.PID" or
 * "supervised.PID.N") belongs to a live process named supervised. A name
 * that is not of that form is never ours to touch: reported as alive. */
static bool
cg_stale_owner_alive(const char *name)
{
	char    path[64], comm[32];
	long    pid;
	int     fd;
	ssize_t n;

	if (!sv_cgtree_name_parse(name, &pid)) {
		return true;
	}
	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		return errno != ENOENT; /* unknown: leave it */
	}
	n = read(fd, comm, sizeof(comm) - 1);
	close(fd);
	if (n <= 0) {
		return true;
	}
	comm[n] = '\0';
	return strcmp(comm, "supervised\n") == 0;
}

/* cg_remove_tree removes the leaves of the tree name in parentfd, then the
 * tree; true when the tree is gone. A populated leaf (EBUSY) stops it. */
static bool
cg_remove_tree(int parentfd, const char *name)
{
	int fd = openat(
	    parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR           *d;
	struct dirent *de;

	if (fd < 0) {
		return errno == ENOENT;
	}
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return false;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_type == DT_DIR && de->d_name[0] != '.') {
			(void) unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);
		}
	}
	closedir(d);
	return unlinkat(parentfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT;
}

size_t
sv_cgtree_sweep_stale(sv_cgtree *t, size_t *busyp)
{
	size_t         removed = 0, busy = 0;
	int            fd;
	DIR           *d;
	struct dirent *de;

	if (busyp != NULL) {
		*busyp = 0;
	}
	if (t == NULL
	    || (fd = openat(
	            t->parentfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC))
	        < 0) {
		return 0;
	}
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return 0;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_type != DT_DIR || strcmp(de->d_name, t->name) == 0
		    || cg_stale_owner_alive(de->d_name)) {
			continue;
		}
		if (cg_remove_tree(t->parentfd, de->d_name)) {
			removed++;
		} else {
			busy++;
		}
	}
	closedir(d);
	if (busyp != NULL) {
		*busyp = busy;
	}
	return removed;
}

/* What a look at one leaf found: processes in it (and below it), and
 * whether one of them is kept or the leaf could not be read whole. */
typedef struct cg_look {
	sv_cgtree_keep_cb keep;
	void             *arg;
	size_t            procs;
	bool              keep_leaf;
} cg_look;

/* cg_look_procs reads the cgroup.procs of cgroup cgfd in chunks (at most
 * CG_PROCS_MAX bytes), counting its processes into lk and asking lk->keep
 * of each; stops at the first kept one. A read that fails or is cut keeps
 * the leaf: what cannot be checked is not killed. */
static void
cg_look_procs(int cgfd, cg_look *lk)
{
	char    buf[CG_PROCS_CHUNK + 1];
	size_t  have = 0, total = 0;
	ssize_t n = 0;
	int     fd
	    = openat(cgfd, "cgroup.procs", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0) {
		lk->keep_leaf = true;
		return;
	}
	while (!lk->keep_leaf
	    && (n = read(fd, buf + have, CG_PROCS_CHUNK - have)) > 0) {
		char *line = buf, *nl;
		total += (size_t) n;
		have += (size_t) n;
		buf[have] = '\0';
		while ((nl = memchr(line, '\n', have - (size_t) (line - buf)))
		    != NULL) {
			char *end;
			long  pid;
			*nl   = '\0';
			errno = 0;
			pid   = strtol(line, &end, 10);
			line  = nl + 1;
			if (errno != 0 || *end != '\0' || pid < 0
			    || pid > INT32_MAX) {
				lk->keep_leaf = true; /* not understood */
				break;
			}
			if (pid == 0) {
				continue; /* outside our pid namespace */
			}
			lk->procs++;
			if (lk->keep(lk->arg, (pid_t) pid)) {
				lk->keep_leaf = true;
				break;
			}
		}
		/* Keep the partial last line for the next read. */
		have -= (size_t) (line - buf);
		memmove(buf, line, have);
		if (have == CG_PROCS_CHUNK || total > CG_PROCS_MAX) {
			lk->keep_leaf = true;
		}
	}
	if (n < 0 || have != 0) {
		lk->keep_leaf = true;
	}
	close(fd);
}

/* cg_look_tree looks at cgroup cgfd and every cgroup below it, down to
 * CG_DEPTH_MAX levels (deeper: kept). Closes cgfd. */
static void
cg_look_tree(int cgfd, int depth, cg_look *lk)
{
	DIR           *d;
	struct dirent *de;

	cg_look_procs(cgfd, lk);
	if (lk->keep_leaf || (d = fdopendir(cgfd)) == NULL) {
		lk->keep_leaf = true; /* kept, or its children unknown */
		close(cgfd);
		return;
	}
	while (!lk->keep_leaf && (de = readdir(d)) != NULL) {
		int sub;
		if (de->d_type != DT_DIR || de->d_name[0] == '.') {
			continue;
		}
		if (depth >= CG_DEPTH_MAX
		    || (sub = openat(dirfd(d), de->d_name,
		            O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC))
		        < 0) {
			lk->keep_leaf = true;
			break;
		}
		cg_look_tree(sub, depth + 1, lk);
	}
	closedir(d);
}

/* sv_cgtree_kill_stale_leaves: see cgroup.h. */
sv_err
sv_cgtree_kill_stale_leaves(sv_cgtree *t, const char *tree_name,
    sv_cgtree_keep_cb keep, void *arg, sv_cgkill *out)
{
	int            fd;
	DIR           *d;
	struct dirent *de;

	*out = (sv_cgkill) {0};
	if (t == NULL || keep == NULL || tree_name == NULL
	    || !sv_cgtree_name_parse(tree_name, NULL)) {
		return SV_EINVAL;
	}
	/* Ours has the dead one's name only if we have its pid and its tree
	 * was empty (sv_cgtree_open removed it and made ours): nothing of
	 * it is left. */
	if (strcmp(tree_name, t->name) == 0) {
		return SV_ENOTFOUND;
	}
	fd = openat(t->parentfd, tree_name,
	    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		return errno == ENOENT ? SV_ENOTFOUND : SV_ESYSTEM;
	}
	/* After the open: a tree of that name made by a live supervisor
	 * (the dead one's pid reused, its tree removed and made again) is
	 * seen as its owner's, never killed. */
	if (cg_stale_owner_alive(tree_name)) {
		close(fd);
		return SV_EBUSY;
	}
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return SV_ESYSTEM;
	}
	while ((de = readdir(d)) != NULL) {
		cg_look lk = {keep, arg, 0, false};
		int     leaf;
		if (de->d_type != DT_DIR || de->d_name[0] == '.') {
			continue;
		}
		leaf = openat(dirfd(d), de->d_name,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (leaf < 0) {
			continue; /* removed meanwhile */
		}
		out->leaves++;
		/* A second descriptor: cg_look_tree closes its own. */
		cg_look_tree(dup(leaf), 0, &lk);
		if (lk.keep_leaf) {
			out->kept++;
		} else if (lk.procs > 0) {
			/* The whole subtree, and what forks meanwhile. */
			if (svcg_write(leaf, "cgroup.kill", "1") == 0) {
				out->killed++;
				out->procs += lk.procs;
			} else {
				out->failed++;
			}
		}
		close(leaf);
	}
	closedir(d);
	return SV_OK;
}
