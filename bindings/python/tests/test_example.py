"""examples/whoami_worker.py under supervised: one identity line per
worker in the C example's format, then a clean exit 0 on SIGTERM."""

import re

import svharness
from svharness import Group, Supervisor, wait_until

LINE = re.compile(
    r'^\[py\] I am demo\[(\d+)\] generation (\d+) pid (\d+) of 2, '
    r'purpose "show who I am", context process:demo/(\d+), parent none$',
    re.M)


def test_example_worker(daemon_path):
    sup = Supervisor(daemon_path, [Group(
        "demo", svharness.python_argv(svharness.EXAMPLE), 2,
        "show who I am")])
    with sup:
        found = wait_until(lambda: (lambda m: m if len(m) == 2 else None)(
            LINE.findall(sup.log())), 30, "two identity lines")
        assert sorted(int(m[0]) for m in found) == [0, 1]
        for ordinal, generation, pid, ctx_ordinal in found:
            assert generation == "0" and ctx_ordinal == ordinal
            assert "pid %s exited" % pid not in sup.log()
        status = sup.stop()
        log = sup.log()
    assert status == 0, log
    for ordinal, _generation, pid, _ in found:
        assert "[py] demo[%s] got SIGTERM: finishing and exiting 0" \
            % ordinal in log
        assert "pid %s exited with status 0" % pid in log, log
