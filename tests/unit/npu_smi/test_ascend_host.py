"""What the host offers containers is found on disk by the adapter, and reported as data."""

from pathlib import Path

import pytest

from npu_dra.adapters.hardware.ascend_host import AscendHostPaths
from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.adapters.hardware.npu_smi.probe import NpuSmiProbe
from npu_dra.domain.device import HostFile, HostFiles
from npu_dra.domain.ids import NodeName
from tests.support.fake_npu_smi import FakeNpuSmi, make_dev_root, make_sysfs

NODE = NodeName("node-a")


def driver_tree(root: Path) -> AscendHostPaths:
    """An Ascend host under `root`: npu-smi, driver/lib64, version.info; no dcmi, no info."""
    (root / "Ascend" / "driver" / "lib64").mkdir(parents=True)
    (root / "Ascend" / "driver" / "version.info").write_text("Version=24.1.rc2\n")
    (root / "npu-smi").write_text("#!/bin/sh\n")
    return AscendHostPaths(
        dev_root=root / "dev",
        npu_smi=root / "npu-smi",
        ascend_root=root / "Ascend",
        dcmi_dir=root / "dcmi",
        install_info=root / "ascend_install.info",
    )


def test_only_present_driver_files_are_reported_at_standard_container_paths(
    tmp_path: Path,
) -> None:
    paths = driver_tree(tmp_path)
    assert paths.driver_files() == (
        HostFile(str(tmp_path / "npu-smi"), "/usr/local/bin/npu-smi"),
        HostFile(str(tmp_path / "Ascend/driver/lib64"), "/usr/local/Ascend/driver/lib64"),
        HostFile(
            str(tmp_path / "Ascend/driver/version.info"), "/usr/local/Ascend/driver/version.info"
        ),
    )
    (tmp_path / "dcmi").mkdir()
    (tmp_path / "ascend_install.info").write_text("Driver_Install_Path_Param=/usr/local/Ascend\n")
    assert [f.container_path for f in paths.driver_files()][3:] == [
        "/usr/local/dcmi",
        "/etc/ascend_install.info",
    ]


def test_shared_nodes_are_the_ones_under_the_dev_root(tmp_path: Path) -> None:
    paths = driver_tree(tmp_path)
    make_dev_root(paths.dev_root, [0, 1])  # davinci_manager, devmm_svm, hisi_hdc
    (paths.dev_root / "dvpp_cmdlist").touch()
    assert paths.host_files() == HostFiles(
        str(paths.dev_root),
        frozenset({"davinci_manager", "devmm_svm", "hisi_hdc", "dvpp_cmdlist"}),
        paths.driver_files(),
    )


def test_an_unreadable_path_is_a_probe_error_naming_it(tmp_path: Path) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    with pytest.raises(ProbeError, match="file/davinci_manager"):
        AscendHostPaths(dev_root=not_a_dir).shared_nodes()


def test_the_npu_smi_probe_reports_the_host_with_its_devices(tmp_path: Path) -> None:
    paths = driver_tree(tmp_path)
    fake = FakeNpuSmi.from_scenario("910B3_8npu", tmp_path / "fake")
    make_dev_root(paths.dev_root, range(fake.davinci_count))
    inventory = NpuSmiProbe(
        node=NODE,
        npu_smi=fake.path,
        sysfs_root=make_sysfs(tmp_path / "sys"),
        dev_root=paths.dev_root,
        ascend_root=paths.ascend_root,
        dcmi_dir=paths.dcmi_dir,
        install_info=paths.install_info,
    ).probe()
    assert inventory.host.dev_root == str(paths.dev_root)
    assert inventory.host.device_nodes == {"davinci_manager", "devmm_svm", "hisi_hdc"}
    assert HostFile(str(fake.path), "/usr/local/bin/npu-smi") in inventory.host.driver_files
    assert len(inventory.host.driver_files) == 3


def test_fake_hardware_says_which_shared_nodes_exist_and_checks_driver_files(
    tmp_path: Path,
) -> None:
    paths = driver_tree(tmp_path)
    described = {"chip": "310B4", "count": 1, "sharedDeviceNodes": ["davinci_manager_docker"]}
    host = FakeHardware(described, node=NODE, host=paths).probe().host
    assert host == HostFiles(
        str(paths.dev_root), frozenset({"davinci_manager_docker"}), paths.driver_files()
    )
    alone = FakeHardware({"chip": "910B4", "count": 1}, node=NODE).probe().host
    assert alone == HostFiles("/dev", frozenset({"davinci_manager", "devmm_svm", "hisi_hdc"}), ())


def test_fake_hardware_refuses_a_shared_node_list_that_is_not_names() -> None:
    with pytest.raises(ProbeError, match="sharedDeviceNodes"):
        FakeHardware(
            {"chip": "910B4", "count": 1, "sharedDeviceNodes": "hisi_hdc"}, node=NODE
        ).probe()
