"""Identity._from_result: reading an sv_whoami_result (client.h) filled by
hand, without a supervisor: every field lands where Identity has it, the
parent is None without has_parent, unknown kinds stay ints, frames are
bounded by n_frames and bytes that are not UTF-8 are replaced."""

import ctypes

from supervise import Frame, Identity, Kind
from supervise import _lib


def filled(strings, n_frames, has_parent, kinds=(1, 2)):
    """A WhoamiResult whose strings point into its own text area."""
    res = _lib.WhoamiResult()
    res.size = ctypes.sizeof(res)
    base = ctypes.addressof(res) + _lib.WhoamiResult.text.offset
    ptrs, at = [], 0
    for s in strings:
        ctypes.memmove(base + at, s + b"\0", len(s) + 1)
        ptrs.append(ctypes.cast(base + at, ctypes.c_char_p))
        at += len(s) + 1
    f = res.fields
    f.size = ctypes.sizeof(_lib.IdentityFields)
    f.group, f.purpose, f.supervisor_id = ptrs[0], ptrs[1], ptrs[2]
    f.pid, f.generation, f.drain_deadline_in_ms = 4242, 7, 1500
    f.frame_count, f.ordinal, f.group_size = n_frames, 3, 5
    f.kind, f.draining = kinds[1], 1
    res.n_frames, res.has_parent = n_frames, has_parent
    res.parent.name, res.parent.ordinal, res.parent.kind = ptrs[3], 3, kinds[0]
    res.frames[0].name, res.frames[0].ordinal, res.frames[0].kind = \
        ptrs[3], 3, kinds[0]
    res.frames[1].name, res.frames[1].ordinal, res.frames[1].kind = \
        ptrs[4], 0, kinds[1]
    return res


def test_every_field():
    res = filled([b"web", b"serve", b"sup-1", b"web", b"pool-0"], 2, 1)
    me = Identity._from_result(res)
    assert me == Identity(
        group="web", ordinal=3, generation=7, kind=Kind.THREAD, pid=4242,
        purpose="serve", supervisor_id="sup-1",
        context=(Frame(Kind.PROCESS, 3, "web"), Frame(Kind.THREAD, 0, "pool-0")),
        parent=Frame(Kind.PROCESS, 3, "web"), group_size=5, source="live",
        draining=True, drain_deadline_in_ms=1500)
    assert type(me.kind) is Kind and type(me.context[0]) is Frame


def test_no_parent_and_bounded_frames():
    res = filled([b"web", b"p", b"s", b"web", b"x"], 1, 0)
    me = Identity._from_result(res)
    assert me.parent is None
    assert me.context == (Frame(Kind.PROCESS, 3, "web"),)


def test_unknown_kind_and_bad_utf8():
    res = filled([b"web", b"caf\xe9", b"s", b"web", b"x"], 1, 0,
                 kinds=(9, 9))
    me = Identity._from_result(res)
    assert me.kind == 9 and type(me.kind) is int
    assert me.context[0].kind == 9
    assert me.purpose == "caf\ufffd"
