"""A GPU node from a description, for the simulation, demos and tests: NvmlProbe over FakeNvml.

gpu: NVIDIA H100 80GB HBM3   # product name; or replay a recording instead:
count: 8                     #   nvidiaSmiXml: tests/fixtures/nvml/nvidia-smi-q-x_H100.xml
memory: 80Gi                 #   nvmlDump: tests/fixtures/nvml/nvml-dump_H100.json
numaNodes: [0, 0, 0, 0, 1, 1, 1, 1]
computeCapability: "9.0"
sharedDeviceNodes: [nvidiactl, nvidia-uvm, nvidia-uvm-tools]   # under /dev (this default)
"""

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from npu_dra.adapters.hardware.description import GPU_FIELDS, check_description
from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.nvml.host import NvidiaHostPaths
from npu_dra.adapters.hardware.nvml.library import NvmlError
from npu_dra.adapters.hardware.nvml.probe import NvmlProbe
from npu_dra.adapters.hardware.nvml.smi_xml import FakeNvml
from npu_dra.domain.ids import NodeName

SHARED_DEVICE_NODES = ("nvidiactl", "nvidia-uvm", "nvidia-uvm-tools")


def is_gpu_description(description: Mapping[str, Any]) -> bool:
    return "gpu" in description or "nvidiaSmiXml" in description


def fake_gpu_node(
    description: Mapping[str, Any],
    *,
    node: NodeName,
    host: NvidiaHostPaths | None = None,
    base: Path = Path(),
) -> NvmlProbe:
    """The probe a node with these GPUs would be; ProbeError naming what is wrong."""
    try:
        check_description(description, GPU_FIELDS)
        if "nvidiaSmiXml" in description:
            dump = description.get("nvmlDump")
            library = FakeNvml.from_file(
                base / str(description["nvidiaSmiXml"]), base / str(dump) if dump else None
            )
        else:
            library = FakeNvml.from_description(description)
        shared = frozenset(description.get("sharedDeviceNodes", SHARED_DEVICE_NODES))
    except (NvmlError, OSError, KeyError, TypeError, ValueError) as error:
        raise ProbeError(f"GPU node description: {error}") from error
    return NvmlProbe(node=node, library=library, host=host, shared_nodes=shared)
