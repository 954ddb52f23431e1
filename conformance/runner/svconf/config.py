"""Renders a case's supervisor spec for the supervisor under test.

Design: a case describes the supervisor it needs in a neutral JSON form (the
"supervisor" object of the case file), close to docs/config.md and to
GroupSpec of the protocol:

  {"stop_timeout_ms": 1000, "strategy": "one_for_one",
   "groups": [{"name": "g", "count": 2, "purpose": "...",
               "max_count": 4, "ready": true, "restart": "permanent",
               "max_subworkers": 8,
               "options": {"min_uptime_ms": 0}}]}

The runner completes it (socket_dir, each group's argv: the worker agent)
and writes two files into the case's directory:
  supervisor.json  the completed neutral spec, for third-party supervisors
                   (their command template uses {config_json} and converts);
  supervised.conf  the same in libconfig syntax for the reference daemon
                   ({config}).
Keys a supervisor does not know are a configuration error for supervised, so
cases use only the documented keys.
"""

import json

TOP_KEYS = ("stop_timeout_ms", "strategy")
GROUP_KEYS = ("name", "argv", "count", "purpose", "env", "cwd", "max_count",
              "restart", "ready", "max_subworkers")


def complete(spec, socket_dir, agent_argv):
    """Returns the neutral spec with socket_dir and every group's argv set.

    agent_argv(group_name) gives the argv of a worker of that group.
    """
    out = {"socket_dir": socket_dir}
    for k in TOP_KEYS:
        if k in spec:
            out[k] = spec[k]
    out.setdefault("stop_timeout_ms", 1000)
    groups = []
    for g in spec.get("groups", []):
        g2 = dict(g)
        g2.setdefault("argv", agent_argv(g["name"]))
        groups.append(g2)
    out["groups"] = groups
    return out


def _value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        return "[ " + ", ".join(_value(x) for x in v) + " ]"
    raise ValueError("cannot render %r in libconfig" % (v,))


def to_libconfig(full):
    """The completed spec in supervised's libconfig syntax (docs/config.md)."""
    lines = ["# written by the conformance runner", ""]
    lines.append("socket_dir = %s;" % _value(full["socket_dir"]))
    for k in TOP_KEYS:
        if k in full:
            lines.append("%s = %s;" % (k, _value(full[k])))
    lines.append("groups = (")
    parts = []
    for g in full["groups"]:
        body = []
        for k in GROUP_KEYS:
            if k in g:
                body.append("    %s = %s;" % (k, _value(g[k])))
        for k, v in sorted(g.get("options", {}).items()):
            body.append("    %s = %s;" % (k, _value(v)))
        parts.append("  {\n" + "\n".join(body) + "\n  }")
    lines.append(",\n".join(parts))
    lines.append(");")
    return "\n".join(lines) + "\n"


def write(full, json_path, conf_path):
    with open(json_path, "w") as f:
        json.dump(full, f, indent=2, sort_keys=True)
        f.write("\n")
    with open(conf_path, "w") as f:
        f.write(to_libconfig(full))
