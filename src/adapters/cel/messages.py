"""The protobuf messages our own CEL types travel as in the C++ runtime (cel-expr-python).

cel-expr-python cannot carry an opaque Python object (its abstract types are unimplemented), so
every Kubernetes library type is a message in a private descriptor pool, named as Kubernetes names
the type, so a type error reads the same: `kubernetes.Quantity`, `kubernetes.Semver`,
`kubernetes.URL`, `net.IP` and `net.CIDR`. Each holds exactly what Kubernetes compares, so CEL's
field-wise message equality is Kubernetes' equality. `npu_dra.cel.AnyElement` is never built: a
list of it is the parameter of the one implementation that the lists library's typed overloads
share (see declarations/lists.py).
"""

from typing import Any

from cel_expr_python import cel
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_FIELD = descriptor_pb2.FieldDescriptorProto
_STRING, _UINT = _FIELD.TYPE_STRING, _FIELD.TYPE_UINT64
# package -> message -> fields, in field-number order
_PACKAGES: dict[str, dict[str, tuple[tuple[str, int], ...]]] = {
    "kubernetes": {
        "Quantity": (("value", _STRING),),
        "Semver": (("major", _UINT), ("minor", _UINT), ("patch", _UINT), ("prerelease", _STRING)),
        # Kubernetes equates URLs by their String(), held in `text`; the getters read the rest.
        "URL": (
            ("text", _STRING),
            ("scheme", _STRING),
            ("host", _STRING),
            ("escaped_path", _STRING),
            ("raw_query", _STRING),
        ),
    },
    "net": {"IP": (("address", _STRING),), "CIDR": (("address", _STRING), ("bits", _UINT))},
    "npu_dra.cel": {"AnyElement": ()},
}


def message_files() -> list[descriptor_pb2.FileDescriptorProto]:
    """The files declaring our messages, one per package (typed_device.py adds them to its pool)."""
    files = []
    for package, messages in _PACKAGES.items():
        file = descriptor_pb2.FileDescriptorProto(
            name=f"npu_dra/cel/{package}.proto", package=package, syntax="proto3"
        )
        for name, fields in messages.items():
            declared = file.message_type.add(name=name)
            for number, (field, kind) in enumerate(fields, 1):
                declared.field.add(
                    name=field, number=number, type=kind, label=_FIELD.LABEL_OPTIONAL
                )
        files.append(file)
    return files


def _pool() -> descriptor_pool.DescriptorPool:
    pool = descriptor_pool.DescriptorPool()
    for file in message_files():
        pool.Add(file)
    return pool


POOL = _pool()


def _message_class(name: str) -> Any:
    return message_factory.GetMessageClass(POOL.FindMessageTypeByName(name))


QUANTITY, QuantityMessage = cel.Type("kubernetes.Quantity"), _message_class("kubernetes.Quantity")
SEMVER, SemverMessage = cel.Type("kubernetes.Semver"), _message_class("kubernetes.Semver")
URL, UrlMessage = cel.Type("kubernetes.URL"), _message_class("kubernetes.URL")
IP, IpMessage = cel.Type("net.IP"), _message_class("net.IP")
CIDR, CidrMessage = cel.Type("net.CIDR"), _message_class("net.CIDR")
ANY_ELEMENT = cel.Type("npu_dra.cel.AnyElement")
