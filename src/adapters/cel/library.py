"""The Kubernetes quantity and semver CEL libraries as plain Python functions, by CEL name.

Both evaluators bind these same functions, so a selector means the same under either runtime.
Methods take their receiver first (`q.add(1)` is `add(q, 1)`). `compareTo`, `isGreaterThan` and
`isLessThan` exist for quantities and for versions, so they dispatch on the operands' types.
"""

import functools
from collections.abc import Callable

from npu_dra.adapters.cel import quantities
from npu_dra.adapters.cel.semver import Semver, is_semver, parse_semver
from npu_dra.domain.quantity import Quantity


@functools.lru_cache(maxsize=1024)
def quantity(text: str) -> Quantity:
    """Selectors name the same few literals over and over: parse each once."""
    return Quantity.parse(text)


def ordered(left: object, right: object) -> int:
    if isinstance(left, Quantity) and isinstance(right, Quantity):
        return quantities.compare(left, right)
    if isinstance(left, Semver) and isinstance(right, Semver):
        return left.compare(right)
    raise TypeError(f"no such overload: {type(left).__name__} against {type(right).__name__}")


def semver(text: str, normalize: bool = False) -> Semver:
    return parse_semver(text, normalize=normalize)


def semver_check(text: str, normalize: bool = False) -> bool:
    return is_semver(text, normalize=normalize)


def _major(version: Semver) -> int:
    return version.major


def _minor(version: Semver) -> int:
    return version.minor


def _patch(version: Semver) -> int:
    return version.patch


def _is_greater_than(left: object, right: object) -> bool:
    return ordered(left, right) > 0


def _is_less_than(left: object, right: object) -> bool:
    return ordered(left, right) < 0


FUNCTIONS: dict[str, Callable[..., object]] = {
    "quantity": quantity,
    "isQuantity": quantities.is_quantity,
    "sign": quantities.sign,
    "isInteger": quantities.is_integer,
    "asInteger": quantities.as_integer,
    "asApproximateFloat": quantities.as_approximate_float,
    "add": quantities.add,
    "sub": quantities.sub,
    "semver": semver,
    "isSemver": semver_check,
    "major": _major,
    "minor": _minor,
    "patch": _patch,
    "compareTo": ordered,
    "isGreaterThan": _is_greater_than,
    "isLessThan": _is_less_than,
}
