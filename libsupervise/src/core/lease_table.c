/*
 * lease_table.c — the slot state machine of the lease core: one static
 * table, slot state x event -> handler, next state, doc, and the one
 * function that moves a slot (svl_slot_fire).
 *
 * A slot's stored state (svl_phase) is free, held, grace (held, its
 * holder's connections gone, the pool's grace running) or unclaimed
 * (restored after a restart, waiting for its holder's claim). Clients see
 * grace as held and disconnected (sv_lease_info).
 *
 * svl_slot_fire looks the cell up, moves the slot to the cell's next state
 * (leaving free counts one more lease of the pool and the core, entering
 * free one fewer), then runs the handler, which sees the state the slot
 * came from. A cell without a handler is an event that cannot reach a
 * slot in that state; firing it changes nothing and is counted in
 * sv_lease_core.misfires, which the tests require to stay 0.
 *
 * The callers decide which event happens (lease.c validates holders'
 * requests, lease_reclaim.c picks the deadline a timer stands for); the
 * handlers here carry the slot side out. Waiters have no table: a waiter
 * is queued until it leaves the FIFO, each way out in lease_waiters.c.
 * docs/leases.md, "Slot transitions", shows this table row by row;
 * tests/test_lease_table_doc.c fails when they differ.
 */
#include <stddef.h>

#include "core/lease_internal.h"

/* ---- handlers ------------------------------------------------------------
 */

/* h_nothing: only the state changes (or nothing at all). */
static void
h_nothing(sv_lease_core *c, lpool *p, uint32_t i, svl_phase from,
    const svl_slot_arg *a)
{
	(void) c, (void) p, (void) i, (void) from, (void) a;
}

/* h_grant gives the slot to a->holder: a new lease id, the next token,
 * the TTL from now; RESOURCE_PREPARE (pools with a resource), GRANTED,
 * the slot timer. The caller reserved the index entry. */
static void
h_grant(sv_lease_core *c, lpool *p, uint32_t i, svl_phase from,
    const svl_slot_arg *a)
{
	lslot        *s = &p->slots[i];
	sv_lease_info info;

	(void) from;
	c->next_lease++;
	s->counter++;
	s->id    = ((uint64_t) c->epoch << 32) | c->next_lease;
	s->token = ((uint64_t) c->epoch << 32) | s->counter;
	svl_slot_set_holder(s, a->holder);
	s->expiry_ms = p->ttl_ms != 0 ? a->now_ms + p->ttl_ms : 0;
	s->end_ms    = 0;
	svl_index_put(c, p, i);
	info = svl_info_of(p, i);
	if (p->has_resource) {
		sv_lease_fx fx
		    = {.kind = SV_LFX_RESOURCE_PREPARE, .lease = info};
		fx.err    = SV_OK;
		fx.policy = p->policy;
		svl_fx_push(c, &fx);
	}
	svl_emit(c, SV_LEV_GRANTED, SV_LREASON_NONE, &info);
	svl_slot_timer(c, p, i);
	if (a->out != NULL) {
		*a->out = info;
	}
}

/* h_restore puts a journaled lease (a->rec) back on the slot: its id,
 * token and holder, no TTL, the claim deadline at now + claim grace;
 * RESTORED, the slot timer. The caller reserved the index entry. */
static void
h_restore(sv_lease_core *c, lpool *p, uint32_t i, svl_phase from,
    const svl_slot_arg *a)
{
	lslot        *s = &p->slots[i];
	sv_lease_info info;

	(void) from;
	s->id    = a->rec->id;
	s->token = a->rec->token;
	svl_slot_set_holder(s, &a->rec->holder);
	s->expiry_ms = 0;
	s->end_ms    = a->now_ms + a->claim_grace_ms;
	svl_index_put(c, p, i);
	info = svl_info_of(p, i);
	svl_emit(c, SV_LEV_RESTORED, SV_LREASON_NONE, &info);
	svl_slot_timer(c, p, i);
}

/* h_claim: the recorded holder claimed the slot back: the claim deadline
 * is gone, the TTL runs from now; CLAIMED, the slot timer. */
static void
h_claim(sv_lease_core *c, lpool *p, uint32_t i, svl_phase from,
    const svl_slot_arg *a)
{
	lslot        *s = &p->slots[i];
	sv_lease_info info;

	(void) from;
	s->end_ms    = 0;
	s->expiry_ms = p->ttl_ms != 0 ? a->now_ms + p->ttl_ms : 0;
	info         = svl_info_of(p, i);
	svl_emit(c, SV_LEV_CLAIMED, SV_LREASON_NONE, &info);
	svl_slot_timer(c, p, i);
}

/* h_renew moves the expiry to now + TTL and the slot timer with it. */
static void
h_renew(sv_lease_core *c, lpool *p, uint32_t i, svl_phase from,
    const svl_slot_arg *a)
{
	(void) from;
	p->slots[i].expiry_ms = p->ttl_ms != 0 ? a->now_ms + p->ttl_ms : 0;
	svl_slot_timer(c, p, i);
}

/* h_end ends the lease for a->why (svl_slot_end): events, reclaim,
 * hand-over to the waiters. */
static void
h_end(sv_lease_core *c, lpool *p, uint32_t i, svl_phase from,
    const svl_slot_arg *a)
{
	svl_slot_end(c, p, i, from, a->why, a->now_ms);
}

/* h_abort ends the lease as aborted (no notice). */
static void
h_abort(sv_lease_core *c, lpool *p, uint32_t i, svl_phase from,
    const svl_slot_arg *a)
{
	svl_slot_end(c, p, i, from, SV_LREASON_ABORTED, a->now_ms);
}

/* h_expire revokes the lease: its TTL lapsed. */
static void
h_expire(sv_lease_core *c, lpool *p, uint32_t i, svl_phase from,
    const svl_slot_arg *a)
{
	svl_slot_end(c, p, i, from, SV_LREASON_EXPIRED, a->now_ms);
}

/* h_cut revokes the lease: its holder is disconnected (grace over, or a
 * pool without grace). */
static void
h_cut(sv_lease_core *c, lpool *p, uint32_t i, svl_phase from,
    const svl_slot_arg *a)
{
	svl_slot_end(c, p, i, from, SV_LREASON_DISCONNECTED, a->now_ms);
}

/* h_unclaimed revokes the lease: nobody claimed it in time. */
static void
h_unclaimed(sv_lease_core *c, lpool *p, uint32_t i, svl_phase from,
    const svl_slot_arg *a)
{
	svl_slot_end(c, p, i, from, SV_LREASON_UNCLAIMED, a->now_ms);
}

/* h_grace starts the pool's grace: it ends at now + grace; DISCONNECTED,
 * the slot timer (the TTL if earlier). */
static void
h_grace(sv_lease_core *c, lpool *p, uint32_t i, svl_phase from,
    const svl_slot_arg *a)
{
	sv_lease_info info;

	(void) from;
	p->slots[i].end_ms = a->now_ms + p->grace_ms;
	info               = svl_info_of(p, i);
	svl_emit(c, SV_LEV_DISCONNECTED, SV_LREASON_NONE, &info);
	svl_slot_timer(c, p, i);
}

/* h_reconnect stops the grace; RECONNECTED, the slot timer back to the
 * TTL (or cancelled). */
static void
h_reconnect(sv_lease_core *c, lpool *p, uint32_t i, svl_phase from,
    const svl_slot_arg *a)
{
	sv_lease_info info;

	(void) from, (void) a;
	p->slots[i].end_ms = 0;
	info               = svl_info_of(p, i);
	svl_emit(c, SV_LEV_RECONNECTED, SV_LREASON_NONE, &info);
	svl_slot_timer(c, p, i);
}

/* h_rearm: an early timer; the slot timer is armed again for what is due. */
static void
h_rearm(sv_lease_core *c, lpool *p, uint32_t i, svl_phase from,
    const svl_slot_arg *a)
{
	(void) from, (void) a;
	svl_slot_timer(c, p, i);
}

/* ---- the table -----------------------------------------------------------
 */

/* CELL(state, event, handler, next state, doc): one cell of the table. */
#define CELL(st, ev, fn, nx, d) [SVL_##st][SLE_##ev] = {fn, SVL_##nx, #fn, d}

/* clang-format off */
static const svl_slot_cell slot_table[SVL_PHASE_COUNT][SLE_COUNT] = {
CELL(FREE, GRANT, h_grant, HELD,
    "new id, next token, TTL from now; PREPARE, GRANTED"),
CELL(FREE, RESTORE, h_restore, UNCLAIMED,
    "the record's id, token and holder; RESTORED; claim deadline"),

CELL(HELD, CLAIM, h_nothing, HELD,
    "already claimed: the same lease"),
CELL(HELD, RENEW, h_renew, HELD,
    "expiry = now + TTL, slot timer re-armed"),
CELL(HELD, RELEASE, h_end, FREE,
    "RELEASED (no notice), RECLAIM; hand-over"),
CELL(HELD, ABORT, h_abort, FREE,
    "ABORTED (no notice), RECLAIM; hand-over"),
CELL(HELD, REVOKE, h_end, FREE,
    "notice, REVOKED(why), RECLAIM; hand-over"),
CELL(HELD, DISCONNECT, h_grace, GRACE,
    "DISCONNECTED; slot timer at now + grace (or the TTL)"),
CELL(HELD, CUT, h_cut, FREE,
    "notice, REVOKED(disconnected), RECLAIM; hand-over"),
CELL(HELD, RECONNECT, h_nothing, HELD,
    "not disconnected: nothing"),
CELL(HELD, TIMER, h_rearm, HELD,
    "nothing due yet: slot timer armed again"),
CELL(HELD, EXPIRE, h_expire, FREE,
    "notice, REVOKED(expired), RECLAIM; hand-over"),

CELL(GRACE, CLAIM, h_nothing, GRACE,
    "already claimed: the same lease"),
CELL(GRACE, RENEW, h_renew, GRACE,
    "expiry = now + TTL; the grace still runs"),
CELL(GRACE, RELEASE, h_end, FREE,
    "RELEASED (no notice), RECLAIM; hand-over"),
CELL(GRACE, ABORT, h_abort, FREE,
    "ABORTED (no notice), RECLAIM; hand-over"),
CELL(GRACE, REVOKE, h_end, FREE,
    "notice, REVOKED(why), RECLAIM; hand-over"),
CELL(GRACE, DISCONNECT, h_nothing, GRACE,
    "the grace already runs: nothing"),
CELL(GRACE, CUT, h_nothing, GRACE,
    "the grace already runs: nothing"),
CELL(GRACE, RECONNECT, h_reconnect, HELD,
    "RECONNECTED; slot timer back to the TTL (or cancelled)"),
CELL(GRACE, TIMER, h_rearm, GRACE,
    "nothing due yet: slot timer armed again"),
CELL(GRACE, EXPIRE, h_expire, FREE,
    "notice, REVOKED(expired), RECLAIM; hand-over"),
CELL(GRACE, GRACE_OVER, h_cut, FREE,
    "notice, REVOKED(disconnected), RECLAIM; hand-over"),

CELL(UNCLAIMED, CLAIM, h_claim, HELD,
    "CLAIMED; no claim deadline, TTL from now"),
CELL(UNCLAIMED, RELEASE, h_end, FREE,
    "RELEASED (no notice), RECLAIM; hand-over"),
CELL(UNCLAIMED, ABORT, h_abort, FREE,
    "ABORTED (no notice), RECLAIM; hand-over"),
CELL(UNCLAIMED, REVOKE, h_end, FREE,
    "notice, REVOKED(why), RECLAIM; hand-over"),
CELL(UNCLAIMED, DISCONNECT, h_nothing, UNCLAIMED,
    "the claim deadline rules: nothing"),
CELL(UNCLAIMED, CUT, h_nothing, UNCLAIMED,
    "the claim deadline rules: nothing"),
CELL(UNCLAIMED, RECONNECT, h_nothing, UNCLAIMED,
    "the claim deadline rules: nothing"),
CELL(UNCLAIMED, TIMER, h_rearm, UNCLAIMED,
    "nothing due yet: slot timer armed again"),
CELL(UNCLAIMED, CLAIM_OVER, h_unclaimed, FREE,
    "notice, REVOKED(unclaimed), RECLAIM; hand-over"),
};
/* clang-format on */

#undef CELL

/* slot_enter moves slot i of p to state next, counting the leases of the
 * pool and of the core as the slot leaves or enters free. */
static void
slot_enter(sv_lease_core *c, lpool *p, uint32_t i, svl_phase next)
{
	lslot *s = &p->slots[i];

	if (s->phase == SVL_FREE && next != SVL_FREE) {
		p->nheld++;
		c->nleases++;
	} else if (s->phase != SVL_FREE && next == SVL_FREE) {
		p->nheld--;
		c->nleases--;
	}
	s->phase = (uint8_t) next;
}

/* svl_slot_fire moves slot i of p by event ev (see the design comment);
 * false when the table has no cell for it (a misfire). */
bool
svl_slot_fire(sv_lease_core *c, lpool *p, uint32_t i, svl_event ev,
    const svl_slot_arg *a)
{
	static const svl_slot_arg none = {.why = SV_LREASON_NONE};
	svl_phase                 from = (svl_phase) p->slots[i].phase;
	const svl_slot_cell      *cell = svl_slot_cell_at(from, ev);

	if (cell == NULL || cell->handler == NULL) {
		c->misfires++;
		return false;
	}
	slot_enter(c, p, i, cell->next);
	cell->handler(c, p, i, from, a != NULL ? a : &none);
	return true;
}

/* svl_slot_cell_at returns the cell of (st, ev) (NULL if out of range). */
const svl_slot_cell *
svl_slot_cell_at(svl_phase st, svl_event ev)
{
	if ((unsigned) st >= SVL_PHASE_COUNT || (unsigned) ev >= SLE_COUNT) {
		return NULL;
	}
	return &slot_table[st][ev];
}

/* svl_phase_state is the state clients see for a slot in state st. */
sv_lease_state
svl_phase_state(svl_phase st)
{
	switch (st) {
	case SVL_HELD:
	case SVL_GRACE:
		return SV_LEASE_HELD;
	case SVL_UNCLAIMED:
		return SV_LEASE_UNCLAIMED;
	default:
		return SV_LEASE_FREE;
	}
}

/* The names and one-line docs of the states and events, as the docs show
 * them (indexed by svl_phase and svl_event). */
/* clang-format off */
static const char *const phase_names[SVL_PHASE_COUNT][2] = {
[SVL_FREE]      = {"free", "no lease"},
[SVL_HELD]      = {"held", "leased to a holder"},
[SVL_GRACE]     = {"grace", "leased, its holder disconnected: the pool's "
    "grace runs (clients see held, disconnected)"},
[SVL_UNCLAIMED] = {"unclaimed", "restored after a supervisor restart, "
    "waiting for its holder's claim"},
};

static const char *const event_names[SLE_COUNT][2] = {
[SLE_GRANT]      = {"grant", "an acquire, or the hand-over to a waiter, "
    "gets the slot"},
[SLE_RESTORE]    = {"restore", "sv_lease_restore puts a journaled lease "
    "back"},
[SLE_CLAIM]      = {"claim", "its holder claims it with its token "
    "(validated first)"},
[SLE_RENEW]      = {"renew", "its holder renews it (not unclaimed: "
    "CONFLICT)"},
[SLE_RELEASE]    = {"release", "its holder releases it, or its session "
    "is closed"},
[SLE_ABORT]      = {"abort", "the shell could not prepare its resource"},
[SLE_REVOKE]     = {"revoke", "its holder was reaped (holder-gone) or its "
    "session expired"},
[SLE_DISCONNECT] = {"disconnect", "its holder's last connection is gone, "
    "the pool has a grace"},
[SLE_CUT]        = {"cut", "its holder's last connection is gone, the "
    "pool has no grace"},
[SLE_RECONNECT]  = {"reconnect", "a connection of its holder is back"},
[SLE_TIMER]      = {"timer", "its slot timer fired, nothing is due yet"},
[SLE_EXPIRE]     = {"expire", "its slot timer fired, the TTL is over"},
[SLE_GRACE_OVER] = {"grace_over", "its slot timer fired, the grace is "
    "over"},
[SLE_CLAIM_OVER] = {"claim_over", "its slot timer fired, the claim grace "
    "is over"},
};
/* clang-format on */

/* svl_phase_name names a slot state as the docs do. */
const char *
svl_phase_name(svl_phase st)
{
	return (unsigned) st < SVL_PHASE_COUNT ? phase_names[st][0] : "?";
}

/* svl_phase_doc says in one line what a slot state means. */
const char *
svl_phase_doc(svl_phase st)
{
	return (unsigned) st < SVL_PHASE_COUNT ? phase_names[st][1] : "?";
}

/* svl_event_name names a slot event as the docs do. */
const char *
svl_event_name(svl_event ev)
{
	return (unsigned) ev < SLE_COUNT ? event_names[ev][0] : "?";
}

/* svl_event_doc says in one line what a slot event is. */
const char *
svl_event_doc(svl_event ev)
{
	return (unsigned) ev < SLE_COUNT ? event_names[ev][1] : "?";
}
