"""Loads the supervise.v1 schema into Debian's python3-protobuf at run time.

Design: no generated Python code is committed (it would go stale and tie the
suite to one protobuf version). Instead the .proto is compiled to a
FileDescriptorSet by the real protobuf compiler front end, libprotoc: either
`protoc -o` or `protoc-c -o` (protoc-c is the protobuf-c code generator the
project already builds with, and it links libprotoc 3.21, so its descriptor
set is exactly what protoc would write). Messages are then built from that
descriptor with python3-protobuf's message factory. This is the robust way:
no hand-written parser of .proto syntax, no hand-written descriptor to keep
in step with the schema.

A third party without either compiler can pass a descriptor set file made
elsewhere (--descriptor).
"""

import os
import shutil
import subprocess
import tempfile

from google.protobuf import descriptor_pb2, descriptor_pool

try:
    from google.protobuf import message_factory as _mf
except ImportError:  # pragma: no cover
    _mf = None

PACKAGE = "supervise.v1"
PROTO_REL = "supervise/v1/supervise.proto"


def repo_root():
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.abspath(os.path.join(here, "..", "..", ".."))


def compile_descriptor(proto_dir, out_path):
    """Runs protoc or protoc-c to write a FileDescriptorSet to out_path."""
    for tool in ("protoc", "protoc-c"):
        exe = shutil.which(tool)
        if exe is None:
            continue
        subprocess.run(
            [exe, "-o" + out_path, "-I" + proto_dir,
             os.path.join(proto_dir, PROTO_REL)],
            check=True, timeout=60)
        return tool
    raise RuntimeError(
        "neither protoc nor protoc-c is installed; pass --descriptor FILE "
        "(a FileDescriptorSet of supervise.proto)")


class Schema:
    """The message classes of supervise.v1, by short name."""

    def __init__(self, descriptor_path=None, proto_dir=None):
        if descriptor_path is None:
            proto_dir = proto_dir or os.path.join(repo_root(), "proto")
            with tempfile.TemporaryDirectory() as tmp:
                path = os.path.join(tmp, "supervise.desc")
                compile_descriptor(proto_dir, path)
                with open(path, "rb") as f:
                    data = f.read()
        else:
            with open(descriptor_path, "rb") as f:
                data = f.read()
        fds = descriptor_pb2.FileDescriptorSet.FromString(data)
        self.pool = descriptor_pool.DescriptorPool()
        for fdp in fds.file:
            self.pool.Add(fdp)
        self.file = self.pool.FindFileByName(PROTO_REL)
        self._classes = {}
        for name in self.file.message_types_by_name:
            self._classes[name] = self._class(self.file.message_types_by_name[name])
        self.enums = {
            name: self.file.enum_types_by_name[name]
            for name in self.file.enum_types_by_name
        }

    @staticmethod
    def _class(desc):
        if hasattr(_mf, "GetMessageClass"):
            return _mf.GetMessageClass(desc)
        return _mf.MessageFactory(desc.file.pool).GetPrototype(desc)

    def message_names(self):
        """Every top-level message type of the file, in file order."""
        return [m.name for m in self.file.message_types_by_name.values()]

    def new(self, name):
        return self._classes[name]()

    def cls(self, name):
        return self._classes[name]

    def error_code_name(self, number):
        v = self.enums["ErrorCode"].values_by_number.get(number)
        return v.name if v else "ERROR_CODE_%d(unknown)" % number

    def error_code_number(self, name):
        e = self.enums["ErrorCode"]
        if not name.startswith("ERROR_CODE_"):
            name = "ERROR_CODE_" + name
        return e.values_by_name[name].number

    def state_number(self, name):
        e = self.enums["WorkerState"]
        if not name.startswith("WORKER_STATE_"):
            name = "WORKER_STATE_" + name
        return e.values_by_name[name].number
