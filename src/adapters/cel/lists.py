"""The Kubernetes CEL lists library (sum, min, max, isSorted, indexOf, lastIndexOf), runtime-free.

Facts from k8s.io/apiserver@v0.34.3/pkg/cel/library/lists.go: `min` and `max` fail on an empty
list ("min called on empty list"); an element replaces the running minimum only when it compares
lower, so a NaN, which compares neither way, never does; `isSorted` fails only where an element
compares higher than the next; `indexOf` uses CEL equality, under which 1 == 1.0 but true != 1.
The C++ runtime gives one implementation every list, whatever its declared element type, so the
element values decide: an empty list sums to int 0, where Kubernetes gives the zero of the
declared type (0.0 for a list of doubles: equal, but not the same type), and a list of uints
arrives as ints, so its sum is an int (equal again; arithmetic on it with a uint fails).
"""

import datetime
import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

_INT64 = range(-(2**63), 2**63)
_LONGEST_DURATION = datetime.timedelta(microseconds=(2**63 - 1) // 1000)


def list_sum(values: Sequence[Any]) -> object:
    if not values:
        return 0
    total = values[0]
    for value in values[1:]:
        total = total + value
        _check_range(total)
    return total


def _check_range(total: object) -> None:
    if isinstance(total, int) and total not in _INT64:
        raise OverflowError("integer overflow")
    if isinstance(total, datetime.timedelta) and abs(total) > _LONGEST_DURATION:
        raise OverflowError("integer overflow")


def _extreme(name: str, replaces: Callable[[Any, Any], bool]) -> Callable[[Sequence[Any]], Any]:
    def extreme(values: Sequence[Any]) -> Any:
        if not values:
            raise ValueError(f"{name} called on empty list")
        best = values[0]
        for value in values[1:]:
            if replaces(best, value):
                best = value
        return best

    return extreme


list_min = _extreme("min", lambda best, value: best > value)
list_max = _extreme("max", lambda best, value: best < value)


def is_sorted(values: Sequence[Any]) -> bool:
    return not any(left > right for left, right in itertools.pairwise(values))


def index_of(values: Sequence[object], item: object) -> int:
    return next((index for index, value in enumerate(values) if cel_equal(value, item)), -1)


def last_index_of(values: Sequence[object], item: object) -> int:
    found = index_of(values[::-1], item)
    return -1 if found < 0 else len(values) - 1 - found


def cel_equal(left: object, right: object) -> bool:
    """CEL's equality: numbers equal across int, uint and double, but a bool equals only a bool."""
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    if isinstance(left, Sequence) and isinstance(right, Sequence) and not _is_text(left, right):
        return len(left) == len(right) and all(map(cel_equal, left, right))
    if isinstance(left, Mapping) and isinstance(right, Mapping):
        return left.keys() == right.keys() and all(cel_equal(left[k], right[k]) for k in left)
    return left == right


def _is_text(*values: object) -> bool:
    return any(isinstance(value, str | bytes | bytearray) for value in values)


# k8s.io/api@v0.36.3 resource/v1/types.go ResourceSliceMaxAttributeValuesPerDevice
_MAX_INCLUDED = 48


def includes(target: object, item: object) -> bool:
    """DRA's `includes` (dynamic-resource-allocation@v0.36.3 cel/compile.go `includesFunc`): a
    list holds the item, or a scalar equals it; a list past its 48th element fails."""
    if not isinstance(target, Sequence) or _is_text(target):
        return cel_equal(target, item)
    for index, value in enumerate(target):
        if index >= _MAX_INCLUDED:
            raise ValueError(
                f"'includes' function cannot be applied to lists longer than {_MAX_INCLUDED} values"
            )
        if cel_equal(value, item):
            return True
    return False
