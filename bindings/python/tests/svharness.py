"""Test fixture: a real supervised with a temporary config and socket_dir.

Design: each Supervisor writes a libconfig file (docs/config.md) into its own
temporary directory under /tmp (short, so the ipc:// path stays far below
the 107-byte sun_path limit), starts ``supervised --foreground`` with its
stdout and stderr (and so its workers' output) going to a log file, and
waits until the control socket answers Hello, bounded by a deadline. stop()
sends SIGTERM to that one pid and waits for it with a deadline; only if it
does not exit in time does it get SIGKILL, and the test fails. Nothing else
is ever signalled.

Workers are Python scripts run by this same interpreter with the binding on
PYTHONPATH and the library under test in SUPERVISE_LIBRARY. Waiting for
something a worker writes (a file, a log line) polls with a deadline:
there is no change notification to wait on.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BINDING_DIR = os.path.dirname(HERE)
REPO_ROOT = os.path.dirname(os.path.dirname(BINDING_DIR))
PROBE = os.path.join(HERE, "probe.py")
EXAMPLE = os.path.join(BINDING_DIR, "examples", "whoami_worker.py")
BUILD_DIRS = ("build-py", "build")
SETPRIV = "/usr/bin/setpriv"
# Every daemon process started here (conftest checks that all have exited).
STARTED = []


def find_program(env_name, relpath):
    """Path from $env_name, else the first build dir holding relpath."""
    path = os.environ.get(env_name)
    if path:
        return path
    for build in BUILD_DIRS:
        candidate = os.path.join(REPO_ROOT, build, relpath)
        if os.path.exists(candidate):
            return candidate
    return None


def wait_until(predicate, timeout, what):
    """Polls predicate() until it returns a true value or timeout passes."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError("timed out after %.1f s waiting for %s"
                                 % (timeout, what))
        time.sleep(0.02)


def _quote(text):
    """A libconfig string literal."""
    return '"%s"' % text.replace("\\", "\\\\").replace('"', '\\"')


def worker_env():
    """Environment entries for Python workers using this source tree's
    binding and the library under test (only the six variables the daemon
    sets itself are reserved, so SUPERVISE_LIBRARY may be given here)."""
    env = ["PYTHONPATH=" + BINDING_DIR, "PYTHONDONTWRITEBYTECODE=1"]
    lib = os.environ.get("SUPERVISE_LIBRARY")
    if lib:
        env.append("SUPERVISE_LIBRARY=" + lib)
    return env


def python_argv(script, *args):
    """argv of a Python worker run by this interpreter."""
    return [sys.executable, script] + list(args)


def _value(value):
    """A libconfig scalar: bool, int or string."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return _quote(value)


class Group:
    """One group of the config: name, argv, count, purpose, env entries
    (default: worker_env(), the binding from this source tree), and other
    keys of docs/config.md in options ({"ready": True, "watchdog_ms": 500})."""

    def __init__(self, name, argv, count, purpose, env=None, options=None):
        self.name = name
        self.argv = argv
        self.count = count
        self.purpose = purpose
        self.env = worker_env() if env is None else env
        self.options = dict(options or {})

    def render(self):
        extra = "".join("    %s = %s;\n" % (k, _value(v))
                        for k, v in sorted(self.options.items()))
        return ("  {\n    name = %s;\n    argv = [ %s ];\n    count = %d;\n"
                "    purpose = %s;\n    env = [ %s ];\n"
                "    stop_timeout_ms = 3000;\n%s  }" % (
                    _quote(self.name),
                    ", ".join(_quote(a) for a in self.argv), self.count,
                    _quote(self.purpose),
                    ", ".join(_quote(e) for e in self.env), extra))


class Supervisor:
    """A supervised of our own; use as a context manager."""

    def __init__(self, daemon, groups, top=""):
        self.daemon = daemon
        self.groups = groups
        # More top-level config text ("pools = ( ... );"), may use {dir}.
        self.top = top
        self.dir = tempfile.mkdtemp(prefix="svpy-")
        self.socket_dir = os.path.join(self.dir, "s")
        self.out = os.path.join(self.dir, "out")
        os.mkdir(self.out)
        self.url = "ipc://%s/control.sock" % self.socket_dir
        self.config = os.path.join(self.dir, "test.conf")
        self.log_path = os.path.join(self.dir, "supervised.log")
        self.proc = None

    def __enter__(self):
        if self.proc is None:
            self.start()
        return self

    def __exit__(self, exc_type, *rest):
        try:
            self.stop()
        finally:
            if exc_type is not None:
                sys.stderr.write("---- supervised log ----\n%s\n" % self.log())
            shutil.rmtree(self.dir, ignore_errors=True)

    def start(self, timeout=10.0):
        """Writes the config, starts the daemon, waits for its Hello."""
        if self.proc is not None:
            raise AssertionError("this Supervisor was started already")
        with open(self.config, "w") as f:
            f.write("socket_dir = %s;\nstop_timeout_ms = 3000;\n%s\n"
                    "groups = (\n%s\n);\n" % (
                        _quote(self.socket_dir),
                        self.top.replace("{dir}", self.dir),
                        ",\n".join(g.render() for g in self.groups)))
        argv = [self.daemon, "--config", self.config, "--foreground"]
        if os.access(SETPRIV, os.X_OK):
            # If this test process dies (a ctest timeout kills it), the
            # daemon gets SIGTERM instead of living on as an orphan.
            argv = [SETPRIV, "--pdeathsig", "TERM"] + argv
        log = open(self.log_path, "wb")
        try:
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT)
        finally:
            log.close()
        STARTED.append(self.proc)
        import supervise
        deadline = time.monotonic() + timeout
        client = supervise.Client(self.url, timeout=0.2)
        try:
            while True:
                try:
                    self.hello = client.hello()
                    # The daemon that answered must be ours, not another
                    # one on the same socket.
                    if self._pidfile() == self.proc.pid:
                        return
                except supervise.Error:
                    if self.proc.poll() is not None or \
                            time.monotonic() >= deadline:
                        break
        finally:
            client.close()
        status = self.stop()
        raise AssertionError("supervised (exit status %s) did not answer "
                             "Hello:\n%s" % (status, self.log()))

    def _pidfile(self):
        """The pid in socket_dir/supervised.pid, or None."""
        try:
            with open(os.path.join(self.socket_dir, "supervised.pid")) as f:
                return int(f.read().strip() or 0)
        except (OSError, ValueError):
            return None

    def stop(self, timeout=15.0):
        """SIGTERM, wait with a deadline; returns the exit status."""
        if self.proc is None or self.proc.returncode is not None:
            return None if self.proc is None else self.proc.returncode
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=timeout)
            raise AssertionError("supervised did not exit within %.0f s of "
                                 "SIGTERM" % timeout)

    def log(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def reports(self):
        """The JSON reports probe workers wrote, keyed by (ordinal, gen)."""
        found = {}
        for name in os.listdir(self.out):
            if name.startswith("id-") and name.endswith(".json"):
                with open(os.path.join(self.out, name)) as f:
                    data = json.load(f)
                found[(data["live"]["ordinal"],
                       data["live"]["generation"])] = data
        return found

    def wait_reports(self, keys, timeout=15.0):
        """Waits until a report exists for every (ordinal, generation)."""
        keys = set(keys)
        return wait_until(lambda: (lambda r: r if keys <= set(r) else None)(
            self.reports()), timeout, "worker reports %s" % sorted(keys))
