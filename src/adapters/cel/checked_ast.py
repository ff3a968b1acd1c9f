"""A compiled selector's checked AST, read back from the runtime in the part we need.

cel-expr-python hands out a program's checked expression only serialized (`serialize()`: a
google.protobuf.Any holding a cel.expr.CheckedExpr), and ships no Python classes for it. This
declares the fields of cel.dev/expr@v0.24.0 proto/cel/expr/checked.proto and syntax.proto that
the literal checks read, under their field numbers and in a pool of its own; protobuf skips the
fields left out. Enums are read as plain ints, maps as their repeated entries.
"""

from typing import Any

from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool, message_factory

_FIELD = descriptor_pb2.FieldDescriptorProto
_PACKAGE = "npu_dra.checked"
_SCALARS = {
    "int64": _FIELD.TYPE_INT64,
    "int32": _FIELD.TYPE_INT32,
    "string": _FIELD.TYPE_STRING,
    "bool": _FIELD.TYPE_BOOL,
}
_INT64, _INT32, _STRING, _BOOL = _SCALARS
_ONE, _MANY = _FIELD.LABEL_OPTIONAL, _FIELD.LABEL_REPEATED
# message -> (field, number, a scalar of _SCALARS or a message's name, repeated, in the oneof)
_Field = tuple[str, int, str, bool, bool]
_MESSAGES: dict[str, tuple[_Field, ...]] = {
    "Empty": (),
    "TypeEntry": (("key", 1, _INT64, False, False), ("value", 2, "Type", False, False)),
    "CheckedExpr": (
        ("type_map", 3, "TypeEntry", True, False),
        ("expr", 4, "Expr", False, False),
        ("source_info", 5, "SourceInfo", False, False),
    ),
    "SourceInfo": (
        ("line_offsets", 3, _INT32, True, False),
        ("positions", 4, "PositionEntry", True, False),
    ),
    "PositionEntry": (("key", 1, _INT64, False, False), ("value", 2, _INT32, False, False)),
    "Expr": (
        ("id", 2, _INT64, False, False),
        ("const_expr", 3, "Constant", False, True),
        ("select_expr", 5, "Select", False, True),
        ("call_expr", 6, "Call", False, True),
        ("list_expr", 7, "CreateList", False, True),
        ("struct_expr", 8, "CreateStruct", False, True),
        ("comprehension_expr", 9, "Comprehension", False, True),
    ),
    "Constant": (("string_value", 6, _STRING, False, True),),
    "Select": (("operand", 1, "Expr", False, False),),
    "Call": (
        ("target", 1, "Expr", False, False),
        ("function", 2, _STRING, False, False),
        ("args", 3, "Expr", True, False),
    ),
    "CreateList": (
        ("elements", 1, "Expr", True, False),
        ("optional_indices", 2, _INT32, True, False),
    ),
    "CreateStruct": (
        ("message_name", 1, _STRING, False, False),
        ("entries", 2, "Entry", True, False),
    ),
    "Entry": (
        ("map_key", 3, "Expr", False, False),
        ("value", 4, "Expr", False, False),
        ("optional_entry", 5, _BOOL, False, False),
    ),
    "Comprehension": (
        ("iter_range", 2, "Expr", False, False),
        ("accu_init", 4, "Expr", False, False),
        ("loop_condition", 5, "Expr", False, False),
        ("loop_step", 6, "Expr", False, False),
        ("result", 7, "Expr", False, False),
    ),
    "Type": (
        ("dyn", 1, "Empty", False, True),
        ("null", 2, _INT32, False, True),
        ("primitive", 3, _INT32, False, True),
        ("wrapper", 4, _INT32, False, True),
        ("well_known", 5, _INT32, False, True),
        ("list_type", 6, "ListType", False, True),
        ("map_type", 7, "MapType", False, True),
        ("message_type", 9, _STRING, False, True),
        ("type_param", 10, _STRING, False, True),
        ("type", 11, "Type", False, True),
        ("error", 12, "Empty", False, True),
        ("abstract_type", 14, "AbstractType", False, True),
    ),
    "ListType": (("elem_type", 1, "Type", False, False),),
    "MapType": (("key_type", 1, "Type", False, False), ("value_type", 2, "Type", False, False)),
    "AbstractType": (
        ("name", 1, _STRING, False, False),
        ("parameter_types", 2, "Type", True, False),
    ),
}


def _pool() -> descriptor_pool.DescriptorPool:
    file = descriptor_pb2.FileDescriptorProto(
        name="npu_dra/checked.proto", package=_PACKAGE, syntax="proto3"
    )
    for name, fields in _MESSAGES.items():
        declared = file.message_type.add(name=name)
        if any(in_oneof for *_, in_oneof in fields):
            declared.oneof_decl.add(name="kind")
        for field, number, kind, repeated, in_oneof in fields:
            added = declared.field.add(name=field, number=number, label=_MANY if repeated else _ONE)
            if kind in _SCALARS:
                added.type = _SCALARS[kind]
            else:
                added.type, added.type_name = _FIELD.TYPE_MESSAGE, f".{_PACKAGE}.{kind}"
            if in_oneof:
                added.oneof_index = 0
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return pool


_POOL = _pool()
_CheckedExpr: Any = message_factory.GetMessageClass(
    _POOL.FindMessageTypeByName(f"{_PACKAGE}.CheckedExpr")
)


def checked_expr(serialized: bytes) -> Any:
    """The CheckedExpr in what `Expression.serialize()` returns."""
    envelope = any_pb2.Any.FromString(serialized)
    return _CheckedExpr.FromString(envelope.value)
