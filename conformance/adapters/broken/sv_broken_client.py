#!/usr/bin/python3
"""sv_broken_client.py — a deliberately broken supervise.v1 client, as a testee.

Design: a tiny client written from the protocol alone (the runner's own SP
framing, svconf/sp.py, and the schema loaded at run time), wrapped in the
client adapter protocol of conformance/README.md. With --defect none it is
a correct, if minimal, client (hello, whoami, status); each other defect
breaks one rule, so that tests/broken_clients.py can show the suite names
it:

  ignore-deadline   waits for a reply up to deadline + 3 s     (CLI-2)
  accept-other-id   takes a reply whatever its Envelope.request_id (CLI-6)
  no-stale-skip     takes the first frame whatever its SP id    (CLI-5)

It is also a worked example of a client adapter that links nothing of
libsupervise. Usage: sv_broken_client.py --defect D [--descriptor F] URL
"""

import argparse
import json
import os
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(HERE, "..", "..", "runner"))

from svconf import schema, sp  # noqa: E402

MAX_REPLY = 4 * 1024 * 1024
ERR = {"ETIMEDOUT": 102, "ECLOSED": 104, "EPROTO": 105, "ECONNECT": 103}


class Failure(Exception):
    def __init__(self, name, message, code=None):
        super().__init__(message)
        self.name = name
        self.code = code if code is not None else ERR[name]


class Client:
    def __init__(self, url, sch, defect):
        self.url = url
        self.sch = sch
        self.defect = defect
        self.conn = None
        self.rid = 0
        self.sp_id = 0x80000100

    def call(self, body, want, deadline_ms):
        deadline = time.monotonic() + deadline_ms / 1000.0
        wait_until = deadline + 3 if self.defect == "ignore-deadline" else deadline
        env = self.sch.new("Envelope")
        env.version = 1
        self.rid += 1
        env.request_id = self.rid
        getattr(env, body[0]).CopyFrom(body[1])
        try:
            if self.conn is None:
                self.conn = sp.req(self.url, deadline)
            self.sp_id = (self.sp_id + 1) | sp.ID_BIT
            self.conn.send_frame(struct.pack(">I", self.sp_id) + env.SerializeToString(), deadline)
            while True:
                frame = self.conn.recv_frame(wait_until, limit=MAX_REPLY + 4)
                if len(frame) < 4:
                    raise Failure("EPROTO", "short frame")
                if struct.unpack(">I", frame[:4])[0] == self.sp_id or self.defect == "no-stale-skip":
                    break
        except sp.Timeout:
            raise Failure("ETIMEDOUT", "no reply before the deadline")
        except (sp.Closed, OSError) as e:
            if self.conn is not None:
                self.conn.close()
            self.conn = None
            if "over the limit" in str(e):
                raise Failure("EPROTO", str(e))
            raise Failure("ECLOSED", str(e))
        rep = self.sch.new("Envelope")
        try:
            rep.ParseFromString(frame[4:])
        except Exception as e:
            raise Failure("EPROTO", "undecodable reply: %s" % e)
        if rep.request_id != env.request_id and self.defect != "accept-other-id":
            raise Failure("EPROTO", "reply to another request")
        kind = rep.WhichOneof("body")
        if kind == "error":
            c = rep.error.code
            if c == 0 or c > 99:
                raise Failure("EPROTO", "error code %d" % c)
            name = self.sch.error_code_name(c)
            raise Failure("UNKNOWN" if "unknown" in name else name, rep.error.message, c)
        if kind != want:
            raise Failure("EPROTO", "unexpected reply kind %s" % kind)
        return getattr(rep, kind)


def run(c, cmd):
    ms = int(cmd.get("deadline_ms", 5000))
    op = cmd["op"]
    if op == "hello":
        h = c.sch.new("Hello")
        h.min_version = h.max_version = 1
        r = c.call(("hello", h), "hello_reply", ms)
        return {"version": r.version, "minor_version": r.minor_version,
                "server_name": r.server_name, "supervisor_id": r.supervisor_id,
                "features": list(r.features), "events_url": r.events_url}
    if op == "whoami":
        r = c.call(("whoami", c.sch.new("WhoAmI")), "identity", ms)
        return {"group": r.group, "ordinal": r.ordinal, "generation": r.generation,
                "pid": r.pid, "purpose": r.purpose, "supervisor_id": r.supervisor_id,
                "group_size": r.group_size}
    if op == "status":
        g = c.sch.new("GetStatus")
        g.group = cmd["group"]
        g.ordinal = int(cmd["ordinal"])
        r = c.call(("get_status", g), "worker_status", ms)
        return {"group": r.group, "ordinal": r.ordinal, "generation": r.generation,
                "pid": r.pid, "state_number": r.state}
    raise Failure("EPROTO", "unknown op")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--defect", default="none",
                    choices=["none", "ignore-deadline", "accept-other-id", "no-stale-skip"])
    ap.add_argument("--descriptor")
    ap.add_argument("url")
    a = ap.parse_args()
    sch = schema.Schema(a.descriptor)
    c = Client(a.url, sch, a.defect)
    print(json.dumps({"adapter": "broken-" + a.defect, "features": ["hello", "whoami", "status"]}),
          flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        try:
            out = {"ok": True, "result": run(c, cmd)}
        except Failure as e:
            out = {"ok": False, "error": e.name, "code": e.code, "message": str(e),
                   "generic": e.name == "UNKNOWN"}
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
