/*
 * test_activity.c — activity regions: the writer (client/activity.c,
 * supervise/activity.h) and the pure reader (core/activity_view.c).
 *
 * Each test writes a region in a scratch file and reads it back the way
 * the supervisor will: through its own read-only mapping of the file and
 * sv_activity_view_read. Tests: nesting and composition ("outer: inner",
 * innermost enclosing name wins, fan-out shares it); thread stacks in
 * several pthreads and slots given back at thread exit; slot exhaustion;
 * depth and name bounds; the disabled flag; a reader beside a writer thread
 * that changes its slot continuously (no torn name is ever shown); garbage,
 * hostile and truncated regions; fork() (the child is refused the parent's
 * region and can use its own); open errors; the one-line format.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/activity_format.h"
#include "core/activity_view.h"
#include "supervise/activity.h"
#include "sv_tmpdir.h"

/* ---- helpers -------------------------------------------------------------
 */

typedef struct fixture {
	char                path[64];
	sv_activity_region *r;
	void               *ro; /* the "supervisor's" read-only mapping */
} fixture;

static uint64_t
now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* mkregion_file creates an empty scratch file, as the daemon prepares a
 * lease resource. */
static void
mkregion_file(char *path, size_t len)
{
	int fd;
	assert_int_equal(sv_tmp_template(path, len, "sv-test-activity"), 0);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
}

static void *
map_ro(const char *path)
{
	int   fd = open(path, O_RDONLY | O_CLOEXEC);
	void *p;
	assert_true(fd >= 0);
	p = mmap(NULL, SV_ACTIVITY_REGION_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	assert_true(p != MAP_FAILED);
	return p;
}

static int
setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	mkregion_file(f->path, sizeof(f->path));
	assert_int_equal(sv_activity_region_open(&f->r, f->path), SV_OK);
	f->ro  = map_ro(f->path);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	fixture *f = *state;
	sv_activity_region_close(f->r);
	munmap(f->ro, SV_ACTIVITY_REGION_SIZE);
	unlink(f->path);
	free(f);
	return 0;
}

static sv_activity_view
view_at(const fixture *f, uint64_t now)
{
	sv_activity_view v;
	assert_int_equal(
	    sv_activity_view_read(f->ro, SV_ACTIVITY_REGION_SIZE, now, &v),
	    SV_OK);
	return v;
}

static sv_activity_view
view(const fixture *f)
{
	return view_at(f, now_ns());
}

/* ---- nesting and composition ---------------------------------------------
 */

static void
test_nesting(void **state)
{
	fixture         *f = *state;
	sv_activity_view v;
	uint64_t         t0 = now_ns();
	uint32_t         d;

	v = view(f);
	assert_int_equal(v.state, SV_ACTIVITY_IDLE);
	assert_int_equal(v.activities, 0);
	assert_string_equal(v.oldest_name, "");
	assert_int_equal(v.pid, (uint32_t) getpid());

	assert_int_equal(sv_activity_enter(f->r, "request"), SV_OK);
	v = view(f);
	assert_int_equal(v.state, SV_ACTIVITY_BUSY);
	assert_int_equal(v.activities, 1);
	assert_int_equal(v.scopes, 1);
	assert_int_equal(v.threads, 1);
	assert_string_equal(v.oldest_name, "request");

	assert_int_equal(sv_activity_enter(f->r, "db query"), SV_OK);
	v = view(f);
	assert_int_equal(v.activities, 1);
	assert_int_equal(v.scopes, 2);
	assert_string_equal(v.oldest_name, "request: db query");

	/* Innermost enclosing name wins: no "request: db query: parse". */
	assert_int_equal(sv_activity_enter(f->r, "parse"), SV_OK);
	v = view(f);
	assert_int_equal(v.scopes, 3);
	assert_int_equal(v.oldest_depth, 3);
	assert_string_equal(v.oldest_name, "db query: parse");
	assert_int_equal(sv_activity_depth(f->r, &d), SV_OK);
	assert_int_equal(d, 3);

	/* Leaving restores the outer composition. */
	assert_int_equal(sv_activity_leave(f->r), SV_OK);
	v = view(f);
	assert_string_equal(v.oldest_name, "request: db query");
	assert_int_equal(sv_activity_leave(f->r), SV_OK);
	assert_string_equal(view(f).oldest_name, "request");

	/* Fan-out: successive scopes under one outer share its name. */
	assert_int_equal(sv_activity_enter(f->r, "cache"), SV_OK);
	assert_string_equal(view(f).oldest_name, "request: cache");
	assert_int_equal(sv_activity_leave(f->r), SV_OK);
	assert_int_equal(sv_activity_enter(f->r, "render"), SV_OK);
	v = view_at(f, now_ns() + 2500000000ull);
	assert_string_equal(v.oldest_name, "request: render");
	/* The age is the innermost scope's, as seen at the given time. */
	assert_true(v.oldest_age_ns >= 2500000000ull);
	assert_true(v.oldest_age_ns < now_ns() - t0 + 2500000000ull);
	/* A time before the stamp gives age 0, not a huge number. */
	assert_int_equal(view_at(f, 1).oldest_age_ns, 0);
	assert_int_equal(sv_activity_leave(f->r), SV_OK);
	assert_int_equal(sv_activity_leave(f->r), SV_OK);

	v = view(f);
	assert_int_equal(v.state, SV_ACTIVITY_IDLE);
	assert_int_equal(v.activities, 0);
	assert_int_equal(v.scopes, 0);
	assert_int_equal(v.oldest_age_ns, 0);
	assert_string_equal(v.oldest_name, "");
	/* One leave too many. */
	assert_int_equal(sv_activity_leave(f->r), SV_EINVAL);
	assert_int_equal(sv_activity_depth(f->r, &d), SV_OK);
	assert_int_equal(d, 0);
}

/* ---- thread stacks -------------------------------------------------------
 */

typedef struct tctx {
	sv_activity_region *r;
	pthread_barrier_t  *entered, *release;
	int                 k;
	sv_err              rv; /* of the first enter */
} tctx;

static void *
worker(void *arg)
{
	tctx *c = arg;
	char  name[32];

	c->rv = sv_activity_enter(c->r, "worker");
	if (c->rv == SV_OK) {
		snprintf(name, sizeof(name), "step %d", c->k);
		if (sv_activity_enter(c->r, name) != SV_OK) {
			c->rv = SV_EINTERNAL;
		}
	}
	pthread_barrier_wait(c->entered);
	pthread_barrier_wait(c->release);
	if (c->rv == SV_OK) {
		if (sv_activity_leave(c->r) != SV_OK
		    || sv_activity_leave(c->r) != SV_OK) {
			c->rv = SV_EINTERNAL;
		}
	}
	return NULL;
}

static void
test_threads(void **state)
{
	enum { N = 8 };
	fixture          *f = *state;
	pthread_t         th[N];
	tctx              c[N];
	pthread_barrier_t entered, release;
	sv_activity_view  v;

	pthread_barrier_init(&entered, NULL, N + 1);
	pthread_barrier_init(&release, NULL, N + 1);
	/* The main thread's scope is entered first, so it is the oldest. */
	assert_int_equal(sv_activity_enter(f->r, "main"), SV_OK);
	for (int i = 0; i < N; i++) {
		c[i] = (tctx) {f->r, &entered, &release, i, SV_OK};
		assert_int_equal(
		    pthread_create(&th[i], NULL, worker, &c[i]), 0);
	}
	pthread_barrier_wait(&entered);
	for (int i = 0; i < N; i++) {
		assert_int_equal(c[i].rv, SV_OK);
	}
	v = view(f);
	assert_int_equal(v.state, SV_ACTIVITY_BUSY);
	assert_int_equal(v.activities, N + 1);
	assert_int_equal(v.scopes, 2 * N + 1);
	assert_int_equal(v.threads, N + 1);
	assert_int_equal(v.unreadable, 0);
	assert_string_equal(v.oldest_name, "main");

	/* Without main's scope the oldest is one of the workers' innermost. */
	assert_int_equal(sv_activity_leave(f->r), SV_OK);
	v = view(f);
	assert_int_equal(v.activities, N);
	assert_int_equal(v.scopes, 2 * N);
	assert_memory_equal(v.oldest_name, "worker: step ", 13);
	assert_true(
	    atoi(v.oldest_name + 13) >= 0 && atoi(v.oldest_name + 13) < N);

	pthread_barrier_wait(&release);
	for (int i = 0; i < N; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(c[i].rv, SV_OK);
	}
	/* The exited threads gave their slots back; main keeps its own. */
	v = view(f);
	assert_int_equal(v.state, SV_ACTIVITY_IDLE);
	assert_int_equal(v.threads, 1);
	pthread_barrier_destroy(&entered);
	pthread_barrier_destroy(&release);
}

/* SV_ACTIVITY_MAX_THREADS threads hold slots; one more is refused until
 * one of them exits. */
static void
test_slot_exhaustion(void **state)
{
	enum { N = SV_ACTIVITY_MAX_THREADS };
	fixture          *f = *state;
	pthread_t         th[N + 1];
	tctx              c[N + 1];
	pthread_barrier_t entered, release, e2, r2;

	pthread_barrier_init(&entered, NULL, N + 1);
	pthread_barrier_init(&release, NULL, N + 1);
	for (int i = 0; i < N; i++) {
		c[i] = (tctx) {f->r, &entered, &release, i, SV_OK};
		assert_int_equal(
		    pthread_create(&th[i], NULL, worker, &c[i]), 0);
	}
	pthread_barrier_wait(&entered);
	for (int i = 0; i < N; i++) {
		assert_int_equal(c[i].rv, SV_OK);
	}
	assert_int_equal(view(f).threads, N);
	/* The main thread is thread N + 1. */
	assert_int_equal(sv_activity_enter(f->r, "main"), SV_EEXHAUSTED);
	pthread_barrier_wait(&release);
	for (int i = 0; i < N; i++) {
		pthread_join(th[i], NULL);
	}
	assert_int_equal(view(f).threads, 0);

	/* Slots freed by exited threads are reused. */
	pthread_barrier_init(&e2, NULL, 2);
	pthread_barrier_init(&r2, NULL, 2);
	c[N] = (tctx) {f->r, &e2, &r2, N, SV_OK};
	assert_int_equal(pthread_create(&th[N], NULL, worker, &c[N]), 0);
	pthread_barrier_wait(&e2);
	assert_int_equal(c[N].rv, SV_OK);
	assert_int_equal(view(f).activities, 1);
	pthread_barrier_wait(&r2);
	pthread_join(th[N], NULL);
	assert_int_equal(sv_activity_enter(f->r, "main"), SV_OK);
	assert_int_equal(sv_activity_leave(f->r), SV_OK);
	pthread_barrier_destroy(&entered);
	pthread_barrier_destroy(&release);
	pthread_barrier_destroy(&e2);
	pthread_barrier_destroy(&r2);
}

/* ---- bounds --------------------------------------------------------------
 */

static void
test_depth_bounds(void **state)
{
	fixture         *f = *state;
	sv_activity_view v;
	char             name[16];
	uint32_t         d;

	for (int i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "l%d", i);
		assert_int_equal(sv_activity_enter(f->r, name), SV_OK);
	}
	v = view(f);
	assert_int_equal(v.scopes, 20);
	assert_int_equal(v.activities, 1);
	assert_int_equal(v.oldest_depth, 20);
	/* Levels past SV_ACTIVITY_MAX_NAMED are counted, not named. */
	assert_string_equal(v.oldest_name, "l14: l15");
	for (int i = 20; i < (int) SV_ACTIVITY_MAX_DEPTH; i++) {
		assert_int_equal(sv_activity_enter(f->r, "deep"), SV_OK);
	}
	assert_int_equal(sv_activity_enter(f->r, "deep"), SV_ETOOLARGE);
	assert_int_equal(sv_activity_depth(f->r, &d), SV_OK);
	assert_int_equal(d, SV_ACTIVITY_MAX_DEPTH);
	assert_int_equal(view(f).scopes, SV_ACTIVITY_MAX_DEPTH);
	for (int i = 0; i < (int) SV_ACTIVITY_MAX_DEPTH - 16; i++) {
		assert_int_equal(sv_activity_leave(f->r), SV_OK);
	}
	assert_string_equal(view(f).oldest_name, "l14: l15");
	for (int i = 0; i < 15; i++) {
		assert_int_equal(sv_activity_leave(f->r), SV_OK);
	}
	assert_string_equal(view(f).oldest_name, "l0");
	assert_int_equal(sv_activity_leave(f->r), SV_OK);
	assert_int_equal(view(f).state, SV_ACTIVITY_IDLE);
}

static void
test_names(void **state)
{
	fixture    *f = *state;
	char        lng[80], want[80];
	const char *e = "\xc3\xa9"; /* U+00E9, two bytes */

	assert_int_equal(sv_activity_enter(f->r, ""), SV_EINVAL);
	assert_int_equal(sv_activity_enter(f->r, NULL), SV_EINVAL);
	assert_int_equal(sv_activity_enter(NULL, "x"), SV_EINVAL);
	assert_int_equal(sv_activity_leave(NULL), SV_EINVAL);

	/* A long ASCII name is cut to SV_ACTIVITY_NAME_MAX bytes. */
	memset(lng, 'a', 60);
	lng[60] = '\0';
	assert_int_equal(sv_activity_enter(f->r, lng), SV_OK);
	memset(want, 'a', SV_ACTIVITY_NAME_MAX);
	want[SV_ACTIVITY_NAME_MAX] = '\0';
	assert_string_equal(view(f).oldest_name, want);
	assert_int_equal(sv_activity_leave(f->r), SV_OK);

	/* A two-byte character across the cut is dropped whole. */
	memset(lng, 'b', 46);
	memcpy(lng + 46, e, 2);
	strcpy(lng + 48, "tail");
	assert_int_equal(sv_activity_enter(f->r, lng), SV_OK);
	memset(want, 'b', 46);
	want[46] = '\0';
	assert_string_equal(view(f).oldest_name, want);
	assert_int_equal(sv_activity_leave(f->r), SV_OK);
	/* ... and kept whole when it fits. */
	memset(lng, 'c', 45);
	memcpy(lng + 45, e, 2);
	strcpy(lng + 47, "tail");
	assert_int_equal(sv_activity_enter(f->r, lng), SV_OK);
	memset(want, 'c', 45);
	memcpy(want + 45, e, 2);
	want[47] = '\0';
	assert_string_equal(view(f).oldest_name, want);
	assert_int_equal(sv_activity_leave(f->r), SV_OK);

	/* Terminal escapes and C1 controls are not passed to a display. */
	assert_int_equal(sv_activity_enter(f->r, "\x1b[31mred\x7f"), SV_OK);
	assert_string_equal(view(f).oldest_name, "?[31mred?");
	assert_int_equal(sv_activity_leave(f->r), SV_OK);
	assert_int_equal(sv_activity_enter(f->r,
	                     "a\xc2\x9b"
	                     "b\xff"),
	    SV_OK);
	assert_string_equal(view(f).oldest_name, "a??b?");
	assert_int_equal(sv_activity_leave(f->r), SV_OK);
}

/* ---- disable -------------------------------------------------------------
 */

static void
test_disable(void **state)
{
	fixture *f = *state;
	uint32_t d;

	assert_int_equal(sv_activity_disable(NULL, 1), SV_EINVAL);
	assert_int_equal(sv_activity_disable(f->r, 1), SV_OK);
	assert_int_equal(view(f).state, SV_ACTIVITY_DISABLED);
	/* A stack opened while disabled is counted, not recorded, even
	 * after recording is turned back on. */
	assert_int_equal(sv_activity_enter(f->r, "hidden"), SV_OK);
	assert_int_equal(sv_activity_disable(f->r, 0), SV_OK);
	assert_int_equal(sv_activity_enter(f->r, "hidden too"), SV_OK);
	assert_int_equal(sv_activity_depth(f->r, &d), SV_OK);
	assert_int_equal(d, 2);
	assert_int_equal(view(f).state, SV_ACTIVITY_IDLE);
	assert_int_equal(sv_activity_leave(f->r), SV_OK);
	assert_int_equal(sv_activity_leave(f->r), SV_OK);
	assert_int_equal(sv_activity_leave(f->r), SV_EINVAL);

	/* A stack opened while enabled keeps being recorded; the reader
	 * shows nothing while the flag is set. */
	assert_int_equal(sv_activity_enter(f->r, "seen"), SV_OK);
	assert_int_equal(sv_activity_disable(f->r, 1), SV_OK);
	assert_int_equal(view(f).state, SV_ACTIVITY_DISABLED);
	assert_string_equal(view(f).oldest_name, "");
	assert_int_equal(sv_activity_enter(f->r, "inner"), SV_OK);
	assert_int_equal(sv_activity_disable(f->r, 0), SV_OK);
	assert_string_equal(view(f).oldest_name, "seen: inner");
	assert_int_equal(sv_activity_leave(f->r), SV_OK);
	assert_int_equal(sv_activity_leave(f->r), SV_OK);
	assert_int_equal(view(f).state, SV_ACTIVITY_IDLE);
}

/* ---- a reader beside a busy writer --------------------------------------
 */

typedef struct hammer {
	sv_activity_region *r;
	atomic_int          stop;
	atomic_long         rounds;
	sv_err              rv;
} hammer;

/* The writer enters "outer" and, inside it, inner names made of one
 * letter repeated a letter-dependent number of times, so any mix of two
 * writes shows as a name of mixed letters or of the wrong length. Every
 * 16th round it leaves "outer" too, so depth crosses 0. */
static void *
hammer_main(void *arg)
{
	hammer *h = arg;
	char    name[SV_ACTIVITY_NAME_MAX + 1];
	long    i;

	for (i = 0; !atomic_load(&h->stop); i++) {
		int k = (int) (i % 26), len = 10 + k;
		if (i % 16 == 0 && sv_activity_enter(h->r, "outer") != SV_OK) {
			h->rv = SV_EINTERNAL;
			break;
		}
		memset(name, 'a' + k, (size_t) len);
		name[len] = '\0';
		if (sv_activity_enter(h->r, name) != SV_OK) {
			h->rv = SV_EINTERNAL;
			break;
		}
		/* Odd rounds hold the inner scope a little, so that readers
		 * see it often; even rounds change the slot back to back. */
		for (volatile int spin = 0; spin < (i % 2) * 200; spin++) {
		}
		if (sv_activity_leave(h->r) != SV_OK) {
			h->rv = SV_EINTERNAL;
			break;
		}
		if (i % 16 == 15 && sv_activity_leave(h->r) != SV_OK) {
			h->rv = SV_EINTERNAL;
			break;
		}
	}
	atomic_store(&h->rounds, i);
	return NULL;
}

/* hammer_view_ok checks one view taken beside the hammer. It does not
 * assert: a failed assertion would leave the writer thread running. */
static bool
hammer_view_ok(const sv_activity_view *v, long *busy, long *inner)
{
	const char *n;
	size_t      len;

	if (v->state == SV_ACTIVITY_IDLE) {
		return v->scopes == 0 && v->activities == 0
		    && v->oldest_name[0] == '\0';
	}
	if (v->state != SV_ACTIVITY_BUSY || v->activities != 1 || v->scopes > 2
	    || v->oldest_depth != v->scopes) {
		return false;
	}
	(*busy)++;
	if (v->scopes == 1) {
		return strcmp(v->oldest_name, "outer") == 0;
	}
	(*inner)++;
	if (strncmp(v->oldest_name, "outer: ", 7) != 0) {
		return false;
	}
	n   = v->oldest_name + 7;
	len = strlen(n);
	if (n[0] < 'a' || n[0] > 'z' || len != (size_t) (10 + (n[0] - 'a'))) {
		return false;
	}
	for (size_t j = 0; j < len; j++) {
		if (n[j] != n[0]) {
			return false;
		}
	}
	return true;
}

static void
test_concurrent_reader(void **state)
{
	fixture         *f = *state;
	hammer           h = {.r = f->r};
	pthread_t        th;
	uint64_t         end;
	long             reads = 0, busy = 0, inner = 0, unreadable = 0;
	long             bad = 0;
	sv_activity_view first_bad;

	assert_int_equal(pthread_create(&th, NULL, hammer_main, &h), 0);
	end = now_ns() + 700000000ull; /* a bounded time: 0.7 s */
	while (now_ns() < end) {
		sv_activity_view v = view(f);
		if (!hammer_view_ok(&v, &busy, &inner) && bad++ == 0) {
			first_bad = v;
		}
		unreadable += v.unreadable;
		reads++;
	}
	atomic_store(&h.stop, 1);
	pthread_join(th, NULL);
	assert_int_equal(h.rv, SV_OK);
	print_message("      %ld reads, %ld busy, %ld inner, %ld skipped, "
	              "%ld bad; %ld writer rounds\n",
	    reads, busy, inner, unreadable, bad, atomic_load(&h.rounds));
	if (bad > 0) {
		print_message("      first bad view: state %d, %u activities, "
		              "%u scopes, depth %u, name \"%s\"\n",
		    (int) first_bad.state, first_bad.activities,
		    first_bad.scopes, first_bad.oldest_depth,
		    first_bad.oldest_name);
	}
	assert_int_equal(bad, 0);
	/* The checks above ran on real snapshots, not only on skips. */
	assert_true(reads > 100);
	assert_true(inner > 10);
	assert_true(atomic_load(&h.rounds) > 1000);
}

/* ---- garbage, hostile and truncated regions ------------------------------
 */

/* Every name the reader hands out is printable UTF-8 of bounded length. */
static void
check_printable(const sv_activity_view *v)
{
	const unsigned char *s = (const unsigned char *) v->oldest_name;
	size_t               n = strnlen(v->oldest_name, SV_ACT_VIEW_NAME_LEN);

	assert_true(n < SV_ACT_VIEW_NAME_LEN);
	for (size_t i = 0; i < n; i++) {
		assert_true(s[i] >= 0x20 && s[i] != 0x7f);
	}
	if (v->state != SV_ACTIVITY_BUSY) {
		assert_int_equal(n, 0);
	}
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t
rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void
fill_random(void *p, size_t n)
{
	unsigned char *b = p;
	for (size_t i = 0; i < n; i++) {
		b[i] = (unsigned char) rng();
	}
}

/* valid_header writes a version 1 header with plain stores (a test's own
 * buffer, no concurrent access). */
static void
valid_header(sv_act_region_map *m)
{
	m->hdr.magic       = SV_ACT_MAGIC;
	m->hdr.version     = SV_ACT_VERSION;
	m->hdr.header_size = SV_ACT_HEADER_SIZE;
	m->hdr.slots       = SV_ACT_SLOTS;
	m->hdr.levels      = SV_ACT_LEVELS;
	m->hdr.name_size   = SV_ACT_NAME_SIZE;
	m->hdr.slot_size   = SV_ACT_SLOT_SIZE;
	m->hdr.flags       = 0;
}

static void
test_garbage(void **state)
{
	sv_act_region_map *m;
	sv_activity_view   v;
	long               busy = 0;

	(void) state;
	m = aligned_alloc(64, sizeof(*m) + 64);
	assert_non_null(m);

	assert_int_equal(sv_activity_view_read(m, 10, 0, NULL), SV_EINVAL);
	assert_int_equal(sv_activity_view_read(NULL, 10, 0, &v), SV_EINVAL);
	assert_int_equal(sv_activity_view_read(NULL, 0, 0, &v), SV_OK);
	assert_int_equal(v.state, SV_ACTIVITY_INVALID);

	/* Random bytes everywhere: not a region. */
	for (int i = 0; i < 200; i++) {
		fill_random(m, sizeof(*m));
		assert_int_equal(
		    sv_activity_view_read(m, sizeof(*m), rng(), &v), SV_OK);
		assert_int_equal(v.state, SV_ACTIVITY_INVALID);
		check_printable(&v);
	}
	/* A valid header over random slots: anything may be shown, but the
	 * counts stay bounded and the name printable. */
	for (int i = 0; i < 2000; i++) {
		fill_random(m, sizeof(*m));
		valid_header(m);
		if (i % 2 == 0) {
			/* Make plausible slots: even seq, small depth. */
			for (unsigned s = 0; s < SV_ACT_SLOTS; s++) {
				m->slot[s].seq &= ~1u;
				m->slot[s].depth %= 40;
			}
		}
		assert_int_equal(
		    sv_activity_view_read(m, sizeof(*m), rng(), &v), SV_OK);
		assert_true(v.state == SV_ACTIVITY_BUSY
		    || v.state == SV_ACTIVITY_IDLE);
		assert_true(v.activities + v.unreadable <= SV_ACT_SLOTS);
		assert_true(v.scopes <= SV_ACT_SLOTS * SV_ACTIVITY_MAX_DEPTH);
		check_printable(&v);
		busy += v.state == SV_ACTIVITY_BUSY;
	}
	assert_true(busy > 100);

	/* Hostile values: odd seq forever, huge depth. Skipped, no hang. */
	memset(m, 0, sizeof(*m));
	valid_header(m);
	m->slot[0].seq               = 1;
	m->slot[0].depth             = 1;
	m->slot[1].depth             = 0xffffffffu;
	m->slot[2].depth             = 1;
	m->slot[2].entry[0].start_ns = 100;
	memset((void *) m->slot[2].entry[0].name, 0xff,
	    sizeof(m->slot[2].entry[0].name)); /* no NUL, no valid UTF-8 */
	assert_int_equal(sv_activity_view_read(m, sizeof(*m), 50, &v), SV_OK);
	assert_int_equal(v.state, SV_ACTIVITY_BUSY);
	assert_int_equal(v.unreadable, 2);
	assert_int_equal(v.activities, 1);
	assert_int_equal(v.oldest_age_ns, 0); /* stamped after "now" */
	assert_int_equal(strlen(v.oldest_name), SV_ACTIVITY_NAME_MAX);
	check_printable(&v);

	/* Each header field must match version 1. */
	{
		sv_activity_view w;
		m->hdr.slots = SV_ACT_SLOTS + 1;
		sv_activity_view_read(m, sizeof(*m), 0, &w);
		assert_int_equal(w.state, SV_ACTIVITY_INVALID);
		valid_header(m);
		m->hdr.slot_size = SV_ACT_SLOT_SIZE * 2;
		sv_activity_view_read(m, sizeof(*m), 0, &w);
		assert_int_equal(w.state, SV_ACTIVITY_INVALID);
		valid_header(m);
		m->hdr.version = 2;
		sv_activity_view_read(m, sizeof(*m), 0, &w);
		assert_int_equal(w.state, SV_ACTIVITY_INVALID);
		valid_header(m);
		m->hdr.flags = SV_ACT_FLAG_DISABLED;
		sv_activity_view_read(m, sizeof(*m), 0, &w);
		assert_int_equal(w.state, SV_ACTIVITY_DISABLED);
		assert_int_equal(w.activities, 0);
		valid_header(m);
	}

	/* Truncated: every shorter length is INVALID, never read past. */
	for (size_t len = 0; len < sizeof(*m); len += 61) {
		assert_int_equal(sv_activity_view_read(m, len, 0, &v), SV_OK);
		assert_int_equal(v.state, SV_ACTIVITY_INVALID);
	}
	assert_int_equal(
	    sv_activity_view_read(m, sizeof(*m) - 1, 0, &v), SV_OK);
	assert_int_equal(v.state, SV_ACTIVITY_INVALID);
	assert_int_equal(sv_activity_view_read(m, sizeof(*m), 0, &v), SV_OK);
	assert_int_equal(v.state, SV_ACTIVITY_BUSY);
	/* Misaligned bytes. */
	memmove((char *) m + 4, m, sizeof(*m));
	assert_int_equal(
	    sv_activity_view_read((char *) m + 4, sizeof(*m), 0, &v), SV_OK);
	assert_int_equal(v.state, SV_ACTIVITY_INVALID);
	free(m);
}

/* A truncated region file, read as the supervisor reads one. */
static void
test_truncated_file(void **state)
{
	fixture         *f = *state;
	struct stat      st;
	sv_activity_view v;
	unsigned char   *buf;
	ssize_t          n;
	int              fd;

	/* Close first: a writer (or a reader) touching a page of a mapping
	 * past the end of a shrunk file gets SIGBUS (docs/activity.md). */
	assert_int_equal(sv_activity_enter(f->r, "work"), SV_OK);
	sv_activity_region_close(f->r);
	f->r = NULL;
	assert_int_equal(truncate(f->path, 100), 0);
	fd = open(f->path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, 100);
	buf = aligned_alloc(64, SV_ACTIVITY_REGION_SIZE);
	assert_non_null(buf);
	n = read(fd, buf, SV_ACTIVITY_REGION_SIZE);
	close(fd);
	assert_int_equal(n, 100);
	assert_int_equal(sv_activity_view_read(buf, (size_t) n, 0, &v), SV_OK);
	assert_int_equal(v.state, SV_ACTIVITY_INVALID);
	free(buf);
	/* Re-opening extends and resets the file. */
	assert_int_equal(sv_activity_region_open(&f->r, f->path), SV_OK);
	assert_int_equal(stat(f->path, &st), 0);
	assert_int_equal(st.st_size, SV_ACTIVITY_REGION_SIZE);
	assert_int_equal(view(f).state, SV_ACTIVITY_IDLE);
}

/* ---- fork ----------------------------------------------------------------
 */

/* child_body runs in the forked child; it returns its exit status. */
static int
child_body(fixture *f)
{
	char                path[96];
	sv_activity_region *own;
	uint32_t            d;

	if (sv_activity_enter(f->r, "child") != SV_EPERM
	    || sv_activity_leave(f->r) != SV_EPERM
	    || sv_activity_disable(f->r, 1) != SV_EPERM
	    || sv_activity_depth(f->r, &d) != SV_EPERM) {
		return 2;
	}
	/* The child's own region (its own lease) works. */
	snprintf(path, sizeof(path), "%s.child", f->path);
	close(open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0600));
	if (sv_activity_region_open(&own, path) != SV_OK) {
		return 3;
	}
	if (sv_activity_enter(own, "child work") != SV_OK
	    || sv_activity_leave(own) != SV_OK) {
		return 4;
	}
	sv_activity_region_close(own);
	unlink(path);
	/* Closing the inherited handle writes nothing into the parent's. */
	sv_activity_region_close(f->r);
	return 0;
}

static void
test_fork(void **state)
{
	fixture         *f = *state;
	sv_activity_view v;
	pid_t            pid;
	int              st;

	assert_int_equal(sv_activity_enter(f->r, "parent"), SV_OK);
	assert_int_equal(sv_activity_enter(f->r, "inner"), SV_OK);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		_exit(child_body(f));
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	/* The parent's stack is untouched and still works. */
	v = view(f);
	assert_int_equal(v.state, SV_ACTIVITY_BUSY);
	assert_int_equal(v.scopes, 2);
	assert_string_equal(v.oldest_name, "parent: inner");
	assert_int_equal(sv_activity_leave(f->r), SV_OK);
	assert_string_equal(view(f).oldest_name, "parent");
	assert_int_equal(sv_activity_leave(f->r), SV_OK);
	assert_int_equal(view(f).state, SV_ACTIVITY_IDLE);
}

/* ---- open and close ------------------------------------------------------
 */

static void
test_open_close(void **state)
{
	fixture            *f  = *state;
	sv_activity_region *r2 = NULL;
	int                 fd;

	assert_int_equal(sv_activity_region_open(NULL, f->path), SV_EINVAL);
	assert_int_equal(sv_activity_region_open(&r2, NULL), SV_EINVAL);
	assert_int_equal(
	    sv_activity_region_open(&r2, "/nonexistent/sv/act"), SV_ENOTFOUND);
	assert_int_equal(sv_activity_region_open(&r2, "/tmp"), SV_EINVAL);
	assert_int_equal(sv_activity_region_open_fd(&r2, -1), SV_EINVAL);
	/* The same file twice in one process. */
	assert_int_equal(sv_activity_region_open(&r2, f->path), SV_EBUSY);
	assert_null(r2);

	/* A memfd works as well as a file. */
	fd = memfd_create("sv-activity", MFD_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(sv_activity_region_open_fd(&r2, fd), SV_OK);
	close(fd); /* the mapping outlives the descriptor */
	assert_int_equal(sv_activity_enter(r2, "memfd"), SV_OK);
	assert_int_equal(sv_activity_leave(r2), SV_OK);
	sv_activity_region_close(r2);
	sv_activity_region_close(NULL);

	/* Close empties every stack, so a reader shows nothing after. */
	assert_int_equal(sv_activity_enter(f->r, "left open"), SV_OK);
	assert_int_equal(view(f).state, SV_ACTIVITY_BUSY);
	sv_activity_region_close(f->r);
	assert_int_equal(view(f).state, SV_ACTIVITY_IDLE);
	assert_int_equal(view(f).threads, 0);
	/* A new region (maybe at the old address) starts at depth 0 for this
	 * thread: the stale thread entry is not reused. */
	assert_int_equal(sv_activity_region_open(&f->r, f->path), SV_OK);
	assert_int_equal(sv_activity_leave(f->r), SV_EINVAL);
	assert_int_equal(sv_activity_enter(f->r, "fresh"), SV_OK);
	assert_string_equal(view(f).oldest_name, "fresh");
	assert_int_equal(sv_activity_leave(f->r), SV_OK);
}

/* ---- format --------------------------------------------------------------
 */

static void
test_format(void **state)
{
	sv_activity_view v;
	char             buf[128];

	(void) state;
	memset(&v, 0, sizeof(v));
	v.state = SV_ACTIVITY_IDLE;
	assert_int_equal(sv_activity_view_format(&v, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	v.state      = SV_ACTIVITY_BUSY;
	v.activities = 2;
	strcpy(v.oldest_name, "request: db query");
	v.oldest_age_ns = 1500000000ull;
	sv_activity_view_format(&v, buf, sizeof(buf));
	assert_string_equal(buf, "2 request: db query 1.5s");
	v.oldest_age_ns = 42000000ull;
	sv_activity_view_format(&v, buf, sizeof(buf));
	assert_string_equal(buf, "2 request: db query 42ms");
	v.oldest_age_ns = 250000000000ull;
	sv_activity_view_format(&v, buf, sizeof(buf));
	assert_string_equal(buf, "2 request: db query 250s");
	assert_int_equal(sv_activity_view_format(&v, buf, 5), 4);
	assert_string_equal(buf, "2 re");
	v.state = SV_ACTIVITY_DISABLED;
	sv_activity_view_format(&v, buf, sizeof(buf));
	assert_string_equal(buf, "");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_nesting, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
	    cmocka_unit_test_setup_teardown(
	        test_slot_exhaustion, setup, teardown),
	    cmocka_unit_test_setup_teardown(
	        test_depth_bounds, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_names, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_disable, setup, teardown),
	    cmocka_unit_test_setup_teardown(
	        test_concurrent_reader, setup, teardown),
	    cmocka_unit_test(test_garbage),
	    cmocka_unit_test_setup_teardown(
	        test_truncated_file, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fork, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_open_close, setup, teardown),
	    cmocka_unit_test(test_format),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
