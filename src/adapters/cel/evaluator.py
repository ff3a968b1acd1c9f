"""CelSelectorEvaluator: the SelectorEvaluator port on Google's C++ CEL runtime.

Why this runtime (figures from benchmarks/cel_selectors.py): with a device converted on every
call, as the port requires, it evaluates 15-30k selectors/s, 10-25 times pure-Python celpy and
level with or ahead of the Rust binding, whose raw engine is faster but whose per-call context is
costly. Above all it is the one that can carry Kubernetes' semantics: a type-checked environment
with typed overloads on our own value types (the Rust binding takes only untyped functions over
plain values), plus the optional syntax (`.?x.orValue(...)`), `cel.bind` and ext strings that
selectors use and the Rust binding lacks.

Each distinct expression is compiled once, under a lock, and there also meets the checks the
Kubernetes API server makes at compile time and this runtime does not: `device` typed as there
(checking.py, which also takes literal arguments, literals that mix types, `format` calls and
the result's type). What the runtime cannot run is refused then too, rather than failing on
every device (`_unplanned`). The environment is that of the API server beside the
kube-scheduler simulated (compatibility.py); without one, v1.34.3's with its default gates.

Kubernetes answers a lookup of an unknown attribute domain with an empty map; this runtime's
maps cannot default, so the device's
maps hold every domain the expression names in a string literal, and the driver's own, empty when
the device has nothing there. Where the expression uses a whole map (`size(device.attributes)`,
`"x.com" in device.attributes`, `device.capacity.all(d, ...)`: `device.attributes` or
`device.capacity` not indexed), the program runs with that map's non-empty domains in its place
(`_whole_maps`): a list of the keys, which size, `in` and the macros take as they take the map,
and which holds what Kubernetes' map holds, as there a domain exists only once an attribute
names it. One known difference is left: a domain computed at runtime (`"a" + ".com"`) that the
device lacks is a "no such key" error here.
"""

import re
import threading
from collections.abc import Mapping
from typing import Any

import attrs
from cel_expr_python import cel

from npu_dra.adapters.cel.checking import TypedChecker
from npu_dra.adapters.cel.compatibility import DEFAULT, compatibility
from npu_dra.adapters.cel.environment import build_environment
from npu_dra.adapters.cel.format_library import with_formats
from npu_dra.adapters.cel.limits import check_size
from npu_dra.adapters.cel.values import to_cel
from npu_dra.adapters.cel.wording import api_server_wording
from npu_dra.domain.attributes import is_dns_subdomain
from npu_dra.domain.errors import SelectorError
from npu_dra.domain.scheduling.selectors import SelectorDevice
from npu_dra.domain.scheduling.versions import SchedulerVersion

_STRING_LITERAL = re.compile(r""""((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'""")
_WHOLE_MAP = re.compile(r"(\bhas\s*\(\s*)?\bdevice\s*\.\s*(attributes|capacity)\b(?!\s*\[)")


@attrs.frozen
class _Compiled:
    program: Any
    domains: frozenset[str]


class CelSelectorEvaluator:
    """Thread-safe; holds one environment and the programs compiled in it."""

    def __init__(self, simulated: SchedulerVersion | None = None) -> None:
        chosen = compatibility(simulated) if simulated is not None else DEFAULT
        self._environment = build_environment(chosen)
        self._checker = TypedChecker(chosen)
        self._with_sharing = chosen.consumable_capacity
        self._compiled: dict[str, _Compiled] = {}
        self._lock = threading.Lock()

    def matches(self, *, expression: str, device: SelectorDevice) -> bool:
        compiled = self._compiled.get(expression) or self._compile(expression)
        data = {"device": device_data(device, compiled.domains, self._with_sharing)}
        try:
            result = compiled.program.eval(data=data)
        except (RuntimeError, ValueError) as error:  # ValueError: lists.range(-1)'s C++ error
            raise SelectorError(expression, str(error)) from error
        return _as_bool(expression, result)

    def compile_error(self, *, expression: str) -> str | None:
        try:
            self._compiled.get(expression) or self._compile(expression)
        except SelectorError as error:
            return error.reason
        return None

    def _compile(self, expression: str) -> _Compiled:
        with self._lock:
            if expression not in self._compiled:
                check_size(expression)
                source = with_formats(expression)  # format_library.py
                self._checker.check(source)
                self._compiled[expression] = _compile(self._environment, source)
            return self._compiled[expression]


def _compile(environment: Any, expression: str) -> _Compiled:
    """The program that runs: TypedChecker has checked the types, so only what the runtime
    alone finds is left (its reasons worded alike, though it should find none)."""
    try:
        program = environment.compile(_whole_maps(expression))
    except RuntimeError as error:
        raise SelectorError(expression, api_server_wording(str(error), expression)) from error
    if reason := _unplanned(program):
        raise SelectorError(expression, reason)
    return _Compiled(program, _named_domains(expression))


def _unplanned(program: Any) -> str | None:
    """The runtime plans a program on its first evaluation, failing there, whatever the data, on
    a function it has no implementation for: `transformMap` and `transformMapEntry`, whose
    helper `cel.@mapInsert` the binding lacks. Kubernetes has them; here they are refused."""
    try:
        program.eval(data={"device": {}})
    except RuntimeError as error:
        return f"not supported by this CEL runtime: {error}"
    except ValueError:  # an evaluation error the runtime raises (lists.range(-1)): matches' own
        pass
    return None


def _whole_maps(expression: str) -> str:
    """The expression with each whole-map use of `device.attributes` or `device.capacity`, outside
    string literals, replaced by the list of its non-empty domains (the module says why)."""
    parts, start = [], 0
    for literal in _STRING_LITERAL.finditer(expression):
        parts += [_WHOLE_MAP.sub(_domains_of, expression[start : literal.start()]), literal[0]]
        start = literal.end()
    return "".join([*parts, _WHOLE_MAP.sub(_domains_of, expression[start:])])


def _domains_of(found: re.Match[str]) -> str:
    if found[1]:  # has(device.attributes): a field test, not a use of the map
        return found[0]
    field = f"device.{found[2]}"
    return f"{field}.filter(npu_dra_domain, size({field}[npu_dra_domain]) > 0)"


def _named_domains(expression: str) -> frozenset[str]:
    """Every string literal that could be a domain (an over-approximation, which is harmless)."""
    literals = (double or single for double, single in _STRING_LITERAL.findall(expression))
    return frozenset(text for text in literals if is_dns_subdomain(text, 63))


def device_data(
    device: SelectorDevice, domains: frozenset[str], with_sharing: bool = False
) -> dict[str, object]:
    """The value of `device`, holding an empty map for each of `domains` the device lacks, and
    with DRAConsumableCapacity its `allowMultipleAllocations` (false where the view lacks it)."""
    named = domains | {device.driver}
    data: dict[str, object] = {
        "driver": device.driver,
        "attributes": _by_domain(device.attributes, named),
        "capacity": _by_domain(device.capacity, named),
    }
    if with_sharing:
        data["allowMultipleAllocations"] = device.allow_multiple_allocations
    return data


def _by_domain(values: Mapping[str, Mapping[str, Any]], named: frozenset[str]) -> dict[str, Any]:
    maps: dict[str, Any] = {domain: {} for domain in named}
    for domain, by_name in values.items():
        maps[domain] = {name: to_cel(value) for name, value in by_name.items()}
    return maps


def _as_bool(expression: str, result: Any) -> bool:
    kind = result.type()
    if kind == cel.Type.ERROR:
        raise SelectorError(expression, str(result.value()))
    if kind != cel.Type.BOOL:
        raise SelectorError(expression, f"result is {_type_name(kind)}, not bool")
    return bool(result.value())


def _type_name(kind: Any) -> str:
    name = str(kind.name())
    return name.lower() if name.isupper() else name
