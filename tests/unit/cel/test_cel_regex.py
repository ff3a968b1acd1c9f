"""Kubernetes' regex library: find and findAll, with Go's regexp (RE2) semantics."""

import pytest

from npu_dra.adapters.cel import CelSelectorEvaluator
from npu_dra.domain.errors import SelectorError
from tests.support.cel_expressions import holds


@pytest.mark.parametrize(
    "expression",
    [
        '"abc123".find("[0-9]+") == "123"',
        '"abc 123".find("[0-9]*") == ""',  # Go: the leftmost match, here an empty one
        '"abc 123".find("xyz") == ""',
        '"123 abc 456".findAll("[0-9]+") == ["123", "456"]',
        '"123 abc 456".findAll("[0-9]*") == ["123", "", "", "", "", "456"]',
        '"123 abc 456".findAll("[0-9]+", 1) == ["123"]',
        '"123 abc 456".findAll("[0-9]+", 0) == []',
        '"123 abc 456".findAll("[0-9]+", -1) == ["123", "456"]',
        '"123 abc 456".findAll("xyz") == []',
        '"ab".findAll("") == ["", "", ""]',
        '"aXbX".findAll("(?i)x") == ["X", "X"]',
        '"éa1".find("\\\\pL+") == "éa"',
        '"a\\nb".find("(?s)a.b") == "a\\nb"',
        '"910B3".find(r"\\d+[A-Z]") == "910B"',
    ],
)
def test_the_kubernetes_regex_examples_hold(
    evaluator: CelSelectorEvaluator, expression: str
) -> None:
    assert holds(evaluator, expression)


@pytest.mark.parametrize(
    "expression",
    [
        '"abc".find("[") == ""',
        '"abc".find("(?=b)") == ""',  # lookahead: Python's re has it, Go's regexp has not
        '"abc".findAll("(a)\\\\1") == []',  # a backreference, likewise
        '"abc".findAll("\\\\C", 1) == []',  # any byte: RE2 has it, Go has not
        '"abc".find(r"\\Z") == ""',
    ],
)
def test_a_literal_pattern_go_rejects_fails_when_the_program_is_built(
    evaluator: CelSelectorEvaluator, expression: str
) -> None:
    reason = evaluator.compile_error(expression=expression)
    assert reason is not None
    assert reason.startswith("program instantiation failed: error parsing regexp")


def test_a_pattern_built_at_runtime_fails_when_evaluated(
    evaluator: CelSelectorEvaluator,
) -> None:
    expression = '"abc".find("[" + device.driver) == ""'
    assert evaluator.compile_error(expression=expression) is None
    with pytest.raises(SelectorError, match="error parsing regexp"):
        holds(evaluator, expression)


def test_a_call_quoted_inside_a_string_is_not_checked(evaluator: CelSelectorEvaluator) -> None:
    assert holds(evaluator, "\"x.find('[')\".size() == 11")
