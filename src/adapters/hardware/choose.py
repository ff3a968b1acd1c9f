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
from npu_dra.domain.profile import backend_mismatch

HARDWARE_CHOICES = "npu-smi, nvml or fake:FILE"


def check_backend(hardware: str, profile: str) -> None:
    """ValueError naming both flags when a real backend is chosen under another profile (the
    rule is the domain's: each profile names its real backend)."""
    mismatch = backend_mismatch(hardware, profile)
    if mismatch is not None:
        raise ValueError(mismatch)


def fake_probe(
    description: Path | Mapping[str, Any],
    *,
    node: NodeName,
    ascend: AscendHostPaths | None = None,
    nvidia: NvidiaHostPaths | None = None,
    profile: str | None = None,
) -> HardwareProbe:
    """The described node; ProbeError if its devices are not of `profile` (when given)."""
    loaded = _load(description) if isinstance(description, Path) else description
    gpus = loaded is not None and is_gpu_description(loaded)
    described = "gpu" if gpus else "npu"
    if profile is not None and profile != described:
        raise ProbeError(
            f"the node description has {described} devices, not {profile}: "
            f"give --device-profile={described}"
        )
    if loaded is not None and gpus:
        base = description.parent if isinstance(description, Path) else Path()
        return fake_gpu_node(loaded, node=node, host=nvidia, base=base)
    return FakeHardware(description, node=node, host=ascend)


def nvml_probe(
    *, node: NodeName, host: NvidiaHostPaths, profile: str | None = None
) -> HardwareProbe:
    """NVML through nvidia-ml-py on this machine's driver (loaded at the first probe)."""
    if profile is not None:
        check_backend("nvml", profile)
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


__all__ = ["HARDWARE_CHOICES", "ProbeError", "check_backend", "fake_probe", "nvml_probe"]
