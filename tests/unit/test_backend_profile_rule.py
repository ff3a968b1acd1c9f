"""The backend <-> profile rule, written once in the domain (domain/profile.py): each profile
names the real `--hardware` backend that finds its devices, and both the options and the hardware
adapter refuse a real backend under another profile with the domain's one message."""

from __future__ import annotations

from pathlib import Path

import pytest

from npu_dra.adapters.hardware.choose import check_backend, nvml_probe
from npu_dra.adapters.hardware.nvml.host import NvidiaHostPaths
from npu_dra.app.options import DEVICE_PROFILES, Hardware, OptionError, defaults, hardware
from npu_dra.domain.ids import NodeName
from npu_dra.domain.profile import ASCEND_NPU, NVIDIA_GPU, PROFILES, backend_mismatch

NPU_SMI_UNDER_GPU = "--hardware npu-smi finds npu devices, not gpu: give --device-profile=npu"
NVML_UNDER_NPU = "--hardware nvml finds gpu devices, not npu: give --device-profile=gpu"


def test_each_profile_names_its_real_backend() -> None:
    assert (ASCEND_NPU.real_backend, NVIDIA_GPU.real_backend) == ("npu-smi", "nvml")


@pytest.mark.parametrize(
    ("backend", "profile", "message"),
    [
        ("npu-smi", "gpu", NPU_SMI_UNDER_GPU),
        ("npu_smi", "gpu", NPU_SMI_UNDER_GPU),
        ("nvml", "npu", NVML_UNDER_NPU),
    ],
)
def test_a_real_backend_under_another_profile_gets_the_one_message(
    backend: str, profile: str, message: str
) -> None:
    assert backend_mismatch(backend, profile) == message


@pytest.mark.parametrize(
    ("backend", "profile"),
    [("npu-smi", "npu"), ("npu_smi", "npu"), ("nvml", "gpu"), ("fake", "npu"), ("fake", "gpu")],
)
def test_a_backend_of_the_profile_or_a_fake_one_is_no_mismatch(backend: str, profile: str) -> None:
    assert backend_mismatch(backend, profile) is None


def test_every_profile_is_served_by_the_backend_it_names_in_either_spelling() -> None:
    for profile in PROFILES.values():
        kind = hardware(profile.real_backend).kind  # the options' spelling: npu_smi
        assert backend_mismatch(kind, profile.name) is None
        assert backend_mismatch(profile.real_backend, profile.name) is None
        default = defaults(device_profile=profile.name).hardware
        assert default == Hardware(hardware(profile.default_backend).kind)
        assert backend_mismatch(default.kind, profile.name) is None


def test_ascend_defaults_to_auto_and_nvidia_to_nvml() -> None:
    assert defaults(device_profile="npu").hardware == Hardware("auto")
    assert defaults(device_profile="gpu").hardware == Hardware("nvml")


def test_the_options_offer_exactly_the_domains_profiles() -> None:
    assert tuple(PROFILES) == DEVICE_PROFILES


@pytest.mark.parametrize(
    ("kind", "profile", "message"),
    [("npu_smi", "gpu", NPU_SMI_UNDER_GPU), ("nvml", "npu", NVML_UNDER_NPU)],
)
def test_the_options_refuse_a_mismatch_with_the_domains_message(
    kind: str, profile: str, message: str
) -> None:
    with pytest.raises(OptionError) as raised:
        defaults(device_profile=profile, hardware=Hardware(kind))
    assert str(raised.value) == message


@pytest.mark.parametrize(
    ("backend", "profile", "message"),
    [
        ("npu-smi", "gpu", NPU_SMI_UNDER_GPU),
        ("npu_smi", "gpu", NPU_SMI_UNDER_GPU),
        ("nvml", "npu", NVML_UNDER_NPU),
    ],
)
def test_the_hardware_adapter_refuses_a_mismatch_with_the_domains_message(
    backend: str, profile: str, message: str
) -> None:
    with pytest.raises(ValueError, match=r"^--hardware") as raised:
        check_backend(backend, profile)
    assert str(raised.value) == message


def test_nvml_under_the_npu_profile_is_refused_before_nvml_is_loaded() -> None:
    host = NvidiaHostPaths(dev_root=Path("/nonexistent"))
    with pytest.raises(ValueError, match=r"^--hardware") as raised:
        nvml_probe(node=NodeName("node-1"), host=host, profile="npu")
    assert str(raised.value) == NVML_UNDER_NPU
