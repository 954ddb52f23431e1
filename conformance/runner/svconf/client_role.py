"""The client-under-test role: a client library judged through its adapter.

Design: for every case the runner starts a fake supervisor (fake.py) on a
fresh ipc:// URL and the client's testee adapter, a small program per
language that reads one JSON command per line on stdin, makes that call
with the client library against the URL it was given, and prints one JSON
result line. The adapter's first line is its banner:

    {"adapter": "NAME", "features": ["hello", "status", ...]}

(the calls it can make); a case needing a call the adapter lacks is
skipped. A command is {"op": OP, "deadline_ms": N, ...arguments}; the
result is {"ok": true, "result": {...}} or {"ok": false, "error": NAME,
"code": N, "message": TEXT, "generic": BOOL}. conformance/README.md lists
the ops, their results and the error names.

Steps of client cases:

  call          sends one command and checks the result. Keys: "op",
                "args" (arguments), "deadline_ms", "server" (the fake's
                actions for the requests of this call, fake.py), "ok"
                (true/false expected), "error" (an error name or list of
                names), "expect" (checks on the result, or on the error
                object when "ok" is false), "within_ms" (a bound on the
                call's wall time; default deadline_ms + the tolerance),
                "requests" (checks on every request the call sent: each
                must decode, with version 1 and a request_id), "rule".
  let, assert   as in supervisor cases.

Every wait has a deadline; the adapter is ended by pid (SIGTERM, then
SIGKILL) when the case ends. An adapter that exits or prints garbage
fails the step's rule: a client must never crash.
"""

import json
import os
import select
import shlex
import signal
import subprocess
import time

from . import expr, fake
from .casectx import CaseContext, file_tail
from .expr import CaseError, CheckFailed

TOLERANCE_MS = 500  # how far past its deadline a call may return (scaled)
LINE_MAX = 1 << 20


class Adapter:
    """The adapter process of one case."""

    def __init__(self, argv, env, deadline, log_path):
        self.log = open(log_path, "wb")
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.log, env=env)
        self.buf = b""
        line = self.read_line(deadline)
        if line is None:
            raise CheckFailed("(harness)", "the adapter printed no banner line")
        try:
            self.banner = json.loads(line)
            self.features = set(self.banner["features"])
        except (ValueError, KeyError, TypeError) as e:
            raise CheckFailed("(harness)", "bad adapter banner %r: %s" % (line[:200], e))

    def read_line(self, deadline):
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            r, _, _ = select.select([fd], [], [], left)
            if not r:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                return None
            self.buf += chunk
            if len(self.buf) > LINE_MAX:
                raise CheckFailed("(harness)", "adapter line over %d bytes" % LINE_MAX)
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode("utf-8", "replace")

    def command(self, cmd, deadline):
        """Sends cmd; returns (result dict or None, elapsed seconds, why)."""
        t0 = time.monotonic()
        try:
            self.proc.stdin.write((json.dumps(cmd) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as e:
            return None, 0.0, "adapter gone: %s" % e
        line = self.read_line(deadline)
        dt = time.monotonic() - t0
        if line is None:
            if self.proc.poll() is not None:
                return None, dt, "the client crashed (adapter exit status %s)" % self.proc.returncode
            return None, dt, "no result line within %.1f s" % dt
        try:
            return json.loads(line), dt, ""
        except ValueError:
            return None, dt, "result is not JSON: %r" % line[:200]

    def stop(self, notes):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                notes.append("adapter pid %d ignored SIGTERM; killed" % self.proc.pid)
                self.proc.kill()
                self.proc.wait(timeout=5)
        self.log.close()

    def stderr_tail(self, path, n=400):
        return file_tail(path, n)


class ClientContext(CaseContext):
    def __init__(self, opts, schema, case):
        super().__init__(opts, schema, case)
        self.url = "ipc://%s/control.sock" % self.dir
        self.fake = None
        self.adapter = None

    def scaled(self, ms):
        return float(ms) * self.opts.multiplier / 1000.0

    def start(self):
        self.fake = fake.Fake(self.schema, self.url, self.opts.multiplier,
                              self.log if self.verbose else None)
        subst = {"url": self.url, "dir": self.dir}
        argv = [a.format(**subst) for a in shlex.split(self.opts.client)]
        if "{url}" not in self.opts.client:
            argv.append(self.url)
        env = dict(os.environ)
        env["SUPERVISE_URL"] = self.url
        self.log_path = os.path.join(self.dir, "adapter.log")
        self.adapter = Adapter(argv, env, time.monotonic() + self.scaled(10000), self.log_path)

    def stop(self):
        if self.adapter is not None:
            self.adapter.stop(self.notes)
        if self.fake is not None:
            self.fake.close()
        self.remove_dir()


def _check_requests(ctx, s, reqs, rule):
    """Every request of the call decodes as an Envelope of version 1 with a
    non-zero request_id, under an SP id with the high bit set; then the
    step's "requests" checks run on each (as dicts: envelope, kind, body)."""
    for i, r in enumerate(reqs):
        where = "request %d of the call" % (i + 1)
        if r["decode_error"]:
            raise CheckFailed(rule, "%s does not decode as an Envelope: %s (%s)" % (
                where, r["decode_error"], r["raw"][:48].hex()))
        env = r["envelope"]
        if env["version"] != 1:
            raise CheckFailed(rule, "%s has version %d, want 1" % (where, env["version"]))
        if env["request_id"] == 0:
            raise CheckFailed(rule, "%s has request_id 0" % where)
        if not r["sp_id"] & 0x80000000:
            raise CheckFailed(rule, "%s: SP request id 0x%08x lacks the high bit" % (where, r["sp_id"]))
        view = {"envelope": env, "kind": r["kind"], "body": r["body"], "conn": r["conn"]}
        expr.run_checks(s.get("requests"), view, ctx.vars, rule)
    ids = [(r["conn"], r["envelope"]["request_id"]) for r in reqs]
    if len(set(ids)) != len(ids):
        raise CheckFailed(rule, "request_id repeated on one connection: %s" % ids)


def do_call(ctx, s):
    op = s["op"]
    rule = s.get("rule", "CLI-2")
    deadline_ms = int(ctx.eval(s.get("deadline_ms", 2000)))
    cmd = {"op": op, "deadline_ms": deadline_ms}
    for k, v in (s.get("args") or {}).items():
        cmd[k] = ctx.eval(v)
    ctx.fake.set_script(s.get("server", []))
    before = len(ctx.fake.recorded())
    within = ctx.scaled(s.get("within_ms", deadline_ms + TOLERANCE_MS))
    hard = time.monotonic() + within + ctx.scaled(5000)
    if ctx.verbose:
        ctx.log("call %s" % json.dumps(cmd))
    res, dt, why = ctx.adapter.command(cmd, hard)
    ctx.fake.set_script([])
    reqs = ctx.fake.recorded()[before:]
    if res is None:
        tail = ctx.adapter.stderr_tail(ctx.log_path)
        raise CheckFailed(rule, "%s: %s%s" % (op, why, ("; stderr: " + tail) if tail else ""))
    if ctx.verbose:
        ctx.log("result %s after %.0f ms" % (json.dumps(res), dt * 1000))
    if dt > within:
        raise CheckFailed(s.get("time_rule", "CLI-2"), "%s returned after %.0f ms; deadline %d ms, allowed %.0f ms" % (
            op, dt * 1000, deadline_ms, within * 1000))
    if "ok" in s and bool(res.get("ok")) != bool(s["ok"]):
        if res.get("ok"):
            raise CheckFailed(rule, "%s succeeded (%s), want an error %s" % (
                op, json.dumps(res.get("result"))[:300], s.get("error", "")))
        raise CheckFailed(rule, "%s failed: %s %s %r" % (
            op, res.get("error"), res.get("code"), res.get("message")))
    subject = res.get("result") if res.get("ok") else res
    if "error" in s and not res.get("ok"):
        want = s["error"] if isinstance(s["error"], list) else [s["error"]]
        if res.get("error") not in want:
            raise CheckFailed(s.get("error_rule", rule), "%s: error %s (%s %r), want %s" % (
                op, res.get("error"), res.get("code"), res.get("message"), " or ".join(want)))
    if "save" in s:
        ctx.vars[s["save"]] = subject
    expr.run_checks(s.get("expect"), subject, ctx.vars, rule)
    if "requests" in s or s.get("check_requests", True):
        _check_requests(ctx, s, reqs, s.get("request_rule", "CLI-1"))
    if "min_requests" in s and len(reqs) < int(s["min_requests"]):
        raise CheckFailed(rule, "%s sent %d requests, want at least %s" % (op, len(reqs), s["min_requests"]))


def _needed_ops(case):
    ops = set()
    for st in case["steps"]:
        if st.get("do") == "call":
            ops.add(st["op"])
    return ops


def run_client_case(opts, schema, case):
    """Returns (status, rule, message, notes) like runner.run_case."""
    from . import steps as sup_steps  # let / assert
    ctx = ClientContext(opts, schema, case)

    def body():
        missing = sorted((set(case["features"]) | _needed_ops(case)) - ctx.adapter.features)
        if missing:
            return "skip", None, "adapter lacks: %s" % " ".join(missing)
        for i, s in enumerate(case["steps"]):
            do = s.get("do")
            if do == "call":
                do_call(ctx, s)
            elif do in ("let", "assert"):
                sup_steps.STEPS[do](ctx, s)
            else:
                raise CaseError("step %d: %r is not a client-role step" % (i + 1, do))
        return "pass", None, ""

    return ctx.run(body)
