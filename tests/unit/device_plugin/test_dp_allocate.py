"""Allocate's answer is computed from the inventory alone, and refuses what it cannot honour."""

import pytest

from npu_dra.domain.cdi import DeviceNode, Mount
from npu_dra.domain.device import Device, Health, HostFile, HostFiles
from npu_dra.domain.device_plugin_allocation import (
    AllocateSettings,
    MissingHostFiles,
    TooManyDevices,
    UnhealthyDevices,
    UnknownDevices,
    check_sizes,
    container_allocation,
)
from npu_dra.domain.ids import DeviceName
from npu_dra.domain.profile import ASCEND_NPU
from npu_dra.domain.static_cdi import static_spec

DEVICES = tuple(Device(DeviceName(f"npu-{i}"), i, i, i, 0, "910B4", 32 << 30) for i in range(4))
MOUNTS = (Mount("/usr/local/Ascend", "/usr/local/Ascend"),)
SERVER = HostFiles(device_nodes=frozenset({"davinci_manager", "devmm_svm", "hisi_hdc"}))
TEST_NODE = HostFiles(
    "/tmp/node/dev",
    frozenset({"davinci_manager", "hisi_hdc"}),
    (
        HostFile("/opt/npu-smi", "/usr/local/bin/npu-smi"),
        HostFile("/opt/Ascend/driver/lib64", "/usr/local/Ascend/driver/lib64"),
    ),
)


def settings(
    mounts: tuple[Mount, ...] = (), cdi_kind: str | None = None, host: HostFiles = SERVER
) -> AllocateSettings:
    return AllocateSettings(ASCEND_NPU, mounts, cdi_kind, host)


def test_device_nodes_and_visible_devices_follow_physical_ids() -> None:
    allocation = container_allocation(DEVICES, ["npu-3", "npu-1"], settings(MOUNTS))
    assert allocation.envs == (("ASCEND_VISIBLE_DEVICES", "1,3"),)
    assert [n.path for n in allocation.device_nodes] == [
        "/dev/davinci1",
        "/dev/davinci3",
        "/dev/davinci_manager",
        "/dev/devmm_svm",
        "/dev/hisi_hdc",
    ]
    assert all(n.source == n.path for n in allocation.device_nodes)
    assert allocation.mounts == (Mount("/usr/local/Ascend", "/usr/local/Ascend"),)
    assert allocation.cdi_devices == ()


def test_host_paths_driver_files_and_library_path_come_from_the_host() -> None:
    allocation = container_allocation(DEVICES, ["npu-2"], settings(host=TEST_NODE))
    assert allocation.device_nodes == (
        DeviceNode("/dev/davinci2", "/tmp/node/dev/davinci2"),
        DeviceNode("/dev/davinci_manager", "/tmp/node/dev/davinci_manager"),
        DeviceNode("/dev/hisi_hdc", "/tmp/node/dev/hisi_hdc"),
    )
    assert [(m.host_path, m.container_path) for m in allocation.mounts] == [
        ("/opt/Ascend/driver/lib64", "/usr/local/Ascend/driver/lib64"),
        ("/opt/npu-smi", "/usr/local/bin/npu-smi"),
    ]
    assert dict(allocation.envs) == {
        "ASCEND_VISIBLE_DEVICES": "2",
        "LD_LIBRARY_PATH": "/usr/local/Ascend/driver/lib64/common"
        ":/usr/local/Ascend/driver/lib64/driver",
    }


def test_extra_mounts_never_take_a_container_path_a_driver_file_has() -> None:
    extra = (Mount("/elsewhere/npu-smi", "/usr/local/bin/npu-smi"), *MOUNTS)
    allocation = container_allocation(DEVICES, ["npu-2"], settings(extra, host=TEST_NODE))
    assert [m.host_path for m in allocation.mounts] == [
        "/opt/Ascend/driver/lib64",
        "/opt/npu-smi",
        "/usr/local/Ascend",
    ]


def test_allocate_and_the_static_spec_carry_the_same_content() -> None:
    allocation = container_allocation(DEVICES, ["npu-1"], settings(MOUNTS, host=TEST_NODE))
    spec = static_spec(DEVICES, kind="k8s.x/npu", profile=ASCEND_NPU, mounts=MOUNTS, host=TEST_NODE)
    from_spec = (*spec.devices[1].edits.device_nodes, *spec.edits.device_nodes)
    assert allocation.device_nodes == from_spec
    assert allocation.mounts == spec.edits.mounts
    assert [f"{k}={v}" for k, v in allocation.envs[1:]] == list(spec.edits.env)


def test_a_host_without_davinci_manager_refuses_naming_it() -> None:
    with pytest.raises(MissingHostFiles, match="davinci_manager is missing"):
        container_allocation(DEVICES, ["npu-0"], settings(host=HostFiles()))


def test_cdi_names_are_qualified_with_the_kind_when_enabled() -> None:
    allocation = container_allocation(
        DEVICES, ["npu-2"], settings(cdi_kind="k8s.npu.huawei.com/npu")
    )
    assert allocation.cdi_devices == ("k8s.npu.huawei.com/npu=npu-2",)


def test_the_same_ids_always_give_the_same_answer() -> None:
    same = settings(MOUNTS, "k8s.x/npu")
    first = container_allocation(DEVICES, ["npu-0", "npu-2", "npu-2"], same)
    assert first == container_allocation(reversed(DEVICES), ["npu-2", "npu-0"], same)


def test_unknown_ids_are_all_named() -> None:
    with pytest.raises(UnknownDevices, match="npu-7, npu-9"):
        container_allocation(DEVICES, ["npu-9", "npu-0", "npu-7"], settings())


@pytest.mark.parametrize("health", [Health.UNHEALTHY, Health.UNKNOWN])
def test_unusable_devices_are_refused(health: Health) -> None:
    devices = (*DEVICES[:3], Device(DeviceName("npu-3"), 3, 3, 3, 0, "910B4", 1, health=health))
    with pytest.raises(UnhealthyDevices, match=f"npu-3 \\({health.value}\\)"):
        container_allocation(devices, ["npu-0", "npu-3"], settings())


def test_a_degraded_device_is_still_allocated() -> None:
    devices = (Device(DeviceName("npu-0"), 0, 0, 0, 0, "910B4", 1, health=Health.DEGRADED),)
    assert container_allocation(devices, ["npu-0"], settings()).device_nodes


def test_a_huge_list_of_unknown_ids_gives_a_short_error() -> None:
    ids = [f"ghost-{i}-" + "x" * 4000 for i in range(1000)]
    with pytest.raises(UnknownDevices) as refused:
        container_allocation(DEVICES, ids, AllocateSettings(ASCEND_NPU))
    assert len(str(refused.value)) < 1000
    assert str(refused.value).endswith("and 992 more")


def test_more_ids_than_the_node_has_devices_are_refused_before_any_lookup() -> None:
    with pytest.raises(TooManyDevices, match="asks for 1000 device ids; this node has 4"):
        check_sizes([["npu-0"], ["npu-0"] * 1000], 4)
