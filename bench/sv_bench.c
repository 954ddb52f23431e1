/*
 * sv_bench.c — sv-bench, the benchmark of issue 2: supervised against raw
 * baselines measured in the same run, printed as one table. This file is
 * the command line and the report; the measurements live one per file.
 *
 * Design: main either runs a helper role (sv-bench re-executes itself as
 * the echo server and as the round-trip worker of bench_whoami.c), or runs
 * the benchmark: it parses the options, sets the process up, samples the
 * CPU load, runs the three scenarios of scenarios.h in order (whoami round
 * trip, crash to replacement, spawning N workers), samples the load again,
 * and prints the table (each scenario's rows, then the "clean stops" row of
 * every daemon the harness stopped), each scenario's detail lines, the load
 * line and the reasons for whatever could not be measured. bench/README.md
 * explains the method and the output.
 *
 * Files: harness.[ch] (what the scenarios share), bench_whoami.c,
 * bench_crash.c, bench_spawn.c (one scenario each), bench_wire.[ch] (the
 * report datagrams), stamp_worker.c (sv-bench-stamp, the trivial worker).
 *
 * Exit status: 0 when every measurement was made (whatever PASS/MISS says),
 * 1 when one could not be made, 2 on a usage error.
 *
 * File layout: options; header and failure lines; main.
 */
#include "scenarios.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Options                                                            */
/* ------------------------------------------------------------------ */

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

/* A numeric option: its name, where it goes, and its bounds. */
struct num_opt {
	const char *name;
	long       *value; /* -1 until given */
	long        lo, hi;
};

/* parse_opts fills o from argv; returns -1 on a usage error. */
static int
parse_opts(int argc, char **argv, struct opts *o)
{
	long kills = -1, workers = -1, rtts = -1, blocks = -1, rounds = -1;
	const struct num_opt nums[] = {
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
	       "%ld kills, %ld workers x %ld rounds%s\n",
	    o->rtts, o->blocks, o->kills, o->workers, o->rounds,
	    o->quick ? " (--quick)" : "");
}

/*
 * print_failures prints, in table order, why each measurement that could
 * not be made failed.
 */
static void
print_failures(const struct whoami_result *w, const struct crash_result *c,
    const struct spawn_result *s)
{
	const struct {
		const char *what, *why;
	} fails[] = {
	    {"whoami", w->why},
	    {"raw crash baseline", c->raw.why},
	    {"crash to replacement", c->ours.why},
	    {"raw spawn", s->why_raw},
	    {"supervised spawn", s->why},
	};
	size_t i;

	for (i = 0; i < sizeof(fails) / sizeof(fails[0]); i++)
		if (fails[i].why[0] != '\0')
			printf("could not measure %s: %s\n", fails[i].what,
			    fails[i].why);
}

/* ------------------------------------------------------------------ */
/* main                                                               */
/* ------------------------------------------------------------------ */

/* main dispatches the helper roles, else runs the benchmark. */
int
main(int argc, char **argv)
{
	static struct whoami_result whoami;
	static struct crash_result  crash;
	static struct spawn_result  spawn;
	struct row                  rows[8];
	struct opts                 o;
	long                        nofile = -1;
	double                      busy_before, busy_after;
	bool                        all_made;
	int                         i, nrows = 0;

	if (argc >= 2 && strcmp(argv[1], "--role") == 0) {
		if (argc == 4 && strcmp(argv[2], "echo") == 0)
			return whoami_role_echo(argv[3]);
		if (argc == 6 && strcmp(argv[2], "rtt") == 0)
			return whoami_role_rtt(argv[3], argv[4], argv[5]);
		fprintf(stderr, "sv-bench: bad --role arguments\n");
		return 2;
	}
	if (parse_opts(argc, argv, &o) != 0) {
		usage(stderr);
		return 2;
	}
	setup_process(&nofile);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (bench_open(o.workers) != 0) {
		cleanup(o.keep);
		return 1;
	}
	if (crash_init(&o, &crash) != 0) {
		note("out of memory");
		crash_free(&crash);
		cleanup(o.keep);
		return 1;
	}
	print_header(&o, nofile);

	busy_before = cpu_busy_pct(1000);
	printf("sv-bench: CPU busy before the run (sv-bench idle, 1 s): %.0f%%"
	       "\n",
	    busy_before);
	note("1/3 whoami round trip vs bare nng echo");
	(void) whoami_run(&o, &whoami);
	(void) crash_run(&o, &crash);
	(void) spawn_run(&o, &spawn);
	busy_after = cpu_busy_pct(1000);

	nrows += whoami_rows(&whoami, rows + nrows);
	nrows += crash_rows(&crash, rows + nrows);
	nrows += spawn_rows(&o, &spawn, rows + nrows);
	stops_row(&rows[nrows++]);
	print_table_header();
	for (i = 0; i < nrows; i++)
		print_row(&rows[i]);

	printf(
	    "\nbaselines: RTT = bare nng REQ/REP echo (%d-byte payload, ctx"
	    "+aio REP server) from the same worker process; crash = sv-bench"
	    " itself supervising (kill, pidfd poll, waitpid, posix_spawn);"
	    " spawn = posix_spawn loop of the same binary; RSS = the daemon"
	    " before scaling up.\n",
	    WHOAMI_ECHO_PAYLOAD);
	whoami_details(&whoami);
	crash_details(&o, &crash);
	spawn_details(&o, &spawn);
	printf("load: CPU busy before %.0f%%, after %.0f%% (sv-bench idle, "
	       "1 s each)%s\n",
	    busy_before, busy_after,
	    busy_before > 10 || busy_after > 10
	        ? "; other processes were "
	          "competing for the CPUs: ratios are noisy, re-run on a "
	          "quiet "
	          "machine"
	        : "");

	print_failures(&whoami, &crash, &spawn);
	if (g_interrupted)
		printf("interrupted\n");
	all_made = whoami.ok && crash.raw.ok && crash.ours.ok && spawn.ok;
	cleanup(o.keep);
	crash_free(&crash);
	return all_made ? 0 : 1;
}
