/*
 * test_api_null.c — the public API given NULL (supervise/client.h,
 * "NULL handles"; activity.h): every accessor returns its documented
 * default, every call returns SV_EINVAL, every free or close ignores NULL,
 * and nothing crashes. No supervisor is needed: no call here gets as far
 * as the socket.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "supervise/activity.h"
#include "supervise/client.h"

/* Accessors of result handles: NULL reads as 0, "" or UNSPECIFIED. */
static void
test_accessors_of_null_handles(void **state)
{
	uint64_t    gen  = 7;
	sv_kind     kind = SV_KIND_THREAD;
	uint32_t    ord  = 7;
	const char *name = "x";

	(void) state;
	assert_int_equal(sv_hello_version(NULL), 0);
	assert_int_equal(sv_hello_minor_version(NULL), 0);
	assert_string_equal(sv_hello_server_name(NULL), "");
	assert_string_equal(sv_hello_supervisor_id(NULL), "");
	assert_int_equal(sv_hello_feature_count(NULL), 0);
	assert_string_equal(sv_hello_events_url(NULL), "");
	assert_null(sv_hello_feature(NULL, 0));
	assert_int_equal(sv_hello_durability_known(NULL), 0);
	assert_int_equal(sv_hello_durability_ok(NULL), 0);
	assert_string_equal(sv_hello_durability_reason(NULL), "");
	assert_int_equal(sv_hello_durability_since_ms(NULL), 0);
	assert_string_equal(sv_hello_durability_message(NULL), "");

	assert_string_equal(sv_identity_group(NULL), "");
	assert_int_equal(sv_identity_ordinal(NULL), 0);
	assert_int_equal(sv_identity_generation(NULL), 0);
	assert_int_equal(sv_identity_kind(NULL), SV_KIND_UNSPECIFIED);
	assert_int_equal(sv_identity_pid(NULL), 0);
	assert_string_equal(sv_identity_purpose(NULL), "");
	assert_string_equal(sv_identity_supervisor_id(NULL), "");
	assert_int_equal(sv_identity_group_size(NULL), 0);
	assert_int_equal(sv_identity_draining(NULL), 0);
	assert_int_equal(sv_identity_drain_deadline_in_ms(NULL), 0);
	assert_int_equal(sv_identity_frame_count(NULL), 0);
	assert_int_equal(
	    sv_identity_frame(NULL, 0, &kind, &ord, &name), SV_EINVAL);
	assert_int_equal(
	    sv_identity_parent(NULL, &kind, &ord, &name), SV_EINVAL);
	assert_int_equal(
	    sv_identity_frame_generation(NULL, 0, &gen), SV_EINVAL);
	/* Out-parameters untouched on error. */
	assert_int_equal(kind, SV_KIND_THREAD);
	assert_int_equal(ord, 7);
	assert_string_equal(name, "x");
	assert_int_equal(gen, 7);
	{
		sv_identity_fields f = {.size = sizeof(f)};
		assert_int_equal(sv_identity_get_fields(NULL, &f), SV_EINVAL);
	}

	assert_int_equal(sv_workers_count(NULL), 0);
	assert_string_equal(sv_workers_group(NULL, 0), "");
	assert_int_equal(sv_workers_ordinal(NULL, 0), 0);
	assert_int_equal(sv_workers_pid(NULL, 0), 0);
	assert_int_equal(sv_workers_state(NULL, 0), SV_STATE_UNSPECIFIED);
	assert_int_equal(sv_workers_last_exit_code(NULL, 0), -1);
	assert_string_equal(sv_workers_status_text(NULL, 0), "");
	assert_string_equal(sv_workers_activity(NULL, 0), "");

	assert_int_equal(sv_groups_count(NULL), 0);
	assert_string_equal(sv_groups_name(NULL, 0), "");
	assert_int_equal(sv_groups_count_wanted(NULL, 0), 0);
	assert_string_equal(sv_groups_failure_reason(NULL, 0), "");

	assert_int_equal(sv_event_seq(NULL), 0);
	assert_string_equal(sv_event_kind(NULL), "");
	assert_string_equal(sv_event_group(NULL), "");
	assert_int_equal(sv_event_is_worker(NULL), 0);
	assert_int_equal(sv_event_ordinal(NULL), 0);
	assert_int_equal(sv_event_generation(NULL), 0);
	assert_int_equal(sv_event_pid(NULL), 0);
	assert_int_equal(sv_event_time_unix_ms(NULL), 0);
	assert_string_equal(sv_event_supervisor_id(NULL), "");
	assert_string_equal(sv_event_details(NULL), "");
	assert_string_equal(sv_events_error_message(NULL), "");

	assert_int_equal(sv_lease_id(NULL), 0);
	assert_string_equal(sv_lease_pool(NULL), "");
	assert_int_equal(sv_lease_slot(NULL), 0);
	assert_int_equal(sv_lease_token(NULL), 0);
	assert_int_equal(sv_lease_expires_in_ms(NULL), 0);
	assert_string_equal(sv_lease_resource(NULL), "");
	assert_string_equal(sv_lease_holder_name(NULL), "");
	assert_int_equal(sv_lease_unclaimed(NULL), 0);
	assert_int_equal(sv_lease_epoch(NULL), 0);
	assert_int_equal(sv_leases_count(NULL), 0);
	assert_null(sv_leases_at(NULL, 0));
	assert_int_equal(sv_pools_count(NULL), 0);
	assert_string_equal(sv_pools_name(NULL, 0), "");
	assert_int_equal(sv_pools_slots(NULL, 0), 0);
	assert_string_equal(sv_pools_path(NULL, 0), "");
	assert_string_equal(sv_pools_on_release(NULL, 0), "");
	assert_string_equal(sv_pools_kind(NULL, 0), "");

	assert_int_equal(sv_drain_report_id(NULL), 0);
	assert_int_equal(sv_drain_report_done(NULL), 0);
	assert_string_equal(sv_drain_report_roll_reason(NULL), "");
	assert_int_equal(sv_drain_report_max_surge(NULL), 0);
	assert_int_equal(sv_drain_report_max_unavailable(NULL), 0);
	assert_int_equal(sv_drain_report_count(NULL), 0);
	assert_int_equal(sv_drain_report_reaped(NULL), 0);
	assert_string_equal(sv_drain_report_group(NULL, 0), "");
	assert_int_equal(sv_drain_report_pid(NULL, 0), 0);

	assert_string_equal(sv_state_name(SV_STATE_UNSPECIFIED), "unknown");
	assert_string_equal(sv_state_name(SV_STATE_DRAINING), "draining");
}

/* Calls given a NULL client, handle or out-parameter: SV_EINVAL. */
static void
test_calls_with_null(void **state)
{
	sv_workers      *w  = NULL;
	sv_groups       *g  = NULL;
	sv_hello        *h  = NULL;
	sv_identity     *id = NULL;
	sv_lease        *l  = NULL;
	sv_leases       *ls = NULL;
	sv_pools        *p  = NULL;
	sv_drain_report *r  = NULL;
	sv_events       *ev = NULL;
	sv_event        *e  = NULL;
	uint64_t         u  = 0;
	uint32_t         o  = 0;
	int              again;
	sv_whoami_result res = {.size = sizeof(res)};

	(void) state;
	assert_int_equal(sv_client_open(NULL, "ipc:///nowhere", 0), SV_EINVAL);
	assert_int_equal(sv_client_hello(NULL, 0, &h), SV_EINVAL);
	assert_int_equal(sv_client_whoami(NULL, 0, &id), SV_EINVAL);
	assert_int_equal(sv_client_whoami_copy(NULL, 0, &res), SV_EINVAL);
	assert_int_equal(sv_client_list(NULL, NULL, 0, &w), SV_EINVAL);
	assert_int_equal(sv_client_status(NULL, "g", 0, 0, &w), SV_EINVAL);
	assert_int_equal(sv_client_scale(NULL, "g", 1, 0, &o), SV_EINVAL);
	assert_int_equal(sv_client_stop(NULL, "g", 0, &o), SV_EINVAL);
	assert_int_equal(sv_client_restart(NULL, "g", 0, 0), SV_EINVAL);
	assert_int_equal(sv_client_restart_if(NULL, "g", 0, 1, 0), SV_EINVAL);
	assert_int_equal(sv_client_reset(NULL, "g", 0), SV_EINVAL);
	assert_int_equal(sv_client_start_worker(NULL, "g", 0, &o), SV_EINVAL);
	assert_int_equal(
	    sv_client_terminate_worker(NULL, "g", 0, 0), SV_EINVAL);
	assert_int_equal(sv_client_groups(NULL, NULL, 0, &g), SV_EINVAL);
	assert_int_equal(sv_client_create_group(NULL, NULL, 0), SV_EINVAL);
	assert_int_equal(sv_client_delete_group(NULL, "g", 0), SV_EINVAL);
	assert_int_equal(sv_client_ready(NULL, "", 0), SV_EINVAL);
	assert_int_equal(sv_client_heartbeat(NULL, 0), SV_EINVAL);
	assert_int_equal(
	    sv_client_lease_acquire(NULL, "p", -1, 0, 0, 0, &l), SV_EINVAL);
	assert_int_equal(sv_client_lease_renew(NULL, 1, 0, 0, &l), SV_EINVAL);
	assert_int_equal(sv_client_lease_release(NULL, 1, 0, 0), SV_EINVAL);
	assert_int_equal(
	    sv_client_lease_claim(NULL, "p", 0, 1, 0, 0, &l), SV_EINVAL);
	assert_int_equal(
	    sv_client_lease_list(NULL, NULL, 0, 0, &ls), SV_EINVAL);
	assert_int_equal(sv_client_session_open(NULL, 1000, 0, &u), SV_EINVAL);
	assert_int_equal(sv_client_session_renew(NULL, 1, 0), SV_EINVAL);
	assert_int_equal(sv_client_session_close(NULL, 1, 0), SV_EINVAL);
	assert_int_equal(
	    sv_client_pool_create(NULL, "p", 1, 0, 0, NULL, NULL, NULL, 0),
	    SV_EINVAL);
	assert_int_equal(sv_client_pools(NULL, 0, &p), SV_EINVAL);
	assert_int_equal(sv_client_drain(NULL, NULL, -1, 0, 0, &r), SV_EINVAL);
	assert_int_equal(sv_client_drain_report(NULL, 1, 0, &r), SV_EINVAL);
	assert_int_equal(
	    sv_client_rolling_restart(NULL, "g", 0, 0, &r), SV_EINVAL);
	assert_int_equal(
	    sv_client_rolling_restart_budgets(NULL, "g", 0, 1, 0, 0, &r),
	    SV_EINVAL);
	assert_int_equal(sv_client_drain_extend(NULL, 1, 0), SV_EINVAL);
	assert_int_equal(sv_client_drain_ack(NULL, 1, 0), SV_EINVAL);
	assert_int_equal(sv_client_subworker_register(
	                     NULL, SV_KIND_THREAD, "t", -1, 0, 0, &id, &again),
	    SV_EINVAL);
	assert_int_equal(
	    sv_client_subworker_release(NULL, NULL, 0), SV_EINVAL);
	assert_int_equal(sv_events_open(NULL, NULL, NULL, 0), SV_EINVAL);
	assert_int_equal(sv_events_next(NULL, 0, &e), SV_EINVAL);
	assert_int_equal(sv_default_url(NULL, 64), SV_EINVAL);
	/* Nothing was handed out. */
	assert_null(w);
	assert_null(g);
	assert_null(h);
	assert_null(id);
	assert_null(l);
	assert_null(ls);
	assert_null(p);
	assert_null(r);
	assert_null(ev);
	assert_null(e);

	assert_int_equal(sv_groupspec_new(NULL, "p", 1, NULL), SV_EINVAL);
	assert_int_equal(sv_groupspec_add_arg(NULL, "a"), SV_EINVAL);
	assert_int_equal(sv_groupspec_add_env(NULL, "A=1"), SV_EINVAL);
	assert_int_equal(sv_groupspec_set_cwd(NULL, "/"), SV_EINVAL);
	assert_int_equal(sv_groupspec_set_max_count(NULL, 1), SV_EINVAL);
	assert_int_equal(sv_groupspec_set(NULL, "k", "v"), SV_EINVAL);

	assert_int_equal(sv_activity_region_open(NULL, "/x"), SV_EINVAL);
	assert_int_equal(sv_activity_enter(NULL, "x"), SV_EINVAL);
	assert_int_equal(sv_activity_leave(NULL), SV_EINVAL);
	assert_int_equal(sv_activity_depth(NULL, &o), SV_EINVAL);
	assert_int_equal(sv_activity_disable(NULL, 1), SV_EINVAL);
}

/* Free and close functions ignore NULL. */
static void
test_frees_ignore_null(void **state)
{
	(void) state;
	sv_client_close(NULL);
	sv_hello_free(NULL);
	sv_identity_free(NULL);
	sv_workers_free(NULL);
	sv_groups_free(NULL);
	sv_groupspec_free(NULL);
	sv_events_close(NULL);
	sv_event_free(NULL);
	sv_lease_free(NULL);
	sv_leases_free(NULL);
	sv_pools_free(NULL);
	sv_drain_report_free(NULL);
	sv_activity_region_close(NULL);
}

/* sv_client_error_detail without a handle: the thread's open failure. */
static void
test_error_detail_of_open(void **state)
{
	sv_client *c = NULL;
	char       buf[SV_ERROR_DETAIL_SIZE];
	char       small[4] = "abc";

	(void) state;
	assert_int_equal(sv_client_open(&c, "tcp://x", 0), SV_EINVAL);
	assert_null(c);
	assert_int_equal(
	    sv_client_error_detail(NULL, buf, sizeof(buf)), SV_OK);
	assert_string_equal(buf, sv_client_error_message(NULL));
	assert_true(strlen(buf) > sizeof(small));
	assert_int_equal(
	    sv_client_error_detail(NULL, small, sizeof(small)), SV_ETOOLARGE);
	assert_memory_equal(small, buf, sizeof(small) - 1);
	assert_int_equal(small[sizeof(small) - 1], '\0');
	assert_int_equal(sv_client_error_detail(NULL, NULL, 8), SV_EINVAL);
	assert_int_equal(sv_client_error_detail(NULL, small, 0), SV_EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_accessors_of_null_handles),
	    cmocka_unit_test(test_calls_with_null),
	    cmocka_unit_test(test_frees_ignore_null),
	    cmocka_unit_test(test_error_detail_of_open),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
