"""What a node publishes: the seed's attribute names, healthy devices only, <=128 per slice."""

import pytest

from npu_dra.domain.attributes import AttributeValue
from npu_dra.domain.device import Device, Health, NodeInventory
from npu_dra.domain.errors import InvalidName
from npu_dra.domain.ids import DeviceName, DriverName, NodeName
from npu_dra.domain.pool import (
    MAX_DEVICES_PER_SLICE,
    PCI_BUS_ID,
    desired_slices,
    pool_devices,
    published_device,
)
from npu_dra.domain.quantity import Quantity

DRIVER = DriverName("npu.huawei.com")


def npu(
    index: int,
    *,
    health: Health = Health.HEALTHY,
    numa_node: int | None = None,
    topology_group: str | None = "ring-0",
    chip_name: str = "910B4",
) -> Device:
    return Device(
        name=DeviceName(f"npu-{index}"),
        physical_id=index,
        logic_id=index,
        card_id=index,
        chip_id=0,
        chip_name=chip_name,
        memory_bytes=32 * 2**30,  # 910B4: 32 GiB HBM
        health=health,
        numa_node=numa_node,
        topology_group=topology_group,
        pci_bus_id=f"0000:C{index % 10}:00.0",
        aicore_count=20,
    )


def inventory(count: int, node: str = "master") -> NodeInventory:
    return NodeInventory(NodeName(node), tuple(npu(i) for i in range(count)))


def test_a_910b4_is_published_with_the_seeds_attribute_names() -> None:
    device = published_device(npu(0, numa_node=6))
    seed: dict[str, AttributeValue] = {
        "chipName": "910B4",
        "numaNode": 6,
        "physicalId": 0,
        "topologyGroup": "ring-0",
    }
    assert {k: device.attributes[k] for k in seed} == seed
    assert device.capacity["memCapacity"].text == "32Gi"
    assert device.capacity["memCapacity"] == Quantity.parse("32Gi")
    assert device.name == "npu-0"


def test_the_pci_bus_id_uses_the_standard_attribute_in_lower_case() -> None:
    assert published_device(npu(3)).attributes[PCI_BUS_ID] == "0000:c3:00.0"


def test_unknown_numa_node_and_topology_are_left_out_rather_than_invented() -> None:
    attributes = published_device(npu(0, numa_node=None, topology_group=None)).attributes
    assert "numaNode" not in attributes
    assert "topologyGroup" not in attributes


def test_numa_node_zero_is_published() -> None:
    assert published_device(npu(4, numa_node=0)).attributes["numaNode"] == 0


def test_a_chip_name_too_long_for_an_attribute_is_an_error_not_a_truncation() -> None:
    with pytest.raises(InvalidName, match="chipName"):
        published_device(npu(0, chip_name="9" * 65))


def test_unusable_devices_are_left_out_of_the_pool() -> None:
    healths = [Health.HEALTHY, Health.UNHEALTHY, Health.DEGRADED, Health.UNKNOWN]
    node = NodeInventory(NodeName("master"), tuple(npu(i, health=h) for i, h in enumerate(healths)))
    assert [d.name for d in pool_devices(node)] == ["npu-0", "npu-2"]
    (only,) = desired_slices(node, driver=DRIVER, generation=1)
    assert [d.name for d in only.devices] == ["npu-0", "npu-2"]


def test_the_pool_is_named_after_the_node_and_carries_the_driver() -> None:
    (only,) = desired_slices(inventory(8, node="master"), driver=DRIVER, generation=1)
    assert (only.driver, only.node_name, only.pool.name) == (DRIVER, "master", "master")
    assert (only.pool.generation, only.pool.resource_slice_count) == (1, 1)
    assert only.name is None
    assert [d.name for d in only.devices] == [f"npu-{i}" for i in range(8)]


@pytest.mark.parametrize(
    ("count", "sizes"),
    [
        (1, [1]),
        (MAX_DEVICES_PER_SLICE, [128]),
        (MAX_DEVICES_PER_SLICE + 1, [128, 1]),
        (2 * MAX_DEVICES_PER_SLICE, [128, 128]),
        (2 * MAX_DEVICES_PER_SLICE + 1, [128, 128, 1]),
    ],
)
def test_slices_split_at_128_and_all_carry_the_slice_count(count: int, sizes: list[int]) -> None:
    slices = desired_slices(inventory(count), driver=DRIVER, generation=3)
    assert [len(s.devices) for s in slices] == sizes
    assert {s.pool.resource_slice_count for s in slices} == {len(sizes)}
    assert {s.pool.generation for s in slices} == {3}
    published = [d.name for s in slices for d in s.devices]
    assert published == [f"npu-{i}" for i in range(count)]


def test_a_smaller_limit_splits_sooner() -> None:
    slices = desired_slices(inventory(5), driver=DRIVER, generation=1, limit=2)
    assert [len(s.devices) for s in slices] == [2, 2, 1]
    assert {s.pool.resource_slice_count for s in slices} == {3}


def test_an_empty_inventory_publishes_one_empty_slice() -> None:
    (only,) = desired_slices(inventory(0), driver=DRIVER, generation=1)
    assert only.devices == ()
    assert only.pool.resource_slice_count == 1


def test_a_node_whose_devices_are_all_unusable_publishes_one_empty_slice() -> None:
    node = NodeInventory(NodeName("master"), (npu(0, health=Health.UNHEALTHY),))
    (only,) = desired_slices(node, driver=DRIVER, generation=1)
    assert only.devices == ()
    assert only.pool.resource_slice_count == 1
