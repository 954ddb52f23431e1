"""Scoped activities (supervise.activity): nesting, popping on an exception,
per-thread stacks, no-ops without a region, after fork() and when another
live process writes the region. The region is a temporary file given in
SUPERVISE_ACTIVITY, as the supervisor would; what was recorded is read back
from the file's bytes (docs/activity.md, "Region format"), not through the
binding."""

import os
import struct
import subprocess
import sys
import threading

import pytest

import supervise
from supervise import _activity

SLOTS, SLOT0, SLOT_SIZE = 64, 64, 960


def recorded(path):
    """Open scopes over every slot, and the names of the entries."""
    with open(path, "rb") as f:
        data = f.read()
    total, names = 0, []
    for i in range(SLOTS):
        off = SLOT0 + SLOT_SIZE * i
        depth = struct.unpack_from("=I", data, off + 4)[0]
        total += depth
        for e in range(min(depth, 16)):
            raw = data[off + 16 + 56 * e + 8: off + 16 + 56 * e + 56]
            names.append(raw.split(b"\0", 1)[0].decode())
    return total, names


@pytest.fixture
def region(tmp_path, monkeypatch):
    path = str(tmp_path / "region")
    open(path, "wb").close()
    monkeypatch.setenv("SUPERVISE_ACTIVITY", path)
    _activity._close()
    yield path
    _activity._close()


def test_no_region_is_a_noop():
    _activity._close()
    with supervise.activity("x"):
        assert supervise.activity_depth() == 0
    _activity._close()


def test_nesting_composes_and_pops(region):
    with supervise.activity("request"):
        with supervise.activity("db query"):
            assert recorded(region) == (2, ["request", "db query"])
            assert supervise.activity_depth() == 2
        assert recorded(region) == (1, ["request"])
    assert recorded(region) == (0, [])


def test_scope_pops_on_exception(region):
    with pytest.raises(RuntimeError):
        with supervise.activity("outer"):
            with supervise.activity("inner"):
                assert recorded(region)[0] == 2
                raise RuntimeError("boom")
    assert recorded(region) == (0, [])
    assert supervise.activity_depth() == 0


def test_threads_have_their_own_stacks(region):
    inside, go = threading.Event(), threading.Event()

    def other():
        with supervise.activity("indexing"):
            inside.set()
            go.wait(10)

    t = threading.Thread(target=other)
    with supervise.activity("request"):
        t.start()
        assert inside.wait(10)
        assert supervise.activity_depth() == 1
        assert recorded(region) == (2, ["request", "indexing"]) or \
            recorded(region) == (2, ["indexing", "request"])
        go.set()
        t.join(10)
    assert recorded(region) == (0, [])


def test_forked_child_records_nothing(region):
    with supervise.activity("parent"):
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                with supervise.activity("child"):
                    code = 0 if supervise.activity_depth() == 0 else 1
            except BaseException:
                code = 2
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        assert recorded(region) == (1, ["parent"])


def test_region_of_another_live_process_is_left_alone(region):
    code = ("import sys, supervise\n"
            "with supervise.activity('held'):\n"
            "    print('in', flush=True)\n"
            "    sys.stdin.readline()\n")
    child = subprocess.Popen([sys.executable, "-c", code],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             env=dict(os.environ,
                                      PYTHONPATH=os.pathsep.join(sys.path)))
    try:
        assert child.stdout.readline().strip() == b"in"
        with supervise.activity("intruder"):
            assert supervise.activity_depth() == 0
        assert recorded(region) == (1, ["held"])
    finally:
        child.stdin.close()
        child.wait(10)
    # the writer is gone: this process may take the region over
    _activity._close()
    with supervise.activity("mine"):
        assert recorded(region) == (1, ["mine"])
