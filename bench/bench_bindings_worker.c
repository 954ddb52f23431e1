/*
 * bench_bindings_worker.c — sv-bench-bindings-c, the C reference worker of
 * bench_bindings.py (the per-language benchmark: whoami, activity, leases).
 *
 * It runs under supervised like the Python, Ruby and Lua workers of the
 * benchmark and answers the same commands, so the C client and each
 * binding are timed in the same run, on the same daemon, by the same
 * clock (CLOCK_MONOTONIC):
 *
 *   live N     N calls of sv_client_whoami + sv_identity_free on one
 *              client opened at start; each call timed on its own
 *   env N K    N samples, each the time of K reads of the identity from
 *              the SUPERVISE_* variables (getenv + a checked strtoull of
 *              the numbers: what a C worker does without the client)
 *   act N K    N samples, each the time of K sv_activity_enter +
 *              sv_activity_leave pairs on the region of $SUPERVISE_ACTIVITY
 *              (opened at start; "err" without one)
 *   lease N K POOL
 *              N samples, each the time of K sv_client_lease_acquire (any
 *              slot, no wait, this worker as the holder) + sv_lease_free +
 *              sv_client_lease_release pairs on pool POOL (1..64 bytes of
 *              [A-Za-z0-9_.-]); "err" when a call fails or a slot's fencing
 *              token does not grow between two grants
 *   quit       exit 0
 *
 * Commands arrive one per line on the FIFO argv[1]; the answer, one line
 * on the FIFO argv[2], is "ok" and the N times in nanoseconds, or "err"
 * and a reason. N is at most MAX_SAMPLES and K at most MAX_BATCH.
 * Exit status: 0 after quit or end of input, 1 on an error before the
 * command loop (FIFOs, client), 2 for bad usage.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervise/activity.h"
#include <time.h>

#include "supervise/client.h"

#include "bench_worker.h"

#define MAX_SAMPLES     100000
#define MAX_BATCH       10000
#define MAX_LINE        160
#define MAX_POOL        64
#define CALL_TIMEOUT_MS 5000

/* The identity as the environment gives it (borrowed strings). */
struct env_identity {
	const char *group;
	const char *purpose;
	const char *supervisor_id;
	const char *url;
	uint32_t    ordinal;
	uint64_t    generation;
};

/* Keeps the compiler from dropping the timed reads. */
static volatile uint64_t sink;

/*
 * env_u64 parses variable name as a decimal number <= max into *out.
 * Returns 0, or -1 when it is unset, empty, not a number or too large.
 */
static int
env_u64(const char *name, uint64_t max, uint64_t *out)
{
	const char        *s = getenv(name);
	char              *end;
	unsigned long long v;

	if (s == NULL || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v     = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v > max)
		return -1;
	*out = (uint64_t) v;
	return 0;
}

/*
 * env_identity_read fills *id from the SUPERVISE_* variables. Returns 0,
 * or -1 when one is missing or malformed (not a supervised worker).
 */
static int
env_identity_read(struct env_identity *id)
{
	uint64_t ord;

	id->group         = getenv("SUPERVISE_GROUP");
	id->purpose       = getenv("SUPERVISE_PURPOSE");
	id->supervisor_id = getenv("SUPERVISE_SUPERVISOR_ID");
	id->url           = getenv(SV_ENV_URL);
	if (id->group == NULL || id->purpose == NULL
	    || id->supervisor_id == NULL || id->url == NULL)
		return -1;
	if (env_u64("SUPERVISE_ORDINAL", UINT32_MAX, &ord) != 0
	    || env_u64("SUPERVISE_GENERATION", UINT64_MAX, &id->generation)
	        != 0)
		return -1;
	id->ordinal = (uint32_t) ord;
	return 0;
}

/* time_live times n whoami calls into t[]. Returns 0 or an sv_err. */
static sv_err
time_live(sv_client *c, uint64_t *t, long n)
{
	for (long i = 0; i < n; i++) {
		sv_identity *id;
		int64_t      t0 = bw_now_ns();
		sv_err       err;

		if ((err = sv_client_whoami(c, CALL_TIMEOUT_MS, &id)) != SV_OK)
			return err;
		sink += sv_identity_ordinal(id);
		sv_identity_free(id);
		t[i] = (uint64_t) (bw_now_ns() - t0);
	}
	return SV_OK;
}

/* time_env times n batches of k environment reads into t[]. */
static int
time_env(uint64_t *t, long n, long k)
{
	for (long i = 0; i < n; i++) {
		int64_t t0 = bw_now_ns();

		for (long j = 0; j < k; j++) {
			struct env_identity id;

			if (env_identity_read(&id) != 0)
				return -1;
			sink += id.ordinal + id.generation;
		}
		t[i] = (uint64_t) (bw_now_ns() - t0);
	}
	return 0;
}

/* time_act times n batches of k enter + leave pairs on r into t[]. */
static sv_err
time_act(sv_activity_region *r, uint64_t *t, long n, long k)
{
	sv_err err;

	for (long i = 0; i < n; i++) {
		int64_t t0 = bw_now_ns();

		for (long j = 0; j < k; j++) {
			if ((err = sv_activity_enter(r, "bench")) != SV_OK
			    || (err = sv_activity_leave(r)) != SV_OK)
				return err;
		}
		t[i] = (uint64_t) (bw_now_ns() - t0);
	}
	return SV_OK;
}

/*
 * time_lease times n batches of k lease acquire + release pairs on pool
 * into t[]. Only this worker runs while it is timed and it releases every
 * lease before the next acquire, so consecutive grants of one slot must
 * carry growing fencing tokens; a token that does not grow sets *stale
 * and returns SV_EPROTO. Returns SV_OK or the failing call's sv_err.
 */
static sv_err
time_lease(
    sv_client *c, const char *pool, uint64_t *t, long n, long k, int *stale)
{
	static int64_t  last_slot = -1;
	static uint64_t last_token;
	sv_err          err;

	for (long i = 0; i < n; i++) {
		int64_t t0 = bw_now_ns();

		for (long j = 0; j < k; j++) {
			sv_lease *l;
			uint64_t  id, token;
			int64_t   slot;

			err = sv_client_lease_acquire(c, pool,
			    SV_LEASE_ANY_SLOT, 0, 0, CALL_TIMEOUT_MS, &l);
			if (err != SV_OK)
				return err;
			id    = sv_lease_id(l);
			token = sv_lease_token(l);
			slot  = (int64_t) sv_lease_slot(l);
			sv_lease_free(l);
			if ((err = sv_client_lease_release(
			         c, id, 0, CALL_TIMEOUT_MS))
			    != SV_OK)
				return err;
			if (slot == last_slot && token <= last_token) {
				*stale = 1;
				return SV_EPROTO;
			}
			last_slot  = slot;
			last_token = token;
		}
		t[i] = (uint64_t) (bw_now_ns() - t0);
	}
	return SV_OK;
}

/* pool_ok tells whether s is a pool name: 1..MAX_POOL of [A-Za-z0-9_.-]. */
static int
pool_ok(const char *s)
{
	size_t n = strlen(s);

	return n >= 1 && n <= MAX_POOL
	    && strspn(s,
	           "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	           "0123456789_.-")
	    == n;
}

/* reply writes "ok t0 t1 ..." to out. */
static void
reply(FILE *out, const uint64_t *t, long n)
{
	fputs("ok", out);
	for (long i = 0; i < n; i++)
		fprintf(out, " %" PRIu64, t[i]);
	fputc('\n', out);
	fflush(out);
}

/*
 * serve answers the commands read from in on out until quit or end of
 * input. t holds MAX_SAMPLES entries.
 */
static void
serve(FILE *in, FILE *out, sv_client *c, sv_activity_region *r, uint64_t *t)
{
	char line[MAX_LINE];

	while (fgets(line, sizeof line, in) != NULL) {
		long n = 0, k = 0;
		char pool[MAX_POOL + 2];

		if (strcmp(line, "quit\n") == 0)
			return;
		if (sscanf(line, "live %ld", &n) == 1 && n > 0
		    && n <= MAX_SAMPLES) {
			sv_err err = time_live(c, t, n);

			if (err == SV_OK)
				reply(out, t, n);
			else
				fprintf(
				    out, "err whoami: %s\n", sv_err_name(err));
		} else if (sscanf(line, "env %ld %ld", &n, &k) == 2 && n > 0
		    && n <= MAX_SAMPLES && k > 0 && k <= MAX_BATCH) {
			if (time_env(t, n, k) == 0)
				reply(out, t, n);
			else
				fputs("err not a supervised worker\n", out);
		} else if (sscanf(line, "act %ld %ld", &n, &k) == 2 && n > 0
		    && n <= MAX_SAMPLES && k > 0 && k <= MAX_BATCH) {
			sv_err err
			    = r != NULL ? time_act(r, t, n, k) : SV_ENOTFOUND;
			if (err == SV_OK)
				reply(out, t, n);
			else
				fprintf(out, "err activity: %s\n",
				    sv_err_name(err));
		} else if (sscanf(line, "lease %ld %ld %65s", &n, &k, pool)
		        == 3
		    && n > 0 && n <= MAX_SAMPLES && k > 0 && k <= MAX_BATCH
		    && pool_ok(pool)) {
			int    stale = 0;
			sv_err err   = time_lease(c, pool, t, n, k, &stale);

			if (err == SV_OK)
				reply(out, t, n);
			else
				fprintf(out, "err lease: %s %s\n",
				    sv_err_name(err),
				    stale ? "a fencing token did not grow"
				          : sv_client_error_message(c));
		} else {
			fputs("err bad command\n", out);
		}
		fflush(out);
	}
}

int
main(int argc, char **argv)
{
	FILE               *in, *out;
	sv_client          *c;
	sv_activity_region *r    = NULL;
	const char         *path = getenv("SUPERVISE_ACTIVITY");
	uint64_t           *t;
	sv_err              err;

	if (argc != 3) {
		fprintf(stderr, "usage: %s CMD_FIFO REPLY_FIFO\n", argv[0]);
		return 2;
	}
	if ((err = sv_client_open(&c, NULL, CALL_TIMEOUT_MS)) != SV_OK) {
		fprintf(stderr, "sv-bench-bindings-c: sv_client_open: %s %s\n",
		    sv_err_name(err), sv_client_error_message(NULL));
		return 1;
	}
	t = calloc(MAX_SAMPLES, sizeof *t);
	/* The driver opens the reply FIFO first, then the command FIFO. */
	in  = fopen(argv[1], "r");
	out = in != NULL ? fopen(argv[2], "w") : NULL;
	if (t == NULL || in == NULL || out == NULL) {
		fprintf(stderr, "sv-bench-bindings-c: %s\n", strerror(errno));
		sv_client_close(c);
		free(t);
		if (in != NULL)
			fclose(in);
		return 1;
	}
	if (path != NULL && path[0] != '\0'
	    && sv_activity_region_open(&r, path) != SV_OK)
		r = NULL;
	serve(in, out, c, r, t);
	sv_activity_region_close(r);
	fclose(in);
	fclose(out);
	free(t);
	sv_client_close(c);
	return 0;
}
