"""A node's inventory refuses to contradict itself: device names and physical ids are unique."""

import pytest

from npu_dra.domain.cdi import device_node
from npu_dra.domain.device import Device, Health, HostFiles, NodeInventory
from npu_dra.domain.errors import InventoryError
from npu_dra.domain.ids import DeviceName, NodeName
from npu_dra.domain.profile import ASCEND_NPU


def npu(index: int, *, physical_id: int | None = None, name: str | None = None) -> Device:
    return Device(
        name=DeviceName(f"npu-{index}" if name is None else name),
        physical_id=index if physical_id is None else physical_id,
        logic_id=index,
        card_id=index,
        chip_id=0,
        chip_name="910B4",
        memory_bytes=32 * 2**30,
    )


def test_duplicate_device_names_are_refused_and_named() -> None:
    with pytest.raises(InventoryError, match="duplicate device name: npu-1"):
        NodeInventory(NodeName("node-a"), (npu(0), npu(1), npu(2, name="npu-1")))


def test_duplicate_physical_ids_are_refused_and_named() -> None:
    with pytest.raises(InventoryError, match="duplicate physical id: 3"):
        NodeInventory(NodeName("node-a"), (npu(0, physical_id=3), npu(1, physical_id=3)))


@pytest.mark.parametrize("name", ["NPU-0", "npu_0", "", "npu-0\n", "x" * 64])
def test_device_names_must_be_dns_labels(name: str) -> None:
    with pytest.raises(InventoryError, match="is not a DNS label"):
        npu(0, name=name)


def test_the_device_node_follows_the_physical_id_not_the_name() -> None:
    node = device_node(npu(0, physical_id=5), host=HostFiles(), profile=ASCEND_NPU)
    assert node.path == "/dev/davinci5"


@pytest.mark.parametrize(
    ("health", "usable"),
    [
        (Health.HEALTHY, True),
        (Health.DEGRADED, True),
        (Health.UNHEALTHY, False),
        (Health.UNKNOWN, False),
    ],
)
def test_only_healthy_and_degraded_devices_are_usable(health: Health, usable: bool) -> None:
    assert health.usable is usable


def test_get_finds_a_device_by_name() -> None:
    inventory = NodeInventory(NodeName("node-a"), (npu(0), npu(1)))
    assert inventory.get(DeviceName("npu-1")) == npu(1)
    assert inventory.get(DeviceName("npu-9")) is None


def test_with_health_changes_one_device_in_a_new_inventory() -> None:
    before = NodeInventory(NodeName("node-a"), (npu(0), npu(1)))
    after = before.with_health(DeviceName("npu-1"), Health.UNHEALTHY)
    assert [d.health for d in after.devices] == [Health.HEALTHY, Health.UNHEALTHY]
    assert [d.health for d in before.devices] == [Health.HEALTHY, Health.HEALTHY]
