"""Error classes: the table matches the library, codes map to classes,
unknown codes keep their number, and a missing library is one clear error."""

import os
import pickle
import subprocess
import sys

import pytest

import supervise
from supervise import _lib, errors

import svharness


def c_name(code):
    return _lib.text(_lib.lib().sv_err_name(code))


def test_table_matches_library():
    # Every code the C library names has a class here, with the same name
    # and text; a code appended to SV_ERR_MAP without a class fails here.
    known = [code for code in range(1, 1100) if c_name(code) != "UNKNOWN"]
    assert known == list(errors.codes())
    for code, _cls, name, text, _extra in errors._TABLE:
        assert c_name(code) == name
        assert _lib.text(_lib.lib().sv_strerror(code)) == text


@pytest.mark.parametrize("code", errors.codes())
def test_each_code_has_its_class(code):
    e = supervise.error_for(code, "detail")
    assert type(e) is supervise.error_class(code)
    assert type(e) is not supervise.Error
    assert isinstance(e, supervise.Error)
    assert e.code == code
    assert e.name == c_name(code)
    assert e.message == "detail"
    assert str(e) == "%s: %s: detail" % (e.name, errors.strerror(code))
    assert type(e).__name__ in supervise.__all__
    assert getattr(supervise, type(e).__name__) is type(e)
    # Raised and caught by the base class, and survives pickling.
    with pytest.raises(supervise.Error) as info:
        raise e
    assert info.value is e
    again = pickle.loads(pickle.dumps(e))
    assert type(again) is type(e) and again.code == code
    assert again.message == "detail"


def test_names_used_by_the_docs():
    assert supervise.NotFound.CODE == 4
    assert supervise.NotAWorker.CODE == 10
    assert supervise.Timeout.CODE == 102
    assert issubclass(supervise.Timeout, TimeoutError)
    assert issubclass(supervise.InvalidArgument, ValueError)
    assert issubclass(supervise.ConnectError, ConnectionError)
    assert issubclass(supervise.ConnectionClosed, ConnectionError)


def test_unknown_code_maps_to_base_class_keeping_number():
    e = supervise.error_for(4242, "from a newer supervisor")
    assert type(e) is supervise.Error
    assert e.code == 4242
    assert e.name == "UNKNOWN"
    assert e.message == "from a newer supervisor"
    assert "4242" not in e.name and str(e).startswith("UNKNOWN:")
    assert pickle.loads(pickle.dumps(e)).code == 4242
    assert supervise.error_class(4242) is supervise.Error
    assert supervise.error_class(-1) is supervise.Error


def run_py(code, env):
    return subprocess.run([sys.executable, "-c", code], env=env,
                          capture_output=True, text=True, timeout=60)


def test_missing_library_is_one_clear_error():
    env = dict(os.environ, PYTHONPATH=svharness.BINDING_DIR,
               SUPERVISE_LIBRARY="/nonexistent/libsupervise.so.0",
               SUPERVISE_GROUP="web", SUPERVISE_ORDINAL="2",
               SUPERVISE_GENERATION="5", SUPERVISE_PURPOSE="p",
               SUPERVISE_SUPERVISOR_ID="sid")
    # Caught: the message names both ways to find the library.
    r = run_py(
        "import supervise\n"  # import needs no library
        "print(2)\n"
        "try:\n"
        # from_env is the C library's sv_identity_from_env: it needs it.
        "    supervise.whoami(live=False)\n"
        "except supervise.LibraryNotFound as e:\n"
        "    assert isinstance(e, ImportError)\n"
        "    print('caught', e)\n", env)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "2"
    assert lines[1].startswith("caught ")
    assert "SUPERVISE_LIBRARY=/nonexistent/libsupervise.so.0" in lines[1]
    assert "libsupervise.so.0" in lines[1].split("Either", 1)[1]
    # Uncaught: one exception, no chained ctypes OSError traceback.
    r = run_py("import supervise; supervise.hello()", env)
    assert r.returncode == 1
    assert "During handling" not in r.stderr
    assert r.stderr.count("Traceback") == 1
    assert r.stderr.strip().splitlines()[-1].startswith(
        "supervise.LibraryNotFound: cannot load libsupervise")


def test_missing_soname_names_both_ways():
    # Without SUPERVISE_LIBRARY the soname is used; point the loader at an
    # empty directory only when the soname is not installed system-wide.
    env = dict(os.environ, PYTHONPATH=svharness.BINDING_DIR)
    env.pop("SUPERVISE_LIBRARY", None)
    r = run_py("import supervise\n"
               "try:\n"
               "    print('loaded', supervise.library_version())\n"
               "except supervise.LibraryNotFound as e:\n"
               "    print('missing', e)\n", env)
    assert r.returncode == 0, r.stderr
    if r.stdout.startswith("loaded"):
        pytest.skip("libsupervise.so.0 is installed on this machine")
    assert "libsupervise.so.0" in r.stdout
    assert "SUPERVISE_LIBRARY" in r.stdout


def test_refusals_and_local_failures():
    assert supervise.NotFound().from_supervisor
    assert supervise.Conflict().from_supervisor
    assert not supervise.Timeout().from_supervisor
    # A refusal code from a newer supervisor: still a refusal, base class.
    e = supervise.error_for(42, "new refusal")
    assert type(e) is supervise.Error and e.code == 42 and e.from_supervisor
    assert not supervise.error_for(4242).from_supervisor
