/*
 * sv-connflood.c — the hostile and the victim processes of
 * integration_conns (control-socket admission), talking to the supervisor
 * at $SUPERVISE_URL through the public client API.
 *
 *   sv-connflood flood OUT MAX PROCS
 *       PROCS processes (this one and PROCS-1 children) each open up to MAX
 *       connections, one client handle each, and send Hello on each; a
 *       connection whose Hello succeeds is kept open, idle. A process stops
 *       after 8 failures in a row (or at MAX) and writes one line to
 *       OUT.N (N = 0..PROCS-1, written to OUT.N.tmp and renamed, so a
 *       reader never sees half a line):
 *           accepted=A exhausted=E other=O
 *       (E: Hellos answered EXHAUSTED, O: any other failure). Then it holds
 *       its connections until SIGTERM. On SIGTERM the first process ends
 *       the children it started (by pid) and waits for them.
 *   sv-connflood victim OUT
 *       as a worker: one connection, WhoAmI, then 5 Heartbeats; writes
 *       "whoami=W heartbeat=H" (sv_err names) to OUT the same way, then
 *       waits for SIGTERM.
 *
 * The descriptor limit is raised to its hard limit first (a flood needs
 * thousands). Every call has a deadline; no sleep synchronises anything.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervise/client.h"

#define FLOOD_OPEN_MS  200 /* sv_client_open of one flood connection */
#define FLOOD_CALL_MS  500 /* its Hello */
#define FLOOD_GIVE_UP  8 /* failures in a row that end a flood */
#define FLOOD_MAX_PROC 64
#define VICTIM_CALL_MS 3000

/* write_line writes line to path through path.tmp and a rename. */
static int
write_line(const char *path, const char *line)
{
	char  tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if ((f = fopen(tmp, "w")) == NULL) {
		perror(tmp);
		return -1;
	}
	fputs(line, f);
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		perror(path);
		return -1;
	}
	return 0;
}

/* hold waits for SIGTERM (blocked, taken with sigwait). */
static void
hold(void)
{
	sigset_t set;
	int      sig = 0;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	while (sigwait(&set, &sig) != 0) {
	}
}

/* flood_one is one flooding process: see the top of the file. */
static int
flood_one(const char *out, int idx, long max)
{
	sv_client **cl       = calloc((size_t) max, sizeof(*cl));
	long        accepted = 0, exhausted = 0, other = 0, row = 0;
	char        path[4096], line[128];

	if (cl == NULL) {
		return 1;
	}
	while (accepted + exhausted + other < max && row < FLOOD_GIVE_UP) {
		sv_client *c = NULL;
		sv_hello  *h = NULL;
		sv_err     e = sv_client_open(&c, NULL, FLOOD_OPEN_MS);

		if (e == SV_OK) {
			e = sv_client_hello(c, FLOOD_CALL_MS, &h);
		}
		if (e == SV_OK) {
			sv_hello_free(h);
			cl[accepted++] = c;
			row            = 0;
			continue;
		}
		if (e == SV_EEXHAUSTED) {
			exhausted++;
		} else {
			other++;
		}
		row++;
		sv_client_close(c);
	}
	snprintf(path, sizeof(path), "%s.%d", out, idx);
	snprintf(line, sizeof(line), "accepted=%ld exhausted=%ld other=%ld\n",
	    accepted, exhausted, other);
	if (write_line(path, line) != 0) {
		return 1;
	}
	hold();
	for (long i = 0; i < accepted; i++) {
		sv_client_close(cl[i]);
	}
	free(cl);
	return 0;
}

/* flood starts procs - 1 children and floods in each and in itself. */
static int
flood(const char *out, long max, long procs)
{
	pid_t kids[FLOOD_MAX_PROC];
	int   rc;

	for (long i = 1; i < procs; i++) {
		pid_t p = fork();

		if (p < 0) {
			perror("fork");
			procs = i;
			break;
		}
		if (p == 0) {
			_exit(flood_one(out, (int) i, max));
		}
		kids[i] = p;
	}
	rc = flood_one(out, 0, max);
	for (long i = 1; i < procs; i++) {
		int st;

		kill(kids[i], SIGTERM);
		while (waitpid(kids[i], &st, 0) < 0 && errno == EINTR) {
		}
	}
	return rc;
}

/* victim: see the top of the file. */
static int
victim(const char *out)
{
	sv_client   *c  = NULL;
	sv_identity *id = NULL;
	sv_err       w, hb = SV_OK;
	char         line[128];

	w = sv_client_open(&c, NULL, VICTIM_CALL_MS);
	if (w == SV_OK) {
		w = sv_client_whoami(c, VICTIM_CALL_MS, &id);
		sv_identity_free(id);
	}
	for (int i = 0; i < 5 && hb == SV_OK && c != NULL; i++) {
		hb = sv_client_heartbeat(c, VICTIM_CALL_MS);
	}
	if (c == NULL) {
		hb = w;
	}
	snprintf(line, sizeof(line), "whoami=%s heartbeat=%s\n",
	    sv_err_name(w), sv_err_name(hb));
	if (w != SV_OK || hb != SV_OK) {
		fprintf(stderr, "sv-connflood victim: %s", line);
	}
	if (write_line(out, line) != 0) {
		return 1;
	}
	hold();
	sv_client_close(c);
	return 0;
}

int
main(int argc, char **argv)
{
	struct rlimit rl;
	sigset_t      set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void) setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (argc == 5 && strcmp(argv[1], "flood") == 0) {
		long max = strtol(argv[3], NULL, 10);
		long n   = strtol(argv[4], NULL, 10);

		if (max < 1 || n < 1 || n > FLOOD_MAX_PROC) {
			fprintf(stderr, "sv-connflood: bad MAX or PROCS\n");
			return 2;
		}
		return flood(argv[2], max, n);
	}
	if (argc == 3 && strcmp(argv[1], "victim") == 0) {
		return victim(argv[2]);
	}
	fprintf(
	    stderr, "usage: sv-connflood flood OUT MAX PROCS | victim OUT\n");
	return 2;
}
