#!/usr/bin/python3
"""test_prometheus_python.py: a real consumer of lease slots (issue 8).

Three workers of examples/prometheus/counter_worker.py count with Debian's
python3-prometheus-client in multiprocess mode, keyed by the slot of an
exclusive lease on the pool "prom" (6 slots, twice the group), under a
supervised this test starts. Two phases:

1. 50 kill -9 restarts spread over the three ordinals (17, 17, 16) while
   they count: after every answer of every generation the metrics
   directory holds exactly counter_{0,1,2}.db and gauge_liveall_{0,1,2}.db
   (a replacement takes its ordinal's slot again: the files do not grow per
   pid), each generation reports the slot equal to its ordinal, and the
   supervisor agrees on its pid.
2. `supervisectl restart prom --rolling --json` while both generations
   count: for each ordinal the old process answers an "inc" after its
   successor already holds another slot, and before the successor is ready
   (the workers run with PROM_EXAMPLE_READY=first-inc, so the roll drains
   the old one only after the new one counted). The reaping report must
   show each old process exited 0 after DrainAck with served = the count it
   acknowledged to the test.

Checked throughout, by a monitor thread:
  - `supervisectl leases prom --json` (every 50 ms): the slots held have
    no duplicates, nor the holders, and never exceed the pool;
  - /proc/PID/maps of the daemon's children (every 10 ms): no metric file
    is mapped by two live processes at once (a duplicate is confirmed by
    reading the first process's maps again after the second's).
Checked at the end:
  - the counter summed by prometheus_client's own MultiProcessCollector
    equals the increments acknowledged, and each counter_S.db
    (MmapedDict) equals what the processes that held slot S acknowledged;
  - the journal: each process's "hold" matches what it answered (slot,
    token), every lease row the monitor saw was journaled by its holder,
    per slot the writers' intervals [hold, end] never overlap and their
    fencing tokens increase (end: the "drop" line of a process that
    stopped, or, for one killed with SIGKILL, the moment the test got its
    last answer: every write of a worker happens before an answer);
  - the generation gauge has one series per slot held, at its holder's
    generation; metric files never exceed the pool's slots;
  - the daemon stops on SIGTERM with status 0.

Exactness: a worker answers "inc K" only after the K increments are in its
mmap'd file and the journal; the test kills only after an answer, and an
"inc" refused by a worker that is stopping was never counted. Every wait
polls with a deadline. The test stops the daemon it started, by its pid.

Usage (ctest sets these): SUPERVISED, SUPERVISECTL, SUPERVISE_LIBRARY.
Exit 0 pass, 1 fail, 77 skip (python3-prometheus-client is not installed).
SV_TEST_KEEP=1 keeps the temporary directory.
"""
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

try:
    from prometheus_client import CollectorRegistry, multiprocess
    from prometheus_client.mmap_dict import MmapedDict
except ImportError as e:
    sys.stderr.write("SKIP: python3-prometheus-client is not installed (%s); "
                     "apt-get install python3-prometheus-client\n" % e)
    sys.exit(77)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORKER = os.path.join(ROOT, "examples", "prometheus", "counter_worker.py")
GROUP = "prom"
POOL = "prom"
WORKERS = 3
SLOTS = 2 * WORKERS
KILLS = 50
COUNTER = "example_requests_total"
GAUGE = "example_worker_generation"
KILL_FILES = sorted(["counter_%d.db" % s for s in range(WORKERS)]
                    + ["gauge_liveall_%d.db" % s for s in range(WORKERS)])


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


def wait_for(pred, what, timeout=15.0):
    """Polls pred every 5 ms until it returns a truthy value."""
    end = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > end:
            raise Failure("timed out after %.0f s waiting for %s" % (timeout, what))
        time.sleep(0.005)


class Answer:
    """A parsed "ok PID ORDINAL GENERATION SLOT TOKEN COUNT" line."""

    def __init__(self, text, what):
        w = text.split()
        check(len(w) == 7 and w[0] == "ok" and all(x.isdigit() for x in w[1:])
              and text.endswith("\n"), "bad answer to %s: %r" % (what, text))
        self.pid, self.ordinal, self.generation, self.slot, self.token, self.count = \
            (int(x) for x in w[1:])
        self.at = time.monotonic_ns()


class Test:
    def __init__(self, tmp):
        self.tmp = tmp
        self.sock_dir = os.path.join(tmp, "sock")
        self.metrics = os.path.join(tmp, "metrics")
        self.run = os.path.join(tmp, "run")
        for d in (self.sock_dir, self.metrics, self.run):
            os.mkdir(d)
        self.url = "ipc://" + os.path.join(self.sock_dir, "control.sock")
        self.daemon = None
        self.lock = threading.Lock()
        self.acked = {}        # pid -> increments acknowledged
        self.slot_of = {}      # pid -> slot it answered
        self.token_of = {}     # pid -> token it answered
        self.last_answer = {}  # pid -> monotonic ns of its last answer
        self.killed = set()
        self.kill_phase = True
        self.stop_monitor = threading.Event()
        self.monitor_error = None
        self.lease_rows = set()
        self.lease_samples = 0
        self.maps_samples = 0
        self.mappers = {}      # file -> pids seen mapping it

    # -- the daemon and supervisectl -------------------------------------
    def config(self):
        def q(s):
            return '"%s"' % s.replace("\\", "\\\\").replace('"', '\\"')
        env = ["PROMETHEUS_MULTIPROC_DIR=" + self.metrics, "PROM_EXAMPLE_RUN_DIR=" + self.run,
               "PROM_EXAMPLE_POOL=" + POOL, "PROM_EXAMPLE_READY=first-inc",
               "PYTHONPATH=" + os.path.join(ROOT, "bindings", "python"),
               "SUPERVISE_LIBRARY=" + os.environ["SUPERVISE_LIBRARY"]]
        path = os.path.join(self.tmp, "supervised.conf")
        with open(path, "w") as f:
            f.write("""socket_dir = %s;
stop_timeout_ms = 3000;
pools = ( { name = %s; slots = %d; } );
groups = ( {
  name = %s;
  argv = [ "/usr/bin/python3", %s ];
  count = %d;
  purpose = "count requests with prometheus_client keyed by a lease slot";
  env = [ %s ];
  ready = true;
  start_timeout_ms = 15000;
  min_uptime_ms = 0;
} );
""" % (q(self.sock_dir), q(POOL), SLOTS, q(GROUP), q(WORKER), WORKERS,
       ", ".join(q(e) for e in env)))
        return path

    def ctl(self, *args):
        r = subprocess.run([os.environ["SUPERVISECTL"], "-s", self.url, *args],
                           capture_output=True, text=True, timeout=30)
        check(r.returncode == 0, "supervisectl %s: rc %d: %s"
              % (" ".join(args), r.returncode, r.stderr.strip()))
        return r.stdout

    def start(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith("SUPERVISE_")
               or k == "SUPERVISE_LIBRARY"}
        self.daemon = subprocess.Popen(
            [os.environ["SUPERVISED"], "--config", self.config(), "--foreground"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, env=env,
            stderr=open(os.path.join(self.tmp, "daemon.log"), "w"))
        wait_for(lambda: os.path.exists(os.path.join(self.sock_dir, "control.sock")),
                 "the daemon's control socket", 10)

    def stop(self):
        if self.daemon is None:
            return
        d, self.daemon = self.daemon, None
        d.send_signal(signal.SIGTERM)
        try:
            rc = d.wait(timeout=15)
        except subprocess.TimeoutExpired:
            d.kill()
            d.wait()
            raise Failure("supervised did not exit within 15 s of SIGTERM")
        check(rc == 0, "supervised exited with %d" % rc)

    def workers(self):
        """[(ordinal, generation, pid, restarts, state)] of the group."""
        out = json.loads(self.ctl("status", GROUP, "--json"))
        return sorted((w["ordinal"], w["generation"], w["pid"], w["restarts"], w["state"])
                      for w in out)

    # -- requests to workers ----------------------------------------------
    def request(self, ordinal, generation, line, timeout=5.0):
        """The whole answer of worker ordinal/generation, or None when no
        process listens there (not yet, or no more)."""
        path = os.path.join(self.run, "w-%d-%d.sock" % (ordinal, generation))
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        try:
            s.connect(path)
            s.sendall((line + "\n").encode())
            out = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                out += chunk
            return out.decode()
        except (FileNotFoundError, ConnectionRefusedError, ConnectionResetError,
                BrokenPipeError):
            return None
        except socket.timeout:
            raise Failure("worker %d/%d: no answer to %r in %.0f s"
                          % (ordinal, generation, line, timeout))
        finally:
            s.close()

    def note(self, a):
        """Records what an answer says about its process."""
        with self.lock:
            check(self.slot_of.setdefault(a.pid, a.slot) == a.slot
                  and self.token_of.setdefault(a.pid, a.token) == a.token,
                  "pid %d changed its slot or token" % a.pid)
            self.last_answer[a.pid] = a.at

    def ping(self, ordinal, generation):
        """The Answer of generation's ping, or None when it does not listen."""
        text = self.request(ordinal, generation, "ping")
        if not text:
            return None
        a = Answer(text, "ping")
        check((a.ordinal, a.generation) == (ordinal, generation),
              "w-%d-%d.sock answered as %d/%d" % (ordinal, generation, a.ordinal, a.generation))
        self.note(a)
        return a

    def inc(self, ordinal, generation, k, must=True):
        """Asks for k increments; returns the Answer, or None (only when not
        must) when the process no longer listens: nothing was counted."""
        text = self.request(ordinal, generation, "inc %d" % k)
        if not text:
            check(not must, "worker %d/%d did not answer inc %d" % (ordinal, generation, k))
            return None
        a = Answer(text, "inc %d" % k)
        self.note(a)
        with self.lock:
            before = self.acked.get(a.pid, 0)
            check(a.count == before + k, "worker %d/%d counted %d after inc %d, expected %d"
                  % (ordinal, generation, a.count, k, before + k))
            self.acked[a.pid] = before + k
        return a

    def db_files(self):
        return sorted(f for f in os.listdir(self.metrics) if f.endswith(".db"))

    # -- the monitor --------------------------------------------------------
    def children(self):
        pids = []
        for task in os.listdir("/proc/%d/task" % self.daemon.pid):
            try:
                with open("/proc/%d/task/%s/children" % (self.daemon.pid, task)) as f:
                    pids += [int(p) for p in f.read().split()]
            except OSError:
                pass
        return pids

    def mapped(self, pid):
        """The metric files pid maps now, as {(device, inode): name} (empty
        once it has exited). A file removed while mapped (a live gauge file
        after mark_process_dead) is named without " (deleted)"; its inode
        tells it from a new file of the same name."""
        prefix = self.metrics + os.sep
        found = {}
        try:
            with open("/proc/%d/maps" % pid) as f:
                for line in f:
                    w = line.split(None, 5)
                    if len(w) == 6 and w[5].startswith(prefix):
                        name = w[5].strip()[len(prefix):]
                        if name.endswith(" (deleted)"):
                            name = name[:-len(" (deleted)")]
                        found[(w[3], w[4])] = name
        except OSError:
            pass
        return found

    def check_maps(self):
        seen = {}
        for pid in self.children():
            for ident, name in self.mapped(pid).items():
                self.mappers.setdefault(name, set()).add(pid)
                other = seen.setdefault(ident, pid)
                # The first one's maps again, after the second's: both at once.
                check(other == pid or ident not in self.mapped(other),
                      "%s mapped by pids %d and %d at once" % (name, other, pid))
        self.maps_samples += 1

    def check_leases(self):
        rows = json.loads(self.ctl("leases", POOL, "--json"))
        slots = [r["slot"] for r in rows]
        holders = [r["holder"] for r in rows]
        check(len(set(slots)) == len(slots) and len(set(holders)) == len(holders)
              and len(rows) <= SLOTS and all(0 <= s < SLOTS for s in slots),
              "leases of %s: %r" % (POOL, rows))
        if self.kill_phase:
            check(len(rows) <= WORKERS, "more leases than workers outside a roll: %r" % rows)
        for r in rows:
            self.lease_rows.add((r["slot"], r["holder"], r["token"]))
        self.lease_samples += 1

    def monitor(self):
        next_leases = 0.0
        try:
            while not self.stop_monitor.is_set():
                self.check_maps()
                if time.monotonic() >= next_leases:
                    self.check_leases()
                    next_leases = time.monotonic() + 0.05
                self.stop_monitor.wait(0.01)
        except Exception as e:  # reported by the main thread
            self.monitor_error = e

    # -- phase 1: kill -9 ---------------------------------------------------
    def kill_ordinal(self, ordinal, kills, seed, errors):
        try:
            rng = random.Random(seed)
            for gen in range(kills + 1):
                a = wait_for(lambda: self.ping(ordinal, gen),
                             "worker %d generation %d" % (ordinal, gen))
                want = self.acked.get(a.pid, 0)
                check(a.slot == ordinal and a.count == want,
                      "worker %d/%d: slot %d count %d, expected slot %d count %d"
                      % (ordinal, gen, a.slot, a.count, ordinal, want))
                self.inc(ordinal, gen, rng.randint(1, 60))
                got = self.db_files()
                check(got == KILL_FILES, "metric files after %d/%d counted: %r"
                      % (ordinal, gen, got))
                if gen == kills:
                    break
                w = [x for x in self.workers() if x[0] == ordinal]
                check(len(w) == 1 and w[0][1:3] == (gen, a.pid),
                      "supervisor says %r, worker says %d/%d pid %d" % (w, ordinal, gen, a.pid))
                with self.lock:
                    self.killed.add(a.pid)
                os.kill(a.pid, signal.SIGKILL)
        except Exception as e:
            errors.append(e)

    def kill_phase_run(self):
        per = [KILLS // WORKERS + (1 if o < KILLS % WORKERS else 0) for o in range(WORKERS)]
        # Every ordinal counts once before any kill: the file set is complete.
        for o in range(WORKERS):
            wait_for(lambda: self.ping(o, 0), "worker %d generation 0" % o)
            self.inc(o, 0, 1)
        check(self.db_files() == KILL_FILES, "metric files after the first start: %r"
              % self.db_files())
        errors = []
        threads = [threading.Thread(target=self.kill_ordinal, args=(o, per[o], 1000 + o, errors))
                   for o in range(WORKERS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(45)
        check(not any(t.is_alive() for t in threads), "the kill phase did not end in 45 s")
        if errors:
            raise errors[0]
        ws = self.workers()
        check([(o, g, r) for o, g, _, r, _ in ws] == [(o, per[o], per[o]) for o in range(WORKERS)],
              "after the kills, supervisor [ordinal, generation, ..., restarts]: %r" % ws)
        return per

    # -- phase 2: rolling restart -------------------------------------------
    def roll_ordinal(self, ordinal, old, seed, overlaps, errors):
        """Counts on the old generation until its successor appears, then
        once more on the old (the successor holds a slot, is not ready, so
        the old is not drained yet), then on both until the old is gone."""
        try:
            rng = random.Random(seed)
            new = old + 1
            end = time.monotonic() + 30
            while self.ping(ordinal, new) is None:
                check(time.monotonic() < end, "worker %d/%d never started" % (ordinal, new))
                self.inc(ordinal, old, rng.randint(1, 20))
                time.sleep(0.01)
            b = self.ping(ordinal, new)
            a = self.inc(ordinal, old, rng.randint(1, 20))
            check(a.slot != b.slot, "old %d and new %d of ordinal %d share slot %d"
                  % (a.pid, b.pid, ordinal, a.slot))
            overlaps.append((ordinal, a.pid, a.slot, b.pid, b.slot))
            self.inc(ordinal, new, rng.randint(1, 20))
            while self.inc(ordinal, old, rng.randint(1, 20), must=False) is not None:
                check(time.monotonic() < end, "worker %d/%d never stopped" % (ordinal, old))
                self.inc(ordinal, new, rng.randint(1, 20))
            for _ in range(3):
                self.inc(ordinal, new, rng.randint(1, 20))
        except Exception as e:
            errors.append(e)

    def roll_phase_run(self, per):
        self.kill_phase = False
        roll = subprocess.Popen([os.environ["SUPERVISECTL"], "-s", self.url, "restart", GROUP,
                                 "--rolling", "--json"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        errors, overlaps = [], []
        threads = [threading.Thread(target=self.roll_ordinal,
                                    args=(o, per[o], 2000 + o, overlaps, errors))
                   for o in range(WORKERS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(40)
        try:
            out, err = roll.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            roll.kill()
            roll.communicate()
            raise Failure("supervisectl restart --rolling did not end in 20 s")
        check(not any(t.is_alive() for t in threads), "the roll phase did not end in 40 s")
        if errors:
            raise errors[0]
        check(roll.returncode == 0, "restart --rolling: rc %d: %s" % (roll.returncode, err))
        report = json.loads(out)
        check(report["rolling"] and report["done"] and not report["roll_failed"],
              "roll report %r" % report)
        rows = sorted((w["ordinal"], w["pid"], w["exit_code"], w["acknowledged"],
                       w["killed"], w["served"]) for w in report["workers"])
        check(len(overlaps) == WORKERS, "overlaps %r" % overlaps)
        want = sorted((o, pid, 0, True, False, self.acked[pid]) for o, pid, _, _, _ in overlaps)
        check(rows == want, "roll report rows %r, expected %r" % (rows, want))
        return overlaps

    # -- the end ----------------------------------------------------------
    def journal(self):
        with open(os.path.join(self.run, "journal")) as f:
            return [line.split() for line in f]

    def verify_journal(self):
        holds, ends, incs = {}, {}, {}
        for w in self.journal():
            if w[0] == "hold":
                slot, pid, ordinal, gen, token, t = (int(x) for x in w[1:7])
                check(pid not in holds, "pid %d journaled two holds" % pid)
                holds[pid] = (slot, ordinal, gen, token, t)
            elif w[0] == "drop":
                ends[int(w[2])] = int(w[4])
            elif w[0] == "inc":
                pid = int(w[2])
                incs[pid] = incs.get(pid, 0) + int(w[3])
                check(int(w[1]) == holds.get(pid, (None,))[0],
                      "pid %d counted into slot %s, holds %r" % (pid, w[1], holds.get(pid)))
            else:
                raise Failure("journal line %r" % w)
        check(set(holds) == set(self.slot_of), "journaled %r, answered %r"
              % (sorted(holds), sorted(self.slot_of)))
        for pid, (slot, ordinal, gen, token, _) in holds.items():
            check((slot, token) == (self.slot_of[pid], self.token_of[pid]),
                  "pid %d journaled slot %d token %d, answered %d %d"
                  % (pid, slot, token, self.slot_of[pid], self.token_of[pid]))
            check(incs.get(pid, 0) == self.acked.get(pid, 0),
                  "pid %d journaled %d increments, acknowledged %d"
                  % (pid, incs.get(pid, 0), self.acked.get(pid, 0)))
        journaled = {(s, "%s/%d@%d" % (GROUP, o, g), tok) for s, o, g, tok, _ in holds.values()}
        check(self.lease_rows <= journaled, "leases seen but never journaled: %r"
              % sorted(self.lease_rows - journaled))
        by_slot = {}
        for pid, (slot, _, _, token, t) in holds.items():
            if pid in ends:
                end = ends[pid]
                check(pid not in self.killed, "killed pid %d journaled a drop" % pid)
            else:
                check(pid in self.killed, "pid %d neither dropped nor was killed" % pid)
                end = self.last_answer[pid]
            check(t <= end, "pid %d ended before it held" % pid)
            by_slot.setdefault(slot, []).append((t, end, token, pid))
        for slot, spans in by_slot.items():
            spans.sort()
            for (t1, e1, k1, p1), (t2, e2, k2, p2) in zip(spans, spans[1:]):
                check(e1 < t2, "slot %d written by pids %d and %d at once" % (slot, p1, p2))
                check(k1 < k2, "slot %d: token %d of pid %d, then %d of pid %d"
                      % (slot, k1, p1, k2, p2))
        return by_slot

    def verify_live(self):
        """While the last generation runs: the total and the live gauges."""
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry, path=self.metrics)
        total = registry.get_sample_value(COUNTER)
        acked = sum(self.acked.values())
        check(total == acked, "%s from MultiProcessCollector: %r, acknowledged %d"
              % (COUNTER, total, acked))
        holders = {r["slot"]: int(r["holder"].rsplit("@", 1)[1])
                   for r in json.loads(self.ctl("leases", POOL, "--json"))}
        gauges = {}
        for metric in registry.collect():
            for s in metric.samples:
                if s.name == GAUGE:
                    gauges[int(s.labels["pid"])] = s.value
        check(gauges == {s: float(g) for s, g in holders.items()} and len(holders) == WORKERS,
              "generation gauge %r, slots held %r" % (gauges, holders))
        return total

    def verify_files(self, by_slot):
        """After the stop: the files and each file's value."""
        files = self.db_files()
        allowed = {"counter_%d.db" % s for s in range(SLOTS)} | \
                  {"gauge_liveall_%d.db" % s for s in range(SLOTS)}
        check(set(files) <= allowed, "metric files beyond the pool's slots: %r" % files)
        counters = sorted(f for f in files if f.startswith("counter_"))
        check(counters == sorted("counter_%d.db" % s for s in by_slot),
              "counter files %r for slots %r" % (counters, sorted(by_slot)))
        for slot, spans in by_slot.items():
            want = sum(self.acked.get(pid, 0) for _, _, _, pid in spans)
            vals = MmapedDict.read_all_values_from_file(
                os.path.join(self.metrics, "counter_%d.db" % slot))
            got = [v for k, v, *_ in vals if '"' + COUNTER + '"' in k]
            check(got == [want], "counter_%d.db holds %r, acknowledged %d" % (slot, vals, want))
        check(not [f for f in files if f.startswith("gauge_")],
              "live gauge files left after a clean stop: %r" % files)
        for name, pids in self.mappers.items():
            slot = int(name.rsplit("_", 1)[1][:-3])
            check(pids <= {p for _, _, _, p in by_slot.get(slot, [])},
                  "%s mapped by %r, not all holders of slot %d" % (name, pids, slot))

    def main(self):
        t0 = time.monotonic()
        self.start()
        mon = threading.Thread(target=self.monitor)
        mon.start()
        try:
            per = self.kill_phase_run()
            files_after_kills = self.db_files()
            overlaps = self.roll_phase_run(per)
            wait_for(lambda: len(json.loads(self.ctl("leases", POOL, "--json"))) == WORKERS,
                     "three leases after the roll", 10)
        finally:
            self.stop_monitor.set()
            mon.join(10)
        if self.monitor_error is not None:
            raise self.monitor_error
        check(self.maps_samples > 100 and self.lease_samples > 20,
              "monitor took %d maps and %d lease samples" % (self.maps_samples, self.lease_samples))
        total = self.verify_live()
        self.stop()
        by_slot = self.verify_journal()
        self.verify_files(by_slot)
        print("PASS: %d workers, %d kill -9 (files %s), a rolling restart with overlaps %s; "
              "%d increments acknowledged and counted, %d writer spans over %d slots, "
              "%d maps and %d lease samples, %.1f s"
              % (WORKERS, KILLS, ",".join(files_after_kills),
                 ["%d:%d->%d" % (o, s1, s2) for o, _, s1, _, s2 in overlaps],
                 total, sum(len(v) for v in by_slot.values()), len(by_slot),
                 self.maps_samples, self.lease_samples, time.monotonic() - t0))


def main():
    for var in ("SUPERVISED", "SUPERVISECTL", "SUPERVISE_LIBRARY"):
        if not os.path.exists(os.environ.get(var, "")):
            sys.stderr.write("FAIL: %s must name a file of the build\n" % var)
            return 1
    tmp = tempfile.mkdtemp(prefix="sv-prom-py.")
    test = Test(tmp)
    ok = False
    try:
        test.main()
        ok = True
    except Exception as e:
        sys.stderr.write("FAIL: %s: %s\n" % (type(e).__name__, e))
    finally:
        try:
            test.stop()
        except Failure as e:
            sys.stderr.write("FAIL: %s\n" % e)
            ok = False
        if not ok:
            try:
                with open(os.path.join(tmp, "daemon.log")) as f:
                    sys.stderr.write("daemon log:\n" + "".join(f.readlines()[-30:]))
            except OSError:
                pass
        if os.environ.get("SV_TEST_KEEP"):
            sys.stderr.write("kept %s\n" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
