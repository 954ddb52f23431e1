/*
 * cgroup_internal.h — what the cgroup files share (private to
 * shell/cgroup*.c; the API is shell/cgroup.h).
 *
 * The files, one concept each:
 *   cgroup.c        the daemon's own tree: detection, leaves, release,
 *                   sweep of its spares, close
 *   cgroup_stale.c  the trees of supervisors that did not stop: their
 *                   names, removal once empty, and the kill of the
 *                   leaves a successor did not adopt
 */
#ifndef SV_SHELL_CGROUP_INTERNAL_H
#define SV_SHELL_CGROUP_INTERNAL_H

#include <limits.h>
#include <stdint.h>

#include "shell/cgroup.h"

/* Room for a tree's name ("supervised.PID" or "supervised.PID.N"). */
#define CG_TREE_NAME_MAX 64

struct sv_cgtree {
	int        fd; /* the tree's directory */
	int        parentfd; /* the daemon's own cgroup */
	char       name[CG_TREE_NAME_MAX]; /* the tree's name in the parent */
	char       path[PATH_MAX];
	uint64_t   seq;
	sv_cgleaf *leaves; /* live and released */
	sv_cgleaf *spare, *spare_tail; /* released, oldest first */
};

/* svcg_write writes text to the file name in dirfd (cgroup.c). Returns 0
 * or -1 with errno set. */
int svcg_write(int dirfd, const char *name, const char *text);

#endif /* SV_SHELL_CGROUP_INTERNAL_H */
