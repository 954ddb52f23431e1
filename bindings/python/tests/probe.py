"""Probe program for the binding's tests: a worker, and a fork exerciser.

Design: one small script with two modes, run either by supervised (as a
worker) or by a test directly (as a non-worker). It only uses the binding's
public API and reports what it learned as JSON, so the test process, not
this one, makes the assertions.

  probe.py worker OUTDIR
      Asks whoami (live and from the environment) and hello, writes
      OUTDIR/id-<ordinal>-<generation>-<pid>.json (atomically: write, then
      rename), then waits for SIGTERM and exits 0.
  probe.py ready OUTDIR TEXT
      A worker of a group with ``ready = true``: calls supervise.ready(TEXT),
      then has a forked child (a descendant, not the worker) call ready()
      too, writes OUTDIR/ready-<group>-<ordinal>-<generation>.json with
      both outcomes, then waits for SIGTERM.
  probe.py heartbeat INTERVAL_MS
      A worker of a group with ``ready = true`` and a watchdog: calls
      supervise.ready(), then supervise.heartbeat() every INTERVAL_MS until
      SIGTERM (a failed call ends it with status 1).
  probe.py fork OUTFILE [--wait]
      Uses the binding (hello, and whoami when it is a worker), then forks
      4 children with os.fork(). The children block on one pipe until all
      exist, then each calls the binding at once through the default client
      and writes its answer as one JSON line into its own pipe. The parent
      collects answers and exit statuses with a deadline (poll on the pipes
      and on pidfds), SIGKILLs a child that has not finished by then (by its
      pid; reported as "hang"), calls the binding again itself, and writes
      the whole report to OUTFILE ("-": stdout). In a worker it also checks
      that a forked process uses a connection of its own: a grandchild
      orphaned by its parent's exit is no descendant of the worker any more,
      so its whoami through the inherited default client must be
      NotAWorker (a reused connection of the worker would answer as the
      worker). With --wait it then waits
      for SIGTERM (worker mode). Core dumps are disabled so that an aborting
      child leaves no core file.
"""

import json
import os
import resource
import select
import signal
import sys
import time
import traceback

import supervise

CHILDREN = 4
DEADLINE_S = 20.0


def ident(identity):
    """An Identity as a JSON-friendly dict."""
    d = identity._asdict()
    d["kind"] = int(d["kind"])
    d["context"] = [[int(f.kind), f.ordinal, f.name] for f in d["context"]]
    if d["parent"] is not None:
        d["parent"] = [int(d["parent"].kind), d["parent"].ordinal,
                       d["parent"].name]
    return d


def ask(is_worker):
    """Calls the binding through the default client; returns a dict."""
    out = {"pid": os.getpid()}
    try:
        out["hello"] = supervise.hello()._asdict()
        if is_worker:
            out["whoami"] = ident(supervise.whoami())
    except supervise.Error as e:
        out["error"] = [e.code, e.name, e.message]
    return out


def write_json(path, data):
    """Writes data to path atomically, or to stdout for "-"."""
    text = json.dumps(data, sort_keys=True)
    if path == "-":
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
        return
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


def wait_for_term():
    """Blocks until SIGTERM or SIGINT, then returns."""
    signal.sigwait({signal.SIGTERM, signal.SIGINT})


def worker(outdir):
    live = supervise.whoami()
    env = supervise.whoami(live=False)
    hello = supervise.hello()
    # Client.whoami's one-call copy against the sv_identity handle's
    # accessors; a repeated, unchanged answer returns the same Identity.
    with supervise.Client() as c:
        first = c.whoami()
        copy_eq_handle = first == c._whoami_handle() == live
        reused = c.whoami() is first
    environ = {k: v for k, v in os.environ.items()
               if k.startswith("SUPERVISE_") and k != "SUPERVISE_LIBRARY"}
    write_json(os.path.join(outdir, "id-%d-%d-%d.json" % (
        live.ordinal, live.generation, os.getpid())), {
            "pid": os.getpid(), "live": ident(live), "env": ident(env),
            "hello": hello._asdict(), "environ": environ,
            "copy_eq_handle": copy_eq_handle, "reused": reused})
    wait_for_term()


def outcome(call):
    """Runs call(); returns "ok" or [code, name] of a supervise.Error."""
    try:
        call()
        return "ok"
    except supervise.Error as e:
        return [e.code, e.name]


def ready_worker(outdir, text):
    me = supervise.whoami(live=False)
    mine = outcome(lambda: supervise.ready(text))
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(r)
            os.write(w, json.dumps(outcome(supervise.ready)).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    data = b""
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        ready, _, _ = select.select([r], [], [], deadline - time.monotonic())
        chunk = os.read(r, 65536) if ready else b""
        if not chunk:
            break
        data += chunk
    os.close(r)
    _, status = os.waitpid(pid, 0)
    write_json(os.path.join(outdir, "ready-%s-%d-%d.json" % (
        me.group, me.ordinal, me.generation)), {
            "pid": os.getpid(), "ready": mine,
            "descendant": json.loads(data) if data else None,
            "descendant_status": status})
    wait_for_term()


def heartbeat_worker(interval_ms):
    # The watchdog starts at Ready, so start-up time does not count.
    supervise.ready("beating")
    # The worker's own pacing: heartbeat every interval until SIGTERM.
    while True:
        supervise.heartbeat(timeout=interval_ms / 1000.0 * 4)
        if signal.sigtimedwait({signal.SIGTERM, signal.SIGINT},
                               interval_ms / 1000.0) is not None:
            return


def child(go_fd, out_fd, is_worker):
    """Runs in a forked child: wait for the start signal, ask, report."""
    code = 1
    try:
        os.read(go_fd, 1)
        os.write(out_fd, (json.dumps(ask(is_worker)) + "\n").encode())
        code = 0
    except BaseException:
        traceback.print_exc()
    finally:
        os._exit(code)


def orphan_check():
    """Forks a child that forks a grandchild and exits; the orphaned
    grandchild asks whoami and reports through a pipe. Returns its answer,
    or a description of what went wrong."""
    r, w = os.pipe()
    child_pid = os.fork()
    if child_pid == 0:
        code = 1
        try:
            os.close(r)
            parent = os.getpid()
            if os.fork() == 0:
                # Grandchild: wait until reparented, then ask.
                deadline = time.monotonic() + DEADLINE_S
                while os.getppid() == parent and \
                        time.monotonic() < deadline:
                    time.sleep(0.005)
                try:
                    answer = ask(True)
                    answer["reparented"] = os.getppid() != parent
                    os.write(w, json.dumps(answer).encode())
                finally:
                    os._exit(0)
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    os.close(w)
    _, status = os.waitpid(child_pid, 0)
    data = b""
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        ready, _, _ = select.select([r], [], [], deadline - time.monotonic())
        if not ready:
            break
        chunk = os.read(r, 65536)
        if not chunk:
            break
        data += chunk
    os.close(r)
    if status != 0:
        return {"failed": "intermediate child status %d" % status}
    return json.loads(data) if data else {"failed": "no answer (hang?)"}


def fork_test(outfile, wait):
    is_worker = bool(os.environ.get("SUPERVISE_GROUP"))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    before = ask(is_worker)
    go_r, go_w = os.pipe()
    kids = {}
    for _ in range(CHILDREN):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            child(go_r, w, is_worker)
        os.close(w)
        kids[pid] = {"fd": r, "pidfd": os.pidfd_open(pid), "data": b"",
                     "status": None}
    os.close(go_r)
    os.write(go_w, b"x" * CHILDREN)  # all children start at once
    os.close(go_w)

    deadline = time.monotonic() + DEADLINE_S
    poller = select.poll()
    by_fd = {}
    for pid, k in kids.items():
        for fd in (k["fd"], k["pidfd"]):
            poller.register(fd, select.POLLIN)
            by_fd[fd] = pid
    pending = set(by_fd)
    while pending:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        for fd, _ev in poller.poll(left * 1000):
            k = kids[by_fd[fd]]
            if fd == k["fd"]:
                chunk = os.read(fd, 65536)
                k["data"] += chunk
                if chunk:
                    continue
            poller.unregister(fd)
            pending.discard(fd)
    for pid, k in kids.items():
        hung = k["pidfd"] in pending
        if hung:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        if hung:
            k["status"] = "hang"
        elif os.WIFSIGNALED(status):
            k["status"] = "signal %d" % os.WTERMSIG(status)
        else:
            k["status"] = "exit %d" % os.WEXITSTATUS(status)
        os.close(k["fd"])
        os.close(k["pidfd"])
    report = {
        "pid": os.getpid(),
        "before": before,
        "children": [{"pid": pid, "status": k["status"],
                      "answer": json.loads(k["data"]) if k["data"] else None}
                     for pid, k in kids.items()],
        "after": ask(is_worker),
    }
    if is_worker:
        report["orphan"] = orphan_check()
    write_json(outfile, report)
    if wait:
        wait_for_term()


def main(argv):
    # Take SIGTERM synchronously, as the C example does.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
    if len(argv) == 3 and argv[1] == "worker":
        worker(argv[2])
    elif len(argv) == 4 and argv[1] == "ready":
        ready_worker(argv[2], argv[3])
    elif len(argv) == 3 and argv[1] == "heartbeat":
        heartbeat_worker(int(argv[2]))
    elif len(argv) in (3, 4) and argv[1] == "fork":
        fork_test(argv[2], argv[3:] == ["--wait"])
    else:
        sys.stderr.write("usage: probe.py worker OUTDIR | ready OUTDIR TEXT"
                         " | heartbeat INTERVAL_MS | fork OUTFILE [--wait]\n")
        return 100
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
