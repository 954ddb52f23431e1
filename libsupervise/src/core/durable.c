/*
 * durable.c — the journal records each supervision event makes
 * (pure decision core; durable.h says what is decided and why).
 */
#include "core/durable.h"

/* d_add appends record kind k to plan (SV_DURABLE_MAX bounds the callers). */
static void
d_add(sv_durable_plan *plan, sv_jkind k)
{
	if (plan->n < SV_DURABLE_MAX) {
		plan->kinds[plan->n++] = k;
	}
}

/* sv_durable_release: see durable.h. */
bool
sv_durable_release(const sv_event *ev, const sv_durable_facts *f)
{
	/* What an operator released (a drain, a terminate, a scale-down);
	 * not a worker of a temporary group that completed, which the next
	 * supervisor runs again as before. */
	if (ev->kind != SV_EV_DRAINING && ev->kind != SV_EV_STOPPING
	    && ev->kind != SV_EV_STOPPED) {
		return false;
	}
	if (ev->kind != SV_EV_DRAINING && ev->why != SV_WHY_UNWANTED
	    && ev->why != SV_WHY_DRAINED) {
		return false;
	}
	/* Not while shutting down or deleting the group: those leave what
	 * is wanted as it was. Once per release: a terminate says STOPPING,
	 * then STOPPED. */
	return f->group_known && !f->deleting && !f->shutting_down
	    && f->seat_known && !f->seat_wanted && !f->released;
}

/* sv_durable_records: see durable.h. */
void
sv_durable_records(
    const sv_event *ev, const sv_durable_facts *f, sv_durable_plan *out)
{
	out->n = 0;
	if (!f->group_known) {
		return;
	}
	switch (ev->kind) {
	case SV_EV_STARTED:
	case SV_EV_ADOPTED:
		if (!f->proc_known) {
			return;
		}
		d_add(out, SV_J_STARTED);
		if (ev->kind == SV_EV_ADOPTED && f->ready) {
			d_add(out, SV_J_READY);
		}
		return;
	case SV_EV_READY:
		d_add(out, SV_J_READY);
		return;
	case SV_EV_STOPPING:
		d_add(out, SV_J_STOPPING);
		if (sv_durable_release(ev, f)) {
			d_add(out, SV_J_FREED);
		}
		return;
	case SV_EV_DRAINING:
	case SV_EV_STOPPED:
		if (sv_durable_release(ev, f)) {
			d_add(out, SV_J_FREED);
		}
		return;
	case SV_EV_EXITED:
		d_add(out, SV_J_REAPED);
		return;
	case SV_EV_GROUP_SCALED:
	case SV_EV_GROUP_CREATED:
		d_add(out, SV_J_GROUP);
		return;
	case SV_EV_GROUP_DELETED:
		d_add(out, SV_J_DELETED);
		return;
	default:
		return;
	}
}
