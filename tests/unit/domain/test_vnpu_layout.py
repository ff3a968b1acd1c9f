"""Partitionable chips: counters per chip, one device per template placement, the whole chip
consuming everything, one slice per chip offering vNPUs (the 1.34 layout)."""

import pytest

from npu_dra.domain.device import Device, NodeInventory
from npu_dra.domain.errors import InventoryError
from npu_dra.domain.ids import DeviceName, DriverName, NodeName
from npu_dra.domain.pool import desired_slices
from npu_dra.domain.quantity import Quantity
from npu_dra.domain.vnpu.instance import free_id, id_range
from npu_dra.domain.vnpu.layout import chip_layout
from npu_dra.domain.vnpu.templates import Template, VnpuOffer

DRIVER = DriverName("npu.huawei.com")
# npu-smi-info-t-info-vnpu_910B4-32G_empty.txt and -template-info_910B4-32G.txt
TOTALS_32G = {
    "aicore": 20, "memory": 32, "aicpu": 6, "vpc": 9, "venc": 0, "vdec": 2, "jpegd": 24,
    "jpege": 4,
}  # fmt: skip
VIR05_1C_8G = Template(
    "vir05_1c_8g",
    {"aicore": 5, "memory": 8, "aicpu": 1, "vpc": 2, "venc": 0, "jpegd": 6, "pngd": 0,
     "vdec": 0, "jpege": 1},
)  # fmt: skip
VIR10_3C_16G = Template(
    "vir10_3c_16g",
    {"aicore": 10, "memory": 16, "aicpu": 3, "vpc": 4, "venc": 0, "jpegd": 12, "pngd": 0,
     "vdec": 1, "jpege": 2},
)  # fmt: skip
VIR10_4C_16G_M = Template(
    "vir10_4c_16g_m",
    {"aicore": 10, "memory": 16, "aicpu": 4, "vpc": 9, "venc": 0, "jpegd": 24, "pngd": 0,
     "vdec": 2, "jpege": 4},
)  # fmt: skip
OFFER = VnpuOffer(TOTALS_32G, (VIR10_3C_16G, VIR10_4C_16G_M, VIR05_1C_8G))


def npu(index: int) -> Device:
    return Device(
        name=DeviceName(f"npu-{index}"),
        physical_id=index,
        logic_id=index,
        card_id=index,
        chip_id=0,
        chip_name="910B4",
        memory_bytes=32 * 2**30,
        numa_node=6,
        aicore_count=20,
    )


def test_placements_are_bounded_by_the_scarcest_counter() -> None:
    assert OFFER.placements(VIR05_1C_8G) == 4  # 20 cores / 5
    assert OFFER.placements(VIR10_3C_16G) == 2
    assert OFFER.placements(VIR10_4C_16G_M) == 1  # 9 VPC, 24 JPEGD: one at a time


def test_a_template_needing_what_the_chip_lacks_has_no_placement() -> None:
    venc = Template("needs_venc", {"aicore": 1, "venc": 1})
    assert OFFER.placements(venc) == 0


def test_layout_names_counters_and_consumption() -> None:
    layout = chip_layout(DeviceName("npu-3"), OFFER)
    assert layout.counter_set.name == "npu-3-counters"
    assert "venc" not in layout.counter_set.counters  # a zero total is no counter
    assert layout.counter_set.counters["memory"] == Quantity.parse("32Gi")
    assert layout.whole.counters == layout.counter_set.counters
    names = [p.name for p in layout.vnpu_devices]
    assert names[:2] == ["npu-3-vir10-3c-16g-0", "npu-3-vir10-3c-16g-1"]
    assert names[-1] == "npu-3-vir05-1c-8g-3"
    assert len(names) == 2 + 1 + 4
    vir05 = layout.vnpu_devices[-1].consumes.counters
    assert vir05 == {
        "aicore": Quantity.parse("5"), "memory": Quantity.parse("8Gi"),
        "aicpu": Quantity.parse("1"), "vpc": Quantity.parse("2"), "jpegd": Quantity.parse("6"),
        "jpege": Quantity.parse("1"),
    }  # fmt: skip


def test_unknown_or_coreless_templates_are_refused() -> None:
    with pytest.raises(InventoryError, match="unknown counter"):
        Template("t", {"aicore": 1, "tpu": 2})
    with pytest.raises(InventoryError, match="no AI core"):
        Template("t", {"memory": 2})


def test_a_chip_offering_vnpus_gets_its_own_slice_with_its_counter_set() -> None:
    inventory = NodeInventory(
        NodeName("n"), (npu(0), npu(1), npu(2)), vnpu_offers={DeviceName("npu-1"): OFFER}
    )
    plain, offering = desired_slices(inventory, driver=DRIVER, generation=1)
    assert [d.name for d in plain.devices] == ["npu-0", "npu-2"]
    assert plain.shared_counters == ()
    assert offering.pool.resource_slice_count == 2
    (counter_set,) = offering.shared_counters
    assert counter_set.name == "npu-1-counters"
    whole, *parts = offering.devices
    assert whole.name == "npu-1"
    assert whole.consumes_counters[0].counters == counter_set.counters
    assert "vnpuTemplate" not in whole.attributes
    first = parts[0]
    assert first.attributes["vnpuTemplate"] == "vir10_3c_16g"
    assert first.attributes["parentDevice"] == "npu-1"
    assert first.attributes["numaNode"] == 6  # the chip's attributes carry over
    assert first.capacity["memCapacity"] == Quantity.parse("16Gi")
    assert first.capacity["aiCores"] == Quantity.parse("10")


def test_api_limits_hold_for_a_910b4_offering_vnpus() -> None:
    """1.34 validation: <=32 shared counters per slice, <=32 counters per device, <=1024
    consumed counters per slice, <=128 devices."""
    inventory = NodeInventory(NodeName("n"), (npu(0),), vnpu_offers={DeviceName("npu-0"): OFFER})
    (only,) = desired_slices(inventory, driver=DRIVER, generation=1)
    assert sum(len(s.counters) for s in only.shared_counters) <= 32
    consumed = [sum(len(c.counters) for c in d.consumes_counters) for d in only.devices]
    assert max(consumed) <= 32
    assert sum(consumed) <= 1024
    assert len(only.devices) <= 128


def test_vnpu_ids_follow_the_chip_ranges() -> None:
    assert id_range(7, chip_name="910B4") == range(212, 228)
    assert id_range(0, chip_name="310P3") == range(100, 108)
    assert free_id(0, chip_name="910B4", taken=[100, 101, 103]) == 102


def test_the_apart_layout_puts_counter_sets_in_slices_of_their_own() -> None:
    chips = tuple(npu(i) for i in range(10))
    vnpu_offer = {c.name: OFFER for c in chips[:9]}
    inventory = NodeInventory(NodeName("n"), chips, vnpu_offers=vnpu_offer, counter_slices=True)
    slices = desired_slices(inventory, driver=DRIVER, generation=1)
    counter_only = [s for s in slices if s.shared_counters]
    assert all(s.devices == () for s in counter_only)
    assert [len(s.shared_counters) for s in counter_only] == [8, 1]  # at most 8 sets a slice
    device_slices = [s for s in slices if s.devices]
    assert all(not s.shared_counters for s in device_slices)
    counting = [s for s in device_slices if any(d.consumes_counters for d in s.devices)]
    assert all(len(s.devices) <= 64 for s in counting)
    assert sum(len(s.devices) for s in counting) == 9 * (1 + 2 + 1 + 4)
    assert {s.pool.resource_slice_count for s in slices} == {len(slices)}


def test_a_template_name_that_makes_no_device_name_is_an_error() -> None:
    odd = VnpuOffer(TOTALS_32G, (Template("vir05.1c 8g", {"aicore": 5}),))
    with pytest.raises(InventoryError, match="is not a DNS label"):
        chip_layout(DeviceName("npu-0"), odd)
