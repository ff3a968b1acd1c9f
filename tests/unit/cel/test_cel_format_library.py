"""Kubernetes' format library (k8s.io/apiserver v0.34.3 pkg/cel/library/format.go), which the
API server accepts in a selector and the scheduler evaluates: `format.<name>().validate(s)` is
optional.none() for a valid string, else the validation errors (k8s.io/apimachinery
util/validation's words). The CEL binding cannot declare an optional result, so the evaluator
rewrites each call into a declared function and CEL's own optionals."""

import pytest

from npu_dra.adapters.cel.evaluator import CelSelectorEvaluator
from npu_dra.domain.ids import DriverName
from npu_dra.domain.scheduling.selectors import SelectorDevice

NAME = 'device.attributes["npu.huawei.com"].name'


def _device(name: str) -> SelectorDevice:
    return SelectorDevice(DriverName("npu.huawei.com"), {"npu.huawei.com": {"name": name}}, {})


@pytest.mark.parametrize(
    ("expression", "name", "matches"),
    [
        (f"!format.dns1123Label().validate({NAME}).hasValue()", "npu-0", True),
        (f"!format.dns1123Label().validate({NAME}).hasValue()", "NPU_0", False),
        (
            f"format.dns1123Label().validate({NAME}).value()[0] == 'must not contain dots'",
            "a.b",
            True,
        ),
        (f"!format.dns1123Subdomain().validate({NAME}).hasValue()", "a.b", True),
        (f"!format.dns1035Label().validate({NAME}).hasValue()", "0abc", False),
        (f"!format.qualifiedName().validate({NAME}).hasValue()", "example.com/My_Name", True),
        (f"!format.labelValue().validate({NAME}).hasValue()", "", True),
        (f"!format.dns1123LabelPrefix().validate({NAME}).hasValue()", "npu-", True),
        (
            f"!format.uuid().validate({NAME}).hasValue()",
            "123e4567-e89b-12d3-a456-426614174000",
            True,
        ),
        (f"!format.date().validate({NAME}).hasValue()", "2021-13-01", False),
        (
            f'format.dns1123Label().validate({NAME}).orValue(["fine"]) == ["fine"] && '
            f'!format.dns1123Label().validate(({NAME} + "x")).hasValue()',
            "npu",
            True,
        ),
    ],
)
def test_format_validations_answer_as_kubernetes(expression: str, name: str, matches: bool) -> None:
    evaluator = CelSelectorEvaluator()
    assert evaluator.compile_error(expression=expression) is None
    assert evaluator.matches(expression=expression, device=_device(name)) is matches


def test_an_unknown_format_is_refused_as_the_api_server_refuses_it() -> None:
    error = CelSelectorEvaluator().compile_error(
        expression="!format.nope().validate('x').hasValue()"
    )
    assert error is not None
