#!/usr/bin/python3
"""sv_conformance.py — the supervise.v1 conformance runner.

Design: a plain Python 3 program (Debian's /usr/bin/python3 and
python3-protobuf) that links nothing of libsupervise: it speaks SP over
AF_UNIX itself (svconf/sp.py) and loads supervise.proto at run time
(svconf/schema.py). Role "supervisor under test": it starts the supervisor
by the user's command template once per case, plays the workers (through
sv_agent.py, which the supervisor spawns) and the administrator, and
reports TAP. Role "client under test" (--client): it plays a scripted
supervisor on an SP REP socket of its own and drives a client library
through a testee adapter (svconf/client_role.py). See conformance/README.md.

Exit status: 0 when every case ran as expected (passed, skipped, or failed
as its xfail list says), 1 when not, 2 for bad usage or a broken case file.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)

from svconf import runner, schema  # noqa: E402
from svconf.expr import CaseError  # noqa: E402


def main():
    root = os.path.abspath(os.path.join(HERE, ".."))
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--supervisor", help="command template: {config} (libconfig file), "
                   "{config_json} (neutral spec), {socket_dir}, {dir}")
    p.add_argument("--supervised", help="path of the reference daemon; gives the default "
                   "template '{supervised} --config {config} --foreground'")
    p.add_argument("--client", help="client role: adapter command template ({url}, {dir}; "
                   "without {url} the URL is the last argument)")
    p.add_argument("--control-url", default="ipc://{socket_dir}/control.sock",
                   help="control socket URL template (default %(default)s)")
    p.add_argument("--descriptor", help="FileDescriptorSet of supervise.proto "
                   "(default: compile proto/ with protoc or protoc-c)")
    p.add_argument("--proto-dir", default=os.path.join(root, "..", "proto"))
    p.add_argument("--cases", default=os.path.join(root, "cases"))
    p.add_argument("--case", action="append", default=[], help="run only ids matching this glob")
    p.add_argument("--level", default="all", choices=["required", "recommended", "all"])
    p.add_argument("--xfail", help="expected-failure list (conformance/xfail/NAME.txt)")
    p.add_argument("--timeout-multiplier", type=float,
                   default=float(os.environ.get("SV_CONFORMANCE_TIMEOUT_MULTIPLIER", "1")))
    p.add_argument("--python", default="/usr/bin/python3", help="interpreter for the worker agent")
    p.add_argument("--fail-on-skip", action="store_true",
                   help="a case skipped for a missing feature fails the run")
    p.add_argument("--list", action="store_true", help="list the selected cases and exit")
    p.add_argument("--keep", action="store_true", help="keep each case's temporary directory")
    p.add_argument("-v", "--verbose", action="store_true")
    a = p.parse_args()

    try:
        cases = runner.load_cases(a.cases)
        xfail = runner.load_xfail(a.xfail)
    except (CaseError, OSError) as e:
        sys.stderr.write("sv_conformance: %s\n" % e)
        return 2
    selected = runner.select(cases, a.case, a.level, "client" if a.client else "supervisor")
    if a.list:
        for c in selected:
            print("%s\t%s\t%s\t%s" % (c["id"], c["level"], ",".join(c["rules"]), ",".join(c["features"])))
        return 0
    opts = runner.Options()
    if a.client:
        opts.client = a.client
    elif a.supervisor:
        opts.supervisor = a.supervisor
    elif a.supervised:
        opts.supervisor = "'%s' --config {config} --foreground" % a.supervised.replace("'", "")
    else:
        sys.stderr.write("sv_conformance: give --supervisor TEMPLATE or --supervised PATH\n")
        return 2
    opts.control_url = a.control_url
    opts.multiplier = a.timeout_multiplier
    opts.verbose = a.verbose
    opts.keep = a.keep
    opts.python = a.python
    opts.fail_on_skip = a.fail_on_skip
    opts.agent = os.path.join(HERE, "sv_agent.py")
    try:
        sch = schema.Schema(a.descriptor, os.path.abspath(a.proto_dir))
    except Exception as e:
        sys.stderr.write("sv_conformance: cannot load the schema: %s\n" % e)
        return 2
    return runner.main_loop(opts, sch, selected, xfail, {c["id"] for c in cases})


if __name__ == "__main__":
    sys.exit(main())
