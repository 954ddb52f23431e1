"""Exceptions: one class per sv_err code, all under supervise.Error.

Design: libsupervise has a single error type, sv_err (supervise.h), whose
numbers are stable and only ever appended; codes 1..10 are the protocol's
ErrorCode values, so a typed error sent by the supervisor arrives unchanged.
This module mirrors that table once (``_TABLE``) and builds one class per
code from it. ``error_for(code, message)`` turns any code into an instance:
a known code gives its class, an unknown one (a newer library or
supervisor) gives the base class ``Error`` with the number kept in
``.code``.

Every instance carries ``.code`` (int), ``.name`` (the C name without the
SV_ prefix, "ENOTFOUND") and ``.message`` (the supervisor's one-line message
or a local detail, may be ""). Names and descriptions come from the library's
sv_err_name()/sv_strerror() when it is loaded; the table's copies are used
only when it is not (``import supervise`` works without the library), and
the tests check that both agree.

A few classes also derive from the built-in exception that Python code
already catches for the same condition: ``Timeout`` is a ``TimeoutError``,
``InvalidArgument`` a ``ValueError``, ``ConnectError`` and
``ConnectionClosed`` are ``ConnectionError``, ``OutOfMemory`` a
``MemoryError``.
"""

from . import _lib

# code, Python class name, C name (sv_err_name), sv_strerror text, extra base.
# Append only, in step with SV_ERR_MAP in supervise/supervise.h.
_TABLE = (
    (1, "BadRequest", "EBADREQ", "bad request", None),
    (2, "UnsupportedVersion", "EVERSION", "unsupported protocol version",
     None),
    (3, "UnknownMessage", "EUNKNOWNMSG", "unknown message", None),
    (4, "NotFound", "ENOTFOUND", "not found", None),
    (5, "PermissionDenied", "EPERM", "permission denied", None),
    (6, "Exhausted", "EEXHAUSTED", "resource exhausted", None),
    (7, "Busy", "EBUSY", "busy", None),
    (8, "TooLarge", "ETOOLARGE", "too large", None),
    (9, "InternalError", "EINTERNAL", "internal error", None),
    (10, "NotAWorker", "ENOTWORKER", "caller is not a supervised worker",
     None),
    (11, "Conflict", "ECONFLICT",
     "state changed (expected generation differs)", None),
    (12, "DeadlinePassed", "EDEADLINE",
     "deadline passed before it could be served", TimeoutError),
    (100, "InvalidArgument", "EINVAL", "invalid argument", ValueError),
    (101, "OutOfMemory", "ENOMEM", "out of memory", MemoryError),
    (102, "Timeout", "ETIMEDOUT", "timed out", TimeoutError),
    (103, "ConnectError", "ECONNECT", "cannot connect to supervisor",
     ConnectionError),
    (104, "ConnectionClosed", "ECLOSED", "connection closed", ConnectionError),
    (105, "ProtocolError", "EPROTO", "protocol error in reply", None),
    (106, "SystemFailure", "ESYSTEM", "system call failed", None),
)

# Codes 1..SERVER_ERR_MAX are refusals sent by the supervisor (protocol
# ErrorCode values, SV_SERVER_ERR_MAX); from 100 up, local failures.
SERVER_ERR_MAX = 99

_NAMES = {row[0]: row[2] for row in _TABLE}
_STRERROR = {row[0]: row[3] for row in _TABLE}


def _loaded_lib():
    """The library if it can be loaded, else None (errors never need it)."""
    try:
        return _lib.lib()
    except _lib.LibraryNotFound:
        return None


def err_name(code):
    """sv_err_name(code): "ENOTFOUND", or "UNKNOWN" for an unknown code."""
    cdll = _loaded_lib()
    if cdll is not None and -(2 ** 31) <= code < 2 ** 31:
        return _lib.text(cdll.sv_err_name(code))
    return _NAMES.get(code, "UNKNOWN")


def strerror(code):
    """sv_strerror(code): "not found", or "unknown error"."""
    cdll = _loaded_lib()
    if cdll is not None and -(2 ** 31) <= code < 2 ** 31:
        return _lib.text(cdll.sv_strerror(code))
    return _STRERROR.get(code, "unknown error")


class Error(Exception):
    """Base class of every error of libsupervise.

    Attributes: code (int, the sv_err value), name ("ENOTFOUND"), message
    (the supervisor's message or a local detail; may be "").
    """

    __module__ = "supervise"
    # Set on each subclass; None on the base, which takes any code.
    CODE = None

    def __init__(self, message="", code=None):
        if code is None:
            code = self.CODE if self.CODE is not None else 0
        self.code = int(code)
        self.name = err_name(self.code)
        self.message = message or ""
        text = "%s: %s" % (self.name, strerror(self.code))
        if self.message:
            text += ": " + self.message
        super().__init__(text)

    @property
    def from_supervisor(self):
        """True for a refusal sent by the supervisor (codes 1..99), False
        for a local failure (timeout, connection, memory...)."""
        return 1 <= self.code <= SERVER_ERR_MAX

    def __reduce__(self):
        # Keep code and message through pickling (multiprocessing).
        return (error_for, (self.code, self.message))


_BY_CODE = {}


def _make_classes():
    """Creates one subclass of Error per row of _TABLE."""
    made = {}
    for code, cls_name, c_name, _msg, extra in _TABLE:
        bases = (Error,) if extra is None else (Error, extra)
        doc = "sv_err SV_%s (%d): %s." % (c_name, code, _STRERROR[code])
        cls = type(cls_name, bases, {"CODE": code, "__doc__": doc,
                                     "__module__": "supervise"})
        _BY_CODE[code] = cls
        made[cls_name] = cls
    return made


globals().update(_make_classes())
CLASS_NAMES = tuple(row[1] for row in _TABLE)


def error_class(code):
    """Returns the class for code, or Error for a code this binding lacks."""
    return _BY_CODE.get(code, Error)


def error_for(code, message=""):
    """Returns an exception instance for sv_err code (not raised)."""
    cls = error_class(code)
    if cls is Error:
        return Error(message, code=code)
    return cls(message)


def codes():
    """Returns the sv_err codes this binding has a class for, ascending."""
    return tuple(row[0] for row in _TABLE)
