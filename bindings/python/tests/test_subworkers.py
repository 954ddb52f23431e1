"""Sub-workers in Python (issue 8, "Nested workers"): a worker's 4 threads
(threading) and 4 os.fork() children register as sub-workers through
supervise.thread_identity() / subworker() / child_identity().
subworker_worker.py does it and reports; the assertions are here."""

import json
import os

import pytest

import svharness
from svharness import Group, Supervisor, wait_until

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "subworker_worker.py")
PROCESS, THREAD = 1, 2


@pytest.fixture(scope="module")
def report(daemon_path):
    s = Supervisor(daemon_path, [])
    path = os.path.join(s.out, "subworkers.json")
    s.groups = [Group("threads", svharness.python_argv(WORKER, path), 1,
                      "threads and children as sub-workers")]
    with s:
        wait_until(lambda: os.path.exists(path), 60,
                   "the sub-worker report")
        with open(path) as f:
            yield json.load(f)


def test_threads(report):
    assert "error" not in report, report.get("error")
    worker = report["worker"]
    threads = report["threads"]
    assert sorted(threads) == ["pool-%d" % i for i in range(4)]
    # Four live threads: four distinct numbers 0..3 under this process.
    assert sorted(t["ordinal"] for t in threads.values()) == [0, 1, 2, 3]
    for name, t in threads.items():
        assert t["kind"] == THREAD
        assert t["same"] is True, "registered once per thread"
        assert t["pid"] == report["pid"]
        parent = [PROCESS, worker["ordinal"], "threads"]
        assert t["parent"] == parent
        assert t["context"] == [parent, [THREAD, t["ordinal"], name]]


def test_thread_end_releases(report):
    # pool-2 ended (released by the finaliser): a new pool-2 takes the same
    # number with the next sub-generation. Without the release the label
    # would still be held by another tid (CONFLICT), and the binding's
    # fallback label "pool-2#tid" would get another number.
    old = report["threads"]["pool-2"]
    new = report["pool2_again"]
    assert new["ordinal"] == old["ordinal"]
    assert new["generation"] == old["generation"] + 1
    assert new["context"][1][2] == "pool-2"


def test_scoped(report):
    scoped = report["scoped"]
    assert scoped["same"] is True
    assert scoped["inside"]["context"][1][2] == "scoped"
    # Released at the end of the first block: the second one is a new
    # grant of the same number (sub-generation + 1), and an exception in
    # the block still releases it.
    assert scoped["again"]["ordinal"] == scoped["inside"]["ordinal"]
    assert scoped["again"]["generation"] == scoped["inside"]["generation"] + 1
    assert scoped["raised"] is True


def test_forked_children(report):
    worker = report["worker"]
    kids = report["children"]
    assert len(kids) == 4
    assert report["child_statuses"] == [0, 0, 0, 0]
    for k in kids:
        assert "error" not in k, k
        me, who = k["me"], k["who"]
        assert me["kind"] == PROCESS and me["pid"] == k["pid"]
        assert me["parent"] == [PROCESS, worker["ordinal"], "threads"]
        assert me["context"][1][0] == PROCESS
        assert k["again"] is True
        # The child's own WhoAmI answers its sub-worker identity (the
        # default client's previous answer was the worker's, in the
        # parent: it must not be reused).
        assert who == me
        # whoami's one-call copy reads what the handle's accessors read,
        # and an unchanged answer gives back the same immutable Identity.
        assert k["copy_eq_handle"] is True
        assert k["reused"] is True
    assert sorted(k["me"]["ordinal"] for k in kids) == [0, 1, 2, 3]
    assert len({k["pid"] for k in kids}) == 4


def test_outside_a_worker(monkeypatch):
    import supervise
    monkeypatch.delenv("SUPERVISE_URL", raising=False)
    with pytest.raises(supervise.NotAWorker):
        supervise.thread_identity()
    with pytest.raises(supervise.NotAWorker):
        supervise.child_identity()
