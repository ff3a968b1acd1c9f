"""The Kubernetes CEL quantity library's semantics over the domain's exact Quantity.

Both evaluators share it. Arithmetic stays in Fractions, so `quantity("0.1").add(quantity("0.2"))`
equals `quantity("300m")` exactly, as it does with Kubernetes' own decimal quantities.
"""

from fractions import Fraction

from npu_dra.domain.errors import InvalidQuantity
from npu_dra.domain.quantity import Quantity

_INT64 = range(-(2**63), 2**63)


def is_quantity(text: str) -> bool:
    try:
        Quantity.parse(text)
    except InvalidQuantity:
        return False
    return True


def compare(left: Quantity, right: Quantity) -> int:
    return (left.value > right.value) - (left.value < right.value)


def sign(quantity: Quantity) -> int:
    return (quantity.value > 0) - (quantity.value < 0)


def is_integer(quantity: Quantity) -> bool:
    """True when `asInteger()` is safe: a whole number within int64."""
    value = quantity.value
    return value.denominator == 1 and value.numerator in _INT64


def as_integer(quantity: Quantity) -> int:
    if not is_integer(quantity):
        raise ValueError(f"cannot convert quantity {quantity.text} to an int64 without loss")
    return quantity.value.numerator


def as_approximate_float(quantity: Quantity) -> float:
    return float(quantity.value)


def add(quantity: Quantity, other: Quantity | int) -> Quantity:
    return Quantity(quantity.value + _value(other))


def sub(quantity: Quantity, other: Quantity | int) -> Quantity:
    return Quantity(quantity.value - _value(other))


def _value(other: Quantity | int) -> Fraction | int:
    return other if isinstance(other, int) else other.value
