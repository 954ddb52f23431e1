"""Worker calls against a real supervised: ready with a status line in a
group that uses readiness, heartbeat against a group's watchdog, and the
typed errors outside a worker and in a worker's descendant.

Each behaviour has a control group that does not make the call, so the
assertions could fail: a worker that never calls ready stays STARTING and
not ready; a worker that never sends a heartbeat is restarted by the
watchdog while the heartbeating one keeps generation 0."""

import json
import os

import pytest

import supervise
from supervise import Client, State

import svharness
from svharness import Group, Supervisor, wait_until

WATCHDOG_MS = 1000
BEAT_MS = 200
STATUS = "up"


@pytest.fixture(scope="module")
def sup(daemon_path):
    s = Supervisor(daemon_path, [])
    probe = svharness.PROBE
    s.groups = [
        Group("waiter", svharness.python_argv(probe, "ready", s.out, STATUS),
              1, "reports ready with a status", options={"ready": True}),
        Group("sleeper", ["/bin/sleep", "3600"], 1,
              "never reports ready", options={"ready": True}),
        Group("beater", svharness.python_argv(probe, "heartbeat",
                                              str(BEAT_MS)),
              1, "sends heartbeats",
              options={"ready": True, "watchdog_ms": WATCHDOG_MS}),
        Group("silent", ["/bin/sleep", "3600"], 1,
              "sends no heartbeat", options={"watchdog_ms": WATCHDOG_MS}),
    ]
    with s:
        yield s


def read_report(sup):
    path = os.path.join(sup.out, "ready-waiter-0-0.json")
    wait_until(lambda: os.path.exists(path), 30, "the ready worker's report")
    with open(path) as f:
        return json.load(f)


def test_ready_with_status_shows_in_the_list(sup):
    report = read_report(sup)
    assert report["ready"] == "ok"
    with Client(sup.url) as c:
        w = wait_until(lambda: (lambda w: w if w.ready else None)(
            c.status("waiter", 0)), 15, "waiter to be ready")
        assert w.pid == report["pid"]
        assert w.state is State.RUNNING
        assert w.status_text == STATUS
        assert w.generation == 0 and w.fast_failures == 0
        assert w.restart_in_ms == 0
        listed = [x for x in c.list() if x.group == "waiter"]
        assert [(x.ready, x.status_text) for x in listed] == [(True, STATUS)]
        # The control: same group settings, no ready call.
        other = c.status("sleeper", 0)
        assert other.state is State.STARTING and other.ready is False
        assert other.status_text == ""
        info = {g.name: g for g in c.groups()}
        assert info["waiter"].ready == 1 and info["waiter"].starting == 0
        assert info["sleeper"].ready == 0 and info["sleeper"].starting == 1


def test_ready_in_a_descendant_is_refused(sup):
    report = read_report(sup)
    # A forked child of the worker is not the worker: PERMISSION_DENIED.
    assert report["descendant"] == [supervise.PermissionDenied.CODE,
                                    "EPERM"], report
    assert report["descendant_status"] == 0


def test_heartbeat_keeps_the_worker_past_the_watchdog(sup):
    with Client(sup.url) as c:
        # Wait on a deadline until the heartbeating worker has run for
        # three watchdog intervals and the silent one has been restarted
        # by its watchdog at least once.
        def settled():
            beater, silent = c.status("beater", 0), c.status("silent", 0)
            if beater.uptime_ms >= 3 * WATCHDOG_MS and silent.generation >= 1:
                return beater, silent
            return None
        beater, silent = wait_until(settled, 30, "three watchdog intervals")
        assert beater.generation == 0 and beater.restarts == 0
        assert beater.state is State.RUNNING
        assert silent.generation >= 1  # the control: the watchdog works


def test_worker_calls_outside_a_worker(sup):
    # Through a client: the supervisor itself refuses (not a worker).
    with Client(sup.url) as c:
        for call in (c.ready, c.heartbeat, lambda: c.ready("x"),
                     lambda: c.set_status("x")):
            with pytest.raises(supervise.NotAWorker) as info:
                call()
            assert info.value.code == 10 and info.value.message
    # Module level without SUPERVISE_URL: refused without a round trip.
    for call in (supervise.ready, supervise.heartbeat,
                 lambda: supervise.status("x")):
        with pytest.raises(supervise.NotAWorker):
            call()


def test_worker_call_arguments(sup):
    with Client(sup.url) as c:
        for bad in ("x" * 1025, "a\0b", b"up", 3):
            with pytest.raises(supervise.InvalidArgument):
                c.ready(bad)
        with pytest.raises(supervise.InvalidArgument):
            c.set_status(None)
