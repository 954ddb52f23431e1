"""Leases and drain through the Python binding, against a real supervised.

One daemon for the module, with three pools (files: 2 slots with a file
each; p: 1 slot; forkpool: 6 slots) and two groups: "drainer" (a Python
worker that listens for its drain notice, drain_signal "none" so the notice
is all it gets) and "forker" (a worker that holds a lease and forks 4
children that each take one of their own). The test process is no worker,
so it holds leases through sessions; it is the daemon's uid, so it may
drain. Waiting is polling with a deadline.
"""

import json
import os

import pytest

import supervise
import svharness
from svharness import Group, Supervisor, wait_until

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "lease_drain_worker.py")

POOLS = """pools = (
  { name = "files"; slots = 2; path = "{dir}/res/{slot}.dat";
    on_release = "truncate"; },
  { name = "p"; slots = 1; },
  { name = "forkpool"; slots = 6; }
);"""


@pytest.fixture(scope="module")
def sup(daemon_path):
    s = Supervisor(daemon_path, [], top=POOLS)
    s.drain_out = os.path.join(s.out, "drain.json")
    s.fork_out = os.path.join(s.out, "fork.json")
    s.groups = [
        Group("drainer", svharness.python_argv(WORKER, "drain", s.drain_out),
              1, "drains on its notice",
              options={"ready": True, "drain_signal": "none",
                       "drain_timeout_ms": 10000}),
        Group("forker", svharness.python_argv(
            WORKER, "fork", s.fork_out, "forkpool"), 1,
            "holds a lease and forks"),
    ]
    with s:
        yield s


@pytest.fixture
def client(sup):
    with supervise.Client(sup.url) as c:
        yield c


def test_acquire_release_token_and_resource(sup, client):
    with client.session(10) as s:
        first = client.lease("files", slot=1, session=s)
        assert first.pool == "files" and first.slot == 1
        assert first.token > 0
        assert first.resource == os.path.join(sup.dir, "res", "1.dat")
        assert os.path.exists(first.resource)
        assert first.holder == "session:%d" % s.id
        listed = client.leases("files", session=s)
        assert [(x.id, x.token) for x in listed] == [(first.id, first.token)]
        first.release()
        assert client.leases("files", session=s) == []
        # A new lease of the slot has a larger fencing token.
        second = s.lease("files", slot=1)
        assert second.token > first.token
        renewed = second.renew()
        assert (renewed.id, renewed.token) == (second.id, second.token)
        second.release()
        assert [p.held for p in client.pools() if p.name == "files"] == [0]


def test_any_slot_and_busy(client):
    with client.session(10) as a, client.session(10) as b:
        with a.lease("p") as held:
            assert held.slot == 0
            with pytest.raises((supervise.Exhausted, supervise.Busy)):
                b.lease("p")
            with pytest.raises(supervise.DeadlinePassed):
                b.lease("p", wait=0.2, timeout=3)
        # Released by the with block: b gets it now.
        with b.lease("p") as again:
            assert again.token > held.token


def test_scoped_lease_released_on_exception(client):
    with client.session(10) as s:
        with pytest.raises(ZeroDivisionError):
            with s.lease("p") as lease:
                assert client.leases("p", session=s)[0].id == lease.id
                1 / 0
        assert lease.released
        assert client.leases("p", session=s) == []
        # The slot is free for another holder at once.
        with client.session(10) as other:
            with other.lease("p") as next_lease:
                assert next_lease.slot == 0


def test_non_holder_release_refused(client):
    with client.session(10) as owner, client.session(10) as thief:
        lease = owner.lease("p")
        with pytest.raises(supervise.PermissionDenied):
            client.lease_release(lease.id, session=thief)
        with pytest.raises(supervise.PermissionDenied):
            client.lease_renew(lease.id, session=thief)
        # Still held by its owner.
        assert [x.id for x in client.leases("p", session=owner)] == \
            [lease.id]
        lease.release()


def test_not_a_worker_needs_a_session(client):
    with pytest.raises(supervise.NotAWorker):
        client.lease("p")
    with pytest.raises(supervise.NotAWorker):
        supervise.lease("p")  # no SUPERVISE_URL: refused locally


def test_drain_worker_acks_and_exits(sup, client):
    wait_until(lambda: any(w.ready for w in client.list("drainer")), 15,
               "the drainer to be ready")
    worker = client.list("drainer")[0]
    first = client.drain("drainer", deadline=10)
    assert [(w.group, w.ordinal, w.pid) for w in first.workers] == \
        [("drainer", 0, worker.pid)]
    report = wait_until(lambda: (lambda r: r if r.done else None)(
        client.drain_report(first.id)), 15, "the drain to be done")
    row = report.workers[0]
    with open(sup.drain_out) as f:
        seen = json.load(f)
    assert seen["pid"] == worker.pid
    assert seen["notice"]["drain_id"] == first.id
    assert seen["notice"]["source"] == "event"
    assert 0 < seen["notice"]["deadline_in_ms"] <= 10000
    assert seen["handler_calls"] == 1
    assert seen["draining"] is True and seen["deadline_in_ms"] > 0
    assert row.acknowledged and not row.killed
    assert row.exited and row.code == 0
    assert row.served == seen["served"]
    # Drained: not restarted.
    assert all(w.pid != worker.pid for w in client.list("drainer"))


def test_drain_calls_outside_a_drain(client):
    with pytest.raises(supervise.NotAWorker):
        client.drain_ack(1)
    with pytest.raises(supervise.NotAWorker):
        supervise.Drain()


def test_fork_children_take_leases_of_their_own(sup, client):
    wait_until(lambda: os.path.exists(sup.fork_out), 30,
               "the forking worker's report")
    with open(sup.fork_out) as f:
        report = json.load(f)
    mine = report["mine"]
    assert mine["pool"] == "forkpool" and mine["slot"] == 0
    assert mine["holder"].startswith("forker/0@")
    assert report["renewed_token"] == mine["token"]
    children = report["children"]
    assert [c["status"] for c in children] == ["exit 0"] * 4, children
    slots = set()
    for c in children:
        answer = c["answer"]
        assert answer and "error" not in answer, answer
        assert answer["pid"] == c["pid"]
        assert answer["holder"].startswith("session:")
        assert answer["listed"] == [answer["id"]]
        assert answer["slot"] != mine["slot"]
        slots.add(answer["slot"])
    # Each got a lease of its own (they ran at once, so up to 4 slots).
    assert len({c["answer"]["id"] for c in children}) == 4
    assert slots and 0 not in slots
    # The parent still holds its lease.
    held = [x for x in client.leases("forkpool") if x.holder ==
            mine["holder"]]
    assert [x.id for x in held] == [mine["id"]]
