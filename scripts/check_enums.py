#!/usr/bin/python3
"""check_enums.py: fails when a binding's view of the C enums differs from
the public headers (ctest python.enums, ruby.enums, lua.enums).

Design: the headers are the one source (scripts/gen_enums.py parses them).
For one binding this script checks, and prints every difference it finds:

1. the protocol: the header's error codes 1..SV_SERVER_ERR_MAX are the
   ErrorCode values of proto/supervise/v1/supervise.proto, and sv_kind and
   sv_state have WorkerKind's and WorkerState's values and names;
2. the binding's generated file is what gen_enums.py makes of the headers
   today (a hand edit, or a header changed without a build, fails here);
3. the loaded binding: a dumper run in the binding's own interpreter
   (bindings/<lang>/.../enums_dump.*) prints the binding's view, one fact a
   line (error classes and their texts, enum members, the constants it
   uses, and the names the library gives each code), and every line must
   match the headers, with nothing missing and nothing extra. An error code
   without a class name chosen by the binding is a difference too.

Usage: check_enums.py LANG [INTERPRETER]   (LANG: python, ruby or lua; the
interpreter defaults to /usr/bin/python3, ruby, lua5.4). The environment
carries SUPERVISE_LIBRARY, and for Lua LUA_CPATH naming the built module.
Exit status 0 when the views agree, 1 when they differ, 2 on usage.
"""

import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_enums  # noqa: E402  (beside this script)

ROOT = gen_enums.ROOT
PROTO = os.path.join(ROOT, "proto", "supervise", "v1", "supervise.proto")
# The header's enums that mirror a protocol enum.
PROTO_ENUMS = {"sv_kind": ("WorkerKind", "WORKER_KIND_"),
               "sv_state": ("WorkerState", "WORKER_STATE_")}

DUMPERS = {
    "python": ("/usr/bin/python3", ["bindings/python/tests/enums_dump.py"],
               {"PYTHONPATH": "bindings/python",
                "PYTHONDONTWRITEBYTECODE": "1"}),
    "ruby": ("ruby", ["-I", "bindings/ruby/lib",
                      "bindings/ruby/test/support/enums_dump.rb"], {}),
    "lua": ("lua5.4", ["bindings/lua/tests/enums_dump.lua"],
            {"LUA_PATH": os.path.join(ROOT, "bindings/lua/src/?.lua") + ";;",
             # for from_env(), whose identity's kind the module names
             "SUPERVISE_URL": "ipc:///nonexistent/control.sock",
             "SUPERVISE_GROUP": "g", "SUPERVISE_ORDINAL": "0",
             "SUPERVISE_GENERATION": "0", "SUPERVISE_PURPOSE": "p",
             "SUPERVISE_SUPERVISOR_ID": "s"}),
}


def proto_enums():
    """{EnumName: [(value, NAME)]} of the .proto file."""
    with open(PROTO, encoding="utf-8") as f:
        text = re.sub(r"//[^\n]*", "", f.read())
    out = {}
    for name, body in re.findall(r"enum\s+(\w+)\s*\{(.*?)\}", text, re.S):
        out[name] = [(int(v), n) for n, v in
                     re.findall(r"(\w+)\s*=\s*(-?\d+)\s*;", body)]
    return out


def check_proto(h, diffs):
    """Appends to diffs where the header and the .proto disagree."""
    proto = proto_enums()
    server_max = h["ints"]["SV_SERVER_ERR_MAX"]
    header_codes = sorted(c for c, _n, _m in h["errors"]
                          if 1 <= c <= server_max)
    proto_codes = sorted(v for v, _n in proto.get("ErrorCode", []) if v)
    if header_codes != proto_codes:
        diffs.append("SV_ERR_MAP codes 1..%d %s != proto ErrorCode %s"
                     % (server_max, header_codes, proto_codes))
    for e in h["enums"]:
        if e.ctype not in PROTO_ENUMS:
            continue
        pname, prefix = PROTO_ENUMS[e.ctype]
        want = sorted((v, n[len(prefix):]) for v, n in proto.get(pname, []))
        have = sorted((v, n) for v, n, _d in e.rows)
        if want != have:
            diffs.append("%s %s != proto %s %s" % (e.ctype, have, pname,
                                                   want))


def expected(h, lang):
    """The lines the binding's dumper must print, as a set of tuples."""
    want = set()
    for code, name, text in h["errors"]:
        if code == 0:
            continue
        # The class name is the binding's choice: checked separately.
        want.add(("error", str(code), name, "1", text))
        want.add(("lib", str(code), name, text))
    for e in h["enums"]:
        for value, name, _doc in e.rows:
            want.add(("enum", e.ctype, str(value), name))
    if lang == "lua":
        kind = next(e for e in h["enums"] if e.ctype == "sv_kind")
        want.add(("kindname", "1",
                  next(n for v, n, _d in kind.rows if v == 1).lower()))
    if lang == "python":
        for value, name, _doc in next(e for e in h["enums"]
                                      if e.ctype == "sv_state").rows:
            want.add(("state", str(value),
                      name.lower() if value else "unknown"))
    return want


def consts(h):
    """{SV_NAME: str(value)} of every #define of the headers."""
    out = {k: str(v) for k, v in h["ints"].items()}
    out.update(h["strings"])
    return out


def check_binding(h, lang, interp, diffs):
    """Runs the binding's dumper and appends every difference to diffs."""
    default, args, env_add = DUMPERS[lang]
    env = dict(os.environ)
    env.update(env_add)
    proc = subprocess.run([interp or default] + args, cwd=ROOT, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=120, check=False)
    if proc.returncode != 0:
        diffs.append("%s dumper exited %d: %s" % (lang, proc.returncode,
                                                  proc.stderr.strip()))
        return
    got = set()
    header_consts = consts(h)
    for raw in proc.stdout.splitlines():
        row = tuple(raw.split("\t"))
        if row[0] == "const":
            if len(row) != 3 or header_consts.get(row[1]) != row[2]:
                diffs.append("%s: constant %s = %s, header: %s"
                             % (lang, row[1], row[2] if len(row) > 2 else "?",
                                header_consts.get(row[1], "(absent)")))
            continue
        if row[0] == "error":
            # error CODE C_NAME CLASS EXPLICIT TEXT -> drop the class name
            if len(row) != 6:
                diffs.append("%s: malformed line %r" % (lang, raw))
                continue
            if row[4] != "1":
                diffs.append("%s: SV_%s (%s) has no class name chosen by "
                             "the binding (it is named %s by default)"
                             % (lang, row[2], row[1], row[3]))
            row = row[:3] + ("1",) + row[5:]
        got.add(row)
    want = expected(h, lang)
    for row in sorted(want - got):
        diffs.append("%s: missing from the binding: %s"
                     % (lang, " ".join(row)))
    for row in sorted(got - want):
        diffs.append("%s: not in the headers: %s" % (lang, " ".join(row)))


def check_generated(h, lang, diffs):
    """Appends a difference when the checked-in generated file is stale."""
    path = os.path.join(ROOT, gen_enums.OUTPUTS[lang])
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        text = ""
    if text != gen_enums.RENDER[lang](h):
        diffs.append("%s differs from what the headers give (run "
                     "/usr/bin/python3 scripts/gen_enums.py --check to see "
                     "how, --write to regenerate)" % gen_enums.OUTPUTS[lang])


def main(argv):
    """Runs the checks for one binding; returns the exit status."""
    if not argv or argv[0] not in DUMPERS or len(argv) > 2:
        sys.stderr.write(__doc__)
        return 2
    lang = argv[0]
    h = gen_enums.parse()
    diffs = []
    check_proto(h, diffs)
    check_generated(h, lang, diffs)
    check_binding(h, lang, argv[1] if len(argv) > 1 else None, diffs)
    for d in diffs:
        print("check_enums: " + d)
    if diffs:
        print("check_enums: %s: %d difference(s) from "
              "libsupervise/include/supervise/*.h" % (lang, len(diffs)))
        return 1
    print("check_enums: %s agrees with the headers (%d error codes, %s)"
          % (lang, len(h["errors"]) - 1,
             ", ".join("%s: %d" % (e.ctype, len(e.rows))
                       for e in h["enums"])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
