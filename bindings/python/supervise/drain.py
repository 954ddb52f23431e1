"""Drain: a worker asked to finish what it holds and exit (protocol 12).

Design:

- How a worker learns that it is draining: the supervisor publishes a
  drain notice (an event of kind "drain", details "drain_id=N
  deadline_in_ms=M") on the worker's own topic ``w/GROUP/ORDINAL/`` before
  it sends the group's ``drain_signal`` (by default the stop signal, SIGTERM;
  with ``drain_signal = "none"`` the notice is all the worker gets). A
  ``Drain`` subscribes to that topic when created (through the C event
  reader, which has no thread of its own) and reads notices only when the
  worker asks: ``poll(timeout)``, ``wait(timeout)`` or the ``draining``
  property. Handlers registered with ``on_drain`` run in the thread that
  polls, once, when the notice is first seen. Nothing runs behind the
  worker's back, so a Drain stays fork-safe like the rest of the package:
  in a forked child the reader reconnects (events.py).
- The topic is shared by an old and a new generation of one ordinal during a
  rolling restart, so a notice counts only when its generation is this
  process's ($SUPERVISE_GENERATION).
- A notice published before the subscription was live is lost (PUB keeps
  nothing); ``check()`` asks WhoAmI, whose ``draining`` field says the same
  thing with one round trip (for example after a reconnect), and
  ``supervise.draining()`` does only that.
- ``extend(seconds)`` (DrainExtend) asks for the deadline to be now +
  seconds, capped by the group's ``drain_extend_max_ms``; ``ack(served)``
  (DrainAck) tells the supervisor that the worker has drained and exits
  next, with the number of work items it served, shown in the report.
  Both come from the worker process itself (a descendant:
  PermissionDenied; a worker that is not draining: NotFound).
- The administrator's side (``Client.drain``, ``Client.drain_report``)
  returns ``DrainReport`` values: one ``DrainedWorker`` row per process.
"""

import os
import time
from typing import NamedTuple, Tuple

from . import _lib
from .errors import InvalidArgument, Timeout
from .identity import Identity

from .client import _UNSET  # noqa: E402  (one sentinel for Client._call)
_MAX_MS = 86400000  # one day, the protocol's bound on deadlines


class DrainNotice(NamedTuple):
    """A drain notice: ``drain_id`` (the drain's report), ``deadline_in_ms``
    (time left before SIGKILL when it was sent), ``received`` (the
    ``time.monotonic()`` at which this process read it) and ``source``
    ("event" or "whoami")."""

    drain_id: int
    deadline_in_ms: int
    received: float
    source: str

    @property
    def deadline(self):
        """The SIGKILL time as a ``time.monotonic()`` value (approximate)."""
        return self.received + self.deadline_in_ms / 1000.0


class DrainedWorker(NamedTuple):
    """One row of a drain report: a drained process and how it ended."""

    group: str
    ordinal: int
    generation: int
    pid: int
    reaped: bool
    exited: bool           # reaped with an exit code (else by signal)
    code: int
    signal: int
    acknowledged: bool     # it sent DrainAck
    killed: bool           # SIGKILLed at its deadline
    time_to_exit_ms: int
    served: int            # from its DrainAck


class DrainReport(NamedTuple):
    """A drain's report: ``id``, ``done`` (every row reaped), ``workers``."""

    id: int
    done: bool
    workers: Tuple[DrainedWorker, ...]


def _parse_details(details):
    """"drain_id=3 deadline_in_ms=500" -> (3, 500); bad words are 0."""
    values = {}
    for word in details.split()[:16]:
        key, _, value = word.partition("=")
        if value.isdigit() and len(value) <= 20:
            values[key] = int(value)
    return values.get("drain_id", 0), values.get("deadline_in_ms", 0)


def _ms_arg(seconds, what):
    """Seconds (> 0, at most a day) as milliseconds."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) \
            or not 0 < seconds <= _MAX_MS / 1000:
        raise InvalidArgument("%s must be in (0, 86400] seconds, not %r"
                              % (what, seconds))
    return max(1, int(seconds * 1000))


def extend(client, seconds, timeout=_UNSET):
    """Client.drain_extend: see there."""
    more = _ms_arg(seconds, "seconds")
    client._call(timeout, lambda cdll, h, ms:
                 cdll.sv_client_drain_extend(h, more, ms))


def ack(client, served=0, timeout=_UNSET):
    """Client.drain_ack: see there."""
    if isinstance(served, bool) or not isinstance(served, int) \
            or not 0 <= served <= 2 ** 64 - 1:
        raise InvalidArgument("served must be an int >= 0, not %r"
                              % (served,))
    client._call(timeout, lambda cdll, h, ms:
                 cdll.sv_client_drain_ack(h, served, ms))


def _report(cdll, r):
    """Copies a C sv_drain_report (not freed here) into a DrainReport."""
    rows = []
    for i in range(min(cdll.sv_drain_report_count(r), 65536)):
        rows.append(DrainedWorker(
            group=_lib.text(cdll.sv_drain_report_group(r, i)),
            ordinal=cdll.sv_drain_report_ordinal(r, i),
            generation=cdll.sv_drain_report_generation(r, i),
            pid=cdll.sv_drain_report_pid(r, i),
            reaped=bool(cdll.sv_drain_report_is_reaped(r, i)),
            exited=bool(cdll.sv_drain_report_exited(r, i)),
            code=cdll.sv_drain_report_code(r, i),
            signal=cdll.sv_drain_report_signal(r, i),
            acknowledged=bool(cdll.sv_drain_report_acknowledged(r, i)),
            killed=bool(cdll.sv_drain_report_killed(r, i)),
            time_to_exit_ms=cdll.sv_drain_report_time_to_exit_ms(r, i),
            served=cdll.sv_drain_report_served(r, i)))
    return DrainReport(id=cdll.sv_drain_report_id(r),
                       done=bool(cdll.sv_drain_report_done(r)),
                       workers=tuple(rows))


def _report_call(client, timeout, start):
    """Runs a request that answers an sv_drain_report; a DrainReport."""
    return client._call_out(timeout, start, _report,
                            lambda cdll, r: cdll.sv_drain_report_free(r))


def drain(client, group=None, ordinal=None, deadline=0, timeout=_UNSET):
    """Client.drain: see there."""
    from .client import _name_arg, _u32_arg
    raw = None if group is None else _name_arg(group)
    if group is None and ordinal is not None:
        raise InvalidArgument("an ordinal needs a group")
    ordv = -1 if ordinal is None else _u32_arg(ordinal, "ordinal")
    deadline_ms = 0 if not deadline else _ms_arg(deadline, "deadline")
    return _report_call(client, timeout, lambda cdll, h, ms, out:
                        cdll.sv_client_drain(h, raw, ordv, deadline_ms, ms,
                                             out))


def report(client, drain_id, timeout=_UNSET):
    """Client.drain_report: see there."""
    if isinstance(drain_id, DrainReport):
        drain_id = drain_id.id
    if isinstance(drain_id, bool) or not isinstance(drain_id, int) \
            or not 0 < drain_id <= 2 ** 64 - 1:
        raise InvalidArgument("drain id must be an int > 0, not %r"
                              % (drain_id,))
    return _report_call(client, timeout, lambda cdll, h, ms, out:
                        cdll.sv_client_drain_report(h, drain_id, ms, out))


class Drain:
    """A worker's view of its own drain; a context manager.

    Subscribes to ``w/GROUP/ORDINAL/`` of this worker (from SUPERVISE_*;
    NotAWorker outside one) on the supervisor's event socket. handler: an
    optional callable(DrainNotice), as ``on_drain``. client: for extend,
    ack and check (default: the default client). timeout: seconds to
    connect to the event socket.
    """

    def __init__(self, handler=None, client=None, timeout=5.0):
        from .client import default_client
        from .events import Events
        me = Identity.from_env()
        self.group = me.group
        self.ordinal = me.ordinal
        self.generation = me.generation
        self.pid = os.getpid()
        self._client = client if client is not None else default_client()
        self.notice = None
        self._handlers = []
        self._events = Events(prefix="w/%s/%d/" % (me.group, me.ordinal),
                              timeout=timeout)
        if handler is not None:
            self.on_drain(handler)

    def __repr__(self):
        return "<supervise.Drain %s[%d]%s>" % (
            self.group, self.ordinal, " draining" if self.notice else "")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Closes the subscription (the notice, if seen, is kept)."""
        self._events.close()

    def on_drain(self, handler):
        """Registers handler(DrainNotice), run once by the poll that sees
        the notice (at once if it was seen already). Returns handler, so
        it can decorate a function."""
        if not callable(handler):
            raise InvalidArgument("handler must be callable")
        self._handlers.append(handler)
        if self.notice is not None:
            handler(self.notice)
        return handler

    def _seen(self, notice):
        self.notice = notice
        for handler in list(self._handlers):
            handler(notice)

    def poll(self, timeout=0):
        """Reads the worker's events for up to timeout seconds (0: what has
        arrived; None: until the notice). Returns the DrainNotice once this
        process is draining, else None."""
        if self.notice is not None:
            return self.notice
        deadline = None if timeout is None else time.monotonic() + timeout
        # Other kinds (status_text, lease...) share the topic: skip them,
        # bounded by the deadline.
        while True:
            left = None if deadline is None else \
                max(0.0, deadline - time.monotonic())
            event = self._events.poll(left)
            if event is None:
                return None
            if event.kind == "drain" and event.generation == self.generation:
                drain_id, left_ms = _parse_details(event.details)
                self._seen(DrainNotice(drain_id, left_ms, time.monotonic(),
                                       "event"))
                return self.notice
            if deadline is not None and time.monotonic() >= deadline:
                return None

    def wait(self, timeout=None):
        """Waits up to timeout seconds for the notice; raises Timeout when
        it does not come."""
        notice = self.poll(timeout)
        if notice is None:
            raise Timeout("no drain notice within %s s" % timeout)
        return notice

    @property
    def draining(self):
        """True once the notice was seen (reads what has arrived, no
        waiting, no round trip)."""
        return self.poll(0) is not None

    def check(self, timeout=_UNSET):
        """Asks WhoAmI (one round trip) whether this process is draining,
        for a notice that may have been missed; returns the DrainNotice or
        None."""
        if self.notice is None:
            me = self._client.whoami() if timeout is _UNSET else \
                self._client.whoami(timeout=timeout)
            if me.draining:
                self._seen(DrainNotice(0, me.drain_deadline_in_ms or 0,
                                       time.monotonic(), "whoami"))
        return self.notice

    def extend(self, seconds, timeout=_UNSET):
        """DrainExtend: asks for the deadline to be now + seconds."""
        extend(self._client, seconds, timeout)

    def ack(self, served=0, timeout=_UNSET):
        """DrainAck: this worker has drained (it exits next) after serving
        served work items."""
        ack(self._client, served, timeout)

