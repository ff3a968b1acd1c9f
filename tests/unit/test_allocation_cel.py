"""The allocator with the production CEL evaluator, on the seed's DeviceClass and claims."""

from collections.abc import Sequence

import pytest

from npu_dra.adapters.cel import CelSelectorEvaluator
from npu_dra.domain.claims import (
    Allocation,
    AllocationMode,
    ClaimRef,
    ClaimSpec,
    Constraint,
    DeviceClass,
    DeviceRequest,
    ResourceClaim,
)
from npu_dra.domain.device import Device, NodeInventory
from npu_dra.domain.ids import (
    ClaimName,
    ClaimUID,
    DeviceClassName,
    DeviceName,
    DriverName,
    Namespace,
    NodeName,
    RequestName,
)
from npu_dra.domain.pool import ResourceSlice, desired_slices
from tests.support.allocation import Unsatisfiable, allocate

DRIVER = DriverName("npu.huawei.com")
SEED_CLASS = DeviceClass(DeviceClassName("npu.huawei.com"), ('device.driver == "npu.huawei.com"',))
NUMA = (6, 6, 4, 4, 0, 0, 2, 2)


def node(
    name: str,
    *,
    chip: str = "910B4",
    memory_gib: int = 32,
    rings: bool = False,
    driver: DriverName = DRIVER,
) -> tuple[ResourceSlice, ...]:
    devices = tuple(
        Device(
            name=DeviceName(f"npu-{i}"),
            physical_id=i,
            logic_id=i,
            card_id=i,
            chip_id=0,
            chip_name=chip,
            memory_bytes=memory_gib * 2**30,
            numa_node=n,
            topology_group=f"ring-{i // 4}" if rings else "ring-0",
        )
        for i, n in enumerate(NUMA)
    )
    return desired_slices(NodeInventory(NodeName(name), devices), driver=driver, generation=1)


def claim(
    *selectors: str,
    mode: AllocationMode = AllocationMode.EXACT_COUNT,
    count: int = 1,
    constraints: Sequence[Constraint] = (),
) -> ResourceClaim:
    request = DeviceRequest(RequestName("npu"), SEED_CLASS.name, tuple(selectors), mode, count)
    ref = ClaimRef(Namespace("ascend-dra"), ClaimName("npu-claim"), ClaimUID("uid-1"))
    return ResourceClaim(ref, ClaimSpec((request,), tuple(constraints)))


@pytest.fixture(scope="module")
def evaluator() -> CelSelectorEvaluator:
    return CelSelectorEvaluator()


def run(
    wanted: ResourceClaim, slices: Sequence[ResourceSlice], evaluator: CelSelectorEvaluator
) -> Allocation | Unsatisfiable:
    return allocate(
        wanted,
        slices=slices,
        classes={SEED_CLASS.name: SEED_CLASS},
        in_use=frozenset(),
        evaluator=evaluator,
    )


def devices(result: Allocation | Unsatisfiable) -> list[str]:
    assert isinstance(result, Allocation), result
    return [r.device for r in result.results]


def test_the_seeds_numa_claim_gets_the_npus_on_numa_node_6(evaluator: CelSelectorEvaluator) -> None:
    wanted = claim('device.attributes["npu.huawei.com"].numaNode == 6', mode=AllocationMode.ALL)
    assert devices(run(wanted, node("master"), evaluator)) == ["npu-0", "npu-1"]


def test_the_class_selector_excludes_other_drivers(evaluator: CelSelectorEvaluator) -> None:
    foreign = node("a-node", driver=DriverName("gpu.example.com"))
    result = run(claim(mode=AllocationMode.ALL), (*foreign, *node("b-node")), evaluator)
    assert isinstance(result, Allocation)
    assert result.node_name == "b-node"
    assert {r.driver for r in result.results} == {DRIVER}


def test_a_capacity_selector_compares_quantities(evaluator: CelSelectorEvaluator) -> None:
    at_least_32 = 'device.capacity["npu.huawei.com"].memCapacity.compareTo(quantity("32Gi")) >= 0'
    small, big = node("a-small", memory_gib=16), node("b-big", memory_gib=32)
    result = run(claim(at_least_32), (*small, *big), evaluator)
    assert isinstance(result, Allocation)
    assert result.node_name == "b-big"


def test_a_chip_name_selector(evaluator: CelSelectorEvaluator) -> None:
    wanted = claim('device.attributes["npu.huawei.com"].chipName == "910B3"', count=2)
    result = run(wanted, (*node("a", chip="910B4"), *node("b", chip="910B3")), evaluator)
    assert isinstance(result, Allocation)
    assert result.node_name == "b"


def test_ring_constraint_with_cel(evaluator: CelSelectorEvaluator) -> None:
    wanted = claim(
        'device.attributes["npu.huawei.com"].numaNode != 6',
        count=4,
        constraints=[Constraint("npu.huawei.com/topologyGroup")],
    )
    assert devices(run(wanted, node("ax", rings=True), evaluator)) == [
        "npu-4",
        "npu-5",
        "npu-6",
        "npu-7",
    ]


@pytest.mark.parametrize(
    "broken",
    ['device.attributes["npu.huawei.com"].numaNode ==', 'device.driver + "x"'],
)
def test_a_selector_that_cannot_be_evaluated_is_the_reason(
    broken: str, evaluator: CelSelectorEvaluator
) -> None:
    result = run(claim(broken), node("master"), evaluator)
    assert isinstance(result, Unsatisfiable)
    assert "selector #0: CEL runtime error" in result.reason
