"""A worker for test_leases_drain.py, run under a real supervised.

    lease_drain_worker.py drain OUT
        subscribes to its own topic (supervise.Drain), reports ready, then
        "serves" (counts loop turns) until the drain notice arrives; writes
        OUT (JSON: pid, served, notice, whoami's draining), sends
        DrainAck(served) and exits 0.
    lease_drain_worker.py fork OUT POOL
        acquires its own lease on POOL (slot = its ordinal) as a worker,
        then forks 4 children with os.fork(); each opens a session of its
        own, acquires a lease on POOL, releases it and exits 0. Waits for
        them with a deadline (a child that hangs is killed, by its pid, and
        reported), renews its own lease afterwards, writes OUT and stays up.

Exit status: 0 after a drain, 2 on bad arguments, 3 on a failed call.
"""

import json
import os
import select
import signal
import sys
import time

import supervise

CHILDREN = 4


def write(path, data):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f)
    os.rename(tmp, path)


def lease_dict(lease):
    return {"id": lease.id, "pool": lease.pool, "slot": lease.slot,
            "token": lease.token, "resource": lease.resource,
            "holder": lease.holder}


def drain_mode(out):
    d = supervise.Drain()
    seen = []
    d.on_drain(seen.append)
    supervise.ready("serving")
    served = 0
    while d.poll(0.02) is None:
        served += 1
    me = supervise.whoami()
    write(out, {"pid": os.getpid(), "served": served,
                "handler_calls": len(seen),
                "notice": d.notice._asdict(), "draining": me.draining,
                "deadline_in_ms": me.drain_deadline_in_ms})
    d.ack(served)
    d.close()
    return 0


def child(pool):
    """In a forked child: a session and a lease of its own."""
    try:
        with supervise.session(10) as s:
            with s.lease(pool, timeout=5) as lease:
                result = lease_dict(lease)
                result["listed"] = [x.id for x in s.leases(pool)]
        result["pid"] = os.getpid()
        return result
    except Exception as e:  # reported, not raised: the parent checks
        return {"error": repr(e), "pid": os.getpid()}


def fork_mode(out, pool):
    me = supervise.whoami()
    mine = supervise.lease(pool, slot=me.ordinal)
    children = []
    for i in range(CHILDREN):
        rfd, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(rfd)
            data = json.dumps(child(pool)).encode()
            os.write(wfd, data)
            os._exit(0)
        os.close(wfd)
        children.append((pid, rfd))
    results = []
    deadline = time.monotonic() + 20
    for pid, rfd in children:
        status = None
        # Wait on a pidfd with the deadline, not in steps.
        pfd = os.pidfd_open(pid)
        left = max(0.0, deadline - time.monotonic())
        if select.select([pfd], [], [], left)[0]:
            status = os.waitpid(pid, 0)[1]
        os.close(pfd)
        if status is None:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            status_text = "hung"
        elif os.WIFSIGNALED(status):
            status_text = "signal %d" % os.WTERMSIG(status)
        else:
            status_text = "exit %d" % os.WEXITSTATUS(status)
        chunks = []
        while True:
            chunk = os.read(rfd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
        os.close(rfd)
        answer = json.loads(b"".join(chunks) or b"null")
        results.append({"pid": pid, "status": status_text,
                        "answer": answer})
    renewed = mine.renew()
    write(out, {"pid": os.getpid(), "mine": lease_dict(mine),
                "renewed_token": renewed.token, "children": results})
    signal.pause()
    return 0


def main(argv):
    if len(argv) >= 3 and argv[1] == "drain":
        return drain_mode(argv[2])
    if len(argv) >= 4 and argv[1] == "fork":
        return fork_mode(argv[2], argv[3])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except supervise.Error as e:
        sys.stderr.write("lease_drain_worker: %r\n" % (e,))
        sys.exit(3)
