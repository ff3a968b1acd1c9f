"""What a container with Ascend chips gets, per ascend-facts B.1-B.3, from data alone.

The host side (which shared nodes and driver files exist, where the device nodes live) comes in
as `HostFiles`, the way the hardware adapter reports it; nothing here touches the filesystem.
"""

import pytest

from npu_dra.domain.cdi import (
    CdiSpec,
    DeviceNode,
    Mount,
    claim_cdi_spec,
    minimum_version,
    runtime_edits,
)
from npu_dra.domain.device import Device, HostFile, HostFiles
from npu_dra.domain.errors import PrepareError
from npu_dra.domain.ids import ClaimUID, DeviceName, DriverName
from npu_dra.domain.profile import ASCEND_NPU

UID = ClaimUID("c937b261-3809-5c37-bb79-242dfdf6b5d2")
DRIVER = DriverName("npu.huawei.com")
ALL_NODES = frozenset(
    {"davinci_manager", "davinci_manager_docker", "devmm_svm", "hisi_hdc", "dvpp_cmdlist"}
)
LIB64 = HostFile("/opt/ascend/driver/lib64", "/usr/local/Ascend/driver/lib64")
NPU_SMI = HostFile("/opt/bin/npu-smi", "/usr/local/bin/npu-smi")
LD_LIBRARY_PATH = (
    "LD_LIBRARY_PATH=/usr/local/Ascend/driver/lib64/common:/usr/local/Ascend/driver/lib64/driver"
)


def chip(physical_id: int, chip_name: str = "910B4") -> Device:
    return Device(
        DeviceName(f"npu-{physical_id}"), physical_id, physical_id, 0, 0, chip_name, 1 << 30
    )


def spec(devices: list[Device], host: HostFiles) -> CdiSpec:
    return claim_cdi_spec(UID, devices, driver=DRIVER, profile=ASCEND_NPU, host=host)


def shared_paths(chip_name: str, present: frozenset[str]) -> list[str]:
    edits = runtime_edits(
        [chip(0, chip_name)], host=HostFiles(device_nodes=present), profile=ASCEND_NPU
    )
    return [n.path for n in edits.device_nodes]


def test_a_chip_node_is_dev_davinci_n_inside_and_under_the_dev_root_outside() -> None:
    made = spec([chip(3)], HostFiles("/tmp/node/dev", frozenset({"davinci_manager"})))
    assert made.devices[0].edits.device_nodes == (
        DeviceNode("/dev/davinci3", "/tmp/node/dev/davinci3"),
    )
    assert made.edits.device_nodes == (
        DeviceNode("/dev/davinci_manager", "/tmp/node/dev/davinci_manager"),
    )


def test_with_the_dev_root_at_dev_no_host_path_is_written_and_cdi_0_3_0_suffices() -> None:
    made = spec([chip(3)], HostFiles(device_nodes=frozenset({"davinci_manager"})))
    assert made.devices[0].edits.device_nodes == (DeviceNode("/dev/davinci3"),)
    assert made.version == "0.3.0"


def test_a_host_path_needs_cdi_0_5_0() -> None:
    assert spec([chip(0)], HostFiles("/srv/dev", frozenset({"davinci_manager"}))).version == "0.5.0"


@pytest.mark.parametrize(
    ("chip_name", "expected"),
    [
        ("910B4", ["davinci_manager", "devmm_svm", "hisi_hdc", "dvpp_cmdlist"]),
        ("Ascend910", ["davinci_manager", "devmm_svm", "hisi_hdc", "dvpp_cmdlist"]),
        ("310P3", ["davinci_manager", "devmm_svm", "hisi_hdc", "dvpp_cmdlist"]),
        ("310B4", ["davinci_manager", "dvpp_cmdlist"]),  # no devmm_svm / hisi_hdc on 310B
        ("950PR", ["davinci_manager", "hisi_hdc"]),  # 950 keeps only hisi_hdc, no dvpp
    ],
)
def test_shared_nodes_follow_the_chip_family(chip_name: str, expected: list[str]) -> None:
    present = ALL_NODES - {"davinci_manager_docker"}
    assert shared_paths(chip_name, present) == [f"/dev/{n}" for n in expected]


def test_only_shared_nodes_the_host_has_are_injected() -> None:
    assert shared_paths("910B4", frozenset({"davinci_manager", "hisi_hdc"})) == [
        "/dev/davinci_manager",
        "/dev/hisi_hdc",
    ]


def test_a_310b_host_s_docker_manager_node_is_mapped_to_davinci_manager() -> None:
    edits = runtime_edits(
        [chip(0, "310B4")], host=HostFiles(device_nodes=ALL_NODES), profile=ASCEND_NPU
    )
    assert edits.device_nodes[0] == DeviceNode(
        "/dev/davinci_manager", "/dev/davinci_manager_docker"
    )


@pytest.mark.parametrize("chip_name", ["910B4", "310B4", "950PR"])
def test_a_host_without_davinci_manager_is_an_error_naming_the_node(chip_name: str) -> None:
    host = HostFiles(device_nodes=frozenset({"devmm_svm", "hisi_hdc"}))
    with pytest.raises(PrepareError, match=r"/dev/.*davinci_manager is missing"):
        spec([chip(0, chip_name)], host)


def test_driver_files_are_mounted_read_only_with_the_library_path() -> None:
    host = HostFiles(device_nodes=frozenset({"davinci_manager"}), driver_files=(NPU_SMI, LIB64))
    made = spec([chip(1), chip(0)], host)
    assert made.edits.mounts == (
        Mount("/opt/ascend/driver/lib64", "/usr/local/Ascend/driver/lib64"),
        Mount("/opt/bin/npu-smi", "/usr/local/bin/npu-smi"),
    )
    assert all("ro" in m.options and "bind" in m.options for m in made.edits.mounts)
    assert made.edits.env == ("ASCEND_VISIBLE_DEVICES=0,1", LD_LIBRARY_PATH)


def test_without_the_driver_libraries_no_library_path_is_set() -> None:
    host = HostFiles(device_nodes=frozenset({"davinci_manager"}), driver_files=(NPU_SMI,))
    assert spec([chip(2)], host).edits.env == ("ASCEND_VISIBLE_DEVICES=2",)


def test_the_spec_is_a_pure_function_of_devices_and_host() -> None:
    host = HostFiles("/srv/dev", ALL_NODES, (LIB64, NPU_SMI))
    assert spec([chip(4), chip(1)], host) == spec([chip(1), chip(4), chip(1)], host)


def test_minimum_version_reads_names_and_host_paths() -> None:
    made = spec([chip(0)], HostFiles(device_nodes=frozenset({"davinci_manager"})))
    digit_led = claim_cdi_spec(
        ClaimUID("722c0d8b-bc28-5d72-86fc-ebf33a5ce0f2"),
        [chip(0)],
        driver=DRIVER,
        profile=ASCEND_NPU,
        host=HostFiles(device_nodes=frozenset({"davinci_manager"})),
    )
    assert (minimum_version(made), minimum_version(digit_led)) == ("0.3.0", "0.5.0")
