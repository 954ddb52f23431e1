/*
 * test_protocol.c — the protocol's own rules (docs/protocol.md, sections 3,
 * 5 and 9), checked over the generated descriptor of supervise.v1.Envelope
 * and against supervised's request dispatch (daemon/req_dispatch.c).
 *
 * Design. The request table (libsupervise/src/requests.def) says, for
 * every request, which reply answers it, which feature string advertises
 * it and who may send it; this test's rows are built from it and from the
 * generated descriptor (what is actually on the wire): a body with a row is
 * a request, any other a reply, and a reply that answers no request (a new
 * request without its row) fails the test. This file keeps the
 * field-number plan (copied from the .proto header comment) and what a
 * default request gets here when that is not its reply (refusals[]). The plan
 * is also parsed from the .proto header comment and from docs/protocol.md
 * (found next to this file through __FILE__), so the two documents and the
 * schema cannot drift apart silently.
 *
 * Rules checked:
 *   - every body number lies in an open range of the plan, and its kind
 *     fits the range (the events range holds requests only);
 *   - every request has a handler: a minimal request of that kind gets its
 *     documented reply (or the documented refusal), never UNKNOWN_MESSAGE
 *     nor BAD_REQUEST "not a request";
 *   - every request but Hello has a feature string that supervised sends,
 *     and every feature it sends is accounted for, in the table's order;
 *   - who may call: for every admin request a worker of a group not
 *     granted admin, and another uid, get PERMISSION_DENIED from the
 *     caller check, and a worker of a group granted admin passes it; for
 *     every worker request a non-worker gets NOT_A_WORKER;
 *   - every reply body sent as a request is refused with BAD_REQUEST;
 *   - a RestartWorker with check_generation sent twice restarts once;
 *   - an ErrorCode this library does not know keeps its number.
 *
 * The supervisor runs one group whose program does not exist and its loop
 * never runs, so no process is started (as in test_dispatch.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sup_internal.h"
#include "supervisor.h"
#include "wire/reqtable.h"
#include "wire/wire.h"
#include "wire/wire_msg.h"

/* ---- the specification ----------------------------------------------------
 */

/* What a range of body numbers may hold. */
enum {
	KIND_REQ = 1,
	KIND_REP = 2,
};

/* Status of a range, as the .proto header comment writes it. */
typedef enum range_status {
	RANGE_HEADER, /* the envelope's own fields */
	RANGE_OPEN, /* bodies live here */
	RANGE_RESERVED, /* "(reserved)": kept for a purpose, no body yet */
	RANGE_FUTURE, /* "future use": not assigned to a purpose yet */
} range_status;

typedef struct range_rule {
	uint32_t     lo, hi;
	range_status status;
	unsigned     kinds; /* KIND_* a body here may be */
} range_rule;

/* The field-number plan of the Envelope (proto header comment). Events
 * travel on the PUB socket, so their range holds subscription requests. */
static const range_rule ranges[] = {
    {1, 9, RANGE_HEADER, 0},
    {10, 29, RANGE_OPEN, KIND_REQ | KIND_REP},
    {30, 49, RANGE_OPEN, KIND_REQ | KIND_REP},
    {50, 69, RANGE_OPEN, KIND_REQ | KIND_REP},
    {70, 89, RANGE_OPEN, KIND_REQ | KIND_REP},
    {90, 109, RANGE_OPEN, KIND_REQ | KIND_REP},
    {110, 129, RANGE_RESERVED, KIND_REQ},
    {130, 131, RANGE_OPEN, KIND_REQ | KIND_REP},
    {132, 169, RANGE_RESERVED, KIND_REQ | KIND_REP},
    {170, 199, RANGE_OPEN, KIND_REQ | KIND_REP},
    {200, 229, RANGE_OPEN, KIND_REQ | KIND_REP},
    {230, 499, RANGE_FUTURE, KIND_REQ | KIND_REP},
};
#define NRANGES (sizeof(ranges) / sizeof(ranges[0]))

typedef struct body_rule {
	uint32_t    number;
	const char *name; /* field name in Envelope */
	bool        request;
	const char *feature; /* request: the feature advertising it */
	uint32_t    reply; /* request: body number of its reply */
	sv_err      refusal; /* request: the Error expected in this test
	                        (the caller is no worker); SV_OK: the reply */
	sv_req_who who; /* request: who may send it */
} body_rule;

/*
 * What a default (empty) request gets from this test's supervisor when its
 * row's reply is not the answer: an empty message that is invalid for the
 * request, or names nothing that exists. A WORKER row's refusal is
 * NOT_A_WORKER (this process is no worker) and is not listed.
 */
typedef struct refusal_rule {
	svw_body body;
	sv_err   refusal;
} refusal_rule;

static const refusal_rule refusals[] = {
    {SUPERVISE__V1__ENVELOPE__BODY_ACQUIRE_LEASE, SV_EBADREQ},
    {SUPERVISE__V1__ENVELOPE__BODY_RENEW_LEASE, SV_ENOTWORKER},
    {SUPERVISE__V1__ENVELOPE__BODY_RELEASE_LEASE, SV_ENOTWORKER},
    {SUPERVISE__V1__ENVELOPE__BODY_CLAIM_LEASE, SV_EBADREQ},
    {SUPERVISE__V1__ENVELOPE__BODY_CREATE_POOL, SV_EBADREQ},
    {SUPERVISE__V1__ENVELOPE__BODY_GET_DRAIN, SV_ENOTFOUND},
    {SUPERVISE__V1__ENVELOPE__BODY_CREATE_GROUP, SV_EBADREQ},
    {SUPERVISE__V1__ENVELOPE__BODY_OPEN_SESSION, SV_EBADREQ},
    {SUPERVISE__V1__ENVELOPE__BODY_RENEW_SESSION, SV_ENOTFOUND},
    {SUPERVISE__V1__ENVELOPE__BODY_REGISTER_SUB_WORKER, SV_EBADREQ},
    {SUPERVISE__V1__ENVELOPE__BODY_RELEASE_SUB_WORKER, SV_EBADREQ},
};
#define NREFUSALS (sizeof(refusals) / sizeof(refusals[0]))

/* Every body of the Envelope, built by bodies_build from the generated
 * descriptor and the request table (libsupervise/src/requests.def): a
 * body with a row is a request, any other a reply. Hello has no feature:
 * it is how features are learnt, and every server serves it. */
#define MAX_BODIES 128
static body_rule bodies[MAX_BODIES];
static size_t    nbodies;
#define NBODIES nbodies

/* refusal_of returns the expected refusal of a default request of row r
 * in this test (SV_OK: its reply). */
static sv_err
refusal_of(const sv_req_row *r)
{
	if (r->who == SV_REQ_WORKER) {
		return SV_ENOTWORKER;
	}
	for (size_t i = 0; i < NREFUSALS; i++) {
		if (refusals[i].body == r->body) {
			return refusals[i].refusal;
		}
	}
	return SV_OK;
}

/* bodies_build fills bodies[] (a cmocka group setup). */
static int
bodies_build(void **state)
{
	const ProtobufCMessageDescriptor *d
	    = &supervise__v1__envelope__descriptor;

	(void) state;
	nbodies = 0;
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		const sv_req_row               *r;

		if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) == 0) {
			continue;
		}
		if (nbodies >= MAX_BODIES) {
			return -1;
		}
		r                 = sv_req_find((svw_body) f->id);
		bodies[nbodies++] = (body_rule) {f->id, f->name, r != NULL,
		    r != NULL ? r->feature : NULL, r != NULL ? r->reply : 0,
		    r != NULL ? refusal_of(r) : SV_OK,
		    r != NULL ? r->who : SV_REQ_ANYONE};
	}
	/* Every row of the table is a body of the Envelope. */
	for (size_t i = 0; i < sv_req_count(); i++) {
		bool found = false;
		for (size_t j = 0; j < nbodies; j++) {
			found |= bodies[j].number == sv_req_at(i)->body;
		}
		if (!found) {
			return -1;
		}
	}
	return 0;
}

/* nrequests counts the requests of the table. */
static size_t
nrequests(void)
{
	size_t n = 0;

	for (size_t i = 0; i < NBODIES; i++) {
		n += bodies[i].request ? 1 : 0;
	}
	return n;
}

/* ---- helpers --------------------------------------------------------------
 */

/* Not executable: a request that spawns at once fails to. */
static char            *argv0[] = {"/nonexistent/sv-protocol-test", NULL};
static svd_group_config grps[2];
static svd_config       cfg;

/* sup_new_groups builds a supervisor of one group ("web", count 2, max 4)
 * or, with boss set, two: "web" and "boss" (count 0, max 1, granted
 * admin). */
static svd_sup *
sup_new_groups(bool boss)
{
	svd_sup *s = NULL;

	memset(grps, 0, sizeof(grps));
	memset(&cfg, 0, sizeof(cfg));
	for (size_t i = 0; i < 2; i++) {
		grps[i].name      = i == 0 ? "web" : "boss";
		grps[i].argv      = argv0;
		grps[i].argc      = 1;
		grps[i].purpose   = "protocol test";
		grps[i].count     = i == 0 ? 2 : 0;
		grps[i].max_count = i == 0 ? 4 : 1;
		grps[i].admin     = i == 1;
		svd_default_policy(&grps[i].pol, 100);
	}
	cfg.socket_dir = "/tmp";
	cfg.groups     = grps;
	cfg.ngroups    = boss ? 2 : 1;
	assert_int_equal(svd_sup_create(&cfg, "ipc:///tmp/none", &s), SV_OK);
	return s;
}

/* sup_new builds a one-group supervisor ("web", count 2, max 4). */
static svd_sup *
sup_new(void)
{
	return sup_new_groups(false);
}

/* rule_of returns the table entry of body number n, or NULL. */
static const body_rule *
rule_of(uint32_t n)
{
	for (size_t i = 0; i < NBODIES; i++) {
		if (bodies[i].number == n) {
			return &bodies[i];
		}
	}
	return NULL;
}

/* range_of returns the plan's range holding n, or NULL. */
static const range_rule *
range_of(uint32_t n)
{
	for (size_t i = 0; i < NRANGES; i++) {
		if (n >= ranges[i].lo && n <= ranges[i].hi) {
			return &ranges[i];
		}
	}
	return NULL;
}

/* is_body tells whether an Envelope field is a member of the body oneof. */
static bool
is_body(const ProtobufCFieldDescriptor *f)
{
	return (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) != 0;
}

/* body_field returns the Envelope field of body number n (or NULL). */
static const ProtobufCFieldDescriptor *
body_field(uint32_t n)
{
	const ProtobufCFieldDescriptor *f
	    = protobuf_c_message_descriptor_get_field(
	        &supervise__v1__envelope__descriptor, (unsigned) n);

	return f != NULL && is_body(f) ? f : NULL;
}

/*
 * minimal_request packs an Envelope (request id 4242) whose body is a new,
 * default message of body field f, with its "group" (if any) set to "web".
 * Returns the packed message; the caller frees it with nng_msg_free.
 */
static nng_msg *
minimal_request(const ProtobufCFieldDescriptor *f)
{
	const ProtobufCMessageDescriptor *md = f->descriptor;
	const ProtobufCFieldDescriptor   *g;
	svw_env                           env = SUPERVISE__V1__ENVELOPE__INIT;
	ProtobufCMessage                 *body;
	nng_msg                          *m = NULL;

	assert_int_equal(f->type, PROTOBUF_C_TYPE_MESSAGE);
	body = calloc(1, md->sizeof_message);
	assert_non_null(body);
	protobuf_c_message_init(md, body);
	g = protobuf_c_message_descriptor_get_field_by_name(md, "group");
	if (g != NULL && g->type == PROTOBUF_C_TYPE_STRING
	    && g->label != PROTOBUF_C_LABEL_REPEATED) {
		*(const char **) ((char *) body + g->offset) = "web";
	}
	env.version    = SV_PROTOCOL_VERSION;
	env.request_id = 4242;
	/* The oneof by its descriptor: case, then the member pointer. */
	*(uint32_t *) ((char *) &env + f->quantifier_offset) = f->id;
	*(ProtobufCMessage **) ((char *) &env + f->offset)   = body;
	assert_int_equal(svw_encode(&env, SVW_MAX_REPLY, &m), SV_OK);
	free(body); /* its only string is a literal */
	return m;
}

/* dispatch_as sends m to s as process pid of uid and returns the decoded
 * reply (the caller frees it). */
static svw_env *
dispatch_as(svd_sup *s, nng_msg *m, uint64_t pid, uint64_t uid)
{
	nng_msg *rep = NULL;
	svw_env *env;

	assert_int_equal(svd_sup_dispatch(s, nng_msg_body(m), nng_msg_len(m),
	                     pid, uid, &rep),
	    SV_OK);
	env = supervise__v1__envelope__unpack(
	    NULL, nng_msg_len(rep), nng_msg_body(rep));
	nng_msg_free(rep);
	assert_non_null(env);
	assert_int_equal(env->version, SV_PROTOCOL_VERSION);
	assert_int_equal(env->request_id, 4242);
	return env;
}

/* dispatch sends m to s as this process with the supervisor's uid and
 * returns the decoded reply (the caller frees it). */
static svw_env *
dispatch(svd_sup *s, nng_msg *m)
{
	return dispatch_as(s, m, (uint64_t) getpid(), (uint64_t) geteuid());
}

/* be_worker makes this process worker 0 of group in s's pid table, as if
 * s had spawned it: the kernel's word for "the caller is that worker". */
static void
be_worker(svd_sup *s, const char *group)
{
	/* The supervisor's map borrows its keys from the process records
	 * (sv_pidmap_put_ref); this one lives as long as the test program. */
	static sv_wkey   key;
	const sv_cgroup *g = sv_core_group_named(s->core, group);

	assert_non_null(g);
	key = (sv_wkey) {g->id, 0, 1};
	assert_int_equal(
	    sv_pidmap_put_ref(&s->pids, (int64_t) getpid(), &key), SV_OK);
}

/* be_no_worker removes this process from s's pid table. */
static void
be_no_worker(svd_sup *s)
{
	(void) sv_pidmap_del(&s->pids, (int64_t) getpid());
}

/* error_of returns the sv_err of an Error reply, SV_OK for any other. */
static sv_err
error_of(const svw_env *rep)
{
	return rep->body_case == SUPERVISE__V1__ENVELOPE__BODY_ERROR
	    ? svw_code_to_err(rep->error->code)
	    : SV_OK;
}

/*
 * sup_free stops the group, then frees the supervisor. svd_sup_destroy
 * expects a supervisor at rest (svd_sup_run has returned); stopping the
 * group cancels the restarts that failed spawns have scheduled, so no timer
 * is left armed.
 */
static void
sup_free(svd_sup *s)
{
	svw_env                  env = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__StopGroup st  = SUPERVISE__V1__STOP_GROUP__INIT;
	nng_msg                 *m   = NULL;
	svw_env                 *rep;

	st.group       = "web";
	env.version    = SV_PROTOCOL_VERSION;
	env.request_id = 4242;
	env.body_case  = SUPERVISE__V1__ENVELOPE__BODY_STOP_GROUP;
	env.stop_group = &st;
	assert_int_equal(svw_encode(&env, SVW_MAX_REPLY, &m), SV_OK);
	rep = dispatch(s, m);
	nng_msg_free(m);
	/* NOT_FOUND: a DeleteGroup test removed the group already. */
	if (rep->body_case != SUPERVISE__V1__ENVELOPE__BODY_GROUP_CHANGE) {
		assert_int_equal(
		    rep->body_case, SUPERVISE__V1__ENVELOPE__BODY_ERROR);
		assert_int_equal(
		    svw_code_to_err(rep->error->code), SV_ENOTFOUND);
	}
	supervise__v1__envelope__free_unpacked(rep, NULL);
	svd_sup_destroy(s);
}

/* is_not_a_request tells whether rep is Error{BAD_REQUEST "not a
 * request"}. */
static bool
is_not_a_request(const svw_env *rep)
{
	return rep->body_case == SUPERVISE__V1__ENVELOPE__BODY_ERROR
	    && rep->error->code
	    == SUPERVISE__V1__ERROR_CODE__ERROR_CODE_BAD_REQUEST
	    && strstr(rep->error->message, "not a request") != NULL;
}

/* src_path writes the path of a file of the source tree (relative to its
 * top) into buf, from this file's own path. */
static void
src_path(const char *rel, char *buf, size_t len)
{
	const char *me   = __FILE__;
	const char *tail = "tests/test_protocol.c";
	size_t      n = strlen(me), t = strlen(tail);

	if (n < t || strcmp(me + n - t, tail) != 0) {
		fail_msg("cannot locate the source tree from %s", me);
	}
	if ((size_t) snprintf(buf, len, "%.*s%s", (int) (n - t), me, rel)
	    >= len) {
		fail_msg("path too long: %s", rel);
	}
}

/* ---- rule: every body is in the table, in an open range, of a fitting
 * kind ------------------------------------------------------------------- */

static void
test_bodies_in_ranges(void **state)
{
	const ProtobufCMessageDescriptor *d
	    = &supervise__v1__envelope__descriptor;
	size_t nbody = 0;

	(void) state;
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		const range_rule               *r = range_of(f->id);
		const body_rule                *b;

		if (r == NULL) {
			fail_msg("Envelope field %s = %u lies in no range of "
			         "the plan",
			    f->name, f->id);
		}
		if (!is_body(f)) {
			/* version and request_id: the header. */
			if (r->status != RANGE_HEADER) {
				fail_msg(
				    "header field %s = %u is outside 1..9",
				    f->name, f->id);
			}
			continue;
		}
		nbody++;
		if (r->status != RANGE_OPEN) {
			fail_msg("body %s = %u lies in %u..%u, which the plan "
			         "does not open for bodies",
			    f->name, f->id, r->lo, r->hi);
		}
		if ((b = rule_of(f->id)) == NULL) {
			fail_msg("body %s = %u is not in this test's table",
			    f->name, f->id);
		}
		assert_string_equal(b->name, f->name);
		assert_int_equal(f->type, PROTOBUF_C_TYPE_MESSAGE);
		if ((r->kinds & (b->request ? KIND_REQ : KIND_REP)) == 0) {
			fail_msg(
			    "body %s = %u is a %s; range %u..%u holds none",
			    f->name, f->id, b->request ? "request" : "reply",
			    r->lo, r->hi);
		}
	}
	/* Every table entry is on the wire. */
	assert_int_equal(nbody, NBODIES);
	for (size_t i = 0; i < NBODIES; i++) {
		assert_non_null(body_field(bodies[i].number));
	}
}

/* A request is answered by a reply body (not by a request), and every
 * reply but Error answers some request. */
static void
test_request_reply_pairs(void **state)
{
	(void) state;
	for (size_t i = 0; i < NBODIES; i++) {
		const body_rule *b = &bodies[i];
		if (b->request) {
			const body_rule *r = rule_of(b->reply);
			if (r == NULL || r->request) {
				fail_msg(
				    "request %s is answered by %u, which is "
				    "not a reply",
				    b->name, b->reply);
			}
			continue;
		}
		if (b->number == SUPERVISE__V1__ENVELOPE__BODY_ERROR) {
			continue; /* answers any request */
		}
		bool answers = false;
		for (size_t j = 0; j < NBODIES; j++) {
			answers |= bodies[j].request
			    && bodies[j].reply == b->number;
		}
		if (!answers) {
			fail_msg("reply %s answers no request (a request "
			         "needs its row in requests.def)",
			    b->name);
		}
	}
}

/* ---- rule: every request has a handler ------------------------------------
 */

static void
test_requests_have_handlers(void **state)
{
	size_t n = 0;

	(void) state;
	for (size_t i = 0; i < NBODIES; i++) {
		const body_rule *b = &bodies[i];
		svd_sup         *s;
		nng_msg         *m;
		svw_env         *rep;

		if (!b->request) {
			continue;
		}
		/* A fresh supervisor per request: no request sees another's
		 * effect. */
		s   = sup_new();
		m   = minimal_request(body_field(b->number));
		rep = dispatch(s, m);
		nng_msg_free(m);
		if (is_not_a_request(rep)) {
			fail_msg("%s has no handler: \"%s\"", b->name,
			    rep->error->message);
		}
		if (rep->body_case == SUPERVISE__V1__ENVELOPE__BODY_ERROR
		    && rep->error->code
		        == SUPERVISE__V1__ERROR_CODE__ERROR_CODE_UNKNOWN_MESSAGE) {
			fail_msg(
			    "%s is an unknown message to supervised", b->name);
		}
		if (b->refusal == SV_OK) {
			if ((uint32_t) rep->body_case != b->reply) {
				fail_msg(
				    "%s answered with body %d (%s), not %u",
				    b->name, (int) rep->body_case,
				    rep->body_case
				            == SUPERVISE__V1__ENVELOPE__BODY_ERROR
				        ? rep->error->message
				        : "",
				    b->reply);
			}
		} else {
			assert_int_equal(rep->body_case,
			    SUPERVISE__V1__ENVELOPE__BODY_ERROR);
			assert_int_equal(
			    svw_code_to_err(rep->error->code), b->refusal);
		}
		supervise__v1__envelope__free_unpacked(rep, NULL);
		sup_free(s);
		n++;
	}
	/* Hello, WhoAmI, 9 administration requests, Ready, Heartbeat,
	 * CreateGroup, DeleteGroup; leases: 5 lease, 2 pool and 3 session
	 * requests; drain: 5 requests; sub-workers: 2. Every request of the
	 * table. */
	assert_int_equal(n, nrequests());
	assert_int_equal(n, sv_req_count());
	assert_int_equal(n, 32);
}

/* ---- rule: who may call (the row's who, checked before the handler) -----
 */

/* caller_error dispatches m to a fresh supervisor with groups, from a
 * worker of group (NULL: from a process of another uid, no worker), and
 * returns the reply's error (SV_OK for any other reply), with its message
 * ("" for none) in msg. */
static sv_err
caller_error(nng_msg *m, const char *group, char *msg, size_t cap)
{
	svd_sup *s = sup_new_groups(true);
	svw_env *rep;
	sv_err   e;

	if (group != NULL) {
		be_worker(s, group);
		rep = dispatch(s, m);
		be_no_worker(s);
	} else {
		rep = dispatch_as(
		    s, m, (uint64_t) getpid(), (uint64_t) geteuid() + 1);
	}
	e = error_of(rep);
	snprintf(msg, cap, "%s",
	    rep->body_case == SUPERVISE__V1__ENVELOPE__BODY_ERROR
	        ? rep->error->message
	        : "");
	supervise__v1__envelope__free_unpacked(rep, NULL);
	sup_free(s);
	return e;
}

/*
 * A worker is no administrator: for every ADMIN row, a caller that is a
 * worker of a group not granted admin gets PERMISSION_DENIED naming that
 * group, from the caller check (the handler never runs); a worker of a
 * group granted admin passes that check; a process of another uid gets
 * PERMISSION_DENIED too. A fresh supervisor per request and caller.
 */
static void
test_workers_cannot_admin(void **state)
{
	size_t n = 0;

	(void) state;
	for (size_t i = 0; i < sv_req_count(); i++) {
		const sv_req_row *r = sv_req_at(i);
		nng_msg          *m;
		char              msg[256];

		if (r->who != SV_REQ_ADMIN) {
			continue;
		}
		m = minimal_request(body_field(r->body));
		/* A worker of "web" (not granted admin). */
		if (caller_error(m, "web", msg, sizeof(msg)) != SV_EPERM
		    || strstr(msg, "not granted admin") == NULL) {
			fail_msg("%s from a worker of a group not granted "
			         "admin was not refused by the caller check",
			    body_field(r->body)->name);
		}
		/* A worker of "boss" (granted admin). */
		if (caller_error(m, "boss", msg, sizeof(msg)) == SV_EPERM) {
			fail_msg("%s from a worker of a group granted admin "
			         "was refused: %s",
			    body_field(r->body)->name, msg);
		}
		/* Another uid, no worker. */
		if (caller_error(m, NULL, msg, sizeof(msg)) != SV_EPERM
		    || strstr(msg, "may not administer") == NULL) {
			fail_msg("%s from another uid was not refused",
			    body_field(r->body)->name);
		}
		nng_msg_free(m);
		n++;
	}
	/* Scale, stop, restart, reset, start, terminate, create and delete
	 * group, create pool, drain, get drain, rolling restart. */
	assert_int_equal(n, 12);
}

/*
 * For every WORKER row a caller that is no worker gets NOT_A_WORKER, and a
 * worker passes the caller check; no ANYONE row refuses another uid with
 * PERMISSION_DENIED (no administration hides behind it).
 */
static void
test_worker_and_anyone_rows(void **state)
{
	size_t nworker = 0;

	(void) state;
	for (size_t i = 0; i < sv_req_count(); i++) {
		const sv_req_row *r = sv_req_at(i);
		svd_sup          *s;
		nng_msg          *m;
		svw_env          *rep;

		if (r->who == SV_REQ_ADMIN) {
			continue;
		}
		m = minimal_request(body_field(r->body));
		s = sup_new();
		if (r->who == SV_REQ_WORKER) {
			rep = dispatch(s, m);
			assert_int_equal(error_of(rep), SV_ENOTWORKER);
			supervise__v1__envelope__free_unpacked(rep, NULL);
			be_worker(s, "web");
			rep = dispatch(s, m);
			if (error_of(rep) == SV_ENOTWORKER) {
				fail_msg("%s from a worker: %s",
				    body_field(r->body)->name,
				    rep->error->message);
			}
			supervise__v1__envelope__free_unpacked(rep, NULL);
			be_no_worker(s);
			nworker++;
		} else {
			rep = dispatch_as(s, m, (uint64_t) getpid(),
			    (uint64_t) geteuid() + 1);
			if (error_of(rep) == SV_EPERM) {
				fail_msg("%s (anyone) refused another uid: %s",
				    body_field(r->body)->name,
				    rep->error->message);
			}
			supervise__v1__envelope__free_unpacked(rep, NULL);
		}
		sup_free(s);
		nng_msg_free(m);
	}
	/* WhoAmI, Ready, Heartbeat, DrainExtend, DrainAck. */
	assert_int_equal(nworker, 5);
}

/* ---- rule: every reply sent as a request is refused -----------------------
 */

static void
test_replies_refused(void **state)
{
	svd_sup *s = sup_new();
	size_t   n = 0;

	(void) state;
	for (size_t i = 0; i < NBODIES; i++) {
		nng_msg *m;
		svw_env *rep;

		if (bodies[i].request) {
			continue;
		}
		m   = minimal_request(body_field(bodies[i].number));
		rep = dispatch(s, m);
		nng_msg_free(m);
		if (!is_not_a_request(rep)) {
			fail_msg("reply %s sent as a request was not refused "
			         "with BAD_REQUEST \"not a request\"",
			    bodies[i].name);
		}
		supervise__v1__envelope__free_unpacked(rep, NULL);
		n++;
	}
	assert_int_equal(n, NBODIES - nrequests());
	sup_free(s);
}

/* ---- rule: a retried compare-and-swap restart restarts once ---------------
 */

/* restart_cas sends RestartWorker{web, 0, check_generation, expected}. */
static svw_env *
restart_cas(svd_sup *s, uint64_t expected)
{
	svw_env                      env = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__RestartWorker rw  = SUPERVISE__V1__RESTART_WORKER__INIT;
	nng_msg                     *m   = NULL;
	svw_env                     *rep;

	rw.group               = "web";
	rw.ordinal             = 0;
	rw.check_generation    = true;
	rw.expected_generation = expected;
	env.version            = SV_PROTOCOL_VERSION;
	env.request_id         = 4242;
	env.body_case          = SUPERVISE__V1__ENVELOPE__BODY_RESTART_WORKER;
	env.restart_worker     = &rw;
	assert_int_equal(svw_encode(&env, SVW_MAX_REPLY, &m), SV_OK);
	rep = dispatch(s, m);
	nng_msg_free(m);
	return rep;
}

/* The same request twice: the first restarts (here: a start that fails, so
 * the slot waits in BACKOFF under the next generation), the copy gets
 * CONFLICT. The slot never gets a process in this test. */
static void
test_restart_retry_conflicts(void **state)
{
	svd_sup *s = sup_new();
	svw_env *rep;
	uint64_t gen;

	(void) state;
	rep = restart_cas(s, 0);
	assert_int_equal(
	    rep->body_case, SUPERVISE__V1__ENVELOPE__BODY_WORKER_STATUS);
	assert_int_equal(rep->worker_status->state,
	    SUPERVISE__V1__WORKER_STATE__WORKER_STATE_BACKOFF);
	gen = rep->worker_status->generation;
	assert_true(gen > 0);
	supervise__v1__envelope__free_unpacked(rep, NULL);
	rep = restart_cas(s, 0);
	assert_int_equal(rep->body_case, SUPERVISE__V1__ENVELOPE__BODY_ERROR);
	assert_int_equal(svw_code_to_err(rep->error->code), SV_ECONFLICT);
	supervise__v1__envelope__free_unpacked(rep, NULL);
	/* With the generation now shown, it restarts again, once. */
	rep = restart_cas(s, gen);
	assert_int_equal(
	    rep->body_case, SUPERVISE__V1__ENVELOPE__BODY_WORKER_STATUS);
	assert_true(rep->worker_status->generation > gen);
	supervise__v1__envelope__free_unpacked(rep, NULL);
	rep = restart_cas(s, gen);
	assert_int_equal(svw_code_to_err(rep->error->code), SV_ECONFLICT);
	supervise__v1__envelope__free_unpacked(rep, NULL);
	sup_free(s);
}

/* ---- rule: features -------------------------------------------------------
 */

/* hello asks s for its HelloReply; the caller frees the reply. */
static svw_env *
hello(svd_sup *s)
{
	nng_msg *m   = minimal_request(body_field(10));
	svw_env *rep = dispatch(s, m);

	nng_msg_free(m);
	assert_int_equal(
	    rep->body_case, SUPERVISE__V1__ENVELOPE__BODY_HELLO_REPLY);
	return rep;
}

/* has_feature tells whether the HelloReply lists name. */
static bool
has_feature(const Supervise__V1__HelloReply *hr, const char *name)
{
	for (size_t i = 0; i < hr->n_features; i++) {
		if (strcmp(hr->features[i], name) == 0) {
			return true;
		}
	}
	return false;
}

static void
test_features(void **state)
{
	svd_sup                         *s   = sup_new();
	svw_env                         *rep = hello(s);
	const Supervise__V1__HelloReply *hr  = rep->hello_reply;

	(void) state;
	assert_int_equal(hr->minor_version, SV_PROTOCOL_MINOR);
	assert_true(SV_PROTOCOL_MINOR >= 1); /* v1.1 added bodies 38..52 */
	/* Every request but Hello is advertised. */
	for (size_t i = 0; i < NBODIES; i++) {
		const body_rule *b = &bodies[i];
		if (!b->request) {
			continue;
		}
		if (b->feature == NULL) {
			assert_int_equal(
			    b->number, SUPERVISE__V1__ENVELOPE__BODY_HELLO);
			continue;
		}
		if (!has_feature(hr, b->feature)) {
			fail_msg("request %s: feature \"%s\" is not in "
			         "HelloReply.features",
			    b->name, b->feature);
		}
	}
	/* The list is the request table's, in its order. */
	{
		const char *want[SV_REQ_MAX_FEATURES];
		size_t      nw = sv_req_features(want, SV_REQ_MAX_FEATURES);
		assert_int_equal(hr->n_features, nw);
		for (size_t i = 0; i < nw; i++) {
			assert_string_equal(hr->features[i], want[i]);
		}
		assert_string_equal(hr->features[0], "identity");
	}
	/* Every advertised feature is a request's or a field's, once. */
	for (size_t i = 0; i < hr->n_features; i++) {
		const char *ft    = hr->features[i];
		bool        known = false;
		for (size_t j = 0; j < NBODIES; j++) {
			known |= bodies[j].feature != NULL
			    && strcmp(bodies[j].feature, ft) == 0;
		}
		for (size_t j = 0; j < sv_req_field_feature_count(); j++) {
			const sv_req_field_feature *ff
			    = sv_req_field_feature_at(j);
			if (strcmp(ff->name, ft) != 0) {
				continue;
			}
			assert_non_null(rule_of(ff->body));
			if (protobuf_c_message_descriptor_get_field_by_name(
			        body_field(ff->body)->descriptor, ff->field)
			    == NULL) {
				fail_msg(
				    "feature \"%s\" names field %s, which "
				    "body %u's message does not have",
				    ft, ff->field, (unsigned) ff->body);
			}
			known = true;
		}
		if (!known) {
			fail_msg("supervised advertises \"%s\", which this "
			         "test does not account for",
			    ft);
		}
		for (size_t j = i + 1; j < hr->n_features; j++) {
			if (strcmp(ft, hr->features[j]) == 0) {
				fail_msg("feature \"%s\" is listed twice", ft);
			}
		}
	}
	supervise__v1__envelope__free_unpacked(rep, NULL);
	sup_free(s);
}

/* ---- the documents agree with the tables ----------------------------------
 */

/* The .proto header comment's plan equals the table (lines such as
 * "//    70.. 89  leases and fencing tokens   (reserved)"). */
static void
test_plan_in_proto(void **state)
{
	char   path[4096], line[512];
	FILE  *f;
	size_t k = 0;

	(void) state;
	src_path("proto/supervise/v1/supervise.proto", path, sizeof(path));
	if ((f = fopen(path, "re")) == NULL) {
		fail_msg("cannot open %s", path);
	}
	while (fgets(line, sizeof(line), f) != NULL
	    && strncmp(line, "syntax", 6) != 0) {
		unsigned     lo, hi;
		int          used = 0;
		range_status st;
		const char  *text;

		if (sscanf(line, "// %u.. %u %n", &lo, &hi, &used) != 2
		    || used == 0) {
			continue;
		}
		text = line + used;
		st   = lo == 1                               ? RANGE_HEADER
		      : strstr(text, "(reserved)") != NULL   ? RANGE_RESERVED
		      : strncmp(text, "future use", 10) == 0 ? RANGE_FUTURE
		                                             : RANGE_OPEN;
		if (k >= NRANGES || ranges[k].lo != lo || ranges[k].hi != hi
		    || ranges[k].status != st) {
			fclose(f);
			fail_msg("the .proto plan line %u..%u (status %d) is "
			         "not entry %zu of this test's plan",
			    lo, hi, (int) st, k);
		}
		k++;
	}
	fclose(f);
	assert_int_equal(k, NRANGES);
}

/* docs/protocol.md lists the same plan ("| 10..29 | ... |" rows) and the
 * features supervised sends ("| `identity` | ... |" rows under
 * "### Features"). */
static void
test_plan_and_features_in_doc(void **state)
{
	char     path[4096], line[1024];
	FILE    *f;
	size_t   k = 0, nfeat = 0;
	bool     in_features = false;
	svd_sup *s           = sup_new();
	svw_env *rep         = hello(s);

	(void) state;
	src_path("docs/protocol.md", path, sizeof(path));
	if ((f = fopen(path, "re")) == NULL) {
		fail_msg("cannot open %s", path);
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned lo, hi;
		char     name[128];

		if (strncmp(line, "### ", 4) == 0) {
			in_features = strncmp(line, "### Features", 12) == 0;
			continue;
		}
		if (sscanf(line, "| %u..%u |", &lo, &hi) == 2) {
			if (k >= NRANGES || ranges[k].lo != lo
			    || ranges[k].hi != hi) {
				fclose(f);
				fail_msg("docs/protocol.md plan row %u..%u is "
				         "not entry %zu of the plan",
				    lo, hi, k);
			}
			k++;
			continue;
		}
		if (in_features && sscanf(line, "| `%127[^`]` |", name) == 1) {
			if (!has_feature(rep->hello_reply, name)) {
				fclose(f);
				fail_msg(
				    "docs/protocol.md lists feature \"%s\", "
				    "which supervised does not send",
				    name);
			}
			nfeat++;
		}
	}
	fclose(f);
	assert_int_equal(k, NRANGES);
	/* No feature missing from the doc (each is sent once). */
	assert_int_equal(nfeat, rep->hello_reply->n_features);
	supervise__v1__envelope__free_unpacked(rep, NULL);
	sup_free(s);
}

/* ---- rule: error codes ----------------------------------------------------
 */

/* Every ErrorCode is the sv_err of the same number, inside the server's
 * range, and named by the library. */
static void
test_error_codes_match(void **state)
{
	const ProtobufCEnumDescriptor *d
	    = &supervise__v1__error_code__descriptor;

	(void) state;
	for (unsigned i = 0; i < d->n_values; i++) {
		int v = d->values[i].value;
		if (v == 0) {
			continue; /* UNSPECIFIED: never sent */
		}
		assert_true(v >= 1 && v <= SV_SERVER_ERR_MAX);
		assert_int_equal(
		    svw_code_to_err((Supervise__V1__ErrorCode) v), v);
		assert_int_equal(svw_err_to_code((sv_err) v), v);
		if (strcmp(sv_err_name((sv_err) v), "UNKNOWN") == 0) {
			fail_msg("ErrorCode %s = %d has no sv_err",
			    d->values[i].name, v);
		}
	}
	assert_int_equal(
	    SUPERVISE__V1__ERROR_CODE__ERROR_CODE_CONFLICT, SV_ECONFLICT);
	/* Outside the server's range the code is a protocol error. */
	assert_int_equal(svw_code_to_err(0), SV_EPROTO);
	assert_int_equal(
	    svw_code_to_err(
	        (Supervise__V1__ErrorCode) (SV_SERVER_ERR_MAX + 1)),
	    SV_EPROTO);
}

/* An Error with a code from a newer server (57) decodes to 57, a refusal of
 * an unknown kind with its message kept. */
static void
test_unknown_error_code(void **state)
{
	svw_env              env = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__Error e   = SUPERVISE__V1__ERROR__INIT;
	nng_msg             *m   = NULL;
	svw_env             *got = NULL;
	uint64_t             rid = 0;
	sv_err               err;

	(void) state;
	e.code         = (Supervise__V1__ErrorCode) 57;
	e.message      = "refused for a reason from the future";
	env.version    = SV_PROTOCOL_VERSION;
	env.request_id = 31;
	env.body_case  = SUPERVISE__V1__ENVELOPE__BODY_ERROR;
	env.error      = &e;
	assert_int_equal(svw_encode(&env, SVW_MAX_REPLY, &m), SV_OK);
	assert_int_equal(svw_decode(nng_msg_body(m), nng_msg_len(m),
	                     SVW_MAX_REPLY, &got, &rid),
	    SV_OK);
	nng_msg_free(m);
	assert_int_equal(got->request_id, 31);
	assert_int_equal(got->body_case, SUPERVISE__V1__ENVELOPE__BODY_ERROR);
	assert_int_equal(got->error->code, 57);
	assert_string_equal(
	    got->error->message, "refused for a reason from the future");
	err = svw_code_to_err(got->error->code);
	assert_int_equal(err, 57);
	assert_true(err <= SV_SERVER_ERR_MAX); /* a refusal, not local */
	assert_string_equal(sv_err_name(err), "UNKNOWN");
	assert_string_equal(sv_strerror(err), "unknown error");
	svw_free(got);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bodies_in_ranges),
	    cmocka_unit_test(test_request_reply_pairs),
	    cmocka_unit_test(test_requests_have_handlers),
	    cmocka_unit_test(test_workers_cannot_admin),
	    cmocka_unit_test(test_worker_and_anyone_rows),
	    cmocka_unit_test(test_replies_refused),
	    cmocka_unit_test(test_restart_retry_conflicts),
	    cmocka_unit_test(test_features),
	    cmocka_unit_test(test_plan_in_proto),
	    cmocka_unit_test(test_plan_and_features_in_doc),
	    cmocka_unit_test(test_error_codes_match),
	    cmocka_unit_test(test_unknown_error_code),
	};
	return cmocka_run_group_tests_name(
	    "protocol", tests, bodies_build, NULL);
}
