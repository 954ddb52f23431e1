/*
 * integration_supervision.c — the supervision core's decisions carried out
 * with real processes, observed on the event stream (nng SUB on
 * DIR/events.sock) and in the status tables: restart types, restart
 * intensity and reset, the one_for_all strategy's order, stop escalation.
 *
 * Requests the C client does not wrap yet (ListGroups, ResetGroup) are
 * sent as raw Envelopes with the generated protobuf-c code of the public
 * .proto, like integration_wire does. No fixed sleeps: every wait is for an
 * event or a status, with a deadline.
 */
#include "harness.h"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nng/supplemental/util/platform.h>
#include <nng/protocol/reqrep0/req.h>

#include "supervise/v1/supervise.pb-c.h"

#define EV_WAIT_MS 10000

typedef Supervise__V1__Event ev_t;

/* The event subscriber of one test: SP SUB spoken by hand over an AF_UNIX
 * socket (nng 1.5.2 can hang in nng_close() of a SUB socket while events
 * arrive; a plain descriptor closes at once). */
typedef struct sub {
	int      fd;
	uint64_t last_seq;
} sub;

/* sub_io reads exactly n bytes within ms; false on timeout or error. */
static bool
sub_io(int fd, void *buf, size_t n, int ms)
{
	char   *p   = buf;
	int64_t end = it_now_ms() + ms;

	while (n > 0) {
		struct pollfd pfd  = {fd, POLLIN, 0};
		int64_t       left = end - it_now_ms();
		ssize_t       r;
		if (left <= 0 || poll(&pfd, 1, (int) left) <= 0) {
			return false;
		}
		if ((r = read(fd, p, n)) <= 0) {
			return false;
		}
		p += r;
		n -= (size_t) r;
	}
	return true;
}

/* sub_open subscribes to every event of ctx's daemon. */
static void
sub_open(it_ctx *ctx, sub *s)
{
	static const unsigned char hdr[8] = {0, 'S', 'P', 0, 0, 0x21, 0, 0};
	unsigned char              peer[8];
	struct sockaddr_un         sa = {.sun_family = AF_UNIX};

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/events.sock", ctx->dir);
	s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(s->fd >= 0);
	assert_int_equal(
	    connect(s->fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
	assert_int_equal(
	    write(s->fd, hdr, sizeof(hdr)), (ssize_t) sizeof(hdr));
	assert_true(sub_io(s->fd, peer, sizeof(peer), IT_CALL_MS));
	assert_int_equal(peer[5], 0x20); /* PUB v0 */
	s->last_seq = 0;
}

/* sub_close ends the subscription. */
static void
sub_close(sub *s)
{
	close(s->fd);
}

/* sub_next returns the next event (free with supervise__v1__event__free_
 * unpacked), or NULL when none arrives within ms. Checks the topic and that
 * sequence numbers grow by exactly one. */
static ev_t *
sub_next(sub *s, int ms)
{
	unsigned char h[9];
	static char   body[65536];
	uint64_t      len = 0;
	ev_t         *e;
	size_t        tl;

	if (!sub_io(s->fd, h, sizeof(h), ms)) {
		return NULL;
	}
	for (int i = 1; i < 9; i++) {
		len = (len << 8) | h[i];
	}
	assert_int_equal(h[0], 1);
	assert_true(len < sizeof(body));
	assert_true(sub_io(s->fd, body, (size_t) len, IT_CALL_MS));
	tl = strnlen(body, (size_t) len);
	assert_true(tl < len);
	assert_true(body[0] == 'w' || body[0] == 'g');
	e = supervise__v1__event__unpack(
	    NULL, (size_t) len - tl - 1, (uint8_t *) body + tl + 1);
	assert_non_null(e);
	if (body[0] == 'w') {
		char want[128];
		snprintf(want, sizeof(want), "w/%s/%u/", e->group, e->ordinal);
		assert_string_equal(body, want);
	}
	if (s->last_seq != 0) {
		assert_int_equal(e->seq, s->last_seq + 1);
	}
	s->last_seq = e->seq;
	return e;
}

/* raw_call sends one request envelope and returns the decoded reply. */
static Supervise__V1__Envelope *
raw_call(it_ctx *ctx, Supervise__V1__Envelope *req)
{
	nng_socket               sock;
	nng_msg                 *m;
	uint8_t                  buf[4096];
	size_t                   n;
	Supervise__V1__Envelope *rep;

	req->version    = 1;
	req->request_id = 42;
	n               = supervise__v1__envelope__pack(req, buf);
	assert_int_equal(nng_req0_open(&sock), 0);
	assert_int_equal(
	    nng_socket_set_ms(sock, NNG_OPT_RECVTIMEO, IT_CALL_MS), 0);
	assert_int_equal(nng_dial(sock, ctx->url, NULL, 0), 0);
	assert_int_equal(nng_send(sock, buf, n, 0), 0);
	assert_int_equal(nng_recvmsg(sock, &m, 0), 0);
	rep = supervise__v1__envelope__unpack(
	    NULL, nng_msg_len(m), nng_msg_body(m));
	nng_msg_free(m);
	nng_close(sock);
	assert_non_null(rep);
	return rep;
}

/* group_info asks ListGroups for one group (free the reply). */
static Supervise__V1__Envelope *
group_info(it_ctx *ctx, const char *group)
{
	Supervise__V1__Envelope   e  = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__ListGroups lg = SUPERVISE__V1__LIST_GROUPS__INIT;
	Supervise__V1__Envelope  *r;

	lg.group      = (char *) group;
	e.body_case   = SUPERVISE__V1__ENVELOPE__BODY_LIST_GROUPS;
	e.list_groups = &lg;
	r             = raw_call(ctx, &e);
	assert_int_equal(
	    r->body_case, SUPERVISE__V1__ENVELOPE__BODY_GROUP_LIST);
	assert_int_equal(r->group_list->n_groups, 1);
	return r;
}

/* wait_group waits until the group is failed (or not) with count. */
static void
wait_group(it_ctx *ctx, const char *group, bool failed, uint32_t count)
{
	int64_t end = it_now_ms() + EV_WAIT_MS;

	for (;;) {
		Supervise__V1__Envelope  *r  = group_info(ctx, group);
		Supervise__V1__GroupInfo *gi = r->group_list->groups[0];
		bool ok = gi->failed == failed && gi->count == count;
		if (ok && failed) {
			assert_non_null(
			    strstr(gi->failure_reason, "restarts"));
		}
		supervise__v1__envelope__free_unpacked(r, NULL);
		if (ok) {
			return;
		}
		if (it_now_ms() > end) {
			fail_msg("%s never became failed=%d count=%u", group,
			    failed, count);
		}
		nng_msleep(10); /* bounded poll of the status */
	}
}

/* sync_events makes sure the subscription is live: it asks for a no-op
 * scale of group (which emits GROUP_SCALED) until one arrives. */
static void
sync_events(it_ctx *ctx, sub *s, const char *group, uint32_t count)
{
	int64_t end = it_now_ms() + EV_WAIT_MS;

	for (;;) {
		ev_t *e;
		IT_PASS(ctx,
		    sv_client_scale(
		        ctx->client, group, count, IT_CALL_MS, NULL));
		while ((e = sub_next(s, 100)) != NULL) {
			bool done = e->kind_case
			    == SUPERVISE__V1__EVENT__KIND_GROUP_SCALED;
			supervise__v1__event__free_unpacked(e, NULL);
			if (done) {
				return;
			}
		}
		if (it_now_ms() > end) {
			fail_msg("the event subscription never became live");
		}
	}
}

/* wait_event returns the next event of kind (others are skipped). */
static ev_t *
wait_event(sub *s, Supervise__V1__Event__KindCase kind)
{
	int64_t end = it_now_ms() + EV_WAIT_MS;
	ev_t   *e;

	while (it_now_ms() < end) {
		if ((e = sub_next(s, 200)) == NULL) {
			continue;
		}
		if (e->kind_case == kind) {
			return e;
		}
		supervise__v1__event__free_unpacked(e, NULL);
	}
	fail_msg("no event of kind %d within %d ms", (int) kind, EV_WAIT_MS);
	return NULL;
}

static const char *const exit0[] = {"-c", "exit 0", NULL};
static const char *const exit1[] = {"-c", "exit 1", NULL};
static const char *const exit3[] = {"-c", "exit 3", NULL};

/*
 * transient: an exit 0 is not restarted and releases the ordinal (count
 * 0); temporary: neither is an exit 1. A transient worker exiting 3 with
 * max_restarts 3 is restarted exactly 3 times, then its group is failed;
 * reset starts it again, and it fails again after exactly 3 restarts, as
 * the event stream shows.
 */
static void
test_restart_types_and_intensity(void **state)
{
	static const struct it_group g[] = {
	    {.name       = "done",
	        .count   = 1,
	        .program = "/bin/sh",
	        .args    = exit0,
	        .extra   = "    restart = \"transient\";"},
	    {.name       = "once",
	        .count   = 1,
	        .program = "/bin/sh",
	        .args    = exit1,
	        .extra   = "    restart = \"temporary\";"},
	    {.name       = "crash",
	        .count   = 1,
	        .program = "/bin/sh",
	        .args    = exit3,
	        .extra   = "    restart = \"transient\"; max_restarts = 3; "
	                   "max_seconds = 600;"},
	};
	it_ctx                    ctx;
	sub                       s;
	int                       restarts = 0;
	ev_t                     *e;
	Supervise__V1__Envelope   env = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__ResetGroup rg  = SUPERVISE__V1__RESET_GROUP__INIT;
	Supervise__V1__Envelope  *r;

	(void) state;
	assert_int_equal(it_start(&ctx, g, 3), 0);
	wait_group(&ctx, "done", false, 0);
	wait_group(&ctx, "once", false, 0);
	wait_group(&ctx, "crash", true, 1);

	sub_open(&ctx, &s);
	sync_events(&ctx, &s, "done", 0);
	rg.group        = "crash";
	env.body_case   = SUPERVISE__V1__ENVELOPE__BODY_RESET_GROUP;
	env.reset_group = &rg;
	r               = raw_call(&ctx, &env);
	assert_int_equal(
	    r->body_case, SUPERVISE__V1__ENVELOPE__BODY_GROUP_INFO);
	assert_false(r->group_info->failed);
	supervise__v1__envelope__free_unpacked(r, NULL);
	e = wait_event(&s, SUPERVISE__V1__EVENT__KIND_GROUP_RESET);
	assert_string_equal(e->group, "crash");
	supervise__v1__event__free_unpacked(e, NULL);
	for (;;) {
		e = sub_next(&s, EV_WAIT_MS);
		assert_non_null(e);
		if (e->kind_case
		    == SUPERVISE__V1__EVENT__KIND_RESTART_SCHEDULED) {
			restarts++;
		} else if (e->kind_case == SUPERVISE__V1__EVENT__KIND_EXITED) {
			assert_true(e->exited->exited);
			assert_int_equal(e->exited->code, 3);
		}
		if (e->kind_case == SUPERVISE__V1__EVENT__KIND_GROUP_FAILED) {
			assert_non_null(
			    strstr(e->group_failed->reason, "3 restarts"));
			supervise__v1__event__free_unpacked(e, NULL);
			break;
		}
		supervise__v1__event__free_unpacked(e, NULL);
	}
	assert_int_equal(restarts, 3);
	wait_group(&ctx, "crash", true, 1);
	/* A restart of a failed group's worker is refused with a reason. */
	IT_FAIL(&ctx, sv_client_restart(ctx.client, "crash", 0, IT_CALL_MS),
	    SV_EBUSY);
	assert_non_null(
	    strstr(sv_client_error_message(ctx.client), "supervisectl reset"));
	sub_close(&s);
	assert_int_equal(it_stop(&ctx), 0);
}

/*
 * one_for_all: when a[1] is killed, the siblings stop one at a time in
 * reverse start order (b[0], then a[0]) and all three start again in start
 * order (a[0], a[1], b[0]).
 */
static void
test_one_for_all_order(void **state)
{
	static const struct it_group g[]
	    = {{.name = "a", .count = 2}, {.name = "b", .count = 1}};
	it_ctx                   ctx;
	sub                      s;
	struct it_report         rep[3];
	sv_workers              *w;
	int64_t                  pid = 0;
	char                     seen[8][16];
	int                      n = 0;
	static const char *const want[]
	    = {"stop b0", "stop a0", "start a0", "start a1", "start b0"};

	(void) state;
	it_config_top = "strategy = \"one_for_all\";";
	assert_int_equal(it_start(&ctx, g, 2), 0);
	it_config_top = NULL;
	it_expect_reports(&ctx, 3, rep);
	sub_open(&ctx, &s);
	sync_events(&ctx, &s, "b", 1);
	IT_PASS(&ctx, sv_client_status(ctx.client, "a", 1, IT_CALL_MS, &w));
	pid = sv_workers_pid(w, 0);
	sv_workers_free(w);
	assert_true(pid > 0);
	assert_int_equal(kill((pid_t) pid, SIGKILL), 0);
	while (n < 5) {
		ev_t *e = sub_next(&s, EV_WAIT_MS);
		assert_non_null(e);
		if (e->kind_case == SUPERVISE__V1__EVENT__KIND_STOPPING) {
			assert_string_equal(e->stopping->reason, "strategy");
			snprintf(seen[n++], sizeof(seen[0]), "stop %s%u",
			    e->group, e->ordinal);
		} else if (e->kind_case
		    == SUPERVISE__V1__EVENT__KIND_STARTED) {
			snprintf(seen[n++], sizeof(seen[0]), "start %s%u",
			    e->group, e->ordinal);
		}
		supervise__v1__event__free_unpacked(e, NULL);
	}
	for (int i = 0; i < 5; i++) {
		assert_string_equal(seen[i], want[i]);
	}
	it_expect_reports(&ctx, 3, rep);
	sub_close(&s);
	assert_int_equal(it_stop(&ctx), 0);
}

/*
 * A worker that ignores SIGTERM is restarted by the operator: the events
 * show the stop, the unresponsive worker, the escalation to SIGKILL, its
 * exit by signal 9 stopped for "restart", and the next generation's start.
 */
static void
test_stop_escalation(void **state)
{
	static const struct it_group g[] = {{.name = "stubborn",
	    .count                                 = 1,
	    .ignore_term                           = true,
	    .stop_timeout_ms                       = 200}};
	it_ctx                       ctx;
	sub                          s;
	struct it_report             rep;
	ev_t                        *e;

	(void) state;
	assert_int_equal(it_start(&ctx, g, 1), 0);
	it_expect_reports(&ctx, 1, &rep);
	sub_open(&ctx, &s);
	sync_events(&ctx, &s, "stubborn", 1);
	IT_PASS(
	    &ctx, sv_client_restart(ctx.client, "stubborn", 0, IT_CALL_MS));
	e = wait_event(&s, SUPERVISE__V1__EVENT__KIND_STOPPING);
	assert_int_equal(e->pid, rep.pid);
	supervise__v1__event__free_unpacked(e, NULL);
	e = wait_event(&s, SUPERVISE__V1__EVENT__KIND_UNRESPONSIVE);
	assert_string_equal(e->unresponsive->phase, "stop");
	assert_string_equal(e->unresponsive->action, "escalate");
	supervise__v1__event__free_unpacked(e, NULL);
	e = wait_event(&s, SUPERVISE__V1__EVENT__KIND_ESCALATED);
	supervise__v1__event__free_unpacked(e, NULL);
	e = wait_event(&s, SUPERVISE__V1__EVENT__KIND_EXITED);
	assert_false(e->exited->exited);
	assert_int_equal(e->exited->signal, SIGKILL);
	assert_string_equal(e->exited->stopped_by, "restart");
	supervise__v1__event__free_unpacked(e, NULL);
	e = wait_event(&s, SUPERVISE__V1__EVENT__KIND_STARTED);
	assert_int_equal(e->generation, 1);
	supervise__v1__event__free_unpacked(e, NULL);
	it_expect_reports(&ctx, 1, &rep);
	assert_int_equal(rep.generation, 1);
	sub_close(&s);
	assert_int_equal(it_stop(&ctx), 0);
}

/*
 * An operator restart of a worker waiting in backoff starts it at once and
 * clears its failure history: right after the reply the worker runs, with
 * a pid and no fast failures (the skeleton kept the history, so the next
 * start waited 6,400 ms after six fast failures, and answered BACKOFF with
 * pid 0). The worker fails on its first run only.
 */
static void
test_restart_in_backoff(void **state)
{
	static const char *const     args[] = {"-c",
	        "d=${SUPERVISE_URL#ipc://}; d=${d%/control.sock}; "
	            "n=$(cat $d/runs 2>/dev/null || echo 0); echo $((n+1)) >$d/runs; "
	            "[ $n -ge 1 ] && exec sleep 1000; exit 1",
	        NULL};
	static const struct it_group g[]    = {{.name = "flaky",
	       .count                                 = 1,
	       .program                               = "/bin/sh",
	       .args                                  = args,
	       .backoff_ms                            = 5000}};
	it_ctx                       ctx;
	sv_workers                  *w;
	int64_t                      end;
	bool                         backoff;

	(void) state;
	assert_int_equal(it_start(&ctx, g, 1), 0);
	end = it_now_ms() + EV_WAIT_MS;
	do { /* bounded poll until it waits 5 s after its failure */
		if (it_now_ms() > end) {
			fail_msg("flaky[0] never waited in backoff");
		}
		nng_msleep(10);
		IT_PASS(&ctx,
		    sv_client_status(ctx.client, "flaky", 0, IT_CALL_MS, &w));
		backoff = sv_workers_state(w, 0) == SV_STATE_BACKOFF
		    && sv_workers_fast_failures(w, 0) == 1;
		sv_workers_free(w);
	} while (!backoff);
	IT_PASS(&ctx, sv_client_restart(ctx.client, "flaky", 0, IT_CALL_MS));
	IT_PASS(
	    &ctx, sv_client_status(ctx.client, "flaky", 0, IT_CALL_MS, &w));
	assert_true(sv_workers_pid(w, 0) > 0);
	assert_int_equal(sv_workers_fast_failures(w, 0), 0);
	assert_int_equal(sv_workers_restart_in_ms(w, 0), 0);
	assert_int_not_equal(sv_workers_state(w, 0), SV_STATE_BACKOFF);
	sv_workers_free(w);
	assert_int_equal(it_stop(&ctx), 0);
}

static char ctl_path[4096]; /* supervisectl of this build */

/* wait_file reads an integer written to path, waiting for it. */
static int
wait_file(const char *path)
{
	int64_t end = it_now_ms() + EV_WAIT_MS;
	FILE   *f;
	int     v = -1;

	while ((f = fopen(path, "r")) == NULL) {
		if (it_now_ms() > end) {
			fail_msg("%s never appeared", path);
		}
		nng_msleep(10); /* bounded poll for the worker's result */
	}
	assert_int_equal(fscanf(f, "%d", &v), 1);
	fclose(f);
	return v;
}

/*
 * ctl_script writes into buf a /bin/sh script for a worker: it finds the
 * test's directory $d (the daemon's socket_dir) in $SUPERVISE_URL, runs
 * `supervisectl cmd` with its stderr to err, leaves the exit status in
 * $d/TAG.rc (whole, by a rename) and then sleeps.
 */
static void
ctl_script(
    char *buf, size_t len, const char *cmd, const char *err, const char *tag)
{
	snprintf(buf, len,
	    "d=${SUPERVISE_URL#ipc://}; d=${d%%/control.sock}; "
	    "%s %s 2>%s; echo $? >$d/%s.tmp "
	    "&& mv $d/%s.tmp $d/%s.rc; exec sleep 1000",
	    ctl_path, cmd, err, tag, tag, tag);
}

/*
 * Workers are not administrators: a worker (here a shell script running
 * supervisectl) asking to scale another group is refused with
 * PERMISSION_DENIED, unless its own group is granted admin.
 */
static void
test_workers_are_not_admins(void **state)
{
	static char     rogue_sh[8192], boss_sh[8192];
	const char     *rogue_args[] = {"-c", rogue_sh, NULL};
	const char     *boss_args[]  = {"-c", boss_sh, NULL};
	struct it_group g[]          = {
	             {.name = "victim", .count = 1},
	             {.name = "rogue", .count = 1, .program = "/bin/sh"},
	             {.name       = "boss",
	                 .count   = 1,
	                 .program = "/bin/sh",
	                 .extra   = "    admin = true;"},
        };
	it_ctx           ctx;
	struct it_report rep;
	char             path[256], err[512] = "";
	sv_groups       *gr;
	FILE            *f;

	(void) state;
	/* Each script finds the test's directory (the daemon's socket_dir)
	 * in $SUPERVISE_URL and leaves supervisectl's status and stderr
	 * there. */
	ctl_script(rogue_sh, sizeof(rogue_sh), "scale victim 3",
	    "$d/rogue.err", "rogue");
	ctl_script(
	    boss_sh, sizeof(boss_sh), "scale victim 2", "$d/boss.err", "boss");
	g[1].args = rogue_args;
	g[2].args = boss_args;
	assert_int_equal(it_start(&ctx, g, 3), 0);
	it_expect_reports(&ctx, 1, &rep);
	snprintf(path, sizeof(path), "%s/rogue.rc", ctx.dir);
	assert_int_equal(wait_file(path), 1);
	snprintf(path, sizeof(path), "%s/rogue.err", ctx.dir);
	if ((f = fopen(path, "r")) != NULL) {
		size_t n = fread(err, 1, sizeof(err) - 1, f);
		err[n]   = '\0';
		fclose(f);
	}
	assert_non_null(strstr(err, "not granted admin"));
	snprintf(path, sizeof(path), "%s/boss.rc", ctx.dir);
	assert_int_equal(wait_file(path), 0);
	IT_PASS(&ctx, sv_client_groups(ctx.client, "victim", IT_CALL_MS, &gr));
	assert_int_equal(sv_groups_count_wanted(gr, 0), 2);
	sv_groups_free(gr);
	assert_int_equal(it_stop(&ctx), 0);
}

/*
 * notify_access: a shell worker runs `supervisectl ready up` as a child.
 * With the default ("main") the child is refused and the worker stays
 * STARTING; with "all" the worker becomes ready with that status text.
 */
static void
test_notify_access_all(void **state)
{
	static char     sh[8192];
	const char     *args[] = {"-c", sh, NULL};
	struct it_group g[]    = {
	       {.name       = "strict",
	           .count   = 1,
	           .program = "/bin/sh",
	           .extra   = "    ready = true;"},
	       {.name       = "relaxed",
	           .count   = 1,
	           .program = "/bin/sh",
	           .extra   = "    ready = true; notify_access = \"all\";"},
        };
	it_ctx      ctx;
	sv_workers *w;
	char        path[256];
	int64_t     end;

	(void) state;
	ctl_script(
	    sh, sizeof(sh), "ready up", "/dev/null", "$SUPERVISE_GROUP");
	g[0].args = args;
	g[1].args = args;
	assert_int_equal(it_start(&ctx, g, 2), 0);
	snprintf(path, sizeof(path), "%s/strict.rc", ctx.dir);
	assert_int_equal(wait_file(path), 1);
	snprintf(path, sizeof(path), "%s/relaxed.rc", ctx.dir);
	assert_int_equal(wait_file(path), 0);
	end = it_now_ms() + EV_WAIT_MS;
	for (;;) {
		IT_PASS(&ctx,
		    sv_client_status(
		        ctx.client, "relaxed", 0, IT_CALL_MS, &w));
		bool ok = sv_workers_ready(w, 0)
		    && strcmp(sv_workers_status_text(w, 0), "up") == 0
		    && sv_workers_state(w, 0) == SV_STATE_RUNNING;
		sv_workers_free(w);
		if (ok) {
			break;
		}
		if (it_now_ms() > end) {
			fail_msg("relaxed[0] never became ready with \"up\"");
		}
		nng_msleep(10); /* bounded poll of the status */
	}
	IT_PASS(
	    &ctx, sv_client_status(ctx.client, "strict", 0, IT_CALL_MS, &w));
	assert_false(sv_workers_ready(w, 0));
	assert_int_equal(sv_workers_state(w, 0), SV_STATE_STARTING);
	sv_workers_free(w);
	assert_int_equal(it_stop(&ctx), 0);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_restart_types_and_intensity),
	    cmocka_unit_test(test_one_for_all_order),
	    cmocka_unit_test(test_stop_escalation),
	    cmocka_unit_test(test_workers_are_not_admins),
	    cmocka_unit_test(test_notify_access_all),
	    cmocka_unit_test(test_restart_in_backoff),
	};
	char *slash;

	/* supervisectl of the same build: BUILD/cli/, two levels up. */
	snprintf(ctl_path, sizeof(ctl_path), "%s", argv[0]);
	if ((slash = strrchr(ctl_path, '/')) != NULL) {
		*slash = '\0';
	} else {
		snprintf(ctl_path, sizeof(ctl_path), ".");
	}
	strncat(ctl_path, "/../../cli/supervisectl",
	    sizeof(ctl_path) - strlen(ctl_path) - 1);

	it_args(argc, argv);
	return it_finish(cmocka_run_group_tests_name(
	    "integration_supervision", tests, NULL, NULL));
}
