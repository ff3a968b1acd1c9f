"""How fast each installed CEL library evaluates DRA-style device selectors.

A scheduler compiles a selector once and evaluates it against every device, so each candidate
compiles the three selectors once and is timed on evaluations over 16 devices, two ways:
"prepared", with each device already in the library's own value form (the engine alone), and
"per call", converting the device on every evaluation, which is what an adapter of the
SelectorEvaluator port pays, as the port hands it one SelectorDevice at a time. The last line
times our production adapter through the port.
"""

import time
from collections.abc import Callable, Iterator
from fractions import Fraction
from functools import partial
from typing import Any, NamedTuple

from npu_dra.domain.attributes import Version
from npu_dra.domain.ids import DriverName
from npu_dra.domain.quantity import Quantity
from npu_dra.domain.scheduling.selectors import SelectorDevice

DRIVER = "npu.huawei.com"
SELECTORS = (
    f'device.driver == "{DRIVER}" && device.attributes["{DRIVER}"].chipName == "910B3"',
    f'"{DRIVER}" in device.attributes && device.attributes["{DRIVER}"].numaNode == 6',
    f'device.capacity["{DRIVER}"].memCapacity.compareTo(quantity("16Gi")) >= 0',
)
DEVICES = 16
BUDGET_S = 0.15


class Candidate(NamedTuple):
    compile: Callable[[str], Any]
    convert: Callable[[SelectorDevice], Any]
    evaluate: Callable[[Any, Any], object]


def _devices() -> Iterator[SelectorDevice]:
    for index in range(DEVICES):
        attributes = {
            "chipName": "910B3" if index % 2 else "310P3",
            "numaNode": index % 8,
            "driverVersion": Version("24.1.0"),
        }
        memory = Quantity.of_bytes(index % 4 * 16 * 2**30)
        yield SelectorDevice(
            DriverName(DRIVER), {DRIVER: attributes}, {DRIVER: {"memCapacity": memory}}
        )


def _cel_expr_python() -> Candidate:
    from npu_dra.adapters.cel.environment import build_environment
    from npu_dra.adapters.cel.evaluator import device_data

    environment = build_environment()
    domains = frozenset({DRIVER})
    return Candidate(
        compile=environment.compile,
        convert=lambda device: environment.Activation({"device": device_data(device, domains)}),
        evaluate=lambda program, activation: program.eval(activation).value(),
    )


def _rust_cel() -> Candidate:
    """No opaque values here: a quantity travels as a map holding its exact Fraction's text."""
    import cel

    from npu_dra.adapters.cel.library import quantity
    from npu_dra.adapters.cel.quantities import compare

    def unwrap(value: dict[str, str]) -> Quantity:
        return Quantity(Fraction(value["quantity"]))

    def compare_to(left: dict[str, str], right: dict[str, str]) -> int:
        return compare(unwrap(left), unwrap(right))

    def wrapped_quantity(text: str) -> dict[str, str]:
        return {"quantity": str(quantity(text).value)}

    functions: dict[str, Callable[..., Any]] = {
        "quantity": wrapped_quantity,
        "compareTo": compare_to,
    }

    def plain(value: object) -> object:
        if isinstance(value, Quantity):
            return {"quantity": str(value.value)}
        return value.text if isinstance(value, Version) else value

    def convert(device: SelectorDevice) -> Any:
        maps = {
            part: {d: {k: plain(v) for k, v in m.items()} for d, m in getattr(device, part).items()}
            for part in ("attributes", "capacity")
        }
        return cel.Context(
            variables={"device": {"driver": device.driver, **maps}}, functions=functions
        )

    return Candidate(compile=cel.compile, convert=convert, evaluate=lambda p, c: p.execute(c))


def _celpy() -> Candidate:
    from tests.support.celpy_evaluator import CelpySelectorEvaluator, celpy_device

    evaluator = CelpySelectorEvaluator()
    return Candidate(
        compile=evaluator.runner,
        convert=celpy_device,
        evaluate=lambda runner, device: runner.evaluate({"device": device}),
    )


def _rate(evaluations: list[Callable[[], object]]) -> float:
    count, started = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - started) < BUDGET_S or not count:
        for evaluate in evaluations:
            evaluate()
        count += len(evaluations)
    return count / elapsed


def _prepared(candidate: Candidate, expression: str) -> list[Callable[[], object]]:
    program = candidate.compile(expression)
    forms = [candidate.convert(device) for device in _devices()]
    return [partial(candidate.evaluate, program, form) for form in forms]


def _per_call(candidate: Candidate, expression: str) -> list[Callable[[], object]]:
    program = candidate.compile(expression)

    def convert_and_evaluate(device: SelectorDevice) -> object:
        return candidate.evaluate(program, candidate.convert(device))

    return [partial(convert_and_evaluate, device) for device in _devices()]


def _through_the_port(expression: str) -> list[Callable[[], object]]:
    from npu_dra.adapters.cel import CelSelectorEvaluator

    evaluator = CelSelectorEvaluator()
    return [partial(evaluator.matches, expression=expression, device=d) for d in _devices()]


def _print_row(name: str, evaluations: Callable[[str], list[Callable[[], object]]]) -> None:
    rates = [_rate(evaluations(expression)) for expression in SELECTORS]
    print(f"  {name:<46}" + "".join(f"{rate:>11,.0f}" for rate in rates))


CANDIDATES: dict[str, Callable[[], Candidate]] = {
    "cel-expr-python (C++)": _cel_expr_python,
    "common-expression-language (Rust)": _rust_cel,
    "cel-python (pure Python)": _celpy,
}


def main() -> None:
    print(f"CEL selectors: evaluations/s over {DEVICES} devices, each selector compiled once")
    for number, expression in enumerate(SELECTORS, 1):
        print(f"  {number}. {expression}")
    print(f"  {'':<46}" + "".join(f"{f'#{n}':>11}" for n in range(1, len(SELECTORS) + 1)))
    for name, make in CANDIDATES.items():
        try:
            candidate = make()
        except ImportError as error:
            print(f"  {name}: skipped, cannot import ({error})")
            continue
        _print_row(f"{name}, prepared", partial(_prepared, candidate))
        _print_row(f"{name}, per call", partial(_per_call, candidate))
    _print_row("npu_dra CelSelectorEvaluator.matches", _through_the_port)


if __name__ == "__main__":
    main()
