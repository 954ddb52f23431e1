/*
 * integration_events.c — nng stays the protocol's reference peer: a stock
 * nng REQ socket and a stock nng SUB socket (libnng itself, not the
 * project's transport) talk to a real supervised; and the daemon runs no
 * thread of nng's: exactly two threads (the loop thread, which serves the
 * control, event and notify sockets, and the log writer).
 *
 * Design: one daemon with one worker. The SUB dials events.sock and waits
 * (condition variable, deadline) until nng says its pipe is up
 * (NNG_PIPE_EV_ADD_POST: both SP headers exchanged); the REQ round trip
 * that follows goes through the daemon's loop after the SUB's header was
 * already in its socket, so the subscription is served before the worker
 * is killed. The events are then read with nng's receive timeout. No
 * sleep anywhere.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"

#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nng/protocol/pubsub0/sub.h>
#include <nng/protocol/reqrep0/req.h>

#include "supervise/v1/supervise.pb-c.h"

/* The SUB's pipe is up (set from an nng thread). */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t  cv;
	bool            up;
} pipe_up = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};

/* on_pipe records that the SUB's pipe finished its handshake. */
static void
on_pipe(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	(void) p;
	(void) ev;
	(void) arg;
	pthread_mutex_lock(&pipe_up.mu);
	pipe_up.up = true;
	pthread_cond_broadcast(&pipe_up.cv);
	pthread_mutex_unlock(&pipe_up.mu);
}

/* wait_pipe_up waits up to ms for on_pipe. */
static bool
wait_pipe_up(int ms)
{
	struct timespec ts;
	bool            up;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long) (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&pipe_up.mu);
	while (!pipe_up.up
	    && pthread_cond_timedwait(&pipe_up.cv, &pipe_up.mu, &ts) == 0) {
	}
	up = pipe_up.up;
	pthread_mutex_unlock(&pipe_up.mu);
	return up;
}

static int
setup_g1(void **state)
{
	static const struct it_group g[] = {{.name = "ref", .count = 1}};
	return it_setup_groups(state, g, 1);
}

/* req_call sends env (version and request id set here) on a stock nng REQ
 * socket and returns the decoded reply (free_unpacked it). */
static Supervise__V1__Envelope *
req_call(nng_socket req, Supervise__V1__Envelope *env, uint64_t id)
{
	uint8_t                  buf[1024];
	size_t                   n;
	nng_msg                 *m;
	Supervise__V1__Envelope *rep;
	int                      rv;

	env->version    = 1;
	env->request_id = id;
	n               = supervise__v1__envelope__get_packed_size(env);
	assert_true(n <= sizeof(buf));
	supervise__v1__envelope__pack(env, buf);
	if ((rv = nng_send(req, buf, n, 0)) != 0)
		fail_msg("nng_send: %s", nng_strerror(rv));
	if ((rv = nng_recvmsg(req, &m, 0)) != 0)
		fail_msg("nng_recvmsg: %s", nng_strerror(rv));
	rep = supervise__v1__envelope__unpack(
	    NULL, nng_msg_len(m), nng_msg_body(m));
	nng_msg_free(m);
	assert_non_null(rep);
	assert_int_equal(rep->version, 1);
	assert_int_equal(rep->request_id, id);
	return rep;
}

/* sub_next receives the next event within IT_REPORT_MS, checking its
 * topic; the topic is copied into topic. */
static Supervise__V1__Event *
sub_next(nng_socket sub, char *topic, size_t tlen)
{
	nng_msg              *m;
	size_t                len, n;
	const char           *body;
	Supervise__V1__Event *e;
	int                   rv;

	if ((rv = nng_recvmsg(sub, &m, 0)) != 0)
		fail_msg("no event: %s", nng_strerror(rv));
	len  = nng_msg_len(m);
	body = nng_msg_body(m);
	n    = strnlen(body, len);
	assert_true(n < len && n < tlen);
	memcpy(topic, body, n + 1);
	e = supervise__v1__event__unpack(
	    NULL, len - n - 1, (const uint8_t *) body + n + 1);
	nng_msg_free(m);
	assert_non_null(e);
	return e;
}

/* task_count counts the threads of pid (/proc/PID/task), printing each
 * one's name. */
static int
task_count(pid_t pid)
{
	char           path[64];
	DIR           *d;
	struct dirent *de;
	int            n = 0;

	snprintf(path, sizeof(path), "/proc/%ld/task", (long) pid);
	assert_non_null(d = opendir(path));
	while ((de = readdir(d)) != NULL) {
		char  comm[300], name[64] = "?";
		FILE *f;
		if (de->d_name[0] == '.')
			continue;
		snprintf(comm, sizeof(comm), "/proc/%ld/task/%s/comm",
		    (long) pid, de->d_name);
		if ((f = fopen(comm, "r")) != NULL) {
			if (fgets(name, sizeof(name), f) != NULL)
				name[strcspn(name, "\n")] = '\0';
			fclose(f);
		}
		print_message(
		    "[events] daemon thread %s: %s\n", de->d_name, name);
		n++;
	}
	closedir(d);
	return n;
}

/* A stock nng REQ and a stock nng SUB against supervised; then the
 * daemon's threads. */
static void
test_nng_reference_peers(void **state)
{
	it_ctx                  *ctx = *state;
	nng_socket               req, sub;
	Supervise__V1__Envelope  env = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__Hello     hi  = SUPERVISE__V1__HELLO__INIT;
	Supervise__V1__WhoAmI    who = SUPERVISE__V1__WHO_AM_I__INIT;
	Supervise__V1__Envelope *rep;
	Supervise__V1__Event    *e;
	char                     evurl[200], topic[128];
	struct it_report         rep1;
	long                     started_pid = 0;
	pid_t                    old;
	uint64_t                 seq;
	bool                     exited = false, started = false;
	int                      rv;

	snprintf(evurl, sizeof(evurl), "ipc://%s/events.sock", ctx->dir);
	/* SUB first: subscribe to everything, dial, wait for the pipe. */
	assert_int_equal(nng_sub0_open(&sub), 0);
	assert_int_equal(nng_socket_set(sub, NNG_OPT_SUB_SUBSCRIBE, "", 0), 0);
	assert_int_equal(
	    nng_socket_set_ms(sub, NNG_OPT_RECVTIMEO, IT_REPORT_MS), 0);
	assert_int_equal(
	    nng_pipe_notify(sub, NNG_PIPE_EV_ADD_POST, on_pipe, NULL), 0);
	if ((rv = nng_dial(sub, evurl, NULL, 0)) != 0)
		fail_msg("SUB dial %s: %s", evurl, nng_strerror(rv));
	assert_true(wait_pipe_up(IT_CALL_MS));

	/* REQ: Hello, then WhoAmI (the test is no worker: a typed Error). */
	assert_int_equal(nng_req0_open(&req), 0);
	assert_int_equal(
	    nng_socket_set_ms(req, NNG_OPT_RECVTIMEO, IT_CALL_MS), 0);
	if ((rv = nng_dial(req, ctx->url, NULL, 0)) != 0)
		fail_msg("REQ dial %s: %s", ctx->url, nng_strerror(rv));
	hi.client_name = "nng-reference";
	hi.min_version = 1;
	hi.max_version = 1;
	env.body_case  = SUPERVISE__V1__ENVELOPE__BODY_HELLO;
	env.hello      = &hi;
	rep            = req_call(req, &env, 11);
	assert_int_equal(
	    rep->body_case, SUPERVISE__V1__ENVELOPE__BODY_HELLO_REPLY);
	assert_int_equal(rep->hello_reply->version, 1);
	assert_string_equal(rep->hello_reply->events_url, evurl);
	assert_true(rep->hello_reply->n_features > 0);
	supervise__v1__envelope__free_unpacked(rep, NULL);
	env.body_case = SUPERVISE__V1__ENVELOPE__BODY_WHOAMI;
	env.whoami    = &who;
	rep           = req_call(req, &env, 12);
	assert_int_equal(rep->body_case, SUPERVISE__V1__ENVELOPE__BODY_ERROR);
	assert_int_equal(rep->error->code,
	    SUPERVISE__V1__ERROR_CODE__ERROR_CODE_NOT_A_WORKER);
	supervise__v1__envelope__free_unpacked(rep, NULL);

	/* Kill the worker: the SUB hears it exit and start again. */
	it_expect_reports(ctx, 1, &rep1);
	assert_int_equal(it_list(ctx, "ref", NULL, &old, 1), 1);
	assert_int_equal(kill(old, SIGKILL), 0);
	while (!(exited && started)) {
		e = sub_next(sub, topic, sizeof(topic));
		assert_string_equal(topic, "w/ref/0/");
		assert_string_equal(e->group, "ref");
		if (exited) {
			assert_int_equal(e->seq, seq + 1);
		}
		seq = e->seq;
		if (e->kind_case == SUPERVISE__V1__EVENT__KIND_EXITED) {
			assert_int_equal(e->pid, old);
			assert_int_equal(e->exited->signal, SIGKILL);
			exited = true;
		} else if (exited
		    && e->kind_case == SUPERVISE__V1__EVENT__KIND_STARTED) {
			assert_true(e->pid != old && e->pid > 0);
			started_pid = (long) e->pid;
			started     = true;
		}
		supervise__v1__event__free_unpacked(e, NULL);
	}
	it_expect_reports(ctx, 1, &rep1);
	assert_int_equal(rep1.pid, started_pid);

	/* The daemon served REQ and SUB peers with two threads: no nng. */
	assert_int_equal(task_count(ctx->daemon), 2);
	nng_close(req);
	nng_close(sub);
}

/* argv[1] = supervised, argv[2] = sv-testworker. */
int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
	        test_nng_reference_peers, setup_g1, it_teardown),
	};

	it_args(argc, argv);
	return it_finish(cmocka_run_group_tests_name(
	    "integration_events", tests, NULL, NULL));
}
