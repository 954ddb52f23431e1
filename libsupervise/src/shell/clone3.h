/*
 * clone3.h — the clone3 system call with a function to run in the child
 * (internal, effect shell).
 *
 * clone3 is what lets a child be born in a given cgroup (CLONE_INTO_CGROUP,
 * Linux >= 5.7): nothing is migrated, so the cgroup v2 threadgroup lock,
 * which can wait a whole RCU grace period when the hierarchy is not
 * mounted with favordynmods, is never taken on the spawn path. glibc has
 * no wrapper, so this file makes the raw system call.
 *
 * Two forms:
 *   - shared memory (CLONE_VM | CLONE_VFORK), as cheap as vfork: the child
 *     runs fn on a stack the caller provides, in the caller's memory, and
 *     the caller resumes once the child has exec'd or exited. The child
 *     starts on the new stack with no return address to go back to, so
 *     the system call is made by a small assembly trampoline that calls fn
 *     and then exit. Only where such a trampoline exists
 *     (sv_clone3_can_share_vm); elsewhere,
 *   - fork style (no CLONE_VM): the child gets a copy of the caller's
 *     memory and runs fn on its copy of the caller's stack.
 * Either way fn must make only async-signal-safe calls (the caller has
 * other threads), and must end with exec or _exit; if it returns, the
 * child exits with its return value.
 */
#ifndef SV_SHELL_CLONE3_H
#define SV_SHELL_CLONE3_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000ULL
#endif
#ifndef CLONE_CLEAR_SIGHAND
#define CLONE_CLEAR_SIGHAND 0x100000000ULL
#endif
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

/* What one clone3 call asks for. */
typedef struct sv_clone3_req {
	uint64_t flags; /* CLONE_* (CLONE_VM requires stack, and implies
	                 * CLONE_VFORK: added here) */
	int    cgroup_fd; /* with CLONE_INTO_CGROUP: the cgroup's directory */
	int   *pidfdp; /* with CLONE_PIDFD: gets the child's pidfd */
	void  *stack; /* lowest address of the child's stack (CLONE_VM) */
	size_t stack_size;
	int (*fn)(void *); /* run in the child */
	void *arg;
} sv_clone3_req;

/*
 * sv_clone3_can_share_vm tells whether sv_clone3 supports CLONE_VM on this
 * architecture (a trampoline exists).
 */
bool sv_clone3_can_share_vm(void);

/*
 * sv_clone3 makes the clone3 system call; in the child, runs r->fn(r->arg).
 * Returns the child's pid in the caller, or -errno: ENOSYS (no clone3),
 * EINVAL or E2BIG (a flag or field the kernel does not know), EBADF (no
 * cgroup behind cgroup_fd), ENOTSUP (CLONE_VM where sv_clone3_can_share_vm
 * is false), or any error of clone3. Never returns in the child.
 */
long sv_clone3(const sv_clone3_req *r);

#endif /* SV_SHELL_CLONE3_H */
