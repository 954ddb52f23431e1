/*
 * test_whoami_copy.c — sv_client_whoami_copy (client.h) against a fake
 * supervisor.
 *
 * The fake supervisor is an nng REP socket served by one thread, on an ipc
 * socket in a mkdtemp() directory. It answers every WhoAmI with the
 * Identity (or the typed Error) the test has set, so a test can give the
 * client answers a real supervisor never sends: 70 frames, text beyond the
 * struct's capacity, an answer that changes between two calls. Each case
 * compares the copy with what sv_client_whoami's accessors read from the
 * same answer.
 *
 * Every wait is bounded: the server thread receives with a 50 ms timeout
 * and checks its stop flag, and client calls take a 5 s deadline.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>

#include "supervise/client.h"
#include "wire/wire.h"
#include "sv_tmpdir.h"

#define WC_CALL_MS   5000
#define WC_RECV_MS   50
#define WC_MAX_FRAME 70

/* The fake supervisor and the answer it gives. */
struct fake {
	char                    dir[64];
	char                    url[128];
	nng_socket              sock;
	pthread_t               thr;
	atomic_int              stop;
	pthread_mutex_t         mtx;
	Supervise__V1__Identity id; /* the answer, guarded by mtx */
	Supervise__V1__Frame    frames[WC_MAX_FRAME];
	Supervise__V1__Frame   *framep[WC_MAX_FRAME];
	Supervise__V1__Frame    parent;
	int                     error; /* != 0: answer Error{code} instead */
};

/* fk_reply packs the answer to the request req into an nng message. */
static int
fk_reply(struct fake *f, const svw_env *req, nng_msg **msgp)
{
	svw_env              r = SUPERVISE__V1__ENVELOPE__INIT;
	Supervise__V1__Error e = SUPERVISE__V1__ERROR__INIT;
	size_t               n;

	r.version    = SV_PROTOCOL_VERSION;
	r.request_id = req->request_id;
	pthread_mutex_lock(&f->mtx);
	if (f->error != 0) {
		e.code      = f->error;
		e.message   = "not a worker (fake)";
		r.body_case = SUPERVISE__V1__ENVELOPE__BODY_ERROR;
		r.error     = &e;
	} else {
		r.body_case = SUPERVISE__V1__ENVELOPE__BODY_IDENTITY;
		r.identity  = &f->id;
	}
	n = supervise__v1__envelope__get_packed_size(&r);
	if (nng_msg_alloc(msgp, n) != 0) {
		pthread_mutex_unlock(&f->mtx);
		return -1;
	}
	supervise__v1__envelope__pack(&r, nng_msg_body(*msgp));
	pthread_mutex_unlock(&f->mtx);
	return 0;
}

/* fk_main answers requests until stop. */
static void *
fk_main(void *arg)
{
	struct fake *f = arg;

	while (!atomic_load(&f->stop)) {
		nng_msg *in = NULL, *out = NULL;
		svw_env *req = NULL;
		uint64_t rid;

		if (nng_recvmsg(f->sock, &in, 0) != 0) {
			continue; /* NNG_ETIMEDOUT: check stop */
		}
		if (svw_decode(nng_msg_body(in), nng_msg_len(in),
		        SVW_MAX_REQUEST, &req, &rid)
		        == SV_OK
		    && fk_reply(f, req, &out) == 0
		    && nng_sendmsg(f->sock, out, 0) != 0) {
			nng_msg_free(out);
		}
		svw_free(req);
		nng_msg_free(in);
	}
	return NULL;
}

/* fk_frame sets frame i (or the parent, i < 0) of the answer. */
static void
fk_frame(struct fake *f, int i, int kind, uint32_t ordinal, char *name,
    uint64_t generation)
{
	Supervise__V1__Frame *fr = i < 0 ? &f->parent : &f->frames[i];

	supervise__v1__frame__init(fr);
	fr->kind       = (Supervise__V1__WorkerKind) kind;
	fr->ordinal    = ordinal;
	fr->name       = name;
	fr->generation = generation;
	if (i >= 0) {
		f->framep[i] = fr;
	}
}

/* fk_start starts a fake whose answer is a sub-worker: two frames and a
 * parent. */
static struct fake *
fk_start(void)
{
	struct fake *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(sv_tmpdir(f->dir, sizeof(f->dir), "sv-wc"), 0);
	snprintf(f->url, sizeof(f->url), "ipc://%s/control.sock", f->dir);
	pthread_mutex_init(&f->mtx, NULL);
	supervise__v1__identity__init(&f->id);
	f->id.group         = "web";
	f->id.ordinal       = 3;
	f->id.generation    = 7;
	f->id.kind          = SUPERVISE__V1__WORKER_KIND__WORKER_KIND_THREAD;
	f->id.pid           = 4242;
	f->id.purpose       = "serve the tests";
	f->id.supervisor_id = "fake-supervisor";
	f->id.group_size    = 5;
	f->id.draining      = 1;
	f->id.drain_deadline_in_ms = 1500;
	fk_frame(f, 0, SV_KIND_PROCESS, 3, "web", 7);
	fk_frame(f, 1, SV_KIND_THREAD, 0, "pool-0", 2);
	fk_frame(f, -1, SV_KIND_PROCESS, 3, "web", 7);
	f->id.n_context = 2;
	f->id.context   = f->framep;
	f->id.parent    = &f->parent;
	assert_int_equal(nng_rep0_open(&f->sock), 0);
	assert_int_equal(
	    nng_socket_set_ms(f->sock, NNG_OPT_RECVTIMEO, WC_RECV_MS), 0);
	assert_int_equal(nng_listen(f->sock, f->url, NULL, 0), 0);
	assert_int_equal(pthread_create(&f->thr, NULL, fk_main, f), 0);
	return f;
}

/* fk_stop ends the thread and removes the directory. */
static void
fk_stop(struct fake *f)
{
	char path[160];

	atomic_store(&f->stop, 1);
	pthread_join(f->thr, NULL);
	nng_close(f->sock);
	snprintf(path, sizeof(path), "%s/control.sock", f->dir);
	unlink(path);
	rmdir(f->dir);
	pthread_mutex_destroy(&f->mtx);
	free(f);
}

/* new_result returns a zeroed result with its size set. */
static sv_whoami_result *
new_result(void)
{
	sv_whoami_result *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	r->size = sizeof(*r);
	return r;
}

/* points_inside tells whether s lies in r's text area. */
static int
points_inside(const sv_whoami_result *r, const char *s)
{
	return s >= r->text && s < r->text + sizeof(r->text);
}

/* assert_frame_eq checks a copied frame against the handle's frame i
 * (i == SIZE_MAX: the parent). */
static void
assert_frame_eq(const sv_whoami_result *r, const sv_frame_fields *got,
    const sv_identity *id, size_t i)
{
	sv_kind     kind    = SV_KIND_UNSPECIFIED;
	uint32_t    ordinal = 0;
	const char *name    = NULL;
	uint64_t    gen     = 0;

	if (i == SIZE_MAX) {
		assert_int_equal(
		    sv_identity_parent(id, &kind, &ordinal, &name), SV_OK);
	} else {
		assert_int_equal(
		    sv_identity_frame(id, i, &kind, &ordinal, &name), SV_OK);
		assert_int_equal(
		    sv_identity_frame_generation(id, i, &gen), SV_OK);
		assert_int_equal(got->generation, gen);
	}
	assert_int_equal(got->kind, kind);
	assert_int_equal(got->ordinal, ordinal);
	assert_string_equal(got->name, name);
	assert_true(points_inside(r, got->name));
}

/* assert_same_as_handle compares r with sv_client_whoami's answer. */
static void
assert_same_as_handle(sv_client *c, const sv_whoami_result *r)
{
	sv_identity       *id = NULL;
	sv_identity_fields f  = {.size = sizeof(f)};
	size_t             n;

	assert_int_equal(sv_client_whoami(c, WC_CALL_MS, &id), SV_OK);
	assert_int_equal(sv_identity_get_fields(id, &f), SV_OK);
	assert_string_equal(r->fields.group, f.group);
	assert_string_equal(r->fields.purpose, f.purpose);
	assert_string_equal(r->fields.supervisor_id, f.supervisor_id);
	assert_true(points_inside(r, r->fields.group));
	assert_true(points_inside(r, r->fields.purpose));
	assert_true(points_inside(r, r->fields.supervisor_id));
	assert_int_equal(r->fields.size, sizeof(sv_identity_fields));
	assert_int_equal(r->fields.pid, f.pid);
	assert_int_equal(r->fields.generation, f.generation);
	assert_int_equal(
	    r->fields.drain_deadline_in_ms, f.drain_deadline_in_ms);
	assert_int_equal(r->fields.frame_count, f.frame_count);
	assert_int_equal(r->fields.ordinal, f.ordinal);
	assert_int_equal(r->fields.group_size, f.group_size);
	assert_int_equal(r->fields.kind, f.kind);
	assert_int_equal(r->fields.draining, f.draining);
	n = f.frame_count < SV_WHOAMI_MAX_FRAMES ? (size_t) f.frame_count
	                                         : SV_WHOAMI_MAX_FRAMES;
	assert_int_equal(r->n_frames, n);
	for (size_t i = 0; i < n; i++) {
		assert_frame_eq(r, &r->frames[i], id, i);
	}
	assert_int_equal(
	    r->has_parent, sv_identity_parent(id, NULL, NULL, NULL) == SV_OK);
	if (r->has_parent) {
		assert_frame_eq(r, &r->parent, id, SIZE_MAX);
	}
	sv_identity_free(id);
}

/* open_client connects to f. */
static sv_client *
open_client(struct fake *f)
{
	sv_client *c = NULL;

	assert_int_equal(sv_client_open(&c, f->url, WC_CALL_MS), SV_OK);
	return c;
}

/* Every field of a sub-worker's answer, then unchanged / changed. */
static void
test_copy_equals_handle_and_unchanged(void **state)
{
	struct fake      *f = fk_start();
	sv_client        *c = open_client(f);
	sv_whoami_result *r = new_result();

	(void) state;
	assert_int_equal(sv_client_whoami_copy(c, WC_CALL_MS, r), SV_OK);
	assert_int_equal(r->unchanged, 0);
	assert_string_equal(r->fields.group, "web");
	assert_int_equal(r->fields.frame_count, 2);
	assert_string_equal(r->frames[1].name, "pool-0");
	assert_int_equal(r->frames[1].generation, 2);
	assert_same_as_handle(c, r);

	/* The same answer again: unchanged, every field as before. */
	assert_int_equal(sv_client_whoami_copy(c, WC_CALL_MS, r), SV_OK);
	assert_int_equal(r->unchanged, 1);
	assert_same_as_handle(c, r);

	/* One scalar changes, then one string (same length), then a frame. */
	pthread_mutex_lock(&f->mtx);
	f->id.group_size = 6;
	pthread_mutex_unlock(&f->mtx);
	assert_int_equal(sv_client_whoami_copy(c, WC_CALL_MS, r), SV_OK);
	assert_int_equal(r->unchanged, 0);
	assert_int_equal(r->fields.group_size, 6);
	pthread_mutex_lock(&f->mtx);
	f->id.purpose = "serve the TESTS";
	pthread_mutex_unlock(&f->mtx);
	assert_int_equal(sv_client_whoami_copy(c, WC_CALL_MS, r), SV_OK);
	assert_int_equal(r->unchanged, 0);
	assert_string_equal(r->fields.purpose, "serve the TESTS");
	pthread_mutex_lock(&f->mtx);
	f->frames[1].generation = 3;
	pthread_mutex_unlock(&f->mtx);
	assert_int_equal(sv_client_whoami_copy(c, WC_CALL_MS, r), SV_OK);
	assert_int_equal(r->unchanged, 0);
	assert_int_equal(r->frames[1].generation, 3);
	assert_same_as_handle(c, r);
	assert_int_equal(sv_client_whoami_copy(c, WC_CALL_MS, r), SV_OK);
	assert_int_equal(r->unchanged, 1);

	/* A top-level process: no parent, one frame. */
	pthread_mutex_lock(&f->mtx);
	f->id.parent    = NULL;
	f->id.n_context = 1;
	pthread_mutex_unlock(&f->mtx);
	assert_int_equal(sv_client_whoami_copy(c, WC_CALL_MS, r), SV_OK);
	assert_int_equal(r->unchanged, 0);
	assert_int_equal(r->has_parent, 0);
	assert_int_equal(r->n_frames, 1);
	assert_same_as_handle(c, r);
	free(r);
	sv_client_close(c);
	fk_stop(f);
}

/* More frames than the struct holds: the first SV_WHOAMI_MAX_FRAMES. */
static void
test_frames_bounded(void **state)
{
	struct fake      *f = fk_start();
	sv_client        *c = open_client(f);
	sv_whoami_result *r = new_result();
	static char       names[WC_MAX_FRAME][16];

	(void) state;
	for (int i = 0; i < WC_MAX_FRAME; i++) {
		snprintf(names[i], sizeof(names[i]), "level-%d", i);
		fk_frame(f, i, SV_KIND_PROCESS, (uint32_t) i, names[i],
		    (uint64_t) i * 10);
	}
	f->id.n_context = WC_MAX_FRAME;
	assert_int_equal(sv_client_whoami_copy(c, WC_CALL_MS, r), SV_OK);
	assert_int_equal(r->fields.frame_count, WC_MAX_FRAME);
	assert_int_equal(r->n_frames, SV_WHOAMI_MAX_FRAMES);
	assert_string_equal(
	    r->frames[SV_WHOAMI_MAX_FRAMES - 1].name, "level-63");
	assert_same_as_handle(c, r);
	free(r);
	sv_client_close(c);
	fk_stop(f);
}

/* Errors leave *out untouched: text beyond the capacity, a typed error,
 * bad arguments. */
static void
test_errors_leave_out_untouched(void **state)
{
	struct fake      *f    = fk_start();
	sv_client        *c    = open_client(f);
	sv_whoami_result *r    = new_result();
	sv_whoami_result *snap = new_result();
	char             *big  = malloc(SV_WHOAMI_TEXT_BYTES + 1);

	(void) state;
	assert_non_null(big);
	assert_int_equal(sv_client_whoami_copy(c, WC_CALL_MS, r), SV_OK);
	memcpy(snap, r, sizeof(*r));

	memset(big, 'x', SV_WHOAMI_TEXT_BYTES);
	big[SV_WHOAMI_TEXT_BYTES] = '\0';
	pthread_mutex_lock(&f->mtx);
	f->id.purpose = big;
	pthread_mutex_unlock(&f->mtx);
	assert_int_equal(
	    sv_client_whoami_copy(c, WC_CALL_MS, r), SV_ETOOLARGE);
	assert_true(sv_client_error_message(c)[0] != '\0');
	assert_memory_equal(r, snap, sizeof(*r));

	/* Exactly full: the strings take SV_WHOAMI_TEXT_BYTES in all. */
	big[SV_WHOAMI_TEXT_BYTES - (4 + 16 + 4 + 4 + 7) - 1] = '\0';
	assert_int_equal(sv_client_whoami_copy(c, WC_CALL_MS, r), SV_OK);
	assert_int_equal(r->text_used, SV_WHOAMI_TEXT_BYTES);
	assert_same_as_handle(c, r);
	memcpy(snap, r, sizeof(*r));

	pthread_mutex_lock(&f->mtx);
	f->error = SUPERVISE__V1__ERROR_CODE__ERROR_CODE_NOT_A_WORKER;
	pthread_mutex_unlock(&f->mtx);
	assert_int_equal(
	    sv_client_whoami_copy(c, WC_CALL_MS, r), SV_ENOTWORKER);
	assert_memory_equal(r, snap, sizeof(*r));

	r->size = sizeof(*r) - 1;
	assert_int_equal(sv_client_whoami_copy(c, WC_CALL_MS, r), SV_EINVAL);
	r->size = sizeof(*r);
	assert_int_equal(
	    sv_client_whoami_copy(NULL, WC_CALL_MS, r), SV_EINVAL);
	assert_int_equal(
	    sv_client_whoami_copy(c, WC_CALL_MS, NULL), SV_EINVAL);
	assert_memory_equal(r, snap, sizeof(*r));
	free(big);
	free(snap);
	free(r);
	sv_client_close(c);
	fk_stop(f);
}

/*
 * sv_client_error_detail on a handle: the supervisor's message after a
 * typed error, cut to a small buffer, "" after a success.
 */
static void
test_error_detail_copies(void **state)
{
	struct fake      *f = fk_start();
	sv_client        *c = open_client(f);
	sv_whoami_result *r = new_result();
	char              buf[SV_ERROR_DETAIL_SIZE];
	char              small[7];

	(void) state;
	pthread_mutex_lock(&f->mtx);
	f->error = SUPERVISE__V1__ERROR_CODE__ERROR_CODE_NOT_A_WORKER;
	pthread_mutex_unlock(&f->mtx);
	assert_int_equal(
	    sv_client_whoami_copy(c, WC_CALL_MS, r), SV_ENOTWORKER);
	assert_int_equal(sv_client_error_detail(c, buf, sizeof(buf)), SV_OK);
	assert_string_equal(buf, "not a worker (fake)");
	assert_int_equal(
	    sv_client_error_detail(c, small, sizeof(small)), SV_ETOOLARGE);
	assert_string_equal(small, "not a ");
	assert_int_equal(sv_client_error_detail(c, NULL, 8), SV_EINVAL);

	pthread_mutex_lock(&f->mtx);
	f->error = 0;
	pthread_mutex_unlock(&f->mtx);
	assert_int_equal(sv_client_whoami_copy(c, WC_CALL_MS, r), SV_OK);
	assert_int_equal(sv_client_error_detail(c, buf, sizeof(buf)), SV_OK);
	assert_string_equal(buf, "");
	free(r);
	sv_client_close(c);
	fk_stop(f);
}

/* The two details the sharing test alternates between. */
#define WC_BAD_GROUP "group name must be 1..64 characters of [A-Za-z0-9_.-]"
#define WC_ROUNDS    300

/* Set by wc_caller when it has made its last call. */
static atomic_int wc_done;

/* wc_caller makes failing calls on the shared handle: a typed error from
 * the fake (its message) and a bad group name (a local detail). */
static void *
wc_caller(void *arg)
{
	sv_client  *c   = arg;
	sv_workers *w   = NULL;
	void       *ret = NULL;

	for (int i = 0; i < WC_ROUNDS && ret == NULL; i++) {
		sv_identity *id = NULL;
		if (sv_client_whoami(c, WC_CALL_MS, &id) != SV_ENOTWORKER
		    || sv_client_list(c, "bad name!", WC_CALL_MS, &w)
		        != SV_EINVAL) {
			ret = (void *) 1;
		}
	}
	atomic_store(&wc_done, 1);
	return ret;
}

/*
 * A handle shared by two threads: while one makes calls that rewrite the
 * detail, the other's copies are always one whole message, never a mix.
 */
static void
test_error_detail_shared_handle(void **state)
{
	struct fake *f = fk_start();
	sv_client   *c = open_client(f);
	pthread_t    t;
	void        *bad = (void *) 2;
	char         buf[SV_ERROR_DETAIL_SIZE];
	unsigned     copies = 0;

	(void) state;
	pthread_mutex_lock(&f->mtx);
	f->error = SUPERVISE__V1__ERROR_CODE__ERROR_CODE_NOT_A_WORKER;
	pthread_mutex_unlock(&f->mtx);
	atomic_store(&wc_done, 0);
	assert_int_equal(pthread_create(&t, NULL, wc_caller, c), 0);
	/* Copy until the caller is done; every copy is one whole message. */
	while (!atomic_load(&wc_done)) {
		assert_int_equal(
		    sv_client_error_detail(c, buf, sizeof(buf)), SV_OK);
		if (strcmp(buf, "") != 0 && strcmp(buf, WC_BAD_GROUP) != 0) {
			assert_string_equal(buf, "not a worker (fake)");
		}
		copies++;
	}
	assert_int_equal(pthread_join(t, &bad), 0);
	assert_null(bad);
	assert_true(copies > 0);
	/* The caller's last call was the bad group name. */
	assert_int_equal(sv_client_error_detail(c, buf, sizeof(buf)), SV_OK);
	assert_string_equal(buf, WC_BAD_GROUP);
	sv_client_close(c);
	fk_stop(f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_copy_equals_handle_and_unchanged),
	    cmocka_unit_test(test_frames_bounded),
	    cmocka_unit_test(test_errors_leave_out_untouched),
	    cmocka_unit_test(test_error_detail_copies),
	    cmocka_unit_test(test_error_detail_shared_handle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
