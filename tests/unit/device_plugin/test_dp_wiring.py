"""Resource names, socket names and hardware selection for the device plugin mode."""

from pathlib import Path

import attrs
import pytest

from npu_dra.adapters.grpc.device_plugin.allocate import AllocateSettings, container_allocation
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.app.device_plugin.flags import DevicePluginConfig
from npu_dra.app.device_plugin.wiring import (
    build_runtime,
    hardware_probe,
    resource_names,
    socket_name,
)
from npu_dra.domain.profile import NVIDIA_GPU

FAMILIES = ["Ascend310P", "Ascend910"]


def test_one_resource_per_family_under_the_profile_prefix() -> None:
    assert resource_names(FAMILIES, override="", prefix="huawei.com") == {
        "Ascend310P": "huawei.com/Ascend310P",
        "Ascend910": "huawei.com/Ascend910",
    }


def test_a_single_override_needs_a_single_family() -> None:
    assert resource_names(["Ascend910"], override="example.com/npu", prefix="huawei.com") == {
        "Ascend910": "example.com/npu"
    }
    with pytest.raises(ValueError, match="FAMILY=NAME"):
        resource_names(FAMILIES, override="example.com/npu", prefix="huawei.com")


def test_per_family_overrides() -> None:
    names = resource_names(FAMILIES, override="Ascend910=example.com/train", prefix="huawei.com")
    assert names == {"Ascend310P": "huawei.com/Ascend310P", "Ascend910": "example.com/train"}


@pytest.mark.parametrize("bad", ["npu", "kubernetes.io/npu", "Example.com/npu", "a.com/"])
def test_names_the_kubelet_would_refuse_are_refused_here(bad: str) -> None:
    with pytest.raises(ValueError, match="extended resource name"):
        resource_names(["Ascend910"], override=bad, prefix="huawei.com")


def test_socket_names_are_per_family() -> None:
    assert socket_name("Ascend310P") == "npu-dra-ascend310p.sock"


def config(hardware: str) -> DevicePluginConfig:
    return DevicePluginConfig(
        node_name="node-a",
        plugin_dir=Path("/tmp/dp"),
        resource_names="",
        health_interval=5,
        cdi_enabled=False,
        cdi_root=Path("/etc/cdi"),
        driver_name="npu.huawei.com",
        device_profile="npu",
        hardware=hardware,
        npu_smi_path=Path("/usr/local/bin/npu-smi"),
        driver_mounts=(),
        log_level="INFO",
    )


def test_fake_hardware_reads_a_description_file(tmp_path: Path) -> None:
    description = tmp_path / "node.yaml"
    description.write_text("chip: 910B4\ncount: 2\n")
    probe = hardware_probe(config(f"fake:{description}"))
    assert isinstance(probe, FakeHardware)
    assert [d.name for d in probe.probe().devices] == ["npu-0", "npu-1"]


def test_unknown_hardware_is_refused() -> None:
    with pytest.raises(ValueError, match="--hardware"):
        hardware_probe(config("dcmi"))


def test_npu_smi_hardware_is_the_npu_smi_probe_and_runs_nothing_yet() -> None:
    from npu_dra.adapters.hardware.npu_smi.probe import NpuSmiProbe

    assert isinstance(hardware_probe(config("npu-smi")), NpuSmiProbe)


def test_a_gpu_node_serves_nvidia_com_gpu_and_allocates_by_uuid(tmp_path: Path) -> None:
    description = tmp_path / "node.yaml"
    description.write_text("gpu: NVIDIA A100-SXM4-80GB\ncount: 2\n")
    gpu = attrs.evolve(
        config(f"fake:{description}"), device_profile="gpu", driver_name="gpu.npu-dra.io"
    )
    probe = hardware_probe(gpu)
    [plugin] = build_runtime(gpu, probe).plugins
    assert plugin.resource_name == "nvidia.com/gpu"

    inventory = probe.probe()
    settings = AllocateSettings(NVIDIA_GPU, host=inventory.host)
    answer = container_allocation(inventory.devices, ["gpu-1"], settings)
    assert dict(answer.envs)["NVIDIA_VISIBLE_DEVICES"] == inventory.devices[1].uuid
    assert [n.path for n in answer.device_nodes][:2] == ["/dev/nvidia1", "/dev/nvidiactl"]
