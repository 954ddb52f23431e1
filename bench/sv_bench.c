/*
 * sv_bench.c — sv-bench, the benchmark of issue 2: supervised against raw
 * baselines measured in the same run, printed as one table.
 *
 * Measurements (each "ours" figure has a raw baseline beside it):
 *   1. whoami round trip. A bare nng REP echo server (ctx + aio, as the
 *      daemon serves) runs as a child of sv-bench ("--role echo"); supervised
 *      runs a group of one worker that is sv-bench again ("--role rtt"). That
 *      worker times, in interleaved blocks, 64-byte echo round trips on a
 *      fresh REQ socket and sv_client_whoami() round trips on one sv_client,
 *      both over ipc:// from the same process, and sends medians and p99
 *      back in one datagram. Target: whoami median <= 1.2 x echo median.
 *   2. crash to replacement exec'd. A group of one stamp worker
 *      (sv-bench-stamp) with min_uptime_ms = 0. Each round reads
 *      CLOCK_MONOTONIC, SIGKILLs the current worker, and waits for the
 *      replacement's datagram, whose timestamp is taken first thing in its
 *      main(). Baseline: the same loop where sv-bench itself is the
 *      supervisor (pidfd poll, waitpid, posix_spawn). Target: median <= 2 ms.
 *   3. spawning N (1000) trivial workers. Baseline: posix_spawn of the stamp
 *      worker N times in a loop, from the start to the latest worker
 *      timestamp. Ours: a group at count 0 (1 if the daemon refuses 0),
 *      sv_client_scale() to N, same clock. Target: rate >= 0.8 x raw; the
 *      daemon's VmRSS with the N workers alive <= 16 MiB.
 *   Finally every daemon started is stopped with SIGTERM and must exit 0 in
 *   time, leaving no worker behind (sv-bench is a child subreaper, so
 *   anything the daemon abandons is reparented to it and counted).
 *
 * Process and resource rules: everything lives in one mkdtemp directory
 * (report socket, configs, daemon logs, ipc:// sockets), removed at the end
 * unless --keep. Every wait has a deadline. sv-bench signals only processes
 * it started (the echo server, the daemons, its raw workers) and, as the
 * object of measurement 2, the daemon's worker whose pid it just read from
 * that worker's own datagram. Helper processes report over one AF_UNIX
 * datagram socket (bench_wire.h), drained continuously while waiting.
 *
 * Exit status: 0 when every measurement was made (whatever PASS/MISS says),
 * 1 when one could not be made, 2 on a usage error.
 *
 * File layout: options; time and statistics; processes (spawn, reap,
 * orphan sweep); report socket; temp directory and config; daemon control;
 * role "echo"; role "rtt"; measurements 1, 2, 3; table; main.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <nng/protocol/reqrep0/req.h>

#include <supervise/client.h>

#include "bench_wire.h"

#ifndef SV_SUPERVISED_PATH
#error "define SV_SUPERVISED_PATH (path of the supervised binary)"
#endif
#ifndef SV_BENCH_STAMP_PATH
#error "define SV_BENCH_STAMP_PATH (path of the sv-bench-stamp binary)"
#endif

extern char **environ;

#define NS_PER_MS      INT64_C(1000000)
#define NS_PER_SEC     INT64_C(1000000000)
#define ECHO_PAYLOAD   64
#define RPC_TIMEOUT_MS 5000

/* ------------------------------------------------------------------ */
/* Options                                                            */
/* ------------------------------------------------------------------ */

struct opts {
	bool quick;
	bool keep;
	long kills; /* measured kills in measurement 2 */
	long workers; /* N in measurement 3 */
	long rtts; /* round trips of each kind in measurement 1 */
	long blocks; /* interleaved blocks in measurement 1 */
	long rounds; /* raw/supervised round pairs in measurement 3 */
};

/* usage prints the command line summary to f. */
static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: sv-bench [--quick] [--kills N] [--workers N] [--rtts N]"
	    " [--blocks N] [--rounds N] [--keep]\n"
	    "  --quick      fewer iterations (smoke run): 2000 round trips,"
	    " 20 kills, 100 workers, 1 round\n"
	    "  --kills N    kills in the crash-to-replacement measurement"
	    " (default 200)\n"
	    "  --workers N  workers spawned in the spawn measurement"
	    " (default 1000, at most 4096)\n"
	    "  --rtts N     round trips of each kind (default 10000)\n"
	    "  --blocks N   interleaved blocks for the round trips"
	    " (default 10)\n"
	    "  --rounds N   alternating raw/supervised spawn rounds"
	    " (default 5, at most 16)\n"
	    "  --keep       keep the temporary directory (configs, daemon"
	    " logs)\n");
}

/* parse_long reads a decimal in [lo, hi] from s; -1 when it is not one. */
static long
parse_long(const char *s, long lo, long hi)
{
	char *end;
	long  v;

	if (s == NULL)
		return -1;
	errno = 0;
	v     = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
		return -1;
	return v;
}

/* parse_opts fills o from argv; returns -1 on a usage error. */
static int
parse_opts(int argc, char **argv, struct opts *o)
{
	long kills = -1, workers = -1, rtts = -1, blocks = -1, rounds = -1;
	int  i;

	memset(o, 0, sizeof(*o));
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--quick") == 0) {
			o->quick = true;
		} else if (strcmp(a, "--keep") == 0) {
			o->keep = true;
		} else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(stdout);
			exit(0);
		} else if (strcmp(a, "--kills") == 0) {
			if ((kills = parse_long(v, 1, 1000000)) < 0)
				return -1;
			i++;
		} else if (strcmp(a, "--workers") == 0) {
			if ((workers = parse_long(v, 1, 4096)) < 0)
				return -1;
			i++;
		} else if (strcmp(a, "--rtts") == 0) {
			if ((rtts = parse_long(v, 1, 10000000)) < 0)
				return -1;
			i++;
		} else if (strcmp(a, "--rounds") == 0) {
			if ((rounds = parse_long(v, 1, 16)) < 0)
				return -1;
			i++;
		} else if (strcmp(a, "--blocks") == 0) {
			if ((blocks = parse_long(v, 1, SV_BENCH_MAX_BLOCKS))
			    < 0)
				return -1;
			i++;
		} else {
			return -1;
		}
	}
	o->kills   = kills > 0 ? kills : (o->quick ? 20 : 200);
	o->workers = workers > 0 ? workers : (o->quick ? 100 : 1000);
	o->rtts    = rtts > 0 ? rtts : (o->quick ? 2000 : 10000);
	o->blocks  = blocks > 0 ? blocks : 10;
	o->rounds  = rounds > 0 ? rounds : (o->quick ? 1 : 5);
	if (o->rtts < o->blocks)
		o->blocks = o->rtts;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Time and statistics                                                */
/* ------------------------------------------------------------------ */

/* now_ns reads CLOCK_MONOTONIC in nanoseconds. */
static int64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
}

/* sleep_ms sleeps about ms milliseconds (signals may cut it short). */
static void
sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * NS_PER_MS};

	nanosleep(&ts, NULL);
}

struct stats {
	size_t  n;
	int64_t med, p99, mean, min, max;
};

/* cmp_i64 orders int64_t values for qsort. */
static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;

	return (x > y) - (x < y);
}

/*
 * stats_of sorts v[0..n) in place and summarises it: median (mean of the
 * two middle values for even n) and p99 by nearest rank.
 */
static struct stats
stats_of(int64_t *v, size_t n)
{
	struct stats s;
	long double  sum = 0;
	size_t       i, r;

	memset(&s, 0, sizeof(s));
	if (n == 0)
		return s;
	qsort(v, n, sizeof(*v), cmp_i64);
	for (i = 0; i < n; i++)
		sum += v[i];
	s.n    = n;
	s.med  = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	r      = (99 * n + 99) / 100; /* ceil(0.99 n), 1-based */
	s.p99  = v[r - 1];
	s.mean = (int64_t) (sum / n);
	s.min  = v[0];
	s.max  = v[n - 1];
	return s;
}

/* ------------------------------------------------------------------ */
/* Processes                                                          */
/* ------------------------------------------------------------------ */

static char   g_self[PATH_MAX]; /* absolute path of this program */
static char   g_dir[PATH_MAX]; /* the temporary directory, "" if none */
static char   g_sock[PATH_MAX]; /* the report socket in g_dir */
static int    g_rx         = -1; /* its bound, non-blocking fd */
static pid_t  g_echo_pid   = -1; /* echo server, while running */
static pid_t  g_daemon_pid = -1; /* the one supervised, while running */
static pid_t *g_raw; /* raw stamp workers we spawned */
static size_t g_nraw;
static volatile sig_atomic_t g_interrupted;

/* Counts for the "clean stop" row. */
static int g_stops, g_clean_stops, g_orphans;

/* note prints a progress or diagnostic line on stderr. */
static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void
note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("sv-bench: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* on_signal records SIGINT/SIGTERM/SIGHUP; every wait loop checks it. */
static void
on_signal(int sig)
{
	(void) sig;
	g_interrupted = 1;
}

/*
 * spawn_proc starts path with argv and envp (NULL: our environment) by
 * posix_spawn, signal mask cleared. With logpath, stdin is /dev/null and
 * stdout/stderr append to logpath; with newpgrp the child leads its own
 * process group, so a terminal's ^C reaches only sv-bench, which then stops
 * it in order. Returns 0 or an errno value.
 */
static int
spawn_proc(const char *path, char *const argv[], char *const envp[],
    const char *logpath, bool newpgrp, pid_t *pidp)
{
	posix_spawn_file_actions_t fa, *fap = NULL;
	posix_spawnattr_t          at;
	sigset_t                   none;
	short                      flags = POSIX_SPAWN_SETSIGMASK;
	int                        rv;

	sigemptyset(&none);
	posix_spawnattr_init(&at);
	posix_spawnattr_setsigmask(&at, &none);
	if (newpgrp) {
		flags |= POSIX_SPAWN_SETPGROUP;
		posix_spawnattr_setpgroup(&at, 0);
	}
	posix_spawnattr_setflags(&at, flags);
	if (logpath != NULL) {
		fap = &fa;
		posix_spawn_file_actions_init(fap);
		posix_spawn_file_actions_addopen(
		    fap, 0, "/dev/null", O_RDONLY, 0);
		posix_spawn_file_actions_addopen(
		    fap, 1, logpath, O_WRONLY | O_CREAT | O_APPEND, 0600);
		posix_spawn_file_actions_adddup2(fap, 1, 2);
	}
	rv = posix_spawn(
	    pidp, path, fap, &at, argv, envp != NULL ? envp : environ);
	if (fap != NULL)
		posix_spawn_file_actions_destroy(fap);
	posix_spawnattr_destroy(&at);
	return rv;
}

/*
 * reap_deadline waits for our child pid until deadline (monotonic ns).
 * Returns 1 and its wait status in *statusp when reaped, 0 at the deadline.
 */
static int
reap_deadline(pid_t pid, int64_t deadline, int *statusp)
{
	int st;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid) {
			*statusp = st;
			return 1;
		}
		if (r < 0 && errno != EINTR) {
			*statusp = -1;
			return 1; /* not our child any more: nothing to wait */
		}
		if (now_ns() >= deadline)
			return 0;
		sleep_ms(2);
	}
}

/*
 * stop_child sends SIGTERM to our child pid, waits up to timeout_ms, then
 * SIGKILLs and reaps it. Returns its wait status; *timedoutp tells whether
 * the SIGKILL was needed.
 */
static int
stop_child(pid_t pid, long timeout_ms, bool *timedoutp)
{
	int st = -1;

	*timedoutp = false;
	kill(pid, SIGTERM);
	if (!reap_deadline(pid, now_ns() + timeout_ms * NS_PER_MS, &st)) {
		*timedoutp = true;
		kill(pid, SIGKILL);
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	}
	return st;
}

/* describe_status writes a wait status as "exit N" or "signal N". */
static const char *
describe_status(int st, char *buf, size_t size)
{
	if (st == -1)
		snprintf(buf, size, "unknown");
	else if (WIFEXITED(st))
		snprintf(buf, size, "exit %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(buf, size, "signal %d", WTERMSIG(st));
	else
		snprintf(buf, size, "status 0x%x", st);
	return buf;
}

/* is_tracked tells whether pid is a child sv-bench knows it started. */
static bool
is_tracked(pid_t pid)
{
	size_t i;

	if (pid == g_echo_pid || pid == g_daemon_pid)
		return true;
	for (i = 0; i < g_nraw; i++)
		if (g_raw[i] == pid)
			return true;
	return false;
}

/*
 * sweep_orphans finds our children that we did not start (with
 * PR_SET_CHILD_SUBREAPER, workers a daemon left behind, alive or zombie),
 * SIGKILLs and reaps them, and returns how many there were.
 */
static int
sweep_orphans(void)
{
	DIR           *d = opendir("/proc");
	struct dirent *e;
	pid_t          me = getpid();
	int            n  = 0;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		char  path[64], buf[512], *p;
		long  pid, ppid;
		char  state;
		FILE *f;

		if ((pid = parse_long(e->d_name, 1, INT_MAX)) < 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		p = fgets(buf, sizeof(buf), f);
		fclose(f);
		if (p == NULL || (p = strrchr(buf, ')')) == NULL)
			continue;
		if (sscanf(p + 1, " %c %ld", &state, &ppid) != 2)
			continue;
		if (ppid != me || is_tracked((pid_t) pid))
			continue;
		note("orphan pid %ld (state %c) left behind by the daemon",
		    pid, state);
		kill((pid_t) pid, SIGKILL);
		while (waitpid((pid_t) pid, NULL, 0) < 0 && errno == EINTR)
			;
		n++;
	}
	closedir(d);
	return n;
}

/*
 * raw_reap_all ends every raw worker we spawned: SIGTERM, reap until the
 * deadline, SIGKILL and reap whatever is left.
 */
static void
raw_reap_all(long timeout_ms)
{
	int64_t deadline = now_ns() + timeout_ms * NS_PER_MS;
	size_t  i, left;

	for (i = 0; i < g_nraw; i++)
		kill(g_raw[i], SIGTERM);
	for (;;) {
		left = 0;
		for (i = 0; i < g_nraw; i++) {
			if (g_raw[i] <= 0)
				continue;
			pid_t r = waitpid(g_raw[i], NULL, WNOHANG);

			if (r == g_raw[i] || (r < 0 && errno == ECHILD))
				g_raw[i] = -1;
			else
				left++;
		}
		if (left == 0 || now_ns() >= deadline)
			break;
		sleep_ms(2);
	}
	if (left > 0)
		note("%zu raw workers ignored SIGTERM; killing them", left);
	for (i = 0; i < g_nraw; i++) {
		if (g_raw[i] <= 0)
			continue;
		kill(g_raw[i], SIGKILL);
		while (waitpid(g_raw[i], NULL, 0) < 0 && errno == EINTR)
			;
	}
	g_nraw = 0;
}

/* pidfd_open_ wraps the pidfd_open system call (glibc 2.36 has no stub). */
static int
pidfd_open_(pid_t pid)
{
	return (int) syscall(SYS_pidfd_open, pid, 0);
}

/*
 * Environment for raw stamp workers: ours without SUPERVISE_* and
 * SV_BENCH_SOCK, plus SV_BENCH_SOCK, SUPERVISE_ORDINAL and
 * SUPERVISE_GENERATION whose values envbuf_set rewrites in place
 * (posix_spawn has copied them by the time it returns).
 */
struct envbuf {
	char **envp;
	char   sock[PATH_MAX + 32];
	char   ord[48];
	char   gen[48];
};

/* envbuf_init builds e; returns -1 when out of memory. */
static int
envbuf_init(struct envbuf *e)
{
	size_t n = 0, k = 0, i;

	while (environ[n] != NULL)
		n++;
	if ((e->envp = calloc(n + 4, sizeof(char *))) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		if (strncmp(environ[i], "SUPERVISE_", 10) == 0
		    || strncmp(environ[i], SV_BENCH_ENV_SOCK "=",
		           sizeof(SV_BENCH_ENV_SOCK))
		        == 0)
			continue;
		e->envp[k++] = environ[i];
	}
	snprintf(e->sock, sizeof(e->sock), "%s=%s", SV_BENCH_ENV_SOCK, g_sock);
	e->envp[k++] = e->sock;
	e->envp[k++] = e->ord;
	e->envp[k++] = e->gen;
	e->envp[k]   = NULL;
	return 0;
}

/* envbuf_set sets the ordinal and generation the next spawn will see. */
static void
envbuf_set(struct envbuf *e, long ord, long long gen)
{
	snprintf(e->ord, sizeof(e->ord), "SUPERVISE_ORDINAL=%ld", ord);
	snprintf(e->gen, sizeof(e->gen), "SUPERVISE_GENERATION=%lld", gen);
}

/* envbuf_free frees what envbuf_init allocated. */
static void
envbuf_free(struct envbuf *e)
{
	free(e->envp);
	e->envp = NULL;
}

/* ------------------------------------------------------------------ */
/* Report socket                                                      */
/* ------------------------------------------------------------------ */

/*
 * rx_open binds the non-blocking report socket at path with a large
 * receive buffer. (For AF_UNIX datagrams the queue is also bounded by
 * net.unix.max_dgram_qlen, often 10-512: senders then block until we drain,
 * which delays their reports but not their timestamps.)
 */
static int
rx_open(const char *path)
{
	struct sockaddr_un sa;
	int                fd, sz = 8 << 20;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -1;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	strcpy(sa.sun_path, path);
	if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) != 0) {
		close(fd);
		return -1;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) != 0)
		(void) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	return fd;
}

/*
 * rx_recv waits until deadline for one datagram into buf. Returns its
 * length, 0 at the deadline, -1 on error or interruption. Polls in slices
 * of at most 100 ms so interruption is noticed.
 */
static ssize_t
rx_recv(void *buf, size_t size, int64_t deadline)
{
	for (;;) {
		struct pollfd p = {g_rx, POLLIN, 0};
		ssize_t       n = recv(g_rx, buf, size, MSG_DONTWAIT);
		int64_t       left;

		if (n > 0)
			return n;
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK
		    && errno != EINTR)
			return -1;
		if (g_interrupted)
			return -1;
		if ((left = deadline - now_ns()) <= 0)
			return 0;
		if (left > 100 * NS_PER_MS)
			left = 100 * NS_PER_MS;
		(void) poll(&p, 1, (int) ((left + NS_PER_MS - 1) / NS_PER_MS));
	}
}

/* rx_flush discards every queued datagram. */
static void
rx_flush(void)
{
	char buf[sizeof(struct sv_bench_rtt)];

	while (recv(g_rx, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

/* daemon_alive checks our daemon without blocking; false once it exited. */
static bool daemon_alive(void);

/*
 * rx_stamp waits until deadline for a stamp datagram, ignoring anything
 * else, and checking that the daemon (if one runs) is alive. Returns 1 with
 * *st filled, 0 at the deadline, -1 on error or interruption, -2 when the
 * daemon exited.
 */
static int
rx_stamp(struct sv_bench_stamp *st, int64_t deadline)
{
	union {
		struct sv_bench_stamp s;
		struct sv_bench_rtt   r;
	} u;

	for (;;) {
		int64_t slice = now_ns() + 100 * NS_PER_MS;
		ssize_t n     = rx_recv(
		        &u, sizeof(u), slice < deadline ? slice : deadline);

		if (n < 0)
			return -1;
		if (n == (ssize_t) sizeof(u.s)
		    && u.s.magic == SV_BENCH_MAGIC_STAMP) {
			*st = u.s;
			return 1;
		}
		if (n > 0)
			continue;
		if (g_daemon_pid > 0 && !daemon_alive())
			return -2;
		if (now_ns() >= deadline)
			return 0;
	}
}

/* ------------------------------------------------------------------ */
/* Temporary directory and config files                               */
/* ------------------------------------------------------------------ */

/* rm_entry is the nftw callback of rm_rf. */
static int
rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void) sb;
	(void) flag;
	(void) ftw;
	if (remove(path) != 0)
		note("cannot remove %s: %s", path, strerror(errno));
	return 0;
}

/* rm_rf removes the tree at path, depth first, not following links. */
static void
rm_rf(const char *path)
{
	nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* dir_path writes g_dir/name into buf; -1 when it does not fit. */
static int
dir_path(char *buf, size_t size, const char *name)
{
	int n = snprintf(buf, size, "%s/%s", g_dir, name);

	return n < 0 || (size_t) n >= size ? -1 : 0;
}

/* cfg_str writes s as a libconfig string literal. */
static void
cfg_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* One group of a daemon config (sv-bench needs one group per daemon). */
struct group_cfg {
	const char        *name;
	const char *const *argv; /* NULL-terminated */
	long               count;
	long               max_count; /* 0: daemon default */
	long               min_uptime_ms; /* -1: daemon default */
	const char        *purpose;
	const char        *env; /* one "NAME=value" or NULL */
};

/* write_config writes a supervised config with one group to path. */
static int
write_config(const char *path, const char *sockdir, const struct group_cfg *g)
{
	FILE  *f = fopen(path, "w");
	size_t i;

	if (f == NULL)
		return -1;
	fputs("# written by sv-bench\nsocket_dir = ", f);
	cfg_str(f, sockdir);
	fputs(";\nstop_timeout_ms = 5000;\ngroups = (\n  {\n    name = ", f);
	cfg_str(f, g->name);
	fputs(";\n    argv = [ ", f);
	for (i = 0; g->argv[i] != NULL; i++) {
		if (i > 0)
			fputs(", ", f);
		cfg_str(f, g->argv[i]);
	}
	fprintf(f, " ];\n    count = %ld;\n", g->count);
	if (g->max_count > 0)
		fprintf(f, "    max_count = %ld;\n", g->max_count);
	if (g->min_uptime_ms >= 0)
		fprintf(f, "    min_uptime_ms = %ld;\n", g->min_uptime_ms);
	fputs("    purpose = ", f);
	cfg_str(f, g->purpose);
	fputs(";\n", f);
	if (g->env != NULL) {
		fputs("    env = [ ", f);
		cfg_str(f, g->env);
		fputs(" ];\n", f);
	}
	fputs("  }\n);\n", f);
	return fclose(f) == 0 ? 0 : -1;
}

/* ------------------------------------------------------------------ */
/* Daemon control                                                     */
/* ------------------------------------------------------------------ */

struct daemon {
	char name[16];
	char conf[PATH_MAX];
	char log[PATH_MAX];
	char sockdir[PATH_MAX];
	char sockpath[PATH_MAX];
	char url[PATH_MAX + 8];
	int  exit_status; /* wait status once it exited, -1 before */
};

static struct daemon *g_daemon; /* the one whose pid is g_daemon_pid */

/* log_tail copies the last lines of path to stderr. */
static void
log_tail(const char *path, int lines)
{
	static char buf[8192];
	FILE       *f = fopen(path, "r");
	size_t      n;
	long        sz;
	char       *p;
	int         seen = 0;

	if (f == NULL)
		return;
	fseek(f, 0, SEEK_END);
	sz = ftell(f);
	fseek(f, sz > (long) sizeof(buf) - 1 ? sz - (long) sizeof(buf) + 1 : 0,
	    SEEK_SET);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	for (p = buf + n; p > buf; p--)
		if (p[-1] == '\n' && p != buf + n && ++seen > lines)
			break;
	note("last lines of %s:", path);
	fputs(p, stderr);
	if (n > 0 && buf[n - 1] != '\n')
		fputc('\n', stderr);
}

/* daemon_alive checks our daemon without blocking; false once it exited. */
static bool
daemon_alive(void)
{
	char what[32];
	int  st;

	if (g_daemon_pid <= 0)
		return false;
	if (waitpid(g_daemon_pid, &st, WNOHANG) != g_daemon_pid)
		return true;
	g_daemon_pid = -1;
	if (g_daemon != NULL) {
		g_daemon->exit_status = st;
		note("supervised (%s) exited early: %s", g_daemon->name,
		    describe_status(st, what, sizeof(what)));
		log_tail(g_daemon->log, 15);
	}
	return false;
}

/*
 * daemon_start writes DIR/<name>.conf for group g and starts
 * "supervised --config it --foreground" with output to DIR/<name>.log and
 * its socket directory DIR/<name>/. Returns 0 or -1 with a reason in why.
 */
static int
daemon_start(struct daemon *d, const char *name, const struct group_cfg *g,
    char *why, size_t whylen)
{
	char *argv[]
	    = {"supervised", "--config", d->conf, "--foreground", NULL};
	pid_t pid;
	int   rv;

	memset(d, 0, sizeof(*d));
	d->exit_status = -1;
	snprintf(d->name, sizeof(d->name), "%s", name);
	if (dir_path(d->sockdir, sizeof(d->sockdir), name) != 0
	    || snprintf(d->conf, sizeof(d->conf), "%s.conf", d->sockdir)
	        >= (int) sizeof(d->conf)
	    || snprintf(d->log, sizeof(d->log), "%s.log", d->sockdir)
	        >= (int) sizeof(d->log)
	    || snprintf(d->sockpath, sizeof(d->sockpath), "%s/control.sock",
	           d->sockdir)
	        >= 100) {
		snprintf(why, whylen, "temporary path too long");
		return -1;
	}
	snprintf(d->url, sizeof(d->url), "ipc://%s", d->sockpath);
	if (write_config(d->conf, d->sockdir, g) != 0) {
		snprintf(why, whylen, "cannot write %.150s: %s", d->conf,
		    strerror(errno));
		return -1;
	}
	if ((rv = spawn_proc(
	         SV_SUPERVISED_PATH, argv, NULL, d->log, true, &pid))
	    != 0) {
		snprintf(why, whylen, "cannot start %s: %s",
		    SV_SUPERVISED_PATH, strerror(rv));
		return -1;
	}
	g_daemon_pid = pid;
	g_daemon     = d;
	return 0;
}

/*
 * daemon_wait_ready waits until the control socket exists. Returns 0, -1
 * (deadline or interruption: why says which) or -2 (the daemon exited; its
 * status is in d->exit_status).
 */
static int
daemon_wait_ready(struct daemon *d, long timeout_ms, char *why, size_t whylen)
{
	int64_t     deadline = now_ns() + timeout_ms * NS_PER_MS;
	struct stat sb;

	for (;;) {
		if (stat(d->sockpath, &sb) == 0 && S_ISSOCK(sb.st_mode))
			return 0;
		if (!daemon_alive()) {
			snprintf(why, whylen, "supervised exited at startup");
			return -2;
		}
		if (g_interrupted) {
			snprintf(why, whylen, "interrupted");
			return -1;
		}
		if (now_ns() >= deadline) {
			snprintf(why, whylen,
			    "no control socket %.150s after %ld ms",
			    d->sockpath, timeout_ms);
			return -1;
		}
		sleep_ms(2);
	}
}

/*
 * daemon_stop sends SIGTERM to the daemon and waits up to timeout_ms for
 * it to exit; then sweeps orphans. Counts the stop as clean when it exited
 * 0 in time and left no worker behind. *elapsedp gets the time it took.
 * Returns true when clean.
 */
static bool
daemon_stop(struct daemon *d, long timeout_ms, int64_t *elapsedp)
{
	char    what[32];
	int64_t t0       = now_ns();
	bool    timedout = false, clean;
	int     st, orphans;

	if (g_daemon_pid > 0) {
		st           = stop_child(g_daemon_pid, timeout_ms, &timedout);
		g_daemon_pid = -1;
		d->exit_status = st;
	}
	if (elapsedp != NULL)
		*elapsedp = now_ns() - t0;
	g_daemon = NULL;
	orphans  = sweep_orphans();
	g_orphans += orphans;
	clean = !timedout && d->exit_status != -1 && WIFEXITED(d->exit_status)
	    && WEXITSTATUS(d->exit_status) == 0 && orphans == 0;
	g_stops++;
	if (clean) {
		g_clean_stops++;
	} else {
		note(
		    "supervised (%s) did not stop cleanly: %s%s, %d orphan(s)",
		    d->name,
		    describe_status(d->exit_status, what, sizeof(what)),
		    timedout ? " after SIGKILL (SIGTERM deadline passed)" : "",
		    orphans);
		log_tail(d->log, 15);
	}
	return clean;
}

/* proc_status_kb reads a "Key:  N kB" line of /proc/pid/status; -1 if none. */
static long
proc_status_kb(pid_t pid, const char *key)
{
	char   path[64], line[256];
	size_t klen = strlen(key);
	long   v    = -1;
	FILE  *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
			v = strtol(line + klen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

/* proc_fd_count counts the open descriptors of pid; -1 if unreadable. */
static long
proc_fd_count(pid_t pid)
{
	char           path[64];
	struct dirent *e;
	long           n = 0;
	DIR           *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int) pid);
	if ((d = opendir(path)) == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* ------------------------------------------------------------------ */
/* Role "echo": the bare nng REP echo server (baseline of 1)          */
/* ------------------------------------------------------------------ */

#define ECHO_CTX 4

struct echo_work {
	enum { ECHO_INIT, ECHO_RECV, ECHO_SEND } state;
	nng_aio *aio;
	nng_ctx  ctx;
};

/* echo_cb is the ctx + aio state machine: receive, send the same back. */
static void
echo_cb(void *arg)
{
	struct echo_work *w = arg;
	nng_msg          *msg;
	int               rv;

	switch (w->state) {
	case ECHO_INIT:
		w->state = ECHO_RECV;
		nng_ctx_recv(w->ctx, w->aio);
		break;
	case ECHO_RECV:
		if ((rv = nng_aio_result(w->aio)) != 0) {
			if (rv != NNG_ECLOSED)
				nng_ctx_recv(w->ctx, w->aio);
			return;
		}
		msg = nng_aio_get_msg(w->aio);
		nng_aio_set_msg(w->aio, msg);
		w->state = ECHO_SEND;
		nng_ctx_send(w->ctx, w->aio);
		break;
	case ECHO_SEND:
		if ((rv = nng_aio_result(w->aio)) != 0) {
			nng_msg_free(nng_aio_get_msg(w->aio));
			if (rv == NNG_ECLOSED)
				return;
		}
		w->state = ECHO_RECV;
		nng_ctx_recv(w->ctx, w->aio);
		break;
	}
}

/* role_echo serves url until SIGTERM/SIGINT; exit status 0 on success. */
static int
role_echo(const char *url)
{
	struct echo_work w[ECHO_CTX];
	nng_listener     l;
	nng_socket       s;
	sigset_t         ss;
	int              i, sig, rv;

	/* Block the stop signals before nng starts its threads. */
	sigemptyset(&ss);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGINT);
	pthread_sigmask(SIG_BLOCK, &ss, NULL);
	if ((rv = nng_rep0_open(&s)) != 0
	    || (rv = nng_listener_create(&l, s, url)) != 0
	    || (rv = nng_listener_set_size(l, NNG_OPT_RECVMAXSZ, 1 << 20)) != 0
	    || (rv = nng_listener_set_int(l, NNG_OPT_IPC_PERMISSIONS, 0600))
	        != 0
	    || (rv = nng_listener_start(l, 0)) != 0) {
		fprintf(
		    stderr, "sv-bench echo: %s: %s\n", url, nng_strerror(rv));
		return 1;
	}
	for (i = 0; i < ECHO_CTX; i++) {
		if ((rv = nng_aio_alloc(&w[i].aio, echo_cb, &w[i])) != 0
		    || (rv = nng_ctx_open(&w[i].ctx, s)) != 0) {
			fprintf(
			    stderr, "sv-bench echo: %s\n", nng_strerror(rv));
			return 1;
		}
		w[i].state = ECHO_INIT;
		echo_cb(&w[i]);
	}
	while (sigwait(&ss, &sig) != 0)
		;
	nng_close(s);
	for (i = 0; i < ECHO_CTX; i++)
		nng_aio_stop(w[i].aio);
	for (i = 0; i < ECHO_CTX; i++)
		nng_aio_free(w[i].aio);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Role "rtt": the supervised worker timing echo and whoami           */
/* ------------------------------------------------------------------ */

/* send_report sends buf as one datagram to $SV_BENCH_SOCK. */
static int
send_report(const void *buf, size_t len)
{
	const char        *path = getenv(SV_BENCH_ENV_SOCK);
	struct sockaddr_un sa;
	ssize_t            n;
	int                fd;

	if (path == NULL || strlen(path) >= sizeof(sa.sun_path))
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	strcpy(sa.sun_path, path);
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	do
		n = sendto(
		    fd, buf, len, 0, (struct sockaddr *) &sa, sizeof(sa));
	while (n < 0 && errno == EINTR);
	close(fd);
	return n == (ssize_t) len ? 0 : -1;
}

/* echo_rt does one 64-byte echo round trip on s; returns its ns or -1. */
static int64_t
echo_rt(nng_socket s)
{
	int64_t  t0 = now_ns();
	nng_msg *m, *r;

	if (nng_msg_alloc(&m, ECHO_PAYLOAD) != 0)
		return -1;
	memset(nng_msg_body(m), 'x', ECHO_PAYLOAD);
	if (nng_sendmsg(s, m, 0) != 0) {
		nng_msg_free(m);
		return -1;
	}
	if (nng_recvmsg(s, &r, 0) != 0)
		return -1;
	nng_msg_free(r);
	return now_ns() - t0;
}

/* whoami_rt does one whoami round trip on c; returns its ns or -1. */
static int64_t
whoami_rt(sv_client *c, uint32_t *ordinalp)
{
	int64_t      t0 = now_ns();
	sv_identity *id;

	if (sv_client_whoami(c, RPC_TIMEOUT_MS, &id) != SV_OK)
		return -1;
	*ordinalp = sv_identity_ordinal(id);
	sv_identity_free(id);
	return now_ns() - t0;
}

/*
 * rtt_measure fills r: echo and whoami round trips, alternating which kind
 * goes first in each block. Returns 0, or -1 with r->msg set.
 */
static int
rtt_measure(const char *echo_url, long n, long blocks, struct sv_bench_rtt *r)
{
	long         per = n / blocks, warm = per < 200 ? per : 200, b, i;
	int64_t     *echo = NULL, *who = NULL, *tmp = NULL, t;
	int64_t      deadline = now_ns() + 5 * NS_PER_SEC;
	sv_client   *c        = NULL;
	sv_identity *id;
	nng_socket   s   = NNG_SOCKET_INITIALIZER;
	uint32_t     ord = 0;
	struct stats se, sw;
	sv_err       err;
	int          rv, ret = -1;

	n    = per * blocks;
	echo = malloc(sizeof(int64_t) * (size_t) n);
	who  = malloc(sizeof(int64_t) * (size_t) n);
	tmp  = malloc(sizeof(int64_t) * (size_t) per);
	if (echo == NULL || who == NULL || tmp == NULL) {
		snprintf(r->msg, sizeof(r->msg), "out of memory");
		goto out;
	}
	/*
	 * The baseline socket: a fresh REQ socket, dialed once, with the
	 * options sv_client_open sets (libsupervise/src/client/client.c): no
	 * resend, reconnect 10..1000 ms, 4 MiB receive limit on the dialer.
	 */
	if ((rv = nng_req0_open(&s)) != 0
	    || (rv = nng_socket_set_ms(
	            s, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE))
	        != 0
	    || (rv = nng_socket_set_ms(s, NNG_OPT_RECONNMINT, 10)) != 0
	    || (rv = nng_socket_set_ms(s, NNG_OPT_RECONNMAXT, 1000)) != 0
	    || (rv = nng_socket_set_ms(s, NNG_OPT_RECVTIMEO, RPC_TIMEOUT_MS))
	        != 0
	    || (rv = nng_socket_set_ms(s, NNG_OPT_SENDTIMEO, RPC_TIMEOUT_MS))
	        != 0) {
		snprintf(r->msg, sizeof(r->msg), "echo socket: %s",
		    nng_strerror(rv));
		goto out;
	}
	for (;;) {
		nng_dialer d;

		if ((rv = nng_dialer_create(&d, s, echo_url)) != 0)
			break;
		nng_dialer_set_size(d, NNG_OPT_RECVMAXSZ, 4u << 20);
		if ((rv = nng_dialer_start(d, 0)) == 0)
			break;
		nng_dialer_close(d);
		if (now_ns() >= deadline)
			break;
		sleep_ms(5);
	}
	if (rv != 0) {
		snprintf(r->msg, sizeof(r->msg), "dial %s: %s", echo_url,
		    nng_strerror(rv));
		goto out;
	}
	if ((err = sv_client_open(&c, NULL, RPC_TIMEOUT_MS)) != SV_OK) {
		snprintf(r->msg, sizeof(r->msg), "sv_client_open($%s): %s",
		    SV_ENV_URL, sv_strerror(err));
		goto out;
	}
	if ((err = sv_client_whoami(c, RPC_TIMEOUT_MS, &id)) != SV_OK) {
		snprintf(r->msg, sizeof(r->msg), "whoami: %s: %s",
		    sv_strerror(err), sv_client_error_message(c));
		goto out;
	}
	sv_identity_free(id);
	for (i = 0; i < warm; i++) {
		if (echo_rt(s) < 0 || whoami_rt(c, &ord) < 0) {
			snprintf(r->msg, sizeof(r->msg), "warm-up failed");
			goto out;
		}
	}
	for (b = 0; b < blocks; b++) {
		int k;

		for (k = 0; k < 2; k++) {
			bool do_echo = (k == 0) == (b % 2 == 0);

			for (i = 0; i < per; i++) {
				t = do_echo ? echo_rt(s) : whoami_rt(c, &ord);
				if (t < 0) {
					snprintf(r->msg, sizeof(r->msg),
					    "%s round trip failed in block "
					    "%ld",
					    do_echo ? "echo" : "whoami", b);
					goto out;
				}
				(do_echo ? echo : who)[b * per + i] = t;
			}
		}
		memcpy(tmp, echo + b * per, sizeof(int64_t) * (size_t) per);
		r->echo_block_med_ns[b] = stats_of(tmp, (size_t) per).med;
		memcpy(tmp, who + b * per, sizeof(int64_t) * (size_t) per);
		r->who_block_med_ns[b] = stats_of(tmp, (size_t) per).med;
	}
	se              = stats_of(echo, (size_t) n);
	sw              = stats_of(who, (size_t) n);
	r->ordinal      = (int32_t) ord;
	r->n            = (uint32_t) n;
	r->blocks       = (uint32_t) blocks;
	r->echo_med_ns  = se.med;
	r->echo_p99_ns  = se.p99;
	r->echo_mean_ns = se.mean;
	r->who_med_ns   = sw.med;
	r->who_p99_ns   = sw.p99;
	r->who_mean_ns  = sw.mean;
	ret             = 0;
out:
	sv_client_close(c);
	if (nng_socket_id(s) > 0)
		nng_close(s);
	free(echo);
	free(who);
	free(tmp);
	return ret;
}

/*
 * role_rtt runs as a supervised worker: measures, reports one datagram,
 * then waits for the daemon's SIGTERM (exiting would make the daemon start
 * it, and the measurement, again).
 */
static int
role_rtt(const char *echo_url, const char *nstr, const char *bstr)
{
	static struct sv_bench_rtt r;
	long                       n = parse_long(nstr, 1, 10000000);
	long blocks = parse_long(bstr, 1, SV_BENCH_MAX_BLOCKS);

	memset(&r, 0, sizeof(r));
	r.magic   = SV_BENCH_MAGIC_RTT;
	r.pid     = (int32_t) getpid();
	r.ordinal = -1;
	if (n < 0 || blocks < 0 || n < blocks) {
		snprintf(r.msg, sizeof(r.msg), "bad arguments");
		r.status = 1;
	} else if (rtt_measure(echo_url, n, blocks, &r) != 0) {
		r.status = 1;
	}
	if (send_report(&r, sizeof(r)) != 0)
		fprintf(stderr, "sv-bench rtt: cannot send the report\n");
	for (;;)
		pause();
	return 0; /* not reached */
}

/* ------------------------------------------------------------------ */
/* Measurement 1: whoami round trip vs bare echo                      */
/* ------------------------------------------------------------------ */

/* m1_run measures 1 into *r. Returns 0, or -1 with a reason in why. */
static int
m1_run(const struct opts *o, struct sv_bench_rtt *r, char *why, size_t whylen)
{
	char echo_sock[PATH_MAX], echo_url[PATH_MAX + 8], echo_log[PATH_MAX];
	char nbuf[32], bbuf[32], env[PATH_MAX + 32], what[32];
	const char *argv[]
	    = {g_self, "--role", "rtt", echo_url, nbuf, bbuf, NULL};
	char *eargv[] = {"sv-bench-echo", "--role", "echo", echo_url, NULL};
	struct group_cfg g
	    = {"rtt", argv, 1, 0, -1, "sv-bench round-trip client", env};
	struct daemon d;
	struct stat   sb;
	int64_t       deadline;
	bool          timedout;
	int           rv, st, ret = -1;

	if (dir_path(echo_sock, sizeof(echo_sock), "echo.sock") != 0
	    || dir_path(echo_log, sizeof(echo_log), "echo.log") != 0) {
		snprintf(why, whylen, "temporary path too long");
		return -1;
	}
	snprintf(echo_url, sizeof(echo_url), "ipc://%s", echo_sock);
	snprintf(nbuf, sizeof(nbuf), "%ld", o->rtts);
	snprintf(bbuf, sizeof(bbuf), "%ld", o->blocks);
	snprintf(env, sizeof(env), "%s=%s", SV_BENCH_ENV_SOCK, g_sock);
	rx_flush();

	if ((rv = spawn_proc(g_self, eargv, NULL, echo_log, true, &g_echo_pid))
	    != 0) {
		g_echo_pid = -1;
		snprintf(why, whylen, "cannot start the echo server: %s",
		    strerror(rv));
		return -1;
	}
	deadline = now_ns() + 5 * NS_PER_SEC;
	while (stat(echo_sock, &sb) != 0) {
		if (now_ns() >= deadline || g_interrupted
		    || waitpid(g_echo_pid, &st, WNOHANG) == g_echo_pid) {
			snprintf(why, whylen, "echo server did not listen");
			log_tail(echo_log, 10);
			goto stop_echo;
		}
		sleep_ms(2);
	}

	if (daemon_start(&d, "d1", &g, why, whylen) != 0)
		goto stop_echo;
	if (daemon_wait_ready(&d, 10000, why, whylen) != 0)
		goto stop_daemon;
	/* 20 s of slack plus 2 ms per round trip, both kinds. */
	deadline = now_ns() + 20 * NS_PER_SEC + 2 * o->rtts * 2 * NS_PER_MS;
	for (;;) {
		int64_t slice = now_ns() + 100 * NS_PER_MS;
		ssize_t n     = rx_recv(
		        r, sizeof(*r), slice < deadline ? slice : deadline);

		if (n == (ssize_t) sizeof(*r)
		    && r->magic == SV_BENCH_MAGIC_RTT)
			break;
		if (n < 0) {
			snprintf(why, whylen, "interrupted or socket error");
			goto stop_daemon;
		}
		if (!daemon_alive()) {
			snprintf(why, whylen,
			    "supervised exited during the "
			    "round-trip measurement");
			goto stop_daemon;
		}
		if (now_ns() >= deadline) {
			snprintf(why, whylen,
			    "no report from the round-trip "
			    "worker (see %.150s)",
			    d.log);
			goto stop_daemon;
		}
	}
	if (r->status != 0) {
		snprintf(why, whylen, "round-trip worker failed: %s", r->msg);
		goto stop_daemon;
	}
	ret = 0;
stop_daemon:
	daemon_stop(&d, 10000, NULL);
stop_echo:
	if (g_echo_pid > 0) {
		st         = stop_child(g_echo_pid, 5000, &timedout);
		g_echo_pid = -1;
		if (timedout || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			note("echo server ended with %s",
			    describe_status(st, what, sizeof(what)));
	}
	return ret;
}

/* ------------------------------------------------------------------ */
/* Measurement 2: crash to replacement exec'd                         */
/* ------------------------------------------------------------------ */

struct m2_result {
	int64_t *lat; /* kills latencies, ns */
	long     n; /* how many were measured */
	long     anomalies; /* wrong ordinal or non-increasing generation */
};

/* raw_spawn_stamp starts one raw stamp worker; returns 0 or errno. */
static int
raw_spawn_stamp(struct envbuf *e, long ord, long long gen, pid_t *pidp)
{
	char *argv[] = {"sv-bench-stamp", NULL};

	envbuf_set(e, ord, gen);
	return spawn_proc(
	    SV_BENCH_STAMP_PATH, argv, e->envp, NULL, false, pidp);
}

/* wait_stamp_of waits for pid's stamp; 1 got, else as rx_stamp. */
static int
wait_stamp_of(pid_t pid, struct sv_bench_stamp *st, int64_t deadline)
{
	int rv;

	while ((rv = rx_stamp(st, deadline)) == 1)
		if (pid <= 0 || st->pid == pid)
			return 1;
	return rv;
}

/*
 * m2_raw is the baseline: sv-bench supervises one stamp worker itself
 * (kill, pidfd poll, waitpid, posix_spawn) and times kill to the
 * replacement's stamp. Returns 0, or -1 with a reason in why.
 */
static int
m2_raw(const struct opts *o, long warm, struct m2_result *res, char *why,
    size_t whylen)
{
	struct sv_bench_stamp st;
	struct envbuf         e;
	long                  k, gen = 0;
	pid_t                 pid;
	int                   rv, pfd = -1, ret = -1;

	rx_flush();
	if (envbuf_init(&e) != 0) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	if ((rv = raw_spawn_stamp(&e, 0, gen, &pid)) != 0) {
		snprintf(why, whylen, "posix_spawn: %s", strerror(rv));
		goto out;
	}
	g_raw[0] = pid;
	g_nraw   = 1;
	if ((pfd = pidfd_open_(pid)) < 0) {
		snprintf(why, whylen, "pidfd_open: %s", strerror(errno));
		goto out;
	}
	if (wait_stamp_of(pid, &st, now_ns() + 5 * NS_PER_SEC) != 1) {
		snprintf(why, whylen, "no stamp from the first raw worker");
		goto out;
	}
	for (k = -warm; k < o->kills; k++) {
		struct pollfd p  = {pfd, POLLIN, 0};
		int64_t       t0 = now_ns();

		kill(pid, SIGKILL);
		if (poll(&p, 1, 5000) != 1 || waitpid(pid, NULL, 0) != pid) {
			snprintf(why, whylen, "raw worker %d did not die",
			    (int) pid);
			goto out;
		}
		g_nraw = 0;
		close(pfd);
		pfd = -1;
		if ((rv = raw_spawn_stamp(&e, 0, ++gen, &pid)) != 0) {
			snprintf(why, whylen, "posix_spawn: %s", strerror(rv));
			goto out;
		}
		g_raw[0] = pid;
		g_nraw   = 1;
		if ((pfd = pidfd_open_(pid)) < 0) {
			snprintf(
			    why, whylen, "pidfd_open: %s", strerror(errno));
			goto out;
		}
		if (wait_stamp_of(pid, &st, now_ns() + 5 * NS_PER_SEC) != 1) {
			snprintf(why, whylen, "no stamp from raw worker %d",
			    (int) pid);
			goto out;
		}
		if (k >= 0)
			res->lat[res->n++] = st.t_ns - t0;
	}
	ret = 0;
out:
	if (pfd >= 0)
		close(pfd);
	raw_reap_all(2000);
	envbuf_free(&e);
	return ret;
}

/*
 * m2_ours times SIGKILL of the daemon's worker to its replacement's stamp,
 * group of 1 with min_uptime_ms = 0. Returns 0, or -1 with a reason in why.
 */
static int
m2_ours(const struct opts *o, long warm, struct m2_result *res, char *why,
    size_t whylen)
{
	char                  env[PATH_MAX + 32];
	const char           *argv[] = {SV_BENCH_STAMP_PATH, NULL};
	struct group_cfg      g      = {"crash", argv, 1, 0, 0,
	              "sv-bench crash-to-replacement worker", env};
	struct sv_bench_stamp st;
	struct daemon         d;
	int64_t               lastgen;
	long                  k;
	pid_t                 pid;
	int                   rv, ret = -1;

	snprintf(env, sizeof(env), "%s=%s", SV_BENCH_ENV_SOCK, g_sock);
	rx_flush();
	if (daemon_start(&d, "d2", &g, why, whylen) != 0)
		return -1;
	if (daemon_wait_ready(&d, 10000, why, whylen) != 0)
		goto stop;
	if ((rv = rx_stamp(&st, now_ns() + 10 * NS_PER_SEC)) != 1) {
		snprintf(why, whylen, "no stamp from the first worker (%s)",
		    rv == -2 ? "daemon exited" : "deadline");
		goto stop;
	}
	pid     = st.pid;
	lastgen = st.generation;
	for (k = -warm; k < o->kills; k++) {
		int64_t t0 = now_ns();

		if (kill(pid, SIGKILL) != 0) {
			snprintf(why, whylen, "kill(%d): %s", (int) pid,
			    strerror(errno));
			goto stop;
		}
		do
			rv = rx_stamp(&st, t0 + 5 * NS_PER_SEC);
		while (rv == 1 && st.pid == pid);
		if (rv != 1) {
			snprintf(why, whylen,
			    "no replacement within 5 s after "
			    "kill %ld (%s)",
			    k + warm + 1,
			    rv == -2      ? "daemon exited"
			        : rv == 0 ? "deadline"
			                  : "interrupted");
			goto stop;
		}
		if (st.ordinal != 0 || st.generation <= lastgen)
			res->anomalies++;
		lastgen = st.generation;
		pid     = st.pid;
		if (k >= 0)
			res->lat[res->n++] = st.t_ns - t0;
	}
	ret = 0;
stop:
	daemon_stop(&d, 10000, NULL);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Measurement 3: spawn N workers; RSS                                */
/* ------------------------------------------------------------------ */

#define M3_MAX_ROUNDS 16

struct m3_result {
	long    rounds; /* rounds completed by both sides */
	int64_t raw_ns[M3_MAX_ROUNDS]; /* first spawn to latest stamp */
	int64_t ours_ns[M3_MAX_ROUNDS]; /* scale call to latest stamp */
	int64_t scale_ns[M3_MAX_ROUNDS]; /* sv_client_scale call duration */
	int64_t stop_ns; /* SIGTERM to daemon exit, N workers alive */
	long    initial; /* group count the daemon started with */
	long    rss_idle_kb, rss_kb, hwm_kb, threads, fds;
};

/* State of the daemon kept across the rounds of measurement 3. */
struct m3_ctx {
	struct daemon  d;
	bool           started;
	sv_client     *c;
	unsigned char *seen; /* ordinals reported this round */
	pid_t         *pids; /* pid of each ordinal this round */
};

struct raw_job {
	struct envbuf *env;
	long           n;
	int            err; /* errno of a failed posix_spawn, or 0 */
	int64_t        t_start;
	atomic_bool    failed;
};

/* raw_spawn_thread posix_spawns job->n stamp workers back to back. */
static void *
raw_spawn_thread(void *arg)
{
	struct raw_job *job = arg;
	long            i;

	job->t_start = now_ns();
	for (i = 0; i < job->n && !g_interrupted; i++) {
		pid_t pid;
		int   rv = raw_spawn_stamp(job->env, i, -1, &pid);

		if (rv != 0) {
			job->err = rv;
			atomic_store(&job->failed, true);
			break;
		}
		g_raw[g_nraw++] = pid;
	}
	return NULL;
}

/*
 * collect_stamps drains stamps until want new distinct ordinals in [0, n)
 * are seen (seen[] keeps them, pids[] their pids), the deadline passes, or
 * *failed says the thread starting the workers gave up. Returns how many
 * were new and the latest stamp time in *tmaxp.
 */
static long
collect_stamps(unsigned char *seen, pid_t *pids, long n, long want,
    int64_t deadline, int64_t *tmaxp, atomic_bool *failed)
{
	struct sv_bench_stamp st;
	long                  got = 0;
	int                   rv;

	while (got < want) {
		int64_t slice = now_ns() + 100 * NS_PER_MS;

		rv = rx_stamp(&st, slice < deadline ? slice : deadline);
		if (rv == 1) {
			if (st.ordinal >= 0 && st.ordinal < n
			    && !seen[st.ordinal]) {
				seen[st.ordinal] = 1;
				pids[st.ordinal] = st.pid;
				got++;
				if (st.t_ns > *tmaxp)
					*tmaxp = st.t_ns;
			}
			continue;
		}
		if (rv < 0 || now_ns() >= deadline || atomic_load(failed))
			break;
	}
	return got;
}

/* spawn_deadline is how long N workers may take to report. */
static int64_t
spawn_deadline(long n)
{
	return now_ns() + 30 * NS_PER_SEC + n * 20 * NS_PER_MS;
}

/*
 * m3_raw_round times one raw posix_spawn loop of N stamp workers (spawned
 * from a thread while this one drains the reports), then ends them.
 * Returns 0 with *nsp, or -1 with why.
 */
static int
m3_raw_round(const struct opts *o, unsigned char *seen, pid_t *pids,
    int64_t *nsp, char *why, size_t whylen)
{
	struct raw_job job;
	struct envbuf  e;
	pthread_t      th;
	int64_t        tmax = 0;
	long           got;
	int            ret = -1;

	memset(&job, 0, sizeof(job));
	memset(seen, 0, (size_t) o->workers);
	if (envbuf_init(&e) != 0) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	rx_flush();
	job.env = &e;
	job.n   = o->workers;
	atomic_init(&job.failed, false);
	g_nraw = 0;
	if (pthread_create(&th, NULL, raw_spawn_thread, &job) != 0) {
		snprintf(why, whylen, "pthread_create failed");
		goto out;
	}
	got = collect_stamps(seen, pids, o->workers, o->workers,
	    spawn_deadline(o->workers), &tmax, &job.failed);
	pthread_join(th, NULL);
	if (job.err != 0) {
		snprintf(why, whylen,
		    "posix_spawn failed after %zu workers: %s", g_nraw,
		    strerror(job.err));
		goto out;
	}
	if (got < o->workers) {
		snprintf(why, whylen, "only %ld of %ld raw workers reported",
		    got, o->workers);
		goto out;
	}
	*nsp = tmax - job.t_start;
	ret  = 0;
out:
	raw_reap_all(10000);
	envbuf_free(&e);
	return ret;
}

/*
 * wait_gone waits until none of the n pids (0 = unused) is a child of the
 * daemon any more (reaped, or the pid reused by someone else).
 */
static bool
wait_gone(const pid_t *pids, long n, int64_t deadline)
{
	long i = 0;

	while (i < n) {
		char  path[64], buf[512], *p = NULL;
		long  ppid = -1;
		FILE *f;

		if (pids[i] > 0) {
			snprintf(path, sizeof(path), "/proc/%d/stat",
			    (int) pids[i]);
			if ((f = fopen(path, "r")) != NULL) {
				p = fgets(buf, sizeof(buf), f);
				fclose(f);
			}
			if (p != NULL && (p = strrchr(buf, ')')) != NULL
			    && sscanf(p + 1, " %*c %ld", &ppid) == 1
			    && ppid == g_daemon_pid) {
				if (now_ns() >= deadline || g_interrupted
				    || !daemon_alive())
					return false;
				sleep_ms(2);
				continue;
			}
		}
		i++;
	}
	return true;
}

struct scale_job {
	sv_client  *c;
	uint32_t    n;
	sv_err      err;
	uint32_t    prev;
	int64_t     t_start, t_done;
	char        msg[160];
	atomic_bool failed;
};

/* scale_thread calls sv_client_scale while the main thread drains. */
static void *
scale_thread(void *arg)
{
	struct scale_job *job = arg;

	job->t_start = now_ns();
	job->err = sv_client_scale(job->c, "spawn", job->n, 60000, &job->prev);
	job->t_done = now_ns();
	if (job->err != SV_OK) {
		snprintf(job->msg, sizeof(job->msg), "%s",
		    sv_client_error_message(job->c));
		atomic_store(&job->failed, true);
	}
	return NULL;
}

/*
 * m3_stop_group stops every worker of the group (sv_client_stop) and waits
 * until the daemon has reaped the pids of the round. Returns 0 or -1.
 */
static int
m3_stop_group(struct m3_ctx *x, long n, char *why, size_t whylen)
{
	sv_err err = sv_client_stop(x->c, "spawn", 60000, NULL);

	if (err != SV_OK) {
		snprintf(why, whylen, "sv_client_stop(spawn): %s: %s",
		    sv_strerror(err), sv_client_error_message(x->c));
		return -1;
	}
	if (!wait_gone(x->pids, n, now_ns() + 30 * NS_PER_SEC)) {
		snprintf(why, whylen,
		    "workers still there 30 s after "
		    "sv_client_stop");
		return -1;
	}
	return 0;
}

/*
 * m3_ours_start starts the daemon with the group at count 0 (or at 1 if it
 * refuses 0, then stops that worker), connects, and reads the idle RSS.
 * Returns 0 or -1 with why.
 */
static int
m3_ours_start(const struct opts *o, struct m3_ctx *x, struct m3_result *res,
    char *why, size_t whylen)
{
	static char        env[PATH_MAX + 32];
	static const char *argv[] = {SV_BENCH_STAMP_PATH, NULL};
	struct group_cfg   g
	    = {"spawn", argv, 0, 0, -1, "sv-bench spawn-rate worker", env};
	struct sv_bench_stamp st;
	sv_err                err;
	int                   rv;

	snprintf(env, sizeof(env), "%s=%s", SV_BENCH_ENV_SOCK, g_sock);
	g.max_count = o->workers > 1024 ? o->workers : 0;
	rx_flush();
	if (daemon_start(&x->d, "d3", &g, why, whylen) != 0)
		return -1;
	x->started = true;
	rv         = daemon_wait_ready(&x->d, 10000, why, whylen);
	if (rv == -2) {
		/* The daemon may refuse count = 0: start at 1 instead. */
		note("supervised refused count = 0 (see %s); retrying with "
		     "count = 1",
		    x->d.log);
		g.count = 1;
		if (daemon_start(&x->d, "d3b", &g, why, whylen) != 0) {
			x->started = false;
			return -1;
		}
		rv = daemon_wait_ready(&x->d, 10000, why, whylen);
	}
	if (rv != 0)
		return -1;
	res->initial = g.count;
	if ((err = sv_client_open(&x->c, x->d.url, RPC_TIMEOUT_MS)) != SV_OK) {
		snprintf(why, whylen, "sv_client_open(%.150s): %s", x->d.url,
		    sv_strerror(err));
		return -1;
	}
	if (g.count == 1) {
		do
			rv = rx_stamp(&st, now_ns() + 10 * NS_PER_SEC);
		while (rv == 1 && st.ordinal != 0);
		if (rv != 1) {
			snprintf(why, whylen, "no stamp from ordinal 0");
			return -1;
		}
		memset(x->pids, 0, sizeof(pid_t) * (size_t) o->workers);
		x->pids[0] = st.pid;
		if (m3_stop_group(x, 1, why, whylen) != 0)
			return -1;
	}
	/* Let the daemon settle, then read its idle RSS. */
	sleep_ms(100);
	res->rss_idle_kb = proc_status_kb(g_daemon_pid, "VmRSS");
	return 0;
}

/*
 * m3_ours_round scales the group from 0 to N and times until N distinct
 * workers reported; reads the daemon's RSS (keeping the maximum over
 * rounds); unless last, stops the group again. Returns 0 or -1 with why.
 */
static int
m3_ours_round(const struct opts *o, struct m3_ctx *x, struct m3_result *res,
    long round, bool last, char *why, size_t whylen)
{
	struct scale_job job;
	pthread_t        th;
	int64_t          tmax = 0;
	long             got, kb;

	memset(&job, 0, sizeof(job));
	memset(x->seen, 0, (size_t) o->workers);
	memset(x->pids, 0, sizeof(pid_t) * (size_t) o->workers);
	atomic_init(&job.failed, false);
	rx_flush();
	job.c = x->c;
	job.n = (uint32_t) o->workers;
	if (pthread_create(&th, NULL, scale_thread, &job) != 0) {
		snprintf(why, whylen, "pthread_create failed");
		return -1;
	}
	got = collect_stamps(x->seen, x->pids, o->workers, o->workers,
	    spawn_deadline(o->workers), &tmax, &job.failed);
	pthread_join(th, NULL);
	if (job.err != SV_OK) {
		snprintf(why, whylen, "sv_client_scale(spawn, %ld): %s: %s",
		    o->workers, sv_strerror(job.err), job.msg);
		return -1;
	}
	if (got < o->workers) {
		snprintf(why, whylen,
		    "only %ld of %ld workers reported after "
		    "scale (daemon %s)",
		    got, o->workers, daemon_alive() ? "alive" : "exited");
		return -1;
	}
	res->ours_ns[round]  = tmax - job.t_start;
	res->scale_ns[round] = job.t_done - job.t_start;
	if ((kb = proc_status_kb(g_daemon_pid, "VmRSS")) < 0) {
		snprintf(why, whylen, "cannot read /proc/%d/status",
		    (int) g_daemon_pid);
		return -1;
	}
	if (kb > res->rss_kb)
		res->rss_kb = kb;
	res->hwm_kb  = proc_status_kb(g_daemon_pid, "VmHWM");
	res->threads = proc_status_kb(g_daemon_pid, "Threads");
	res->fds     = proc_fd_count(g_daemon_pid);
	if (!last)
		return m3_stop_group(x, o->workers, why, whylen);
	return 0;
}

/*
 * m3_run alternates raw and supervised rounds (the last supervised round
 * leaves its N workers running for the SIGTERM stop). Returns 0 when every
 * round was measured, -1 with why_raw or why_ours otherwise.
 */
static int
m3_run(const struct opts *o, struct m3_result *res, char *why_raw,
    char *why_ours, size_t whylen)
{
	struct m3_ctx x;
	long          r;
	int           ret = -1;

	memset(&x, 0, sizeof(x));
	x.seen = calloc((size_t) o->workers, 1);
	x.pids = calloc((size_t) o->workers, sizeof(pid_t));
	if (x.seen == NULL || x.pids == NULL) {
		snprintf(why_ours, whylen, "out of memory");
		goto out;
	}
	for (r = 0; r < o->rounds; r++) {
		note("3/3 round %ld/%ld: raw posix_spawn loop of %ld", r + 1,
		    o->rounds, o->workers);
		if (m3_raw_round(
		        o, x.seen, x.pids, &res->raw_ns[r], why_raw, whylen)
		    != 0)
			goto out;
		if (r == 0 && m3_ours_start(o, &x, res, why_ours, whylen) != 0)
			goto out;
		note("3/3 round %ld/%ld: supervised scale 0 -> %ld", r + 1,
		    o->rounds, o->workers);
		if (m3_ours_round(
		        o, &x, res, r, r + 1 == o->rounds, why_ours, whylen)
		    != 0)
			goto out;
		res->rounds = r + 1;
	}
	ret = 0;
out:
	sv_client_close(x.c);
	if (x.started)
		daemon_stop(&x.d, 30000, &res->stop_ns);
	free(x.seen);
	free(x.pids);
	return ret;
}

/*
 * cpu_busy_pct samples /proc/stat over ms milliseconds and returns the
 * share of CPU time (all CPUs) that was not idle or iowait, or -1. Run
 * while sv-bench itself is quiet, it tells whether something else is
 * competing for the CPUs.
 */
static double
cpu_busy_pct(long ms)
{
	unsigned long long a[2][10], tot[2], idle[2];
	int                k, i;

	for (k = 0; k < 2; k++) {
		FILE *f = fopen("/proc/stat", "r");
		int   n;

		if (f == NULL)
			return -1;
		memset(a[k], 0, sizeof(a[k]));
		n = fscanf(f,
		    "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu "
		    "%llu",
		    &a[k][0], &a[k][1], &a[k][2], &a[k][3], &a[k][4], &a[k][5],
		    &a[k][6], &a[k][7], &a[k][8], &a[k][9]);
		fclose(f);
		if (n < 5)
			return -1;
		/* guest and guest_nice (8, 9) are already in user and nice. */
		for (tot[k] = 0, i = 0; i < 8; i++)
			tot[k] += a[k][i];
		idle[k] = a[k][3] + a[k][4];
		if (k == 0)
			sleep_ms(ms);
	}
	if (tot[1] <= tot[0])
		return -1;
	return 100.0
	    * (1.0
	        - (double) (idle[1] - idle[0]) / (double) (tot[1] - tot[0]));
}

/* ------------------------------------------------------------------ */
/* Table                                                              */
/* ------------------------------------------------------------------ */

enum target_kind { T_INFO, T_RATIO_LE, T_RATIO_GE, T_ABS_LE, T_CHECK };

struct row {
	const char      *name;
	bool             made; /* the measurement was made */
	bool             has_base;
	double           base, ours;
	enum target_kind kind;
	double           target;
	const char      *tunit; /* unit of an absolute target */
	char             ours_text[24]; /* replaces ours when set */
	bool             check_ok; /* for T_CHECK */
};

/* print_row prints one line of the table. */
static void
print_row(const struct row *r)
{
	char base[24] = "-", ours[24] = "n/a", ratio[16] = "-", tgt[24] = "-";
	const char *result = "FAIL";

	if (r->has_base)
		snprintf(base, sizeof(base), "%.1f", r->base);
	if (r->made) {
		if (r->ours_text[0] != '\0')
			snprintf(ours, sizeof(ours), "%s", r->ours_text);
		else
			snprintf(ours, sizeof(ours), "%.1f", r->ours);
		if (r->has_base && r->base > 0)
			snprintf(
			    ratio, sizeof(ratio), "%.2fx", r->ours / r->base);
	}
	switch (r->kind) {
	case T_INFO:
		result = r->made ? "info" : "FAIL";
		break;
	case T_RATIO_LE:
		snprintf(tgt, sizeof(tgt), "<= %.2fx", r->target);
		if (r->made)
			result
			    = r->ours <= r->target * r->base ? "PASS" : "MISS";
		break;
	case T_RATIO_GE:
		snprintf(tgt, sizeof(tgt), ">= %.2fx", r->target);
		if (r->made)
			result
			    = r->ours >= r->target * r->base ? "PASS" : "MISS";
		break;
	case T_ABS_LE:
		snprintf(tgt, sizeof(tgt), "<= %g %s", r->target, r->tunit);
		if (r->made)
			result = r->ours <= r->target ? "PASS" : "MISS";
		break;
	case T_CHECK:
		snprintf(tgt, sizeof(tgt), "all");
		if (r->made)
			result = r->check_ok ? "PASS" : "MISS";
		break;
	}
	printf("%-42s %10s %10s %8s %12s  %s\n", r->name, base, ours, ratio,
	    tgt, result);
}

/* ------------------------------------------------------------------ */
/* main                                                               */
/* ------------------------------------------------------------------ */

/* cleanup ends whatever we started that still runs and removes g_dir. */
static void
cleanup(bool keep)
{
	bool timedout;

	if (g_daemon_pid > 0) {
		(void) stop_child(g_daemon_pid, 10000, &timedout);
		g_daemon_pid = -1;
	}
	if (g_echo_pid > 0) {
		(void) stop_child(g_echo_pid, 5000, &timedout);
		g_echo_pid = -1;
	}
	raw_reap_all(2000);
	(void) sweep_orphans();
	if (g_rx >= 0)
		close(g_rx);
	if (g_dir[0] != '\0') {
		if (keep)
			note("kept %s", g_dir);
		else
			rm_rf(g_dir);
	}
}

/* setup_process resolves our path, raises RLIMIT_NOFILE, installs handlers. */
static void
setup_process(long *nofilep)
{
	struct sigaction sa;
	struct rlimit    rl;
	ssize_t          n;

	n = readlink("/proc/self/exe", g_self, sizeof(g_self) - 1);
	g_self[n > 0 ? n : 0] = '\0';
	/* The daemon inherits this: it may hold a pidfd per worker. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		if (rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			(void) setrlimit(RLIMIT_NOFILE, &rl);
			(void) getrlimit(RLIMIT_NOFILE, &rl);
		}
		*nofilep
		    = rl.rlim_cur == RLIM_INFINITY ? -1 : (long) rl.rlim_cur;
	}
	/* Workers a daemon abandons become our children: we count them. */
	(void) prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* main dispatches the helper roles, else runs the benchmark. */
int
main(int argc, char **argv)
{
	static struct sv_bench_rtt rtt;
	char             why1[256] = "", why2r[256] = "", why2[256] = "";
	char             why3r[256] = "", why3[256] = "", base[PATH_MAX];
	int64_t          tr[M3_MAX_ROUNDS], to[M3_MAX_ROUNDS];
	struct m2_result raw2 = {0}, ours2 = {0};
	struct m3_result m3;
	struct stats     s2r, s2, s3r, s3;
	struct row       rows[8];
	struct utsname   un;
	struct opts      o;
	const char      *tmp;
	long             nofile = -1, warm;
	double           busy_before, busy_after;
	bool             ok1, ok2r, ok2, ok3, all_made;
	int              i, nrows = 0;

	if (argc >= 2 && strcmp(argv[1], "--role") == 0) {
		if (argc == 4 && strcmp(argv[2], "echo") == 0)
			return role_echo(argv[3]);
		if (argc == 6 && strcmp(argv[2], "rtt") == 0)
			return role_rtt(argv[3], argv[4], argv[5]);
		fprintf(stderr, "sv-bench: bad --role arguments\n");
		return 2;
	}
	if (parse_opts(argc, argv, &o) != 0) {
		usage(stderr);
		return 2;
	}
	setup_process(&nofile);
	memset(&m3, 0, sizeof(m3));
	setvbuf(stdout, NULL, _IOLBF, 0);

	tmp = getenv("TMPDIR");
	snprintf(base, sizeof(base), "%s/sv-bench.XXXXXX",
	    tmp != NULL && tmp[0] == '/' && strlen(tmp) < 40 ? tmp : "/tmp");
	if (mkdtemp(base) == NULL) {
		note("mkdtemp %s: %s", base, strerror(errno));
		return 1;
	}
	snprintf(g_dir, sizeof(g_dir), "%s", base);
	if (dir_path(g_sock, sizeof(g_sock), "report.sock") != 0
	    || (g_rx = rx_open(g_sock)) < 0) {
		note("cannot bind the report socket in %s", g_dir);
		cleanup(o.keep);
		return 1;
	}
	g_raw     = calloc((size_t) o.workers + 1, sizeof(pid_t));
	raw2.lat  = calloc((size_t) o.kills, sizeof(int64_t));
	ours2.lat = calloc((size_t) o.kills, sizeof(int64_t));
	if (g_raw == NULL || raw2.lat == NULL || ours2.lat == NULL) {
		note("out of memory");
		cleanup(o.keep);
		return 1;
	}
	uname(&un);
	printf(
	    "sv-bench: nproc %ld, kernel %s %s %s (%s), RLIMIT_NOFILE %ld\n",
	    sysconf(_SC_NPROCESSORS_ONLN), un.sysname, un.release, un.machine,
	    un.version, nofile);
	printf("sv-bench: supervised %s\n", SV_SUPERVISED_PATH);
	printf("sv-bench: %ld round trips of each kind in %ld blocks, "
	       "%ld kills, %ld workers x %ld rounds%s\n",
	    o.rtts, o.blocks, o.kills, o.workers, o.rounds,
	    o.quick ? " (--quick)" : "");

	busy_before = cpu_busy_pct(1000);
	printf("sv-bench: CPU busy before the run (sv-bench idle, 1 s): %.0f%%"
	       "\n",
	    busy_before);
	note("1/3 whoami round trip vs bare nng echo");
	ok1  = m1_run(&o, &rtt, why1, sizeof(why1)) == 0;
	warm = o.kills < 50 ? 2 : 5;
	note("2/3 crash to replacement: raw baseline");
	ok2r = !g_interrupted
	    && m2_raw(&o, warm, &raw2, why2r, sizeof(why2r)) == 0;
	note("2/3 crash to replacement: supervised");
	ok2 = !g_interrupted
	    && m2_ours(&o, warm, &ours2, why2, sizeof(why2)) == 0;
	ok3 = !g_interrupted
	    && m3_run(&o, &m3, why3r, why3, sizeof(why3)) == 0;

	busy_after = cpu_busy_pct(1000);
	s2r        = stats_of(raw2.lat, (size_t) raw2.n);
	s2         = stats_of(ours2.lat, (size_t) ours2.n);
	memcpy(tr, m3.raw_ns, sizeof(tr));
	memcpy(to, m3.ours_ns, sizeof(to));
	s3r = stats_of(tr, (size_t) m3.rounds);
	s3  = stats_of(to, (size_t) m3.rounds);

	memset(rows, 0, sizeof(rows));
	rows[nrows++] = (struct row) {.name = "whoami RTT median (us)",
	    .made                           = ok1,
	    .has_base                       = ok1,
	    .base                           = rtt.echo_med_ns / 1e3,
	    .ours                           = rtt.who_med_ns / 1e3,
	    .kind                           = T_RATIO_LE,
	    .target                         = 1.2};
	rows[nrows++] = (struct row) {.name = "whoami RTT p99 (us)",
	    .made                           = ok1,
	    .has_base                       = ok1,
	    .base                           = rtt.echo_p99_ns / 1e3,
	    .ours                           = rtt.who_p99_ns / 1e3,
	    .kind                           = T_INFO};
	rows[nrows++]
	    = (struct row) {.name = "crash -> replacement median (ms)",
	        .made             = ok2,
	        .has_base         = ok2r,
	        .base             = s2r.med / 1e6,
	        .ours             = s2.med / 1e6,
	        .kind             = T_ABS_LE,
	        .target           = 2,
	        .tunit            = "ms"};
	rows[nrows++] = (struct row) {.name = "crash -> replacement p99 (ms)",
	    .made                           = ok2,
	    .has_base                       = ok2r,
	    .base                           = s2r.p99 / 1e6,
	    .ours                           = s2.p99 / 1e6,
	    .kind                           = T_INFO};
	rows[nrows++]
	    = (struct row) {.name = "spawn N workers, rate (workers/s)",
	        .made             = ok3,
	        .has_base         = ok3,
	        .base   = s3r.med > 0 ? o.workers * 1e9 / s3r.med : 0,
	        .ours   = s3.med > 0 ? o.workers * 1e9 / s3.med : 0,
	        .kind   = T_RATIO_GE,
	        .target = 0.8};
	rows[nrows++]
	    = (struct row) {.name = "supervisor VmRSS, N workers (MiB)",
	        .made             = ok3,
	        .has_base         = m3.rss_idle_kb > 0,
	        .base             = m3.rss_idle_kb / 1024.0,
	        .ours             = m3.rss_kb / 1024.0,
	        .kind             = T_ABS_LE,
	        .target           = 16,
	        .tunit            = "MiB"};
	rows[nrows] = (struct row) {
	    .name     = "clean stops (SIGTERM: exit 0, no orphans)",
	    .made     = g_stops > 0,
	    .kind     = T_CHECK,
	    .check_ok = g_stops > 0 && g_clean_stops == g_stops};
	snprintf(rows[nrows].ours_text, sizeof(rows[nrows].ours_text), "%d/%d",
	    g_clean_stops, g_stops);
	nrows++;

	printf("\n%-42s %10s %10s %8s %12s  %s\n", "measurement", "baseline",
	    "ours", "ratio", "target", "result");
	for (i = 0; i < nrows; i++)
		print_row(&rows[i]);

	printf(
	    "\nbaselines: RTT = bare nng REQ/REP echo (%d-byte payload, ctx"
	    "+aio REP server) from the same worker process; crash = sv-bench"
	    " itself supervising (kill, pidfd poll, waitpid, posix_spawn);"
	    " spawn = posix_spawn loop of the same binary; RSS = the daemon"
	    " before scaling up.\n",
	    ECHO_PAYLOAD);
	if (ok1) {
		double   lo = 1e9, hi = 0;
		uint32_t b;

		for (b = 0; b < rtt.blocks; b++) {
			double q = (double) rtt.who_block_med_ns[b]
			    / (double) rtt.echo_block_med_ns[b];
			lo = q < lo ? q : lo;
			hi = q > hi ? q : hi;
		}
		printf("whoami: %u round trips each in %u blocks; means echo "
		       "%.1f us, whoami %.1f us; per-block median ratio "
		       "%.2f..%.2f;"
		       " worker ordinal %d\n",
		    rtt.n, rtt.blocks, rtt.echo_mean_ns / 1e3,
		    rtt.who_mean_ns / 1e3, lo, hi, rtt.ordinal);
	}
	if (ok2r)
		printf(
		    "crash, raw: %ld kills (+%ld warm-up), min/max %.3f/%.3f "
		    "ms\n",
		    o.kills, warm, s2r.min / 1e6, s2r.max / 1e6);
	if (ok2)
		printf("crash, supervised: %ld kills (+%ld warm-up), min/max "
		       "%.3f/%.3f ms, %ld identity anomalies (ordinal != 0 or "
		       "generation not increasing)\n",
		    o.kills, warm, s2.min / 1e6, s2.max / 1e6,
		    ours2.anomalies);
	if ((ok2 || ok2r) && o.kills < 200)
		printf(
		    "crash: fewer than the 200 kills the target asks for\n");
	for (i = 0; i < m3.rounds; i++)
		printf("spawn round %d: %ld workers, raw %.1f ms (%.0f/s), "
		       "supervised %.1f ms (%.0f/s, scale call returned after "
		       "%.1f "
		       "ms), ratio %.2f\n",
		    i + 1, o.workers, m3.raw_ns[i] / 1e6,
		    o.workers * 1e9 / m3.raw_ns[i], m3.ours_ns[i] / 1e6,
		    o.workers * 1e9 / m3.ours_ns[i], m3.scale_ns[i] / 1e6,
		    (double) m3.raw_ns[i] / (double) m3.ours_ns[i]);
	if (ok3)
		printf(
		    "spawn: rates are N / median time (raw: first spawn to "
		    "last worker's stamp; supervised: scale call to last "
		    "stamp);"
		    " group started at count %ld; daemon VmRSS idle %.1f MiB, "
		    "max with %ld workers %.1f MiB, VmHWM %.1f MiB, %ld "
		    "threads,"
		    " %ld fds; SIGTERM to exit with %ld workers %.1f ms\n",
		    m3.initial, m3.rss_idle_kb / 1024.0, o.workers,
		    m3.rss_kb / 1024.0, m3.hwm_kb / 1024.0, m3.threads, m3.fds,
		    o.workers, m3.stop_ns / 1e6);

	printf("load: CPU busy before %.0f%%, after %.0f%% (sv-bench idle, "
	       "1 s each)%s\n",
	    busy_before, busy_after,
	    busy_before > 10 || busy_after > 10
	        ? "; other processes were "
	          "competing for the CPUs: ratios are noisy, re-run on a "
	          "quiet "
	          "machine"
	        : "");

	all_made = ok1 && ok2r && ok2 && ok3;
	if (why1[0] != '\0')
		printf("could not measure whoami: %s\n", why1);
	if (why2r[0] != '\0')
		printf("could not measure raw crash baseline: %s\n", why2r);
	if (why2[0] != '\0')
		printf("could not measure crash to replacement: %s\n", why2);
	if (why3r[0] != '\0')
		printf("could not measure raw spawn: %s\n", why3r);
	if (why3[0] != '\0')
		printf("could not measure supervised spawn: %s\n", why3);
	if (g_interrupted)
		printf("interrupted\n");
	cleanup(o.keep);
	free(g_raw);
	free(raw2.lat);
	free(ours2.lat);
	return all_made ? 0 : 1;
}
