#!/usr/bin/python3
"""counter_worker.py: a Python worker that counts requests with Debian's
python3-prometheus-client (0.16) in multiprocess mode, keyed by a slot of
an exclusive lease pool instead of its pid.

Design:
  - Why a lease slot. The client names its files <type>_<identifier>.db
    (counter_3.db, gauge_liveall_3.db), mmaps them and takes no lock; its
    documentation requires the identifier to be distinct among live
    processes. An ordinal is not: during a rolling restart the old and the
    new generation of an ordinal run at once. A slot of a lease pool is
    granted to one live holder at a time and is bounded by the pool's size,
    so it is both safe and bounded. The identifier is the slot number alone
    (the client's reader splits file names on "_").
  - The lease. The worker asks for the slot equal to its ordinal first
    (after a crash its predecessor's lease was revoked when it was reaped,
    so the replacement reopens the same files); if that slot is taken (the
    old generation still holds it during a rolling restart) or out of range
    it takes the lowest free slot, waiting up to PROM_EXAMPLE_LEASE_WAIT
    seconds (default 10). It holds the lease over its own connection to the
    supervisor; the supervisor revokes it when the worker is reaped.
  - Order of start. Identity from SUPERVISE_* (zero round trips), a
    subscription to its own event topic (drain notice, lease revocation),
    the lease, and only then prometheus_client's values.ValueClass is set to
    MultiProcessValue(process_identifier=<the slot>) and the metrics are
    created: no file is opened before the slot is ours.
  - Requests arrive on a Unix stream socket $PROM_EXAMPLE_RUN_DIR/
    w-ORDINAL-GENERATION.sock (one per process: the two generations of an
    ordinal overlap), one request line per connection:
      ping   -> "ok PID ORDINAL GENERATION SLOT TOKEN COUNT"
      inc K  -> K increments of example_requests_total (1 <= K <= 100000),
                then the line "inc SLOT PID K T" appended to the journal,
                then the "ok ..." line
      metrics-> the text exposition of every file in the directory
    COUNT is the number of increments this process made. Once a client
    holds an answer to "inc", the increments are in the mmap'd file (the
    page cache outlives the process, kill -9 included) and in the journal.
  - The journal $PROM_EXAMPLE_RUN_DIR/journal is shared by all workers,
    opened O_APPEND, one write(2) per line, times from CLOCK_MONOTONIC (one
    clock for every process of the machine): "hold SLOT PID ORDINAL
    GENERATION TOKEN T" after the grant and before the first write,
    "drop SLOT PID COUNT T" after the last write and before the release.
    From it a reader can check that the writers of one file never overlap.
  - Ready. PROM_EXAMPLE_READY=listening (default) reports ready once the
    socket listens; "first-inc" only after the first "inc" was answered (a
    new generation proves it counts before a rolling restart drains the
    old one; the integration test uses it).
  - Stop. SIGTERM (the stop signal, and the default drain signal) or a
    drain notice on its topic: the request in hand is finished, the
    listener closed, the live gauge files removed (mark_process_dead),
    "drop" journaled, DrainAck sent when it was drained, the lease released;
    exit 0. A revocation of its lease (a notice is a hint, see
    docs/leases.md) stops it at once without touching the files, exit 4.
Environment: PROMETHEUS_MULTIPROC_DIR and PROM_EXAMPLE_RUN_DIR (existing
directories), PROM_EXAMPLE_POOL (default "prom"), the SUPERVISE_* variables
and SUPERVISE_LIBRARY for an uninstalled libsupervise. Exit 2: bad
environment; 3: no lease.
"""
import os
import select
import signal
import socket
import sys
import time

import supervise

MAX_INC = 100000
MAX_LINE = 64
POLL_S = 0.1


def log(msg):
    """One line on stderr (the daemon's log)."""
    sys.stderr.write("counter_worker[%d]: %s\n" % (os.getpid(), msg))
    sys.stderr.flush()


def env_dir(var):
    """The existing directory named by var, or exit 2."""
    path = os.environ.get(var, "")
    if not path or not os.path.isdir(path):
        log("%s must name an existing directory" % var)
        sys.exit(2)
    return path


class Journal:
    """The shared append-only journal: one write(2) per line."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def write(self, *words):
        line = " ".join(str(w) for w in words) + " %d\n" % time.monotonic_ns()
        os.write(self.fd, line.encode())


def acquire(client, pool, ordinal, wait):
    """The lease: slot = ordinal if free, else the lowest free slot within
    wait seconds. Exits 3 when there is none."""
    try:
        return client.lease(pool, slot=ordinal)
    except (supervise.Busy, supervise.BadRequest, supervise.Conflict):
        pass  # taken (an overlapping generation) or out of range
    try:
        return client.lease(pool, wait=wait, timeout=wait + 5)
    except supervise.Error as e:
        log("no slot in pool %s within %.1f s: %s" % (pool, wait, e))
        sys.exit(3)


def metrics_for(slot):
    """Keys prometheus_client's files on the slot, then creates the metrics.
    Must run before any metric of the process exists."""
    from prometheus_client import values
    key = str(slot)
    values.ValueClass = values.MultiProcessValue(process_identifier=lambda: key)
    from prometheus_client import Counter, Gauge
    counter = Counter("example_requests", "Requests handled by the example workers")
    gauge = Gauge("example_worker_generation", "Generation of the worker holding each slot",
                  multiprocess_mode="liveall")
    return counter, gauge


def exposition(directory):
    """The text exposition of every file in directory."""
    from prometheus_client import CollectorRegistry, generate_latest, multiprocess
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry, path=directory)
    return generate_latest(registry)


class Worker:
    """The request loop and its state."""

    def __init__(self, me, lease, counter, journal, metrics_dir):
        self.me = me
        self.lease = lease
        self.counter = counter
        self.journal = journal
        self.metrics_dir = metrics_dir
        self.count = 0
        self.incs = 0

    def ok(self):
        return ("ok %d %d %d %d %d %d\n" % (os.getpid(), self.me.ordinal, self.me.generation,
                                           self.lease.slot, self.lease.token,
                                           self.count)).encode()

    def answer(self, line):
        """The reply to one request line."""
        if line == "ping":
            return self.ok()
        words = line.split()
        if len(words) == 2 and words[0] == "inc" and words[1].isdigit() \
                and len(words[1]) <= 6:
            k = int(words[1])
            if not 1 <= k <= MAX_INC:
                return b"err count must be 1..%d\n" % MAX_INC
            for _ in range(k):
                self.counter.inc()
            self.journal.write("inc", self.lease.slot, os.getpid(), k)
            self.count += k
            self.incs += 1
            return self.ok()
        if line == "metrics":
            return exposition(self.metrics_dir)
        return b"err unknown request\n"

    def serve_one(self, conn):
        """Reads one line (2 s at most) and answers it."""
        conn.settimeout(2.0)
        data = b""
        try:
            while b"\n" not in data and len(data) <= MAX_LINE:
                chunk = conn.recv(MAX_LINE + 1)
                if not chunk:
                    break
                data += chunk
            line = data.split(b"\n", 1)[0].decode("ascii", "replace").strip()
            conn.sendall(self.answer(line))
        except OSError as e:
            log("request: %s" % e)
        finally:
            conn.close()


def main():
    me = supervise.Identity.from_env()  # NotAWorker outside a worker
    metrics_dir = env_dir("PROMETHEUS_MULTIPROC_DIR")
    run_dir = env_dir("PROM_EXAMPLE_RUN_DIR")
    pool = os.environ.get("PROM_EXAMPLE_POOL", "prom")
    ready_mode = os.environ.get("PROM_EXAMPLE_READY", "listening")
    wait = float(os.environ.get("PROM_EXAMPLE_LEASE_WAIT", "10"))
    if ready_mode not in ("listening", "first-inc") or not 0 < wait <= 3600:
        log("PROM_EXAMPLE_READY must be listening or first-inc, "
            "PROM_EXAMPLE_LEASE_WAIT in (0, 3600]")
        sys.exit(2)

    stop = {"why": None}
    wake_r, wake_w = socket.socketpair()
    wake_r.setblocking(False)
    wake_w.setblocking(False)
    signal.set_wakeup_fd(wake_w.fileno(), warn_on_full_buffer=False)
    signal.signal(signal.SIGTERM, lambda *_: stop.__setitem__("why", "sigterm"))

    # Subscribed before the lease, so that no notice about it is missed.
    events = supervise.events(prefix="w/%s/%d/" % (me.group, me.ordinal))
    client = supervise.default_client()
    lease = acquire(client, pool, me.ordinal, wait)
    journal = Journal(os.path.join(run_dir, "journal"))
    journal.write("hold", lease.slot, os.getpid(), me.ordinal, me.generation, lease.token)
    counter, gauge = metrics_for(lease.slot)
    gauge.set(me.generation)
    worker = Worker(me, lease, counter, journal, metrics_dir)

    path = os.path.join(run_dir, "w-%d-%d.sock" % (me.ordinal, me.generation))
    if os.path.exists(path):
        os.unlink(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    status = "slot %d token %d" % (lease.slot, lease.token)
    if ready_mode == "listening":
        client.ready(status)
    print("[prometheus-py] %s[%d] generation %d pid %d: lease %s[%d] token %d, files keyed %d in %s"
          % (me.group, me.ordinal, me.generation, os.getpid(), pool, lease.slot, lease.token,
             lease.slot, metrics_dir), flush=True)

    drained = False
    while stop["why"] is None:
        ev = events.poll(0)
        while ev is not None:
            if ev.kind == "drain" and ev.generation == me.generation:
                drained = True
                stop["why"] = "drain"
            elif ev.kind == "lease" and "what=revoked" in ev.details \
                    and (" id=%d " % lease.id) in ev.details:
                stop["why"] = "revoked"
            ev = events.poll(0)
        if stop["why"] is not None:
            break
        readable, _, _ = select.select([listener, wake_r], [], [], POLL_S)
        if wake_r in readable:
            try:
                wake_r.recv(64)
            except BlockingIOError:
                pass
        if listener in readable and stop["why"] is None:
            conn, _ = listener.accept()
            worker.serve_one(conn)
            if ready_mode == "first-inc" and worker.incs == 1:
                client.ready(status)
                ready_mode = "done"

    listener.close()
    os.unlink(path)
    if stop["why"] == "revoked":
        # Another process may hold the slot already: touch nothing.
        journal.write("revoked", lease.slot, os.getpid(), worker.count)
        log("lease %d revoked, exiting without writing" % lease.id)
        sys.exit(4)
    from prometheus_client import multiprocess
    multiprocess.mark_process_dead(str(lease.slot), metrics_dir)
    journal.write("drop", lease.slot, os.getpid(), worker.count)
    if not drained:
        # SIGTERM is also the default drain signal: was it a drain?
        try:
            drained = bool(client.whoami().draining)
        except supervise.Error as e:
            log("whoami: %s" % e)
    if drained:
        try:
            client.drain_ack(worker.count)
        except supervise.Error as e:
            log("drain ack: %s" % e)
    lease.release()
    events.close()
    sys.exit(0)


if __name__ == "__main__":
    main()
