/*
 * test_journal.c — the supervisor's journal (core/journal.h): records
 * round-trip, replay rebuilds the state a supervisor left, a journal cut at
 * every byte offset is read up to its last whole record or refused with a
 * message (never a crash: this test runs under ASan in CI), corruption
 * before the last line is refused, bounds hold, and 10,000 leases (with
 * their shared names) replay, apply and compact to the state of a model.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/journal.h"
#include "core/ordinal.h"

/* seal appends " CRC" to line, as the journal does (an independent
 * bitwise CRC-32, so a wrong polynomial in journal.c would show). */
static void
seal(const char *line, char *out, size_t cap)
{
	uint32_t crc = 0xffffffffu;

	for (const char *p = line; *p != '\0'; p++) {
		crc ^= (uint8_t) *p;
		for (int k = 0; k < 8; k++) {
			crc = (crc & 1u) ? (crc >> 1) ^ 0xedb88320u : crc >> 1;
		}
	}
	snprintf(out, cap, "%s %08x", line, ~crc);
}

/* apply_sealed seals line and applies it to st; returns the result. */
static sv_err
apply_sealed(sv_jstate *st, const char *line)
{
	char sealed[320], err[200];

	seal(line, sealed, sizeof(sealed));
	return sv_journal_apply(st, sealed, strlen(sealed), err, sizeof(err));
}

/* A growing text of records. */
typedef struct text {
	char  *p;
	size_t len;
	size_t cap; /* grown by doubling: thousands of records stay fast */
} text;

static void
add(text *t, sv_jrec r)
{
	char  *line;
	size_t n;

	assert_int_equal(sv_journal_format(&r, &line, &n), SV_OK);
	assert_int_equal(line[n - 1], '\n');
	if (t->len + n + 1 > t->cap) {
		t->cap = (t->len + n + 1) * 2;
		t->p   = realloc(t->p, t->cap);
		assert_non_null(t->p);
	}
	memcpy(t->p + t->len, line, n + 1);
	t->len += n;
	free(line);
}

/* add_group appends a G record: group name of count seats, config_count
 * of them from the config. */
static void
add_group(text *t, const char *name, uint32_t count, uint32_t config_count)
{
	add(t,
	    (sv_jrec) {.kind  = SV_J_GROUP,
	        .name         = name,
	        .count        = count,
	        .config_count = config_count});
}

/* add_started appends an S record: process pid, started at start_time, of
 * generation gen on seat ordinal of group name. */
static void
add_started(text *t, const char *name, uint32_t ordinal, uint64_t gen,
    int64_t pid, uint64_t start_time)
{
	add(t,
	    (sv_jrec) {.kind = SV_J_STARTED,
	        .name        = name,
	        .ordinal     = ordinal,
	        .generation  = gen,
	        .pid         = pid,
	        .start_time  = start_time});
}

/* add_worker_lease appends an L record: lease id with token on slot of
 * pool, held by worker ordinal of group, of generation gen. */
static void
add_worker_lease(text *t, const char *pool, uint32_t slot, uint64_t id,
    uint64_t token, const char *group, uint32_t ordinal, uint64_t gen)
{
	add(t,
	    (sv_jrec) {.kind    = SV_J_LEASE,
	        .name           = pool,
	        .ordinal        = slot,
	        .lease_id       = id,
	        .token          = token,
	        .holder_group   = group,
	        .holder_ordinal = ordinal,
	        .generation     = gen});
}

/* A realistic history: two groups, restarts, a runtime group with a spec
 * full of spaces and newlines, a deletion, a stop in progress. */
static text
history(void)
{
	text t = {NULL, 0};

	add(&t, (sv_jrec) {.kind = SV_J_HEADER, .name = "b00t-1d"});
	add(&t,
	    (sv_jrec) {.kind = SV_J_EPOCH, .name = "sup-a", .generation = 1});
	add_group(&t, "web", 3, 3);
	add(&t,
	    (sv_jrec) {.kind  = SV_J_GROUP,
	        .name         = "tmp",
	        .count        = 1,
	        .config_count = 1,
	        .spec = "tmp = { argv = [\"/bin/sleep\", \"9\"];\n  count = "
	                "1; }\n"});
	for (uint32_t o = 0; o < 3; o++) {
		add_started(&t, "web", o, 0, 100 + o, 5000 + o);
	}
	add_started(&t, "tmp", 0, 0, 200, 6000);
	add(&t, (sv_jrec) {.kind = SV_J_READY, .name = "web", .ordinal = 0});
	/* web[1] crashes and comes back twice */
	add(&t, (sv_jrec) {.kind = SV_J_REAPED, .name = "web", .ordinal = 1});
	add_started(&t, "web", 1, 1, 111, 7000);
	add(&t,
	    (sv_jrec) {.kind = SV_J_REAPED,
	        .name        = "web",
	        .ordinal     = 1,
	        .generation  = 1});
	add_started(&t, "web", 1, 2, 112, 7100);
	add(&t, (sv_jrec) {.kind = SV_J_DELETED, .name = "tmp"});
	add_group(&t, "web", 2, 3);
	add(&t,
	    (sv_jrec) {.kind = SV_J_STOPPING, .name = "web", .ordinal = 2});
	/* Leases: a worker's, a session's, one that ended, one re-claimed
	 * (a second L on the same slot replaces the first). */
	add_worker_lease(
	    &t, "metrics", 0, (1ull << 32) | 1, (1ull << 32) | 1, "web", 0, 0);
	add_worker_lease(
	    &t, "metrics", 1, (1ull << 32) | 2, (1ull << 32) | 1, "web", 1, 2);
	add(&t,
	    (sv_jrec) {.kind = SV_J_UNLEASE,
	        .name        = "metrics",
	        .ordinal     = 1,
	        .lease_id    = (1ull << 32) | 2});
	add(&t,
	    (sv_jrec) {.kind = SV_J_LEASE,
	        .name        = "tools",
	        .ordinal     = 2,
	        .lease_id    = (1ull << 32) | 3,
	        .token       = (1ull << 32) | 7,
	        .session     = (1ull << 32) | 9,
	        .session_uid = 1000,
	        .session_ttl = 30000});
	add_worker_lease(
	    &t, "metrics", 0, (1ull << 32) | 1, (1ull << 32) | 1, "web", 0, 0);
	/* A runtime pool, redeclared with another size. */
	add(&t,
	    (sv_jrec) {.kind = SV_J_POOL,
	        .name        = "rt",
	        .count       = 2,
	        .spec        = "/run/x y/{slot}"});
	add(&t,
	    (sv_jrec) {.kind = SV_J_POOL,
	        .name        = "rt",
	        .count       = 3,
	        .ttl_ms      = 500,
	        .grace_ms    = 70,
	        .policy      = 2,
	        .directory   = true,
	        .spec        = "/run/x y/{slot}"});
	add(&t,
	    (sv_jrec) {.kind = SV_J_EPOCH, .name = "sup-b", .generation = 2});
	return t;
}

static void
test_replay_history(void **state)
{
	text       t = history();
	sv_jstate  st;
	sv_jgroup *g;
	char       err[200];

	(void) state;
	assert_int_equal(
	    sv_journal_replay(t.p, t.len, &st, err, sizeof(err)), SV_OK);
	assert_string_equal(st.boot_id, "b00t-1d");
	assert_int_equal(st.epoch, 2);
	assert_string_equal(st.supervisor_id, "sup-b");
	assert_false(st.torn);
	assert_int_equal(st.ngroups, 1); /* tmp was deleted */
	assert_null(sv_jstate_group(&st, "tmp"));
	g = sv_jstate_group(&st, "web");
	assert_non_null(g);
	assert_int_equal(g->count, 2);
	assert_int_equal(g->config_count, 3);
	assert_null(g->spec);
	assert_int_equal(st.nlive, 3);
	assert_int_equal(g->seats[0].nprocs, 1);
	assert_true(g->seats[0].first.ready);
	assert_int_equal(g->seats[0].first.pid, 100);
	assert_int_equal(g->seats[0].next_generation, 1);
	assert_int_equal(g->seats[1].nprocs, 1);
	assert_int_equal(g->seats[1].first.generation, 2);
	assert_int_equal(g->seats[1].first.pid, 112);
	assert_int_equal(g->seats[1].first.start_time, 7100);
	assert_false(g->seats[1].first.ready);
	assert_int_equal(g->seats[1].next_generation, 3);
	assert_true(g->seats[2].first.stopping);
	/* One runtime pool, as last recorded. */
	assert_int_equal(st.npools, 1);
	assert_string_equal(st.pools[0].name, "rt");
	assert_int_equal(st.pools[0].slots, 3);
	assert_int_equal(st.pools[0].ttl_ms, 500);
	assert_int_equal(st.pools[0].grace_ms, 70);
	assert_int_equal(st.pools[0].policy, 2);
	assert_true(st.pools[0].directory);
	assert_string_equal(st.pools[0].path, "/run/x y/{slot}");
	/* Two live leases: metrics/0 (a worker's), tools/2 (a session's). */
	assert_int_equal(st.nleases, 2);
	for (size_t i = 0; i < st.nleases; i++) {
		const sv_jlease *l = &st.leases[i];
		if (strcmp(sv_jlease_pool(&st, l), "metrics") == 0) {
			assert_int_equal(l->slot, 0);
			assert_int_equal(l->id, (1ull << 32) | 1);
			assert_string_equal(sv_jlease_group(&st, l), "web");
			assert_int_equal(l->ordinal, 0);
			assert_int_equal(l->session, 0);
		} else {
			assert_string_equal(sv_jlease_pool(&st, l), "tools");
			assert_int_equal(l->slot, 2);
			assert_int_equal(l->token, (1ull << 32) | 7);
			assert_string_equal(sv_jlease_group(&st, l), "");
			assert_int_equal(l->session, (1ull << 32) | 9);
			assert_int_equal(l->session_uid, 1000);
			assert_int_equal(l->session_ttl_ms, 30000);
		}
	}
	sv_jstate_free(&st);
	free(t.p);
}

/* F marks a seat's ordinal released until the seat's next S; a snapshot
 * keeps the mark, even on a seat whose released process still lives. */
static void
test_freed_seats(void **state)
{
	text       t = {NULL, 0, 0};
	sv_jstate  st, st2;
	sv_jgroup *g;
	char      *snap, err[200];
	size_t     n;

	(void) state;
	add(&t, (sv_jrec) {.kind = SV_J_HEADER, .name = "b"});
	add_group(&t, "w", 3, 3);
	for (uint32_t o = 0; o < 3; o++) {
		add(&t,
		    (sv_jrec) {
		        .kind = SV_J_SPAWNING, .name = "w", .ordinal = o});
		add_started(&t, "w", o, 0, 10 + o, 1);
	}
	/* w[0] drained (still alive), w[1] terminated and reaped, w[2]
	 * terminated then started again (its S clears the mark). */
	add(&t, (sv_jrec) {.kind = SV_J_FREED, .name = "w", .ordinal = 0});
	add(&t, (sv_jrec) {.kind = SV_J_STOPPING, .name = "w", .ordinal = 1});
	add(&t, (sv_jrec) {.kind = SV_J_FREED, .name = "w", .ordinal = 1});
	add(&t, (sv_jrec) {.kind = SV_J_REAPED, .name = "w", .ordinal = 1});
	add(&t, (sv_jrec) {.kind = SV_J_FREED, .name = "w", .ordinal = 2});
	add(&t, (sv_jrec) {.kind = SV_J_REAPED, .name = "w", .ordinal = 2});
	add(&t,
	    (sv_jrec) {.kind = SV_J_SPAWNING,
	        .name        = "w",
	        .ordinal     = 2,
	        .generation  = 1});
	assert_int_equal(
	    sv_journal_replay(t.p, t.len, &st, err, sizeof(err)), SV_OK);
	g = sv_jstate_group(&st, "w");
	assert_non_null(g);
	assert_true(g->seats[0].released);
	assert_int_equal(g->seats[0].nprocs, 1); /* released, still alive */
	assert_true(g->seats[1].released);
	assert_int_equal(g->seats[1].nprocs, 0);
	assert_false(g->seats[2].released); /* wanted again */
	assert_true(g->seats[2].spawning);
	/* A snapshot keeps exactly these marks. */
	assert_int_equal(sv_journal_snapshot(&st, &snap, &n), SV_OK);
	assert_int_equal(
	    sv_journal_replay(snap, n, &st2, err, sizeof(err)), SV_OK);
	g = sv_jstate_group(&st2, "w");
	assert_true(g->seats[0].released);
	assert_int_equal(g->seats[0].nprocs, 1);
	assert_true(g->seats[1].released);
	assert_false(g->seats[2].released);
	assert_true(g->seats[2].spawning);
	sv_jstate_free(&st2);
	free(snap);
	sv_jstate_free(&st);
	free(t.p);
}

/* T carries the SIGKILL deadline of a stop: written only when known,
 * read back into the process (the last T wins), kept by a snapshot; a T
 * of the older form (no deadline) reads as unknown; a deadline of 0 or
 * not a number is refused. */
static void
test_stop_deadline(void **state)
{
	text       t = {NULL, 0, 0};
	sv_jstate  st, st2;
	sv_jgroup *g;
	char      *snap, *line, err[200];
	size_t     n;

	(void) state;
	add(&t, (sv_jrec) {.kind = SV_J_HEADER, .name = "b"});
	add_group(&t, "w", 2, 2);
	for (uint32_t o = 0; o < 2; o++) {
		add_started(&t, "w", o, 0, 10 + o, 1);
	}
	assert_int_equal(sv_journal_format(&(sv_jrec) {.kind = SV_J_STOPPING,
	                                       .name         = "w",
	                                       .ordinal      = 0,
	                                       .deadline_ms  = 123456789},
	                     &line, &n),
	    SV_OK);
	assert_non_null(strstr(line, "T w 0 0 123456789 "));
	free(line);
	add(&t,
	    (sv_jrec) {.kind = SV_J_STOPPING,
	        .name        = "w",
	        .ordinal     = 0,
	        .deadline_ms = 5000});
	add(&t,
	    (sv_jrec) {.kind = SV_J_STOPPING,
	        .name        = "w",
	        .ordinal     = 0,
	        .deadline_ms = 123456789});
	add(&t, (sv_jrec) {.kind = SV_J_STOPPING, .name = "w", .ordinal = 1});
	assert_int_equal(
	    sv_journal_replay(t.p, t.len, &st, err, sizeof(err)), SV_OK);
	g = sv_jstate_group(&st, "w");
	assert_non_null(g);
	assert_true(g->seats[0].first.stopping);
	assert_int_equal(g->seats[0].first.stop_deadline_ms, 123456789);
	assert_true(g->seats[1].first.stopping);
	assert_int_equal(g->seats[1].first.stop_deadline_ms, 0);
	assert_int_equal(sv_journal_snapshot(&st, &snap, &n), SV_OK);
	assert_int_equal(
	    sv_journal_replay(snap, n, &st2, err, sizeof(err)), SV_OK);
	g = sv_jstate_group(&st2, "w");
	assert_int_equal(g->seats[0].first.stop_deadline_ms, 123456789);
	assert_true(g->seats[1].first.stopping);
	assert_int_equal(g->seats[1].first.stop_deadline_ms, 0);
	sv_jstate_free(&st2);
	free(snap);
	/* Refused: a deadline of 0, one that is no number, a sixth field. */
	assert_int_equal(apply_sealed(&st, "T w 0 0 0"), SV_EINVAL);
	assert_int_equal(apply_sealed(&st, "T w 0 0 x1"), SV_EINVAL);
	assert_int_equal(apply_sealed(&st, "T w 0 0 5 6"), SV_EINVAL);
	/* Only T takes the extra field. */
	assert_int_equal(apply_sealed(&st, "R w 0 0 5"), SV_EINVAL);
	sv_jstate_free(&st);
	free(t.p);
}

/* Lease records that cannot be written or read back are refused. */
static void
test_lease_records(void **state)
{
	char     *line;
	size_t    n;
	sv_jstate st;

	(void) state;
	/* Both a group and a session, or neither: no holder is two. */
	assert_int_equal(sv_journal_format(&(sv_jrec) {.kind = SV_J_LEASE,
	                                       .name         = "p",
	                                       .lease_id     = 1,
	                                       .holder_group = "web",
	                                       .session      = 5},
	                     &line, &n),
	    SV_EINVAL);
	assert_int_equal(
	    sv_journal_format(
	        &(sv_jrec) {.kind = SV_J_LEASE, .name = "p", .lease_id = 1},
	        &line, &n),
	    SV_EINVAL);
	/* Lease id 0 is never written. */
	assert_int_equal(
	    sv_journal_format(
	        &(sv_jrec) {.kind = SV_J_UNLEASE, .name = "p"}, &line, &n),
	    SV_EINVAL);
	/* "-" without a session is refused when read. */
	assert_int_equal(sv_jstate_init(&st, ""), SV_OK);
	assert_int_equal(
	    apply_sealed(&st, "L p 0 1 1 - 0 0 0 0 0"), SV_EINVAL);
	/* A U of another lease id leaves the slot's lease alone. */
	assert_int_equal(apply_sealed(&st, "L p 0 7 9 web 0 3 0 0 0"), SV_OK);
	assert_int_equal(apply_sealed(&st, "U p 0 8"), SV_OK);
	assert_int_equal(st.nleases, 1);
	assert_int_equal(st.leases[0].generation, 3);
	assert_int_equal(apply_sealed(&st, "U p 0 7"), SV_OK);
	assert_int_equal(st.nleases, 0);
	sv_jstate_free(&st);
}

/* res_ino is the inode of the resource of the live lease on (pool, slot)
 * of st, 0 when none is known; *devp gets its device. */
static uint64_t
res_ino(const sv_jstate *st, const char *pool, uint32_t slot, uint64_t *devp)
{
	const sv_jlease *l   = sv_jstate_lease(st, pool, slot);
	uint64_t         dev = 0, ino = 0;

	assert_non_null(l);
	(void) sv_jlease_res(st, l, &dev, &ino);
	if (devp != NULL) {
		*devp = dev;
	}
	return ino;
}

/* L records carry the identity (DEV INO) of the slot's resource the
 * supervisor made: written only when known, read with or without it (an
 * older journal has none), kept through a snapshot. */
static void
test_lease_resource_identity(void **state)
{
	char     *line = NULL, *snap = NULL;
	size_t    n   = 0;
	uint64_t  dev = 0;
	sv_jstate st, st2;
	char      err[200];
	sv_jrec   r = {.kind = SV_J_LEASE,
	      .name          = "files",
	      .ordinal       = 3,
	      .lease_id      = 11,
	      .token         = 12,
	      .holder_group  = "web",
	      .res_dev       = 2049,
	      .res_ino       = 1234567890123ull};

	(void) state;
	assert_int_equal(sv_journal_format(&r, &line, &n), SV_OK);
	assert_non_null(strstr(line, " 2049 1234567890123 "));
	assert_int_equal(sv_jstate_init(&st, ""), SV_OK);
	assert_int_equal(
	    sv_journal_apply(&st, line, n - 1, err, sizeof(err)), SV_OK);
	free(line);
	assert_int_equal(st.nleases, 1);
	assert_int_equal(res_ino(&st, "files", 3, &dev), 1234567890123ull);
	assert_int_equal(dev, 2049);
	/* No identity: the record is the old 11-field one. */
	r.res_dev = r.res_ino = 0;
	r.ordinal             = 4;
	r.lease_id            = 13;
	assert_int_equal(sv_journal_format(&r, &line, &n), SV_OK);
	assert_null(strstr(line, " 2049 "));
	free(line);
	/* An older journal's line, and a line with a bad or zero inode. */
	assert_int_equal(
	    apply_sealed(&st, "L files 5 14 9 web 0 3 0 0 0"), SV_OK);
	assert_int_equal(res_ino(&st, "files", 5, NULL), 0);
	assert_int_equal(
	    apply_sealed(&st, "L files 6 15 9 web 0 3 0 0 0 7 0"), SV_EINVAL);
	assert_int_equal(
	    apply_sealed(&st, "L files 6 15 9 web 0 3 0 0 0 7"), SV_EINVAL);
	/* A snapshot keeps it. */
	assert_int_equal(sv_journal_snapshot(&st, &snap, &n), SV_OK);
	assert_int_equal(
	    sv_journal_replay(snap, n, &st2, err, sizeof(err)), SV_OK);
	assert_int_equal(res_ino(&st2, "files", 3, &dev), 1234567890123ull);
	assert_int_equal(dev, 2049);
	assert_int_equal(res_ino(&st2, "files", 5, NULL), 0);
	free(snap);
	sv_jstate_free(&st);
	sv_jstate_free(&st2);
}

/* A journaled lease is 64 bytes whether or not its slot has a resource;
 * the identities sit in a side table whose entries are reused: a lease
 * replaced on its slot, or ended, gives its entry back, and each live
 * lease keeps its own identity through the churn. */
static void
test_lease_resource_churn(void **state)
{
	sv_jstate st;
	char      line[200];
	uint64_t  dev = 0;

	(void) state;
	assert_true(sizeof(sv_jlease) <= 64);
	assert_int_equal(sv_jstate_init(&st, ""), SV_OK);
	assert_int_equal(
	    apply_sealed(&st, "L files 1 21 9 web 0 3 0 0 0 7 100"), SV_OK);
	assert_int_equal(
	    apply_sealed(&st, "L files 2 22 9 web 0 3 0 0 0 7 101"), SV_OK);
	assert_int_equal(
	    apply_sealed(&st, "L plain 1 23 9 web 0 3 0 0 0"), SV_OK);
	assert_int_equal(st.nres, 2);
	/* Replaced on its slot: the new identity, the old entry freed. */
	assert_int_equal(
	    apply_sealed(&st, "L files 1 24 9 web 0 3 0 0 0 8 102"), SV_OK);
	assert_int_equal(res_ino(&st, "files", 1, &dev), 102);
	assert_int_equal(dev, 8);
	assert_int_equal(res_ino(&st, "files", 2, NULL), 101);
	assert_int_equal(res_ino(&st, "plain", 1, NULL), 0);
	/* Replaced by a lease without one: none known any more. */
	assert_int_equal(
	    apply_sealed(&st, "L files 2 25 9 web 0 3 0 0 0"), SV_OK);
	assert_int_equal(res_ino(&st, "files", 2, NULL), 0);
	for (int k = 0; k < 100; k++) {
		snprintf(line, sizeof(line),
		    "L files 3 %d 9 web 0 3 0 0 0 7 %d", 100 + k, 1000 + k);
		assert_int_equal(apply_sealed(&st, line), SV_OK);
		assert_int_equal(res_ino(&st, "files", 3, NULL), 1000 + k);
		snprintf(line, sizeof(line), "U files 3 %d", 100 + k);
		assert_int_equal(apply_sealed(&st, line), SV_OK);
	}
	assert_null(sv_jstate_lease(&st, "files", 3));
	assert_int_equal(res_ino(&st, "files", 1, &dev), 102);
	assert_int_equal(dev, 8);
	assert_int_equal(st.nleases, 3);
	/* Entries are reused: never more than live identities plus one. */
	assert_true(st.nres <= 3);
	sv_jstate_free(&st);
}

/* A snapshot replays to the same state, and is smaller than the history. */
static void
test_snapshot_round_trip(void **state)
{
	text      t = history();
	sv_jstate a, b;
	char     *snap, *snap2, err[200];
	size_t    n, n2;

	(void) state;
	assert_int_equal(
	    sv_journal_replay(t.p, t.len, &a, err, sizeof(err)), SV_OK);
	/* A runtime group's spec survives a snapshot byte for byte. */
	add(&t,
	    (sv_jrec) {.kind  = SV_J_GROUP,
	        .name         = "rt x",
	        .count        = 1,
	        .config_count = 0,
	        .spec         = "a b\nc%d\t\x7f"});
	sv_jstate_free(&a);
	assert_int_equal(
	    sv_journal_replay(t.p, t.len, &a, err, sizeof(err)), SV_OK);
	assert_int_equal(sv_journal_snapshot(&a, &snap, &n), SV_OK);
	assert_true(n < t.len);
	assert_int_equal(
	    sv_journal_replay(snap, n, &b, err, sizeof(err)), SV_OK);
	assert_string_equal(
	    sv_jstate_group(&b, "rt x")->spec, "a b\nc%d\t\x7f");
	assert_int_equal(b.nlive, a.nlive);
	assert_int_equal(b.epoch, a.epoch);
	assert_int_equal(
	    sv_jstate_group(&b, "web")->seats[1].next_generation, 3);
	assert_int_equal(b.nleases, 2);
	assert_int_equal(b.npools, 1);
	assert_string_equal(b.pools[0].path, "/run/x y/{slot}");
	/* Snapshot of the snapshot is identical: nothing drifts. */
	assert_int_equal(sv_journal_snapshot(&b, &snap2, &n2), SV_OK);
	assert_int_equal(n, n2);
	assert_memory_equal(snap, snap2, n);
	free(snap);
	free(snap2);
	sv_jstate_free(&a);
	sv_jstate_free(&b);
	free(t.p);
}

/* The E record's cgroup tree name: written only when there is one (an
 * older reader sees the record it knows), read back, carried by a
 * snapshot, replaced by each later E (absent there: none); an E without
 * it (an older journal) still replays; a bad name is refused, both when
 * formatting and when replaying. */
static void
test_epoch_cgroup_tree(void **state)
{
	sv_jstate st, b;
	char      err[200], sealed[320], *line, *snap;
	size_t    n;
	text      t = {NULL, 0};

	(void) state;
	/* Round trip, and the field is the last one before the CRC. */
	assert_int_equal(sv_journal_format(&(sv_jrec) {.kind = SV_J_EPOCH,
	                                       .name         = "sid",
	                                       .cgroup_tree  = "supervised.42",
	                                       .generation   = 3},
	                     &line, &n),
	    SV_OK);
	assert_int_equal(strncmp(line, "E 3 sid supervised.42 ", 22), 0);
	free(line);
	/* No name, or "": the record of an older supervisor, byte for
	 * byte. */
	assert_int_equal(sv_journal_format(&(sv_jrec) {.kind = SV_J_EPOCH,
	                                       .name         = "sid",
	                                       .cgroup_tree  = "",
	                                       .generation   = 3},
	                     &line, &n),
	    SV_OK);
	seal("E 3 sid", sealed, sizeof(sealed));
	assert_int_equal(n, strlen(sealed) + 1);
	assert_memory_equal(line, sealed, n - 1);
	free(line);
	add(&t, (sv_jrec) {.kind = SV_J_HEADER, .name = "boot"});
	add(&t,
	    (sv_jrec) {.kind = SV_J_EPOCH,
	        .name        = "a",
	        .cgroup_tree = "supervised.42.1",
	        .generation  = 1});
	add_group(&t, "web", 1, 1);
	assert_int_equal(
	    sv_journal_replay(t.p, t.len, &st, err, sizeof(err)), SV_OK);
	assert_string_equal(st.cgroup_tree, "supervised.42.1");
	assert_string_equal(st.supervisor_id, "a");
	/* A snapshot carries it. */
	assert_int_equal(sv_journal_snapshot(&st, &snap, &n), SV_OK);
	assert_int_equal(
	    sv_journal_replay(snap, n, &b, err, sizeof(err)), SV_OK);
	assert_string_equal(b.cgroup_tree, "supervised.42.1");
	free(snap);
	sv_jstate_free(&b);
	/* A later E without it (a supervisor without cgroups, or an older
	 * one): none is known any more. */
	assert_int_equal(apply_sealed(&st, "E 2 b"), SV_OK);
	assert_string_equal(st.cgroup_tree, "");
	assert_int_equal(st.epoch, 2);
	assert_int_equal(sv_journal_snapshot(&st, &snap, &n), SV_OK);
	assert_null(strstr(snap, "supervised."));
	free(snap);
	assert_int_equal(apply_sealed(&st, "E 3 c supervised.7"), SV_OK);
	assert_string_equal(st.cgroup_tree, "supervised.7");
	/* Bad names are refused whole: nothing of the record applies. */
	assert_int_equal(apply_sealed(&st, "E 4 d ../x"), SV_EINVAL);
	assert_int_equal(apply_sealed(&st, "E 4 d .."), SV_EINVAL);
	assert_int_equal(apply_sealed(&st, "E 4 d a%2fb"), SV_EINVAL);
	assert_int_equal(apply_sealed(&st, "E 4 d a%0ab"), SV_EINVAL);
	assert_int_equal(apply_sealed(&st, "E 4 d x y"), SV_EINVAL);
	assert_int_equal(apply_sealed(&st,
	                     "E 4 d "
	                     "s1234567890123456789012345678901234567890"
	                     "12345678901234567890123"),
	    SV_EINVAL); /* 64 bytes */
	assert_int_equal(st.epoch, 3);
	assert_string_equal(st.supervisor_id, "c");
	assert_string_equal(st.cgroup_tree, "supervised.7");
	/* 63 bytes is the bound. */
	assert_int_equal(apply_sealed(&st,
	                     "E 4 d "
	                     "s1234567890123456789012345678901234567890"
	                     "1234567890123456789012"),
	    SV_OK);
	assert_int_equal(strlen(st.cgroup_tree), SV_JOURNAL_CGTREE_MAX);
	sv_jstate_free(&st);
	/* Formatting refuses what replay would. */
	assert_int_equal(sv_journal_format(&(sv_jrec) {.kind = SV_J_EPOCH,
	                                       .name         = "sid",
	                                       .cgroup_tree  = "a/b",
	                                       .generation   = 1},
	                     &line, &n),
	    SV_EINVAL);
	assert_null(line);
	/* A bad name in the middle of a journal refuses it, with the
	 * line. */
	free(t.p);
	t = (text) {NULL, 0};
	add(&t, (sv_jrec) {.kind = SV_J_HEADER, .name = "boot"});
	seal("E 1 a sup/x", sealed, sizeof(sealed));
	t.p = realloc(t.p, t.len + strlen(sealed) + 2);
	assert_non_null(t.p);
	memcpy(t.p + t.len, sealed, strlen(sealed));
	t.len += strlen(sealed);
	t.p[t.len++] = '\n';
	add_group(&t, "web", 1, 1);
	assert_int_equal(
	    sv_journal_replay(t.p, t.len, &st, err, sizeof(err)), SV_EINVAL);
	assert_non_null(strstr(err, "line 2: bad cgroup tree name"));
	free(t.p);
}

/* Every prefix of a journal: refused (empty, inside the header) or read up
 * to its last whole line, with exactly that many records. */
static void
test_truncated_everywhere(void **state)
{
	text   t = history();
	size_t header_end;
	char   err[200];

	(void) state;
	header_end = (size_t) ((char *) memchr(t.p, '\n', t.len) - t.p) + 1;
	for (size_t k = 0; k <= t.len; k++) {
		sv_jstate st;
		size_t    lines = 0;
		sv_err    rv;
		for (size_t i = 0; i < k; i++) {
			lines += t.p[i] == '\n';
		}
		err[0] = '\0';
		/* A copy of exactly k bytes, so ASan sees any over-read. */
		char *cut = malloc(k > 0 ? k : 1);
		memcpy(cut, t.p, k);
		rv = sv_journal_replay(cut, k, &st, err, sizeof(err));
		if (k < header_end) {
			assert_int_equal(rv, SV_EINVAL);
			assert_true(strlen(err) > 0);
		} else {
			assert_int_equal(rv, SV_OK);
			assert_int_equal(st.nrecords, lines);
			assert_int_equal(st.torn, t.p[k - 1] != '\n');
			sv_jstate_free(&st);
		}
		free(cut);
	}
	free(t.p);
}

/* A flipped byte before the last line is refused, naming the line; the same
 * damage on the last line drops that line only. */
static void
test_corruption(void **state)
{
	text      t = history();
	sv_jstate st;
	char      err[200];
	char     *third = strchr(strchr(t.p, '\n') + 1, '\n') + 1;
	size_t    lastpos;

	(void) state;
	third[2] ^= 0x01;
	assert_int_equal(
	    sv_journal_replay(t.p, t.len, &st, err, sizeof(err)), SV_EINVAL);
	assert_non_null(strstr(err, "line 3"));
	assert_non_null(strstr(err, "checksum"));
	third[2] ^= 0x01;
	lastpos = t.len - 2;
	while (t.p[lastpos - 1] != '\n') {
		lastpos--;
	}
	t.p[lastpos + 3] ^= 0x04;
	assert_int_equal(
	    sv_journal_replay(t.p, t.len, &st, err, sizeof(err)), SV_OK);
	assert_true(st.torn);
	assert_int_equal(st.epoch, 1); /* the last E record was dropped */
	sv_jstate_free(&st);
	free(t.p);
}

static void
test_refusals(void **state)
{
	sv_jstate st;
	char      err[200];
	text      t = {NULL, 0};

	(void) state;
	assert_int_equal(
	    sv_journal_replay("", 0, &st, err, sizeof(err)), SV_EINVAL);
	assert_int_equal(
	    sv_journal_replay("hello\nworld\n", 12, &st, err, sizeof(err)),
	    SV_EINVAL);
	assert_non_null(strstr(err, "not a supervised journal"));
	/* A record about a group never declared. */
	add(&t, (sv_jrec) {.kind = SV_J_HEADER, .name = "x"});
	add(&t, (sv_jrec) {.kind = SV_J_STARTED, .name = "ghost", .pid = 5});
	add(&t, (sv_jrec) {.kind = SV_J_EPOCH, .name = "s", .generation = 1});
	assert_int_equal(
	    sv_journal_replay(t.p, t.len, &st, err, sizeof(err)), SV_EINVAL);
	assert_non_null(strstr(err, "unknown group"));
	free(t.p);
	/* Epochs never go back. */
	t = (text) {NULL, 0};
	add(&t, (sv_jrec) {.kind = SV_J_HEADER, .name = "x"});
	add(&t, (sv_jrec) {.kind = SV_J_EPOCH, .name = "s", .generation = 5});
	add(&t, (sv_jrec) {.kind = SV_J_EPOCH, .name = "s", .generation = 4});
	add(&t, (sv_jrec) {.kind = SV_J_EPOCH, .name = "s", .generation = 6});
	assert_int_equal(
	    sv_journal_replay(t.p, t.len, &st, err, sizeof(err)), SV_EINVAL);
	assert_non_null(strstr(err, "line 3"));
	free(t.p);
	/* A second header. */
	t = (text) {NULL, 0};
	add(&t, (sv_jrec) {.kind = SV_J_HEADER, .name = "x"});
	add(&t, (sv_jrec) {.kind = SV_J_HEADER, .name = "x"});
	add(&t, (sv_jrec) {.kind = SV_J_EPOCH, .name = "s", .generation = 1});
	assert_int_equal(
	    sv_journal_replay(t.p, t.len, &st, err, sizeof(err)), SV_EINVAL);
	free(t.p);
}

static void
test_bounds(void **state)
{
	char      name[SV_JOURNAL_NAME_MAX + 2];
	char     *line;
	size_t    n;
	sv_jstate st;
	char      err[200];
	text      t = {NULL, 0};
	char      gname[32];

	(void) state;
	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	assert_int_equal(
	    sv_journal_format(
	        &(sv_jrec) {.kind = SV_J_GROUP, .name = name}, &line, &n),
	    SV_EINVAL);
	assert_int_equal(sv_journal_format(&(sv_jrec) {.kind = SV_J_STARTED,
	                                       .name         = "g",
	                                       .ordinal      = SV_ORDINALS_MAX,
	                                       .pid          = 1},
	                     &line, &n),
	    SV_EINVAL);
	assert_int_equal(
	    sv_journal_format(
	        &(sv_jrec) {.kind = SV_J_STARTED, .name = "g", .pid = 0},
	        &line, &n),
	    SV_EINVAL);
	assert_int_equal(sv_journal_format(
	                     &(sv_jrec) {.kind = 'Q', .name = "g"}, &line, &n),
	    SV_EINVAL);
	/* Too many groups. */
	add(&t, (sv_jrec) {.kind = SV_J_HEADER, .name = "x"});
	for (int i = 0; i <= SV_JOURNAL_MAX_GROUPS; i++) {
		snprintf(gname, sizeof(gname), "g%d", i);
		add(&t, (sv_jrec) {.kind = SV_J_GROUP, .name = gname});
	}
	add(&t, (sv_jrec) {.kind = SV_J_EPOCH, .name = "s", .generation = 1});
	assert_int_equal(
	    sv_journal_replay(t.p, t.len, &st, err, sizeof(err)), SV_EINVAL);
	assert_non_null(strstr(err, "groups"));
	free(t.p);
	/* A third unreaped process on one seat. */
	t = (text) {NULL, 0};
	add(&t, (sv_jrec) {.kind = SV_J_HEADER, .name = "x"});
	add(&t, (sv_jrec) {.kind = SV_J_GROUP, .name = "g", .count = 1});
	for (int i = 0; i < 3; i++) {
		add(&t,
		    (sv_jrec) {.kind = SV_J_STARTED,
		        .name        = "g",
		        .generation  = (uint64_t) i,
		        .pid         = 10 + i});
	}
	add(&t, (sv_jrec) {.kind = SV_J_EPOCH, .name = "s", .generation = 1});
	assert_int_equal(
	    sv_journal_replay(t.p, t.len, &st, err, sizeof(err)), SV_EINVAL);
	free(t.p);
	/* Numbers that do not fit, bad escapes, stray spaces. */
	static const char *bad[] = {
	    "G g 99999999999999999999999 1 -",
	    "G g 1 1 %zz",
	    "G g 1 1 %00",
	    "G  g 1 1 -",
	    "P g 0 0 -5 1",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char good[64], sealed[128];
		seal("G g 1 1 -", good, sizeof(good));
		seal(bad[i], sealed, sizeof(sealed));
		(void) sv_jstate_init(&st, "");
		assert_int_equal(sv_journal_apply(&st, good, strlen(good), err,
		                     sizeof(err)),
		    SV_OK);
		assert_int_equal(sv_journal_apply(&st, sealed, strlen(sealed),
		                     err, sizeof(err)),
		    SV_EINVAL);
		assert_null(strstr(err, "checksum"));
		sv_jstate_free(&st);
	}
}

/* Random bytes never crash the parser and are refused. */
static void
test_garbage(void **state)
{
	char      buf[512], err[200];
	sv_jstate st;
	uint32_t  x = 12345;

	(void) state;
	for (int i = 0; i < 20000; i++) {
		size_t n = (size_t) (i % (int) sizeof(buf));
		for (size_t k = 0; k < n; k++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			buf[k] = (char) (x % 4 == 0 ? '\n'
			        : x % 7 == 0        ? ' '
			                            : x);
		}
		if (n > 0) {
			buf[0] = 'H';
		}
		if (sv_journal_replay(buf, n, &st, err, sizeof(err))
		    == SV_OK) {
			sv_jstate_free(&st);
		}
	}
}

/* ---- many leases ---------------------------------------------------------
 */

#define ML_POOLS  10
#define ML_SLOTS  1000
#define ML_GROUPS 5

/* A model lease: what the journal must give back for one slot. */
typedef struct mlease {
	bool     live;
	uint64_t id, token, gen, session, ttl;
	uint32_t ordinal, uid;
	int      group; /* -1: a session holder */
} mlease;

static uint32_t
ml_rand(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

/* ml_grant records a fresh lease on slot k (pool k / ML_SLOTS) in m and
 * as an L record in t. */
static void
ml_grant(text *t, mlease *m, size_t k, uint64_t *next_id, uint32_t *x)
{
	char pname[16], gname[16];

	snprintf(pname, sizeof(pname), "pool%zu", k / ML_SLOTS);
	m->live  = true;
	m->id    = ++*next_id;
	m->token = ((uint64_t) 3 << 32) | (ml_rand(x) % 100000 + 1);
	m->group = (int) (ml_rand(x) % (ML_GROUPS + 1)) - 1;
	if (m->group < 0) {
		m->session = ((uint64_t) 2 << 32) | (ml_rand(x) % 1000 + 1);
		m->uid     = ml_rand(x) % 2000;
		m->ttl     = ml_rand(x) % 60000 + 1;
		/* Ordinal and generation are written for a session holder
		 * too, and must come back as they were written. */
		m->ordinal = ml_rand(x) % 3;
		m->gen     = ml_rand(x) % 3;
	} else {
		m->session = 0;
		m->uid     = 0;
		m->ttl     = 0;
		m->ordinal = ml_rand(x) % 4096;
		m->gen     = ml_rand(x) % 50;
	}
	snprintf(gname, sizeof(gname), "grp%d", m->group);
	add(t,
	    (sv_jrec) {.kind    = SV_J_LEASE,
	        .name           = pname,
	        .ordinal        = (uint32_t) (k % ML_SLOTS),
	        .lease_id       = m->id,
	        .token          = m->token,
	        .holder_group   = m->group < 0 ? NULL : gname,
	        .holder_ordinal = m->ordinal,
	        .generation     = m->gen,
	        .session        = m->session,
	        .session_uid    = m->uid,
	        .session_ttl    = m->ttl});
}

/* ml_end records the end of the lease on slot k, with its id or (wrong)
 * another one, which must change nothing. */
static void
ml_end(text *t, mlease *m, size_t k, bool wrong_id)
{
	char pname[16];

	snprintf(pname, sizeof(pname), "pool%zu", k / ML_SLOTS);
	add(t,
	    (sv_jrec) {.kind = SV_J_UNLEASE,
	        .name        = pname,
	        .ordinal     = (uint32_t) (k % ML_SLOTS),
	        .lease_id    = wrong_id ? m->id + 1 : m->id});
	if (!wrong_id) {
		m->live = false;
	}
}

/* ml_check compares st with the model, slot by slot. */
static void
ml_check(const sv_jstate *st, const mlease *m)
{
	size_t live = 0;
	char   pname[16], gname[16];

	for (size_t k = 0; k < ML_POOLS * ML_SLOTS; k++) {
		const sv_jlease *l;
		snprintf(pname, sizeof(pname), "pool%zu", k / ML_SLOTS);
		l = sv_jstate_lease(st, pname, (uint32_t) (k % ML_SLOTS));
		if (!m[k].live) {
			assert_null(l);
			continue;
		}
		live++;
		assert_non_null(l);
		assert_string_equal(sv_jlease_pool(st, l), pname);
		assert_int_equal(l->slot, k % ML_SLOTS);
		assert_int_equal(l->id, m[k].id);
		assert_int_equal(l->token, m[k].token);
		assert_int_equal(l->ordinal, m[k].ordinal);
		assert_int_equal(l->generation, m[k].gen);
		assert_int_equal(l->session, m[k].session);
		assert_int_equal(l->session_uid, m[k].uid);
		assert_int_equal(l->session_ttl_ms, m[k].ttl);
		snprintf(gname, sizeof(gname), "grp%d", m[k].group);
		assert_string_equal(
		    sv_jlease_group(st, l), m[k].group < 0 ? "" : gname);
	}
	assert_int_equal(st->nleases, live);
}

/* 10,000 live leases over 10 pools after grants, re-grants of held slots
 * (another holder, another group), ends and ends naming another lease id:
 * replay, record by record application (the daemon's mirror) and a
 * snapshot all give the state of a model; the names are shared and freed
 * with their last lease. */
static void
test_many_leases(void **state)
{
	const size_t nslots  = ML_POOLS * ML_SLOTS;
	mlease      *m       = calloc(nslots, sizeof(*m));
	text         t       = {NULL, 0};
	uint64_t     next_id = 0;
	uint32_t     x       = 2463534242u;
	sv_jstate    a, b, c;
	char        *snap, *snap2, err[200];
	size_t       n, n2, pos, free_k;

	(void) state;
	assert_non_null(m);
	add(&t, (sv_jrec) {.kind = SV_J_HEADER, .name = "boot"});
	add(&t, (sv_jrec) {.kind = SV_J_EPOCH, .name = "s", .generation = 3});
	for (size_t k = 0; k < nslots; k++) {
		ml_grant(&t, &m[k], k, &next_id, &x);
	}
	/* Churn that ends with every slot held again. */
	for (int op = 0; op < 20000; op++) {
		size_t k = ml_rand(&x) % nslots;
		switch (ml_rand(&x) % 3) {
		case 0: /* a later L of the same slot replaces the lease */
			ml_grant(&t, &m[k], k, &next_id, &x);
			break;
		case 1: /* a U naming another lease changes nothing */
			ml_end(&t, &m[k], k, true);
			break;
		default: /* ended, then another slot is granted */
			ml_end(&t, &m[k], k, false);
			free_k = ml_rand(&x) % nslots;
			while (m[free_k].live) {
				free_k = (free_k + 1) % nslots;
			}
			ml_grant(&t, &m[free_k], free_k, &next_id, &x);
			break;
		}
	}
	assert_int_equal(
	    sv_journal_replay(t.p, t.len, &a, err, sizeof(err)), SV_OK);
	assert_int_equal(a.nleases, nslots);
	ml_check(&a, m);
	/* 10 pool names and 5 group names, each stored once. */
	assert_true(a.nlnames <= ML_POOLS + ML_GROUPS);
	assert_int_equal(a.lname_index.n, ML_POOLS + ML_GROUPS);

	/* The daemon's mirror applies line by line: the same snapshot. */
	assert_int_equal(sv_jstate_init(&b, "boot"), SV_OK);
	pos = 0;
	while (pos < t.len) {
		const char *nl = memchr(t.p + pos, '\n', t.len - pos);
		assert_non_null(nl);
		assert_int_equal(
		    sv_journal_apply(&b, t.p + pos,
		        (size_t) (nl - (t.p + pos)), err, sizeof(err)),
		    SV_OK);
		pos = (size_t) (nl - t.p) + 1;
	}
	ml_check(&b, m);
	assert_int_equal(sv_journal_snapshot(&a, &snap, &n), SV_OK);
	assert_int_equal(sv_journal_snapshot(&b, &snap2, &n2), SV_OK);
	assert_int_equal(n, n2);
	assert_memory_equal(snap, snap2, n);
	free(snap2);
	sv_jstate_free(&b);

	/* A compaction replays to the same state and snapshots alike. */
	assert_int_equal(
	    sv_journal_replay(snap, n, &c, err, sizeof(err)), SV_OK);
	ml_check(&c, m);
	assert_int_equal(sv_journal_snapshot(&c, &snap2, &n2), SV_OK);
	assert_int_equal(n, n2);
	assert_memory_equal(snap, snap2, n);
	free(snap2);
	free(snap);
	sv_jstate_free(&c);
	sv_jstate_free(&a);

	/* Every lease ends: no name is left, and the entries are reused. */
	for (size_t k = 0; k < nslots; k++) {
		ml_end(&t, &m[k], k, false);
	}
	assert_int_equal(
	    sv_journal_replay(t.p, t.len, &a, err, sizeof(err)), SV_OK);
	ml_check(&a, m);
	assert_int_equal(a.nleases, 0);
	assert_int_equal(a.lname_index.n, 0);
	for (uint32_t i = 0; i < a.nlnames; i++) {
		assert_null(a.lnames[i].s);
	}
	ml_grant(&t, &m[5], 5, &next_id, &x);
	sv_jstate_free(&a);
	assert_int_equal(
	    sv_journal_replay(t.p, t.len, &a, err, sizeof(err)), SV_OK);
	ml_check(&a, m);
	assert_true(a.nlnames <= ML_POOLS + ML_GROUPS);
	sv_jstate_free(&a);
	free(t.p);
	free(m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_replay_history),
	    cmocka_unit_test(test_snapshot_round_trip),
	    cmocka_unit_test(test_epoch_cgroup_tree),
	    cmocka_unit_test(test_freed_seats),
	    cmocka_unit_test(test_stop_deadline),
	    cmocka_unit_test(test_truncated_everywhere),
	    cmocka_unit_test(test_corruption),
	    cmocka_unit_test(test_refusals),
	    cmocka_unit_test(test_bounds),
	    cmocka_unit_test(test_garbage),
	    cmocka_unit_test(test_lease_records),
	    cmocka_unit_test(test_lease_resource_identity),
	    cmocka_unit_test(test_lease_resource_churn),
	    cmocka_unit_test(test_many_leases),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
