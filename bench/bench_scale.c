/*
 * bench_scale.c — scenario 11 of sv-bench: one daemon at 1, 1,000 and
 * 10,000 workers (issue 20 item 4, issue 15 item 7). Targets: daemon PSS
 * <= 1.5 MiB with 1 worker and <= 8 MiB with 10,000; 10,000 workers up, with
 * default settings (activity regions on) under a descriptor limit of
 * SCALE_NOFILE, in <= 5 s. Also reported: the time of one `status` call
 * (ListWorkers of every group) and of the stop of all workers (SIGTERM to
 * the daemon's exit), at 1,000 and 10,000.
 *
 * Design: each size gets a fresh daemon whose stamp-worker groups start at
 * count 0 (a group holds at most SCALE_GROUP_MAX, the largest max_count a
 * config may set, so 10,000 workers are three groups). Once it answers, its
 * descriptor limit is set to SCALE_NOFILE (prlimit: soft and hard) where
 * the hard limit allows. Up time runs from just before the first
 * ScaleGroup call to the latest stamp of the N workers (each stamps the
 * clock first thing in main, as the spawn scenario's do); a worker blocked
 * sending its stamp delays only the report. Stamps are counted by pid (the
 * groups reuse ordinals), so a restarted worker is not counted twice. Then
 * `status` is timed SCALE_STATUS_CALLS times (median) and must list N
 * running workers; the PSS (Pss of /proc/PID/smaps_rollup) is read after
 * it; the stop is timed last.
 *
 * The floor: for 1,000 workers and more, sv-bench first starts as many
 * stamp workers itself (posix_spawn back to back, no supervisor), all alive
 * at once, and times the first spawn to the latest stamp the same way; then
 * ends and reaps them. The up row carries it as its baseline, so the 5 s
 * target can be read against what this machine can do at all.
 *
 * Before a size runs, the machine is checked: the hard descriptor limit,
 * free pids (kernel.pid_max less the tasks that exist, /proc/loadavg),
 * kernel.threads-max, RLIMIT_NPROC for a user other than root, and
 * MemAvailable (SCALE_KB_PER_WORKER a worker). A size the machine cannot
 * hold prints its rows as "skip (why)": not run, not passed. No system
 * setting is changed. --quick runs 1 and 1,000 only; the 10,000 rows say
 * "full mode only".
 *
 * File layout: machine checks; one size; run; rows and details.
 */
#include "scenarios.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <supervise/client.h>

#define SCALE_GROUP_MAX     4096 /* a config's largest max_count */
#define SCALE_NOFILE        20000 /* the descriptor limit of issue 20 */
#define SCALE_STATUS_CALLS  5
#define SCALE_PID_SPARE     2000 /* pids left for everything else */
#define SCALE_KB_PER_WORKER 512 /* memory a stamp worker may take */
#define SCALE_DAEMON_FDS    48 /* SVD_FDS_BASE: the daemon's own */
#define SCALE_RAW_FROM      1000 /* sizes with a raw loop measured first */

static const long scale_sizes[SCALE_SIZES] = {1, 1000, 10000};

/* ------------------------------------------------------------------ */
/* Machine checks                                                     */
/* ------------------------------------------------------------------ */

/* read_field reads the first number of a /proc file, after skip fields
 * separated by blanks or '/'; -1 when it cannot. */
static long
read_field(const char *path, int skip)
{
	char  buf[256];
	FILE *f = fopen(path, "r");
	char *p = buf;
	long  v = -1;

	if (f == NULL)
		return -1;
	if (fgets(buf, sizeof(buf), f) != NULL) {
		for (int i = 0; i < skip && p != NULL; i++) {
			p = strpbrk(p, " /");
			if (p != NULL)
				p++;
		}
		if (p != NULL)
			v = strtol(p, NULL, 10);
	}
	fclose(f);
	return v;
}

/* mem_available_kb reads MemAvailable of /proc/meminfo; -1 if none. */
static long
mem_available_kb(void)
{
	char  line[256];
	long  v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "MemAvailable:", 13) == 0) {
			v = strtol(line + 13, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/*
 * machine_room checks that n workers can run here (see the file comment)
 * and sets *nofilep to the descriptor limit the daemon will get. Returns
 * true, or false with why set.
 */
static bool
machine_room(long n, long *nofilep, char *why, size_t whylen)
{
	struct rlimit rl;
	long          pid_max = read_field("/proc/sys/kernel/pid_max", 0);
	long          tasks   = read_field("/proc/loadavg", 4); /* "r/TOTAL" */
	long          thr_max = read_field("/proc/sys/kernel/threads-max", 0);
	long          avail   = mem_available_kb();

	*nofilep = SCALE_NOFILE;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY
	    && rl.rlim_max < SCALE_NOFILE) {
		*nofilep = (long) rl.rlim_max;
		if (*nofilep < n + SCALE_DAEMON_FDS) {
			snprintf(why, whylen,
			    "hard RLIMIT_NOFILE %ld is below %ld", *nofilep,
			    n + SCALE_DAEMON_FDS);
			return false;
		}
	}
	if (pid_max > 0 && tasks > 0
	    && pid_max - tasks < n + SCALE_PID_SPARE) {
		snprintf(why, whylen,
		    "%ld free pids (kernel.pid_max %ld, %ld tasks), need %ld",
		    pid_max - tasks, pid_max, tasks, n + SCALE_PID_SPARE);
		return false;
	}
	if (thr_max > 0 && tasks > 0
	    && thr_max - tasks < n + SCALE_PID_SPARE) {
		snprintf(why, whylen, "kernel.threads-max %ld, %ld tasks",
		    thr_max, tasks);
		return false;
	}
	if (geteuid() != 0 && getrlimit(RLIMIT_NPROC, &rl) == 0
	    && rl.rlim_cur != RLIM_INFINITY
	    && (long) rl.rlim_cur < n + SCALE_PID_SPARE) {
		snprintf(why, whylen, "ulimit -u %ld, need %ld",
		    (long) rl.rlim_cur, n + SCALE_PID_SPARE);
		return false;
	}
	if (avail >= 0 && avail < n * SCALE_KB_PER_WORKER) {
		snprintf(why, whylen, "MemAvailable %ld MiB, need %ld MiB",
		    avail / 1024, n * SCALE_KB_PER_WORKER / 1024);
		return false;
	}
	return true;
}

/* ------------------------------------------------------------------ */
/* One size                                                           */
/* ------------------------------------------------------------------ */

/*
 * status_all times SCALE_STATUS_CALLS ListWorkers calls of every group
 * (median into *nsp) and checks that each lists n running workers.
 * Returns 0, or -1 with why.
 */
static int
status_all(sv_client *c, long n, int64_t *nsp, char *why, size_t whylen)
{
	int64_t t[SCALE_STATUS_CALLS];

	for (int i = 0; i < SCALE_STATUS_CALLS; i++) {
		sv_workers *w       = NULL;
		long        running = 0;
		int64_t     t0      = now_ns();
		sv_err      err     = sv_client_list(c, NULL, 30000, &w);

		t[i] = now_ns() - t0;
		if (err != SV_OK) {
			snprintf(why, whylen, "status: %s: %s",
			    sv_strerror(err), sv_client_error_message(c));
			return -1;
		}
		for (size_t k = 0; k < sv_workers_count(w); k++)
			running += sv_workers_state(w, k) == SV_STATE_RUNNING
			    && sv_workers_pid(w, k) > 0
			    && sv_workers_ready(w, k);
		sv_workers_free(w);
		if (running != n) {
			snprintf(why, whylen,
			    "status lists %ld running and ready, not %ld",
			    running, n);
			return -1;
		}
	}
	*nsp = stats_of(t, SCALE_STATUS_CALLS).med;
	return 0;
}

/*
 * scale_up scales the groups g[0..ng) to their share of n (in order, each
 * call timed from just before the first), collects the n stamps and sets
 * st->up_ns. Returns 0, or -1 with why.
 */
static int
scale_up(sv_client *c, const struct group_cfg *g, size_t ng,
    struct scale_step *st, unsigned char *seen, long npids, char *why,
    size_t whylen)
{
	struct stamp_set set = {.seen = seen, .size = npids, .by_pid = true};
	int64_t          t0, tmax = 0;
	long             left = st->workers, got, limit_ms;

	rx_flush();
	memset(seen, 0, (size_t) npids);
	t0 = now_ns();
	for (size_t i = 0; i < ng; i++) {
		long   k = left < SCALE_GROUP_MAX ? left : SCALE_GROUP_MAX;
		sv_err err;

		left -= k;
		err = sv_client_scale(c, g[i].name, (uint32_t) k, 60000, NULL);
		if (err != SV_OK) {
			snprintf(why, whylen, "scale(%s, %ld): %s: %s",
			    g[i].name, k, sv_strerror(err),
			    sv_client_error_message(c));
			return -1;
		}
	}
	st->call_ns = now_ns() - t0;
	/* As the spawn scenario: 30 s + 20 ms a worker (230 s for 10,000),
	 * so a slow machine still gives a time rather than none. */
	limit_ms = 30000 + 20 * st->workers;
	got      = rx_collect(
	         &set, st->workers, t0 + limit_ms * NS_PER_MS, &tmax, NULL);
	if (got < st->workers) {
		snprintf(why, whylen, "%ld of %ld workers stamped in %ld s",
		    got, st->workers, limit_ms / 1000);
		return -1;
	}
	st->up_ns = tmax - t0;
	return 0;
}

/*
 * scale_raw times the floor of size st->workers (see the file comment):
 * st->raw_up_ns and st->raw_ok. Returns 0, or -1 with why.
 */
static int
scale_raw(struct scale_step *st, unsigned char *seen, long npids)
{
	struct stamp_set set = {.seen = seen, .size = npids, .by_pid = true};
	struct envbuf    e;
	int64_t          t0, tmax      = 0;
	long             got, limit_ms = 30000 + 20 * st->workers;
	int              ret = -1;

	if (envbuf_init(&e) != 0) {
		snprintf(st->why, sizeof(st->why), "out of memory");
		return -1;
	}
	rx_flush();
	memset(seen, 0, (size_t) npids);
	g_nraw = 0;
	t0     = now_ns();
	for (long i = 0; i < st->workers && !g_interrupted; i++) {
		pid_t pid;
		int   rv = raw_spawn_stamp(&e, i % SCALE_GROUP_MAX, -1, &pid);

		if (rv != 0) {
			snprintf(st->why, sizeof(st->why),
			    "raw loop: posix_spawn failed after %ld workers: "
			    "%s",
			    i, strerror(rv));
			goto out;
		}
		g_raw[g_nraw++] = pid;
	}
	got = rx_collect(
	    &set, st->workers, t0 + limit_ms * NS_PER_MS, &tmax, NULL);
	if (got < st->workers) {
		snprintf(st->why, sizeof(st->why),
		    "raw loop: %ld of %ld workers stamped in %ld s", got,
		    st->workers, limit_ms / 1000);
		goto out;
	}
	st->raw_up_ns = tmax - t0;
	st->raw_ok    = true;
	ret           = 0;
out:
	raw_reap_all(30000);
	envbuf_free(&e);
	return ret;
}

/*
 * scale_one runs one size on a fresh daemon; see the file comment.
 * Returns 0, or -1 with st->why.
 */
static int
scale_one(struct scale_step *st, unsigned char *seen, long npids)
{
	const char      *argv[] = {SV_BENCH_STAMP_PATH, NULL};
	struct group_cfg g[3];
	char             names[3][8], dname[16];
	size_t           ng
	    = (size_t) ((st->workers + SCALE_GROUP_MAX - 1) / SCALE_GROUP_MAX);
	struct daemon d;
	struct rlimit rl;
	sv_client    *c   = NULL;
	int           ret = -1;

	for (size_t i = 0; i < ng; i++) {
		snprintf(names[i], sizeof(names[i]), "s%zu", i);
		g[i] = (struct group_cfg) {.name = names[i],
		    .argv                        = argv,
		    .count                       = 0,
		    .max_count                   = SCALE_GROUP_MAX,
		    .min_uptime_ms               = -1,
		    .purpose                     = "sv-bench scale worker",
		    .env                         = g_sock_env};
	}
	/* A daemon name per size: each starts with a state directory of its
	 * own, not the journal of the previous one. */
	snprintf(dname, sizeof(dname), "d11-%ld", st->workers);
	if (daemon_start_groups(&d, dname, g, ng, st->why, sizeof(st->why))
	    != 0)
		return -1;
	if (daemon_wait_ready(&d, 10000, st->why, sizeof(st->why)) != 0)
		goto out;
	rl.rlim_cur = rl.rlim_max = (rlim_t) st->nofile;
	if (prlimit(g_daemon_pid, RLIMIT_NOFILE, &rl, NULL) != 0) {
		snprintf(st->why, sizeof(st->why), "prlimit(NOFILE, %ld): %s",
		    st->nofile, strerror(errno));
		goto out;
	}
	if (sv_client_open(&c, d.url, RPC_TIMEOUT_MS) != SV_OK) {
		snprintf(st->why, sizeof(st->why), "cannot connect to %.150s",
		    d.url);
		goto out;
	}
	sleep_ms(100); /* settled: the idle daemon's PSS */
	st->pss0_kb = sv_proc_kb(g_daemon_pid, "smaps_rollup", "Pss");
	if (scale_up(c, g, ng, st, seen, npids, st->why, sizeof(st->why)) != 0
	    || status_all(
	           c, st->workers, &st->status_ns, st->why, sizeof(st->why))
	        != 0)
		goto out;
	st->pss_kb  = sv_proc_kb(g_daemon_pid, "smaps_rollup", "Pss");
	st->rss_kb  = proc_status_kb(g_daemon_pid, "VmRSS");
	st->hwm_kb  = proc_status_kb(g_daemon_pid, "VmHWM");
	st->threads = proc_status_kb(g_daemon_pid, "Threads");
	ret         = 0;
out:
	sv_client_close(c);
	st->stopped_clean = daemon_stop(&d, 120000, &st->stop_ns);
	if (ret == 0 && !st->stopped_clean) {
		snprintf(st->why, sizeof(st->why),
		    "the daemon did not stop cleanly (see %.200s)", d.log);
		ret = -1;
	}
	return ret;
}

/* ------------------------------------------------------------------ */
/* Run                                                                */
/* ------------------------------------------------------------------ */

/* scale_run runs scenario 11; see scenarios.h. */
int
scale_run(const struct opts *o, struct scale_result *res)
{
	long           npids = read_field("/proc/sys/kernel/pid_max", 0);
	unsigned char *seen;
	int            ret = 0;

	memset(res, 0, sizeof(*res));
	if (npids <= 0)
		npids = 4194304; /* the kernel's largest pid_max */
	if ((seen = malloc((size_t) npids)) == NULL) {
		snprintf(res->why, sizeof(res->why), "out of memory");
		return -1;
	}
	for (int i = 0; i < SCALE_SIZES; i++) {
		struct scale_step *st = &res->step[i];

		st->workers = scale_sizes[i];
		if (o->quick && st->workers > 1000) {
			snprintf(st->skip, sizeof(st->skip), "full mode only");
			continue;
		}
		if (!machine_room(
		        st->workers, &st->nofile, st->skip, sizeof(st->skip)))
			continue;
		if (g_interrupted) {
			ret = -1;
			break;
		}
		st->run = true;
		note("11/11 scale: %ld workers, descriptor limit %ld",
		    st->workers, st->nofile);
		if (st->workers >= SCALE_RAW_FROM) {
			note("11/11 scale: raw posix_spawn loop of %ld",
			    st->workers);
			if (scale_raw(st, seen, npids) != 0) {
				snprintf(res->why, sizeof(res->why),
				    "%ld workers: %s", st->workers, st->why);
				ret = -1;
				continue;
			}
		}
		st->ok = scale_one(st, seen, npids) == 0;
		if (!st->ok) {
			snprintf(res->why, sizeof(res->why), "%ld workers: %s",
			    st->workers, st->why);
			ret = -1;
		}
	}
	free(seen);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Rows and details                                                   */
/* ------------------------------------------------------------------ */

/* step_row fills one row of step st: made from st, or skipped. */
static struct row
step_row(const struct scale_step *st, const char *name, double ours,
    enum target_kind kind, double target, const char *tunit)
{
	struct row r = {.name = name,
	    .made             = st->ok,
	    .ours             = ours,
	    .kind             = kind,
	    .target           = target,
	    .tunit            = tunit};

	if (!st->run)
		r.skip = st->skip[0] != '\0' ? st->skip : "not run";
	return r;
}

/* scale_rows writes the PSS row of each size, then the up, status and
 * stop rows of 1,000 and 10,000. */
int
scale_rows(const struct scale_result *res, struct row *rows)
{
	static const char *pss[SCALE_SIZES]
	    = {"scale: daemon PSS, 1 worker (MiB)",
	        "scale: daemon PSS, 1000 workers (MiB)",
	        "scale: daemon PSS, 10000 workers (MiB)"};
	static const char *up[SCALE_SIZES]
	    = {NULL, "scale: 1000 workers up (s)",
	        "scale: 10000 workers up, nofile 20000 (s)"};
	static const char *status[SCALE_SIZES]
	    = {NULL, "scale: status of 1000 workers (ms)",
	        "scale: status of 10000 workers (ms)"};
	static const char       *stop[SCALE_SIZES] = {NULL,
	          "scale: stop 1000 workers (ms)", "scale: stop 10000 workers (ms)"};
	const struct scale_step *s                 = res->step;
	int                      n                 = 0;

	rows[n++] = step_row(
	    &s[0], pss[0], s[0].pss_kb / 1024.0, T_ABS_LE, 1.5, "MiB");
	rows[n++]
	    = step_row(&s[1], pss[1], s[1].pss_kb / 1024.0, T_INFO, 0, NULL);
	rows[n++] = step_row(
	    &s[2], pss[2], s[2].pss_kb / 1024.0, T_ABS_LE, 8, "MiB");
	for (int i = 1; i < SCALE_SIZES; i++) {
		rows[n]          = step_row(&s[i], up[i], s[i].up_ns / 1e9,
                    i == 2 ? T_ABS_LE : T_INFO, 5, "s");
		rows[n].has_base = s[i].raw_ok;
		rows[n++].base   = s[i].raw_up_ns / 1e9;
		rows[n++]        = step_row(
		           &s[i], status[i], s[i].status_ns / 1e6, T_INFO, 0, NULL);
		rows[n++] = step_row(
		    &s[i], stop[i], s[i].stop_ns / 1e6, T_INFO, 0, NULL);
	}
	return n;
}

/* scale_details prints one line per size that ran. */
void
scale_details(const struct scale_result *res)
{
	for (int i = 0; i < SCALE_SIZES; i++) {
		const struct scale_step *st = &res->step[i];

		if (st->run && !st->ok)
			printf("scale %ld: not measured: %s\n", st->workers,
			    st->why);
		if (st->raw_ok)
			printf("scale %ld: raw posix_spawn loop (no "
			       "supervisor, all alive): last worker stamped "
			       "%.1f ms after the first spawn\n",
			    st->workers, st->raw_up_ns / 1e6);
		if (!st->ok)
			continue;
		printf(
		    "scale %ld: descriptor limit %ld (prlimit on the "
		    "daemon), defaults (activity on); PSS idle %.2f MiB, with "
		    "the workers %.2f MiB (VmRSS %.2f, VmHWM %.2f MiB, %ld "
		    "threads); scale calls returned after %.1f ms, last "
		    "worker stamped %.1f ms after the first call; status "
		    "median of %d %.2f ms; SIGTERM to exit %.1f ms%s\n",
		    st->workers, st->nofile, st->pss0_kb / 1024.0,
		    st->pss_kb / 1024.0, st->rss_kb / 1024.0,
		    st->hwm_kb / 1024.0, st->threads, st->call_ns / 1e6,
		    st->up_ns / 1e6, SCALE_STATUS_CALLS, st->status_ns / 1e6,
		    st->stop_ns / 1e6,
		    st->stopped_clean ? "" : " (not clean)");
	}
}
