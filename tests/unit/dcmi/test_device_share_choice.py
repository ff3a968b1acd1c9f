"""Which adapter turns a chip's sharing mode on, for each `--hardware` backend: fake hardware's
own (the node's one), none for GPUs, DCMI where its library has the calls, npu-smi otherwise."""

import logging
from pathlib import Path

import pytest

from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.adapters.hardware.npu_smi.sharing_mode import NpuSmiSharingMode
from npu_dra.adapters.hardware.nvml.fake import fake_gpu_node
from npu_dra.adapters.hardware.nvml.sharing_mode import TimeSlicedGpus
from npu_dra.adapters.hardware.sharing_mode_choice import device_share_for
from npu_dra.domain.ids import NodeName
from tests.support.dcmi_stub import StubHost, dcmi_probe

NODE = NodeName("node-a")
NPU_SMI = Path("/usr/local/bin/npu-smi")


def test_fake_hardware_keeps_one_sharing_mode_for_its_node() -> None:
    hardware = FakeHardware({"chip": "310P3", "count": 2}, node=NODE)
    chosen = device_share_for("fake", hardware, NPU_SMI)
    assert chosen is hardware.device_share()


def test_gpus_need_no_mode() -> None:
    gpus = fake_gpu_node({"gpu": "NVIDIA A100-SXM4-80GB", "count": 2}, node=NODE)
    assert isinstance(device_share_for("fake", gpus, NPU_SMI), TimeSlicedGpus)


def test_npu_smi_nodes_use_npu_smi() -> None:
    hardware = FakeHardware({"chip": "910B4", "count": 1}, node=NODE)
    assert isinstance(device_share_for("npu_smi", _Plain(hardware), NPU_SMI), NpuSmiSharingMode)


def test_a_dcmi_library_without_the_calls_falls_back_to_npu_smi_and_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    probe = dcmi_probe(StubHost.from_scenario("310P3_300IDuo_3cards", tmp_path))
    with caplog.at_level(logging.WARNING):
        chosen = device_share_for("dcmi", probe, NPU_SMI)
    assert isinstance(chosen, NpuSmiSharingMode)
    assert "libdcmi.so lacks dcmi_get_device_share_enable" in caplog.text


class _Plain:
    """A probe that is not fake hardware (as NpuSmiProbe is not)."""

    def __init__(self, hardware: FakeHardware) -> None:
        self.probe = hardware.probe
