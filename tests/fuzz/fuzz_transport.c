/*
 * fuzz_transport.c — libFuzzer harness for the client transport's reply
 * parsing (svt_call in libsupervise/src/client/transport.c) followed by the
 * client's envelope decoding (svw_decode with SVW_MAX_REPLY, as client.c
 * does with every reply).
 *
 * The parser is static and reads from the connection's descriptor, so it
 * cannot be given bytes directly. It is driven without a supervisor, a
 * socket file or a thread: the input is written into one end of a
 * socketpair(AF_UNIX, SOCK_STREAM), that end's writing side is shut down
 * (so every read ends in data or end of stream, never a wait), and svt_call
 * runs on the other end with the connection marked greeted. The input is
 * therefore what a supervisor would send after its connection header:
 * frames of 1 type byte, a 64-bit big-endian length, the 4-byte request id
 * and the body. The request id svt_call uses is fixed (0x80000001) so that
 * the seed corpus can answer it.
 *
 * Properties checked: the documented result codes only; on SV_OK the reply
 * is at most SVW_MAX_REPLY bytes and equals the body of the first frame
 * carrying our id (located independently here); after any error but a
 * timeout the connection is closed; the call never waits for its deadline.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client/transport.h"
#include "fuzz_util.h"
#include "wire/wire.h"

/* The id svt_call gives its request: last_id + 1, high bit set. */
#define FUZZ_ID 0x80000001u
/* Largest input: stays well inside a socket buffer, so writing it never
 * blocks. */
#define FUZZ_TRANSPORT_MAX (96u * 1024u)
/* Deadline of each call; reaching it would mean the parser waited. */
#define FUZZ_DEADLINE_MS 5000

/* get_be reads an n-byte big-endian number. */
static uint64_t
get_be(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++) {
		v = (v << 8) | p[i];
	}
	return v;
}

/* expected_reply walks the frames as docs/protocol.md section 1 describes
 * them and finds the body of the first well-formed frame with our id
 * (*bodyp, *lenp). False if the stream breaks or ends before it. */
static bool
expected_reply(
    const uint8_t *data, size_t size, const uint8_t **bodyp, size_t *lenp)
{
	size_t pos = 0;

	while (size - pos >= 13) {
		uint64_t len = get_be(data + pos + 1, 8);
		uint32_t id  = (uint32_t) get_be(data + pos + 9, 4);

		if (data[pos] != 1 || len < 4 || len - 4 > SVW_MAX_REPLY
		    || len - 4 > size - pos - 13) {
			return false;
		}
		if (id == FUZZ_ID) {
			*bodyp = data + pos + 13;
			*lenp  = (size_t) (len - 4);
			return true;
		}
		pos += 13 + (size_t) (len - 4);
	}
	return false;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t req[] = {0x08, 0x01}; /* Envelope{version 1} */
	svt_conn             c;
	int                  sv[2];
	void                *reply = NULL;
	size_t               rlen = 0, wrote = 0, elen = 0;
	const uint8_t       *ebody = NULL;
	bool                 found;
	int64_t              start;
	sv_err               err;

	/* An empty stream reads as a hang-up before the request, which makes
	 * svt_call reconnect to the socket file until its deadline. */
	if (size == 0 || size > FUZZ_TRANSPORT_MAX) {
		return 0;
	}
	FUZZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0,
	    "socketpair (a failure may be a descriptor leak)");
	{
		int big = 4 * (int) FUZZ_TRANSPORT_MAX;
		setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	}
	while (wrote < size) {
		ssize_t w = write(sv[1], data + wrote, size - wrote);
		FUZZ_CHECK(w > 0 || errno == EINTR, "preloading the stream");
		wrote += w > 0 ? (size_t) w : 0;
	}
	FUZZ_CHECK(shutdown(sv[1], SHUT_WR) == 0, "shutdown");

	FUZZ_CHECK(svt_init(&c, "ipc:///nonexistent/sv-fuzz.sock") == SV_OK,
	    "svt_init");
	c.fd      = sv[0];
	c.greeted = true;
	c.last_id = FUZZ_ID - 1;
	start     = svt_now_ms();
	err       = svt_call(&c, req, sizeof(req), SVW_MAX_REPLY,
	          svt_deadline(FUZZ_DEADLINE_MS), &reply, &rlen);
	FUZZ_CHECK(svt_now_ms() - start < FUZZ_DEADLINE_MS / 2,
	    "a preloaded stream is parsed without waiting");

	found = expected_reply(data, size, &ebody, &elen);
	switch (err) {
	case SV_OK:
		FUZZ_CHECK(found, "a reply only from a frame with our id");
		FUZZ_CHECK(rlen == elen && rlen <= SVW_MAX_REPLY,
		    "reply length from its frame");
		FUZZ_CHECK(rlen == 0 || memcmp(reply, ebody, rlen) == 0,
		    "reply bytes from its frame");
		{
			svw_env *env = NULL;
			uint64_t rid;
			/* As client.c reads every reply. */
			if (svw_decode(reply, rlen, SVW_MAX_REPLY, &env, &rid)
			    == SV_OK) {
				svw_free(env);
			}
		}
		free(reply);
		break;
	case SV_ECLOSED:
	case SV_EPROTO:
	case SV_ETOOLARGE:
		FUZZ_CHECK(!found, "the reply frame was complete");
		FUZZ_CHECK(c.fd < 0, "connection closed after the error");
		FUZZ_CHECK(c.detail[0] != '\0', "the error says why");
		break;
	default:
		FUZZ_CHECK(false, "an undocumented result (or a wait)");
	}
	if (c.fd >= 0) {
		close(c.fd);
	}
	close(sv[1]);
	return 0;
}
