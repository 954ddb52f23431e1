"""The activity fields of WorkerStatus (docs/activity.md) against a real
supervised: a worker that stays inside "request" > "db query" shows one
in-flight activity named "request: db query" whose age grows; an idle
worker of the same daemon (the control) shows nothing."""
import os

import pytest

import supervise
import svharness
from svharness import Group, Supervisor, wait_until

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "activity_status_worker.py")


@pytest.fixture(scope="module")
def daemon(daemon_path):
    s = Supervisor(daemon_path, [])
    s.paths = {m: os.path.join(s.out, m) for m in ("busy", "idle")}
    s.groups = [Group(m, svharness.python_argv(WORKER, m, s.paths[m]), 1,
                      "activity status " + m) for m in ("busy", "idle")]
    with s:
        for m in ("busy", "idle"):
            wait_until(lambda m=m: os.path.exists(s.paths[m]), 30,
                       "the %s worker's report" % m)
        yield s


def reported(s, mode):
    with open(s.paths[mode]) as f:
        pid, depth = f.read().split()
    return int(pid), int(depth)


def test_busy_worker_shows_its_oldest_activity(daemon):
    pid, depth = reported(daemon, "busy")
    assert depth == 2
    with supervise.Client(daemon.url) as c:
        # The supervisor's view is at most 100 ms stale: poll with a deadline.
        w = wait_until(lambda: (lambda x: x if x.activities else None)(
            c.status("busy", 0)), 10, "busy[0] to show its activity")
        assert w.pid == pid
        assert w.activities == 1
        assert w.activity == "request: db query"
        later = wait_until(lambda: (lambda x: x if x.activity_age_ms
                                    > w.activity_age_ms else None)(
            c.status("busy", 0)), 10, "the activity to age")
        assert later.activity == "request: db query"
        listed = c.list("busy")[0]
        assert (listed.activities, listed.activity) == (1, "request: db query")


def test_idle_worker_shows_nothing(daemon):
    pid, depth = reported(daemon, "idle")
    assert depth == 0
    with supervise.Client(daemon.url) as c:
        w = c.status("idle", 0)
        assert w.pid == pid
        assert (w.activities, w.activity, w.activity_age_ms) == (0, "", 0)
        assert w.draining is False
