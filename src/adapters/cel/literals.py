"""The checks Kubernetes makes on literal arguments before a selector ever runs.

Kubernetes' base environment adds cel-go's AST validators from 1.29
(k8s.io/apiserver@v0.34.3/pkg/cel/environment/base.go; cel-go@v0.26.0/cel/validator.go): a
`duration` or `timestamp` call on a string literal that does not convert, or a `matches` whose
first argument is a literal that is not a regexp (the pattern of `s.matches(p)`; quirkily, the
string of `matches(s, p)`), fails to compile, "invalid <function> argument". The regex library
compiles a literal find/findAll pattern when the program is built (regex.go, OptimizeRegex), so
a bad one fails there. The C++ runtime would find each only on evaluation. Its checked AST is not
reachable from Python, so the calls are found in the text: a function name, `(`, then a string
literal that is the whole argument, outside any other literal. A literal built at runtime, or
written as a triple-quoted string, is left to evaluation, where it fails as an error.
"""

import re
from typing import Any

from cel_expr_python import cel

from npu_dra.adapters.cel.regex import check_pattern

STRING_LITERAL = r"""[rR]?(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')"""
# A literal on its own is the second alternative, so a call quoted inside one is never seen.
_SCAN = re.compile(
    rf"(?P<member>\.\s*)?\b(?P<name>duration|timestamp|matches|findAll|find)\s*\(\s*"
    rf"(?P<literal>{STRING_LITERAL})\s*(?=[,)])"
    rf"|{STRING_LITERAL}"
)
_CEL_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-3][0-7]{2}|.)")
_SIMPLE_ESCAPES = dict(zip("abfnrtv\\'\"`?", "\a\b\f\n\r\t\v\\'\"`?", strict=True))


def literal_error(environment: Any, expression: str) -> str | None:
    """The first literal argument Kubernetes would refuse, and why; None if there is none."""
    for call in _SCAN.finditer(expression):
        name, literal, member = call.group("name", "literal", "member")
        if name in ("duration", "timestamp") and member is None:
            if not _converts(environment, f"{name}({literal})"):
                return f"invalid {name} argument {literal}"
        elif name == "matches" and _pattern_error(literal):
            return f"invalid matches argument {literal}"
        elif name in ("find", "findAll") and member and (reason := _pattern_error(literal)):
            return f"program instantiation failed: {reason}"
    return None


def _converts(environment: Any, call: str) -> bool:
    try:
        result = environment.compile(call).eval(data={})
    except RuntimeError:
        return False
    return bool(result.type() != cel.Type.ERROR)


def _pattern_error(literal: str) -> str | None:
    try:
        check_pattern(_value(literal))
    except ValueError as error:
        return str(error)
    return None


def _value(literal: str) -> str:
    if literal[0] in "rR":
        return literal[2:-1]
    return _CEL_ESCAPE.sub(_unescaped, literal[1:-1])


def _unescaped(escape: re.Match[str]) -> str:
    code = escape.group(1)
    if code[0] in "xuU":
        return chr(int(code[1:], 16))
    if len(code) == 3 and code.isdigit():
        return chr(int(code, 8))
    return _SIMPLE_ESCAPES.get(code, "\\" + code)
