"""Identity.from_env: parsing, bounds, and NotAWorker without variables."""

import pytest

import supervise
from supervise import Frame, Identity, Kind

GOOD = {
    "SUPERVISE_URL": "ipc:///tmp/x/control.sock",
    "SUPERVISE_GROUP": "web.v2_a-b",
    "SUPERVISE_ORDINAL": "3",
    "SUPERVISE_GENERATION": "18446744073709551615",
    "SUPERVISE_PURPOSE": "serve HTTP requests",
    "SUPERVISE_SUPERVISOR_ID": "abc123",
}


def test_from_env_reads_every_variable():
    me = Identity.from_env(GOOD)
    assert me.group == "web.v2_a-b"
    assert me.ordinal == 3
    assert me.generation == 2 ** 64 - 1
    assert me.kind is Kind.PROCESS
    assert me.purpose == "serve HTTP requests"
    assert me.supervisor_id == "abc123"
    assert me.context == (Frame(Kind.PROCESS, 3, "web.v2_a-b"),)
    assert me.parent is None
    # Not in the environment: unknown rather than guessed.
    assert me.pid is None and me.group_size is None
    assert me.source == "env"
    assert me.key == ("abc123", "web.v2_a-b", 3, 2 ** 64 - 1)


def test_whoami_not_live_uses_os_environ(monkeypatch):
    for k, v in GOOD.items():
        monkeypatch.setenv(k, v)
    assert supervise.whoami(live=False) == Identity.from_env(GOOD)


@pytest.mark.parametrize("missing", sorted(set(GOOD) - {"SUPERVISE_URL"}))
def test_missing_variable_is_not_a_worker(missing):
    env = dict(GOOD)
    del env[missing]
    with pytest.raises(supervise.NotAWorker) as info:
        Identity.from_env(env)
    assert info.value.code == 10
    assert missing in info.value.message


def test_outside_a_worker_both_ways_raise_not_a_worker():
    # conftest removed every SUPERVISE_* variable from this process.
    with pytest.raises(supervise.NotAWorker):
        supervise.whoami(live=False)
    with pytest.raises(supervise.NotAWorker) as info:
        supervise.whoami()
    assert "SUPERVISE_URL" in info.value.message


@pytest.mark.parametrize("name,value", [
    ("SUPERVISE_ORDINAL", "x"),
    ("SUPERVISE_ORDINAL", "-1"),
    ("SUPERVISE_ORDINAL", " 1"),
    ("SUPERVISE_ORDINAL", "4294967296"),
    ("SUPERVISE_ORDINAL", "1" * 21),
    ("SUPERVISE_GENERATION", "18446744073709551616"),
    ("SUPERVISE_GROUP", "a b"),
    ("SUPERVISE_GROUP", "g" * 65),
    ("SUPERVISE_PURPOSE", "p" * 1025),
    ("SUPERVISE_SUPERVISOR_ID", "s" * 1025),
])
def test_malformed_variable_is_invalid_argument(name, value):
    env = dict(GOOD, **{name: value})
    with pytest.raises(supervise.InvalidArgument) as info:
        Identity.from_env(env)
    assert name in info.value.message


def test_bounds_are_inclusive():
    env = dict(GOOD, SUPERVISE_ORDINAL="4294967295", SUPERVISE_GROUP="g" * 64,
               SUPERVISE_PURPOSE="p" * 1024)
    me = Identity.from_env(env)
    assert me.ordinal == 2 ** 32 - 1 and len(me.group) == 64
