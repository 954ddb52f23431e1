/*
 * sv_bench.c — sv-bench, the benchmark of issue 2: supervised against raw
 * baselines measured in the same run, printed as one table. This file is
 * the command line and the report; the measurements live one per file.
 *
 * Design: main either runs a helper role (sv-bench re-executes itself as
 * the echo server and as the round-trip worker of bench_whoami.c, as
 * the whoami-timing worker of bench_whoami_n.c, and as the idle baseline
 * of bench_idle.c), or runs the benchmark: it
 * parses the options, sets the process up, samples the CPU load, runs the
 * scenarios of scenarios.h that --only selects (all by default) in order
 * (whoami round trip, crash to replacement, restart after SIGKILL of a
 * worker up T, spawning N workers, crash-loop
 * throughput, backoff accuracy, whoami vs the number of workers, restart
 * latency with a slow event subscriber; lease acquire + release rate and
 * memory, drain of N idle workers and drain notice latency; the idle
 * supervisor's wake-ups and CPU; one daemon at 1, 1,000 and 10,000
 * workers), samples the load again, and
 * prints the table (each scenario's rows, then the "clean stops" row of
 * every daemon the harness stopped), each scenario's detail lines, the load
 * line and the reasons for whatever could not be measured, and last the
 * comparison with the recorded figures (--baseline, default
 * bench/baseline.tsv: a REGRESSION line per figure more than 25 % worse,
 * reported without changing the exit status; figures.h) and, with
 * --figures, this run's figures in that file's format. bench/README.md
 * explains the method and the output.
 *
 * Files: harness.h and harness_*.c (what the scenarios share), evsub.[ch]
 * (the event stream subscriber), bench_whoami.c, bench_crash.c,
 * bench_restart.c, bench_spawn.c, bench_crashloop.c, bench_backoff.c,
 * bench_whoami_n.c, bench_events.c, bench_leases.c (with leases_*.c),
 * bench_drain.c, bench_idle.c, bench_scale.c (one scenario each),
 * bench_wire.[ch] (the report datagrams), stamp_worker.c (sv-bench-stamp, the
 * trivial worker), drain_worker.c and drain_wire.h (sv-bench-drain, the drain
 * scenario's worker, and its report datagram).
 *
 * Exit status: 0 when every measurement was made and no row of the table
 * is FAIL (MISS, a target not met, does not change it); 1 when one could
 * not be made or a row is FAIL (harness_table.c: not measured, or a ratio
 * row whose baseline is missing or not above 0); 2 on a usage error.
 *
 * File layout: options; header and failure lines; main.
 */
#include "figures.h"
#include "scenarios.h"
#include "scenarios_limits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#ifndef SV_BENCH_BASELINE_PATH
#error "define SV_BENCH_BASELINE_PATH (path of bench/baseline.tsv)"
#endif

/* ------------------------------------------------------------------ */
/* Options                                                            */
/* ------------------------------------------------------------------ */

/* usage prints the command line summary to f. */
static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: sv-bench [--quick] [--only LIST] [--kills N] [--workers N]"
	    " [--rtts N] [--blocks N] [--rounds N] [--events N] [--keep]\n"
	    "                [--baseline FILE] [--figures]\n"
	    "  --quick      fewer iterations (smoke run): 2000 round trips,"
	    " 20 kills, 100 workers, 1 round, 10000 events, shorter"
	    " windows\n"
	    "  --only LIST  run only these scenarios, comma-separated: whoami,"
	    " crash, spawn, loop, backoff, whoami-n, events, evsubs, leases,"
	    " journal, drain, idle\n"
	    "  --kills N    kills in the crash-to-replacement measurement"
	    " (default 200)\n"
	    "  --workers N  workers spawned in the spawn measurement"
	    " (default 1000, at most 4096)\n"
	    "  --rtts N     round trips of each kind (default 10000)\n"
	    "  --blocks N   interleaved blocks for the round trips"
	    " (default 10)\n"
	    "  --rounds N   alternating raw/supervised spawn rounds"
	    " (default 5, at most 16)\n"
	    "  --events N   events to publish into the stalled subscriber"
	    " (default 100000)\n"
	    "  --keep       keep the temporary directory (configs, daemon"
	    " logs)\n"
	    "  --baseline FILE  the recorded figures to compare with"
	    " (default\n"
	    "               " SV_BENCH_BASELINE_PATH ");"
	    " a figure more than 25%% worse\n"
	    "               prints a REGRESSION line (the exit status does"
	    " not change)\n"
	    "  --figures    print this run's figures in that file's format,"
	    " to refresh it\n"
	    "scenario restart: T = 0, 100 ms, 2 s, 10 s with 0, 100, 1000"
	    " other workers,\n"
	    "  50/30/15/5 kills per side (about 5 min); --quick: T <= 2 s"
	    " with 0 and 100\n"
	    "  others, 10/10/3 kills; the cells left out print"
	    " \"skip (full mode only)\"\n"
	    "scenario scale: 1, 1000 and 10000 workers (--quick: 1 and 1000);"
	    " a size the\n"
	    "  machine cannot hold (descriptors, pids, memory) prints"
	    " \"skip (why)\"\n"
	    "exit status:\n"
	    "  0  every measurement was made and no row is FAIL (MISS, a"
	    " target not met,\n"
	    "     does not change it)\n"
	    "  1  a measurement could not be made, or a row is FAIL: not"
	    " measured, or a\n"
	    "     ratio row whose baseline is missing or not above 0\n"
	    "  2  usage error\n");
}

/* A numeric option: its name, where it goes, and its bounds. */
struct num_opt {
	const char *name;
	long       *value; /* -1 until given */
	long        lo, hi;
};

/* The names --only accepts, with their scenario bits. */
static const struct {
	const char *name;
	unsigned    bit;
} scenario_names[] = {
    {"whoami", SC_WHOAMI},
    {"crash", SC_CRASH},
    {"restart", SC_RESTART},
    {"spawn", SC_SPAWN},
    {"loop", SC_LOOP},
    {"backoff", SC_BACKOFF},
    {"whoami-n", SC_WHON},
    {"events", SC_EVENTS},
    {"evsubs", SC_EVSUBS},
    {"leases", SC_LEASES},
    {"journal", SC_JOURNAL},
    {"drain", SC_DRAIN},
    {"idle", SC_IDLE},
    {"scale", SC_SCALE},
};

/* parse_only turns "a,b,c" into scenario bits; 0 on an unknown name. */
static unsigned
parse_only(const char *list)
{
	unsigned bits = 0;
	size_t   len, k;

	while (list != NULL && *list != '\0') {
		len = strcspn(list, ",");
		for (k = 0;
		     k < sizeof(scenario_names) / sizeof(scenario_names[0]);
		     k++)
			if (strlen(scenario_names[k].name) == len
			    && strncmp(scenario_names[k].name, list, len) == 0)
				break;
		if (k == sizeof(scenario_names) / sizeof(scenario_names[0]))
			return 0;
		bits |= scenario_names[k].bit;
		list += len;
		if (*list == ',')
			list++;
	}
	return bits;
}

/* parse_opts fills o from argv; returns -1 on a usage error. */
static int
parse_opts(int argc, char **argv, struct opts *o)
{
	long kills = -1, workers = -1, rtts = -1, blocks = -1, rounds = -1;
	long events                 = -1;
	const struct num_opt nums[] = {
	    {"--events", &events, 1000, 10000000},
	    {"--kills", &kills, 1, 1000000},
	    {"--workers", &workers, 1, 4096},
	    {"--rtts", &rtts, 1, 10000000},
	    {"--rounds", &rounds, 1, SPAWN_MAX_ROUNDS},
	    {"--blocks", &blocks, 1, SV_BENCH_MAX_BLOCKS},
	};
	size_t k;
	int    i;

	memset(o, 0, sizeof(*o));
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--quick") == 0) {
			o->quick = true;
			continue;
		}
		if (strcmp(a, "--keep") == 0) {
			o->keep = true;
			continue;
		}
		if (strcmp(a, "--figures") == 0) {
			o->figures = true;
			continue;
		}
		if (strcmp(a, "--baseline") == 0) {
			if (v == NULL || v[0] == '\0')
				return -1;
			o->baseline = v;
			i++;
			continue;
		}
		if (strcmp(a, "--only") == 0) {
			if ((o->only = parse_only(v)) == 0)
				return -1;
			i++;
			continue;
		}
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(stdout);
			exit(0);
		}
		for (k = 0; k < sizeof(nums) / sizeof(nums[0]); k++)
			if (strcmp(a, nums[k].name) == 0)
				break;
		if (k == sizeof(nums) / sizeof(nums[0]))
			return -1;
		if ((*nums[k].value = parse_long(v, nums[k].lo, nums[k].hi))
		    < 0)
			return -1;
		i++;
	}
	o->kills   = kills > 0 ? kills : (o->quick ? 20 : 200);
	o->workers = workers > 0 ? workers : (o->quick ? 100 : 1000);
	o->rtts    = rtts > 0 ? rtts : (o->quick ? 2000 : 10000);
	o->blocks  = blocks > 0 ? blocks : 10;
	o->rounds  = rounds > 0 ? rounds : (o->quick ? 1 : 5);
	o->events  = events > 0 ? events : (o->quick ? 10000 : 100000);
	if (o->only == 0)
		o->only = SC_EVERY;
	if (o->baseline == NULL)
		o->baseline = SV_BENCH_BASELINE_PATH;
	if (o->rtts < o->blocks)
		o->blocks = o->rtts;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Header and failure lines                                           */
/* ------------------------------------------------------------------ */

/* print_header prints the machine, the daemon and the run's sizes. */
static void
print_header(const struct opts *o, long nofile)
{
	struct utsname un;

	uname(&un);
	printf(
	    "sv-bench: nproc %ld, kernel %s %s %s (%s), RLIMIT_NOFILE %ld\n",
	    sysconf(_SC_NPROCESSORS_ONLN), un.sysname, un.release, un.machine,
	    un.version, nofile);
	printf("sv-bench: supervised %s\n", SV_SUPERVISED_PATH);
	printf("sv-bench: %ld round trips of each kind in %ld blocks, "
	       "%ld kills, %ld workers x %ld rounds, %ld events%s%s\n",
	    o->rtts, o->blocks, o->kills, o->workers, o->rounds, o->events,
	    o->quick ? " (--quick)" : "",
	    o->only != SC_EVERY ? " (--only: some scenarios)" : "");
}

/* The results of every scenario, in table order. */
struct results {
	struct whoami_result  whoami;
	struct crash_result   crash;
	struct restart_result restart;
	struct spawn_result   spawn;
	struct loop_result    loop;
	struct backoff_result backoff;
	struct whon_result    whon;
	struct events_result  events;
	struct evsubs_result  evsubs;
	struct leases_result  leases;
	struct journal_result journal;
	struct drain_result   drain;
	struct idle_result    idle;
	struct scale_result   scale;
};

/*
 * print_failures prints, in table order, why each measurement that could
 * not be made failed.
 */
static void
print_failures(const struct results *r)
{
	const struct {
		const char *what, *why;
	} fails[] = {
	    {"whoami", r->whoami.why},
	    {"raw crash baseline", r->crash.raw.why},
	    {"crash to replacement", r->crash.ours.why},
	    {"raw restart loop", r->restart.why_raw},
	    {"restart after SIGKILL", r->restart.why},
	    {"raw spawn", r->spawn.why_raw},
	    {"supervised spawn", r->spawn.why},
	    {"raw crash loop", r->loop.why_raw},
	    {"supervised crash loop", r->loop.why},
	    {"backoff delays", r->backoff.why},
	    {"whoami vs workers", r->whon.why},
	    {"restart latency with a slow subscriber", r->events.why},
	    {"restart latency with many subscribers", r->evsubs.why},
	    {"lease acquire + release rate", r->leases.why},
	    {"memory of 10000 leases", r->leases.why_mem},
	    {"journal growth", r->journal.why},
	    {"start-up after kill -9", r->journal.why_replay},
	    {"drain", r->drain.why},
	    {"idle supervisor", r->idle.why},
	    {"scale to 1, 1000, 10000 workers", r->scale.why},
	};
	size_t i;

	for (i = 0; i < sizeof(fails) / sizeof(fails[0]); i++)
		if (fails[i].why[0] != '\0')
			printf("could not measure %s: %s\n", fails[i].what,
			    fails[i].why);
}

/*
 * run_all runs the selected scenarios in order and returns whether every
 * one of them was measured.
 */
static bool
run_all(const struct opts *o, struct results *r)
{
	bool made = true;

	if (o->only & SC_WHOAMI) {
		note("1/7 whoami round trip vs bare nng echo");
		made &= whoami_run(o, &r->whoami) == 0;
	}
	if (o->only & SC_CRASH)
		made &= crash_run(o, &r->crash) == 0;
	if (o->only & SC_RESTART)
		made &= restart_run(o, &r->restart) == 0;
	if (o->only & SC_SPAWN)
		made &= spawn_run(o, &r->spawn) == 0;
	if (o->only & SC_LOOP)
		made &= loop_run(o, &r->loop) == 0;
	if (o->only & SC_BACKOFF)
		made &= backoff_run(o, &r->backoff) == 0;
	if (o->only & SC_WHON)
		made &= whon_run(o, &r->whon) == 0;
	if (o->only & SC_EVENTS)
		made &= events_run(o, &r->events) == 0;
	if (o->only & SC_EVSUBS)
		made &= evsubs_run(o, &r->evsubs) == 0;
	if (o->only & SC_LEASES)
		made &= leases_run(o, &r->leases) == 0;
	if (o->only & SC_JOURNAL)
		made &= journal_run(o, &r->journal) == 0;
	if (o->only & SC_DRAIN)
		made &= drain_run(o, &r->drain) == 0;
	if (o->only & SC_IDLE)
		made &= idle_run(o, &r->idle) == 0;
	if (o->only & SC_SCALE)
		made &= scale_run(o, &r->scale) == 0;
	return made;
}

/* The rows of the table (print_rows fills them, main compares them). */
static struct row g_rows[128];
static int        g_nrows;

/*
 * print_rows prints the table: the selected scenarios' rows, the stops.
 * Returns how many rows were FAIL, after listing each with its reason
 * below the table. The rows stay in g_rows[0..g_nrows).
 */
static int
print_rows(const struct opts *o, const struct results *r)
{
	struct row *rows = g_rows;
	int         i, n = 0, failed = 0;

	if (o->only & SC_WHOAMI)
		n += whoami_rows(&r->whoami, rows + n);
	if (o->only & SC_CRASH)
		n += crash_rows(&r->crash, rows + n);
	if (o->only & SC_RESTART)
		n += restart_rows(o, &r->restart, rows + n);
	if (o->only & SC_SPAWN)
		n += spawn_rows(o, &r->spawn, rows + n);
	if (o->only & SC_LOOP)
		n += loop_rows(&r->loop, rows + n);
	if (o->only & SC_BACKOFF)
		n += backoff_rows(&r->backoff, rows + n);
	if (o->only & SC_WHON)
		n += whon_rows(&r->whon, rows + n);
	if (o->only & SC_EVENTS)
		n += events_rows(&r->events, rows + n);
	if (o->only & SC_EVSUBS)
		n += evsubs_rows(&r->evsubs, rows + n);
	if (o->only & SC_LEASES)
		n += leases_rows(&r->leases, rows + n);
	if (o->only & SC_JOURNAL)
		n += journal_rows(&r->journal, rows + n);
	if (o->only & SC_DRAIN)
		n += drain_rows(&r->drain, rows + n);
	if (o->only & SC_IDLE)
		n += idle_rows(&r->idle, rows + n);
	if (o->only & SC_SCALE)
		n += scale_rows(&r->scale, rows + n);
	stops_row(&rows[n++]);
	g_nrows = n;
	print_table_header();
	for (i = 0; i < n; i++)
		failed += !print_row(&rows[i]);
	for (i = 0; i < n; i++)
		if (row_fail_reason(&rows[i]) != NULL)
			printf("FAIL %s: %s\n", rows[i].name,
			    row_fail_reason(&rows[i]));
	return failed;
}

/* print_details prints the selected scenarios' lines under the table. */
static void
print_details(const struct opts *o, const struct results *r)
{
	printf(
	    "\nbaselines: RTT = bare nng REQ/REP echo (%d-byte payload, ctx"
	    "+aio REP server) from the same worker process; crash = sv-bench"
	    " itself supervising (kill, pidfd poll, waitpid, posix_spawn);"
	    " restart = sv-bench's own loop (posix_spawn, pidfd in epoll,"
	    " waitid) with as many other workers;"
	    " spawn = posix_spawn loop of the same binary; RSS = the daemon"
	    " before scaling up; crash loop = posix_spawn + pidfd poll +"
	    " waitpid loop of the same program; backoff = the configured"
	    " delay; whoami-n = the same worker with 1 worker supervised;"
	    " slow subscriber = the same kills with no slow subscriber;"
	    " leases = pairs of bare echo round trips (2 per acquire +"
	    " release) from the same clients; drain = the drain's"
	    " deadline; idle = a process blocked in epoll_wait with no"
	    " timeout, over the same window.\n",
	    WHOAMI_ECHO_PAYLOAD);
	if (o->only & SC_WHOAMI)
		whoami_details(&r->whoami);
	if (o->only & SC_CRASH)
		crash_details(o, &r->crash);
	if (o->only & SC_RESTART)
		restart_details(&r->restart);
	if (o->only & SC_SPAWN)
		spawn_details(o, &r->spawn);
	if (o->only & SC_LOOP)
		loop_details(&r->loop);
	if (o->only & SC_BACKOFF)
		backoff_details(&r->backoff);
	if (o->only & SC_WHON)
		whon_details(&r->whon);
	if (o->only & SC_EVENTS)
		events_details(&r->events);
	if (o->only & SC_EVSUBS)
		evsubs_details(&r->evsubs);
	if (o->only & SC_LEASES)
		leases_details(&r->leases);
	if (o->only & SC_JOURNAL)
		journal_details(&r->journal);
	if (o->only & SC_DRAIN)
		drain_details(&r->drain);
	if (o->only & SC_IDLE)
		idle_details(&r->idle);
	if (o->only & SC_SCALE)
		scale_details(&r->scale);
}

/* ------------------------------------------------------------------ */
/* main                                                               */
/* ------------------------------------------------------------------ */

/* main dispatches the helper roles, else runs the benchmark. */
int
main(int argc, char **argv)
{
	static struct results r;
	struct opts           o;
	long                  nofile = -1;
	double                busy_before, busy_after;
	bool                  all_made;
	int                   rows_failed;

	if (argc >= 2 && strcmp(argv[1], "--role") == 0) {
		if (argc == 4 && strcmp(argv[2], "echo") == 0)
			return whoami_role_echo(argv[3]);
		if (argc == 6 && strcmp(argv[2], "rtt") == 0)
			return whoami_role_rtt(argv[3], argv[4], argv[5]);
		if (argc == 4 && strcmp(argv[2], "who") == 0)
			return whon_role_who(argv[3]);
		if (argc == 4 && strcmp(argv[2], "idle") == 0)
			return idle_role_base(argv[3]);
		fprintf(stderr, "sv-bench: bad --role arguments\n");
		return 2;
	}
	if (parse_opts(argc, argv, &o) != 0) {
		usage(stderr);
		return 2;
	}
	setup_process(&nofile);
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* g_raw holds the largest raw loop: the workers option, the
	 * restart scenario's others, or the scale scenario's 10,000. */
	if (bench_open(o.workers > SCALE_RAW_MAX ? o.workers : SCALE_RAW_MAX)
	    != 0) {
		cleanup(o.keep);
		return 1;
	}
	if (crash_init(&o, &r.crash) != 0) {
		note("out of memory");
		crash_free(&r.crash);
		cleanup(o.keep);
		return 1;
	}
	print_header(&o, nofile);

	busy_before = cpu_busy_pct(1000);
	printf("sv-bench: CPU busy before the run (sv-bench idle, 1 s): %.0f%%"
	       "\n",
	    busy_before);
	all_made   = run_all(&o, &r);
	busy_after = cpu_busy_pct(1000);

	rows_failed = print_rows(&o, &r);
	print_details(&o, &r);
	printf("load: CPU busy before %.0f%%, after %.0f%% (sv-bench idle, "
	       "1 s each)%s\n",
	    busy_before, busy_after,
	    busy_before > 10 || busy_after > 10
	        ? "; other processes were "
	          "competing for the CPUs: ratios are noisy, re-run on a "
	          "quiet "
	          "machine"
	        : "");

	print_failures(&r);
	/* Reported, never failed on (figures.h). */
	(void) figures_compare(
	    g_rows, g_nrows, o.quick ? "quick" : "full", o.baseline);
	if (o.figures)
		figures_print(
		    g_rows, g_nrows, o.quick ? "quick" : "full", o.baseline);
	if (g_interrupted)
		printf("interrupted\n");
	cleanup(o.keep);
	crash_free(&r.crash);
	return all_made && rows_failed == 0 && !g_interrupted ? 0 : 1;
}
