#!/usr/bin/python3
"""whoami_worker.py: the smallest useful libsupervise worker, in Python.

Started by supervised, it asks "which worker am I" over the control socket
($SUPERVISE_URL) through the Python binding and prints one line in the
format of examples/whoami_worker.c, with the prefix [py]; then it waits for
SIGTERM and exits 0. With --interval-ms N it asks and prints again every N
milliseconds.

  usage: whoami_worker.py [--interval-ms N]

Run from a checkout without installing the binding: the directory above
this file is put on sys.path when ``import supervise`` fails, and the
library is found through SUPERVISE_LIBRARY or the installed soname.
Exit status: 0 after SIGTERM, 1 when the supervisor refuses, 111 when the
library or the supervisor cannot be reached, 100 for bad usage.
"""

import os
import signal
import sys

try:
    import supervise
except ImportError:
    sys.path.insert(0, os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    import supervise

TIMEOUT_S = 5.0


def print_identity():
    """Asks the supervisor and prints one line; returns an exit status."""
    try:
        me = supervise.whoami(timeout=TIMEOUT_S)
    except supervise.LibraryNotFound as e:
        sys.stderr.write("[py] %s\n" % e)
        return 111
    except (supervise.ConnectError, supervise.Timeout) as e:
        sys.stderr.write("[py] cannot reach the supervisor: %s\n" % e)
        return 111
    except supervise.Error as e:
        sys.stderr.write("[py] whoami: %s\n" % e)
        return 1
    context = " > ".join(str(f) for f in me.context)
    print("[py] I am %s[%d] generation %d pid %d of %d, purpose \"%s\", "
          "context %s, parent %s" % (
              me.group, me.ordinal, me.generation, me.pid, me.group_size,
              me.purpose, context,
              "yes" if me.parent is not None else "none"), flush=True)
    return 0


def main(argv):
    interval = None
    if len(argv) == 3 and argv[1] == "--interval-ms" and argv[2].isdigit() \
            and 0 < int(argv[2]) <= 86400000:
        interval = int(argv[2]) / 1000.0
    elif len(argv) != 1:
        sys.stderr.write("usage: %s [--interval-ms N]\n" % argv[0])
        return 100
    # Take SIGTERM synchronously: we exit cleanly when asked.
    stop = {signal.SIGTERM, signal.SIGINT}
    signal.pthread_sigmask(signal.SIG_BLOCK, stop)
    status = print_identity()
    if status != 0:
        return status
    while True:
        if interval is None:
            signal.sigwait(stop)
            break
        if signal.sigtimedwait(stop, interval) is not None:
            break
        print_identity()
    print("[py] %s[%s] got SIGTERM: finishing and exiting 0" % (
        os.environ.get("SUPERVISE_GROUP"),
        os.environ.get("SUPERVISE_ORDINAL")), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
