"""cel-go's lists extension, which a v1.36.3 API server offers a new selector and v1.34.3 does
not; and the optional library's `optional.unwrap`, which both offer."""

import pytest

from npu_dra.adapters.cel import CelSelectorEvaluator
from npu_dra.domain.errors import SelectorError
from npu_dra.domain.scheduling.versions import scheduler_version
from tests.support.cel_expressions import holds

EXTENSION = [
    "[3, 1, 2].sort() == [1, 2, 3]",
    '["b", "a"].sortBy(s, s) == ["a", "b"]',
    "[1, 2, 3, 4].slice(1, 3) == [2, 3]",
    "[[1], [2, 3]].flatten() == [1, 2, 3]",
    "[[[1]], [[2]]].flatten(2) == [1, 2]",
    "[1, 2, 2].distinct() == [1, 2]",
    "[1, 2].reverse() == [2, 1]",
    "lists.range(3) == [0, 1, 2]",
]


@pytest.fixture(scope="module")
def v136() -> CelSelectorEvaluator:
    return CelSelectorEvaluator(scheduler_version("1.36"))


@pytest.mark.parametrize("expression", EXTENSION)
def test_the_lists_extension_holds_on_1_36(v136: CelSelectorEvaluator, expression: str) -> None:
    assert v136.compile_error(expression=expression) is None
    assert holds(v136, expression)


@pytest.mark.parametrize("expression", EXTENSION)
def test_the_lists_extension_is_undeclared_on_1_34(
    evaluator: CelSelectorEvaluator, expression: str
) -> None:
    assert "undeclared reference to" in (evaluator.compile_error(expression=expression) or "")


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        (
            "[[1]].sort() == []",
            "found no matching overload for 'sort' applied to 'list(list(int)).()'",
        ),
        ("lists.range(size(device.attributes)) == []", "too complex, exceeds cost limit"),
        ("lists.range(2000000).size() > 0", "too complex, exceeds cost limit"),
    ],
)
def test_what_1_36_refuses_of_the_lists_extension(
    v136: CelSelectorEvaluator, expression: str, reason: str
) -> None:
    assert reason in (v136.compile_error(expression=expression) or "")


def test_a_runtime_error_of_the_extension_names_it(v136: CelSelectorEvaluator) -> None:
    with pytest.raises(SelectorError, match="cannot slice"):
        holds(v136, "[1, 2].slice(2, 1) == []")


def test_a_negative_range_is_an_error_here_where_cel_go_gives_an_empty_list(
    v136: CelSelectorEvaluator,
) -> None:
    assert v136.compile_error(expression="lists.range(-1) == []") is None
    with pytest.raises(SelectorError):
        holds(v136, "lists.range(-1) == []")


@pytest.mark.parametrize(
    "expression",
    [
        "optional.unwrap([optional.of(1), optional.none()]) == [1]",
        "[optional.of('a'), optional.none()].unwrapOpt() == ['a']",
    ],
)
def test_optional_unwrap_holds(evaluator: CelSelectorEvaluator, expression: str) -> None:
    assert evaluator.compile_error(expression=expression) is None
    assert holds(evaluator, expression)
