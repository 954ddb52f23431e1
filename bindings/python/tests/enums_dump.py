"""enums_dump.py: the Python binding's view of the C enums, one fact a line.

Run by scripts/check_enums.py (ctest python.enums), which compares every
line with the public headers. Lines are tab-separated:
  error CODE C_NAME CLASS_NAME EXPLICIT TEXT  one exception class per code
  enum  C_TYPE VALUE NAME                      a member of State / Kind
  const SV_NAME VALUE                          a constant the binding uses
  lib   CODE NAME TEXT                         sv_err_name / sv_strerror
  state VALUE NAME                             sv_state_name (the library)
"""

import importlib

import supervise
from supervise import _lib, errors

# Modules by name: the package exports functions of the same names.
replies = importlib.import_module("supervise.replies")
identity = importlib.import_module("supervise.identity")
leases = importlib.import_module("supervise.leases")


def main():
    for code, cls_name, c_name, text, _extra in errors._TABLE:
        cls = supervise.error_class(code)
        explicit = int(c_name in errors._PY_NAMES)
        assert cls.__name__ == cls_name and cls.CODE == code
        print("error\t%d\t%s\t%s\t%d\t%s" % (code, c_name, cls_name,
                                            explicit, text))
    for ctype, cls in (("sv_kind", supervise.Kind),
                       ("sv_state", supervise.State)):
        for member in cls:
            print("enum\t%s\t%d\t%s" % (ctype, member.value, member.name))
    for name, value in (("SV_SERVER_ERR_MAX", errors.SERVER_ERR_MAX),
                        ("SV_WHOAMI_MAX_FRAMES", _lib.WHOAMI_MAX_FRAMES),
                        ("SV_WHOAMI_TEXT_BYTES", _lib.WHOAMI_TEXT_BYTES),
                        ("SV_LEASE_ANY_SLOT", leases.ANY_SLOT),
                        ("SV_ENV_URL", identity.ENV_URL)):
        print("const\t%s\t%s" % (name, value))
    cdll = _lib.lib()
    for code in errors.codes():
        print("lib\t%d\t%s\t%s" % (code, errors.err_name(code),
                                   errors.strerror(code)))
    for member in replies.State:
        print("state\t%d\t%s" % (member.value,
                                 _lib.text(cdll.sv_state_name(member.value))))


if __name__ == "__main__":
    main()
