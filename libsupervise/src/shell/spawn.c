/*
 * spawn.c — posix_spawn, clone3 into the worker's cgroup or
 * clone(CLONE_VM|CLONE_VFORK), pidfd and waitid (see spawn.h).
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

#include "shell/clone3.h"
#include "shell/spawn.h"

#ifndef P_PIDFD
#define P_PIDFD 3
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
/* close_range and its flag, where older headers lack them. */
#ifdef SYS_close_range
#define SPAWN_SYS_CLOSE_RANGE SYS_close_range
#else
#define SPAWN_SYS_CLOSE_RANGE 436
#endif
#define SPAWN_CLOSE_RANGE_UNSHARE (1u << 1)
/* Longest program path the PATH search builds. */
#define SPAWN_PATH_MAX 4096

/* How a worker gets into its cgroup: born there (clone3 with
 * CLONE_INTO_CGROUP), or, where the kernel lacks that, by writing
 * cgroup.procs before exec. Decided by the first spawn into a cgroup;
 * one daemon thread spawns, so plain variables do. */
enum { SPAWN_CG_UNKNOWN, SPAWN_CG_CLONE3, SPAWN_CG_WRITE };
static int spawn_cg_mode = SPAWN_CG_UNKNOWN;
/* Why the fallback was chosen, until sv_spawn_cgroup_note takes it. */
static char spawn_cg_why[160];
static bool spawn_cg_noted;

/* The child stack, kept across spawns (one mapping, its pages already
 * faulted in); taken with an atomic exchange, so a concurrent spawn maps
 * its own. */
static char *spawn_stack_cache;

/* What the clone child needs, and where it reports a failure. It lives on
 * the parent's stack, which the child shares (CLONE_VM), or err points
 * into a shared mapping (fork-style clone3). */
typedef struct spawn_child {
	const sv_spawn_req *req;
	const char         *path; /* resolved program */
	const sigset_t     *dflt; /* signals reset to SIG_DFL */
	pid_t               parent; /* the daemon's pid */
	int                 procs_fd; /* cgroup.procs to write, or -1 */
	bool                cleared; /* handlers reset by the kernel
	                              * (CLONE_CLEAR_SIGHAND) */
	int keep_fds; /* the child's table keeps fds below
	               * this (spawn_child_files) */
	volatile int *err; /* errno of the step that failed, or 0 */
	volatile int  err_local; /* where err points with CLONE_VM */
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

/* SPAWN_NO_ASAN: code that runs in the clone child, on the daemon's memory
 * but its own stack, is not instrumented by the address sanitizer (whose
 * bookkeeping belongs to the parent thread). */
#if defined(__has_attribute)
#if __has_attribute(no_sanitize)
#define SPAWN_NO_ASAN __attribute__((no_sanitize("address")))
#endif
#endif
#ifndef SPAWN_NO_ASAN
#define SPAWN_NO_ASAN
#endif

/* spawn_child_signals gives the clone child default dispositions for
 * every handled signal and for those of dflt the daemon ignores. With
 * c->cleared the kernel has reset the handlers already, and only ignored
 * signals are left to look at. Returns 0 or -1 (errno set). */
SPAWN_NO_ASAN
static int
spawn_child_signals(const spawn_child *c)
{
	struct sigaction sa;

	for (int sig = 1; sig < NSIG; sig++) {
		if (c->cleared && !sigismember(c->dflt, sig)) {
			continue;
		}
		if (sigaction(sig, NULL, &sa) != 0 || sa.sa_handler == SIG_DFL
		    || (sa.sa_handler == SIG_IGN
		        && !sigismember(c->dflt, sig))) {
			continue;
		}
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_DFL;
		if (sigaction(sig, &sa, NULL) != 0) {
			return -1;
		}
	}
	return 0;
}

/* spawn_child_files gives the clone child, which starts on the daemon's
 * descriptor table (CLONE_FILES), a table of its own holding only the
 * descriptors below c->keep_fds (the highest one it needs, plus one):
 * close_range(keep_fds, ~0, CLOSE_RANGE_UNSHARE) copies just those.
 * Without CLONE_FILES the kernel would copy the whole table into every
 * child and exec would close each close-on-exec descriptor again: two
 * passes over one descriptor per worker for every spawn, which made
 * bringing up n workers cost O(n^2) (8 ms a spawn at 10,000 workers).
 * Where close_range cannot unshare (Linux < 5.9), unshare(CLONE_FILES)
 * copies the whole table, as before. Returns 0 or -1 (errno set). */
SPAWN_NO_ASAN
static int
spawn_child_files(const spawn_child *c)
{
	if (syscall(SPAWN_SYS_CLOSE_RANGE, (unsigned) c->keep_fds, ~0u,
	        SPAWN_CLOSE_RANGE_UNSHARE)
	    == 0) {
		return 0;
	}
	return (int) syscall(SYS_unshare, CLONE_FILES);
}

/* spawn_child_main runs in the clone child, on its own stack but in the
 * daemon's memory (or a copy of it), with every signal blocked:
 * async-signal-safe calls only, and no return except through exec or
 * _exit. Not instrumented by the address sanitizer, whose bookkeeping
 * belongs to the parent thread. */
SPAWN_NO_ASAN
static int
spawn_child_main(void *arg)
{
	spawn_child        *c = arg;
	const sv_spawn_req *r = c->req;
	sigset_t            none;
	int                 fd;

	/* First, before any descriptor is opened or moved: a table of its
	 * own (it starts on the daemon's). */
	if (spawn_child_files(c) != 0) {
		goto fail;
	}
	/* A handler of the daemon must not run here: default for every
	 * handled signal and for those the daemon ignores or blocks. (The
	 * handler table is a copy: no CLONE_SIGHAND.) */
	if (spawn_child_signals(c) != 0) {
		goto fail;
	}
	/* A session of its own (and so a process group of its own, whose id
	 * is its pid): when the daemon dies, a stopped worker's group is
	 * not orphaned with it, which would bring SIGHUP + SIGCONT. */
	if (setsid() < 0) {
		goto fail;
	}
	/* Into the worker's cgroup before it runs a single instruction
	 * (only where it could not be born there). */
	if (c->procs_fd >= 0 && write(c->procs_fd, "0", 1) != 1) {
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
	*c->err = errno != 0 ? errno : EINVAL;
	_exit(127);
}

/* spawn_stack_get returns a child stack of SPAWN_STACK bytes: the kept one
 * if it is free, else a new mapping; NULL on failure (errno set). Give it
 * back with spawn_stack_put. */
static char *
spawn_stack_get(void)
{
	char *s
	    = __atomic_exchange_n(&spawn_stack_cache, NULL, __ATOMIC_ACQ_REL);

	if (s != NULL) {
		return s;
	}
	s = mmap(NULL, SPAWN_STACK, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	return s == MAP_FAILED ? NULL : s;
}

/* spawn_stack_put keeps s for the next spawn, or unmaps it when one is
 * kept already. */
static void
spawn_stack_put(char *s)
{
	char *none = NULL;

	if (!__atomic_compare_exchange_n(&spawn_stack_cache, &none, s, false,
	        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		munmap(s, SPAWN_STACK);
	}
}

/* spawn_clone3 starts the child with clone3, born in the cgroup behind
 * req->cgroup_fd, sharing our memory where the architecture allows (else
 * fork-style, with a shared page for the error). Returns the pid, or
 * -errno of clone3 itself (*c->err then untouched). */
static long
spawn_clone3(spawn_child *c, int *pidfdp)
{
	sv_clone3_req r = {
	    .flags = CLONE_PIDFD | CLONE_INTO_CGROUP | CLONE_CLEAR_SIGHAND
	        | CLONE_FILES,
	    .cgroup_fd = c->req->cgroup_fd,
	    .pidfdp    = pidfdp,
	    .fn        = spawn_child_main,
	    .arg       = c,
	};
	volatile int *shared;
	long          pid;

#ifndef SV_SPAWN_CLONE3_FORK
	if (sv_clone3_can_share_vm()) {
		char *stack = spawn_stack_get();
		if (stack == NULL) {
			return -errno;
		}
		r.flags |= CLONE_VM;
		r.stack      = stack;
		r.stack_size = SPAWN_STACK;
		pid          = sv_clone3(&r);
		spawn_stack_put(stack);
		return pid;
	}
#endif
	/* A copy of our memory: the error comes back through a shared page,
	 * read once the child has exec'd or exited (CLONE_VFORK). */
	shared = mmap(NULL, sizeof(int), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED) {
		return -errno;
	}
	*shared = 0;
	c->err  = shared;
	r.flags |= CLONE_VFORK;
	pid     = sv_clone3(&r);
	c->err  = &c->err_local;
	*c->err = *shared;
	munmap((void *) shared, sizeof(int));
	return pid;
}

/* spawn_clone_join starts the child with clone(CLONE_VM|CLONE_VFORK|
 * CLONE_PIDFD) on the kept stack; with a cgroup, the child joins it by a
 * write to its cgroup.procs. Returns the pid or -errno. */
static long
spawn_clone_join(spawn_child *c, int *pidfdp)
{
	char *stack;
	long  pid;

	if (c->req->cgroup_fd >= 0
	    && (c->procs_fd = openat(
	            c->req->cgroup_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC))
	        < 0) {
		return -errno;
	}
	if (c->procs_fd >= c->keep_fds) {
		c->keep_fds = c->procs_fd + 1;
	}
	if ((stack = spawn_stack_get()) == NULL) {
		pid = -errno;
	} else {
		pid = clone(spawn_child_main, stack + SPAWN_STACK,
		    CLONE_VM | CLONE_VFORK | CLONE_FILES | CLONE_PIDFD
		        | SIGCHLD,
		    c, pidfdp);
		pid = pid < 0 ? -errno : pid;
		spawn_stack_put(stack);
	}
	if (c->procs_fd >= 0) {
		close(c->procs_fd);
		c->procs_fd = -1;
	}
	return pid;
}

/* spawn_cg_fallback records that workers join their cgroup by a write to
 * cgroup.procs from now on, and why (e: the errno of clone3). */
static void
spawn_cg_fallback(int e)
{
	spawn_cg_mode = SPAWN_CG_WRITE;
	snprintf(spawn_cg_why, sizeof(spawn_cg_why),
	    "clone3 with CLONE_INTO_CGROUP is not available (%s): workers "
	    "join their cgroup by a write to cgroup.procs",
	    strerror(e));
}

/* spawn_keep_fds returns one more than the highest descriptor the child
 * must still have when its table is made: the passed sockets and the
 * standard three (cgroup.procs of the join path is added where that path
 * opens it, spawn_clone_join). */
static int
spawn_keep_fds(const sv_spawn_req *req)
{
	int top = 2;

	for (size_t i = 0; i < req->npass_fds; i++) {
		if (req->pass_fds[i] > top) {
			top = req->pass_fds[i];
		}
	}
	return top + 1;
}

/* spawn_clone starts a child with clone3 (into its cgroup) or
 * clone(CLONE_VM|CLONE_VFORK|CLONE_PIDFD): the parent resumes once the
 * child has exec'd or failed. */
static sv_err
spawn_clone(const sv_spawn_req *req, const sigset_t *dflt, pid_t *pidp,
    int *pidfdp, int *errnop)
{
	char        path[SPAWN_PATH_MAX];
	spawn_child c;
	sigset_t    all, old;
	int         pidfd = -1, e = 0;
	long        pid = -ENOSYS;

	if ((e = spawn_resolve(req->path, path, sizeof(path))) != 0) {
		*errnop = e;
		return SV_ENOTFOUND;
	}
	c = (spawn_child) {req, path, dflt, getpid(), -1, false, 0, NULL, 0};
	c.err      = &c.err_local;
	c.keep_fds = spawn_keep_fds(req);
	/* No signal handler may run in the child while it shares our memory
	 * (it unblocks signals just before exec). */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (req->cgroup_fd >= 0 && spawn_cg_mode != SPAWN_CG_WRITE) {
		c.cleared = true;
		pid       = spawn_clone3(&c, &pidfd);
		if (pid == -ENOSYS || pid == -EINVAL || pid == -E2BIG) {
			spawn_cg_fallback((int) -pid);
		} else if (spawn_cg_mode == SPAWN_CG_UNKNOWN && pid > 0) {
			spawn_cg_mode = SPAWN_CG_CLONE3;
		}
		c.cleared = false;
	}
	if (pid == -ENOSYS || pid == -EINVAL || pid == -E2BIG) {
		pid = spawn_clone_join(&c, &pidfd);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid < 0) {
		*errnop = (int) -pid;
		return SV_ESYSTEM;
	}
	if (*c.err != 0) {
		siginfo_t si;
		/* It has called _exit: collect it, so nothing is left. */
		(void) waitid((idtype_t) P_PIDFD, (id_t) pidfd, &si, WEXITED);
		close(pidfd);
		*errnop = *c.err;
		return spawn_class(*c.err);
	}
	*pidp   = (pid_t) pid;
	*pidfdp = pidfd;
	return SV_OK;
}

bool
sv_spawn_cgroup_note(char *why, size_t len)
{
	if (spawn_cg_mode != SPAWN_CG_WRITE || spawn_cg_noted) {
		return false;
	}
	spawn_cg_noted = true;
	snprintf(why, len, "%s", spawn_cg_why);
	return true;
}

bool
sv_spawn_born_in_cgroup(void)
{
	return spawn_cg_mode != SPAWN_CG_WRITE;
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
	if ((req->creds != NULL && req->creds->set) || req->cgroup_fd >= 0
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
		        | POSIX_SPAWN_SETSID);
	}
	if (rv == 0) {
		rv = posix_spawnattr_setsigmask(&attr, &none);
	}
	if (rv == 0) {
		rv = posix_spawnattr_setsigdefault(&attr, &dflt);
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
