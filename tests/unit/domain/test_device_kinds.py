"""One DeviceClass per kind of device (domain/device_kinds.py), evaluated with the production CEL
evaluator on what a node publishes: whole chips, vNPUs, fixed shares and consumable chips side by
side; devices of an older npu-dra (no `type`); claims in Huawei's driver's form."""

from __future__ import annotations

import pytest

from npu_dra.adapters.cel import CelSelectorEvaluator
from npu_dra.domain.chip_sharing.policy import SharingPolicy
from npu_dra.domain.device import Device, NodeInventory
from npu_dra.domain.device_kinds import SHARE, VNPU, WHOLE, class_selector, kinds_of
from npu_dra.domain.huawei_names import huawei_device_type
from npu_dra.domain.ids import DeviceName, DriverName, NodeName
from npu_dra.domain.pool import PublishedDevice, desired_slices
from npu_dra.domain.scheduling.selectors import selector_view
from npu_dra.domain.vnpu.layout import TEMPLATE_ATTRIBUTE
from npu_dra.domain.vnpu.templates import Template, VnpuOffer

DRIVER = DriverName("npu.huawei.com")
GI = 2**30
CEL = CelSelectorEvaluator()
OFFER = VnpuOffer(
    {"aicore": 20, "memory": 32, "aicpu": 6},
    (Template("vir10_3c_16g", {"aicore": 10, "memory": 16, "aicpu": 3}),),
)


def chip(i: int, name: str = "910B4") -> Device:
    return Device(DeviceName(f"npu-{i}"), i, i, 0, i, name, 32 * GI, aicore_count=20)


def published(*, consumable: bool) -> list[PublishedDevice]:
    """npu-0 whole with vNPUs, npu-1 shared (two fixed shares, or consumable), npu-2 whole."""
    chips = (chip(0), chip(1), chip(2))
    inventory = NodeInventory(NodeName("n"), chips, vnpu_offers={chips[0].name: OFFER})
    sharing = SharingPolicy(frozenset({DeviceName("npu-1")}), shares=2, consumable=consumable)
    slices = desired_slices(inventory, driver=DRIVER, generation=0, sharing=sharing)
    return [d for s in slices for d in s.devices]


def selected(expression: str, devices: list[PublishedDevice]) -> list[str]:
    return sorted(
        d.name
        for d in devices
        if CEL.matches(expression=expression, device=selector_view(d, DRIVER))
    )


def test_each_class_selects_its_kind_only_with_fixed_shares() -> None:
    devices = published(consumable=False)
    whole = class_selector(WHOLE, driver=DRIVER, profile="npu")
    assert selected(whole, devices) == ["npu-0", "npu-2"]
    assert selected(class_selector(SHARE, driver=DRIVER, profile="npu"), devices) == [
        "npu-1-share-0",
        "npu-1-share-1",
    ]
    vnpus = selected(class_selector(VNPU, driver=DRIVER, profile="npu"), devices)
    assert vnpus
    assert all(n.startswith("npu-0-vir10") for n in vnpus)


def test_a_consumable_chip_serves_both_whole_chip_and_share_claims() -> None:
    """Its request without capacity takes all its memory (domain/chip_sharing/policy.py), so a
    claim through
    the whole-chip class still gets the chip whole."""
    devices = published(consumable=True)
    assert selected(class_selector(WHOLE, driver=DRIVER, profile="npu"), devices) == [
        "npu-0",
        "npu-1",
        "npu-2",
    ]
    assert selected(class_selector(SHARE, driver=DRIVER, profile="npu"), devices) == ["npu-1"]


def test_the_type_attribute_names_the_kind() -> None:
    kinds = {d.name: d.attributes["type"] for d in published(consumable=False)}
    assert kinds["npu-0"] == "npu"
    assert kinds["npu-1-share-0"] == "share"
    assert {v for n, v in kinds.items() if n.startswith("npu-0-vir")} == {"vnpu"}


def test_devices_an_older_version_published_keep_their_class() -> None:
    """No `type`: a node not yet upgraded still serves whole-chip claims, and never a share or
    a vNPU through the whole-chip class."""
    older = [
        PublishedDevice(d.name, {k: v for k, v in d.attributes.items() if k != "type"})
        for d in published(consumable=False)
    ]
    assert selected(class_selector(WHOLE, driver=DRIVER, profile="npu"), older) == [
        "npu-0",
        "npu-2",
    ]
    shares = selected(class_selector(SHARE, driver=DRIVER, profile="npu"), older)
    assert shares == ["npu-1-share-0", "npu-1-share-1"]
    assert all(
        TEMPLATE_ATTRIBUTE in d.attributes
        for d in older
        if d.name in selected(class_selector(VNPU, driver=DRIVER, profile="npu"), older)
    )


def test_a_claim_in_huaweis_form_selects_our_chips() -> None:
    devices = published(consumable=False)
    a = f'device.attributes["{DRIVER}"]'
    chosen = selected(f'{a}.physicId in [0, 2] && {a}.deviceType == "Ascend910B"', devices)
    assert "npu-0" in chosen
    assert "npu-2" in chosen
    assert all(d.attributes["physicId"] == d.attributes["physicalId"] for d in devices)


@pytest.mark.parametrize(
    ("chip_name", "device_type"),
    [
        ("910B4", "Ascend910B"),
        ("910B2C", "Ascend910B"),
        ("910A", "Ascend910"),
        ("910ProB", "Ascend910"),
        ("Ascend910", "Ascend910A3"),
        ("310P3", "Ascend310P"),
        ("310B4", "Ascend310B"),
        ("310", "Ascend310"),
        ("950PR", "Ascend910A5"),
        ("Ascend950PR", "Ascend910A5"),
        ("X1", "AscendX1"),
    ],
)
def test_device_type_is_what_huaweis_device_manager_computes(
    chip_name: str, device_type: str
) -> None:
    assert huawei_device_type(chip_name) == device_type


def test_the_gpu_profile_has_no_vnpu_class() -> None:
    assert kinds_of("gpu") == (WHOLE, SHARE)
    assert [k.class_name("gpu.npu-dra.io") for k in kinds_of("gpu")] == [
        "gpu.npu-dra.io",
        "share.gpu.npu-dra.io",
    ]
