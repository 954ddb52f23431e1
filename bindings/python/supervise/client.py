"""Client: a connection to the supervisor, over the C client (client.h).

Design:

- A Client wraps one ``sv_client *`` handle. It connects lazily on its first
  call (or at once with ``open()`` / ``with Client() as c``), and every
  result is copied into an immutable Python value with the C result handle
  freed in the same function, so nothing returned holds C memory.
- Timeouts are in **seconds** (int or float), like ``socket.settimeout`` and
  ``subprocess``; ``None`` waits forever. Each method takes ``timeout=``,
  defaulting to the client's ``timeout`` (5 s unless given). The timeout is one
  deadline for the whole method: connecting (when the handle is opened
  lazily) and the request share it. It is converted to the C API's
  milliseconds, rounded up, at most 2**31-1.
- Errors raise the class of their sv_err code (errors.py), with the
  supervisor's message from ``sv_client_error_message``.
- Threads: a Python lock guards the handle (opening and closing);
  the C handle serialises its calls anyway. ctypes releases the GIL during
  each C call, so a blocked call does not stop other threads.
- fork(): the C client is fork-safe (client.h): a handle used in a child
  drops the inherited descriptor without writing to it (the parent's
  connection goes on untouched) and connects anew within that call's
  deadline, so the supervisor sees the child's own credentials, and
  sv_client_close in a child closes only the child's copy. The binding keeps
  its own state correct across fork(): an ``os.register_at_fork`` hook gives
  every Client (the default client included) a fresh lock in the child, as
  a thread of the parent may have held the old one and only the forking
  thread exists in the child. A fork the hook did not see (a C extension
  calling fork()) is caught by comparing ``os.getpid()`` with the pid the
  lock belongs to, on every call. A finalizer closes the handle when the
  Client is collected.

Worker calls (``ready``, ``heartbeat``, ``set_status``) are requests a
worker makes about itself: the supervisor checks the kernel's credentials of
the connection, so they work only in the worker process itself (a
descendant gets PermissionDenied, any other process NotAWorker). The event
reader is a module of its own (events.py); ``Client.events()`` opens one at
the event socket this client's supervisor announces.

The values it returns (Hello, WorkerStatus, GroupInfo) and how they are
read from the C result handles live in replies.py. Leases (leases.py) and
drain (drain.py) are modules of their own; the
Client methods ``lease``, ``leases``, ``session``, ``drain``... call them.
"""

import ctypes
import math
import os
import threading
import time
import weakref

from . import _lib
from .errors import ConnectionClosed, InvalidArgument, TooLarge, error_for
from .identity import ENV_URL, MAX_NAME, MAX_TEXT, MAX_URL, Identity
from .replies import group_of, hello_of, worker_of

DEFAULT_TIMEOUT = 5.0
# sv_err SV_ETOOLARGE: sv_client_whoami_copy's answer does not fit.
_ETOOLARGE = TooLarge.CODE
# The largest C timeout (int milliseconds).
_MAX_MS = 2 ** 31 - 1
_UNSET = object()


def timeout_ms(timeout):
    """Converts a timeout in seconds (None: forever) to C milliseconds.

    Raises InvalidArgument for a negative, NaN or non-numeric value.
    """
    if timeout is None:
        return -1
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise InvalidArgument("timeout must be a number of seconds or None, "
                              "not %r" % (timeout,))
    if math.isnan(timeout) or timeout < 0:
        raise InvalidArgument("timeout must be >= 0 seconds, not %r"
                              % (timeout,))
    if math.isinf(timeout):
        return -1
    return min(int(math.ceil(timeout * 1000)), _MAX_MS)


def _name_arg(name, what="group"):
    """Encodes a group name for C; bounds it and refuses NUL bytes."""
    if not isinstance(name, str):
        raise InvalidArgument("%s must be a str, not %r" % (what, name))
    raw = name.encode("utf-8", "surrogateescape")
    if b"\0" in raw or not 1 <= len(raw) <= MAX_NAME:
        raise InvalidArgument("%s must be 1..%d characters of "
                              "[A-Za-z0-9_.-]" % (what, MAX_NAME))
    return raw


def _text_arg(text, what="status"):
    """Encodes free text for C: at most MAX_TEXT bytes, no NUL."""
    if not isinstance(text, str):
        raise InvalidArgument("%s must be a str, not %r" % (what, text))
    raw = text.encode("utf-8", "surrogateescape")
    if b"\0" in raw or len(raw) > MAX_TEXT:
        raise InvalidArgument("%s must be at most %d bytes without NUL"
                              % (what, MAX_TEXT))
    return raw


def _u64_arg(value, what):
    """Checks an int in 0..2**64-1."""
    if isinstance(value, bool) or not isinstance(value, int) \
            or not 0 <= value <= 2 ** 64 - 1:
        raise InvalidArgument("%s must be an int in 0..2**64-1, not %r"
                              % (what, value))
    return value


def _u32_arg(value, what):
    """Checks an int in 0..2**32-1 (ctypes would truncate silently)."""
    if isinstance(value, bool) or not isinstance(value, int) \
            or not 0 <= value <= 2 ** 32 - 1:
        raise InvalidArgument("%s must be an int in 0..4294967295, not %r"
                              % (what, value))
    return value


def default_url():
    """The default control socket URL (sv_default_url), as supervised uses."""
    buf = ctypes.create_string_buffer(MAX_URL + 1)
    err = _lib.lib().sv_default_url(buf, len(buf))
    if err != 0:
        raise error_for(err, "cannot compute the default socket URL")
    return _lib.text(buf.value)


class _Conn:
    """The mutable part of a Client, shared with its finalizer."""

    __slots__ = ("handle", "pid", "lock", "closed", "whoami_res",
                 "whoami_ref", "whoami_last")

    def __init__(self):
        self.handle = None
        self.pid = os.getpid()
        self.lock = threading.Lock()
        self.closed = False
        # whoami's out-parameter (sv_whoami_result, about 10 KB), made on
        # first use and reused under the lock; a reference to pass it; the
        # Identity built from the answer it holds (immutable, so a call
        # whose answer is unchanged returns it again).
        self.whoami_res = None
        self.whoami_ref = None
        self.whoami_last = None

    def after_fork(self):
        """In a child: a fresh lock; the C handle reconnects by itself."""
        self.pid = os.getpid()
        self.lock = threading.Lock()

    def close(self):
        """Closes the handle (in a child, only the child's copy)."""
        handle, self.handle = self.handle, None
        if handle is not None:
            _lib.lib().sv_client_close(handle)


# Every live Client, so that the fork hook can reset them.
_clients = weakref.WeakSet()


def _after_fork_in_child():
    for client in list(_clients):
        client._conn.after_fork()


os.register_at_fork(after_in_child=_after_fork_in_child)


class Client:
    """A connection to a supervisor (sv_client), a context manager.

    url: "ipc:///path/control.sock"; None means $SUPERVISE_URL, else the
    default socket (``default_url()``). timeout: the default timeout of
    every method, in seconds (None: forever). Creating a Client does not
    connect; the first call does (or ``open()``).
    """

    def __init__(self, url=None, timeout=DEFAULT_TIMEOUT):
        if url is None:
            url = os.environ.get(ENV_URL) or default_url()
        if not isinstance(url, str):
            raise InvalidArgument("url must be a str, not %r" % (url,))
        raw = url.encode("utf-8", "surrogateescape")
        if b"\0" in raw or not 0 < len(raw) <= MAX_URL:
            raise InvalidArgument("url must be 1..%d bytes without NUL"
                                  % MAX_URL)
        timeout_ms(timeout)  # validate now rather than at the first call
        self.url = url
        self.timeout = timeout
        self._url = raw
        self._conn = _Conn()
        self._finalizer = weakref.finalize(self, _Conn.close, self._conn)
        _clients.add(self)

    def __repr__(self):
        return "<supervise.Client %s%s>" % (
            self.url, " closed" if self._conn.closed else "")

    def __enter__(self):
        self.open()
        return self

    def __exit__(self, *exc):
        self.close()

    # ---- connection -------------------------------------------------------

    def _deadline(self, timeout):
        """Absolute monotonic deadline for a call (None: forever)."""
        if timeout is _UNSET:
            timeout = self.timeout
        timeout_ms(timeout)
        if timeout is None or math.isinf(timeout):
            return None
        return time.monotonic() + timeout

    @staticmethod
    def _left_ms(deadline):
        """Milliseconds left until deadline, for the C API (-1: forever)."""
        if deadline is None:
            return -1
        left = deadline - time.monotonic()
        return timeout_ms(left) if left > 0 else 0

    def _handle_locked(self, cdll, deadline):
        """The handle of this process, opened if needed (lock held)."""
        conn = self._conn
        if conn.closed:
            raise ConnectionClosed("the client was closed")
        if conn.handle is None:
            out = ctypes.c_void_p()
            err = cdll.sv_client_open(ctypes.byref(out), self._url,
                                      self._left_ms(deadline))
            if err != 0:
                detail = _lib.text(cdll.sv_client_error_message(None))
                raise error_for(err, "cannot connect to %s%s" % (
                    self.url, ": " + detail if detail else ""))
            conn.handle = out.value
        return conn.handle

    def _call(self, timeout, request):
        """Runs request(cdll, handle, ms) under the lock; raises on error.

        request returns an sv_err; a non-zero one raises its class with the
        client's error message.
        """
        cdll = _lib.lib()
        deadline = self._deadline(timeout)
        conn = self._conn
        if conn.pid != os.getpid():
            conn.after_fork()  # a fork the hook did not see
        with conn.lock:
            handle = self._handle_locked(cdll, deadline)
            err = request(cdll, handle, self._left_ms(deadline))
            if err != 0:
                raise error_for(err, _lib.text(
                    cdll.sv_client_error_message(handle)))

    def _call_out(self, timeout, start, copy, free):
        """Runs a request whose answer the C library allocates.

        start(cdll, handle, ms, outp) is the request of _call with outp, a
        pointer to a void * the library sets on success. Then copy(cdll,
        obj) turns that object into Python values, which are returned, and
        free(cdll, obj) frees it (also when copy raises): the object never
        outlives this call.
        """
        result = []

        def request(cdll, handle, ms):
            out = ctypes.c_void_p()
            err = start(cdll, handle, ms, ctypes.byref(out))
            if err == 0:
                try:
                    result.append(copy(cdll, out.value))
                finally:
                    free(cdll, out.value)
            return err

        self._call(timeout, request)
        return result[0]

    def open(self, timeout=_UNSET):
        """Connects now (a no-op when this process is connected already).

        Raises ConnectError when nobody listens before the timeout,
        ConnectionClosed after close().
        """
        self._call(timeout, lambda cdll, handle, ms: 0)

    def close(self):
        """Disconnects. Idempotent; later calls raise ConnectionClosed."""
        conn = self._conn
        if conn.pid != os.getpid():
            conn.after_fork()
        with conn.lock:
            conn.closed = True
            conn.close()

    @property
    def closed(self):
        """True after close()."""
        return self._conn.closed

    # ---- requests ---------------------------------------------------------

    def hello(self, timeout=_UNSET):
        """Exchanges Hello: protocol version, server name, supervisor id,
        features, events URL, the journal's durability. Returns a Hello."""
        return self._call_out(
            timeout, lambda cdll, h, ms, out: cdll.sv_client_hello(h, ms, out),
            hello_of, lambda cdll, obj: cdll.sv_hello_free(obj))

    def whoami(self, timeout=_UNSET):
        """Asks the supervisor which worker this process is (live).

        The supervisor answers from the kernel's credentials of the
        connection: this process or its nearest supervised ancestor.
        Raises NotAWorker for any other process.

        Every call makes the round trip. One foreign call
        (sv_client_whoami_copy) does it and fills the connection's reusable
        result struct under the lock; the Identity is copied out of it
        before the lock is released, or, when the answer is byte for byte
        the one the struct held (``unchanged``), the Identity built from
        that answer is returned again (it is immutable; equal values, so
        the same object). With the handle open already, the timeout is the
        request's whole deadline, as _call would compute it, without
        reading the clock.
        """
        cdll = _lib.lib()
        if timeout is _UNSET:
            timeout = self.timeout
        conn = self._conn
        if conn.pid != os.getpid():
            conn.after_fork()  # a fork the hook did not see
        with conn.lock:
            handle = conn.handle
            if handle is None or conn.closed:
                deadline = self._deadline(timeout)
                handle = self._handle_locked(cdll, deadline)
                ms = self._left_ms(deadline)
            else:
                ms = timeout_ms(timeout)
            res = conn.whoami_res
            if res is None:
                res = conn.whoami_res = _lib.WhoamiResult()
                res.size = ctypes.sizeof(res)
                conn.whoami_ref = ctypes.byref(res)
            err = cdll.sv_client_whoami_copy(handle, ms, conn.whoami_ref)
            if err == 0:
                last = conn.whoami_last
                if last is None or not res.unchanged:
                    last = conn.whoami_last = Identity._from_result(res)
                return last
            if err != _ETOOLARGE:
                raise error_for(err, _lib.text(
                    cdll.sv_client_error_message(handle)))
        # An answer beyond the protocol's bounds: read it through a handle.
        return self._whoami_handle(timeout)

    def _whoami_handle(self, timeout=_UNSET):
        """whoami through an sv_identity handle (any size of answer)."""
        return self._call_out(
            timeout, lambda cdll, h, ms, out: cdll.sv_client_whoami(h, ms, out),
            Identity._from_handle,
            lambda cdll, obj: cdll.sv_identity_free(obj))

    def _workers(self, timeout, start):
        """Runs a list/status request and copies the sv_workers out."""
        return self._call_out(
            timeout, start,
            lambda cdll, w: [worker_of(cdll, w, i) for i in
                             range(min(cdll.sv_workers_count(w), 65536))],
            lambda cdll, w: cdll.sv_workers_free(w))

    def list(self, group=None, timeout=_UNSET):
        """Lists the workers of group, or of every group when None.

        Returns a list of WorkerStatus. Raises NotFound for an unknown group.
        """
        raw = None if group is None else _name_arg(group)
        return self._workers(timeout, lambda cdll, h, ms, out:
                             cdll.sv_client_list(h, raw, ms, out))

    def status(self, group, ordinal, timeout=_UNSET):
        """Reads one worker slot. Returns a WorkerStatus.

        Raises NotFound for an unknown group or no worker at ordinal.
        """
        raw = _name_arg(group)
        ordinal = _u32_arg(ordinal, "ordinal")
        return self._workers(timeout, lambda cdll, h, ms, out:
                             cdll.sv_client_status(h, raw, ordinal, ms,
                                                   out))[0]

    def scale(self, group, count, timeout=_UNSET):
        """Sets the number of workers of group; returns the previous one.

        Raises NotFound, Exhausted (count above max_count), Busy.
        """
        raw = _name_arg(group)
        count = _u32_arg(count, "count")
        previous = ctypes.c_uint32()
        self._call(timeout, lambda cdll, h, ms: cdll.sv_client_scale(
            h, raw, count, ms, ctypes.byref(previous)))
        return previous.value

    def stop(self, group, timeout=_UNSET):
        """Stops every worker of group; returns the previous target size.

        ``scale`` starts the group again. Raises NotFound, Busy.
        """
        raw = _name_arg(group)
        previous = ctypes.c_uint32()
        self._call(timeout, lambda cdll, h, ms: cdll.sv_client_stop(
            h, raw, ms, ctypes.byref(previous)))
        return previous.value

    def restart(self, group, ordinal, expected_generation=None,
                timeout=_UNSET):
        """Restarts one worker: same ordinal, next generation.

        With expected_generation (the generation read from ``status``), a
        compare-and-swap: the worker restarts only if its generation is
        still that one, else Conflict and nothing changes; such a request
        is safe to resend and the library resends it after a lost
        connection. Without it, not idempotent: a connection lost
        mid-request raises ConnectionClosed and is not retried.
        Raises NotFound, Busy (the group failed: reset it), Conflict.
        """
        raw = _name_arg(group)
        ordinal = _u32_arg(ordinal, "ordinal")
        if expected_generation is None:
            self._call(timeout, lambda cdll, h, ms: cdll.sv_client_restart(
                h, raw, ordinal, ms))
            return
        expected = _u64_arg(expected_generation, "expected_generation")
        self._call(timeout, lambda cdll, h, ms: cdll.sv_client_restart_if(
            h, raw, ordinal, expected, ms))

    def reset(self, group, timeout=_UNSET):
        """Clears the failed state of group (restart intensity exceeded),
        its restart history and its workers' backoff, and starts them
        again. Harmless on a group that has not failed.
        Raises NotFound, Busy.
        """
        raw = _name_arg(group)
        self._call(timeout, lambda cdll, h, ms: cdll.sv_client_reset(
            h, raw, ms))

    def groups(self, group=None, timeout=_UNSET):
        """Lists the groups (only group when given) as GroupInfo, in the
        order of the config file. Raises NotFound for an unknown group."""
        raw = None if group is None else _name_arg(group)
        return self._call_out(
            timeout,
            lambda cdll, h, ms, out: cdll.sv_client_groups(h, raw, ms, out),
            lambda cdll, g: [group_of(cdll, g, i) for i in
                             range(min(cdll.sv_groups_count(g), 65536))],
            lambda cdll, g: cdll.sv_groups_free(g))

    # ---- a worker about itself ---------------------------------------------

    def ready(self, status=None, timeout=_UNSET):
        """Tells the supervisor that this worker is ready, with an optional
        status line (at most 1024 bytes; the supervisor keeps 255).

        A worker of a group with ``ready = true`` is STARTING until it calls
        this. Only the worker process itself may: a descendant gets
        PermissionDenied, any other process NotAWorker. Calling it again
        changes nothing but the status line.
        """
        raw = None if status is None else _text_arg(status)
        self._call(timeout, lambda cdll, h, ms: cdll.sv_client_ready(
            h, raw, ms))

    def set_status(self, text, timeout=_UNSET):
        """Sets this worker's status line (``WorkerStatus.status_text``).

        In protocol v1.1 the status line travels with Ready, so this is
        ``ready(text)``: it also marks the worker ready. Errors as ready.
        """
        _text_arg(text)  # a str is required here, None is not
        self.ready(text, timeout=timeout)

    def heartbeat(self, timeout=_UNSET):
        """Tells the supervisor that this worker is alive: re-arms its
        group's watchdog (``watchdog_ms``). Errors as ready."""
        self._call(timeout, lambda cdll, h, ms: cdll.sv_client_heartbeat(
            h, ms))

    def events(self, prefix=None, timeout=_UNSET):
        """Opens an event reader (events.Events) on the event socket this
        client's supervisor announces in Hello, keeping the events whose
        topic starts with prefix ("w/GROUP/", "w/GROUP/ORDINAL/",
        "g/GROUP/"; None: all). One timeout covers the Hello and the
        connection."""
        from .events import Events
        deadline = self._deadline(timeout)
        url = self.hello(timeout=_seconds_left(deadline)).events_url
        if not url:
            raise error_for(2, "the supervisor announces no event socket "
                            "(protocol v1.0)")
        return Events(prefix=prefix, url=url,
                      timeout=_seconds_left(deadline))

    # ---- leases (leases.py) -------------------------------------------------

    def lease(self, pool, slot=None, wait=0, session=None, timeout=_UNSET):
        """Acquires a lease on pool: on slot (e.g. this worker's ordinal) or,
        with None, the lowest free one, waiting up to wait seconds (0: not
        at all) for one to be freed. session: a Session (or its id) for a
        holder that is not a worker; None: this worker. A holder that holds
        a lease in the pool already gets that one again. Returns a Lease, a
        context manager that releases it.
        Raises NotFound (no such pool or session), Exhausted (no free
        slot), Busy (the slot is taken), DeadlinePassed (the wait ended
        with none), Conflict, NotAWorker (no session outside a worker),
        PermissionDenied (another uid's session).
        """
        from .leases import acquire as _acquire
        return _acquire(self, pool, slot, wait, session, timeout)

    def lease_renew(self, lease, session=None, timeout=_UNSET):
        """Renews a lease (a Lease or its id) by its pool's TTL; returns the
        renewed Lease. Raises NotFound, PermissionDenied, Conflict."""
        from .leases import renew as _renew
        if session is None and not isinstance(lease, int):
            session = lease.session or None
        return _renew(self, lease, session, timeout)

    def lease_release(self, lease, session=None, timeout=_UNSET):
        """Releases a lease (a Lease or its id); one that is gone already
        is fine. Raises PermissionDenied when the caller is not its
        holder."""
        from .leases import release as _release
        if session is None and not isinstance(lease, int):
            session = lease.session or None
        _release(self, lease, session, timeout)

    def lease_claim(self, pool, slot, token, session=None, timeout=_UNSET):
        """Claims back, after a supervisor restart, the lease held on
        (pool, slot) with token. Raises NotFound, Conflict."""
        from .leases import claim as _claim
        return _claim(self, pool, slot, token, session, timeout)

    def leases(self, pool=None, session=None, timeout=_UNSET):
        """Lists leases (of pool, or all): an administrator sees every one,
        a worker its own, a session's owner that session's. Returns a list
        of Lease."""
        from .leases import listing as _listing
        return _listing(self, pool, session, timeout)

    def session(self, ttl, timeout=_UNSET):
        """Opens a lease session living ttl seconds unless renewed; returns
        a Session (a context manager that closes it)."""
        from .leases import open_session as _open_session
        return _open_session(self, ttl, timeout)

    def pools(self, timeout=_UNSET):
        """Lists the lease pools as leases.Pool values."""
        from .leases import pools as _pools
        return _pools(self, timeout)

    # ---- drain (drain.py) ---------------------------------------------------

    def drain(self, group=None, ordinal=None, deadline=0, timeout=_UNSET):
        """Drains (administration): every worker when group is None, every
        worker of group when ordinal is None, else one. deadline: seconds
        before SIGKILL (0: the group's drain_timeout_ms). Returns the
        drain's first DrainReport; follow it with drain_report(). Raises
        NotFound, PermissionDenied, Busy, Exhausted."""
        from .drain import drain as _drain
        return _drain(self, group, ordinal, deadline, timeout)

    def drain_report(self, drain_id, timeout=_UNSET):
        """The current DrainReport of a drain (its id or a report)."""
        from .drain import report as _report
        return _report(self, drain_id, timeout)

    def drain_extend(self, seconds, timeout=_UNSET):
        """The calling worker, draining, asks for its deadline to be now +
        seconds (capped by drain_extend_max_ms). Raises NotFound when it is
        not draining, NotAWorker, PermissionDenied in a descendant."""
        from .drain import extend as _extend
        _extend(self, seconds, timeout)

    def drain_ack(self, served=0, timeout=_UNSET):
        """The calling worker has drained and exits next, having served
        served work items. Errors as drain_extend."""
        from .drain import ack as _ack
        _ack(self, served, timeout)


def _seconds_left(deadline):
    """Seconds until a monotonic deadline (None: forever), at least 0."""
    if deadline is None:
        return None
    return max(0.0, deadline - time.monotonic())


# ---- the module-level default client ---------------------------------------

_default = None
_default_lock = threading.Lock()


def _reset_default_lock():
    global _default_lock
    _default_lock = threading.Lock()


os.register_at_fork(after_in_child=_reset_default_lock)


def default_client():
    """The process's shared Client, created on first use from $SUPERVISE_URL.

    It connects lazily and reconnects on its own in a forked child.
    """
    global _default
    client = _default
    if client is None:
        with _default_lock:
            if _default is None:
                _default = Client()
            client = _default
    return client
