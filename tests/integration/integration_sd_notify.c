/*
 * integration_sd_notify.c — supervised telling its OWN service manager how
 * it is (daemon/sd_notify.h): a real daemon started with NOTIFY_SOCKET and
 * WATCHDOG_USEC naming a datagram socket this test binds, as systemd would
 * start it, and every datagram it sends checked, in order.
 *
 * Design:
 *   - The test plays the manager: it binds an AF_UNIX SOCK_DGRAM socket
 *     (a path in the run's scratch directory, or an abstract name), puts
 *     NOTIFY_SOCKET and WATCHDOG_USEC in its own environment for the spawn
 *     of the daemon only (it_start passes the test's environment), and
 *     removes them again at once.
 *   - Every datagram is received with a deadline (poll) and kept in a log;
 *     checks are made over that log: READY=1 exactly once and before
 *     STOPPING=1, STOPPING=1 exactly once, nothing after STOPPING=1 but
 *     STATUS=, EXTEND_TIMEOUT_USEC= and WATCHDOG=1.
 *   - Ordering of READY=1 against the control socket: when READY=1
 *     arrives, a fresh client connects and says Hello, which must succeed.
 *   - Counts of periodic datagrams have bounds computed from the test's own
 *     clock over an interval that contains the daemon's whole life (the
 *     daemon cannot have sent more than that interval allows) and lower
 *     bounds far below what even a loaded machine gives: no interval
 *     between two datagrams is asserted.
 *   - Workers' environments are read from /proc/PID/environ (what they
 *     were started with): NOTIFY_SOCKET is the daemon's own notify socket
 *     for workers, and neither the manager's socket nor WATCHDOG_USEC /
 *     WATCHDOG_PID is there.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define DG_MAX       64 /* datagrams kept per phase */
#define DG_LEN       512
#define WATCHDOG_US  1000000 /* pings every 500 ms */
#define PING_MS      (WATCHDOG_US / 2000)
#define WINDOW_MS    4000 /* running, watched for pings */
#define STUBBORN_MS  5000 /* stop timeout of a worker ignoring TERM */
#define READY_MS     1500 /* a ready = true worker's delay */
#define MGR_ABSTRACT 1

/* The manager's side: its socket and every datagram received. */
struct mgr {
	int     fd;
	char    addr[108]; /* NOTIFY_SOCKET's value */
	size_t  n;
	char    dg[DG_MAX * 4][DG_LEN];
	int64_t at[DG_MAX * 4]; /* receive time */
};

/* mgr_open binds the manager's socket: a path in the scratch directory,
 * or an abstract name. */
static void
mgr_open(struct mgr *m, bool abstract)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	socklen_t          len;
	static unsigned    seq;

	memset(m, 0, sizeof(*m));
	m->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(m->fd >= 0);
	if (abstract) {
		snprintf(m->addr, sizeof(m->addr), "@sv-it-sdn-%ld-%u",
		    (long) getpid(), seq++);
		memcpy(sa.sun_path + 1, m->addr + 1, strlen(m->addr) - 1);
		len = (socklen_t) (offsetof(struct sockaddr_un, sun_path)
		    + strlen(m->addr));
	} else {
		snprintf(m->addr, sizeof(m->addr), "%s/manager-%u.sock",
		    it_scratch_dir, seq++);
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", m->addr);
		len = sizeof(sa);
	}
	if (bind(m->fd, (struct sockaddr *) &sa, len) != 0)
		fail_msg("bind %s: %s", m->addr, strerror(errno));
}

/* mgr_close closes the socket (and removes its file). */
static void
mgr_close(struct mgr *m)
{
	close(m->fd);
	if (m->addr[0] == '/')
		unlink(m->addr);
}

/* mgr_recv waits until deadline (it_now_ms clock) for one datagram and
 * logs it; returns its text, or NULL at the deadline. */
static const char *
mgr_recv(struct mgr *m, int64_t deadline)
{
	for (;;) {
		struct pollfd p    = {.fd = m->fd, .events = POLLIN};
		int64_t       left = deadline - it_now_ms();
		ssize_t       k;

		if (m->n >= DG_MAX * 4)
			fail_msg("more than %d datagrams", DG_MAX * 4);
		if (poll(&p, 1, left > 0 ? (int) left : 0) <= 0)
			return NULL;
		k = recv(m->fd, m->dg[m->n], DG_LEN - 1, MSG_DONTWAIT);
		if (k < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		assert_true(k > 0);
		m->dg[m->n][k] = '\0';
		m->at[m->n]    = it_now_ms();
		return m->dg[m->n++];
	}
}

/* has tells whether datagram d has the line "KEY=..." (key given with its
 * '='), copying the value into val (may be NULL). */
static bool
has(const char *d, const char *key, char *val, size_t len)
{
	size_t      k = strlen(key);
	const char *p = d;

	while (*p != '\0') {
		const char *nl = strchr(p, '\n');
		size_t      ln = nl != NULL ? (size_t) (nl - p) : strlen(p);
		if (ln >= k && strncmp(p, key, k) == 0) {
			if (val != NULL)
				snprintf(
				    val, len, "%.*s", (int) (ln - k), p + k);
			return true;
		}
		p += ln + (nl != NULL);
	}
	return false;
}

/* count_key counts the logged datagrams with key from index from. */
static unsigned
count_key(const struct mgr *m, size_t from, const char *key)
{
	unsigned c = 0;

	for (size_t i = from; i < m->n; i++)
		c += has(m->dg[i], key, NULL, 0);
	return c;
}

/* start_with_manager starts the daemon for groups with NOTIFY_SOCKET and
 * WATCHDOG_USEC (watchdog_us > 0) in its environment only. */
static void
start_with_manager(it_ctx *ctx, const struct mgr *m, int watchdog_us,
    const struct it_group *g, size_t n)
{
	char us[32];
	int  rc;

	snprintf(us, sizeof(us), "%d", watchdog_us);
	setenv("NOTIFY_SOCKET", m->addr, 1);
	if (watchdog_us > 0)
		setenv("WATCHDOG_USEC", us, 1);
	rc = it_start(ctx, g, n);
	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
	assert_int_equal(rc, 0);
}

/* wait_ready reads datagrams until READY=1 (within IT_START_MS), checking
 * that none before it says STOPPING=1, then that the control socket
 * answers; returns READY=1's index. */
static size_t
wait_ready(it_ctx *ctx, struct mgr *m)
{
	int64_t     end = it_now_ms() + IT_START_MS;
	const char *d;

	while ((d = mgr_recv(m, end)) != NULL) {
		assert_false(has(d, "STOPPING=", NULL, 0));
		if (has(d, "READY=1", NULL, 0)) {
			/* The control socket serves when READY=1 comes. */
			assert_int_equal(it_hello_ok(ctx), SV_OK);
			/* In the foreground: no new main pid. */
			assert_false(has(d, "MAINPID=", NULL, 0));
			return m->n - 1;
		}
	}
	fail_msg("no READY=1 within %d ms (%zu datagrams)", IT_START_MS, m->n);
	return 0;
}

/* read_window reads datagrams for ms (a measuring window, not a wait for
 * anything), checking none says READY=1 again or STOPPING=1. */
static void
read_window(struct mgr *m, int ms)
{
	int64_t     end = it_now_ms() + ms;
	const char *d;

	while ((d = mgr_recv(m, end)) != NULL) {
		assert_false(has(d, "READY=", NULL, 0));
		assert_false(has(d, "STOPPING=", NULL, 0));
	}
}

/* stop_and_read sends SIGTERM and reads until the daemon exited 0 and no
 * datagram is left; returns the index of STOPPING=1. */
static size_t
stop_and_read(it_ctx *ctx, struct mgr *m, int limit_ms)
{
	size_t      from = m->n, stop = SIZE_MAX;
	const char *d;

	assert_int_equal(kill(ctx->daemon, SIGTERM), 0);
	if (it_reap_daemon(ctx, limit_ms) != 0)
		fail_msg("daemon did not exit within %d ms", limit_ms);
	assert_true(WIFEXITED(ctx->status));
	assert_int_equal(WEXITSTATUS(ctx->status), 0);
	/* Everything it sent is queued by now. */
	while ((d = mgr_recv(m, it_now_ms())) != NULL) {
	}
	for (size_t i = from; i < m->n; i++) {
		d = m->dg[i];
		assert_false(has(d, "READY=", NULL, 0));
		if (has(d, "STOPPING=1", NULL, 0)) {
			assert_int_equal(stop, SIZE_MAX); /* once */
			stop = i;
		} else if (stop == SIZE_MAX) {
			/* Before it: only what runs anyway. */
			assert_false(has(d, "EXTEND_TIMEOUT_USEC=", NULL, 0));
		}
	}
	if (stop == SIZE_MAX)
		fail_msg("no STOPPING=1 among %zu datagrams", m->n - from);
	return stop;
}

/* check_worker_env: the worker's NOTIFY_SOCKET is the daemon's own
 * socket for workers; nothing of the manager's reached it. */
static void
check_worker_env(it_ctx *ctx, const struct mgr *m, pid_t pid)
{
	char    path[64], buf[65536], want[200];
	ssize_t k;
	int     fd;
	bool    found = false;

	snprintf(path, sizeof(path), "/proc/%ld/environ", (long) pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	k = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(k > 0);
	buf[k] = '\0';
	snprintf(want, sizeof(want), "NOTIFY_SOCKET=%s/notify.sock", ctx->dir);
	for (char *e = buf; e < buf + k; e += strlen(e) + 1) {
		if (strncmp(e, "NOTIFY_SOCKET=", 14) == 0) {
			assert_string_equal(e, want);
			found = true;
		}
		if (strncmp(e, "WATCHDOG_USEC=", 14) == 0
		    || strncmp(e, "WATCHDOG_PID=", 13) == 0)
			fail_msg("worker %ld has %s", (long) pid, e);
		if (strstr(e, m->addr + 1) != NULL)
			fail_msg("worker %ld has the manager's socket: %s",
			    (long) pid, e);
	}
	assert_true(found);
}

/* Start, status, watchdog pings over a window, workers' environment, stop:
 * the whole sequence of a plain group. */
static void
test_sequence(void **state)
{
	static const struct it_group g[] = {{.name = "g", .count = 2}};
	it_ctx                      *ctx = *state;
	struct mgr                  *m   = calloc(1, sizeof(*m));
	struct it_report             r[2];
	char                         st[200];
	size_t                       ready, stop;
	int64_t                      t0, t_ready, t_exit;
	unsigned                     pings, statuses;

	assert_non_null(m);
	mgr_open(m, false);
	t0 = it_now_ms();
	start_with_manager(ctx, m, WATCHDOG_US, g, 1);
	ready   = wait_ready(ctx, m);
	t_ready = m->at[ready];
	/* Both workers were spawned: that is what settled the start. */
	assert_true(has(m->dg[ready], "STATUS=", st, sizeof(st)));
	assert_string_equal(st, "2/2 workers up, 0 starting, 0 failed groups");
	it_expect_reports(ctx, 2, r);
	for (int i = 0; i < 2; i++)
		check_worker_env(ctx, m, (pid_t) r[i].pid);
	read_window(m, WINDOW_MS);
	/* Pings while running: at most one per PING_MS since the daemon
	 * was spawned (and the first at once), at least a quarter of what
	 * the window holds. */
	pings = count_key(m, 0, "WATCHDOG=1");
	printf("%u pings within %lld ms of the start\n", pings,
	    (long long) (it_now_ms() - t0));
	assert_true(pings <= (unsigned) ((it_now_ms() - t0) / PING_MS) + 1);
	assert_true(
	    count_key(m, ready, "WATCHDOG=1") >= WINDOW_MS / PING_MS / 4);
	stop = stop_and_read(ctx, m, ctx->stop_timeout_ms + IT_STOP_MARGIN_MS);
	t_exit = it_now_ms();
	/* STOPPING=1 asks for more time at once, and tells what is left. */
	assert_true(has(m->dg[stop], "EXTEND_TIMEOUT_USEC=", st, sizeof(st)));
	assert_string_equal(st, "6000000");
	assert_true(has(m->dg[stop], "STATUS=", st, sizeof(st)));
	assert_string_equal(st, "stopping: 2 workers left");
	pings = count_key(m, 0, "WATCHDOG=1");
	assert_true(pings <= (unsigned) ((t_exit - t0) / PING_MS) + 1);
	/* STATUS= at most once a second, plus the ones with READY=1 and
	 * STOPPING=1. */
	statuses = count_key(m, 0, "STATUS=");
	assert_true(statuses <= (unsigned) ((t_exit - t0) / 1000) + 3);
	assert_int_equal(count_key(m, 0, "READY=1"), 1);
	(void) t_ready;
	mgr_close(m);
	free(m);
}

/* A shutdown that lasts (a worker ignores SIGTERM until its 5 s stop
 * timeout): EXTEND_TIMEOUT_USEC= again while it lasts, and exit 0. */
static void
test_long_shutdown(void **state)
{
	static const struct it_group g[] = {
	    {.name               = "stubborn",
	        .count           = 1,
	        .ignore_term     = true,
	        .stop_timeout_ms = STUBBORN_MS},
	};
	it_ctx          *ctx = *state;
	struct mgr      *m   = calloc(1, sizeof(*m));
	struct it_report r[1];
	size_t           stop;
	int64_t          t_term, t_exit;
	unsigned         ext;

	assert_non_null(m);
	mgr_open(m, false);
	start_with_manager(ctx, m, 0, g, 1);
	(void) wait_ready(ctx, m);
	it_expect_reports(ctx, 1, r);
	t_term = it_now_ms();
	stop = stop_and_read(ctx, m, ctx->stop_timeout_ms + IT_STOP_MARGIN_MS);
	t_exit = it_now_ms();
	ext    = count_key(m, stop, "EXTEND_TIMEOUT_USEC=6000000");
	printf("%u extensions in a shutdown of %lld ms\n", ext,
	    (long long) (t_exit - t_term));
	/* The shutdown lasts at least the stop timeout: one extension with
	 * STOPPING=1, another SDN_EXTEND_EVERY_MS (2 s) later; never more
	 * than one per 2 s. */
	assert_true(t_exit - t_term >= STUBBORN_MS);
	assert_true(ext >= 2);
	assert_true(ext <= (unsigned) ((t_exit - t_term) / 2000) + 1);
	/* No watchdog asked for: no pings. */
	assert_int_equal(count_key(m, 0, "WATCHDOG="), 0);
	mgr_close(m);
	free(m);
}

/* A group with ready = true: READY=1 only once its workers reported ready
 * (they do after READY_MS); an abstract NOTIFY_SOCKET. */
static void
test_ready_waits(void **state)
{
	static const char *const env[] = {"SV_TEST_READY_AFTER_MS=1500", NULL};
	static const struct it_group g[] = {
	    {.name         = "r",
	        .count     = 2,
	        .extra     = "    ready = true;",
	        .env_extra = env},
	};
	it_ctx     *ctx = *state;
	struct mgr *m   = calloc(1, sizeof(*m));
	char        st[200];
	size_t      ready;
	int64_t     t0;

	assert_non_null(m);
	mgr_open(m, MGR_ABSTRACT);
	t0 = it_now_ms();
	start_with_manager(ctx, m, 0, g, 1);
	ready = wait_ready(ctx, m);
	/* The workers' readiness comes READY_MS after their start, which is
	 * after ours: READY=1 cannot be sooner. */
	assert_true(m->at[ready] - t0 >= READY_MS);
	assert_true(has(m->dg[ready], "STATUS=", st, sizeof(st)));
	assert_string_equal(st, "2/2 workers up, 0 starting, 0 failed groups");
	/* Before it, the status never said both were up and ready. */
	for (size_t i = 0; i < ready; i++)
		if (has(m->dg[i], "STATUS=", st, sizeof(st)))
			assert_string_not_equal(
			    st, "2/2 workers up, 0 starting, 0 failed groups");
	(void) stop_and_read(ctx, m, ctx->stop_timeout_ms + IT_STOP_MARGIN_MS);
	mgr_close(m);
	free(m);
}

/* cmocka setup: an it_ctx the case starts itself (after setenv). */
static int
setup_ctx(void **state)
{
	*state = calloc(1, sizeof(it_ctx));
	return *state != NULL ? 0 : -1;
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
	        test_sequence, setup_ctx, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_long_shutdown, setup_ctx, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_ready_waits, setup_ctx, it_teardown),
	};

	it_args(argc, argv);
	return it_finish(cmocka_run_group_tests_name("integration_sd_notify",
	    tests, it_scratch_setup, it_scratch_teardown));
}
