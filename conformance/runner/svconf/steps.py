"""The step vocabulary of supervisor-under-test cases.

Design: a case's "steps" list is executed in order; each step is an object
whose "do" names a function registered here with @step. Adding a step for a
new message is one function; most new messages need none, because the
generic "request" step sends any Envelope body written as JSON (protobuf's
JSON mapping, proto field names) and checks the reply.

Every step that waits takes "timeout_ms" (scaled by the runner's timeout
multiplier) and has a rule: when it fails, CheckFailed names the rule (the
step's "rule", or the check's own). Common keys of the request-like steps:

  as          "admin" (the runner's own connection, default), "conn:NAME"
              (another runner connection), or a worker label (the request
              is sent by that worker process through its agent)
  reply       the expected reply body member ("identity", "error", ...)
  error       shorthand for reply "error" with this ErrorCode name
  expect      checks on the reply body (see expr.py)
  expect_envelope  checks on the whole reply Envelope
  save        a variable name for the reply body (as a dict)
  rule        the rule a missing or wrong-kind reply breaks (default REQ-1)
"""

import os
import signal
import threading
import time

from google.protobuf import json_format

from . import expr, sp
from .agents import AgentGone
from .expr import CaseError, CheckFailed
from .rawfield import raw_field, varint

STEPS = {}
DEFAULT_RULE = "REQ-1"


def step(name):
    def reg(fn):
        STEPS[name] = fn
        return fn
    return reg


def _rule(s, default=DEFAULT_RULE):
    return s.get("rule", default)


# ---- encoding helpers -----------------------------------------------------

def build_envelope(ctx, s):
    """The request bytes of a step: "body", "version", "request_id",
    "unknown_fields" (appended raw to the Envelope), "body_unknown_fields"
    (appended raw inside the body), or "hex"/"size" for raw bytes."""
    if "hex" in s:
        return bytes.fromhex(ctx.eval(s["hex"]))
    if "size" in s:
        return bytes([int(s.get("fill", 0))]) * int(ctx.eval(s["size"]))
    env = ctx.schema.new("Envelope")
    ver = ctx.eval(s.get("version", 1))
    if ver:
        env.version = ver
    env.request_id = ctx.eval(s.get("request_id", ctx.next_request_id()))
    body = ctx.eval(s.get("body", {}))
    if body:
        try:
            json_format.ParseDict(body, env)
        except json_format.ParseError as e:
            raise CaseError("bad body %r: %s" % (body, e))
    extra = s.get("body_unknown_fields")
    kind = env.WhichOneof("body")
    if extra and kind:
        # a v1.x sender: fields this schema does not know, inside the body
        inner = getattr(env, kind).SerializeToString()
        inner += b"".join(raw_field(ctx.eval(f)) for f in extra)
        num = env.DESCRIPTOR.fields_by_name[kind].number
        env.ClearField(kind)
        data = env.SerializeToString() + varint(num << 3 | 2) + varint(len(inner)) + inner
    else:
        data = env.SerializeToString()
    for f in s.get("unknown_fields", []):
        data += raw_field(ctx.eval(f))
    return data


# ---- sending ---------------------------------------------------------------

def transact(ctx, s, data):
    """Sends data as one request from s["as"]; returns ("reply", bytes) or
    ("closed", detail) or ("timeout", detail)."""
    who = s.get("as", "admin")
    deadline = ctx.deadline(s.get("timeout_ms", 3000))
    if who == "admin" or who.startswith("conn:"):
        name = "admin" if who == "admin" else who[5:]
        try:
            c = ctx.conn(name, deadline)
            return "reply", c.request(data, deadline)
        except sp.Timeout as e:
            ctx.drop_conn(name)
            return "timeout", str(e)
        except (sp.Closed, OSError) as e:
            ctx.drop_conn(name)
            return "closed", str(e)
    agent = ctx.agent(who)
    cmd = {"op": "request", "hex": data.hex(),
           "timeout_ms": max(1, int((deadline - time.monotonic()) * 1000))}
    if "url" in s:
        cmd["url"] = ctx.eval(s["url"])
    try:
        ans = agent.command(cmd, deadline + 2)
    except (AgentGone, TimeoutError) as e:
        raise CheckFailed(_rule(s), "worker %s: %s" % (who, e))
    if ans.get("ok"):
        return "reply", bytes.fromhex(ans["hex"])
    return ans.get("error", "closed"), ans.get("detail", "")


def check_reply(ctx, s, outcome, payload):
    """Checks a transact() result against the step; returns the body dict."""
    rule = _rule(s)
    accept = s.get("accept", ["reply"])
    if ctx.verbose and outcome != "reply":
        ctx.log("no reply: %s (%s)" % (outcome, payload))
    if outcome != "reply":
        if outcome in accept:
            return None
        raise CheckFailed(rule, "no reply (%s: %s)" % (outcome, payload))
    if "reply" not in accept:
        raise CheckFailed(rule, "got a reply, want %s" % " or ".join(accept))
    env = ctx.schema.new("Envelope")
    try:
        env.ParseFromString(payload)
    except Exception as e:  # DecodeError and friends
        raise CheckFailed("REQ-2", "reply is not an Envelope: %s (%s)" % (e, payload[:64].hex()))
    ed = expr.msg_to_py(env)
    kind = env.WhichOneof("body")
    want = s.get("reply")
    if "error" in s:
        want = "error"
    if want is not None:
        wants = want if isinstance(want, list) else [want]
        if kind not in wants:
            detail = ""
            if kind == "error":
                detail = " %s %r" % (ctx.schema.error_code_name(env.error.code), env.error.message)
            raise CheckFailed(rule, "reply is %s%s, want %s" % (kind, detail, " or ".join(wants)))
    body = ed.get(kind) if kind else None
    if "error" in s:
        want_code = ctx.schema.error_code_number(s["error"])
        if env.error.code != want_code:
            raise CheckFailed(s.get("error_rule", rule), "error code %s (%r), want %s" % (
                ctx.schema.error_code_name(env.error.code), env.error.message,
                ctx.schema.error_code_name(want_code)))
    if ctx.verbose:
        ctx.log("reply %s: %s" % (kind, body))
    # saved first, so that a check can compare two fields of the reply
    if "save" in s:
        ctx.vars[s["save"]] = body
    if "save_envelope" in s:
        ctx.vars[s["save_envelope"]] = ed
    expr.run_checks(s.get("expect_envelope"), ed, ctx.vars, rule)
    expr.run_checks(s.get("expect"), body, ctx.vars, rule)
    return body


@step("request")
def do_request(ctx, s):
    data = build_envelope(ctx, s)
    outcome, payload = transact(ctx, s, data)
    return check_reply(ctx, s, outcome, payload)


@step("send_raw")
def do_send_raw(ctx, s):
    """Like request, but the bytes come from "hex" or "size"/"fill"."""
    if "hex" not in s and "size" not in s:
        raise CaseError("send_raw needs hex or size")
    return do_request(ctx, s)


@step("hello")
def do_hello(ctx, s):
    s = dict(s)
    s.setdefault("body", {"hello": {"client_name": "sv-conformance",
                                    "min_version": s.pop("min_version", 1),
                                    "max_version": s.pop("max_version", 1)}})
    if "error" not in s:
        s.setdefault("reply", "hello_reply")
    return do_request(ctx, s)


@step("whoami")
def do_whoami(ctx, s):
    s = dict(s)
    s.setdefault("body", {"whoami": {}})
    if "error" not in s:
        s.setdefault("reply", "identity")
    return do_request(ctx, s)


# ---- workers ---------------------------------------------------------------

@step("await_workers")
def do_await_workers(ctx, s):
    """Waits for `count` new workers of `group` to connect; labels them
    with the names in `as` (a list), or as0, as1, ... (a string)."""
    n = int(ctx.eval(s.get("count", 1)))
    names = s["as"] if isinstance(s["as"], list) else ["%s%d" % (s["as"], i) for i in range(n)]
    if len(names) != n:
        raise CaseError("await_workers: %d names for %d workers" % (len(names), n))
    try:
        got = ctx.pool.claim(s["group"], n, ctx.deadline(s.get("timeout_ms", 5000)))
    except TimeoutError as e:
        raise CheckFailed(_rule(s, "SPAWN-1"), str(e))
    for name, a in zip(names, got):
        ctx.agents[name] = a
        ctx.vars[name] = a.info()


@step("kill_worker")
def do_kill_worker(ctx, s):
    """Sends a signal (default KILL) to a worker and waits until it is gone."""
    a = ctx.agent(s["worker"])
    sig = getattr(signal, "SIG" + s.get("signal", "KILL"))
    try:
        os.kill(a.pid, sig)
    except ProcessLookupError:
        pass
    try:
        a.wait_gone(ctx.deadline(s.get("timeout_ms", 3000)))
    except TimeoutError:
        raise CheckFailed("(harness)", "worker %s (pid %d) did not die" % (s["worker"], a.pid))


@step("fork_worker")
def do_fork_worker(ctx, s):
    """Makes worker `worker` fork a child (sv_agent.py's "fork"), which
    connects back as an agent of its own; labels it `as`. The child is a
    plain forked process of the worker: the supervisor did not spawn it
    (sub-workers, docs/subworkers.md). Its variable holds pid and ppid."""
    a = ctx.agent(s["worker"])
    deadline = ctx.deadline(s.get("timeout_ms", 3000))
    tag = "%s/child%d" % (a.tag, ctx.next_request_id())
    try:
        ans = a.command({"op": "fork", "tag": tag}, deadline)
    except (AgentGone, TimeoutError) as e:
        raise CheckFailed("(harness)", "worker %s cannot fork: %s" % (s["worker"], e))
    if not ans.get("ok"):
        raise CheckFailed("(harness)", "worker %s cannot fork: %s" % (s["worker"], ans))
    try:
        got = ctx.pool.claim(tag, 1, deadline)
    except TimeoutError as e:
        raise CheckFailed("(harness)", "the child of %s never connected: %s" % (s["worker"], e))
    ctx.agents[s["as"]] = got[0]
    ctx.vars[s["as"]] = got[0].info()


@step("await_exit")
def do_await_exit(ctx, s):
    """Waits until a worker is gone (its agent's socket closed)."""
    a = ctx.agent(s["worker"])
    try:
        a.wait_gone(ctx.deadline(s.get("timeout_ms", 5000)))
    except TimeoutError:
        raise CheckFailed(_rule(s, "STOP-1"), "worker %s (pid %d) still runs" % (s["worker"], a.pid))


@step("exit_worker")
def do_exit_worker(ctx, s):
    """Tells a worker to exit with a status code and waits until it is gone."""
    a = ctx.agent(s["worker"])
    deadline = ctx.deadline(s.get("timeout_ms", 3000))
    try:
        a.command({"op": "exit", "code": int(s.get("code", 0))}, deadline)
        a.wait_gone(deadline)
    except (AgentGone, TimeoutError):
        pass


@step("wait_status")
def do_wait_status(ctx, s):
    """Polls GetStatus(group, ordinal) every 20 ms until every check of
    `until` holds; at the deadline the first failing check's rule fails."""
    deadline = ctx.deadline(s.get("timeout_ms", 3000))
    req = {"do": "request", "as": s.get("as", "admin"),
           "body": {"get_status": {"group": s["group"], "ordinal": s.get("ordinal", 0)}},
           "reply": "worker_status", "rule": _rule(s)}
    last = None
    while True:
        body = do_request(ctx, dict(req))
        try:
            expr.run_checks(s["until"], body, ctx.vars, _rule(s))
            if "save" in s:
                ctx.vars[s["save"]] = body
            return body
        except CheckFailed as e:
            last = e
        if time.monotonic() >= deadline:
            raise CheckFailed(last.rule, "status never matched: %s" % last)
        time.sleep(0.02)  # polling interval under a deadline


@step("poll")
def do_poll(ctx, s):
    """Runs the step in `step` every 20 ms until it succeeds; at the deadline
    its last failure (and rule) stands. For states reached asynchronously."""
    deadline = ctx.deadline(s.get("timeout_ms", 3000))
    inner = s["step"]
    fn = STEPS.get(inner.get("do"))
    if fn is None or fn is do_poll:
        raise CaseError("poll: bad step %r" % inner.get("do"))
    while True:
        try:
            return fn(ctx, dict(inner))
        except CheckFailed as e:
            if time.monotonic() >= deadline:
                raise CheckFailed(e.rule, "never held: %s" % e)
        time.sleep(0.02)  # polling interval under a deadline


# ---- events ----------------------------------------------------------------

class Subscription:
    """A raw SP SUB connection with a reader thread collecting Events."""

    def __init__(self, ctx, url, deadline):
        self.ctx = ctx
        self.conn = sp.sub(url, deadline)
        self.events = []  # (topic, event dict)
        self.errors = []
        self.cond = threading.Condition()
        self.stop = False
        self.cursor = 0
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        while not self.stop:
            try:
                frame = self.conn.poll_frame(time.monotonic() + 0.1)
            except sp.Timeout as e:
                with self.cond:
                    self.errors.append("event frame cut short: %s" % e)
                    self.cond.notify_all()
                return
            except (sp.Closed, OSError) as e:
                with self.cond:
                    self.errors.append(str(e))
                    self.cond.notify_all()
                return
            if frame is None:
                continue
            nul = frame.find(b"\x00")
            ev = self.ctx.schema.new("Event")
            try:
                if nul < 0:
                    raise ValueError("no NUL after the topic")
                ev.ParseFromString(frame[nul + 1:])
                d = expr.msg_to_py(ev)
                d["topic"] = frame[:nul].decode("utf-8", "replace")
            except Exception as e:
                with self.cond:
                    self.errors.append("undecodable event %s: %s" % (frame[:64].hex(), e))
                    self.cond.notify_all()
                continue
            if self.ctx.verbose:
                self.ctx.log("event %s" % d)
            with self.cond:
                self.events.append(d)
                self.cond.notify_all()

    def next_event(self, deadline):
        with self.cond:
            while self.cursor >= len(self.events):
                left = deadline - time.monotonic()
                if left <= 0 or self.errors:
                    return None
                self.cond.wait(left)
            e = self.events[self.cursor]
            self.cursor += 1
            return e

    def close(self):
        self.stop = True
        self.thread.join(1)
        self.conn.close()


@step("subscribe")
def do_subscribe(ctx, s):
    """Connects a SUB reader to $hello.events_url (or "url"), named `as`."""
    url = ctx.eval(s.get("url", "$hello.events_url"))
    if not url:
        raise CheckFailed(_rule(s, "EVT-1"), "HelloReply.events_url is empty")
    try:
        ctx.subs[s.get("as", "ev")] = Subscription(ctx, url, ctx.deadline(s.get("timeout_ms", 3000)))
    except (sp.Timeout, sp.Closed) as e:
        raise CheckFailed(_rule(s, "EVT-1"), "cannot subscribe to %s: %s" % (url, e))


def _sub(ctx, s):
    name = s.get("sub", "ev")
    if name not in ctx.subs:
        raise CaseError("no subscription %r" % name)
    return ctx.subs[name]


@step("events_sync")
def do_events_sync(ctx, s):
    """Makes sure the subscription is live: sends `request` (a body, e.g. a
    ScaleGroup to the current count) until an event matching `match` is
    received, then starts the event cursor after it."""
    sub = _sub(ctx, s)
    deadline = ctx.deadline(s.get("timeout_ms", 3000))
    while True:
        do_request(ctx, {"body": s["request"], "reply": s.get("reply")})
        poll = min(deadline, time.monotonic() + 0.2)
        while True:
            e = sub.next_event(poll)
            if e is None:
                break
            try:
                expr.run_checks(s["match"], e, ctx.vars)
                return
            except CheckFailed:
                continue
        if time.monotonic() >= deadline:
            raise CheckFailed(_rule(s, "EVT-1"), "no matching event after %d requests" % 1)


@step("expect_events")
def do_expect_events(ctx, s):
    """Waits for events matching each entry of `events` (a list of check
    lists), in that order; other events may come in between. `save` names
    the matched events."""
    sub = _sub(ctx, s)
    deadline = ctx.deadline(s.get("timeout_ms", 3000))
    saves = s.get("save", [])
    seen = []
    for i, checks in enumerate(s["events"]):
        while True:
            e = sub.next_event(deadline)
            if e is None:
                raise CheckFailed(_rule(s, "EVT-2"), "event %d of %d never came (%s); saw: %s%s" % (
                    i + 1, len(s["events"]), checks, [(x.get("kind_case"), x.get("group"), x.get("ordinal"), x.get("generation")) for x in seen],
                    ("; " + "; ".join(sub.errors)) if sub.errors else ""))
            seen.append(e)
            try:
                expr.run_checks(checks, e, ctx.vars)
            except CheckFailed:
                continue
            if i < len(saves) and saves[i]:
                ctx.vars[saves[i]] = e
            break


@step("expect_seq")
def do_expect_seq(ctx, s):
    """Every event received so far has seq = previous seq + 1 and the same
    supervisor_id as HelloReply; no undecodable message arrived."""
    sub = _sub(ctx, s)
    rule = _rule(s, "EVT-3")
    with sub.cond:
        evs = list(sub.events)
        errors = list(sub.errors)
    if errors:
        raise CheckFailed(s.get("decode_rule", "EVT-4"), "; ".join(errors))
    if not evs:
        raise CheckFailed(rule, "no events received")
    for a, b in zip(evs, evs[1:]):
        if b["seq"] != a["seq"] + 1:
            raise CheckFailed(rule, "seq %d followed by %d" % (a["seq"], b["seq"]))
    sid = ctx.vars["hello"]["supervisor_id"]
    for e in evs:
        if e["supervisor_id"] != sid:
            raise CheckFailed(s.get("id_rule", "EVT-5"), "event supervisor_id %r, hello said %r" % (e["supervisor_id"], sid))


# ---- control ---------------------------------------------------------------

@step("let")
def do_let(ctx, s):
    for k, v in s["vars"].items():
        ctx.vars[k] = ctx.eval(v)


@step("assert")
def do_assert(ctx, s):
    expr.run_checks(s["checks"], None, ctx.vars, s.get("rule"))


@step("when_feature")
def do_when_feature(ctx, s):
    """Runs the steps of "then" when HelloReply.features (of the handshake
    at the case's start) lists `feature`, else those of "else". For rules
    about what a supervisor without a feature must do."""
    feats = ctx.vars["hello"]["features"]
    ctx.run_steps(s.get("then", []) if s["feature"] in feats else s.get("else", []))


@step("repeat")
def do_repeat(ctx, s):
    for i in range(int(ctx.eval(s["times"]))):
        ctx.vars[s.get("index", "i")] = i
        ctx.run_steps(s["steps"])


@step("reconnect")
def do_reconnect(ctx, s):
    """Drops a runner connection; the next request opens a new one."""
    ctx.drop_conn(s.get("conn", "admin"))

