"""What the selector environment offers, as Kubernetes v1.34.3 offers it to a new selector.

Kubernetes compiles a new selector at compatibility version 1.33: ext strings at version 2, sets,
two-variable comprehensions, cross-type numeric comparisons, and no ext lists, math or encoders.
"""

import pytest

from npu_dra.adapters.cel import CelSelectorEvaluator
from tests.support.cel_expressions import holds


@pytest.mark.parametrize(
    "expression",
    [
        "sets.contains([1, 2, 3], [2]) && !sets.contains([], [1])",
        "sets.equivalent([1], [1, 1]) && sets.intersects([1], [1, 2])",
        "[1, 2].all(i, v, v > 0) && {'a': 1}.exists(k, v, v == 1)",
        "[1, 2].existsOne(i, v, v == 2)",
        "[1, 2].transformList(i, v, v * 2) == [2, 4]",
        "[1, 2].transformList(i, v, i > 0, v) == [2]",
        '["a", "b"].join("-") == "a-b" && "hello".charAt(1) == "e"',
        '"%d-%s".format([1, "a"]) == "1-a" && strings.quote("a") == "\\"a\\""',
        '"abc".indexOf("c") == 2 && "hello mellow".lastIndexOf("ello") == 7',
        "1 < 1.5 && 2u >= 1 && 1.0 <= 1u",
        'quantity("1").asApproximateFloat() > 0',
        'string(1) == "1" && string(true) == "true" && string(1.5) == "1.5"',
        "[1, 2].first() == optional.of(1) && cel.bind(x, 2, x * x == 4)",
    ],
)
def test_what_kubernetes_offers_compiles_and_holds(
    evaluator: CelSelectorEvaluator, expression: str
) -> None:
    assert evaluator.compile_error(expression=expression) is None
    assert holds(evaluator, expression)


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        ('"abc".reverse() == "cba"', "undeclared reference to 'reverse'"),  # ext strings v3
        ("[1, 2].reverse() == [2, 1]", "undeclared reference to 'reverse'"),  # ext lists
        ("[3, 1].sort() == [1, 3]", "undeclared reference to 'sort'"),
        ("lists.range(3) == [0, 1, 2]", "undeclared reference to 'lists'"),
        ("math.greatest(1, 2) == 2", "undeclared reference to 'math'"),
        ('base64.encode(b"a") == "YQ=="', "undeclared reference to 'base64'"),
        ('[1, 2].join() == ""', "found no matching overload for 'join'"),
        ('1 < "a"', "found no matching overload for '_<_'"),
    ],
)
def test_what_kubernetes_does_not_offer_is_a_compile_error(
    evaluator: CelSelectorEvaluator, expression: str, reason: str
) -> None:
    assert reason in (evaluator.compile_error(expression=expression) or "")


@pytest.mark.parametrize(
    "expression",
    [
        "{'a': 1}.transformMap(k, v, v + 1) == {'a': 2}",
        "[1, 2].transformMapEntry(i, v, {string(v): i}) == {'1': 0, '2': 1}",
    ],
)
def test_a_map_transform_is_refused_as_this_runtime_cannot_run_it(
    evaluator: CelSelectorEvaluator, expression: str
) -> None:
    reason = evaluator.compile_error(expression=expression)
    assert reason is not None
    assert reason.startswith("not supported by this CEL runtime")
