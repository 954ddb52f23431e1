/*
 * harness.c — the shared machinery of sv-bench's scenarios (see harness.h
 * for the contract of each function).
 *
 * Design: sv-bench signals only processes it started, and knows each by
 * pid: the echo server (g_echo_pid), the one daemon running at a time
 * (g_daemon_pid) and its own raw stamp workers (g_raw). Because sv-bench is
 * a child subreaper, anything a daemon abandons becomes its child too;
 * sweep_orphans counts those against the "clean stops" row and ends them.
 * Helpers report over one non-blocking AF_UNIX datagram socket (g_rx),
 * drained whenever sv-bench waits. Every wait polls with a deadline in
 * slices of at most 100 ms so that g_interrupted and a dying daemon are
 * noticed.
 *
 * File layout: state; time, statistics, parsing, diagnostics; processes;
 * raw worker environment; report socket; temporary directory and config;
 * daemon control (and the kill-to-replacement step); table; set-up and
 * cleanup.
 */
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* ------------------------------------------------------------------ */
/* State                                                              */
/* ------------------------------------------------------------------ */

char                  g_self[PATH_MAX];
char                  g_dir[PATH_MAX];
char                  g_sock[PATH_MAX];
char                  g_sock_env[PATH_MAX + 32];
pid_t                 g_echo_pid   = -1;
pid_t                 g_daemon_pid = -1;
pid_t                *g_raw;
size_t                g_nraw;
volatile sig_atomic_t g_interrupted;

static int            g_rx = -1; /* the report socket's bound fd */
static struct daemon *g_daemon; /* the one whose pid is g_daemon_pid */

/* Counts for the "clean stops" row. */
static int g_stops, g_clean_stops;

/* ------------------------------------------------------------------ */
/* Time, statistics, parsing, diagnostics                             */
/* ------------------------------------------------------------------ */

/* now_ns reads CLOCK_MONOTONIC in nanoseconds. */
int64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
}

/* sleep_ms sleeps about ms milliseconds. */
void
sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * NS_PER_MS};

	nanosleep(&ts, NULL);
}

/* slice_deadline caps deadline at 100 ms from now. */
int64_t
slice_deadline(int64_t deadline)
{
	int64_t slice = now_ns() + 100 * NS_PER_MS;

	return slice < deadline ? slice : deadline;
}

/* cmp_i64 orders int64_t values for qsort. */
static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;

	return (x > y) - (x < y);
}

/* stats_of sorts v and returns its median, p99, mean, min, max. */
struct stats
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

/* parse_long reads a bounded decimal; -1 when s is not one. */
long
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

/* note prints one "sv-bench: " line on stderr. */
void
note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("sv-bench: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* log_tail copies the last lines of a log to stderr. */
void
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

/* cpu_busy_pct is the non-idle CPU share over ms, or -1. */
double
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
/* Processes                                                          */
/* ------------------------------------------------------------------ */

/* on_signal records SIGINT/SIGTERM/SIGHUP; every wait loop checks it. */
static void
on_signal(int sig)
{
	(void) sig;
	g_interrupted = 1;
}

/* spawn_proc posix_spawns a child; 0 or an errno value. */
int
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
 * kill_reap SIGKILLs our child pid and reaps it. A SIGKILLed child dies
 * without running any code of its own, so the blocking wait is bounded.
 * Returns its wait status.
 */
static int
kill_reap(pid_t pid)
{
	int st = -1;

	kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return st;
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

/* stop_child ends our child: SIGTERM, deadline, SIGKILL. */
int
stop_child(pid_t pid, long timeout_ms, bool *timedoutp)
{
	int st = -1;

	*timedoutp = false;
	kill(pid, SIGTERM);
	if (!reap_deadline(pid, now_ns() + timeout_ms * NS_PER_MS, &st)) {
		*timedoutp = true;
		st         = kill_reap(pid);
	}
	return st;
}

/* describe_status formats a wait status into buf. */
const char *
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

/* proc_stat_rest reads /proc/PID/stat into buf; see harness.h. */
const char *
proc_stat_rest(pid_t pid, char *buf, size_t len)
{
	char  path[64], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
	if ((f = fopen(path, "r")) == NULL)
		return NULL;
	p = fgets(buf, (int) len, f);
	fclose(f);
	/* The command name may hold anything: parse after its last ')'. */
	if (p == NULL || (p = strrchr(buf, ')')) == NULL)
		return NULL;
	return p + 1;
}

/* proc_stat_ppid reads the state and parent of pid. */
int
proc_stat_ppid(pid_t pid, char *statep, long *ppidp)
{
	char        buf[512];
	const char *p = proc_stat_rest(pid, buf, sizeof(buf));

	return p != NULL && sscanf(p, " %c %ld", statep, ppidp) == 2 ? 0 : -1;
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
		long pid, ppid;
		char state;

		if ((pid = parse_long(e->d_name, 1, INT_MAX)) < 0)
			continue;
		if (proc_stat_ppid((pid_t) pid, &state, &ppid) != 0)
			continue;
		if (ppid != me || is_tracked((pid_t) pid))
			continue;
		note("orphan pid %ld (state %c) left behind by the daemon",
		    pid, state);
		(void) kill_reap((pid_t) pid);
		n++;
	}
	closedir(d);
	return n;
}

/* raw_reap_all ends and reaps every raw worker in g_raw. */
void
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
	for (i = 0; i < g_nraw; i++)
		if (g_raw[i] > 0)
			(void) kill_reap(g_raw[i]);
	g_nraw = 0;
}

/* ------------------------------------------------------------------ */
/* Raw worker environment                                             */
/* ------------------------------------------------------------------ */

/* envbuf_init builds the raw workers' environment. */
int
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
	e->envp[k++] = g_sock_env;
	e->envp[k++] = e->ord;
	e->envp[k++] = e->gen;
	e->envp[k]   = NULL;
	return 0;
}

/* envbuf_free frees what envbuf_init allocated. */
void
envbuf_free(struct envbuf *e)
{
	free(e->envp);
	e->envp = NULL;
}

/* raw_spawn_stamp starts one stamp worker itself. */
int
raw_spawn_stamp(struct envbuf *e, long ord, long long gen, pid_t *pidp)
{
	char *argv[] = {"sv-bench-stamp", NULL};

	snprintf(e->ord, sizeof(e->ord), "SUPERVISE_ORDINAL=%ld", ord);
	snprintf(e->gen, sizeof(e->gen), "SUPERVISE_GENERATION=%lld", gen);
	return spawn_proc(
	    SV_BENCH_STAMP_PATH, argv, e->envp, NULL, false, pidp);
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

	if (sv_bench_addr(&sa, path) != 0)
		return -1;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) != 0) {
		close(fd);
		return -1;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) != 0)
		(void) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	return fd;
}

/* rx_recv waits for one datagram; length, 0 or -1. */
ssize_t
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
void
rx_flush(void)
{
	char buf[sizeof(struct sv_bench_rtt)];

	while (recv(g_rx, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

/* rx_stamp waits for one stamp datagram, watching the daemon. */
int
rx_stamp(struct sv_bench_stamp *st, int64_t deadline)
{
	union {
		struct sv_bench_stamp s;
		struct sv_bench_rtt   r;
	} u;

	for (;;) {
		ssize_t n = rx_recv(&u, sizeof(u), slice_deadline(deadline));

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

/* dir_path joins g_dir and name; -1 when it does not fit. */
int
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

/* write_group writes one group of a config (see struct group_cfg). */
static void
write_group(FILE *f, const struct group_cfg *g)
{
	size_t i;

	fputs("  {\n    name = ", f);
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
	if (g->backoff_initial_ms > 0)
		fprintf(f, "    backoff_initial_ms = %ld;\n",
		    g->backoff_initial_ms);
	if (g->backoff_factor > 0)
		fprintf(f, "    backoff_factor = %.3f;\n", g->backoff_factor);
	if (g->backoff_max_ms > 0)
		fprintf(f, "    backoff_max_ms = %ld;\n", g->backoff_max_ms);
	fputs("    purpose = ", f);
	cfg_str(f, g->purpose);
	fputs(";\n", f);
	if (g->env != NULL) {
		fputs("    env = [ ", f);
		cfg_str(f, g->env);
		fputs(" ];\n", f);
	}
	fputs("  }", f);
}

/* write_config writes a supervised config with groups g[0..ng) to path. */
static int
write_config(const char *path, const char *sockdir, const struct group_cfg *g,
    size_t ng)
{
	FILE  *f = fopen(path, "w");
	size_t i;

	if (f == NULL)
		return -1;
	fputs("# written by sv-bench\nsocket_dir = ", f);
	cfg_str(f, sockdir);
	fputs(";\nstop_timeout_ms = 5000;\ngroups = (\n", f);
	for (i = 0; i < ng; i++) {
		write_group(f, &g[i]);
		fputs(i + 1 < ng ? ",\n" : "\n", f);
	}
	fputs(");\n", f);
	return fclose(f) == 0 ? 0 : -1;
}

/* ------------------------------------------------------------------ */
/* Daemon control                                                     */
/* ------------------------------------------------------------------ */

/* daemon_alive reaps the daemon if it exited; false then. */
bool
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

/* daemon_start starts supervised with the one group g. */
int
daemon_start(struct daemon *d, const char *name, const struct group_cfg *g,
    char *why, size_t whylen)
{
	return daemon_start_groups(d, name, g, 1, why, whylen);
}

/* daemon_start_groups writes the config and starts supervised. */
int
daemon_start_groups(struct daemon *d, const char *name,
    const struct group_cfg *g, size_t ng, char *why, size_t whylen)
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
	        >= 100
	    || snprintf(
	           d->evsock, sizeof(d->evsock), "%s/events.sock", d->sockdir)
	        >= 100) {
		snprintf(why, whylen, "temporary path too long");
		return -1;
	}
	snprintf(d->url, sizeof(d->url), "ipc://%s", d->sockpath);
	snprintf(d->evurl, sizeof(d->evurl), "ipc://%s", d->evsock);
	if (ng < 1 || ng > 64) {
		snprintf(why, whylen, "%zu groups (1..64)", ng);
		return -1;
	}
	if (write_config(d->conf, d->sockdir, g, ng) != 0) {
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

/* daemon_wait_ready waits for the control socket. */
int
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

/* daemon_stop ends the daemon and counts the stop. */
bool
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

/* kill_await_replacement kills a worker and times its replacement. */
int
kill_await_replacement(
    pid_t pid, int64_t timeout_ns, struct sv_bench_stamp *st, int64_t *latp)
{
	int64_t t0 = now_ns();
	int     rv;

	if (kill(pid, SIGKILL) != 0)
		return -1;
	do
		rv = rx_stamp(st, t0 + timeout_ns);
	while (rv == 1 && st->pid == pid);
	if (rv == 1)
		*latp = st->t_ns - t0;
	return rv;
}

/* group_drain scales group to 0 and waits until it lists no worker. */
int
group_drain(
    sv_client *c, const char *group, long timeout_ms, char *why, size_t whylen)
{
	int64_t deadline = now_ns() + timeout_ms * NS_PER_MS;
	sv_err  err;

	if ((err = sv_client_scale(c, group, 0, (int) timeout_ms, NULL))
	    != SV_OK) {
		snprintf(why, whylen, "scale(%s, 0): %s: %s", group,
		    sv_strerror(err), sv_client_error_message(c));
		return -1;
	}
	for (;;) {
		sv_workers *w;
		size_t      left;

		if ((err = sv_client_list(c, group, RPC_TIMEOUT_MS, &w))
		    != SV_OK) {
			snprintf(why, whylen, "list(%s): %s: %s", group,
			    sv_strerror(err), sv_client_error_message(c));
			return -1;
		}
		left = sv_workers_count(w);
		sv_workers_free(w);
		if (left == 0)
			return 0;
		if (now_ns() >= deadline || g_interrupted) {
			snprintf(why, whylen,
			    "%zu worker(s) of %s left %ld ms after scale 0",
			    left, group, timeout_ms);
			return -1;
		}
		sleep_ms(5);
	}
}

/* proc_status_kb reads one "Key:  N kB" line of /proc/pid/status. */
long
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

/* ------------------------------------------------------------------ */
/* Table                                                              */
/* ------------------------------------------------------------------ */

/* The one format of the table's lines, header and rows alike. */
#define ROW_FMT "%-42s %10s %10s %8s %12s  %s\n"

/* print_table_header prints the column titles. */
void
print_table_header(void)
{
	printf("\n" ROW_FMT, "measurement", "baseline", "ours", "ratio",
	    "target", "result");
}

/* print_row prints one row with its ratio and result. */
void
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
	case T_RATIO_NEAR:
		snprintf(tgt, sizeof(tgt), "+-%.0f%%", r->target * 100);
		if (r->made && r->base > 0)
			result = r->ours <= (1 + r->target) * r->base
			        && r->ours >= (1 - r->target) * r->base
			    ? "PASS"
			    : "MISS";
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
	if (r->ttext != NULL)
		snprintf(tgt, sizeof(tgt), "%s", r->ttext);
	printf(ROW_FMT, r->name, base, ours, ratio, tgt, result);
}

/* stops_row builds the "clean stops" row. */
void
stops_row(struct row *r)
{
	memset(r, 0, sizeof(*r));
	r->name     = "clean stops (SIGTERM: exit 0, no orphans)";
	r->made     = g_stops > 0;
	r->kind     = T_CHECK;
	r->check_ok = g_stops > 0 && g_clean_stops == g_stops;
	snprintf(r->ours_text, sizeof(r->ours_text), "%d/%d", g_clean_stops,
	    g_stops);
}

/* ------------------------------------------------------------------ */
/* Set-up and cleanup                                                 */
/* ------------------------------------------------------------------ */

/* setup_process sets limits, subreaper and signal handlers. */
void
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

/* bench_open makes the temp dir, report socket and g_raw. */
int
bench_open(long max_raw)
{
	char        base[PATH_MAX];
	const char *tmp = getenv("TMPDIR");

	snprintf(base, sizeof(base), "%s/sv-bench.XXXXXX",
	    tmp != NULL && tmp[0] == '/' && strlen(tmp) < 40 ? tmp : "/tmp");
	if (mkdtemp(base) == NULL) {
		note("mkdtemp %s: %s", base, strerror(errno));
		return -1;
	}
	snprintf(g_dir, sizeof(g_dir), "%s", base);
	if (dir_path(g_sock, sizeof(g_sock), "report.sock") != 0
	    || (g_rx = rx_open(g_sock)) < 0) {
		note("cannot bind the report socket in %s", g_dir);
		return -1;
	}
	snprintf(g_sock_env, sizeof(g_sock_env), "%s=%s", SV_BENCH_ENV_SOCK,
	    g_sock);
	if ((g_raw = calloc((size_t) max_raw + 1, sizeof(pid_t))) == NULL) {
		note("out of memory");
		return -1;
	}
	return 0;
}

/* cleanup ends what still runs and removes the temp dir. */
void
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
	if (g_raw != NULL)
		raw_reap_all(2000);
	(void) sweep_orphans();
	if (g_rx >= 0) {
		close(g_rx);
		g_rx = -1;
	}
	free(g_raw);
	g_raw = NULL;
	if (g_dir[0] != '\0') {
		if (keep)
			note("kept %s", g_dir);
		else
			rm_rf(g_dir);
	}
}

/*
 * echo_start starts the echo server (g_echo_pid) and waits up to 5 s for
 * its socket. Returns 0, or -1 with why set (the server may still run:
 * echo_stop ends it).
 */
int
echo_start(const char *url, const char *sock, const char *log, char *why,
    size_t whylen)
{
	char *eargv[]
	    = {"sv-bench-echo", "--role", "echo", (char *) url, NULL};
	int64_t     deadline;
	struct stat sb;
	int         rv, st;

	if ((rv = spawn_proc(g_self, eargv, NULL, log, true, &g_echo_pid))
	    != 0) {
		g_echo_pid = -1;
		snprintf(why, whylen, "cannot start the echo server: %s",
		    strerror(rv));
		return -1;
	}
	deadline = now_ns() + 5 * NS_PER_SEC;
	while (stat(sock, &sb) != 0) {
		if (now_ns() >= deadline || g_interrupted
		    || waitpid(g_echo_pid, &st, WNOHANG) == g_echo_pid) {
			snprintf(why, whylen, "echo server did not listen");
			log_tail(log, 10);
			return -1;
		}
		sleep_ms(2);
	}
	return 0;
}

/* echo_stop ends the echo server, if it runs, and notes an unclean end. */
void
echo_stop(void)
{
	char what[32];
	bool timedout;
	int  st;

	if (g_echo_pid <= 0)
		return;
	st         = stop_child(g_echo_pid, 5000, &timedout);
	g_echo_pid = -1;
	if (timedout || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		note("echo server ended with %s",
		    describe_status(st, what, sizeof(what)));
}
