"""ext strings' `format`: evaluated by the runtime, and checked at compile time, as cel-go's
stringFormatValidator checks a literal format with a list literal of arguments."""

import pytest

from npu_dra.adapters.cel import CelSelectorEvaluator
from npu_dra.domain.errors import SelectorError
from tests.support.cel_expressions import holds


@pytest.mark.parametrize(
    "expression",
    [
        '"%d items".format([3]) == "3 items"',
        '"%s and %s".format(["a", [1, 2]]) == "a and [1, 2]"',
        '"%.2f".format([1.234]) == "1.23"',
        '"%x %X %o %b".format([255, "hi", 8, 5]) == "ff 6869 10 101"',
        '"100%% %d".format([1]) == "100% 1"',
        '"%s".format([null]) == "null"',
    ],
)
def test_a_valid_format_compiles_and_holds(
    evaluator: CelSelectorEvaluator, expression: str
) -> None:
    assert evaluator.compile_error(expression=expression) is None
    assert holds(evaluator, expression)


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        (
            '"%d".format(["a"]) == ""',
            "1:14: error during formatting: decimal clause can only be used on integers, "
            "was given string",
        ),
        (
            '"%q".format([1]) == ""',
            'could not parse formatting clause: unrecognized formatting clause "q"',
        ),
        ('"%5d".format([1]) == ""', 'unrecognized formatting clause "5"'),
        ('"%d %d".format([1]) == ""', "1:15: index 1 out of range"),
        (
            '"%d".format([1, 2]) == ""',
            "too many arguments supplied to string.format (expected 1, got 2)",
        ),
        ('"%f".format([1]) == ""', "fixed-point clause can only be used on doubles, was given int"),
        ('"%x".format([1.5]) == ""', "formatted as hex, was given double"),
        ('"%".format([1]) == ""', "unexpected end of string"),
        ('"%.3".format([1.5]) == ""', "could not find end of precision specifier"),
        ('"%.f".format([1.5]) == ""', 'strconv.Atoi: parsing "": invalid syntax'),
        ('"%s".format([[ip("1.2.3.4")]]) == ""', "was given net.IP"),
        ('"%s".format([device.attributes["a"].b]) == ""', "was given google.protobuf.Any"),
    ],
)
def test_a_format_cel_go_refuses_does_not_compile(
    evaluator: CelSelectorEvaluator, expression: str, reason: str
) -> None:
    assert reason in (evaluator.compile_error(expression=expression) or "")


def test_the_error_points_at_the_argument_on_its_own_line(evaluator: CelSelectorEvaluator) -> None:
    reason = evaluator.compile_error(expression='"%d".format(\n  ["a"]) == ""')
    assert reason is not None
    assert reason.startswith("ERROR: <input>:2:4: error during formatting")
    assert reason.endswith(' |   ["a"]) == ""\n | ...^')


def test_an_argument_only_known_at_runtime_fails_there(evaluator: CelSelectorEvaluator) -> None:
    expression = '"%d".format([dyn("a")]) == ""'
    assert evaluator.compile_error(expression=expression) is None
    with pytest.raises(SelectorError, match="decimal clause"):
        holds(evaluator, expression)
