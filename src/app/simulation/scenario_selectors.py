"""Every CEL selector in a scenario's classes, claims and templates must compile, as the API
server checks on create. Apart from loading because it needs the CEL evaluator, which the
command wires, and runs on generated scenarios as well as files.
"""

from collections.abc import Callable, Iterator, Mapping

from npu_dra.adapters.kube_shapes.errors import ShapeError
from npu_dra.adapters.kube_shapes.reader import describe
from npu_dra.app.simulation.scenario import Scenario, ScenarioError


def check_selectors(scenario: Scenario, compile_error: Callable[..., str | None]) -> None:
    """ScenarioError naming the object and field of the first selector that fails to compile."""
    for doc in (*scenario.device_classes, *scenario.claims, *scenario.templates):
        for path, expression in _expressions(doc, ""):
            reason = compile_error(expression=expression)
            if reason is not None:
                error = ShapeError(
                    describe(doc), path, f"Invalid value: compilation failed: {reason}"
                )
                raise ScenarioError(f"{scenario.source}: {error}")


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
