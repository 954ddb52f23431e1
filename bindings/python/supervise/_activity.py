"""Scoped activities: what this worker is doing, for ``supervisectl status``
and ``top`` (docs/activity.md).

    with supervise.activity("indexing"):
        with supervise.activity("parse"):    # shows "indexing: parse"
            ...

Design: the supervisor hands each worker a region file in
``$SUPERVISE_ACTIVITY``; this module opens it once per process through the
C library (``sv_activity_region_open``) and every scope is one
``sv_activity_enter`` and one ``sv_activity_leave`` on it: no round trip,
no lock in the C hot path. Each thread has its own stack, so nesting
composes per thread. A scope is left on every exit, an exception included,
so a failure never leaves a stale name.

A scope is a no-op (and costs one attribute check) when there is no region:
outside a supervised worker, with ``activity = false`` in the group, in a
child made by ``os.fork()`` (the region is the parent's: the C library
refuses to write it there), in a descendant that inherited the variable
while the worker itself has the region open (the header names a live
writer that is not this process: opening it would wipe the worker's
stacks), or when the library cannot be loaded. A scope that cannot be
recorded (more than 64 threads, deeper than 1024) is run unrecorded.
"""

import ctypes
import os
import struct
import threading

from . import _lib

ENV_ACTIVITY = "SUPERVISE_ACTIVITY"
# Header fields read before opening: magic (u32) and the writer's pid (u32
# at offset 24), in the host's byte order (docs/activity.md).
_MAGIC = 0x52415653
_HEADER = struct.Struct("=I20xI")

_lock = threading.Lock()
_pid = None  # the process _region belongs to (None: not looked up yet)
_region = None  # ctypes.c_void_p of sv_activity_region *, or None


def _reset_in_child():
    # The parent's region is not ours: the child records nothing.
    global _lock, _pid, _region
    _lock = threading.Lock()
    if _pid is not None:
        _pid = os.getpid()
        _region = None


os.register_at_fork(after_in_child=_reset_in_child)


def _owned_elsewhere(path):
    """True when the region's header names a live writer other than us."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        head = os.pread(fd, _HEADER.size, 0)
    finally:
        os.close(fd)
    if len(head) < _HEADER.size:
        return False
    magic, pid = _HEADER.unpack(head)
    if magic != _MAGIC or pid == 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _open():
    """The region of this process, opened on first use, or None."""
    global _pid, _region
    pid = os.getpid()
    if _pid == pid:
        return _region
    with _lock:
        if _pid == pid:
            return _region
        region = None
        path = os.environ.get(ENV_ACTIVITY, "")
        if path and not _owned_elsewhere(path):
            try:
                cdll = _lib.lib()
                handle = ctypes.c_void_p()
                if cdll.sv_activity_region_open(
                        ctypes.byref(handle), path.encode()) == 0:
                    region = handle
            except (_lib.LibraryNotFound, OSError):
                region = None
        _region = region
        _pid = pid
        return region


_tls = threading.local()  # per thread: a stack of "was it recorded"


class activity:
    """A context manager: the calling thread is in activity `name` (1..47
    bytes of UTF-8; longer names are cut) for the body of the ``with``.
    Reusable, also from several threads: each ``with`` is its own scope."""

    __slots__ = ("name", "_bname")

    def __init__(self, name):
        if not isinstance(name, str) or not name:
            raise ValueError("an activity name is a non-empty str")
        self.name = name
        self._bname = name.encode("utf-8", "replace")

    def __enter__(self):
        region = _region if _pid == os.getpid() else _open()
        ok = region is not None and \
            _lib.lib().sv_activity_enter(region, self._bname) == 0
        try:
            stack = _tls.stack
        except AttributeError:
            stack = _tls.stack = []
        stack.append(region if ok else None)
        return self

    def __exit__(self, exc_type, exc, tb):
        region = _tls.stack.pop()
        if region is not None:
            _lib.lib().sv_activity_leave(region)
        return False


def depth():
    """The calling thread's open recorded scopes (0 without a region)."""
    region = _open()
    if region is None:
        return 0
    d = ctypes.c_uint32()
    if _lib.lib().sv_activity_depth(region, ctypes.byref(d)) != 0:
        return 0
    return d.value


def _close():
    """Closes this process's region and forgets it (tests; a later scope
    opens it again from the environment)."""
    global _pid, _region
    with _lock:
        if _region is not None and _pid == os.getpid():
            _lib.lib().sv_activity_region_close(_region)
        _region = None
        _pid = None
