"""Install test: the binding installs the Python way, offline, and works.

Design: copies bindings/python to a temporary directory (pip's in-tree build
writes build/ and *.egg-info next to the sources; the checkout stays clean),
creates ``/usr/bin/python3 -m venv --system-site-packages``, runs
``pip install --no-index --no-build-isolation`` on the copy, and then, from
a directory outside both trees, runs a smoke check with the venv's Python:
the package is imported from the venv, the library loads, errors map, and,
when SUPERVISED is given, a supervised worker running the example with the
installed package prints its identity. Every step has a deadline; the
temporary directory is removed at the end.

  usage: /usr/bin/python3 install_test.py   (env: SUPERVISE_LIBRARY,
         SUPERVISED; both set by ctest)
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import svharness  # noqa: E402

sys.path.insert(0, svharness.BINDING_DIR)  # for the harness's own Hello

SMOKE = r"""
import os, sys
import supervise
where = os.path.realpath(supervise.__file__)
assert where.startswith(os.path.realpath(sys.prefix)), where
assert supervise.library_version() == "0.1.0", supervise.library_version()
e = supervise.error_for(4, "x")
assert type(e) is supervise.NotFound and e.name == "ENOTFOUND", e
assert type(supervise.error_for(4242)) is supervise.Error
me = supervise.Identity.from_env({"SUPERVISE_GROUP": "g",
    "SUPERVISE_ORDINAL": "1", "SUPERVISE_GENERATION": "2",
    "SUPERVISE_PURPOSE": "p", "SUPERVISE_SUPERVISOR_ID": "s"})
assert me.key == ("s", "g", 1, 2), me
try:
    supervise.whoami()
except supervise.NotAWorker:
    pass
else:
    raise AssertionError("whoami outside a worker did not raise")
try:
    supervise.ready("up")
except supervise.NotAWorker:
    pass
else:
    raise AssertionError("ready outside a worker did not raise")
events_file = os.path.realpath(sys.modules["supervise.events"].__file__)
assert events_file.startswith(os.path.realpath(sys.prefix)), events_file
print("smoke ok", where)
"""


def run(argv, timeout=300, **kw):
    r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                       **kw)
    if r.returncode != 0:
        sys.stderr.write("$ %s\n%s%s" % (" ".join(argv), r.stdout, r.stderr))
        raise SystemExit("install test: %s failed with status %d"
                         % (argv[0], r.returncode))
    return r.stdout


def main():
    tmp = tempfile.mkdtemp(prefix="svpy-install-")
    try:
        src = os.path.join(tmp, "src")
        shutil.copytree(svharness.BINDING_DIR, src,
                        ignore=shutil.ignore_patterns(
                            "__pycache__", "build", "*.egg-info",
                            ".pytest_cache"))
        venv = os.path.join(tmp, "venv")
        run(["/usr/bin/python3", "-m", "venv", "--system-site-packages",
             venv])
        py = os.path.join(venv, "bin", "python")
        run([py, "-m", "pip", "install", "--no-index",
             "--no-build-isolation", "--quiet", src],
            env=dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1"))
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("SUPERVISE_") and k != "PYTHONPATH"}
        if os.environ.get("SUPERVISE_LIBRARY"):
            env["SUPERVISE_LIBRARY"] = os.path.abspath(
                os.environ["SUPERVISE_LIBRARY"])
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        print(run([py, "-c", SMOKE], timeout=60, env=env, cwd=tmp).strip())
        daemon = os.environ.get("SUPERVISED")
        if not daemon:
            print("live check skipped: SUPERVISED is not set")
            return 0
        # The example, run by the venv's Python from a directory with no
        # package beside it and without PYTHONPATH, imports the installed
        # copy (its sys.path fallback finds nothing there).
        exdir = os.path.join(tmp, "ex", "examples")
        os.makedirs(exdir)
        example = shutil.copy(os.path.join(src, "examples",
                                           "whoami_worker.py"), exdir)
        argv = [py, example]
        group_env = ["PYTHONDONTWRITEBYTECODE=1"]
        if env.get("SUPERVISE_LIBRARY"):
            group_env.append("SUPERVISE_LIBRARY=" + env["SUPERVISE_LIBRARY"])
        line = re.compile(r"^\[py\] I am smoke\[0\] generation 0 pid \d+ of "
                          r"1, .*$", re.M)
        sup = svharness.Supervisor(os.path.abspath(daemon), [
            svharness.Group("smoke", argv, 1, "install smoke test",
                            env=group_env)])
        os.environ.pop("PYTHONPATH", None)  # the daemon passes it on
        with sup:
            found = svharness.wait_until(lambda: line.search(sup.log()), 30,
                                         "the installed example's line")
            status = sup.stop()
            assert status == 0, sup.log()
        print("live ok:", found.group(0))
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
