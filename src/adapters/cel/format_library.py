"""Kubernetes' format library (k8s.io/apiserver v0.34.3 pkg/cel/library/format.go; v0.36.3 alike):
`format.<name>().validate(s)` is optional.none() for a valid string, else optional.of its
validation errors, in k8s.io/apimachinery v0.34.3 pkg/util/validation/validation.go's words.

The binding can neither declare an optional result nor the library's Format type, so the
expression is rewritten before it is checked and compiled: each `format.<name>().validate(ARG)`
becomes

    cel.bind(npu_dra_format_result, npu_dra_format_errors("<name>", (ARG)),
             size(npu_dra_format_result) == 0 ? optional.none() : optional.of(...))

where `npu_dra_format_errors` (declared here) answers the error list, and the optional is CEL's
own. An unknown name is left as written, and refused as the API server refuses it;
`format.named(...)`, whose result is an optional Format, is not rewritten and is refused
(docs/simulate-differences.md).
"""

import base64
import binascii
import re
import uuid
from collections.abc import Callable, Iterator
from datetime import date, datetime
from urllib.parse import urlsplit

FUNCTION = "npu_dra_format_errors"
_CALL = re.compile(r"(?<![.\w])format\s*\.\s*(\w+)\s*\(\s*\)\s*\.\s*validate\s*\(")

_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = _LABEL + r"(\." + _LABEL + ")*"
_DNS1035 = r"[a-z]([-a-z0-9]*[a-z0-9])?"
_QNAME = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character"
)
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character"
)
_DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character"
)
_QNAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character"
)
_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character"
)


def _regex_error(message: str, pattern: str, *examples: str) -> str:
    shown = "".join(f"{' or ' if i else ''}'{e}', " for i, e in enumerate(examples))
    return f"{message} (e.g. {shown}regex used for validation is '{pattern}')"


def _too_long(value: str, limit: int) -> list[str]:
    return [f"must be no more than {limit} characters"] if len(value) > limit else []


def dns1123_label(value: str) -> list[str]:
    errors = _too_long(value, 63)
    if not re.fullmatch(_LABEL, value):
        if re.fullmatch(_SUBDOMAIN, value):
            errors.append("must not contain dots")
        else:
            errors.append(_regex_error(_LABEL_MSG, _LABEL, "my-name", "123-abc"))
    return errors


def dns1123_subdomain(value: str) -> list[str]:
    errors = _too_long(value, 253)
    if not re.fullmatch(_SUBDOMAIN, value):
        errors.append(_regex_error(_SUBDOMAIN_MSG, _SUBDOMAIN, "example.com"))
    return errors


def dns1035_label(value: str) -> list[str]:
    errors = _too_long(value, 63)
    if not re.fullmatch(_DNS1035, value):
        errors.append(_regex_error(_DNS1035_MSG, _DNS1035, "my-name", "abc-123"))
    return errors


def qualified_name(value: str) -> list[str]:
    parts = value.split("/")
    if len(parts) > 2:
        return [
            "a qualified name "
            + _regex_error(_QNAME_MSG, _QNAME, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    errors, name = [], parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errors.append("prefix part must be non-empty")
        errors += [f"prefix part {m}" for m in dns1123_subdomain(prefix) if prefix]
    if not name:
        errors.append("name part must be non-empty")
    elif len(name) > 63:
        errors.append("name part must be no more than 63 characters")
    if not re.fullmatch(_QNAME, name):
        errors.append(
            "name part " + _regex_error(_QNAME_MSG, _QNAME, "MyName", "my.name", "123-abc")
        )
    return errors


def label_value(value: str) -> list[str]:
    errors = _too_long(value, 63)
    if not re.fullmatch(f"({_QNAME})?", value):
        errors.append(_regex_error(_VALUE_MSG, f"({_QNAME})?", "MyValue", "my_value", "12345"))
    return errors


def _prefix(check: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    """generic.go maskTrailingDash: a generateName prefix may end in '-'."""
    return lambda v: check(v[:-2] + "a" if len(v) > 1 and v.endswith("-") else v)


def _uri(value: str) -> list[str]:
    """url.ParseRequestURI, roughly: an absolute URI or an absolute path."""
    parts = urlsplit(value)
    ok = value.startswith("/") or bool(parts.scheme and (parts.netloc or parts.path))
    return [] if ok and " " not in value else [f'parse "{value}": invalid URI for request']


def _passes(check: Callable[[str], object], message: str) -> Callable[[str], list[str]]:
    def run(value: str) -> list[str]:
        try:
            check(value)
        except (ValueError, binascii.Error):
            return [message]
        return []

    return run


VALIDATORS: dict[str, Callable[[str], list[str]]] = {
    "dns1123Label": dns1123_label,
    "dns1123Subdomain": dns1123_subdomain,
    "dns1035Label": dns1035_label,
    "qualifiedName": qualified_name,
    "dns1123LabelPrefix": _prefix(dns1123_label),
    "dns1123SubdomainPrefix": _prefix(dns1123_subdomain),
    "dns1035LabelPrefix": _prefix(dns1035_label),
    "labelValue": label_value,
    "uri": _uri,
    "uuid": _passes(uuid.UUID, "does not match the UUID format"),
    "byte": _passes(lambda v: base64.b64decode(v, validate=True), "invalid base64"),
    "date": _passes(date.fromisoformat, "invalid date"),
    "datetime": _passes(
        lambda v: datetime.fromisoformat(v.replace("Z", "+00:00")), "invalid datetime"
    ),
}


def format_errors(name: str, value: str) -> list[str]:
    return VALIDATORS[name](value)


def with_formats(expression: str) -> str:
    """The expression with each known `format.<name>().validate(ARG)` rewritten (module doc)."""
    out, start = [], 0
    while found := _CALL.search(expression, start):
        if found[1] not in VALIDATORS or _in_string(expression, found.start()):
            out.append(expression[start : found.end()])
            start = found.end()
            continue
        end = _closing(expression, found.end())
        if end is None:  # unbalanced: the compiler says so
            break
        argument = with_formats(expression[found.end() : end])
        out += [expression[start : found.start()], _rewritten(found[1], argument)]
        start = end + 1
    return "".join([*out, expression[start:]])


def _rewritten(name: str, argument: str) -> str:
    result = "npu_dra_format_result"
    return (
        f'cel.bind({result}, {FUNCTION}("{name}", ({argument})), '
        f"size({result}) == 0 ? optional.none() : optional.of({result}))"
    )


def _walk(text: str, start: int) -> Iterator[tuple[int, str, str]]:
    """Each character from `start` with the string literal's quote it stands in ("" outside
    one); a character a backslash escapes inside a literal is passed over."""
    quote, i = "", start
    while i < len(text):
        char = text[i]
        yield i, char, quote
        if quote:
            if char == "\\":
                i += 1
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        i += 1


def _closing(text: str, position: int) -> int | None:
    """The index of the parenthesis closing one opened just before `position`."""
    depth = 1
    for i, char, quote in _walk(text, position):
        if quote or char not in "()":
            continue
        depth += 1 if char == "(" else -1
        if depth == 0:
            return i
    return None


def _in_string(text: str, position: int) -> bool:
    return next((bool(quote) for i, _, quote in _walk(text, 0) if i >= position), False)
