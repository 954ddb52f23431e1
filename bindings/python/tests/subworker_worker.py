"""A worker for test_subworkers.py: registers 4 threads and 4 forked
children as sub-workers and writes what it got to a JSON report (argv[1]),
then waits to be stopped.

Threads: pool-0..pool-3 register (thread_identity()) and wait at a barrier
so that all four are live at once; then they end (their numbers are
released by the finaliser). A new thread named pool-2 registers again; a
thread registers inside ``with subworker("scoped")``. Children: 4 os.fork()
children register (child_identity()) and ask whoami(), report through a
pipe, and stay alive until all four have registered.
"""
import json
import os
import signal
import sys
import threading

import supervise

THREADS = 4
CHILDREN = 4


def frame(f):
    return None if f is None else [int(f.kind), f.ordinal, f.name]


def ident(me):
    return {"ordinal": me.ordinal, "generation": me.generation,
            "kind": int(me.kind), "pid": me.pid,
            "context": [frame(f) for f in me.context],
            "parent": frame(me.parent)}


def run_threads(report):
    barrier = threading.Barrier(THREADS, timeout=20)
    got = {}

    def work():
        me = supervise.thread_identity()
        again = supervise.thread_identity()  # once per thread
        barrier.wait()
        got[threading.current_thread().name] = dict(
            ident(me), same=(again is me))

    threads = [threading.Thread(target=work, name="pool-%d" % i)
               for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    report["threads"] = got
    # pool-2 ended and released its number; a new pool-2 takes it again.
    # The release is one request from the ending thread's finaliser, which
    # CPython runs when it clears the thread's locals, before join()
    # returns.
    later = {}

    def again():
        later["pool-2"] = ident(supervise.thread_identity())

    t = threading.Thread(target=again, name="pool-2")
    t.start()
    t.join()
    report["pool2_again"] = later["pool-2"]
    scoped = {}

    def scope():
        with supervise.subworker("scoped") as me:
            scoped["inside"] = ident(me)
            scoped["same"] = supervise.thread_identity() is me
        try:
            raise_in = supervise.subworker("scoped")
            with raise_in as me2:
                scoped["again"] = ident(me2)
                raise RuntimeError("boom")
        except RuntimeError:
            scoped["raised"] = True

    t = threading.Thread(target=scope, name="scoper")
    t.start()
    t.join()
    report["scoped"] = scoped


def run_children(report):
    pipes = []
    kids = []
    go_r, go_w = os.pipe()
    for i in range(CHILDREN):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            os.close(go_w)
            try:
                me = supervise.child_identity(label="kid-%d" % i)
                who = supervise.whoami()
                out = {"pid": os.getpid(), "me": ident(me),
                       "who": ident(who),
                       "again": supervise.child_identity() is me}
                # The flat copy (sv_client_whoami_copy) against the
                # handle's accessors, on a sub-worker's two frames.
                with supervise.Client() as c:
                    first = c.whoami()
                    out["copy_eq_handle"] = first == c._whoami_handle()
                    out["reused"] = c.whoami() is first
            except Exception as e:  # noqa: BLE001  reported to the test
                out = {"pid": os.getpid(), "error": repr(e)}
            os.write(w, json.dumps(out).encode())
            os.close(w)
            os.read(go_r, 1)  # stay alive until all have registered
            os._exit(0)
        os.close(w)
        pipes.append(r)
        kids.append(pid)
    os.close(go_r)
    results = []
    for r in pipes:
        chunks = []
        while True:
            b = os.read(r, 65536)
            if not b:
                break
            chunks.append(b)
        os.close(r)
        results.append(json.loads(b"".join(chunks)))
    os.close(go_w)  # the children exit now
    statuses = []
    for pid in kids:
        _, status = os.waitpid(pid, 0)
        statuses.append(status)
    report["children"] = results
    report["child_statuses"] = statuses


def main():
    path = sys.argv[1]
    report = {"pid": os.getpid(), "worker": ident(supervise.whoami())}
    try:
        run_threads(report)
        run_children(report)
    except Exception as e:  # noqa: BLE001  reported to the test
        report["error"] = repr(e)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(report, f)
    os.rename(tmp, path)
    while True:
        signal.pause()  # until the daemon's SIGTERM


if __name__ == "__main__":
    main()
