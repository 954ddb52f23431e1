"""The small value language of case files, and checks.

Design: case files are data, so they need a way to say "the generation the
worker had before, plus one". A JSON string that starts with "$" is an
expression, and so is one that starts with "=" (the "=" is dropped, for an
expression that starts with a literal); anything else is a literal ("$$..."
and "==..." are the literals "$..." and "=...").

    expr  := term (("+" | "-") term)*
    term  := INTEGER | 'STRING' | "$" NAME ("." NAME | "[" INTEGER "]")*

Variables are plain Python values: messages are turned into dicts by
msg_to_py (every field, defaults included; a message field that is not set
is None; a oneof's chosen member is also named under "<oneof>_case", and
an enum field's value name under "<field>_name"). "+" joins strings.

A check is one object of a case's "expect" list (or of an "assert" step):

    {"field": "ordinal" | "value": EXPR,      what to look at
     "rule": "ORD-2",                         the SPEC rule it verifies
     one operator: "eq" "ne" "lt" "le" "gt" "ge" (EXPR), "in" ([EXPR...]),
                   "distinct" (true: a list without repeats),
                   "len" (EXPR), "nonempty" (true), "present" (bool),
                   "matches" (a regular expression, for strings)}

"field" is a path into the reply being checked (same syntax as after "$x").
A failed check reports its rule, so the TAP output names what broke.
"""

import re

from google.protobuf.descriptor import FieldDescriptor

_TOKEN = re.compile(r"\s*(?:'([^']*)'|(\d+)|(\$[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*|\[\d+\])*)|([+-]))")
_PATH = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]")
OPS = ("eq", "ne", "lt", "le", "gt", "ge", "in", "distinct", "len", "nonempty",
       "present", "matches")


class CaseError(Exception):
    """A case file is wrong (not the implementation under test)."""


class CheckFailed(Exception):
    """A check failed; .rule names the SPEC rule."""

    def __init__(self, rule, message):
        super().__init__(message)
        self.rule = rule


def msg_to_py(msg):
    """Every field of a protobuf message as plain Python values."""
    out = {}
    for f in msg.DESCRIPTOR.fields:
        v = getattr(msg, f.name)
        if f.label == FieldDescriptor.LABEL_REPEATED:
            if f.type == FieldDescriptor.TYPE_MESSAGE:
                out[f.name] = [msg_to_py(x) for x in v]
            else:
                out[f.name] = list(v)
        elif f.type == FieldDescriptor.TYPE_MESSAGE:
            out[f.name] = msg_to_py(v) if msg.HasField(f.name) else None
        else:
            out[f.name] = v
            if f.type == FieldDescriptor.TYPE_ENUM:
                ev = f.enum_type.values_by_number.get(v)
                out[f.name + "_name"] = ev.name if ev else "UNKNOWN(%d)" % v
    for o in msg.DESCRIPTOR.oneofs:
        out[o.name + "_case"] = msg.WhichOneof(o.name)
    return out


def get_path(value, path, what="value"):
    """Follows ".name" / "[i]" steps of path (no leading "$name")."""
    pos = 0
    while pos < len(path):
        m = _PATH.match(path, pos)
        if not m:
            raise CaseError("bad path %r" % path)
        if m.group(1) is not None:
            if not isinstance(value, dict) or m.group(1) not in value:
                raise CheckFailed(None, "%s has no field %r" % (what, m.group(1)))
            value = value[m.group(1)]
        else:
            i = int(m.group(2))
            if not isinstance(value, list) or i >= len(value):
                raise CheckFailed(None, "%s has no element [%d]" % (what, i))
            value = value[i]
        pos = m.end()
    return value


def evaluate(x, env):
    """Evaluates a case value: lists and dicts element-wise, "$..." strings."""
    if isinstance(x, list):
        return [evaluate(v, env) for v in x]
    if isinstance(x, dict):
        return {k: evaluate(v, env) for k, v in x.items()}
    if not isinstance(x, str) or not x.startswith(("$", "=")):
        return x
    if x.startswith(("$$", "==")):
        return x[1:]
    if x.startswith("="):
        x = x[1:]
    pos, total, sign, want_term = 0, None, 1, True
    while pos < len(x):
        m = _TOKEN.match(x, pos)
        if not m or m.end() == pos:
            if x[pos:].strip() == "":
                break
            raise CaseError("bad expression %r at %d" % (x, pos))
        pos = m.end()
        if want_term:
            if m.group(1) is not None:
                v = m.group(1)
            elif m.group(2) is not None:
                v = int(m.group(2))
            elif m.group(3) is not None:
                ref = m.group(3)[1:]
                name = re.match(r"[A-Za-z_][A-Za-z0-9_]*", ref).group(0)
                if name not in env:
                    raise CaseError("unknown variable $%s in %r" % (name, x))
                v = get_path(env[name], ref[len(name):], "$" + name)
            else:
                raise CaseError("bad expression %r" % x)
            if total is None:
                total = v
            elif isinstance(total, str) or isinstance(v, str):
                if sign < 0:
                    raise CaseError("cannot subtract strings in %r" % x)
                total = str(total) + str(v)
            else:
                total = total + sign * v
            want_term = False
        else:
            if m.group(4) is None:
                raise CaseError("operator expected in %r" % x)
            sign = 1 if m.group(4) == "+" else -1
            want_term = True
    if want_term:
        raise CaseError("incomplete expression %r" % x)
    return total


def run_check(check, subject, env, default_rule=None):
    """Applies one check to subject (the reply, for "field" checks)."""
    rule = check.get("rule", default_rule)
    if "field" in check:
        what = check["field"]
        try:
            got = get_path(subject, "." + what if not what.startswith("[") else what, what)
        except CheckFailed as e:
            raise CheckFailed(rule, str(e))
    elif "value" in check:
        what = check["value"]
        got = evaluate(what, env)
    else:
        raise CaseError("a check needs 'field' or 'value': %r" % check)
    ops = [k for k in check if k in OPS]
    if len(ops) != 1:
        raise CaseError("a check needs exactly one operator of %s: %r" % (OPS, check))
    op = ops[0]
    want = evaluate(check[op], env)
    ok = {
        "eq": lambda: got == want,
        "ne": lambda: got != want,
        "lt": lambda: got < want,
        "le": lambda: got <= want,
        "gt": lambda: got > want,
        "ge": lambda: got >= want,
        "in": lambda: got in want,
        "distinct": lambda: (len(set(map(repr, got))) == len(got)) == bool(want),
        "len": lambda: len(got) == want,
        "nonempty": lambda: (len(got) > 0) == bool(want),
        "present": lambda: (got is not None) == bool(want),
        "matches": lambda: re.search(want, got) is not None,
    }[op]()
    if not ok:
        note = (" (%s)" % check["why"]) if "why" in check else ""
        raise CheckFailed(rule, "%s: got %r, want %s %r%s" % (what, got, op, want, note))


def run_checks(checks, subject, env, default_rule=None):
    for c in checks or []:
        run_check(c, subject, env, default_rule)
