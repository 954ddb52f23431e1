/*
 * clone3.c — the clone3 system call with a function run in the child (see
 * clone3.h).
 *
 * The shared-memory form needs the child to start on its own stack, in
 * code that does not return: glibc's syscall() would return, in the child,
 * through a return address on the caller's stack, which the child shares
 * and the parent still needs. The x86-64 trampoline below keeps fn and arg
 * in callee-saved registers (clone3 copies every register into the child,
 * except rax, which is 0 there, and the stack pointer, which is the top
 * of the new stack), calls fn, and makes the exit system call with its
 * return value. The parent's path through it is an ordinary function
 * return.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shell/clone3.h"

#ifndef SYS_clone3
#define SYS_clone3 435
#endif

/* The kernel's struct clone_args, version 2 (with cgroup), spelled out
 * so that older headers do not matter. */
typedef struct clone3_args {
	uint64_t flags;
	uint64_t pidfd;
	uint64_t child_tid;
	uint64_t parent_tid;
	uint64_t exit_signal;
	uint64_t stack;
	uint64_t stack_size;
	uint64_t tls;
	uint64_t set_tid;
	uint64_t set_tid_size;
	uint64_t cgroup;
} clone3_args;

#if defined(__x86_64__)
/* clone3_tramp(args, size, fn, arg): the system call; in the child, on
 * the new stack, fn(arg) and then exit(its value). Returns the kernel's
 * result (pid or -errno) in the parent. Defined in assembly below. */
long clone3_tramp(clone3_args *args, size_t size, int (*fn)(void *), void *arg)
    __attribute__((visibility("hidden")));

__asm__(".text\n"
        ".globl clone3_tramp\n"
        ".hidden clone3_tramp\n"
        ".type clone3_tramp,@function\n"
        "clone3_tramp:\n"
        "	.cfi_startproc\n"
        "	pushq %r12\n"
        "	.cfi_adjust_cfa_offset 8\n"
        "	pushq %r13\n"
        "	.cfi_adjust_cfa_offset 8\n"
        "	movq %rdx, %r12\n"
        "	movq %rcx, %r13\n"
        "	movl $435, %eax\n"
        "	syscall\n"
        "	testq %rax, %rax\n"
        "	jz 1f\n"
        "	popq %r13\n"
        "	.cfi_adjust_cfa_offset -8\n"
        "	popq %r12\n"
        "	.cfi_adjust_cfa_offset -8\n"
        "	ret\n"
        "1:\n"
        "	.cfi_undefined %rip\n"
        "	xorl %ebp, %ebp\n"
        "	movq %r13, %rdi\n"
        "	call *%r12\n"
        "	movl %eax, %edi\n"
        "	movl $60, %eax\n"
        "	syscall\n"
        "	hlt\n"
        "	.cfi_endproc\n"
        ".size clone3_tramp, .-clone3_tramp\n");
#define CLONE3_HAVE_TRAMP 1
#else
#define CLONE3_HAVE_TRAMP 0
#endif

bool
sv_clone3_can_share_vm(void)
{
	return CLONE3_HAVE_TRAMP != 0;
}

long
sv_clone3(const sv_clone3_req *r)
{
	clone3_args a;
	long        rv;

	memset(&a, 0, sizeof(a));
	a.flags       = r->flags;
	a.exit_signal = SIGCHLD;
	if ((r->flags & CLONE_PIDFD) != 0) {
		a.pidfd = (uint64_t) (uintptr_t) r->pidfdp;
	}
	if ((r->flags & CLONE_INTO_CGROUP) != 0) {
		a.cgroup = (uint64_t) (unsigned) r->cgroup_fd;
	}
	if ((r->flags & CLONE_VM) != 0) {
#if CLONE3_HAVE_TRAMP
		a.flags |= CLONE_VFORK;
		a.stack      = (uint64_t) (uintptr_t) r->stack;
		a.stack_size = r->stack_size;
		return clone3_tramp(&a, sizeof(a), r->fn, r->arg);
#else
		return -ENOTSUP;
#endif
	}
	rv = syscall(SYS_clone3, &a, sizeof(a));
	if (rv == 0) {
		/* The child, on its copy of our stack. */
		_exit(r->fn(r->arg));
	}
	return rv < 0 ? -errno : rv;
}
