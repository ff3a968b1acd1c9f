"""The real PynvmlLibrary over a stand-in pynvml answering from the NVML dump recorded on the
H100: it must read what the fake NVML replays from that machine's `nvidia-smi -q -x`."""

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from npu_dra.adapters.hardware.nvml import pynvml_library
from npu_dra.adapters.hardware.nvml.library import NvmlError
from npu_dra.adapters.hardware.nvml.pynvml_library import PynvmlLibrary, nvidia_smi_word
from npu_dra.adapters.hardware.nvml.smi_xml import FakeNvml

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parents[1] / "fixtures" / "nvml"
H100_UUID = "GPU-c4a99447-5dcb-8716-f7a2-6c7507bc0582"


@pytest.fixture
def recorded_nvml(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location("fake_pynvml", HERE / "fake_pynvml/pynvml.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(pynvml_library, "pynvml", module)
    return module


def test_nvml_and_nvidia_smi_recorded_on_one_h100_give_the_same_gpu(
    recorded_nvml: ModuleType,
) -> None:
    library = PynvmlLibrary()
    replayed = FakeNvml.from_file(FIXTURES / "nvidia-smi-q-x_H100.xml")
    assert library.gpus() == replayed.gpus()
    assert library.system() == replayed.system()
    assert library.gpus()[0].numa_node is None  # "Not Supported" on that VM: no attribute


def test_xid_events_are_drained_without_waiting(recorded_nvml: ModuleType) -> None:
    library = PynvmlLibrary()
    assert library.critical_xids() == ()
    recorded_nvml.XIDS.extend([(0, 79), (0, 13)])
    assert library.critical_xids() == ((H100_UUID, 79), (H100_UUID, 13))
    assert library.critical_xids() == ()


def test_an_nvml_failure_names_the_call(
    recorded_nvml: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    def not_loaded() -> None:
        raise recorded_nvml.NVMLError(9, "Driver Not Loaded")

    monkeypatch.setattr(recorded_nvml, "nvmlInit", not_loaded)
    with pytest.raises(NvmlError, match="nvmlInit: Driver Not Loaded"):
        PynvmlLibrary().gpus()


@pytest.mark.parametrize(
    ("constant", "word"),
    [
        ("NVML_BRAND_NVIDIA", "NVIDIA"),
        ("NVML_BRAND_GEFORCE_RTX", "GeForce RTX"),
        ("NVML_BRAND_TESLA", "Tesla"),
        ("NVML_DEVICE_ARCH_ADA", "Ada Lovelace"),
        ("NVML_DEVICE_ARCH_HOPPER", "Hopper"),
    ],
)
def test_nvml_enums_read_as_nvidia_smi_prints_them(constant: str, word: str) -> None:
    prefix = "NVML_BRAND_" if "BRAND" in constant else "NVML_DEVICE_ARCH_"
    assert nvidia_smi_word(constant, prefix) == word
