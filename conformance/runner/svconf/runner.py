"""Case loading, per-case supervisor lifecycle, xfail lists and TAP output.

Design: every case gets a fresh supervisor in a fresh temporary directory
(/tmp/svc-XXXXXX, short enough for sun_path): the runner writes the case's
supervisor spec (config.py), listens for worker agents, starts the command
the user gave (a template with {config}, {config_json}, {socket_dir},
{dir}), waits for the control socket to answer Hello (with a deadline), and
skips the case when HelloReply.features lacks one the case needs. Then the
steps run (steps.py). Teardown closes every connection, sends SIGTERM to
the supervisor the runner started (by pid), waits with a deadline and sends
SIGKILL only as a last resort (reported). Agents exit when their socket to
the runner closes.

Results: "pass", "fail" (with the rule that broke), "skip". An expected-
failure list (xfail/NAME.txt) turns a listed failure into an expected one;
a listed case that passes or is skipped fails the run, and so does a listed
id that is not a case, so a list cannot go stale.
"""

import fnmatch
import glob
import json
import os
import shlex
import signal
import subprocess
import sys
import time

from . import agents, client_role, config, sp, steps
from .casectx import CaseContext, file_tail
from .expr import CaseError, CheckFailed

CASE_KEYS = {"id", "title", "role", "level", "rules", "features", "timeout_ms",
             "supervisor", "steps", "notes"}
LEVELS = ("required", "recommended")


class Options:
    supervisor = None  # command template
    client = None      # client adapter command template (client role)
    control_url = "ipc://{socket_dir}/control.sock"
    multiplier = 1.0
    verbose = False
    keep = False
    python = "/usr/bin/python3"
    agent = None
    fail_on_skip = False  # a skipped case fails the run (reference runs)


class Context(CaseContext):
    """State of one case run."""

    def __init__(self, opts, schema, case):
        super().__init__(opts, schema, case)
        self.agents = {}
        self.subs = {}
        self.conns = {}
        self.proc = None
        self.pool = None
        self.rid = 1000
        self.socket_dir = os.path.join(self.dir, "s")

    # helpers used by steps
    def deadline(self, ms):
        return time.monotonic() + float(self.eval(ms)) * self.opts.multiplier / 1000.0

    def next_request_id(self):
        self.rid += 1
        return self.rid

    def conn(self, name, deadline):
        c = self.conns.get(name)
        if c is None:
            c = sp.req(self.control_url, deadline)
            self.conns[name] = c
        return c

    def drop_conn(self, name):
        c = self.conns.pop(name, None)
        if c is not None:
            c.close()

    def agent(self, label):
        if label not in self.agents:
            raise CaseError("no worker labelled %r" % label)
        return self.agents[label]

    def run_steps(self, steps_list):
        for i, s in enumerate(steps_list):
            fn = steps.STEPS.get(s.get("do"))
            if fn is None:
                raise CaseError("step %d: unknown step %r" % (i + 1, s.get("do")))
            if self.verbose:
                self.log("step %s" % json.dumps(s))
            fn(self, s)

    # lifecycle
    def start(self):
        opts = self.opts
        self.pool = agents.Pool(os.path.join(self.dir, "agent.sock"))
        agent_sock = self.pool.path

        def agent_argv(group):
            return [opts.python, "-S", opts.agent, agent_sock, group]

        full = config.complete(self.case.get("supervisor", {"groups": []}),
                               self.socket_dir, agent_argv)
        conf = os.path.join(self.dir, "supervised.conf")
        cjson = os.path.join(self.dir, "supervisor.json")
        config.write(full, cjson, conf)
        subst = {"config": conf, "config_json": cjson,
                 "socket_dir": self.socket_dir, "dir": self.dir}
        self.control_url = opts.control_url.format(**subst)
        argv = [a.format(**subst) for a in shlex.split(opts.supervisor)]
        self.log_path = os.path.join(self.dir, "supervisor.log")
        with open(self.log_path, "wb") as logf:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                         stdout=logf, stderr=subprocess.STDOUT)
        deadline = self.deadline(10000)
        last = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise CheckFailed("(harness)", "supervisor exited with status %s at start: %s" % (
                    self.proc.returncode, self.log_tail()))
            try:
                steps.do_hello(self, {"save": "hello", "rule": "VER-1",
                                      "timeout_ms": 1000})
                return
            except CheckFailed as e:
                last = e
                self.drop_conn("admin")
                if "no reply" not in str(e):
                    raise
            time.sleep(0.02)  # the socket appears asynchronously; bounded
        raise CheckFailed("(harness)", "supervisor never answered Hello: %s" % last)

    def failed_notes(self):
        """A copy of the notes, with the supervisor's log tail when
        verbose (the teardown's notes are not added to it)."""
        notes = list(self.notes)
        if self.opts.verbose:
            notes.append("supervisor log: " + self.log_tail(400))
        return notes

    def log_tail(self, n=800):
        return file_tail(self.log_path, n)

    def stop(self):
        for sub in self.subs.values():
            sub.close()
        for name in list(self.conns):
            self.drop_conn(name)
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            stop_ms = self.case.get("supervisor", {}).get("stop_timeout_ms", 1000)
            try:
                self.proc.wait(timeout=(stop_ms + 5000) / 1000.0 * self.opts.multiplier)
            except subprocess.TimeoutExpired:
                self.notes.append("supervisor pid %d ignored SIGTERM; killed" % self.proc.pid)
                self.proc.kill()
                self.proc.wait(timeout=5)
        if self.pool is not None:
            self.pool.close()
        self.remove_dir()


def load_cases(case_dir):
    """Every *.json of case_dir, validated; sorted by id."""
    cases = []
    for path in sorted(glob.glob(os.path.join(case_dir, "*.json"))):
        with open(path) as f:
            try:
                c = json.load(f)
            except ValueError as e:
                raise CaseError("%s: %s" % (path, e))
        unknown = set(c) - CASE_KEYS
        if unknown:
            raise CaseError("%s: unknown keys %s" % (path, sorted(unknown)))
        for k in ("id", "level", "rules", "steps"):
            if k not in c:
                raise CaseError("%s: missing %r" % (path, k))
        if os.path.basename(path) != c["id"] + ".json":
            raise CaseError("%s: file name must be the id %r + .json" % (path, c["id"]))
        if c["level"] not in LEVELS:
            raise CaseError("%s: level must be one of %s" % (path, LEVELS))
        c.setdefault("role", "supervisor")
        if c["role"] not in ("supervisor", "client"):
            raise CaseError("%s: role must be supervisor or client" % path)
        c.setdefault("features", [])
        c["_path"] = path
        cases.append(c)
    return cases


def load_xfail(path):
    """{case id: rule or None}. Lines: ID [RULE] [# comment]."""
    out = {}
    if not path:
        return out
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            if len(parts) > 2:
                raise CaseError("%s:%d: want 'CASE-ID [RULE]'" % (path, n))
            out[parts[0]] = parts[1] if len(parts) == 2 else None
    return out


def run_case(opts, schema, case):
    """Returns (status, rule, message, notes): status pass|fail|skip."""
    ctx = Context(opts, schema, case)

    def body():
        feats = set(ctx.vars["hello"]["features"])
        missing = [f for f in case["features"] if f not in feats]
        if missing:
            return "skip", None, "features not offered: %s" % " ".join(missing)
        ctx.run_steps(case["steps"])
        return "pass", None, ""

    return ctx.run(body)


def main_loop(opts, schema, cases, xfail, all_ids, out=sys.stdout):
    """Runs cases, prints TAP, returns the exit status (0: all as expected).
    all_ids: every case id of the suite (an xfail entry naming none of them
    is stale; one naming a case not selected in this run is ignored).
    Cases of role "client" run through client_role, the others here."""
    stale = [x for x in xfail if x not in all_ids]
    out.write("TAP version 13\n1..%d\n" % len(cases))
    counts = {"passed": 0, "failed": 0, "skipped": 0, "xfail": 0}
    for n, c in enumerate(cases, 1):
        t0 = time.monotonic()
        if c["role"] == "client":
            status, rule, msg, notes = client_role.run_client_case(opts, schema, c)
        else:
            status, rule, msg, notes = run_case(opts, schema, c)
        dt = time.monotonic() - t0
        name = "%s [%s]" % (c["id"], c["level"])
        listed = c["id"] in xfail
        if status == "skip":
            if listed:
                out.write("not ok %d - %s # listed in the xfail list but skipped (%s): remove it\n" % (n, name, msg))
                counts["failed"] += 1
            elif opts.fail_on_skip:
                out.write("not ok %d - %s # skipped (%s) under --fail-on-skip\n" % (n, name, msg))
                counts["failed"] += 1
            else:
                out.write("ok %d - %s # SKIP %s\n" % (n, name, msg))
                counts["skipped"] += 1
        elif status == "pass":
            if listed:
                out.write("not ok %d - %s # passes but is listed in the xfail list: remove it\n" % (n, name))
                counts["failed"] += 1
            else:
                out.write("ok %d - %s (%.1fs)\n" % (n, name, dt))
                counts["passed"] += 1
        else:
            want_rule = xfail.get(c["id"])
            if listed and (want_rule is None or want_rule == rule):
                out.write("not ok %d - %s # TODO expected failure: %s\n" % (n, name, rule))
                counts["xfail"] += 1
            else:
                extra = ""
                if listed:
                    extra = " (listed as failing %s)" % want_rule
                out.write("not ok %d - %s FAILED %s%s\n" % (n, name, rule, extra))
                counts["failed"] += 1
            for line in msg.splitlines():
                out.write("#   %s: %s\n" % (rule, line))
        for note in notes:
            out.write("#   note: %s\n" % note)
        out.flush()
    for x in stale:
        out.write("# xfail entry %r names no case run here: remove it\n" % x)
        counts["failed"] += 1
    if counts["xfail"]:
        out.write("# %d expected failures\n" % counts["xfail"])
    out.write("%d passed, %d failed, %d skipped\n" % (counts["passed"], counts["failed"], counts["skipped"]))
    out.flush()
    return 0 if counts["failed"] == 0 else 1


def select(cases, patterns, level, role="supervisor"):
    out = []
    for c in cases:
        if c["role"] != role:
            continue
        if level != "all" and c["level"] != level:
            continue
        if patterns and not any(fnmatch.fnmatch(c["id"], p) for p in patterns):
            continue
        out.append(c)
    return out
