"""Kubernetes resource quantities ("32Gi", "500m", "1e3") as exact values.

Capacities are published and compared as quantities; keeping them exact (a Fraction) avoids the
rounding a float would bring to byte counts.
"""

import re
from fractions import Fraction

import attrs

from npu_dra.domain.errors import InvalidQuantity

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_PATTERN = re.compile(
    r"^(?P<sign>[+-]?)(?P<num>\d+(\.\d*)?|\.\d+)"
    r"(?:(?P<exp>[eE][+-]?\d+)|(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$"
)


@attrs.frozen(order=True)
class Quantity:
    """An exact quantity; `text` is the canonical string Kubernetes would print for it."""

    value: Fraction

    @classmethod
    def parse(cls, text: str) -> "Quantity":
        match = _PATTERN.match(text.strip())
        if not match:
            raise InvalidQuantity(f"{text!r} is not a Kubernetes quantity")
        number = Fraction(match["num"])
        if match["exp"]:
            number *= Fraction(10) ** int(match["exp"][1:])
        else:
            suffix = match["suffix"] or ""
            number *= _BINARY.get(suffix) or _DECIMAL[suffix]
        return cls(-number if match["sign"] == "-" else number)

    @classmethod
    def of_bytes(cls, count: int) -> "Quantity":
        return cls(Fraction(count))

    @property
    def text(self) -> str:
        return format_quantity(self.value)

    def __str__(self) -> str:
        return self.text


def format_quantity(value: Fraction) -> str:
    """Canonical form: the largest binary suffix that divides an integer exactly, else decimal."""
    if value.denominator == 1:
        whole = value.numerator
        for suffix, factor in reversed(_BINARY.items()):
            if whole and whole % factor == 0:
                return f"{whole // factor}{suffix}"
        return str(whole)
    milli = value * 1000
    if milli.denominator == 1:
        return f"{milli.numerator}m"
    nano = value * 10**9
    return f"{-(-nano.numerator // nano.denominator)}n"
