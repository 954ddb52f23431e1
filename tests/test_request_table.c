/*
 * test_request_table.c — the request table (libsupervise/src/requests.def,
 * wire/reqtable.h) against what is written about it elsewhere, and the
 * client's retry rule that comes from it.
 *
 * Design. docs/protocol.md is found next to this file through __FILE__ and
 * parsed, not regenerated: its request table (section 1, "Retries": one
 * row per request, "| `Name` (body) | `Reply` (body) | who | sent again |
 * ... |") must list the table's rows in the table's order, each cell equal
 * to the row's (message names come from the generated descriptor); its
 * feature table (section 10, "### Features") must list the features
 * HelloReply carries, in that order, each with the minor version of its
 * first row. The retry rule (sv_req_resend) is checked on envelopes built
 * for every row: YES and NO rows as written, a CAS row only with its
 * check_generation set, a body with no row never.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "wire/reqtable.h"
#include "wire/wire.h"

/* src_path writes the path of rel (relative to the source tree) to buf. */
static void
src_path(const char *rel, char *buf, size_t len)
{
	const char *here = __FILE__; /* .../tests/test_request_table.c */
	const char *cut  = strstr(here, "tests/test_request_table.c");

	assert_non_null(cut);
	snprintf(buf, len, "%.*s%s", (int) (cut - here), here, rel);
}

/* body_field returns the Envelope field of body number n (or NULL). */
static const ProtobufCFieldDescriptor *
body_field(uint32_t n)
{
	return protobuf_c_message_descriptor_get_field(
	    &supervise__v1__envelope__descriptor, (unsigned) n);
}

/* message_name returns the message name of body number n ("ScaleGroup"). */
static const char *
message_name(uint32_t n)
{
	const ProtobufCFieldDescriptor *f = body_field(n);

	assert_non_null(f);
	assert_int_equal(f->type, PROTOBUF_C_TYPE_MESSAGE);
	return ((const ProtobufCMessageDescriptor *) f->descriptor)
	    ->short_name;
}

/* trim cuts the blanks around s in place and returns it. */
static char *
trim(char *s)
{
	size_t n;

	while (*s == ' ') {
		s++;
	}
	n = strlen(s);
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\n')) {
		s[--n] = '\0';
	}
	return s;
}

/* A row of docs/protocol.md's request table. */
typedef struct doc_row {
	char     name[64], reply[64], who[32], retry[64];
	unsigned number, reply_number;
	int      line;
} doc_row;

/* parse_row reads "| `Name` (N) | `Reply` (M) | who | retry | ... |" into
 * r; false when line is not such a row. */
static bool
parse_row(const char *line, doc_row *r)
{
	char        who[64], retry[96];
	int         used = 0;
	const char *rest;

	if (sscanf(line, "| `%63[^`]` (%u) | `%63[^`]` (%u) |%n", r->name,
	        &r->number, r->reply, &r->reply_number, &used)
	        != 4
	    || used == 0) {
		return false;
	}
	rest = line + used;
	if (sscanf(rest, "%63[^|]|%95[^|]|", who, retry) != 2) {
		return false;
	}
	snprintf(r->who, sizeof(r->who), "%s", trim(who));
	snprintf(r->retry, sizeof(r->retry), "%s", trim(retry));
	return true;
}

/* docs/protocol.md's request table equals the request table, row by row
 * and in order. */
static void
test_doc_request_table(void **state)
{
	char   path[4096], line[2048];
	FILE  *f;
	size_t k      = 0;
	int    lineno = 0;
	bool   in     = false;

	(void) state;
	src_path("docs/protocol.md", path, sizeof(path));
	if ((f = fopen(path, "re")) == NULL) {
		fail_msg("cannot open %s", path);
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		doc_row           d;
		const sv_req_row *r;

		lineno++;
		if (strncmp(line, "| request | reply | who may send it |", 37)
		    == 0) {
			in = true;
			continue;
		}
		if (!in) {
			continue;
		}
		if (strncmp(line, "|---", 4) == 0) {
			continue;
		}
		if (line[0] != '|') {
			break; /* the table ended */
		}
		if (!parse_row(line, &d)) {
			fclose(f);
			fail_msg("docs/protocol.md:%d: not a request row: %s",
			    lineno, line);
		}
		if ((r = sv_req_at(k)) == NULL) {
			fclose(f);
			fail_msg(
			    "docs/protocol.md:%d: `%s` is a row more than "
			    "requests.def has",
			    lineno, d.name);
		}
		if (strcmp(d.name, message_name(r->body)) != 0
		    || d.number != (unsigned) r->body
		    || strcmp(d.reply, message_name(r->reply)) != 0
		    || d.reply_number != (unsigned) r->reply
		    || strcmp(d.who, sv_req_who_name(r->who)) != 0
		    || strcmp(d.retry, sv_req_retry_name(r->retry)) != 0) {
			fclose(f);
			fail_msg(
			    "docs/protocol.md:%d: row %zu reads `%s` (%u) "
			    "| `%s` (%u) | %s | %s |; requests.def says "
			    "`%s` (%u) | `%s` (%u) | %s | %s |",
			    lineno, k, d.name, d.number, d.reply,
			    d.reply_number, d.who, d.retry,
			    message_name(r->body), (unsigned) r->body,
			    message_name(r->reply), (unsigned) r->reply,
			    sv_req_who_name(r->who),
			    sv_req_retry_name(r->retry));
		}
		k++;
	}
	fclose(f);
	if (!in) {
		fail_msg("docs/protocol.md has no request table (header "
		         "\"| request | reply | who may send it |\")");
	}
	if (k != sv_req_count()) {
		fail_msg("docs/protocol.md's request table has %zu rows; "
		         "requests.def has %zu (missing: %s)",
		    k, sv_req_count(),
		    k < sv_req_count() ? message_name(sv_req_at(k)->body)
		                       : "none");
	}
}

/* since_of returns the minor version of the first row naming feature. */
static uint32_t
since_of(const char *feature)
{
	for (size_t i = 0; i < sv_req_count(); i++) {
		const sv_req_row *r = sv_req_at(i);
		if (r->feature != NULL && strcmp(r->feature, feature) == 0) {
			return r->since;
		}
	}
	for (size_t i = 0; i < sv_req_field_feature_count(); i++) {
		const sv_req_field_feature *ff = sv_req_field_feature_at(i);
		if (strcmp(ff->name, feature) == 0) {
			return ff->since;
		}
	}
	fail_msg("feature %s has no row", feature);
	return 0;
}

/* docs/protocol.md's feature table lists Hello's features in order, each
 * with its since. */
static void
test_doc_feature_table(void **state)
{
	const char *want[SV_REQ_MAX_FEATURES];
	size_t      nw = sv_req_features(want, SV_REQ_MAX_FEATURES), k = 0;
	char        path[4096], line[2048];
	FILE       *f;
	bool        in     = false;
	int         lineno = 0;

	(void) state;
	assert_true(nw <= SV_REQ_MAX_FEATURES);
	src_path("docs/protocol.md", path, sizeof(path));
	if ((f = fopen(path, "re")) == NULL) {
		fail_msg("cannot open %s", path);
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		char     name[128];
		unsigned major, minor;
		char    *since;

		lineno++;
		if (strncmp(line, "### ", 4) == 0) {
			in = strncmp(line, "### Features", 12) == 0;
			continue;
		}
		if (!in || sscanf(line, "| `%127[^`]` |", name) != 1) {
			continue;
		}
		since = strrchr(line, 'v');
		if (since == NULL
		    || sscanf(since, "v%u.%u |", &major, &minor) != 2) {
			fclose(f);
			fail_msg(
			    "docs/protocol.md:%d: no \"since\" cell", lineno);
		}
		if (k >= nw || strcmp(name, want[k]) != 0) {
			fclose(f);
			fail_msg("docs/protocol.md:%d: feature %zu is `%s`; "
			         "HelloReply sends `%s` there",
			    lineno, k, name, k < nw ? want[k] : "(nothing)");
		}
		if (major != SV_PROTOCOL_VERSION || minor != since_of(name)) {
			fclose(f);
			fail_msg("docs/protocol.md:%d: `%s` since v%u.%u; "
			         "requests.def says v%d.%u",
			    lineno, name, major, minor, SV_PROTOCOL_VERSION,
			    since_of(name));
		}
		k++;
	}
	fclose(f);
	assert_int_equal(k, nw);
}

/* The table is whole: every row's body is an Envelope body, its reply a
 * different one, its since no later than this library's minor version,
 * and no body has two rows. */
static void
test_rows_sound(void **state)
{
	(void) state;
	assert_true(sv_req_count() > 0);
	assert_null(sv_req_at(sv_req_count()));
	for (size_t i = 0; i < sv_req_count(); i++) {
		const sv_req_row *r = sv_req_at(i);
		assert_non_null(body_field(r->body));
		assert_non_null(body_field(r->reply));
		assert_null(sv_req_find(r->reply));
		assert_true(r->since <= SV_PROTOCOL_MINOR);
		assert_ptr_equal(sv_req_find(r->body), r);
		assert_true(r->feature != NULL
		    || r->body == SUPERVISE__V1__ENVELOPE__BODY_HELLO);
	}
	for (size_t i = 0; i < sv_req_field_feature_count(); i++) {
		const sv_req_field_feature *ff = sv_req_field_feature_at(i);
		assert_non_null(body_field(ff->body));
		assert_true(ff->since <= SV_PROTOCOL_MINOR);
	}
	assert_null(sv_req_field_feature_at(sv_req_field_feature_count()));
	assert_null(sv_req_find(SUPERVISE__V1__ENVELOPE__BODY_ERROR));
	assert_null(sv_req_find(SUPERVISE__V1__ENVELOPE__BODY__NOT_SET));
}

/* envelope_of builds an envelope whose body is a default message of body
 * n; *bodyp is the message (free it). */
static void
envelope_of(svw_env *env, uint32_t n, ProtobufCMessage **bodyp)
{
	const ProtobufCFieldDescriptor   *f  = body_field(n);
	const ProtobufCMessageDescriptor *md = f->descriptor;
	ProtobufCMessage                 *body;

	supervise__v1__envelope__init(env);
	body = calloc(1, md->sizeof_message);
	assert_non_null(body);
	protobuf_c_message_init(md, body);
	*(uint32_t *) ((char *) env + f->quantifier_offset) = f->id;
	*(ProtobufCMessage **) ((char *) env + f->offset)   = body;
	*bodyp                                              = body;
}

/* The client's retry rule follows each row; RestartWorker is resent only
 * with its compare-and-swap; StartWorker and TerminateWorker never. */
static void
test_resend_rule(void **state)
{
	svw_env                      env = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__RestartWorker rw  = SUPERVISE__V1__RESTART_WORKER__INIT;
	Supervise__V1__HelloReply    hr  = SUPERVISE__V1__HELLO_REPLY__INIT;
	size_t                       ncas = 0;

	(void) state;
	for (size_t i = 0; i < sv_req_count(); i++) {
		const sv_req_row *r = sv_req_at(i);
		ProtobufCMessage *body;

		envelope_of(&env, r->body, &body);
		if (r->retry == SV_REQ_RETRY_CAS) {
			const ProtobufCFieldDescriptor *cg
			    = protobuf_c_message_descriptor_get_field_by_name(
			        body->descriptor, "check_generation");
			assert_non_null(cg);
			assert_false(sv_req_resend(&env));
			*(protobuf_c_boolean *) ((char *) body + cg->offset)
			    = 1;
			assert_true(sv_req_resend(&env));
			ncas++;
		} else {
			assert_int_equal(
			    sv_req_resend(&env), r->retry == SV_REQ_RETRY_YES);
		}
		free(body);
	}
	assert_int_equal(ncas, 1);
	/* The requests whose copy would act twice. */
	supervise__v1__envelope__init(&env);
	env.body_case      = SUPERVISE__V1__ENVELOPE__BODY_RESTART_WORKER;
	env.restart_worker = &rw;
	assert_false(sv_req_resend(&env));
	rw.check_generation = true;
	assert_true(sv_req_resend(&env));
	assert_int_equal(
	    sv_req_find(SUPERVISE__V1__ENVELOPE__BODY_START_WORKER)->retry,
	    SV_REQ_RETRY_NO);
	assert_int_equal(
	    sv_req_find(SUPERVISE__V1__ENVELOPE__BODY_TERMINATE_WORKER)->retry,
	    SV_REQ_RETRY_NO);
	/* A reply, no body, no envelope: never resent. */
	supervise__v1__envelope__init(&env);
	env.body_case   = SUPERVISE__V1__ENVELOPE__BODY_HELLO_REPLY;
	env.hello_reply = &hr;
	assert_false(sv_req_resend(&env));
	supervise__v1__envelope__init(&env);
	assert_false(sv_req_resend(&env));
	assert_false(sv_req_resend(NULL));
}

/* Hello's feature list: each feature once, in the table's order; more
 * than cap are counted, not written. */
static void
test_features_list(void **state)
{
	const char *all[SV_REQ_MAX_FEATURES];
	const char *two[2] = {NULL, NULL};
	size_t      n      = sv_req_features(all, SV_REQ_MAX_FEATURES);

	(void) state;
	assert_true(n > 2 && n <= SV_REQ_MAX_FEATURES);
	assert_string_equal(all[0], "identity");
	for (size_t i = 0; i < n; i++) {
		for (size_t j = i + 1; j < n; j++) {
			assert_true(strcmp(all[i], all[j]) != 0);
		}
	}
	assert_int_equal(sv_req_features(two, 2), n);
	assert_string_equal(two[0], all[0]);
	assert_string_equal(two[1], all[1]);
	/* Every row's feature is listed. */
	for (size_t i = 0; i < sv_req_count(); i++) {
		const char *f     = sv_req_at(i)->feature;
		bool        found = f == NULL;
		for (size_t j = 0; j < n && !found; j++) {
			found = strcmp(all[j], f) == 0;
		}
		assert_true(found);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rows_sound),
	    cmocka_unit_test(test_doc_request_table),
	    cmocka_unit_test(test_doc_feature_table),
	    cmocka_unit_test(test_resend_rule),
	    cmocka_unit_test(test_features_list),
	};
	return cmocka_run_group_tests_name("request_table", tests, NULL, NULL);
}
