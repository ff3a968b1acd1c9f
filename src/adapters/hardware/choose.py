"""Which HardwareProbe a `--hardware` choice means, for every composition root alike.

`npu-smi` and `nvml` are the real backends (each imported only when chosen); `fake:FILE` (or an
inline description) answers from a node description: Ascend chips (`chip:`) through
FakeHardware, NVIDIA GPUs (`gpu:` or `nvidiaSmiXml:`) through NvmlProbe over a fake NVML.
"""

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from npu_dra.adapters.hardware.ascend_host import AscendHostPaths
from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.adapters.hardware.nvml.fake import fake_gpu_node, is_gpu_description
from npu_dra.adapters.hardware.nvml.host import NvidiaHostPaths
from npu_dra.domain.ids import NodeName
from npu_dra.domain.ports import HardwareProbe

HARDWARE_CHOICES = "npu-smi, nvml or fake:FILE"


def fake_probe(
    description: Path | Mapping[str, Any],
    *,
    node: NodeName,
    ascend: AscendHostPaths | None = None,
    nvidia: NvidiaHostPaths | None = None,
) -> HardwareProbe:
    loaded = _load(description) if isinstance(description, Path) else description
    if loaded is not None and is_gpu_description(loaded):
        base = description.parent if isinstance(description, Path) else Path()
        return fake_gpu_node(loaded, node=node, host=nvidia, base=base)
    return FakeHardware(description, node=node, host=ascend)


def nvml_probe(*, node: NodeName, host: NvidiaHostPaths) -> HardwareProbe:
    """NVML through nvidia-ml-py on this machine's driver (loaded at the first probe)."""
    from npu_dra.adapters.hardware.nvml.probe import NvmlProbe
    from npu_dra.adapters.hardware.nvml.pynvml_library import PynvmlLibrary

    return NvmlProbe(node=node, library=PynvmlLibrary(), host=host)


def _load(path: Path) -> Mapping[str, Any] | None:
    """The description if it reads as a mapping; None leaves the errors to FakeHardware."""
    try:
        loaded = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError):
        return None
    return loaded if isinstance(loaded, Mapping) else None


__all__ = ["HARDWARE_CHOICES", "ProbeError", "fake_probe", "nvml_probe"]
