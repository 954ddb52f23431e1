/*
 * test_identity_env.c — sv_identity_from_env (client.h): the one contract
 * every binding's from_env uses.
 *
 * Each case hands the function an envp array, so no test touches the
 * process environment except the one that checks envp NULL reads it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "supervise/client.h"

/* A complete worker environment, as supervised sets it. */
static const char *good[] = {"PATH=/bin", "SUPERVISE_URL=ipc:///tmp/x",
    "SUPERVISE_GROUP=web.v2_a-b", "SUPERVISE_ORDINAL=3",
    "SUPERVISE_GENERATION=18446744073709551615",
    "SUPERVISE_PURPOSE=serve HTTP", "SUPERVISE_SUPERVISOR_ID=abc123", NULL};

/* run calls sv_identity_from_env on envp into a fresh *r. */
static sv_err
run(const char *const *envp, sv_whoami_result *r)
{
	memset(r, 0, sizeof(*r));
	r->size = sizeof(*r);
	return sv_identity_from_env(envp, r);
}

/* with copies good into env with variable name set to value (NULL:
 * removed). */
static void
with(const char **env, const char *name, const char *value, char *buf,
    size_t buflen)
{
	size_t k = 0, n = strlen(name);

	for (size_t i = 0; good[i] != NULL; i++) {
		if (strncmp(good[i], name, n) == 0 && good[i][n] == '=')
			continue;
		env[k++] = good[i];
	}
	if (value != NULL) {
		snprintf(buf, buflen, "%s=%s", name, value);
		env[k++] = buf;
	}
	env[k] = NULL;
}

static void
test_reads_every_field(void **state)
{
	sv_whoami_result r;

	(void) state;
	assert_int_equal(run(good, &r), SV_OK);
	assert_string_equal(r.fields.group, "web.v2_a-b");
	assert_int_equal(r.fields.ordinal, 3);
	assert_true(r.fields.generation == UINT64_MAX);
	assert_string_equal(r.fields.purpose, "serve HTTP");
	assert_string_equal(r.fields.supervisor_id, "abc123");
	assert_int_equal(r.fields.kind, SV_KIND_PROCESS);
	assert_int_equal(r.fields.pid, 0);
	assert_int_equal(r.fields.group_size, 0);
	assert_int_equal(r.fields.frame_count, 1);
	assert_int_equal(r.n_frames, 1);
	assert_int_equal(r.has_parent, 0);
	assert_string_equal(r.frames[0].name, "web.v2_a-b");
	assert_int_equal(r.frames[0].ordinal, 3);
	assert_true(r.frames[0].generation == UINT64_MAX);
	assert_int_equal(r.frames[0].kind, SV_KIND_PROCESS);
	/* Strings live in the result itself. */
	assert_true(r.fields.group >= r.text
	    && r.fields.group < r.text + sizeof(r.text));
}

static void
test_missing_is_not_a_worker(void **state)
{
	static const char *names[]
	    = {"SUPERVISE_GROUP", "SUPERVISE_ORDINAL", "SUPERVISE_GENERATION",
	        "SUPERVISE_PURPOSE", "SUPERVISE_SUPERVISOR_ID"};
	const char      *env[16];
	char             buf[64];
	sv_whoami_result r;

	(void) state;
	for (size_t i = 0; i < 5; i++) {
		with(env, names[i], NULL, buf, sizeof(buf));
		assert_int_equal(run(env, &r), SV_ENOTWORKER);
		assert_non_null(strstr(r.text, names[i]));
		assert_null(r.fields.group);
		assert_int_equal(r.n_frames, 0);
	}
	/* Empty counts as absent, except for the purpose. */
	with(env, "SUPERVISE_GROUP", "", buf, sizeof(buf));
	assert_int_equal(run(env, &r), SV_ENOTWORKER);
	with(env, "SUPERVISE_PURPOSE", "", buf, sizeof(buf));
	assert_int_equal(run(env, &r), SV_OK);
	assert_string_equal(r.fields.purpose, "");
	/* URL is not part of the identity. */
	with(env, "SUPERVISE_URL", NULL, buf, sizeof(buf));
	assert_int_equal(run(env, &r), SV_OK);
}

static void
test_malformed_is_invalid(void **state)
{
	static const struct {
		const char *name, *value;
	} bad[] = {{"SUPERVISE_ORDINAL", "x"}, {"SUPERVISE_ORDINAL", "-1"},
	    {"SUPERVISE_ORDINAL", " 1"}, {"SUPERVISE_ORDINAL", "+1"},
	    {"SUPERVISE_ORDINAL", "4294967296"},
	    {"SUPERVISE_ORDINAL", "111111111111111111111"},
	    {"SUPERVISE_GENERATION", "18446744073709551616"},
	    {"SUPERVISE_GENERATION", "99999999999999999999"},
	    {"SUPERVISE_GROUP", "a b"},
	    {"SUPERVISE_GROUP",
	        "ggggggggggggggggggggggggggggggggggggggggggggggggggggggggggg"
	        "gggggg"}};
	const char      *env[16];
	char             buf[2100];
	sv_whoami_result r;

	(void) state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		with(env, bad[i].name, bad[i].value, buf, sizeof(buf));
		assert_int_equal(run(env, &r), SV_EINVAL);
		assert_non_null(strstr(r.text, bad[i].name));
		assert_null(r.fields.group);
	}
	{
		char text[1026];

		memset(text, 'p', 1025);
		text[1025] = '\0';
		with(env, "SUPERVISE_PURPOSE", text, buf, sizeof(buf));
		assert_int_equal(run(env, &r), SV_EINVAL);
		text[1024] = '\0';
		with(env, "SUPERVISE_PURPOSE", text, buf, sizeof(buf));
		assert_int_equal(run(env, &r), SV_OK);
		assert_int_equal(strlen(r.fields.purpose), 1024);
	}
	/* Inclusive bounds. */
	with(env, "SUPERVISE_ORDINAL", "4294967295", buf, sizeof(buf));
	assert_int_equal(run(env, &r), SV_OK);
	assert_int_equal(r.fields.ordinal, UINT32_MAX);
}

static void
test_bad_out_is_einval_untouched(void **state)
{
	sv_whoami_result r;

	(void) state;
	assert_int_equal(sv_identity_from_env(good, NULL), SV_EINVAL);
	memset(&r, 0x5a, sizeof(r));
	r.size = sizeof(r) - 1;
	assert_int_equal(sv_identity_from_env(good, &r), SV_EINVAL);
	assert_int_equal((unsigned char) r.text[0], 0x5a);
}

static void
test_null_envp_reads_the_process_environment(void **state)
{
	sv_whoami_result r;

	(void) state;
	for (size_t i = 0; good[i] != NULL; i++)
		assert_int_equal(putenv((char *) good[i]), 0);
	assert_int_equal(run(NULL, &r), SV_OK);
	assert_string_equal(r.fields.group, "web.v2_a-b");
	assert_int_equal(unsetenv("SUPERVISE_GROUP"), 0);
	assert_int_equal(run(NULL, &r), SV_ENOTWORKER);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_reads_every_field),
	    cmocka_unit_test(test_missing_is_not_a_worker),
	    cmocka_unit_test(test_malformed_is_invalid),
	    cmocka_unit_test(test_bad_out_is_einval_untouched),
	    cmocka_unit_test(test_null_envp_reads_the_process_environment),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
