"""Allocate's answer is computed from the inventory alone, and refuses what it cannot honour."""

import pytest

from npu_dra.adapters.grpc.device_plugin.allocate import (
    AllocateSettings,
    DriverMount,
    TooManyDevices,
    UnhealthyDevices,
    UnknownDevices,
    check_sizes,
    container_allocation,
)
from npu_dra.domain.device import Device, Health
from npu_dra.domain.ids import DeviceName
from npu_dra.domain.profile import ASCEND_NPU

DEVICES = tuple(Device(DeviceName(f"npu-{i}"), i, i, i, 0, "910B4", 32 << 30) for i in range(4))
MOUNTS = (DriverMount("/usr/local/Ascend", "/usr/local/Ascend"),)


def test_device_nodes_and_visible_devices_follow_physical_ids() -> None:
    allocation = container_allocation(
        DEVICES, ["npu-3", "npu-1"], AllocateSettings(ASCEND_NPU, MOUNTS)
    )
    assert allocation.envs == (("ASCEND_VISIBLE_DEVICES", "1,3"),)
    assert allocation.device_nodes == (
        "/dev/davinci1",
        "/dev/davinci3",
        "/dev/davinci_manager",
        "/dev/devmm_svm",
        "/dev/hisi_hdc",
    )
    assert allocation.mounts == MOUNTS
    assert allocation.cdi_devices == ()


def test_cdi_names_are_qualified_with_the_kind_when_enabled() -> None:
    settings = AllocateSettings(ASCEND_NPU, cdi_kind="k8s.npu.huawei.com/npu")
    allocation = container_allocation(DEVICES, ["npu-2"], settings)
    assert allocation.cdi_devices == ("k8s.npu.huawei.com/npu=npu-2",)


def test_the_same_ids_always_give_the_same_answer() -> None:
    settings = AllocateSettings(ASCEND_NPU, MOUNTS, "k8s.x/npu")
    first = container_allocation(DEVICES, ["npu-0", "npu-2", "npu-2"], settings)
    assert first == container_allocation(reversed(DEVICES), ["npu-2", "npu-0"], settings)


def test_unknown_ids_are_all_named() -> None:
    with pytest.raises(UnknownDevices, match="npu-7, npu-9"):
        container_allocation(DEVICES, ["npu-9", "npu-0", "npu-7"], AllocateSettings(ASCEND_NPU))


@pytest.mark.parametrize("health", [Health.UNHEALTHY, Health.UNKNOWN])
def test_unusable_devices_are_refused(health: Health) -> None:
    devices = (*DEVICES[:3], Device(DeviceName("npu-3"), 3, 3, 3, 0, "910B4", 1, health=health))
    with pytest.raises(UnhealthyDevices, match=f"npu-3 \\({health.value}\\)"):
        container_allocation(devices, ["npu-0", "npu-3"], AllocateSettings(ASCEND_NPU))


def test_a_degraded_device_is_still_allocated() -> None:
    devices = (Device(DeviceName("npu-0"), 0, 0, 0, 0, "910B4", 1, health=Health.DEGRADED),)
    assert container_allocation(devices, ["npu-0"], AllocateSettings(ASCEND_NPU)).device_nodes


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/usr/local/bin/npu-smi", DriverMount("/usr/local/bin/npu-smi", "/usr/local/bin/npu-smi")),
        (
            "/opt/driver:/usr/local/Ascend/driver",
            DriverMount("/opt/driver", "/usr/local/Ascend/driver"),
        ),
    ],
)
def test_driver_mounts_parse_host_and_optional_container_path(
    text: str, expected: DriverMount
) -> None:
    assert DriverMount.parse(text) == expected


@pytest.mark.parametrize("text", ["relative/path", "/host:relative", ""])
def test_driver_mounts_must_be_absolute(text: str) -> None:
    with pytest.raises(ValueError, match="driver mount"):
        DriverMount.parse(text)


def test_a_huge_list_of_unknown_ids_gives_a_short_error() -> None:
    ids = [f"ghost-{i}-" + "x" * 4000 for i in range(1000)]
    with pytest.raises(UnknownDevices) as refused:
        container_allocation(DEVICES, ids, AllocateSettings(ASCEND_NPU))
    assert len(str(refused.value)) < 1000
    assert str(refused.value).endswith("and 992 more")


def test_more_ids_than_the_node_has_devices_are_refused_before_any_lookup() -> None:
    with pytest.raises(TooManyDevices, match="asks for 1000 device ids; this node has 4"):
        check_sizes([["npu-0"], ["npu-0"] * 1000], 4)
