#!/usr/bin/python3
"""sv_client_adapter.py — the conformance testee adapter of the Python binding.

Design: glue only. It reads one JSON command per line on stdin, makes that
call with bindings/python's supervise.Client against the control URL given
as its only argument, and prints one JSON result line (the harness protocol
of conformance/README.md, "Writing a client adapter"). The first line it
prints is its banner: the calls it can make. Run it with
PYTHONPATH=bindings/python and SUPERVISE_LIBRARY naming libsupervise.so.
"""

import json
import sys

import supervise

OPS = ["hello", "whoami", "list", "status", "restart", "ready"]
# Capabilities beyond the calls: hello's result carries durability.
EXTRAS = ["hello.durability"]


def worker(w):
    state = int(w.state)
    name = w.state.name.lower() if isinstance(w.state, supervise.State) else "unknown"
    return {"group": w.group, "ordinal": w.ordinal, "generation": w.generation,
            "pid": w.pid, "state": name, "state_number": state, "ready": bool(w.ready),
            "purpose": w.purpose}


def call(c, cmd):
    op = cmd["op"]
    t = cmd.get("deadline_ms", 5000) / 1000.0
    if op == "hello":
        h = c.hello(timeout=t)
        return {"version": h.version, "minor_version": h.minor_version,
                "server_name": h.server_name, "supervisor_id": h.supervisor_id,
                "features": list(h.features), "events_url": h.events_url,
                "durability": h.durability._asdict()}
    if op == "whoami":
        i = c.whoami(timeout=t)
        return {"group": i.group, "ordinal": i.ordinal, "generation": i.generation,
                "pid": i.pid, "purpose": i.purpose, "supervisor_id": i.supervisor_id,
                "group_size": i.group_size}
    if op == "list":
        return {"workers": [worker(w) for w in c.list(cmd.get("group"), timeout=t)]}
    if op == "status":
        return worker(c.status(cmd["group"], cmd["ordinal"], timeout=t))
    if op == "restart":
        c.restart(cmd["group"], cmd["ordinal"],
                  expected_generation=cmd.get("expected_generation"), timeout=t)
        return {}
    if op == "ready":
        c.ready(cmd.get("status"), timeout=t)
        return {}
    raise ValueError("unknown op %r" % op)


def main():
    client = supervise.Client(sys.argv[1])
    print(json.dumps({"adapter": "python", "features": OPS + EXTRAS}), flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        try:
            out = {"ok": True, "result": call(client, cmd)}
        except supervise.Error as e:
            out = {"ok": False, "error": e.name, "code": e.code, "message": e.message,
                   "generic": type(e) is supervise.Error}
        print(json.dumps(out), flush=True)
    client.close()


if __name__ == "__main__":
    main()
