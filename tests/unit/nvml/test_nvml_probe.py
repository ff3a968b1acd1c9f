"""NvmlProbe over the fake NVML replaying a real H100's `nvidia-smi -q -x` (and NVML dump)."""

import json
from pathlib import Path

import pytest

from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.nvml.library import NvmlError
from npu_dra.adapters.hardware.nvml.probe import NvmlProbe
from npu_dra.adapters.hardware.nvml.smi_xml import FakeNvml
from npu_dra.domain.attributes import Version
from npu_dra.domain.cdi import claim_cdi_spec
from npu_dra.domain.device import Health
from npu_dra.domain.ids import ClaimUID, DriverName, NodeName
from npu_dra.domain.pool import PCI_BUS_ID, published_device
from npu_dra.domain.profile import NVIDIA_GPU

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "nvml"
H100_XML = FIXTURES / "nvidia-smi-q-x_H100.xml"
H100_DUMP = FIXTURES / "nvml-dump_H100.json"
H100_UUID = "GPU-c4a99447-5dcb-8716-f7a2-6c7507bc0582"
SHARED = frozenset({"nvidiactl", "nvidia-uvm", "nvidia-uvm-tools"})


def h100() -> FakeNvml:
    return FakeNvml.from_file(H100_XML, H100_DUMP)


def probe(library: FakeNvml) -> NvmlProbe:
    return NvmlProbe(node=NodeName("gpu-node"), library=library, shared_nodes=SHARED)


def test_every_recording_keeps_its_source_on_the_first_line() -> None:
    for path in FIXTURES.iterdir():
        first = path.read_text().splitlines()[0]
        if path.suffix == ".json":
            assert "source" in json.loads(path.read_text())
        else:
            assert first.startswith("# source: real NVIDIA"), path.name


def test_the_recorded_h100_is_one_gpu_with_nvml_s_facts() -> None:
    [gpu] = probe(h100()).probe().devices
    assert (gpu.name, gpu.physical_id, gpu.logic_id) == ("gpu-0", 0, 0)
    assert gpu.chip_name == "NVIDIA H100 80GB HBM3"
    assert gpu.memory_bytes == 85520809984  # 81559 MiB, what NVML's memory_total said
    assert gpu.uuid == H100_UUID
    assert gpu.pci_bus_id == "0000:00:06.0"
    assert gpu.numa_node is None  # NVML: Not Supported on this VM
    assert gpu.health is Health.HEALTHY


def test_published_attributes_follow_nvidia_s_names_with_versions() -> None:
    [gpu] = probe(h100()).probe().devices
    attributes = published_device(gpu).attributes
    assert attributes["uuid"] == H100_UUID
    assert attributes["productName"] == "NVIDIA H100 80GB HBM3"
    assert (attributes["index"], attributes["minor"]) == (0, 0)
    assert attributes["cudaComputeCapability"] == Version("9.0.0")
    assert attributes["driverVersion"] == Version("580.159.4")
    assert attributes["cudaDriverVersion"] == Version("13.0.0")
    assert attributes["migEnabled"] is False
    assert attributes[PCI_BUS_ID] == "0000:00:06.0"
    assert published_device(gpu).capacity["memory"].text == "81559Mi"


@pytest.mark.parametrize(("xid", "health"), [(79, Health.UNHEALTHY), (13, Health.HEALTHY)])
def test_a_critical_xid_makes_the_gpu_unhealthy_for_good_application_xids_do_not(
    xid: int, health: Health
) -> None:
    library = h100()
    gpus = probe(library)
    library.inject_xids([(H100_UUID, xid)])
    assert gpus.probe().devices[0].health is health
    assert gpus.probe().devices[0].health is health  # sticky: no new event, same answer


def test_an_nvml_failure_is_a_probe_error_never_a_shorter_list() -> None:
    library = h100()
    library.fail_with = NvmlError("nvmlInit: Driver Not Loaded")
    with pytest.raises(ProbeError, match="Driver Not Loaded"):
        probe(library).probe()
    library.fail_with, library.broken_gpu = None, 0
    with pytest.raises(ProbeError, match="GPU is lost"):
        probe(library).probe()


def test_a_recording_without_a_needed_field_is_refused_naming_it() -> None:
    text = H100_XML.read_text().replace("<minor_number>0</minor_number>", "")
    with pytest.raises(NvmlError, match="minor_number"):
        FakeNvml.from_smi_xml(text)


def test_without_the_nvml_dump_the_architecture_gives_the_compute_capability() -> None:
    [gpu] = probe(FakeNvml.from_smi_xml(H100_XML.read_text())).probe().devices
    assert published_device(gpu).attributes["cudaComputeCapability"] == Version("9.0.0")


def test_the_gpu_cdi_spec_injects_its_node_nvidiactl_uvm_and_visible_uuid() -> None:
    inventory = probe(h100()).probe()
    spec = claim_cdi_spec(
        ClaimUID("c937b261-3809-5c37-bb79-242dfdf6b5d2"),
        inventory.devices,
        driver=DriverName(NVIDIA_GPU.default_driver),
        profile=NVIDIA_GPU,
        host=inventory.host,
    )
    assert spec.kind == "k8s.gpu.npu-dra.io/gpu"
    assert [n.path for n in spec.devices[0].edits.device_nodes] == ["/dev/nvidia0"]
    assert [n.path for n in spec.edits.device_nodes] == [
        "/dev/nvidiactl",
        "/dev/nvidia-uvm",
        "/dev/nvidia-uvm-tools",
    ]
    assert spec.edits.env == (f"NVIDIA_VISIBLE_DEVICES={H100_UUID}",)


def test_a_described_gpu_node_has_deterministic_uuids_and_numa_nodes() -> None:
    description = {"gpu": "NVIDIA A100-SXM4-80GB", "count": 2, "numaNodes": [0, 1]}
    first = probe(FakeNvml.from_description(description)).probe()
    again = probe(FakeNvml.from_description(description)).probe()
    assert [d.uuid for d in first.devices] == [d.uuid for d in again.devices]
    assert len({d.uuid for d in first.devices}) == 2
    assert [d.numa_node for d in first.devices] == [0, 1]
