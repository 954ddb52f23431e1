"""Sub-workers: threads and forked children of a worker (protocol v1.4,
feature "subworkers"; docs/subworkers.md).

A thread of a worker gets a small durable number under its process, its
context ``[process p, thread t]``; a process the worker forked gets
``[process p, process c]``::

    import threading, supervise

    def work():
        me = supervise.thread_identity()   # registers this thread once
        print(me.ordinal, me.context)      # 0 [process 3 web, thread 0 ...]

    threading.Thread(target=work, name="pool-0").start()

- ``thread_identity()`` registers the calling thread under its name (or the
  label given) the first time it is called in that thread, and keeps the
  grant in a ``threading.local``. When the thread ends, that value is
  dropped and a finaliser releases the number (one short round trip; if it
  cannot run, the number is reclaimed when the process dies). A thread that
  ends and a new one with the same name get the same number back.
- ``with supervise.subworker("indexer") as me:`` registers under that label
  for the block and releases at its end, exception or not.
- ``child_identity()`` in a process forked by a worker (``os.fork``, a
  prefork server's worker) registers that process itself; its number is
  released when it exits. A forked child never releases its parent's
  grants: every grant remembers the pid that made it.

Who asks is what the kernel says (the connection's peer pid), never the
label: a thread is registered through its own process's connection, a child
through its own. Outside a worker these raise NotAWorker; a third level
(a thread of a registered child) raises TooLarge.
"""
import contextlib
import ctypes
import os
import threading
import weakref

from . import _lib
from .client import _UNSET, default_client
from .errors import Conflict, InvalidArgument, NotAWorker
from .identity import ENV_URL, Identity, Kind

# The longest label the supervisor takes, in bytes.
MAX_LABEL = 64
# The deadline of a release run by a finaliser, in seconds.
RELEASE_TIMEOUT = 1.0


def _release(client, handle, pid):
    """Releases the grant of C identity handle (made by process pid) and
    frees the handle. Never raises: it runs from finalisers."""
    try:
        if os.getpid() == pid:  # a forked child leaves its parent's alone
            client._call(RELEASE_TIMEOUT,
                         lambda cdll, h, ms:
                         cdll.sv_client_subworker_release(h, handle, ms))
    except Exception:  # noqa: BLE001  the process's death reclaims it
        pass
    finally:
        _lib.lib().sv_identity_free(handle)


class _Grant:
    """One registration: its Identity and the C handle a release names."""

    __slots__ = ("identity", "again", "pid", "_finalizer", "__weakref__")

    def __init__(self, client, handle, identity, again):
        self.identity = identity
        self.again = again
        self.pid = os.getpid()
        self._finalizer = weakref.finalize(self, _release, client, handle,
                                           self.pid)
        # At interpreter exit the process's death reclaims every number.
        self._finalizer.atexit = False

    def mine(self):
        """True when this process made the grant and it is not released."""
        return self.pid == os.getpid() and self._finalizer.alive

    def release(self):
        """Releases it now (once; later calls do nothing)."""
        self._finalizer()


def _label(label, default):
    """The label as bytes: given (1..64 bytes) or default cut to 64."""
    if label is None:
        raw = default.encode("utf-8", "surrogateescape")[:MAX_LABEL]
        return raw.decode("utf-8", "ignore").encode("utf-8")
    if not isinstance(label, str):
        raise InvalidArgument("label must be a str, not %r" % (label,))
    raw = label.encode("utf-8", "surrogateescape")
    if not 0 < len(raw) <= MAX_LABEL or b"\0" in raw:
        raise InvalidArgument("label must be 1..%d bytes without NUL"
                              % MAX_LABEL)
    return raw


def _register(kind, raw, number, tid, timeout):
    """Sends RegisterSubWorker through the default client: a _Grant."""
    if not os.environ.get(ENV_URL):
        raise NotAWorker("%s is not set: this process was not started by "
                         "a supervisor" % ENV_URL)
    if number is not None and (isinstance(number, bool)
                               or not isinstance(number, int)
                               or not 0 <= number <= 0xFFFFFFFF):
        raise InvalidArgument("number must be None or an int 0..2**32-1")
    client = default_client()
    out = ctypes.c_void_p()
    again = ctypes.c_int(0)

    def request(cdll, handle, ms):
        return cdll.sv_client_subworker_register(
            handle, int(kind), raw, -1 if number is None else number, tid,
            ms, ctypes.byref(out), ctypes.byref(again))

    if timeout is _UNSET:
        client._call(_UNSET, request)
    else:
        client._call(timeout, request)
    cdll = _lib.lib()
    try:
        identity = Identity._from_handle(cdll, out.value)
    except BaseException:
        cdll.sv_identity_free(out.value)
        raise
    return _Grant(client, out.value, identity, bool(again.value))


_local = threading.local()
_child_lock = threading.Lock()
_child = None  # the _Grant of this process as a child, or None


def _register_thread(label, number, timeout):
    """Registers the calling thread (label None: its name; a name another
    live thread holds is retried once as "name#native_id")."""
    thread = threading.current_thread()
    tid = threading.get_native_id()
    raw = _label(label, thread.name)
    try:
        return _register(Kind.THREAD, raw, number, tid, timeout)
    except Conflict:
        if label is not None or number is not None:
            raise
    return _register(Kind.THREAD, _label(None, "%s#%d" % (thread.name, tid)),
                     None, tid, timeout)


def thread_identity(label=None, number=None, timeout=_UNSET):
    """The calling thread's sub-worker Identity, registered on first use.

    label: the thread's role (default: its name); number: a wanted
    sub-ordinal (default: the one this label held last, else the lowest
    free). The Identity's ordinal and generation are the thread's number
    and sub-generation, its context [process p, thread t], its parent the
    process frame. Released when the thread ends.
    """
    grant = getattr(_local, "grant", None)
    if grant is not None and grant.mine():
        return grant.identity
    grant = _register_thread(label, number, timeout)
    _local.grant = grant
    return grant.identity


@contextlib.contextmanager
def subworker(label=None, number=None, timeout=_UNSET):
    """Registers the calling thread for a block and releases it at the end
    (exception or not); yields its Identity. Inside the block
    thread_identity() returns it too. A label this thread holds already is
    not released at the end (it belongs to the outer registration)."""
    grant = _register_thread(label, number, timeout)
    prev = getattr(_local, "grant", None)
    _local.grant = grant
    try:
        yield grant.identity
    finally:
        _local.grant = prev
        if not grant.again:
            grant.release()


def child_identity(label=None, number=None, timeout=_UNSET):
    """Registers this process, forked by a worker, as its sub-worker and
    returns the Identity (context [process p, process c]); registered once
    per process, released when it exits. Raises NotAWorker when the parent
    is no worker, PermissionDenied in the worker itself."""
    global _child
    with _child_lock:
        if _child is not None and _child.pid == os.getpid():
            return _child.identity
        raw = _label(label, "") if label is not None else None
        grant = _register(Kind.PROCESS, raw, number, 0, timeout)
        _child = grant
        return grant.identity


def _after_fork_in_child():
    """A child starts with no grant of its own (the parent's stay the
    parent's: their pid differs, so they are never released here)."""
    global _child, _child_lock
    _child_lock = threading.Lock()
    _child = None


os.register_at_fork(after_in_child=_after_fork_in_child)
