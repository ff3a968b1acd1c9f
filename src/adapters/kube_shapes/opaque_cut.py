"""A ResourceClaim read from the bytes the API server sent, never refused for another driver's
opaque parameters (spec.devices.config[].opaque, status.allocation.devices.config[].opaque):
they come out as text (RawParameters), judged and bounded only by the driver an entry names
(ours: domain/npu_config.py). The API server has bounded them already, by its own measure.

Most claims are read by the JSON reader whole, each entry's parameters written back as compact
UTF-8 text. What the API server accepts there and that reader does not: strings that are not
valid UTF-8 (kept as sent) and nesting deeper than the interpreter's recursion limit (the
server's decoder allows 10,000 levels). Such a claim is cut first: a scan of its bytes
(iterative, strings skipped whole, so never deeper than the document's own shape) finds each
parameters value, takes it out as the text it was sent in, and leaves a placeholder for the
reader. The scan costs about 0.5 ms of CPU for a 1.6 KB claim, the reader 0.1 ms: hence only
when needed.
"""

import json
import re
from collections.abc import Iterator
from typing import Any

from npu_dra.adapters.kube_shapes.claims import claim_from_api
from npu_dra.adapters.kube_shapes.raw_parameters import RawParameters
from npu_dra.domain.claims import ResourceClaim

_TOKEN = re.compile(
    rb'[ \t\r\n]*(?:("[^"\\]*(?:\\.[^"\\]*)*")|([{}\[\]:,])|([^ \t\r\n{}\[\]:,"]+))', re.S
)
_MARK = "\x00opaque-parameters:"
_CONFIGS = (("spec", "devices", "config"), ("status", "allocation", "devices", "config"))
Path = tuple[str | int, ...]


def claim_from_json(data: bytes) -> ResourceClaim:
    try:
        document = json.loads(data)
        for opaque in _opaques(document):
            if isinstance(found := opaque.get("parameters"), dict):
                opaque["parameters"] = RawParameters(_compact(found))
    except (UnicodeDecodeError, RecursionError):  # reading or writing back parameters
        document = cut_document(data)
    return claim_from_api(document)


def cut_document(data: bytes) -> Any:
    """The claim's document, each entry's parameters a RawParameters (their text as sent)."""
    text, cut = _cut(data)
    document = json.loads(text)
    for opaque in _opaques(document):
        found = opaque.get("parameters")
        if isinstance(found, str) and found.startswith(_MARK):
            opaque["parameters"] = RawParameters(cut[int(found[len(_MARK) :])])
    return document


def _compact(parameters: dict[str, Any]) -> str:
    return json.dumps(parameters, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _opaques(document: Any) -> Iterator[dict[str, Any]]:
    """The `opaque` object of each config entry of the claim and of its allocation."""
    for config in _CONFIGS:
        for entry in _at(document, config):
            opaque = entry.get("opaque") if isinstance(entry, dict) else None
            if isinstance(opaque, dict):
                yield opaque


def _at(document: Any, path: tuple[str, ...]) -> list[Any]:
    for key in path:
        document = document.get(key) if isinstance(document, dict) else None
    return document if isinstance(document, list) else []


def _wanted(path: Path) -> bool:
    return len(path) >= 3 and path[-2:] == ("opaque", "parameters") and path[:-3] in _CONFIGS


def _cut(data: bytes) -> tuple[bytes, list[str]]:
    """`data` with each wanted value replaced by a placeholder, and those values' text."""
    pieces: list[bytes] = []
    cut: list[str] = []
    stack: list[list[Any]] = []  # [b"{" or b"[", the key or index now]
    pos = last = 0
    value_next = True
    while (match := _TOKEN.match(data, pos)) is not None:
        start, pos = match.start(match.lastindex or 0), match.end()
        token = match.group(match.lastindex or 0)
        if token in (b"}", b"]"):
            stack.pop()
            value_next = False
        elif value_next and _wanted(tuple(frame[1] for frame in stack)):
            pos = _value_end(data, start)
            pieces += [data[last:start], json.dumps(f"{_MARK}{len(cut)}").encode()]
            cut.append(data[start:pos].decode(errors="replace"))
            last, value_next = pos, False
        elif token in (b"{", b"["):
            stack.append([token, None if token == b"{" else 0])
            value_next = token == b"["
        elif token == b":":
            value_next = True
        elif token == b",":
            if stack[-1][0] == b"[":
                stack[-1][1] += 1
            value_next = stack[-1][0] == b"["
        elif not value_next and stack and stack[-1][0] == b"{":  # a key
            stack[-1][1] = token[1:-1].decode(errors="replace")
        else:
            value_next = False
    return b"".join([*pieces, data[last:]]), cut


def _value_end(data: bytes, start: int) -> int:
    """Where the value beginning at `start` ends: its brackets counted, strings skipped whole."""
    depth, pos = 0, start
    while (match := _TOKEN.match(data, pos)) is not None:
        token, pos = match.group(match.lastindex or 0), match.end()
        depth += token in (b"{", b"[")
        depth -= token in (b"}", b"]")
        if depth <= 0:
            return pos
    raise ValueError("a config entry's opaque parameters end before their value does")
