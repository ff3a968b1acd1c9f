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


def test_a_driver_mounted_elsewhere_in_the_plugins_container_is_named_by_its_host_path(
    tmp_path: Path,
) -> None:
    # The chart mounts the host's driver root (/run/nvidia/driver under the GPU operator) at
    # /driver-root in the plugin's container: files are found there, but the CDI spec the
    # container runtime reads on the host must name them where they are on the host.
    mounted = tmp_path / "driver-root"
    libs = mounted / "usr/lib/x86_64-linux-gnu"
    libs.mkdir(parents=True)
    (libs / "libcuda.so.580.159.04").touch()
    (libs / "libcuda.so.1").symlink_to("libcuda.so.580.159.04")
    (mounted / "usr/bin").mkdir()
    (mounted / "usr/bin/nvidia-smi").touch()
    paths = NvidiaHostPaths(
        dev_root=tmp_path, driver_root=mounted, host_driver_root=Path("/run/nvidia/driver")
    )
    assert paths.driver_files() == (
        HostFile("/run/nvidia/driver/usr/bin/nvidia-smi", "/usr/bin/nvidia-smi"),
        HostFile(
            "/run/nvidia/driver/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04",
            "/usr/local/nvidia/lib64/libcuda.so.1",
        ),
    )


def test_a_library_link_that_leaves_the_mounted_driver_root_keeps_its_own_name(
    tmp_path: Path,
) -> None:
    # An absolute link resolves inside the plugin's container, not on the host: the link's own
    # path is the one that means the same file on both sides.
    mounted = tmp_path / "driver-root"
    libs = mounted / "usr/lib64"
    libs.mkdir(parents=True)
    outside = tmp_path / "elsewhere.so"
    outside.touch()
    (libs / "libnvidia-ml.so.1").symlink_to(outside)
    paths = NvidiaHostPaths(dev_root=tmp_path, driver_root=mounted, host_driver_root=Path("/"))
    assert paths.driver_files() == (
        HostFile("/usr/lib64/libnvidia-ml.so.1", "/usr/local/nvidia/lib64/libnvidia-ml.so.1"),
    )
