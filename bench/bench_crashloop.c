/*
 * bench_crashloop.c — scenario 4 of sv-bench: a crash loop with backoff
 * off. Target: restarts per second under supervised >= 0.8 x the cycles
 * per second of a raw posix_spawn + wait loop of the same program.
 *
 * Design: the worker is "sv-bench-stamp --exit", which exits with status 1
 * as soon as it is loaded and sends nothing, so both sides pay exactly
 * spawn, exec, dynamic loading, exit and reaping per cycle. Rounds
 * alternate raw and supervised, each a fixed measuring window, so that
 * both sides see the same machine conditions; the rate of each side is
 * the median over the rounds.
 *   - raw: sv-bench posix_spawns the program, opens its pidfd, polls it
 *     (5 s deadline) and reaps it with waitpid, in a loop, until the
 *     window ends. Rate = cycles / elapsed.
 *   - ours: one daemon for all rounds, a group "loop" of one seat with
 *     min_uptime_ms = 0 (no backoff), kept at count 0 between rounds so
 *     that it is idle while the raw side runs. A round scales it to 1,
 *     lets it run 100 ms, reads the seat's restart count and generation
 *     (sv_client_status), waits one window, reads them again, and scales
 *     back to 0. Rate = restart-count delta / time between the two reads
 *     (one RPC each, about 0.1 ms, against a window of 1-2 s). The
 *     generation delta is printed as a cross-check.
 *
 * File layout: raw round; supervised round; run; rows and details.
 */
#include "scenarios.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <supervise/client.h>

/* Warm-up after a scale-up before the first read, ms. */
#define LOOP_WARM_MS 100

/* ------------------------------------------------------------------ */
/* Raw round                                                          */
/* ------------------------------------------------------------------ */

/*
 * loop_raw_round spawns and reaps "sv-bench-stamp --exit" until window_ms
 * have passed. Returns 0 with the cycle count and the elapsed time, or -1
 * with why.
 */
static int
loop_raw_round(
    long window_ms, long *np, int64_t *nsp, char *why, size_t whylen)
{
	char         *argv[] = {"sv-bench-stamp", "--exit", NULL};
	struct envbuf e;
	int64_t       t0, end;
	long          n   = 0;
	int           ret = -1;

	if (envbuf_init(&e) != 0) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	snprintf(e.ord, sizeof(e.ord), "SUPERVISE_ORDINAL=0");
	snprintf(e.gen, sizeof(e.gen), "SUPERVISE_GENERATION=1");
	t0  = now_ns();
	end = t0 + window_ms * NS_PER_MS;
	while (now_ns() < end) {
		struct pollfd p;
		pid_t         pid;
		int           rv, st = 0;

		if (g_interrupted) {
			snprintf(why, whylen, "interrupted");
			goto out;
		}
		rv = spawn_proc(
		    SV_BENCH_STAMP_PATH, argv, e.envp, NULL, false, &pid);
		if (rv != 0) {
			snprintf(why, whylen, "posix_spawn: %s", strerror(rv));
			goto out;
		}
		g_raw[0] = pid;
		g_nraw   = 1;
		p.fd     = bench_pidfd_open(pid);
		p.events = POLLIN;
		if (p.fd < 0 || poll(&p, 1, 5000) != 1
		    || waitpid(pid, &st, 0) != pid) {
			snprintf(why, whylen, "raw worker %d did not exit",
			    (int) pid);
			if (p.fd >= 0)
				close(p.fd);
			goto out;
		}
		close(p.fd);
		g_nraw = 0;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 1) {
			snprintf(why, whylen,
			    "raw worker ended with status %#x", st);
			goto out;
		}
		n++;
	}
	*nsp = now_ns() - t0;
	*np  = n;
	ret  = 0;
out:
	raw_reap_all(2000);
	envbuf_free(&e);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Supervised round                                                   */
/* ------------------------------------------------------------------ */

/*
 * seat_read reads ordinal 0 of group "loop": its restart count and
 * generation, and the time just after the reply. Retries briefly when the
 * seat is momentarily not listed. Returns 0 or -1 with why.
 */
static int
seat_read(sv_client *c, uint64_t *restartsp, uint64_t *genp, int64_t *tp,
    char *why, size_t whylen)
{
	int64_t deadline = now_ns() + 2 * NS_PER_SEC;

	for (;;) {
		sv_workers *w;
		sv_err      err
		    = sv_client_status(c, "loop", 0, RPC_TIMEOUT_MS, &w);

		*tp = now_ns();
		if (err == SV_OK && sv_workers_count(w) == 1) {
			*restartsp = sv_workers_restarts(w, 0);
			*genp      = sv_workers_generation(w, 0);
			sv_workers_free(w);
			return 0;
		}
		if (err == SV_OK)
			sv_workers_free(w);
		if ((err != SV_OK && err != SV_ENOTFOUND) || *tp >= deadline
		    || g_interrupted) {
			snprintf(why, whylen, "status(loop, 0): %s: %s",
			    sv_strerror(err), sv_client_error_message(c));
			return -1;
		}
		sleep_ms(1);
	}
}

/*
 * daemon_has_children tells whether any thread of the daemon has a child
 * (/proc/PID/task/TID/children). Returns 1, 0, or -1 when unreadable.
 */
static int
daemon_has_children(void)
{
	char           path[96];
	struct dirent *e;
	DIR           *d;
	int            found = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int) g_daemon_pid);
	if ((d = opendir(path)) == NULL)
		return -1;
	while (found == 0 && (e = readdir(d)) != NULL) {
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/children",
		    (int) g_daemon_pid, e->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue; /* the thread ended meanwhile */
		found = fgetc(f) != EOF;
		fclose(f);
	}
	closedir(d);
	return found;
}

/*
 * loop_idle waits until the daemon has no child left (the group is at 0
 * and its last process reaped), so that the raw round runs alone. Returns
 * 0 or -1 with why.
 */
static int
loop_idle(char *why, size_t whylen)
{
	int64_t deadline = now_ns() + 10 * NS_PER_SEC;

	for (;;) {
		int rv = daemon_has_children();

		if (rv == 0)
			return 0;
		if (rv < 0 || now_ns() >= deadline || g_interrupted
		    || !daemon_alive()) {
			snprintf(why, whylen,
			    "the loop group did not go idle in 10 s");
			return -1;
		}
		sleep_ms(2);
	}
}

/*
 * loop_ours_round runs the daemon's crash loop for one window and counts
 * its restarts. Returns 0 or -1 with why.
 */
static int
loop_ours_round(sv_client *c, long window_ms, long *np, long *genp,
    int64_t *nsp, char *why, size_t whylen)
{
	uint64_t r0, r1, g0, g1;
	int64_t  t0, t1;
	sv_err   err;

	if ((err = sv_client_scale(c, "loop", 1, RPC_TIMEOUT_MS, NULL))
	    != SV_OK) {
		snprintf(why, whylen, "scale(loop, 1): %s: %s",
		    sv_strerror(err), sv_client_error_message(c));
		return -1;
	}
	sleep_ms(LOOP_WARM_MS);
	if (seat_read(c, &r0, &g0, &t0, why, whylen) != 0)
		return -1;
	sleep_ms(window_ms);
	if (seat_read(c, &r1, &g1, &t1, why, whylen) != 0)
		return -1;
	if ((err = sv_client_scale(c, "loop", 0, RPC_TIMEOUT_MS, NULL))
	    != SV_OK) {
		snprintf(why, whylen, "scale(loop, 0): %s: %s",
		    sv_strerror(err), sv_client_error_message(c));
		return -1;
	}
	if (r1 <= r0) {
		snprintf(why, whylen,
		    "no restart counted in %ld ms (restarts %llu -> %llu)",
		    window_ms, (unsigned long long) r0,
		    (unsigned long long) r1);
		return -1;
	}
	*np   = (long) (r1 - r0);
	*genp = (long) (g1 - g0);
	*nsp  = t1 - t0;
	return loop_idle(why, whylen);
}

/* ------------------------------------------------------------------ */
/* Run                                                                */
/* ------------------------------------------------------------------ */

/* median_rate is the median of n[i] / ns[i], per second. */
static double
median_rate(const long *n, const int64_t *ns, long rounds)
{
	int64_t v[LOOP_MAX_ROUNDS];
	long    i;

	for (i = 0; i < rounds; i++)
		v[i] = (int64_t) (n[i] * 1e9 * 1000 / (double) ns[i]);
	return stats_of(v, (size_t) rounds).med / 1000.0;
}

/* loop_run runs scenario 4; see scenarios.h. */
int
loop_run(const struct opts *o, struct loop_result *res)
{
	const char      *argv[] = {SV_BENCH_STAMP_PATH, "--exit", NULL};
	struct group_cfg g      = {.name = "loop",
	         .argv                   = argv,
	         .count                  = 0,
	         .min_uptime_ms          = 0,
	         .purpose                = "sv-bench crash-loop worker"};
	long             rounds = o->quick ? 1 : 3, r;
	struct daemon    d;
	sv_client       *c       = NULL;
	bool             started = false;
	sv_err           err;
	int              ret = -1;

	memset(res, 0, sizeof(*res));
	res->window_ms = o->quick ? 1000 : 2000;
	if (g_interrupted)
		return -1;
	for (r = 0; r < rounds; r++) {
		note("4/7 crash loop round %ld/%ld: raw spawn + wait loop",
		    r + 1, rounds);
		if (loop_raw_round(res->window_ms, &res->raw_n[r],
		        &res->raw_ns[r], res->why_raw, sizeof(res->why_raw))
		    != 0)
			goto out;
		if (!started) {
			if (daemon_start(
			        &d, "d4", &g, res->why, sizeof(res->why))
			    != 0)
				goto out;
			started = true;
			if (daemon_wait_ready(
			        &d, 10000, res->why, sizeof(res->why))
			    != 0)
				goto out;
			if ((err = sv_client_open(&c, d.url, RPC_TIMEOUT_MS))
			    != SV_OK) {
				snprintf(res->why, sizeof(res->why),
				    "sv_client_open: %s", sv_strerror(err));
				goto out;
			}
		}
		note("4/7 crash loop round %ld/%ld: supervised, "
		     "min_uptime_ms = 0",
		    r + 1, rounds);
		if (loop_ours_round(c, res->window_ms, &res->ours_n[r],
		        &res->ours_gen[r], &res->ours_ns[r], res->why,
		        sizeof(res->why))
		    != 0)
			goto out;
		res->rounds = r + 1;
	}
	ret = 0;
out:
	sv_client_close(c);
	if (started)
		daemon_stop(&d, 10000, NULL);
	if (res->rounds > 0) {
		res->raw_rate
		    = median_rate(res->raw_n, res->raw_ns, res->rounds);
		res->ours_rate
		    = median_rate(res->ours_n, res->ours_ns, res->rounds);
	}
	res->ok = ret == 0;
	return ret;
}

/* ------------------------------------------------------------------ */
/* Rows and details                                                   */
/* ------------------------------------------------------------------ */

/* loop_rows writes the restart-rate row. */
int
loop_rows(const struct loop_result *res, struct row *rows)
{
	rows[0] = (struct row) {.name = "crash loop, backoff off (restarts/s)",
	    .made                     = res->ok,
	    .has_base                 = res->ok,
	    .base                     = res->raw_rate,
	    .ours                     = res->ours_rate,
	    .kind                     = T_RATIO_GE,
	    .target                   = 0.8};
	return 1;
}

/* loop_details prints every round. */
void
loop_details(const struct loop_result *res)
{
	long i;

	for (i = 0; i < res->rounds; i++)
		printf("crash loop round %ld: raw %ld cycles in %.0f ms "
		       "(%.0f/s), supervised %ld restarts in %.0f ms (%.0f/s, "
		       "generation +%ld), ratio %.2f\n",
		    i + 1, res->raw_n[i], res->raw_ns[i] / 1e6,
		    res->raw_n[i] * 1e9 / res->raw_ns[i], res->ours_n[i],
		    res->ours_ns[i] / 1e6,
		    res->ours_n[i] * 1e9 / res->ours_ns[i], res->ours_gen[i],
		    (res->ours_n[i] / (double) res->ours_ns[i])
		        / (res->raw_n[i] / (double) res->raw_ns[i]));
}
