"""Every CEL selector in a scenario's classes, claims and templates must compile, as the API
server checks on create: an object with one that does not is refused and left out. Apart from
loading because it needs the CEL evaluator, which the command wires, and runs on generated
scenarios as well as files.
"""

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import attrs

from npu_dra.adapters.kube_shapes.errors import ShapeError
from npu_dra.adapters.kube_shapes.reader import describe
from npu_dra.adapters.simulation_files.scenario import Refusal, Scenario

CompileError = Callable[..., str | None]


def check_selectors(scenario: Scenario, compile_error: CompileError) -> Scenario:
    """The scenario less each class, claim or template with a selector that fails to compile,
    each of those in its `refused`, naming the first such selector's field."""
    refused: list[Refusal] = []

    def compiling(docs: tuple[Mapping[str, Any], ...]) -> tuple[Mapping[str, Any], ...]:
        kept = []
        for doc in docs:
            error = _first_error(doc, compile_error)
            if error is None:
                kept.append(doc)
            else:
                refused.append(Refusal.of(doc, error))
        return tuple(kept)

    return attrs.evolve(
        scenario,
        device_classes=compiling(scenario.device_classes),
        claims=compiling(scenario.claims),
        templates=compiling(scenario.templates),
        refused=(*scenario.refused, *refused),
    )


def _first_error(doc: Mapping[str, Any], compile_error: CompileError) -> ShapeError | None:
    for path, expression in _expressions(doc, ""):
        reason = compile_error(expression=expression)
        if reason is not None:
            return ShapeError(describe(doc), path, f"Invalid value: compilation failed: {reason}")
    return None


def _expressions(value: object, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, Mapping):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if (
                key == "cel"
                and isinstance(item, Mapping)
                and isinstance(item.get("expression"), str)
            ):
                yield f"{where}.expression", item["expression"]
            else:
                yield from _expressions(item, where)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _expressions(item, f"{path}[{i}]")
