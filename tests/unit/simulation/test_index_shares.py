"""ClusterIndex keeps nodes in one class only while their shared chips hold the same shares: a
node whose chip has 8Gi given out answers a pod asking 32Gi differently from one whose chip is
untouched. With the gate off a snapshot's share holds its device whole."""

from __future__ import annotations

from npu_dra.domain.claims import AllocationResult
from npu_dra.domain.ids import DeviceName, DriverName, NodeName, PoolName, RequestName
from npu_dra.domain.pool import (
    CapacityRange,
    PoolRef,
    PublishedDevice,
    RequestPolicy,
    ResourceSlice,
)
from npu_dra.domain.quantity import Quantity
from npu_dra.domain.scheduling.index import ClusterIndex
from npu_dra.domain.scheduling.placement import SchedNode

DRIVER = DriverName("npu.example")
MEMORY = RequestPolicy(
    Quantity.parse("32Gi"),
    valid_range=CapacityRange(Quantity.parse("1Gi"), step=Quantity.parse("1Gi")),
)


def node_slice(node: str) -> ResourceSlice:
    chip = PublishedDevice(
        DeviceName("npu-0"),
        capacity={"memCapacity": Quantity.parse("32Gi")},
        allow_multiple_allocations=True,
        request_policies={"memCapacity": MEMORY},
    )
    return ResourceSlice(DRIVER, NodeName(node), PoolRef(PoolName(node), 1, 1), (chip,), node)


def share(node: str, amount: str) -> AllocationResult:
    return AllocationResult(
        RequestName("npu"),
        DRIVER,
        PoolName(node),
        DeviceName("npu-0"),
        share_id=f"share-{node}",
        consumed_capacity=(("memCapacity", Quantity.parse(amount)),),
    )


def index() -> ClusterIndex:
    nodes = [SchedNode("a"), SchedNode("b")]
    return ClusterIndex(nodes, [node_slice("a"), node_slice("b")])


def test_nodes_part_while_their_chips_hold_different_shares_and_meet_again() -> None:
    found = index()
    assert len(found.classes) == 1
    found.mark_allocated([share("a", "8Gi")], consumable=True)
    assert len(found.classes) == 2
    assert found.shared.consumed[(DRIVER, PoolName("a"), DeviceName("npu-0"))] == {
        "memCapacity": Quantity.parse("8Gi").value
    }
    assert not found.allocated
    found.bind("a", [])  # a pod each: their loads alike too
    found.bind("b", [share("b", "8Gi")])
    assert len(found.classes) == 1


def test_without_the_gate_a_snapshots_share_holds_the_device_whole() -> None:
    found = index()
    found.mark_allocated([share("a", "8Gi")], consumable=False)
    assert found.allocated == {(DRIVER, PoolName("a"), DeviceName("npu-0"))}
    assert not found.shared.held
    assert len(found.classes) == 2
