"""Kubernetes' lists library: sum, min, max, isSorted, indexOf and lastIndexOf."""

import pytest

from npu_dra.adapters.cel import CelSelectorEvaluator
from npu_dra.adapters.cel.lists import cel_equal
from npu_dra.domain.errors import SelectorError
from tests.support.cel_expressions import holds


@pytest.mark.parametrize(
    "expression",
    [
        "[1, 2, 3].sum() == 6",
        "[1.0, 3.0].sum() == 4.0",
        '[duration("1m"), duration("1s")].sum() == duration("61s")',
        "[1u, 2u].sum() == 3u",
        "[].sum() == 0",
        "[1, 3].min() == 1",
        "[1, 3].max() == 3",
        '["b", "a", "c"].max() == "c"',
        "[false, true].min() == false",
        '[b"a", b"b"].max() == b"b"',
        '[timestamp("2020-01-01T00:00:00Z"), timestamp("2021-01-01T00:00:00Z")].min()'
        ' == timestamp("2020-01-01T00:00:00Z")',
        "[1, 2, 3].isSorted()",
        "!([2.0, 1.0].isSorted())",
        "['a', 'b', 'b', 'c'].isSorted()",
        "[].isSorted()",
        "[1, 2, 2, 3].indexOf(2) == 1",
        "['a', 'b', 'b', 'c'].lastIndexOf('b') == 2",
        "[1.0].indexOf(1.1) == -1",
        "[].indexOf('string') == -1",
        "[[1], [2, 3]].indexOf([2, 3]) == 1",
        '[{"a": 1}].lastIndexOf({"a": 1}) == 0',
    ],
)
def test_the_kubernetes_list_examples_hold(
    evaluator: CelSelectorEvaluator, expression: str
) -> None:
    assert holds(evaluator, expression)


@pytest.mark.parametrize(
    "expression",
    [
        "type([1.5, 2.5].max()) == double",
        "type([1, 2].sum()) == int",
        '[duration("1s")].max() + duration("1s") == duration("2s")',
        "[1, 2].min() + 1 == 2",
    ],
)
def test_a_list_result_has_the_element_type(
    evaluator: CelSelectorEvaluator, expression: str
) -> None:
    assert holds(evaluator, expression)


def test_a_nan_never_replaces_the_minimum(evaluator: CelSelectorEvaluator) -> None:
    assert holds(evaluator, "[1.0, 0.0/0.0, 0.5].min() == 0.5")
    assert holds(evaluator, "[0.0/0.0, 1.0].isSorted()")


def test_index_of_uses_cel_equality(evaluator: CelSelectorEvaluator) -> None:
    assert holds(evaluator, "dyn([1.0, 2.0]).indexOf(2) == 1")
    assert holds(evaluator, "dyn([true]).indexOf(1) == -1")


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        ("[].min() == 0", "min called on empty list"),
        ("[].max() == 0", "max called on empty list"),
        ("[9223372036854775807, 1].sum() == 0", "integer overflow"),
    ],
)
def test_a_list_function_that_fails_is_an_error(
    evaluator: CelSelectorEvaluator, expression: str, reason: str
) -> None:
    with pytest.raises(SelectorError, match=reason):
        holds(evaluator, expression)


@pytest.mark.parametrize(
    "expression", ['["a"].sum() == "a"', "[1.0].indexOf(1) == 0", "[[1]].min() == [1]"]
)
def test_a_list_of_the_wrong_type_is_a_compile_error(
    evaluator: CelSelectorEvaluator, expression: str
) -> None:
    assert "found no matching overload" in (evaluator.compile_error(expression=expression) or "")


@pytest.mark.parametrize(
    ("left", "right", "equal"),
    [
        (1, 1.0, True),
        (True, 1, False),
        (1, True, False),
        ([1, [2]], [1.0, [2.0]], True),
        ({"a": True}, {"a": 1}, False),
        ("a", b"a", False),
        (float("nan"), float("nan"), False),
    ],
)
def test_cel_equality_is_numeric_across_types_but_not_for_bools(
    left: object, right: object, equal: bool
) -> None:
    assert cel_equal(left, right) is equal
