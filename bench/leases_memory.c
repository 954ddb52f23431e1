/*
 * leases_memory.c — measurement 8 of sv-bench (issue 7), its memory half:
 * the daemon's VmRSS growth from a warmed-up daemon to one holding 10,000
 * leases.
 *
 * Design: a fresh daemon, warmed up (one session, one acquire and release
 * on a one-slot pool), then 10 pools of 1,000 slots (SV_LEASE_MAX_SLOTS is
 * 4,096 and a holder holds at most one lease per pool, so 10,000 leases
 * need 10 pools), 1,000 sessions (the daemon's limit is 1,024), and every
 * session acquires one lease in every pool. VmRSS is read after each stage
 * and ListPools must count 10,000 held. The target is on the growth from
 * the warmed-up daemon to the one holding the leases.
 *
 * The daemon is started through the harness (ls_daemon_start in
 * bench_leases.c, on daemon_start) and stopped before ls_memory returns;
 * cleanup() ends it after an interruption.
 */
#include "leases_bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <supervise/client.h>

#define LS_MEM_POOLS    10
#define LS_MEM_SLOTS    1000
#define LS_MEM_SESSIONS 1000

/* ls_rss reads the daemon's VmRSS in kB, -1 when it is gone. */
static long
ls_rss(void)
{
	return g_daemon_pid > 0 ? proc_status_kb(g_daemon_pid, "VmRSS") : -1;
}

/* ls_warm makes one session, one acquire and one release on pool "warm". */
static sv_err
ls_warm(sv_client *c)
{
	sv_lease *l = NULL;
	uint64_t  s = 0;
	sv_err    err;

	if ((err = sv_client_pool_create(
	         c, "warm", 1, 0, 0, NULL, NULL, NULL, RPC_TIMEOUT_MS))
	        != SV_OK
	    || (err = sv_client_session_open(
	            c, LS_SESSION_TTL, RPC_TIMEOUT_MS, &s))
	        != SV_OK
	    || (err = sv_client_lease_acquire(
	            c, "warm", SV_LEASE_ANY_SLOT, 0, s, RPC_TIMEOUT_MS, &l))
	        != SV_OK)
		return err;
	err = sv_client_lease_release(c, sv_lease_id(l), s, RPC_TIMEOUT_MS);
	sv_lease_free(l);
	if (err == SV_OK)
		err = sv_client_session_close(c, s, RPC_TIMEOUT_MS);
	return err;
}

/* ls_held sums the held slots of every pool (ListPools); -1 on error. */
static long
ls_held(sv_client *c)
{
	sv_pools *p    = NULL;
	long      held = 0;
	size_t    i;

	if (sv_client_pools(c, RPC_TIMEOUT_MS, &p) != SV_OK)
		return -1;
	for (i = 0; i < sv_pools_count(p); i++)
		held += (long) sv_pools_held(p, i);
	sv_pools_free(p);
	return held;
}

/*
 * ls_fill opens the sessions (ids in sess) and has each acquire one lease
 * in every pool. Returns 0, or -1 with why set.
 */
static int
ls_fill(sv_client *c, uint64_t *sess, struct leases_result *res, char *why,
    size_t whylen)
{
	char    name[32];
	long    s, p;
	int64_t t0;
	sv_err  err;

	for (s = 0; s < res->sessions; s++)
		if ((err = sv_client_session_open(
		         c, LS_SESSION_TTL, RPC_TIMEOUT_MS, &sess[s]))
		    != SV_OK) {
			snprintf(why, whylen, "session %ld: %s: %s", s,
			    sv_strerror(err), sv_client_error_message(c));
			return -1;
		}
	res->rss_sessions_kb = ls_rss();
	t0                   = now_ns();
	for (p = 0; p < res->pools; p++) {
		snprintf(name, sizeof(name), "mem%ld", p);
		for (s = 0; s < res->sessions && !g_interrupted; s++) {
			sv_lease *l = NULL;

			if ((err = sv_client_lease_acquire(c, name,
			         SV_LEASE_ANY_SLOT, 0, sess[s], RPC_TIMEOUT_MS,
			         &l))
			    != SV_OK) {
				snprintf(why, whylen,
				    "acquire %s for session %ld: %s: %s", name,
				    s, sv_strerror(err),
				    sv_client_error_message(c));
				return -1;
			}
			sv_lease_free(l);
		}
	}
	res->fill_ns = now_ns() - t0;
	if (g_interrupted) {
		snprintf(why, whylen, "interrupted");
		return -1;
	}
	return 0;
}

/* ls_memory measures the daemon's memory with 10,000 leases held. */
int
ls_memory(struct leases_result *res)
{
	char         *why    = res->why_mem;
	size_t        whylen = sizeof(res->why_mem);
	struct daemon d;
	sv_client    *c    = NULL;
	uint64_t     *sess = NULL;
	char          name[32];
	sv_err        err;
	long          p;
	int           ret = -1;

	note("8/9 leases: daemon memory with %d leases held",
	    LS_MEM_POOLS * LS_MEM_SESSIONS);
	res->pools    = LS_MEM_POOLS;
	res->slots    = LS_MEM_SLOTS;
	res->sessions = LS_MEM_SESSIONS;
	if ((sess = calloc(LS_MEM_SESSIONS, sizeof(*sess))) == NULL) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	if (ls_daemon_start(
	        &d, "d8m", "sv-bench lease memory (idle)", why, whylen)
	    != 0)
		goto out;
	if ((err = sv_client_open(&c, d.url, RPC_TIMEOUT_MS)) != SV_OK
	    || (err = ls_warm(c)) != SV_OK) {
		snprintf(why, whylen, "warm-up: %s: %s", sv_strerror(err),
		    c != NULL ? sv_client_error_message(c) : "");
		goto stop;
	}
	res->rss0_kb = ls_rss();
	for (p = 0; p < LS_MEM_POOLS; p++) {
		snprintf(name, sizeof(name), "mem%ld", p);
		if ((err = sv_client_pool_create(c, name, LS_MEM_SLOTS, 0, 0,
		         NULL, NULL, NULL, RPC_TIMEOUT_MS))
		    != SV_OK) {
			snprintf(why, whylen, "pool_create %s: %s: %s", name,
			    sv_strerror(err), sv_client_error_message(c));
			goto stop;
		}
	}
	res->rss_pools_kb = ls_rss();
	if (ls_fill(c, sess, res, why, whylen) != 0)
		goto stop;
	res->rss_leases_kb = ls_rss();
	res->hwm_kb
	    = g_daemon_pid > 0 ? proc_status_kb(g_daemon_pid, "VmHWM") : -1;
	res->leases = ls_held(c);
	if (res->leases != (long) LS_MEM_POOLS * LS_MEM_SESSIONS) {
		snprintf(why, whylen,
		    "ListPools counts %ld leases held, not %d", res->leases,
		    LS_MEM_POOLS * LS_MEM_SESSIONS);
		goto stop;
	}
	if (res->rss0_kb < 0 || res->rss_leases_kb < 0) {
		snprintf(why, whylen, "cannot read the daemon's VmRSS");
		goto stop;
	}
	res->mem_ok = true;
	ret         = 0;
stop:
	sv_client_close(c);
	daemon_stop(&d, 10000, NULL);
out:
	free(sess);
	return ret;
}
