"""The event reader, groups, reset and restart with an expected generation
against a real supervised.

A subscription is live only once the supervisor has taken the reader's
connection (PUB keeps nothing for a reader not yet connected), so each test
first asks for a no-op scale, which publishes group_scaled, and waits for
that event before acting: no sleep."""

import os
import select
import signal
import time

import pytest

import supervise
from supervise import Client, State

from svharness import Group, Supervisor, wait_until

N = 2


@pytest.fixture
def sup(daemon_path):
    s = Supervisor(daemon_path, [Group("ev", ["/bin/sleep", "3600"], N,
                                       "watched by the event tests")])
    with s:
        with Client(s.url) as c:
            wait_until(lambda: [w.state for w in c.list("ev")] ==
                       [State.RUNNING] * N, 15, "both workers running")
        yield s


def next_event(reader, deadline, match, seen):
    """Polls reader until an event satisfies match (deadline: monotonic);
    every event read is appended to seen."""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError("no matching event; saw %s" % seen)
        ev = reader.poll(left)
        if ev is not None:
            seen.append(ev)
            if match(ev):
                return ev


def sync(c, reader, group, count):
    """Makes sure reader's subscription is live: a no-op scale publishes
    group_scaled, which the reader must then receive. The PUB socket may
    attach a new reader a moment after it connects (an event published
    before is not delivered), so scale again until one arrives."""
    deadline = time.monotonic() + 10
    while True:
        c.scale(group, count)
        try:
            next_event(reader, min(deadline, time.monotonic() + 0.3),
                       lambda e: e.kind == "group_scaled"
                       and e.group == group, [])
            return
        except AssertionError:
            if time.monotonic() >= deadline:
                raise


def test_events_see_a_restart(sup):
    with Client(sup.url) as c:
        assert c.hello().events_url.endswith("/events.sock")
        one = c.events(prefix="w/ev/1/")  # opened first, see below
        with one, c.events() as every:
            sync(c, every, "ev", N)
            old = c.status("ev", 1)
            assert old.generation == 0
            c.restart("ev", 1, expected_generation=0)
            deadline = time.monotonic() + 15
            for reader in (every, one):
                seen = []
                stopping = next_event(
                    reader, deadline, lambda e: e.kind == "stopping" and
                    e.group == "ev" and e.ordinal == 1, seen)
                started = next_event(
                    reader, deadline, lambda e: e.kind == "started" and
                    e.group == "ev" and e.ordinal == 1, seen)
                assert stopping.generation == 0 and stopping.pid == old.pid
                assert stopping.details == "reason=restart"
                assert started.generation == 1
                assert started.pid not in (0, old.pid)
                assert stopping.seq < started.seq
                assert stopping.is_worker and started.is_worker
                assert started.supervisor_id == c.hello().supervisor_id
                assert abs(started.time - time.time()) < 60
                if reader is one:
                    # The filtered reader saw only worker 1 of ev (it was
                    # opened before the group_scaled of the sync).
                    assert {(e.group, e.ordinal) for e in seen} == \
                        {("ev", 1)}, seen
            new = c.status("ev", 1)
            assert new.generation == 1 and new.pid == started.pid


def test_iteration_and_timeouts(sup):
    with Client(sup.url) as c:
        with c.events(prefix="g/ev/") as reader:
            reader.wait = 10
            sync(c, reader, "ev", N)
            c.scale("ev", N)
            ev = next(iter(reader))
            assert (ev.kind, ev.group, ev.is_worker) == \
                ("group_scaled", "ev", False)
            assert ev.details == "previous=%d count=%d" % (N, N)
            assert (ev.ordinal, ev.generation, ev.pid) == (0, 0, 0)
            # Nothing more comes: poll gives None, iteration raises Timeout.
            t0 = time.monotonic()
            assert reader.poll(0.2) is None
            assert time.monotonic() - t0 >= 0.15
            reader.wait = 0.1
            with pytest.raises(supervise.Timeout):
                next(reader)
        assert reader.closed
        with pytest.raises(supervise.ConnectionClosed):
            reader.poll(0)
        reader.close()  # idempotent


def test_module_level_events_and_bad_arguments(sup, monkeypatch):
    # Without a url: beside $SUPERVISE_URL, as a worker would use it.
    monkeypatch.setenv("SUPERVISE_URL", sup.url)
    with supervise.events() as reader, Client(sup.url) as c:
        sync(c, reader, "ev", N)
    monkeypatch.delenv("SUPERVISE_URL")
    with pytest.raises(supervise.InvalidArgument):
        supervise.events(prefix="w/" + "x" * 300)
    with pytest.raises(supervise.InvalidArgument):
        supervise.events(prefix=b"w/")
    with pytest.raises(supervise.ConnectError):
        supervise.events(url="ipc://%s/none.sock" % sup.dir, timeout=0.2)


def test_groups_reset_and_conflict(sup):
    with Client(sup.url) as c:
        (info,) = c.groups("ev")
        assert info.name == "ev" and info.count == N
        assert info.purpose == "watched by the event tests"
        assert info.failed is False and info.failure_reason == ""
        assert info.restart == "permanent"
        assert info.strategy == "one_for_one"
        assert info.running == N and info.ready == N
        assert [g.name for g in c.groups()] == ["ev"]
        with pytest.raises(supervise.NotFound):
            c.groups("nope")
        with c.events(prefix="g/ev/") as reader:
            sync(c, reader, "ev", N)
            assert c.reset("ev") is None  # not failed: still accepted
            next_event(reader, time.monotonic() + 10,
                       lambda e: e.kind == "group_reset", [])
        assert c.groups("ev")[0].failed is False
        with pytest.raises(supervise.NotFound):
            c.reset("nope")
        # Compare-and-swap: a wrong expected generation changes nothing.
        before = c.status("ev", 0)
        with pytest.raises(supervise.Conflict) as e:
            c.restart("ev", 0, expected_generation=before.generation + 5)
        assert e.value.code == 11 and e.value.message
        after = c.status("ev", 0)
        assert (after.generation, after.pid, after.state) == \
            (before.generation, before.pid, State.RUNNING)
        with pytest.raises(supervise.InvalidArgument):
            c.restart("ev", 0, expected_generation=-1)


def test_reader_after_fork(sup):
    # A reader used in a forked child reconnects there on its own; the
    # parent's subscription goes on untouched.
    with Client(sup.url) as c, c.events(prefix="g/ev/") as reader:
        sync(c, reader, "ev", N)
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                reader.poll(0.3)  # reconnects; any answer is fine
                reader.close()
                code = 0
            finally:
                os._exit(code)
        pidfd = os.pidfd_open(pid)
        try:
            exited, _, _ = select.select([pidfd], [], [], 20)
        finally:
            os.close(pidfd)
        if not exited:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        assert exited, "the child hung"
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        c.scale("ev", N)
        ev = next_event(reader, time.monotonic() + 10,
                        lambda e: e.kind == "group_scaled", [])
        assert ev.group == "ev"
