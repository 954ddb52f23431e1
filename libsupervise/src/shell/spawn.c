/*
 * spawn.c — posix_spawn or clone(CLONE_VM|CLONE_VFORK), pidfd and waitid
 * (see spawn.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shell/spawn.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif
#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
/* The 32-bit-id system calls, where an architecture has both kinds. */
#ifdef SYS_setgroups32
#define SPAWN_SYS_SETGROUPS SYS_setgroups32
#define SPAWN_SYS_SETRESGID SYS_setresgid32
#define SPAWN_SYS_SETRESUID SYS_setresuid32
#else
#define SPAWN_SYS_SETGROUPS SYS_setgroups
#define SPAWN_SYS_SETRESGID SYS_setresgid
#define SPAWN_SYS_SETRESUID SYS_setresuid
#endif
/* Stack of the clone child: a few libc calls, with room for sanitizer
 * interceptors. Untouched pages cost nothing. */
#define SPAWN_STACK (256 * 1024)
/* Longest program path the PATH search builds. */
#define SPAWN_PATH_MAX 4096

/* What the clone child needs, and where it reports a failure. It lives on
 * the parent's stack, which the child shares (CLONE_VM). */
typedef struct spawn_child {
	const sv_spawn_req *req;
	const char         *path; /* resolved program */
	const sigset_t     *dflt; /* signals reset to SIG_DFL */
	pid_t               parent; /* the daemon's pid */
	volatile int        err; /* errno of the step that failed, or 0 */
} spawn_child;

/* spawn_pidfd_open wraps the pidfd_open system call. */
static int
spawn_pidfd_open(pid_t pid)
{
	return (int) syscall(SYS_pidfd_open, pid, 0);
}

/* spawn_default_set fills the signals a child gets with SIG_DFL: those the
 * daemon blocks, ignores or handles. */
static void
spawn_default_set(sigset_t *dflt)
{
	sigemptyset(dflt);
	sigaddset(dflt, SIGTERM);
	sigaddset(dflt, SIGINT);
	sigaddset(dflt, SIGHUP);
	sigaddset(dflt, SIGPIPE);
	sigaddset(dflt, SIGCHLD);
	sigaddset(dflt, SIGQUIT);
	sigaddset(dflt, SIGUSR1);
	sigaddset(dflt, SIGUSR2);
}

/* spawn_class maps an exec errno to the error sv_spawn returns. */
static sv_err
spawn_class(int e)
{
	return (e == ENOENT || e == EACCES || e == ENOEXEC || e == ENOTDIR)
	    ? SV_ENOTFOUND
	    : SV_ESYSTEM;
}

/* spawn_resolve finds prog as execvp would, in the daemon's PATH: a name
 * with a '/' is used as it is, else the first regular file with an execute
 * bit in a PATH directory. Returns 0, or an errno (ENOENT, ENAMETOOLONG). */
static int
spawn_resolve(const char *prog, char *buf, size_t len)
{
	const char *path = getenv("PATH");
	struct stat st;

	if (strchr(prog, '/') != NULL) {
		if (strlen(prog) >= len) {
			return ENAMETOOLONG;
		}
		memcpy(buf, prog, strlen(prog) + 1);
		return 0;
	}
	if (path == NULL) {
		path = "/usr/local/bin:/usr/bin:/bin";
	}
	while (*path != '\0') {
		const char *end = strchr(path, ':');
		size_t n = end != NULL ? (size_t) (end - path) : strlen(path);
		int    w = snprintf(buf, len, "%.*s%s%s", (int) n, path,
                    n > 0 ? "/" : "", prog);
		if (w > 0 && (size_t) w < len && stat(buf, &st) == 0
		    && S_ISREG(st.st_mode) && (st.st_mode & 0111) != 0) {
			return 0;
		}
		path += n;
		if (*path == ':') {
			path++;
		}
	}
	return ENOENT;
}

/* spawn_raw_ids switches to the worker's credentials with raw system
 * calls, which change the calling task only. Returns 0 or an errno. */
static int
spawn_raw_ids(const sv_creds *c)
{
	if (syscall(SPAWN_SYS_SETGROUPS, c->ngroups, c->groups) != 0
	    || syscall(SPAWN_SYS_SETRESGID, c->gid, c->gid, c->gid) != 0
	    || syscall(SPAWN_SYS_SETRESUID, c->uid, c->uid, c->uid) != 0) {
		return errno;
	}
	return 0;
}

/* spawn_child_main runs in the clone child, on its own stack but in the
 * daemon's memory, with every signal blocked: async-signal-safe calls
 * only, and no return except through exec or _exit. Not instrumented by
 * the address sanitizer, whose bookkeeping belongs to the parent thread. */
#if defined(__has_attribute)
#if __has_attribute(no_sanitize)
__attribute__((no_sanitize("address")))
#endif
#endif
static int
spawn_child_main(void *arg)
{
	spawn_child        *c = arg;
	const sv_spawn_req *r = c->req;
	struct sigaction    sa;
	sigset_t            none;
	int                 fd;

	/* A handler of the daemon must not run here: default for every
	 * handled signal and for those the daemon ignores or blocks. (The
	 * handler table is a copy: no CLONE_SIGHAND.) */
	for (int sig = 1; sig < NSIG; sig++) {
		if (sigaction(sig, NULL, &sa) != 0 || sa.sa_handler == SIG_DFL
		    || (sa.sa_handler == SIG_IGN
		        && !sigismember(c->dflt, sig))) {
			continue;
		}
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_DFL;
		(void) sigaction(sig, &sa, NULL);
	}
	if (setpgid(0, 0) != 0) {
		goto fail;
	}
	/* Into the worker's cgroup before it runs a single instruction. */
	if (r->join_cgroup && write(r->cgroup_procs_fd, "0", 1) != 1) {
		goto fail;
	}
	if ((fd = open("/dev/null", O_RDONLY)) < 0) {
		goto fail;
	}
	if (fd != STDIN_FILENO) {
		if (dup2(fd, STDIN_FILENO) < 0) {
			goto fail;
		}
		close(fd);
	}
	for (size_t i = 0; i < r->npass_fds; i++) {
		if (dup2(r->pass_fds[i], 3 + (int) i) < 0) {
			goto fail;
		}
	}
	if (r->creds != NULL && r->creds->set) {
		int e = spawn_raw_ids(r->creds);
		if (e != 0) {
			errno = e;
			goto fail;
		}
	}
	if (r->cwd != NULL && chdir(r->cwd) != 0) {
		goto fail;
	}
	/* After the credentials, which would clear it. If the daemon died
	 * before this, the signal will never come: go now. */
	if (r->die_with_parent) {
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) {
			goto fail;
		}
		if (getppid() != c->parent) {
			_exit(127);
		}
	}
	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL) != 0) {
		goto fail;
	}
	execve(c->path, r->argv, r->envp);
fail:
	c->err = errno != 0 ? errno : EINVAL;
	_exit(127);
}

/* spawn_clone starts a child with clone(CLONE_VM|CLONE_VFORK|CLONE_PIDFD):
 * the parent resumes once the child has exec'd or failed. */
static sv_err
spawn_clone(const sv_spawn_req *req, const sigset_t *dflt, pid_t *pidp,
    int *pidfdp, int *errnop)
{
	char        path[SPAWN_PATH_MAX];
	spawn_child c;
	sigset_t    all, old;
	char       *stack;
	int         pidfd = -1, e;
	pid_t       pid;

	if ((e = spawn_resolve(req->path, path, sizeof(path))) != 0) {
		*errnop = e;
		return SV_ENOTFOUND;
	}
	stack = mmap(NULL, SPAWN_STACK, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED) {
		*errnop = errno;
		return SV_ESYSTEM;
	}
	c = (spawn_child) {req, path, dflt, getpid(), 0};
	/* No signal handler may run in the child while it shares our memory
	 * (it unblocks signals just before exec). */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = clone(spawn_child_main, stack + SPAWN_STACK,
	    CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD, &c, &pidfd);
	e   = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	munmap(stack, SPAWN_STACK);
	if (pid < 0) {
		*errnop = e;
		return SV_ESYSTEM;
	}
	if (c.err != 0) {
		siginfo_t si;
		/* It has called _exit: collect it, so nothing is left. */
		(void) waitid((idtype_t) P_PIDFD, (id_t) pidfd, &si, WEXITED);
		close(pidfd);
		*errnop = c.err;
		return spawn_class(c.err);
	}
	*pidp   = pid;
	*pidfdp = pidfd;
	return SV_OK;
}

sv_err
sv_spawn(const sv_spawn_req *req, pid_t *pidp, int *pidfdp, int *errnop)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t          attr;
	sigset_t                   none, dflt;
	pid_t                      pid;
	int                        rv, fd;
	sv_err                     err = SV_OK;

	*errnop = 0;
	sigemptyset(&none);
	spawn_default_set(&dflt);
	if ((req->creds != NULL && req->creds->set) || req->join_cgroup
	    || req->die_with_parent) {
		return spawn_clone(req, &dflt, pidp, pidfdp, errnop);
	}

	if (posix_spawn_file_actions_init(&fa) != 0) {
		return SV_ESYSTEM;
	}
	if (posix_spawnattr_init(&attr) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		return SV_ESYSTEM;
	}
	rv = posix_spawn_file_actions_addopen(
	    &fa, 0, "/dev/null", O_RDONLY, 0);
	for (size_t i = 0; rv == 0 && i < req->npass_fds; i++) {
		rv = posix_spawn_file_actions_adddup2(
		    &fa, req->pass_fds[i], 3 + (int) i);
	}
	if (rv == 0 && req->cwd != NULL) {
		rv = posix_spawn_file_actions_addchdir_np(&fa, req->cwd);
	}
	if (rv == 0) {
		rv = posix_spawnattr_setflags(&attr,
		    POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
		        | POSIX_SPAWN_SETPGROUP);
	}
	if (rv == 0) {
		rv = posix_spawnattr_setsigmask(&attr, &none);
	}
	if (rv == 0) {
		rv = posix_spawnattr_setsigdefault(&attr, &dflt);
	}
	if (rv == 0) {
		rv = posix_spawnattr_setpgroup(&attr, 0);
	}
	if (rv == 0) {
		if (strchr(req->path, '/') != NULL) {
			rv = posix_spawn(
			    &pid, req->path, &fa, &attr, req->argv, req->envp);
		} else {
			rv = posix_spawnp(
			    &pid, req->path, &fa, &attr, req->argv, req->envp);
		}
		if (rv != 0) {
			*errnop = rv;
			err     = spawn_class(rv);
		}
	} else {
		*errnop = rv;
		err     = SV_ESYSTEM;
	}
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	if (err != SV_OK) {
		return err;
	}
	/* The child is ours and unreaped, so its pid cannot be reused yet. */
	if ((fd = spawn_pidfd_open(pid)) < 0) {
		*errnop = errno;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return SV_ESYSTEM;
	}
	*pidp   = pid;
	*pidfdp = fd;
	return SV_OK;
}

sv_err
sv_reap(int pidfd, sv_exit_info *info)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	if (waitid((idtype_t) P_PIDFD, (id_t) pidfd, &si, WEXITED | WNOHANG)
	    != 0) {
		return SV_ESYSTEM;
	}
	if (si.si_pid == 0) {
		return SV_EBUSY;
	}
	memset(info, 0, sizeof(*info));
	switch (si.si_code) {
	case CLD_EXITED:
		info->exited = true;
		info->code   = si.si_status;
		break;
	case CLD_DUMPED:
		info->core = true;
		/* fall through */
	default:
		info->signo = si.si_status;
		break;
	}
	return SV_OK;
}

sv_err
sv_signal(int pidfd, int signo)
{
	if (syscall(SYS_pidfd_send_signal, pidfd, signo, NULL, 0) != 0
	    && errno != ESRCH) {
		return SV_ESYSTEM;
	}
	return SV_OK;
}

sv_err
sv_signal_group(pid_t pgid, int signo)
{
	if (pgid <= 1) {
		return SV_EINVAL;
	}
	if (kill(-pgid, signo) != 0 && errno != ESRCH) {
		return SV_ESYSTEM;
	}
	return SV_OK;
}
