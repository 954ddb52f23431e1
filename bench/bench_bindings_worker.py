"""bench_bindings_worker.py: the Python worker of bench_bindings.py.

Runs under supervised and answers the commands of bench_bindings_worker.c
(its design comment is the protocol), timing the Python binding:

  live N    N calls of Client.whoami() on one client (connected by the
            warm-up), each timed on its own
  env N K   N samples, each the time of K Identity.from_env() calls
  act N K   N samples, each the time of K ``with supervise.activity()``
            scopes (enter + leave)
  lease N K POOL
            N samples, each the time of K ``client.lease(POOL)`` (any
            slot, no wait) + ``Lease.release()`` pairs; "err" when a call
            fails or a slot's fencing token does not grow between grants
  quit      exit 0

Commands come one per line from the FIFO argv[1], answers go to the FIFO
argv[2]; times are time.perf_counter_ns() (CLOCK_MONOTONIC) differences in
nanoseconds. The binding is found through PYTHONPATH, the library through
SUPERVISE_LIBRARY.
"""
import re
import sys
import time

import supervise

MAX_SAMPLES = 100000
MAX_BATCH = 10000
POOL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}\Z")
# The last grant seen (slot, token): only this worker runs while it is
# timed and it releases each lease first, so a slot's tokens must grow.
_last = [-1, 0]


def time_live(client, n):
    """Times n live whoami calls; returns their durations (ns)."""
    clock = time.perf_counter_ns
    out = []
    for _ in range(n):
        t0 = clock()
        client.whoami()
        out.append(clock() - t0)
    return out


def time_env(n, k):
    """Times n batches of k Identity.from_env() calls (ns per batch)."""
    clock = time.perf_counter_ns
    from_env = supervise.Identity.from_env
    out = []
    for _ in range(n):
        t0 = clock()
        for _ in range(k):
            from_env()
        out.append(clock() - t0)
    return out


def time_act(n, k):
    """Times n batches of k activity scopes (ns per batch)."""
    clock = time.perf_counter_ns
    scope = supervise.activity("bench")
    out = []
    for _ in range(n):
        t0 = clock()
        for _ in range(k):
            with scope:
                pass
        out.append(clock() - t0)
    return out


def time_lease(client, pool, n, k):
    """Times n batches of k lease acquire + release pairs (ns per batch).
    Returns the durations, or an "err" line when a token did not grow."""
    clock = time.perf_counter_ns
    lease = client.lease
    last = _last
    out = []
    for _ in range(n):
        t0 = clock()
        for _ in range(k):
            held = lease(pool)
            held.release()
            if held.slot == last[0] and held.token <= last[1]:
                return "err lease: a fencing token did not grow"
            last[0], last[1] = held.slot, held.token
        out.append(clock() - t0)
    return out


def answer(client, line):
    """Returns the answer line to one command line, or None for quit."""
    words = line.split()
    if words == ["quit"]:
        return None
    try:
        if len(words) == 2 and words[0] == "live":
            n = int(words[1])
            if 0 < n <= MAX_SAMPLES:
                return "ok " + " ".join(map(str, time_live(client, n)))
        if len(words) == 3 and words[0] == "env":
            n, k = int(words[1]), int(words[2])
            if 0 < n <= MAX_SAMPLES and 0 < k <= MAX_BATCH:
                return "ok " + " ".join(map(str, time_env(n, k)))
        if len(words) == 3 and words[0] == "act":
            n, k = int(words[1]), int(words[2])
            if 0 < n <= MAX_SAMPLES and 0 < k <= MAX_BATCH:
                return "ok " + " ".join(map(str, time_act(n, k)))
        if len(words) == 4 and words[0] == "lease":
            n, k, pool = int(words[1]), int(words[2]), words[3]
            if 0 < n <= MAX_SAMPLES and 0 < k <= MAX_BATCH \
                    and POOL_NAME.match(pool):
                t = time_lease(client, pool, n, k)
                return t if isinstance(t, str) else "ok " + " ".join(map(str, t))
    except supervise.Error as e:
        return "err %s" % (e,)
    except ValueError:
        pass
    return "err bad command"


def main():
    if len(sys.argv) != 3:
        sys.stderr.write("usage: bench_bindings_worker.py CMD_FIFO REPLY_FIFO\n")
        return 2
    client = supervise.Client()
    # The driver opens the reply FIFO first, then the command FIFO.
    with open(sys.argv[1], "r") as cmd, open(sys.argv[2], "w") as out:
        for line in cmd:
            ans = answer(client, line)
            if ans is None:
                break
            out.write(ans + "\n")
            out.flush()
    client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
