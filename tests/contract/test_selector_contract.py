"""One contract for every SelectorEvaluator: Kubernetes' CEL selector semantics for DRA devices."""

import threading

import pytest

from npu_dra.adapters.cel import CelSelectorEvaluator
from npu_dra.domain.attributes import Version
from npu_dra.domain.errors import SelectorError
from npu_dra.domain.ids import DriverName
from npu_dra.domain.quantity import Quantity
from npu_dra.domain.scheduling.ports import SelectorEvaluator
from npu_dra.domain.scheduling.selectors import SelectorDevice
from tests.support.celpy_evaluator import CelpySelectorEvaluator

DRIVER = "npu.huawei.com"
NPU = f'device.attributes["{DRIVER}"]'
MEMORY = f'device.capacity["{DRIVER}"].memCapacity'


def npu(*, numa_node: int = 6, memory: str = "32Gi", version: str = "24.1.0") -> SelectorDevice:
    return SelectorDevice(
        driver=DriverName(DRIVER),
        attributes={
            DRIVER: {
                "numaNode": numa_node,
                "chipName": "910B3",
                "healthy": True,
                "driverVersion": Version(version),
            },
            "example.com": {"rack": "r7"},
        },
        capacity={DRIVER: {"memCapacity": Quantity.parse(memory)}},
    )


@pytest.fixture(params=[CelSelectorEvaluator, CelpySelectorEvaluator])
def evaluator(request: pytest.FixtureRequest) -> SelectorEvaluator:
    adapter: SelectorEvaluator = request.param()
    return adapter


def matches(
    evaluator: SelectorEvaluator, expression: str, device: SelectorDevice | None = None
) -> bool:
    return evaluator.matches(expression=expression, device=device or npu())


def test_driver_selector_matches_only_its_driver(evaluator: SelectorEvaluator) -> None:
    assert matches(evaluator, f'device.driver == "{DRIVER}"')
    assert not matches(evaluator, 'device.driver == "gpu.example.com"')


def test_int_attribute_selects_by_numa_node(evaluator: SelectorEvaluator) -> None:
    expression = f"{NPU}.numaNode == 6"
    assert matches(evaluator, expression, npu(numa_node=6))
    assert not matches(evaluator, expression, npu(numa_node=3))


def test_string_and_bool_attributes_compare_by_value(evaluator: SelectorEvaluator) -> None:
    assert matches(evaluator, f'{NPU}.chipName == "910B3" && {NPU}.healthy')
    assert not matches(evaluator, f'{NPU}.chipName == "310P3"')
    assert matches(evaluator, 'device.attributes["example.com"].rack == "r7"')


@pytest.mark.parametrize(("memory", "expected"), [("32Gi", True), ("16Gi", True), ("8Gi", False)])
def test_capacity_compares_to_a_quantity(
    evaluator: SelectorEvaluator, memory: str, expected: bool
) -> None:
    expression = f'{MEMORY}.compareTo(quantity("16Gi")) >= 0'
    assert matches(evaluator, expression, npu(memory=memory)) is expected


def test_quantities_are_equal_by_exact_value(evaluator: SelectorEvaluator) -> None:
    assert matches(evaluator, f'{MEMORY} == quantity("32Gi")')
    assert matches(evaluator, f'{MEMORY} == quantity("34359738368")')
    assert not matches(evaluator, f'{MEMORY} == quantity("34359738369")')


@pytest.mark.parametrize(
    "expression",
    [
        f'{MEMORY}.isGreaterThan(quantity("31Gi")) && {MEMORY}.isLessThan(quantity("33Gi"))',
        f"{MEMORY}.asInteger() == 34359738368 && {MEMORY}.isInteger()",
        'quantity("0.1").add(quantity("0.2")) == quantity("300m")',
        'quantity("1Ki").add(1) == quantity("1025") && quantity("1Ki").sub(24).asInteger() == 1000',
        'quantity("1").sub(quantity("1500m")).sign() == -1 && quantity("0").sign() == 0',
        '!quantity("1.5").isInteger() && !quantity("10Ei").isInteger()',
        'isQuantity("16Gi") && !isQuantity("16 gigs")',
    ],
)
def test_quantity_library_holds(evaluator: SelectorEvaluator, expression: str) -> None:
    assert matches(evaluator, expression)


def test_unknown_domain_is_an_empty_map(evaluator: SelectorEvaluator) -> None:
    assert not matches(evaluator, '"numaNode" in device.attributes["other.com"]')
    assert not matches(evaluator, 'has(device.attributes["other.com"].numaNode)')
    assert not matches(evaluator, 'has(device.capacity["other.com"].memCapacity)')
    assert matches(evaluator, 'size(device.attributes["other.com"]) == 0')


def test_has_guards_a_missing_attribute(evaluator: SelectorEvaluator) -> None:
    assert not matches(evaluator, f"has({NPU}.hbmBandwidth) && {NPU}.hbmBandwidth > 0")
    assert matches(evaluator, f"has({NPU}.numaNode)")


@pytest.mark.parametrize(
    "expression",
    [
        f'{NPU}.driverVersion.isGreaterThan(semver("1.2.0"))',
        f'{NPU}.driverVersion.isLessThan(semver("24.10.0"))',
        f'{NPU}.driverVersion.compareTo(semver("24.1.0")) == 0',
        f'{NPU}.driverVersion == semver("24.1.0+build.7")',
        'semver("1.0.0-alpha.2").isLessThan(semver("1.0.0-alpha.10"))',
        'semver("1.0.0-rc.1").isLessThan(semver("1.0.0"))',
        'semver("v1.2", true) == semver("1.2.0") && isSemver("1.2.3") && !isSemver("v1.2.3")',
        'semver("3.4.5").major() == 3 && semver("3.4.5").minor() == 4',
        'semver("3.4.5").patch() == 5',
    ],
)
def test_version_attributes_compare_as_semver(
    evaluator: SelectorEvaluator, expression: str
) -> None:
    assert matches(evaluator, expression)


def test_semver_orders_numerically_not_lexically(evaluator: SelectorEvaluator) -> None:
    expression = f'{NPU}.driverVersion.isGreaterThan(semver("9.0.0"))'
    assert matches(evaluator, expression, npu(version="10.0.0"))
    assert not matches(evaluator, expression, npu(version="8.99.99"))


def test_missing_attribute_is_an_error(evaluator: SelectorEvaluator) -> None:
    with pytest.raises(SelectorError) as raised:
        matches(evaluator, f"{NPU}.hbmBandwidth > 0")
    assert raised.value.expression == f"{NPU}.hbmBandwidth > 0"


@pytest.mark.parametrize(
    ("expression", "kind"),
    [(f"{NPU}.numaNode", "int"), ('"yes"', "string"), (f"{MEMORY}", "kubernetes.Quantity")],
)
def test_a_result_that_is_not_bool_is_an_error(
    evaluator: SelectorEvaluator, expression: str, kind: str
) -> None:
    with pytest.raises(SelectorError) as raised:
        matches(evaluator, expression)
    assert raised.value.reason == f"result is {kind}, not bool"


@pytest.mark.parametrize("expression", ['device.driver == "a" &&', "device.driver ==== 1", "(("])
def test_syntax_error_is_an_error(evaluator: SelectorEvaluator, expression: str) -> None:
    with pytest.raises(SelectorError) as raised:
        matches(evaluator, expression)
    assert raised.value.reason


@pytest.mark.parametrize(
    "expression",
    [
        'quantity("16 gigs").sign() == 1',
        'quantity("1.5").asInteger() == 1',
        'semver("1.2").major() == 1',
        "1 / 0 == 1",
    ],
)
def test_failing_function_is_an_error(evaluator: SelectorEvaluator, expression: str) -> None:
    with pytest.raises(SelectorError):
        matches(evaluator, expression)


def test_expression_over_ten_kib_is_rejected(evaluator: SelectorEvaluator) -> None:
    padded = "true" + " " * (10 * 1024)
    with pytest.raises(SelectorError, match="longer than 10240 bytes"):
        matches(evaluator, padded)
    assert matches(evaluator, "true" + " " * (10 * 1024 - 4))


def test_concurrent_evaluations_agree(evaluator: SelectorEvaluator) -> None:
    expressions = [f"{NPU}.numaNode == {node}" for node in range(8)]
    devices = [npu(numa_node=node) for node in range(8)]
    results: list[list[bool]] = []

    def run() -> None:
        results.append([matches(evaluator, e, d) for e in expressions for d in devices])

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    diagonal = [e == d for e in range(8) for d in range(8)]
    assert results == [diagonal] * 4


def test_production_adapter_has_the_kubernetes_extensions() -> None:
    """Beyond the contract: optional syntax, cel.bind and ext strings, which celpy lacks."""
    evaluator = CelSelectorEvaluator()
    assert matches(evaluator, f"{NPU}.?hbmBandwidth.orValue(0) == 0")
    assert matches(evaluator, f"cel.bind(node, {NPU}.numaNode, node >= 4 && node < 8)")
    assert matches(evaluator, f'{NPU}.chipName.lowerAscii() == "910b3"')


@pytest.mark.parametrize("expression", ['device.driver == "a" &&', "device.driver ==== 1", "(("])
def test_a_syntax_error_is_a_compile_error(evaluator: SelectorEvaluator, expression: str) -> None:
    assert evaluator.compile_error(expression=expression)


def test_a_selector_that_compiles_has_no_compile_error(evaluator: SelectorEvaluator) -> None:
    assert evaluator.compile_error(expression='device.driver == "npu.huawei.com"') is None
