"""SP (nng scalability protocol) over AF_UNIX stream sockets, written out.

Design: the conformance runner must not link libsupervise or nng, so it
speaks the wire format itself (the format nng 1.5.2 uses on ipc://, also
described in libsupervise/src/client/transport.h and docs/protocol.md
section 1):

  connection header, each side sends 8 bytes then reads the peer's:
      00 'S' 'P' 00, protocol id (16-bit big-endian), 00 00
  every message: type byte 01, 64-bit big-endian length of the rest, then
      the SP header (REQ/REP: a 32-bit big-endian request id with the high
      bit set; PUB/SUB: none) and the body.

Every blocking call takes an absolute deadline (time.monotonic() seconds)
and every read is bounded by a size limit. This module has no protobuf
dependency, so the worker agent (sv_agent.py) can share the same framing
rules (it carries its own small copy to stay a single file).

The listener side (Listener, accepted Conn objects) serves the client-
under-test role: the runner plays a supervisor on an ipc:// REP socket of
its own, so it can answer a client with whatever bytes a case scripts.
"""

import os
import select
import socket
import struct
import time

REQ0 = 0x30
REP0 = 0x31
PUB0 = 0x20
SUB0 = 0x21
ID_BIT = 0x80000000
MAX_FRAME = 8 * 1024 * 1024  # largest frame this runner reads


class Closed(Exception):
    """The peer closed the connection (or reset it)."""


class Timeout(Exception):
    """A deadline passed."""


def header(proto):
    return b"\x00SP\x00" + struct.pack(">H", proto) + b"\x00\x00"


def url_path(url):
    if not url.startswith("ipc://"):
        raise ValueError("only ipc:// URLs are supported: %r" % url)
    return url[len("ipc://"):]


class Conn:
    """One SP connection. `proto` is ours, `peer` the one we require."""

    def __init__(self, url, proto, peer, deadline, sock=None):
        self.url = url
        self.proto = proto
        self.peer = peer
        self.sock = None
        self.next_id = (int.from_bytes(os.urandom(4), "big") | ID_BIT) & 0xFFFFFFFF
        if sock is None:
            self._connect(deadline)
        else:
            self._accept(sock, deadline)

    def _accept(self, s, deadline):
        """The server side of the SP handshake on an accepted socket."""
        self.sock = s
        try:
            s.settimeout(max(0.001, deadline - time.monotonic()))
            s.sendall(header(self.proto))
            got = self._read_exact(8, deadline)
        except (OSError, Timeout) as e:
            self.close()
            raise Closed("handshake failed: %s" % e)
        if got[:4] != b"\x00SP\x00" or got[6:] != b"\x00\x00" or \
                struct.unpack(">H", got[4:6])[0] != self.peer:
            self.close()
            raise Closed("bad SP header from peer: %s" % got.hex())

    def _connect(self, deadline):
        path = url_path(self.url)
        delay = 0.002
        while True:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.settimeout(max(0.001, deadline - time.monotonic()))
                s.connect(path)
                s.sendall(header(self.proto))
                self.sock = s
                got = self._read_exact(8, deadline)
                if got[:4] != b"\x00SP\x00" or got[6:] != b"\x00\x00":
                    raise Closed("bad SP header from peer: %s" % got.hex())
                if struct.unpack(">H", got[4:6])[0] != self.peer:
                    raise Closed("peer speaks SP protocol 0x%s" % got[4:6].hex())
                return
            except Timeout:
                s.close()
                self.sock = None
                raise
            except (Closed, OSError) as e:
                s.close()
                self.sock = None
                if time.monotonic() + delay >= deadline:
                    raise Timeout("cannot connect to %s: %s" % (self.url, e))
                time.sleep(delay)  # back-off between attempts, bounded
                delay = min(delay * 2, 0.064)

    def close(self):
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def _read_exact(self, n, deadline):
        buf = bytearray()
        while len(buf) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Timeout("read timed out")
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(min(n - len(buf), 1 << 20))
            except socket.timeout:
                raise Timeout("read timed out")
            except (ConnectionResetError, BrokenPipeError) as e:
                raise Closed(str(e))
            if not chunk:
                raise Closed("peer closed the connection")
            buf += chunk
        return bytes(buf)

    def send_frame(self, payload, deadline):
        """Sends one frame (SP header included in payload)."""
        data = b"\x01" + struct.pack(">Q", len(payload)) + payload
        try:
            self.sock.settimeout(max(0.001, deadline - time.monotonic()))
            self.sock.sendall(data)
        except socket.timeout:
            raise Timeout("send timed out")
        except (BrokenPipeError, ConnectionResetError) as e:
            raise Closed(str(e))

    def recv_frame(self, deadline, limit=MAX_FRAME):
        hdr = self._read_exact(9, deadline)
        if hdr[0] != 1:
            raise Closed("bad frame type %d" % hdr[0])
        n = struct.unpack(">Q", hdr[1:])[0]
        if n > limit:
            raise Closed("frame of %d bytes over the limit %d" % (n, limit))
        return self._read_exact(n, deadline)

    def poll_frame(self, poll_deadline, limit=MAX_FRAME, finish=5.0):
        """For reader loops that wake up often: None when no byte of a frame
        has arrived by poll_deadline; otherwise the whole frame, read within
        `finish` seconds. A short poll deadline must not cut a frame in two:
        the bytes already read would be lost and the stream would be out of
        step for ever (seen under load as a reply that never came)."""
        left = poll_deadline - time.monotonic()
        r, _, _ = select.select([self.sock], [], [], max(0.0, left))
        if not r:
            return None
        return self.recv_frame(time.monotonic() + finish, limit)

    def request(self, body, deadline):
        """REQ: sends body, returns the reply body with our request id."""
        rid = self.next_id
        self.next_id = ((self.next_id + 1) & 0x7FFFFFFF) | ID_BIT
        self.send_frame(struct.pack(">I", rid) + body, deadline)
        while True:
            frame = self.recv_frame(deadline)
            if len(frame) < 4:
                raise Closed("reply shorter than its SP header")
            if struct.unpack(">I", frame[:4])[0] == rid:
                return frame[4:]
            # a reply to a request we gave up on: skip it


class Listener:
    """A listening AF_UNIX stream socket at an ipc:// URL's path. accept()
    returns a Conn (our protocol `proto`, the peer's `peer`) after the SP
    handshake, or None when the deadline passes first."""

    def __init__(self, url, proto=REP0, peer=REQ0):
        self.url = url
        self.proto = proto
        self.peer = peer
        self.path = url_path(url)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(self.path)
        self.sock.listen(16)

    def accept(self, deadline):
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        self.sock.settimeout(left)
        try:
            s, _ = self.sock.accept()
        except (socket.timeout, OSError):
            return None
        # the handshake gets its own bound: the accept deadline is a polling
        # interval and may have all but passed by now
        return Conn(self.url, self.proto, self.peer, time.monotonic() + 5.0, sock=s)

    def close(self):
        self.sock.close()
        try:
            os.unlink(self.path)
        except OSError:
            pass


def req(url, deadline):
    return Conn(url, REQ0, REP0, deadline)


def sub(url, deadline):
    return Conn(url, SUB0, PUB0, deadline)
