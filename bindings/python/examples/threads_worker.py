#!/usr/bin/python3
"""threads_worker.py: a Python worker whose threads are sub-workers.

Started by supervised, it starts two threads (named "pool-0" and "pool-1");
each registers itself with supervise.thread_identity(), waits for the other
(so they hold numbers 0 and 1), and prints its identity and context, [process p, thread t], with the prefix [py-threads].
Then the worker waits for SIGTERM and exits 0 (the threads' numbers are
released when they end; the supervisor reclaims any left when the process
dies). Needs a supervisor with the feature "subworkers" (protocol v1.4).
"""

import os
import signal
import sys
import threading

try:
    import supervise
except ImportError:
    sys.path.insert(0, os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    import supervise

TIMEOUT_S = 5.0
failed = []
# Both threads are registered at once (so they hold numbers 0 and 1).
both = threading.Barrier(2, timeout=TIMEOUT_S)


def work():
    try:
        me = supervise.thread_identity(timeout=TIMEOUT_S)
    except supervise.Error as e:
        sys.stderr.write("[py-threads] %s: %s\n"
                         % (threading.current_thread().name, e))
        failed.append(e)
        both.abort()
        return
    try:
        both.wait()
    except threading.BrokenBarrierError:
        return
    print("[py-threads] thread %s is %s %d (sub-generation %d) of pid %d, "
          "context %s, parent %s" % (
              threading.current_thread().name, me.kind.name.lower(),
              me.ordinal, me.generation, me.pid,
              " > ".join(str(f) for f in me.context), me.parent),
          flush=True)


def main():
    threads = [threading.Thread(target=work, name="pool-%d" % i)
               for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failed:
        return 1
    signal.sigwait({signal.SIGTERM})
    return 0


if __name__ == "__main__":
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    sys.exit(main())
