"""The binding against a real supervised: whoami in workers, hello, list,
status, errors sent by the supervisor, admin requests, timeouts, bounds."""

import os
import subprocess
import sys
import threading
import time

import pytest

import supervise
from supervise import Client, Kind, State

import svharness
from svharness import Group, Supervisor, wait_until

PURPOSE = "answer the python binding's tests"
N = 3


def probe_group(sup_out, name="probe", count=N):
    return Group(name, svharness.python_argv(svharness.PROBE, "worker",
                                             sup_out), count, PURPOSE)


def make(daemon_path, count=N):
    sup = Supervisor(daemon_path, [])
    sup.groups = [probe_group(sup.out, count=count)]
    return sup


@pytest.fixture(scope="module")
def sup(daemon_path):
    s = make(daemon_path)
    with s:
        s.wait_reports({(i, 0) for i in range(N)})
        yield s


@pytest.fixture
def fresh(daemon_path):
    s = make(daemon_path)
    with s:
        s.wait_reports({(i, 0) for i in range(N)})
        yield s


def test_whoami_in_workers(sup):
    reports = sup.reports()
    assert sorted(reports) == [(i, 0) for i in range(N)]
    for (ordinal, generation), r in reports.items():
        live, env = r["live"], r["env"]
        assert live["source"] == "live" and env["source"] == "env"
        assert 0 <= ordinal < N
        assert live["group"] == "probe"
        assert live["generation"] == 0
        assert live["kind"] == int(Kind.PROCESS)
        assert live["pid"] == r["pid"]  # the worker asked for itself
        assert live["purpose"] == PURPOSE
        assert live["group_size"] == N
        assert live["context"] == [[int(Kind.PROCESS), ordinal, "probe"]]
        assert live["parent"] is None
        assert live["supervisor_id"] == sup.hello.supervisor_id
        # sv_client_whoami_copy's values equal the handle's accessors'.
        assert r["copy_eq_handle"] is True
        assert r["reused"] is True
        # What the environment says is what the supervisor says.
        assert r["environ"]["SUPERVISE_GROUP"] == live["group"]
        assert r["environ"]["SUPERVISE_ORDINAL"] == str(ordinal)
        assert r["environ"]["SUPERVISE_GENERATION"] == str(generation)
        assert r["environ"]["SUPERVISE_PURPOSE"] == live["purpose"]
        assert r["environ"]["SUPERVISE_SUPERVISOR_ID"] == \
            live["supervisor_id"]
        assert r["environ"]["SUPERVISE_URL"] == sup.url


def test_from_env_equals_live(sup):
    for r in sup.reports().values():
        live, env = r["live"], r["env"]
        for field in ("group", "ordinal", "generation", "kind", "purpose",
                      "supervisor_id", "context", "parent"):
            assert env[field] == live[field], field
        assert env["pid"] is None and env["group_size"] is None


def test_hello(sup):
    with Client(sup.url) as c:
        h = c.hello()
    assert h.version == 1
    assert h.server_name
    assert h.supervisor_id == sup.hello.supervisor_id
    assert all(isinstance(f, str) for f in h.features)
    # The workers' hello through the default client said the same.
    for r in sup.reports().values():
        assert r["hello"]["supervisor_id"] == h.supervisor_id


def test_list_and_status(sup):
    with Client(sup.url) as c:
        workers = c.list()
        assert sorted(w.ordinal for w in workers) == list(range(N))
        pids = {r["live"]["ordinal"]: r["pid"] for r in sup.reports().values()}
        for w in workers:
            assert w.group == "probe" and w.state is State.RUNNING
            assert w.pid == pids[w.ordinal] and w.purpose == PURPOSE
            assert w.generation == 0 and w.restarts == 0
        assert sorted((w.ordinal, w.pid) for w in c.list("probe")) == \
            sorted((w.ordinal, w.pid) for w in workers)
        one = c.status("probe", 1)
        assert one.ordinal == 1 and one.pid == pids[1]


def test_not_a_worker_from_the_supervisor(sup):
    # This test process is no worker: the supervisor itself says so.
    with Client(sup.url) as c:
        with pytest.raises(supervise.NotAWorker) as info:
            c.whoami()
    assert info.value.code == 10 and info.value.name == "ENOTWORKER"
    assert info.value.message  # the supervisor's message
    # The module-level whoami in a fresh non-worker process, same answer.
    env = dict(os.environ, SUPERVISE_URL=sup.url,
               PYTHONPATH=svharness.BINDING_DIR)
    r = subprocess.run([sys.executable, "-c",
                        "import supervise\n"
                        "try:\n"
                        "    supervise.whoami()\n"
                        "except supervise.NotAWorker as e:\n"
                        "    print(e.code, e.name)\n"],
                       env=env, capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stdout) == (0, "10 ENOTWORKER\n"), r.stderr


def test_supervisor_error_maps_to_its_class(sup):
    with Client(sup.url) as c:
        with pytest.raises(supervise.NotFound) as info:
            c.scale("no-such-group", 1)
        e = info.value
        assert (type(e), e.code, e.name) == (supervise.NotFound, 4,
                                             "ENOTFOUND")
        assert e.message  # the supervisor's message
        with pytest.raises(supervise.NotFound):
            c.status("probe", N + 5)
        with pytest.raises(supervise.NotFound):
            c.list("no-such-group")
        with pytest.raises(supervise.NotFound):
            c.restart("probe", 4000)
        with pytest.raises(supervise.Exhausted):
            c.scale("probe", 4096)
        # The client still works after typed errors.
        assert c.hello().version == 1


def test_bad_arguments_fail_before_a_round_trip(sup):
    with Client(sup.url) as c:
        for call in (lambda: c.status("probe", 2 ** 32),
                     lambda: c.status("probe", -1),
                     lambda: c.status("probe", True),
                     lambda: c.scale("pro\0be", 1),
                     lambda: c.scale("g" * 65, 1),
                     lambda: c.list(b"probe"),
                     lambda: c.hello(timeout=-1),
                     lambda: c.hello(timeout=float("nan")),
                     lambda: c.hello(timeout="1")):
            with pytest.raises(supervise.InvalidArgument):
                call()
        # Rejected by the C library's own check of the name, same class.
        with pytest.raises(supervise.InvalidArgument) as info:
            c.scale("not a name", 1)
        assert info.value.message
    for url in ("", "ipc://x\0y", "ipc://" + "x" * 600):
        with pytest.raises(supervise.InvalidArgument):
            Client(url)


def test_timeouts_are_seconds(sup):
    assert supervise.client.timeout_ms(None) == -1
    assert supervise.client.timeout_ms(0) == 0
    assert supervise.client.timeout_ms(0.25) == 250
    assert supervise.client.timeout_ms(0.0001) == 1
    assert supervise.client.timeout_ms(float("inf")) == -1
    assert supervise.client.timeout_ms(10 ** 9) == 2 ** 31 - 1
    # Nobody listening: ConnectError within the deadline, not later.
    dead = "ipc://%s/nobody.sock" % sup.dir
    t0 = time.monotonic()
    with pytest.raises(supervise.ConnectError):
        Client(dead).hello(timeout=0.3)
    elapsed = time.monotonic() - t0
    assert 0.25 <= elapsed < 3.0
    # A request with no time left times out (TimeoutError).
    with Client(sup.url) as c:
        with pytest.raises(TimeoutError) as info:
            c.hello(timeout=0)
        assert isinstance(info.value, supervise.Timeout)
        assert c.hello(timeout=None).version == 1


def test_closed_client(sup):
    c = Client(sup.url)
    assert c.hello().version == 1  # connects lazily
    c.close()
    c.close()  # idempotent
    assert c.closed
    with pytest.raises(supervise.ConnectionClosed):
        c.hello()


def test_one_client_shared_by_threads(sup):
    answers, failures = [], []
    with Client(sup.url) as c:
        def run():
            try:
                for _ in range(25):
                    answers.append(c.hello().supervisor_id)
            except Exception as e:  # reported below
                failures.append(e)
        threads = [threading.Thread(target=run) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert not any(t.is_alive() for t in threads)
    assert failures == []
    assert answers == [sup.hello.supervisor_id] * 100


def test_restart_keeps_ordinal_next_generation(fresh):
    with Client(fresh.url) as c:
        old = c.status("probe", 1)
        assert c.restart("probe", 1) is None
        new = fresh.wait_reports({(1, 1)})[(1, 1)]
        assert new["live"]["ordinal"] == 1
        assert new["live"]["generation"] == 1
        assert new["pid"] != old.pid
        assert new["live"]["pid"] == new["pid"]
        st = wait_until(lambda: (lambda s: s if s.pid == new["pid"] else None)(
            c.status("probe", 1)), 10, "slot 1 to show the new pid")
        assert st.generation == 1 and st.restarts >= 1


def test_scale_and_stop(fresh):
    with Client(fresh.url) as c:
        assert c.scale("probe", N + 1) == N
        r = fresh.wait_reports({(N, 0)})[(N, 0)]
        assert r["live"]["ordinal"] == N
        assert r["live"]["group_size"] == N + 1
        assert c.scale("probe", N) == N + 1
        assert c.stop("probe") == N
        wait_until(lambda: c.list("probe") == [], 15,
                   "every worker of the group to stop")
        assert c.scale("probe", 1) == 0
        wait_until(lambda: [w.ordinal for w in c.list("probe")
                            if w.state is State.RUNNING] == [0], 15,
                   "ordinal 0 to run again")


def test_binding_and_supervisectl_agree(sup):
    ctl = svharness.find_program("SUPERVISECTL", "cli/supervisectl")
    if not ctl:
        pytest.fail("supervisectl not found: set SUPERVISECTL")
    import json
    out = subprocess.run([ctl, "-s", sup.url, "status", "--json"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    cli = sorted((w["group"], w["ordinal"], w["generation"], w["pid"])
                 for w in json.loads(out.stdout))
    with Client(sup.url) as c:
        ours = sorted((w.group, w.ordinal, w.generation, w.pid)
                      for w in c.list())
    assert ours == cli and len(ours) == N
    hello = subprocess.run([ctl, "-s", sup.url, "hello", "--json"],
                           capture_output=True, text=True, timeout=60)
    assert hello.returncode == 0, hello.stderr
    assert sup.hello.supervisor_id in hello.stdout
