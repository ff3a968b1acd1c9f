"""Kubernetes' rule that a list or map literal holds one type: `[1, "a"]` does not compile.

Kubernetes' base environment validates with cel.ValidateHomogeneousAggregateLiterals from 1.29
(k8s.io/apiserver@v0.34.3/pkg/cel/environment/base.go; cel-go@v0.26.0/cel/validator.go): every
element of a list literal, and every key and every value of a map literal, must have the type of
the first, except inside a `format` call (ext strings exempts its argument lists); an optional
element counts as the type it holds. The C++ runtime has no such rule, so this reads the types
the typed checker (checking.py) gave each element (checked_ast.py). `dyn` is a type like any
other there (`[1, dyn(2)]` does not compile); only where the checker types something more
loosely than cel-go (`lenient`: a `device` used whole, typed_device.py; `optional.unwrap`), an
element typed `dyn` is taken to match, as a mismatch could be a false refusal.
"""

from collections.abc import Iterator
from typing import Any

_EXEMPT = "format"
_PRIMITIVES = {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}
_WELL_KNOWN = {1: "any", 2: "timestamp", 3: "duration"}
_WRAPPERS = {number: f"wrapper({name})" for number, name in _PRIMITIVES.items()}
_SCALAR_NAMES = {"primitive": _PRIMITIVES, "wrapper": _WRAPPERS, "well_known": _WELL_KNOWN}
_WILDCARDS = frozenset({"type_param", "error", None})
_LENIENT = _WILDCARDS | {"dyn"}


def mixed_literal_error(checked: Any, *, lenient: bool = False) -> str | None:
    """Kubernetes' error for the first literal of a CheckedExpr that mixes types, or None."""
    types = {entry.key: entry.value for entry in checked.type_map}
    for literal in _literals(checked.expr):
        for first, later in _columns(literal, types):
            wildcards = _LENIENT if lenient else _WILDCARDS
            mismatch = next((t for t in later if not _equivalent(first, t, wildcards)), None)
            if mismatch is not None:
                return f"expected type '{type_name(first)}' but found '{type_name(mismatch)}'"
    return None


def _literals(root: Any) -> Iterator[Any]:
    """Every list and map literal outside a format call, in source order, without recursion."""
    pending = [root]
    while pending:
        expr = pending.pop()
        kind = expr.WhichOneof("kind")
        if kind == "call_expr" and expr.call_expr.function == _EXEMPT:
            continue
        if kind in ("list_expr", "struct_expr") and not expr.struct_expr.message_name:
            yield expr
        pending.extend(reversed(_children(expr, kind)))


def _children(expr: Any, kind: str | None) -> list[Any]:
    if kind == "select_expr":
        return [expr.select_expr.operand]
    if kind == "call_expr":
        return [expr.call_expr.target, *expr.call_expr.args]
    if kind == "list_expr":
        return list(expr.list_expr.elements)
    if kind == "struct_expr":
        return [part for entry in expr.struct_expr.entries for part in (entry.map_key, entry.value)]
    if kind == "comprehension_expr":
        loop = expr.comprehension_expr
        return [loop.iter_range, loop.accu_init, loop.loop_condition, loop.loop_step, loop.result]
    return []


def _columns(literal: Any, types: dict[int, Any]) -> Iterator[tuple[Any, list[Any]]]:
    """The element types of a list, or the key types and the value types of a map."""
    if literal.WhichOneof("kind") == "list_expr":
        optional = set(literal.list_expr.optional_indices)
        column = [
            _held(types.get(element.id), index in optional)
            for index, element in enumerate(literal.list_expr.elements)
        ]
        yield from _split(column)
        return
    entries = literal.struct_expr.entries
    yield from _split([types.get(entry.map_key.id) for entry in entries])
    yield from _split([_held(types.get(entry.value.id), entry.optional_entry) for entry in entries])


def _split(column: list[Any]) -> Iterator[tuple[Any, list[Any]]]:
    if len(column) > 1 and column[0] is not None:
        yield column[0], [type_ for type_ in column[1:] if type_ is not None]


def _held(type_: Any, optional: bool) -> Any:
    if optional and type_ is not None and type_.WhichOneof("kind") == "abstract_type":
        return type_.abstract_type.parameter_types[0]
    return type_


def _equivalent(left: Any, right: Any, wildcards: frozenset[str | None]) -> bool:
    if not wildcards.isdisjoint((left.WhichOneof("kind"), right.WhichOneof("kind"))):
        return True
    (head, parts), (other_head, other_parts) = _shape(left), _shape(right)
    return (
        head == other_head
        and len(parts) == len(other_parts)
        and all(
            _equivalent(part, other, wildcards)
            for part, other in zip(parts, other_parts, strict=True)
        )
    )


def _shape(type_: Any) -> tuple[str, list[Any]]:
    """A type as its head and its type parameters: cel-go compares types so (IsEquivalentType)."""
    kind = type_.WhichOneof("kind")
    if kind == "list_type":
        return "list", [type_.list_type.elem_type]
    if kind == "map_type":
        return "map", [type_.map_type.key_type, type_.map_type.value_type]
    if kind == "abstract_type":
        return type_.abstract_type.name, list(type_.abstract_type.parameter_types)
    if kind == "type":
        return "type", [type_.type]
    return f"{kind}:{getattr(type_, kind)}", []


def type_name(type_: Any) -> str:
    """cel-go's FormatCELType, for the types a literal or a result can have."""
    kind = type_.WhichOneof("kind")
    if kind in _SCALAR_NAMES:
        return _SCALAR_NAMES[kind].get(getattr(type_, kind), "unknown")
    if kind == "message_type":
        return str(type_.message_type)
    head, parts = _shape(type_)
    if kind in ("list_type", "map_type", "abstract_type", "type"):
        return f"{head}({', '.join(map(type_name, parts))})" if parts else head
    return "null" if kind == "null" else "dyn"
