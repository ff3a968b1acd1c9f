"""ext strings' compile-time check of `format` calls, which the C++ runtime makes only when run.

cel-go@v0.26.0 ext/strings.go adds, from strings version 1, stringFormatValidator
(ext/formatting.go): a call whose format is a string literal and whose arguments are a list
literal must parse (`%q`: "could not parse formatting clause: unrecognized formatting clause
"q""), have an argument for each clause ("index 1 out of range"), none left over ("too many
arguments supplied to string.format (expected 1, got 2)"), and give each clause a type it takes
("error during formatting: decimal clause can only be used on integers, was given string"),
reported at the offending argument. Only `dyn` passes unchecked: an attribute value, typed
`google.protobuf.Any`, fails every clause.
"""

from typing import Any

from npu_dra.adapters.cel.positions import issue

_DURING = "error during formatting: "
# clause -> (what cel-go's error calls it, the type names it takes)
_CLAUSES: dict[str, tuple[str, frozenset[str]]] = {
    "d": ("decimal clause can only be used on integers", frozenset({"int", "uint"})),
    "o": ("octal clause can only be used on integers", frozenset({"int", "uint"})),
    "f": ("fixed-point clause can only be used on doubles", frozenset({"double", "string"})),
    "e": ("scientific clause can only be used on doubles", frozenset({"double", "string"})),
    "b": ("only integers and bools can be formatted as binary", frozenset({"int", "uint", "bool"})),
    "x": (
        "only integers, byte buffers, and strings can be formatted as hex",
        frozenset({"int", "uint", "string", "bytes"}),
    ),
}
_CLAUSES["X"] = _CLAUSES["x"]
_STRING_CLAUSE = (
    "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, "
    "durations, and timestamps"
)
_PRINTABLE = frozenset(
    {"list", "map", "int", "uint", "double", "bool", "string", "bytes", "type", "null_type"}
    | {"google.protobuf.Timestamp", "google.protobuf.Duration"}
)
_NAMES = {"list_type": "list", "map_type": "map", "null": "null_type", "type": "type"}
_PRIMITIVES = {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}
_WELL_KNOWN = {
    1: "google.protobuf.Any",
    2: "google.protobuf.Timestamp",
    3: "google.protobuf.Duration",
}


def format_call_error(checked: Any, expression: str) -> str | None:
    """The API server's error for the first `format` call it would refuse, or None."""
    types = {entry.key: entry.value for entry in checked.type_map}
    for call_id, text, arguments in _calls(checked.expr):
        failure = _check(text, arguments, types)
        if failure is not None:
            at, message = failure
            return issue(checked.source_info, expression, at or call_id, message)
    return None


def _calls(root: Any) -> list[tuple[int, str, list[Any]]]:
    found, pending = [], [root]
    while pending:
        expr = pending.pop()
        kind = expr.WhichOneof("kind")
        if kind == "call_expr":
            call = expr.call_expr
            if _is_checked_format(call):
                found.append((expr.id, call.target.const_expr.string_value, call.args[0]))
            pending.extend([call.target, *call.args])
        elif kind == "list_expr":
            pending.extend(expr.list_expr.elements)
        elif kind == "struct_expr":
            pending.extend(p for e in expr.struct_expr.entries for p in (e.map_key, e.value))
        elif kind == "select_expr":
            pending.append(expr.select_expr.operand)
        elif kind == "comprehension_expr":
            loop = expr.comprehension_expr
            pending.extend([loop.iter_range, loop.accu_init, loop.loop_step, loop.result])
    return found


def _is_checked_format(call: Any) -> bool:
    return (
        call.function == "format"
        and call.HasField("target")
        and call.target.WhichOneof("kind") == "const_expr"
        and call.target.const_expr.WhichOneof("kind") == "string_value"
        and len(call.args) == 1
        and call.args[0].WhichOneof("kind") == "list_expr"
    )


def _check(text: str, arguments: Any, types: dict[int, Any]) -> tuple[int, str] | None:
    """parseFormatString with cel-go's checking callbacks: (the expression id or 0, message)."""
    elements, index, used = list(arguments.list_expr.elements), 0, 0
    while index < len(text):
        if text[index] != "%" or text[index : index + 2] == "%%":
            index += 2 if text[index] == "%" else 1
            continue
        if index + 1 >= len(text):
            return 0, "unexpected end of string"
        if used >= len(elements):
            return 0, f"index {used} out of range"
        read, clause = _clause(text[index + 1 :])
        if read < 0:
            return 0, f"could not parse formatting clause: {clause}"
        if failure := _argument_error(clause, elements[used], types):
            return failure
        index, used = index + 1 + read, used + 1
    if len(elements) > used:
        return (
            0,
            f"too many arguments supplied to string.format (expected {used}, got {len(elements)})",
        )
    return None


def _clause(text: str) -> tuple[int, str]:
    """(characters read, the verb), or (-1, why): parseFormattingClause and parsePrecision."""
    index = 0
    if text[0] == ".":
        index = 1
        while index < len(text) and text[index].isascii() and text[index].isdigit():
            index += 1
        if index >= len(text):
            return -1, "error while parsing precision: could not find end of precision specifier"
        if index == 1:
            return -1, (
                "error while parsing precision: error while converting precision to integer: "
                'strconv.Atoi: parsing "": invalid syntax'
            )
    verb = text[index]
    if verb != "s" and verb not in _CLAUSES:
        return -1, f'unrecognized formatting clause "{verb}"'
    return index + 1, verb


def _argument_error(verb: str, argument: Any, types: dict[int, Any]) -> tuple[int, str] | None:
    if verb == "s":
        bad = _unprintable(argument, types)
        return None if bad is None else (bad[0], f"{_DURING}{_STRING_CLAUSE}, was given {bad[1]}")
    name = _type_name(types.get(argument.id))
    message, accepted = _CLAUSES[verb]
    if name in accepted or name == "dyn":
        return None
    return argument.id, f"{_DURING}{message}, was given {name}"


def _unprintable(argument: Any, types: dict[int, Any]) -> tuple[int, str] | None:
    """verifyString: the argument, and the elements of a list or map literal, recursively."""
    name = _type_name(types.get(argument.id))
    if name not in _PRINTABLE and name != "dyn":
        return argument.id, name
    kind = argument.WhichOneof("kind")
    parts: list[Any] = []
    if kind == "list_expr":
        parts = list(argument.list_expr.elements)
    elif kind == "struct_expr" and not argument.struct_expr.message_name:
        parts = [p for e in argument.struct_expr.entries for p in (e.map_key, e.value)]
    return next(filter(None, (_unprintable(part, types) for part in parts)), None)


def _type_name(type_: Any) -> str:
    """cel-go's Type.TypeName() for a checked type."""
    kind = None if type_ is None else type_.WhichOneof("kind")
    if kind in ("primitive", "wrapper"):
        return _PRIMITIVES.get(getattr(type_, kind), "dyn")
    if kind == "well_known":
        return _WELL_KNOWN.get(type_.well_known, "dyn")
    if kind == "message_type":
        return str(type_.message_type)
    if kind == "abstract_type":
        return str(type_.abstract_type.name)
    if kind == "type_param":
        return str(type_.type_param)
    return _NAMES.get(str(kind), "dyn")
