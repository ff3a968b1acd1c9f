"""Quantities are exact: what the API server means by "32Gi" or "500m", with no float rounding."""

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from npu_dra.domain.errors import InvalidQuantity
from npu_dra.domain.quantity import Quantity

GI = 2**30


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("32Gi", 32 * GI),
        ("1Ki", 1024),
        ("1k", 1000),
        ("1M", 10**6),
        ("500m", Fraction(1, 2)),
        ("1e3", 1000),
        ("1E3", 1000),
        ("1e-3", Fraction(1, 1000)),
        ("0.1", Fraction(1, 10)),
        ("1.5Gi", 3 * 2**29),
        ("-1Ki", -1024),
        ("+2", 2),
        (".5", Fraction(1, 2)),
        (" 8Mi ", 8 * 2**20),
    ],
)
def test_parse_gives_the_exact_value(text: str, value: Fraction | int) -> None:
    assert Quantity.parse(text).value == value


def test_a_tenth_stays_exact_where_a_float_would_not() -> None:
    assert Quantity.parse("0.1").value * 3 == Fraction(3, 10)


@pytest.mark.parametrize(
    "text", ["", "Gi", "1.2.3", "1 Gi", "1KiB", "1Ki2", "abc", "1e", "--1", "1kk", "0x10"]
)
def test_parse_rejects_what_is_not_a_quantity(text: str) -> None:
    with pytest.raises(InvalidQuantity, match="not a Kubernetes quantity"):
        Quantity.parse(text)


def test_spellings_of_one_amount_are_equal_and_order_by_value() -> None:
    assert Quantity.parse("1Gi") == Quantity.parse("1024Mi")
    assert Quantity.parse("1G") < Quantity.parse("1Gi")
    assert Quantity.parse("999m") < Quantity.parse("1")


@pytest.mark.parametrize(
    ("count", "text"),
    [(32 * GI, "32Gi"), (64 * GI, "64Gi"), (1536 * 2**20, "1536Mi"), (20, "20"), (0, "0")],
)
def test_byte_counts_print_with_the_largest_exact_binary_suffix(count: int, text: str) -> None:
    assert Quantity.of_bytes(count).text == text
    assert str(Quantity.of_bytes(count)) == text


def test_fractions_print_in_milli_units() -> None:
    assert Quantity.parse("0.5").text == "500m"
    assert Quantity.parse("1.25").text == "1250m"


@given(st.integers(min_value=-(2**62), max_value=2**62))
def test_printed_byte_counts_parse_back_to_the_same_value(count: int) -> None:
    assert Quantity.parse(Quantity.of_bytes(count).text) == Quantity.of_bytes(count)


@given(st.integers(min_value=-(10**12), max_value=10**12))
def test_printed_milli_values_parse_back_to_the_same_value(milli: int) -> None:
    quantity = Quantity(Fraction(milli, 1000))
    assert Quantity.parse(quantity.text) == quantity
