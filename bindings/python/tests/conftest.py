"""pytest configuration: finds the programs under test and the binding.

SUPERVISED (the daemon), SUPERVISECTL and SUPERVISE_LIBRARY come from the
environment (ctest sets all three); otherwise they are looked up in the
build directories build-py/ and build/ of the checkout. A missing daemon
fails the tests that need it (never a silent skip). The binding is imported
from this source tree, not from an installed copy.
"""

import os
import sys

import pytest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import svharness  # noqa: E402

sys.path.insert(0, svharness.BINDING_DIR)

_lib_path = svharness.find_program("SUPERVISE_LIBRARY", "libsupervise.so.0")
if _lib_path:
    os.environ["SUPERVISE_LIBRARY"] = os.path.abspath(_lib_path)


@pytest.fixture(scope="session")
def daemon_path():
    path = svharness.find_program("SUPERVISED", "daemon/supervised")
    if not path or not os.access(path, os.X_OK):
        pytest.fail("supervised not found: set SUPERVISED or build into "
                    "build-py/ (cmake -S . -B build-py && cmake --build "
                    "build-py)")
    return os.path.abspath(path)


@pytest.fixture(autouse=True)
def no_worker_env(monkeypatch):
    """The test process itself is never a worker."""
    for name in list(os.environ):
        if name.startswith("SUPERVISE_") and name != "SUPERVISE_LIBRARY":
            monkeypatch.delenv(name)


@pytest.fixture(autouse=True, scope="session")
def no_daemon_left():
    """After the session, every supervised a test started has exited; one
    that has not is stopped by its pid and the session fails."""
    yield
    left = [p for p in svharness.STARTED if p.poll() is None]
    for proc in left:
        proc.kill()
        proc.wait(timeout=30)
    assert not left, "supervised left running: pids %s" % [
        p.pid for p in left]
