#!/usr/bin/python3
"""sv_agent.py — the worker program of the conformance suite.

Design: the supervisor under test spawns this program as the argv of every
group a case configures:  sv_agent.py AGENT_SOCKET TAG. It is a remote
hand of the runner inside a real worker process, so that requests which the
supervisor answers by the caller's kernel credentials (WhoAmI, Ready,
Heartbeat) really come from a worker. It knows no protobuf: the runner
encodes every request and decodes every reply; the agent only moves bytes.

Protocol with the runner: one JSON object per line on AGENT_SOCKET (a UNIX
stream socket the runner listens on).
  agent -> runner, first line: {"hello": 1, "pid", "ppid", "tag", "env"}
      env: every SUPERVISE_* variable the agent was given.
  runner -> agent: {"op": "request", "hex": BODY, "timeout_ms": N,
                    "url": optional, default $SUPERVISE_URL}
      agent -> runner: {"ok": true, "hex": REPLY} or
                       {"ok": false, "error": "closed"|"timeout"|..., "detail"}
      The agent keeps one REQ connection per URL for its lifetime.
  runner -> agent: {"op": "exit", "code": N}: answers {"ok": true}, exits.
  runner -> agent: {"op": "fork", "tag": T}: forks a child that is an
      agent too (tag T, default TAG + "/child"): it drops the parent's
      connections, connects to AGENT_SOCKET itself and says hello; the
      parent answers {"ok": true, "pid": CHILD}. For sub-worker cases: the
      child is a process the worker forked (docs/subworkers.md). Children
      are reaped by the kernel (SIGCHLD ignored), so an exited child leaves
      no zombie behind.
The agent exits when the runner's socket closes, so it never outlives the
runner. Every line is bounded (1 MiB) and every wait has a deadline.
"""

import json
import os
import signal
import socket
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svconf import sp  # noqa: E402  (stdlib-only module)

LINE_MAX = 1 << 20


def main():
    if len(sys.argv) != 3:
        sys.stderr.write("usage: sv_agent.py AGENT_SOCKET TAG\n")
        return 100
    return serve(sys.argv[1], sys.argv[2])


def serve(path, tag):
    """Connects to the runner at path as an agent tagged tag and executes
    its commands until the runner's socket closes."""
    ctl = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    ctl.settimeout(10)
    ctl.connect(path)
    ctl.settimeout(None)
    env = {k: v for k, v in os.environ.items() if k.startswith("SUPERVISE_")}
    hello = {"hello": 1, "pid": os.getpid(), "ppid": os.getppid(), "tag": tag,
             "env": env}
    ctl.sendall((json.dumps(hello) + "\n").encode())
    conns = {}
    buf = b""
    while True:
        chunk = ctl.recv(65536)
        if not chunk:
            return 0
        buf += chunk
        if len(buf) > LINE_MAX:
            return 101
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            cmd = json.loads(line)
            if cmd.get("op") == "fork":
                ans = fork(path, tag, cmd, ctl, conns)
            else:
                ans = handle(cmd, conns)
            ctl.sendall((json.dumps(ans) + "\n").encode())
            if cmd.get("op") == "exit":
                ctl.close()
                os._exit(int(cmd.get("code", 0)))


def fork(path, tag, cmd, ctl, conns):
    """Forks a child agent (see the protocol above); returns the parent's
    answer. The child never returns from here."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps them
    child_tag = str(cmd.get("tag") or tag + "/child")
    try:
        pid = os.fork()
    except OSError as e:
        return {"ok": False, "error": "fork", "detail": str(e)}
    if pid:
        return {"ok": True, "pid": pid}
    # the child: the parent's sockets are the parent's (closing a copy of
    # the descriptor leaves the parent's connections open)
    code = 102
    try:
        ctl.close()
        for c in conns.values():
            c.close()
        conns.clear()
        code = serve(path, child_tag)
    finally:
        os._exit(code)


def handle(cmd, conns):
    op = cmd.get("op")
    if op == "exit":
        return {"ok": True}
    if op != "request":
        return {"ok": False, "error": "bad-op", "detail": str(op)}
    url = cmd.get("url") or os.environ.get("SUPERVISE_URL", "")
    deadline = time.monotonic() + int(cmd.get("timeout_ms", 5000)) / 1000.0
    try:
        c = conns.get(url)
        if c is None:
            c = sp.req(url, deadline)
            conns[url] = c
        reply = c.request(bytes.fromhex(cmd["hex"]), deadline)
        return {"ok": True, "hex": reply.hex()}
    except sp.Timeout as e:
        drop(conns, url)
        return {"ok": False, "error": "timeout", "detail": str(e)}
    except (sp.Closed, OSError, ValueError) as e:
        drop(conns, url)
        return {"ok": False, "error": "closed", "detail": str(e)}


def drop(conns, url):
    c = conns.pop(url, None)
    if c is not None:
        c.close()


if __name__ == "__main__":
    sys.exit(main())
