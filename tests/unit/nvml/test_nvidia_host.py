"""Which NVIDIA device nodes and driver files a host has, and what a container gets of them."""

from pathlib import Path

from npu_dra.adapters.hardware.nvml.host import NvidiaHostPaths
from npu_dra.domain.cdi import runtime_edits
from npu_dra.domain.device import Device, HostFile
from npu_dra.domain.ids import DeviceName
from npu_dra.domain.profile import NVIDIA_GPU


def test_present_nodes_binary_and_libraries_are_reported_and_mounted_with_the_library_path(
    tmp_path: Path,
) -> None:
    dev = tmp_path / "dev"
    dev.mkdir()
    for name in ("nvidia0", "nvidiactl", "nvidia-uvm"):
        (dev / name).touch()
    (tmp_path / "usr/bin").mkdir(parents=True)
    (tmp_path / "usr/bin/nvidia-smi").touch()
    libs = tmp_path / "usr/local/nvidia/lib64"
    libs.mkdir(parents=True)
    (libs / "libnvidia-ml.so.580.159.04").touch()
    (libs / "libnvidia-ml.so.1").symlink_to("libnvidia-ml.so.580.159.04")
    host = NvidiaHostPaths(dev_root=dev, driver_root=tmp_path).host_files()
    assert host.device_nodes == {"nvidiactl", "nvidia-uvm"}
    assert host.driver_files == (
        HostFile(str(tmp_path / "usr/bin/nvidia-smi"), "/usr/bin/nvidia-smi"),
        HostFile(
            str(libs / "libnvidia-ml.so.580.159.04"), "/usr/local/nvidia/lib64/libnvidia-ml.so.1"
        ),
    )
    gpu = Device(DeviceName("gpu-0"), 0, 0, 0, 0, "NVIDIA H100", 1, profile="gpu")
    edits = runtime_edits([gpu], host=host, profile=NVIDIA_GPU)
    assert [n.source for n in edits.device_nodes] == [
        str(dev / "nvidiactl"),
        str(dev / "nvidia-uvm"),
    ]
    assert edits.env == ("LD_LIBRARY_PATH=/usr/local/nvidia/lib64",)


def test_an_arm64_hosts_libraries_are_found_in_its_multiarch_directory(tmp_path: Path) -> None:
    # Debian and Ubuntu arm64 (Kunpeng, Grace) hosts keep the driver's libraries here.
    libs = tmp_path / "usr/lib/aarch64-linux-gnu"
    libs.mkdir(parents=True)
    (libs / "libnvidia-ml.so.1").touch()
    (libs / "libcuda.so.1").touch()
    files = NvidiaHostPaths(dev_root=tmp_path, driver_root=tmp_path).driver_files()
    assert [f.container_path for f in files] == [
        "/usr/local/nvidia/lib64/libnvidia-ml.so.1",
        "/usr/local/nvidia/lib64/libcuda.so.1",
    ]
