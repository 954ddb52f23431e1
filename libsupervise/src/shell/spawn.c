/*
 * spawn.c — posix_spawn, pidfd and waitid (see spawn.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shell/spawn.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

/* spawn_pidfd_open wraps the pidfd_open system call. */
static int
spawn_pidfd_open(pid_t pid)
{
	return (int) syscall(SYS_pidfd_open, pid, 0);
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
	sigemptyset(&dflt);
	sigaddset(&dflt, SIGTERM);
	sigaddset(&dflt, SIGINT);
	sigaddset(&dflt, SIGHUP);
	sigaddset(&dflt, SIGPIPE);
	sigaddset(&dflt, SIGCHLD);
	sigaddset(&dflt, SIGQUIT);
	sigaddset(&dflt, SIGUSR1);
	sigaddset(&dflt, SIGUSR2);

	if (posix_spawn_file_actions_init(&fa) != 0) {
		return SV_ESYSTEM;
	}
	if (posix_spawnattr_init(&attr) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		return SV_ESYSTEM;
	}
	rv = posix_spawn_file_actions_addopen(
	    &fa, 0, "/dev/null", O_RDONLY, 0);
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
			err = (rv == ENOENT || rv == EACCES || rv == ENOEXEC
			          || rv == ENOTDIR)
			    ? SV_ENOTFOUND
			    : SV_ESYSTEM;
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
