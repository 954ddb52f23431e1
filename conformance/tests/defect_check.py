"""defect_check.py — one run of sv_conformance.py against a deliberately
broken peer, and the checks broken_builds.py and broken_clients.py make of it.

Design: a run's TAP output must show each case of must_fail failing
("not ok ... - CASE [required] FAILED RULE"), each case of must_pass
passing, each case of must_skip passing as "# SKIP", an exit status of 1
when a case must fail (else 0) and a summary as its last line. check()
lists what misses; report() prints one TAP line for the defect, the
run's failures and every miss, so a miss names its defect and case.
run() starts the suite itself (its --supervisor or --client argument
given by the caller) on the selected cases; tally() checks and reports a
series of runs and totals the misses.
"""

import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, ".."))
PY = "/usr/bin/python3"


def run(peer_args, cases, descriptor, timeout):
    """Runs sv_conformance.py PEER_ARGS [--descriptor D] --case C...;
    returns (its exit status, its output with stderr)."""
    cmd = [PY, os.path.join(ROOT, "runner", "sv_conformance.py")] + peer_args
    if descriptor:
        cmd += ["--descriptor", descriptor]
    for c in cases:
        cmd += ["--case", c]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=timeout, text=True)
    return p.returncode, p.stdout


def check(rc, out, must_fail, must_pass, must_skip=()):
    """Returns (the run's lines, a list of what misses)."""
    lines = out.splitlines()
    problems = []
    for case, rule in must_fail.items():
        want = " - %s [required] FAILED %s" % (case, rule)
        if not any(l.startswith("not ok ") and want in l for l in lines):
            problems.append("%s does not fail naming %s" % (case, rule))
    for case in must_pass:
        if not any(l.startswith("ok ") and (" - %s [" % case) in l for l in lines):
            problems.append("%s does not pass" % case)
    for case in must_skip:
        if not any(l.startswith("ok ") and (" - %s [" % case) in l and "# SKIP" in l
                   for l in lines):
            problems.append("%s is not skipped" % case)
    want_rc = 1 if must_fail else 0
    if rc != want_rc:
        problems.append("exit status %d, want %d" % (rc, want_rc))
    if not lines or not lines[-1].endswith("skipped"):
        problems.append("no summary line")
    return lines, problems


def report(defect, lines, problems):
    """Prints the defect's TAP line, the run's failures and the misses."""
    status = "ok" if not problems else "not ok"
    print("%s - defect %s: %s" % (status, defect, lines[-1] if lines else "(no output)"))
    for l in lines:
        if l.startswith("not ok") or l.startswith("#   "):
            print("#     " + l)
    for pr in problems:
        print("#   MISS: " + pr)


def tally(runs):
    """Checks and reports each (defect, rc, out, must_fail, must_pass,
    must_skip) of runs, prints the total; returns 1 on any miss, else 0."""
    defects = misses = 0
    for defect, rc, out, must_fail, must_pass, must_skip in runs:
        lines, problems = check(rc, out, must_fail, must_pass, must_skip)
        report(defect, lines, problems)
        defects += 1
        misses += len(problems)
    print("%d defects, %d misses" % (defects, misses))
    return 1 if misses else 0
