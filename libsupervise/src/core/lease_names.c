/*
 * lease_names.c — names of the lease core's states, events, reasons and
 * policies, for logs and events ("held", "revoked", "holder-gone",
 * "keep"...).
 */
#include "core/lease_internal.h"

/* sv_lease_state_name: see core/lease.h. */
const char *
sv_lease_state_name(sv_lease_state s)
{
	switch (s) {
	case SV_LEASE_FREE:
		return "free";
	case SV_LEASE_HELD:
		return "held";
	case SV_LEASE_UNCLAIMED:
		return "unclaimed";
	}
	return "unknown";
}

/* sv_lease_event_name: see core/lease.h. */
const char *
sv_lease_event_name(sv_lease_event_kind k)
{
	switch (k) {
	case SV_LEV_GRANTED:
		return "granted";
	case SV_LEV_RELEASED:
		return "released";
	case SV_LEV_REVOKED:
		return "revoked";
	case SV_LEV_CLAIMED:
		return "claimed";
	case SV_LEV_CLAIM_REFUSED:
		return "claim-refused";
	case SV_LEV_WAIT_TIMEOUT:
		return "wait-timeout";
	case SV_LEV_RESTORED:
		return "restored";
	case SV_LEV_DISCONNECTED:
		return "disconnected";
	case SV_LEV_RECONNECTED:
		return "reconnected";
	case SV_LEV_ABORTED:
		return "aborted";
	case SV_LEV_SESSION_OPENED:
		return "session-opened";
	case SV_LEV_SESSION_ENDED:
		return "session-ended";
	}
	return "unknown";
}

/* sv_lease_reason_name: see core/lease.h. */
const char *
sv_lease_reason_name(sv_lease_reason r)
{
	switch (r) {
	case SV_LREASON_NONE:
		return "none";
	case SV_LREASON_RELEASED:
		return "released";
	case SV_LREASON_HOLDER_GONE:
		return "holder-gone";
	case SV_LREASON_DISCONNECTED:
		return "disconnected";
	case SV_LREASON_EXPIRED:
		return "expired";
	case SV_LREASON_UNCLAIMED:
		return "unclaimed";
	case SV_LREASON_SESSION_EXPIRED:
		return "session-expired";
	case SV_LREASON_SESSION_CLOSED:
		return "session-closed";
	case SV_LREASON_ABORTED:
		return "aborted";
	}
	return "unknown";
}

/* sv_lease_policy_name: see core/lease.h. */
const char *
sv_lease_policy_name(sv_lease_policy p)
{
	switch (p) {
	case SV_LEASE_KEEP:
		return "keep";
	case SV_LEASE_TRUNCATE:
		return "truncate";
	case SV_LEASE_REMOVE:
		return "remove";
	}
	return "unknown";
}
