"""`device` typed as the API server types it (dynamic-resource-allocation cel/compile.go):
`driver` a string, attribute values `google.protobuf.Any`, capacities quantities, and
`allowMultipleAllocations` only with DRAConsumableCapacity; errors worded as cel-go words them."""

import pytest

from npu_dra.adapters.cel import CelSelectorEvaluator
from npu_dra.domain.ids import DriverName
from npu_dra.domain.quantity import Quantity
from npu_dra.domain.scheduling.selectors import SelectorDevice
from npu_dra.domain.scheduling.versions import scheduler_version

NPU = 'device.attributes["npu.huawei.com"]'
MEMORY = 'device.capacity["npu.huawei.com"].memory'


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        ("device.driver == 1", "found no matching overload for '_==_' applied to '(string, int)'"),
        ("device.foo == 1", "ERROR: <input>:1:7: undefined field 'foo'\n"),
        ("device.allowMultipleAllocations", "undefined field 'allowMultipleAllocations'"),
        ('device["driver"] == "a"', "applied to '(kubernetes.DRADevice, string)'"),
        (f"{MEMORY}.compareTo(1) > 0", "'compareTo' applied to 'kubernetes.Quantity.(int)'"),
        (f"{MEMORY} > 1", "'_>_' applied to '(kubernetes.Quantity, int)'"),
        (f"{NPU}.index.startsWith(1)", "'startsWith' applied to 'any.(int)'"),
        (f'{NPU}.index + 1 > "a"', "'_>_' applied to '(int, string)'"),
        (
            f"{NPU}.index.exists(x, x)",
            "expression of type 'any' cannot be range of a comprehension (must be list, map, "
            "or dynamic)",
        ),
        ("cel.bind(d, device, d.driver == 1)", "'_==_' applied to '(string, int)'"),
    ],
)
def test_a_type_error_on_device_does_not_compile(
    evaluator: CelSelectorEvaluator, expression: str, reason: str
) -> None:
    assert reason in (evaluator.compile_error(expression=expression) or "")


def test_a_compile_error_is_the_checkers_issue_without_the_runtimes_status(
    evaluator: CelSelectorEvaluator,
) -> None:
    assert evaluator.compile_error(expression="device.driver == 1") == (
        "ERROR: <input>:1:15: found no matching overload for '_==_' applied to '(string, int)'\n"
        " | device.driver == 1\n"
        " | ..............^"
    )


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        ("device.driver", "result is string, not bool"),
        (MEMORY, "result is kubernetes.Quantity, not bool"),
        ("dyn(true)", "result is dyn, not bool"),  # only an attribute may stand for a bool
        (f"{NPU}.index.x", "result is dyn, not bool"),
        (f"[{NPU}.index, 1].size() == 2", "expected type 'any' but found 'int'"),
        ("[device.driver, 1].size() == 2", "expected type 'string' but found 'int'"),
        ("[1, dyn(2)].size() == 2", "expected type 'int' but found 'dyn'"),
        (f"[{NPU}.index.x, 1].size() == 2", "expected type 'dyn' but found 'int'"),
    ],
)
def test_a_result_or_a_literal_typed_through_device_is_checked(
    evaluator: CelSelectorEvaluator, expression: str, reason: str
) -> None:
    assert evaluator.compile_error(expression=expression) == reason


@pytest.mark.parametrize(
    "expression",
    [
        f"{NPU}.index",  # an attribute may be the result: it is `any`, not `dyn`
        f"{NPU}.?healthy.orValue(false)",
        f"true ? {NPU}.index : false",
        "has(device.driver) && has(device.attributes) && has(device.capacity)",
        f"{MEMORY}.compareTo(quantity('1Gi')) > 0",
        f'cel.bind(d, device, d.driver == "npu.huawei.com" && {NPU}.index == 0)',
        f'{NPU}.exists(name, name == "index") && "npu.huawei.com" in device.attributes',
        f'{NPU}.version.isGreaterThan(semver("1.0.0")) || {NPU}.index in [0, 1]',
        # typed more loosely here than by cel-go, so a literal may mix dyn with them
        'cel.bind(d, device, [d.capacity["a"]["b"], quantity("1")].size() == 2)',
        "[optional.unwrap([optional.of(1)]), [1]].size() == 2",
    ],
)
def test_what_compiles_against_the_typed_device_compiles(
    evaluator: CelSelectorEvaluator, expression: str
) -> None:
    assert evaluator.compile_error(expression=expression) is None


def test_allow_multiple_allocations_is_a_bool_with_consumable_capacity() -> None:
    sharing = CelSelectorEvaluator(scheduler_version("1.36"))
    device = SelectorDevice(DriverName("npu.huawei.com"), {}, {})
    assert sharing.compile_error(expression="device.allowMultipleAllocations == 1")
    assert not sharing.matches(expression="device.allowMultipleAllocations", device=device)


def test_list_type_attributes_make_attributes_dyn_and_add_includes() -> None:
    lists = CelSelectorEvaluator(scheduler_version("1.36", {"DRAListTypeAttributes": True}))
    for expression in ("dyn(true)", f"{NPU}.index.exists(x, x)", f"{NPU}.index.includes(1)"):
        assert lists.compile_error(expression=expression) is None
    assert lists.compile_error(expression="device.driver == 1") is not None


def test_the_typed_check_leaves_evaluation_as_it_was(evaluator: CelSelectorEvaluator) -> None:
    device = SelectorDevice(
        DriverName("npu.huawei.com"),
        {"npu.huawei.com": {"index": 3}},
        {"npu.huawei.com": {"memory": Quantity.parse("64Gi")}},
    )
    expression = f'{NPU}.index == 3 && {MEMORY}.compareTo(quantity("32Gi")) > 0'
    assert evaluator.matches(expression=expression, device=device)
    assert not evaluator.matches(expression=f"{NPU}.index == 4", device=device)


def test_a_method_on_a_later_line_is_worded_as_a_method(evaluator: CelSelectorEvaluator) -> None:
    reason = evaluator.compile_error(expression='true &&\n  "a".startsWith(1)')
    assert reason is not None
    assert reason.startswith(
        "ERROR: <input>:2:17: found no matching overload for 'startsWith' applied to 'string.(int)'"
    )


def test_a_global_function_keeps_its_argument_list(evaluator: CelSelectorEvaluator) -> None:
    reason = evaluator.compile_error(expression='size(1) == 0 || strings.quote(1) == ""')
    assert reason is not None
    assert "'size' applied to '(int)'" in reason
    assert "'strings.quote' applied to '(int)'" in reason
