/*
 * whoami_worker.c — the smallest useful libsupervise worker, in C.
 *
 * Started by supervised, it asks "which worker am I" over the control socket
 * ($SUPERVISE_URL) and prints the answer, then waits for SIGTERM and exits 0
 * ("finish what you hold, then exit"). With --interval-ms N it asks and
 * prints again every N ms, which shows the identity staying put while the
 * supervisor restarts other workers.
 *
 *   usage: whoami-worker [--interval-ms N]
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <supervise/client.h>

/* print_identity asks the supervisor and prints one line; returns sv_err. */
static sv_err
print_identity(sv_client *c)
{
	sv_identity *id;
	sv_kind      kind;
	uint32_t     ord;
	const char  *name;
	char         ctx[256] = "";
	size_t       off      = 0;
	sv_err       err      = sv_client_whoami(c, 5000, &id);

	if (err != SV_OK) {
		fprintf(stderr, "[c] whoami: %s (%s)\n", sv_strerror(err),
		    sv_client_error_message(c));
		return err;
	}
	for (size_t i = 0; i < sv_identity_frame_count(id); i++) {
		if (sv_identity_frame(id, i, &kind, &ord, &name) == SV_OK) {
			int n = snprintf(ctx + off, sizeof(ctx) - off,
			    "%s%s:%s/%u", i ? " > " : "",
			    kind == SV_KIND_THREAD ? "thread" : "process",
			    name, ord);
			if (n > 0 && (size_t) n < sizeof(ctx) - off) {
				off += (size_t) n;
			}
		}
	}
	printf(
	    "[c] I am %s[%u] generation %llu pid %lld of %u, purpose \"%s\", "
	    "context %s, parent %s\n",
	    sv_identity_group(id), sv_identity_ordinal(id),
	    (unsigned long long) sv_identity_generation(id),
	    (long long) sv_identity_pid(id), sv_identity_group_size(id),
	    sv_identity_purpose(id), ctx,
	    sv_identity_parent(id, NULL, NULL, NULL) == SV_OK ? "yes"
	                                                      : "none");
	fflush(stdout);
	sv_identity_free(id);
	return SV_OK;
}

int
main(int argc, char **argv)
{
	long            interval = 0;
	sv_client      *c;
	sigset_t        set;
	int             sig;
	sv_err          err;
	struct timespec ts;

	if (argc == 3 && strcmp(argv[1], "--interval-ms") == 0) {
		interval = strtol(argv[2], NULL, 10);
	} else if (argc != 1) {
		fprintf(stderr, "usage: %s [--interval-ms N]\n", argv[0]);
		return 100;
	}
	/* Take SIGTERM synchronously: we exit cleanly when asked. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);

	if ((err = sv_client_open(&c, NULL, 5000)) != SV_OK) {
		fprintf(stderr, "[c] cannot reach the supervisor: %s\n",
		    sv_strerror(err));
		return 111;
	}
	if (print_identity(c) != SV_OK) {
		sv_client_close(c);
		return 1;
	}
	for (;;) {
		if (interval > 0) {
			ts.tv_sec  = interval / 1000;
			ts.tv_nsec = (interval % 1000) * 1000000;
			sig        = sigtimedwait(&set, NULL, &ts);
			if (sig < 0 && errno == EAGAIN) {
				print_identity(c);
				continue;
			}
		} else {
			sig = sigwaitinfo(&set, NULL);
		}
		if (sig == SIGTERM || sig == SIGINT) {
			break;
		}
	}
	printf("[c] %s[%s] got SIGTERM: finishing and exiting 0\n",
	    getenv("SUPERVISE_GROUP"), getenv("SUPERVISE_ORDINAL"));
	sv_client_close(c);
	return 0;
}
