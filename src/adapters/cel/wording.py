"""A compile error of the C++ checker, worded as the API server's cel-go checker words it.

Both print `ERROR: <input>:line:column: message`, the source line and a caret, one issue after
another (cel-go@v0.26.0 common/errors.go). The C++ runtime wraps them in a status
(`INVALID_ARGUMENT: ... [INVALID_ARGUMENT]`), lists issues in the order it found them, not by
place, and words three messages its own way; cel-go's
(checker/errors.go, checker/format.go): a method call's argument types as `receiver.(args)`, not
`(receiver, args)`; `undefined field 'f'`, without ` not found in struct 'T'`; and a type that
"cannot be range of a comprehension", without "the".
"""

import re

_STATUS = re.compile(r"^[A-Z_]+: |\s*\[[A-Z_]+\]$")
_UNDEFINED_FIELD = re.compile(r"(undefined field '[^']*') not found in struct '[^']*'")
_NO_OVERLOAD = re.compile(
    r"(?P<head>ERROR: <input>:(?P<line>\d+):(?P<column>\d+): found no matching overload for "
    r"'(?P<name>[^'.]+)' applied to )'\((?P<arguments>[^']*)\)'"
)
_ISSUE = re.compile(r"\n(?=ERROR: <input>:)")
_PLACE = re.compile(r"ERROR: <input>:(?P<line>\d+):(?P<column>\d+):")
_METHOD_NAME = re.compile(r"\.\s*[A-Za-z_][A-Za-z0-9_]*\s*$")


def api_server_wording(message: str, expression: str) -> str:
    text = _STATUS.sub("", message.strip())
    text = _UNDEFINED_FIELD.sub(r"\1", text)
    text = text.replace("cannot be the range of", "cannot be range of")
    text = _NO_OVERLOAD.sub(lambda found: _method_signature(found, expression), text)
    return "\n".join(sorted(_ISSUE.split(text), key=_place)) if _ISSUE.search(text) else text


def _place(issue: str) -> tuple[int, int]:
    """cel-go lists issues by line and column; the C++ checker in the order it found them."""
    found = _PLACE.match(issue)
    return (int(found["line"]), int(found["column"])) if found else (0, 0)


def _method_signature(found: re.Match[str], expression: str) -> str:
    """`'(any, int)'` as `'any.(int)'` where the call at the caret is a method call."""
    arguments = found["arguments"]
    if not _is_method_call(expression, int(found["line"]), int(found["column"])):
        return f"{found['head']}'({arguments})'"
    receiver, *rest = _split(arguments)
    return f"{found['head']}'{receiver}.({', '.join(rest)})'"


def _is_method_call(expression: str, line: int, column: int) -> bool:
    """Both checkers place a call's error at its `(`; a method's name follows a `.`."""
    lines = expression.split("\n")
    if not 0 < line <= len(lines) or not 0 < column <= len(lines[line - 1]):
        return False
    text = lines[line - 1]
    return text[column - 1] == "(" and _METHOD_NAME.search(text[: column - 1]) is not None


def _split(arguments: str) -> list[str]:
    """Type names split at the commas outside parentheses: `map(string, int), int`."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(arguments):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(arguments[start:index].strip())
            start = index + 1
    parts.append(arguments[start:].strip())
    return parts
