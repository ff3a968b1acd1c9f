"""How quantities and versions travel through the C++ CEL runtime (cel-expr-python).

cel-expr-python cannot carry an opaque Python object (its abstract types are unimplemented), so
quantities and versions travel as protobuf messages, `kubernetes.Quantity` and
`kubernetes.Semver`, declared at runtime in a private descriptor pool. A Quantity message holds
its exact value as the text of a reduced Fraction ("17179869184", "3/2"); a Semver message holds
exactly the parts Kubernetes compares. Either way CEL's field-wise message equality is value
equality, and no comparison ever goes through a float.
"""

import functools
from fractions import Fraction
from typing import Any

from cel_expr_python import cel
from google.protobuf import descriptor_pb2, descriptor_pool, message, message_factory

from npu_dra.adapters.cel.semver import Semver, parse_semver
from npu_dra.domain.attributes import AttributeValue, Version
from npu_dra.domain.quantity import Quantity

_FIELD = descriptor_pb2.FieldDescriptorProto
_FIELDS = {
    "Quantity": (("value", _FIELD.TYPE_STRING),),
    "Semver": (
        ("major", _FIELD.TYPE_UINT64),
        ("minor", _FIELD.TYPE_UINT64),
        ("patch", _FIELD.TYPE_UINT64),
        ("prerelease", _FIELD.TYPE_STRING),
    ),
}


def _pool() -> descriptor_pool.DescriptorPool:
    file = descriptor_pb2.FileDescriptorProto(
        name="npu_dra/cel_values.proto", package="kubernetes", syntax="proto3"
    )
    for name, fields in _FIELDS.items():
        declared = file.message_type.add(name=name)
        for number, (field, kind) in enumerate(fields, 1):
            declared.field.add(name=field, number=number, type=kind, label=_FIELD.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return pool


POOL = _pool()
QUANTITY = cel.Type("kubernetes.Quantity")
SEMVER = cel.Type("kubernetes.Semver")
_QuantityMessage: Any = message_factory.GetMessageClass(
    POOL.FindMessageTypeByName("kubernetes.Quantity")
)
_SemverMessage: Any = message_factory.GetMessageClass(
    POOL.FindMessageTypeByName("kubernetes.Semver")
)


# The caches below hold messages that nothing mutates: the runtime copies what it is given.
@functools.lru_cache(maxsize=4096)
def quantity_value(value: Fraction) -> message.Message:
    return _QuantityMessage(value=str(value))  # type: ignore[no-any-return]


@functools.lru_cache(maxsize=4096)
def semver_value(version: Semver) -> message.Message:
    return _SemverMessage(  # type: ignore[no-any-return]
        major=version.major,
        minor=version.minor,
        patch=version.patch,
        prerelease=version.prerelease,
    )


@functools.lru_cache(maxsize=4096)
def _version_value(version: Version) -> message.Message:
    return semver_value(parse_semver(version.text))


@functools.lru_cache(maxsize=4096)
def _fraction(text: str) -> Fraction:
    return Fraction(text)


def to_cel(value: Quantity | Semver | AttributeValue) -> object:
    """The CEL form of an attribute, capacity or function result."""
    if isinstance(value, Quantity):
        return quantity_value(value.value)
    if isinstance(value, Semver):
        return semver_value(value)
    if isinstance(value, Version):
        return _version_value(value)
    return value


def from_cel(value: object) -> object:
    """The Python form of a function argument: messages back to Quantity or Semver."""
    if isinstance(value, _QuantityMessage):
        return Quantity(_fraction(value.value))
    if isinstance(value, _SemverMessage):
        return Semver(value.major, value.minor, value.patch, value.prerelease)
    return value
