/*
 * test_sd_notify.c — what supervised tells its own service manager
 * (daemon/sd_notify_plan.c, pure) and the shell's parsing of its
 * environment (daemon/sd_notify.c).
 *
 * The plan is driven through whole lives with a simulated clock, no socket:
 * READY=1 once and only when settled, never after STOPPING=1; STATUS=
 * changes held to one per SDN_STATUS_MIN_MS and the last one never lost;
 * watchdog pings at half WATCHDOG_USEC, counted over a window; extensions
 * during a shutdown while workers are left and within its bound; the
 * reload hook; the datagram's exact text. The shell half: NOTIFY_SOCKET
 * forms (path, abstract, bounds), WATCHDOG_USEC numbers, the environment
 * emptied of the three variables whatever their values, WATCHDOG_PID of
 * another process, and one real datagram to a socket this test binds (and
 * a send to nobody, which must neither block nor fail).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "sd_notify.h"
#include "sd_notify_plan.h"
#include "sv_tmpdir.h"

/* A running supervisor with n workers up, all wanted. */
static sdn_input
running(uint64_t now, uint32_t n)
{
	sdn_input in = {.now_ms = now, .mono_usec = now * 1000u};

	in.settled       = true;
	in.counts.live   = n;
	in.counts.wanted = n;
	return in;
}

/* next runs the plan once and returns the datagram ("" when nothing). */
static const char *
next(sdn_plan *p, const sdn_input *in, uint64_t *wake)
{
	static char buf[SDN_DGRAM_MAX];
	sdn_msg     m;
	uint64_t    w;

	buf[0] = '\0';
	if (sdn_plan_next(p, in, &m, &w)) {
		assert_true(sdn_msg_format(&m, buf, sizeof(buf)) > 0);
	}
	if (wake != NULL) {
		*wake = w;
	}
	return buf;
}

/* READY=1 waits for the first start to settle, goes once with the
 * status, and carries MAINPID= only when given. */
static void
test_ready_once(void **state)
{
	sdn_plan    p;
	sdn_input   in = running(100, 2);
	const char *d;

	(void) state;
	sdn_plan_init(&p, 0, 0, 100);
	in.settled         = false;
	in.counts.live     = 1;
	in.counts.starting = 1;
	d                  = next(&p, &in, NULL);
	assert_string_equal(
	    d, "STATUS=0/2 workers up, 1 starting, 0 failed groups\n");
	in = running(150, 2);
	d  = next(&p, &in, NULL);
	assert_string_equal(d,
	    "READY=1\nSTATUS=2/2 workers up, 0 starting, 0 failed groups\n");
	for (uint64_t t = 200; t < 5000; t += 100) {
		in = running(t, 2);
		assert_string_equal(next(&p, &in, NULL), "");
	}
	/* Forked into the background: MAINPID= with READY=1. */
	sdn_plan_init(&p, 0, 4242, 0);
	in = running(0, 1);
	d  = next(&p, &in, NULL);
	assert_non_null(strstr(d, "READY=1\nMAINPID=4242\n"));
}

/* A shutdown before the start settled: STOPPING=1, never READY=1. */
static void
test_stop_before_ready(void **state)
{
	sdn_plan    p;
	sdn_input   in = running(0, 3);
	const char *d;

	(void) state;
	sdn_plan_init(&p, 0, 0, 0);
	in.settled       = false;
	in.stopping      = true;
	in.stop_bound_ms = 10000;
	d                = next(&p, &in, NULL);
	assert_null(strstr(d, "READY=1"));
	assert_non_null(strstr(d, "STOPPING=1\n"));
	for (uint64_t t = 0; t < 20000; t += 500) {
		in.now_ms  = t;
		in.settled = true;
		assert_null(strstr(next(&p, &in, NULL), "READY=1"));
	}
}

/* STATUS= changes every 10 ms for 5 s: at most one per
 * SDN_STATUS_MIN_MS, and the last text is sent once the interval ends. */
static void
test_status_rate(void **state)
{
	sdn_plan    p;
	sdn_input   in;
	uint64_t    wake = 0;
	unsigned    sent = 0;
	uint64_t    last = 0;
	const char *d;
	char        lastext[SDN_STATUS_MAX] = "", text[SDN_STATUS_MAX];

	(void) state;
	sdn_plan_init(&p, 0, 0, 0);
	for (uint64_t t = 0; t <= 5000; t += 10) {
		in = running(t, (uint32_t) (t / 10 % 7) + 1);
		d  = next(&p, &in, &wake);
		sdn_status_text(&in, text, sizeof(text));
		if (strstr(d, "STATUS=") != NULL) {
			snprintf(lastext, sizeof(lastext), "%s", text);
			if (sent > 0) {
				assert_true(t - last >= SDN_STATUS_MIN_MS
				    || strstr(d, "READY=1") != NULL);
			}
			last = t;
			sent++;
		} else if (strcmp(text, lastext) != 0) {
			/* A change is waiting: the plan wants a look when
			 * the interval ends. */
			assert_int_equal(wake, last + SDN_STATUS_MIN_MS);
		} else {
			assert_int_equal(wake, SDN_NEVER);
		}
	}
	/* 0..5000 ms: READY with its text, then one per second. */
	assert_in_range(sent, 5, 1 + 5000 / SDN_STATUS_MIN_MS + 1);
	/* The changes stop; the last text goes at the wake time. */
	in = running(5005, 3);
	d  = next(&p, &in, &wake);
	if (strstr(d, "STATUS=") == NULL) {
		in.now_ms = wake;
		d         = next(&p, &in, &wake);
	}
	assert_string_equal(
	    d, "STATUS=3/3 workers up, 0 starting, 0 failed groups\n");
	in.now_ms += 10 * SDN_STATUS_MIN_MS;
	assert_string_equal(next(&p, &in, &wake), "");
	assert_int_equal(wake, SDN_NEVER);
}

/* Pings at half WATCHDOG_USEC, the first at once; counted over a 10 s
 * window asked every 7 ms. */
static void
test_watchdog_half(void **state)
{
	sdn_plan  p;
	sdn_input in;
	uint64_t  wake = 0, prev = 0;
	unsigned  pings = 0;

	(void) state;
	sdn_plan_init(&p, 2000000u, 0, 1000); /* 2 s: pings every 1 s */
	assert_int_equal(p.watchdog_every_ms, 1000);
	for (uint64_t t = 1000; t < 11000; t += 7) {
		in = running(t, 1);
		if (strstr(next(&p, &in, &wake), "WATCHDOG=1\n") != NULL) {
			if (pings > 0) {
				assert_in_range(t - prev, 1000, 1006);
			}
			prev = t;
			pings++;
		}
		assert_true(wake <= t + 1000);
	}
	assert_int_equal(pings, 10);
	/* None without WATCHDOG_USEC; a tiny one pings every ms. */
	sdn_plan_init(&p, 0, 0, 0);
	in = running(0, 1);
	assert_null(strstr(next(&p, &in, &wake), "WATCHDOG"));
	sdn_plan_init(&p, 1500, 0, 0);
	assert_int_equal(p.watchdog_every_ms, 1);
}

/* STOPPING=1 once with an extension; extensions every
 * SDN_EXTEND_EVERY_MS while workers are left, none past the bound. */
static void
test_stop_extend(void **state)
{
	sdn_plan    p;
	sdn_input   in = running(0, 2);
	uint64_t    wake;
	unsigned    stopping = 0, extend = 0;
	const char *d;

	(void) state;
	sdn_plan_init(&p, 0, 0, 0);
	(void) next(&p, &in, NULL); /* READY */
	for (uint64_t t = 1000; t < 30000; t += 100) {
		in               = running(t, 2);
		in.stopping      = true;
		in.stop_bound_ms = 9000; /* from t = 1000: until 10000 */
		d                = next(&p, &in, &wake);
		stopping += strstr(d, "STOPPING=1\n") != NULL;
		if (strstr(d, "EXTEND_TIMEOUT_USEC=6000000\n") != NULL) {
			assert_true(t < 10000);
			extend++;
		}
		assert_null(strstr(d, "READY=1"));
		if (t == 1000) {
			assert_string_equal(d,
			    "STOPPING=1\nEXTEND_TIMEOUT_USEC=6000000\n"
			    "STATUS=stopping: 2 workers left\n");
		}
	}
	assert_int_equal(stopping, 1);
	/* 1000, 3000, 5000, 7000, 9000. */
	assert_int_equal(extend, 5);
	/* Workers all gone: no extension, nothing to wake for. */
	sdn_plan_init(&p, 0, 0, 0);
	in               = running(0, 1);
	in.stopping      = true;
	in.stop_bound_ms = 60000;
	(void) next(&p, &in, NULL);
	in.counts.live = 0;
	for (uint64_t t = 1; t < 20000; t += 250) {
		in.now_ms = t;
		assert_null(strstr(next(&p, &in, &wake), "EXTEND"));
	}
	assert_int_equal(wake, SDN_NEVER);
}

/* The reload's hook: RELOADING=1 with MONOTONIC_USEC, then READY=1. */
static void
test_reload_hook(void **state)
{
	sdn_plan    p;
	sdn_input   in = running(10, 1);
	const char *d;

	(void) state;
	sdn_plan_init(&p, 0, 0, 0);
	(void) next(&p, &in, NULL);
	sdn_plan_reload(&p, true);
	in.now_ms    = 20;
	in.mono_usec = 20123;
	d            = next(&p, &in, NULL);
	assert_string_equal(d, "RELOADING=1\nMONOTONIC_USEC=20123\n");
	sdn_plan_reload(&p, false);
	in.now_ms = 30;
	assert_string_equal(next(&p, &in, NULL), "READY=1\n");
	assert_string_equal(next(&p, &in, NULL), "");
	/* A reload before the first READY=1 does not send one early. */
	sdn_plan_init(&p, 0, 0, 0);
	in.settled = false;
	sdn_plan_reload(&p, true);
	sdn_plan_reload(&p, false);
	assert_null(strstr(next(&p, &in, NULL), "READY=1"));
}

/* The datagram's text, and a buffer too small for it. */
static void
test_format(void **state)
{
	sdn_msg m = {.ready = true,
	    .mainpid        = 7,
	    .stopping       = true,
	    .extend         = true,
	    .extend_usec    = 5,
	    .watchdog       = true,
	    .status         = true};
	char    buf[SDN_DGRAM_MAX];

	(void) state;
	snprintf(m.text, sizeof(m.text), "x y");
	assert_int_equal(sdn_msg_format(&m, buf, sizeof(buf)),
	    strlen("READY=1\nMAINPID=7\nSTOPPING=1\nEXTEND_TIMEOUT_USEC=5\n"
	           "STATUS=x y\nWATCHDOG=1\n"));
	assert_string_equal(buf,
	    "READY=1\nMAINPID=7\nSTOPPING=1\nEXTEND_TIMEOUT_USEC=5\n"
	    "STATUS=x y\nWATCHDOG=1\n");
	assert_int_equal(sdn_msg_format(&m, buf, 12), 0);
	assert_string_equal(buf, "");
	/* The longest text fits the documented bound. */
	memset(m.text, 'x', sizeof(m.text) - 1);
	m.text[sizeof(m.text) - 1] = '\0';
	m.reloading                = true;
	m.mono_usec                = UINT64_MAX;
	m.extend_usec              = UINT64_MAX;
	m.mainpid                  = 2147483647;
	assert_true(sdn_msg_format(&m, buf, sizeof(buf)) > 0);
}

/* NOTIFY_SOCKET's forms and bounds. */
static void
test_addr(void **state)
{
	struct sockaddr_un sa;
	socklen_t          len = 0;
	char               big[200];

	(void) state;
	assert_null(svd_sdn_addr("/run/systemd/notify", &sa, &len));
	assert_string_equal(sa.sun_path, "/run/systemd/notify");
	assert_int_equal(len,
	    offsetof(struct sockaddr_un, sun_path)
	        + strlen("/run/systemd/notify") + 1);
	assert_null(svd_sdn_addr("@abc", &sa, &len));
	assert_int_equal(sa.sun_path[0], '\0');
	assert_memory_equal(sa.sun_path + 1, "abc", 3);
	assert_int_equal(len, offsetof(struct sockaddr_un, sun_path) + 4);
	assert_non_null(svd_sdn_addr("", &sa, &len));
	assert_non_null(svd_sdn_addr("@", &sa, &len));
	assert_non_null(svd_sdn_addr("run/notify", &sa, &len));
	assert_non_null(svd_sdn_addr("vsock:2:1234", &sa, &len));
	/* 107 bytes fit sun_path with its NUL; 108 do not. */
	memset(big, 'a', sizeof(big));
	big[0]   = '/';
	big[107] = '\0';
	assert_null(svd_sdn_addr(big, &sa, &len));
	big[107] = 'a';
	big[108] = '\0';
	assert_non_null(svd_sdn_addr(big, &sa, &len));
	big[199] = '\0';
	assert_non_null(svd_sdn_addr(big, &sa, &len));
}

/* WATCHDOG_USEC numbers. */
static void
test_usec(void **state)
{
	uint64_t v = 0;

	(void) state;
	assert_true(svd_sdn_usec("0", &v) && v == 0);
	assert_true(svd_sdn_usec("30000000", &v) && v == 30000000u);
	assert_true(
	    svd_sdn_usec("18446744073709551615", &v) && v == UINT64_MAX);
	assert_false(svd_sdn_usec("18446744073709551616", &v));
	assert_false(svd_sdn_usec("000000000000000000001", &v));
	assert_false(svd_sdn_usec("", &v));
	assert_false(svd_sdn_usec("-1", &v));
	assert_false(svd_sdn_usec("+1", &v));
	assert_false(svd_sdn_usec("12a", &v));
	assert_false(svd_sdn_usec(" 1", &v));
}

/* The three variables leave the environment whatever their values. */
static void
test_env_emptied(void **state)
{
	svd_sdn *n;
	char     msg[300];

	(void) state;
	setenv("NOTIFY_SOCKET", "not-absolute", 1);
	setenv("WATCHDOG_USEC", "x", 1);
	setenv("WATCHDOG_PID", "1", 1);
	svd_sdn_from_env(&n, msg, sizeof(msg));
	assert_null(n);
	assert_non_null(strstr(msg, "NOTIFY_SOCKET=not-absolute not used"));
	assert_null(getenv("NOTIFY_SOCKET"));
	assert_null(getenv("WATCHDOG_USEC"));
	assert_null(getenv("WATCHDOG_PID"));
	/* Without NOTIFY_SOCKET the watchdog's variables go too. */
	setenv("WATCHDOG_USEC", "1000000", 1);
	svd_sdn_from_env(&n, msg, sizeof(msg));
	assert_null(n);
	assert_string_equal(msg, "");
	assert_null(getenv("WATCHDOG_USEC"));
	/* Another process's watchdog: no pings, said once. */
	setenv("NOTIFY_SOCKET", "@sv-test-sdn", 1);
	setenv("WATCHDOG_USEC", "1000000", 1);
	setenv("WATCHDOG_PID", "999999999", 1);
	svd_sdn_from_env(&n, msg, sizeof(msg));
	assert_non_null(n);
	assert_non_null(strstr(msg, "is not our pid"));
	assert_null(getenv("NOTIFY_SOCKET"));
	svd_sdn_free(n);
}

/* One real datagram to a socket bound here; a send to nobody returns at
 * once and is not fatal. */
static void
test_shell_sends(void **state)
{
	char               dir[64], path[96], msg[300], buf[512];
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct pollfd      pfd;
	svd_sdn           *n;
	sdn_input          in = running(0, 1);
	ssize_t            k;
	int                fd;

	(void) state;
	assert_int_equal(sv_tmpdir(dir, sizeof(dir), "sv-sdn"), 0);
	snprintf(path, sizeof(path), "%s/notify", dir);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
	setenv("NOTIFY_SOCKET", path, 1);
	setenv("WATCHDOG_USEC", "4000000", 1);
	svd_sdn_from_env(&n, msg, sizeof(msg));
	assert_non_null(n);
	assert_non_null(strstr(msg, "pings every 2000 ms"));
	svd_sdn_begin(n, 0, 0);
	assert_int_equal(svd_sdn_tick(n, &in), 2000);
	pfd = (struct pollfd) {.fd = fd, .events = POLLIN};
	assert_int_equal(poll(&pfd, 1, 5000), 1);
	k = recv(fd, buf, sizeof(buf) - 1, 0);
	assert_true(k > 0);
	buf[k] = '\0';
	assert_string_equal(buf,
	    "READY=1\nSTATUS=1/1 workers up, 0 starting, 0 failed groups\n"
	    "WATCHDOG=1\n");
	/* Nobody listens any more: the send fails, logged once. */
	close(fd);
	unlink(path);
	in.now_ms = 2000;
	assert_int_equal(svd_sdn_tick(n, &in), 4000);
	in.now_ms = 4000;
	assert_int_equal(svd_sdn_tick(n, &in), 6000);
	svd_sdn_free(n);
	rmdir(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ready_once),
	    cmocka_unit_test(test_stop_before_ready),
	    cmocka_unit_test(test_status_rate),
	    cmocka_unit_test(test_watchdog_half),
	    cmocka_unit_test(test_stop_extend),
	    cmocka_unit_test(test_reload_hook),
	    cmocka_unit_test(test_format),
	    cmocka_unit_test(test_addr),
	    cmocka_unit_test(test_usec),
	    cmocka_unit_test(test_env_emptied),
	    cmocka_unit_test(test_shell_sends),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
