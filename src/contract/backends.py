"""Backends the contract can run over without writing a factory: the real ones on this machine.

    python -m npu_dra.contract npu_dra.contract.backends:nvml      # NVIDIA GPUs via NVML
    python -m npu_dra.contract npu_dra.contract.backends:npu_smi   # Ascend NPUs via npu-smi
    python -m npu_dra.contract npu_dra.contract.backends:dcmi      # Ascend NPUs via libdcmi.so

Paths come from the same env vars the plugins read (NODE_NAME, DEV_ROOT, DRIVER_ROOT,
NPU_SMI_PATH, DCMI_LIBRARY: an explicit libdcmi.so, else the loader's search path). The failure
rules need a broken variant: NVML's and DCMI's is a library that cannot be loaded.
"""

import os
import socket
from pathlib import Path

from npu_dra.adapters.hardware.ascend_host import AscendHostPaths
from npu_dra.adapters.hardware.choose import dcmi_probe, nvml_probe
from npu_dra.adapters.hardware.npu_smi.probe import NpuSmiProbe
from npu_dra.adapters.hardware.nvml.host import NvidiaHostPaths
from npu_dra.adapters.hardware.nvml.library import GpuFacts, NvmlError, SystemFacts
from npu_dra.adapters.hardware.nvml.probe import NvmlProbe
from npu_dra.contract.hardware import HardwareBackend
from npu_dra.domain.ids import NodeName


def _node() -> NodeName:
    return NodeName(os.environ.get("NODE_NAME") or socket.gethostname())


def _nvidia() -> NvidiaHostPaths:
    return NvidiaHostPaths(
        dev_root=Path(os.environ.get("DEV_ROOT", "/dev")),
        driver_root=Path(os.environ.get("DRIVER_ROOT", "/")),
    )


class _UnloadedNvml:
    """NVML when the driver is not loaded: every call fails, as nvmlInit would."""

    def system(self) -> SystemFacts:
        raise NvmlError("nvmlInit: Driver Not Loaded")

    def gpus(self) -> tuple[GpuFacts, ...]:
        raise NvmlError("nvmlInit: Driver Not Loaded")

    def critical_xids(self) -> tuple[tuple[str, int], ...]:
        raise NvmlError("nvmlInit: Driver Not Loaded")


def nvml() -> HardwareBackend:
    return HardwareBackend(
        "nvml (this machine)",
        healthy=lambda: nvml_probe(node=_node(), host=_nvidia()),
        failing=[lambda: NvmlProbe(node=_node(), library=_UnloadedNvml())],
    )


def npu_smi() -> HardwareBackend:
    path = Path(os.environ.get("NPU_SMI_PATH", "/usr/local/bin/npu-smi"))
    dev_root = Path(os.environ.get("DEV_ROOT", "/dev"))
    return HardwareBackend(
        "npu-smi (this machine)",
        healthy=lambda: NpuSmiProbe(node=_node(), npu_smi=path, dev_root=dev_root),
    )


def dcmi() -> HardwareBackend:
    library = os.environ.get("DCMI_LIBRARY")
    host = AscendHostPaths(
        dev_root=Path(os.environ.get("DEV_ROOT", "/dev")),
        npu_smi=Path(os.environ.get("NPU_SMI_PATH", "/usr/local/bin/npu-smi")),
    )
    absent = Path("/nonexistent/libdcmi.so")
    return HardwareBackend(
        "dcmi (this machine)",
        healthy=lambda: dcmi_probe(
            node=_node(), host=host, library=Path(library) if library else None
        ),
        failing=[lambda: dcmi_probe(node=_node(), host=host, library=absent)],
    )
