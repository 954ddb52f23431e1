"""A scripted fake supervisor for the client-under-test role.

Design: the runner listens on its own ipc:// SP REP socket (sp.Listener; no
nng, no libsupervise) and answers whatever the client under test sends
according to a script of actions, one action per request in arrival order
across all connections. An accept thread hands every connection to its own
thread, which reads a request, records it (raw bytes, SP id, the decoded
Envelope or the decode error), takes the next action and performs it.
When the script is used up the default action applies: a canned, valid
reply for the request's kind (see canned()).

Actions (JSON objects of a case's "server" list):

  {"act": "reply"}          the canned reply (default act); optional keys:
      "body": {...}         the reply body in protobuf's JSON mapping with
                            proto field names, e.g. {"error": {"code": 77,
                            "message": "x"}}; replaces the canned body
      "merge": {...}        fields merged into the canned body instead
      "no_body": true       an envelope without a known body
      "unknown_fields": [...]       raw fields appended to the Envelope
      "body_unknown_fields": [...]  raw fields appended inside the body
      "request_id": EXPR    the envelope request_id ("$request_id + 1000";
                            default: the request's)
      "version": N          the envelope version (default 1)
      "delay_ms": N         wait N ms (scaled) before answering
      "stale_first": true   first send a reply under another SP request id
                            (supervisor_id "stale-reply"), then the real one
  {"act": "raw", "hex": H}  these bytes as the reply payload
  {"act": "oversize", "size": N}  a reply payload of N bytes (a valid
                            Envelope padded with an unknown field)
  {"act": "silent"}         never answer (the connection stays open)
  {"act": "drop"}           close the connection without answering
  "times": N | "always"     repeat the action N times (default 1)

Unknown fields are {"number": N, "varint": V} or {"number": N, "hex": H}
(or "size"/"fill"), as in supervisor-role cases.
"""

import copy
import struct
import threading
import time

from google.protobuf import json_format

from . import expr, sp
from .expr import CaseError
from .rawfield import raw_field, varint

SUPERVISOR_ID = "fake-supervisor-1"
FEATURES = ["identity", "admin.list", "admin.status", "admin.scale", "admin.stop",
            "admin.restart", "admin.restart.expected_generation", "ready", "heartbeat"]


def _worker(group, ordinal, generation=3, state=1):
    return {"group": group, "ordinal": ordinal, "generation": generation,
            "pid": 4242 + ordinal, "state": state, "uptime_ms": 1500,
            "purpose": "conformance fake", "restarts": generation,
            "last_exit_code": -1, "ready": True}


def canned(kind, body):
    """(reply kind, reply body dict) of a valid reply to a request."""
    if kind == "hello":
        return "hello_reply", {"version": 1, "minor_version": 2,
                               "server_name": "sv-conformance-fake",
                               "supervisor_id": SUPERVISOR_ID,
                               "features": list(FEATURES)}
    if kind == "whoami":
        return "identity", {"group": "web", "ordinal": 1, "generation": 3,
                            "kind": 1, "pid": 4243, "purpose": "conformance fake",
                            "supervisor_id": SUPERVISOR_ID, "group_size": 2,
                            "context": [{"kind": 1, "ordinal": 1, "name": "web"}]}
    if kind == "list_workers":
        g = body.get("group") or "web"
        return "worker_list", {"workers": [_worker(g, 0), _worker(g, 1)]}
    if kind == "get_status":
        return "worker_status", _worker(body.get("group", ""), int(body.get("ordinal", 0)))
    if kind == "restart_worker":
        return "worker_status", _worker(body.get("group", ""), int(body.get("ordinal", 0)),
                                        generation=4, state=4)
    if kind in ("ready", "heartbeat"):
        return "ack", {}
    if kind in ("scale_group", "stop_group"):
        return "group_change", {"group": body.get("group", ""), "previous_count": 2,
                                "count": int(body.get("count", 0))}
    return "error", {"code": 3, "message": "the fake supervisor does not serve %s" % kind}


class _Settle:
    """Marks one recorded request as acted on, once (calling it again does
    nothing)."""

    def __init__(self, fake):
        self.fake = fake
        self.done = False

    def __call__(self):
        if self.done:
            return
        self.done = True
        with self.fake.settled:
            self.fake.unsettled -= 1
            self.fake.settled.notify_all()


class Fake:
    """The scripted supervisor of one case."""

    def __init__(self, schema, url, multiplier=1.0, verbose=None):
        self.schema = schema
        self.url = url
        self.multiplier = multiplier
        self.log = verbose  # a function, or None
        self.listener = sp.Listener(url)
        self.lock = threading.Lock()
        # Requests recorded whose action has not been carried out yet (a
        # scripted delay counts as carried out once it starts): a new
        # script waits for them, so what a step's request triggers (above
        # all a drop) is done before the next step's call begins.
        self.unsettled = 0
        self.settled = threading.Condition(self.lock)
        self.script = []  # [action dict, remaining count or None (always)]
        self.requests = []
        self.conns = []
        self.nconn = 0
        self.stop = False
        self.threads = []
        t = threading.Thread(target=self._accept_loop, daemon=True)
        t.start()
        self.threads.append(t)

    # ---- script -----------------------------------------------------------

    def set_script(self, actions, settle_s=5.0):
        """Replaces the script, once every request already recorded was
        acted on (at most settle_s, scaled, then anyway): otherwise a drop
        owed to the previous step could close a connection the next call
        has just written its request into, unread."""
        with self.settled:
            self.settled.wait_for(lambda: self.unsettled == 0,
                                  settle_s * self.multiplier)
            self.script = []
            for a in actions:
                times = a.get("times", 1)
                self.script.append([a, None if times == "always" else int(times)])

    def _next_action(self):
        with self.lock:
            while self.script:
                a, left = self.script[0]
                if left is None:
                    return a
                if left > 0:
                    self.script[0][1] -= 1
                    if self.script[0][1] == 0:
                        self.script.pop(0)
                    return a
                self.script.pop(0)
        return {"act": "reply"}

    def recorded(self):
        with self.lock:
            return list(self.requests)

    # ---- serving ----------------------------------------------------------

    def _accept_loop(self):
        while not self.stop:
            try:
                c = self.listener.accept(time.monotonic() + 0.1)
            except sp.Closed:
                continue
            if c is None:
                continue
            with self.lock:
                self.nconn += 1
                n = self.nconn
                self.conns.append(c)
            t = threading.Thread(target=self._serve, args=(c, n), daemon=True)
            t.start()
            self.threads.append(t)

    def _serve(self, c, n):
        while not self.stop:
            try:
                frame = c.poll_frame(time.monotonic() + 0.1, limit=1 << 20)
            except sp.Timeout:
                c.close()  # a frame begun and not finished in 5 s
                return
            except (sp.Closed, OSError, AttributeError):
                return
            if frame is None:
                continue
            if len(frame) < 4:
                return
            sp_id = struct.unpack(">I", frame[:4])[0]
            rec = {"conn": n, "sp_id": sp_id, "raw": frame[4:], "envelope": None,
                   "kind": None, "body": None, "decode_error": None, "t": time.monotonic()}
            env = self.schema.new("Envelope")
            try:
                env.ParseFromString(frame[4:])
                rec["envelope"] = expr.msg_to_py(env)
                rec["kind"] = env.WhichOneof("body")
                rec["body"] = rec["envelope"].get(rec["kind"]) if rec["kind"] else None
                rec["body_json"] = json_format.MessageToDict(
                    getattr(env, rec["kind"]), preserving_proto_field_name=True) if rec["kind"] else {}
            except Exception as e:  # DecodeError and friends
                rec["decode_error"] = str(e)
                rec["body_json"] = {}
            with self.lock:
                self.requests.append(rec)
                self.unsettled += 1
            settle = _Settle(self)
            try:
                action = self._next_action()
                if self.log:
                    self.log("fake: conn %d request %s id %s -> %s" % (
                        n, rec["kind"], rec["envelope"] and rec["envelope"]["request_id"],
                        action.get("act", "reply")))
                if not self._act(c, sp_id, rec, action, settle):
                    return
            finally:
                settle()

    def _send(self, c, sp_id, payload):
        try:
            c.send_frame(struct.pack(">I", sp_id) + payload, time.monotonic() + 5)
            return True
        except (sp.Timeout, sp.Closed, OSError, AttributeError):
            return False

    def _act(self, c, sp_id, rec, a, settle=lambda: None):
        """Performs action a for request rec; False when the connection ends.
        A scripted delay calls settle() first: lateness is the point of it,
        and the next step must not wait for it."""
        act = a.get("act", "reply")
        delay = float(a.get("delay_ms", 0)) * self.multiplier / 1000.0
        if delay:
            settle()
            end = time.monotonic() + delay
            while time.monotonic() < end and not self.stop:
                time.sleep(min(0.02, max(0.0, end - time.monotonic())))  # scripted lateness
        if act == "silent":
            return True
        if act == "drop":
            c.close()
            return False
        if act == "raw":
            return self._send(c, sp_id, bytes.fromhex(a.get("hex", "")))
        if act == "oversize":
            size = int(a["size"])
            head = self.reply_bytes(rec, {"act": "reply"})
            # pad with an unknown field (number 9) to exactly `size` bytes
            tag = varint(9 << 3 | 2)
            pad = size - len(head) - len(tag)
            while pad >= 0 and len(varint(pad)) + pad + len(head) + len(tag) > size:
                pad -= 1
            if pad < 0 or len(varint(pad)) + pad + len(head) + len(tag) != size:
                raise CaseError("oversize: cannot pad to exactly %d bytes" % size)
            data = head + tag + varint(pad) + b"x" * pad
            return self._send(c, sp_id, data)
        if act != "reply":
            raise CaseError("unknown server act %r" % act)
        if a.get("stale_first"):
            stale = dict(a)
            stale.pop("stale_first")
            stale["merge"] = {"supervisor_id": "stale-reply", "server_name": "stale-reply",
                              "group": "stale-reply"}
            other = ((sp_id - 7) & 0x7FFFFFFF) | sp.ID_BIT
            if not self._send(c, other, self.reply_bytes(rec, stale, keep_fields=False)):
                return False
        return self._send(c, sp_id, self.reply_bytes(rec, a))

    def reply_bytes(self, rec, a, keep_fields=True):
        """The Envelope bytes of a "reply" action for request rec."""
        req_id = rec["envelope"]["request_id"] if rec["envelope"] else 0
        env = self.schema.new("Envelope")
        env.version = int(a.get("version", 1))
        rid = a.get("request_id")
        env.request_id = req_id if rid is None else int(expr.evaluate(rid, {"request_id": req_id})) & ((1 << 64) - 1)
        header = env.SerializeToString()
        if a.get("no_body"):
            body = b""
        else:
            if "body" in a:
                body_d = copy.deepcopy(a["body"])
            else:
                kind, fields = canned(rec["kind"], rec.get("body_json") or {})
                body_d = {kind: fields}
            for k, v in (a.get("merge") or {}).items():
                kind = next(iter(body_d))
                if k in self._fields(kind):
                    body_d[kind][k] = v
            body = self._body_bytes(body_d, a.get("body_unknown_fields", []) if keep_fields else [])
        tail = b"".join(raw_field(f) for f in a.get("unknown_fields", []))
        return header + body + tail

    def _fields(self, kind):
        f = self.schema.cls("Envelope").DESCRIPTOR.fields_by_name.get(kind)
        return set(f.message_type.fields_by_name) if f is not None and f.message_type else set()

    def _body_bytes(self, body_d, extra):
        if len(body_d) != 1:
            raise CaseError("a reply body names exactly one kind: %r" % body_d)
        kind, fields = next(iter(body_d.items()))
        fd = self.schema.cls("Envelope").DESCRIPTOR.fields_by_name.get(kind)
        if fd is None:
            raise CaseError("no Envelope body %r" % kind)
        msg = self.schema.new(fd.message_type.name)
        try:
            json_format.ParseDict(fields, msg)
        except json_format.ParseError as e:
            raise CaseError("bad reply body %r: %s" % (body_d, e))
        data = msg.SerializeToString() + b"".join(raw_field(f) for f in extra)
        return varint(fd.number << 3 | 2) + varint(len(data)) + data

    def close(self):
        self.stop = True
        for c in list(self.conns):
            c.close()
        self.listener.close()
        for t in self.threads:
            t.join(1)
