"""CelpySelectorEvaluator: the SelectorEvaluator port on pure-Python celpy, the second adapter.

Far too slow for a scheduler's hot path (benchmarks/cel_selectors.py), it proves the port: it
binds the same quantity and semver functions and passes the same contract suite. celpy carries
Python objects, so quantities and versions travel as the domain's Quantity and our Semver, and
its maps can default, so an unknown domain is an empty map exactly as in Kubernetes. celpy does
not type-check: what the C++ runtime rejects at compile time fails here at evaluation.
"""

import threading
from collections.abc import Callable, Mapping
from typing import Any

import celpy
from celpy import celtypes
from celpy.celparser import CELParseError
from celpy.evaluation import CELEvalError, CELUnsupportedError

from npu_dra.adapters.cel.library import FUNCTIONS
from npu_dra.adapters.cel.limits import check_size
from npu_dra.adapters.cel.semver import Semver, parse_semver
from npu_dra.domain.attributes import Version
from npu_dra.domain.errors import DomainError, SelectorError
from npu_dra.domain.quantity import Quantity
from npu_dra.domain.scheduling.selectors import SelectorDevice

_TYPE_NAMES = {
    celtypes.IntType: "int",
    celtypes.UintType: "uint",
    celtypes.DoubleType: "double",
    celtypes.StringType: "string",
    celtypes.BytesType: "bytes",
    celtypes.ListType: "list",
    celtypes.MapType: "map",
}


class _Domains(celtypes.MapType):
    """A map of domains where an unknown domain is an empty map, as Kubernetes looks it up."""

    def __getitem__(self, key: Any) -> Any:
        return super().get(key, celtypes.MapType())


class CelpySelectorEvaluator:
    """Thread-safe; compiles each distinct expression once."""

    def __init__(self) -> None:
        self._environment = celpy.Environment()
        self._functions: dict[str, Any] = {
            name: _celpy_function(f) for name, f in FUNCTIONS.items()
        }
        self._runners: dict[str, celpy.Runner] = {}
        self._lock = threading.Lock()

    def matches(self, *, expression: str, device: SelectorDevice) -> bool:
        try:
            result = self.runner(expression).evaluate({"device": celpy_device(device)})
        except (CELEvalError, CELUnsupportedError) as error:
            raise SelectorError(expression, str(error.args[0])) from error
        return _as_bool(expression, result)

    def compile_error(self, *, expression: str) -> str | None:
        try:
            self.runner(expression)
        except SelectorError as error:
            return error.reason
        return None

    def runner(self, expression: str) -> celpy.Runner:
        with self._lock:
            if expression not in self._runners:
                self._runners[expression] = self._compile(expression)
            return self._runners[expression]

    def _compile(self, expression: str) -> celpy.Runner:
        check_size(expression)
        try:
            tree = self._environment.compile(expression)
        except CELParseError as error:
            raise SelectorError(expression, str(error)) from error
        return self._environment.program(tree, functions=self._functions)


def celpy_device(device: SelectorDevice) -> celtypes.MapType:
    return celtypes.MapType(
        {
            celtypes.StringType("driver"): celtypes.StringType(device.driver),
            celtypes.StringType("attributes"): _domains(device.attributes),
            celtypes.StringType("capacity"): _domains(device.capacity),
        }
    )


def _domains(values: Mapping[str, Mapping[str, Any]]) -> _Domains:
    return _Domains(
        {
            celtypes.StringType(domain): celtypes.MapType(
                {celtypes.StringType(name): _to_celpy(value) for name, value in by_name.items()}
            )
            for domain, by_name in values.items()
        }
    )


def _to_celpy(value: object) -> object:
    if isinstance(value, bool):
        return celtypes.BoolType(value)
    if isinstance(value, int):
        return celtypes.IntType(value)
    if isinstance(value, str):
        return celtypes.StringType(value)
    if isinstance(value, float):
        return celtypes.DoubleType(value)
    if isinstance(value, Version):
        return parse_semver(value.text)
    return value


def _from_celpy(value: object) -> object:
    if isinstance(value, celtypes.BoolType):  # an int subclass, as bool cannot be subclassed
        return bool(value)
    for plain in (int, str):
        if isinstance(value, plain):
            return plain(value)
    return value


def _celpy_function(function: Callable[..., object]) -> Callable[..., object]:
    """Plain values in, celtypes out; celpy reports a ValueError raised here as an error."""

    def call(*arguments: object) -> object:
        try:
            return _to_celpy(function(*map(_from_celpy, arguments)))
        except DomainError as error:
            raise ValueError(str(error)) from error

    return call


def _as_bool(expression: str, result: object) -> bool:
    if isinstance(result, CELEvalError):
        raise SelectorError(expression, str(result.args[0]))
    if not isinstance(result, celtypes.BoolType):
        raise SelectorError(expression, f"result is {_type_name(result)}, not bool")
    return bool(result)


def _type_name(result: object) -> str:
    if isinstance(result, Semver | Quantity):
        return f"kubernetes.{type(result).__name__}"
    return _TYPE_NAMES.get(type(result), type(result).__name__)
