#!/usr/bin/python3
"""broken_builds.py — shows that the conformance suite catches real defects.

Design: runs sv_conformance.py against the reference daemon behind
broken/sv_broken_proxy.py, once per defect, on a few cases, and checks the
TAP output: the case that exercises the broken rule must fail naming that
rule, a case that does not touch it must still pass (the failure is
specific), and the run must exit 1. A supervisor lacking a feature
("no-subworkers") must have the cases needing it skipped, not failed, and
its run exits 0. The proxy without a defect ("none") is
the control: every selected case passes and the run exits 0, so the
failures come from the defects and not from the proxy.

Usage: broken_builds.py --supervised PATH [--descriptor FILE]
Exit status 0 when every expectation holds; each miss is printed.
"""

import argparse
import sys

import defect_check
from defect_check import PY, ROOT

# defect: (cases to run, {case: rule it must fail with}, cases that must pass
#          [, cases that must be skipped])
PLAN = {
    "none": (["001-*", "003-*", "008-*", "009-*", "010-*", "200-*", "201-*", "220-*",
              "224-*", "226-*"], {},
             ["001-hello-negotiates-v1", "003-malformed-bytes-get-bad-request",
              "008-identity-from-worker", "009-ordinal-reused-after-kill",
              "010-generations-strictly-grow", "200-lease-revoked-when-holder-dies",
              "201-lease-only-holder-renews-releases", "220-subworker-thread-frames",
              "224-subworker-reclaimed-when-worker-dies",
              "226-subworker-feature-declared"]),
    "ordinal-not-reused": (["008-*", "009-*"],
                           {"009-ordinal-reused-after-kill": "ORD-2"},
                           ["008-identity-from-worker"]),
    "generation-constant": (["008-*", "010-*"],
                            {"010-generations-strictly-grow": "GEN-2"},
                            ["008-identity-from-worker"]),
    "malformed-no-reply": (["001-*", "003-*"],
                           {"003-malformed-bytes-get-bad-request": "ERR-1"},
                           ["001-hello-negotiates-v1"]),
    "lease-not-revoked": (["200-*", "201-*"],
                          {"200-lease-revoked-when-holder-dies": "LEASE-1"},
                          ["201-lease-only-holder-renews-releases"]),
    "subworker-not-reclaimed": (["220-*", "224-*"],
                                {"224-subworker-reclaimed-when-worker-dies": "SUBW-7"},
                                ["220-subworker-thread-frames"]),
    "no-subworkers": (["220-*", "224-*", "226-*"], {},
                      ["226-subworker-feature-declared"],
                      ["220-subworker-thread-frames",
                       "224-subworker-reclaimed-when-worker-dies"]),
}


def run(defect, cases, a):
    template = ("%s %s/broken/sv_broken_proxy.py --defect %s --supervised %s "
                "--config-json {config_json} --socket-dir {socket_dir} "
                "--inner-dir {dir}/inner" % (PY, ROOT, defect, a.supervised))
    if a.descriptor:
        template += " --descriptor " + a.descriptor
    return defect_check.run(["--supervisor", template], cases, a.descriptor, 120)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--supervised", required=True)
    ap.add_argument("--descriptor")
    a = ap.parse_args()

    def runs():
        for defect, plan in PLAN.items():
            cases, must_fail, must_pass = plan[:3]
            must_skip = plan[3] if len(plan) > 3 else []
            rc, out = run(defect, cases, a)
            yield defect, rc, out, must_fail, must_pass, must_skip

    return defect_check.tally(runs())


if __name__ == "__main__":
    sys.exit(main())
