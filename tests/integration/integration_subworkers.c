/*
 * integration_subworkers.c — sub-workers end to end (issue 8, "Nested
 * workers"; docs/subworkers.md): a real supervised and sv-subworker
 * workers that register threads and a forked child.
 *
 * Checked:
 *   - a worker's three threads t0..t2 get the numbers 0..2 (each once),
 *     kind THREAD, context [process p, thread t], parent {PROCESS, p} with
 *     the worker's generation;
 *   - a released thread registered again gets the same number with the
 *     next sub-generation; a re-claim without a release answers again=1
 *     with the same number and sub-generation;
 *   - the forked child gets [process p, process 0]; its own WhoAmI answers
 *     that sub-worker identity (kind PROCESS, its pid, parent p);
 *   - two workers' thread 0 are told apart by the parent frame;
 *   - when a worker is killed, its numbers are reclaimed: its next
 *     generation's threads take their numbers again by label with the
 *     sub-generations going on, and its new child gets number 0 again;
 *   - a process that is no worker is refused (NOT_A_WORKER); the feature
 *     is advertised;
 *   - ReleaseSubWorker from a process that is no worker and no worker's
 *     child: NOT_A_WORKER for kind PROCESS, NOT_FOUND for THREAD, never
 *     success; kind 0 is a BAD_REQUEST that says the kind is wrong.
 * Every wait polls with a deadline; processes are ended by pid.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"

#include <signal.h>
#include <stdio.h>

#include <nng/protocol/reqrep0/req.h>

#include "supervise/v1/supervise.pb-c.h"
#include <stdlib.h>
#include <string.h>

#define CALL    IT_CALL_MS
#define NEVENTS 9 /* reports of one worker's script */

static char sw_path[512]; /* sv-subworker */

/* A report of sv-subworker, parsed. */
typedef struct sw_rep {
	long      pid;
	char      ev[16], label[16];
	int       rc, kind, pkind, again;
	long      ord, pord;
	long long gen, pgen, pid2;
	size_t    nctx;
} sw_rep;

/* sw_num reads the number of key in raw (-1 when absent). */
static long long
sw_num(const char *raw, const char *key)
{
	char v[32];
	return it_report_field(raw, key, v, sizeof(v)) ? strtoll(v, NULL, 10)
	                                               : -1;
}

/* sw_recv waits for the next report. */
static void
sw_recv(it_ctx *ctx, sw_rep *r)
{
	struct it_report ir;

	if (it_recv_report(ctx, IT_REPORT_MS, &ir) != 0) {
		fail_msg("no sub-worker report within %d ms", IT_REPORT_MS);
	}
	memset(r, 0, sizeof(*r));
	r->pid = ir.pid;
	if (!it_report_field(ir.raw, "ev", r->ev, sizeof(r->ev))
	    || !it_report_field(ir.raw, "label", r->label, sizeof(r->label))) {
		fail_msg("bad report: %s", ir.raw);
	}
	r->rc    = (int) sw_num(ir.raw, "rc");
	r->ord   = (long) sw_num(ir.raw, "ord");
	r->gen   = sw_num(ir.raw, "gen");
	r->kind  = (int) sw_num(ir.raw, "kind");
	r->nctx  = (size_t) sw_num(ir.raw, "nctx");
	r->pid2  = sw_num(ir.raw, "pid2");
	r->pkind = (int) sw_num(ir.raw, "pkind");
	r->pord  = (long) sw_num(ir.raw, "pord");
	r->pgen  = sw_num(ir.raw, "pgen");
	r->again = (int) sw_num(ir.raw, "again");
	if (r->rc != SV_OK) {
		fail_msg("%s %s: rc %d: %s", r->ev, r->label, r->rc, ir.raw);
	}
}

/* One worker's script, as reported. */
typedef struct sw_run {
	long   pid; /* the worker's */
	sw_rep thread[3]; /* by label t0..t2 */
	sw_rep release, rethread, again, child, childwho;
} sw_run;

/* sw_collect gathers the reports of n workers (in any interleaving). */
static void
sw_collect(it_ctx *ctx, sw_run *runs, size_t n)
{
	size_t nrun = 0;

	memset(runs, 0, n * sizeof(*runs));
	for (size_t k = 0; k < n * NEVENTS; k++) {
		sw_rep  r;
		sw_run *run = NULL;
		sw_recv(ctx, &r);
		for (size_t i = 0; run == NULL && i < nrun; i++) {
			if (runs[i].pid == r.pid) {
				run = &runs[i];
			}
		}
		if (run == NULL) {
			if (nrun == n) {
				fail_msg("a report of a %zuth process", n + 1);
			}
			run      = &runs[nrun++];
			run->pid = r.pid;
		}
		if (strcmp(r.ev, "thread") == 0) {
			int i = r.label[1] - '0';
			assert_true(i >= 0 && i < 3);
			run->thread[i] = r;
		} else if (strcmp(r.ev, "release") == 0) {
			run->release = r;
		} else if (strcmp(r.ev, "rethread") == 0) {
			run->rethread = r;
		} else if (strcmp(r.ev, "again") == 0) {
			run->again = r;
		} else if (strcmp(r.ev, "child") == 0) {
			run->child = r;
		} else if (strcmp(r.ev, "childwho") == 0) {
			run->childwho = r;
		}
	}
}

/* sw_check asserts one worker's script: ordinal is the worker's. */
static void
sw_check(const sw_run *run, long ordinal, long long wgen)
{
	bool seen[3] = {false, false, false};

	for (int i = 0; i < 3; i++) {
		const sw_rep *t = &run->thread[i];
		assert_int_equal(t->kind, SV_KIND_THREAD);
		assert_int_equal(t->nctx, 2);
		assert_int_equal(t->pkind, SV_KIND_PROCESS);
		assert_int_equal(t->pord, ordinal);
		assert_int_equal(t->pgen, wgen);
		assert_int_equal(t->pid2, run->pid);
		assert_true(t->ord >= 0 && t->ord < 3);
		assert_false(seen[t->ord]);
		seen[t->ord] = true;
		assert_int_equal(t->again, 0);
	}
	/* t1 released and back: the same number, the next sub-generation. */
	assert_int_equal(run->rethread.ord, run->thread[1].ord);
	assert_int_equal(run->rethread.gen, run->thread[1].gen + 1);
	assert_int_equal(run->rethread.again, 0);
	/* t0 claimed again while held: unchanged, again. */
	assert_int_equal(run->again.ord, run->thread[0].ord);
	assert_int_equal(run->again.gen, run->thread[0].gen);
	assert_int_equal(run->again.again, 1);
	/* The child: [process p, process 0], also from its own WhoAmI. */
	assert_int_equal(run->child.kind, SV_KIND_PROCESS);
	assert_int_equal(run->child.ord, 0);
	assert_int_equal(run->child.nctx, 2);
	assert_int_equal(run->child.pord, ordinal);
	assert_int_equal(run->child.pgen, wgen);
	assert_int_not_equal(run->child.pid2, run->pid);
	assert_int_equal(run->childwho.kind, SV_KIND_PROCESS);
	assert_int_equal(run->childwho.ord, run->child.ord);
	assert_int_equal(run->childwho.gen, run->child.gen);
	assert_int_equal(run->childwho.pid2, run->child.pid2);
	assert_int_equal(run->childwho.nctx, 2);
	assert_int_equal(run->childwho.pord, ordinal);
}

/* sw_ordinal finds the ordinal and generation of worker pid. */
static void
sw_ordinal(it_ctx *ctx, long pid, long *ordinal, long long *gen)
{
	sv_workers *w = NULL;

	IT_PASS(ctx, sv_client_list(ctx->client, "web", CALL, &w));
	for (size_t i = 0; i < sv_workers_count(w); i++) {
		if (sv_workers_pid(w, i) == pid) {
			*ordinal = (long) sv_workers_ordinal(w, i);
			*gen     = (long long) sv_workers_generation(w, i);
			sv_workers_free(w);
			return;
		}
	}
	sv_workers_free(w);
	fail_msg("pid %ld is not a worker of web", pid);
}

static int
setup(void **state)
{
	static const struct it_group g[] = {
	    {.name = "web", .count = 2, .program = sw_path},
	};
	return it_setup_groups(state, g, 1);
}

/* Two workers, threads and a child each; then one is killed and its next
 * generation registers again. */
static void
test_subworkers(void **state)
{
	it_ctx      *ctx = *state;
	sw_run       runs[2], again[1];
	long         ord[2];
	long long    gen[2], ngen;
	long         nord;
	sv_identity *id      = NULL;
	sv_hello    *h       = NULL;
	bool         feature = false;

	IT_PASS(ctx, sv_client_hello(ctx->client, CALL, &h));
	for (size_t i = 0; i < sv_hello_feature_count(h); i++) {
		feature = feature
		    || strcmp(sv_hello_feature(h, i), "subworkers") == 0;
	}
	assert_true(feature);
	assert_true(sv_hello_minor_version(h) >= 4);
	sv_hello_free(h);

	sw_collect(ctx, runs, 2);
	for (int i = 0; i < 2; i++) {
		sw_ordinal(ctx, runs[i].pid, &ord[i], &gen[i]);
		sw_check(&runs[i], ord[i], gen[i]);
	}
	/* Thread 0 of each worker: the same number, told apart by the
	 * parent frame. */
	for (int i = 0; i < 2; i++) {
		for (int t = 0; t < 3; t++) {
			if (runs[i].thread[t].ord == 0) {
				assert_int_equal(
				    runs[i].thread[t].pord, ord[i]);
			}
		}
	}
	assert_int_not_equal(ord[0], ord[1]);

	/* The test process is no worker, and its parent is none either. */
	IT_FAIL(ctx,
	    sv_client_subworker_register(
	        ctx->client, SV_KIND_THREAD, "x", -1, 0, CALL, &id, NULL),
	    SV_ENOTWORKER);
	IT_FAIL(ctx,
	    sv_client_subworker_register(
	        ctx->client, SV_KIND_PROCESS, NULL, -1, 0, CALL, &id, NULL),
	    SV_ENOTWORKER);

	/* Kill the first worker: its numbers are reclaimed, and its next
	 * generation's threads take them again by label, sub-generations
	 * going on (a process that was never reclaimed would leave its
	 * successor a fresh table, starting at 0). */
	assert_int_equal(kill((pid_t) runs[0].pid, SIGKILL), 0);
	sw_collect(ctx, again, 1);
	sw_ordinal(ctx, again[0].pid, &nord, &ngen);
	assert_int_equal(nord, ord[0]);
	assert_true(ngen > gen[0]);
	sw_check(&again[0], nord, ngen);
	for (int t = 0; t < 3; t++) {
		const sw_rep *o = &runs[0].thread[t], *n = &again[0].thread[t];
		if (t == 1) {
			o = &runs[0].rethread;
		}
		assert_int_equal(n->ord, o->ord);
		assert_true(n->gen > o->gen);
	}
	/* The old child died with its worker; the new one takes number 0 with
	 * the next sub-generation. */
	assert_int_equal(again[0].child.ord, 0);
	assert_int_equal(again[0].child.gen, runs[0].child.gen + 1);
}

/* release_raw sends ReleaseSubWorker{kind} from the test process (no
 * worker, and its parent none either) on a fresh REQ socket and checks
 * the Error: code want, a message containing has (NULL: any non-empty). */
static void
release_raw(it_ctx *ctx, int kind, int want, const char *has)
{
	Supervise__V1__Envelope         env = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__ReleaseSubWorker rel
	    = SUPERVISE__V1__RELEASE_SUB_WORKER__INIT;
	Supervise__V1__Envelope *rep = NULL;
	uint8_t                  buf[64];
	size_t                   len;
	nng_socket               s;
	nng_msg                 *m = NULL;
	int                      rv;

	rel.kind       = (Supervise__V1__WorkerKind) kind;
	rel.number     = 0;
	rel.generation = 0;
	env.version    = 1;
	env.request_id = 7;
	env.body_case  = SUPERVISE__V1__ENVELOPE__BODY_RELEASE_SUB_WORKER;
	env.release_sub_worker = &rel;
	assert_true(
	    supervise__v1__envelope__get_packed_size(&env) <= sizeof(buf));
	len = supervise__v1__envelope__pack(&env, buf);
	assert_int_equal(nng_req0_open(&s), 0);
	assert_int_equal(nng_socket_set_ms(s, NNG_OPT_RECVTIMEO, CALL), 0);
	assert_int_equal(nng_socket_set_ms(s, NNG_OPT_SENDTIMEO, CALL), 0);
	assert_int_equal(nng_dial(s, ctx->url, NULL, 0), 0);
	assert_int_equal(nng_msg_alloc(&m, 0), 0);
	assert_int_equal(nng_msg_append(m, buf, len), 0);
	if ((rv = nng_sendmsg(s, m, 0)) != 0) {
		nng_msg_free(m);
		fail_msg("send ReleaseSubWorker: %s", nng_strerror(rv));
	}
	if ((rv = nng_recvmsg(s, &m, 0)) != 0) {
		fail_msg("ReleaseSubWorker: no reply: %s", nng_strerror(rv));
	}
	rep = supervise__v1__envelope__unpack(
	    NULL, nng_msg_len(m), nng_msg_body(m));
	nng_msg_free(m);
	nng_close(s);
	assert_non_null(rep);
	if (rep->body_case != SUPERVISE__V1__ENVELOPE__BODY_ERROR
	    || rep->error == NULL) {
		fail_msg("ReleaseSubWorker{kind %d} from no worker answered "
		         "body %d, not an Error",
		    kind, (int) rep->body_case);
	}
	print_message("[subworkers] ReleaseSubWorker{kind %d}: Error %d "
	              "\"%s\"\n",
	    kind, (int) rep->error->code, rep->error->message);
	assert_int_equal((int) rep->error->code, want);
	assert_non_null(rep->error->message);
	assert_true(rep->error->message[0] != '\0');
	if (has != NULL && strstr(rep->error->message, has) == NULL) {
		fail_msg("message \"%s\" does not say \"%s\"",
		    rep->error->message, has);
	}
	if (strstr(rep->error->message, "label") != NULL) {
		fail_msg("ReleaseSubWorker{kind %d}: the message \"%s\" is "
		         "about labels, which a release has none of",
		    kind, rep->error->message);
	}
	supervise__v1__envelope__free_unpacked(rep, NULL);
}

/* A release from a process that is no worker and no worker's child is
 * refused for either kind, and a release of kind 0 says the kind is
 * wrong. */
static void
test_release_by_stranger(void **state)
{
	it_ctx *ctx = *state;

	release_raw(ctx, SV_KIND_PROCESS,
	    SUPERVISE__V1__ERROR_CODE__ERROR_CODE_NOT_A_WORKER, NULL);
	release_raw(ctx, SV_KIND_THREAD,
	    SUPERVISE__V1__ERROR_CODE__ERROR_CODE_NOT_FOUND, NULL);
	release_raw(
	    ctx, 0, SUPERVISE__V1__ERROR_CODE__ERROR_CODE_BAD_REQUEST, "kind");
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
	        test_subworkers, setup, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_release_by_stranger, setup, it_teardown),
	};

	it_args(argc, argv);
	it_sibling_program(sw_path, sizeof(sw_path), "sv-subworker");
	return it_finish(cmocka_run_group_tests_name(
	    "integration_subworkers", tests, NULL, NULL));
}
