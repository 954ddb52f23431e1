#!/usr/bin/python3
"""check_vectors.py — checks the golden wire vectors with python3-protobuf.

Design: the second, independent protobuf implementation (Debian's
python3-protobuf, run with /usr/bin/python3; the project's own code is
protobuf-c, checked by vector_check.c). For every NAME.bin / NAME.txt pair:

  1. the .bin decodes as the header's proto-message, and re-encodes to the
     same bytes (unknown fields included: they are kept and written back);
  2. the .txt (text format) parses and encodes to the same bytes (skipped
     for "unknown-fields: yes": text format cannot carry them);
  3. the decoded message prints as exactly the .txt (canonical text form).

Coverage: every message type of the schema has a vector, and every member
of Envelope.body and Event.kind has an Envelope/Event vector that uses it.
Prints one line per problem and a summary; exit status 0 when all is well.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(HERE, "..", "runner"))

from google.protobuf import text_format  # noqa: E402

from svconf import schema as svschema  # noqa: E402

MAX_VECTOR = 1 << 20


def read_header(text):
    head, body = {}, []
    for line in text.splitlines(True):
        if not body and line.startswith("# ") and ":" in line:
            k, v = line[2:].split(":", 1)
            head[k.strip()] = v.strip()
        else:
            body.append(line)
    return head, "".join(body)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--descriptor")
    p.add_argument("--proto-dir", default=os.path.join(HERE, "..", "..", "proto"))
    p.add_argument("--dir", default=HERE)
    a = p.parse_args()
    sch = svschema.Schema(a.descriptor, os.path.abspath(a.proto_dir))
    problems = []
    seen_types = set()
    seen_members = {"Envelope": set(), "Event": set()}
    names = sorted(f[:-4] for f in os.listdir(a.dir) if f.endswith(".bin"))
    for name in names:
        bpath = os.path.join(a.dir, name + ".bin")
        tpath = os.path.join(a.dir, name + ".txt")
        if os.path.getsize(bpath) > MAX_VECTOR:
            problems.append("%s: over %d bytes" % (name, MAX_VECTOR))
            continue
        with open(bpath, "rb") as f:
            data = f.read()
        try:
            with open(tpath, encoding="utf-8") as f:
                head, text = read_header(f.read())
        except OSError:
            problems.append("%s: no .txt" % name)
            continue
        full = head.get("proto-message", "")
        if not full.startswith(svschema.PACKAGE + "."):
            problems.append("%s: bad proto-message header %r" % (name, full))
            continue
        typ = full[len(svschema.PACKAGE) + 1:]
        if typ not in sch.message_names():
            problems.append("%s: %s is not in the schema" % (name, full))
            continue
        seen_types.add(typ)
        m = sch.new(typ)
        try:
            m.ParseFromString(data)
        except Exception as e:
            problems.append("%s: does not decode: %s" % (name, e))
            continue
        if typ in seen_members:
            oneof = "body" if typ == "Envelope" else "kind"
            member = m.WhichOneof(oneof)
            if member:
                seen_members[typ].add(member)
        again = m.SerializeToString(deterministic=True)
        if again != data:
            problems.append("%s: re-encodes differently:\n  want %s\n  got  %s" % (name, data.hex(), again.hex()))
        if text_format.MessageToString(m, as_utf8=True) != text:
            problems.append("%s: prints differently from its .txt" % name)
        if head.get("unknown-fields") != "yes":
            t = sch.new(typ)
            try:
                text_format.Parse(text, t)
                if t.SerializeToString(deterministic=True) != data:
                    problems.append("%s: the .txt encodes to other bytes" % name)
            except text_format.ParseError as e:
                problems.append("%s: the .txt does not parse: %s" % (name, e))
    for typ in sch.message_names():
        if typ not in seen_types:
            problems.append("no vector for message %s" % typ)
    for owner, oneof in (("Envelope", "body"), ("Event", "kind")):
        for f in sch.cls(owner).DESCRIPTOR.oneofs_by_name[oneof].fields:
            if f.name not in seen_members[owner]:
                problems.append("no %s vector with %s %s" % (owner, oneof, f.name))
    for pr in problems:
        print("FAIL " + pr)
    print("python3-protobuf: %d vectors, %d message types, %d problems" % (
        len(names), len(seen_types), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
