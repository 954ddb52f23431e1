#!/usr/bin/python3
"""sv_broken_proxy.py — a deliberately broken supervisor, for testing the suite.

Design: the conformance suite must be shown to catch real defects, without
test hooks in daemon/ or libsupervise/. So the broken "supervisor" is the
real daemon behind this proxy. The runner starts the proxy as its supervisor
command; the proxy

  * starts the real supervised with the case's spec (from {config_json}) on
    an inner socket directory, each worker's argv prefixed with
    `/usr/bin/env SUPERVISE_URL=<outer URL>` (env execs: same pid), so the
    workers talk to the proxy as they would to a supervisor;
  * listens on the outer control socket (SP REP over AF_UNIX, written out
    like the runner's), limits requests to 64 KiB like nng, and forwards
    each request to the daemon on a REQ connection of its own;
  * answers WhoAmI itself, because the daemon would see the proxy's pid: the
    caller's pid comes from SO_PEERCRED, and the worker is that pid or its
    nearest ancestor among ListWorkers' pids (the rule of protocol.md
    section 6), completed with ListGroups and Hello; Ready and Heartbeat
    cannot be relayed this way, so cases using them are not run through it;
  * relays the lease requests of a worker (v1.3) through a lease session of
    its own per worker (the daemon would take the proxy for the holder):
    a worker's AcquireLease, RenewLease, ReleaseLease, ListLeases and
    ClaimLease without a session get the worker's session; when the worker
    is gone (no longer in ListWorkers, checked before each lease request),
    the proxy closes its session, which ends its leases, as the daemon's
    reap ends a worker's own;
  * then breaks one rule, chosen by --defect:
      none                 nothing (the control: every case must pass)
      ordinal-not-reused   a restarted worker's Identity.ordinal becomes
                           group_size + generation (never reused, >= N)
      generation-constant  every generation in Identity and WorkerStatus is 0
      malformed-no-reply   a request that is not an Envelope gets no reply
      lease-not-revoked    a worker's leases are not revoked when it dies
                           (its session is never closed)
      subworker-not-reclaimed  a dead worker's sub-worker numbers stay held
                           (and its next generation inherits them held)
      no-subworkers        the feature "subworkers" is not offered:
                           HelloReply.features lacks it and the requests
                           get UNKNOWN_MESSAGE (the cases needing it must
                           be skipped, not failed)
Events travel from the daemon's own event socket (HelloReply.events_url is
passed through unchanged).

On SIGTERM it stops the daemon (SIGTERM to the pid it started, wait with a
deadline, SIGKILL as a last resort) and exits.
"""

import argparse
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(HERE, "..", "runner"))

from svconf import config, schema, sp  # noqa: E402

import sv_broken_subworkers as subw  # noqa: E402  (HERE is on sys.path)

DEFECTS = ("none", "ordinal-not-reused", "generation-constant", "malformed-no-reply",
           "lease-not-revoked", "subworker-not-reclaimed", "no-subworkers")
SUBW_BODIES = ("register_sub_worker", "release_sub_worker")
LEASE_BODIES = ("acquire_lease", "renew_lease", "release_lease", "list_leases", "claim_lease")
REQUEST_MAX = 65536  # SP header included, as supervised's listener


class Proxy:
    def __init__(self, a, sch):
        self.a = a
        self.sch = sch
        self.inner_url = "ipc://%s/control.sock" % a.inner_dir
        self.lock = threading.Lock()
        self.admin = None
        self.slock = threading.Lock()
        self.sessions = {}  # worker pid -> lease session id
        self.wlock = threading.Lock()
        bounds = {g["name"]: g.get("max_subworkers", subw.DEFAULT_MAX) for g in a.groups}
        self.subw = subw.Table(bounds, reclaim=a.defect != "subworker-not-reclaimed")

    # -- talking to the real daemon ------------------------------------------
    def ask(self, body_json):
        """One request of the proxy's own to the daemon; returns Envelope."""
        from google.protobuf import json_format
        env = self.sch.new("Envelope")
        json_format.ParseDict(dict(body_json, version=1, request_id=1), env)
        with self.lock:
            deadline = time.monotonic() + 3
            if self.admin is None:
                self.admin = sp.req(self.inner_url, deadline)
            data = self.admin.request(env.SerializeToString(), deadline)
        out = self.sch.new("Envelope")
        out.ParseFromString(data)
        return out

    def whoami(self, peer_pid, request):
        """Identity of the worker peer_pid is (or descends from)."""
        reply = self.sch.new("Envelope")
        reply.version = 1
        reply.request_id = request.request_id
        workers = {w.pid: w for w in self.ask({"list_workers": {}}).worker_list.workers if w.pid}
        with self.wlock:
            self.subw.refresh({p: (w.group, w.ordinal, w.generation) for p, w in workers.items()})
            grant = self.subw.child(peer_pid)
        if grant is not None and grant[0].pid in workers:
            self.subw_identity(reply.identity, workers[grant[0].pid], grant, peer_pid)
            return reply
        pid, hops = peer_pid, 0
        while pid > 1 and pid not in workers and hops < 64:
            pid, hops = ppid(pid), hops + 1
        if pid not in workers:
            reply.error.code = self.sch.error_code_number("NOT_A_WORKER")
            reply.error.message = "pid %d is not a supervised worker" % peer_pid
            return reply
        self.fill_identity(reply.identity, workers[pid])
        return reply

    def fill_identity(self, i, w):
        """Sets Identity i to that of worker w (a WorkerStatus)."""
        groups = {g.name: g for g in self.ask({"list_groups": {}}).group_list.groups}
        hello = self.ask({"hello": {"min_version": 1, "max_version": 1}}).hello_reply
        i.group, i.ordinal, i.generation, i.pid = w.group, w.ordinal, w.generation, w.pid
        i.kind = 1
        i.purpose = w.purpose
        i.supervisor_id = hello.supervisor_id
        i.group_size = groups[w.group].count if w.group in groups else 0
        f = i.context.add()
        f.kind, f.ordinal, f.name, f.generation = 1, w.ordinal, w.group, w.generation
        if self.a.defect == "ordinal-not-reused" and i.generation > 0:
            i.ordinal = i.group_size + i.generation
            i.context[0].ordinal = i.ordinal
        if self.a.defect == "generation-constant":
            i.generation = 0

    def subw_identity(self, i, w, grant, peer_pid):
        """Sets Identity i to that of the sub-worker grant of worker w;
        peer_pid is the caller (a child's own pid)."""
        _, kind, n, subgen, label, _ = grant
        self.fill_identity(i, w)
        i.ordinal, i.generation, i.kind = n, subgen, kind
        i.pid = peer_pid if kind == subw.PROCESS else w.pid
        f = i.context.add()
        f.kind, f.ordinal, f.generation = kind, n, subgen
        f.name = label or w.group
        i.parent.CopyFrom(i.context[0])

    def subworker_request(self, peer_pid, env):
        """Serves RegisterSubWorker or ReleaseSubWorker from peer_pid."""
        reply = self.sch.new("Envelope")
        reply.version = 1
        reply.request_id = env.request_id
        kind = env.WhichOneof("body")
        if self.a.defect == "no-subworkers":
            reply.error.code = self.sch.error_code_number("UNKNOWN_MESSAGE")
            reply.error.message = "unknown request body %s" % kind
            return reply
        workers = {w.pid: w for w in self.ask({"list_workers": {}}).worker_list.workers if w.pid}
        m = getattr(env, kind)
        try:
            with self.wlock:
                self.subw.refresh({p: (w.group, w.ordinal, w.generation)
                                   for p, w in workers.items()})
                if kind == "release_sub_worker":
                    self.subw.release(peer_pid, m.kind, m.number, m.generation)
                    reply.release_sub_worker_reply.SetInParent()
                    return reply
                grant = self.subw.register(peer_pid, ppid(peer_pid), m.kind, m.label,
                                           m.number, m.has_number)
        except subw.Refused as e:
            reply.error.code = self.sch.error_code_number(e.code)
            reply.error.message = str(e)
            return reply
        body = reply.register_sub_worker_reply
        body.again = grant[5]
        self.subw_identity(body.identity, workers[grant[0].pid], grant, peer_pid)
        return reply

    def worker_of(self, peer_pid):
        """The pid of the worker peer_pid is (or descends from), or 0."""
        workers = {w.pid for w in self.ask({"list_workers": {}}).worker_list.workers if w.pid}
        pid, hops = peer_pid, 0
        while pid > 1 and pid not in workers and hops < 64:
            pid, hops = ppid(pid), hops + 1
        return pid if pid in workers else 0

    def lease_request(self, peer_pid, env):
        """Puts the calling worker's session into a lease request (after
        closing the sessions of workers that are gone); returns the bytes
        to forward."""
        kind = env.WhichOneof("body")
        with self.slock:
            if self.a.defect != "lease-not-revoked":
                live = {w.pid for w in self.ask({"list_workers": {}}).worker_list.workers
                        if w.pid}
                for wpid, sid in list(self.sessions.items()):
                    if wpid not in live:
                        self.ask({"close_session": {"id": sid}})
                        del self.sessions[wpid]
            msg = getattr(env, kind)
            if msg.session == 0:
                wpid = self.worker_of(peer_pid)
                if wpid:
                    if wpid not in self.sessions:
                        rep = self.ask({"open_session": {"ttl_ms": 86400000}})
                        self.sessions[wpid] = rep.session.id
                    msg.session = self.sessions[wpid]
        return env.SerializeToString()

    def corrupt(self, data):
        """Applies the defect to a reply the daemon gave."""
        if self.a.defect not in ("generation-constant", "no-subworkers"):
            return data
        env = self.sch.new("Envelope")
        env.ParseFromString(data)
        kind = env.WhichOneof("body")
        if kind == "hello_reply" and self.a.defect == "no-subworkers":
            feats = [f for f in env.hello_reply.features if f != "subworkers"]
            del env.hello_reply.features[:]
            env.hello_reply.features.extend(feats)
        elif self.a.defect != "generation-constant":
            return data
        elif kind == "worker_status":
            env.worker_status.generation = 0
        elif kind == "worker_list":
            for w in env.worker_list.workers:
                w.generation = 0
        else:
            return data
        return env.SerializeToString()

    # -- serving one client connection ---------------------------------------
    def serve(self, s):
        cred = s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        peer_pid = struct.unpack("3i", cred)[0]
        upstream = None
        try:
            s.sendall(sp.header(sp.REP0))
            hdr = recv_exact(s, 8)
            if hdr[:4] != b"\x00SP\x00" or struct.unpack(">H", hdr[4:6])[0] != sp.REQ0:
                return
            while True:
                h = recv_exact(s, 9)
                n = struct.unpack(">Q", h[1:])[0]
                if h[0] != 1 or n > REQUEST_MAX or n < 4:
                    return  # like nng: the connection is closed
                frame = recv_exact(s, n)
                rid, body = frame[:4], frame[4:]
                env = self.sch.new("Envelope")
                try:
                    env.ParseFromString(body)
                    decoded = True
                except Exception:
                    decoded = False
                if not decoded and self.a.defect == "malformed-no-reply":
                    continue
                if decoded and env.WhichOneof("body") == "whoami" and env.version == 1:
                    out = self.whoami(peer_pid, env).SerializeToString()
                elif decoded and env.WhichOneof("body") in SUBW_BODIES and env.version == 1:
                    out = self.subworker_request(peer_pid, env).SerializeToString()
                else:
                    if decoded and env.version == 1 and env.WhichOneof("body") in LEASE_BODIES:
                        body = self.lease_request(peer_pid, env)
                    deadline = time.monotonic() + 5
                    if upstream is None:
                        upstream = sp.req(self.inner_url, deadline)
                    out = self.corrupt(upstream.request(body, deadline))
                s.sendall(b"\x01" + struct.pack(">Q", len(out) + 4) + rid + out)
        except (OSError, sp.Closed, sp.Timeout, EOFError):
            return
        finally:
            s.close()
            if upstream is not None:
                upstream.close()


def recv_exact(s, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = s.recv(min(n - len(buf), 1 << 16))
        if not chunk:
            raise EOFError()
        buf += chunk
    return bytes(buf)


def ppid(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
        return int(stat.rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--defect", choices=DEFECTS, required=True)
    p.add_argument("--supervised", required=True)
    p.add_argument("--config-json", required=True)
    p.add_argument("--socket-dir", required=True)
    p.add_argument("--inner-dir", required=True)
    p.add_argument("--descriptor")
    a = p.parse_args()
    sch = schema.Schema(a.descriptor)

    with open(a.config_json) as f:
        spec = json.load(f)
    a.groups = [dict(g) for g in spec["groups"]]
    outer_url = "ipc://%s/control.sock" % a.socket_dir
    spec["socket_dir"] = a.inner_dir
    for g in spec["groups"]:
        g["argv"] = ["/usr/bin/env", "SUPERVISE_URL=" + outer_url] + g["argv"]
    conf = os.path.join(os.path.dirname(a.inner_dir), "inner.conf")
    with open(conf, "w") as f:
        f.write(config.to_libconfig(spec))
    daemon = subprocess.Popen([a.supervised, "--config", conf, "--foreground"])

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    os.makedirs(a.socket_dir, mode=0o700, exist_ok=True)
    path = os.path.join(a.socket_dir, "control.sock")
    ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    ls.bind(path)
    ls.listen(64)
    ls.settimeout(0.1)
    proxy = Proxy(a, sch)
    while not stop.is_set() and daemon.poll() is None:
        try:
            s, _ = ls.accept()
        except socket.timeout:
            continue
        s.settimeout(30)
        threading.Thread(target=proxy.serve, args=(s,), daemon=True).start()
    ls.close()
    if daemon.poll() is None:
        daemon.send_signal(signal.SIGTERM)
        try:
            daemon.wait(timeout=10)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait(timeout=5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
