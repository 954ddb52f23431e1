"""supervise: the Python binding of libsupervise ("which worker am I?").

A process started by ``supervised`` asks for its durable, bounded identity::

    import supervise
    me = supervise.whoami()              # live, over the control socket
    me = supervise.whoami(live=False)    # from SUPERVISE_*, no round trip
    print(me.group, me.ordinal, me.generation)

A worker reports readiness, status and liveness about itself::

    supervise.ready("listening on :8000")   # STARTING -> RUNNING (ready=true)
    supervise.status("42 requests queued")  # status line (also marks ready)
    supervise.heartbeat()                   # re-arms the group's watchdog

and anyone may follow what happens (``supervise.events()``).

The package wraps the C client library libsupervise.so.0 with ctypes
(``_lib``: loading; ``errors``: one exception class per sv_err code;
``identity``: Identity and Frame; ``client``: Client and the default client;
``events``: the event reader;
``leases``: Lease, Session, Pool; ``drain``: Drain and the drain reports).
A worker takes leases and drains::

    with supervise.lease("metrics", slot=me.ordinal) as l:  # released after
        write(l.resource, fence=l.token)
    d = supervise.Drain(handler=lambda n: stop_accepting())
    while not d.draining: serve()
    d.ack(served)

Later protocol features (activity, sub-workers) get one module each.
Timeouts are in seconds; ``None`` waits forever.
"""

import os

from ._lib import ENV_LIBRARY, SONAME, LibraryNotFound, library_version
from .client import DEFAULT_TIMEOUT, Client, default_client, default_url
from .replies import Durability, GroupInfo, Hello, State, WorkerStatus
from .errors import Error, error_class, error_for
# One class per sv_err code (errors._TABLE).
from .errors import (BadRequest, Busy, Conflict, ConnectError, DeadlinePassed,
                     ConnectionClosed, Exhausted, InternalError,
                     InvalidArgument, NotAWorker, NotFound, OutOfMemory,
                     PermissionDenied, ProtocolError, SystemFailure, Timeout,
                     TooLarge, UnknownMessage, UnsupportedVersion)
from .events import Event, Events, events
from .leases import Lease, Pool, Session
from .drain import Drain, DrainedWorker, DrainNotice, DrainReport
from .identity import ENV_URL, Frame, Identity, Kind
from .subworker import child_identity, subworker, thread_identity
from ._activity import activity, depth as activity_depth

__version__ = "0.1.0"

from .client import _UNSET  # noqa: E402  (the sentinel Client methods know)


def whoami(live=True, timeout=_UNSET):
    """Returns this process's Identity.

    live=True asks the supervisor through the default client (one round
    trip; the supervisor identifies the caller by the kernel's credentials).
    live=False reads SUPERVISE_* (``Identity.from_env()``). Raises NotAWorker
    outside a supervised worker (or a descendant of one); timeout in seconds,
    by default the default client's (5 s).
    """
    if not live:
        return Identity.from_env()
    if not os.environ.get(ENV_URL):
        raise NotAWorker("%s is not set: this process was not started by "
                         "a supervisor" % ENV_URL)
    client = default_client()
    if timeout is _UNSET:
        return client.whoami()
    return client.whoami(timeout=timeout)


def _worker_client(what):
    """The default client for a call a worker makes about itself; raises
    NotAWorker without a round trip when $SUPERVISE_URL is not set."""
    if not os.environ.get(ENV_URL):
        raise NotAWorker("%s is not set: this process was not started by "
                         "a supervisor, it cannot %s" % (ENV_URL, what))
    return default_client()


def ready(status=None, timeout=_UNSET):
    """Tells the supervisor that this worker is ready (Client.ready), with
    an optional status line. Raises NotAWorker outside a worker,
    PermissionDenied in a descendant of one."""
    client = _worker_client("report readiness")
    if timeout is _UNSET:
        return client.ready(status)
    return client.ready(status, timeout=timeout)


def status(text, timeout=_UNSET):
    """Sets this worker's status line (Client.set_status). In protocol
    v1.1 the line travels with Ready, so this also marks the worker
    ready. Errors as ready()."""
    client = _worker_client("report a status")
    if timeout is _UNSET:
        return client.set_status(text)
    return client.set_status(text, timeout=timeout)


def heartbeat(timeout=_UNSET):
    """Re-arms this worker's watchdog (Client.heartbeat). Errors as
    ready()."""
    client = _worker_client("send a heartbeat")
    if timeout is _UNSET:
        return client.heartbeat()
    return client.heartbeat(timeout=timeout)


def lease(pool, slot=None, wait=0, session=None, timeout=_UNSET):
    """Acquires a lease through the default client (Client.lease); use it
    as ``with supervise.lease("metrics", slot=me.ordinal) as l:`` to
    release it when the block ends, also on an exception. A worker holds
    it itself; another process names a Session."""
    client = default_client() if session is not None else \
        _worker_client("hold a lease without a session")
    return client.lease(pool, slot=slot, wait=wait, session=session,
                        timeout=timeout)


def leases(pool=None, session=None, timeout=_UNSET):
    """This worker's (or session's) leases (Client.leases)."""
    return default_client().leases(pool, session=session, timeout=timeout)


def session(ttl, timeout=_UNSET):
    """Opens a lease session through the default client (Client.session)."""
    return default_client().session(ttl, timeout=timeout)


def draining(timeout=_UNSET):
    """Whether this worker was told to drain, from WhoAmI (one round trip;
    ``Drain`` reads the notice from the event socket instead)."""
    return bool(whoami(timeout=timeout).draining)


def drain_extend(seconds, timeout=_UNSET):
    """Asks for this draining worker's deadline to be now + seconds
    (Client.drain_extend)."""
    _worker_client("extend a drain").drain_extend(seconds, timeout=timeout)


def drain_ack(served=0, timeout=_UNSET):
    """Tells the supervisor this worker has drained (Client.drain_ack)."""
    _worker_client("acknowledge a drain").drain_ack(served, timeout=timeout)


def hello(timeout=_UNSET):
    """Hello through the default client: returns a Hello."""
    client = default_client()
    if timeout is _UNSET:
        return client.hello()
    return client.hello(timeout=timeout)


__all__ = [
    "Client", "DEFAULT_TIMEOUT", "Durability", "ENV_LIBRARY", "Error",
    "Event", "Events",
    "Frame", "GroupInfo", "Hello", "Identity", "Kind", "LibraryNotFound",
    "SONAME", "State", "WorkerStatus", "default_client", "default_url",
    "error_class", "error_for", "events", "heartbeat", "hello",
    "library_version", "ready", "status", "whoami",
    "Lease", "Pool", "Session", "lease", "leases", "session",
    "Drain", "DrainNotice", "DrainReport", "DrainedWorker", "draining",
    "drain_extend", "drain_ack",
    "thread_identity", "subworker", "child_identity",
    "activity", "activity_depth",
    # One class per sv_err code, in code order (errors.CLASS_NAMES).
    "BadRequest", "UnsupportedVersion", "UnknownMessage", "NotFound",
    "PermissionDenied", "Exhausted", "Busy", "TooLarge", "InternalError",
    "NotAWorker", "Conflict", "DeadlinePassed", "InvalidArgument", "OutOfMemory", "Timeout",
    "ConnectError", "ConnectionClosed", "ProtocolError", "SystemFailure",
]
