#!/usr/bin/python3
"""test_unix_workers.py: the Unix Workers pattern (seed 003, issue 7).

Four sv-job-worker processes (examples/unix_workers) pull jobs from a
datagram socket that their group owns: supervised creates it once and hands
it to every generation as descriptor 3. The test starts its own supervised,
sends 1,000 jobs (each 1 ms of "work") and, while they are being served,
changes the fleet under them the way deploys do:
  - restarts of single workers (SIGTERM: finish the job in hand, exit; a
    new generation takes the seat),
  - a scale-down to 2 and back up to 4,
  - `supervisectl drain` of one worker and `restart --rolling` of the group
    (features "admin.drain" and "admin.rolling_restart").
Afterwards:
  - every job id 0..999 is served exactly once, across old and new workers;
  - every worker that served a job left its "exit" line (it finished what it
    held and ended cleanly), and the served counts of those lines add up;
  - the reaping reports of the drain and the roll account for each drained
    process by pid and exit status 0 (none killed), and each such pid wrote
    its exit line;
  - jobs were served by more than one generation (the fleet did change).

The journal is append-only under flock (the worker's design comment). The
test stops the daemon it started, by its pid. Every wait polls with a
deadline. Usage (ctest sets these): SUPERVISED, SUPERVISECTL, JOB_WORKER.
Exit 0 pass, 1 fail.
"""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

JOBS = 1000
WORKERS = 4


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


def wait_for(pred, what, timeout=20.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(0.02)
    raise Failure("timed out waiting for " + what)


class Fleet:
    def __init__(self, tmp):
        self.tmp = tmp
        self.sock_dir = os.path.join(tmp, "s")
        self.journal = os.path.join(tmp, "journal")
        self.jobs = os.path.join(tmp, "jobs.sock")
        self.url = "ipc://" + os.path.join(self.sock_dir, "control.sock")
        self.daemon = None

    def config(self):
        path = os.path.join(self.tmp, "sv.conf")
        with open(path, "w") as f:
            f.write(f"""socket_dir = "{self.sock_dir}";
stop_timeout_ms = 5000;
groups = ( {{
  name = "jobs"; purpose = "serve jobs from the group's socket";
  argv = ["{os.environ['JOB_WORKER']}", "{self.journal}"];
  count = {WORKERS}; max_count = 8; min_uptime_ms = 0; ready = true;
  sockets = ( {{ name = "jobs"; path = "{self.jobs}"; type = "dgram"; }} );
}} );
""")
        return path

    def start(self):
        conf = self.config()
        self.daemon = subprocess.Popen(
            [os.environ["SUPERVISED"], "--config", conf, "--foreground"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(self.tmp, "daemon.log"), "w"))
        wait_for(lambda: self.ctl("hello", check_rc=False).returncode == 0,
                 "the daemon to answer")

    def ctl(self, *args, check_rc=True):
        r = subprocess.run([os.environ["SUPERVISECTL"], "-s", self.url,
                            *args], capture_output=True, text=True,
                           timeout=30)
        if check_rc and r.returncode != 0:
            raise Failure(f"supervisectl {' '.join(args)}: rc "
                          f"{r.returncode}: {r.stderr.strip()}")
        return r

    def features(self):
        out = self.ctl("hello", "--json").stdout
        return set(json.loads(out).get("features", []))

    def running(self):
        st = json.loads(self.ctl("status", "jobs", "--json").stdout)
        ws = st["workers"] if isinstance(st, dict) else st
        return [w for w in ws if w.get("state") == "running" and w.get("pid")]

    def lines(self):
        try:
            with open(self.journal) as f:
                return f.read().splitlines()
        except FileNotFoundError:
            return []

    def served(self):
        return sum(1 for l in self.lines() if l.startswith("served "))

    def stop(self):
        if self.daemon is None:
            return
        self.daemon.send_signal(signal.SIGTERM)
        try:
            rc = self.daemon.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.daemon.kill()
            self.daemon.wait()
            raise Failure("the daemon did not exit within 20 s of SIGTERM")
        self.daemon = None
        check(rc == 0, f"the daemon exited with {rc}")


def produce(path, start, n):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.settimeout(20)
    for i in range(start, start + n):
        s.sendto(f"{i} 1".encode(), path)
    s.close()


def run(fleet):
    fleet.start()
    wait_for(lambda: len(fleet.running()) == WORKERS, "4 running workers")
    feats = fleet.features()
    produce(fleet.jobs, 0, 250)
    wait_for(lambda: fleet.served() >= 100, "100 jobs served")
    fleet.ctl("restart", "jobs", "0")
    fleet.ctl("restart", "jobs", "1")
    produce(fleet.jobs, 250, 250)
    wait_for(lambda: fleet.served() >= 300, "300 jobs served")
    fleet.ctl("scale", "jobs", "2")
    produce(fleet.jobs, 500, 150)
    wait_for(lambda: fleet.served() >= 450, "450 jobs served")
    fleet.ctl("scale", "jobs", str(WORKERS))
    # jobs[2] and jobs[3] start again: the drain below must find jobs[2]
    # ready (its SIGTERM handler in place), or the drain signal kills it
    # before it can finish anything.
    wait_for(lambda: len(fleet.running()) == WORKERS, "4 ready workers")
    produce(fleet.jobs, 650, 150)
    reaped = []
    check({"admin.drain", "admin.rolling_restart"} <= feats,
          f"this supervised lacks drain or rolling restart: {sorted(feats)}")
    wait_for(lambda: fleet.served() >= 600, "600 jobs served")
    rep = json.loads(fleet.ctl("drain", "jobs/2", "--json").stdout)
    check(rep["done"] and len(rep["workers"]) == 1, f"drain report {rep}")
    reaped += rep["workers"]
    fleet.ctl("scale", "jobs", str(WORKERS))
    # The new jobs[2] must be ready (its SIGTERM handler in place) before
    # the roll drains it, as an operator would wait for it.
    wait_for(lambda: len(fleet.running()) == WORKERS, "4 ready workers")
    wait_for(lambda: fleet.served() >= 700, "700 jobs served")
    rep = json.loads(fleet.ctl("restart", "jobs", "--rolling", "--json").stdout)
    check(rep["done"] and not rep.get("roll_failed"), f"roll report {rep}")
    check(len(rep["workers"]) == WORKERS,
          f"the roll drained {len(rep['workers'])} workers, want {WORKERS}")
    reaped += rep["workers"]
    produce(fleet.jobs, 800, JOBS - 800)
    wait_for(lambda: fleet.served() >= JOBS, f"{JOBS} jobs served", 60)
    fleet.stop()

    served = {}
    exits = {}
    gens = set()
    for l in fleet.lines():
        f = l.split()
        if f[0] == "served":
            check(f[1] not in served,
                  f"job {f[1]} served twice: pids {served.get(f[1])} and {f[4]}")
            served[f[1]] = f[4]
            gens.add((f[2], f[3]))
        elif f[0] == "exit":
            check(f[3] not in exits, f"pid {f[3]} exited twice")
            exits[f[3]] = int(f[4])
    check(sorted(served, key=int) == [str(i) for i in range(JOBS)],
          f"{JOBS - len(served)} jobs never served")
    per_pid = {}
    for pid in served.values():
        per_pid[pid] = per_pid.get(pid, 0) + 1
    for pid, n in per_pid.items():
        check(pid in exits, f"pid {pid} served {n} jobs and left no exit line")
        check(exits[pid] == n, f"pid {pid} says it served {exits[pid]}, "
              f"the journal has {n}")
    check(len({g for _, g in gens}) > 1 or len(per_pid) > WORKERS,
          "the fleet never changed under the jobs")
    for w in reaped:
        pid = str(w["pid"])
        check(w["reaped"] and w["exit_code"] == 0 and not w["killed"],
              f"drained worker {w} did not end with exit status 0")
        check(pid in exits, f"drained pid {pid} left no exit line")
    print(f"ok: {JOBS} jobs served exactly once by {len(per_pid)} processes "
          f"({len(exits)} clean exits); {len(reaped)} drained processes "
          f"accounted for by pid and exit status")


def main():
    with tempfile.TemporaryDirectory(prefix="sv-unixw-") as tmp:
        fleet = Fleet(tmp)
        try:
            run(fleet)
            return 0
        except Failure as e:
            print("FAIL:", e)
            log = os.path.join(tmp, "daemon.log")
            if os.path.exists(log):
                print(open(log).read()[-4000:])
            return 1
        finally:
            if fleet.daemon is not None:
                fleet.daemon.kill()
                fleet.daemon.wait()


if __name__ == "__main__":
    sys.exit(main())
