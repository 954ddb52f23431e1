"""The runner's side of the worker agents (sv_agent.py).

Design: the runner listens on DIR/agent.sock. Every worker the supervisor
under test spawns is sv_agent.py, which connects there, introduces itself
with its pid, tag (its group, from argv) and SUPERVISE_* environment, and
then executes the runner's commands. An accept thread collects arrivals in
a pool; cases claim them by group with await_workers. A dead agent is seen
as end-of-file on its socket. Every wait has a deadline; every line read is
bounded.
"""

import json
import os
import socket
import threading
import time

LINE_MAX = 1 << 20


class AgentGone(Exception):
    """The agent's connection closed (the worker died)."""


class Agent:
    def __init__(self, sock, hello):
        self.sock = sock
        self.pid = int(hello["pid"])
        self.ppid = int(hello.get("ppid", 0))
        self.tag = hello["tag"]
        self.env = hello.get("env", {})
        self.arrived = time.monotonic()
        self.buf = b""
        self.gone = False

    def info(self):
        return {"pid": self.pid, "ppid": self.ppid, "group": self.tag,
                "env": dict(self.env)}

    def _line(self, deadline):
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("agent pid %d did not answer" % self.pid)
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                raise TimeoutError("agent pid %d did not answer" % self.pid)
            except OSError:
                chunk = b""
            if not chunk:
                self.gone = True
                raise AgentGone("agent pid %d is gone" % self.pid)
            self.buf += chunk
            if len(self.buf) > LINE_MAX:
                raise AgentGone("agent pid %d sent an overlong line" % self.pid)
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def command(self, cmd, deadline):
        try:
            self.sock.sendall((json.dumps(cmd) + "\n").encode())
        except OSError:
            self.gone = True
            raise AgentGone("agent pid %d is gone" % self.pid)
        return self._line(deadline)

    def wait_gone(self, deadline):
        """Waits until the agent's socket reports end-of-file."""
        while not self.gone:
            try:
                self._line(deadline)
            except AgentGone:
                return
        return

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class Pool:
    """Listens for agents; hands them out by group in arrival order."""

    def __init__(self, path):
        self.path = path
        self.lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.lsock.bind(path)
        self.lsock.listen(64)
        self.lsock.settimeout(0.1)
        self.cond = threading.Condition()
        self.free = []
        self.all = []
        self.stopping = False
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        while not self.stopping:
            try:
                s, _ = self.lsock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            s.settimeout(5)
            try:
                buf = b""
                while b"\n" not in buf and len(buf) < LINE_MAX:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    buf += chunk
                line, rest = buf.split(b"\n", 1)
                a = Agent(s, json.loads(line))
                a.buf = rest
            except (OSError, ValueError, KeyError):
                s.close()
                continue
            with self.cond:
                self.free.append(a)
                self.all.append(a)
                self.cond.notify_all()

    def claim(self, group, count, deadline):
        """Takes count agents of group that arrived and were not claimed."""
        got = []
        with self.cond:
            while True:
                for a in list(self.free):
                    if len(got) < count and a.tag == group:
                        self.free.remove(a)
                        got.append(a)
                if len(got) == count:
                    return got
                left = deadline - time.monotonic()
                if left <= 0:
                    self.free[:0] = got
                    raise TimeoutError(
                        "%d of %d new workers of group %r connected" %
                        (len(got), count, group))
                self.cond.wait(left)

    def unclaimed(self, group):
        with self.cond:
            return [a for a in self.free if a.tag == group]

    def close(self):
        self.stopping = True
        self.thread.join(2)
        self.lsock.close()
        with self.cond:
            for a in self.all:
                a.close()
        try:
            os.unlink(self.path)
        except OSError:
            pass
