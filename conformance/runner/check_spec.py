#!/usr/bin/python3
"""check_spec.py — keeps SPEC.md and the case files in step.

Design: SPEC.md defines each rule under a heading "### ID (LEVEL) title"
and ends its text with a line "Cases: a, b" (or "Cases: none yet"). A case
file lists its rules in "rules", and names a rule in each of its checks and
steps ("rule", "error_rule", "decode_rule", "id_rule"). This script checks:

  * every rule a case names (in "rules" or in a step) is defined in SPEC.md;
  * every rule a step names is also in that case's "rules" (REQ-1 and SPAWN-1,
    the default rules of requests and of await_workers, are implied);
  * each rule's "Cases:" line lists exactly the cases whose "rules" name it.

--print writes the correct "Cases:" line of every rule, to fix SPEC.md by
hand. Exit status 0 when all agree.
"""

import argparse
import glob
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, ".."))
RULE_KEYS = ("rule", "error_rule", "decode_rule", "id_rule")
RULE_RE = re.compile(r"^[A-Z]+-\d+$")


def spec_rules(path):
    rules, current = {}, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^### ([A-Z]+-\d+) \((MUST|SHOULD)\)", line)
            if m:
                current = m.group(1)
                if current in rules:
                    raise SystemExit("SPEC.md: %s defined twice" % current)
                rules[current] = None
                continue
            m = re.match(r"^Cases: (.*)$", line.strip())
            if m and current:
                v = m.group(1).strip()
                rules[current] = set() if v.startswith("none") else {
                    x.strip() for x in v.split(",") if x.strip()}
                current = None
    return rules


def named_rules(x, out):
    if isinstance(x, dict):
        for k, v in x.items():
            if k in RULE_KEYS and isinstance(v, str):
                out.add(v)
            else:
                named_rules(v, out)
    elif isinstance(x, list):
        for v in x:
            named_rules(v, out)
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--spec", default=os.path.join(ROOT, "SPEC.md"))
    p.add_argument("--cases", default=os.path.join(ROOT, "cases"))
    p.add_argument("--print", action="store_true")
    a = p.parse_args()
    rules = spec_rules(a.spec)
    problems = []
    by_rule = {r: set() for r in rules}
    for path in sorted(glob.glob(os.path.join(a.cases, "*.json"))):
        with open(path) as f:
            c = json.load(f)
        cid = c["id"]
        listed = set(c.get("rules", []))
        used = named_rules(c.get("steps", []), set())
        for r in sorted(listed | used):
            if RULE_RE.match(r) and r not in rules:
                problems.append("%s names %s, which SPEC.md does not define" % (cid, r))
        for r in sorted(used - listed - {"REQ-1", "SPAWN-1"}):
            if RULE_RE.match(r):
                problems.append("%s checks %s but does not list it in \"rules\"" % (cid, r))
        for r in listed:
            by_rule.setdefault(r, set()).add(cid)
    for r, cases in sorted(rules.items()):
        if cases is None:
            problems.append("SPEC.md: %s has no \"Cases:\" line" % r)
        elif cases != by_rule.get(r, set()):
            problems.append("SPEC.md: %s lists cases %s; the case files say %s" % (
                r, sorted(cases), sorted(by_rule.get(r, set()))))
    if a.print:
        for r in sorted(rules):
            cs = sorted(by_rule.get(r, set()))
            print("%s  Cases: %s" % (r, ", ".join(cs) if cs else "none yet"))
    for pr in problems:
        print("FAIL " + pr)
    print("%d rules, %d problems" % (len(rules), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
