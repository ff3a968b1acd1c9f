"""Which HardwareProbe a `--hardware` choice means, for every composition root alike.

`npu-smi`, `dcmi` and `nvml` are the real backends (each imported only when chosen); `auto`
takes DCMI where libdcmi.so loads and starts, npu-smi otherwise, and logs which. `fake:FILE`
(or an inline description) answers from a node description: Ascend chips (`chip:`) through
FakeHardware, NVIDIA GPUs (`gpu:` or `nvidiaSmiXml:`) through NvmlProbe over a fake NVML.
"""

import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from npu_dra.adapters.hardware.ascend_host import AscendHostPaths, exists
from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.adapters.hardware.nvml.fake import fake_gpu_node, is_gpu_description
from npu_dra.adapters.hardware.nvml.host import NvidiaHostPaths
from npu_dra.domain.fault_codes import FaultCodeTable
from npu_dra.domain.ids import NodeName
from npu_dra.domain.ports import HardwareProbe
from npu_dra.domain.profile import backend_mismatch

if TYPE_CHECKING:
    from npu_dra.adapters.hardware.dcmi.probe import DcmiProbe

log = logging.getLogger(__name__)
HARDWARE_CHOICES = "auto, dcmi, npu-smi, nvml or fake:FILE"
# What each probe reads through, as the metrics' `backend` label and `discover` name it: what
# `auto` took, never `auto` itself. A described GPU node is read through NVML (over a fake).
BACKEND_NAMES = {
    "DcmiProbe": "dcmi",
    "NpuSmiProbe": "npu_smi",
    "NvmlProbe": "nvml",
    "FakeHardware": "fake",
}


def backend_of(probe: HardwareProbe) -> str:
    """The backend `probe` reads through (`BACKEND_NAMES`); another class by its own name."""
    name = type(probe).__name__
    return BACKEND_NAMES.get(name, name)


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

    return NvmlProbe(node=node, library=PynvmlLibrary(host.library()), host=host)


def dcmi_probe(
    *,
    node: NodeName,
    host: AscendHostPaths,
    sysfs_root: Path = Path("/sys"),
    library: Path | None = None,
    timeout: float = 10.0,
    profile: str | None = None,
    fault_table: FaultCodeTable | None = None,
) -> HardwareProbe:
    """Ascend chips through libdcmi.so (`library`, else the loader's search path, else
    /usr/local/dcmi), loaded at the first probe; HCCS groups from npu-smi where it is installed."""
    if profile is not None:
        check_backend("npu-smi", profile)  # DCMI finds what npu-smi finds: Ascend NPUs
    return _dcmi(
        node=node,
        host=host,
        sysfs_root=sysfs_root,
        library=library,
        timeout=timeout,
        fault_table=fault_table,
    )


def auto_probe(
    *,
    node: NodeName,
    host: AscendHostPaths,
    npu_smi: Callable[[], HardwareProbe],
    sysfs_root: Path = Path("/sys"),
    library: Path | None = None,
    timeout: float = 10.0,
    fault_table: FaultCodeTable | None = None,
) -> HardwareProbe:
    """DCMI if libdcmi.so loads, dcmi_init succeeds and a first probe through it works now,
    else `npu_smi()`; logs which, once. (The first probe is what a wrong library, or one whose
    answers npu-dra cannot use, fails: falling back then costs a millisecond at start.)"""
    chosen = _dcmi(
        node=node,
        host=host,
        sysfs_root=sysfs_root,
        library=library,
        timeout=timeout,
        fault_table=fault_table,
    )
    try:
        chosen.start()
    except ProbeError as error:
        log.info("--hardware auto: using npu-smi, DCMI did not start: %s", error)
        return npu_smi()
    try:
        chosen.probe()
    except ProbeError as error:
        log.warning("--hardware auto: using npu-smi, probing through DCMI failed: %s", error)
        return npu_smi()
    log.info("--hardware auto: using DCMI (libdcmi.so loaded, initialised and probed)")
    return chosen


def _dcmi(
    *,
    node: NodeName,
    host: AscendHostPaths,
    sysfs_root: Path,
    library: Path | None,
    timeout: float,
    fault_table: FaultCodeTable | None,
) -> "DcmiProbe":
    from npu_dra.adapters.hardware.dcmi.probe import DcmiProbe

    npu_smi = host.npu_smi if exists(host.npu_smi) else None
    return DcmiProbe(
        node=node,
        host=host,
        library_path=library,
        sysfs_root=sysfs_root,
        npu_smi=npu_smi,
        timeout=timeout,
        fault_table=fault_table,
    )


def _load(path: Path) -> Mapping[str, Any] | None:
    """The description if it reads as a mapping; None leaves the errors to FakeHardware."""
    try:
        loaded = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError):
        return None
    return loaded if isinstance(loaded, Mapping) else None


__all__ = [
    "HARDWARE_CHOICES",
    "ProbeError",
    "auto_probe",
    "backend_of",
    "check_backend",
    "dcmi_probe",
    "fake_probe",
    "nvml_probe",
]
