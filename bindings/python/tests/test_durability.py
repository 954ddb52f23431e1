"""Hello's durability (docs/durability.md) through the binding: known and
ok from a healthy supervisor; lost, with its reason, while the state
directory is full, and back once there is room again.

Design: the full case puts state_dir on a 64 KiB tmpfs of its own, as
tests/integration/integration_durability.c does. Mounting needs root
(CAP_SYS_ADMIN); without it the case is skipped, saying why. The test
fills the tmpfs to the last byte, then restarts workers (each restart is
journaled) until Hello says durability is lost, bounded by a number of
restarts; then removes the filler and waits, with a deadline, for the
daemon's once-a-second snapshot to bring durability back. Workers are
/bin/sleep: nothing of theirs is written to the state directory.
"""

import os
import shutil
import subprocess
import tempfile
import time

import pytest

import supervise
from supervise import Client, Durability, State

from svharness import Group, Supervisor, wait_until

GROUP = "sleepers"
NW = 2
# Restarts tried before durability must be reported lost.
MAX_CHURN = 200
# Durability back after the repair: the daemon retries every second.
RESTORE_S = 15.0


def sleepers():
    return Group(GROUP, ["/bin/sleep", "3600"], NW,
                 "sleep while the python binding reads durability",
                 options={"min_uptime_ms": 0})


def now_ms():
    return int(time.time() * 1000)


def test_durability_known_and_ok(daemon_path):
    before = now_ms()
    with Supervisor(daemon_path, [sleepers()]) as sup:
        with Client(sup.url) as c:
            h = c.hello()
    d = h.durability
    assert isinstance(d, Durability)
    assert "durable.status" in h.features
    assert d.known is True
    assert d.ok is True
    assert d.reason == "" and d.message == ""
    # Durable since the daemon started: within this test's run.
    assert before - 1000 <= d.since_ms <= now_ms() + 1000
    # The module-level Hello type carries it too, with the defaults of a
    # server that does not say (before v1.5).
    assert supervise.Hello(1, 0, "", "", ()).durability == \
        Durability(False, False, "", 0, "")


def _mount_tmpfs(path):
    """Mounts a 64 KiB tmpfs on path; returns None or why it cannot."""
    if os.geteuid() != 0:
        return "not root: mounting a tmpfs for state_dir needs CAP_SYS_ADMIN"
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700",
                        "tmpfs", path], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    if r.returncode != 0:
        return "cannot mount a tmpfs on %s: %s" % (
            path, r.stdout.decode(errors="replace").strip())
    return None


def _fill(path):
    """Writes path/filler until the filesystem refuses a byte."""
    with open(os.path.join(path, "filler"), "wb", buffering=0) as f:
        chunk = b"x" * 4096
        while True:
            try:
                f.write(chunk)
            except OSError as e:
                if len(chunk) == 1:
                    assert e.errno == 28, e  # ENOSPC
                    return
                chunk = chunk[:len(chunk) // 2]


def _restart(c, ordinal):
    """Restarts one worker and waits until its successor runs."""
    gen = c.status(GROUP, ordinal).generation
    c.restart(GROUP, ordinal, expected_generation=gen)
    wait_until(lambda: (lambda w: w.generation > gen and
                        w.state is State.RUNNING)(c.status(GROUP, ordinal)),
               10.0, "%s/%d after generation %d" % (GROUP, ordinal, gen))


@pytest.fixture
def state_mount():
    top = tempfile.mkdtemp(prefix="svpy-dur-")
    mnt = os.path.join(top, "state")
    os.mkdir(mnt)
    why = _mount_tmpfs(mnt)
    if why is not None:
        shutil.rmtree(top, ignore_errors=True)
        pytest.skip(why)
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", mnt])
        shutil.rmtree(top, ignore_errors=True)


def test_durability_lost_on_a_full_state_dir(daemon_path, state_mount):
    sup = Supervisor(daemon_path, [sleepers()],
                     top='state_dir = "%s";' % state_mount)
    with sup, Client(sup.url) as c:
        wait_until(lambda: all(w.state is State.RUNNING
                               for w in c.list(GROUP)), 10.0, "workers")
        assert c.hello().durability[:3] == (True, True, "")
        broke = now_ms()
        _fill(state_mount)
        d = None
        for n in range(MAX_CHURN):
            _restart(c, n % NW)
            d = c.hello().durability
            if not d.ok:
                break
        assert d is not None and d.known
        assert d.ok is False, "still durable after %d restarts" % MAX_CHURN
        assert d.reason == "ENOSPC"
        assert "No space left on device" in d.message
        assert broke <= d.since_ms <= now_ms() + 1000
        # Supervision goes on meanwhile.
        _restart(c, 0)
        assert c.hello().durability.ok is False
        # Room again: a snapshot succeeds within a few seconds.
        os.unlink(os.path.join(state_mount, "filler"))
        d = wait_until(lambda: (lambda x: x if x.ok else None)(
            c.hello().durability), RESTORE_S, "durability back")
        assert d.known and d.reason == "" and d.message == ""
