/*
 * integration_conns.c — nobody can lock the others out of the control
 * socket, and a client's deadline holds when the supervisor does not
 * answer (issue 15, items 2 and 3).
 *
 * test_worker_flood: a worker (sv-connflood flood) opens connections as
 * fast as it can, sending Hello on each and keeping every one that is
 * answered, until 8 in a row fail (5,000 at most: more than the 4,096 a
 * supervisor without bounds served). It must be held to its per-process
 * bound (at most 64 kept), its further connections answered EXHAUSTED; and
 * while it holds them, `supervisectl hello` succeeds, and a worker started
 * then (sv-connflood victim) gets WhoAmI and 5 Heartbeats answered.
 *
 * test_stopped_daemon_deadline: the test SIGSTOPs the daemon it started;
 * `supervisectl -t 1000 hello` (1000: so that starting a process under
 * load stays inside the margin) and a C client's open + Hello with a
 * 300 ms timeout each must fail with a timeout within 1.5 times that (it
 * took twice: the connection and the call each waited the whole timeout).
 * Then SIGCONT, and the daemon answers again.
 *
 * test_late_listener_deadline: the control socket appears 1 s after
 * `supervisectl -t 2000 hello` started and never answers; the call must
 * still end by its -t (it took -t after the socket appeared: 3 s).
 *
 * Waits: helper processes write one line to a file (renamed into place),
 * awaited with a deadline; supervisectl is awaited on a pidfd.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "conns_util.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "../sv_lag.h"
#include "../sv_tmpdir.h"

/* Where the helpers write (a directory made per run). */
static char out_dir[64];
static char flood_out[128], victim_out[128], ctl_err[128];

static const char *const flood_args[]
    = {"flood", flood_out, "5000", "1", NULL};
static const char *const victim_args[] = {"victim", victim_out, NULL};

/* setup_flood starts a daemon with the flooding worker and a victim
 * group of size 0 (scaled up once the flood holds). */
static int
setup_flood(void **state)
{
	static const struct it_group g[] = {
	    {.name       = "flood",
	        .count   = 1,
	        .program = SV_IT_CONNFLOOD,
	        .args    = flood_args},
	    {.name         = "victim",
	        .count     = 0,
	        .max_count = 1,
	        .program   = SV_IT_CONNFLOOD,
	        .args      = victim_args},
	};

	return it_setup_groups(state, g, 2);
}

/* The flood is held to its per-process bound; an administrator and a new
 * worker are still served. */
static void
test_worker_flood(void **state)
{
	it_ctx         *ctx = *state;
	struct cn_flood fl;
	char            line[128];
	int64_t         ms;
	int             rc;
	sv_client      *c = NULL;
	sv_hello       *h = NULL;

	cn_read_flood(flood_out, 0, 120000, &fl);
	/* The administrator, with the flood holding all it could get. */
	rc = cn_ctl_hello(ctx->url, 3000, ctl_err, &ms);
	if (rc != 0) {
		char err[512] = "";
		(void) cn_wait_line(ctl_err, 0, err, sizeof(err));
		fail_msg("supervisectl hello during the flood: exit %d after "
		         "%lld ms: %s",
		    rc, (long long) ms, err);
	}
	IT_PASS(ctx, sv_client_open(&c, ctx->url, IT_CALL_MS));
	if (sv_client_hello(c, IT_CALL_MS, &h) != SV_OK)
		fail_msg("a new client's Hello during the flood: %s",
		    sv_client_error_message(c));
	sv_hello_free(h);
	sv_client_close(c);
	/* A worker started now reaches the supervisor. */
	IT_PASS(
	    ctx, sv_client_scale(ctx->client, "victim", 1, IT_CALL_MS, NULL));
	if (cn_wait_line(victim_out, IT_REPORT_MS, line, sizeof(line)) != 0)
		fail_msg("the victim worker wrote nothing");
	fprintf(stderr, "[it] victim: %s", line);
	assert_string_equal(line, "whoami=OK heartbeat=OK\n");
	/* The flood itself: bounded, and told why. */
	assert_true(fl.accepted >= 2);
	assert_true(fl.accepted <= 64);
	assert_true(fl.exhausted >= 1);
}

/* setup_plain starts a daemon with one ordinary worker. */
static int
setup_plain(void **state)
{
	static const struct it_group g[] = {{.name = "w", .count = 1}};
	int                          rc  = it_setup_groups(state, g, 1);

	if (rc == 0) {
		struct it_report r;
		it_expect_reports(*state, 1, &r);
	}
	return rc;
}

/* A stopped supervisor: -t and a C client's timeout bound the whole
 * call, connecting included. */
static void
test_stopped_daemon_deadline(void **state)
{
	it_ctx    *ctx      = *state;
	sv_client *c        = NULL;
	sv_hello  *h        = NULL;
	char       err[512] = "";
	int64_t    ms, t0, startup, lag;
	sv_err     e;
	int        rc;

	startup = cn_ctl_startup_ms(ctl_err);
	lag     = sv_lag_ms(100); /* for the C client's bound (sv_lag.h) */
	assert_int_equal(kill(ctx->daemon, SIGSTOP), 0);
	rc = cn_ctl_hello(ctx->url, 1000, ctl_err, &ms);
	(void) cn_wait_line(ctl_err, 0, err, sizeof(err));
	fprintf(stderr,
	    "[it] supervisectl -t 1000 hello: exit %d, %lld ms (a run of "
	    "--version: %lld ms): %s",
	    rc, (long long) ms, (long long) startup, err);
	t0 = it_now_ms();
	e  = sv_client_open(&c, ctx->url, 300);
	if (e == SV_OK)
		e = sv_client_hello(c, 300, &h);
	t0 = it_now_ms() - t0;
	fprintf(stderr,
	    "[it] C client open + hello, 300 ms: %s, %lld ms (timer lag "
	    "%lld ms)\n",
	    sv_err_name(e), (long long) t0, (long long) lag);
	sv_client_close(c);
	assert_int_equal(kill(ctx->daemon, SIGCONT), 0);

	assert_int_equal(rc, 111);
	assert_non_null(strstr(err, sv_strerror(SV_ETIMEDOUT)));
	/* The call waited its -t, and once: not a second -t for the
	 * connect (2,000 ms and more before the fix). */
	assert_true(ms >= 1000 && ms < 1500 + startup);
	assert_int_equal(e, SV_ETIMEDOUT);
	/* Open and hello share the 300 ms: not 300 each. */
	assert_true(sv_lag_within(t0, 300, 450, &lag));
	/* Running again, it answers. */
	IT_PASS(ctx, sv_client_hello(ctx->client, IT_CALL_MS, &h));
	sv_hello_free(h);
}

/* How long after supervisectl starts the late listener appears, and the
 * -t given: a connect that took its own -t before the call's would end
 * after LATE_MS + LATE_T_MS. */
#define LATE_MS   1000
#define LATE_T_MS 2000

/* A listener that appears LATE_MS after supervisectl started and never
 * answers: -t bounds connecting and the call together (supervisectl gave
 * each its own -t: 3,000 ms and more for -t 2000). */
static void
test_late_listener_deadline(void **state)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char               path[128], url[160], err[512] = "";
	int64_t            ms, startup;
	pid_t              pid;
	int                rc, st;

	(void) state;
	startup = cn_ctl_startup_ms(ctl_err);
	snprintf(path, sizeof(path), "%s/late.sock", out_dir);
	snprintf(url, sizeof(url), "ipc://%s", path);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/late.sock", out_dir);
	(void) unlink(path);
	if ((pid = fork()) == 0) {
		/* The listener: bound late (the case under test), then
		 * silent until the test ends it. */
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		it_pause_ms(LATE_MS);
		if (fd < 0
		    || bind(fd, (struct sockaddr *) &sa, sizeof(sa)) != 0
		    || listen(fd, 8) != 0)
			_exit(1);
		for (;;)
			pause();
	}
	assert_true(pid > 0);
	rc = cn_ctl_hello(url, LATE_T_MS, ctl_err, &ms);
	(void) cn_wait_line(ctl_err, 0, err, sizeof(err));
	fprintf(stderr,
	    "[it] late listener, supervisectl -t %d hello: exit %d, "
	    "%lld ms (a run of --version: %lld ms): %s",
	    LATE_T_MS, rc, (long long) ms, (long long) startup, err);
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	(void) unlink(path);
	assert_int_equal(rc, 111);
	assert_non_null(strstr(err, sv_strerror(SV_ETIMEDOUT)));
	assert_true(ms >= LATE_T_MS);
	if (ms - startup >= LATE_MS + LATE_T_MS - 200)
		fail_msg(
		    "supervisectl -t %d took %lld ms: the connect and the "
		    "call each waited",
		    LATE_T_MS, (long long) ms);
}

/* setup_idle starts a daemon whose idle bound is 300 ms. */
static int
setup_idle(void **state)
{
	int rc;

	it_config_top = "connection_idle_timeout_ms = 300;";
	rc            = setup_plain(state);
	it_config_top = NULL;
	return rc;
}

/* raw_connect connects to path and exchanges SP headers by hand; returns
 * the descriptor (the test fails otherwise). */
static int
raw_connect(const char *path)
{
	static const uint8_t req0[8] = {0, 'S', 'P', 0, 0, 0x30, 0, 0};
	struct sockaddr_un   sa      = {.sun_family = AF_UNIX};
	uint8_t              hdr[8];
	struct pollfd        pfd;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	assert_int_equal(connect(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
	assert_int_equal(
	    write(fd, req0, sizeof(req0)), (ssize_t) sizeof(req0));
	pfd = (struct pollfd) {fd, POLLIN, 0};
	assert_int_equal(poll(&pfd, 1, IT_CALL_MS), 1);
	assert_int_equal(read(fd, hdr, sizeof(hdr)), (ssize_t) sizeof(hdr));
	return fd;
}

/* An idle connection of a process that is not a worker is closed after
 * connection_idle_timeout_ms (not before), and a client whose connection
 * was closed so reconnects by itself at its next call. */
static void
test_idle_closed(void **state)
{
	it_ctx       *ctx = *state;
	struct pollfd pfd;
	uint8_t       b;
	int64_t       t0, dt;
	sv_hello     *h = NULL;
	int           fd;

	t0  = it_now_ms();
	fd  = raw_connect(ctx->sock_path);
	pfd = (struct pollfd) {fd, POLLIN, 0};
	assert_int_equal(poll(&pfd, 1, 10000), 1);
	dt = it_now_ms() - t0;
	assert_int_equal(read(fd, &b, 1), 0); /* closed, nothing sent */
	close(fd);
	fprintf(stderr, "[it] idle connection closed after %lld ms\n",
	    (long long) dt);
	assert_true(dt >= 300);
	/* ctx->client has been idle longer than that too. */
	IT_PASS(ctx, sv_client_hello(ctx->client, IT_CALL_MS, &h));
	sv_hello_free(h);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
	        test_worker_flood, setup_flood, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_stopped_daemon_deadline, setup_plain, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_idle_closed, setup_idle, it_teardown),
	    cmocka_unit_test(test_late_listener_deadline),
	};
	int rc;

	it_args(argc, argv);
	if (sv_tmpdir(out_dir, sizeof(out_dir), "sv-conns") != 0) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(flood_out, sizeof(flood_out), "%s/flood", out_dir);
	snprintf(victim_out, sizeof(victim_out), "%s/victim", out_dir);
	snprintf(ctl_err, sizeof(ctl_err), "%s/ctl.err", out_dir);
	rc = cmocka_run_group_tests_name(
	    "integration_conns", tests, NULL, NULL);
	unlink(victim_out);
	unlink(ctl_err);
	snprintf(flood_out + strlen(flood_out),
	    sizeof(flood_out) - strlen(flood_out), ".0");
	unlink(flood_out);
	rmdir(out_dir);
	return it_finish(rc);
}
