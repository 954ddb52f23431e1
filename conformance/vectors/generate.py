#!/usr/bin/python3
"""generate.py — writes (or, with --check, verifies) the golden wire vectors.

Design: every vector is a pair NAME.bin (the protobuf binary encoding) and
NAME.txt (protobuf text format, after a header of "# key: value" lines:
proto-file, proto-message, and "unknown-fields: yes" when the binary holds
fields the schema does not know, which text format cannot carry). The set
is derived from the schema itself, so a new message, body or event kind gets
its vectors by running this script again:

  TYPE.full              every message type of supervise.v1, each field set
                         to a deterministic non-default value (one member
                         per oneof; negative int32/int64 values, so the
                         10-byte varint form is covered; non-ASCII strings;
                         two elements per repeated field);
  Envelope.BODY          an Envelope (version 1) for every member of its
                         body oneof, the body filled as above;
  Event.KIND             an Event for every member of its kind oneof;
  a few hand-written vectors (HAND below): real-looking requests, replies,
  errors and events, and Envelope.unknown-fields (compatibility rule 2:
  readers keep unknown fields and write them back).

The encoding is python3-protobuf's deterministic serialization (fields in
number order, unknown fields last). checker: check_vectors.py (python3-
protobuf) and vector_check.c (protobuf-c, the project's generated code).
Run with /usr/bin/python3 (Debian's python3-protobuf).
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(HERE, "..", "runner"))

from google.protobuf import json_format, text_format  # noqa: E402
from google.protobuf.descriptor import FieldDescriptor as FD  # noqa: E402

from svconf import schema as svschema  # noqa: E402

PROTO_FILE = "supervise/v1/supervise.proto"

# Hand-written vectors: name -> (message type, JSON form, unknown-field bytes)
HAND = {
    "Envelope.hello.v1-client": ("Envelope", {
        "version": 1, "request_id": 1,
        "hello": {"client_name": "supervisectl/0.1.0", "min_version": 1, "max_version": 1}}, b""),
    "Envelope.hello_reply.v1.1": ("Envelope", {
        "version": 1, "request_id": 1,
        "hello_reply": {"version": 1, "minor_version": 1, "server_name": "supervised/0.1.0",
                        "supervisor_id": "3b45d0446ce60a0f7a96466b4205aae7",
                        "features": ["identity", "admin.list", "events"],
                        "events_url": "ipc:///run/supervise/events.sock"}}, b""),
    "Envelope.whoami.empty": ("Envelope", {"version": 1, "request_id": 7, "whoami": {}}, b""),
    "Envelope.identity.web-3": ("Envelope", {
        "version": 1, "request_id": 7,
        "identity": {"group": "web", "ordinal": 3, "generation": 12, "kind": "WORKER_KIND_PROCESS",
                     "pid": 4242, "purpose": "serve HTTP requests",
                     "supervisor_id": "3b45d0446ce60a0f7a96466b4205aae7",
                     "context": [{"kind": "WORKER_KIND_PROCESS", "ordinal": 3, "name": "web"}],
                     "group_size": 4}}, b""),
    "Envelope.identity.ordinal-0": ("Envelope", {
        "version": 1, "request_id": 8,
        "identity": {"group": "db", "ordinal": 0, "generation": 0, "kind": "WORKER_KIND_PROCESS",
                     "pid": 1, "purpose": "p", "supervisor_id": "x",
                     "context": [{"kind": "WORKER_KIND_PROCESS", "ordinal": 0, "name": "db"}],
                     "group_size": 1}}, b""),
    "Envelope.error.bad-request-id-0": ("Envelope", {
        "version": 1, "request_id": 0,
        "error": {"code": "ERROR_CODE_BAD_REQUEST", "message": "malformed request"}}, b""),
    "Envelope.error.not-a-worker": ("Envelope", {
        "version": 1, "request_id": 9,
        "error": {"code": "ERROR_CODE_NOT_A_WORKER", "message": "pid 77 is not a supervised worker"}}, b""),
    "Envelope.error.conflict": ("Envelope", {
        "version": 1, "request_id": 10,
        "error": {"code": "ERROR_CODE_CONFLICT", "message": "generation is 5, not 4"}}, b""),
    "Envelope.restart_worker.cas": ("Envelope", {
        "version": 1, "request_id": 11,
        "restart_worker": {"group": "web", "ordinal": 2, "expected_generation": 18446744073709551615,
                           "check_generation": True}}, b""),
    "Envelope.worker_status.backoff": ("Envelope", {
        "version": 1, "request_id": 12,
        "worker_status": {"group": "web", "ordinal": 1, "generation": 3, "pid": 0,
                          "state": "WORKER_STATE_BACKOFF", "purpose": "serve", "restarts": 3,
                          "last_exit_code": -1, "last_signal": 9, "ready": False,
                          "fast_failures": 2, "restart_in_ms": 180}}, b""),
    "Envelope.version-2": ("Envelope", {"version": 2, "request_id": 13, "whoami": {}}, b""),
    "Envelope.unknown-fields": ("Envelope", {"version": 1, "request_id": 14, "whoami": {}},
                                # field 9 (header range, unassigned) varint 5; field 499
                                # (unassigned body) an empty message
                                bytes([0x48, 0x05, 0x9A, 0x1F, 0x00])),
    # v1.4 sub-workers (docs/subworkers.md): a thread with its tid, a
    # child asking for number 0 (has_number carries what the default 0
    # cannot), the reply with the nested frames, a release, a refusal
    "Envelope.register_sub_worker.thread": ("Envelope", {
        "version": 1, "request_id": 20,
        "register_sub_worker": {"kind": "WORKER_KIND_THREAD", "label": "pool-0", "tid": 4243}}, b""),
    "Envelope.register_sub_worker.child-number-0": ("Envelope", {
        "version": 1, "request_id": 21,
        "register_sub_worker": {"kind": "WORKER_KIND_PROCESS", "label": "puma-0", "number": 0,
                                "has_number": True}}, b""),
    "Envelope.register_sub_worker_reply.thread": ("Envelope", {
        "version": 1, "request_id": 20,
        "register_sub_worker_reply": {"again": False, "identity": {
            "group": "web", "ordinal": 1, "generation": 2, "kind": "WORKER_KIND_THREAD",
            "pid": 4242, "purpose": "serve HTTP requests",
            "supervisor_id": "3b45d0446ce60a0f7a96466b4205aae7",
            "context": [{"kind": "WORKER_KIND_PROCESS", "ordinal": 3, "name": "web", "generation": 12},
                        {"kind": "WORKER_KIND_THREAD", "ordinal": 1, "name": "pool-1", "generation": 2}],
            "parent": {"kind": "WORKER_KIND_PROCESS", "ordinal": 3, "name": "web", "generation": 12},
            "group_size": 4}}}, b""),
    "Envelope.identity.child": ("Envelope", {
        "version": 1, "request_id": 22,
        "identity": {"group": "web", "ordinal": 0, "generation": 0, "kind": "WORKER_KIND_PROCESS",
                     "pid": 4300, "purpose": "serve HTTP requests",
                     "supervisor_id": "3b45d0446ce60a0f7a96466b4205aae7",
                     "context": [{"kind": "WORKER_KIND_PROCESS", "ordinal": 3, "name": "web", "generation": 12},
                                 {"kind": "WORKER_KIND_PROCESS", "ordinal": 0, "name": "puma-0"}],
                     "parent": {"kind": "WORKER_KIND_PROCESS", "ordinal": 3, "name": "web", "generation": 12},
                     "group_size": 4}}, b""),
    "Envelope.release_sub_worker.thread": ("Envelope", {
        "version": 1, "request_id": 23,
        "release_sub_worker": {"kind": "WORKER_KIND_THREAD", "number": 1, "generation": 2}}, b""),
    "Envelope.release_sub_worker_reply.empty": ("Envelope", {
        "version": 1, "request_id": 23, "release_sub_worker_reply": {}}, b""),
    "Envelope.error.exhausted-subworkers": ("Envelope", {
        "version": 1, "request_id": 24,
        "error": {"code": "ERROR_CODE_EXHAUSTED", "message": "the process holds max_subworkers sub-workers"}}, b""),
    # v1.4 activity (docs/activity.md): a busy worker's status
    "Envelope.worker_status.activity": ("Envelope", {
        "version": 1, "request_id": 25,
        "worker_status": {"group": "web", "ordinal": 3, "generation": 12, "pid": 4242,
                          "state": "WORKER_STATE_RUNNING", "uptime_ms": 60000, "purpose": "serve",
                          "ready": True, "activities": 2, "activity": "http GET /orders/17",
                          "activity_age_ms": 1500}}, b""),
    "Event.exited.killed": ("Event", {
        "seq": 41, "supervisor_id": "3b45d0446ce60a0f7a96466b4205aae7", "time_unix_ms": 1764700000123,
        "group": "web", "ordinal": 3, "generation": 12, "pid": 4242,
        "exited": {"exited": False, "code": 0, "signal": 9, "core_dumped": False, "uptime_ms": 5000}}, b""),
    "Event.started.gen-13": ("Event", {
        "seq": 42, "supervisor_id": "3b45d0446ce60a0f7a96466b4205aae7", "time_unix_ms": 1764700000125,
        "group": "web", "ordinal": 3, "generation": 13, "pid": 4250, "started": {}}, b""),
}


def fill(msg, depth=0):
    """Sets every field of msg to a deterministic non-default value."""
    chosen_oneofs = set()
    for f in msg.DESCRIPTOR.fields:
        o = f.containing_oneof
        if o is not None:
            if o.name in chosen_oneofs:
                continue
            chosen_oneofs.add(o.name)
        n = f.number
        if f.type == FD.TYPE_MESSAGE:
            if depth >= 3:
                continue
            if f.label == FD.LABEL_REPEATED:
                for _ in range(2):
                    fill(getattr(msg, f.name).add(), depth + 1)
            else:
                sub = getattr(msg, f.name)
                sub.SetInParent()
                fill(sub, depth + 1)
            continue
        v = scalar(f, n)
        if f.label == FD.LABEL_REPEATED:
            getattr(msg, f.name).extend([v, scalar(f, n + 1)])
        else:
            setattr(msg, f.name, v)


def scalar(f, n):
    t = f.type
    if t == FD.TYPE_STRING:
        return "%s-%d-ü" % (f.name, n)
    if t == FD.TYPE_BYTES:
        return bytes([n & 0xFF, 0, 0xFF])
    if t == FD.TYPE_BOOL:
        return True
    if t == FD.TYPE_ENUM:
        return f.enum_type.values[-1].number
    if t in (FD.TYPE_INT32, FD.TYPE_SINT32, FD.TYPE_SFIXED32):
        return -n
    if t in (FD.TYPE_INT64, FD.TYPE_SINT64, FD.TYPE_SFIXED64):
        return -(1 << 33) - n
    if t in (FD.TYPE_UINT32, FD.TYPE_FIXED32):
        return 300 + n
    if t in (FD.TYPE_UINT64, FD.TYPE_FIXED64):
        return (1 << 40) + n
    if t in (FD.TYPE_DOUBLE, FD.TYPE_FLOAT):
        return 0.5 + n
    raise ValueError("unhandled field type %d" % t)


def vectors(sch):
    """name -> (message type name, message, extra unknown bytes)."""
    out = {}
    for name in sch.message_names():
        m = sch.new(name)
        fill(m)
        out[name + ".full"] = (name, m, b"")
    for oneof_owner, oneof in (("Envelope", "body"), ("Event", "kind")):
        d = sch.cls(oneof_owner).DESCRIPTOR
        for f in d.oneofs_by_name[oneof].fields:
            m = sch.new(oneof_owner)
            if oneof_owner == "Envelope":
                m.version = 1
                m.request_id = 100 + f.number
            else:
                m.seq = f.number
                m.supervisor_id = "sid"
                m.group = "g"
            sub = getattr(m, f.name)
            sub.SetInParent()
            fill(sub, 1)
            out["%s.%s" % (oneof_owner, f.name)] = (oneof_owner, m, b"")
    for name, (typ, js, unknown) in HAND.items():
        m = sch.new(typ)
        json_format.ParseDict(js, m)
        out[name] = (typ, m, unknown)
    return out


def render(typ, msg, unknown):
    data = msg.SerializeToString(deterministic=True) + unknown
    head = ["# proto-file: %s" % PROTO_FILE,
            "# proto-message: %s.%s" % (svschema.PACKAGE, typ)]
    if unknown:
        head.append("# unknown-fields: yes")
    text = text_format.MessageToString(msg, as_utf8=True)
    return data, "\n".join(head) + "\n" + text


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--descriptor")
    p.add_argument("--proto-dir", default=os.path.join(HERE, "..", "..", "proto"))
    p.add_argument("--out", default=HERE)
    p.add_argument("--check", action="store_true",
                   help="verify the committed vectors instead of writing them")
    a = p.parse_args()
    sch = svschema.Schema(a.descriptor, os.path.abspath(a.proto_dir))
    vs = vectors(sch)
    bad = 0
    want_files = set()
    for name, (typ, msg, unknown) in sorted(vs.items()):
        data, text = render(typ, msg, unknown)
        bpath = os.path.join(a.out, name + ".bin")
        tpath = os.path.join(a.out, name + ".txt")
        want_files.update([name + ".bin", name + ".txt"])
        if a.check:
            try:
                with open(bpath, "rb") as f:
                    same_b = f.read() == data
                with open(tpath, encoding="utf-8") as f:
                    same_t = f.read() == text
            except OSError:
                same_b = same_t = False
            if not (same_b and same_t):
                print("stale or missing vector: %s (run vectors/generate.py)" % name)
                bad += 1
        else:
            with open(bpath, "wb") as f:
                f.write(data)
            with open(tpath, "w", encoding="utf-8") as f:
                f.write(text)
    have = {f for f in os.listdir(a.out) if f.endswith((".bin", ".txt"))}
    for f in sorted(have - want_files):
        if a.check:
            print("vector file not produced by generate.py: %s" % f)
            bad += 1
        else:
            os.unlink(os.path.join(a.out, f))
    print("%d vectors %s" % (len(vs), "checked, %d stale" % bad if a.check else "written"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
