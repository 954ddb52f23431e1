/*
 * main.c — supervised, the reference supervisor daemon.
 *
 * Order of start-up matters:
 *   1. parse arguments and the config (errors go to the terminal);
 *   2. prepare the socket directory (0700, ours; 0711 when some group
 *      runs as another user, whose workers must reach the sockets);
 *   3. without --foreground, fork once into the background *before* the
 *      log thread starts, and let the parent wait on a pipe until the child
 *      serves (or says why it cannot), so "supervised && supervisectl ..."
 *      works;
 *   4. block SIGTERM/SIGINT/SIGHUP/SIGCHLD in every thread (before the log
 *      thread starts) and receive them through a signalfd in the event
 *      loop; become a child subreaper, so orphans of workers come back to
 *      us (SIGCHLD) and are reaped;
 *   5. detect cgroup v2 (one cgroup per worker where we may create them;
 *      logged either way), listen, start the groups, run until a signal
 *      has stopped every worker; then kill what the workers left (their
 *      cgroups, then any child left) and reap it before exiting.
 *
 * Our own service manager (sd_notify.h): NOTIFY_SOCKET, WATCHDOG_USEC and
 * WATCHDOG_PID are read and removed from the environment right after the
 * config is loaded, before any worker's environment is built from ours;
 * READY=1, STATUS=, STOPPING=1 and the watchdog pings come from the loop
 * (sup_manager.c). As pid 1 (a container), the signals of step 4 are
 * blocked before the config is loaded: the kernel drops a default-action
 * signal sent to a namespace's init, so a stop sent while the config loads
 * would be lost (docs/production.md).
 *
 * Sockets: control.sock and notify.sock are 0600, or 0666 when some group
 * runs as another user (a request's rights come from the kernel's peer
 * credentials, not from the file mode: docs/protocol.md); events.sock
 * stays 0600. The process has two threads: the loop thread (this one), which
 * serves all three sockets, and the log writer (log.h).
 *
 * Exit status: 0 after a clean shutdown, 2 for a bad configuration, 100 for
 * bad usage, 111 for a system failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <linux/close_range.h>
#include <unistd.h>

#include "config.h"
#include "dir_trust.h"
#include "paths.h"
#include "shell/cgroup.h"
#include "sd_notify.h"
#include "shell/reaper.h"
#include "server.h"
#include "state.h"
#include "supervisor.h"

#define EXIT_CONFIG 2
#define EXIT_USAGE  100
#define EXIT_SYSTEM 111
/* How long the foreground parent waits for the detached daemon to serve. */
#define DAEMONIZE_TIMEOUT_MS 30000
/* How long the end waits for leftovers of workers to die. */
#define LEFTOVER_TIMEOUT_MS 5000

/* usage prints the help text. */
static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: supervised --config FILE [--foreground | --check]\n"
	    "\n"
	    "Run groups of worker processes with durable, bounded identities\n"
	    "(ordinal 0..N-1 and a generation), served over a control\n"
	    "socket speaking supervise.v1 (SP wire, as nng does).\n"
	    "\n"
	    "  -c, --config FILE   configuration (libconfig syntax; see "
	    "docs/config.md)\n"
	    "  -f, --foreground    stay in the foreground and log to stderr\n"
	    "  -k, --check         check the config (and each program and "
	    "cwd) "
	    "and exit\n"
	    "  -h, --help          show this help\n"
	    "  -V, --version       show the version\n"
	    "\n"
	    "Without --foreground the daemon detaches once its socket is "
	    "listening\nand logs to log_file (default "
	    "SOCKET_DIR/supervised.log).\n"
	    "While it serves, its pid is in SOCKET_DIR/supervised.pid.\n"
	    "SIGTERM or SIGINT stops every worker (SIGTERM, then SIGKILL "
	    "after\n"
	    "stop_timeout_ms), removes the socket and exits 0.\n"
	    "Under systemd (NOTIFY_SOCKET set) it reports readiness, status "
	    "and\nwatchdog pings with sd_notify; see docs/production.md.\n"
	    "\n"
	    "Exit status: 0 clean shutdown, 2 bad configuration, 100 usage,\n"
	    "111 system failure.\n");
}

/* usage_error prints one line naming what is wrong with the command line
 * (and where the help is) to stderr, and returns the usage exit status. */
static int __attribute__((format(printf, 1, 2)))
usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("supervised: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (see supervised --help)\n", stderr);
	return EXIT_USAGE;
}

/* prepare_dir creates dir with mode 0700 (0711 when shared: workers of
 * other users must pass through it), or checks that an existing one is a
 * directory of ours that nobody else may write to (and, when shared, that
 * others may search). The mode of a directory we did not create is never
 * changed. */
static bool
prepare_dir(const char *dir, bool shared, bool *created)
{
	struct stat    st;
	mode_t         mode = shared ? 0711 : 0700;
	svd_dt_verdict v;

	*created = false;
	if (mkdir(dir, mode) == 0) {
		*created = true;
		/* Ours: the umask may have taken the search bits. */
		if (chmod(dir, mode) != 0) {
			fprintf(stderr, "supervised: chmod %s: %s\n", dir,
			    strerror(errno));
			return false;
		}
		return true;
	}
	if (errno != EEXIST) {
		fprintf(stderr,
		    "supervised: cannot create socket_dir %s: %s\n", dir,
		    strerror(errno));
		return false;
	}
	if (lstat(dir, &st) != 0) {
		fprintf(stderr, "supervised: socket_dir %s: %s\n", dir,
		    strerror(errno));
		return false;
	}
	/* The trust rule of pool directories (dir_trust.h), and stricter:
	 * the directory must be the daemon's own, and a link is refused even
	 * to a good directory, since whoever may change the link may move
	 * our sockets (docs/config.md). */
	v = svd_dir_judge(&st, geteuid(), false);
	if (v == SVD_DT_OK && st.st_uid != geteuid()) {
		fprintf(stderr,
		    "supervised: socket_dir %s belongs to uid %u, not to us\n",
		    dir, (unsigned) st.st_uid);
		return false;
	}
	if (v != SVD_DT_OK) {
		char why[700];
		fprintf(stderr, "supervised: %s%s\n",
		    svd_dir_explain(
		        why, sizeof(why), "socket_dir", dir, &st, v),
		    v == SVD_DT_SYMLINK ? ": name the directory itself"
		        : v == SVD_DT_GROUP_WRITABLE
		            || v == SVD_DT_OTHER_WRITABLE
		        ? ": name a directory of its own (it is created with "
		          "mode 0700 if missing)"
		        : "");
		return false;
	}
	if (shared && (st.st_mode & 001) == 0) {
		fprintf(stderr,
		    "supervised: socket_dir %s (mode %04o) cannot be searched "
		    "by other users, but some group runs its workers as "
		    "another user and they must reach the sockets: make it "
		    "0711, or name a directory the daemon creates\n",
		    dir, (unsigned) (st.st_mode & 07777));
		return false;
	}
	return true;
}

/* shared_sockets tells whether some group runs its workers as another
 * uid, which must be able to connect to control.sock and notify.sock. */
static bool
shared_sockets(const svd_config *cfg)
{
	for (size_t i = 0; i < cfg->ngroups; i++) {
		const sv_creds *c = &cfg->groups[i].creds;
		if (c->set && c->uid != geteuid()) {
			return true;
		}
	}
	return false;
}

/* open_socket lets every user connect to name in dir (0666); whether a
 * request may do anything is decided by the peer's kernel credentials. */
static bool
open_socket(const char *dir, const char *name, char *err, size_t errlen)
{
	char path[700];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (chmod(path, 0666) != 0) {
		snprintf(err, errlen, "chmod %s: %s", path, strerror(errno));
		return false;
	}
	return true;
}

/* check_socket_path refuses to start where name in dir exists and is not
 * a socket (the listener would replace it, sp_listen.h). */
static bool
check_socket_path(const char *dir, const char *name)
{
	char        path[700];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (lstat(path, &st) == 0 && !S_ISSOCK(st.st_mode)) {
		fprintf(stderr,
		    "supervised: %s exists and is not a socket; not touching "
		    "it\n",
		    path);
		return false;
	}
	return true;
}

/* daemonize forks; the parent waits for the child's readiness message on a
 * pipe and exits with the status it reports. Returns the write end in the
 * child. */
static int
daemonize(const char *logpath)
{
	int   p[2], fd;
	pid_t pid;
	char  buf[512];

	if (pipe2(p, O_CLOEXEC) != 0 || (pid = fork()) < 0) {
		fprintf(stderr, "supervised: cannot detach: %s\n",
		    strerror(errno));
		exit(EXIT_SYSTEM);
	}
	if (pid > 0) {
		ssize_t       n;
		struct pollfd pfd = {.fd = p[0], .events = POLLIN};
		close(p[1]);
		/* Start-up is bounded too: give up waiting after a deadline.
		 */
		if (poll(&pfd, 1, DAEMONIZE_TIMEOUT_MS) <= 0) {
			fprintf(stderr,
			    "supervised: no word from the background process "
			    "(pid %d) within %d ms; see %s\n",
			    (int) pid, DAEMONIZE_TIMEOUT_MS, logpath);
			exit(EXIT_SYSTEM);
		}
		n = read(p[0], buf, sizeof(buf) - 1);
		if (n > 0 && buf[0] == '0') {
			exit(0);
		}
		if (n > 1) {
			buf[n] = '\0';
			fprintf(stderr, "supervised: %s\n", buf + 1);
		} else {
			fprintf(stderr,
			    "supervised: failed to start; see %s\n", logpath);
		}
		exit(EXIT_SYSTEM);
	}
	close(p[0]);
	setsid();
	if ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0) {
		dup2(fd, STDIN_FILENO);
		close(fd);
	}
	fd = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0) {
		dprintf(p[1], "1cannot open log_file %s: %s", logpath,
		    strerror(errno));
		exit(EXIT_SYSTEM);
	}
	dup2(fd, STDOUT_FILENO);
	dup2(fd, STDERR_FILENO);
	close(fd);
	return p[1];
}

/* write_pidfile records our pid in path (mode 0600); failure is logged,
 * not fatal: the socket, not the file, is what clients need. */
static void
write_pidfile(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0 || dprintf(fd, "%d\n", (int) getpid()) < 0) {
		svd_log("cannot write %s: %s", path, strerror(errno));
	}
	if (fd >= 0) {
		close(fd);
	}
}

/* report_stale logs what a predecessor that died without cleaning up left
 * in dir: called with the state lock held, so no live daemon owns them. The
 * sockets are replaced when the server listens; the pid file is rewritten
 * once it does. */
static void
report_stale(const char *dir)
{
	char        path[700], buf[32];
	struct stat st;
	int         fd;
	ssize_t     n;

	snprintf(path, sizeof(path), "%s/supervised.pid", dir);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[n > 0 ? n : 0]      = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		svd_log("stale pid file %s (pid %s): the previous supervisor "
		        "died without removing it",
		    path, buf[0] != '\0' ? buf : "?");
	}
	snprintf(path, sizeof(path), "%s/control.sock", dir);
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode)) {
		svd_log(
		    "stale control socket %s from the previous supervisor; "
		    "replacing it",
		    path);
	}
}

/* raise_nofile lifts the soft fd limit to the hard one: one pidfd per
 * worker. */
static void
raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void) setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* check_nofile logs one line when the fd limit is below what the config's
 * workers need at their configured counts (SVD_FDS_BASE and
 * SVD_FDS_PER_WORKER per worker: its pidfd; activity regions are opened
 * per read, never held): the daemon
 * still runs, but workers past the limit fail to spawn ("Too many open
 * files") and are retried with backoff, and connections may be refused
 * for a while. Raising `ulimit -n` (LimitNOFILE= under systemd) is the
 * cure; the line says by how much. */
static void
check_nofile(const svd_config *cfg)
{
	struct rlimit rl;
	uint64_t      need = SVD_FDS_BASE, workers = 0;

	for (size_t i = 0; i < cfg->ngroups; i++) {
		const svd_group_config *g = &cfg->groups[i];
		workers += g->count;
		need += (uint64_t) g->count * SVD_FDS_PER_WORKER;
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
	    && rl.rlim_cur < need) {
		svd_log("descriptor limit %llu is below the about %llu the "
		        "configured %llu workers need: workers past it will "
		        "fail to spawn (Too many open files) and be retried; "
		        "raise ulimit -n (LimitNOFILE=) to at least %llu",
		    (unsigned long long) rl.rlim_cur,
		    (unsigned long long) need, (unsigned long long) workers,
		    (unsigned long long) need);
	}
}

int
main(int argc, char **argv)
{
	static const struct option opts[]
	    = {{"config", required_argument, NULL, 'c'},
	        {"foreground", no_argument, NULL, 'f'},
	        {"check", no_argument, NULL, 'k'},
	        {"help", no_argument, NULL, 'h'},
	        {"version", no_argument, NULL, 'V'}, {NULL, 0, NULL, 0}};
	const char *cfgpath    = NULL;
	bool        foreground = false, created, check = false, shared;
	sv_cgtree  *cg = NULL;
	size_t      left;
	svd_config *cfg;
	svd_sup    *sup;
	svd_server *srv;
	svd_events *events = NULL;
	svd_notify *notify = NULL;
	svd_state  *state  = NULL;
	svd_sdn    *sdn    = NULL;
	char        sdnmsg[300];
	sv_jstate   prev = {0};
	char     err[1024], url[600], logpath[600], pidpath[600], evurl[700];
	int      c, readyfd = -1, sigfd;
	sigset_t set;
	sv_err   rv;

	opterr = 0; /* one line of our own per usage error, below */
	while ((c = getopt_long(argc, argv, ":c:fhkV", opts, NULL)) != -1) {
		switch (c) {
		case 'k':
			check = true;
			break;
		case 'c':
			cfgpath = optarg;
			break;
		case 'f':
			foreground = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("supervised %s (protocol supervise.v%d)\n",
			    SV_VERSION_STRING, SV_PROTOCOL_VERSION);
			return 0;
		case ':':
			return usage_error(
			    "option '%s' needs an argument", argv[optind - 1]);
		default:
			return usage_error(
			    "unknown option '%s'", argv[optind - 1]);
		}
	}
	/* Descriptors inherited from whoever started us are not for our
	 * workers: none but stdin, stdout and stderr crosses an exec. */
	(void) close_range(3, ~0u, CLOSE_RANGE_CLOEXEC);
	if (cfgpath == NULL) {
		return usage_error("%s", "--config FILE is required");
	}
	if (optind != argc) {
		return usage_error("unexpected argument '%s'", argv[optind]);
	}
	if (check && foreground) {
		return usage_error("%s",
		    "--check and --foreground exclude "
		    "each other");
	}
	if (getpid() == 1) {
		/* As a container's init, a signal with the default action is
		 * dropped by the kernel, not acted on: block the ones we
		 * handle from the start (they wait for the signalfd below), so
		 * a stop sent while the config loads is not lost. */
		sigemptyset(&set);
		sigaddset(&set, SIGTERM);
		sigaddset(&set, SIGINT);
		sigaddset(&set, SIGHUP);
		sigaddset(&set, SIGCHLD);
		pthread_sigmask(SIG_BLOCK, &set, NULL);
	}
	if ((rv = svd_config_load(cfgpath, &cfg, err, sizeof(err))) != SV_OK) {
		fprintf(stderr, "supervised: %s\n", err);
		return rv == SV_ENOMEM ? EXIT_SYSTEM : EXIT_CONFIG;
	}
	if (check) {
		printf("%s: ok (%zu group%s)\n", cfgpath, cfg->ngroups,
		    cfg->ngroups == 1 ? "" : "s");
		svd_config_free(cfg);
		return 0;
	}
	/* Our own manager's variables leave the environment before any
	 * worker's is built from it (sd_notify.h). */
	svd_sdn_from_env(&sdn, sdnmsg, sizeof(sdnmsg));
	shared = shared_sockets(cfg);
	if (svi_url_for_dir(cfg->socket_dir, url, sizeof(url)) != SV_OK
	    || !prepare_dir(cfg->socket_dir, shared, &created)
	    || !check_socket_path(cfg->socket_dir, "control.sock")
	    || !check_socket_path(cfg->socket_dir, "events.sock")
	    || !check_socket_path(cfg->socket_dir, "notify.sock")) {
		svd_config_free(cfg);
		svd_sdn_free(sdn);
		return EXIT_SYSTEM;
	}
	snprintf(logpath, sizeof(logpath), "%s",
	    cfg->log_file != NULL ? cfg->log_file : "");
	if (cfg->log_file == NULL) {
		snprintf(logpath, sizeof(logpath), "%s/supervised.log",
		    cfg->socket_dir);
	}
	if (!foreground) {
		readyfd = daemonize(logpath);
	}
	if (sdn != NULL) {
		/* After a fork the manager learns the new main pid with
		 * READY=1 (it then needs NotifyAccess=all to hear us). */
		svd_sdn_begin(
		    sdn, foreground ? 0 : (long) getpid(), sv_loop_now_ms());
	}

	/* Before the log thread starts, so it inherits the mask. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD); /* orphans to reap (shell/reaper.h) */
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	if ((sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		snprintf(err, sizeof(err), "signalfd: %s", strerror(errno));
		goto fail;
	}
	raise_nofile();
	/* After the signal mask, so the writer thread never takes them. */
	(void) svd_log_start();
	check_nofile(cfg);
	if (sdnmsg[0] != '\0') {
		svd_log("%s", sdnmsg);
	}

	if (sv_reaper_enable() != SV_OK) {
		svd_log("cannot become a child subreaper: %s; orphans of "
		        "workers go to init",
		    strerror(errno));
	}
	/* The state directory's lock says whether a predecessor still runs;
	 * its journal, what a crashed one left. */
	if (svd_state_open(
	        cfg->state_dir != NULL ? cfg->state_dir : cfg->socket_dir,
	        &state, &prev, err, sizeof(err))
	    != SV_OK) {
		goto fail;
	}
	report_stale(cfg->socket_dir);
	if ((rv = svd_sup_create(cfg, url, &sup)) != SV_OK) {
		snprintf(
		    err, sizeof(err), "cannot set up: %s", sv_strerror(rv));
		goto fail;
	}
	{
		char msg[PATH_MAX + 200];
		if (sv_cgtree_open(&cg, msg, sizeof(msg)) == SV_OK) {
			size_t busy = 0, gone;
			svd_log("%s", msg);
			svd_sup_set_cgroups(sup, cg);
			/* Trees of supervisors killed before they could remove
			 * theirs (a busy one holds workers we may adopt). */
			gone = sv_cgtree_sweep_stale(cg, &busy);
			if (gone > 0 || busy > 0) {
				svd_log(
				    "cgroup trees of supervisors that did not "
				    "stop: %zu removed, %zu still holding "
				    "processes (removed once they are empty)",
				    gone, busy);
			}
		} else {
			svd_log("no per-worker cgroups (%s): a worker's "
			        "leftovers are killed by process group; one "
			        "that called setsid() is reaped when it dies "
			        "but not killed before the daemon stops",
			    msg);
		}
	}
	if (svd_server_start(sup, cfg, url, &srv, err, sizeof(err)) != SV_OK) {
		svd_sup_destroy(sup);
		goto fail;
	}
	/* The event socket sits beside the control socket. */
	snprintf(
	    evurl, sizeof(evurl), "ipc://%s/events.sock", cfg->socket_dir);
	if (svd_events_open(
	        svd_sup_loop(sup), evurl, &events, err, sizeof(err))
	    != SV_OK) {
		svd_server_stop(srv);
		svd_sup_destroy(sup);
		goto fail;
	}
	svd_sup_set_events(sup, events);
	/* systemd-style readiness for programs that speak sd_notify. */
	snprintf(evurl, sizeof(evurl), "%s/notify.sock", cfg->socket_dir);
	if (svd_notify_open(evurl, &notify, err, sizeof(err)) != SV_OK) {
		svd_server_stop(srv);
		svd_events_close(events);
		svd_sup_destroy(sup);
		goto fail;
	}
	svd_sup_set_notify(sup, notify);
	svd_sup_set_manager(sup, sdn);
	rv = svd_sup_take_over(sup, state, &prev, err, sizeof(err));
	sv_jstate_free(&prev);
	if (rv != SV_OK) {
		svd_server_stop(srv);
		svd_events_close(events);
		svd_sup_destroy(sup);
		svd_notify_close(notify);
		goto fail;
	}
	if (shared
	    && (!open_socket(cfg->socket_dir, "control.sock", err, sizeof(err))
	        || !open_socket(
	            cfg->socket_dir, "notify.sock", err, sizeof(err)))) {
		svd_server_stop(srv);
		svd_events_close(events);
		svd_sup_destroy(sup);
		svd_notify_close(notify);
		goto fail;
	}
	/* Written only once we own the socket, so it names the live daemon. */
	snprintf(
	    pidpath, sizeof(pidpath), "%s/supervised.pid", cfg->socket_dir);
	write_pidfile(pidpath);
	svd_log("supervisor %s serving %s (%zu groups)", svd_sup_id(sup), url,
	    cfg->ngroups);
	if (readyfd >= 0) {
		(void) !write(readyfd, "0", 1);
		close(readyfd);
	}
	rv = svd_sup_run(sup, sigfd);
	/* Every worker is reaped by now. Closing the sockets never waits: no
	 * connection can hold the daemon (server.h, events.h). */
	svd_server_stop(srv);
	svd_events_close(events);
	svd_sup_destroy(sup);
	svd_notify_close(notify);
	svd_state_close(state);
	svd_sdn_free(sdn);
	sdn = NULL;
	/* Every worker is reaped: what is left of them dies now. */
	if ((left = sv_cgtree_close(cg, LEFTOVER_TIMEOUT_MS)) > 0) {
		svd_log("%zu worker cgroups still busy after %d ms; left in "
		        "place",
		    left, LEFTOVER_TIMEOUT_MS);
	}
	cg = NULL;
	if ((left = sv_reaper_finish(LEFTOVER_TIMEOUT_MS)) > 0) {
		svd_log("killed %zu process%s left by workers", left,
		    left == 1 ? "" : "es");
	}
	(void) unlink(pidpath);
	if (created) {
		(void) rmdir(
		    cfg->socket_dir); /* fails harmlessly if not empty */
	}
	svd_config_free(cfg);
	close(sigfd);
	svd_log("exiting");
	svd_log_stop();
	return rv == SV_OK ? 0 : EXIT_SYSTEM;

fail:
	svd_sdn_free(sdn);
	sv_jstate_free(&prev);
	svd_state_close(state);
	(void) sv_cgtree_close(cg, LEFTOVER_TIMEOUT_MS);
	svd_log_stop();
	if (readyfd >= 0) {
		dprintf(readyfd, "1%s", err);
	} else {
		fprintf(stderr, "supervised: %s\n", err);
	}
	svd_config_free(cfg);
	return EXIT_SYSTEM;
}
