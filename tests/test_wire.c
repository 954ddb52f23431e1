/*
 * test_wire.c — the envelope codec (wire/wire.c): every message kind
 * round-trips; truncated, garbage, oversize, wrong-version and unknown-body
 * input each give a typed error and never a crash; error replies carry the
 * request id; names are bounded.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "wire/wire.h"
#include "wire/wire_msg.h"

/* pack encodes env into a malloc'd buffer (test helper). */
static uint8_t *
pack(const svw_env *env, size_t *len)
{
	nng_msg *m;
	uint8_t *buf;

	assert_int_equal(svw_encode(env, SVW_MAX_REPLY, &m), SV_OK);
	*len = nng_msg_len(m);
	buf  = malloc(*len + 1);
	assert_non_null(buf);
	memcpy(buf, nng_msg_body(m), *len);
	nng_msg_free(m);
	return buf;
}

/* roundtrip encodes env, decodes it and checks the envelope header. */
static svw_env *
roundtrip(svw_env *env)
{
	size_t   len;
	uint64_t rid;
	svw_env *out = NULL;
	uint8_t *buf;

	env->version    = SV_PROTOCOL_VERSION;
	env->request_id = 0x1122334455667788ull;
	buf             = pack(env, &len);
	assert_int_equal(
	    svw_decode(buf, len, SVW_MAX_REPLY, &out, &rid), SV_OK);
	free(buf);
	assert_non_null(out);
	assert_int_equal(rid, env->request_id);
	assert_int_equal(out->request_id, env->request_id);
	assert_int_equal(out->body_case, env->body_case);
	return out;
}

/* Requests round-trip with their fields. */
static void
test_requests_roundtrip(void **state)
{
	svw_env                      e  = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__Hello         h  = SUPERVISE__V1__HELLO__INIT;
	Supervise__V1__WhoAmI        w  = SUPERVISE__V1__WHO_AM_I__INIT;
	Supervise__V1__ListWorkers   l  = SUPERVISE__V1__LIST_WORKERS__INIT;
	Supervise__V1__GetStatus     g  = SUPERVISE__V1__GET_STATUS__INIT;
	Supervise__V1__ScaleGroup    sc = SUPERVISE__V1__SCALE_GROUP__INIT;
	Supervise__V1__StopGroup     st = SUPERVISE__V1__STOP_GROUP__INIT;
	Supervise__V1__RestartWorker rw = SUPERVISE__V1__RESTART_WORKER__INIT;
	svw_env                     *o;

	(void) state;
	h.client_name = "test";
	h.min_version = 1;
	h.max_version = 3;
	e.body_case   = SUPERVISE__V1__ENVELOPE__BODY_HELLO;
	e.hello       = &h;
	o             = roundtrip(&e);
	assert_string_equal(o->hello->client_name, "test");
	assert_int_equal(o->hello->max_version, 3);
	svw_free(o);

	e.body_case = SUPERVISE__V1__ENVELOPE__BODY_WHOAMI;
	e.whoami    = &w;
	svw_free(roundtrip(&e));

	l.group        = "web";
	e.body_case    = SUPERVISE__V1__ENVELOPE__BODY_LIST_WORKERS;
	e.list_workers = &l;
	o              = roundtrip(&e);
	assert_string_equal(o->list_workers->group, "web");
	svw_free(o);

	g.group      = "web";
	g.ordinal    = 7;
	e.body_case  = SUPERVISE__V1__ENVELOPE__BODY_GET_STATUS;
	e.get_status = &g;
	o            = roundtrip(&e);
	assert_int_equal(o->get_status->ordinal, 7);
	svw_free(o);

	sc.group      = "web";
	sc.count      = 4096;
	e.body_case   = SUPERVISE__V1__ENVELOPE__BODY_SCALE_GROUP;
	e.scale_group = &sc;
	o             = roundtrip(&e);
	assert_int_equal(o->scale_group->count, 4096);
	svw_free(o);

	st.group     = "web";
	e.body_case  = SUPERVISE__V1__ENVELOPE__BODY_STOP_GROUP;
	e.stop_group = &st;
	o            = roundtrip(&e);
	assert_string_equal(o->stop_group->group, "web");
	svw_free(o);

	rw.group         = "web";
	rw.ordinal       = 2;
	e.body_case      = SUPERVISE__V1__ENVELOPE__BODY_RESTART_WORKER;
	e.restart_worker = &rw;
	o                = roundtrip(&e);
	assert_int_equal(o->restart_worker->ordinal, 2);
	svw_free(o);
}

/* Replies round-trip, including nested frames and lists. */
static void
test_replies_roundtrip(void **state)
{
	svw_env                      e     = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__HelloReply    hr    = SUPERVISE__V1__HELLO_REPLY__INIT;
	Supervise__V1__Identity      id    = SUPERVISE__V1__IDENTITY__INIT;
	Supervise__V1__Frame         f0    = SUPERVISE__V1__FRAME__INIT;
	Supervise__V1__Frame         f1    = SUPERVISE__V1__FRAME__INIT;
	Supervise__V1__Frame        *fs[2] = {&f0, &f1};
	Supervise__V1__WorkerStatus  ws[2];
	Supervise__V1__WorkerStatus *wp[2] = {&ws[0], &ws[1]};
	Supervise__V1__WorkerList    wl    = SUPERVISE__V1__WORKER_LIST__INIT;
	Supervise__V1__GroupChange   gc    = SUPERVISE__V1__GROUP_CHANGE__INIT;
	Supervise__V1__Error         er    = SUPERVISE__V1__ERROR__INIT;
	char                        *feats[] = {"identity", "admin.scale"};
	svw_env                     *o;

	(void) state;
	hr.version       = 1;
	hr.server_name   = "supervised/test";
	hr.supervisor_id = "abc";
	hr.n_features    = 2;
	hr.features      = feats;
	e.body_case      = SUPERVISE__V1__ENVELOPE__BODY_HELLO_REPLY;
	e.hello_reply    = &hr;
	o                = roundtrip(&e);
	assert_int_equal(o->hello_reply->n_features, 2);
	assert_string_equal(o->hello_reply->features[1], "admin.scale");
	svw_free(o);

	f0.kind       = SUPERVISE__V1__WORKER_KIND__WORKER_KIND_PROCESS;
	f0.ordinal    = 3;
	f0.name       = "web";
	f1.kind       = SUPERVISE__V1__WORKER_KIND__WORKER_KIND_THREAD;
	f1.ordinal    = 1;
	f1.name       = "pool";
	id.group      = "web";
	id.ordinal    = 3;
	id.generation = UINT64_MAX;
	id.kind       = SUPERVISE__V1__WORKER_KIND__WORKER_KIND_THREAD;
	id.pid        = 4242;
	id.purpose    = "serve";
	id.n_context  = 2;
	id.context    = fs;
	id.parent     = &f0;
	e.body_case   = SUPERVISE__V1__ENVELOPE__BODY_IDENTITY;
	e.identity    = &id;
	o             = roundtrip(&e);
	assert_int_equal(o->identity->generation, UINT64_MAX);
	assert_int_equal(o->identity->n_context, 2);
	assert_string_equal(o->identity->context[1]->name, "pool");
	assert_non_null(o->identity->parent);
	assert_int_equal(o->identity->parent->ordinal, 3);
	svw_free(o);

	for (int i = 0; i < 2; i++) {
		supervise__v1__worker_status__init(&ws[i]);
		ws[i].group          = "web";
		ws[i].ordinal        = (uint32_t) i;
		ws[i].pid            = 100 + i;
		ws[i].last_exit_code = -1;
		ws[i].last_signal    = 9;
		ws[i].state
		    = SUPERVISE__V1__WORKER_STATE__WORKER_STATE_STOPPING;
	}
	wl.n_workers  = 2;
	wl.workers    = wp;
	e.body_case   = SUPERVISE__V1__ENVELOPE__BODY_WORKER_LIST;
	e.worker_list = &wl;
	o             = roundtrip(&e);
	assert_int_equal(o->worker_list->n_workers, 2);
	assert_int_equal(o->worker_list->workers[1]->pid, 101);
	assert_int_equal(o->worker_list->workers[0]->last_exit_code, -1);
	svw_free(o);

	e.body_case     = SUPERVISE__V1__ENVELOPE__BODY_WORKER_STATUS;
	e.worker_status = &ws[0];
	svw_free(roundtrip(&e));

	gc.group          = "web";
	gc.previous_count = 3;
	gc.count          = 5;
	e.body_case       = SUPERVISE__V1__ENVELOPE__BODY_GROUP_CHANGE;
	e.group_change    = &gc;
	o                 = roundtrip(&e);
	assert_int_equal(o->group_change->previous_count, 3);
	svw_free(o);

	er.code     = SUPERVISE__V1__ERROR_CODE__ERROR_CODE_NOT_A_WORKER;
	er.message  = "nope";
	e.body_case = SUPERVISE__V1__ENVELOPE__BODY_ERROR;
	e.error     = &er;
	o           = roundtrip(&e);
	assert_int_equal(svw_code_to_err(o->error->code), SV_ENOTWORKER);
	svw_free(o);
}

/* hello_bytes packs a valid Hello request (test helper). */
static uint8_t *
hello_bytes(uint32_t version, size_t *len)
{
	svw_env              e = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__Hello h = SUPERVISE__V1__HELLO__INIT;

	e.version     = version;
	e.request_id  = 99;
	e.body_case   = SUPERVISE__V1__ENVELOPE__BODY_HELLO;
	e.hello       = &h;
	h.client_name = "truncate-me-please";
	return pack(&e, len);
}

/* Every strict prefix of a valid message is rejected or decodes to a
 * typed error; none crashes (ASan checks the reads). */
static void
test_truncated(void **state)
{
	size_t   len;
	uint8_t *buf = hello_bytes(1, &len);

	(void) state;
	for (size_t cut = 0; cut < len; cut++) {
		svw_env *o = NULL;
		uint64_t rid;
		uint8_t *copy = malloc(cut + 1); /* exact size for ASan */
		memcpy(copy, buf, cut);
		sv_err err = svw_decode(copy, cut, SVW_MAX_REQUEST, &o, &rid);
		assert_int_not_equal(err, SV_OK);
		assert_null(o);
		assert_true(err == SV_EBADREQ || err == SV_EVERSION
		    || err == SV_EUNKNOWNMSG);
		free(copy);
	}
	free(buf);
}

/* Random bytes never crash the decoder and never decode to SV_OK with a
 * body we did not send... unless they happen to be valid, which we accept
 * only with a body set. */
static void
test_garbage(void **state)
{
	unsigned seed = 7;
	uint8_t  buf[256];
	int      ok = 0;

	(void) state;
	for (int i = 0; i < 20000; i++) {
		size_t   len = (size_t) (rand_r(&seed) % sizeof(buf));
		svw_env *o   = NULL;
		uint64_t rid;
		for (size_t k = 0; k < len; k++) {
			buf[k] = (uint8_t) rand_r(&seed);
		}
		sv_err err = svw_decode(buf, len, SVW_MAX_REQUEST, &o, &rid);
		if (err == SV_OK) {
			assert_non_null(o);
			assert_int_not_equal(o->body_case,
			    SUPERVISE__V1__ENVELOPE__BODY__NOT_SET);
			svw_free(o);
			ok++;
		} else {
			assert_null(o);
		}
	}
	/* Random bytes are almost never a valid v1 envelope. */
	assert_true(ok < 20);
	/* A classic: a length prefix claiming 4 GiB in a short buffer. */
	const uint8_t huge[] = {0x52, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x00};
	svw_env      *o      = NULL;
	uint64_t      rid;
	assert_int_equal(
	    svw_decode(huge, sizeof(huge), SVW_MAX_REQUEST, &o, &rid),
	    SV_EBADREQ);
}

/* Oversize input is refused before parsing; oversize output too. */
static void
test_oversize(void **state)
{
	size_t   len;
	uint8_t *buf = hello_bytes(1, &len);
	svw_env *o   = NULL;
	uint64_t rid;
	nng_msg *m;

	(void) state;
	assert_int_equal(
	    svw_decode(buf, len, len - 1, &o, &rid), SV_ETOOLARGE);
	assert_null(o);
	assert_int_equal(svw_decode(buf, len, len, &o, &rid), SV_OK);
	svw_free(o);
	free(buf);

	svw_env              e   = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__Hello h   = SUPERVISE__V1__HELLO__INIT;
	char                *big = malloc(SVW_MAX_REQUEST + 1);
	memset(big, 'x', SVW_MAX_REQUEST);
	big[SVW_MAX_REQUEST] = '\0';
	h.client_name        = big;
	e.version            = 1;
	e.body_case          = SUPERVISE__V1__ENVELOPE__BODY_HELLO;
	e.hello              = &h;
	assert_int_equal(svw_encode(&e, SVW_MAX_REQUEST, &m), SV_ETOOLARGE);
	free(big);
}

/* Version 2 is SV_EVERSION with the request id; version 0 (missing) is
 * SV_EBADREQ; the empty message is an envelope without version. */
static void
test_versions(void **state)
{
	size_t   len;
	uint8_t *buf = hello_bytes(2, &len);
	svw_env *o   = NULL;
	uint64_t rid = 0;

	(void) state;
	assert_int_equal(
	    svw_decode(buf, len, SVW_MAX_REQUEST, &o, &rid), SV_EVERSION);
	assert_null(o);
	assert_int_equal(rid, 99);
	free(buf);
	buf = hello_bytes(0, &len);
	assert_int_equal(
	    svw_decode(buf, len, SVW_MAX_REQUEST, &o, &rid), SV_EBADREQ);
	free(buf);
	assert_int_equal(
	    svw_decode("", 0, SVW_MAX_REQUEST, &o, &rid), SV_EBADREQ);
	assert_null(o);
}

/* A v1 envelope whose body is a field this version does not know (a newer
 * client's message) is SV_EUNKNOWNMSG, and the request id survives. */
static void
test_unknown_body(void **state)
{
	/* version=1 (field 1 varint), request_id=5 (field 2 varint),
	 * field 499 (unassigned) length-delimited, 2 bytes. Tag 499<<3|2 =
	 * 3994 = varint 9a 1f. */
	const uint8_t msg[]
	    = {0x08, 0x01, 0x10, 0x05, 0x9a, 0x1f, 0x02, 0x08, 0x01};
	svw_env *o   = NULL;
	uint64_t rid = 0;

	(void) state;
	assert_int_equal(
	    svw_decode(msg, sizeof(msg), SVW_MAX_REQUEST, &o, &rid),
	    SV_EUNKNOWNMSG);
	assert_null(o);
	assert_int_equal(rid, 5);
}

/* Error replies carry the code, the request id and a bounded message. */
static void
test_error_reply(void **state)
{
	nng_msg *m;
	svw_env *o = NULL;
	uint64_t rid;
	char     longmsg[4000];

	(void) state;
	memset(longmsg, 'y', sizeof(longmsg) - 1);
	longmsg[sizeof(longmsg) - 1] = '\0';
	assert_int_equal(
	    svw_encode_error(42, SV_EEXHAUSTED, longmsg, &m), SV_OK);
	assert_int_equal(svw_decode(nng_msg_body(m), nng_msg_len(m),
	                     SVW_MAX_REPLY, &o, &rid),
	    SV_OK);
	nng_msg_free(m);
	assert_int_equal(rid, 42);
	assert_int_equal(o->body_case, SUPERVISE__V1__ENVELOPE__BODY_ERROR);
	assert_int_equal(svw_code_to_err(o->error->code), SV_EEXHAUSTED);
	assert_int_equal(strlen(o->error->message), SVW_MAX_TEXT);
	svw_free(o);
	/* Local-only errors travel as INTERNAL or BAD_REQUEST. */
	assert_int_equal(svw_err_to_code(SV_ETIMEDOUT),
	    SUPERVISE__V1__ERROR_CODE__ERROR_CODE_INTERNAL);
	assert_int_equal(svw_err_to_code(SV_EINVAL),
	    SUPERVISE__V1__ERROR_CODE__ERROR_CODE_BAD_REQUEST);
	assert_int_equal(
	    svw_code_to_err((Supervise__V1__ErrorCode) 999), SV_EPROTO);
	/* The shared numbering is the contract between enum and proto. */
	assert_int_equal(
	    SUPERVISE__V1__ERROR_CODE__ERROR_CODE_NOT_A_WORKER, SV_ENOTWORKER);
	assert_int_equal(
	    SUPERVISE__V1__ERROR_CODE__ERROR_CODE_INTERNAL, SV_EINTERNAL);
}

/* Group names: 1..64 bytes of [A-Za-z0-9_.-]. */
static void
test_names(void **state)
{
	char n64[65], n65[66];

	(void) state;
	memset(n64, 'a', 64);
	n64[64] = '\0';
	memset(n65, 'a', 65);
	n65[65] = '\0';
	assert_int_equal(svw_check_name("web-1.a_b"), SV_OK);
	assert_int_equal(svw_check_name(n64), SV_OK);
	assert_int_equal(svw_check_name(n65), SV_ETOOLARGE);
	assert_int_equal(svw_check_name(""), SV_EBADREQ);
	assert_int_equal(svw_check_name(NULL), SV_EBADREQ);
	assert_int_equal(svw_check_name("a b"), SV_EBADREQ);
	assert_int_equal(svw_check_name("a/b"), SV_EBADREQ);
	assert_int_equal(svw_check_name("\xc3\xa9"), SV_EBADREQ);
}

/* The error table: names and messages for every code, stable values. */
static void
test_err_table(void **state)
{
	(void) state;
	assert_string_equal(sv_err_name(SV_ENOTFOUND), "ENOTFOUND");
	assert_string_equal(sv_strerror(SV_OK), "success");
	assert_string_equal(sv_err_name((sv_err) 12345), "UNKNOWN");
	assert_string_equal(sv_strerror((sv_err) 12345), "unknown error");
	assert_int_equal(SV_ENOTWORKER, 10);
	assert_int_equal(SV_EINVAL, 100);
	assert_string_equal(sv_version(), SV_VERSION_STRING);
}

/* A string with a NUL byte inside (a group name "web\0x") is refused,
 * at any depth, with the request id kept; the same name without the NUL
 * decodes. */
static void
test_nul_in_string(void **state)
{
	/* Envelope{version 1, request_id 9, scale_group{group "web\0x"}} */
	static const uint8_t bad[] = {0x08, 0x01, 0x10, 0x09, 0x92, 0x02, 0x07,
	    0x0a, 0x05, 'w', 'e', 'b', 0x00, 'x'};
	static const uint8_t good[] = {0x08, 0x01, 0x10, 0x09, 0x92, 0x02,
	    0x07, 0x0a, 0x05, 'w', 'e', 'b', 'x', 'x'};
	svw_env             *env    = NULL;
	uint64_t             rid    = 0;

	(void) state;
	assert_int_equal(
	    svw_decode(bad, sizeof(bad), SVW_MAX_REQUEST, &env, &rid),
	    SV_EBADREQ);
	assert_null(env);
	assert_int_equal(rid, 9);
	assert_int_equal(
	    svw_decode(good, sizeof(good), SVW_MAX_REQUEST, &env, &rid),
	    SV_OK);
	assert_int_equal(
	    env->body_case, SUPERVISE__V1__ENVELOPE__BODY_SCALE_GROUP);
	assert_string_equal(env->scale_group->group, "webxx");
	svw_free(env);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nul_in_string),
	    cmocka_unit_test(test_requests_roundtrip),
	    cmocka_unit_test(test_replies_roundtrip),
	    cmocka_unit_test(test_truncated),
	    cmocka_unit_test(test_garbage),
	    cmocka_unit_test(test_oversize),
	    cmocka_unit_test(test_versions),
	    cmocka_unit_test(test_unknown_body),
	    cmocka_unit_test(test_error_reply),
	    cmocka_unit_test(test_names),
	    cmocka_unit_test(test_err_table),
	};
	return cmocka_run_group_tests_name("wire", tests, NULL, NULL);
}
