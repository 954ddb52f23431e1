"""bench_bindings.py: the per-language benchmark of issue 8 (sv-bench-bindings).

Compares each binding (Python, Ruby, Lua) with the C client, measured in
the same run on the same daemon, and prints one table:

  - whoami over the control socket: a live call on an open client, from
    the call to the language's identity object (C: sv_client_whoami to
    sv_identity_free), each call timed on its own; target: the binding's
    median <= 1.5 x the C client's;
  - whoami from the environment (zero round trips): the binding's from_env
    against a C worker's getenv + strtoull of the same variables, timed in
    batches; information only (the binding builds an object, C fills a
    struct).
  - activity enter + leave: one scope of the language's scoped form
    (``with supervise.activity``, ``Supervise.activity {}``,
    ``sv.activity(name, fn)``) against the C client's sv_activity_enter +
    sv_activity_leave, on the region the supervisor handed each worker,
    timed in batches; information (the C target, <= 1 us, is
    sv-bench-activity's).
  - lease acquire + release: pairs of the binding's acquire (any slot, no
    wait, the worker itself as the holder) and release on a pool the
    config declares (POOL, no TTL, no resource file), against the C
    client's sv_client_lease_acquire + sv_lease_free +
    sv_client_lease_release, timed in rounds of --lease-batch pairs;
    the median time per pair over all rounds, as pairs/s, and the ratio
    to C; information, with the 1.5 x whoami target shown for reference.

How: one supervised (started here, in its own process group, stopped with
SIGTERM and awaited with a deadline) runs one worker per language:
sv-bench-bindings-c (bench_bindings_worker.c) and bench_bindings_worker.py,
.rb, .lua. Each opens its client, then serves commands over two FIFOs in
the temporary directory (the protocol is in bench_bindings_worker.c). The
driver warms every worker up, then runs --blocks blocks; each block asks
every worker in turn (the order rotates per block, so drift in the machine
affects all alike) for rtts/blocks live calls, env-samples batches of env
reads and of activity scopes, and lease-samples rounds of lease pairs. Only
one worker runs at a time. Medians are over all samples of a language;
the per-block ratio range is printed below the table. As in sv-bench, the
CPU load of the machine during 1 s before and after the run is printed:
above 10 % the ratios are noisy.

Run it from the build tree: BUILD/bench/sv-bench-bindings (a wrapper that
passes the paths of this build) [--quick] [--rtts N] [--blocks N]
[--env-samples N] [--batch K] [--lease-samples N] [--lease-batch K]
[--only c,python,ruby,lua] [--keep].
Exit status: 0 when every measurement was made (even with a MISS), 1 when
one could not be made (the reason is printed), 2 on a usage error.
"""
import argparse
import os
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

LANGS = ("c", "python", "ruby", "lua")
NAMES = {"c": "C", "python": "Python", "ruby": "Ruby", "lua": "Lua"}
TARGET_LIVE = 1.5
# The pool of the lease rows: declared by config(), no TTL, no resource.
# Only one worker runs at a time and each releases before it acquires
# again, so one slot would do; four leave room for a lease left behind.
POOL = "bench"
CMD_TIMEOUT = 120.0


class BenchError(Exception):
    """A measurement that could not be made."""


def cpu_busy(seconds=1.0):
    """Percentage of CPU time not idle over the next `seconds`."""
    def snap():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return sum(v), v[3] + v[4]
    t0, i0 = snap()
    time.sleep(seconds)
    t1, i1 = snap()
    return 100.0 * (1 - (i1 - i0) / max(1, t1 - t0))


def q(s):
    """A libconfig string literal."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def worker_argv(lang, a, tmp):
    """The argv and env of the benchmark worker of lang."""
    here = os.path.dirname(os.path.abspath(__file__))
    fifos = [os.path.join(tmp, "cmd-" + lang), os.path.join(tmp, "res-" + lang)]
    lib = "SUPERVISE_LIBRARY=" + a.library
    if lang == "c":
        return [a.c_worker] + fifos, []
    if lang == "python":
        return (["/usr/bin/env", lib, "/usr/bin/python3",
                 os.path.join(here, "bench_bindings_worker.py")] + fifos,
                ["PYTHONPATH=" + os.path.join(a.root, "bindings", "python"),
                 "PYTHONDONTWRITEBYTECODE=1"])
    if lang == "ruby":
        return (["/usr/bin/env", lib, a.ruby, "-I",
                 os.path.join(a.root, "bindings", "ruby", "lib"),
                 os.path.join(here, "bench_bindings_worker.rb")] + fifos, [])
    return ([a.lua, os.path.join(here, "bench_bindings_worker.lua")] + fifos,
            ["LUA_CPATH=" + a.lua_cpath])


def config(tmp, langs, a):
    groups = []
    for lang in langs:
        argv, env = worker_argv(lang, a, tmp)
        groups.append(
            "{ name = %s; argv = [ %s ]; count = 1; purpose = %s;%s }" % (
                q("bench-" + lang), ", ".join(q(x) for x in argv),
                q("time the binding in " + NAMES[lang]),
                (" env = [ %s ];" % ", ".join(q(e) for e in env)) if env else ""))
    return ("socket_dir = %s;\nstop_timeout_ms = 3000;\ngroups = (\n  %s\n);\n"
            "pools = (\n  { name = %s; slots = 4; }\n);\n"
            % (q(os.path.join(tmp, "sock")), ",\n  ".join(groups), q(POOL)))


class Worker:
    """The driver's end of one worker's FIFOs."""

    def __init__(self, lang, tmp):
        self.lang = lang
        self.cmd_path = os.path.join(tmp, "cmd-" + lang)
        self.res_path = os.path.join(tmp, "res-" + lang)
        os.mkfifo(self.cmd_path, 0o600)
        os.mkfifo(self.res_path, 0o600)
        # O_RDWR: the FIFO never reads as at its end before the worker
        # opens it, so select() waits instead of returning at once.
        self.res = os.open(self.res_path, os.O_RDWR | os.O_NONBLOCK)
        self.cmd = None
        self.buf = b""

    def connect(self, deadline):
        """Opens the command FIFO once the worker has opened it."""
        while self.cmd is None:
            try:
                self.cmd = os.open(self.cmd_path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as e:
                if time.monotonic() > deadline:
                    raise BenchError("%s worker did not open its FIFO: %s"
                                     % (NAMES[self.lang], e))
                time.sleep(0.01)
        os.set_blocking(self.cmd, True)

    def ask(self, line):
        """Sends one command; returns the numbers of its "ok" answer."""
        os.write(self.cmd, (line + "\n").encode())
        deadline = time.monotonic() + CMD_TIMEOUT
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BenchError("%s worker: no answer to %r" % (NAMES[self.lang], line))
            r, _, _ = select.select([self.res], [], [], left)
            if r:
                try:
                    chunk = os.read(self.res, 1 << 20)
                except BlockingIOError:
                    chunk = None
                if not chunk:
                    continue  # a spurious wake-up: select again
                self.buf += chunk
        ans, self.buf = self.buf.split(b"\n", 1)
        words = ans.decode().split()
        if not words or words[0] != "ok":
            raise BenchError("%s worker: %r -> %s" % (NAMES[self.lang], line, ans.decode()))
        return [int(w) for w in words[1:]]

    def close(self):
        for fd in (self.cmd, self.res):
            if fd is not None:
                os.close(fd)


def stop_daemon(proc):
    """SIGTERM to the daemon's process group; returns its exit status."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        return proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=5)
        return None


def measure(a, langs, tmp):
    """Runs the blocks; returns {lang: (live_ns list, env_ns_per_call list,
    per-block live medians, act_ns_per_scope list, lease_ns_per_pair list,
    per-block lease medians)}."""
    workers = {lang: Worker(lang, tmp) for lang in langs}
    conf = os.path.join(tmp, "bench.conf")
    with open(conf, "w") as f:
        f.write(config(tmp, langs, a))
    log = open(os.path.join(tmp, "daemon.log"), "w")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUPERVISE_")}
    proc = subprocess.Popen([a.supervised, "--config", conf, "--foreground"],
                            stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                            env=env, start_new_session=True)
    res = {lang: ([], [], [], [], [], []) for lang in langs}
    try:
        deadline = time.monotonic() + 30
        for w in workers.values():
            w.connect(deadline)
        per_block = max(1, a.rtts // a.blocks)
        for w in workers.values():  # warm-up: connections, caches, JIT-less paths
            w.ask("live 200")
            w.ask("env 10 %d" % a.batch)
            w.ask("act 10 %d" % a.batch)
            w.ask("lease 2 %d %s" % (a.lease_batch, POOL))
        for b in range(a.blocks):
            order = langs[b % len(langs):] + langs[:b % len(langs)]
            for lang in order:
                w = workers[lang]
                live = w.ask("live %d" % per_block)
                env_t = w.ask("env %d %d" % (a.env_samples, a.batch))
                res[lang][0].extend(live)
                res[lang][1].extend(t / a.batch for t in env_t)
                res[lang][2].append(statistics.median(live))
                act_t = w.ask("act %d %d" % (a.env_samples, a.batch))
                res[lang][3].extend(t / a.batch for t in act_t)
                lease_t = [t / a.lease_batch for t in w.ask(
                    "lease %d %d %s" % (a.lease_samples, a.lease_batch, POOL))]
                res[lang][4].extend(lease_t)
                res[lang][5].append(statistics.median(lease_t))
        for w in workers.values():
            os.write(w.cmd, b"quit\n")
    finally:
        status = stop_daemon(proc)
        log.close()
        for w in workers.values():
            w.close()
    if status != 0:
        raise BenchError("supervised did not stop cleanly (status %r); see %s"
                         % (status, os.path.join(tmp, "daemon.log")))
    return res


def p99(v):
    s = sorted(v)
    return s[min(len(s) - 1, int(0.99 * len(s)))]


def report(res, langs, lease_batch):
    """Prints the table; returns True when every live row passed."""
    fmt = "%-42s %10s %10s %8s %11s  %s"
    print(fmt % ("measurement", "C", "binding", "ratio", "target", "result"))
    c_live = statistics.median(res["c"][0])
    c_env = statistics.median(res["c"][1])
    ok = True
    lines = []
    for lang in langs:
        if lang == "c":
            continue
        live = statistics.median(res[lang][0])
        ratio = live / c_live
        passed = ratio <= TARGET_LIVE
        ok = ok and passed
        print(fmt % ("whoami over the socket, %s (us)" % NAMES[lang],
                     "%.1f" % (c_live / 1e3), "%.1f" % (live / 1e3), "%.2fx" % ratio,
                     "<= %.2fx" % TARGET_LIVE, "PASS" if passed else "MISS"))
        blocks = [x / y for x, y in zip(res[lang][2], res["c"][2])]
        lines.append("%s: over the socket p99 %.1f us (C %.1f us), per-block median ratio %.2f..%.2f"
                     % (NAMES[lang], p99(res[lang][0]) / 1e3, p99(res["c"][0]) / 1e3,
                        min(blocks), max(blocks)))
    for lang in langs:
        if lang == "c":
            continue
        env = statistics.median(res[lang][1])
        print(fmt % ("whoami from the environment, %s (us)" % NAMES[lang],
                     "%.3f" % (c_env / 1e3), "%.3f" % (env / 1e3), "%.1fx" % (env / c_env),
                     "-", "info"))
    c_act = statistics.median(res["c"][3])
    for lang in langs:
        if lang == "c":
            continue
        act = statistics.median(res[lang][3])
        print(fmt % ("activity enter + leave, %s (us)" % NAMES[lang],
                     "%.3f" % (c_act / 1e3), "%.3f" % (act / 1e3), "%.1fx" % (act / c_act),
                     "-", "info"))
    c_lease = statistics.median(res["c"][4])
    for lang in langs:
        if lang == "c":
            continue
        lease = statistics.median(res[lang][4])
        ratio = lease / c_lease
        print(fmt % ("lease acquire + release, %s (us)" % NAMES[lang],
                     "%.1f" % (c_lease / 1e3), "%.1f" % (lease / 1e3), "%.2fx" % ratio,
                     "(%.2fx)" % TARGET_LIVE,
                     "info, %s" % ("within" if ratio <= TARGET_LIVE else "over")))
    print()
    print("C: %d live calls, median %.1f us, p99 %.1f us; env read median %.3f us (getenv + strtoull)"
          % (len(res["c"][0]), c_live / 1e3, p99(res["c"][0]) / 1e3, c_env / 1e3))
    for line in lines:
        print(line)
    print("C: activity enter + leave median %.3f us (target <= 1 us)" % (c_act / 1e3))
    print("lease acquire + release: %d pairs per language in rounds of %d; pairs/s (median round): C %.0f"
          % (len(res["c"][4]) * lease_batch, lease_batch, 1e9 / c_lease)
          + "".join(", %s %.0f" % (NAMES[x], 1e9 / statistics.median(res[x][4]))
                    for x in langs if x != "c"))
    for lang in langs:
        if lang == "c":
            continue
        blocks = [x / y for x, y in zip(res[lang][5], res["c"][5])]
        print("%s: lease pair p99 %.1f us (C %.1f us, per round), per-block median ratio %.2f..%.2f"
              % (NAMES[lang], p99(res[lang][4]) / 1e3, p99(res["c"][4]) / 1e3,
                 min(blocks), max(blocks)))
    return ok


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--supervised", required=True)
    p.add_argument("--c-worker", required=True)
    p.add_argument("--library", required=True)
    p.add_argument("--root", required=True, help="the source tree")
    p.add_argument("--lua-cpath", default="")
    p.add_argument("--lua", default=shutil.which("lua5.4") or "")
    p.add_argument("--ruby", default=shutil.which("ruby") or "")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--rtts", type=int, default=3000)
    p.add_argument("--blocks", type=int, default=10)
    p.add_argument("--env-samples", type=int, default=100)
    p.add_argument("--batch", type=int, default=100)
    p.add_argument("--lease-samples", type=int, default=5)
    p.add_argument("--lease-batch", type=int, default=20)
    p.add_argument("--only", default=",".join(LANGS))
    p.add_argument("--keep", action="store_true")
    a = p.parse_args()
    if a.quick:
        a.rtts, a.blocks, a.env_samples, a.lease_samples = 600, 4, 30, 3
    langs = tuple(x for x in LANGS if x in a.only.split(",") or x == "c")
    bad = [x for x in a.only.split(",") if x not in LANGS]
    if bad or not (1 <= a.blocks <= 1000 and a.blocks <= a.rtts <= 1000000
                   and 1 <= a.env_samples <= 100000 and 1 <= a.batch <= 10000
                   and 1 <= a.lease_samples <= 1000 and 1 <= a.lease_batch <= 1000):
        p.error("bad --only, --rtts, --blocks, --env-samples, --batch,"
                " --lease-samples or --lease-batch")
    skipped = []
    if "ruby" in langs and not a.ruby:
        skipped.append("ruby (no ruby)")
    if "lua" in langs and not (a.lua and a.lua_cpath):
        skipped.append("lua (no lua5.4 or the Lua modules were not built)")
    langs = tuple(x for x in langs if not any(s.startswith(x + " ") for s in skipped))
    print("sv-bench-bindings: nproc %d, kernel %s" % (os.cpu_count(), " ".join(os.uname()[2:3])))
    print("sv-bench-bindings: %d live calls per language in %d blocks, %d x %d env reads per block,"
          " %d x %d lease pairs per block" % (a.rtts, a.blocks, a.env_samples, a.batch,
                                             a.lease_samples, a.lease_batch))
    print("sv-bench-bindings: CPU busy before the run (idle, 1 s): %.0f%%" % cpu_busy())
    tmp = tempfile.mkdtemp(prefix="sv-bench-bindings.")
    try:
        res = measure(a, langs, tmp)
    except BenchError as e:
        print("sv-bench-bindings: FAIL: %s" % e)
        return 1
    finally:
        if a.keep:
            print("sv-bench-bindings: kept %s" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print("sv-bench-bindings: CPU busy after the run (idle, 1 s): %.0f%%" % cpu_busy())
    print()
    report(res, langs, a.lease_batch)
    for s in skipped:
        print("not measured: %s" % s)
    return 1 if skipped else 0


if __name__ == "__main__":
    sys.exit(main())
