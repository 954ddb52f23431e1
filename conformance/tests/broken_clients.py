#!/usr/bin/python3
"""broken_clients.py — shows that the client-under-test cases catch defects.

Design: runs sv_conformance.py --client against adapters/broken/
sv_broken_client.py, once per defect, on a few client cases, and checks the
TAP output: the case that exercises the broken rule must fail naming that
rule, the cases that do not touch it must still pass (the failure is
specific), and the run must exit 1. The client without a defect ("none")
is the control: every selected case passes and the run exits 0.

Usage: broken_clients.py [--descriptor FILE]
Exit status 0 when every expectation holds; each miss is printed.
"""

import argparse
import sys

import defect_check
from defect_check import PY, ROOT
CASES = ["102-*", "103-*", "107-*", "108-*"]
ALL = ["102-client-silent-server-deadline", "103-client-late-reply-skipped",
       "107-client-stale-reply-id-skipped", "108-client-wrong-request-id"]

# defect: ({case: rule it must fail with}, cases that must pass)
PLAN = {
    "none": ({}, ALL),
    "ignore-deadline": ({"102-client-silent-server-deadline": "CLI-2"},
                        ["107-client-stale-reply-id-skipped", "108-client-wrong-request-id"]),
    "accept-other-id": ({"108-client-wrong-request-id": "CLI-6"},
                        ["102-client-silent-server-deadline", "107-client-stale-reply-id-skipped"]),
    "no-stale-skip": ({"107-client-stale-reply-id-skipped": "CLI-5"},
                      ["102-client-silent-server-deadline", "108-client-wrong-request-id"]),
}


def run(defect, a):
    adapter = "%s %s/adapters/broken/sv_broken_client.py --defect %s" % (PY, ROOT, defect)
    if a.descriptor:
        adapter += " --descriptor " + a.descriptor
    return defect_check.run(["--client", adapter], CASES, a.descriptor, 80)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--descriptor")
    a = ap.parse_args()
    return defect_check.tally((defect, *run(defect, a), must_fail, must_pass, [])
                              for defect, (must_fail, must_pass) in PLAN.items())


if __name__ == "__main__":
    sys.exit(main())
