/*
 * test_transport.c — the SP REQ transport (client/transport.c) and the
 * client's use of it (client/client.c), against a fake SP REP server.
 *
 * The fake server is a thread with a real UNIX socket in a mkdtemp()
 * directory. It speaks the nng ipc wire format written out by hand (8-byte
 * connection header, then frames of type 1 + 64-bit length + request id +
 * body) and misbehaves on request: a bad connection header, a huge length,
 * a stale reply first, no answer, a hang-up in the middle of a call. In
 * "envelope" mode it decodes supervise.v1 requests and answers Hello and
 * RestartWorker, so the client's resend rules can be tested.
 *
 * SIGPIPE is left at its default: a write that raised it would kill the
 * test. Every wait is bounded: the server thread polls with a timeout and
 * a wake-up pipe, and client calls take deadlines.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "client/transport.h"
#include "supervise/client.h"
#include "wire/wire.h"
#include "sv_lag.h"
#include "sv_tmpdir.h"

#define FK_MAX_CONNS 8
#define FK_MAX_IDS   32
#define FK_POLL_MS   50 /* server thread's poll period (checks stop) */
#define FK_IO_MS     2000 /* server's bound for reading one frame */

/* What the fake server does. */
struct fake {
	char      dir[64];
	char      path[100]; /* fits sun_path */
	char      url[160];
	int       lfd;
	int       wake[2];
	pthread_t thr;
	/* behaviour, set before fk_start */
	uint8_t  hdr[8]; /* connection header it sends */
	bool     never_greet; /* accept, never send a header */
	bool     envelope; /* decode requests, answer Hello/Restart */
	uint64_t oversize_len; /* != 0: answer with this frame length */
	bool     stale_first; /* answer an unknown id first */
	bool     silent; /* never answer */
	int      close_first; /* hang up on the first N requests */
	bool     close_after_reply; /* hang up after each answer */
	/* observations */
	atomic_int conns; /* connections accepted */
	atomic_int requests; /* requests read */
	atomic_int bad_hdr; /* connection headers that were not REQ0 */
	atomic_int closed; /* connections the server closed */
	pid_t      peer_pid[FK_MAX_IDS]; /* SO_PEERCRED of each request */
	uint32_t   ids[FK_MAX_IDS]; /* request ids, in order */
	atomic_int stop;
};

/* fk_io reads (rd) or writes exactly n bytes on a blocking fd, bounded by
 * FK_IO_MS per wait. Returns 0 or -1. */
static int
fk_io(int fd, bool rd, const void *buf, size_t n)
{
	size_t done = 0;

	while (done < n) {
		struct pollfd p = {.fd = fd, .events = rd ? POLLIN : POLLOUT};
		ssize_t       r;

		if (poll(&p, 1, FK_IO_MS) <= 0) {
			return -1;
		}
		r = rd
		    ? recv(fd, (uint8_t *) (uintptr_t) buf + done, n - done, 0)
		    : send(fd, (const uint8_t *) buf + done, n - done,
		        MSG_NOSIGNAL);
		if (r <= 0) {
			return -1;
		}
		done += (size_t) r;
	}
	return 0;
}

/* fk_send_frame writes one reply frame: type 1, length, id, body. */
static int
fk_send_frame(int fd, uint32_t id, const void *body, size_t len)
{
	uint8_t  h[13];
	uint64_t l = (uint64_t) len + 4;

	h[0] = 1;
	for (int i = 0; i < 8; i++) {
		h[1 + i] = (uint8_t) (l >> (56 - 8 * i));
	}
	for (int i = 0; i < 4; i++) {
		h[9 + i] = (uint8_t) (id >> (24 - 8 * i));
	}
	if (fk_io(fd, false, h, sizeof(h)) != 0) {
		return -1;
	}
	return len > 0 ? fk_io(fd, false, body, len) : 0;
}

/* fk_answer builds the reply body to req (len bytes): an echo, or in
 * envelope mode a HelloReply / WorkerStatus. *outp is malloc'd. */
static size_t
fk_answer(struct fake *f, const uint8_t *req, size_t len, uint8_t **outp)
{
	svw_env                    *in = NULL;
	svw_env                     r  = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__HelloReply   h  = SUPERVISE__V1__HELLO_REPLY__INIT;
	Supervise__V1__WorkerStatus w  = SUPERVISE__V1__WORKER_STATUS__INIT;
	uint64_t                    rid;
	size_t                      n;

	if (!f->envelope) {
		*outp = malloc(len + 1);
		assert_non_null(*outp);
		memcpy(*outp, req, len);
		return len;
	}
	assert_int_equal(svw_decode(req, len, SVW_MAX_REQUEST, &in, &rid), 0);
	r.version    = SV_PROTOCOL_VERSION;
	r.request_id = in->request_id;
	if (in->body_case == SUPERVISE__V1__ENVELOPE__BODY_HELLO) {
		h.version       = SV_PROTOCOL_VERSION;
		h.server_name   = "fake";
		h.supervisor_id = "fake-id";
		r.body_case     = SUPERVISE__V1__ENVELOPE__BODY_HELLO_REPLY;
		r.hello_reply   = &h;
	} else {
		w.group         = "g";
		r.body_case     = SUPERVISE__V1__ENVELOPE__BODY_WORKER_STATUS;
		r.worker_status = &w;
	}
	n     = supervise__v1__envelope__get_packed_size(&r);
	*outp = malloc(n + 1);
	assert_non_null(*outp);
	supervise__v1__envelope__pack(&r, *outp);
	svw_free(in);
	return n;
}

/*
 * fk_request serves one request on fd. Returns false when the connection
 * is to be closed (end of stream, or the behaviour says so).
 */
static bool
fk_request(struct fake *f, int fd)
{
	uint8_t      h[13];
	uint64_t     len = 0;
	uint32_t     id  = 0;
	uint8_t     *body, *out = NULL;
	size_t       n;
	int          k;
	struct ucred cr;
	socklen_t    crl = sizeof(cr);
	bool         keep;

	if (fk_io(fd, true, h, sizeof(h)) != 0 || h[0] != 1) {
		return false;
	}
	for (int i = 0; i < 8; i++) {
		len = (len << 8) | h[1 + i];
	}
	for (int i = 0; i < 4; i++) {
		id = (id << 8) | h[9 + i];
	}
	if (len < 4 || len - 4 > SVW_MAX_REQUEST) {
		return false;
	}
	body = malloc(len - 4 + 1);
	assert_non_null(body);
	if (fk_io(fd, true, body, len - 4) != 0) {
		free(body);
		return false;
	}
	k = atomic_fetch_add(&f->requests, 1);
	if (k < FK_MAX_IDS) {
		f->ids[k] = id;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crl) == 0) {
			f->peer_pid[k] = cr.pid;
		}
	}
	if (k < f->close_first || f->silent) {
		free(body);
		return !(k < f->close_first);
	}
	if (f->oversize_len != 0) {
		uint8_t o[9] = {1};

		for (int i = 0; i < 8; i++) {
			o[1 + i] = (uint8_t) (f->oversize_len >> (56 - 8 * i));
		}
		fk_io(fd, false, o, sizeof(o));
		free(body);
		return true;
	}
	if (f->stale_first) {
		fk_send_frame(fd, id ^ 0x1234u, "stale", 5);
	}
	n    = fk_answer(f, body, (size_t) (len - 4), &out);
	keep = fk_send_frame(fd, id, out, n) == 0 && !f->close_after_reply;
	free(out);
	free(body);
	return keep;
}

/* fk_main accepts connections and serves them until stop. */
static void *
fk_main(void *arg)
{
	struct fake  *f = arg;
	struct pollfd p[FK_MAX_CONNS + 2];
	bool          greeted[FK_MAX_CONNS + 2];
	int           n = 2;

	p[0] = (struct pollfd) {.fd = f->wake[0], .events = POLLIN};
	p[1] = (struct pollfd) {.fd = f->lfd, .events = POLLIN};
	while (!atomic_load(&f->stop)) {
		if (poll(p, (nfds_t) n, FK_POLL_MS) <= 0) {
			continue;
		}
		if (p[1].revents & POLLIN) {
			int fd = accept4(f->lfd, NULL, NULL, SOCK_CLOEXEC);

			if (fd >= 0 && n < FK_MAX_CONNS + 2) {
				atomic_fetch_add(&f->conns, 1);
				if (!f->never_greet) {
					fk_io(fd, false, f->hdr, 8);
				}
				greeted[n] = false;
				p[n++]     = (struct pollfd) {
				        .fd = fd, .events = POLLIN};
			} else if (fd >= 0) {
				close(fd);
			}
		}
		for (int i = 2; i < n; i++) {
			bool keep = true;

			if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR))) {
				continue;
			}
			if (!greeted[i]) {
				static const uint8_t req[8]
				    = {0, 'S', 'P', 0, 0, 0x30, 0, 0};
				uint8_t h[8];

				keep = fk_io(p[i].fd, true, h, 8) == 0;
				if (keep && memcmp(h, req, 8) != 0) {
					atomic_fetch_add(&f->bad_hdr, 1);
				}
				greeted[i] = true;
			} else {
				keep = fk_request(f, p[i].fd);
			}
			if (!keep) {
				close(p[i].fd);
				atomic_fetch_add(&f->closed, 1);
				p[i]       = p[n - 1];
				greeted[i] = greeted[n - 1];
				n--;
				i--;
			}
		}
	}
	for (int i = 2; i < n; i++) {
		close(p[i].fd);
	}
	return NULL;
}

/* fk_new makes a fake server description with a good REP0 header. */
static struct fake *
fk_new(void)
{
	static const uint8_t rep[8] = {0, 'S', 'P', 0, 0, 0x31, 0, 0};
	struct fake         *f      = calloc(1, sizeof(*f));

	assert_non_null(f);
	memcpy(f->hdr, rep, 8);
	assert_int_equal(sv_tmpdir(f->dir, sizeof(f->dir), "sv-tr"), 0);
	snprintf(f->path, sizeof(f->path), "%s/control.sock", f->dir);
	snprintf(f->url, sizeof(f->url), "ipc://%s", f->path);
	f->lfd = -1;
	return f;
}

/* fk_start binds, listens and starts the server thread. */
static void
fk_start(struct fake *f)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	f->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(f->lfd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", f->path);
	assert_int_equal(bind(f->lfd, (struct sockaddr *) &sa, sizeof(sa)), 0);
	assert_int_equal(listen(f->lfd, 16), 0);
	assert_int_equal(pipe2(f->wake, O_CLOEXEC), 0);
	assert_int_equal(pthread_create(&f->thr, NULL, fk_main, f), 0);
}

/* fk_connect starts f's server and initialises c for its URL (c is closed
 * by the caller with svt_close). */
static void
fk_connect(struct fake *f, svt_conn *c)
{
	fk_start(f);
	assert_int_equal(svt_init(c, f->url), SV_OK);
}

/* timed_call makes a call on c with a deadline ms from now, checks that it
 * returns want, and returns how long it took (ms). */
static int64_t
timed_call(svt_conn *c, int ms, sv_err want)
{
	void   *rep = NULL;
	size_t  n;
	int64_t t0 = svt_now_ms();

	assert_int_equal(
	    svt_call(c, "q", 1, 1024, svt_deadline(ms), &rep, &n), want);
	return svt_now_ms() - t0;
}

/* fk_free stops the thread (if started) and removes the directory. */
static void
fk_free(struct fake *f)
{
	if (f->lfd >= 0) {
		atomic_store(&f->stop, 1);
		assert_int_equal(write(f->wake[1], "x", 1), 1);
		pthread_join(f->thr, NULL);
		close(f->lfd);
		close(f->wake[0]);
		close(f->wake[1]);
	}
	unlink(f->path);
	rmdir(f->dir);
	free(f);
}

/* fk_wait_closed polls until the server has closed want connections or
 * ms pass; returns the count seen. */
static int
fk_wait_closed(struct fake *f, int want, int ms)
{
	int64_t deadline = svt_now_ms() + ms;

	while (atomic_load(&f->closed) < want && svt_now_ms() < deadline) {
		poll(NULL, 0, 1);
	}
	return atomic_load(&f->closed);
}

/* conn_call sends body and expects want back (echo mode). */
static void
conn_call_ok(svt_conn *c, const char *body, int timeout_ms)
{
	void  *rep = NULL;
	size_t n   = 0;
	sv_err e   = svt_call(
	      c, body, strlen(body), 1024, svt_deadline(timeout_ms), &rep, &n);

	if (e != SV_OK) {
		fail_msg("svt_call: %s (%s)", sv_err_name(e), c->detail);
	}
	assert_int_equal(n, strlen(body));
	assert_memory_equal(rep, body, n);
	free(rep);
}

/* ---- tests -------------------------------------------------------------- */

/* Several requests on one connection come back with their bodies; request
 * ids increase by one, have the high bit set and start at random. */
static void
test_roundtrip(void **state)
{
	struct fake *f = fk_new();
	svt_conn     c, d;

	(void) state;
	fk_connect(f, &c);
	assert_int_equal(svt_connect(&c, svt_deadline(2000)), SV_OK);
	conn_call_ok(&c, "one", 2000);
	conn_call_ok(&c, "two", 2000);
	conn_call_ok(&c, "", 2000);
	assert_int_equal(atomic_load(&f->conns), 1);
	assert_int_equal(atomic_load(&f->requests), 3);
	assert_int_equal(atomic_load(&f->bad_hdr), 0);
	for (int i = 0; i < 3; i++) {
		assert_true(f->ids[i] & SVT_ID_BIT);
	}
	assert_int_equal(f->ids[1], f->ids[0] + 1);
	assert_int_equal(f->ids[2], f->ids[1] + 1);
	/* Another connection starts elsewhere (fails 1 in 2^31). */
	assert_int_equal(svt_init(&d, f->url), SV_OK);
	assert_int_not_equal(d.last_id, c.last_id - 3);
	svt_close(&c);
	fk_free(f);
}

/* Past 0xffffffff the request id wraps to 0x80000000, never to 0. */
static void
test_id_wraps(void **state)
{
	struct fake *f = fk_new();
	svt_conn     c;

	(void) state;
	fk_connect(f, &c);
	c.last_id = 0xfffffffeu;
	conn_call_ok(&c, "a", 2000);
	conn_call_ok(&c, "b", 2000);
	assert_int_equal(f->ids[0], 0xffffffffu);
	assert_int_equal(f->ids[1], 0x80000000u);
	svt_close(&c);
	fk_free(f);
}

/* A peer whose header is not SP, or is SP but not REP0, is refused: by
 * svt_connect, and by the public API at open when the header is already
 * there, else by the first call (SV_EPROTO), never with a handle that
 * works. */
static void
test_bad_peer_header(void **state)
{
	static const uint8_t junk[8]
	    = {'H', 'T', 'T', 'P', '/', '1', '.', '1'};
	static const uint8_t req0[8] = {0, 'S', 'P', 0, 0, 0x30, 0, 0};
	const uint8_t       *bad[2]  = {junk, req0};

	(void) state;
	for (int i = 0; i < 2; i++) {
		struct fake *f  = fk_new();
		sv_client   *cl = NULL;
		sv_hello    *h  = NULL;
		svt_conn     c;
		sv_err       e;

		memcpy(f->hdr, bad[i], 8);
		fk_start(f);
		assert_int_equal(svt_init(&c, f->url), SV_OK);
		assert_int_equal(
		    svt_connect(&c, svt_deadline(2000)), SV_EPROTO);
		assert_int_equal(c.fd, -1);
		assert_non_null(strstr(c.detail, "SP"));
		/* The public API: such a peer is no supervisor. */
		e = sv_client_open(&cl, f->url, 2000);
		if (e == SV_OK) {
			assert_int_equal(
			    sv_client_hello(cl, 2000, &h), SV_EPROTO);
			assert_null(h);
			assert_string_not_equal(
			    sv_client_error_message(cl), "");
			sv_client_close(cl);
			cl = NULL;
		} else {
			assert_int_equal(e, SV_ECONNECT);
			assert_null(cl);
			assert_string_not_equal(
			    sv_client_error_message(NULL), "");
		}
		fk_free(f);
	}
}

/* A reply length over the bound fails with SV_ETOOLARGE at once, without
 * allocating it: a 1 GiB or 2^62-byte claim would otherwise be allocated
 * and then wait for data until the deadline. */
static void
test_oversize_reply(void **state)
{
	static const uint64_t lens[3] = {4 + 1024 + 1, 1ull << 30, 1ull << 62};

	(void) state;
	for (int i = 0; i < 3; i++) {
		struct fake *f   = fk_new();
		void        *rep = NULL;
		size_t       n   = 0;
		svt_conn     c;
		int64_t      t0;
		sv_err       e;

		f->oversize_len = lens[i];
		fk_start(f);
		assert_int_equal(svt_init(&c, f->url), SV_OK);
		t0 = svt_now_ms();
		e  = svt_call(&c, "x", 1, 1024, svt_deadline(3000), &rep, &n);
		assert_int_equal(e, SV_ETOOLARGE);
		assert_true(svt_now_ms() - t0 < 1000);
		assert_null(rep);
		assert_int_equal(c.fd, -1); /* the stream is dropped */
		fk_free(f);
	}
}

/* A reply to another request id is read and skipped. */
static void
test_stale_reply_skipped(void **state)
{
	struct fake *f = fk_new();
	svt_conn     c;

	(void) state;
	f->stale_first = true;
	fk_connect(f, &c);
	conn_call_ok(&c, "fresh", 2000);
	conn_call_ok(&c, "again", 2000);
	assert_int_equal(atomic_load(&f->conns), 1);
	svt_close(&c);
	fk_free(f);
}

/* A server that never answers: the call returns at its deadline, the
 * connection stays up, and a late reply would be skipped by id. */
static void
test_no_answer_deadline(void **state)
{
	struct fake *f = fk_new();
	svt_conn     c;
	int64_t      dt, lag = sv_lag_ms(100); /* see sv_lag.h */

	(void) state;
	f->silent = true;
	fk_connect(f, &c);
	dt = timed_call(&c, 300, SV_ETIMEDOUT);
	assert_true(dt >= 300);
	assert_true(sv_lag_within(dt, 0, 300 + 200, &lag));
	assert_true(c.fd >= 0);
	/* Deadline 0: nothing is sent, SV_ETIMEDOUT at once. */
	assert_true(
	    sv_lag_within(timed_call(&c, 0, SV_ETIMEDOUT), 0, 200, &lag));
	assert_int_equal(atomic_load(&f->requests), 1);
	svt_close(&c);
	fk_free(f);
}

/* A server that accepts but never sends its header (a stopped supervisor):
 * svt_connect returns at its deadline keeping the connection (never
 * abandoning the exchange), and calls then time out by their own
 * deadlines without sending anything. sv_client_open does not wait for the
 * header (the first call does), so open + call with the same timeout take
 * that timeout once, not twice. */
static void
test_no_greeting_deadline(void **state)
{
	struct fake *f  = fk_new();
	sv_client   *cl = NULL;
	sv_hello    *h  = NULL;
	svt_conn     c;
	int64_t      t0, dt, lag = sv_lag_ms(100); /* see sv_lag.h */

	(void) state;
	f->never_greet = true;
	fk_connect(f, &c);
	t0 = svt_now_ms();
	assert_int_equal(svt_connect(&c, svt_deadline(200)), SV_OK);
	dt = svt_now_ms() - t0;
	assert_true(sv_lag_within(dt, 200, 400, &lag));
	assert_true(c.fd >= 0);
	assert_false(c.greeted);
	dt = timed_call(&c, 200, SV_ETIMEDOUT);
	assert_true(sv_lag_within(dt, 200, 400, &lag));
	assert_true(c.fd >= 0);

	t0 = svt_now_ms();
	assert_int_equal(sv_client_open(&cl, f->url, 300), SV_OK);
	assert_int_equal(sv_client_hello(cl, 300, &h), SV_ETIMEDOUT);
	dt = svt_now_ms() - t0;
	assert_true(sv_lag_within(dt, 300, 450, &lag));
	assert_string_not_equal(sv_client_error_message(cl), "");
	assert_int_equal(atomic_load(&f->requests), 0);
	assert_int_equal(atomic_load(&f->conns), 2);
	sv_client_close(cl);
	svt_close(&c);
	fk_free(f);
}

/* A hang-up after the request was written is SV_ECLOSED for the
 * transport; the client resends an idempotent request (Hello) on a new
 * connection and reports the loss for RestartWorker, sent only once. */
static void
test_close_mid_call(void **state)
{
	struct fake *f   = fk_new();
	sv_client   *cl  = NULL;
	sv_hello    *h   = NULL;
	void        *rep = NULL;
	size_t       n;
	svt_conn     c;

	(void) state;
	f->close_first = 1;
	fk_connect(f, &c);
	assert_int_equal(
	    svt_call(&c, "q", 1, 1024, svt_deadline(2000), &rep, &n),
	    SV_ECLOSED);
	assert_int_equal(c.fd, -1);
	svt_close(&c);
	fk_free(f);

	f              = fk_new();
	f->envelope    = true;
	f->close_first = 2;
	fk_start(f);
	assert_int_equal(sv_client_open(&cl, f->url, 2000), SV_OK);
	if (sv_client_hello(cl, 3000, &h) != SV_OK) {
		fail_msg("hello: %s", sv_client_error_message(cl));
	}
	assert_string_equal(sv_hello_server_name(h), "fake");
	sv_hello_free(h);
	assert_int_equal(atomic_load(&f->requests), 3);
	assert_int_equal(atomic_load(&f->conns), 3);
	sv_client_close(cl);
	fk_free(f);

	f              = fk_new();
	f->envelope    = true;
	f->close_first = 1;
	fk_start(f);
	assert_int_equal(sv_client_open(&cl, f->url, 2000), SV_OK);
	assert_int_equal(sv_client_restart(cl, "g", 0, 3000), SV_ECLOSED);
	assert_string_not_equal(sv_client_error_message(cl), "");
	assert_int_equal(atomic_load(&f->requests), 1);
	/* The next call reconnects. */
	assert_int_equal(sv_client_restart(cl, "g", 0, 3000), SV_OK);
	assert_int_equal(atomic_load(&f->requests), 2);
	sv_client_close(cl);
	fk_free(f);
}

/* Budgets of a rolling restart go only to a supervisor that lists
 * admin.rolling_restart.budgets: against one that does not (the fake's
 * Hello lists no feature) the client asks Hello and sends nothing else. */
static void
test_roll_budgets_need_feature(void **state)
{
	struct fake     *f  = fk_new();
	sv_client       *cl = NULL;
	sv_drain_report *r  = NULL;

	(void) state;
	f->envelope = true;
	fk_start(f);
	assert_int_equal(sv_client_open(&cl, f->url, 2000), SV_OK);
	assert_int_equal(
	    sv_client_rolling_restart_budgets(cl, "g", 0, 2, 0, 3000, &r),
	    SV_EUNKNOWNMSG);
	assert_null(r);
	assert_int_equal(atomic_load(&f->requests), 1); /* the Hello */
	sv_client_close(cl);
	fk_free(f);
}

/* A connection the server closed while idle is replaced before sending,
 * so even a non-idempotent request gets through, exactly once. */
static void
test_idle_close_reconnects(void **state)
{
	struct fake *f  = fk_new();
	sv_client   *cl = NULL;

	(void) state;
	f->envelope          = true;
	f->close_after_reply = true;
	fk_start(f);
	assert_int_equal(sv_client_open(&cl, f->url, 2000), SV_OK);
	for (int i = 0; i < 3; i++) {
		sv_err e = sv_client_restart(cl, "g", 0, 3000);

		if (e != SV_OK) {
			fail_msg("restart %d: %s (%s)", i, sv_err_name(e),
			    sv_client_error_message(cl));
		}
		/* The hang-up must be complete before the next call, or the
		 * request could cross it (and rightly fail as SV_ECLOSED). */
		assert_int_equal(fk_wait_closed(f, i + 1, 2000), i + 1);
	}
	assert_int_equal(atomic_load(&f->requests), 3);
	assert_int_equal(atomic_load(&f->conns), 3);
	sv_client_close(cl);
	fk_free(f);
}

/* Nobody listening (no socket file, or a file nobody accepts on): open
 * tries until its deadline and returns SV_ECONNECT soon after it. */
static void
test_nobody_listening(void **state)
{
	struct fake *f = fk_new();
	sv_client   *cl;
	svt_conn     c;
	int64_t      t0, dt, lag = sv_lag_ms(100); /* see sv_lag.h */
	int          fd = -1;

	(void) state;
	for (int round = 0; round < 2; round++) {
		if (round == 1) {
			/* Bound but not listening: ECONNREFUSED. */
			struct sockaddr_un sa = {.sun_family = AF_UNIX};

			fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
			snprintf(
			    sa.sun_path, sizeof(sa.sun_path), "%s", f->path);
			assert_int_equal(
			    bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
		}
		assert_int_equal(svt_init(&c, f->url), SV_OK);
		t0 = svt_now_ms();
		assert_int_equal(
		    svt_connect(&c, svt_deadline(500)), SV_ECONNECT);
		dt = svt_now_ms() - t0;
		assert_true(sv_lag_within(dt, 500, 700, &lag));

		cl = NULL;
		t0 = svt_now_ms();
		assert_int_equal(
		    sv_client_open(&cl, f->url, 500), SV_ECONNECT);
		dt = svt_now_ms() - t0;
		assert_true(sv_lag_within(dt, 500, 700, &lag));
		assert_null(cl);
		assert_string_not_equal(sv_client_error_message(NULL), "");
		/* 0: one attempt, no waiting. */
		t0 = svt_now_ms();
		assert_int_equal(sv_client_open(&cl, f->url, 0), SV_ECONNECT);
		assert_true(sv_lag_within(svt_now_ms() - t0, 0, 100, &lag));
		if (round == 1) {
			close(fd);
		}
	}
	fk_free(f);
}

/* A server that starts after the client: open waits for it. */
static void
test_open_waits_for_listener(void **state)
{
	struct fake *f  = fk_new();
	sv_client   *cl = NULL;
	sv_hello    *h  = NULL;
	pid_t        pid;
	int          st;

	(void) state;
	f->envelope = true;
	/* The child opens while nobody listens yet; the parent starts the
	 * server once the child has been refused at least once. */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		sv_err e = sv_client_open(&cl, f->url, 3000);

		if (e == SV_OK) {
			e = sv_client_hello(cl, 3000, &h);
		}
		_exit(e == SV_OK ? 0 : 1);
	}
	usleep(100 * 1000); /* lets the child retry; not a synchronisation */
	fk_start(f);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	fk_free(f);
}

/* Only ipc:// URLs: anything else is SV_EINVAL with a message. */
static void
test_url_not_ipc(void **state)
{
	static const char *bad[] = {"tcp://127.0.0.1:5555", "ipc://",
	    "abstract://x", "inproc://x", "/tmp/control.sock"};
	sv_client         *cl    = NULL;
	char               longurl[200];

	(void) state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(sv_client_open(&cl, bad[i], 100), SV_EINVAL);
		assert_null(cl);
		assert_string_not_equal(sv_client_error_message(NULL), "");
	}
	assert_non_null(strstr(sv_client_error_message(NULL), "ipc://"));
	memset(longurl, 'a', sizeof(longurl));
	memcpy(longurl, "ipc:///", 7);
	longurl[sizeof(longurl) - 1] = '\0';
	assert_int_equal(sv_client_open(&cl, longurl, 100), SV_EINVAL);
}

/* After fork the child uses the inherited handle on a connection of its
 * own (the server sees the child's pid); the parent's connection is left
 * alone and still works without reconnecting. */
static void
test_fork_reconnects(void **state)
{
	struct fake *f  = fk_new();
	sv_client   *cl = NULL;
	sv_hello    *h  = NULL;
	pid_t        pid;
	int          st;

	(void) state;
	f->envelope = true;
	fk_start(f);
	assert_int_equal(sv_client_open(&cl, f->url, 2000), SV_OK);
	assert_int_equal(sv_client_hello(cl, 2000, &h), SV_OK);
	sv_hello_free(h);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		sv_err e = sv_client_hello(cl, 3000, &h);

		if (e == SV_OK) {
			sv_hello_free(h);
		}
		sv_client_close(cl);
		_exit(e == SV_OK ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(atomic_load(&f->requests), 2);
	assert_int_equal(f->peer_pid[0], getpid());
	assert_int_equal(f->peer_pid[1], pid);
	assert_int_equal(sv_client_hello(cl, 2000, &h), SV_OK);
	sv_hello_free(h);
	assert_int_equal(atomic_load(&f->conns), 2);
	assert_int_equal(f->peer_pid[2], getpid());
	sv_client_close(cl);
	fk_free(f);
}

/* svt_forget closes only the socket it opened: a descriptor number reused
 * for something else is left open. */
static void
test_forget_reused_fd(void **state)
{
	struct fake *f = fk_new();
	svt_conn     c;
	int          fd, p[2];

	(void) state;
	fk_connect(f, &c);
	assert_int_equal(svt_connect(&c, svt_deadline(2000)), SV_OK);
	fd = c.fd;
	close(fd);
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_int_equal(dup2(p[0], fd), fd);
	svt_forget(&c);
	assert_int_equal(c.fd, -1);
	assert_int_not_equal(fcntl(fd, F_GETFD), -1); /* still open */
	close(fd);
	close(p[0]);
	close(p[1]);
	fk_free(f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_roundtrip),
	    cmocka_unit_test(test_id_wraps),
	    cmocka_unit_test(test_bad_peer_header),
	    cmocka_unit_test(test_oversize_reply),
	    cmocka_unit_test(test_stale_reply_skipped),
	    cmocka_unit_test(test_no_answer_deadline),
	    cmocka_unit_test(test_no_greeting_deadline),
	    cmocka_unit_test(test_close_mid_call),
	    cmocka_unit_test(test_idle_close_reconnects),
	    cmocka_unit_test(test_nobody_listening),
	    cmocka_unit_test(test_open_waits_for_listener),
	    cmocka_unit_test(test_url_not_ipc),
	    cmocka_unit_test(test_fork_reconnects),
	    cmocka_unit_test(test_forget_reused_fd),
	    cmocka_unit_test(test_roll_budgets_need_feature),
	};

	return cmocka_run_group_tests_name("transport", tests, NULL, NULL);
}
