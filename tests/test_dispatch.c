/*
 * test_dispatch.c — supervised's request handling without sockets or
 * processes (daemon/supervisor.c, svd_sup_dispatch): every request kind gets
 * its reply or a typed Error carrying the request id, and hostile input
 * (garbage, oversize, replies sent as requests, foreign uids) is refused
 * with the right code. The supervisor is created but its loop is not run,
 * so nothing is spawned.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "supervisor.h"
#include "wire/wire.h"
#include "wire/wire_msg.h"

/* Not executable: a request that spawns at once fails to, so this test
 * never starts a process. */
static char            *argv0[] = {"/nonexistent/sv-dispatch-test", NULL};
static svd_group_config grp;
static svd_config       cfg;

/* setup builds a one-group supervisor (count 2, max 4). */
static int
setup(void **state)
{
	svd_sup *s;

	memset(&grp, 0, sizeof(grp));
	grp.name      = "web";
	grp.argv      = argv0;
	grp.argc      = 1;
	grp.purpose   = "serve";
	grp.count     = 2;
	grp.max_count = 4;
	svd_default_policy(&grp.pol, 100);
	cfg.socket_dir = "/tmp";
	cfg.groups     = &grp;
	cfg.ngroups    = 1;
	if (svd_sup_create(&cfg, "ipc:///tmp/none", &s) != SV_OK) {
		return -1;
	}
	*state = s;
	return 0;
}

/* teardown frees the supervisor. */
static int
teardown(void **state)
{
	svd_sup_destroy(*state);
	return 0;
}

/* call dispatches raw bytes and decodes the reply (any version). */
static svw_env *
call_raw(svd_sup *s, const void *buf, size_t len, uint64_t uid)
{
	nng_msg *rep;
	svw_env *env;

	assert_int_equal(
	    svd_sup_dispatch(s, buf, len, (uint64_t) getpid(), uid, &rep),
	    SV_OK);
	env = supervise__v1__envelope__unpack(
	    NULL, nng_msg_len(rep), nng_msg_body(rep));
	nng_msg_free(rep);
	assert_non_null(env);
	assert_int_equal(env->version, SV_PROTOCOL_VERSION);
	return env;
}

/* call packs req with request id 77 and dispatches it as uid. */
static svw_env *
call(svd_sup *s, svw_env *req, uint64_t uid)
{
	nng_msg *m;
	svw_env *rep;

	req->version    = SV_PROTOCOL_VERSION;
	req->request_id = 77;
	assert_int_equal(svw_encode(req, SVW_MAX_REPLY, &m), SV_OK);
	rep = call_raw(s, nng_msg_body(m), nng_msg_len(m), uid);
	nng_msg_free(m);
	assert_int_equal(rep->request_id, 77);
	return rep;
}

/* expect_error checks that rep is an Error with code err, then frees it. */
static void
expect_error(svw_env *rep, sv_err err)
{
	assert_int_equal(rep->body_case, SUPERVISE__V1__ENVELOPE__BODY_ERROR);
	assert_int_equal(svw_code_to_err(rep->error->code), err);
	assert_true(strlen(rep->error->message) > 0);
	supervise__v1__envelope__free_unpacked(rep, NULL);
}

/* Hello answers version 1 with features; an impossible range is refused. */
static void
test_hello(void **state)
{
	svw_env              e = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__Hello h = SUPERVISE__V1__HELLO__INIT;
	svw_env             *r;

	e.body_case = SUPERVISE__V1__ENVELOPE__BODY_HELLO;
	e.hello     = &h;
	r           = call(*state, &e, 0);
	assert_int_equal(
	    r->body_case, SUPERVISE__V1__ENVELOPE__BODY_HELLO_REPLY);
	assert_int_equal(r->hello_reply->version, 1);
	assert_string_equal(r->hello_reply->supervisor_id, svd_sup_id(*state));
	assert_int_equal(strlen(r->hello_reply->supervisor_id), 32);
	assert_true(r->hello_reply->n_features >= 1);
	assert_string_equal(r->hello_reply->features[0], "identity");
	supervise__v1__envelope__free_unpacked(r, NULL);
	h.min_version = 2;
	h.max_version = 3;
	expect_error(call(*state, &e, 0), SV_EVERSION);
}

/* The test process is not a worker. */
static void
test_whoami_not_worker(void **state)
{
	svw_env               e = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__WhoAmI w = SUPERVISE__V1__WHO_AM_I__INIT;

	e.body_case = SUPERVISE__V1__ENVELOPE__BODY_WHOAMI;
	e.whoami    = &w;
	expect_error(call(*state, &e, 0), SV_ENOTWORKER);
}

/* Listing: empty before the loop runs; unknown and invalid groups refused;
 * status of a slot without a worker is NOT_FOUND. */
static void
test_list_status(void **state)
{
	svw_env                    e = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__ListWorkers l = SUPERVISE__V1__LIST_WORKERS__INIT;
	Supervise__V1__GetStatus   g = SUPERVISE__V1__GET_STATUS__INIT;
	svw_env                   *r;

	e.body_case    = SUPERVISE__V1__ENVELOPE__BODY_LIST_WORKERS;
	e.list_workers = &l;
	r              = call(*state, &e, 0);
	assert_int_equal(
	    r->body_case, SUPERVISE__V1__ENVELOPE__BODY_WORKER_LIST);
	/* No loop has run: both seats wait to be spawned. */
	assert_int_equal(r->worker_list->n_workers, 2);
	assert_int_equal(r->worker_list->workers[1]->ordinal, 1);
	assert_int_equal(r->worker_list->workers[1]->pid, 0);
	assert_int_equal(r->worker_list->workers[1]->state,
	    SUPERVISE__V1__WORKER_STATE__WORKER_STATE_STARTING);
	assert_string_equal(r->worker_list->next_page_token, "");
	supervise__v1__envelope__free_unpacked(r, NULL);
	/* One page of one: the token leads to the second. */
	l.page_size = 1;
	r           = call(*state, &e, 0);
	assert_int_equal(r->worker_list->n_workers, 1);
	assert_int_equal(r->worker_list->workers[0]->ordinal, 0);
	assert_string_not_equal(r->worker_list->next_page_token, "");
	{
		char tok[64];
		snprintf(
		    tok, sizeof(tok), "%s", r->worker_list->next_page_token);
		supervise__v1__envelope__free_unpacked(r, NULL);
		l.page_token = tok;
		r            = call(*state, &e, 0);
		assert_int_equal(r->worker_list->n_workers, 1);
		assert_int_equal(r->worker_list->workers[0]->ordinal, 1);
		assert_string_equal(r->worker_list->next_page_token, "");
		supervise__v1__envelope__free_unpacked(r, NULL);
	}
	l.page_token = "bogus";
	expect_error(call(*state, &e, 0), SV_EBADREQ);
	l.page_token = "";
	l.page_size  = 0;
	l.group      = "nope";
	expect_error(call(*state, &e, 0), SV_ENOTFOUND);
	l.group = "bad name!";
	expect_error(call(*state, &e, 0), SV_EBADREQ);

	e.body_case  = SUPERVISE__V1__ENVELOPE__BODY_GET_STATUS;
	e.get_status = &g;
	g.group      = "web";
	g.ordinal    = 0;
	r            = call(*state, &e, 0);
	assert_int_equal(
	    r->body_case, SUPERVISE__V1__ENVELOPE__BODY_WORKER_STATUS);
	assert_int_equal(r->worker_status->generation, 0);
	supervise__v1__envelope__free_unpacked(r, NULL);
	g.ordinal = 2;
	expect_error(call(*state, &e, 0), SV_ENOTFOUND);
	g.ordinal = UINT32_MAX;
	expect_error(call(*state, &e, 0), SV_ENOTFOUND);
}

/* Scale: bounds, previous count, permission; stop reports the count. */
static void
test_scale_stop(void **state)
{
	svw_env                   e  = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__ScaleGroup sc = SUPERVISE__V1__SCALE_GROUP__INIT;
	Supervise__V1__StopGroup  st = SUPERVISE__V1__STOP_GROUP__INIT;
	svw_env                  *r;

	e.body_case   = SUPERVISE__V1__ENVELOPE__BODY_SCALE_GROUP;
	e.scale_group = &sc;
	sc.group      = "web";
	sc.count      = 5;
	expect_error(call(*state, &e, 0), SV_EEXHAUSTED);
	sc.count = 4;
	/* Another uid may not administer. */
	expect_error(call(*state, &e, (uint64_t) geteuid() + 12345), SV_EPERM);
	r = call(*state, &e, (uint64_t) geteuid());
	assert_int_equal(
	    r->body_case, SUPERVISE__V1__ENVELOPE__BODY_GROUP_CHANGE);
	assert_int_equal(r->group_change->previous_count, 2);
	assert_int_equal(r->group_change->count, 4);
	supervise__v1__envelope__free_unpacked(r, NULL);
	sc.group = "other";
	expect_error(call(*state, &e, 0), SV_ENOTFOUND);

	e.body_case  = SUPERVISE__V1__ENVELOPE__BODY_STOP_GROUP;
	e.stop_group = &st;
	st.group     = "web";
	r            = call(*state, &e, 0);
	assert_int_equal(r->group_change->previous_count, 4);
	assert_int_equal(r->group_change->count, 0);
	supervise__v1__envelope__free_unpacked(r, NULL);
}

/* Restart of an ordinal without a worker is NOT_FOUND; a stale expected
 * generation is CONFLICT; a right one restarts. */
static void
test_restart_missing(void **state)
{
	svw_env                      e  = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__RestartWorker rw = SUPERVISE__V1__RESTART_WORKER__INIT;
	svw_env                     *r;

	e.body_case      = SUPERVISE__V1__ENVELOPE__BODY_RESTART_WORKER;
	e.restart_worker = &rw;
	rw.group         = "web";
	rw.ordinal       = 3;
	expect_error(call(*state, &e, 0), SV_ENOTFOUND);
	rw.ordinal             = 1;
	rw.check_generation    = true;
	rw.expected_generation = 7;
	expect_error(call(*state, &e, 0), SV_ECONFLICT);
	rw.expected_generation = 0;
	r                      = call(*state, &e, 0);
	assert_int_equal(
	    r->body_case, SUPERVISE__V1__ENVELOPE__BODY_WORKER_STATUS);
	supervise__v1__envelope__free_unpacked(r, NULL);
}

/* A legal group of 4,096 workers with 1 KiB purposes does not fit in one
 * reply: unpaged, the supervisor says so with TOO_LARGE; paged, every
 * worker comes back exactly once. */
static void
test_list_pages_big_group(void **state)
{
	static char                purpose[1025];
	static svd_group_config    big;
	static svd_config          bcfg;
	svd_sup                   *s;
	svw_env                    e       = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__ListWorkers l       = SUPERVISE__V1__LIST_WORKERS__INIT;
	char                       tok[64] = "";
	size_t                     total = 0, pages = 0;
	uint32_t                   next = 0;

	(void) state;
	memset(purpose, 'p', sizeof(purpose) - 1);
	big.name      = "big";
	big.argv      = argv0;
	big.argc      = 1;
	big.purpose   = purpose;
	big.count     = 4096;
	big.max_count = 4096;
	svd_default_policy(&big.pol, 100);
	bcfg.socket_dir = "/tmp";
	bcfg.groups     = &big;
	bcfg.ngroups    = 1;
	assert_int_equal(svd_sup_create(&bcfg, "ipc:///tmp/none", &s), SV_OK);
	e.body_case    = SUPERVISE__V1__ENVELOPE__BODY_LIST_WORKERS;
	e.list_workers = &l;
	expect_error(call(s, &e, 0), SV_ETOOLARGE);
	l.page_size = 512;
	do {
		svw_env *r;
		l.page_token = tok;
		r            = call(s, &e, 0);
		assert_int_equal(
		    r->body_case, SUPERVISE__V1__ENVELOPE__BODY_WORKER_LIST);
		for (size_t i = 0; i < r->worker_list->n_workers; i++) {
			assert_int_equal(
			    r->worker_list->workers[i]->ordinal, next);
			next++;
		}
		total += r->worker_list->n_workers;
		snprintf(
		    tok, sizeof(tok), "%s", r->worker_list->next_page_token);
		supervise__v1__envelope__free_unpacked(r, NULL);
		pages++;
	} while (tok[0] != '\0');
	assert_int_equal(total, 4096);
	assert_int_equal(pages, 8);
	svd_sup_destroy(s);
}

/* Hostile input: replies sent as requests, garbage, oversize, empty,
 * another version, an unknown body. */
static void
test_hostile(void **state)
{
	svw_env                    e      = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__GroupChange gc     = SUPERVISE__V1__GROUP_CHANGE__INIT;
	const uint8_t              junk[] = {0xff, 0xff, 0xff, 0xff, 0xff};
	const uint8_t              v2[] = {0x08, 0x02, 0x10, 0x09, 0x52, 0x00};
	const uint8_t unknown[] = {0x08, 0x01, 0x10, 0x05, 0x9a, 0x1f, 0x00};
	uint8_t      *big;
	svw_env      *r;

	e.body_case    = SUPERVISE__V1__ENVELOPE__BODY_GROUP_CHANGE;
	e.group_change = &gc;
	gc.group       = "web";
	expect_error(call(*state, &e, 0), SV_EBADREQ);
	expect_error(call_raw(*state, junk, sizeof(junk), 0), SV_EBADREQ);
	expect_error(call_raw(*state, "", 0, 0), SV_EBADREQ);
	r = call_raw(*state, v2, sizeof(v2), 0);
	assert_int_equal(r->request_id, 9);
	expect_error(r, SV_EVERSION);
	r = call_raw(*state, unknown, sizeof(unknown), 0);
	assert_int_equal(r->request_id, 5);
	expect_error(r, SV_EUNKNOWNMSG);
	big = calloc(1, SVW_MAX_REQUEST + 1);
	assert_non_null(big);
	expect_error(
	    call_raw(*state, big, SVW_MAX_REQUEST + 1, 0), SV_ETOOLARGE);
	free(big);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_hello, setup, teardown),
	    cmocka_unit_test_setup_teardown(
	        test_whoami_not_worker, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_list_status, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_scale_stop, setup, teardown),
	    cmocka_unit_test_setup_teardown(
	        test_restart_missing, setup, teardown),
	    cmocka_unit_test(test_list_pages_big_group),
	    cmocka_unit_test_setup_teardown(test_hostile, setup, teardown),
	};
	return cmocka_run_group_tests_name("dispatch", tests, NULL, NULL);
}
