"""What the state of one case run has in both roles.

Design: a supervisor-under-test case (runner.Context) and a client-under-
test case (client_role.ClientContext) each run in a fresh temporary
directory (/tmp/svc-XXXXXX, short enough for sun_path), keep the case's
variables for expr.py, collect notes for the TAP output and log as TAP
comments. CaseContext holds exactly that; each role's context derives from
it and adds its own processes and connections (start, stop). run is the
one way a case runs in either role: whatever goes wrong becomes a failed
result, never an exception, and stop always runs. file_tail reads the end
of a log the case wrote (a supervisor's or an adapter's) for a failure
report.
"""

import shutil
import sys
import tempfile
import traceback

from . import expr
from .expr import CaseError, CheckFailed


class CaseContext:
    """The role-independent state of one case run; the temporary directory
    is made here and removed by remove_dir (unless opts.keep)."""

    def __init__(self, opts, schema, case):
        self.opts = opts
        self.schema = schema
        self.case = case
        self.verbose = opts.verbose
        self.vars = {}
        self.notes = []
        self.dir = tempfile.mkdtemp(prefix="svc-", dir="/tmp")

    def log(self, msg):
        """Writes msg to stdout as TAP comment lines."""
        sys.stdout.write("# %s\n" % msg.replace("\n", "\n# "))
        sys.stdout.flush()

    def eval(self, x):
        """x with the case's variables substituted (expr.evaluate)."""
        return expr.evaluate(x, self.vars)

    def run(self, body):
        """Runs the case: start(), then body(), which returns (status, rule,
        message), status "pass" or "skip" (or raises). Returns (status,
        rule, message, notes), status pass|fail|skip; a broken rule
        (CheckFailed), a bad case (CaseError) or any other exception (a
        runner bug must not hide as a pass) is a "fail". stop() runs last
        in every case; the notes it adds are reported, but for a broken
        rule those of failed_notes() (taken before it)."""
        try:
            self.start()
            return body() + (self.notes,)
        except CheckFailed as e:
            return "fail", e.rule or "(unnamed)", str(e), self.failed_notes()
        except CaseError as e:
            return "fail", "(case error)", str(e), self.notes
        except Exception as e:
            return ("fail", "(runner error)",
                    "%s\n%s" % (e, traceback.format_exc()), self.notes)
        finally:
            self.stop()

    def failed_notes(self):
        """The notes reported with a broken rule: the notes themselves."""
        return self.notes

    def remove_dir(self):
        """Removes the case's temporary directory unless opts.keep."""
        if not self.opts.keep:
            shutil.rmtree(self.dir, ignore_errors=True)


def file_tail(path, n):
    """The last n bytes of the file at path as stripped text (undecodable
    bytes replaced), or "" when it cannot be read."""
    try:
        with open(path, "rb") as f:
            return f.read()[-n:].decode("utf-8", "replace").strip()
    except OSError:
        return ""
