"""Fork safety: a process that used the binding forks 4 children with
os.fork(); each child calls the binding at once through the default client
and must get its own answer: no abort, no hang (deadline), and the parent
still works afterwards. Run both in a supervised worker (whoami + hello)
and in a plain process (hello). probe.py does the forking and reports; the
assertions are here."""

import json
import os
import subprocess
import sys

import pytest

import svharness
from svharness import Group, Supervisor, wait_until

CHILDREN = 4


@pytest.fixture(scope="module")
def sup(daemon_path):
    s = Supervisor(daemon_path, [])
    s.report = os.path.join(s.out, "fork.json")
    s.groups = [Group("forker", svharness.python_argv(
        svharness.PROBE, "fork", s.report, "--wait"), 1,
        "fork four children that each ask")]
    with s:
        yield s


def check_children(report, worker):
    statuses = [c["status"] for c in report["children"]]
    assert len(statuses) == CHILDREN
    assert statuses == ["exit 0"] * CHILDREN, \
        "children: %s (an nng-based client aborts in a forked child: " \
        "signal 6)" % statuses
    pids = {c["pid"] for c in report["children"]}
    assert len(pids) == CHILDREN and report["pid"] not in pids
    for c in report["children"]:
        answer = c["answer"]
        assert answer is not None and "error" not in answer, answer
        assert answer["pid"] == c["pid"]
        assert answer["hello"]["supervisor_id"] == \
            report["before"]["hello"]["supervisor_id"]
        if worker:
            # A child of a worker is identified as that worker.
            me = answer["whoami"]
            assert me == report["before"]["whoami"]
            assert me["pid"] == report["pid"]
    for phase in ("before", "after"):
        assert "error" not in report[phase], report[phase]
    if worker:
        assert report["after"]["whoami"] == report["before"]["whoami"]


def test_fork_in_a_worker(sup):
    wait_until(lambda: os.path.exists(sup.report), 60,
               "the forking worker's report")
    with open(sup.report) as f:
        report = json.load(f)
    assert report["before"]["whoami"]["group"] == "forker"
    assert report["before"]["whoami"]["ordinal"] == 0
    assert report["before"]["whoami"]["pid"] == report["pid"]
    check_children(report, worker=True)
    # An orphaned grandchild is no descendant of the worker: with a
    # connection of its own it is told so (not answered as the worker).
    orphan = report["orphan"]
    assert orphan.get("reparented") is True, orphan
    assert orphan.get("error", [None])[0] == 10, orphan
    assert "hello" in orphan and "whoami" not in orphan, orphan


def test_fork_in_a_plain_process(sup):
    env = dict(os.environ, SUPERVISE_URL=sup.url,
               PYTHONPATH=svharness.BINDING_DIR, PYTHONDONTWRITEBYTECODE="1")
    r = subprocess.run([sys.executable, svharness.PROBE, "fork", "-"],
                       env=env, capture_output=True, text=True, timeout=90)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["before"]["hello"]["supervisor_id"] == \
        sup.hello.supervisor_id
    check_children(report, worker=False)
