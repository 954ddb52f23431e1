/*
 * integration_wire.c — hostile and version-skewed bytes on the control
 * socket of a real supervised.
 *
 * Design: the test speaks to the daemon below the client API, three ways:
 * its own nng REQ socket (resend disabled, so a dropped pipe surfaces as
 * NNG_ECONNRESET instead of a resend storm; every receive has a timeout);
 * a raw AF_UNIX stream on the socket file carrying junk, half handshakes or
 * hang-ups; and the SP protocol spoken by hand over such a stream (handshake
 * plus ipc frames) for the oversize message. It sends bytes the public
 * client would never send and decodes replies with the generated protobuf-c
 * code of proto/supervise/v1/supervise.proto. The contract checked: every
 * request gets a reply that decodes as an Envelope carrying an Error with
 * the right code and a message, or the pipe is closed; never silence, never
 * a crash. After every hostile input the daemon must still be alive and
 * answer Hello both on an already-open client and on a new one.
 *
 * Random inputs use a fixed-seed xorshift generator so every run sends the
 * same bytes; the seed is printed with any failure.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <nng/protocol/reqrep0/req.h>

#include "supervise/v1/supervise.pb-c.h"

#define EC(x)   SUPERVISE__V1__ERROR_CODE__ERROR_CODE_##x
#define BODY(x) SUPERVISE__V1__ENVELOPE__BODY_##x

/* Size of the oversize message: above a 1 MiB limit, whatever framing. */
#define OVERSIZE_BYTES ((1u << 20) + 64)

/* The outcome of one raw request. */
struct raw_reply {
	int                      rv; /* nng result of send + recv */
	Supervise__V1__Envelope *env; /* decoded reply, NULL if none */
	size_t                   len; /* reply size in bytes */
};

/* xorshift32: deterministic bytes for the random-garbage inputs. */
static uint32_t
xorshift32(uint32_t *s)
{
	uint32_t x = *s;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *s = x;
}

/*
 * Sends buf as one REQ message on a fresh socket and waits up to
 * IT_CALL_MS for the reply, which is decoded into out->env when it parses.
 */
static void
raw_request(it_ctx *ctx, const void *buf, size_t len, struct raw_reply *out)
{
	nng_socket s;
	nng_msg   *m = NULL;
	int        rv;

	memset(out, 0, sizeof(*out));
	if ((rv = nng_req0_open(&s)) != 0)
		fail_msg("nng_req0_open: %s", nng_strerror(rv));
	if ((rv = nng_socket_set_ms(
	         s, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE))
	        != 0
	    || (rv = nng_socket_set_ms(s, NNG_OPT_RECVTIMEO, IT_CALL_MS)) != 0
	    || (rv = nng_socket_set_ms(s, NNG_OPT_SENDTIMEO, IT_CALL_MS)) != 0
	    || (rv = nng_dial(s, ctx->url, NULL, 0)) != 0) {
		nng_close(s);
		fail_msg("REQ socket to %s: %s", ctx->url, nng_strerror(rv));
	}
	if ((rv = nng_msg_alloc(&m, 0)) != 0
	    || (len > 0 && (rv = nng_msg_append(m, buf, len)) != 0)) {
		nng_msg_free(m);
		nng_close(s);
		fail_msg("nng_msg: %s", nng_strerror(rv));
	}
	if ((rv = nng_sendmsg(s, m, 0)) != 0) {
		nng_msg_free(m);
		out->rv = rv;
		nng_close(s);
		return;
	}
	if ((rv = nng_recvmsg(s, &m, 0)) != 0) {
		out->rv = rv;
		nng_close(s);
		return;
	}
	out->len = nng_msg_len(m);
	out->env = supervise__v1__envelope__unpack(
	    NULL, nng_msg_len(m), nng_msg_body(m));
	nng_msg_free(m);
	nng_close(s);
}

/* Frees what raw_request decoded. */
static void
raw_reply_free(struct raw_reply *r)
{
	if (r->env != NULL)
		supervise__v1__envelope__free_unpacked(r->env, NULL);
	r->env = NULL;
}

/* Returns true for an nng result that means "the daemon closed the pipe". */
static bool
is_closed_pipe(int rv)
{
	return rv == NNG_ECONNRESET || rv == NNG_ECLOSED || rv == NNG_ECONNSHUT
	    || rv == NNG_ECONNABORTED;
}

/*
 * Asserts that r is an Error reply whose code is one of codes[0..n-1] with a
 * non-empty message; a closed pipe is accepted when closed_ok.
 */
static void
expect_error(const char *what, const struct raw_reply *r, const int *codes,
    size_t n, bool closed_ok)
{
	size_t i;

	if (r->rv != 0) {
		if (closed_ok && is_closed_pipe(r->rv)) {
			printf("%s: pipe closed by the daemon (%s)\n", what,
			    nng_strerror(r->rv));
			return;
		}
		fail_msg("%s: no reply: %s", what, nng_strerror(r->rv));
	}
	if (r->env == NULL)
		fail_msg(
		    "%s: reply of %zu bytes is not an Envelope", what, r->len);
	if (r->env->body_case != BODY(ERROR) || r->env->error == NULL)
		fail_msg("%s: reply body is %d, not an Error", what,
		    (int) r->env->body_case);
	for (i = 0; i < n; i++)
		if ((int) r->env->error->code == codes[i])
			break;
	if (i == n)
		fail_msg("%s: Error code %d (%s) not among the expected", what,
		    (int) r->env->error->code, r->env->error->message);
	if (r->env->error->message == NULL
	    || r->env->error->message[0] == '\0')
		fail_msg("%s: Error %d has an empty message", what,
		    (int) r->env->error->code);
	printf("%s: Error %d \"%s\"\n", what, (int) r->env->error->code,
	    r->env->error->message);
}

/* Asserts that the daemon is alive and serves Hello on old and new clients. */
static void
expect_still_serving(it_ctx *ctx, const char *after)
{
	sv_hello *h = NULL;
	sv_err    e;

	if (!it_daemon_alive(ctx))
		fail_msg("after %s: the daemon died (status 0x%x)", after,
		    ctx->status);
	e = sv_client_hello(ctx->client, IT_CALL_MS, &h);
	if (e != SV_OK)
		fail_msg("after %s: hello on the open client: %s (%s)", after,
		    sv_err_name(e), sv_client_error_message(ctx->client));
	sv_hello_free(h);
	if ((e = it_hello_ok(ctx)) != SV_OK)
		fail_msg("after %s: hello on a new client: %s", after,
		    sv_err_name(e));
}

/* Packs a Hello envelope with the given header into a malloc'd buffer. */
static uint8_t *
pack_hello(uint32_t version, uint64_t request_id, size_t *lenp)
{
	Supervise__V1__Envelope env   = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__Hello    hello = SUPERVISE__V1__HELLO__INIT;
	uint8_t                *buf;

	hello.client_name = "integration_wire";
	hello.min_version = version;
	hello.max_version = version;
	env.version       = version;
	env.request_id    = request_id;
	env.body_case     = BODY(HELLO);
	env.hello         = &hello;
	*lenp             = supervise__v1__envelope__get_packed_size(&env);
	buf               = malloc(*lenp + 16);
	assert_non_null(buf);
	assert_int_equal(supervise__v1__envelope__pack(&env, buf), *lenp);
	return buf;
}

/* 4a: garbage over nng REQ gets an Error reply or a closed pipe. */
static void
test_garbage_over_nng(void **state)
{
	it_ctx          *ctx = *state;
	static const int any[]
	    = {EC(BAD_REQUEST), EC(UNKNOWN_MESSAGE), EC(UNSUPPORTED_VERSION)};
	static const int bad[] = {EC(BAD_REQUEST)};
	struct raw_reply r;
	uint8_t          junk[100], *hello;
	size_t           hlen, i;
	uint32_t         seed;
	char             what[64];

	/* An empty message decodes as an Envelope with nothing set. */
	raw_request(ctx, NULL, 0, &r);
	expect_error("empty message", &r, any, 3, true);
	raw_reply_free(&r);
	expect_still_serving(ctx, "an empty message");

	/* One byte 0xff: an unterminated varint tag, not protobuf. */
	junk[0] = 0xff;
	raw_request(ctx, junk, 1, &r);
	expect_error("one byte 0xff", &r, bad, 1, true);
	raw_reply_free(&r);
	expect_still_serving(ctx, "one byte 0xff");

	/* 100 random bytes, several fixed seeds. */
	for (seed = 1; seed <= 8; seed++) {
		uint32_t s = seed * 2654435761u;

		for (i = 0; i < sizeof(junk); i++)
			junk[i] = (uint8_t) xorshift32(&s);
		snprintf(what, sizeof(what), "100 random bytes (seed %u)",
		    (unsigned) seed);
		raw_request(ctx, junk, sizeof(junk), &r);
		expect_error(what, &r, any, 3, true);
		raw_reply_free(&r);
		expect_still_serving(ctx, what);
	}

	/* A valid Hello envelope cut short at every length but 0 and full. */
	hello = pack_hello(1, 7, &hlen);
	for (i = 1; i < hlen; i++) {
		snprintf(what, sizeof(what), "Hello envelope cut to %zu/%zu",
		    i, hlen);
		/*
		 * A cut at a field boundary is still a valid message with
		 * no body (e.g. version + request_id only): an Error too.
		 */
		raw_request(ctx, hello, i, &r);
		expect_error(what, &r, any, 3, true);
		raw_reply_free(&r);
	}
	free(hello);
	expect_still_serving(ctx, "truncated envelopes");

	/* A length-delimited body claiming 127 bytes of which 1 is present. */
	{
		static const uint8_t lie[] = {0x08, 0x01, 0x52, 0x7f, 0x0a};

		raw_request(ctx, lie, sizeof(lie), &r);
		expect_error(
		    "body length beyond the message", &r, bad, 1, true);
		raw_reply_free(&r);
		expect_still_serving(ctx, "a lying length prefix");
	}
}

/* Connects a raw AF_UNIX stream socket to the daemon's socket file. */
static int
raw_connect(it_ctx *ctx)
{
	struct sockaddr_un sa;
	int                fd;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", ctx->sock_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) != 0)
		fail_msg("connect %s: %s", ctx->sock_path, strerror(errno));
	return fd;
}

/* Writes all of buf to fd; a peer that already closed is not an error. */
static void
raw_write(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return; /* EPIPE / ECONNRESET: the daemon hung up */
		p += n;
		len -= (size_t) n;
	}
}

/*
 * Reads fd until the peer closes it or deadline_ms passes; returns 0 when
 * the daemon closed the connection, -1 on timeout.
 */
static int
raw_wait_closed(int fd, int deadline_ms)
{
	int64_t deadline = it_now_ms() + deadline_ms;
	uint8_t buf[256];

	for (;;) {
		struct pollfd p    = {.fd = fd, .events = POLLIN};
		int64_t       left = deadline - it_now_ms();
		ssize_t       n;

		if (left <= 0)
			return -1;
		if (poll(&p, 1, (int) left) <= 0)
			continue;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			return 0;
		/* n > 0: the daemon's SP handshake header; keep reading */
	}
}

/* SP handshake of a REQ peer: 0, 'S', 'P', 0, protocol 0x0030, 0, 0. */
static const uint8_t sp_req[8]
    = {0x00, 'S', 'P', 0x00, 0x00, 0x30, 0x00, 0x00};

/* 4b: text and 0xff bytes instead of the SP handshake. */
static void
test_raw_bad_handshake(void **state)
{
	it_ctx           *ctx    = *state;
	static const char http[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	uint8_t           junk[64];
	int               fd;

	fd = raw_connect(ctx);
	memset(junk, 0xff, sizeof(junk));
	raw_write(fd, http, sizeof(http) - 1);
	raw_write(fd, junk, sizeof(junk));
	if (raw_wait_closed(fd, IT_CALL_MS) != 0)
		fail_msg("the daemon kept a connection open after a bad "
		         "handshake");
	close(fd);
	expect_still_serving(ctx, "a bad handshake");
}

/*
 * 4b: a correct handshake, then an ipc frame header claiming 256 MiB. With
 * a receive limit the daemon drops the pipe at once; without one it would
 * allocate and wait for the bytes.
 */
static void
test_raw_huge_frame(void **state)
{
	it_ctx *ctx = *state;
	/* ipc frame header: type 1, 64-bit big-endian length = 256 MiB. */
	static const uint8_t huge_frame[9] = {0x01, 0, 0, 0, 0, 0x10, 0, 0, 0};
	uint8_t              junk[64];
	int                  fd;

	memset(junk, 0xff, sizeof(junk));
	fd = raw_connect(ctx);
	raw_write(fd, sp_req, sizeof(sp_req));
	raw_write(fd, huge_frame, sizeof(huge_frame));
	raw_write(fd, junk, sizeof(junk));
	if (raw_wait_closed(fd, IT_CALL_MS) != 0)
		fail_msg("the daemon kept a connection that announced a "
		         "256 MiB message: no NNG_OPT_RECVMAXSZ?");
	close(fd);
	expect_still_serving(ctx, "a 256 MiB frame header");
}

/* 4b: idle connections, one half-handshaken, do not block other clients. */
static void
test_raw_idle_connections(void **state)
{
	it_ctx *ctx = *state;
	int     fd, fd2;

	fd  = raw_connect(ctx);
	fd2 = raw_connect(ctx);
	raw_write(fd2, sp_req, 4);
	expect_still_serving(ctx, "two idle raw connections");
	close(fd);
	close(fd2);
	expect_still_serving(ctx, "closing two idle raw connections");
}

/*
 * 4b: peers that hang up during the SP handshake: at once, after half a
 * header, and after reading the daemon's header. Each must leave the
 * control socket accepting new clients.
 */
static void
test_raw_connect_and_hang_up(void **state)
{
	it_ctx *ctx = *state;
	char    what[64];
	uint8_t hdr[8];
	int     i, fd;

	for (i = 0; i < 20; i++) {
		fd = raw_connect(ctx);
		if (i % 3 == 1)
			raw_write(fd, sp_req, 4);
		else if (i % 3 == 2)
			(void) recv(fd, hdr, sizeof(hdr), MSG_WAITALL);
		close(fd);
		snprintf(what, sizeof(what), "hang-up %d (%s)", i + 1,
		    i % 3 == 0       ? "at once"
		        : i % 3 == 1 ? "after half a header"
		                     : "after the daemon's header");
		expect_still_serving(ctx, what);
	}
}

/*
 * Reads exactly n bytes from fd before deadline (absolute, it_now_ms).
 * Returns 1 when all arrived, 0 when the peer closed or reset the
 * connection, -1 on timeout.
 */
static int
raw_read_full(int fd, void *buf, size_t n, int64_t deadline)
{
	uint8_t *p = buf;

	while (n > 0) {
		struct pollfd pf   = {.fd = fd, .events = POLLIN};
		int64_t       left = deadline - it_now_ms();
		ssize_t       got;

		if (left <= 0)
			return -1;
		if (poll(&pf, 1, (int) left) <= 0)
			continue;
		got = recv(fd, p, n, 0);
		if (got == 0 || (got < 0 && errno == ECONNRESET))
			return 0;
		if (got < 0)
			continue; /* EINTR, EAGAIN */
		p += got;
		n -= (size_t) got;
	}
	return 1;
}

/*
 * Sends body as one REQ message by speaking the SP protocol over a raw
 * stream: handshake, an ipc frame (type 1, 64-bit big-endian length)
 * holding a 4-byte request id and body, then reads the reply frame. On a
 * reply out->env holds the decoded Envelope; when the daemon closes the
 * connection out->rv is NNG_ECONNRESET; on timeout NNG_ETIMEDOUT.
 *
 * The oversize case uses this rather than an nng REQ socket: nng 1.5.2
 * redials at once after the daemon drops the pipe, and closing the socket
 * during that redial both leaks inside nng and hangs up mid-handshake,
 * which test_raw_connect_and_hang_up covers on its own.
 */
static void
sp_raw_request(
    it_ctx *ctx, const uint8_t *body, size_t len, struct raw_reply *out)
{
	static const uint8_t sp_rep[8]
	    = {0x00, 'S', 'P', 0x00, 0x00, 0x31, 0x00, 0x00};
	static const uint8_t req_id[4] = {0x80, 0x00, 0x00, 0x01};
	int64_t              deadline  = it_now_ms() + IT_CALL_MS;
	uint8_t              hdr[9], peer[8];
	uint64_t             flen = (uint64_t) len + sizeof(req_id);
	uint8_t             *reply;
	int                  fd, rv, i;

	memset(out, 0, sizeof(*out));
	fd = raw_connect(ctx);
	raw_write(fd, sp_req, sizeof(sp_req));
	rv = raw_read_full(fd, peer, sizeof(peer), deadline);
	if (rv != 1 || memcmp(peer, sp_rep, sizeof(peer)) != 0) {
		close(fd);
		fail_msg("no SP handshake from the daemon (%d)", rv);
	}
	hdr[0] = 0x01;
	for (i = 0; i < 8; i++)
		hdr[1 + i] = (uint8_t) (flen >> (56 - 8 * i));
	raw_write(fd, hdr, sizeof(hdr));
	raw_write(fd, req_id, sizeof(req_id));
	raw_write(fd, body, len); /* stops quietly if the daemon hangs up */

	rv = raw_read_full(fd, hdr, sizeof(hdr), deadline);
	if (rv == 1) {
		flen = 0;
		for (i = 0; i < 8; i++)
			flen = flen << 8 | hdr[1 + i];
		if (hdr[0] != 0x01 || flen < sizeof(req_id) || flen > 65536)
			fail_msg("bad reply frame (type %u, %llu bytes)",
			    hdr[0], (unsigned long long) flen);
		reply = malloc((size_t) flen);
		assert_non_null(reply);
		rv = raw_read_full(fd, reply, (size_t) flen, deadline);
		if (rv == 1) {
			if (memcmp(reply, req_id, sizeof(req_id)) != 0)
				fail_msg("reply to another request id");
			out->len = (size_t) flen - sizeof(req_id);
			out->env = supervise__v1__envelope__unpack(
			    NULL, out->len, reply + sizeof(req_id));
		}
		free(reply);
	}
	close(fd);
	if (rv == 0)
		out->rv = NNG_ECONNRESET;
	else if (rv < 0)
		out->rv = NNG_ETIMEDOUT;
}

/* 4c: an oversize message gets TOO_LARGE (or BAD_REQUEST) or a closed pipe. */
static void
test_oversize_message(void **state)
{
	it_ctx          *ctx     = *state;
	static const int codes[] = {EC(TOO_LARGE), EC(BAD_REQUEST)};
	struct raw_reply r;
	uint8_t         *big;

	/* Control: the raw SP path gets a HelloReply for a valid Hello. */
	big = pack_hello(1, 5, &r.len);
	sp_raw_request(ctx, big, r.len, &r);
	free(big);
	if (r.rv != 0 || r.env == NULL
	    || r.env->body_case != BODY(HELLO_REPLY))
		fail_msg("raw SP Hello: no HelloReply (%s)",
		    r.rv ? nng_strerror(r.rv) : "wrong reply");
	raw_reply_free(&r);

	big = malloc(OVERSIZE_BYTES);
	assert_non_null(big);
	memset(big, 0xff, OVERSIZE_BYTES);
	sp_raw_request(ctx, big, OVERSIZE_BYTES, &r);
	free(big);
	expect_error("1 MiB + 64 bytes", &r, codes, 2, true);
	raw_reply_free(&r);
	expect_still_serving(ctx, "an oversize message");
}

/* 5: protocol version skew and unknown message kinds. */
static void
test_version_and_unknown_body(void **state)
{
	it_ctx          *ctx           = *state;
	static const int unsupported[] = {EC(UNSUPPORTED_VERSION)};
	static const int unknown[]     = {EC(UNKNOWN_MESSAGE)};
	/* version=1, request_id=42, field 499 (unassigned; 200 became
	 * RegisterSubWorker in v1.4) varint 5: 98 1f = tag 3992. */
	static const uint8_t f200_varint[]
	    = {0x08, 0x01, 0x10, 0x2a, 0x98, 0x1f, 0x05};
	/* version=1, request_id=43, field 499 bytes "hi": 9a 1f = 3994. */
	static const uint8_t f200_bytes[]
	    = {0x08, 0x01, 0x10, 0x2b, 0x9a, 0x1f, 0x02, 'h', 'i'};
	struct raw_reply r;
	uint8_t         *buf;
	size_t           len;

	/* Control: a correct v1 Hello through the same raw path. */
	buf = pack_hello(1, 41, &len);
	raw_request(ctx, buf, len, &r);
	free(buf);
	assert_int_equal(r.rv, 0);
	assert_non_null(r.env);
	if (r.env->body_case != BODY(HELLO_REPLY))
		fail_msg("v1 Hello: reply body %d, not HelloReply",
		    (int) r.env->body_case);
	assert_int_equal(r.env->request_id, 41);
	assert_int_equal(r.env->hello_reply->version, 1);
	raw_reply_free(&r);

	/* A v2 envelope: typed error, request id echoed. */
	buf = pack_hello(2, 77, &len);
	raw_request(ctx, buf, len, &r);
	free(buf);
	expect_error("version 2 Hello", &r, unsupported, 1, false);
	assert_int_equal(r.env->request_id, 77);
	raw_reply_free(&r);

	/* Any body in a v2 envelope, not only Hello, gets the same answer. */
	{
		Supervise__V1__Envelope    env = SUPERVISE__V1__ENVELOPE__INIT;
		Supervise__V1__ListWorkers lw
		    = SUPERVISE__V1__LIST_WORKERS__INIT;
		uint8_t lbuf[64];

		env.version      = 2;
		env.request_id   = 78;
		env.body_case    = BODY(LIST_WORKERS);
		env.list_workers = &lw;
		assert_true(supervise__v1__envelope__get_packed_size(&env)
		    <= sizeof(lbuf));
		len = supervise__v1__envelope__pack(&env, lbuf);
		raw_request(ctx, lbuf, len, &r);
		expect_error(
		    "version 2 ListWorkers", &r, unsupported, 1, false);
		assert_int_equal(r.env->request_id, 78);
		raw_reply_free(&r);
	}
	expect_still_serving(ctx, "a version 2 envelope");

	/* Only an unknown field 499 (varint): a body kind we do not know. */
	raw_request(ctx, f200_varint, sizeof(f200_varint), &r);
	expect_error("unknown field 499 (varint)", &r, unknown, 1, false);
	assert_int_equal(r.env->request_id, 42);
	raw_reply_free(&r);

	/* The same with a length-delimited field 499. */
	raw_request(ctx, f200_bytes, sizeof(f200_bytes), &r);
	expect_error("unknown field 499 (bytes)", &r, unknown, 1, false);
	assert_int_equal(r.env->request_id, 43);
	raw_reply_free(&r);
	expect_still_serving(ctx, "unknown field 499");

	/* A known body plus an unknown field: the field is ignored. */
	buf = pack_hello(1, 44, &len);
	memcpy(buf + len, (const uint8_t[]) {0x98, 0x1f, 0x05}, 3);
	raw_request(ctx, buf, len + 3, &r);
	free(buf);
	assert_int_equal(r.rv, 0);
	assert_non_null(r.env);
	if (r.env->body_case != BODY(HELLO_REPLY))
		fail_msg("Hello + unknown field 499: reply body %d, not "
		         "HelloReply (unknown fields must be ignored)",
		    (int) r.env->body_case);
	assert_int_equal(r.env->request_id, 44);
	raw_reply_free(&r);
}

/* Runs the group; argv[1] = supervised, argv[2] = sv-testworker. */
int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
	        test_garbage_over_nng, it_setup_g3, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_raw_bad_handshake, it_setup_g3, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_raw_huge_frame, it_setup_g3, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_raw_idle_connections, it_setup_g3, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_raw_connect_and_hang_up, it_setup_g3, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_oversize_message, it_setup_g3, it_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_version_and_unknown_body, it_setup_g3, it_teardown),
	};

	it_args(argc, argv);
	return it_finish(cmocka_run_group_tests_name(
	    "integration_wire", tests, NULL, NULL));
}
