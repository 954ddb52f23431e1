/*
 * bench_journal.c — scenario `journal` of sv-bench: the journal's size on
 * disk under churn, and the start-up of a daemon killed with SIGKILL.
 * Targets: the journal stays bounded by the live state (compaction,
 * docs/durability.md): its largest size in the second half of each phase
 * is at most 1.25 x its largest in the first half (a journal that grew
 * with the number of records would be about 2x); and a successor started
 * on the state directory of a daemon holding 1,000 workers and 10,000
 * leases reads and replays the journal within 200 ms (the daemon's own
 * log line) and answers Hello within 200 ms of its exec.
 *
 * Design, growth: one daemon, state_dir = socket_dir (the default), so
 * its journal is g_dir/dj/state. Phase 1: a group of JOURNAL_SEATS seats
 * of "sv-bench-stamp --exit" with min_uptime_ms 0 (every run is healthy,
 * so no backoff) crash-loops until the daemon counts 100,000 restarts
 * (10,000 with --quick), summed over the seats from ListWorkers. Phase 2:
 * one session acquires and releases a lease 10,000 times. Every
 * JOURNAL_SAMPLE_MS (phase 1) or JOURNAL_SAMPLE_PAIRS pairs (phase 2) the
 * sizes of the regular files in the state directory are summed (state,
 * state.new while a snapshot is written, the lock, the pid file); a
 * sample smaller than the one before is counted as a compaction seen.
 * Each phase keeps its largest size, the largest in each half (by the
 * count of operations done), and the first size past each tenth.
 *
 * Design, start-up: a second daemon with 1,000 idle stamp workers, 10
 * pools of 1,000 slots and 1,000 sessions each holding one lease in every
 * pool (10,000 leases, as in the leases scenario). Then, several times:
 * count the journal's P and L records, SIGKILL the daemon, reap it, start
 * supervised again on the same config (so the same state directory), and
 * time from just before the spawn to the end of the first Hello (which
 * the daemon answers only once its loop runs: after the replay, the
 * takeover of the 1,000 workers and its snapshot); the daemon's log line
 * "... bytes read and replayed in X ms" (daemon/state.c) gives the replay
 * alone. Each kill comes within a second of the last takeover, well
 * before unclaimed leases are revoked (10 s), so every start-up replays
 * all 10,000. The killed daemon's workers are reparented to sv-bench
 * (a child subreaper); at the end the last daemon stops them (scale to
 * 0) and sv-bench reaps them by pid before the daemon is stopped, so that
 * they do not count as orphans of the stop.
 *
 * File layout: sizes; growth phases; start-up; run; rows and details.
 */
#include "scenarios_limits.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <supervise/client.h>
#include <supervise/leases.h>

#define JOURNAL_SEATS         2 /* crash-looping seats of phase 1 */
#define JOURNAL_SAMPLE_MS     20 /* phase 1: between size samples */
#define JOURNAL_SAMPLE_PAIRS  50 /* phase 2: lease pairs between samples */
#define JOURNAL_BOUND_S       400 /* phase 1's time bound */
#define JOURNAL_QUICK_BOUND_S 40
#define JOURNAL_WORKERS       1000 /* start-up: workers held */
#define JOURNAL_POOLS         10 /* start-up: pools x sessions = leases */
#define JOURNAL_SESSIONS      1000
#define JOURNAL_SESSION_TTL   600000 /* ms: outlives the measurement */

/* ------------------------------------------------------------------ */
/* Sizes                                                              */
/* ------------------------------------------------------------------ */

/* dir_bytes sums the sizes of the regular files in dir; -1 on error. */
static long
dir_bytes(const char *dir)
{
	struct dirent *e;
	struct stat    sb;
	DIR           *d   = opendir(dir);
	long           sum = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0
		    && S_ISREG(sb.st_mode))
			sum += (long) sb.st_size;
	closedir(d);
	return sum;
}

/* The samples of the phase being measured (one phase at a time). */
#define JOURNAL_MAX_SAMPLES 32768
static struct {
	long done, bytes;
} g_samples[JOURNAL_MAX_SAMPLES];

/* phase_init clears ph for target operations. */
static void
phase_init(struct journal_phase *ph, long target)
{
	int k;

	memset(ph, 0, sizeof(*ph));
	ph->target = target;
	for (k = 0; k < JOURNAL_DECILES; k++)
		ph->decile_b[k] = -1;
}

/* phase_sample adds one size sample, bytes at done operations, to ph. */
static void
phase_sample(struct journal_phase *ph, long done, long bytes)
{
	if (bytes < 0 || ph->samples >= JOURNAL_MAX_SAMPLES)
		return;
	if (ph->samples > 0 && bytes < g_samples[ph->samples - 1].bytes)
		ph->compactions++;
	g_samples[ph->samples].done  = done;
	g_samples[ph->samples].bytes = bytes;
	ph->samples++;
}

/*
 * phase_finish sums ph's samples up against what was done (not the
 * target: a phase the time bound cut short is split at half of what it
 * did): the largest size, the largest in each half, the first size past
 * each tenth.
 */
static void
phase_finish(struct journal_phase *ph)
{
	long i, done, bytes;
	int  k;

	for (i = 0; i < ph->samples; i++) {
		done  = g_samples[i].done;
		bytes = g_samples[i].bytes;
		if (bytes > ph->max_b)
			ph->max_b = bytes;
		if (2 * done < ph->done) {
			if (bytes > ph->h1_max_b)
				ph->h1_max_b = bytes;
		} else if (bytes > ph->h2_max_b) {
			ph->h2_max_b = bytes;
		}
		for (k = 0; k < JOURNAL_DECILES; k++)
			if (ph->decile_b[k] < 0
			    && done * JOURNAL_DECILES >= (k + 1) * ph->done)
				ph->decile_b[k] = bytes;
	}
}

/* ------------------------------------------------------------------ */
/* Growth phases                                                      */
/* ------------------------------------------------------------------ */

/*
 * loop_restarts sums the restart counts of the "loop" group's listed
 * seats into *np. Returns 0, or -1 with why.
 */
static int
loop_restarts(sv_client *c, long *np, char *why, size_t whylen)
{
	sv_workers *w;
	size_t      i;
	long        n = 0;
	sv_err      err;

	if ((err = sv_client_list(c, "loop", RPC_TIMEOUT_MS, &w)) != SV_OK) {
		snprintf(why, whylen, "list(loop): %s: %s", sv_strerror(err),
		    sv_client_error_message(c));
		return -1;
	}
	for (i = 0; i < sv_workers_count(w); i++)
		n += (long) sv_workers_restarts(w, i);
	sv_workers_free(w);
	*np = n;
	return 0;
}

/*
 * grow_restarts crash-loops the "loop" group until the daemon counted
 * ph->target restarts or the bound passed, sampling the size of dir, then
 * empties the group. Returns 0, or -1 with why.
 */
static int
grow_restarts(sv_client *c, const char *dir, long bound_s,
    struct journal_phase *ph, char *why, size_t whylen)
{
	int64_t t0 = now_ns(), end = t0 + bound_s * NS_PER_SEC;
	long    n;
	sv_err  err;

	if ((err = sv_client_scale(
	         c, "loop", JOURNAL_SEATS, RPC_TIMEOUT_MS, NULL))
	    != SV_OK) {
		snprintf(why, whylen, "scale(loop, %d): %s: %s", JOURNAL_SEATS,
		    sv_strerror(err), sv_client_error_message(c));
		return -1;
	}
	while (ph->done < ph->target) {
		if (g_interrupted || !daemon_alive()) {
			snprintf(why, whylen, "%s",
			    g_interrupted ? "interrupted"
			                  : "the daemon exited");
			return -1;
		}
		if (now_ns() >= end) {
			ph->cut = true;
			break;
		}
		sleep_ms(JOURNAL_SAMPLE_MS);
		if (loop_restarts(c, &n, why, whylen) != 0)
			return -1;
		/* A seat between two runs may be missing from the list. */
		if (n > ph->done)
			ph->done = n;
		phase_sample(ph, ph->done, dir_bytes(dir));
	}
	ph->ns = now_ns() - t0;
	phase_finish(ph);
	if (group_drain(c, "loop", 10000, why, whylen) != 0)
		return -1;
	ph->end_b = dir_bytes(dir);
	return 0;
}

/*
 * grow_leases acquires and releases a lease ph->target times in one
 * session, sampling the size of dir. Returns 0, or -1 with why.
 */
static int
grow_leases(sv_client *c, const char *dir, struct journal_phase *ph, char *why,
    size_t whylen)
{
	int64_t   t0 = now_ns();
	uint64_t  s  = 0;
	sv_lease *l;
	sv_err    err;

	if ((err = sv_client_pool_create(
	         c, "jl", 16, 0, 0, NULL, NULL, NULL, RPC_TIMEOUT_MS))
	        != SV_OK
	    || (err = sv_client_session_open(
	            c, JOURNAL_SESSION_TTL, RPC_TIMEOUT_MS, &s))
	        != SV_OK) {
		snprintf(why, whylen, "pool or session: %s: %s",
		    sv_strerror(err), sv_client_error_message(c));
		return -1;
	}
	while (ph->done < ph->target && !g_interrupted) {
		l = NULL;
		if ((err = sv_client_lease_acquire(
		         c, "jl", SV_LEASE_ANY_SLOT, 0, s, RPC_TIMEOUT_MS, &l))
		        != SV_OK
		    || (err = sv_client_lease_release(
		            c, sv_lease_id(l), s, RPC_TIMEOUT_MS))
		        != SV_OK) {
			snprintf(why, whylen, "lease pair %ld: %s: %s",
			    ph->done, sv_strerror(err),
			    sv_client_error_message(c));
			sv_lease_free(l);
			return -1;
		}
		sv_lease_free(l);
		if (++ph->done % JOURNAL_SAMPLE_PAIRS == 0)
			phase_sample(ph, ph->done, dir_bytes(dir));
	}
	ph->ns = now_ns() - t0;
	phase_finish(ph);
	ph->end_b = dir_bytes(dir);
	if (g_interrupted) {
		snprintf(why, whylen, "interrupted");
		return -1;
	}
	(void) sv_client_session_close(c, s, RPC_TIMEOUT_MS);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Start-up                                                           */
/* ------------------------------------------------------------------ */

/*
 * idle_pids lists the "idle" group and writes the pids of its running
 * workers to pids (up to max). Returns how many, or -1 with why.
 */
static long
idle_pids(sv_client *c, pid_t *pids, long max, char *why, size_t whylen)
{
	sv_workers *w;
	size_t      i;
	long        n = 0;
	sv_err      err;

	if ((err = sv_client_list(c, "idle", RPC_TIMEOUT_MS, &w)) != SV_OK) {
		snprintf(why, whylen, "list(idle): %s: %s", sv_strerror(err),
		    sv_client_error_message(c));
		return -1;
	}
	for (i = 0; i < sv_workers_count(w); i++)
		if (sv_workers_pid(w, i) > 0
		    && sv_workers_state(w, i) == SV_STATE_RUNNING && n < max)
			pids[n++] = (pid_t) sv_workers_pid(w, i);
	sv_workers_free(w);
	return n;
}

/* cmp_pid orders pids for qsort and bsearch. */
static int
cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *) a, y = *(const pid_t *) b;

	return (x > y) - (x < y);
}

/*
 * hold_leases creates the pools and sessions and has every session hold
 * one lease in every pool. Returns the leases held, or -1 with why.
 */
static long
hold_leases(sv_client *c, char *why, size_t whylen)
{
	char     name[32];
	uint64_t s;
	long     p, k, held = 0;
	sv_err   err;

	for (p = 0; p < JOURNAL_POOLS; p++) {
		snprintf(name, sizeof(name), "jr%ld", p);
		if ((err = sv_client_pool_create(c, name, JOURNAL_SESSIONS, 0,
		         0, NULL, NULL, NULL, RPC_TIMEOUT_MS))
		    != SV_OK) {
			snprintf(why, whylen, "pool_create %s: %s: %s", name,
			    sv_strerror(err), sv_client_error_message(c));
			return -1;
		}
	}
	for (k = 0; k < JOURNAL_SESSIONS && !g_interrupted; k++) {
		if ((err = sv_client_session_open(
		         c, JOURNAL_SESSION_TTL, RPC_TIMEOUT_MS, &s))
		    != SV_OK) {
			snprintf(why, whylen, "session %ld: %s: %s", k,
			    sv_strerror(err), sv_client_error_message(c));
			return -1;
		}
		for (p = 0; p < JOURNAL_POOLS; p++) {
			sv_lease *l = NULL;

			snprintf(name, sizeof(name), "jr%ld", p);
			if ((err = sv_client_lease_acquire(c, name,
			         SV_LEASE_ANY_SLOT, 0, s, RPC_TIMEOUT_MS, &l))
			    != SV_OK) {
				snprintf(why, whylen, "acquire %s: %s: %s",
				    name, sv_strerror(err),
				    sv_client_error_message(c));
				return -1;
			}
			sv_lease_free(l);
			held++;
		}
	}
	return g_interrupted ? -1 : held;
}

/*
 * count_records counts the P and L records of the journal at path, less
 * its U records, and its size. Returns 0, or -1 when it cannot be read.
 */
static int
count_records(const char *path, long *bytesp, long *procsp, long *leasesp)
{
	char  line[1024];
	FILE *f   = fopen(path, "r");
	bool  bol = true;

	*bytesp = *procsp = *leasesp = 0;
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		size_t len = strlen(line);

		if (bol && line[0] != '\0' && line[1] == ' ') {
			*procsp += line[0] == 'P';
			*leasesp += (line[0] == 'L') - (line[0] == 'U');
		}
		*bytesp += (long) len;
		bol = len > 0 && line[len - 1] == '\n';
	}
	fclose(f);
	return 0;
}

/*
 * logged_replay finds the daemon's "bytes read and replayed in X ms" line
 * in its log past offset off. Returns X in ns, or -1 when there is none.
 */
static int64_t
logged_replay(const char *log, long off)
{
	static const char key[] = " bytes read and replayed in ";
	char              line[1024];
	int64_t           ns = -1;
	FILE             *f  = fopen(log, "r");

	if (f == NULL)
		return -1;
	if (fseek(f, off, SEEK_SET) == 0)
		while (fgets(line, sizeof(line), f) != NULL) {
			const char *p = strstr(line, key);

			if (p != NULL)
				ns = (int64_t) (strtod(
				                    p + sizeof(key) - 1, NULL)
				    * 1e6);
		}
	fclose(f);
	return ns;
}

/* file_size returns the size of the file at path, 0 when it is missing. */
static long
file_size(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 ? (long) sb.st_size : 0;
}

/*
 * restart_once SIGKILLs our daemon, reaps it, starts supervised again on
 * the same config (d, g) and times the spawn to an answered Hello into
 * res's next slot. *cp is the client to the new daemon on return (the old
 * one is closed). Returns 0, or -1 with why.
 */
static int
restart_once(struct daemon *d, const struct group_cfg *g, sv_client **cp,
    struct journal_result *res, char *why, size_t whylen)
{
	sv_hello *h = NULL;
	int64_t   t0, t1, rep;
	long      off;
	sv_err    err;
	int       st;

	sv_client_close(*cp);
	*cp = NULL;
	if (g_daemon_pid <= 0 || kill(g_daemon_pid, SIGKILL) != 0) {
		snprintf(why, whylen, "the daemon is gone before its kill");
		return -1;
	}
	(void) waitpid(g_daemon_pid, &st, 0); /* bounded: SIGKILL */
	g_daemon_pid = -1;
	off          = file_size(d->log);
	t0           = now_ns();
	if (daemon_start(d, "dr", g, why, whylen) != 0)
		return -1;
	if ((err = sv_client_open(cp, d->url, 20000)) != SV_OK
	    || (err = sv_client_hello(*cp, 20000, &h)) != SV_OK) {
		snprintf(why, whylen, "the successor did not answer Hello: %s",
		    sv_strerror(err));
		return -1;
	}
	t1 = now_ns();
	sv_hello_free(h);
	res->hello_ns[res->nreplays] = t1 - t0;
	rep                          = logged_replay(d->log, off);
	if (rep >= 0)
		res->replay_ns[res->nlogged++] = rep;
	res->nreplays++;
	return 0;
}

/*
 * reap_pids stops the "idle" group and reaps those of pids[0..n) that are
 * sv-bench's children now (the killed daemon's workers). Returns 0, or -1
 * with why.
 */
static int
reap_pids(sv_client *c, pid_t *pids, long n, char *why, size_t whylen)
{
	int64_t deadline;
	long    left = n, i;
	int     st;

	if (group_drain(c, "idle", 30000, why, whylen) != 0)
		return -1;
	deadline = now_ns() + 10 * NS_PER_SEC;
	while (left > 0 && now_ns() < deadline) {
		for (i = 0; i < n; i++)
			if (pids[i] > 0
			    && waitpid(pids[i], &st, WNOHANG) != 0) {
				pids[i] = -1; /* reaped, or not our child */
				left--;
			}
		if (left > 0)
			sleep_ms(5);
	}
	return 0;
}

/* startup measures the start-ups after SIGKILL (see the file comment). */
static int
startup(const struct opts *o, struct journal_result *res)
{
	const char      *argv[]  = {SV_BENCH_STAMP_PATH, NULL};
	struct group_cfg g       = {.name = "idle",
	          .argv                   = argv,
	          .count                  = JOURNAL_WORKERS,
	          .min_uptime_ms          = -1,
	          .purpose                = "sv-bench journal start-up (idle)"};
	char            *why     = res->why_replay;
	size_t           whylen  = sizeof(res->why_replay);
	long             replays = o->quick ? 3 : 5, i, k;
	pid_t           *pids, *now = NULL;
	struct daemon    d;
	sv_client       *c = NULL;
	char             jpath[PATH_MAX + 8];
	int64_t          deadline;
	int              ret = -1;
	sv_err           err;

	if ((pids = calloc(2 * JOURNAL_WORKERS, sizeof(*pids))) == NULL) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	now = pids + JOURNAL_WORKERS;
	note("journal: %d workers and %d leases, then %ld x (kill -9, "
	     "start-up)",
	    JOURNAL_WORKERS, JOURNAL_POOLS * JOURNAL_SESSIONS, replays);
	if (daemon_start(&d, "dr", &g, why, whylen) != 0)
		goto out;
	snprintf(jpath, sizeof(jpath), "%s/state", d.sockdir);
	if (daemon_wait_ready(&d, 10000, why, whylen) != 0)
		goto stop;
	if ((err = sv_client_open(&c, d.url, RPC_TIMEOUT_MS)) != SV_OK) {
		snprintf(why, whylen, "sv_client_open: %s", sv_strerror(err));
		goto stop;
	}
	deadline = now_ns() + 60 * NS_PER_SEC;
	while (
	    (res->workers = idle_pids(c, pids, JOURNAL_WORKERS, why, whylen))
	    < JOURNAL_WORKERS) {
		if (res->workers < 0)
			goto stop;
		if (now_ns() >= deadline || g_interrupted) {
			snprintf(why, whylen,
			    "%ld of %d workers up after 60 s", res->workers,
			    JOURNAL_WORKERS);
			goto stop;
		}
		sleep_ms(20);
	}
	if ((res->leases_held = hold_leases(c, why, whylen)) < 0)
		goto stop;
	for (i = 0; i < replays && !g_interrupted; i++) {
		long bytes, procs, leases;

		if (count_records(jpath, &bytes, &procs, &leases) == 0
		    && i == 0) {
			res->jbytes  = bytes;
			res->jprocs  = procs;
			res->jleases = leases;
		}
		if (restart_once(&d, &g, &c, res, why, whylen) != 0)
			goto stop;
	}
	qsort(pids, (size_t) res->workers, sizeof(*pids), cmp_pid);
	k = idle_pids(c, now, JOURNAL_WORKERS, why, whylen);
	for (i = 0; i < k; i++)
		res->adopted += bsearch(&now[i], pids, (size_t) res->workers,
		                    sizeof(*pids), cmp_pid)
		    != NULL;
	if (k < 0 || reap_pids(c, pids, res->workers, why, whylen) != 0)
		goto stop;
	ret = res->nreplays > 0 ? 0 : -1;
	if (ret != 0)
		snprintf(why, whylen, "interrupted");
stop:
	sv_client_close(c);
	daemon_stop(&d, 30000, NULL);
out:
	free(pids);
	res->s_hello   = stats_of(res->hello_ns, (size_t) res->nreplays);
	res->s_replay  = stats_of(res->replay_ns, (size_t) res->nlogged);
	res->replay_ok = ret == 0;
	return ret;
}

/* ------------------------------------------------------------------ */
/* Run                                                                */
/* ------------------------------------------------------------------ */

/* growth runs the two growth phases on one daemon. */
static int
growth(const struct opts *o, struct journal_result *res)
{
	const char      *argv[] = {SV_BENCH_STAMP_PATH, "--exit", NULL};
	struct group_cfg g      = {.name = "loop",
	         .argv                   = argv,
	         .count                  = 0,
	         .min_uptime_ms          = 0,
	         .purpose                = "sv-bench journal crash loop"};
	struct daemon    d;
	sv_client       *c = NULL;
	sv_err           err;
	int              ret = -1;

	phase_init(&res->restarts, o->quick ? 10000 : 100000);
	phase_init(&res->leases, 10000);
	note("journal: %ld restarts of a crash loop, then %ld lease grants + "
	     "releases",
	    res->restarts.target, res->leases.target);
	if (daemon_start(&d, "dj", &g, res->why, sizeof(res->why)) != 0)
		return -1;
	if (daemon_wait_ready(&d, 10000, res->why, sizeof(res->why)) != 0)
		goto stop;
	if ((err = sv_client_open(&c, d.url, RPC_TIMEOUT_MS)) != SV_OK) {
		snprintf(res->why, sizeof(res->why), "sv_client_open: %s",
		    sv_strerror(err));
		goto stop;
	}
	res->start_b = dir_bytes(d.sockdir);
	if (grow_restarts(c, d.sockdir,
	        o->quick ? JOURNAL_QUICK_BOUND_S : JOURNAL_BOUND_S,
	        &res->restarts, res->why, sizeof(res->why))
	        != 0
	    || grow_leases(
	           c, d.sockdir, &res->leases, res->why, sizeof(res->why))
	        != 0)
		goto stop;
	ret = 0;
stop:
	sv_client_close(c);
	daemon_stop(&d, 30000, NULL);
	return ret;
}

/* journal_run runs the scenario; see scenarios_limits.h. */
int
journal_run(const struct opts *o, struct journal_result *res)
{
	int rv;

	memset(res, 0, sizeof(*res));
	if (g_interrupted)
		return -1;
	rv      = growth(o, res);
	res->ok = rv == 0;
	if (g_interrupted)
		return -1;
	return startup(o, res) == 0 && rv == 0 ? 0 : -1;
}

/* ------------------------------------------------------------------ */
/* Rows and details                                                   */
/* ------------------------------------------------------------------ */

/* journal_rows writes the boundedness rows and the start-up rows. */
int
journal_rows(const struct journal_result *res, struct row *rows)
{
	rows[0]
	    = (struct row) {.name = "journal KiB max, restarts: 2nd/1st half",
	        .made             = res->ok && res->restarts.h2_max_b > 0,
	        .has_base         = res->ok,
	        .base             = res->restarts.h1_max_b / 1024.0,
	        .ours             = res->restarts.h2_max_b / 1024.0,
	        .kind             = T_RATIO_LE,
	        .target           = 1.25};
	rows[1]
	    = (struct row) {.name = "journal KiB max, leases: 2nd/1st half",
	        .made             = res->ok && res->leases.h2_max_b > 0,
	        .has_base         = res->ok,
	        .base             = res->leases.h1_max_b / 1024.0,
	        .ours             = res->leases.h2_max_b / 1024.0,
	        .kind             = T_RATIO_LE,
	        .target           = 1.25};
	rows[2]
	    = (struct row) {.name = "journal replay, 1000 w + 10000 l (ms)",
	        .made   = res->replay_ok && res->nlogged == res->nreplays,
	        .ours   = res->s_replay.med / 1e6,
	        .kind   = T_ABS_LE,
	        .target = 200,
	        .tunit  = "ms"};
	rows[3]
	    = (struct row) {.name = "kill -9 -> Hello, 1000 w + 10000 l (ms)",
	        .made             = res->replay_ok,
	        .ours             = res->s_hello.med / 1e6,
	        .kind             = T_ABS_LE,
	        .target           = 200,
	        .tunit            = "ms"};
	return 4;
}

/* phase_details prints one growth phase's sizes. */
static void
phase_details(const char *what, const struct journal_phase *ph)
{
	int k;

	printf("journal: %s: %ld of %ld in %.1f s (%.0f/s)%s; size max "
	       "%.1f KiB (1st half %.1f, 2nd half %.1f), at the end %.1f "
	       "KiB; %ld samples, %ld compactions seen\n",
	    what, ph->done, ph->target, ph->ns / 1e9,
	    ph->ns > 0 ? ph->done * 1e9 / ph->ns : 0.0,
	    ph->cut ? " (cut by the time bound)" : "", ph->max_b / 1024.0,
	    ph->h1_max_b / 1024.0, ph->h2_max_b / 1024.0, ph->end_b / 1024.0,
	    ph->samples, ph->compactions);
	printf("journal: %s: KiB at 10%%..100%%:", what);
	for (k = 0; k < JOURNAL_DECILES; k++)
		printf(" %.1f", ph->decile_b[k] / 1024.0);
	printf("\n");
}

/* journal_details prints the phases' sizes and the start-ups. */
void
journal_details(const struct journal_result *res)
{
	long i;

	if (res->restarts.samples > 0)
		phase_details("restarts", &res->restarts);
	if (res->leases.samples > 0)
		phase_details("lease pairs", &res->leases);
	if (res->nreplays == 0)
		return;
	printf("journal: start-up after kill -9 with %ld workers and %ld "
	       "leases held: the first journal replayed held %ld bytes, %ld "
	       "P and %ld L records; %ld start-ups, Hello median/max "
	       "%.1f/%.1f ms, replay (log) median/max %.1f/%.1f ms (%ld "
	       "logged); %ld of the first workers still listed after the "
	       "last start-up\n",
	    res->workers, res->leases_held, res->jbytes, res->jprocs,
	    res->jleases, res->nreplays, res->s_hello.med / 1e6,
	    res->s_hello.max / 1e6, res->s_replay.med / 1e6,
	    res->s_replay.max / 1e6, res->nlogged, res->adopted);
	printf("journal: Hello after each start-up, sorted (ms):");
	for (i = 0; i < res->nreplays; i++)
		printf(" %.1f", res->hello_ns[i] / 1e6);
	printf("\n");
}
