"""Identity: which worker am I (group, ordinal, generation, context...).

Design: an Identity is a plain, immutable Python value. A live answer is
copied out of the C sv_identity handle at once and the handle freed in the
same function, so an Identity owns no C memory, survives fork(), and can be
pickled or compared. Two sources fill it:

- ``Identity.from_env()`` reads the SUPERVISE_* variables the supervisor set
  at spawn: zero round trips, through the C library's
  sv_identity_from_env (one contract for every binding). They are a snapshot that
  every descendant inherits, so fields the environment does not carry are
  None: ``pid`` (the worker's pid is not in the environment, and a
  descendant's own pid would be wrong) and ``group_size`` (changes with
  scale). ``source`` is "env".
- ``Identity._from_result()`` (used by ``Client.whoami``) reads a live
  answer, which the supervisor established from the kernel's credentials of
  the connection, from the flat struct sv_client_whoami_copy filled (one
  foreign call for the round trip and every field); ``_from_handle()``
  reads the same from an sv_identity handle (the fallback for an answer
  too large for that struct). ``source`` is "live".

``Identity.key`` is the tuple (supervisor_id, group, ordinal, generation)
that names one process lifetime (docs/protocol.md section 7); the env and
live identities of one worker have the same key.

Every value read from the environment is bounded and checked by
sv_identity_from_env like the protocol bounds it: a group name of 1..64
characters of [A-Za-z0-9_.-], an ordinal that fits uint32, a generation that
fits uint64, text up to 1024 bytes. A bad value raises InvalidArgument
naming the variable.
"""

import ctypes
from typing import NamedTuple, Optional, Tuple

from . import _enums, _lib
from .errors import error_for

ENV_URL = _enums.ENV_URL  # SV_ENV_URL
ENV_GROUP = "SUPERVISE_GROUP"
ENV_ORDINAL = "SUPERVISE_ORDINAL"
ENV_GENERATION = "SUPERVISE_GENERATION"
ENV_PURPOSE = "SUPERVISE_PURPOSE"
ENV_SUPERVISOR_ID = "SUPERVISE_SUPERVISOR_ID"

# Bounds of the protocol (docs/protocol.md): names and free text.
MAX_NAME = 64
MAX_TEXT = 1024
MAX_URL = 511


# Kind of a worker or of a context frame (sv_kind), generated from client.h.
Kind = _enums.Kind


_KINDS = {int(k): k for k in Kind}


def _kind(value):
    """Kind for a C value; an unknown (newer) value stays a plain int."""
    kind = _KINDS.get(value)
    return int(value) if kind is None else kind


class Frame(NamedTuple):
    """One level of a worker's context: kind, ordinal, name (group)."""

    kind: Kind
    ordinal: int
    name: str

    def __str__(self):
        kind = "thread" if self.kind == Kind.THREAD else "process"
        return "%s:%s/%d" % (kind, self.name, self.ordinal)


class Identity(NamedTuple):
    """The answer to "which worker am I".

    group, ordinal (0..group_size-1, durable across restarts), generation
    (0 for the first process of the ordinal, +1 at every spawn), kind,
    pid (the worker's pid; None from the environment), purpose,
    supervisor_id, context (frames, outermost first, the worker last),
    parent (the frame above the worker, None for a top-level process),
    group_size (None from the environment), source ("env" or "live"),
    draining and drain_deadline_in_ms (live only: the process was told to
    drain, and the time left before SIGKILL; None from the environment).
    """

    group: str
    ordinal: int
    generation: int
    kind: Kind
    pid: Optional[int]
    purpose: str
    supervisor_id: str
    context: Tuple[Frame, ...]
    parent: Optional[Frame]
    group_size: Optional[int]
    source: str
    # v1.3: told to drain (live answers only; None from the environment)
    # and the milliseconds left before SIGKILL (0 when not draining).
    draining: Optional[bool] = None
    drain_deadline_in_ms: Optional[int] = None

    @property
    def key(self):
        """(supervisor_id, group, ordinal, generation): names one process
        lifetime."""
        return (self.supervisor_id, self.group, self.ordinal, self.generation)

    def describe(self):
        """One line: "web[1] generation 0 pid 42 of 3, purpose ..."."""
        return "%s[%d] generation %d pid %s of %s, purpose \"%s\", " \
            "context %s, parent %s" % (
                self.group, self.ordinal, self.generation,
                "?" if self.pid is None else self.pid,
                "?" if self.group_size is None else self.group_size,
                self.purpose, " > ".join(str(f) for f in self.context),
                "none" if self.parent is None else str(self.parent))

    @classmethod
    def from_env(cls, environ=None):
        """Reads the identity from SUPERVISE_* variables: no round trip.

        The contract is the C library's sv_identity_from_env (client.h),
        called here, so Python, Ruby, Lua and C accept and refuse the same
        environments. environ (a mapping) is passed to it as an envp array;
        None reads the process environment. Raises NotAWorker when a
        variable is absent, InvalidArgument when one is malformed or over
        its bound (the message names the variable). pid and group_size are
        None: the environment does not carry them.
        """
        cdll = _lib.lib()
        res = _lib.WhoamiResult()
        res.size = ctypes.sizeof(res)
        if environ is None:
            envp = None
        else:
            items = [("%s=%s" % (k, v)).encode("utf-8", "surrogateescape")
                     for k, v in environ.items()
                     if k.startswith("SUPERVISE_")]
            envp = (ctypes.c_char_p * (len(items) + 1))(*items, None)
        err = cdll.sv_identity_from_env(envp, ctypes.byref(res))
        if err != 0:
            reason = res.text.decode("utf-8", "replace") if res.size else ""
            raise error_for(err, reason or "cannot read the environment")
        f = res.fields
        group = f.group.decode("utf-8", "surrogateescape")
        return cls(group=group, ordinal=f.ordinal, generation=f.generation,
                   kind=_kind(f.kind), pid=None,
                   purpose=f.purpose.decode("utf-8", "surrogateescape"),
                   supervisor_id=f.supervisor_id.decode(
                       "utf-8", "surrogateescape"),
                   context=(Frame(Kind.PROCESS, f.ordinal, group),),
                   parent=None, group_size=None, source="env")

    @classmethod
    def _from_handle(cls, cdll, handle):
        """Copies a live sv_identity (not freed here) into an Identity."""
        text = _lib.text
        f = _lib.IdentityFields()
        f.size = ctypes.sizeof(f)
        err = cdll.sv_identity_get_fields(handle, ctypes.byref(f))
        if err != 0:
            raise error_for(err, "cannot read the identity")
        frames = []
        # The protocol bounds a reply; bound the walk all the same.
        for i in range(min(f.frame_count, 64)):
            frame = _read_frame(cdll.sv_identity_frame, handle, i)
            if frame is not None:
                frames.append(frame)
        parent = _read_frame(cdll.sv_identity_parent, handle)
        return cls(group=text(f.group),
                   ordinal=f.ordinal,
                   generation=f.generation,
                   kind=_kind(f.kind),
                   pid=f.pid,
                   purpose=text(f.purpose),
                   supervisor_id=text(f.supervisor_id),
                   context=tuple(frames), parent=parent,
                   group_size=f.group_size,
                   source="live",
                   draining=bool(f.draining),
                   drain_deadline_in_ms=f.drain_deadline_in_ms)

    @classmethod
    def _from_result(cls, res):
        """Copies a filled sv_whoami_result (_lib.WhoamiResult) into an
        Identity: the same values as _from_handle, read from caller memory
        that sv_client_whoami_copy filled in one foreign call."""
        f = res.fields
        frames = tuple([
            _tuple_new(Frame, (_kind(fr.kind), fr.ordinal,
                               fr.name.decode("utf-8", "replace")))
            for fr in res.frames[:min(res.n_frames, 64)]])
        if res.has_parent:
            fr = res.parent
            parent = _tuple_new(Frame, (_kind(fr.kind), fr.ordinal,
                                        fr.name.decode("utf-8", "replace")))
        else:
            parent = None
        # The order of the fields of Identity (a NamedTuple).
        return _tuple_new(cls, (
            f.group.decode("utf-8", "replace"), f.ordinal, f.generation,
            _kind(f.kind), f.pid, f.purpose.decode("utf-8", "replace"),
            f.supervisor_id.decode("utf-8", "replace"), frames, parent,
            f.group_size, "live", bool(f.draining),
            f.drain_deadline_in_ms))


# tuple.__new__: builds a NamedTuple from its values in field order,
# without the keyword handling of its generated __new__.
_tuple_new = tuple.__new__


def _read_frame(fn, handle, *index):
    """Reads a frame through sv_identity_frame/_parent; None if absent."""
    kind = ctypes.c_int()
    ordinal = ctypes.c_uint32()
    name = ctypes.c_char_p()
    err = fn(handle, *index, ctypes.byref(kind), ctypes.byref(ordinal),
             ctypes.byref(name))
    if err == 4 and not index:  # SV_ENOTFOUND: a top-level process
        return None
    if err != 0:
        if index:
            return None
        raise error_for(err, "cannot read the parent frame")
    return Frame(_kind(kind.value), ordinal.value, _lib.text(name.value))

