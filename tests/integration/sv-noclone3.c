/*
 * sv-noclone3.c — run a program where the clone3 system call answers
 * ENOSYS, as on a kernel older than 5.3 or under a container's seccomp
 * profile that does not know clone3 (a test helper).
 *
 * Usage: sv-noclone3 PROGRAM [ARG...]
 *        SV_NOCLONE3_EXEC=PROGRAM sv-noclone3 [ARG...]
 * The second form runs PROGRAM with sv-noclone3's own arguments, so the
 * wrapper can stand where a test expects the program itself (the
 * integration harness starts "DAEMON --config ..."). With SV_NOCLONE3_LOG
 * set, the program's stderr is appended to that file; with
 * SV_NOCLONE3_OFF=1 no filter is installed (a pass-through, for the same
 * test's cases that want the real clone3).
 *
 * Design: a seccomp filter (no_new_privs, so any user may install it)
 * returns ENOSYS for clone3 on x86-64 and lets every other call through;
 * on any other architecture it lets everything through, and sv-noclone3
 * says so on stderr. The filter survives exec and is inherited by every
 * child, so the whole process tree sees no clone3 (glibc falls back to
 * clone by itself). Exit status: that of the program (exec), or 127 if
 * it cannot be started, 2 on a usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_clone3
#define SYS_clone3 435
#endif

/* install_filter makes clone3 fail with ENOSYS for this process and its
 * descendants. Returns 0, or -1 with errno set. */
static int
install_filter(void)
{
#if defined(__x86_64__)
	struct sock_filter code[] = {
	    BPF_STMT(
	        BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	    BPF_STMT(
	        BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & 0xffff)),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
	    .len    = (unsigned short) (sizeof(code) / sizeof(code[0])),
	    .filter = code,
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		return -1;
	}
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
#else
	fprintf(stderr, "sv-noclone3: no filter for this architecture\n");
	return 0;
#endif
}

/* main installs the filter and execs the program (see the top). */
int
main(int argc, char **argv)
{
	const char *prog = getenv("SV_NOCLONE3_EXEC");
	const char *log  = getenv("SV_NOCLONE3_LOG");
	char      **args;

	if (prog != NULL && prog[0] != '\0') {
		args    = argv;
		args[0] = (char *) prog;
	} else if (argc >= 2) {
		prog = argv[1];
		args = argv + 1;
	} else {
		fprintf(stderr, "usage: sv-noclone3 PROGRAM [ARG...]\n");
		return 2;
	}
	if (log != NULL && log[0] != '\0') {
		int fd = open(
		    log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (fd < 0 || dup2(fd, STDERR_FILENO) < 0) {
			fprintf(stderr, "sv-noclone3: %s: %s\n", log,
			    strerror(errno));
			return 127;
		}
		close(fd);
	}
	if ((getenv("SV_NOCLONE3_OFF") == NULL
	        || strcmp(getenv("SV_NOCLONE3_OFF"), "1") != 0)
	    && install_filter() != 0) {
		fprintf(stderr, "sv-noclone3: seccomp: %s\n", strerror(errno));
		return 127;
	}
	execv(prog, args);
	fprintf(stderr, "sv-noclone3: %s: %s\n", prog, strerror(errno));
	return 127;
}
