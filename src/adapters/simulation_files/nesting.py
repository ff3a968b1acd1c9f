"""How deep, and how far through YAML aliases, a scenario's or a snapshot's documents may go.

A real cluster's snapshot can hold deep JSON where simulate decodes nothing: another driver's
opaque parameters (up to 10 KiB, so about 5,000 levels), a device's status data. The API server
decodes no JSON nested deeper than 10,000 levels (Go's encoding/json), so neither does simulate;
up to that it takes the file as it is, on a thread whose stack and recursion limit carry that
depth through every recursive step that meets it (decoding, the configs kept as JSON text, the
YAML or JSON it prints). Deeper is refused naming the file.

YAML aliases share a node instead of copying it, so 2 kB of anchors can stand for 10**9 nodes,
harmless until something walks them (simulate keeps configs as JSON text). A document whose
aliases expand it past what kubectl takes is refused before anything walks it: go-yaml v2's rule
(decode.go, `allowedAliasRatio`), which kubectl applies to each document: up to 400,000 nodes
99% may come through aliases, from 4,000,000 on 10%, in between a straight line. An alias that
refers to the node it sits in (`&a [*a]`) is refused too: no JSON can hold it.
"""

import json
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from npu_dra.adapters.simulation_files.scenario import ScenarioError

T = TypeVar("T")
MAX_DEPTH = 10_000  # Go's encoding/json maxNestingDepth, what the API server decodes with
# Per level of nesting, the deepest recursive step (PyYAML's representer) takes 4 frames.
RECURSION_LIMIT = 8 * MAX_DEPTH
STACK_BYTES = 512 << 20  # reserved, not used: C recursion (json) takes about 0.5 kB a level
ALIAS_RATIO_LOW, ALIAS_RATIO_HIGH = 400_000, 4_000_000


def on_deep_stack(call: Callable[[], T]) -> T:
    """`call()` on a thread that carries MAX_DEPTH levels through every recursive step; what it
    raises is raised here."""
    outcome: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(call())
        except BaseException as error:  # handed to the caller's thread as it is
            failure.append(error)

    previous = threading.stack_size(STACK_BYTES)
    try:
        thread = threading.Thread(target=run, name="simulate", daemon=True)
        thread.start()
    finally:
        threading.stack_size(previous)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, RECURSION_LIMIT))
    try:
        thread.join()
    finally:
        sys.setrecursionlimit(limit)
    if failure:
        raise failure[0]
    return outcome[0]


def json_loads(text: str, source: str) -> Any:
    """The JSON document; ScenarioError naming `source` where it nests deeper than MAX_DEPTH
    (json.decoder.JSONDecodeError as json.loads raises it otherwise)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(_frames() + MAX_DEPTH + 8)  # the decoder counts one per level
    try:
        return json.loads(text)
    except RecursionError:
        raise ScenarioError(
            f"{source}: JSON nested deeper than {MAX_DEPTH} levels: the API server decodes "
            "none deeper"
        ) from None
    finally:
        sys.setrecursionlimit(limit)


def _frames() -> int:
    """How many Python frames the calling thread is in."""
    count, frame = 0, sys._getframe()
    while frame is not None:
        count, frame = count + 1, frame.f_back  # type: ignore[assignment]
    return count


def check_aliases(documents: list[Any], source: str) -> None:
    """ScenarioError for a document whose aliases expand it past go-yaml's rule, nest it deeper
    than MAX_DEPTH or refer to the node they sit in; cheap: each shared node is walked once."""
    for index, document in enumerate(documents):
        where = f"{source}: document {index + 1}"
        expanded, written, depth = _measure(document, where)
        if depth > MAX_DEPTH:
            raise ScenarioError(f"{where}: its aliases nest it deeper than {MAX_DEPTH} levels")
        aliased = expanded - written
        if aliased > 100 and expanded > 1000 and aliased / expanded > _allowed_ratio(expanded):
            raise ScenarioError(
                f"{where}: its aliases expand it to {expanded} nodes, {aliased} of them through "
                "aliases: more than kubectl takes (go-yaml: excessive aliasing)"
            )


def _allowed_ratio(nodes: int) -> float:
    if nodes <= ALIAS_RATIO_LOW:
        return 0.99
    if nodes >= ALIAS_RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (nodes - ALIAS_RATIO_LOW) / (ALIAS_RATIO_HIGH - ALIAS_RATIO_LOW)


def _measure(document: Any, where: str) -> tuple[int, int, int]:
    """(nodes with every alias expanded, nodes as written, depth), without expanding any: each
    mapping or list is walked once, by an explicit stack, and its totals kept by identity."""
    totals: dict[int, tuple[int, int]] = {}  # id -> (nodes expanded, depth)
    seen: set[int] = set()
    written = 0
    stack: list[tuple[Any, bool]] = [(document, False)] if _nests(document) else []
    while stack:
        node, done = stack.pop()
        if done:
            totals[id(node)] = _totals(node, totals, where)
        elif id(node) not in seen:
            seen.add(id(node))
            written += _own_nodes(node)
            stack.append((node, True))
            stack.extend((child, False) for child in _children(node) if _nests(child))
    expanded, depth = totals.get(id(document), (1, 0))
    return expanded, max(written, 1), depth


def _totals(node: Any, totals: dict[int, tuple[int, int]], where: str) -> tuple[int, int]:
    """A node's expanded size and depth from its children's (all done: its children were
    stacked after it); a child not done is the node's own ancestor, an alias to itself."""
    expanded, depth = _own_nodes(node), 0
    for child in _children(node):
        if not _nests(child):
            continue
        if id(child) not in totals:
            raise ScenarioError(f"{where}: an alias refers to itself (the node it sits in)")
        size, deep = totals[id(child)]
        expanded, depth = expanded + size, max(depth, deep)
    return expanded, depth + 1


def _nests(value: Any) -> bool:
    return isinstance(value, dict | list)


def _children(node: Any) -> list[Any]:
    return list(node.values()) if isinstance(node, dict) else list(node)


def _own_nodes(node: Any) -> int:
    """The node, its keys, and its children that nest nothing (each counted where written)."""
    children = _children(node)
    keys = len(node) if isinstance(node, dict) else 0
    return 1 + keys + sum(1 for child in children if not _nests(child))
