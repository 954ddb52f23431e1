"""Events: a reader of the supervisor's event stream (sv_events).

Design:

- An ``Events`` wraps one ``sv_events *`` handle of the C client, which
  subscribes to the supervisor's event socket (nng PUB/SUB, docs/protocol.md
  section 9) with no thread of its own. It is opened when created, so events
  published from then on are kept; PUB keeps nothing for a subscriber that
  is not connected yet (see ``Client.events`` and the tests for a way to
  know the subscription is live).
- Each event is copied into an immutable ``Event`` and the C event freed at
  once, like every result of this package.
- Waiting is always bounded: ``poll(timeout)`` returns None when nothing
  came in time; iterating waits up to the reader's ``wait`` for each event
  (None: forever, the default) and raises Timeout when it passes.
- ``prefix`` filters on the topic: "w/GROUP/" every worker of a group,
  "w/GROUP/ORDINAL/" one worker, "g/GROUP/" the group's own events; None or
  "" keeps everything. Keep the final "/" (docs/protocol.md, "Topics").
- fork(): the C reader is fork-safe like the client: a handle used in a
  child drops the inherited socket without touching it and connects anew
  (events published in between are lost to the child, as to any
  reconnecting reader). The binding gives every reader a fresh lock in the
  child (``os.register_at_fork``), and catches a fork the hook did not see
  by comparing ``os.getpid()``.
- Events are numbered (``seq``) by the supervisor; an unfiltered reader
  that sees a jump has lost events and should read the state again
  (``Client.list``, ``Client.groups``).
"""

import ctypes
import os
import threading
import weakref
from typing import NamedTuple

from . import _lib
from .errors import ConnectionClosed, InvalidArgument, Timeout, error_for
from .identity import MAX_URL

# Longest topic prefix the C reader accepts.
MAX_PREFIX = 200
_UNSET = object()


class Event(NamedTuple):
    """One event. ``kind``: "started", "ready", "exited", "stopping",
    "stopped", "restart_scheduled", "unresponsive", "escalated",
    "spawn_failed", "status_text", "group_failed", "group_reset",
    "group_scaled", ... or "unknown" (a kind from a newer supervisor).
    ``time`` is seconds since the epoch (float, as ``time.time()``);
    ``details`` the kind's fields as "key=value" words ("code=3
    uptime_ms=12"; "" when none). ``ordinal``, ``generation`` and ``pid``
    are 0 in group events (``is_worker`` False)."""

    seq: int
    kind: str
    group: str
    ordinal: int
    generation: int
    pid: int
    time: float
    details: str
    is_worker: bool
    supervisor_id: str

    @property
    def time_unix_ms(self):
        """``time`` in whole milliseconds since the epoch, as sent."""
        return int(round(self.time * 1000))


def _event(cdll, e):
    """Copies a C sv_event (not freed here) into an Event."""
    text = _lib.text
    return Event(
        seq=cdll.sv_event_seq(e),
        kind=text(cdll.sv_event_kind(e)),
        group=text(cdll.sv_event_group(e)),
        ordinal=cdll.sv_event_ordinal(e),
        generation=cdll.sv_event_generation(e),
        pid=cdll.sv_event_pid(e),
        time=cdll.sv_event_time_unix_ms(e) / 1000.0,
        details=text(cdll.sv_event_details(e)) or "",
        is_worker=bool(cdll.sv_event_is_worker(e)),
        supervisor_id=text(cdll.sv_event_supervisor_id(e)))


class _Handle:
    """The mutable part of an Events, shared with its finalizer."""

    __slots__ = ("ptr", "pid", "lock")

    def __init__(self):
        self.ptr = None
        self.pid = os.getpid()
        self.lock = threading.Lock()

    def after_fork(self):
        self.pid = os.getpid()
        self.lock = threading.Lock()

    def close(self):
        ptr, self.ptr = self.ptr, None
        if ptr is not None:
            _lib.lib().sv_events_close(ptr)


_readers = weakref.WeakSet()


def _after_fork_in_child():
    for reader in list(_readers):
        reader._h.after_fork()


os.register_at_fork(after_in_child=_after_fork_in_child)


def _encode(value, what, limit):
    """Encodes an optional str argument for C (None stays None)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidArgument("%s must be a str or None, not %r"
                              % (what, value))
    raw = value.encode("utf-8", "surrogateescape")
    if b"\0" in raw or len(raw) > limit:
        raise InvalidArgument("%s must be at most %d bytes without NUL"
                              % (what, limit))
    return raw


class Events:
    """A subscription to the supervisor's events; an iterator and a
    context manager.

    prefix: topic prefix to keep (None: all). url: the event socket
    ("ipc://DIR/events.sock"; None: beside $SUPERVISE_URL, else beside the
    default control socket; ``Client.events()`` asks the supervisor).
    timeout: seconds to connect (None: forever). wait: seconds each step of
    an iteration waits for the next event before raising Timeout (None:
    forever). Raises ConnectError when nobody listens by the deadline,
    InvalidArgument for a bad url or prefix.
    """

    def __init__(self, prefix=None, url=None, timeout=5.0, wait=None):
        from .client import timeout_ms
        self.prefix = prefix or ""
        self.url = url
        timeout_ms(wait)  # validate now
        self.wait = wait
        raw_prefix = _encode(prefix, "prefix", MAX_PREFIX)
        raw_url = _encode(url, "url", MAX_URL)
        cdll = _lib.lib()
        self._h = _Handle()
        out = ctypes.c_void_p()
        err = cdll.sv_events_open(ctypes.byref(out), raw_url, raw_prefix,
                                  timeout_ms(timeout))
        if err != 0:
            raise error_for(err, "cannot subscribe to %s" % (
                url or "the default event socket"))
        self._h.ptr = out.value
        self._finalizer = weakref.finalize(self, _Handle.close, self._h)
        _readers.add(self)

    def __repr__(self):
        return "<supervise.Events %s prefix %r%s>" % (
            self.url or "(default)", self.prefix,
            " closed" if self._h.ptr is None else "")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __iter__(self):
        return self

    def __next__(self):
        event = self.poll(self.wait)
        if event is None:
            raise Timeout("no event within %s s" % self.wait)
        return event

    def poll(self, timeout=None):
        """Waits up to timeout seconds (None: forever) for the next event.

        Returns an Event, or None when none came in time. Raises
        ConnectionClosed or ConnectError when the supervisor went away (the
        next call reconnects; the events in between are lost),
        ProtocolError for an undecodable event, ConnectionClosed after
        close().
        """
        from .client import timeout_ms
        ms = timeout_ms(timeout)
        cdll = _lib.lib()
        h = self._h
        if h.pid != os.getpid():
            h.after_fork()
        with h.lock:
            if h.ptr is None:
                raise ConnectionClosed("the event reader was closed")
            out = ctypes.c_void_p()
            err = cdll.sv_events_next(h.ptr, ms, ctypes.byref(out))
            if err == 102:  # SV_ETIMEDOUT: nothing came
                return None
            if err != 0:
                raise error_for(err, _lib.text(
                    cdll.sv_events_error_message(h.ptr)))
            try:
                return _event(cdll, out.value)
            finally:
                cdll.sv_event_free(out.value)

    def close(self):
        """Unsubscribes. Idempotent; in a child closes only its copy."""
        h = self._h
        if h.pid != os.getpid():
            h.after_fork()
        with h.lock:
            h.close()

    @property
    def closed(self):
        """True after close()."""
        return self._h.ptr is None


def events(prefix=None, url=None, timeout=5.0, wait=None):
    """Subscribes to the supervisor's events: returns an Events (iterator,
    context manager). See Events for the arguments::

        with supervise.events("w/web/") as evs:
            for ev in evs:
                print(ev.seq, ev.kind, ev.group, ev.ordinal, ev.generation)
    """
    return Events(prefix=prefix, url=url, timeout=timeout, wait=wait)
