"""The checks Kubernetes makes on literals when it compiles a selector, before any device."""

import pytest

from npu_dra.adapters.cel import CelSelectorEvaluator
from tests.support.cel_expressions import holds


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        ('[1, "a"].join() == "1a"', "expected type 'int' but found 'string'"),
        ("[1u, 2].size() == 2", "expected type 'uint' but found 'int'"),
        ("{'a': 1, 'b': 2.0}.size() == 2", "expected type 'int' but found 'double'"),
        ("{'a': 1, 2: 1}.size() == 2", "expected type 'string' but found 'int'"),
        ('[[1], ["a"]].size() == 2', "expected type 'list(int)' but found 'list(string)'"),
        ("[null, 1].size() == 2", "expected type 'null' but found 'int'"),
        ("dyn([1, 2.0]).max() == 2.0", "expected type 'int' but found 'double'"),
        ("[1, 2].map(x, [x, 'a']).size() == 2", "expected type 'int' but found 'string'"),
        (
            '[ip("1.2.3.4"), cidr("::/0")].size() == 2',
            "expected type 'net.IP' but found 'net.CIDR'",
        ),
    ],
)
def test_a_literal_that_mixes_types_is_a_compile_error(
    evaluator: CelSelectorEvaluator, expression: str, reason: str
) -> None:
    assert evaluator.compile_error(expression=expression) == reason


@pytest.mark.parametrize(
    "expression",
    [
        '"%s %d".format(["a", 1]) == "a 1"',  # a format call's arguments may mix
        "[[1], []].size() == 2 && [{}, {'a': 1}].size() == 2",
        "[optional.of(1), optional.none()].size() == 2",
        '[device.driver, "npu.huawei.com"].size() == 2',  # a string in Kubernetes, dyn here
        '[quantity("1"), quantity("2")].size() == 2',
    ],
)
def test_a_literal_of_one_type_compiles(evaluator: CelSelectorEvaluator, expression: str) -> None:
    assert evaluator.compile_error(expression=expression) is None
    assert holds(evaluator, expression)


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        ('duration("bad") == duration("1s")', "invalid duration argument"),
        ('timestamp("2020-13-01T00:00:00Z") == timestamp(0)', "invalid timestamp argument"),
        ('"abc".matches("[")', "invalid matches argument"),
    ],
)
def test_a_literal_argument_that_does_not_convert_is_a_compile_error(
    evaluator: CelSelectorEvaluator, expression: str, reason: str
) -> None:
    assert (evaluator.compile_error(expression=expression) or "").startswith(reason)


def test_a_literal_argument_that_converts_compiles(evaluator: CelSelectorEvaluator) -> None:
    expression = 'duration("1m") < duration("1h") && "abc".matches("^a")'
    assert evaluator.compile_error(expression=expression) is None
    assert holds(evaluator, expression)
