"""Leases: slots of supervisor-owned pools, with fencing tokens.

Design (docs/leases.md; protocol section 11):

- A ``Lease`` is an immutable copy of what the supervisor answered (id,
  pool, slot, fencing token, resource path, expiry, holder); the C
  ``sv_lease`` is freed in the function that read it, so a Lease owns no C
  memory and survives fork(). It remembers the Client and the session it
  was acquired with, so ``renew()`` and ``release()`` speak for the same
  holder.
- The holder is the calling worker as the kernel identifies it, or, for a
  process that is not a worker (a tool, a forked child that wants a lease
  of its own), a ``Session`` it opened and names. A worker's forked child
  is identified as the worker, so it holds the worker's lease unless it
  uses a session.
- The scoped form ``with supervise.lease("metrics", slot=me.ordinal) as l:``
  releases on leaving the block, also on an exception; a failed release
  there never hides the block's own exception.
- Times are in seconds (``wait``, ``timeout``, ``ttl``), like the rest of
  the package; ``expires_in_ms`` is kept as sent (0: no TTL).
- fork(): every call goes through Client._call, whose C handle reconnects
  in a child (client.py), so a child can acquire at once; no thread is
  involved.
"""

import ctypes
from typing import NamedTuple

from . import _enums, _lib
from .errors import InvalidArgument

# SV_LEASE_ANY_SLOT: "the lowest free slot".
ANY_SLOT = _enums.LEASE_ANY_SLOT
from .client import _UNSET  # noqa: E402  (one sentinel for Client._call)
# A wait is sent as uint32 milliseconds.
_MAX_WAIT_MS = 2 ** 32 - 1


class Pool(NamedTuple):
    """One pool, as ``Client.pools()`` lists it."""

    name: str
    slots: int
    held: int
    ttl_ms: int
    grace_ms: int
    path: str
    on_release: str
    kind: str


class Lease:
    """A lease: ``id``, ``pool``, ``slot``, ``token`` (the fencing token,
    strictly increasing per slot), ``resource`` (the slot's file or
    directory, "" when the pool owns none), ``expires_in_ms`` (time left
    when the supervisor answered; 0: no TTL), ``holder`` ("GROUP/ORD@GEN"
    or "session:ID"), ``unclaimed`` and ``epoch``. A context manager that
    releases on exit."""

    __slots__ = ("id", "pool", "slot", "token", "resource", "expires_in_ms",
                 "holder", "unclaimed", "epoch", "session", "_client",
                 "released")

    def __init__(self, client, session, **fields):
        for name, value in fields.items():
            setattr(self, name, value)
        self.session = session
        self._client = client
        self.released = False

    def __repr__(self):
        return "<supervise.Lease %d %s[%d] token %d%s%s>" % (
            self.id, self.pool, self.slot, self.token,
            " " + self.resource if self.resource else "",
            " released" if self.released else "")

    def renew(self, timeout=_UNSET):
        """Extends the lease by its pool's TTL; returns the renewed Lease.
        Raises NotFound (gone), PermissionDenied (not the holder),
        Conflict (restored after a restart: claim it first)."""
        return self._client.lease_renew(self.id, session=self.session,
                                        timeout=timeout)

    def release(self, timeout=_UNSET):
        """Ends the lease (releasing one that is gone succeeds). Raises
        PermissionDenied when this process is not its holder."""
        self._client.lease_release(self.id, session=self.session,
                                   timeout=timeout)
        self.released = True

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            self.release()
        except Exception:
            if exc_type is None:
                raise
            # The block's own exception is the one to see.
        return False


class Session:
    """A lease session of a process that is not a worker: its ``id`` is
    passed as ``session=`` to lease calls; its leases end with it. A
    context manager that closes it on exit."""

    __slots__ = ("id", "ttl", "_client")

    def __init__(self, client, session_id, ttl):
        self.id = session_id
        self.ttl = ttl
        self._client = client

    def __repr__(self):
        return "<supervise.Session %d>" % self.id

    def lease(self, pool, slot=None, wait=0, timeout=_UNSET):
        """Acquires a lease held by this session (Client.lease)."""
        return self._client.lease(pool, slot=slot, wait=wait,
                                  session=self.id, timeout=timeout)

    def leases(self, pool=None, timeout=_UNSET):
        """This session's leases (Client.leases)."""
        return self._client.leases(pool, session=self.id, timeout=timeout)

    def renew(self, timeout=_UNSET):
        """Restarts the session's TTL. Raises NotFound when it expired."""
        sid = self.id
        self._client._call(timeout, lambda cdll, h, ms:
                           cdll.sv_client_session_renew(h, sid, ms))

    def close(self, timeout=_UNSET):
        """Closes the session, ending its leases (idempotent)."""
        sid = self.id
        self._client._call(timeout, lambda cdll, h, ms:
                           cdll.sv_client_session_close(h, sid, ms))

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            self.close()
        except Exception:
            if exc_type is None:
                raise
        return False


def _pool_arg(pool, optional=False):
    """Encodes a pool name (1..64 bytes, no NUL); None when optional."""
    if pool is None and optional:
        return None
    if not isinstance(pool, str):
        raise InvalidArgument("pool must be a str, not %r" % (pool,))
    raw = pool.encode("utf-8", "surrogateescape")
    if b"\0" in raw or not 1 <= len(raw) <= 64:
        raise InvalidArgument("pool must be 1..64 characters of "
                              "[A-Za-z0-9_.-]")
    return raw


def _session_arg(session):
    """A session id (int or Session) as uint64; None or 0: the caller."""
    if session is None:
        return 0
    if isinstance(session, Session):
        return session.id
    if isinstance(session, bool) or not isinstance(session, int) \
            or not 0 <= session <= 2 ** 64 - 1:
        raise InvalidArgument("session must be a Session or an id, not %r"
                              % (session,))
    return session


def _id_arg(lease_id):
    """A lease id (int or Lease) as uint64."""
    if isinstance(lease_id, Lease):
        return lease_id.id
    if isinstance(lease_id, bool) or not isinstance(lease_id, int) \
            or not 0 < lease_id <= 2 ** 64 - 1:
        raise InvalidArgument("lease must be a Lease or an id > 0, not %r"
                              % (lease_id,))
    return lease_id


def _slot_arg(slot):
    """None: any slot; else 0..2**32-1."""
    if slot is None:
        return ANY_SLOT
    if isinstance(slot, bool) or not isinstance(slot, int) \
            or not (slot == ANY_SLOT or 0 <= slot <= 2 ** 32 - 1):
        raise InvalidArgument("slot must be None or an int >= 0, not %r"
                              % (slot,))
    return slot


def _wait_ms(wait):
    """A wait in seconds (None or 0: no wait) as uint32 milliseconds."""
    if not wait:
        return 0
    if isinstance(wait, bool) or not isinstance(wait, (int, float)) \
            or wait < 0 or wait != wait:
        raise InvalidArgument("wait must be >= 0 seconds, not %r" % (wait,))
    return min(int(wait * 1000 + 0.999), _MAX_WAIT_MS)


def _copy(cdll, client, session, handle):
    """Copies a C sv_lease (not freed here) into a Lease."""
    text = _lib.text
    return Lease(client, session,
                 id=cdll.sv_lease_id(handle),
                 pool=text(cdll.sv_lease_pool(handle)),
                 slot=cdll.sv_lease_slot(handle),
                 token=cdll.sv_lease_token(handle),
                 resource=text(cdll.sv_lease_resource(handle)) or "",
                 expires_in_ms=cdll.sv_lease_expires_in_ms(handle),
                 holder=text(cdll.sv_lease_holder_name(handle)) or "",
                 unclaimed=bool(cdll.sv_lease_unclaimed(handle)),
                 epoch=cdll.sv_lease_epoch(handle))


def _one(client, session, timeout, start):
    """Runs a request that answers one sv_lease; returns the Lease."""
    return client._call_out(
        timeout, start,
        lambda cdll, lease: _copy(cdll, client, session, lease) if lease
        else None,
        lambda cdll, lease: cdll.sv_lease_free(lease))


def acquire(client, pool, slot=None, wait=0, session=None, timeout=_UNSET):
    """Client.lease: see there."""
    raw = _pool_arg(pool)
    slot = _slot_arg(slot)
    wait_ms = _wait_ms(wait)
    sid = _session_arg(session)
    return _one(client, sid, timeout, lambda cdll, h, ms, out:
                cdll.sv_client_lease_acquire(h, raw, slot, wait_ms, sid,
                                             ms, out))


def renew(client, lease_id, session=None, timeout=_UNSET):
    """Client.lease_renew: see there."""
    lid = _id_arg(lease_id)
    sid = _session_arg(session)
    return _one(client, sid, timeout, lambda cdll, h, ms, out:
                cdll.sv_client_lease_renew(h, lid, sid, ms, out))


def release(client, lease_id, session=None, timeout=_UNSET):
    """Client.lease_release: see there."""
    lid = _id_arg(lease_id)
    sid = _session_arg(session)
    client._call(timeout, lambda cdll, h, ms:
                 cdll.sv_client_lease_release(h, lid, sid, ms))


def claim(client, pool, slot, token, session=None, timeout=_UNSET):
    """Client.lease_claim: see there."""
    raw = _pool_arg(pool)
    slot = _slot_arg(slot)
    if slot == ANY_SLOT:
        raise InvalidArgument("claim needs the slot held before")
    if isinstance(token, bool) or not isinstance(token, int) \
            or not 0 < token <= 2 ** 64 - 1:
        raise InvalidArgument("token must be an int > 0, not %r" % (token,))
    sid = _session_arg(session)
    return _one(client, sid, timeout, lambda cdll, h, ms, out:
                cdll.sv_client_lease_claim(h, raw, slot, token, sid, ms,
                                           out))


def listing(client, pool=None, session=None, timeout=_UNSET):
    """Client.leases: see there."""
    raw = _pool_arg(pool, optional=True)
    sid = _session_arg(session)
    return client._call_out(
        timeout,
        lambda cdll, h, ms, out: cdll.sv_client_lease_list(h, raw, sid, ms,
                                                           out),
        lambda cdll, ls: [_copy(cdll, client, sid, cdll.sv_leases_at(ls, i))
                          for i in range(min(cdll.sv_leases_count(ls),
                                             65536))],
        lambda cdll, ls: cdll.sv_leases_free(ls))


def open_session(client, ttl, timeout=_UNSET):
    """Client.session: see there."""
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) \
            or not 0 < ttl <= 86400:
        raise InvalidArgument("ttl must be in (0, 86400] seconds, not %r"
                              % (ttl,))
    ttl_ms = max(1, int(ttl * 1000))
    out = ctypes.c_uint64()
    client._call(timeout, lambda cdll, h, ms: cdll.sv_client_session_open(
        h, ttl_ms, ms, ctypes.byref(out)))
    return Session(client, out.value, ttl)


def _pool(cdll, p, i):
    """Pool i of the sv_pools p, copied out."""
    text = _lib.text
    return Pool(name=text(cdll.sv_pools_name(p, i)),
                slots=cdll.sv_pools_slots(p, i),
                held=cdll.sv_pools_held(p, i),
                ttl_ms=cdll.sv_pools_ttl_ms(p, i),
                grace_ms=cdll.sv_pools_grace_ms(p, i),
                path=text(cdll.sv_pools_path(p, i)) or "",
                on_release=text(cdll.sv_pools_on_release(p, i)),
                kind=text(cdll.sv_pools_kind(p, i)))


def pools(client, timeout=_UNSET):
    """Client.pools: see there."""
    return client._call_out(
        timeout, lambda cdll, h, ms, out: cdll.sv_client_pools(h, ms, out),
        lambda cdll, p: [_pool(cdll, p, i) for i in
                         range(min(cdll.sv_pools_count(p), 65536))],
        lambda cdll, p: cdll.sv_pools_free(p))

